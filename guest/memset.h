/*
 * memset: the page-fault workload on one fresh 2M-aligned anonymous
 * buffer: the fault phase (first touch: ns per 4K, faults, times, huge
 * coverage) and the access phase (a dependent random chase, TLB-bound),
 * plus a mode that mirrors stress-ng --vm. Entry point: wl_memset. Never
 * prints.
 */
#ifndef THPEVAL_GUEST_MEMSET_H
#define THPEVAL_GUEST_MEMSET_H

#include <stddef.h>
#include <stdint.h>

#include "workload.h"

/*
 * The seeds/003 page-fault workload, split in two phases on one
 * fresh 2M-aligned anonymous buffer: the fault phase (first touch with
 * memset: ns per 4K, minor faults, user/sys time, huge page coverage) and
 * the access phase (a dependent random pointer chase, one node per 4K page:
 * ns per access, TLB-bound). The fault phase probes each 2M block's first
 * touch: mincore() on a later subpage says whether that one fault mapped the
 * whole block (a huge page; the mmtests thpchallenge trick). A second mode
 * mirrors stress-ng --vm's loop (populate read, then a 64-bit store pass) for
 * the fidelity benchmark. An optional re-fault step frees the buffer, leaves
 * it to the host for a time (free page reporting) and times the touch of a
 * fresh one. Entry point: wl_memset. Never prints.
 */

#define MEMSET_HUGE (2u << 20)
#define MEMSET_PAGE 4096u
#define MEMSET_MARGIN (32ull << 20)	/* memory left to the rest of the system */
#define MEMSET_PROBE_SUBPAGE 64u	/* the subpage mincore() asks about after a block's first touch */

/* memset's options: its parameter table points into them */
struct memset_opts {
	uint64_t size;		/* bytes, a multiple of 2M */
	uint64_t accesses;	/* dependent loads in the access phase */
	uint64_t passes;	/* fault cycles; the last one also runs the access phase */
	uint64_t refault_wait_ms;	/* > 0: free, wait, re-touch a fresh buffer (re-fault step) */
	bool madvise;		/* madvise(MADV_HUGEPAGE) the buffer */
	bool hold;		/* report the fault phase, keep the buffer until killed */
	bool probe;		/* per-2M first-touch probe (mincore) in the fault phase */
	bool populate_read;	/* MADV_POPULATE_READ first (stress-ng --vm's loop) */
	/* the keep phase (a host's live migration runs meanwhile): seconds, 0 = none */
	uint64_t keep;
	uint64_t keep_rep;	/* only in this repetition (--rep) */
	char keep_thp[16];	/* only in the cell of this guest_thp label; "any": every cell */
};

/* the file whose presence ends the keep phase (the runner creates it on the host's word) */
#define MEMSET_KEEP_STOP_FILE "/tmp/thpeval-keep-stop"

extern const struct workload wl_memset;

/*
 * Link one node per 4K page of buf into a single random cycle (Sattolo's
 * algorithm, seeded), each node at a pseudo-random cache line of its page.
 * scratch holds npages entries. Returns the node of page 0.
 */
void *memset_chain_build(char *buf, size_t npages, uint64_t seed, uint32_t *scratch);
/* Follow n links from p; returns where it stopped. */
void *memset_chase(void *p, uint64_t n);

/* What memset_touch_probed() saw. */
struct memset_probe {
	uint64_t blocks;	/* 2M blocks touched */
	uint64_t huge_blocks;	/* blocks whose first touch mapped subpage 64 too */
	uint64_t probe_ns;	/* time spent in mincore(), to leave out of the phase's time */
};

/*
 * Fill a fresh (never touched) 2M-aligned buffer of len bytes (a multiple of
 * 2M) with c, block by block: store the block's first byte (its first fault),
 * ask mincore() whether subpage MEMSET_PROBE_SUBPAGE is now resident (only a
 * huge page maps it: anonymous faults do no fault-around), then fill the rest
 * of the block. 0, or -errno if mincore() failed (the buffer is then only
 * partly filled).
 */
int memset_touch_probed(char *buf, size_t len, int c, struct memset_probe *out);
/*
 * One pass of 64-bit stores of v over len bytes (a multiple of 8), 256 bytes a
 * block as stress-ng --vm's write64 (its loop, 32 stores, no read back).
 */
void memset_store64(char *buf, size_t len, uint64_t v);

#endif
