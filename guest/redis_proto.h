/*
 * redis_proto: what the redis workload reads from Redis and its benchmark,
 * pure and bounded (redis-benchmark's --csv, INFO text, RESP2 replies), and
 * a client on the server's unix socket that sends commands and reads their
 * replies with a timeout. libc and lib only; never prints.
 */
#ifndef THPEVAL_GUEST_REDIS_PROTO_H
#define THPEVAL_GUEST_REDIS_PROTO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "lib/err.h"

#define REDIS_BULK_MAX (1u << 20)	/* bytes of one bulk reply accepted (INFO is ~5 KiB) */
#define REDIS_TEST_MAX 64
#define REDIS_CSV_MAX 16384	/* bytes of --csv output read: what appsrv keeps of it (APPSRV_OUT_MAX) */

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

/* ---- a client on the server's socket ------------------------------------------- */

struct rconn {
	int fd;
	char *buf;		/* REDIS_BULK_MAX + 2048 */
	size_t have;		/* bytes in buf */
	size_t used;		/* bytes of the last reply, dropped before the next read */
};

void rc_close(struct rconn *c);
/* 0 connected, -EAGAIN not yet (no socket, refused), else an error */
int rc_connect(struct rconn *c, const char *path, struct err *e);
int rc_send(struct rconn *c, const char *data, size_t n, struct err *e);
/* the next reply; its text stays valid until the next call */
int rc_reply(struct rconn *c, struct resp_reply *r, struct err *e);
/* the RESP encoding of argv[0..argc) appended to buf (of cap bytes, *len used); false if full */
bool resp_encode(char *buf, size_t cap, size_t *len, int argc, const char *const argv[], const size_t *lens);
/* one command and its reply; an error reply is an error */
int rc_command(struct rconn *c, int argc, const char *const argv[], struct resp_reply *r, struct err *e);
/* INFO section, checked, into a reply whose text lasts until the next command */
int rc_info(struct rconn *c, const char *section, struct resp_reply *r, struct err *e);
/* key of an INFO reply as an unsigned integer; absent or not one is an error */
int rc_info_u64(const struct resp_reply *r, const char *key, uint64_t *v, struct err *e);

#endif
