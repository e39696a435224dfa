/*
** sampler/map.h: an open-addressing hash map from a pair of 64-bit words to
** a 32-bit value (internal, spyS_). Used for frame interning, tree children
** and process lookup; the sampler thread is its only user at a time.
*/
#ifndef SPY_MAP_H
#define SPY_MAP_H

#include <spyon.h>
#include <stddef.h>
#include <stdint.h>

typedef struct spyS_map_ent {
  uint64_t a, b;
  uint32_t val; /* UINT32_MAX: empty */
} spyS_map_ent;

typedef struct spyS_map {
  spyS_map_ent *ent;
  size_t mask, count;
} spyS_map;

SPY_INTERNAL void spyS_map_init(spyS_map *m);
SPY_INTERNAL void spyS_map_free(spyS_map *m);
/* The value for (a, b), or UINT32_MAX. */
SPY_INTERNAL uint32_t spyS_map_get(const spyS_map *m, uint64_t a, uint64_t b);
/* Set (a, b) -> val. 0 or SPY_ENOMEM. */
SPY_INTERNAL int spyS_map_put(spyS_map *m, uint64_t a, uint64_t b,
                              uint32_t val);

#endif
