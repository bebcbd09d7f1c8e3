/*
 * tests for guest/execwl.c: real commands through the harness (a number read
 * with either direction, every fail reason: missing program, non-zero exit,
 * signal, timeout, no match, not a number; shell metacharacters reaching the
 * program as bytes; more output than is kept), parameter refusals, the
 * process group killed after a timeout and after a normal exit, the kept
 * tail of a long output, the pattern reader and its traits.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <errno.h>
#include <signal.h>
#include <sys/stat.h>

#include "guest/execwl.h"
#include "lib/argv.h"
#include "lib/wltraits.h"
#include "wltest.h"

#define N(a) WLT_N(a)

/* "--argv=<encoded>" for a --exec string, "--metric=<encoded>" for a pattern */
static char *opt_argv(const char *exec)
{
	static char buf[WL_EXEC_ARGV_MAX + 16];
	struct argv_list a;
	struct err e = ERR_INIT;

	if (argv_split("--exec", exec, &a, &e))
		fail_msg("test command '%s': %s", exec, e.msg);
	memcpy(buf, "--argv=", 7);
	assert_true(argv_encode(&a, buf + 7, sizeof(buf) - 7) > 0);
	return buf;
}

static char *opt_metric(const char *pattern)
{
	static char buf[WL_EXEC_METRIC_MAX + 16];

	memcpy(buf, "--metric=", 9);
	assert_true(argv_encode_word(pattern, buf + 9, sizeof(buf) - 9) > 0);
	return buf;
}

struct run_case {
	const char *name;
	const char *exec;
	const char *metric;	/* NULL: none */
	const char *extra;	/* another argument (--direction, --timeout) or NULL */
	int rc;
	const char *reason;	/* fail: what the reason says; NULL for a result */
	const char *field;	/* result: metric_higher / metric_lower, or NULL for neither */
	double value;
};

static struct run_case run_cases[] = {
	{ "a number, higher is better", "sh -c 'echo ops: 12.5; echo ops: 13'", "ops: ([0-9.]+)", NULL,
	  HARNESS_OK, NULL, "metric_higher", 13 },
	{ "a number, lower is better", "printf 'latency %s ms\\n' 4.25", "latency ([0-9.]+) ms",
	  "--direction=lower", HARNESS_OK, NULL, "metric_lower", 4.25 },
	{ "no pattern: times only", "true", NULL, NULL, HARNESS_OK, NULL, NULL, 0 },
	{ "metacharacters are bytes of argv", "printf '%s %s\\n' '$(echo 1);|&*' 7",
	  "^\\$\\(echo 1\\);\\|&\\* ([0-9]+)$", NULL, HARNESS_OK, NULL, "metric_higher", 7 },
	{ "more output than is kept", "sh -c 'head -c 3000000 /dev/zero | tr \"\\0\" x; echo; echo final 7'",
	  "^final ([0-9]+)$", NULL, HARNESS_OK, NULL, "metric_higher", 7 },
	{ "missing program", "no-such-program-thpeval --x", NULL, NULL, HARNESS_FAILED,
	  "'no-such-program-thpeval' is not in the guest's PATH: add its package with --image-packages", NULL, 0 },
	{ "missing path", "/nonexistent/thpeval", NULL, NULL, HARNESS_FAILED,
	  "'/nonexistent/thpeval' is not an executable file here", NULL, 0 },
	{ "non-zero exit", "sh -c 'echo first; echo the error >&2; exit 3'", NULL, NULL, HARNESS_FAILED,
	  "'sh' exited with status 3: the error", NULL, 0 },
	{ "killed by a signal", "sh -c 'kill -KILL $$'", NULL, NULL, HARNESS_FAILED,
	  "'sh' killed by signal 9 (Killed)", NULL, 0 },
	{ "hangs past --timeout", "sh -c 'sleep 30; echo late 1'", "late ([0-9]+)", "--timeout=1", HARNESS_FAILED,
	  "'sh' timed out after 1 s (its process group killed)", NULL, 0 },
	{ "no match", "echo hello", "ops: ([0-9]+)", NULL, HARNESS_FAILED,
	  "no line of its output (6 bytes) matches the metric pattern", NULL, 0 },
	{ "no output", "true", "ops: ([0-9]+)", NULL, HARNESS_FAILED,
	  "no line of its output (0 bytes) matches the metric pattern", NULL, 0 },
	{ "not a number", "echo ops: fast", "ops: (.*)", NULL, HARNESS_FAILED,
	  "the metric pattern captured 'fast', not a number", NULL, 0 },
	{ "hex is not a number", "echo ops: 0x10", "ops: (.*)", NULL, HARNESS_FAILED,
	  "the metric pattern captured '0x10', not a number", NULL, 0 },
	{ "the group took no part", "echo ops", "ops(: [0-9]+)?", NULL, HARNESS_FAILED,
	  "the metric pattern's group took no part in the last matching line", NULL, 0 },
	{ "pattern without a group", "true", "ops", NULL, HARNESS_USAGE,
	  "the metric pattern has 0 capture groups: it needs exactly one", NULL, 0 },
	{ "pattern with two groups", "true", "(a)(b)", NULL, HARNESS_USAGE,
	  "the metric pattern has 2 capture groups", NULL, 0 },
	{ "pattern that does not compile", "true", "(x", NULL, HARNESS_USAGE, "bad metric pattern: ", NULL, 0 },
	{ "bad direction", "true", NULL, "--direction=sideways", HARNESS_USAGE,
	  "bad --direction 'sideways': higher or lower", NULL, 0 },
	{ "timeout 0", "true", NULL, "--timeout=0", HARNESS_USAGE, "--timeout=0 is out of range (1 to 86400)", NULL, 0 },
};

static void test_run(void **state)
{
	const struct run_case *c = *state;
	const char *argv[6] = { "exec" };
	const struct record *r;
	struct wlt_out o;
	int argc = 1;
	double v;

	argv[argc++] = opt_argv(c->exec);
	if (c->metric)
		argv[argc++] = opt_metric(c->metric);
	if (c->extra)
		argv[argc++] = c->extra;
	argv[argc++] = "--label=guest_thp=test";
	wlt_run("", argv, argc, &o);
	if (c->reason) {
		wlt_expect_one(&o, c->rc, REC_FAIL, c->reason);
		wlt_free(&o);
		return;
	}
	if (o.rc != c->rc)
		fail_msg("exit %d: %s", o.rc, o.msg);
	assert_int_equal(o.n, 1);
	r = &o.rec[0];
	assert_int_equal(r->type, REC_RESULT);
	wlt_declared("exec", r, "guest_thp");
	assert_int_equal(rec_get_f64(r, "wall_s", &v), 0);
	assert_true(v > 0);
	assert_int_equal(rec_get_f64(r, "exit_status", &v), 0);
	assert_true(v == 0);
	assert_non_null(rec_get(r, "cmd"));
	if (c->field) {
		if (rec_get_f64(r, c->field, &v))
			fail_msg("no %s in the record", c->field);
		assert_true(v == c->value);
	}
	assert_true((rec_get(r, "metric_higher") != NULL) + (rec_get(r, "metric_lower") != NULL) ==
		    (c->field != NULL));
	if (!strcmp(c->name, "more output than is kept")) {
		assert_int_equal(rec_get_f64(r, "output_bytes", &v), 0);
		assert_true(v == 3000000 + 1 + 8);
	}
	wlt_free(&o);
}

/* an encoding the decoder refuses: a usage fail record, nothing run */
static void test_bad_encoding(void **state)
{
	const char *argv[] = { "exec", "--argv=sh+-c+echo:2" };
	struct wlt_out o;

	(void)state;
	wlt_run("", argv, N(argv), &o);
	wlt_expect_one(&o, HARNESS_USAGE, REC_FAIL,
		       "--argv: ':' at character 11 is not followed by two upper-case hex digits");
	wlt_free(&o);
}

/* pid from the file the command wrote; true once it is gone or a zombie (bounded wait) */
static bool pid_ends(const char *file, double within_s)
{
	char buf[32], path[64], st[512];
	long pid = 0;
	uint64_t until;
	FILE *f = fopen(file, "r");

	if (!f)
		fail_msg("the command did not write '%s'", file);
	if (!fgets(buf, sizeof(buf), f) || (pid = strtol(buf, NULL, 10)) <= 1)
		fail_msg("no pid in '%s'", file);
	fclose(f);
	unlink(file);
	snprintf(path, sizeof(path), "/proc/%ld/stat", pid);
	until = harness_now_ns() + (uint64_t)(within_s * 1e9);
	do {
		char *p;

		f = fopen(path, "r");
		if (!f)
			return true;
		p = fgets(st, sizeof(st), f);
		fclose(f);
		p = p ? strrchr(st, ')') : NULL;
		if (p && (p[2] == 'Z' || p[2] == 'X'))
			return true;
		harness_sleep_ms(10);
	} while (harness_now_ns() < until);
	kill((pid_t)pid, SIGKILL);
	return false;
}

/* what the command started in its group dies with it: after a timeout and after a normal exit */
static void test_group_killed(void **state)
{
	static const char *const cmds[] = {
		"sh -c 'sleep 60 & echo $! > /tmp/thpeval-execwl-bg; wait'",
		"sh -c 'sleep 60 & echo $! > /tmp/thpeval-execwl-bg; echo started 1'",
	};
	struct exec_result r;
	struct argv_list a;
	struct err e = ERR_INIT;
	char path[256];
	size_t i;

	(void)state;
	for (i = 0; i < N(cmds); i++) {
		uint64_t t0 = harness_now_ns();

		assert_int_equal(argv_split("--exec", cmds[i], &a, &e), 0);
		assert_int_equal(exec_which("", a.v[0], path, sizeof(path)), 0);
		if (exec_command(path, a.v, 1000, &r, &e))
			fail_msg("%s", e.msg);
		assert_true(r.timed_out == (i == 0));
		/* returned at once (or at the deadline), not after the 60 s sleep */
		assert_true(harness_now_ns() - t0 < 10ull * 1000000000u);
		if (!pid_ends("/tmp/thpeval-execwl-bg", 10))
			fail_msg("'%s': its background sleep survived", cmds[i]);
		exec_result_release(&r);
	}
}

/* 2 MB of numbered lines: the last MiB at most is kept, from a line start, to the end */
static void test_output_tail(void **state)
{
	char *argv[] = { (char *)(uintptr_t)"seq", (char *)(uintptr_t)"1", (char *)(uintptr_t)"300000", NULL };
	struct exec_result r;
	struct err e = ERR_INIT;
	char path[256];
	long first, lines = 0;
	size_t i;

	(void)state;
	if (exec_which("", "seq", path, sizeof(path))) {
		print_message("skipped: no seq in " EXEC_ENV_PATH "\n");
		skip();
	}
	if (exec_command(path, argv, 10000, &r, &e))
		fail_msg("%s", e.msg);
	assert_int_equal(exec_outcome(&r, "seq", 10000, &e), 0);
	assert_int_equal(r.out_bytes, 1988895);	/* the digits of 1..300000 and the newlines */
	assert_true(r.out_len <= EXEC_OUT_KEEP && r.out_len > EXEC_OUT_KEEP - 16);
	assert_int_equal(r.out[r.out_len], '\0');
	first = strtol(r.out, NULL, 10);
	for (i = 0; i < r.out_len; i++)
		lines += r.out[i] == '\n';
	assert_true(first > 1);
	assert_int_equal(lines, 300000 - first + 1);
	assert_string_equal(r.out + r.out_len - 7, "300000\n");
	exec_result_release(&r);
}

static void test_cannot_execute(void **state)
{
	char *argv[] = { (char *)(uintptr_t)"x", NULL };
	struct exec_result r;
	struct err e = ERR_INIT;

	(void)state;
	assert_int_equal(exec_command("/dev/null", argv, 1000, &r, &e), -EACCES);
	assert_string_equal(e.msg, "cannot execute '/dev/null': Permission denied");
	exec_result_release(&r);
}

struct read_case {
	const char *name;
	const char *out;
	const char *pattern;
	int rc;
	double value;
	const char *msg;
};

static const struct read_case read_cases[] = {
	{ "the last matching line", "x: 1\ny: 5\nx: 2\nz\n", "^x: ([0-9]+)$", 0, 2, NULL },
	{ "first match of that line", "v 3 v 4\n", "v ([0-9])", 0, 3, NULL },
	{ "blanks and CR trimmed", "rate =   42.5 \r\n", "rate =(.*)$", 0, 42.5, NULL },
	{ "negative, exponent", "delta -1.5e3\n", "delta (.+)", 0, -1500, NULL },
	{ "no newline at the end", "a\nscore 9", "score ([0-9]+)", 0, 9, NULL },
	{ "too large", "v 1e999\n", "v (.+)", -EINVAL, 0, "the metric pattern captured '1e999', not a number" },
	{ "nan", "v nan\n", "v (.+)", -EINVAL, 0, "the metric pattern captured 'nan', not a number" },
	{ "empty capture", "v \n", "v (.*)", -EINVAL, 0, "the metric pattern captured '', not a number" },
	{ "no line", "a\nb\n", "c ([0-9])", -ENOENT, 0,
	  "no line of its output (4 bytes) matches the metric pattern" },
};

static void test_read(void **state)
{
	const struct read_case *c = *state;
	struct err e = ERR_INIT;
	char buf[256];
	regex_t re;
	double v = 0;
	int r;

	snprintf(buf, sizeof(buf), "%s", c->out);
	if (exec_pattern_compile(c->pattern, &re, &e))
		fail_msg("%s", e.msg);
	r = exec_metric_read(&re, buf, strlen(buf), &v, &e);
	regfree(&re);
	if (r != c->rc)
		fail_msg("%d (%s), want %d", r, e.msg, c->rc);
	if (!r)
		assert_true(v == c->value);
	else
		assert_string_equal(e.msg, c->msg);
	assert_string_equal(buf, c->out);	/* put back */
}

static void test_which(void **state)
{
	char root[] = "/tmp/thpeval-execwl-XXXXXX", path[512];

	(void)state;
	assert_non_null(wlt_tree(root, false, 102400));
	wlt_put(root, "/usr/bin/tool", "#!/bin/sh\n");
	snprintf(path, sizeof(path), "%s/usr/bin/tool", root);
	assert_int_equal(exec_which(root, "tool", path, sizeof(path)), -ENOENT);	/* not executable */
	snprintf(path, sizeof(path), "%s/usr/bin/tool", root);
	assert_int_equal(chmod(path, 0755), 0);
	assert_int_equal(exec_which(root, "tool", path, sizeof(path)), 0);
	assert_true(!strncmp(path, root, strlen(root)) && !strcmp(path + strlen(root), "/usr/bin/tool"));
	assert_int_equal(exec_which(root, "/usr/bin/tool", path, sizeof(path)), 0);
	assert_int_equal(exec_which(root, "other", path, sizeof(path)), -ENOENT);
	wlt_tree_free(root);
}

static void test_dir(void **state)
{
	enum exec_dir d;

	(void)state;
	assert_int_equal(exec_dir_parse("higher", &d), 0);
	assert_int_equal(d, EXEC_HIGHER);
	assert_string_equal(exec_dir_field(d), "metric_higher");
	assert_int_equal(exec_dir_parse("lower", &d), 0);
	assert_string_equal(exec_dir_field(d), "metric_lower");
	assert_string_equal(exec_dir_name(d), "lower");
	assert_int_equal(exec_dir_parse("Higher", &d), -EINVAL);
	assert_int_equal(exec_dir_parse("", &d), -EINVAL);
}

/* its traits: coverage of the command's faults, like a build; the user's number and wall time gate */
static void test_traits(void **state)
{
	const struct wl_rule *r = wltraits_rule("exec", NULL);

	(void)state;
	assert_non_null(wltraits_find("exec"));
	assert_string_equal(r->cov_field, "huge_fault_pct");
	assert_int_equal(r->want, WL_WANT_ALWAYS);
	assert_true(wltraits_primary("exec", "metric_higher"));
	assert_true(wltraits_primary("exec", "metric_lower"));
	assert_true(wltraits_primary("exec", "wall_s"));
	assert_false(wltraits_primary("exec", "sys_s"));
}

int main(void)
{
	struct CMUnitTest tests[N(run_cases) + N(read_cases) + 8];
	size_t i, n = 0;

	for (i = 0; i < N(run_cases); i++)
		tests[n++] = (struct CMUnitTest){ run_cases[i].name, test_run, NULL, NULL, &run_cases[i] };
	for (i = 0; i < N(read_cases); i++)
		tests[n++] = (struct CMUnitTest){ read_cases[i].name, test_read, NULL, NULL,
						  (void *)(uintptr_t)&read_cases[i] };
	tests[n++] = (struct CMUnitTest){ "an encoding the decoder refuses", test_bad_encoding, NULL, NULL, NULL };
	tests[n++] = (struct CMUnitTest){ "the process group killed", test_group_killed, NULL, NULL, NULL };
	tests[n++] = (struct CMUnitTest){ "the output's last MiB kept", test_output_tail, NULL, NULL, NULL };
	tests[n++] = (struct CMUnitTest){ "a file that cannot be executed", test_cannot_execute, NULL, NULL, NULL };
	tests[n++] = (struct CMUnitTest){ "PATH search under a root", test_which, NULL, NULL, NULL };
	tests[n++] = (struct CMUnitTest){ "directions", test_dir, NULL, NULL, NULL };
	tests[n++] = (struct CMUnitTest){ "traits", test_traits, NULL, NULL, NULL };
	return _cmocka_run_group_tests("execwl", tests, n, NULL, NULL);
}
