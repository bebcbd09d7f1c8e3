/*
 * hzp: the huge zero page microbenchmarks on one never-written 2M-aligned
 * buffer: memcmp() of its halves and 4K-stride reads, timed, with what the
 * read faults mapped proven (smaps, faults, thp_zero_page_alloc);
 * --zero-page=0|1 sets use_zero_page for the run. Entry point: wl_hzp.
 * Never prints.
 */
#ifndef THPEVAL_GUEST_HZP_H
#define THPEVAL_GUEST_HZP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/err.h"
#include "sysinfo.h"
#include "workload.h"

/*
 * The huge zero page microbenchmarks of seeds/000 on one never-written
 * 2M-aligned buffer of two halves: (a) memcmp() of the halves (the first
 * pass takes the read faults), (b) 4K-stride reads comparing the halves
 * byte by byte; time, minor faults, and the buffer's Rss afterwards, with
 * the guest's use_zero_page recorded and, with --zero-page=0|1 as root,
 * set for the run and restored after it. What the read faults mapped is
 * proven, not assumed: Rss and AnonHugePages of the buffer, faults per 2M,
 * thp_zero_page_alloc deltas (zero_page_in_effect when use_zero_page is 1).
 * Entry point: wl_hzp. Never prints.
 */

#define HZP_MARGIN (32ull << 20)	/* memory left to the rest of the system */
#define HZP_KNOB "use_zero_page"
#define HZP_RESIDENT_MAX_PCT 1	/* Rss up to this share of the buffer: zero pages were mapped */
#define HZP_HUGE_FAULTS_MAX 4	/* first-pass faults per 2M up to this: 2M mappings */
#define HZP_SMALL_FAULTS_MIN 256	/* from this on: 4K mappings (512 per 2M) */

/* What the read faults of the never-written buffer mapped. */
enum hzp_mapped {
	HZP_MAPPED_HUGE_ZERO,	/* the huge zero page: Rss ~0, one fault per 2M */
	HZP_MAPPED_SMALL_ZERO,	/* the 4K zero page: Rss ~0, one fault per 4K */
	HZP_MAPPED_MIXED_ZERO,	/* zero pages of both sizes */
	HZP_MAPPED_MEMORY,	/* real memory: the reads allocated (huge pages or 4K) */
	HZP_MAPPED__COUNT
};
const char *hzp_mapped_name(enum hzp_mapped m);	/* huge, small, mixed, none */

/* thp_zero_page_alloc and thp_zero_page_alloc_failed from <root>/proc/vmstat */
struct hzp_zpstat {
	bool have;
	uint64_t alloc, failed;
};
void hzp_zpstat_read(const char *root, struct hzp_zpstat *z);

struct hzp_evidence {
	uint64_t bytes;		/* the buffer: both halves */
	uint64_t first_minflt;	/* minor faults of the first (faulting) read pass */
	struct smaps_vma vma;	/* the buffer after the read passes */
	bool have_zp;		/* the counters were readable before and after */
	uint64_t zp_alloc, zp_failed;	/* their deltas over the first pass */
};

/*
 * The evidence: smaps of the mapping at addr in <root>/proc/self/smaps, the
 * vmstat deltas between before and after. 0 or a negative errno with e set.
 */
int hzp_evidence_read(const char *root, uint64_t addr, uint64_t bytes, uint64_t first_minflt,
		      const struct hzp_zpstat *before, const struct hzp_zpstat *after,
		      struct hzp_evidence *ev, struct err *e);
enum hzp_mapped hzp_classify(const struct hzp_evidence *ev);
/*
 * use_zero_page=1 asks for the huge zero page: true if the read faults mapped
 * it; else false and why (what was tried, what the kernel did), at most
 * len - 1 bytes. thp_enabled and madvise are what was tried (for the text).
 */
bool hzp_zero_page_verdict(const struct hzp_evidence *ev, const char *thp_enabled, bool madvise,
			   char *why, size_t len);

/* hzp's options: its parameter table points into them */
struct hzp_opts {
	uint64_t half;		/* bytes in each half of the buffer */
	uint64_t passes;	/* memcmp passes */
	uint64_t stride_passes;	/* 4K-stride read passes */
	int zero_page;		/* use_zero_page to set: -1 keep, 0, 1 */
	bool madvise;		/* madvise(MADV_HUGEPAGE) the buffer */
};

extern const struct workload wl_hzp;

#endif
