/*
 * tests for guest/kcompile.c: argument checking (every nonsense parameter is
 * a clear message in a fail record, a missing toolchain, source, memory or
 * build directory a skip record, never a crash), the last-line cutter of
 * make's untrusted output, and the build path with a stand-in make (a shell
 * script in a fake root): a failing config step and a failing build are fail
 * records with make's last line, a good build a result whose O= tree is gone;
 * a tree prepared at image build is copied instead of the config step, but
 * only for the source path it was prepared for.
 * The real kernel build runs in tests/integration/kcompile.sh.
 */
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "guest/kcompile.h"
#include "images/srcdisk.h"
#include "wltest.h"

#define N(a) WLT_N(a)

static char empty_root[] = "/tmp/thpeval-kc-empty-XXXXXX";	/* no toolchain */
static char nosrc_root[] = "/tmp/thpeval-kc-nosrc-XXXXXX";	/* toolchain, no source */
static char small_root[] = "/tmp/thpeval-kc-small-XXXXXX";	/* all there, 100M available */
static char fail_root[] = "/tmp/thpeval-kc-fail-XXXXXX";	/* make fails at once */
static char tfail_root[] = "/tmp/thpeval-kc-tfail-XXXXXX";	/* config ok, build fails */
static char ok_root[] = "/tmp/thpeval-kc-ok-XXXXXX";		/* a build that works */
static char prep_root[] = "/tmp/thpeval-kc-prep-XXXXXX";	/* with a prepared tree */

#define LONG_TARGET "mm/aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa/"

static struct wlt_bad bad_cases[] = {
	{ "config not in the list", ok_root, { "kcompile", "--config=randconfig" }, HARNESS_USAGE,
	  REC_FAIL, "unknown --config 'randconfig': use tinyconfig, allnoconfig, defconfig" },
	{ "config with a shell metacharacter", ok_root, { "kcompile", "--config=tiny;reboot" },
	  HARNESS_USAGE, REC_FAIL, "bad character ';' in --config" },
	{ "config empty", ok_root, { "kcompile", "--config=" }, HARNESS_USAGE, REC_FAIL,
	  "empty value for --config" },
	{ "target an option", ok_root, { "kcompile", "--target=-j999" }, HARNESS_USAGE, REC_FAIL,
	  "must not start with '-'" },
	{ "target absolute", ok_root, { "kcompile", "--target=/etc/" }, HARNESS_USAGE, REC_FAIL,
	  "must not start with '-', '/' or '.'" },
	{ "target leaves the tree", ok_root, { "kcompile", "--target=mm/../../x" }, HARNESS_USAGE,
	  REC_FAIL, "no '..'" },
	{ "target command substitution", ok_root, { "kcompile", "--target=$(reboot)" },
	  HARNESS_USAGE, REC_FAIL, "bad character '$' in --target" },
	{ "target with a space", ok_root, { "kcompile", "--target=mm/ vmlinux" }, HARNESS_USAGE,
	  REC_FAIL, "bad character '?' in --target" },
	{ "target with a colon", ok_root, { "kcompile", "--target=mm:x" }, HARNESS_USAGE, REC_FAIL,
	  "bad --target 'mm:x': use letters, digits and _./- only" },
	{ "target too long", ok_root, { "kcompile", "--target=" LONG_TARGET }, HARNESS_USAGE,
	  REC_FAIL, "--target value longer than 63 characters" },
	{ "jobs out of range", ok_root, { "kcompile", "--jobs=1000" }, HARNESS_USAGE, REC_FAIL,
	  "--jobs=1000 is out of range (0 to 256)" },
	{ "jobs not a number", ok_root, { "kcompile", "--jobs=all" }, HARNESS_USAGE, REC_FAIL,
	  "bad value 'all' for --jobs: expected an integer" },
	{ "src relative", ok_root, { "kcompile", "--src=linux" }, HARNESS_USAGE, REC_FAIL,
	  "bad --src 'linux': an absolute path" },
	{ "src with ..", ok_root, { "kcompile", "--src=/usr/../etc" }, HARNESS_USAGE, REC_FAIL,
	  "bad --src '/usr/../etc'" },
	{ "build-dir relative", ok_root, { "kcompile", "--build-dir=tmp" }, HARNESS_USAGE,
	  REC_FAIL, "bad --build-dir 'tmp'" },
	{ "unknown option", ok_root, { "kcompile", "--make=x" }, HARNESS_USAGE, REC_FAIL,
	  "unknown option '--make' for workload kcompile" },
	{ "no make: skipped", empty_root, { "kcompile" }, HARNESS_SKIPPED, REC_SKIP,
	  "/usr/bin/make' here: the kcompile image has the toolchain" },
	{ "no source: skipped", nosrc_root, { "kcompile" }, HARNESS_SKIPPED, REC_SKIP,
	  "no kernel source at" },
	{ "little memory: skipped", small_root, { "kcompile" }, HARNESS_SKIPPED, REC_SKIP,
	  "available memory, a tinyconfig build needs 256M" },
	{ "no build directory: skipped", ok_root, { "kcompile", "--build-dir=/nonexistent" },
	  HARNESS_SKIPPED, REC_SKIP, "cannot use --build-dir" },
	{ "config step fails: its last line", fail_root, { "kcompile" }, HARNESS_FAILED, REC_FAIL,
	  "config step 'make tinyconfig': make exited with status 2: scripts/kconfig: boom" },
	{ "build fails: its last line", tfail_root, { "kcompile", "--jobs=3" }, HARNESS_FAILED,
	  REC_FAIL, "'make -j3 mm/' (tinyconfig) after" },
};

static void test_bad(void **state)
{
	const struct wlt_bad *c = *state;

	wlt_expect_bad(c->root, c->argv, N(c->argv), c->rc, c->type, c->reason, "kcompile");
}

/* the build step's fail record carries make's last line, cut and made printable */
static void test_build_fail_line(void **state)
{
	const char *argv[] = { "kcompile" };
	struct wlt_out o;

	(void)state;
	wlt_run(tfail_root, argv, N(argv), &o);
	assert_int_equal(o.n, 1);
	assert_non_null(strstr(rec_get(&o.rec[0], "reason"),
			       "make exited with status 1: mm/slab.c:1:2: error: #error ??"));
	wlt_free(&o);
}

static size_t leftovers(const char *root)
{
	char dir[512];
	struct dirent *d;
	size_t n = 0;
	DIR *dp;

	snprintf(dir, sizeof(dir), "%s/tmp", root);
	dp = opendir(dir);
	assert_non_null(dp);
	while ((d = readdir(dp)))
		n += !strncmp(d->d_name, "thpeval-kc-", 11);
	closedir(dp);
	return n;
}

static void test_good_build(void **state)
{
	static const char *const positive[] = { "wall_s", "jobs", NULL };
	const char *argv[] = { "kcompile", "--jobs=2", "--target=kernel/sched/",
			       "--label=guest_thp=test" };
	struct wlt_out o;
	const struct record *r;
	double d;
	uint64_t u;
	char buf[2048];

	(void)state;
	wlt_run(ok_root, argv, N(argv), &o);
	if (o.rc != HARNESS_OK)
		fail_msg("exit %d: %s", o.rc, o.msg);
	assert_int_equal(o.n, 1);
	r = &o.rec[0];
	assert_int_equal(r->type, REC_RESULT);
	wlt_declared("kcompile", r, "guest_thp");
	wlt_positive(r, positive);
	assert_string_equal(rec_get(r, "config"), "tinyconfig");
	assert_string_equal(rec_get(r, "target"), "kernel/sched/");
	assert_int_equal(rec_get_u64(r, "jobs", &u), 0);
	assert_int_equal(u, 2);
	assert_int_equal(rec_get_u64(r, "exit_status", &u), 0);
	assert_int_equal(u, 0);
	assert_int_equal(rec_get_f64(r, "user_s", &d), 0);
	assert_int_equal(rec_get_f64(r, "sys_s", &d), 0);
	assert_int_equal(rec_get_f64(r, "setup_s", &d), 0);
	assert_true(d >= 0);
	assert_string_equal(rec_get(r, "setup"), "make");
	/* the coverage evidence: 10 of the 15 faults that tried a huge page got one */
	assert_int_equal(rec_get_f64(r, "huge_fault_pct", &d), 0);
	assert_true(fabs(d - 200.0 / 3) < 1e-3);
	assert_null(rec_get(r, "cov_note"));
	/* the stand-in make got the argv, with no shell between: config, prepare, target */
	wlt_read(ok_root, "/tmp/make-args", buf, sizeof(buf));
	assert_non_null(strstr(buf, "-s -C/tmp/thpeval-kc-ok-"));
	assert_non_null(strstr(buf, KC_SRC_DEFAULT " O="));
	assert_non_null(strstr(buf, " tinyconfig config=no\n"));
	assert_non_null(strstr(buf, " -j2 prepare config=no\n"));
	assert_non_null(strstr(buf, " -j2 kernel/sched/ config=no\n"));
	assert_int_equal(leftovers(ok_root), 0);	/* the O= tree is removed */
	wlt_free(&o);
}

/* a tree prepared at image build for this source path: copied, no config step */
static void test_prepared_copy(void **state)
{
	const char *argv[] = { "kcompile" };
	char dir[400], link[512], buf[512];
	struct wlt_out o;

	(void)state;
	snprintf(dir, sizeof(dir), "%s%s/%s/tinyconfig", prep_root, KC_SRC_DEFAULT, KC_PREPARED_DIR);
	wlt_put(dir, "/.config", "CONFIG_X=y\n");
	wlt_put(dir, "/scripts/kconfig/conf", "binary\n");
	snprintf(link, sizeof(link), "%s/source", dir);
	assert_int_equal(symlink(KC_SRC_DEFAULT, link), 0);
	wlt_run(prep_root, argv, N(argv), &o);
	if (o.rc != HARNESS_OK)
		fail_msg("exit %d: %s", o.rc, o.msg);
	assert_string_equal(rec_get(&o.rec[0], "setup"), "prepared");
	wlt_read(prep_root, "/tmp/make-args", buf, sizeof(buf));
	/* one make call, the timed one, into a tree that had the .config */
	assert_null(strstr(buf, "tinyconfig config"));
	assert_null(strstr(buf, "prepare"));
	assert_non_null(strstr(buf, " mm/ config=yes\n"));
	assert_int_equal(leftovers(prep_root), 0);
	wlt_free(&o);

	/* prepared for another source path (the host's tree): not used */
	assert_int_equal(unlink(link), 0);
	assert_int_equal(symlink("/var/cache/elsewhere", link), 0);
	wlt_run(prep_root, argv, N(argv), &o);
	assert_int_equal(o.rc, HARNESS_OK);
	assert_string_equal(rec_get(&o.rec[0], "setup"), "make");
	wlt_free(&o);
}

/* the source disk is mounted where the workload looks for it */
static void test_paths_agree(void **state)
{
	(void)state;
	assert_string_equal(KC_SRC_DEFAULT, SRCDISK_GUEST_PATH);
	assert_string_equal(KC_PREPARED_DIR, SRCDISK_PREPARED);
}

struct line_case {
	const char *name;
	const char *text;
	size_t len;	/* of out */
	const char *want;
};

static const struct line_case line_cases[] = {
	{ "last of several", "a\nb\nc\n", 64, "c" },
	{ "trailing blank lines", "x\nerror here\n\n  \n", 64, "error here" },
	{ "no newline", "only", 64, "only" },
	{ "empty", "", 64, "" },
	{ "control characters", "ok\nbad\x1b[31mred\t\n", 64, "bad?[31mred?" },
	{ "cut to the buffer", "0123456789abcdef", 8, "0123456" },
	{ "CRLF", "one\r\ntwo\r\n", 64, "two" },
	{ "the error, not make's own lines",
	  "  CC mm/a.o\nscripts/check-local-export: 25: awk: not found\n"
	  "make[2]: *** [scripts/Makefile.build:255: scripts/mod/empty.o] Error 127\n"
	  "make[1]: Leaving directory '/tmp/o'\nmake: Leaving directory '/src'\n", 64,
	  "scripts/check-local-export: 25: awk: not found" },
	{ "no error line: the last not from make", "  CC mm/a.o\n  CC mm/b.o\nmake: Leaving x\n",
	  64, "  CC mm/b.o" },
	{ "only make's lines: the last", "make: a\nmake: b\n", 64, "make: b" },
};

static void test_last_line(void **state)
{
	const struct line_case *c = *state;
	char out[64];

	memset(out, 'Z', sizeof(out));
	kc_last_line(c->text, strlen(c->text), out, c->len);
	assert_string_equal(out, c->want);
}

struct hfp_case {
	const char *name;
	bool have;		/* both counters in both readings */
	uint64_t a0, f0, a1, f1;
	int ret;
	double pct;
};

static const struct hfp_case hfp_cases[] = {
	{ "all huge", true, 5, 0, 105, 0, 0, 100 },
	{ "a quarter fell back", true, 0, 10, 30, 20, 0, 75 },
	{ "no fault tried", true, 7, 7, 7, 7, -ENODATA, 0 },
	{ "no counters", false, 0, 0, 0, 0, -ENOENT, -1 },
	{ "counter went back", true, 9, 0, 8, 0, -ENOENT, -1 },
};

/* the build's huge page share of the faults that tried one */
static void test_huge_fault_pct(void **state)
{
	size_t i;

	(void)state;
	for (i = 0; i < N(hfp_cases); i++) {
		const struct hfp_case *c = &hfp_cases[i];
		struct guest_vmstat b, a;
		double pct = -1;
		int r;

		memset(&b, 0, sizeof(b));
		memset(&a, 0, sizeof(a));
		b.have[GVM_THP_FAULT_ALLOC] = b.have[GVM_THP_FAULT_FALLBACK] = c->have;
		a.have[GVM_THP_FAULT_ALLOC] = a.have[GVM_THP_FAULT_FALLBACK] = c->have;
		b.v[GVM_THP_FAULT_ALLOC] = c->a0;
		b.v[GVM_THP_FAULT_FALLBACK] = c->f0;
		a.v[GVM_THP_FAULT_ALLOC] = c->a1;
		a.v[GVM_THP_FAULT_FALLBACK] = c->f1;
		r = kc_huge_fault_pct(&b, &a, &pct);
		if (r != c->ret || fabs(pct - c->pct) > 1e-9)
			fail_msg("%s: %d %g, want %d %g", c->name, r, pct, c->ret, c->pct);
	}
}

static void test_lists(void **state)
{
	struct err e = ERR_INIT;

	(void)state;
	assert_true(kc_config_allowed("tinyconfig"));
	assert_true(kc_config_allowed("defconfig"));
	assert_false(kc_config_allowed("allyesconfig"));
	assert_false(kc_config_allowed(""));
	assert_true(kc_space_needed("defconfig") > kc_space_needed("tinyconfig"));
	assert_int_equal(kc_space_needed("nope"), 0);
	assert_int_equal(kc_target_check("mm/", &e), 0);
	assert_int_equal(kc_target_check("vmlinux", &e), 0);
	assert_int_equal(kc_target_check("arch/x86/boot/bzImage", &e), 0);
	assert_int_equal(kc_target_check("", &e), -EINVAL);
	assert_int_equal(kc_target_check(".config", &e), -EINVAL);
	assert_int_equal(kc_target_check("a..b", &e), -EINVAL);
	assert_int_equal(kc_target_check("mm/`id`", &e), -EINVAL);
}

/* an executable shell script at <root><rel> */
static void put_script(const char *root, const char *rel, const char *body)
{
	char path[512];

	wlt_put(root, rel, body);
	snprintf(path, sizeof(path), "%s%s", root, rel);
	assert_int_equal(chmod(path, 0755), 0);
}

/* toolchain stand-ins; make's behaviour given; a source Makefile unless src is false */
static void fake_root(char *root, unsigned long avail_kb, bool src, const char *make)
{
	char text[256];

	assert_non_null(wlt_tree(root, false, avail_kb));
	put_script(root, "/usr/bin/gcc", "#!/bin/sh\nexit 0\n");
	put_script(root, "/usr/bin/make", make);
	if (src)
		wlt_put(root, KC_SRC_DEFAULT "/Makefile", "# a stand-in kernel Makefile\n");
	snprintf(text, sizeof(text), "%s/tmp", root);
	assert_int_equal(mkdir(text, 0755), 0);
	/* vmstat for the deltas */
	wlt_put(root, "/proc/vmstat", "pgfault 100\nthp_fault_alloc 3\nthp_fault_fallback 0\n");
}

/* each call appends its argv, and whether the O= tree had a .config then */
/* the timed step (neither tinyconfig nor prepare) faults: 10 huge pages, 5 fallbacks */
#define MAKE_OK "#!/bin/sh\nfor a; do last=$a; case $a in O=*) o=${a#O=};; esac; done\n" \
		"c=no; [ -f \"$o/.config\" ] && c=yes\n" \
		"echo \"$@ config=$c\" >> \"$(dirname \"$0\")/../../tmp/make-args\"\n" \
		"v=$(dirname \"$0\")/../../proc/vmstat\n" \
		"case $last in tinyconfig|prepare) ;; *) a=$(sed -n 's/^thp_fault_alloc //p' \"$v\")\n" \
		"f=$(sed -n 's/^thp_fault_fallback //p' \"$v\")\n" \
		"printf 'pgfault 100\\nthp_fault_alloc %s\\nthp_fault_fallback %s\\n' $((a + 10)) " \
		"$((f + 5)) > \"$v\";; esac\n" \
		"echo '  CC      mm/slab.o'\nexit 0\n"
#define MAKE_FAIL "#!/bin/sh\necho 'HOSTCC scripts/kconfig/conf.o'\n" \
		  "echo 'scripts/kconfig: boom' >&2\nexit 2\n"
#define MAKE_TFAIL "#!/bin/sh\nfor a; do last=$a; done\n" \
		   "case $last in tinyconfig|prepare) exit 0;; esac\n" \
		   "printf '  CC mm/slab.o\\nmm/slab.c:1:2: error: #error \\342\\200\\230x\\n'\nexit 1\n"

static int setup(void **state)
{
	(void)state;
	assert_non_null(wlt_tree(empty_root, false, 4000000));
	wlt_put(empty_root, KC_SRC_DEFAULT "/Makefile", "#\n");
	fake_root(nosrc_root, 4000000, false, MAKE_OK);
	fake_root(small_root, 102400, true, MAKE_OK);
	fake_root(fail_root, 4000000, true, MAKE_FAIL);
	fake_root(tfail_root, 4000000, true, MAKE_TFAIL);
	fake_root(ok_root, 4000000, true, MAKE_OK);
	fake_root(prep_root, 4000000, true, MAKE_OK);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	wlt_tree_free(empty_root);
	wlt_tree_free(nosrc_root);
	wlt_tree_free(small_root);
	wlt_tree_free(fail_root);
	wlt_tree_free(tfail_root);
	wlt_tree_free(ok_root);
	wlt_tree_free(prep_root);
	return 0;
}

int main(void)
{
	struct CMUnitTest tests[N(bad_cases) + N(line_cases) + 6];
	size_t i, n = 0;

	for (i = 0; i < N(bad_cases); i++)
		tests[n++] = (struct CMUnitTest){ bad_cases[i].name, test_bad, NULL, NULL,
						  &bad_cases[i] };
	for (i = 0; i < N(line_cases); i++)
		tests[n++] = (struct CMUnitTest){ line_cases[i].name, test_last_line, NULL, NULL,
						  (void *)(uintptr_t)&line_cases[i] };
	tests[n++] = (struct CMUnitTest){ "config and target lists", test_lists, NULL, NULL, NULL };
	tests[n++] = (struct CMUnitTest){ "huge_fault_pct from vmstat deltas", test_huge_fault_pct, NULL,
					  NULL, NULL };
	tests[n++] = (struct CMUnitTest){ "a failing build: make's last line, printable",
					  test_build_fail_line, NULL, NULL, NULL };
	tests[n++] = (struct CMUnitTest){ "a build with a stand-in make: result, argv, O= removed",
					  test_good_build, NULL, NULL, NULL };
	tests[n++] = (struct CMUnitTest){ "a prepared tree: copied for its source path only",
					  test_prepared_copy, NULL, NULL, NULL };
	tests[n++] = (struct CMUnitTest){ "source disk paths agree with the workload's",
					  test_paths_agree, NULL, NULL, NULL };
	return _cmocka_run_group_tests("kcompile", tests, n, setup, teardown);
}
