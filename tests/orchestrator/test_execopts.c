/*
 * tests for orchestrator/cmd/execopts.c: each option's checks (--exec,
 * --exec-metric, --exec-direction, --exec-timeout) with their one-line
 * messages, the encoding the guest gets, the kernel command line budget, and
 * the checks across options once the workloads are known.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <errno.h>

#include "orchestrator/cmd/execopts.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

enum which { CMD, METRIC, DIRECTION, TIMEOUT };

struct opt_case {
	const char *name;
	enum which opt;
	const char *arg;	/* NULL: built by main (long strings) */
	int code;
	const char *msg;	/* the whole message, or the encoding on success */
};

static char long_cmd[5001], long_pattern[601], over_budget[1300], budget_metric[700];

static struct opt_case opt_cases[] = {
	{ "a command", CMD, "stress-ng --vm 1 -t 5s", 0, "stress-ng+--vm+1+-t+5s" },
	{ "sh -c with metacharacters", CMD, "sh -c 'echo $(id); ls *|wc -l > /x &'", 0,
	  "sh+-c+echo:20:24:28id:29:3B:20ls:20:2A:7Cwc:20-l:20:3E:20/x:20:26" },
	{ "blank", CMD, "  ", -EINVAL, "the command is blank: give a command such as 'stress-ng --vm 1 -t 10s'" },
	{ "5000 characters", CMD, long_cmd, -E2BIG, "the command is 5000 characters long: at most 4096" },
	{ "control character", CMD, "echo \x01", -EINVAL,
	  "the command has a control character (0x01) at character 6: give printable text" },
	{ "unterminated quote", CMD, "sh -c \"x", -EINVAL,
	  "the command has an unterminated double quote (opened at character 7)" },
	{ "over the kernel command line budget", CMD, over_budget, -E2BIG,
	  "the command takes 1218 bytes of the guest kernel command line (3 for each character outside "
	  "[A-Za-z0-9_./-]); 1200 fit there: shorten it" },
	{ "a pattern", METRIC, "ops/s: ([0-9.]+)", 0, "ops/s:3A:20:28:5B0-9.:5D:2B:29" },
	{ "a pattern with no group", METRIC, "ops/s: [0-9]+", -EINVAL,
	  "0 capture groups: the pattern needs exactly one, around the number "
	  "(e.g. 'ops/s: ([0-9.]+)'): 'ops/s: [0-9]+'" },
	{ "a pattern with two groups", METRIC, "(a)|(b)", -EINVAL,
	  "2 capture groups: the pattern needs exactly one, around the number "
	  "(e.g. 'ops/s: ([0-9.]+)'): '(a)|(b)'" },
	{ "not a regex", METRIC, "x([0-9]", -EINVAL, "not a POSIX extended regex: " },
	{ "a pattern too long", METRIC, long_pattern, -E2BIG, "the pattern is 600 characters long: at most 512" },
	{ "a pattern with a tab", METRIC, "a\t(b)", -EINVAL,
	  "the pattern has a control character (0x09) at character 2: give printable text" },
	{ "higher", DIRECTION, "higher", 0, "higher" },
	{ "lower", DIRECTION, "lower", 0, "lower" },
	{ "a direction that is neither", DIRECTION, "better", -EINVAL,
	  "not a direction: use higher or lower (which way the number --exec-metric reads is better): 'better'" },
	{ "a timeout", TIMEOUT, "90s", 0, "" },
	{ "a timeout of 0", TIMEOUT, "0", -ERANGE, "not a duration from 1s to 24h (e.g. 90s, 10m): '0'" },
	{ "a timeout over a day", TIMEOUT, "25h", -ERANGE, "not a duration from 1s to 24h (e.g. 90s, 10m): '25h'" },
	{ "a timeout that is not one", TIMEOUT, "soon", -EINVAL,
	  "not a duration from 1s to 24h (e.g. 90s, 10m): 'soon'" },
};

static void test_opt(void **state)
{
	const struct opt_case *c = *state;
	struct exec_opts *x = malloc(sizeof(*x));
	struct err e = ERR_INIT;
	int r = -1;

	assert_non_null(x);
	exec_opts_defaults(x);
	switch (c->opt) {
	case CMD: r = exec_opts_command(x, c->arg, &e); break;
	case METRIC: r = exec_opts_metric(x, c->arg, &e); break;
	case DIRECTION: r = exec_opts_direction(x, c->arg, &e); break;
	case TIMEOUT: r = exec_opts_timeout(x, c->arg, &e); break;
	}
	if (r != c->code)
		fail_msg("%d (%s), want %d", r, e.msg, c->code);
	if (r) {
		if (strncmp(e.msg, c->msg, strlen(c->msg)))
			fail_msg("message '%s', want '%s'", e.msg, c->msg);
		assert_null(strchr(e.msg, '\n'));
		assert_false(x->set || x->metric_set || x->dir_set || x->timeout_set);
		assert_string_equal(x->argv_enc, "");
	} else if (c->opt == CMD) {
		assert_true(x->set);
		assert_string_equal(x->argv_enc, c->msg);
	} else if (c->opt == METRIC) {
		assert_true(x->metric_set);
		assert_string_equal(x->metric_enc, c->msg);
	} else if (c->opt == DIRECTION) {
		assert_true(x->dir_set);
		assert_string_equal(x->dir, c->msg);
	} else {
		assert_int_equal(x->timeout_ms, 90000);
	}
	free(x);
}

/* the budget counts the command and the pattern together */
static void test_budget_both(void **state)
{
	struct exec_opts *x = malloc(sizeof(*x));
	struct err e = ERR_INIT;

	(void)state;
	assert_non_null(x);
	exec_opts_defaults(x);
	assert_int_equal(exec_opts_command(x, "sh -c 'echo v 1'", &e), 0);
	assert_int_equal(exec_opts_cmdline_bytes(x), 18);
	assert_int_equal(exec_opts_metric(x, budget_metric, &e), -E2BIG);
	assert_string_equal(e.msg, "the command and the pattern take 1225 bytes of the guest kernel command line "
				   "(3 for each character outside [A-Za-z0-9_./-]); 1200 fit there: shorten them");
	assert_false(x->metric_set);
	assert_int_equal(exec_opts_cmdline_bytes(x), 18);
	free(x);
}

struct check_case {
	const char *name;
	bool set, metric, dir, timeout;	/* options given */
	bool planned, on_host;
	const char *msg;		/* NULL: accepted */
};

static const struct check_case check_cases[] = {
	{ "exec with its command", true, false, false, false, true, false, NULL },
	{ "exec with a pattern and a direction", true, true, true, true, true, false, NULL },
	{ "neither exec nor its options", false, false, false, false, false, false, NULL },
	{ "exec without a command", false, false, false, false, true, false,
	  "--workloads=exec needs --exec='CMD ARGS': the command to run in the guests" },
	{ "a command without exec", true, false, false, false, false, false,
	  "--exec and its options are for the exec workload: add exec to --workloads" },
	{ "a timeout without exec", false, false, false, true, false, false,
	  "--exec-metric, --exec-direction and --exec-timeout are for the exec workload: add exec to --workloads" },
	{ "exec on the host", true, false, false, false, true, true,
	  "the exec workload runs in guests only (thpeval never runs a user's command on the host): use --target=guest" },
	{ "a pattern without a direction", true, true, false, false, true, false,
	  "--exec-metric needs --exec-direction=higher|lower: which way its number is better" },
	{ "a direction without a pattern", true, false, true, false, true, false,
	  "--exec-direction needs --exec-metric: the pattern of the number it is about" },
};

static void test_check(void **state)
{
	const struct check_case *c = *state;
	struct exec_opts *x = malloc(sizeof(*x));
	struct err e = ERR_INIT;
	int r;

	assert_non_null(x);
	exec_opts_defaults(x);
	x->set = c->set;
	x->metric_set = c->metric;
	x->dir_set = c->dir;
	x->timeout_set = c->timeout;
	r = exec_opts_check(x, c->planned, c->on_host, &e);
	if (!c->msg) {
		if (r)
			fail_msg("refused: %s", e.msg);
	} else {
		assert_int_equal(r, -EINVAL);
		assert_string_equal(e.msg, c->msg);
	}
	free(x);
}

static void test_defaults(void **state)
{
	struct exec_opts *x = malloc(sizeof(*x));

	(void)state;
	assert_non_null(x);
	exec_opts_defaults(x);
	assert_false(x->set);
	assert_string_equal(x->dir, "higher");
	assert_int_equal(x->timeout_ms, 600000);
	assert_int_equal(exec_opts_cmdline_bytes(x), 0);
	free(x);
}

int main(void)
{
	struct CMUnitTest tests[N(opt_cases) + N(check_cases) + 2];
	size_t i, n = 0;

	memset(long_cmd, 'x', 5000);
	memset(long_pattern, 'p', 600);
	/* sh -c '<404 semicolons>': 6 + 404 x 3 = 1218 encoded bytes */
	memcpy(over_budget, "sh -c '", 7);
	memset(over_budget + 7, ';', 404);
	memcpy(over_budget + 411, "'", 2);
	/* (v) then 400 '=': 3 + 1 + 3 + 400 x 3 = 1207 bytes, with the command's 18: 1225 */
	memcpy(budget_metric, "(v)", 3);
	memset(budget_metric + 3, '=', 400);
	for (i = 0; i < N(opt_cases); i++)
		tests[n++] = (struct CMUnitTest){ opt_cases[i].name, test_opt, NULL, NULL, &opt_cases[i] };
	for (i = 0; i < N(check_cases); i++)
		tests[n++] = (struct CMUnitTest){ check_cases[i].name, test_check, NULL, NULL,
						  (void *)(uintptr_t)&check_cases[i] };
	tests[n++] = (struct CMUnitTest){ "the budget counts both", test_budget_both, NULL, NULL, NULL };
	tests[n++] = (struct CMUnitTest){ "defaults", test_defaults, NULL, NULL, NULL };
	return _cmocka_run_group_tests("execopts", tests, n, NULL, NULL);
}
