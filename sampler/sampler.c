/*
** sampler/sampler.c: the sampler thread.
**
** With the thread marker it sleeps until the next thread's deadline, marks
** the samples that are due (each thread's next hook takes its own), and
** drains the rings into the aggregate about once a millisecond. With the
** signal and tick markers (vm-hooks/mark.h) it wakes only to drain, every
** 10 ms. It never calls into an interpreter and never reads interpreter
** memory.
*/
#include "config.h"

#include <errno.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "sampler/profiler.h"
#include "vm-hooks/cpuclock.h"
#include "vm-hooks/clock.h"
#include "vm-hooks/due.h"
#include "vm-hooks/mark.h"

#define RELAXED memory_order_relaxed

typedef struct drain_ctx {
  spyS_agg *agg;
  spyS_cache *cache;
} drain_ctx;

static void on_record(void *ud, const spyH_rec *rec) {
  drain_ctx *d = ud;
  spyS_agg_record(d->agg, d->cache, rec);
}

static void on_obs(void *ud, const spyH_rec *rec) {
  spyS_agg_obs(ud, rec);
}

static void on_native(void *ud, const spyH_rec *rec) {
  spyS_agg_native(ud, rec);
}

void spyS_drain_all(spy_profiler *p) {
  for (spyS_thread *t = p->threads; t; t = t->next) {
    spy_vm *v = t->vm;
    /* Names first, so a sample never precedes the name sent before it. */
    spyS_agg_names(p->agg, spyH_take_names(v));
    drain_ctx d = {p->agg, t->cache};
    spyH_ring_drain(&v->ring, on_record, &d);
    spyH_ring_drain(&v->obs_ring, on_obs, p->agg);
    if (p->cfg.native) spyH_ring_drain(&v->native_ring, on_native, p->agg);
    /* Its CPU time now, for telling its long steps spent descheduled. */
    if (spyH_active(v))
      spyH_cpuhist_note(v, spyH_now(), spyH_cpu_ticks_thread(v->thread));
  }
  p->drains++;
}

/* How often the rings are drained when the sampler does not mark (signal
** and tick markers, and a thread that drains itself): rarely enough that
** its wake-ups cost nothing measurable, every SPYH_DRAIN_NS, or every 1000
** intervals if that is sooner (a signal timer's period is rounded to 1 ns,
** and must not drift a quarter interval between re-alignments), but at
** most every millisecond. A run's first drains come sooner (1, 2, 4 ...
** ms, up to the period): the hooks time a primitive's calls for cost
** observations under the threshold the drains publish, and before the
** first a hot primitive had every call timed for 10 ms, the ring
** overflowing (vm-hooks/obs.h). A few drains more per run. */
uint64_t spyS_drain_period(const spy_options *o) {
  uint64_t ns = SPYH_DRAIN_NS;
  if (o->interval_ns * 1000 < ns) ns = o->interval_ns * 1000;
  if (ns < SPYH_FIRST_DRAIN_NS) ns = SPYH_FIRST_DRAIN_NS;
  return spyH_ns_to_ticks(ns);
}

/* A drain made by the attached thread itself (spy_options.self_drain),
** from its spy_tick_next (vm-hooks/mark.c): what the sampler thread's
** wake-up does with the tick marker, when the lock is free -- the thread
** never waits for it. 1: drained (or nothing to drain, stopped); 0: the
** lock was busy, try again; -1: the sampler thread drains now (a second
** thread attached). */
int spyS_self_drain(spy_vm *v) {
  spy_profiler *p = v->prof;
  if (pthread_mutex_trylock(&p->lock) != 0) return 0;
  int rc = p->have_thread ? -1 : 1;
  if (rc > 0 && atomic_load_explicit(&p->running, RELAXED)) {
    spyS_drain_all(p);
    spyH_clock_refine();
  }
  pthread_mutex_unlock(&p->lock);
  return rc;
}

/* Sleep until the TSC reads `target`. The CLOCK_MONOTONIC deadline is
** computed from a fresh (tick, monotonic) pair each time, so calibration
** error cannot accumulate into drift. */
static void sleep_until(uint64_t target) {
  uint64_t now = spyH_now();
  if (target <= now) return;
  uint64_t mono = spyH_mono_ns() + spyH_ticks_to_ns(target - now);
  struct timespec ts = {(time_t)(mono / 1000000000u),
                        (long)(mono % 1000000000u)};
  while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR) {
  }
}

/* The same for the markers that wake only to drain (every 10 ms): wait
** on the profiler's condition instead, with its lock held, so that
** spy_profiler_free (quit, broadcast) need not wait out the sleep: a
** process would otherwise take up to 10 ms longer to exit. */
static void wait_until(spy_profiler *p, uint64_t target) {
  uint64_t now = spyH_now();
  if (target <= now) return;
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  uint64_t at = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec +
                spyH_ticks_to_ns(target - now);
  ts.tv_sec = (time_t)(at / 1000000000u);
  ts.tv_nsec = (long)(at % 1000000000u);
  pthread_cond_timedwait(&p->cond, &p->lock, &ts);
}

/* The next wake-up: the earliest deadline of a running thread (one that has
** not synchronised publishes 0: due now), and the next drain. A thread still
** marked has not taken its sample yet (busy in a long primitive, or off the
** CPU): mark it again at the next grid point, so that every grid point is
** marked the same wake-up latency after it passes, whether or not the
** thread was busy -- a mark's lag must not depend on what the thread does. */
static uint64_t next_wake(spy_profiler *p, uint64_t now, uint64_t wake_at) {
  uint64_t origin = atomic_load_explicit(&p->cfg.origin, RELAXED);
  uint64_t iv = p->cfg.interval;
  uint64_t grid = origin + ((now - origin) / iv + 1) * iv;
  for (spyS_thread *t = p->threads; t; t = t->next) {
    spy_vm *v = t->vm;
    if (!spyH_active(v)) continue;
    uint64_t d = atomic_load_explicit(&v->deadline_pub, RELAXED);
    if (spyH_marked(v)) d = grid;
    if (d < wake_at) wake_at = d;
  }
  return wake_at;
}

/* Mark the sample of every running thread whose deadline passed at least
** `lag` ago: its next hook takes it. With the thread marker (lag 0) this
** is the timer of both modes; the modes differ in which hooks take a mark
** (vm-hooks/hooks.c). It also catches a thread that was descheduled past
** its deadline: the mark waits for it, and its first poll after resuming
** charges the code that was running. A thread whose mark is still pending
** is marked again: its marked_upto must advance, or the grid points that
** pass while it is inside a long primitive would be charged after it.
** With the other markers this is their backstop, for a thread that no
** tick or signal reached. */
static void mark_due(spy_profiler *p, uint64_t now, uint64_t lag) {
  for (spyS_thread *t = p->threads; t; t = t->next) {
    spy_vm *v = t->vm;
    if (!spyH_active(v)) continue;
    uint64_t d = atomic_load_explicit(&v->deadline_pub, RELAXED);
    if (d <= now && now - d >= lag) spyH_mark(v, now);
  }
}

/* The signal marker's timers run on CLOCK_MONOTONIC at a whole number of
** nanoseconds per interval, the grid on the TSC: re-align them to the grid
** at every wake-up, before they drift by a quarter interval. */
static void realign(spy_profiler *p) {
  uint64_t origin = atomic_load_explicit(&p->cfg.origin, RELAXED);
  for (spyS_thread *t = p->threads; t; t = t->next) {
    spy_vm *v = t->vm;
    if (v->marker && spyH_active(v))
      spyH_marker_arm(v->marker, origin, p->cfg.interval);
  }
}

void *spyS_thread_main(void *arg) {
  spy_profiler *p = arg;
  /* Wake-ups as precise as the kernel allows: the default 50 us slack
  ** would cap the rate near 20 kHz. */
  prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
  /* Marking by thread: drain about once a millisecond, in the wake-ups
  ** that mark. Otherwise wake only to drain and re-align
  ** (spyS_drain_period). The backstop marks a thread overdue by half a
  ** drain period. */
  int by_thread = p->opt.marker == SPY_MARKER_THREAD;
  uint64_t first = spyH_ns_to_ticks(SPYH_FIRST_DRAIN_NS);
  uint64_t drain_period = by_thread ? first : spyS_drain_period(&p->opt);
  uint64_t lag = by_thread ? 0 : drain_period / 2;
  uint64_t period = by_thread ? drain_period : first;
  uint64_t last_drain = 0;
  pthread_mutex_lock(&p->lock);
  while (!p->quit) {
    if (!atomic_load_explicit(&p->running, RELAXED)) {
      pthread_cond_wait(&p->cond, &p->lock);
      period = by_thread ? drain_period : first; /* a new run */
      continue;
    }
    uint64_t wake_at = last_drain + period;
    if (by_thread) {
      uint64_t wake = next_wake(p, spyH_now(), wake_at);
      pthread_mutex_unlock(&p->lock);
      sleep_until(wake);
      pthread_mutex_lock(&p->lock);
    } else {
      wait_until(p, wake_at);
    }
    if (p->quit || !atomic_load_explicit(&p->running, RELAXED)) continue;
    uint64_t now = spyH_now();
    mark_due(p, now, lag);
    if (now - last_drain >= period) {
      spyS_drain_all(p);
      period = period * 2 < drain_period ? period * 2 : drain_period;
      if (!by_thread) {
        spyH_clock_refine();
        realign(p);
      }
      last_drain = now;
    }
  }
  pthread_mutex_unlock(&p->lock);
  return NULL;
}
