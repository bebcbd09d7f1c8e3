/*
 * tlb: what a TLB miss costs. A seeded random pointer chase, one node per
 * 4K page, over a sweep of working sets on 4K-backed and 2M-backed memory,
 * plus a baseline inside one page and a twin-mapped walk (twinmap.h) where
 * only the translation differs. One result record per point and a summary.
 * Entry point: wl_tlb. Never prints.
 */
#ifndef THPEVAL_GUEST_TLB_H
#define THPEVAL_GUEST_TLB_H

#include <stddef.h>
#include <stdint.h>

#include "workload.h"

/*
 * What a TLB miss costs (seeds/001, without its cpuid serialization,
 * which traps to the hypervisor in a VM). A random cyclic chain (Sattolo,
 * seeded) with one node per 4K page at varied cache lines is chased, each
 * load's address the previous load's value, over a sweep of working sets on
 * 4K-backed memory and on 2M-backed memory (MADV_HUGEPAGE, coverage read
 * from smaps), plus a baseline chain inside one page (TLB and L1 hits). The
 * 4K-backed region is MADV_NOHUGEPAGE, or (--split=1) faulted huge and then
 * its PMDs split, so both arms sit on the same kind of physical memory and
 * only the page size differs. The workload pins itself to the CPU it starts
 * on (--pin=1). Last, the walk point once more on one shared buffer seen
 * through a 2M-mapped and a 4K-mapped view (twinmap.h): the same frames and
 * cache lines behind both arms, so the difference is the translation alone.
 * Sends one result record per point and a summary through the harness.
 * Entry point: wl_tlb. Never prints.
 */

#define TLB_MARGIN (32ull << 20)	/* memory left to the rest of the system */
#define TLB_STEP 4u			/* working sets grow 4x per point */
#define TLB_MAX_POINTS 16
#define TLB_BASE_NODES 64u		/* the baseline: every cache line of one page */
#define TLB_HUGE_VALID_PCT 90.0		/* 2M-backed results count from this coverage */

/* tlb's options: its parameter table points into them */
struct tlb_opts {
	uint64_t pages_min, pages_max;	/* the working-set sweep, in 4K pages */
	uint64_t loads;		/* dependent loads per timed trial */
	uint64_t trials;	/* timed trials per point (medians kept) */
	uint64_t walk_trials;	/* trials at the same-frame walk point (0: none) */
	uint64_t walk_loads;	/* dependent loads per trial there */
	bool split;		/* 4K arm = the PMDs of a huge-faulted region split */
	bool pin;		/* pin to the CPU it starts on */
};

extern const struct workload wl_tlb;

/*
 * Link npages * per_page nodes (per_page <= 64) into one random cycle: node
 * k lives in page k % npages at a cache line of its own (lines spread over
 * the page, so nodes fall in different cache sets). scratch holds
 * npages * per_page entries. Returns the first node.
 */
void *tlb_chain_build(char *buf, size_t npages, size_t per_page, uint64_t seed, uint32_t *scratch);
/* Follow n links from p; returns where it stopped. */
void *tlb_chase(void *p, uint64_t n);
/*
 * The same chain with offsets from buf in place of pointers (so it can be
 * chased through another mapping of the same memory); returns the first
 * node's offset.
 */
uint64_t tlb_chain_build_off(char *buf, size_t npages, uint64_t seed, uint32_t *scratch);
/* Follow n offset links from off inside base; returns where it stopped. */
uint64_t tlb_chase_off(const char *base, uint64_t off, uint64_t n);
/* The working sets of the sweep: min, min*4, ... and max; returns how many (<= TLB_MAX_POINTS). */
size_t tlb_points(uint64_t pages_min, uint64_t pages_max, uint64_t *out);
/*
 * The walk point: the largest power of two of pages whose one line per page
 * fits in l2_bytes, clamped to [pages_min, pages_max]. Beyond the TLB's reach
 * on current CPUs (L2 TLBs hold 1.5-3K 4K entries; L2 caches take 4-32K lines)
 * while the chain stays cached: 4K minus 2M there is the page walk alone.
 */
uint64_t tlb_walk_pages(uint64_t l2_bytes, uint64_t pages_min, uint64_t pages_max);
/* tlb_points plus extra in its sorted place (not twice); out holds TLB_MAX_POINTS + 1 */
size_t tlb_points_with(uint64_t pages_min, uint64_t pages_max, uint64_t extra, uint64_t *out);
/*
 * Map every 2M block of buf (2M-aligned, len a multiple of 2M) with 4K page
 * table entries without moving its memory: mprotect() one subpage away and
 * back splits the block's PMD (the huge page stays, mapped by 512 PTEs), then
 * MADV_NOHUGEPAGE keeps khugepaged from collapsing it again. 0 or -errno.
 */
int tlb_split_pmds(char *buf, size_t len);
/* Pin the calling thread to the CPU it runs on; that CPU, or -errno. */
int tlb_pin_here(void);

#endif
