/*
 * redis: Redis in the guest. redis-server as a child on a unix socket, a
 * dataset loaded by pipelined SETs (timed), redis-benchmark SET and GET on
 * it, then one BGSAVE (its fork time); the evidence is the server's
 * AnonHugePages / Anonymous before the fork. Entry point: wl_redis. Never
 * prints.
 */
#ifndef THPEVAL_GUEST_REDIS_H
#define THPEVAL_GUEST_REDIS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "workload.h"

/*
 * Redis in the guest: redis-server started as a child on a
 * unix socket in a fresh directory (no TCP port, no persistence: save "" and
 * no AOF; its own THP opt-out, disable-thp, off unless --thp-disable=1), a
 * dataset of --dataset bytes loaded as --value-size values under keys
 * key:000000000000.. (pipelined SETs over RESP, timed: the server's first
 * touch of its memory), redis-benchmark in the same guest for SET and GET on
 * random keys of that dataset (its --csv output: requests per second and
 * latency average, p50, p99), then one BGSAVE, the fork Redis warns about
 * (INFO's latest_fork_usec, the save's wall time, its copy-on-write bytes).
 * Coverage evidence: the server's smaps_rollup (AnonHugePages / Anonymous)
 * before the fork. The server is killed by its pid at the end, also on
 * failure, and the directory removed. Entry point: wl_redis. Never prints.
 */

#define REDIS_SERVER "/usr/bin/redis-server"
#define REDIS_BENCHMARK "/usr/bin/redis-benchmark"
#define REDIS_BULK_MAX (1u << 20)	/* bytes of one bulk reply accepted (INFO is ~5 KiB) */
#define REDIS_BENCH_ROWS 8		/* rows of redis-benchmark --csv read at most */
#define REDIS_TEST_MAX 64

/* redis's options: its parameter table points into them */
struct redis_opts {
	uint64_t dataset;	/* bytes of values loaded */
	uint64_t value_size;	/* bytes of each value */
	uint64_t requests;	/* redis-benchmark -n, per test */
	uint64_t clients;	/* redis-benchmark -c */
	bool bgsave;		/* time one BGSAVE */
	bool thp_disable;	/* redis's disable-thp: yes opts the server out of THP 'always' */
	char dir[WL_PATH_MAX];	/* where the server's directory is made */
};

extern const struct workload wl_redis;

/* ---- parsers, pure and bounded (tests/guest/test_redis.c) ---------------------- */

/* One row of redis-benchmark --csv: the test, its requests per second and latencies (ms). */
struct redis_bench_row {
	char test[REDIS_TEST_MAX];
	double rps, avg_ms, min_ms, p50_ms, p95_ms, p99_ms, max_ms;
};

/*
 * redis-benchmark --csv text: exactly its header line
 * ("test","rps","avg_latency_ms","min_latency_ms","p50_latency_ms",
 * "p95_latency_ms","p99_latency_ms","max_latency_ms"), then 1..max rows of
 * eight quoted fields, the numbers finite, rps in (0, 1e9], latencies in
 * [0, 1e6] ms with min <= p50 <= p95 <= p99 <= max and the average between
 * min and max. 0, or -EBADMSG with the line and the reason in e.
 */
int redis_bench_csv_parse(const char *text, size_t n, struct redis_bench_row *rows, size_t max,
			  size_t *nrows, struct err *e);
/* the row of test (e.g. "GET"), or NULL */
const struct redis_bench_row *redis_bench_row_find(const struct redis_bench_row *rows, size_t n,
						   const char *test);

/*
 * INFO text: lines ending in CRLF (or LF), each empty, a "# Section" header
 * or key:value (key [a-z0-9_], value printable ASCII). 0, or -EBADMSG with e
 * set.
 */
int redis_info_check(const char *text, size_t n, struct err *e);
/* key's value in INFO text into out; -ENOENT when absent, -E2BIG when longer than len - 1 */
int redis_info_get(const char *text, size_t n, const char *key, char *out, size_t len);
/* key's value as an unsigned integer; -ENOENT, or -EBADMSG when it is not one */
int redis_info_u64(const char *text, size_t n, const char *key, uint64_t *v);

/* one RESP2 reply (no arrays: the workload sends no command that answers one) */
enum resp_type { RESP_SIMPLE, RESP_ERROR, RESP_INT, RESP_BULK, RESP_NULL };

struct resp_reply {
	enum resp_type type;
	const char *str;	/* into the parsed buffer: SIMPLE, ERROR, BULK */
	size_t len;
	int64_t num;		/* INT */
};

/*
 * The reply at the start of buf[0..n): its length in bytes (> 0), 0 when
 * more bytes are needed, -EBADMSG when it is no RESP2 reply (or an array, or
 * a line over 1 KiB, or a bulk over max_bulk bytes).
 */
ssize_t resp_parse(const char *buf, size_t n, size_t max_bulk, struct resp_reply *r);

#endif
