/*
** vm-hooks/walk.c: the host's stack walk, and the stack copy that makes
** a walk incremental (see vm-hooks/walk.h).
*/
#include "config.h"

#include "vm-hooks/walk.h"

/* Single writer (this thread): no read-modify-write needed. */
static inline void add(atomic_uint_least64_t *a, uint64_t x) {
  atomic_store_explicit(a, atomic_load_explicit(a, memory_order_relaxed) + x,
                        memory_order_relaxed);
}

/* Call the host's walker and leave the whole stack's keys where spyH_key_at()
** finds them; returns the depth. With a stack copy (spy_options.stack_copy)
** a walker that says spy_stack_unchanged(n) costs only the frames pushed
** before it: the n root-most keys come from the copy of the previous walk,
** which is then updated in place. A full walk that fits refreshes the copy;
** one that does not (or that skipped frames) leaves the keys in walk_buf
** (by position, then a ring of the root-most) and invalidates the copy. */
uint64_t spyH_walk(spy_vm *v) {
  const spyH_cfg *c = v->cfg;
  spy_stack s;
  int inc = v->copy && v->copy_ok && v->copy_pid == v->pid;
  for (;;) {
    s = (spy_stack){.keys_ = v->walk_buf,
                    .direct_ = v->copy ? v->copy_cap : c->leaf_cap,
                    .ring_ = c->root_cap,
                    .leaf_cap_ = c->leaf_cap,
                    .root_cap_ = c->root_cap,
                    .incremental_ = inc};
    v->host.walk(v->host.ud, &s);
    if (!s.unchanged_) break;
    if (inc && s.unchanged_ <= v->copy_n &&
        s.pushed_ + s.unchanged_ <= v->copy_cap)
      break;
    if (!inc) { /* a walker that ignores spy_stack_incremental() */
      s.unchanged_ = 0;
      break;
    }
    inc = 0; /* not honourable: walk again, in full */
  }
  add(&v->frames_walked, s.pushed_);
  uint64_t p = s.pushed_;
  if (s.unchanged_) { /* the copy keeps its root part; append the new top */
    uint64_t n = s.unchanged_;
    for (uint64_t j = 0; j < p; j++) v->copy[n + j] = v->walk_buf[p - 1 - j];
    v->copy_n = n + p;
    return v->copy_n;
  }
  add(&v->full_walks, 1);
  uint64_t d = s.depth_;
  if (v->copy && p == d && d <= v->copy_cap) {
    for (uint64_t j = 0; j < d; j++) v->copy[j] = v->walk_buf[d - 1 - j];
    v->copy_n = d;
    v->copy_ok = 1;
    v->copy_pid = v->pid;
  } else {
    v->copy_ok = 0;
  }
  return d;
}
