/*
 * memset: the seeds/003 page-fault workload, split in two phases on one
 * fresh 2M-aligned anonymous buffer: the fault phase (first touch with
 * memset: ns per 4K, minor faults, user/sys time, huge page coverage) and
 * the access phase (a dependent random pointer chase, one node per 4K page:
 * ns per access, TLB-bound). Entry point: wl_memset. Never prints.
 */
#ifndef THPEVAL_GUEST_MEMSET_H
#define THPEVAL_GUEST_MEMSET_H

#include <stddef.h>
#include <stdint.h>

#include "workload.h"

#define MEMSET_HUGE (2u << 20)
#define MEMSET_PAGE 4096u
#define MEMSET_MARGIN (32ull << 20)	/* memory left to the rest of the system */

extern const struct workload wl_memset;

/*
 * Link one node per 4K page of buf into a single random cycle (Sattolo's
 * algorithm, seeded), each node at a pseudo-random cache line of its page.
 * scratch holds npages entries. Returns the node of page 0.
 */
void *memset_chain_build(char *buf, size_t npages, uint64_t seed, uint32_t *scratch);
/* Follow n links from p; returns where it stopped. */
void *memset_chase(void *p, uint64_t n);

#endif
