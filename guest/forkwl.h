/*
 * forkwl: the cost of fork() with a populated anonymous buffer, the
 * copy-on-write setup Redis's BGSAVE pays (seeds: redis advises THP off for
 * fork latency). The parent maps and touches --size bytes, then times --passes
 * fork()s: the fork() call alone (page tables copied and write-protected: one
 * PMD per 2M on huge pages, 512 PTEs on base pages) and the whole cycle with
 * the child's exit and reap. Entry point: wl_fork. Never prints.
 */
#ifndef THPEVAL_GUEST_FORKWL_H
#define THPEVAL_GUEST_FORKWL_H

#include <stdbool.h>
#include <stdint.h>

#include "workload.h"

#define FORK_MARGIN (32ull << 20)	/* memory left to the rest of the system */

/* fork's options: its parameter table points into them */
struct fork_opts {
	uint64_t size;		/* bytes the parent maps and touches, a multiple of 2M */
	uint64_t passes;	/* fork()s timed */
	bool madvise;		/* madvise(MADV_HUGEPAGE) the buffer */
};

extern const struct workload wl_fork;

#endif
