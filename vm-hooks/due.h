/*
** vm-hooks/due.h: the due-mark protocol, both halves (internal, spyH_).
**
** Why a protocol: the interpreter thread must learn that a sample is due
** for one load and one predictable branch, and must never wait. So the
** marking side (today the sampler thread; a timer signal or the host's own
** slow path could play the same part) publishes two things, in order:
**
**   marked_upto  the marking side's clock when it marked (release), and
**   trap         "a sample is due" (release),
**
** (and before both marked_first, the clock of the first mark since the
** interpreter thread last took one: a pending mark renewed keeps it),
**
** and the interpreter thread, in the slow path the trap sends it to,
** exchanges trap back to 0 with acquire and only then reads marked_upto:
** the acquire pairs with the trap's release, so a consumed mark always
** comes with the marked_upto written before it (on every architecture,
** not only on x86). The inline fast path reads trap relaxed: it is only a
** hint to enter the slow path.
**
** Stopping from another thread uses the same channel: the stop (its time,
** and the run it ends) is queued for the thread before the trap, and the
** thread charges up to it at its next slow path. The thread stays
** `active` until then, so that every hook keeps running its slow path and
** the open brackets stay exact across a stop quickly followed by a
** restart; the thread turns itself quiet when it settles (spyH_go_quiet),
** unless a new run has begun meanwhile. Stops queue (SPYH_STOPS of them):
** a thread that runs no hook across several stop/restart cycles (inside a
** long primitive, or starved of CPU) charges each run's stretch up to its
** own stop, in order.
**
** A host may also register words of its own (spy_trip_word) that the
** marking side sets with every trap (spyH_raise), so that a check the host
** makes anyway doubles as the poll.
**
** Near (the tick marker's, spy_tick_next): when the host's tick finds
** the deadline only a few checks away, the interpreter thread sets trap to
** SPYH_NEAR itself (spyH_near) and trips its words: every hook then takes
** its slow path and reads the clock (spyH_take_at), and the first one
** after the deadline marks the sample and takes it -- skid-free at the
** hooks' places, without a clock read at every hook in between. A mark
** made meanwhile (trap 1) is never overwritten by near (compare-exchange
** from 0); near is overwritten by a mark, which only makes it due.
**
** Writers: spyH_mark and spyH_stop_remote (marking side / controlling
** thread), spyH_near and spyH_take_at (interpreter thread). Readers:
** spyH_take, spyH_take_at, spyH_marked_upto, spyH_take_stop (interpreter
** thread). Nothing else touches trap, marked_upto or the stop queue.
*/
#ifndef SPY_DUE_H
#define SPY_DUE_H

#include "vm-hooks/clock.h"
#include "vm-hooks/slot.h"

/* ---- the marking side -------------------------------------------------- */

/* Set v's trap, tripping the host's words (spy_trip_word) before and
** after: a host that finds a word tripped while a mark is being made
** (trip_marking) but no trap yet leaves its words tripped, so it takes the
** mark at its first check after the trap is set even if this thread is
** preempted between its stores (under load that can last milliseconds);
** one that restored its words just before the trap was set finds them
** tripped again by the second pass. Sequentially consistent, as the
** host's restore (spy_trip_store) and spy_trip_state. Async-signal-safe
** (atomic operations only). */
static inline void spyH_trip_words(spy_vm *v, unsigned n) {
  for (unsigned i = 0; i < n && i < SPY_TRIP_MAX; i++)
    __atomic_store_n(v->trip_word[i], v->trip_value[i], __ATOMIC_SEQ_CST);
}

static inline void spyH_raise(spy_vm *v) {
  unsigned n = atomic_load_explicit(&v->trip_n, memory_order_acquire);
  if (n) {
    atomic_fetch_add_explicit(&v->trip_marking, 1, memory_order_seq_cst);
    spyH_trip_words(v, n);
  }
  __atomic_store_n(&v->hot.trap_, 1, __ATOMIC_SEQ_CST);
  if (n) {
    spyH_trip_words(v, n);
    atomic_fetch_sub_explicit(&v->trip_marking, 1, memory_order_seq_cst);
  }
}

/* trap's values: 0, 1 (a sample is due) or near (check the clock). */
#define SPYH_NEAR 2

/* A grid point has passed: mark v's sample due as of `now` (ticks). */
static inline void spyH_mark(spy_vm *v, uint64_t now) {
  uint64_t none = 0;
  atomic_compare_exchange_strong_explicit(&v->marked_first, &none, now,
                                          memory_order_relaxed,
                                          memory_order_relaxed);
  atomic_store_explicit(&v->marked_upto, now, memory_order_release);
  spyH_raise(v);
}

/* Whether v still holds an unconsumed mark (marking side: a busy thread is
** marked again at the next grid point). */
static inline int spyH_marked(spy_vm *v) {
  return __atomic_load_n(&v->hot.trap_, __ATOMIC_RELAXED) == 1;
}

/* A stop made by a thread other than v's (one controlling thread at a
** time: the profiler's lock), ending the run (epoch, origin): v charges up
** to `at` at its next slow path, then goes quiet. A single-producer ring:
** the record first, then the write count (release). Full (the thread ran
** no hook across SPYH_STOPS cycles), the stop is dropped: that run's
** stretch goes uncharged, the later runs' are not lost. */
static inline void spyH_stop_remote(spy_vm *v, uint64_t at, uint64_t epoch,
                                    uint64_t origin) {
  uint64_t w = atomic_load_explicit(&v->stopq_w, memory_order_relaxed);
  uint64_t r = atomic_load_explicit(&v->stopq_r, memory_order_acquire);
  if (w - r < SPYH_STOPS) {
    spyH_stop *s = &v->stopq[w % SPYH_STOPS];
    atomic_store_explicit(&s->at, at, memory_order_relaxed);
    atomic_store_explicit(&s->epoch, epoch, memory_order_relaxed);
    atomic_store_explicit(&s->origin, origin, memory_order_relaxed);
    atomic_store_explicit(&v->stopq_w, w + 1, memory_order_release);
  }
  spyH_raise(v);
}

static inline int spyH_active(spy_vm *v) {
  return __atomic_load_n(&v->hot.active_, __ATOMIC_ACQUIRE);
}

/* Turn v's hooks on or off (controlling thread, or v's own when it
** settles). Sequentially consistent: see spyH_go_quiet. */
static inline void spyH_set_active(spy_vm *v, int on) {
  __atomic_store_n(&v->hot.active_, on, __ATOMIC_SEQ_CST);
}

/* ---- the interpreter thread's side ------------------------------------- */

/* Consume a pending mark: 1 if there was one; v->mark_first is when it
** was first made (0: not known -- a mark made between the trap's exchange
** and marked_first's leaves marked_first set, and is found as this one). */
static inline int spyH_take(spy_vm *v) {
  int t = __atomic_exchange_n(&v->hot.trap_, 0, __ATOMIC_ACQUIRE) != 0;
  v->mark_first = atomic_exchange_explicit(&v->marked_first, 0,
                                           memory_order_relaxed);
  return t;
}

/* Near the deadline (interpreter thread, tick marker): make every hook
** check the clock, unless a mark is pending already. */
static inline void spyH_near(spy_vm *v) {
  int zero = 0;
  if (__atomic_compare_exchange_n(&v->hot.trap_, &zero, SPYH_NEAR, 0,
                                  __ATOMIC_SEQ_CST, __ATOMIC_RELAXED))
    spyH_trip_words(v, atomic_load_explicit(&v->trip_n, memory_order_acquire));
}

/* The program's own time is the clock less the time the ticks and near
** checks took (their visits): paid at the hooks just before a deadline,
** it must not make the code around hooks look longer to the samples.
** tick_debt is the visits' time since the last sample (the deadline is
** pushed back by it), tick_spent all of it (the tick's pace is in the
** program's time). A visit counts from its entry (`in`) to now, plus the
** host's own part of a visit (saving its state, the calls: outside what
** the library can time), estimated as the shortest time seen from one
** visit's end to the next one's start -- which has no program code in it
** when the host makes two in a row (a loop's poll and tick); only gaps
** under SPYH_HOST_MAX count, so a host that never makes two in a row gets
** no such part. A visit that took longer than SPYH_VISIT_MAX was
** interrupted: the thread stalled, which wall time charges to the
** program, as the sampler thread's marks would. */
#define SPYH_VISIT_MAX 2000 /* ticks, ~1 us */
#define SPYH_HOST_MAX 100   /* ticks, ~40 ns */
static inline void spyH_debt_add(spy_vm *v, uint64_t in) {
  uint64_t out = spyH_now();
  if (v->tick_out && in > v->tick_out && in - v->tick_out < SPYH_HOST_MAX &&
      (!v->tick_host || in - v->tick_out < v->tick_host))
    v->tick_host = in - v->tick_out;
  uint64_t d = out - in < SPYH_VISIT_MAX ? out - in : SPYH_VISIT_MAX;
  v->tick_debt += d + v->tick_host;
  v->tick_spent += d + v->tick_host;
  v->tick_out = out;
}

/* The inline fast paths' clock limit (hot.until_, <spyon/hooks.h>):
** before it a primitive's begin and end need not look at a spy_tick_next
** deadline (watch in hooks.c: the deadline in the program's time, less the
** reach of the host's countdown, where an end would run the countdown
** out). UINT64_MAX for the other markers (no watch), 0 where the clock is
** not the TSC (the header cannot read it); and hot.tick_until_ the same.
** While hot.fast_ is 0 until_ is 0: the primitives' inline begin and end
** then fail at the test of the clock they make anyway, with no test of
** fast_ of their own (spy_tick's early return, which reads tick_until_,
** holds in every mode). After whatever moves the deadline, the debt, the
** lead or the countdown, or changes hot.fast_; a near state's visits
** come with the trap set, which takes the slow paths anyway. */
static inline void spyH_until(spy_vm *v) {
  uint64_t u = UINT64_MAX;
  if (v->tick_at) {
    uint64_t d = atomic_load_explicit(&v->deadline_pub, memory_order_relaxed) +
                 v->tick_debt;
    uint64_t m = v->tick_lead + ((v->tick_n * v->tick_pace) >> 8);
    u = spyH_clock.use_tsc && d > m ? d - m : 0;
  }
  v->hot.tick_until_ = u;
  v->hot.until_ = v->hot.fast_ ? u : 0;
}

/* Near, at a hook that entered at `now`: has the deadline passed in the
** program's own time? If not, this visit joins the debt. */
static inline int spyH_near_due(spy_vm *v, uint64_t now) {
  if (now - v->tick_debt >=
      atomic_load_explicit(&v->deadline_pub, memory_order_relaxed))
    return 1;
  spyH_debt_add(v, now);
  return 0;
}

/* spyH_take at a hook that entered at `now`: a near state is a mark once
** its deadline has passed (marked as of now), and stays near before. */
static inline int spyH_take_at(spy_vm *v, uint64_t now) {
  if (__atomic_load_n(&v->hot.trap_, __ATOMIC_RELAXED) == SPYH_NEAR &&
      !spyH_near_due(v, now))
    return 0;
  int t = __atomic_exchange_n(&v->hot.trap_, 0, __ATOMIC_ACQUIRE);
  v->mark_first = atomic_exchange_explicit(&v->marked_first, 0,
                                           memory_order_relaxed);
  if (t == SPYH_NEAR) {
    atomic_store_explicit(&v->marked_upto, now, memory_order_release);
    v->mark_first = now;
  }
  return t != 0;
}

/* The latest grid time the marking side has marked (read after a take). */
static inline uint64_t spyH_marked_upto(spy_vm *v) {
  return atomic_load_explicit(&v->marked_upto, memory_order_acquire);
}

/* The oldest pending remote stop, consumed: 1 with its record, or 0. */
static inline int spyH_take_stop(spy_vm *v, uint64_t *at, uint64_t *epoch,
                                 uint64_t *origin) {
  uint64_t r = atomic_load_explicit(&v->stopq_r, memory_order_relaxed);
  if (r == atomic_load_explicit(&v->stopq_w, memory_order_acquire)) return 0;
  spyH_stop *s = &v->stopq[r % SPYH_STOPS];
  *at = atomic_load_explicit(&s->at, memory_order_relaxed);
  *epoch = atomic_load_explicit(&s->epoch, memory_order_relaxed);
  *origin = atomic_load_explicit(&s->origin, memory_order_relaxed);
  atomic_store_explicit(&v->stopq_r, r + 1, memory_order_release);
  return 1;
}

/* After settling a stop: turn quiet unless a run began after the one this
** thread belongs to (`epoch`). Storing 0 and then re-reading the epoch,
** both sequentially consistent, cannot lose a concurrent spy_start: it
** bumps the epoch before it stores active = 1, so either this thread sees
** the new epoch and turns itself back on, or spy_start's store comes after
** ours. Returns 1 if the thread stays active. */
static inline int spyH_go_quiet(spy_vm *v, uint64_t epoch) {
  spyH_set_active(v, 0);
  if (atomic_load_explicit(&v->cfg->epoch, memory_order_seq_cst) != epoch) {
    spyH_set_active(v, 1);
    return 1;
  }
  return 0;
}

#endif
