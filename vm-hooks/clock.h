/*
** vm-hooks/clock.h: the profiler's clock (internal, spyH_).
**
** Ticks are TSC cycles where the CPU has an invariant TSC, else nanoseconds
** of CLOCK_MONOTONIC. spyH_clock_init calibrates the TSC against
** CLOCK_MONOTONIC once per process; after that spyH_now is one rdtsc.
*/
#ifndef SPY_CLOCK_H
#define SPY_CLOCK_H

#include "config.h"

#include <spyon.h>
#include <stdint.h>
#include <time.h>
#if defined(HAVE_X86INTRIN_H) && (defined(__x86_64__) || defined(__i386__))
#include <x86intrin.h>
#define SPY_HAVE_TSC 1
#endif

typedef struct spyH_clock_t {
  int use_tsc;          /* 1: ticks are TSC cycles; 0: nanoseconds */
  double ns_per_tick;   /* conversion to nanoseconds */
  double ticks_per_ns;
  uint64_t tick0;       /* a calibration point: tick0 <-> mono0_ns */
  uint64_t mono0_ns;
  uint64_t read_cost;   /* ticks between two back-to-back reads (min) */
} spyH_clock_t;

SPY_INTERNAL extern spyH_clock_t spyH_clock;

/* Calibrate once (thread-safe, idempotent; about 20 ms the first time).
** force_gettime selects CLOCK_MONOTONIC even where a TSC is usable; it only
** takes effect on the first call. Returns 0 or SPY_ENOTSUP. */
SPY_INTERNAL int spyH_clock_init(int force_gettime);

static inline uint64_t spyH_mono_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The current time in ticks. */
static inline uint64_t spyH_now(void) {
#ifdef SPY_HAVE_TSC
  if (spyH_clock.use_tsc) return __rdtsc();
#endif
  return spyH_mono_ns();
}

static inline uint64_t spyH_ticks_to_ns(uint64_t t) {
  return (uint64_t)((double)t * spyH_clock.ns_per_tick + 0.5);
}

static inline uint64_t spyH_ns_to_ticks(uint64_t ns) {
  return (uint64_t)((double)ns * spyH_clock.ticks_per_ns + 0.5);
}

/* The CLOCK_MONOTONIC time (ns) of a tick value, for sleeping until it. */
static inline uint64_t spyH_ticks_to_mono(uint64_t t) {
  if (!spyH_clock.use_tsc) return t;
  int64_t d = (int64_t)(t - spyH_clock.tick0);
  return spyH_clock.mono0_ns + (uint64_t)((double)d * spyH_clock.ns_per_tick);
}

#endif
