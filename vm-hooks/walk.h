/*
** vm-hooks/walk.h: the host's stack walk (internal, spyH_; interpreter
** thread only).
*/
#ifndef SPY_WALK_H
#define SPY_WALK_H

#include "vm-hooks/slot.h"

/* Call the host's walker and leave the whole stack's keys where
** spyH_key_at() finds them; returns the depth (vm-hooks/walk.c). */
SPY_INTERNAL uint64_t spyH_walk(spy_vm *v);

/* The key of the frame at position i from the top (0: innermost) of the
** stack the last spyH_walk saw, of depth d. */
static inline uint64_t spyH_key_at(const spy_vm *v, uint64_t d,
                                   uint64_t i) {
  if (v->copy && v->copy_ok && v->copy_pid == v->pid) return v->copy[d - 1 - i];
  uint64_t direct = v->copy ? v->copy_cap : v->cfg->leaf_cap;
  if (i < direct) return v->walk_buf[i];
  return v->walk_buf[direct + (i - direct) % v->cfg->root_cap];
}

#endif
