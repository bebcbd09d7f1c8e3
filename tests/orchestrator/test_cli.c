/* tests for orchestrator/cli.c: the run option table, its checks and --help */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "orchestrator/cli.h"

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
	{ "bogus host thp", { "--host-thp=bogus" }, 0, "'bogus' is not a host THP setting" },
	{ "empty host thp", { "--host-thp=" }, 0, "needs a non-empty value" },
	{ "comma only", { "--host-thp=," }, 0, "empty host THP list" },
	{ "bogus guest thp", { "--guest-thp=sometimes" }, 0, "not a guest THP setting" },
	{ "memory abc", { "--memory=abc" }, 0, "'abc' is not a guest memory size" },
	{ "memory tiny", { "--memory=1M" }, 0, "not a guest memory size" },
	{ "reps zero", { "--reps=0" }, 0, "'0' is not a repetition count" },
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
	{ "missing kernel", { "--kernel=/nonexistent/vmlinuz" }, 0, "guest kernel '/nonexistent/vmlinuz'" },
	{ "shell metachars", { "--memory=1G;reboot" }, 0, "not a guest memory size" },
	{ "bad workload list", { "--workloads=mem;set" }, 0, "not a workload list" },
	{ "bad target", { "--target=moon" }, 0, "not a target" },
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
		run_config_defaults(&cfg);
		r = cli_parse(&cli_run_cmd, argc, argv, run_config_opt, &cfg, &first, &help, &e);
		if (!r)
			r = run_config_check(&cfg, &e);
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

static void test_thp_list(void **state)
{
	char out[CLI_MAX_THP][CLI_THP_LEN];
	struct err e = ERR_INIT;
	size_t n;

	assert_int_equal(thp_list_parse("always,never,madvise,always", out, CLI_MAX_THP, &n, true, "host THP", &e), 0);
	assert_int_equal(n, 2);
	assert_string_equal(out[0], "always");
	assert_string_equal(out[1], "madvise");
	assert_int_equal(thp_list_parse("never", out, CLI_MAX_THP, &n, true, "host THP", &e), 0);
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

	run_config_defaults(&cfg);
	assert_int_equal(cli_parse(&cli_run_cmd, 6, argv, run_config_opt, &cfg, &first, &help, &e), 0);
	assert_false(help);
	assert_int_equal(first, 6);
	assert_int_equal(cfg.reps, 5);
	assert_int_equal(cfg.memory, 2ull << 30);
	assert_int_equal(cfg.size, 512ull << 20);
	assert_int_equal(cfg.n_guest_thp, 1);
	assert_string_equal(cfg.guest_thp[0], "madvise");
	assert_int_equal(cfg.timeout_ms, 90000);
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
	cli_help(&cli_run_cmd, f);
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_run_options),
		cmocka_unit_test(test_thp_list),
		cmocka_unit_test(test_values),
		cmocka_unit_test(test_help_golden),
	};

	return cmocka_run_group_tests_name("orchestrator/cli", tests, NULL, NULL);
}
