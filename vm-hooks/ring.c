/*
** vm-hooks/ring.c: the SPSC record ring.
*/
#include "config.h"

#include "vm-hooks/ring.h"

#include <stdlib.h>
#include <string.h>

int spyH_ring_init(spyH_ring *r, size_t cap) {
  memset(r, 0, sizeof *r);
  if (cap < 4096 || (cap & (cap - 1))) return SPY_EINVAL;
  /* Touch every page here, so that no hook takes a page fault writing a
  ** record (calloc alone would leave a large ring's pages unmapped). */
  r->buf = malloc(cap);
  if (!r->buf) return SPY_ENOMEM;
  memset(r->buf, 0, cap);
  r->mask = cap - 1;
  atomic_init(&r->head, 0);
  atomic_init(&r->tail, 0);
  return 0;
}

void spyH_ring_free(spyH_ring *r) {
  free(r->buf);
  r->buf = NULL;
}

void *spyH_ring_reserve(spyH_ring *r, uint32_t size) {
  uint64_t cap = r->mask + 1;
  size = (size + 7u) & ~7u;
  uint64_t head = atomic_load_explicit(&r->head, memory_order_relaxed);
  uint64_t off = head & r->mask;
  uint64_t pad = cap - off < size ? cap - off : 0;
  uint64_t need = pad + size;
  if (need > cap / 2) return NULL;
  if (head + need - r->tail_cache > cap) {
    r->tail_cache = atomic_load_explicit(&r->tail, memory_order_acquire);
    if (head + need - r->tail_cache > cap) return NULL;
  }
  if (pad) {
    /* Fill the end with a padding record and publish it together with the
    ** record that follows: the consumer skips it. */
    spyH_rec *p = (spyH_rec *)(r->buf + off);
    p->type = 0;
    p->size = (uint32_t)pad;
    off = 0;
  }
  spyH_rec *rec = (spyH_rec *)(r->buf + off);
  rec->size = size;
  return rec;
}

void spyH_ring_commit(spyH_ring *r, void *rec) {
  uint64_t head = atomic_load_explicit(&r->head, memory_order_relaxed);
  uint64_t off = head & r->mask;
  const spyH_rec *h = rec;
  uint64_t advance = h->size;
  if ((unsigned char *)rec != r->buf + off) advance += (r->mask + 1) - off;
  atomic_store_explicit(&r->head, head + advance, memory_order_release);
}

size_t spyH_ring_drain(spyH_ring *r, void (*fn)(void *, const spyH_rec *),
                       void *ud) {
  uint64_t tail = atomic_load_explicit(&r->tail, memory_order_relaxed);
  uint64_t head = atomic_load_explicit(&r->head, memory_order_acquire);
  size_t n = 0;
  while (tail != head) {
    const spyH_rec *rec = (const spyH_rec *)(r->buf + (tail & r->mask));
    if (rec->type != 0) {
      fn(ud, rec);
      n++;
    }
    tail += rec->size;
  }
  atomic_store_explicit(&r->tail, tail, memory_order_release);
  return n;
}
