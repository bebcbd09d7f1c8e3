/*
 * region: the memory the workloads measure. An anonymous mapping whose
 * buffer starts on a 2M boundary, with PROT_NONE guard pages on both sides
 * (so its smaps entry is the buffer alone), an optional madvise() advice,
 * and its huge page coverage read back from smaps. Never prints.
 */
#ifndef THPEVAL_GUEST_REGION_H
#define THPEVAL_GUEST_REGION_H

#include <stddef.h>
#include <stdint.h>

#include "lib/err.h"
#include "sysinfo.h"

#define REGION_PAGE 4096u
#define REGION_HUGE (2u << 20)
#define REGION_NO_ADVICE (-1)

struct region {
	char *map;		/* what mmap() returned */
	size_t map_len;
	char *buf;		/* 2M-aligned */
	size_t len;		/* a multiple of 4K */
};

/* Map len bytes (> 0, multiple of 4K), then madvise(advice) unless REGION_NO_ADVICE. */
int region_map(struct region *r, size_t len, int advice, struct err *e);
/* Unmap; a zeroed or already released region is fine. */
void region_release(struct region *r);
/* smaps of the buffer and its coverage: AnonHugePages / Rss * 100 (0 when Rss is 0). */
int region_smaps(const char *root, const struct region *r, struct smaps_vma *vma, double *huge_pct,
		 struct err *e);

/* len rounded up to a multiple of 2M; 0 on overflow */
uint64_t region_round_huge(uint64_t len);

#endif
