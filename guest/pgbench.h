/*
 * pgbench: PostgreSQL in the guest. A cluster made by initdb and pgbench -i
 * (kept as a template for a boot's later runs), a fresh postgres per run
 * with shared_buffers in shared memory, pgbench select-only and TPC-B-like
 * runs timed; the evidence is the buffers' ShmemPmdMapped / Rss. Entry
 * point: wl_pgbench. Never prints.
 */
#ifndef THPEVAL_GUEST_PGBENCH_H
#define THPEVAL_GUEST_PGBENCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "workload.h"

/*
 * PostgreSQL in the guest. A cluster made by initdb and
 * filled by pgbench -i at --scale (about 15 MiB per unit, more than
 * --shared-buffers), run as an unprivileged user (PostgreSQL refuses root:
 * the children drop to it with setgid/setuid after fork); unless
 * --template=no the first run of a boot keeps a pristine copy under --dir
 * that later runs copy instead of initialising again (minutes under TCG;
 * auto, the default: in a thpeval guest only, nothing is left on a host).
 * Each run starts a fresh postgres on a unix socket in its own directory,
 * with shared_buffers in anonymous shared memory (huge_pages=off: THP, not
 * hugetlbfs) and no durability cost (fsync off), runs pgbench select-only
 * (-S) and TPC-B-like for --seconds each (transactions per second, latency
 * average, parsed strictly), and stops the server by its pid. shared_buffers
 * is shmem: /sys/kernel/mm/transparent_hugepage/shmem_enabled rules it, not
 * 'enabled'; it is recorded, and --shmem-thp sets it for the run (restored
 * after; the cell's variant is shmem-<value>). Coverage evidence: the
 * ShmemPmdMapped / Rss of the largest shared mapping (the buffers) summed
 * over the postgres processes, sampled while pgbench runs. Entry point:
 * wl_pgbench. Never prints.
 */

#define PG_LIBDIR "/usr/lib/postgresql"	/* <N>/bin/{initdb,postgres,pgbench}: Debian's layout */
#define PG_SCALE_BYTES (15ull << 20)		/* database bytes per pgbench scale unit, about */
#define PG_TYPE_MAX 64

/* pgbench's options: its parameter table points into them */
struct pgbench_opts {
	uint64_t scale;			/* pgbench -i -s */
	uint64_t shared_buffers;	/* bytes */
	uint64_t seconds;		/* pgbench -T, per mode */
	uint64_t clients;		/* pgbench -c */
	char template[WL_WORD_MAX];	/* yes, no or auto: keep and reuse a pristine cluster under dir */
	char shmem_thp[WL_WORD_MAX];	/* keep, or a shmem_enabled value for the run */
	char user[WL_WORD_MAX];		/* the user PostgreSQL runs as */
	char dir[WL_PATH_MAX];		/* where run directories (and the template) are made */
};

extern const struct workload wl_pgbench;

/* ---- pure parts (tests/guest/test_pgbench.c) ---------------------------------- */

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

/*
 * The highest <N> under libdir (a directory of numbered PostgreSQL versions)
 * whose bin has postgres, initdb and pgbench: 0 with version set, -ENOENT.
 */
int pg_find_version(const char *libdir, unsigned *version);

#endif
