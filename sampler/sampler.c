/*
** sampler/sampler.c: the sampler thread.
**
** It drains the rings into the aggregate about once a millisecond and, in
** poll mode, runs a watchdog for threads descheduled past a deadline. In
** SPY_MODE_TIMER it also plays MessageTally's timer: at every grid point it
** marks each thread's sample due, and the thread's next poll takes it. It
** never calls into an interpreter and never reads interpreter memory.
*/
#include "config.h"

#include <errno.h>
#include <sys/prctl.h>
#include <time.h>

#include "sampler/profiler.h"
#include "vm-hooks/clock.h"

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

void spyS_drain_all(spy_profiler *p) {
  for (spy_vm *v = p->vms; v; v = v->next) {
    /* Names first, so a sample never precedes the name sent before it. */
    spyS_agg_names(p->agg, spyH_take_names(v));
    drain_ctx d = {p->agg, v->sampler_data};
    spyH_ring_drain(&v->ring, on_record, &d);
    spyH_ring_drain(&v->obs_ring, on_obs, p->agg);
  }
  p->drains++;
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

/* The next wake-up: the next drain or watchdog round, and in timer mode
** the next grid point (the "timer interrupt"). */
static uint64_t next_wake(spy_profiler *p, uint64_t now, uint64_t wake_at) {
  if (p->cfg.mode != SPY_MODE_TIMER) return wake_at;
  uint64_t origin = atomic_load_explicit(&p->cfg.origin, RELAXED);
  uint64_t iv = p->cfg.interval;
  uint64_t next = origin + ((now - origin) / iv + 1) * iv;
  return next < wake_at ? next : wake_at;
}

/* The timer fired: every running thread takes a sample at its next poll. */
static void fire_timer(spy_profiler *p) {
  for (spy_vm *v = p->vms; v; v = v->next) {
    if (!atomic_load_explicit(&v->hot.active, RELAXED)) continue;
    atomic_store_explicit(&v->trap, 1, RELAXED);
    atomic_store_explicit(&v->hot.countdown, 0, RELAXED);
  }
}

/* The watchdog (poll mode). A thread's countdown counts polls, not time: if
** the thread was descheduled past its deadline, the countdown would expire
** late, in whatever code runs by then. The watchdog runs while such a thread
** is off the CPU and zeroes its countdown, so its first poll after resuming
** takes the sample, charged to the code that was really running. */
static void watchdog(spy_profiler *p, uint64_t now) {
  uint64_t late = p->cfg.interval / 2;
  for (spy_vm *v = p->vms; v; v = v->next) {
    if (!atomic_load_explicit(&v->hot.active, RELAXED)) continue;
    uint64_t d = atomic_load_explicit(&v->deadline_pub, RELAXED);
    if (d && d + late < now)
      atomic_store_explicit(&v->hot.countdown, 0, RELAXED);
  }
}

void *spyS_thread_main(void *arg) {
  spy_profiler *p = arg;
  /* Wake-ups as precise as the kernel allows: the default 50 us slack
  ** would cap the rate near 20 kHz. */
  prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
  uint64_t drain_period = spyH_ns_to_ticks(1000000);
  /* Watchdog rounds: once per interval, but between 250 us and 1 ms. */
  uint64_t dog_period = p->cfg.interval;
  if (dog_period < spyH_ns_to_ticks(250000)) dog_period = spyH_ns_to_ticks(250000);
  if (dog_period > drain_period) dog_period = drain_period;
  uint64_t last_drain = 0, last_dog = 0, last_tick = UINT64_MAX;
  pthread_mutex_lock(&p->lock);
  while (!p->quit) {
    if (!atomic_load_explicit(&p->running, RELAXED)) {
      pthread_cond_wait(&p->cond, &p->lock);
      continue;
    }
    uint64_t now = spyH_now();
    uint64_t wake_at = last_drain + drain_period;
    if (p->cfg.mode == SPY_MODE_POLL && last_dog + dog_period < wake_at)
      wake_at = last_dog + dog_period;
    uint64_t wake = next_wake(p, now, wake_at);
    pthread_mutex_unlock(&p->lock);
    sleep_until(wake);
    pthread_mutex_lock(&p->lock);
    if (!atomic_load_explicit(&p->running, RELAXED)) continue;
    now = spyH_now();
    if (p->cfg.mode == SPY_MODE_POLL && now - last_dog >= dog_period) {
      watchdog(p, now);
      last_dog = now;
    }
    if (p->cfg.mode == SPY_MODE_TIMER) {
      /* Once per grid point passed, however late the wake-up. */
      uint64_t origin = atomic_load_explicit(&p->cfg.origin, RELAXED);
      uint64_t tick = (now - origin) / p->cfg.interval;
      if (tick != last_tick && tick > 0) fire_timer(p);
      last_tick = tick;
    }
    if (now - last_drain >= drain_period) {
      spyS_drain_all(p);
      last_drain = now;
    }
  }
  pthread_mutex_unlock(&p->lock);
  return NULL;
}
