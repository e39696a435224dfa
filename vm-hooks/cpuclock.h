/*
** vm-hooks/cpuclock.h: the CPU-time clock's sample weights (internal).
**
** With spy_options.clock = SPY_CLOCK_CPU a sample still falls due on the
** wall-time grid (so samples stay evenly spread over what the thread does),
** but weighs the thread's own CPU time since its previous sample instead of
** the grid time: a thread descheduled for 12 ms charges those 12 ms to
** nothing, where the wall clock charges them to whatever ran when it came
** back. Weights stay in ticks. Reading the thread's CPU clock is a system
** call (~0.3 us here), made once per sample, never per hook.
**
** The thread's CPU time at the run's start is read by spy_start (from the
** controlling thread, through the thread's CPU clock id) or at spy_attach,
** and published in cpu_origin before the epoch that makes the thread
** adopt the run.
*/
#ifndef SPY_CPUCLOCK_H
#define SPY_CPUCLOCK_H

#include <pthread.h>

#include "vm-hooks/clock.h"
#include "vm-hooks/slot.h"

static inline uint64_t spyH_cpu_ticks_of_(clockid_t id) {
  struct timespec ts;
  if (clock_gettime(id, &ts) != 0) return 0;
  uint64_t ns = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
  return spyH_clock.use_tsc ? spyH_ns_to_ticks(ns) : ns;
}

/* The calling thread's CPU time in ticks. */
static inline uint64_t spyH_cpu_ticks(void) {
  return spyH_cpu_ticks_of_(CLOCK_THREAD_CPUTIME_ID);
}

/* Another thread's CPU time in ticks (0 if it cannot be read). */
static inline uint64_t spyH_cpu_ticks_thread(pthread_t t) {
  clockid_t id;
  return pthread_getcpuclockid(t, &id) == 0 ? spyH_cpu_ticks_of_(id) : 0;
}

/* The weight of a sample of grid weight w taken now (interpreter thread). */
static inline uint64_t spyH_cpu_weight(spy_vm *v, uint64_t w) {
  uint64_t now = spyH_cpu_ticks();
  if (v->cpu_epoch != v->epoch) {
    v->cpu_epoch = v->epoch;
    v->cpu_last = atomic_load_explicit(&v->cpu_origin, memory_order_relaxed);
    if (!v->cpu_last || v->cpu_last > now) v->cpu_last = now;
  }
  uint64_t d = now > v->cpu_last ? now - v->cpu_last : 0;
  v->cpu_last = now;
  return d;
}

#endif
