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

#include "pgbench_parse.h"
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

/* ---- pure parts (tests/guest/test_pgbench.c; the parsers: pgbench_parse.h) ---- */

/*
 * The highest <N> under libdir (a directory of numbered PostgreSQL versions)
 * whose bin has postgres, initdb and pgbench: 0 with version set, -ENOENT.
 */
int pg_find_version(const char *libdir, unsigned *version);

#endif
