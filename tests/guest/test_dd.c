/*
 * tests for guest/dd.c: the cross-check parser of dd's untrusted stderr,
 * parameter checks, the skip record when there is no dd, what a tmpfs asks
 * for (its mount's huge= in a fake mounts file, shmem_enabled, the block
 * size), and a short real run of the real /bin/dd whose records are parsed
 * and checked, coverage evidence included.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <cmocka.h>

#include "guest/dd.h"
#include "wltest.h"

#define N(a) WLT_N(a)

static char small_root[] = "/tmp/thpeval-dd-small-XXXXXX";	/* MemAvailable 900M, no dd */
static char bare_root[] = "/tmp/thpeval-dd-bare-XXXXXX";	/* real /proc, no dd */
static char mnt_root[] = "/tmp/thpeval-dd-mnt-XXXXXX";	/* a fake mounts file */
static char race_root[] = "/tmp/thpeval-dd-race-XXXXXX";	/* a dd that plants a link first */

struct parse_case {
	const char *name;
	const char *text;
	int ret;
	uint64_t bytes;
};

static const struct parse_case parse_cases[] = {
	{ "coreutils 9", "64+0 records in\n64+0 records out\n"
		"268435456 bytes (268 MB, 256 MiB) copied, 0.02 s, 13 GB/s\n", 0, 268435456 },
	{ "no trailing newline", "1+0 records in\n1+0 records out\n4096 bytes (4.1 kB) copied", 0,
	  4096 },
	{ "the last count wins", "5 bytes (5 B) copied\n7 bytes (7 B) copied\n", 0, 7 },
	{ "zero bytes", "0+0 records in\n0+0 records out\n0 bytes copied, 1e-05 s\n", 0, 0 },
	{ "empty", "", -EINVAL, 0 },
	{ "an error only", "dd: failed to open '/dev/zero': No such file or directory\n", -EINVAL, 0 },
	{ "localized", "268435456 octets (268 MB, 256 MiB) copiés\n", -EINVAL, 0 },
	{ "overflowing number", "999999999999999999999999 bytes copied\n", -EINVAL, 0 },
	{ "number inside a line", "copied 4096 bytes\n", -EINVAL, 0 },
	{ "sign", "-4096 bytes copied\n", -EINVAL, 0 },
};

static void test_parse(void **state)
{
	const struct parse_case *c = *state;
	uint64_t v = 12345;

	assert_int_equal(dd_parse_bytes(c->text, &v), c->ret);
	if (!c->ret)
		assert_int_equal(v, c->bytes);
	else
		assert_int_equal(v, 12345);	/* untouched */
}

static struct wlt_bad bad_cases[] = {
	{ "zero volume", small_root, { "dd", "--volume=0" }, HARNESS_USAGE, REC_FAIL,
	  "--volume=0 is out of range" },
	{ "volume not a 2M multiple", small_root, { "dd", "--volume=3M" }, HARNESS_USAGE, REC_FAIL,
	  "volume 3M is not a multiple of 2M" },
	{ "no /bin/dd: skipped", small_root, { "dd" }, HARNESS_SKIPPED, REC_SKIP,
	  "/bin/dd' here (coreutils)" },
	{ "no /bin/dd, real /proc: skipped", bare_root, { "dd", "--volume=2M" }, HARNESS_SKIPPED,
	  REC_SKIP, "no executable" },
};

static void test_bad(void **state)
{
	const struct wlt_bad *c = *state;

	wlt_expect_bad(c->root, c->argv, N(c->argv), c->rc, c->type, c->reason, "dd");
}

struct want_case {
	const char *shmem_enabled, *mount_huge;
	uint64_t bs;
	bool want;
};

static void test_want_huge(void **state)
{
	static const struct want_case cases[] = {
		{ "never", "never", 4096, false },
		{ "never", "always", 4096, true },
		{ "always", "never", 2u << 20, false },	/* shmem_enabled is the internal mount's */
		{ "advise", "advise", 2u << 20, false },	/* dd does not madvise */
		{ "never", "within_size", 2u << 20, true },	/* each write ends on a 2M boundary */
		{ "never", "within_size", 1u << 20, false },
		{ "force", "never", 4096, true },
		{ "deny", "always", 2u << 20, false },
		{ "unsupported", "always", 2u << 20, false },
	};
	size_t i;

	(void)state;
	for (i = 0; i < N(cases); i++)
		if (dd_tmpfs_want_huge(cases[i].shmem_enabled, cases[i].mount_huge, cases[i].bs) !=
		    cases[i].want)
			fail_msg("shmem_enabled %s, huge=%s, bs %llu: want %d", cases[i].shmem_enabled,
				 cases[i].mount_huge, (unsigned long long)cases[i].bs, cases[i].want);
}

/* the mount holding a path: the longest mount point, the later of two on one point */
static void test_mount_huge(void **state)
{
	static const struct {
		const char *path, *huge;
	} cases[] = {
		{ "/tmp", "within_size" }, { "/tmp/x", "within_size" }, { "/tmpx", "never" },
		{ "/dev/shm", "always" }, { "/", "never" }, { "/run/user/0", "never" },
	};
	char out[32];
	size_t i;

	(void)state;
	wlt_put(mnt_root, "/proc/self/mounts",
		"rootfs / rootfs rw 0 0\n"
		"tmpfs /dev/shm tmpfs rw,nosuid,size=100k,huge=never 0 0\n"
		"tmpfs /tmp tmpfs rw,huge=within_size,size=200M 0 0\n"
		"tmpfs /dev/shm tmpfs rw,huge=always 0 0\n"
		"tmpfs /run tmpfs rw,mode=755 0 0\n"
		"short line\n");
	for (i = 0; i < N(cases); i++) {
		assert_int_equal(dd_mount_huge(mnt_root, cases[i].path, out, sizeof(out)), 0);
		if (strcmp(out, cases[i].huge))
			fail_msg("%s: huge=%s, want %s", cases[i].path, out, cases[i].huge);
	}
	wlt_put(mnt_root, "/proc/self/mounts", "tmpfs /run tmpfs rw 0 0\n");
	assert_int_equal(dd_mount_huge(mnt_root, "/tmp", out, sizeof(out)), -ENOENT);
	assert_int_equal(dd_mount_huge(small_root, "/tmp", out, sizeof(out)), -ENOENT);	/* no file */
}

static void test_real_run(void **state)
{
	static const char *const variants[] = { "null-4k", "null-64k", "null-1m", "null-2m",
						"tmpfs-4k", "tmpfs-64k", "tmpfs-1m", "tmpfs-2m" };
	static const char *const positive[] = { "bs_bytes", "count", "bytes", "elapsed_ns", "mib_s",
						 NULL };
	const char *argv[] = { "dd", "--volume=4M", "--label=guest_thp=test" };
	struct wlt_out o;
	uint64_t bs, count, u;
	size_t i, results = 0;

	(void)state;
	if (access(DD_PATH, X_OK)) {
		print_message("skipped: no %s here\n", DD_PATH);
		skip();
	}
	wlt_run("", argv, N(argv), &o);
	if (o.rc != HARNESS_OK)
		fail_msg("exit %d: %s", o.rc, o.msg);
	assert_int_equal(o.n, N(variants));	/* one record per (target, bs), no summary */
	for (i = 0; i < N(variants); i++) {
		const struct record *r = wlt_variant(&o, variants[i]);

		wlt_declared("dd", r, "guest_thp");
		assert_string_equal(rec_get(r, "dest"), i < 4 ? "null" : "tmpfs");
		if (r->type == REC_SKIP) {
			/* only the tmpfs runs may be skipped (no tmpfs here), with a reason */
			assert_true(i >= 4);
			assert_non_null(rec_get(r, "reason"));
			continue;
		}
		assert_int_equal(r->type, REC_RESULT);
		results++;
		wlt_positive(r, positive);
		assert_int_equal(rec_get_u64(r, "bs_bytes", &bs), 0);
		assert_int_equal(rec_get_u64(r, "count", &count), 0);
		assert_int_equal(bs * count, 4u << 20);
		if (rec_get(r, "dd_reported_bytes")) {
			assert_int_equal(rec_get_u64(r, "dd_reported_bytes", &u), 0);
			assert_int_equal(u, 4u << 20);
		}
		assert_int_equal(rec_get_u64(r, "sys_us", &u), 0);
		/* the coverage evidence, or why there is none */
		if (i < 4) {
			assert_non_null(strstr(rec_get(r, "cov_note"), "dd's own buffer"));
			assert_null(rec_get(r, "tmpfs_huge_pct"));
		} else {
			double pct;

			const char *dest = rec_get(r, "dest_path");
			char dir[512], *slash;

			/* in a directory of the run's own, removed with it */
			assert_non_null(dest);
			snprintf(dir, sizeof(dir), "%s", dest);
			slash = strrchr(dir, '/');
			assert_non_null(slash);
			*slash = '\0';
			assert_non_null(strstr(dir, "/" DD_DIR_PREFIX));
			assert_int_equal(access(dir, F_OK), -1);
			assert_non_null(rec_get(r, "tmpfs_huge"));
			assert_int_equal(rec_get_u64(r, "tmpfs_huge_want", &u), 0);
			assert_true(u <= 1);
			assert_int_equal(rec_get_f64(r, "tmpfs_huge_pct", &pct), 0);
			assert_true(pct >= 0 && pct <= 100);
		}
	}
	assert_true(results >= 4);
	assert_int_equal(access("/tmp/" DD_FILE, F_OK), -1);	/* the file is gone */
	assert_int_equal(access("/dev/shm/" DD_FILE, F_OK), -1);
	wlt_free(&o);
}

/*
 * The race a planted link wins against a fixed name: <root>/bin/dd plants a
 * link at its of= file, to a victim, just before the real dd opens it (what
 * another user of a world-writable tmpfs could do between thpeval's check
 * and dd's open). dd must never write through it: the victim keeps its
 * bytes, and the run fails with dd's reason.
 */
static void test_planted_link(void **state)
{
	const char *argv[] = { "dd", "--volume=2M", "--label=guest_thp=test" };
	char path[512], script[1024], victim[512], buf[64];
	struct wlt_out o;
	struct statfs sf;
	FILE *f;

	(void)state;
	if (access(DD_PATH, X_OK) || statfs("/dev/shm", &sf) || (unsigned long)sf.f_type != 0x01021994) {
		print_message("skipped: needs %s and a tmpfs at /dev/shm\n", DD_PATH);
		skip();
	}
	snprintf(victim, sizeof(victim), "%s/victim", race_root);
	wlt_put(race_root, "/victim", "precious\n");
	snprintf(script, sizeof(script),
		 "#!/bin/sh\n"
		 "for a in \"$@\"; do case $a in of=*/dev/null) ;; of=*) ln -s '%s' \"${a#of=}\" ;; esac; done\n"
		 "exec %s \"$@\"\n", victim, DD_PATH);
	wlt_put(race_root, "/bin/dd", script);
	snprintf(path, sizeof(path), "%s/bin/dd", race_root);
	assert_int_equal(chmod(path, 0755), 0);
	wlt_put(race_root, "/dev/.keep", "");
	snprintf(path, sizeof(path), "%s/dev/zero", race_root);
	assert_int_equal(symlink("/dev/zero", path), 0);
	snprintf(path, sizeof(path), "%s/dev/null", race_root);
	assert_int_equal(symlink("/dev/null", path), 0);
	snprintf(path, sizeof(path), "%s/dev/shm", race_root);
	assert_int_equal(symlink("/dev/shm", path), 0);

	wlt_run(race_root, argv, N(argv), &o);
	f = fopen(victim, "r");
	assert_non_null(f);
	assert_non_null(fgets(buf, sizeof(buf), f));
	fclose(f);
	assert_string_equal(buf, "precious\n");	/* never written through the link */
	if (o.rc == HARNESS_OK)
		fail_msg("the run wrote a file where a link was planted: %s", o.msg);
	if (!strstr(o.msg, "File exists"))
		fail_msg("dd's reason missing: %s", o.msg);
	wlt_free(&o);
}

static int setup(void **state)
{
	(void)state;
	return wlt_tree(small_root, false, 921600) && wlt_tree(bare_root, true, 0) &&
	       wlt_tree(mnt_root, false, 921600) && wlt_tree(race_root, true, 0) ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	wlt_tree_free(small_root);
	wlt_tree_free(bare_root);
	wlt_tree_free(mnt_root);
	wlt_tree_free(race_root);
	return 0;
}

int main(void)
{
	struct CMUnitTest tests[N(parse_cases) + N(bad_cases) + 4];
	size_t i, n = 0;

	for (i = 0; i < N(parse_cases); i++)
		tests[n++] = (struct CMUnitTest){ parse_cases[i].name, test_parse, NULL, NULL,
						  (void *)(uintptr_t)&parse_cases[i] };
	for (i = 0; i < N(bad_cases); i++)
		tests[n++] = (struct CMUnitTest){ bad_cases[i].name, test_bad, NULL, NULL,
						  &bad_cases[i] };
	tests[n++] = (struct CMUnitTest){ "what a tmpfs asks for: shmem_enabled, huge=, bs",
					  test_want_huge, NULL, NULL, NULL };
	tests[n++] = (struct CMUnitTest){ "the huge= of the mount holding a path (fake mounts)",
					  test_mount_huge, NULL, NULL, NULL };
	tests[n++] = (struct CMUnitTest){ "short real run of /bin/dd: records parse, fields positive",
					  test_real_run, NULL, NULL, NULL };
	tests[n++] = (struct CMUnitTest){ "a link planted at dd's file is never written through",
					  test_planted_link, NULL, NULL, NULL };
	return _cmocka_run_group_tests("dd", tests, n, setup, teardown);
}
