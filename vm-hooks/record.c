/*
** vm-hooks/record.c: the SAMPLE and STEP records (vm-hooks/record.h).
*/
#include "config.h"

#include "vm-hooks/record.h"

#include "vm-hooks/cpuclock.h"
#include "vm-hooks/walk.h"

#include <spyon/profile.h>

#include <string.h>

/* Write the brackets' places in the path into m (outermost first, depths
** non-decreasing and at most d); returns how many. A PRIM or GC with a
** callback above it sits at its own depth, the others at the leaf. */
static uint32_t marks(spy_vm *v, uint64_t d, spyH_place *m) {
  uint32_t nt = spyH_tracked(v), n = 0;
  int32_t last_cb = -1;
  for (uint32_t i = 0; i < nt; i++)
    if (v->b[i].kind == SPYH_B_CALLBACK) last_cb = (int32_t)i;
  uint64_t prev = 0;
  for (uint32_t i = 0; i < nt; i++) {
    const spyH_bracket *b = &v->b[i];
    uint64_t at;
    uint32_t kind;
    if (b->kind == SPYH_B_CALLBACK) continue;
    if (b->kind == SPYH_B_REGION) {
      kind = SPY_FRAME_REGION;
      at = b->depth;
    } else {
      if (v->cfg->mode != SPY_MODE_POLL) continue; /* timer mode */
      kind = b->kind == SPYH_B_PRIM ? SPY_FRAME_PRIM : SPY_FRAME_GC;
      at = (int32_t)i < last_cb && b->depth != SPYH_DEPTH_UNKNOWN ? b->depth
                                                                   : d;
      if ((int32_t)i > last_cb) kind |= SPYH_PLACE_RUNNING;
    }
    if (at > d) at = d;
    if (at < prev) at = prev;
    prev = at;
    m[n++] = (spyH_place){kind, b->kind == SPYH_B_GC ? 0 : b->id, at};
  }
  return n;
}

/* Walk the host's stack and send one SAMPLE or STEP record. */
static void emit(spy_vm *v, uint32_t type, uint64_t ticks, int32_t prim,
                 uint8_t kind, unsigned nsizes, const uint64_t *size,
                 unsigned cpu_pct) {
  const spyH_cfg *c = v->cfg;
  uint64_t depth = spyH_walk(v);
  uint32_t nleaf = depth < c->leaf_cap ? (uint32_t)depth : c->leaf_cap;
  uint64_t beyond = depth - nleaf;
  uint32_t nroot = beyond < c->root_cap ? (uint32_t)beyond : c->root_cap;
  uint32_t n = nleaf + nroot;
  uint64_t *cur = v->cur_keys;
  for (uint32_t i = 0; i < nleaf; i++) cur[i] = spyH_key_at(v, depth, i);
  for (uint32_t j = 0; j < nroot; j++)
    cur[nleaf + j] = spyH_key_at(v, depth, depth - nroot + j);
  spyH_place m[SPY_NEST_MAX];
  uint32_t nm = marks(v, depth, m);
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
  uint32_t size_b = (uint32_t)(sizeof(spyH_sample) + nm * sizeof(spyH_place) +
                               (n - same) * sizeof(uint64_t));
  spyH_sample *r = spyH_ring_reserve(&v->ring, size_b);
  if (!r) {
    atomic_fetch_add_explicit(&v->dropped, 1, memory_order_relaxed);
    return;
  }
  r->h.type = type;
  r->pid = v->pid;
  r->ticks = ticks;
  r->depth = depth;
  for (unsigned i = 0; i < 4; i++) r->size[i] = i < nsizes ? size[i] : 0;
  r->prim = prim;
  r->nsizes = (uint8_t)nsizes;
  r->nmarks = (uint8_t)nm;
  r->kind = kind;
  r->cpu_pct = (uint8_t)cpu_pct;
  r->nleaf = (uint16_t)nleaf;
  r->nroot = (uint16_t)nroot;
  r->same = same;
  memcpy(r + 1, m, nm * sizeof *m);
  memcpy((spyH_place *)(r + 1) + nm, cur, (n - same) * sizeof *cur);
  spyH_ring_commit(&v->ring, r);
  if (type == SPYH_REC_SAMPLE) { /* the sampler now has these keys */
    v->cur_keys = v->prev_keys;
    v->prev_keys = cur;
    v->prev_n = n;
  }
}

/* A sample's weight: the grid time it covers, or with the CPU clock the
** thread's own CPU time over the same stretch (vm-hooks/cpuclock.h), so
** that time spent descheduled is charged to nothing. */
void spyH_emit_sample(spy_vm *v, uint64_t w, uint64_t lag) {
  if (SPY_UNLIKELY(v->cfg->cpu_clock)) w = spyH_cpu_weight(v, lag);
  emit(v, SPYH_REC_SAMPLE, w, -1, 0, 0, NULL, SPYH_CPU_UNKNOWN);
}

/* A primitive call or GC pause over [t0, t1] that may be among the
** longest: keep a local list of the longest durations so far so that only
** those pay for a stack walk (and for reading the thread's CPU clock: how
** much of the step it spent on the CPU); the sampler keeps the global top
** N. With the CPU clock a step weighs its CPU time, so a call that was
** mostly descheduled is not mistaken for a long one. Called after the
** bracket is closed, so the path is that of its caller. */
void spyH_maybe_step(spy_vm *v, uint8_t kind, int32_t prim, uint64_t dur,
                     unsigned nsizes, const uint64_t *size, uint64_t t0,
                     uint64_t t1) {
  uint32_t n = v->cfg->longest;
  if (n == 0 || dur <= v->longest_min) return;
  unsigned pct = spyH_cpuhist_pct(v, t0, t1);
  if (v->cfg->cpu_clock && pct != SPYH_CPU_UNKNOWN) {
    dur = dur / 100 * pct + dur % 100 * pct / 100;
    if (dur <= v->longest_min) return;
  }
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
  emit(v, SPYH_REC_STEP, dur, prim, kind, nsizes, size, pct);
}
