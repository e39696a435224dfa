/*
** vm-hooks/ring.h: a single-producer single-consumer ring of records
** (internal, spyH_).
**
** The interpreter thread produces, the sampler thread consumes. Records are
** contiguous, 8-byte aligned and start with a spyH_rec header; one that does
** not fit before the end of the buffer is preceded by a padding record that
** fills the end. The producer never waits: when there is no room the record
** is refused and the caller counts a drop.
*/
#ifndef SPY_RING_H
#define SPY_RING_H

#include <spyon.h>
#include <stdatomic.h>
#include <stdint.h>

typedef struct spyH_rec {
  uint32_t type; /* SPYH_REC_* (vm-hooks/slot.h); 0 is padding */
  uint32_t size; /* bytes including this header, a multiple of 8 */
} spyH_rec;

typedef struct spyH_ring {
  unsigned char *buf;
  uint64_t mask;             /* capacity - 1; capacity is a power of two */
  _Alignas(64) atomic_uint_least64_t head; /* written by the producer */
  uint64_t tail_cache;       /* producer's last view of tail */
  _Alignas(64) atomic_uint_least64_t tail; /* written by the consumer */
} spyH_ring;

/* Allocate a ring of cap bytes (a power of two). 0 or SPY_ENOMEM. */
SPY_INTERNAL int spyH_ring_init(spyH_ring *r, size_t cap);
SPY_INTERNAL void spyH_ring_free(spyH_ring *r);

/* Producer: room for a record of size bytes (rounded up to 8), or NULL when
** full. Fill it (header included), then spyH_ring_commit. */
SPY_INTERNAL void *spyH_ring_reserve(spyH_ring *r, uint32_t size);
SPY_INTERNAL void spyH_ring_commit(spyH_ring *r, void *rec);

/* Consumer: call fn on every committed record in order, then release them.
** Returns the number of records consumed. */
SPY_INTERNAL size_t spyH_ring_drain(spyH_ring *r,
                                    void (*fn)(void *ud, const spyH_rec *rec),
                                    void *ud);

#endif
