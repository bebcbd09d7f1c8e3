/*
 * hzp: the huge zero page microbenchmarks of seeds/000 on one never-written
 * 2M-aligned buffer of two halves: (a) memcmp() of the halves (the first
 * pass takes the read faults), (b) 4K-stride reads comparing the halves
 * byte by byte; time, minor faults, and the buffer's Rss afterwards, with
 * the guest's use_zero_page recorded and, with --zero-page=0|1 as root,
 * set for the run and restored after it. Entry point: wl_hzp. Never prints.
 */
#ifndef THPEVAL_GUEST_HZP_H
#define THPEVAL_GUEST_HZP_H

#include "workload.h"

#define HZP_MARGIN (32ull << 20)	/* memory left to the rest of the system */
#define HZP_KNOB "use_zero_page"

extern const struct workload wl_hzp;

#endif
