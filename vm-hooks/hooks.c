/*
** vm-hooks/hooks.c: the out-of-line halves of the hooks.
**
** Attribution (SPY_MODE_POLL). Samples fall due on a fixed grid, origin +
** k * interval; the marking side marks a thread's sample due when a grid
** point has passed (vm-hooks/due.h). The next hook to run takes it,
** *before* changing state, and charges it to what was running: a poll to
** the running code, a primitive's end to the primitive, a callback's begin
** to the primitive that calls back and its end to the code called back, a
** GC end to the GC, a process switch to the process switched from. So the
** instant of a sample is the instant the mark arrived, and time inside a
** primitive is charged to the primitive and not to the code that runs
** next. A sample's weight is the grid time since the previous one, so a
** late mark never loses time and a thread's weights add up to its profiled
** time.
**
** What runs is one stack of brackets per process: primitives, callbacks
** out of them, GC pauses and regions, in any mix. The innermost bracket
** that is not a region decides the charge: a primitive or GC takes the
** sample; a callback (or no bracket) leaves it to the interpreter code the
** walker reports. In the sample's path each bracket is a frame placed at
** the stack depth where it began: a primitive with a callback running
** above it sits between its caller's frames and the callback's. A
** primitive's (or GC's) own time excludes its callbacks and the time its
** process spends switched out.
**
** SPY_MODE_TIMER is MessageTally's behaviour for comparison: only polls
** take marked samples and brackets other than regions are not shown, so a
** mark that arrives inside a primitive is charged to whatever runs at the
** first poll after it.
**
** Everything here runs in the interpreter thread: no locks, no allocation,
** no waiting. A full ring drops the record and counts it.
*/
#include "config.h"

#include "vm-hooks/clock.h"
#include "vm-hooks/due.h"
#include "vm-hooks/mark.h"
#include "vm-hooks/obs.h"
#include "vm-hooks/record.h"
#include "vm-hooks/slot.h"
#include "vm-hooks/walk.h"

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

/* ------------------------------------------------------------------------
** Brackets
** --------------------------------------------------------------------- */

static inline void set_nest(spy_vm *v, uint32_t n) {
  __atomic_store_n(&v->hot.nest_, n, __ATOMIC_RELAXED);
}

/* The innermost bracket that decides the charge (not a region), or NULL:
** a PRIM or GC takes samples, a CALLBACK hands them to the code. */
static spyH_bracket *charged(spy_vm *v) {
  for (uint32_t i = spyH_tracked(v); i-- > 0;)
    if (v->b[i].kind != SPYH_B_REGION) return &v->b[i];
  return NULL;
}

/* The PRIM or GC bracket a callback at index i belongs to, or NULL. */
static spyH_bracket *owner_of(spy_vm *v, uint32_t i) {
  while (i-- > 0)
    if (v->b[i].kind == SPYH_B_PRIM || v->b[i].kind == SPYH_B_GC)
      return &v->b[i];
    else if (v->b[i].kind == SPYH_B_CALLBACK)
      return NULL;
  return NULL;
}

/* Native stacks: publish the primitive that runs now (or none) for the
** SIGPROF handler. Called only when cfg->native is on. */
static void native_pub(spy_vm *v) {
  spyH_bracket *c = charged(v);
  st(&v->native_prim,
     c && c->kind == SPYH_B_PRIM && c->id >= 0 ? (uint64_t)c->id + 1 : 0);
}

static inline void changed(spy_vm *v) {
  if (SPY_UNLIKELY(v->cfg->native)) native_pub(v);
}

/* ------------------------------------------------------------------------
** Closing brackets (their end hooks, and unwinding)
** --------------------------------------------------------------------- */

/* Own time of a PRIM or GC bracket ending at `now`. */
static inline uint64_t own(const spyH_bracket *b, uint64_t now) {
  uint64_t d = now > b->t0 ? now - b->t0 : 0;
  return d > b->excl ? d - b->excl : 0;
}

/* Is there a GC bracket below index i? (a GC inside a GC is one pause) */
static int gc_below(const spy_vm *v, uint32_t i) {
  while (i-- > 0)
    if (v->b[i].kind == SPYH_B_GC) return 1;
  return 0;
}

/* The time now, read at most once per hook: *now is 0 until read. */
static inline uint64_t clock_once(uint64_t *now) {
  if (!*now) *now = spyH_now();
  return *now;
}

/* Close the innermost bracket at *now (read here if not yet and needed):
** pop it, then do what its end hook does with its figures. Untracked
** brackets (deeper than SPY_NEST_MAX) are only counted down. */
static void close_top(spy_vm *v, uint64_t *now) {
  uint32_t i = spyH_nest(v) - 1;
  set_nest(v, i);
  if (i >= SPY_NEST_MAX) return;
  spyH_bracket b = v->b[i];
  changed(v);
  switch (b.kind) {
  case SPYH_B_PRIM: {
    if (b.id < 0 || !b.timed) break; /* cheap: a call no sample fell in */
    spyH_pstat *ps = &v->pstat[b.id];
    uint64_t dur = own(&b, clock_once(now));
    if (v->cfg->exact_prims) add(&ps->ticks, dur);
    if (dur > ld(&ps->max)) st(&ps->max, dur);
    if (b.timed == 2 && (v->cfg->prim_flags[b.id] & SPY_PRIM_COST))
      spyH_obs_offer(v, b.id,
                     v->cfg->exact_prims ? spyH_obs_draw(v) : b.prio, dur,
                     (uint32_t)ld(&v->gc_count) - b.gc0, b.nsizes, b.size);
    spyH_maybe_step(v, SPY_STEP_PRIM, b.id, dur, b.nsizes, b.size, b.t0, *now);
    break;
  }
  case SPYH_B_CALLBACK: {
    spyH_bracket *o = owner_of(v, i);
    if (o && o->timed && b.t0) {
      uint64_t t = clock_once(now);
      o->excl += t > b.t0 ? t - b.t0 : 0;
    }
    break;
  }
  case SPYH_B_GC: {
    if (gc_below(v, i)) break;
    uint64_t dur = own(&b, clock_once(now));
    add(&v->gc_count, 1);
    add(&v->gc_ticks, dur);
    if (dur > ld(&v->gc_max)) st(&v->gc_max, dur);
    spyH_maybe_step(v, SPY_STEP_GC, -1, dur, 0, NULL, b.t0, *now);
    break;
  }
  case SPYH_B_REGION: {
    if (b.id < 0) break;
    uint32_t n = 0;
    for (uint32_t j = 0; j <= i; j++) n += v->b[j].kind == SPYH_B_REGION;
    spyH_region_rec *r = spyH_ring_reserve(
        &v->ring, (uint32_t)(sizeof *r + n * sizeof(int32_t)));
    if (!r) {
      add(&v->dropped, 1);
      break;
    }
    r->h.type = SPYH_REC_REGION;
    uint64_t t = clock_once(now);
    r->ticks = t > b.t0 ? t - b.t0 : 0;
    r->n = n;
    r->pad_ = 0;
    int32_t *ids = (int32_t *)(r + 1);
    for (uint32_t j = 0, k = 0; j <= i; j++)
      if (v->b[j].kind == SPYH_B_REGION) ids[k++] = v->b[j].id;
    spyH_ring_commit(&v->ring, r);
    break;
  }
  default: break;
  }
}

/* Open a bracket; returns it, or NULL when it is too deep to track. */
static spyH_bracket *open_bracket(spy_vm *v, uint8_t kind, uint64_t t0) {
  uint32_t i = spyH_nest(v);
  set_nest(v, i + 1);
  if (i >= SPY_NEST_MAX) {
    add(&v->nest_dropped, 1);
    return NULL;
  }
  spyH_bracket *b = &v->b[i];
  /* One structure store, not memset and field stores: gcc makes the
  ** memset a `rep stos`, which stalled the byte store after it (two
  ** thirds of a callback's cost). */
  *b = (spyH_bracket){.kind = kind, .id = -1, .depth = SPYH_DEPTH_UNKNOWN,
                      .t0 = t0};
  return b;
}

/* ------------------------------------------------------------------------
** Processes: brackets switched out with their process
** --------------------------------------------------------------------- */

/* Keep the running process's brackets while it is switched out. The table
** is searched linearly: it is small, and empty in most programs. */
static void save_process(spy_vm *v, uint64_t now) {
  uint32_t n = spyH_tracked(v);
  if (spyH_nest(v) > n) add(&v->nest_dropped, spyH_nest(v) - n);
  if (n == 0) {
    set_nest(v, 0);
    return;
  }
  spyH_saved *slot = NULL, *oldest = NULL;
  for (uint32_t i = 0; i < v->cfg->saved_processes && !slot; i++) {
    spyH_saved *s = &v->saved[i];
    if (s->n == 0) slot = s;
    else if (!oldest || s->serial < oldest->serial) oldest = s;
  }
  if (!slot) { /* full: the longest-suspended nesting goes */
    slot = oldest;
    add(&v->nest_dropped, slot->n);
    v->nsaved--;
  }
  slot->pid = v->pid;
  slot->out_at = now;
  slot->serial = ++v->saved_serial;
  slot->n = n;
  memcpy(slot->b, v->b, n * sizeof *v->b);
  v->nsaved++;
  set_nest(v, 0);
}

/* The kept brackets of process pid, or NULL. */
static spyH_saved *find_saved(spy_vm *v, uint64_t pid) {
  if (v->nsaved == 0) return NULL;
  for (uint32_t i = 0; i < v->cfg->saved_processes; i++)
    if (v->saved[i].n && v->saved[i].pid == pid) return &v->saved[i];
  return NULL;
}

/* Bring back the brackets of the process now running. Its trailing PRIM
** and GC brackets (those not waiting on a callback) did not run while it
** was out: that time is not their own. */
static void restore_process(spy_vm *v, uint64_t now) {
  spyH_saved *s = find_saved(v, v->pid);
  if (!s) return;
  uint32_t n = s->n;
  memcpy(v->b, s->b, n * sizeof *v->b);
  s->n = 0;
  v->nsaved--;
  set_nest(v, n);
  uint64_t away = now > s->out_at ? now - s->out_at : 0;
  for (uint32_t i = n; i-- > 0;) {
    if (v->b[i].kind == SPYH_B_CALLBACK) break;
    if (v->b[i].kind != SPYH_B_REGION) v->b[i].excl += away;
  }
}

static void forget_brackets(spy_vm *v) {
  set_nest(v, 0);
  for (uint32_t i = 0; i < v->cfg->saved_processes; i++) v->saved[i].n = 0;
  v->nsaved = 0;
}

/* ------------------------------------------------------------------------
** Time
** --------------------------------------------------------------------- */

/* Take this thread into run `epoch` that began at `origin`. The brackets
** are kept only if every hook since the last run ran its slow path
** (tracking): otherwise an end may have been missed. */
static void adopt_run(spy_vm *v, uint64_t epoch, uint64_t origin) {
  spyH_cfg *c = v->cfg;
  v->epoch = epoch;
  v->last = origin > v->attached_at ? origin : v->attached_at;
  v->deadline = origin + ((v->last - origin) / c->interval + 1) * c->interval;
  v->tick_debt = 0;
  v->tick_backlog = 0;
  spyH_drain_start(v); /* spy_options.self_drain (mark.c) */
  st(&v->deadline_pub, v->deadline);
  if (!v->tracking) forget_brackets(v);
  v->tracking = 1;
  spyH_obs_adopt(v); /* cost observations: nothing timed yet */
  /* The inline fast paths push and pop primitives' and callbacks'
  ** brackets exactly as the slow paths do; not when every end must time
  ** (exact accounting) or publish the primitive (native stacks). A
  ** callback of a timed primitive reads the clock inline only if it is
  ** the TSC. */
  v->hot.fast_ = c->exact_prims || c->native ? 0
                 : spyH_clock.use_tsc        ? 1 | SPY_FAST_TSC_
                                             : 1;
  spyH_until(v);
  changed(v);
}

/* Set up this thread's state for a new run (spy_start bumped the epoch). */
static void sync_epoch(spy_vm *v) {
  spyH_cfg *c = v->cfg;
  uint64_t e = atomic_load_explicit(&c->epoch, memory_order_acquire);
  if (e != v->epoch) adopt_run(v, e, ld(&c->origin));
}

/* The weight due at `now`: grid time since the last sample when a grid
** point has passed (advancing the grid), else 0. Only grid points the
** marking side has marked count: one that passed just now, whose mark has
** not come yet, is charged at the hook after its own mark -- otherwise the
** end of every primitive would take the grid points of the code that
** follows it. (spyH_final, at a stop, charges up to the stop.) */
static uint64_t due(spy_vm *v, uint64_t now) {
  uint64_t upto = spyH_marked_upto(v);
  if (upto < now) now = upto;
  if (now < v->deadline) return 0;
  uint64_t iv = v->cfg->interval;
  uint64_t grid = v->deadline + (now - v->deadline) / iv * iv;
  uint64_t w = grid - v->last;
  /* Skipped grid time (mark.c): an interval to each sample of the
  ** interpreter's own code. A deadline is skipped only while no primitive
  ** or GC runs (their ends watch it), so samples inside them take none:
  ** spread over all samples, the time lost to the VM's stalls in
  ** interpreter code went to the primitives in proportion (the long
  ** primitive of mark/leaves_tick_next 1-2 pp over its truth idle, 10 pp
  ** beside a busy thread on its core). */
  spyH_bracket *c = charged(v);
  int in_code = spyH_nest(v) <= SPY_NEST_MAX && (!c || c->kind == SPYH_B_CALLBACK);
  if (v->tick_backlog && in_code) {
    uint64_t b = v->tick_backlog < iv ? v->tick_backlog : iv;
    w += b;
    v->tick_backlog -= b;
  }
  v->last = grid;
  v->deadline = grid + iv;
  v->tick_debt = 0;
  st(&v->deadline_pub, v->deadline);
  spyH_until(v);
  return w;
}

/* A hook's first act: a marked sample is charged to the state before the
** hook changes it. Polls take marks in both modes, the other hooks only
** in poll mode. */
static void take_due(spy_vm *v, uint64_t now, int is_poll) {
  if (!is_poll && !poll_mode(v)) return;
  if (!spyH_take_at(v, now)) return;
  /* Cheap accounting: primitives that run now and were not timed began
  ** after the previous sample (which would have timed them), and before
  ** the sample could be taken: with spy_tick_next, before the deadline
  ** that followed it (their begin watches it); otherwise before the first
  ** mark (their begin takes a mark). Their clock starts there: their
  ** measured time is a lower bound, within an interval and the mark's
  ** latency of the truth, so that a long call is still found among the
  ** longest steps and a short one never is. (Started half way between
  ** the samples, an unbiased guess, every sampled 0.2 us call of
  ** examples/largeint.st became a step of half an interval: the longest
  ** steps and every primitive's maximum were those guesses.) */
  uint64_t late = v->tick_at ? v->deadline : v->mark_first;
  if (!late || late > now) late = now;
  uint64_t w = due(v, now);
  if (!w) return;
  for (uint32_t i = spyH_tracked(v); i-- > 0;) {
    spyH_bracket *b = &v->b[i];
    if (b->kind == SPYH_B_CALLBACK) break;
    if (b->kind == SPYH_B_PRIM && !b->timed) {
      b->timed = 1;
      b->t0 = late;
      b->excl = 0; /* the inline begin leaves it */
    }
  }
  spyH_emit_sample(v, w, now > v->last ? now - v->last : 0);
}

/* Is a sample due? (the hooks read the clock only then, or when timing) */
static inline int trap_set(spy_vm *v) {
  return SPY_UNLIKELY(__atomic_load_n(&v->hot.trap_, __ATOMIC_RELAXED) != 0);
}

/* For a host that ticks with spy_tick_next, a primitive's or GC's own
** part (its begin and end, a callback's begin) and a process switch (the
** scheduler may have slept, idle) are where a deadline that passed
** unwatched shows: no check of the host's runs inside a primitive, and
** none may run in the host's code just before a call, or the thread may
** have been descheduled there. One clock read against the deadline (in
** the program's time, vm-hooks/due.h); the hook's take then charges it --
** at the begin to the caller, at the end to the primitive, at a switch to
** the process switched from. The inline begin and end come here once the
** clock passes hot.until_ (<spyon/hooks.h>). (A host that marks
** otherwise, as the Lua host from its timer signal with spy_tick, marks
** inside the primitive itself.) If at the end the deadline is still
** ahead, the host's countdown was planned without the time the primitive
** took, and its next tick could come after the deadline: when the checks
** it still counts might reach that far, run it out (spy_tick_word), so
** that the next check ticks and plans anew. */
#if defined(__GNUC__) || defined(__clang__)
__attribute__((always_inline)) /* gcc kept it a call: 10 % of a bracket */
#endif
static inline void watch(spy_vm *v, uint64_t *now, int at_end) {
  if (!v->tick_at || trap_set(v)) return; /* a spy_tick_next host's */
  uint64_t t = clock_once(now) - v->tick_debt;
  uint64_t d = ld(&v->deadline_pub);
  if (t >= d) {
    spyH_mark(v, *now);
  } else if (at_end && v->tick_word && *v->tick_word > 0 &&
             d - t <= v->tick_lead + ((v->tick_n * v->tick_pace) >> 8)) {
    v->tick_uncounted += (uint64_t)*v->tick_word;
    *v->tick_word = 0;
  }
}

uint64_t spyH_settle_stops(spy_vm *v) {
  uint64_t at, e, origin, last = 0;
  while (spyH_take_stop(v, &at, &e, &origin)) {
    if (e != v->epoch) adopt_run(v, e, origin);
    spyH_final(v, at);
    last = e;
  }
  return last;
}

/* Settle the stops made by other threads, then turn quiet unless a new
** run has begun. */
static inline void settle_stop(spy_vm *v) {
  if (ld(&v->stopq_r) == ld(&v->stopq_w)) return;
  uint64_t e = spyH_settle_stops(v);
  if (e && !spyH_go_quiet(v, e)) {
    v->tracking = 0, v->hot.fast_ = 0;
    spyH_until(v);
  }
}

/* Entry to every slow path (never reached for the stopped stand-in, which
** is never active): settle a stop made by another thread, start a
** new run's state. Returns 0 when the hook has nothing to do. */
static inline int enter(spy_vm *v) {
  settle_stop(v);
  if (!spyH_active(v)) return 0;
  sync_epoch(v);
  return 1;
}

void spyH_settle(spy_vm *v, uint64_t until) {
  spyH_settle_stops(v); /* stops made elsewhere come first */
  sync_epoch(v);
  spyH_final(v, until);
}

void spyH_final(spy_vm *v, uint64_t until) {
  if (v->epoch == 0 || until <= v->last) return;
  uint64_t w = until - v->last + v->tick_backlog;
  v->tick_backlog = 0;
  v->last = until;
  v->deadline = until + v->cfg->interval;
  spyH_until(v);
  spyH_emit_sample(v, w, 0);
}

void spyH_quiet(spy_vm *v) {
  spyH_set_active(v, 0);
  v->tracking = 0;
  v->hot.fast_ = 0;
  spyH_until(v);
}

/* The bracketing hooks run millions of times, and a clock read costs
** ~10-15 ns: rather than two more reads in each call to measure the hooks'
** own cost, time every 256th call and count it 256 times. Such a hook
** takes tens of nanoseconds; a timing above the cap (2 us) is the thread
** being interrupted, not the hook, and would be multiplied by 256. Returns
** the start time of a measured call, else 0. */
static inline uint64_t cost_begin(spy_vm *v) {
  return SPY_UNLIKELY((++v->hook_n & 255) == 0) ? spyH_now() : 0;
}

static inline void cost_end(spy_vm *v, uint64_t t0) {
  if (SPY_UNLIKELY(t0 != 0)) {
    uint64_t d = spyH_now() - t0;
    d = d > spyH_clock.read_cost ? d - spyH_clock.read_cost : 0;
    add(&v->hook_ticks, (d < v->cfg->hook_cap ? d : v->cfg->hook_cap) * 256);
  }
}

/* ------------------------------------------------------------------------
** The hooks
** --------------------------------------------------------------------- */

/* Both modes: the marking side marked a sample due; charge the grid time
** passed to what runs now. */
void spy_poll_slow_(spy_vm *v) {
  if (spyH_is_stopped_vm(v)) {
    spyH_take(v);
    return;
  }
  uint64_t t0 = spyH_now();
  if (!enter(v)) {
    spyH_take(v);
    return;
  }
  take_due(v, t0, 1);
  add(&v->hook_ticks, spyH_now() - t0);
}

/* Cheap accounting (the default) reads the clock here only when a sample
** is due, when this call is timed, or to measure the hook itself. A call
** is timed when exact_prims is on, or when the primitive records cost
** observations and the call's priority falls under the reservoir's
** threshold (so the timed calls are the ones that could be kept). */
static void prim_begin(spy_vm *v, int prim, unsigned n, uint64_t s0,
                       uint64_t s1, uint64_t s2, uint64_t s3) {
  uint64_t tc = cost_begin(v);
  if (!enter(v)) return;
  const spyH_cfg *c = v->cfg;
  uint64_t start = 0, now = tc;
  watch(v, &now, 0);
  if (trap_set(v)) {
    uint64_t t = clock_once(&now);
    take_due(v, t, 0);
    start = spyH_now(); /* the primitive's time excludes this sample */
    add(&v->hook_ticks, start - t);
  }
  uint32_t np = atomic_load_explicit(&c->nprims, memory_order_acquire);
  int32_t id = prim >= 0 && (uint32_t)prim < np ? prim : -1;
  uint8_t timed = 0;
  uint64_t prio = 0;
  if (id >= 0) {
    spyH_pstat *ps = &v->pstat[id];
    st(&ps->calls, ld(&ps->calls) + 1); /* counted at begin, as inline */
    if (c->exact_prims)
      timed = 2;
    else if ((c->prim_flags[id] & SPY_PRIM_COST) && c->reservoir)
      timed = spyH_obs_next(v, id, &prio) ? 2 : 0;
    else
      st(&ps->draw_at, UINT64_MAX); /* never timed: the inline begin on */
  }
  uint32_t i = spyH_nest(v);
  set_nest(v, i + 1);
  if (i < SPY_NEST_MAX) { /* open_bracket's, with every field in one store */
    v->b[i] = (spyH_bracket){
        .kind = SPYH_B_PRIM, .nsizes = (uint8_t)(n <= 4 ? n : 4),
        .timed = timed, .id = id, .depth = SPYH_DEPTH_UNKNOWN,
        .prio = prio, .size = {s0, s1, s2, s3}};
    if (timed) v->b[i].gc0 = (uint32_t)ld(&v->gc_count);
    changed(v);
  } else {
    add(&v->nest_dropped, 1);
  }
  cost_end(v, tc);
  /* A timed call's window opens last (timed_end says why); after a
  ** sample taken here (start), so that it excludes the sample too. */
  if (timed && i < SPY_NEST_MAX) v->b[i].t0 = spyH_now();
}

void spy_prim_begin_slow_(spy_vm *v, int prim, unsigned n, uint64_t s0,
                          uint64_t s1, uint64_t s2, uint64_t s3) {
  prim_begin(v, prim, n, s0, s1, s2, s3);
}

/* Close brackets down to and including the innermost one of `kind`; a
** mismatched end (nothing of that kind open) is ignored. Brackets above it
** were left open by the host: they end here too. */
static void end_kind(spy_vm *v, uint8_t kind, uint64_t *now) {
  uint32_t nt = spyH_tracked(v);
  if (spyH_nest(v) > nt) { /* the innermost are untracked: assume they match */
    set_nest(v, spyH_nest(v) - 1);
    return;
  }
  uint32_t i = nt;
  while (i > 0 && v->b[i - 1].kind != kind) i--;
  if (i == 0) return;
  while (spyH_nest(v) >= i) close_top(v, now);
}

/* A timed call's window closes first thing in its end's slow path: the
** time now if the innermost bracket is a timed primitive, else 0. One call
** in a hundred or so is timed, so its slow paths run cold, and every
** cycle of them inside the window is a bias of the call's observation.
** An empty primitive's observations (bench/obs_window, medians) read
** 20-40 ns with cheap accounting and 20 with exact before 12-07, when the
** window opened before the begin's last steps and closed after the end's
** checks; 10 and 10 since. */
static inline uint64_t timed_end(spy_vm *v) {
  uint32_t n = spyH_nest(v);
  if (n - 1 >= SPY_NEST_MAX) return 0;
  const spyH_bracket *b = &v->b[n - 1];
  return b->kind == SPYH_B_PRIM && b->timed ? spyH_now() : 0;
}

void spy_prim_end_slow_(spy_vm *v) {
  uint64_t end = timed_end(v);
  uint64_t tc = cost_begin(v);
  if (!enter(v) || spyH_nest(v) == 0) return;
  uint64_t now = end ? end : tc;
  watch(v, &now, 1);
  if (trap_set(v)) take_due(v, clock_once(&now), 0);
  /* The common case, what close_top does for it: the innermost bracket is
  ** a primitive no clock was read for (cheap accounting). */
  uint32_t n = spyH_nest(v);
  spyH_bracket *b = n <= SPY_NEST_MAX ? &v->b[n - 1] : NULL;
  if (b && b->kind == SPYH_B_PRIM && !b->timed && !v->cfg->native) {
    set_nest(v, n - 1);
  } else {
    end_kind(v, SPYH_B_PRIM, &now);
  }
  cost_end(v, tc);
}

/* The clock is read only when a sample is due or the primitive that calls
** back is timed (its own time excludes the callback's). A callback found
** late (spy_callback_open: `take` 0) leaves a due sample to the code
** called back, which has been running since before its mark. */
static void callback_begin(spy_vm *v, int take) {
  uint64_t tc = cost_begin(v);
  if (!enter(v)) return;
  uint64_t now = tc;
  if (take) {
    watch(v, &now, 1);
    if (trap_set(v)) take_due(v, clock_once(&now), 0);
  }
  /* Place the brackets the callback runs above: their depth is the
  ** stack's now (the walker reports the same stack at every hook of one
  ** primitive). Found once per primitive call, at its first callback. */
  spyH_bracket *own_b = NULL;
  for (uint32_t i = spyH_tracked(v); i-- > 0;) {
    spyH_bracket *b = &v->b[i];
    if (b->kind == SPYH_B_CALLBACK) break;
    if (b->kind == SPYH_B_REGION) continue;
    if (!own_b) own_b = b;
    if (b->depth != SPYH_DEPTH_UNKNOWN) continue;
    uint64_t d = spyH_walk(v);
    for (uint32_t j = i + 1; j-- > 0;) {
      if (v->b[j].kind == SPYH_B_CALLBACK) break;
      if (v->b[j].depth == SPYH_DEPTH_UNKNOWN) v->b[j].depth = d;
    }
    break;
  }
  uint64_t t1 = own_b && own_b->timed ? spyH_now() : 0;
  open_bracket(v, SPYH_B_CALLBACK, t1);
  changed(v);
  cost_end(v, tc);
}

void spy_callback_begin_slow_(spy_vm *v) { callback_begin(v, 1); }
void spy_callback_open_slow_(spy_vm *v) { callback_begin(v, 0); }

void spy_callback_end_slow_(spy_vm *v) {
  uint64_t tc = cost_begin(v);
  if (!enter(v) || spyH_nest(v) == 0) return;
  uint64_t now = tc;
  if (trap_set(v)) take_due(v, clock_once(&now), 0);
  /* The common case, what close_top does for it: the innermost bracket is
  ** the callback (a sort comparator returns to its primitive). */
  uint32_t n = spyH_nest(v);
  spyH_bracket *b = n <= SPY_NEST_MAX ? &v->b[n - 1] : NULL;
  if (b && b->kind == SPYH_B_CALLBACK) {
    if (b->t0) { /* the primitive is timed: its own time excludes this */
      spyH_bracket *o = owner_of(v, n - 1);
      uint64_t t = clock_once(&now);
      if (o && o->timed) o->excl += t > b->t0 ? t - b->t0 : 0;
    }
    set_nest(v, n - 1);
    changed(v);
  } else {
    end_kind(v, SPYH_B_CALLBACK, &now);
  }
  cost_end(v, tc);
}

void spy_nest_unwind_slow_(spy_vm *v, unsigned saved) {
  uint64_t t0 = spyH_now();
  if (!enter(v)) return;
  take_due(v, t0, 0);
  uint64_t now = t0;
  while (spyH_nest(v) > saved) close_top(v, &now);
  add(&v->hook_ticks, spyH_now() - t0);
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

void spy_process_switch_slow_(spy_vm *v, uint64_t pid) {
  uint64_t t0 = spyH_now();
  if (!enter(v)) {
    spy_process_set_(v, pid);
    return;
  }
  uint64_t now = t0;
  watch(v, &now, 0); /* a scheduler that slept ran no check */
  take_due(v, t0, 0);
  if (pid != v->pid) {
    save_process(v, t0);
    v->pid = pid;
    st(&v->pid_pub, pid);
    restore_process(v, t0);
    changed(v);
  }
  add(&v->hook_ticks, spyH_now() - t0);
}

void spy_process_end(spy_vm *v, uint64_t pid) {
  if (!v || spyH_is_stopped_vm(v)) return;
  spyH_saved *s = find_saved(v, pid);
  if (s) {
    s->n = 0;
    v->nsaved--;
  }
}

void spy_gc_begin_slow_(spy_vm *v) {
  uint64_t t0 = spyH_now();
  if (!enter(v)) return;
  uint64_t now = t0;
  watch(v, &now, 0);
  take_due(v, t0, 0);
  uint64_t t1 = spyH_now();
  spyH_bracket *b = open_bracket(v, SPYH_B_GC, t1);
  if (b) {
    b->timed = 2;
    changed(v);
  }
  add(&v->hook_ticks, t1 - t0);
}

void spy_gc_end_slow_(spy_vm *v) {
  uint64_t t0 = spyH_now();
  if (!enter(v) || spyH_nest(v) == 0) return;
  uint64_t now = t0;
  watch(v, &now, 1);
  take_due(v, t0, 0);
  end_kind(v, SPYH_B_GC, &now);
  add(&v->hook_ticks, spyH_now() - t0);
}

void spy_region_begin_slow_(spy_vm *v, int region) {
  uint64_t t0 = spyH_now();
  if (!enter(v)) return;
  take_due(v, t0, 0);
  uint64_t depth = spyH_nest(v) < SPY_NEST_MAX ? spyH_walk(v) : 0;
  uint64_t t1 = spyH_now();
  spyH_bracket *b = open_bracket(v, SPYH_B_REGION, t1);
  if (b) {
    uint32_t nr = atomic_load_explicit(&v->cfg->nregions,
                                       memory_order_acquire);
    b->id = region >= 0 && (uint32_t)region < nr ? region : -1;
    b->depth = depth;
  }
  add(&v->hook_ticks, t1 - t0);
}

void spy_region_end_slow_(spy_vm *v) {
  uint64_t t0 = spyH_now();
  if (!enter(v) || spyH_nest(v) == 0) return;
  take_due(v, t0, 0);
  uint64_t now = t0;
  end_kind(v, SPYH_B_REGION, &now);
  add(&v->hook_ticks, spyH_now() - t0);
}
