/*
 * sim: the seeded random numbers of the statistics tests (splitmix64 and
 * Box-Muller): reproducible from the seed, no rand(), one copy for every
 * simulation. Header-only, for tests.
 */
#ifndef THPEVAL_TESTS_SIM_H
#define THPEVAL_TESTS_SIM_H

#include <math.h>
#include <stdint.h>

static inline uint64_t sim_next(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* uniform on (0, 1) */
static inline double sim_unif(uint64_t *s)
{
	return ((double)(sim_next(s) >> 11) + 0.5) / 9007199254740992.0;
}

/* standard normal (Box-Muller, one of the pair) */
static inline double sim_gauss(uint64_t *s)
{
	double u1 = sim_unif(s), u2 = sim_unif(s);

	return sqrt(-2 * log(u1)) * cos(2 * M_PI * u2);
}

#endif
