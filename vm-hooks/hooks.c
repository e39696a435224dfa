/*
** vm-hooks/hooks.c: the out-of-line halves of the hooks.
**
** Attribution (SPY_MODE_POLL). Samples fall due on a fixed grid, origin +
** k * interval; the sampler thread marks a thread's sample due (its trap)
** when a grid point has passed. The next hook to run takes it, *before*
** changing state: a poll charges the running code, the end of a primitive
** the primitive, a GC end the GC, a process switch the process switched
** from. So the instant of a sample is the instant the mark arrived, which
** does not depend on what the program does, and time inside a primitive is
** charged to the primitive and not to the code that runs next. A sample's
** weight is the grid time since the previous one, so a late mark never
** loses time and the weights of a thread add up to its profiled time.
**
** SPY_MODE_TIMER is MessageTally's behaviour for comparison: only polls
** take marked samples, so a mark that arrives inside a primitive is taken
** by the first poll after it, and charged to whatever runs then.
**
** Everything here runs in the interpreter thread: no locks, no allocation,
** no waiting. A full ring drops the record and counts it.
*/
#include "config.h"

#include "vm-hooks/clock.h"
#include "vm-hooks/slot.h"

#include <spyon/profile.h>

#include <string.h>

#define RELAXED memory_order_relaxed

static inline uint64_t ld(atomic_uint_least64_t *a) {
  return atomic_load_explicit(a, RELAXED);
}
static inline void st(atomic_uint_least64_t *a, uint64_t x) {
  atomic_store_explicit(a, x, RELAXED);
}
static inline void add(atomic_uint_least64_t *a, uint64_t x) {
  st(a, ld(a) + x); /* single writer: no read-modify-write needed */
}

static inline int poll_mode(const spy_vm *v) {
  return v->cfg->mode == SPY_MODE_POLL;
}

/* The innermost tracked primitive, or -1. */
static inline int32_t cur_prim(const spy_vm *v) {
  if (v->nprim == 0) return -1;
  uint32_t i = v->nprim <= SPY_PRIM_NEST ? v->nprim - 1 : SPY_PRIM_NEST - 1;
  return v->prim[i].prim;
}

/* Native stacks: publish the innermost tracked primitive and when it began
** (or none), for the sampler's SIGPROF rounds and the handler. Called only
** when cfg->native is on. */
static void native_pub(spy_vm *v) {
  uint32_t n = v->nprim < SPY_PRIM_NEST ? v->nprim : SPY_PRIM_NEST;
  if (n == 0 || v->prim[n - 1].prim < 0) {
    st(&v->native_prim, 0);
    return;
  }
  st(&v->native_since, v->prim[n - 1].t0);
  st(&v->native_prim, (uint64_t)v->prim[n - 1].prim + 1);
}

/* ------------------------------------------------------------------------
** Records
** --------------------------------------------------------------------- */

/* Walk the host's stack and send one SAMPLE or STEP record. */
static void emit(spy_vm *v, uint32_t type, uint64_t ticks, int32_t prim,
                 int gc, uint8_t kind, unsigned nsizes, const uint64_t *size) {
  const spyH_cfg *c = v->cfg;
  spy_stack s = {v->walk_buf, c->leaf_cap, c->root_cap, 0};
  v->host.walk(v->host.ud, &s);
  uint64_t depth = s.depth_;
  uint32_t nleaf = depth < c->leaf_cap ? (uint32_t)depth : c->leaf_cap;
  uint64_t beyond = depth - nleaf;
  uint32_t nroot = beyond < c->root_cap ? (uint32_t)beyond : c->root_cap;
  uint32_t nreg = v->nregion < SPY_REGION_NEST ? v->nregion : SPY_REGION_NEST;
  uint32_t n = nleaf + nroot;
  uint64_t *cur = v->cur_keys;
  memcpy(cur, v->walk_buf, nleaf * sizeof *cur);
  /* The root part was pushed into a ring of root_cap keys; the kept ones
  ** are pushes beyond-nroot .. beyond-1, the last of them the root. */
  for (uint32_t j = 0; j < nroot; j++)
    cur[nleaf + j] = v->walk_buf[c->leaf_cap + (beyond - nroot + j) % c->root_cap];
  /* A sample sends only what differs from the thread's previous one at
  ** the root end: this keeps records small and the rings' cache traffic
  ** between the cores low. */
  uint32_t same = 0;
  if (type == SPYH_REC_SAMPLE) {
    uint32_t lim = n < v->prev_n ? n : v->prev_n;
    while (same < lim &&
           cur[n - 1 - same] == v->prev_keys[v->prev_n - 1 - same])
      same++;
  }
  uint32_t size_b = (uint32_t)(sizeof(spyH_sample) +
                               nreg * sizeof(spyH_regmark) +
                               (n - same) * sizeof(uint64_t));
  spyH_sample *r = spyH_ring_reserve(&v->ring, size_b);
  if (!r) {
    add(&v->dropped, 1);
    return;
  }
  r->h.type = type;
  r->pid = v->pid;
  r->ticks = ticks;
  r->depth = depth;
  for (unsigned i = 0; i < 4; i++) r->size[i] = i < nsizes ? size[i] : 0;
  r->prim = prim;
  r->gc = (uint8_t)gc;
  r->nsizes = (uint8_t)nsizes;
  r->nregions = (uint8_t)nreg;
  r->kind = kind;
  r->nleaf = (uint16_t)nleaf;
  r->nroot = (uint16_t)nroot;
  r->same = same;
  spyH_regmark *m = (spyH_regmark *)(r + 1);
  for (uint32_t i = 0; i < nreg; i++) {
    m[i].id = v->region[i].id;
    m[i].pad_ = 0;
    m[i].depth = v->region[i].depth;
  }
  memcpy(m + nreg, cur, (n - same) * sizeof *cur);
  spyH_ring_commit(&v->ring, r);
  if (type == SPYH_REC_SAMPLE) { /* the sampler now has these keys */
    v->cur_keys = v->prev_keys;
    v->prev_keys = cur;
    v->prev_n = n;
  }
}

static void emit_sample(spy_vm *v, uint64_t w, int32_t prim, int gc) {
  if (!poll_mode(v)) prim = -1, gc = 0;
  emit(v, SPYH_REC_SAMPLE, w, prim, gc, 0, 0, NULL);
}

/* A primitive call or GC pause that may be among the longest: keep a local
** list of the longest durations so far so that only those pay for a stack
** walk; the sampler keeps the global top N. */
static void maybe_step(spy_vm *v, uint8_t kind, int32_t prim, uint64_t dur,
                       unsigned nsizes, const uint64_t *size) {
  uint32_t n = v->cfg->longest;
  if (n == 0 || dur <= v->longest_min) return;
  if (v->nlongest < n) {
    v->longest[v->nlongest++] = dur;
  } else {
    uint32_t lo = 0;
    for (uint32_t i = 1; i < n; i++)
      if (v->longest[i] < v->longest[lo]) lo = i;
    v->longest[lo] = dur;
  }
  if (v->nlongest == n) {
    uint64_t m = v->longest[0];
    for (uint32_t i = 1; i < n; i++)
      if (v->longest[i] < m) m = v->longest[i];
    v->longest_min = m;
  }
  emit(v, SPYH_REC_STEP, dur, prim, kind == SPY_STEP_GC, kind, nsizes, size);
}

/* ------------------------------------------------------------------------
** Time
** --------------------------------------------------------------------- */

/* Set up this thread's state for a new run (spy_start bumped the epoch). */
static void sync_epoch(spy_vm *v) {
  spyH_cfg *c = v->cfg;
  uint64_t e = atomic_load_explicit(&c->epoch, memory_order_acquire);
  if (e == v->epoch) return;
  v->epoch = e;
  uint64_t origin = ld(&c->origin);
  v->last = origin > v->attached_at ? origin : v->attached_at;
  v->deadline = origin + ((v->last - origin) / c->interval + 1) * c->interval;
  st(&v->deadline_pub, v->deadline);
  v->nprim = 0;
  v->gc_depth = 0;
  v->nregion = 0;
  if (SPY_UNLIKELY(c->native)) native_pub(v);
}

/* The weight due at `now`: grid time since the last sample when a grid
** point has passed (advancing the grid), else 0. Only grid points the
** sampler has marked count: one that passed just now, whose mark has not
** come yet, is charged at the hook after its own mark -- otherwise the end
** of every primitive would take the grid points of the code that follows
** it. (spyH_final, at a stop, charges up to the stop.) */
static uint64_t due(spy_vm *v, uint64_t now) {
  uint64_t upto = atomic_load_explicit(&v->marked_upto, memory_order_acquire);
  if (upto < now) now = upto;
  if (now < v->deadline) return 0;
  uint64_t iv = v->cfg->interval;
  uint64_t grid = v->deadline + (now - v->deadline) / iv * iv;
  uint64_t w = grid - v->last;
  v->last = grid;
  v->deadline = grid + iv;
  st(&v->deadline_pub, v->deadline);
  return w;
}

/* Charge a stop made by another thread, once, to what ran until it. */
static void settle_stop(spy_vm *v) {
  uint64_t fin = ld(&v->final_at);
  if (fin && atomic_exchange_explicit(&v->final_at, 0, RELAXED))
    spyH_settle(v, fin);
}

/* Entry to every slow path (never reached for the stopped stand-in, which
** is never active): settle a stop made by another thread, start a
** new run's state. Returns 0 when the hook has nothing to do. */
static int enter(spy_vm *v) {
  settle_stop(v);
  if (!atomic_load_explicit(&v->hot.active, memory_order_acquire)) return 0;
  sync_epoch(v);
  return 1;
}

void spyH_settle(spy_vm *v, uint64_t until) {
  sync_epoch(v);
  spyH_final(v, until);
}

void spyH_final(spy_vm *v, uint64_t until) {
  if (v->epoch == 0 || until <= v->last) return;
  uint64_t w = until - v->last;
  v->last = until;
  v->deadline = until + v->cfg->interval;
  emit_sample(v, w, cur_prim(v), v->gc_depth > 0);
}

/* ------------------------------------------------------------------------
** The hooks
** --------------------------------------------------------------------- */

/* Poll mode: a transition takes the sample the sampler marked due, so that
** the moment of a sample is the moment the mark arrived (independent of
** what the program is doing), and a mark that arrives inside a primitive
** or a GC is charged to it. Transitions do not look at the clock for this:
** a transition that took every grid point passed since the last sample
** would charge code that ran earlier to whatever precedes the transition. */
static inline int take_mark(spy_vm *v) {
  if (!atomic_load_explicit(&v->hot.trap, RELAXED)) return 0;
  atomic_store_explicit(&v->hot.trap, 0, RELAXED);
  return 1;
}

/* Both modes: the sampler marked a sample due; charge the grid time passed
** to what runs now (in timer mode, with no primitive or GC frame). */
void spy_poll_slow_(spy_vm *v) {
  atomic_store_explicit(&v->hot.trap, 0, RELAXED);
  if (spyH_is_stopped_vm(v)) return;
  uint64_t t0 = spyH_now();
  if (!enter(v)) return;
  uint64_t w = due(v, t0);
  if (w) emit_sample(v, w, cur_prim(v), v->gc_depth > 0);
  add(&v->hook_ticks, spyH_now() - t0);
}

/* The bracketing hooks run millions of times, and a clock read costs
** ~10-15 ns: rather than two more reads in each call to measure the hooks'
** own cost, time every 256th call and count it 256 times. Such a hook
** takes tens of nanoseconds; a timing above the cap (2 us) is the thread
** being interrupted, not the hook, and would be multiplied by 256. */
static inline void sample_cost(spy_vm *v, uint64_t t0) {
  if (SPY_UNLIKELY((++v->hook_n & 255) == 0)) {
    uint64_t d = spyH_now() - t0;
    d = d > spyH_clock.read_cost ? d - spyH_clock.read_cost : 0;
    add(&v->hook_ticks, (d < v->cfg->hook_cap ? d : v->cfg->hook_cap) * 256);
  }
}

void spy_prim_begin_slow_(spy_vm *v, int prim, unsigned n, uint64_t s0,
                          uint64_t s1, uint64_t s2, uint64_t s3) {
  uint64_t t0 = spyH_now(), start = t0;
  if (!enter(v)) return;
  if (poll_mode(v) && take_mark(v)) {
    uint64_t w = due(v, t0);
    if (w) { /* the primitive's time excludes this sample's stack walk */
      emit_sample(v, w, cur_prim(v), v->gc_depth > 0);
      start = spyH_now();
      add(&v->hook_ticks, start - t0);
    }
  }
  if (v->nprim < SPY_PRIM_NEST) {
    __typeof__(v->prim[0]) *e = &v->prim[v->nprim];
    e->prim = prim >= 0 && (uint32_t)prim < v->cfg->nprims ? prim : -1;
    e->nsizes = n <= 4 ? n : 4;
    e->size[0] = s0, e->size[1] = s1, e->size[2] = s2, e->size[3] = s3;
    e->gc0 = (uint32_t)ld(&v->gc_count);
    e->t0 = start;
  }
  v->nprim++;
  if (SPY_UNLIKELY(v->cfg->native)) native_pub(v);
  sample_cost(v, t0);
}

/* Offer one call to the primitive's reservoir: the first `reservoir` calls
** always, the nth after that with probability reservoir/n (the producer's
** half of Algorithm R; the sampler picks which kept one it replaces). */
static void offer_obs(spy_vm *v, int32_t prim, uint64_t nth, uint64_t dur,
                      uint32_t gcs, unsigned nsizes, const uint64_t *size) {
  uint64_t k = v->cfg->reservoir;
  if (k == 0) return;
  if (nth > k) {
    uint64_t x = v->rng; /* xorshift64 */
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    v->rng = x;
    /* Keep it with probability k/nth: x * nth / 2^64 is uniform in
    ** [0, nth), without a 64-bit division. */
    if ((uint64_t)(((unsigned __int128)x * nth) >> 64) >= k) return;
  }
  spyH_obs_rec *r = spyH_ring_reserve(&v->obs_ring, sizeof *r);
  if (!r) {
    add(&v->obs_dropped, 1);
    return;
  }
  r->h.type = SPYH_REC_OBS;
  r->prim = (uint32_t)prim;
  r->gc = gcs;
  r->ticks = dur;
  r->nth = nth;
  for (unsigned i = 0; i < 4; i++) r->size[i] = i < nsizes ? size[i] : 0;
  spyH_ring_commit(&v->obs_ring, r);
}

void spy_prim_end_slow_(spy_vm *v) {
  uint64_t t0 = spyH_now();
  if (!enter(v) || v->nprim == 0) return;
  uint32_t i = --v->nprim;
  if (SPY_UNLIKELY(v->cfg->native)) native_pub(v);
  if (i >= SPY_PRIM_NEST) return;
  const __typeof__(v->prim[0]) *e = &v->prim[i];
  if (poll_mode(v) && take_mark(v)) {
    uint64_t w = due(v, t0);
    if (w) {
      emit_sample(v, w, e->prim, 0);
      add(&v->hook_ticks, spyH_now() - t0);
    }
  }
  if (e->prim >= 0) {
    uint64_t dur = t0 > e->t0 ? t0 - e->t0 : 0;
    spyH_pstat *ps = &v->pstat[e->prim];
    uint64_t nth = ld(&ps->calls) + 1;
    st(&ps->calls, nth);
    add(&ps->ticks, dur);
    if (dur > ld(&ps->max)) st(&ps->max, dur);
    if (v->cfg->prim_flags[e->prim] & SPY_PRIM_COST)
      offer_obs(v, e->prim, nth, dur,
                (uint32_t)ld(&v->gc_count) - e->gc0, e->nsizes, e->size);
    maybe_step(v, SPY_STEP_PRIM, e->prim, dur, e->nsizes, e->size);
  }
  sample_cost(v, t0);
}

/* A switch while no profiler runs. The stand-in is shared by threads and
** keeps nothing; a stop made meanwhile by another thread is charged to the
** process that ran until it, before the switch. */
void spy_process_set_(spy_vm *v, uint64_t pid) {
  if (spyH_is_stopped_vm(v)) return;
  settle_stop(v);
  v->pid = pid;
  st(&v->pid_pub, pid);
}

/* A primitive that switches processes ends there: its end, if any, comes
** in another process and is ignored. */
void spy_process_switch_slow_(spy_vm *v, uint64_t pid) {
  uint64_t t0 = spyH_now();
  if (enter(v)) {
    if (poll_mode(v) && take_mark(v)) {
      uint64_t w = due(v, t0);
      if (w) emit_sample(v, w, cur_prim(v), v->gc_depth > 0);
    }
    v->nprim = 0;
    if (SPY_UNLIKELY(v->cfg->native)) native_pub(v);
    add(&v->hook_ticks, spyH_now() - t0);
  }
  spy_process_set_(v, pid);
}

void spy_gc_begin_slow_(spy_vm *v) {
  uint64_t t0 = spyH_now();
  if (!enter(v)) return;
  if (poll_mode(v) && take_mark(v)) {
    uint64_t w = due(v, t0);
    if (w) emit_sample(v, w, cur_prim(v), v->gc_depth > 0);
  }
  if (v->gc_depth++ == 0) {
    v->gc_t0 = spyH_now();
    add(&v->hook_ticks, v->gc_t0 - t0);
  }
}

void spy_gc_end_slow_(spy_vm *v) {
  uint64_t t0 = spyH_now();
  if (!enter(v) || v->gc_depth == 0) return;
  if (poll_mode(v) && take_mark(v)) {
    uint64_t w = due(v, t0);
    if (w) emit_sample(v, w, cur_prim(v), 1);
  }
  if (--v->gc_depth == 0) {
    uint64_t dur = t0 > v->gc_t0 ? t0 - v->gc_t0 : 0;
    add(&v->gc_count, 1);
    add(&v->gc_ticks, dur);
    if (dur > ld(&v->gc_max)) st(&v->gc_max, dur);
    maybe_step(v, SPY_STEP_GC, -1, dur, 0, NULL);
  }
  add(&v->hook_ticks, spyH_now() - t0);
}

/* Count the frames on the host's stack (no keys kept). */
static uint64_t stack_depth(spy_vm *v) {
  spy_stack s = {v->walk_buf, 0, 0, 0};
  v->host.walk(v->host.ud, &s);
  return s.depth_;
}

void spy_region_begin_slow_(spy_vm *v, int region) {
  uint64_t t0 = spyH_now();
  if (!enter(v)) return;
  if (poll_mode(v) && take_mark(v)) {
    uint64_t w = due(v, t0);
    if (w) emit_sample(v, w, cur_prim(v), v->gc_depth > 0);
  }
  if (v->nregion < SPY_REGION_NEST) {
    __typeof__(v->region[0]) *e = &v->region[v->nregion];
    e->id = region >= 0 && (uint32_t)region < v->cfg->max_regions ? region : -1;
    e->depth = stack_depth(v);
    e->t0 = spyH_now();
    add(&v->hook_ticks, e->t0 - t0);
  }
  v->nregion++;
}

void spy_region_end_slow_(spy_vm *v) {
  uint64_t t0 = spyH_now();
  if (!enter(v) || v->nregion == 0) return;
  if (poll_mode(v) && take_mark(v)) {
    uint64_t w = due(v, t0);
    if (w) emit_sample(v, w, cur_prim(v), v->gc_depth > 0);
  }
  uint32_t i = --v->nregion;
  if (i < SPY_REGION_NEST && v->region[i].id >= 0) {
    uint32_t n = i + 1;
    spyH_region_rec *r = spyH_ring_reserve(
        &v->ring, (uint32_t)(sizeof *r + n * sizeof(int32_t)));
    if (r) {
      r->h.type = SPYH_REC_REGION;
      r->ticks = t0 > v->region[i].t0 ? t0 - v->region[i].t0 : 0;
      r->n = n;
      r->pad_ = 0;
      int32_t *ids = (int32_t *)(r + 1);
      for (uint32_t j = 0; j < n; j++) ids[j] = v->region[j].id;
      spyH_ring_commit(&v->ring, r);
    } else {
      add(&v->dropped, 1);
    }
  }
  add(&v->hook_ticks, spyH_now() - t0);
}
