/*
** vm-hooks/obs.c: cost observations, both halves of their priority
** sampling. The rules and why: vm-hooks/obs.h.
*/
#include "config.h"

#include "vm-hooks/obs.h"

#include "vm-hooks/clock.h"

#include <stdlib.h>
#include <string.h>

/* ---- the interpreter thread's half ------------------------------------ */

void spyH_obs_adopt(spy_vm *v) {
  for (uint32_t i = 0; i < v->cfg->max_prims; i++) {
    v->tau[i] = UINT64_MAX; /* spyH_obs_tau: the next slow path sets it */
    v->calls0[i] = atomic_load_explicit(&v->pstat[i].calls,
                                        memory_order_relaxed);
    v->obs_n[i] = v->obs_ticks[i] = 0;
    v->obs_cap[i] = UINT64_MAX;
  }
}

uint64_t spyH_obs_tau(spy_vm *v, int32_t id) {
  uint64_t t = atomic_load_explicit(&v->cfg->obs_tau[id], memory_order_relaxed);
  uint64_t n = atomic_load_explicit(&v->pstat[id].calls, memory_order_relaxed) -
               v->calls0[id];
  double m = v->cfg->obs_margin;
  if ((double)n > m) {
    uint64_t local = (uint64_t)(m / (double)n * 0x1p64);
    if (local < t) t = local;
  }
  if (v->obs_cap[id] < t) t = v->obs_cap[id];
  v->tau[id] = t;
  return t;
}

/* The budget's cap (obs.h): note a timed call; 1 when the cap fell. */
static int budget_note(spy_vm *v, int32_t id, uint64_t ticks) {
  double budget = v->cfg->obs_budget;
  v->obs_ticks[id] += ticks;
  if (budget <= 0 || ++v->obs_n[id] % SPYH_OBS_CAP_N) return 0;
  double frac = budget * ((double)v->obs_ticks[id] / (double)v->obs_n[id]) /
                (double)spyH_ns_to_ticks(SPYH_OBS_COST_NS);
  if (frac >= 1) return 0;
  uint64_t c = (uint64_t)(frac * 0x1p64);
  if (c == 0) c = 1;
  if (c >= v->obs_cap[id]) return 0;
  v->obs_cap[id] = c;
  return 1;
}

void spyH_obs_offer(spy_vm *v, int32_t prim, uint64_t prio, uint64_t ticks,
                    uint32_t gcs, unsigned nsizes, const uint64_t *size) {
  int capped = budget_note(v, prim, ticks);
  if (v->cfg->reservoir == 0 || (prio >= spyH_obs_tau(v, prim) && !capped))
    return;
  spyH_obs_rec *r = spyH_ring_reserve(&v->obs_ring, sizeof *r);
  if (!r) {
    atomic_fetch_add_explicit(&v->obs_dropped, 1, memory_order_relaxed);
    return;
  }
  r->h.type = SPYH_REC_OBS;
  r->prim = (uint32_t)prim;
  r->gc = gcs;
  r->ticks = ticks;
  r->prio = prio;
  r->cap = v->obs_cap[prim];
  for (unsigned i = 0; i < 4; i++) r->size[i] = i < nsizes ? size[i] : 0;
  spyH_ring_commit(&v->obs_ring, r);
}

/* ---- the sampler's half ------------------------------------------------ */

/* Put e at heap index i and restore the max-heap: down from i (the root
** was replaced) or up (an append), moving the pairs it passes. */
static void res_down(spyH_res *r, uint32_t i, spyH_res_entry e) {
  for (;;) {
    uint32_t l = 2 * i + 1, m = l;
    if (l >= r->n) break;
    if (l + 1 < r->n && r->heap[l + 1].prio > r->heap[l].prio) m = l + 1;
    if (r->heap[m].prio <= e.prio) break;
    r->heap[i] = r->heap[m];
    i = m;
  }
  r->heap[i] = e;
}

static void res_up(spyH_res *r, uint32_t i, spyH_res_entry e) {
  while (i > 0 && r->heap[(i - 1) / 2].prio < e.prio) {
    r->heap[i] = r->heap[(i - 1) / 2];
    i = (i - 1) / 2;
  }
  r->heap[i] = e;
}

/* The calls' threshold: the k-th smallest priority once the reservoir is
** full, or the cap if lower (UINT64_MAX: neither). */
static uint64_t res_threshold(const spyH_res *r, uint32_t k) {
  uint64_t t = r->n == k ? r->heap[0].prio : UINT64_MAX;
  return r->cap && r->cap < t ? r->cap : t;
}

int spyH_res_offer(spyH_res *r, uint32_t k, const spyH_obs_rec *o,
                   uint64_t *publish) {
  if (!r->obs) {
    r->obs = calloc(k, sizeof *r->obs);
    r->heap = calloc(k, sizeof *r->heap);
    if (!r->obs || !r->heap) {
      spyH_res_free(r);
      return SPY_ENOMEM;
    }
  }
  r->offered++;
  if (o->cap != UINT64_MAX && (!r->cap || o->cap < r->cap)) r->cap = o->cap;
  *publish = res_threshold(r, k);
  if (o->prio >= *publish) return 0; /* sent under an older threshold */
  spyH_res_entry e = {o->prio, r->n};
  if (r->n == k) e.slot = r->heap[0].slot; /* full: replace the largest */
  spy_obs *ob = &r->obs[e.slot];
  memcpy(ob->size, o->size, sizeof ob->size);
  ob->ns = o->ticks;
  ob->gc = o->gc;
  if (r->n == k) {
    res_down(r, 0, e);
  } else {
    r->n++;
    res_up(r, r->n - 1, e);
  }
  *publish = res_threshold(r, k);
  return 0;
}

uint32_t spyH_res_kept(const spyH_res *r, uint32_t k, spy_obs *out) {
  if (!r->n) return 0;
  uint64_t t = res_threshold(r, k);
  uint32_t m = 0;
  for (uint32_t j = 0; j < r->n; j++) {
    if (r->heap[j].prio >= t && t != r->heap[0].prio) continue;
    out[m] = r->obs[r->heap[j].slot];
    out[m++].ns = spyH_ticks_to_ns(r->obs[r->heap[j].slot].ns);
  }
  return m;
}

void spyH_res_free(spyH_res *r) {
  free(r->obs);
  free(r->heap);
  r->obs = NULL;
  r->heap = NULL;
}
