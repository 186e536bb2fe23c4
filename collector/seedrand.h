/* splitmix64: the one source of choices of a seeded scenario, so that a seed replays them. */
#ifndef SPECTAP_COLLECTOR_SEEDRAND_H
#define SPECTAP_COLLECTOR_SEEDRAND_H

#include <stdint.h>

static inline uint64_t seedrand_next(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

#endif
