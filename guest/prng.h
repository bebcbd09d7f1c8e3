/*
 * prng: a small seeded generator (splitmix64) for the guest programs'
 * reproducible choices: chase order, cache-line offsets, run order.
 * Header-only; no global state, the caller owns the state word.
 */
#ifndef THPEVAL_GUEST_PRNG_H
#define THPEVAL_GUEST_PRNG_H

#include <stdint.h>

static inline uint64_t prng_mix(uint64_t z)
{
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static inline uint64_t prng_next(uint64_t *state)
{
	*state += 0x9e3779b97f4a7c15ull;
	return prng_mix(*state);
}

/* Uniform in [0, n), n > 0, without modulo bias. */
static inline uint64_t prng_below(uint64_t *state, uint64_t n)
{
	uint64_t limit = UINT64_MAX - UINT64_MAX % n, x;

	do
		x = prng_next(state);
	while (x >= limit);
	return x % n;
}

#endif
