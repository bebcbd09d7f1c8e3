/*
 * clock: the monotonic clock (CLOCK_MONOTONIC) in the units callers time
 * things in. Header only, so the guest side and the host side take it
 * alike; never prints, never exits.
 */
#ifndef THPEVAL_LIB_CLOCK_H
#define THPEVAL_LIB_CLOCK_H

#include <stdint.h>
#include <time.h>

/* CLOCK_MONOTONIC in seconds */
static inline double mono_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* CLOCK_MONOTONIC in whole milliseconds */
static inline int64_t mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

#endif
