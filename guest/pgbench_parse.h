/*
 * pgbench_parse: what the pgbench workload reads from PostgreSQL's programs,
 * pure and bounded: pgbench's report of a timed run, postmaster.pid's
 * readiness, and the shmem_enabled values that give shared memory huge
 * pages. libc and lib only; never prints.
 */
#ifndef THPEVAL_GUEST_PGBENCH_PARSE_H
#define THPEVAL_GUEST_PGBENCH_PARSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "lib/err.h"

#define PG_TYPE_MAX 64

/* What pgbench printed on stdout after a timed run. */
struct pgbench_result {
	char type[PG_TYPE_MAX];		/* "select only", "TPC-B (sort of)" */
	uint64_t scale, clients, threads, duration_s, processed, failed;
	bool have_failed;		/* PostgreSQL 15+ */
	double latency_avg_ms, tps, conn_ms;
	bool have_conn_ms;
};

/*
 * pgbench's report (PostgreSQL 14 to 17): every non-empty line one it prints
 * for a -T run ("transaction type: <builtin: NAME>", "scaling factor: N",
 * "number of transactions actually processed: N", "latency average = X ms",
 * "tps = X (without initial connection time)" ...), each at most once;
 * required: type, scaling factor, clients, duration, processed, latency
 * average and tps. Numbers strict and bounded (tps in (0, 1e8], latency in
 * (0, 1e7] ms, processed >= 1, failed <= processed). 0, or -EBADMSG with the
 * line and the reason in e.
 */
int pgbench_parse(const char *text, size_t n, struct pgbench_result *r, struct err *e);

/*
 * postmaster.pid text: 0 when its first line is pid and its eighth (the
 * status) is "ready"; -EAGAIN while it is shorter or says starting; -EBADMSG
 * for another pid or another shape.
 */
int pg_pidfile_ready(const char *text, size_t n, pid_t pid);

/* a shmem_enabled value --shmem-thp accepts (or "keep") */
bool pg_shmem_value_valid(const char *v);
/* 1 when shared memory gets huge pages under this shmem_enabled (always, within_size, force), else 0 */
int pg_shmem_want(const char *shmem_enabled);

#endif
