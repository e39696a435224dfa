/*
** vm-hooks/obs.h: cost observations, both halves of their priority
** sampling (internal, spyH_): the interpreter thread's, which times calls
** and sends them (vm-hooks/hooks.c calls it), and the sampler's
** reservoirs, which keep a uniform sample of them (sampler/agg.c).
**
** Why. The cost models need each primitive's calls with their operand
** sizes and times, a uniform sample of all calls of all threads, and
** timing a call costs two clock reads and a record: only a few may be
** timed, and which ones must not depend on the thread, the time or the
** call's length.
**
** How. Every call of a cost-recording primitive has a uniform 64-bit
** priority, and the reservoir keeps the k (spy_options.reservoir) calls
** with the smallest priorities. The sampler publishes a threshold per
** primitive (cfg->obs_tau): the k-th smallest priority kept at the
** reservoir's last selection (below), or the timing budget's cap if
** lower. It only falls, so a call whose priority is above it could never
** be kept: the thread times only calls under it (spyH_obs_tau) and sends
** only those. The sampler keeps what arrives under its threshold, and the
** build keeps the entries under the final one (spyH_res_kept): every call
** of every thread whose priority is under that threshold -- a uniform
** sample.
**
** Only the priorities under the threshold matter, so the thread draws
** only those (spyH_obs_next): the calls whose priority falls under a
** threshold t are each call with probability t / 2^64, independently; so
** the count of calls up to the next such one is geometric, and the thread
** draws that count (the call count it reaches: pstat's draw_at, for the
** threshold v->gap_tau) and then, at that call, its priority, uniform
** under the threshold the count was drawn for. The inline begin only
** counts the call and compares (hot.calls_: no draw); the call that
** reaches draw_at goes to the slow path, which draws.
** The threshold may have fallen since the count was drawn (it never
** rises within a run): the call is timed if its priority is under the
** threshold now -- the thinning that makes it each call with probability
** (threshold now) / 2^64, as a fresh priority at every call would.
**
** Two limits the thread adds to the published threshold, each one that
** the final threshold is under:
**   - the reservoir's margin: after n calls of the primitive in this run
**     the k-th smallest of n uniform draws is at most about k/n of the
**     range, and above m/n, m = k + 8 sqrt(k) + 8 (cfg->obs_margin), with
**     a chance below 1e-7 for any k: a call above m/n would almost surely
**     not be kept (this holds the timing down before the sampler's first
**     drain publishes anything);
**   - the timing budget (spy_options.obs_budget): timing a call costs
**     about SPYH_OBS_COST_NS all told, so that a primitive's timing stays
**     within budget * its own time when a call is timed with probability
**     at most budget * mean / SPYH_OBS_COST_NS -- a priority cap. The
**     thread sets it from its own timed calls of the primitive (a uniform
**     sample of its calls, their mean unbiased) once it has SPYH_OBS_CAP_N
**     of them and again every SPYH_OBS_CAP_N, and it only falls. Each cap
**     goes to the sampler in the record of the call that set it, sent
**     whatever that call's priority; the sampler's threshold is under the
**     lowest cap any thread has sent. (The sampler set the cap at its
**     drains until 11-25: a run's first millisecond timed every call of a
**     hot primitive up to the margin -- per run, the budget of the next
**     hundred milliseconds.)
** A record the thread could not send (a full ring) is counted
** (obs_dropped): the sample may then not be uniform, and the report says
** so.
*/
#ifndef SPY_OBS_H
#define SPY_OBS_H

#include <spyon/profile.h>

#include "vm-hooks/slot.h"

#define SPYH_OBS_COST_NS 250 /* timing one call: the begin's and end's slow
                                paths and the record ~100 ns, the sampler's
                                offer ~130 ns until 11-25 (~280 ns all told
                                by an A/B in-process, reservoir 0 against
                                4096), ~50 ns since the reservoir's buffer
                                (perf of examples/largeint.st): the
                                budget's share an upper bound */
#define SPYH_OBS_CAP_N 64    /* timed calls per update of the cap */

/* ---- the interpreter thread's half ------------------------------------ */

/* A uniform 64-bit draw (xorshift64). */
static inline uint64_t spyH_obs_draw(spy_vm *v) {
  uint64_t x = v->hot.rng_;
  x ^= x << 13, x ^= x >> 7, x ^= x << 17;
  return v->hot.rng_ = x;
}

/* A new run: no call of it timed yet, no limit but the sampler's. */
SPY_INTERNAL void spyH_obs_adopt(spy_vm *v);

/* The priority under which this thread times (and sends) a call of
** primitive id: the published threshold and the two limits above. */
SPY_INTERNAL uint64_t spyH_obs_tau(spy_vm *v, int32_t id);

/* A call of primitive id that reached the slow path, counted already: if
** it is the next call that draws a priority, draws its priority into
** *prio and the count of the next, and returns 1 if it is to be timed
** (its priority under the threshold now); else 0. */
SPY_INTERNAL int spyH_obs_next(spy_vm *v, int32_t id, uint64_t *prio);

/* The count of calls up to and including the next whose priority falls
** under t (each call's with probability p = t / 2^64): geometric, drawn
** from the uniform 64-bit r; 1 for t = UINT64_MAX, INT64_MAX (never) for
** t = 0, at most 2^62. */
SPY_INTERNAL int64_t spyH_obs_gap(uint64_t t, uint64_t r);

/* A timed call of primitive prim ended: note its time for the budget and
** send it if it may be kept (or if it set a new cap). */
SPY_INTERNAL void spyH_obs_offer(spy_vm *v, int32_t prim, uint64_t prio,
                                 uint64_t ticks, uint32_t gcs, unsigned nsizes,
                                 const uint64_t *size);

/* ---- the sampler's half ------------------------------------------------ */

/* One primitive's reservoir: a buffer of SPYH_RES_ROOM(k) observations
** and, beside it, their (priority, slot) pairs. A record under the
** threshold is appended; when the buffer is full, a selection keeps the k
** smallest priorities (the pairs move, the observations stay where they
** were stored) and the threshold falls to the k-th. Each record costs an
** append, and the selection a few steps a record: the max-heap this
** replaced (11-25) sifted every record through the reservoir's lines, ~12
** cache misses (~130 ns a record, perf of examples/largeint.st). The
** threshold falls only at a selection, so a few more records are sent
** than under a heap's: the final sample is the same. */
#define SPYH_RES_ROOM(k) ((k) + ((k) / 2 > 0 ? (k) / 2 : 1))
typedef struct spyH_res_entry {
  uint64_t prio;
  uint32_t slot;
} spyH_res_entry;

typedef struct spyH_res {
  spy_obs *obs;        /* [room]; ns holds ticks until built */
  spyH_res_entry *e;   /* [room]: [0, n) held; past n, the free slots */
  uint32_t n;
  uint64_t kth;        /* the k-th smallest priority at the last selection
                          (UINT64_MAX: none yet) */
  uint64_t offered;    /* records received */
  uint64_t cap;        /* the lowest budget cap sent (0: none yet) */
} spyH_res;

/* Take one OBS record into r (k = spy_options.reservoir, at least 1):
** SPY_ENOMEM if its arrays could not be made (the record is lost), else
** 0 with *publish the threshold to publish (UINT64_MAX: none yet). */
SPY_INTERNAL int spyH_res_offer(spyH_res *r, uint32_t k,
                                const spyH_obs_rec *o, uint64_t *publish);

/* The observations kept: the k smallest priorities received, those under
** the lowest cap, into out (room for r->n), their times in nanoseconds;
** *n how many. SPY_ENOMEM if the selection's scratch could not be made. */
SPY_INTERNAL int spyH_res_kept(const spyH_res *r, uint32_t k, spy_obs *out,
                               uint32_t *n);

SPY_INTERNAL void spyH_res_free(spyH_res *r);

#endif
