/*
** sampler/map.c: linear probing over a power-of-two table, grown at half
** full.
*/
#include "config.h"

#include "sampler/map.h"

#include <stdlib.h>

static inline size_t hash(uint64_t a, uint64_t b) {
  uint64_t x = a * 0x9e3779b97f4a7c15ull ^ (b + 0x632be59bd9b4e019ull);
  x ^= x >> 31;
  x *= 0xbf58476d1ce4e5b9ull;
  x ^= x >> 29;
  return (size_t)x;
}

void spyS_map_init(spyS_map *m) {
  m->ent = NULL;
  m->mask = 0;
  m->count = 0;
}

void spyS_map_free(spyS_map *m) {
  free(m->ent);
  spyS_map_init(m);
}

uint32_t spyS_map_get(const spyS_map *m, uint64_t a, uint64_t b) {
  if (!m->ent) return UINT32_MAX;
  for (size_t i = hash(a, b) & m->mask;; i = (i + 1) & m->mask) {
    const spyS_map_ent *e = &m->ent[i];
    if (e->val == UINT32_MAX) return UINT32_MAX;
    if (e->a == a && e->b == b) return e->val;
  }
}

static int grow(spyS_map *m) {
  size_t cap = m->ent ? (m->mask + 1) * 2 : 64;
  spyS_map_ent *ne = malloc(cap * sizeof *ne);
  if (!ne) return SPY_ENOMEM;
  for (size_t i = 0; i < cap; i++) ne[i].val = UINT32_MAX;
  if (m->ent) {
    for (size_t i = 0; i <= m->mask; i++) {
      spyS_map_ent *e = &m->ent[i];
      if (e->val == UINT32_MAX) continue;
      size_t j = hash(e->a, e->b) & (cap - 1);
      while (ne[j].val != UINT32_MAX) j = (j + 1) & (cap - 1);
      ne[j] = *e;
    }
    free(m->ent);
  }
  m->ent = ne;
  m->mask = cap - 1;
  return 0;
}

int spyS_map_put(spyS_map *m, uint64_t a, uint64_t b, uint32_t val) {
  if (!m->ent || (m->count + 1) * 2 > m->mask + 1)
    if (grow(m) != 0) return SPY_ENOMEM;
  for (size_t i = hash(a, b) & m->mask;; i = (i + 1) & m->mask) {
    spyS_map_ent *e = &m->ent[i];
    if (e->val == UINT32_MAX) {
      e->a = a;
      e->b = b;
      e->val = val;
      m->count++;
      return 0;
    }
    if (e->a == a && e->b == b) {
      e->val = val;
      return 0;
    }
  }
}
