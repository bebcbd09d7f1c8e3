/*
 * color: cache colouring (seeds/004). A dependent chain over N page frames
 * that map to the same cache set (N = the ways, then ways + 1) inside a
 * 2M-aligned MADV_HUGEPAGE region; the geometry from sysfs, else CPUID
 * (once, never in a timed loop). Entry point: wl_color. Never prints.
 */
#ifndef THPEVAL_GUEST_COLOR_H
#define THPEVAL_GUEST_COLOR_H

#include <stdbool.h>
#include <stdint.h>

#include "sysinfo.h"
#include "workload.h"

/* color's options: its parameter table points into them */
struct color_opts {
	uint64_t loads;		/* dependent reads per trial and N */
	uint64_t trials;	/* timed trials per N (median kept) */
};

extern const struct workload wl_color;

/*
 * Geometry of cpu0's level-1 data cache (level 1) or level-2 cache (level 2)
 * from CPUID; -ENOENT if the CPU does not say (or not x86).
 */
int color_cpuid_geom(unsigned level, struct cache_geom *g, struct err *e);

/*
 * Set-conflicting stride for g: one way's span (sets x line), at least 4K.
 * 0 if the geometry is not usable (not a power of two, or too large).
 */
uint64_t color_stride(const struct cache_geom *g);

/* Chase n frames at buf, stride apart, loops times, each read depending on the one before. */
uint32_t color_read(const char *buf, uint64_t stride, unsigned n, uint64_t loops);

#endif
