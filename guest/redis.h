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

#include "redis_proto.h"
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
#define REDIS_BENCH_ROWS 8		/* rows of redis-benchmark --csv read at most */

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

#endif
