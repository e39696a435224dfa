/*
** vm-hooks/slot.c: allocating a slot, and the name queue.
*/
#include "config.h"

#include "vm-hooks/slot.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "vm-hooks/clock.h"

/* The stand-in: never attached, active or marked, so its hooks never leave
** their inline branch; spy_poll_slow_ still recognises it by address. */
static struct spy_vm stopped_vm;

spy_vm *spy_vm_stopped(void) { return &stopped_vm; }

int spyH_is_stopped_vm(const spy_vm *v) { return v == &stopped_vm; }

/* Address space for the walk buffers: reserved, not committed; a page is
** touched only when a stack grows that deep. NULL when out of memory. */
static uint64_t *reserve(size_t n, size_t *bytes) {
  *bytes = n * sizeof(uint64_t);
  void *p = mmap(NULL, *bytes, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  return p == MAP_FAILED ? NULL : p;
}

int spyH_slot_new(spy_vm **out, spyH_cfg *cfg, const spy_options *o,
                  const spy_host *host) {
  spy_vm *v = calloc(1, sizeof *v);
  if (!v) return SPY_ENOMEM;
  v->cfg = cfg;
  v->host = *host;
  v->thread = pthread_self();
  v->attached_at = spyH_now();
  /* Each slot its own priorities: a slot made where a freed one was (a
  ** thread attached after another detached) drew the same sequence, and
  ** the two threads' calls were kept or dropped in pairs. splitmix64 of a
  ** process-wide count and the clock; never 0 (xorshift's fixed point). */
  static atomic_uint_least64_t made;
  uint64_t z = (atomic_fetch_add(&made, 1) + 1) * 0x9e3779b97f4a7c15ull ^
               v->attached_at;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  v->hot.rng_ = (z ^ (z >> 31)) | 1;
  size_t keys = (size_t)cfg->leaf_cap + cfg->root_cap + 1;
  v->copy_cap = cfg->stack_copy;
  if (v->copy_cap) {
    v->walk_buf = reserve(v->copy_cap + cfg->root_cap + 1, &v->walk_bytes);
    v->copy = reserve(v->copy_cap, &v->copy_bytes);
  } else {
    v->walk_buf = reserve(keys, &v->walk_bytes);
  }
  v->cur_keys = calloc(keys, sizeof(uint64_t));
  v->prev_keys = calloc(keys, sizeof(uint64_t));
  v->pstat = calloc(cfg->max_prims, sizeof *v->pstat);
  v->gap_tau = malloc(cfg->max_prims * sizeof *v->gap_tau);
  v->calls0 = calloc(cfg->max_prims, sizeof *v->calls0);
  v->obs_n = calloc(cfg->max_prims, sizeof *v->obs_n);
  v->obs_ticks = calloc(cfg->max_prims, sizeof *v->obs_ticks);
  v->obs_cap = calloc(cfg->max_prims, sizeof *v->obs_cap);
  v->longest = calloc(cfg->longest + 1, sizeof(uint64_t));
  v->saved = calloc(cfg->saved_processes, sizeof *v->saved);
  int rc = SPY_ENOMEM;
  if (v->walk_buf && (v->copy || !v->copy_cap) && v->cur_keys &&
      v->prev_keys && v->pstat && v->gap_tau && v->calls0 &&
      v->obs_n && v->obs_ticks && v->obs_cap && v->longest &&
      v->saved &&
      (rc = spyH_ring_init(&v->ring, o->ring_bytes)) == 0 &&
      (rc = spyH_ring_init(&v->obs_ring, o->obs_ring_bytes)) == 0 &&
      (!cfg->native ||
       (rc = spyH_ring_init(&v->native_ring, SPYH_NATIVE_RING)) == 0)) {
    /* What the inline fast paths read (<spyon/hooks.h>); hot.fast_ is
    ** set when a run is adopted (hooks.c). */
    v->hot.until_ = 0; /* hot.fast_ 0 (vm-hooks/due.h, spyH_until) */
    v->hot.tick_until_ = UINT64_MAX;
    v->drain_at = UINT64_MAX; /* a run sets it (hooks.c, adopt_run) */
    for (uint32_t i = 0; i < cfg->max_prims; i++) {
      v->pstat[i].draw_at = 1; /* the next call draws (vm-hooks/obs.h) */
      v->gap_tau[i] = v->obs_cap[i] = UINT64_MAX;
    }
    v->hot.calls_ = (uint64_t *)(void *)v->pstat;
    v->hot.nprims_ = cfg->max_prims;
    v->hot.b_ = v->b;
    *out = v;
    return 0;
  }
  spyH_slot_free(v);
  return rc;
}

void spyH_slot_free(spy_vm *v) {
  if (!v) return;
  spyH_name *n = spyH_take_names(v);
  while (n) {
    spyH_name *next = n->next;
    free(n);
    n = next;
  }
  spyH_ring_free(&v->ring);
  spyH_ring_free(&v->obs_ring);
  spyH_ring_free(&v->native_ring);
  if (v->walk_buf) munmap(v->walk_buf, v->walk_bytes);
  if (v->copy) munmap(v->copy, v->copy_bytes);
  free(v->cur_keys);
  free(v->prev_keys);
  free(v->pstat);
  free(v->gap_tau);
  free(v->calls0);
  free(v->obs_n);
  free(v->obs_ticks);
  free(v->obs_cap);
  free(v->longest);
  free(v->saved);
  free(v);
}

/* Queue a name: a lock-free push, so the interpreter never waits for the
** sampler. The sampler takes the whole list at once. */
static int push_name(spy_vm *v, int is_process, uint64_t key,
                     const char *name) {
  if (!v || !name) return SPY_EINVAL;
  if (spyH_is_stopped_vm(v)) return 0; /* nobody would ever take it */
  size_t len = strlen(name);
  spyH_name *n = malloc(sizeof *n + len + 1);
  if (!n) return SPY_ENOMEM;
  n->is_process = is_process;
  n->key = key;
  memcpy(n->name, name, len + 1);
  n->next = atomic_load_explicit(&v->names, memory_order_relaxed);
  while (!atomic_compare_exchange_weak_explicit(
      &v->names, &n->next, n, memory_order_release, memory_order_relaxed)) {
  }
  return 0;
}

int spy_name(spy_vm *v, uint64_t key, const char *name) {
  return push_name(v, 0, key, name);
}

int spy_process_name(spy_vm *v, uint64_t pid, const char *name) {
  return push_name(v, 1, pid, name);
}

spyH_name *spyH_take_names(spy_vm *v) {
  spyH_name *n = atomic_exchange_explicit(&v->names, NULL,
                                          memory_order_acquire);
  spyH_name *rev = NULL; /* pushed newest first: reverse to oldest first */
  while (n) {
    spyH_name *next = n->next;
    n->next = rev;
    rev = n;
    n = next;
  }
  return rev;
}
