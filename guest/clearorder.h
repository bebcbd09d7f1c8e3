/*
 * clearorder: the microbenchmark behind process_huge_page() (seeds/002):
 * clear the 4K pages of 2M regions in sequential or reverse page order, each
 * page's stores in sequential or reverse order, MiB/s per combination;
 * --tasks=N clears N buffers at once. Entry point: wl_clearorder.
 */
#ifndef THPEVAL_GUEST_CLEARORDER_H
#define THPEVAL_GUEST_CLEARORDER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "workload.h"

#define CLEARORDER_MARGIN (32ull << 20)	/* memory left to the rest of the system */
#define CLEARORDER_MAX_TASKS 64

enum clear_order { CLEAR_SEQ_SEQ, CLEAR_SEQ_REV, CLEAR_REV_SEQ, CLEAR_REV_REV, CLEAR__COUNT };

/* clearorder's options: its parameter table points into them */
struct clearorder_opts {
	uint64_t regions;	/* 2M regions per task */
	uint64_t passes;	/* passes over the buffer per combination */
	uint64_t tasks;		/* processes, each with its own buffer */
	bool madvise;		/* madvise(MADV_HUGEPAGE) the buffers */
};

extern const struct workload wl_clearorder;

const char *clear_order_name(enum clear_order o);	/* "seq-seq", ... */
/* Clear nregions 2M regions at buf in order o (8-byte stores of zero). */
void clear_regions(char *buf, size_t nregions, enum clear_order o);

#endif
