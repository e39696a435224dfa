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
    v->calls0[i] = atomic_load_explicit(&v->pstat[i].calls,
                                        memory_order_relaxed);
    /* the next call draws, under no threshold yet */
    atomic_store_explicit(&v->pstat[i].draw_at, v->calls0[i] + 1,
                          memory_order_relaxed);
    v->gap_tau[i] = UINT64_MAX;
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
  return t;
}

/* ln u for a normal u > 0, without libm (libspyon needs libc and
** pthreads only): u = m 2^e with m in [1, 2), and ln m = 2 atanh(s), s =
** (m - 1) / (m + 1) <= 1/3, by its series to s^19: less than 1e-10 off. */
static double ln_pos(double u) {
  uint64_t bits;
  memcpy(&bits, &u, sizeof bits);
  int e = (int)((bits >> 52) & 0x7ff) - 1023;
  bits = (bits & 0xfffffffffffffull) | 0x3ff0000000000000ull;
  double m;
  memcpy(&m, &bits, sizeof m);
  double s = (m - 1) / (m + 1), z = s * s;
  double a = 1 / 19.;
  a = 1 / 17. + z * a, a = 1 / 15. + z * a, a = 1 / 13. + z * a;
  a = 1 / 11. + z * a, a = 1 / 9. + z * a, a = 1 / 7. + z * a;
  a = 1 / 5. + z * a, a = 1 / 3. + z * a, a = 1 + z * a;
  return e * 0.69314718055994531 + 2 * s * a;
}

/* 1 + floor(ln u / ln(1 - p)) for u uniform in (0, 1] (from r's top 53
** bits) is geometric: P(gap > k) = (1 - p)^k. ln(1 - p) by its series
** while p is small, where 1 - p would lose p's digits. */
int64_t spyH_obs_gap(uint64_t t, uint64_t r) {
  if (t == 0) return INT64_MAX;
  double p = (double)t * 0x1p-64; /* 1 for t within 2^11 of 2^64 */
  if (p >= 1) return 1;
  double u = (double)((r >> 11) + 1) * 0x1p-53;
  double l = p < 1e-2 ? -p * (1 + p * (1 / 2. + p / 3)) : ln_pos(1 - p);
  double g = 1 + ln_pos(u) / l;
  return g < 0x1p62 ? (int64_t)g : (int64_t)1 << 62;
}

int spyH_obs_next(spy_vm *v, int32_t id, uint64_t *prio) {
  uint64_t calls = atomic_load_explicit(&v->pstat[id].calls,
                                        memory_order_relaxed);
  uint64_t at = atomic_load_explicit(&v->pstat[id].draw_at,
                                     memory_order_relaxed);
  if (calls < at) return 0;
  uint64_t t = spyH_obs_tau(v, id), x = spyH_obs_draw(v);
  uint64_t drawn = v->gap_tau[id];
  /* uniform under the threshold the count was drawn for */
  if (drawn != UINT64_MAX)
    x = (uint64_t)(((unsigned __int128)x * drawn) >> 64);
  *prio = x;
  uint64_t gap = (uint64_t)spyH_obs_gap(t, spyH_obs_draw(v));
  atomic_store_explicit(&v->pstat[id].draw_at,
                        gap < UINT64_MAX - calls ? calls + gap : UINT64_MAX,
                        memory_order_relaxed);
  v->gap_tau[id] = t;
  return x < t;
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

/* Reorder e[0, n) so that e[i] holds the (i+1)-th smallest priority,
** those before it no larger and those after no smaller (Hoare's FIND: a
** partition around the median of three, then on into the side that holds
** i; the priorities are uniform draws, so a few passes over n). */
static void select_nth(spyH_res_entry *e, long n, long i) {
  long lo = 0, hi = n - 1;
  while (lo < hi) {
    uint64_t a = e[lo].prio, b = e[lo + (hi - lo) / 2].prio, c = e[hi].prio;
    uint64_t pivot = a < b ? (b < c ? b : a < c ? c : a)
                           : (a < c ? a : b < c ? c : b);
    long l = lo, h = hi;
    while (l <= h) {
      while (e[l].prio < pivot) l++;
      while (e[h].prio > pivot) h--;
      if (l <= h) {
        spyH_res_entry t = e[l];
        e[l++] = e[h];
        e[h--] = t;
      }
    }
    if (i <= h) hi = h;      /* [lo, h] <= pivot <= [l, hi] */
    else if (i >= l) lo = l;
    else return;             /* between them: equal to the pivot */
  }
}

/* The calls' threshold: the k-th smallest priority at the last selection,
** or the cap if lower (UINT64_MAX: neither). */
static uint64_t res_threshold(const spyH_res *r) {
  return r->cap && r->cap < r->kth ? r->cap : r->kth;
}

int spyH_res_offer(spyH_res *r, uint32_t k, const spyH_obs_rec *o,
                   uint64_t *publish) {
  uint32_t room = SPYH_RES_ROOM(k);
  if (!r->obs) {
    r->obs = calloc(room, sizeof *r->obs);
    r->e = calloc(room, sizeof *r->e);
    if (!r->obs || !r->e) {
      spyH_res_free(r);
      return SPY_ENOMEM;
    }
    for (uint32_t i = 0; i < room; i++) r->e[i].slot = i;
    r->n = 0;
    r->kth = UINT64_MAX;
  }
  r->offered++;
  if (o->cap != UINT64_MAX && (!r->cap || o->cap < r->cap)) r->cap = o->cap;
  *publish = res_threshold(r);
  if (o->prio >= *publish) return 0; /* sent under an older threshold */
  spyH_res_entry *e = &r->e[r->n++];
  e->prio = o->prio;
  spy_obs *ob = &r->obs[e->slot];
  memcpy(ob->size, o->size, sizeof ob->size);
  ob->ns = o->ticks;
  ob->gc = o->gc;
  if (r->n == room) { /* keep the k smallest; their slots stay in [0, k) */
    select_nth(r->e, room, k - 1);
    r->kth = r->e[k - 1].prio;
    r->n = k;
    *publish = res_threshold(r);
  }
  return 0;
}

int spyH_res_kept(const spyH_res *r, uint32_t k, spy_obs *out, uint32_t *n) {
  *n = 0;
  const spyH_res_entry *e = r->e;
  spyH_res_entry *s = NULL;
  uint32_t held = r->n;
  if (held > k) { /* the k smallest, selected in a copy */
    if (!(s = malloc(held * sizeof *s))) return SPY_ENOMEM;
    memcpy(s, e, held * sizeof *s);
    select_nth(s, held, k - 1);
    e = s;
    held = k;
  }
  uint64_t lim = r->cap ? r->cap : UINT64_MAX;
  uint32_t m = 0;
  for (uint32_t j = 0; j < held; j++) {
    if (e[j].prio >= lim) continue;
    out[m] = r->obs[e[j].slot];
    out[m++].ns = spyH_ticks_to_ns(r->obs[e[j].slot].ns);
  }
  free(s);
  *n = m;
  return 0;
}

void spyH_res_free(spyH_res *r) {
  free(r->obs);
  free(r->e);
  r->obs = NULL;
  r->e = NULL;
}
