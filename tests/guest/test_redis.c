/*
 * tests for guest/redis.c: the redis-benchmark --csv parser, the INFO checker
 * and getters and the RESP reply parser on table-driven texts (real output,
 * then malformed, out-of-range and oversized); parameter checks through the
 * harness on fake roots; a short real run where redis-server and
 * redis-benchmark are installed; its traits.
 */
#include <errno.h>
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

#include "guest/redis.h"
#include "lib/wltraits.h"
#include "wltest.h"

#define N(a) WLT_N(a)

/* ---- redis-benchmark --csv ------------------------------------------------------- */

#define HDR "\"test\",\"rps\",\"avg_latency_ms\",\"min_latency_ms\",\"p50_latency_ms\",\"p95_latency_ms\"," \
	    "\"p99_latency_ms\",\"max_latency_ms\"\n"
#define SET_ROW "\"SET\",\"57971.02\",\"0.554\",\"0.088\",\"0.511\",\"0.863\",\"2.135\",\"4.543\"\n"
#define GET_ROW "\"GET\",\"59347.18\",\"0.517\",\"0.192\",\"0.487\",\"0.823\",\"1.071\",\"2.527\"\n"

struct csv_case {
	const char *name;
	const char *text;
	size_t nrows;		/* 0: an error containing why */
	const char *why;
	double get_rps, get_p99;
};

static struct csv_case csv_cases[] = {
	{ "csv: redis-benchmark 7.0's output", HDR SET_ROW GET_ROW, 2, NULL, 59347.18, 1.071 },
	{ "csv: CRLF line ends", "\"test\",\"rps\",\"avg_latency_ms\",\"min_latency_ms\",\"p50_latency_ms\","
	  "\"p95_latency_ms\",\"p99_latency_ms\",\"max_latency_ms\"\r\n\"GET\",\"10\",\"1\",\"1\",\"1\",\"1\",\"1\","
	  "\"1\"\r\n", 1, NULL, 10, 1 },
	{ "csv: no final newline", HDR "\"GET\",\"10\",\"1\",\"0.5\",\"1\",\"1\",\"1\",\"2\"", 1, NULL, 10, 1 },
	{ "csv: a name with spaces and parentheses", HDR "\"LPUSH (needed to benchmark LRANGE)\",\"10\",\"1\",\"1\","
	  "\"1\",\"1\",\"1\",\"1\"\n", 1, NULL, 0, 0 },
	{ "csv: no output", "", 0, "no output", 0, 0 },
	{ "csv: header only", HDR, 0, "a header and no row", 0, 0 },
	{ "csv: the quiet format instead", "SET: 57971.02 requests per second, p50=0.511 msec\n", 0,
	  "line 1 is not its header", 0, 0 },
	{ "csv: another header", "\"test\",\"rps\"\n" GET_ROW, 0, "line 1 is not its header", 0, 0 },
	{ "csv: a warning mixed in", HDR "WARNING: Could not fetch server CONFIG\n" GET_ROW, 0, "a field is not quoted",
	  0, 0 },
	{ "csv: an unquoted number", HDR "\"GET\",59347.18,\"0.517\",\"0.192\",\"0.487\",\"0.823\",\"1.071\","
	  "\"2.527\"\n", 0, "a field is not quoted", 0, 0 },
	{ "csv: seven fields", HDR "\"GET\",\"1\",\"1\",\"1\",\"1\",\"1\",\"1\"\n", 0, "expected 8", 0, 0 },
	{ "csv: nine fields", HDR "\"GET\",\"1\",\"1\",\"1\",\"1\",\"1\",\"1\",\"1\",\"1\"\n", 0, "more than 8", 0, 0 },
	{ "csv: an unterminated quote", HDR "\"GET\",\"1\",\"1\",\"1\",\"1\",\"1\",\"1\",\"1\n", 0, "unterminated", 0, 0 },
	{ "csv: a negative latency", HDR "\"GET\",\"10\",\"-1\",\"1\",\"1\",\"1\",\"1\",\"1\"\n", 0, "non-negative", 0,
	  0 },
	{ "csv: nan", HDR "\"GET\",\"nan\",\"1\",\"1\",\"1\",\"1\",\"1\",\"1\"\n", 0, "non-negative number", 0, 0 },
	{ "csv: infinity", HDR "\"GET\",\"1e999\",\"1\",\"1\",\"1\",\"1\",\"1\",\"1\"\n", 0, "non-negative number", 0,
	  0 },
	{ "csv: hex", HDR "\"GET\",\"0x10\",\"1\",\"1\",\"1\",\"1\",\"1\",\"1\"\n", 0, "non-negative number", 0, 0 },
	{ "csv: an empty number", HDR "\"GET\",\"\",\"1\",\"1\",\"1\",\"1\",\"1\",\"1\"\n", 0, "empty or too long", 0,
	  0 },
	{ "csv: zero rps", HDR "\"GET\",\"0\",\"1\",\"1\",\"1\",\"1\",\"1\",\"1\"\n", 0, "rps out of range", 0, 0 },
	{ "csv: rps too high", HDR "\"GET\",\"2e9\",\"1\",\"1\",\"1\",\"1\",\"1\",\"1\"\n", 0, "rps out of range", 0, 0 },
	{ "csv: a latency too high", HDR "\"GET\",\"1\",\"1\",\"1\",\"1\",\"1\",\"1\",\"2e6\"\n", 0, "above 1e6", 0, 0 },
	{ "csv: percentiles out of order", HDR "\"GET\",\"10\",\"1\",\"0.5\",\"2\",\"1.5\",\"3\",\"4\"\n", 0,
	  "out of order", 0, 0 },
	{ "csv: the average below the minimum", HDR "\"GET\",\"10\",\"0.1\",\"0.5\",\"1\",\"1\",\"1\",\"2\"\n", 0,
	  "outside [min, max]", 0, 0 },
	{ "csv: a quote in the name", HDR "\"GE\"T\",\"10\",\"1\",\"1\",\"1\",\"1\",\"1\",\"1\"\n", 0, "expected 8", 0,
	  0 },
	{ "csv: a bad character in the name", HDR "\"GET;rm\",\"10\",\"1\",\"1\",\"1\",\"1\",\"1\",\"1\"\n", 0,
	  "bad character", 0, 0 },
	{ "csv: a name too long", HDR "\"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA\",\"10\","
	  "\"1\",\"1\",\"1\",\"1\",\"1\",\"1\"\n", 0, "empty or too long", 0, 0 },
	{ "csv: nine rows", HDR GET_ROW GET_ROW GET_ROW GET_ROW GET_ROW GET_ROW GET_ROW GET_ROW GET_ROW, 0,
	  "more than 8 rows", 0, 0 },
	{ "csv: a blank line inside", HDR GET_ROW "\n" SET_ROW, 0, "a field is not quoted", 0, 0 },
};

static void test_csv(void **state)
{
	const struct csv_case *c = *state;
	struct redis_bench_row rows[REDIS_BENCH_ROWS];
	const struct redis_bench_row *get;
	struct err e = ERR_INIT;
	size_t n = 99;
	int r = redis_bench_csv_parse(c->text, strlen(c->text), rows, REDIS_BENCH_ROWS, &n, &e);

	if (!c->nrows) {
		assert_int_equal(r, -EBADMSG);
		if (!strstr(e.msg, c->why))
			fail_msg("'%s' lacks '%s'", e.msg, c->why);
		return;
	}
	if (r)
		fail_msg("refused: %s", e.msg);
	assert_int_equal(n, c->nrows);
	if (c->get_rps > 0) {
		get = redis_bench_row_find(rows, n, "GET");
		assert_non_null(get);
		assert_true(get->rps == c->get_rps);
		assert_true(get->p99_ms == c->get_p99);
	}
}

/* longer than the output the workload keeps, a NUL, a line over 512 bytes: refused */
static void test_csv_oversized(void **state)
{
	struct redis_bench_row rows[REDIS_BENCH_ROWS];
	struct err e = ERR_INIT;
	size_t n, len = 20000;
	char *big = malloc(len + 1), nul[] = HDR "\"GET\0\"";

	(void)state;
	assert_non_null(big);
	memset(big, 'x', len);
	big[len] = '\0';
	assert_int_equal(redis_bench_csv_parse(big, len, rows, REDIS_BENCH_ROWS, &n, &e), -EBADMSG);
	assert_non_null(strstr(e.msg, "output over"));
	err_clear(&e);
	memcpy(big, HDR, strlen(HDR));
	big[1000] = '\n';
	assert_int_equal(redis_bench_csv_parse(big, 2000, rows, REDIS_BENCH_ROWS, &n, &e), -EBADMSG);
	assert_non_null(strstr(e.msg, "over 512 bytes"));
	err_clear(&e);
	assert_int_equal(redis_bench_csv_parse(nul, sizeof(nul) - 1, rows, REDIS_BENCH_ROWS, &n, &e), -EBADMSG);
	assert_non_null(strstr(e.msg, "NUL"));
	free(big);
}

/* ---- INFO ------------------------------------------------------------------------- */

#define INFO_PERSIST "# Persistence\r\nloading:0\r\nrdb_bgsave_in_progress:0\r\nrdb_last_bgsave_status:ok\r\n" \
		     "rdb_saves:1\r\nrdb_last_cow_size:978944\r\n\r\n# Stats\r\nlatest_fork_usec:1145\r\n" \
		     "current_fork_perc:0.00\r\n"

struct info_case {
	const char *name;
	const char *text;
	int check;		/* redis_info_check */
	const char *key;
	int get;		/* redis_info_u64 on key */
	uint64_t value;
	const char *why;
};

static struct info_case info_cases[] = {
	{ "info: a fork time", INFO_PERSIST, 0, "latest_fork_usec", 0, 1145, NULL },
	{ "info: the cow size", INFO_PERSIST, 0, "rdb_last_cow_size", 0, 978944, NULL },
	{ "info: a key absent", INFO_PERSIST, 0, "rdb_changes", -ENOENT, 0, NULL },
	{ "info: a prefix of a key is not the key", INFO_PERSIST, 0, "rdb_last", -ENOENT, 0, NULL },
	{ "info: a value not an integer", INFO_PERSIST, 0, "current_fork_perc", -EBADMSG, 0, NULL },
	{ "info: a status not an integer", INFO_PERSIST, 0, "rdb_last_bgsave_status", -EBADMSG, 0, NULL },
	{ "info: LF line ends", "# Stats\nlatest_fork_usec:7\n", 0, "latest_fork_usec", 0, 7, NULL },
	{ "info: a line without a colon", "# Stats\r\nlatest_fork_usec 7\r\n", -EBADMSG, NULL, 0, 0,
	  "is not key:value" },
	{ "info: an upper-case key", "Latest:7\r\n", -EBADMSG, NULL, 0, 0, "is not key:value" },
	{ "info: a control byte in a value", "a:\x1b[2J\r\n", -EBADMSG, NULL, 0, 0, "control" },
	{ "info: a bad section", "#Stats\r\n", -EBADMSG, NULL, 0, 0, "section" },
	{ "info: a huge value", "a:99999999999999999999999\r\n", 0, "a", -EBADMSG, 0, NULL },
};

static void test_info(void **state)
{
	const struct info_case *c = *state;
	struct err e = ERR_INIT;
	uint64_t v = 0;

	assert_int_equal(redis_info_check(c->text, strlen(c->text), &e), c->check);
	if (c->check && !strstr(e.msg, c->why))
		fail_msg("'%s' lacks '%s'", e.msg, c->why);
	if (!c->key)
		return;
	assert_int_equal(redis_info_u64(c->text, strlen(c->text), c->key, &v), c->get);
	if (!c->get)
		assert_int_equal(v, c->value);
}

static void test_info_get(void **state)
{
	char out[8];

	(void)state;
	assert_int_equal(redis_info_get(INFO_PERSIST, strlen(INFO_PERSIST), "rdb_last_bgsave_status", out,
					sizeof(out)), 0);
	assert_string_equal(out, "ok");
	assert_int_equal(redis_info_get(INFO_PERSIST, strlen(INFO_PERSIST), "rdb_last_cow_size", out, 4), -E2BIG);
}

/* ---- RESP -------------------------------------------------------------------------- */

struct resp_case {
	const char *name;
	const char *text;
	size_t len;		/* 0: strlen(text) */
	ssize_t rc;		/* bytes used, 0 incomplete, -EBADMSG */
	enum resp_type type;
	const char *str;
	int64_t num;
};

static struct resp_case resp_cases[] = {
	{ "resp: status", "+OK\r\n", 0, 5, RESP_SIMPLE, "OK", 0 },
	{ "resp: error", "-ERR unknown command\r\n", 0, 22, RESP_ERROR, "ERR unknown command", 0 },
	{ "resp: integer", ":65536\r\n", 0, 8, RESP_INT, NULL, 65536 },
	{ "resp: negative integer", ":-3\r\n", 0, 5, RESP_INT, NULL, -3 },
	{ "resp: bulk", "$5\r\nhello\r\n+OK\r\n", 0, 11, RESP_BULK, "hello", 0 },
	{ "resp: empty bulk", "$0\r\n\r\n", 0, 6, RESP_BULK, "", 0 },
	{ "resp: null bulk", "$-1\r\n", 0, 5, RESP_NULL, NULL, 0 },
	{ "resp: nothing yet", "", 0, 0, RESP_SIMPLE, NULL, 0 },
	{ "resp: a status without its LF", "+OK\r", 0, 0, RESP_SIMPLE, NULL, 0 },
	{ "resp: a bulk cut", "$5\r\nhel", 0, 0, RESP_SIMPLE, NULL, 0 },
	{ "resp: a bulk without its CRLF", "$5\r\nhello", 0, 0, RESP_SIMPLE, NULL, 0 },
	{ "resp: an array", "*1\r\n$1\r\na\r\n", 0, -EBADMSG, RESP_SIMPLE, NULL, 0 },
	{ "resp: RESP3 map", "%1\r\n", 0, -EBADMSG, RESP_SIMPLE, NULL, 0 },
	{ "resp: LF alone", "+OK\n", 0, -EBADMSG, RESP_SIMPLE, NULL, 0 },
	{ "resp: CR alone", "+O\rK\r\n", 0, -EBADMSG, RESP_SIMPLE, NULL, 0 },
	{ "resp: a bulk of -2", "$-2\r\n", 0, -EBADMSG, RESP_SIMPLE, NULL, 0 },
	{ "resp: a bulk over the cap", "$2000000\r\n", 0, -EBADMSG, RESP_SIMPLE, NULL, 0 },
	{ "resp: a bulk with bad terminator", "$2\r\nabXY", 0, -EBADMSG, RESP_SIMPLE, NULL, 0 },
	{ "resp: an integer not a number", ":12a\r\n", 0, -EBADMSG, RESP_SIMPLE, NULL, 0 },
	{ "resp: an integer too long", ":123456789012345678901234567890\r\n", 0, -EBADMSG, RESP_SIMPLE, NULL, 0 },
	{ "resp: garbage", "hello\r\n", 0, -EBADMSG, RESP_SIMPLE, NULL, 0 },
};

static void test_resp(void **state)
{
	const struct resp_case *c = *state;
	struct resp_reply r;
	ssize_t k = resp_parse(c->text, c->len ? c->len : strlen(c->text), REDIS_BULK_MAX, &r);

	assert_int_equal(k, c->rc);
	if (k <= 0)
		return;
	assert_int_equal(r.type, c->type);
	if (c->str) {
		assert_int_equal(r.len, strlen(c->str));
		assert_memory_equal(r.str, c->str, r.len);
	}
	if (c->type == RESP_INT)
		assert_int_equal(r.num, c->num);
}

/* a status line over 1 KiB: refused before its end comes */
static void test_resp_long_line(void **state)
{
	char line[2048];
	struct resp_reply r;

	(void)state;
	line[0] = '+';
	memset(line + 1, 'a', sizeof(line) - 1);
	assert_int_equal(resp_parse(line, sizeof(line), REDIS_BULK_MAX, &r), -EBADMSG);
}

/* ---- parameters -------------------------------------------------------------------- */

static char root_none[] = "/tmp/thpeval-redis-none-XXXXXX";	/* no redis programs */
static char root_small[] = "/tmp/thpeval-redis-small-XXXXXX";	/* the programs, MemAvailable 200M */

static struct wlt_bad bad_cases[] = {
	{ "bad: value over 1M", root_small, { "redis", "--value-size=2M" }, HARNESS_USAGE, REC_FAIL,
	  "--value-size=2M is out of range (16 to 1M)" },
	{ "bad: too many keys", root_small, { "redis", "--dataset=32G", "--value-size=16" }, HARNESS_USAGE, REC_FAIL,
	  "more than 1000000000" },
	{ "bad: relative dir", root_small, { "redis", "--dir=tmp" }, HARNESS_USAGE, REC_FAIL, "bad --dir 'tmp'" },
	{ "bad: dir with ..", root_small, { "redis", "--dir=/tmp/../etc" }, HARNESS_USAGE, REC_FAIL, "bad --dir" },
	{ "bad: zero requests", root_small, { "redis", "--requests=0" }, HARNESS_USAGE, REC_FAIL,
	  "--requests=0 is out of range" },
	{ "bad: more than memory", root_small, { "redis", "--dataset=512M" }, HARNESS_USAGE, REC_FAIL,
	  "available: a smaller --dataset" },
	{ "skip: no redis-server", root_none, { "redis" }, HARNESS_SKIPPED, REC_SKIP,
	  "the guest image needs redis-server" },
};

static void test_bad(void **state)
{
	const struct wlt_bad *c = *state;

	wlt_expect_bad(c->root, c->argv, N(c->argv), c->rc, c->type, c->reason, NULL);
}

/* ---- a real run ---------------------------------------------------------------------- */

static void test_real_run(void **state)
{
	const char *argv[] = { "redis", "--dataset=4M", "--value-size=1K", "--requests=2000", "--clients=8",
			       "--label=guest_thp=test" };
	static const char *const positive[] = { "keys", "load_s", "used_memory_bytes", "set_req_per_s",
						"get_req_per_s", "get_avg_ms", "bgsave_fork_us", "bgsave_s",
						"rss_bytes", "anon_bytes", NULL };
	struct wlt_out o;
	double pct, p50, p99;
	uint64_t keys;

	(void)state;
	if (access(REDIS_SERVER, X_OK) || access(REDIS_BENCHMARK, X_OK)) {
		print_message("skipped: no %s or %s here (apt-get install redis-server)\n", REDIS_SERVER,
			      REDIS_BENCHMARK);
		skip();
	}
	wlt_run("", argv, N(argv), &o);
	if (o.rc != HARNESS_OK)
		fail_msg("exit %d: %s", o.rc, o.msg);
	assert_int_equal(o.n, 1);
	wlt_declared("redis", &o.rec[0], "guest_thp");
	wlt_positive(&o.rec[0], positive);
	assert_int_equal(rec_get_u64(&o.rec[0], "keys", &keys), 0);
	assert_int_equal(keys, 4096);
	assert_int_equal(rec_get_f64(&o.rec[0], "get_p50_ms", &p50), 0);
	assert_int_equal(rec_get_f64(&o.rec[0], "get_p99_ms", &p99), 0);
	assert_true(p50 <= p99);
	if (rec_get_f64(&o.rec[0], "huge_pct", &pct) == 0)
		assert_true(pct >= 0 && pct <= 100);
	else
		assert_non_null(rec_get(&o.rec[0], "cov_note"));
	wlt_free(&o);
}

/* its traits: coverage under THP always only, the gate's metrics and their directions in the names */
static void test_traits(void **state)
{
	const struct wl_rule *r = wltraits_rule("redis", NULL);
	const struct wl_split *sp = wltraits_split("redis");
	const char *const *pk = wltraits_packages("redis");
	const struct workload *w = workload_find("redis");

	(void)state;
	assert_string_equal(r->cov_field, "huge_pct");
	assert_int_equal(r->want, WL_WANT_ALWAYS);
	assert_true(wltraits_primary("redis", "get_req_per_s"));
	assert_true(wltraits_primary("redis", "bgsave_fork_us"));
	assert_false(wltraits_primary("redis", "load_s"));
	assert_non_null(sp);
	assert_null(sp->fault_metric);	/* no separable fault phase */
	assert_true(workload_has_field(w, sp->access_metric));
	assert_non_null(pk);
	assert_string_equal(pk[0], "redis-server");
}

static int setup(void **state)
{
	char path[128];

	(void)state;
	if (!wlt_tree(root_none, false, 1024000) || !wlt_tree(root_small, false, 204800))
		return -1;
	/* stand-ins for the programs: check() only looks for them */
	wlt_put(root_small, REDIS_SERVER, "#!/bin/sh\nexit 1\n");
	wlt_put(root_small, REDIS_BENCHMARK, "#!/bin/sh\nexit 1\n");
	snprintf(path, sizeof(path), "%s%s", root_small, REDIS_SERVER);
	if (chmod(path, 0755))
		return -1;
	snprintf(path, sizeof(path), "%s%s", root_small, REDIS_BENCHMARK);
	return chmod(path, 0755) ? -1 : 0;
}

static int teardown(void **state)
{
	(void)state;
	wlt_tree_free(root_none);
	wlt_tree_free(root_small);
	return 0;
}

int main(void)
{
	struct CMUnitTest tests[N(csv_cases) + N(info_cases) + N(resp_cases) + N(bad_cases) + 8];
	size_t i, n = 0;

	for (i = 0; i < N(csv_cases); i++)
		tests[n++] = (struct CMUnitTest){ csv_cases[i].name, test_csv, NULL, NULL, &csv_cases[i] };
	tests[n++] = (struct CMUnitTest){ "csv: oversized, a NUL, a long line", test_csv_oversized, NULL, NULL, NULL };
	for (i = 0; i < N(info_cases); i++)
		tests[n++] = (struct CMUnitTest){ info_cases[i].name, test_info, NULL, NULL, &info_cases[i] };
	tests[n++] = (struct CMUnitTest){ "info: a text value, and one too long", test_info_get, NULL, NULL, NULL };
	for (i = 0; i < N(resp_cases); i++)
		tests[n++] = (struct CMUnitTest){ resp_cases[i].name, test_resp, NULL, NULL, &resp_cases[i] };
	tests[n++] = (struct CMUnitTest){ "resp: a line over 1 KiB", test_resp_long_line, NULL, NULL, NULL };
	for (i = 0; i < N(bad_cases); i++)
		tests[n++] = (struct CMUnitTest){ bad_cases[i].name, test_bad, NULL, NULL, &bad_cases[i] };
	tests[n++] = (struct CMUnitTest){ "short real run", test_real_run, NULL, NULL, NULL };
	tests[n++] = (struct CMUnitTest){ "traits", test_traits, NULL, NULL, NULL };
	return _cmocka_run_group_tests("redis", tests, n, setup, teardown);
}
