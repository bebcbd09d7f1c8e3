/*
 * tests for guest/runner.c: the child-output path (read -> validate ->
 * re-sequence -> write) with pipes, children that misbehave (/bin/sh), and
 * the whole runner in test mode.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "guest/harness.h"
#include "guest/runner.h"
#include "guest/sysinfo.h"
#include "lib/argv.h"
#include "lib/record.h"
#include "tests/guest/recstream.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))
static size_t count_type(const struct stream *s, enum rec_type t)
{
	size_t i, n = 0;

	for (i = 0; i < s->n; i++)
		n += s->rec[i].type == t;
	return n;
}

static const struct record *find_reason(const struct stream *s, const char *sub)
{
	size_t i;

	for (i = 0; i < s->n; i++) {
		const char *r = rec_get(&s->rec[i], "reason");

		if (s->rec[i].type == REC_FAIL && r && strstr(r, sub))
			return &s->rec[i];
	}
	return NULL;
}

static void context(struct record *ctx)
{
	rec_init(ctx, REC_FAIL, 0);
	rec_add_str(ctx, "workload", "memset");
	rec_add_u64(ctx, "rep", 2);
	rec_add_str(ctx, "guest_thp", "always");
}

static void line_of(enum rec_type t, uint32_t seq, char *buf, size_t len)
{
	struct record r;

	rec_init(&r, t, seq);
	rec_add_str(&r, "workload", "memset");
	rec_add_f64(&r, "access_ns", 12.5);
	assert_true(rec_format(&r, buf, len) > 0);
}

/* ---- runner_forward ------------------------------------------------------- */

struct fwd_case {
	const char *name;
	void (*make)(char *buf, size_t len);	/* the child's stdout */
	unsigned forwarded;
	unsigned fails;		/* fail records the runner adds */
	const char *reason;	/* in one of them */
};

static void mk_two_valid(char *b, size_t len)
{
	char l1[REC_MAX_LINE + 2], l2[REC_MAX_LINE + 2];

	line_of(REC_INFO, 0, l1, sizeof(l1));
	line_of(REC_RESULT, 1, l2, sizeof(l2));
	snprintf(b, len, "%s%s", l1, l2);
}

static void mk_garbage(char *b, size_t len)
{
	snprintf(b, len, "Segmentation fault? no, just text\n");
}

static void mk_oversized(char *b, size_t len)
{
	char ok[REC_MAX_LINE + 2];

	memset(b, 'x', 3000);
	b[3000] = '\n';
	line_of(REC_RESULT, 0, ok, sizeof(ok));	/* what follows still gets through */
	snprintf(b + 3001, len - 3001, "%s", ok);
}

static void mk_bad_checksum(char *b, size_t len)
{
	char *p;

	line_of(REC_RESULT, 0, b, len);
	p = strstr(b, "12.5");
	p[0] = '9';
}

static void mk_runner_type(char *b, size_t len)
{
	line_of(REC_END, 0, b, len);
}

static void mk_out_of_sequence(char *b, size_t len)
{
	char l1[REC_MAX_LINE + 2], l2[REC_MAX_LINE + 2];

	line_of(REC_INFO, 0, l1, sizeof(l1));
	line_of(REC_RESULT, 2, l2, sizeof(l2));
	snprintf(b, len, "%s%s", l1, l2);
}

static void mk_no_newline(char *b, size_t len)
{
	line_of(REC_RESULT, 0, b, len);
	b[strlen(b) - 1] = '\0';
}

static void mk_flood(char *b, size_t len)
{
	size_t i, pos = 0;

	for (i = 0; i < 20; i++)
		pos += (size_t)snprintf(b + pos, len - pos, "junk %zu\n", i);
}

static struct fwd_case fwd_cases[] = {
	{ "valid records are renumbered", mk_two_valid, 2, 0, NULL },
	{ "garbage line", mk_garbage, 0, 1,
	  "workload printed a malformed record: not a THPEVAL1 record" },
	{ "oversized line", mk_oversized, 1, 1,
	  "workload printed a malformed record: line longer than 2048 bytes" },
	{ "bad checksum", mk_bad_checksum, 0, 1, "malformed record: checksum mismatch" },
	{ "record type of the runner", mk_runner_type, 0, 1, "'end' records belong to the runner" },
	{ "out of sequence", mk_out_of_sequence, 1, 1, "sequence 2 where 1 was due" },
	{ "output ends without newline", mk_no_newline, 0, 1, "ends inside a line" },
	{ "flood of garbage is capped", mk_flood, 0, RUNNER_MAX_BAD_LINES, "further ones dropped" },
};

static void test_forward(void **state)
{
	const struct fwd_case *c = *state;
	static char child[16384];
	struct err e = ERR_INIT;
	struct fwd_stats st = { 0 };
	struct emitter em;
	struct stream s;
	struct record ctx;
	int p[2], out = memfd_create("out", 0);
	size_t i;

	assert_true(out >= 0);
	c->make(child, sizeof(child));
	assert_int_equal(pipe(p), 0);
	assert_int_equal(write(p[1], child, strlen(child)), (ssize_t)strlen(child));
	close(p[1]);
	emitter_init(&em, out, 1000);
	em.seq = 5;	/* the runner's stream is already under way */
	context(&ctx);
	assert_int_equal(runner_forward(p[0], &em, &ctx, harness_now_ns() + 5000000000ull, &st, &e),
			 0);
	close(p[0]);
	read_stream(out, &s);
	close(out);
	assert_int_equal(st.forwarded, c->forwarded);
	assert_int_equal(count_type(&s, REC_FAIL), c->fails);
	assert_int_equal(s.n, c->forwarded + c->fails);
	for (i = 0; i < s.n; i++)
		assert_int_equal(s.rec[i].seq, 5 + i);	/* the runner owns the numbering */
	if (c->reason) {
		const struct record *f = find_reason(&s, c->reason);

		if (!f)
			fail_msg("no fail record with reason '%s'", c->reason);
		assert_string_equal(rec_get(f, "workload"), "memset");
		assert_string_equal(rec_get(f, "guest_thp"), "always");
		assert_string_equal(rec_get(f, "rep"), "2");
	}
}

static void test_forward_deadline(void **state)
{
	struct err e = ERR_INIT;
	struct fwd_stats st = { 0 };
	struct emitter em;
	struct record ctx;
	int p[2];
	uint64_t t0 = harness_now_ns();

	(void)state;
	assert_int_equal(pipe(p), 0);
	emitter_init(&em, STDOUT_FILENO, 1000);
	context(&ctx);
	/* the writer stays open and silent: given up at the deadline, not before, not never */
	assert_int_equal(runner_forward(p[0], &em, &ctx, t0 + 200000000ull, &st, &e), -ETIMEDOUT);
	assert_true(harness_now_ns() - t0 >= 200000000ull);
	assert_true(harness_now_ns() - t0 < 30000000000ull);	/* a sanity bound */
	close(p[0]);
	close(p[1]);
}

/* ---- runner_exec with children that misbehave --------------------------------- */

/*
 * Children that end on their own get EXEC_LONG_MS; those that hang (sleep
 * EXEC_HANG_S) get EXEC_SHORT_MS, long enough for a shell's printf on a busy
 * machine: the runner must give up on them at that timeout, far before the
 * sleep ends.
 */
#define EXEC_LONG_MS 30000
#define EXEC_SHORT_MS 3000
#define EXEC_HANG_S "120"
#define EXEC_BOUND_NS 60000000000ull	/* half the hang: a sanity bound */

struct exec_case {
	const char *name;
	const char *script;	/* sh -c; $1 is a valid result line, $2 a valid fail line */
	uint64_t timeout_ms;
	unsigned results, fails;
	const char *reason;
	const char *key, *val;	/* a field of that fail record */
};

static struct exec_case exec_cases[] = {
	{ "clean result", "printf '%s' \"$1\"", EXEC_LONG_MS, 1, 0, NULL, NULL, NULL },
	{ "killed by a signal", "kill -SEGV $$", EXEC_LONG_MS, 0, 1, "workload killed by signal 11",
	  "signal", "11" },
	{ "killed after its result", "printf '%s' \"$1\"; kill -KILL $$", EXEC_LONG_MS, 1, 1,
	  "killed by signal 9", "signal", "9" },
	{ "non-zero exit without a record", "exit 3", EXEC_LONG_MS, 0, 1,
	  "workload exited with status 3 without a fail record", "exit_status", "3" },
	{ "non-zero exit with its own fail record", "printf '%s' \"$2\"; exit 2", EXEC_LONG_MS, 0,
	  1, "size 3M", NULL, NULL },
	{ "exit 0 without a result", "true", EXEC_LONG_MS, 0, 1,
	  "workload exited without a result record", "exit_status", "0" },
	{ "timeout", "printf '%s' \"$1\"; exec sleep " EXEC_HANG_S, EXEC_SHORT_MS, 1, 1, "timeout",
	  "timeout_ms", "3000" },
	{ "closes stdout and hangs", "exec >&-; exec sleep " EXEC_HANG_S, EXEC_SHORT_MS, 0, 1,
	  "timeout", NULL, NULL },
	{ "garbage then exit 1", "echo oops; exit 1", EXEC_LONG_MS, 0, 2, "status 1", "exit_status",
	  "1" },
};

static void test_exec(void **state)
{
	const struct exec_case *c = *state;
	char res[REC_MAX_LINE + 2], fl[REC_MAX_LINE + 2];
	struct err e = ERR_INIT;
	struct fwd_stats st;
	struct emitter em;
	struct stream s;
	struct record ctx, r;
	int out = memfd_create("out", 0);
	uint64_t t0, dt;

	assert_true(out >= 0);
	line_of(REC_RESULT, 0, res, sizeof(res));
	rec_init(&r, REC_FAIL, 0);
	rec_add_str(&r, "reason", "size 3M is not a multiple of 2M");
	assert_true(rec_format(&r, fl, sizeof(fl)) > 0);
	{
		char *const argv[] = { (char *)(uintptr_t)"/bin/sh", (char *)(uintptr_t)"-c",
				       (char *)(uintptr_t)c->script, (char *)(uintptr_t)"sh", res,
				       fl, NULL };

		emitter_init(&em, out, 1000);
		context(&ctx);
		t0 = harness_now_ns();
		assert_int_equal(runner_exec(argv, &em, &ctx, c->timeout_ms, &st, &e), 0);
	}
	dt = harness_now_ns() - t0;
	assert_true(dt < EXEC_BOUND_NS);	/* never waits for the sleep */
	if (c->reason && !strcmp(c->reason, "timeout"))
		assert_true(dt >= c->timeout_ms * 1000000u);	/* and not less than the timeout */
	read_stream(out, &s);
	close(out);
	assert_int_equal(count_type(&s, REC_RESULT), c->results);
	assert_int_equal(count_type(&s, REC_FAIL), c->fails);
	if (c->reason) {
		const struct record *f = find_reason(&s, c->reason);

		if (!f)
			fail_msg("no fail record with reason '%s'", c->reason);
		if (c->key) {
			assert_non_null(rec_get(f, c->key));
			assert_string_equal(rec_get(f, c->key), c->val);
		}
	}
}

static void test_exec_missing(void **state)
{
	char *const argv[] = { (char *)(uintptr_t)"/nonexistent/thpeval-guest", NULL };
	struct err e = ERR_INIT;
	struct fwd_stats st;
	struct emitter em;
	struct stream s;
	struct record ctx;
	int out = memfd_create("out", 0);

	(void)state;
	emitter_init(&em, out, 1000);
	context(&ctx);
	assert_int_equal(runner_exec(argv, &em, &ctx, EXEC_LONG_MS, &st, &e), 0);
	read_stream(out, &s);
	close(out);
	assert_int_equal(s.n, 1);
	assert_non_null(find_reason(&s, "cannot execute '/nonexistent/thpeval-guest': No such file"));
}

/* a child that reports and then holds its memory is left running until released */
static void test_exec_hold(void **state)
{
	char res[REC_MAX_LINE + 2];
	char *const argv[] = { (char *)(uintptr_t)"/bin/sh", (char *)(uintptr_t)"-c",
			       (char *)(uintptr_t)"printf '%s' \"$1\"; exec >&-; exec sleep " EXEC_HANG_S,
			       (char *)(uintptr_t)"sh", res, NULL };
	char *const quits[] = { (char *)(uintptr_t)"/bin/sh", (char *)(uintptr_t)"-c",
				(char *)(uintptr_t)"exit 3", NULL };
	struct err e = ERR_INIT;
	struct fwd_stats st;
	struct emitter em;
	struct stream s;
	struct record ctx;
	int out = memfd_create("out", 0);
	pid_t held[2] = { 0, 0 };
	uint64_t t0;

	(void)state;
	assert_true(out >= 0);
	line_of(REC_RESULT, 0, res, sizeof(res));
	emitter_init(&em, out, 1000);
	context(&ctx);
	t0 = harness_now_ns();
	assert_int_equal(runner_exec_hold(argv, &em, &ctx, EXEC_LONG_MS, &st, &held[0], &e), 0);
	assert_true(held[0] > 0);
	assert_int_equal(kill(held[0], 0), 0);	/* still running, holding */
	/* a child that fails is not held: it is reaped, with a fail record */
	assert_int_equal(runner_exec_hold(quits, &em, &ctx, EXEC_LONG_MS, &st, &held[1], &e), 0);
	assert_int_equal(held[1], -1);
	runner_release(held, 2);
	assert_int_equal(held[0], -1);
	assert_true(harness_now_ns() - t0 < EXEC_BOUND_NS);	/* released, not waited for */
	read_stream(out, &s);
	close(out);
	assert_int_equal(count_type(&s, REC_RESULT), 1);
	assert_int_equal(count_type(&s, REC_FAIL), 1);
}

/* ---- the runner in test mode -------------------------------------------------- */

/* the guest program the runner tests start (THPEVAL_GUEST_BIN, else bin/thpeval-guest); skipped unless built */
static const char *guest_bin(void)
{
	const char *bin = getenv("THPEVAL_GUEST_BIN") ? getenv("THPEVAL_GUEST_BIN") : "bin/thpeval-guest";

	if (access(bin, X_OK)) {
		print_message("skipped: '%s' is not built (make bin/thpeval-guest)\n", bin);
		skip();
	}
	return bin;
}

/* the host's THP 'enabled' value into now; skipped without THP */
static void thp_now(char *now, size_t len)
{
	if (!thp_supported("") || thp_knob_get("", "enabled", now, len, NULL) || !thp_value_valid(now)) {
		print_message("skipped: no THP here\n");
		skip();
	}
}

static int run_runner(const char *cmdline, const char *exe, struct stream *s)
{
	char cl[] = "/tmp/thpeval-cmdline-XXXXXX", out[] = "/tmp/thpeval-records-XXXXXX";
	char a0[64], a1[64], a2[256];
	char *argv[] = { a0, a1, a2, NULL };
	int fd, rc, argc = exe ? 3 : 2;

	fd = mkstemp(cl);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, cmdline, strlen(cmdline)), (ssize_t)strlen(cmdline));
	close(fd);
	fd = mkstemp(out);
	assert_true(fd >= 0);
	snprintf(a0, sizeof(a0), "--cmdline=%s", cl);
	snprintf(a1, sizeof(a1), "--port=%s", out);
	snprintf(a2, sizeof(a2), "--exe=%s", exe ? exe : "");
	rc = runner_main(argc, argv, false);
	read_stream(fd, s);
	close(fd);
	unlink(cl);
	unlink(out);
	return rc;
}

static void check_stream_frame(const struct stream *s)
{
	size_t i;

	assert_true(s->n >= 2);
	assert_int_equal(s->rec[0].type, REC_HELLO);
	assert_int_equal(s->rec[s->n - 1].type, REC_END);
	for (i = 0; i < s->n; i++)
		assert_int_equal(s->rec[i].seq, i);
	assert_non_null(rec_get(&s->rec[0], "version"));
	assert_non_null(rec_get(&s->rec[0], "kernel"));
}

static void test_runner_bad_plan(void **state)
{
	struct stream s;

	(void)state;
	assert_int_equal(run_runner("console=ttyS0 thpeval.reps=0\n", NULL, &s), 1);
	check_stream_frame(&s);
	assert_int_equal(s.n, 3);
	assert_string_equal(rec_get(&s.rec[0], "plan_ok"), "0");
	assert_non_null(find_reason(&s, "bad plan: thpeval.reps: 0 is out of range"));
	assert_string_equal(rec_get(&s.rec[2], "failed"), "1");
}

static void test_runner_plan(void **state)
{
	const char *bin;
	char cmdline[256], now[THP_VALUE_MAX];
	const char *other;
	struct stream s;
	uint64_t results = 0, skipped = 0;
	int rc;

	(void)state;
	bin = guest_bin();
	thp_knob_get("", "enabled", now, sizeof(now), NULL);
	if (!thp_value_valid(now))
		snprintf(now, sizeof(now), "never");
	other = strcmp(now, "never") ? "never" : "always";
	/* the host's own setting runs; test mode never writes sysfs, so the other is skipped */
	snprintf(cmdline, sizeof(cmdline),
		 "quiet thpeval.guest_thp=%s,%s thpeval.reps=2 thpeval.warmup=1 thpeval.size=4M "
		 "thpeval.accesses=1000 thpeval.timeout=60\n", now, other);
	rc = run_runner(cmdline, bin, &s);
	check_stream_frame(&s);
	assert_string_equal(rec_get(&s.rec[0], "plan_ok"), "1");
	assert_int_equal(count_type(&s, REC_INFO), 3);	/* one per round */
	assert_int_equal(rec_get_u64(&s.rec[s.n - 1], "results", &results), 0);
	assert_int_equal(rec_get_u64(&s.rec[s.n - 1], "skipped", &skipped), 0);
	assert_int_equal(results, count_type(&s, REC_RESULT));
	assert_int_equal(skipped, count_type(&s, REC_SKIP));
	if (thp_supported("")) {
		assert_int_equal(rc, 0);
		assert_int_equal(results, 3);	/* 1 warm-up + 2 reps for the current setting */
		assert_int_equal(skipped, 3);
	}
}

/*
 * Multi-record workloads pass through whole; hzp's runner variants (which
 * write use_zero_page) are left out in test mode: it runs once, as found.
 */
static void test_runner_multi(void **state)
{
	const char *bin;
	char cmdline[256], now[THP_VALUE_MAX];
	struct stream s;
	size_t i, hzp = 0, clear = 0;

	(void)state;
	bin = guest_bin();
	thp_now(now, sizeof(now));
	snprintf(cmdline, sizeof(cmdline),
		 "thpeval.guest_thp=%s thpeval.workloads=hzp,clearorder thpeval.reps=1 "
		 "thpeval.warmup=0 thpeval.timeout=60\n", now);
	assert_int_equal(run_runner(cmdline, bin, &s), 0);
	check_stream_frame(&s);
	for (i = 0; i < s.n; i++) {
		const char *w = rec_get(&s.rec[i], "workload");

		if (s.rec[i].type != REC_RESULT)
			continue;
		assert_string_equal(rec_get(&s.rec[i], "guest_thp"), now);
		assert_non_null(rec_get(&s.rec[i], "variant"));
		hzp += !strcmp(w, "hzp");
		clear += !strcmp(w, "clearorder");
	}
	assert_int_equal(hzp, 1);
	assert_int_equal(clear, 4);
	assert_int_equal(count_type(&s, REC_FAIL), 0);
}

/*
 * The host-cold series (thpeval.cold) runs with the workload whose traits
 * have one (lib/wltraits.h: memset), its records labelled with the traits'
 * cold variant; a plan without such a workload runs none.
 */
static const struct cold_case {
	const char *name;
	const char *workloads;
	const char *cold_workload;	/* NULL: no series */
} cold_cases[] = {
	{ "runner: host-cold series of memset", "memset", "memset" },
	{ "runner: no host-cold series without memset", "hzp", NULL },
};

static void test_runner_cold(void **state)
{
	const struct cold_case *c = *state;
	const char *bin;
	char cmdline[256], now[THP_VALUE_MAX];
	const struct record *info = NULL;
	struct stream s;
	size_t i, cold = 0;

	bin = guest_bin();
	thp_now(now, sizeof(now));
	snprintf(cmdline, sizeof(cmdline),
		 "thpeval.guest_thp=%s thpeval.workloads=%s thpeval.cold=1 thpeval.reps=1 "
		 "thpeval.warmup=0 thpeval.size=16M thpeval.accesses=1000 thpeval.timeout=60\n", now,
		 c->workloads);
	assert_int_equal(run_runner(cmdline, bin, &s), 0);
	check_stream_frame(&s);
	for (i = 0; i < s.n; i++) {
		const char *ev = rec_get(&s.rec[i], "event"), *v = rec_get(&s.rec[i], "variant");

		if (s.rec[i].type == REC_INFO && ev && !strcmp(ev, "cold"))
			info = &s.rec[i];
		if (s.rec[i].type != REC_RESULT || !v || strcmp(v, "cold"))
			continue;
		assert_non_null(c->cold_workload);
		assert_string_equal(rec_get(&s.rec[i], "workload"), c->cold_workload);
		assert_string_equal(rec_get(&s.rec[i], "guest_thp"), now);
		cold++;
	}
	if (!c->cold_workload) {
		assert_null(info);
		return;
	}
	assert_non_null(info);
	if (rec_get(info, "skipped")) {
		print_message("skipped: %s\n", rec_get(info, "skipped"));
		skip();
	}
	assert_int_equal(cold, 1);	/* one round, one guest THP setting */
}

/*
 * exec through the runner: the plan's encoded command reaches the workload
 * whole (a 1000-byte argument, its length read back by the pattern), the
 * direction and pattern with it, and a hang ends with the workload's own
 * fail record at its timeout parameter, not the runner's kill.
 */
static void test_runner_exec(void **state)
{
	const char *bin;
	static char cmdline[12000], exec[3200], enc[10000], pat[64];
	char now[THP_VALUE_MAX];
	struct argv_list a;
	struct err e = ERR_INIT;
	struct stream s;
	const struct record *r;
	uint64_t t0;
	double v;

	(void)state;
	bin = guest_bin();
	if (!thp_supported("")) {
		print_message("skipped: no THP here: the runner skips every cell\n");
		skip();
	}
	thp_knob_get("", "enabled", now, sizeof(now), NULL);
	snprintf(exec, sizeof(exec), "sh -c 'echo n ${#1}' sh ");
	memset(exec + strlen(exec), 'x', 1000);	/* within a workload option's value */
	assert_int_equal(argv_split("--exec", exec, &a, &e), 0);
	assert_true(argv_encode(&a, enc, sizeof(enc)) > 1000);
	assert_true(argv_encode_word("^n ([0-9]+)$", pat, sizeof(pat)) > 0);
	snprintf(cmdline, sizeof(cmdline), "quiet thpeval.guest_thp=%s thpeval.workloads=exec thpeval.reps=1 "
		 "thpeval.warmup=0 thpeval.wlopts=exec:argv=%s,exec:metric=%s,exec:direction=lower,"
		 "exec:timeout=30\n", now, enc, pat);
	assert_int_equal(run_runner(cmdline, bin, &s), 0);
	check_stream_frame(&s);
	assert_int_equal(count_type(&s, REC_RESULT), 1);
	for (r = s.rec; r->type != REC_RESULT; r++)
		;
	assert_int_equal(rec_get_f64(r, "metric_lower", &v), 0);
	assert_true(v == 1000);

	assert_int_equal(argv_split("--exec", "sleep 60", &a, &e), 0);
	assert_true(argv_encode(&a, enc, sizeof(enc)) > 0);
	snprintf(cmdline, sizeof(cmdline), "quiet thpeval.guest_thp=%s thpeval.workloads=exec thpeval.reps=1 "
		 "thpeval.warmup=0 thpeval.wlopts=exec:argv=%s,exec:timeout=1\n", now, enc);
	t0 = harness_now_ns();
	assert_int_equal(run_runner(cmdline, bin, &s), 1);
	assert_true(harness_now_ns() - t0 < 20ull * 1000000000u);	/* not the runner's 31 s */
	assert_int_equal(count_type(&s, REC_FAIL), 1);
	assert_non_null(find_reason(&s, "'sleep' timed out after 1 s (its process group killed)"));
}

int main(void)
{
	struct CMUnitTest tests[N(fwd_cases) + N(exec_cases) + N(cold_cases) + 7];
	size_t i, n = 0;

	for (i = 0; i < N(fwd_cases); i++)
		tests[n++] = (struct CMUnitTest){ fwd_cases[i].name, test_forward, NULL, NULL,
						  &fwd_cases[i] };
	for (i = 0; i < N(exec_cases); i++)
		tests[n++] = (struct CMUnitTest){ exec_cases[i].name, test_exec, NULL, NULL,
						  &exec_cases[i] };
	tests[n++] = (struct CMUnitTest){ "forward stops at the deadline", test_forward_deadline,
					  NULL, NULL, NULL };
	tests[n++] = (struct CMUnitTest){ "exec failure is a fail record", test_exec_missing, NULL,
					  NULL, NULL };
	tests[n++] = (struct CMUnitTest){ "a holding child is left running until released",
					  test_exec_hold, NULL, NULL, NULL };
	tests[n++] = (struct CMUnitTest){ "runner: bad plan gives hello, fail, end",
					  test_runner_bad_plan, NULL, NULL, NULL };
	tests[n++] = (struct CMUnitTest){ "runner: plan end to end in test mode", test_runner_plan,
					  NULL, NULL, NULL };
	tests[n++] = (struct CMUnitTest){ "runner: multi-record workloads, no hzp variants",
					  test_runner_multi, NULL, NULL, NULL };
	tests[n++] = (struct CMUnitTest){ "runner: exec's command, pattern and timeout", test_runner_exec,
					  NULL, NULL, NULL };
	for (i = 0; i < N(cold_cases); i++)
		tests[n++] = (struct CMUnitTest){ cold_cases[i].name, test_runner_cold, NULL, NULL,
						  (void *)(uintptr_t)&cold_cases[i] };
	return _cmocka_run_group_tests("runner", tests, n, NULL, NULL);
}
