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

/* The weight of a sample taken `lag` ticks after the grid point it stands
** for (interpreter thread): the thread's CPU time from its previous
** sample's grid point to this one's. The CPU clock is read at the take,
** not at the grid point: what the thread ran since that point -- the rest
** of a primitive whose end takes a sample that fell due inside it --
** belongs to the next sample, as the wall clock's grid weights leave it.
** Taken as all of the lag (the thread on the CPU since the grid point),
** within the CPU time there is: a thread that came back from being
** descheduled after the grid point leaves the next sample a little of
** what it ran before, whatever it runs -- where taking the share of the
** time it was on the CPU since its previous sample left a primitive
** whose end took the sample what the thread had run since coming back.
** (Weighed to the take, a primitive of 45 us holding a grid point took
** half its length more than an interval each time: the long primitive of
** mark/cpu_clock_competitor read 39-40 % for a truth of 30.5 % with no
** competitor, 35-40 % beside one.) The weights still add up to the
** thread's CPU time: the last sample of a run (lag 0) takes the rest. */
static inline uint64_t spyH_cpu_weight(spy_vm *v, uint64_t lag) {
  uint64_t now = spyH_cpu_ticks();
  if (v->cpu_epoch != v->epoch) {
    v->cpu_epoch = v->epoch;
    v->cpu_last = atomic_load_explicit(&v->cpu_origin, memory_order_relaxed);
    if (!v->cpu_last || v->cpu_last > now) v->cpu_last = now;
  }
  uint64_t d = now > v->cpu_last ? now - v->cpu_last : 0;
  uint64_t keep = lag < d ? lag : d;
  v->cpu_last = now - keep;
  return d - keep;
}

/* ------------------------------------------------------------------------
** The thread's CPU time over a long step (both halves of a protocol).
**
** Whether a long primitive call or GC pause was spent on the CPU or
** descheduled is measured without reading the thread's CPU clock in the
** hooks: the sampler, at each drain (about every millisecond with the
** thread marker, every 10 ms with the others), notes each thread's CPU
** time beside the wall time in a small history in its slot; when a step
** ends long enough to be among the longest, the thread reads its own CPU
** clock once and compares it with the history's note from just before
** the step began. Single writer (the sampler, under the profiler lock),
** single reader (the thread); the reader checks that the notes it used
** were not overwritten meanwhile.
** --------------------------------------------------------------------- */

/* The history has two levels of SPYH_HIST notes: every note (the last
** 30-60 ms with the thread marker's millisecond drains), and every
** SPYH_HIST_STRIDE-th note (the last second or more), so that a step of
** any length finds a note before it no farther than a quarter of it. */

/* The sampler's half: note that thread v had used `cpu` ticks of CPU at
** wall time `wall`. */
static inline void spyH_cpuhist_note(spy_vm *v, uint64_t wall, uint64_t cpu) {
  uint64_t n = atomic_load_explicit(&v->hist_n, memory_order_relaxed);
  for (int level = 0; level < 2; level++) {
    uint64_t k = level ? n / SPYH_HIST_STRIDE : n;
    if (level && n % SPYH_HIST_STRIDE) break;
    atomic_store_explicit(&v->hist_cpu[level][k % SPYH_HIST], cpu,
                          memory_order_relaxed);
    atomic_store_explicit(&v->hist_wall[level][k % SPYH_HIST], wall,
                          memory_order_relaxed);
  }
  atomic_store_explicit(&v->hist_n, n + 1, memory_order_release);
}

/* The thread's half, one level: the latest note at or before t0 (its wall
** time and CPU), 1 if found and not overwritten while read. */
static inline int spyH_cpuhist_find_(spy_vm *v, int level, uint64_t t0,
                                     uint64_t *wall, uint64_t *cpu) {
  uint64_t stride = level ? SPYH_HIST_STRIDE : 1;
  uint64_t n = atomic_load_explicit(&v->hist_n, memory_order_acquire);
  uint64_t m = (n + stride - 1) / stride; /* notes at this level */
  uint64_t lo = m > SPYH_HIST ? m - SPYH_HIST : 0;
  for (uint64_t k = m; k-- > lo;) {
    /* Acquire loads: the count read after them cannot be read first
    ** (no fence: TSan does not support them). */
    *wall = atomic_load_explicit(&v->hist_wall[level][k % SPYH_HIST],
                                 memory_order_acquire);
    if (*wall <= t0) {
      *cpu = atomic_load_explicit(&v->hist_cpu[level][k % SPYH_HIST],
                                  memory_order_acquire);
      /* Still the note read (not overwritten by a later one)? */
      return atomic_load_explicit(&v->hist_n, memory_order_relaxed) <=
             (k + SPYH_HIST) * stride;
    }
  }
  return 0;
}

/* The thread's half: the percentage of [t0, now] it spent on the CPU,
** 0..100, or SPYH_CPU_UNKNOWN when the history has no note close enough
** before t0 (within a quarter of the step: the time between the note and
** t0 is taken as on the CPU, so the error stays under 25 points). */
static inline unsigned spyH_cpuhist_pct(spy_vm *v, uint64_t t0,
                                        uint64_t now) {
  if (now <= t0) return SPYH_CPU_UNKNOWN;
  uint64_t wall = 0, cpu = 0;
  if (!spyH_cpuhist_find_(v, 0, t0, &wall, &cpu) &&
      !spyH_cpuhist_find_(v, 1, t0, &wall, &cpu))
    return SPYH_CPU_UNKNOWN;
  if (!cpu || (t0 - wall) * 4 > now - t0) return SPYH_CPU_UNKNOWN;
  uint64_t cpu_now = spyH_cpu_ticks(), at_t0 = cpu + (t0 - wall);
  uint64_t on = cpu_now > at_t0 ? cpu_now - at_t0 : 0;
  return on >= now - t0 ? 100 : (unsigned)(on * 100 / (now - t0));
}

#endif
