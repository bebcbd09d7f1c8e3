/* tests for orchestrator/cmd/cli.c and cmd/run.c: the run option table, its checks and --help */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>

#include "orchestrator/cmd/cli.h"
#include "orchestrator/cmd/commands.h"
#include "orchestrator/run/config.h"

#define MAXARGS 8

struct case_ {
	const char *name;
	const char *args[MAXARGS];	/* after "run" */
	int ok;				/* 1 = parse and check succeed */
	const char *msg;		/* substring of the error */
};

static const struct case_ cases[] = {
	{ "defaults", { NULL }, 1, NULL },
	{ "host list", { "--host-thp=always,madvise" }, 1, NULL },
	{ "host never only", { "--host-thp=never" }, 1, NULL },
	{ "bogus host thp", { "--host-thp=bogus" }, 0, "not a host THP setting: use always, madvise, never or SIZE:MODE (e.g. 64K:always, a power of two >= 8K): 'bogus'" },
	{ "empty host thp", { "--host-thp=" }, 0, "needs a non-empty value" },
	{ "comma only", { "--host-thp=," }, 0, "empty item in host THP list" },
	{ "empty item", { "--host-thp=always,,never" }, 0, "empty item in host THP list" },
	{ "bogus guest thp", { "--guest-thp=sometimes" }, 0, "not a guest THP setting" },
	{ "memory abc", { "--memory=abc" }, 0, "not a guest memory size from 256M to 1T (e.g. 1G): 'abc'" },
	{ "memory tiny", { "--memory=1M" }, 0, "not a guest memory size" },
	{ "reps zero", { "--reps=0" }, 0, "not a repetition count from 1 to 100: '0'" },
	{ "boots zero", { "--boots=0" }, 0, "not a boot count from 1 to 50: '0'" },
	{ "boots 51", { "--boots=51" }, 0, "not a boot count" },
	{ "boots 1", { "--boots=1" }, 1, NULL },
	{ "max-reps below reps x boots", { "--target-ci=5", "--reps=3", "--boots=4", "--max-reps=10" }, 0,
	  "--max-reps 10 is below --reps 3 x 6 boots" },
	{ "target ci both", { "--target-ci=15,5" }, 1, NULL },
	{ "target ci none", { "--target-ci=none" }, 1, NULL },
	{ "target ci zero", { "--target-ci=0" }, 0, "not a CI target" },
	{ "target ci empty guest", { "--target-ci=15," }, 0, "not a CI target: use HOST[,GUEST] half-widths in percentage points (0-100], e.g. 15,5, or none: '15,'" },
	{ "target ci empty host", { "--target-ci=,5" }, 0, "not a CI target" },
	{ "target ci three", { "--target-ci=15,5,2" }, 0, "not a CI target" },
	{ "target ci words", { "--target-ci=narrow" }, 0, "not a CI target" },
	{ "budget with fixed boots", { "--boots=2", "--budget=5m" }, 0, "only apply with a CI target" },
	{ "max-reps with target none", { "--target-ci=none", "--max-reps=12" }, 0, "only apply with a CI target" },
	{ "budget with the default target", { "--budget=5m" }, 1, NULL },
	{ "reps negative", { "--reps=-3" }, 0, "not a repetition count" },
	{ "reps huge", { "--reps=99999999999999999999999" }, 0, "not a repetition count" },
	{ "vcpus zero", { "--vcpus=0" }, 0, "vCPU count" },
	{ "size odd", { "--size=3M" }, 0, "multiple of 2M" },
	{ "size zero", { "--size=0" }, 0, "multiple of 2M" },
	{ "size too big for memory", { "--size=1G", "--memory=1G" }, 0, "does not fit a guest" },
	{ "accel bogus", { "--accel=xen" }, 0, "not an accelerator" },
	{ "accel tcg", { "--accel=tcg" }, 1, NULL },
	{ "timeout tiny", { "--timeout=1s" }, 0, "duration" },
	{ "timeout minutes", { "--timeout=20m" }, 1, NULL },
	{ "min coverage", { "--min-coverage=101" }, 0, "percentage" },
	{ "unknown option", { "--frobnicate" }, 0, "unknown option '--frobnicate'" },
	{ "missing value", { "--reps" }, 0, "needs a value" },
	{ "missing kernel", { "--kernel=/nonexistent/vmlinuz" }, 0, "--kernel: cannot use '/nonexistent/vmlinuz'" },
	{ "kernel a directory", { "--kernel=/" }, 0, "--kernel: '/' is a directory, not a regular file" },
	{ "shell metachars", { "--memory=1G;reboot" }, 0, "not a guest memory size" },
	{ "bad workload list", { "--workloads=mem;set" }, 0, "not a workload list" },
	{ "bad target", { "--target=moon" }, 0, "not a target" },
	{ "guests two", { "--guests=2" }, 1, NULL },
	{ "guests zero", { "--guests=0" }, 0, "not a guest count from 1 to 8" },
	{ "guests nine", { "--guests=9" }, 0, "not a guest count" },
	{ "host state both", { "--host-state=fresh,fragmented" }, 1, NULL },
	{ "host state all three", { "--host-state=fresh,fragmented,collapse-madvise" }, 1, NULL },
	{ "khugepaged arm", { "--host-state=fresh,collapse-khugepaged", "--khugepaged=pages_to_scan=4096,scan_sleep_millisecs=100",
			      "--recovery-timeout=90s" }, 1, NULL },
	{ "khugepaged knob zero", { "--host-state=collapse-khugepaged", "--khugepaged=pages_to_scan=0" }, 0,
	  "--khugepaged: pages_to_scan=0: the kernel takes a number from 1 to 4294967295" },
	{ "khugepaged knob unknown", { "--host-state=collapse-khugepaged", "--khugepaged=defrag=0" }, 0,
	  "unknown khugepaged knob 'defrag'" },
	{ "khugepaged without its arm", { "--khugepaged=pages_to_scan=4096" }, 0,
	  "--khugepaged sets khugepaged for the collapse-khugepaged arm" },
	{ "recovery timeout tiny", { "--recovery-timeout=1s" }, 0, "a duration from 5s to 1h" },
	{ "host state bogus", { "--host-state=aged" }, 0, "not a host state: use fresh, fragmented, collapse-madvise or collapse-khugepaged: 'aged'" },
	{ "sized host thp", { "--host-thp=64K:always,2048K:madvise,always" }, 1, NULL },
	{ "sized not power of two", { "--host-thp=96K:always" }, 0, "SIZE:MODE" },
	{ "sized never", { "--host-thp=64K:never" }, 0, "not a host THP setting" },
	{ "sized guest thp", { "--guest-thp=64K:always" }, 0, "not a guest THP setting" },
	{ "mthp sweep", { "--mthp-sweep" }, 1, NULL },
	/* the typed rows' refusals, from their bounds */
	{ "size not 2M", { "--size=3M" }, 0, "not a buffer size that is a non-zero multiple of 2M (e.g. 256M): '3M'" },
	{ "size zero", { "--size=0" }, 0, "not a buffer size that is a non-zero multiple of 2M" },
	{ "timeout short", { "--timeout=1s" }, 0, "not a duration from 10s to 48h (e.g. 15m): '1s'" },
	{ "budget zero", { "--budget=0" }, 0, "not a duration of at least 1s: '0'" },
	{ "pin bogus", { "--pin=some" }, 0, "not a pinning: use none or auto: 'some'" },
	{ "min coverage over", { "--min-coverage=101" }, 0, "not a percentage from 0 to 100: '101'" },
	{ "max reps one", { "--max-reps=1" }, 0, "not a repetition limit from 2 to 1000: '1'" },
	{ "pin none", { "--pin=none" }, 1, NULL },
	/* given twice, a list item twice, options that need or exclude another */
	{ "reps twice", { "--reps=3", "--reps=5" }, 0, "run: --reps is given twice ('3', then '5'): give it once" },
	{ "reps twice, same value", { "--reps=3", "--reps=3" }, 0, "--reps is given twice" },
	{ "flag twice", { "--quiet", "--quiet" }, 0, "run: --quiet is given twice" },
	{ "workloads item twice", { "--workloads=memset,memset" }, 0, "--workloads names 'memset' twice" },
	{ "host thp item twice", { "--host-thp=always,madvise,always" }, 0, "--host-thp names 'always' twice" },
	{ "host state item twice", { "--host-state=fresh,fresh" }, 0, "--host-state names 'fresh' twice" },
	{ "format item twice", { "--format=text,json,text" }, 0, "--format names 'text' twice" },
	{ "image packages item twice", { "--image-packages=gcc,gcc" }, 0, "--image-packages names 'gcc' twice" },
	{ "threshold without baseline", { "--threshold=3" }, 0, "--threshold needs --baseline" },
	{ "gate without baseline", { "--gate=all" }, 0, "--gate needs --baseline" },
	{ "guests on the bare host", { "--guests=2", "--target=host" }, 0,
	  "--guests and --target=host do not go together" },
	{ "pin on the bare host", { "--target=host", "--pin=none" }, 0, "--pin and --target=host" },
	{ "guests with both targets", { "--guests=2", "--target=both" }, 1, NULL },
	{ "kcompile without the workload", { "--kcompile=defconfig:vmlinux" }, 0,
	  "--kcompile is for the kcompile workload" },
	{ "kcompile-timeout without the workload", { "--kcompile-timeout=30m" }, 0,
	  "--kcompile-timeout is for the kcompile workload" },
	{ "baseline last without a database", { "--baseline=last", "--db=none" }, 0,
	  "--baseline=last and --db=none do not go together" },
	{ "baseline missing", { "--baseline=/nonexistent/results.json" }, 0,
	  "--baseline: cannot use '/nonexistent/results.json'" },
	{ "baseline a device", { "--baseline=/dev/null" }, 0, "'/dev/null' is a device, not a regular file" },
	{ "baseline a directory without results", { "--baseline=/" }, 0, "--baseline" },
	{ "db a directory", { "--db=/" }, 0, "--db: '/' is a directory: give a database file" },
	{ "state-dir a file", { "--state-dir=/dev/null" }, 0, "--state-dir: '/dev/null' is not a directory" },
	{ "state-dir under a file", { "--state-dir=/dev/null/x" }, 0, "--state-dir: cannot use '/dev/null/x'" },
};

static void test_run_options(void **state)
{
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct case_ *c = &cases[i];
		char *argv[MAXARGS + 2];
		char store[MAXARGS + 1][128];
		struct run_config cfg;
		struct err e = ERR_INIT;
		uint64_t given;
		bool help;
		int argc = 0, first, r;

		snprintf(store[0], sizeof(store[0]), "run");
		argv[argc++] = store[0];
		while (argc - 1 < MAXARGS && c->args[argc - 1]) {
			snprintf(store[argc], sizeof(store[argc]), "%s", c->args[argc - 1]);
			argv[argc] = store[argc];
			argc++;
		}
		argv[argc] = NULL;
		assert_int_equal(run_config_init(&cfg, &e), 0);
		r = cli_parse(&run_cmd, argc, argv, run_config_opt, &cfg, &first, &help, &given, &e);
		if (!r)
			r = run_config_check(&cfg, &e);
		if (!r)
			r = run_opts_check(&cfg, given, &e);
		if (!r && !strcmp(cfg.state_dir, "/var/lib/thpeval"))	/* not this machine's */
			snprintf(cfg.state_dir, sizeof(cfg.state_dir), "/tmp/thpeval-test-cli-%d/state", (int)getpid());
		if (!r)
			r = run_paths_check(&cfg, &e);
		if (c->ok && r)
			fail_msg("case '%s' failed: %s", c->name, e.msg);
		if (!c->ok && !r)
			fail_msg("case '%s' was accepted", c->name);
		if (!c->ok && !strstr(e.msg, c->msg))
			fail_msg("case '%s': message '%s' lacks '%s'", c->name, e.msg, c->msg);
		if (!c->ok && strchr(e.msg, '\n'))
			fail_msg("case '%s': message is not one line", c->name);
	}
}

static int parse(const char *const *args, struct run_config *cfg, struct err *e)
{
	char *argv[MAXARGS + 2];
	char store[MAXARGS + 1][128];
	bool help;
	int argc = 0, first, r;

	snprintf(store[0], sizeof(store[0]), "run");
	argv[argc++] = store[0];
	while (argc - 1 < MAXARGS && args[argc - 1]) {
		snprintf(store[argc], sizeof(store[argc]), "%s", args[argc - 1]);
		argv[argc] = store[argc];
		argc++;
	}
	argv[argc] = NULL;
	assert_int_equal(run_config_init(cfg, e), 0);
	r = cli_parse(&run_cmd, argc, argv, run_config_opt, cfg, &first, &help, NULL, e);
	return r ? r : run_config_check(cfg, e);
}

/* the default run narrows the split; --boots alone fixes the rounds; --target-ci makes --boots a floor */
static void test_target_defaults(void **state)
{
	static const struct {
		const char *args[MAXARGS];
		double host, guest;
		unsigned boots, max_reps;
		unsigned long long budget_ms;
	} t[] = {
		{ { NULL }, RUN_TARGET_CI_HOST, RUN_TARGET_CI_GUEST, 6, 100, RUN_BUDGET_MS },
		{ { "--reps=5" }, RUN_TARGET_CI_HOST, RUN_TARGET_CI_GUEST, 6, 250, RUN_BUDGET_MS },
		{ { "--budget=20m" }, RUN_TARGET_CI_HOST, RUN_TARGET_CI_GUEST, 6, 100, 20ull * 60 * 1000 },
		{ { "--budget=4m30s" }, RUN_TARGET_CI_HOST, RUN_TARGET_CI_GUEST, 6, 100, 270000 },
		{ { "--boots=2" }, 0, 0, 2, 100, 0 },
		{ { "--boots=12" }, 0, 0, 12, 100, 0 },
		{ { "--boots=2", "--target-ci=10" }, 10, 10, 2, 100, 0 },
		{ { "--target-ci=20,4", "--max-reps=60" }, 20, 4, 6, 60, 0 },
		{ { "--target-ci=none" }, 0, 0, 6, 100, 0 },
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		struct run_config cfg;
		struct err e = ERR_INIT;

		if (parse(t[i].args, &cfg, &e))
			fail_msg("case %zu: %s", i, e.msg);
		if (cfg.target_ci_host != t[i].host || cfg.target_ci_guest != t[i].guest || cfg.boots != t[i].boots ||
		    cfg.max_reps != t[i].max_reps || cfg.budget_ms != t[i].budget_ms)
			fail_msg("case %zu: target %g,%g boots %u max-reps %u budget %llu ms", i, cfg.target_ci_host,
				 cfg.target_ci_guest, cfg.boots, cfg.max_reps, (unsigned long long)cfg.budget_ms);
	}
}

/*
 * kcompile's and exec's options are spellings of --workload-opts items: each
 * becomes its items (exec's values in lib/argv's encoding), and a later
 * item replaces an earlier one, whichever spelling gave it
 */
static void test_aliases(void **state)
{
	static const struct {
		const char *args[MAXARGS];
		const char *wl_opts;
	} t[] = {
		{ { "--kcompile=defconfig:vmlinux", "--kcompile-timeout=2h" },
		  "kcompile:config=defconfig,kcompile:target=vmlinux,kcompile:timeout=7200" },
		{ { "--workload-opts=redis:dataset=4G,kcompile:config=tinyconfig", "--kcompile=defconfig:vmlinux" },
		  "redis:dataset=4G,kcompile:config=defconfig,kcompile:target=vmlinux" },
		{ { "--kcompile=defconfig:vmlinux", "--workload-opts=kcompile:target=mm/" },
		  "kcompile:config=defconfig,kcompile:target=mm/" },
		{ { "--exec=sh -c 'echo 1'", "--exec-metric=v ([0-9]+)", "--exec-direction=lower", "--exec-timeout=90s" },
		  "exec:argv=sh+-c+echo:201,exec:metric=v:20:28:5B0-9:5D:2B:29,exec:direction=lower,exec:timeout=90" },
		{ { "--workload-opts=exec:timeout=5", "--exec-timeout=1m" }, "exec:timeout=60" },
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		struct run_config cfg;
		struct err e = ERR_INIT;

		if (parse(t[i].args, &cfg, &e))
			fail_msg("case %zu: %s", i, e.msg);
		if (strcmp(cfg.wl_opts, t[i].wl_opts))
			fail_msg("case %zu: '%s', not '%s'", i, cfg.wl_opts, t[i].wl_opts);
	}
}

/* a parsed setting, as its text */
static void assert_setting(const struct thp_setting *t, const char *want)
{
	char buf[THP_NAME_LEN];

	assert_int_equal(thp_setting_format(t, buf, sizeof(buf)), 0);
	assert_string_equal(buf, want);
}

static void test_thp_list(void **state)
{
	struct thp_setting out[THP_LIST_MAX];
	struct err e = ERR_INIT;
	size_t n;

	assert_int_equal(thp_list_parse("always,never,madvise,always", true, out, THP_LIST_MAX, &n, "host THP", &e), 0);
	assert_int_equal(n, 2);
	assert_setting(&out[0], "always");
	assert_setting(&out[1], "madvise");
	assert_int_equal(thp_list_parse("never", true, out, THP_LIST_MAX, &n, "host THP", &e), 0);
	assert_int_equal(n, 0);
}

static void test_values(void **state)
{
	char a0[] = "run", a1[] = "--reps=5", a2[] = "--memory=2G", a3[] = "--size=512M",
	     a4[] = "--guest-thp=madvise", a5[] = "--timeout=90s";
	char *argv[] = { a0, a1, a2, a3, a4, a5, NULL };
	struct run_config cfg;
	struct err e = ERR_INIT;
	bool help;
	int first;

	assert_int_equal(run_config_init(&cfg, &e), 0);
	assert_int_equal(cli_parse(&run_cmd, 6, argv, run_config_opt, &cfg, &first, &help, NULL, &e), 0);
	assert_false(help);
	assert_int_equal(first, 6);
	assert_int_equal(cfg.reps, 5);
	assert_int_equal(cfg.memory, 2ull << 30);
	assert_int_equal(cfg.size, 512ull << 20);
	assert_int_equal(cfg.n_guest_thp, 1);
	assert_setting(&cfg.guest_thp[0], "madvise");
	assert_int_equal(cfg.timeout_ms, 90000);
}

static void test_sized_and_new_values(void **state)
{
	char a0[] = "run", a1[] = "--guests=3", a2[] = "--host-state=fragmented,fresh",
	     a3[] = "--host-thp=64K:always,never,1024K:madvise", a4[] = "--mthp-sweep";
	char *argv[] = { a0, a1, a2, a3, a4, NULL };
	struct run_config cfg;
	struct err e = ERR_INIT;
	struct thp_setting t;
	bool help;
	int first;

	assert_int_equal(run_config_init(&cfg, &e), 0);
	assert_int_equal(cfg.guests, 1);
	assert_int_equal(cfg.n_host_state, 1);
	assert_string_equal(host_state_name(cfg.host_state[0]), "fresh");
	assert_false(cfg.mthp_sweep);
	assert_int_equal(cli_parse(&run_cmd, 5, argv, run_config_opt, &cfg, &first, &help, NULL, &e), 0);
	assert_int_equal(cfg.guests, 3);
	assert_int_equal(cfg.n_host_state, 2);	/* order kept */
	assert_string_equal(host_state_name(cfg.host_state[0]), "fragmented");
	assert_string_equal(host_state_name(cfg.host_state[1]), "fresh");
	assert_int_equal(cfg.n_host_thp, 2);
	assert_setting(&cfg.host_thp[0], "64K:always");
	assert_setting(&cfg.host_thp[1], "1024K:madvise");
	assert_true(cfg.mthp_sweep);
	assert_int_equal(thp_setting_parse("64K:always", &t), 0);
	assert_int_equal(t.kb, 64);
	assert_int_equal(t.mode, THP_MODE_ALWAYS);
	assert_int_equal(thp_setting_parse("2048K:madvise", &t), 0);
	assert_int_equal(t.kb, 2048);
	assert_int_equal(thp_setting_parse("always", &t), 0);
	assert_int_equal(t.kb, 0);	/* not a size */
	assert_int_equal(thp_setting_parse("4K:always", &t), -EINVAL);
	assert_int_equal(thp_setting_parse("K:always", &t), -EINVAL);
	assert_int_equal(thp_setting_parse("64K:inherit", &t), -EINVAL);
	assert_int_equal(thp_setting_parse("64M:always", &t), -EINVAL);
}

/* --guests: N x (RAM + overhead) + 10% + 512M against MemAvailable of a fake /proc */
static void test_guests_fit(void **state)
{
	char dir[] = "/tmp/thpeval-fit-XXXXXX", path[64], note[200];
	struct err e = ERR_INIT;
	FILE *f;

	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/meminfo", dir);
	f = fopen(path, "w");
	assert_non_null(f);
	/* 4 GiB available */
	fputs("MemTotal:       24000000 kB\nMemFree:         4000000 kB\nMemAvailable:    4194304 kB\n", f);
	fclose(f);
	/* 2 x (1024 + 320) = 2688 MiB + 10% + 512 = 3468 MiB: fits */
	assert_int_equal(guests_fit(dir, 2, 1ull << 30, note, sizeof(note), &e), 0);
	assert_non_null(strstr(note, "2 x (1024 MiB guest RAM + 320 MiB QEMU overhead) = 2688 MiB, 4096 MiB available"));
	/* 3 x 1344 = 4032 MiB + 10% + 512 = 4947 MiB: refused, one line naming both numbers and what to do */
	assert_int_equal(guests_fit(dir, 3, 1ull << 30, NULL, 0, &e), -ENOMEM);
	assert_non_null(strstr(e.msg, "3 guests need 4947 MiB"));
	assert_non_null(strstr(e.msg, "4096 MiB available (MemAvailable)"));
	assert_non_null(strstr(e.msg, "lower --guests or --memory"));
	assert_null(strchr(e.msg, '\n'));
	/* a /proc without MemAvailable is an error, not a pass */
	f = fopen(path, "w");
	assert_non_null(f);
	fputs("MemTotal:       24000000 kB\n", f);
	fclose(f);
	err_clear(&e);
	assert_int_equal(guests_fit(dir, 1, 1ull << 30, NULL, 0, &e), -EBADMSG);
	unlink(path);
	rmdir(dir);
}

/* --help is generated from the option table: it is compared to a golden file */
static void test_help_golden(void **state)
{
	char *buf = NULL, *want;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	FILE *g;
	long n;

	assert_non_null(f);
	cli_help(&run_cmd, f);
	fclose(f);
	g = fopen("tests/orchestrator/golden/run-help.txt", "r");
	if (!g) {
		free(buf);
		fail_msg("golden file tests/orchestrator/golden/run-help.txt missing (run from the repo root)");
	}
	fseek(g, 0, SEEK_END);
	n = ftell(g);
	rewind(g);
	want = calloc(1, (size_t)n + 1);
	assert_non_null(want);
	assert_int_equal(fread(want, 1, (size_t)n, g), (size_t)n);
	fclose(g);
	assert_string_equal(buf, want);
	free(want);
	free(buf);
}

/* the run's enums and their strings (ENUM_IMPL in run/config.c): every name, a refusal each */
static void test_run_enums(void **state)
{
	static const struct {
		const char *s;
		int which;	/* 0 host state, 1 host backing, 2 target */
		int rc, v;
	} enum_cases[] = {
		{ "fresh", 0, 0, HOST_FRESH },
		{ "fragmented", 0, 0, HOST_FRAGMENTED },
		{ "Fresh", 0, -EINVAL, 0 },
		{ "anonymous", 1, 0, BACKING_ANONYMOUS },
		{ "memfd", 1, 0, BACKING_MEMFD },
		{ "hugetlbfs", 1, 0, BACKING_HUGETLBFS },
		{ "hugetlbfs-1g", 1, 0, BACKING_HUGETLBFS_1G },
		{ "hugetlbfs-2m", 1, -EINVAL, 0 },
		{ "anon", 1, -EINVAL, 0 },
		{ "guest", 2, 0, TARGET_GUEST },
		{ "host", 2, 0, TARGET_HOST },
		{ "both", 2, 0, TARGET_BOTH },
		{ "", 2, -EINVAL, 0 },
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(enum_cases) / sizeof(enum_cases[0]); i++) {
		enum host_state hs = HOST_STATE__COUNT;
		enum host_backing hb = HOST_BACKING__COUNT;
		enum run_target rt = RUN_TARGET__COUNT;
		const char *back = NULL;
		int rc, v = -1;

		switch (enum_cases[i].which) {
		case 0:
			rc = host_state_parse(enum_cases[i].s, &hs);
			v = (int)hs;
			back = host_state_name(hs);
			break;
		case 1:
			rc = host_backing_parse(enum_cases[i].s, &hb);
			v = (int)hb;
			back = host_backing_name(hb);
			break;
		default:
			rc = run_target_parse(enum_cases[i].s, &rt);
			v = (int)rt;
			back = run_target_name(rt);
			break;
		}
		if (rc != enum_cases[i].rc || (!rc && (v != enum_cases[i].v || !back || strcmp(back, enum_cases[i].s))) ||
		    (rc && back))
			fail_msg("case %zu ('%s'): rc %d, value %d, name '%s'", i, enum_cases[i].s, rc, v,
				 back ? back : "(null)");
	}
}

/* the rule table of any command: needs, conflicts, repeats; the given-set */
enum { T_A, T_B, T_C, T_FLAG, T_LIST };

static const struct opt t_opts[] = {
	OPT_ROW("a", "N", NULL, "a", T_A),
	OPT_ROW("b", "N", NULL, "b", T_B),
	OPT_ROW("c", "N", NULL, "c, repeats", T_C),
	OPT_ROW("flag", NULL, NULL, "a flag", T_FLAG),
	OPT_ROW("list", "LIST", NULL, "a list", T_LIST),
};

static const struct opt_rule t_rules[] = {
	{ OPT_NEEDS, T_A, T_B, "a is about b" },
	{ OPT_CONFLICTS, T_FLAG, T_C, "the flag says otherwise" },
	{ OPT_REPEATS, T_C, T_C, NULL },
};

static const struct command t_cmd = {
	.name = "t", .summary = "rules", CLI_OPTS(t_opts), CLI_RULES(t_rules),
};

static int t_opt(void *ctx, int id, const char *arg, struct err *e)
{
	(void)ctx, (void)id, (void)arg, (void)e;
	return 0;
}

static void test_rules(void **state)
{
	static const struct {
		const char *name;
		const char *args[MAXARGS];
		uint64_t given;		/* when accepted */
		const char *msg;	/* when refused */
	} t[] = {
		{ "none", { NULL }, 0, NULL },
		{ "a with b", { "--a=1", "--b=2" }, CLI_BIT(T_A) | CLI_BIT(T_B), NULL },
		{ "a without b", { "--a=1" }, 0, "t: --a needs --b: a is about b" },
		{ "b alone", { "--b=1" }, CLI_BIT(T_B), NULL },
		{ "flag with c", { "--c=1", "--flag" }, 0, "t: --flag and --c do not go together: the flag says otherwise" },
		{ "c repeats", { "--c=1", "--c=2", "--c=3" }, CLI_BIT(T_C), NULL },
		{ "c with a value twice", { "--c=1", "--c=2", "--c=1" }, 0, "t: --c is given twice with '1'" },
		{ "b twice", { "--b=1", "--b=2" }, 0, "t: --b is given twice ('1', then '2'): give it once" },
		{ "flag twice", { "--flag", "--flag" }, 0, "t: --flag is given twice: give it once" },
		{ "list", { "--list=x,y,z" }, CLI_BIT(T_LIST), NULL },
		{ "list item twice", { "--list=x,y,x" }, 0, "t: --list names 'x' twice: give each once" },
		{ "help skips the rules", { "--a=1", "--help" }, CLI_BIT(T_A), NULL },
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		char *argv[MAXARGS + 2];
		char store[MAXARGS + 1][64];
		struct err e = ERR_INIT;
		uint64_t given = 0;
		bool help;
		int argc = 0, first, r;

		snprintf(store[0], sizeof(store[0]), "t");
		argv[argc++] = store[0];
		while (argc - 1 < MAXARGS && t[i].args[argc - 1]) {
			snprintf(store[argc], sizeof(store[argc]), "%s", t[i].args[argc - 1]);
			argv[argc] = store[argc];
			argc++;
		}
		argv[argc] = NULL;
		r = cli_parse(&t_cmd, argc, argv, t_opt, NULL, &first, &help, &given, &e);
		if (t[i].msg && (!r || !strstr(e.msg, t[i].msg)))
			fail_msg("case '%s': want '%s', got %d '%s'", t[i].name, t[i].msg, r, e.msg);
		if (!t[i].msg && (r || given != t[i].given))
			fail_msg("case '%s': %d '%s', given %llx", t[i].name, r, e.msg, (unsigned long long)given);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_run_options),
		cmocka_unit_test(test_thp_list),
		cmocka_unit_test(test_values),
		cmocka_unit_test(test_sized_and_new_values),
		cmocka_unit_test(test_guests_fit),
		cmocka_unit_test(test_help_golden),
		cmocka_unit_test(test_target_defaults),
		cmocka_unit_test(test_aliases),
		cmocka_unit_test(test_run_enums),
		cmocka_unit_test(test_rules),
	};

	return cmocka_run_group_tests_name("orchestrator/cli", tests, NULL, NULL);
}
