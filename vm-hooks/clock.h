/*
** vm-hooks/clock.h: the profiler's clock (internal, spyH_).
**
** Ticks are TSC cycles where the CPU has an invariant TSC, else nanoseconds
** of CLOCK_MONOTONIC. Ticks are the unit of every weight and duration the
** hooks record; the conversion to nanoseconds is applied only when a
** profile is read, so refining it never changes a weight. spyH_clock_init
** takes the TSC rate from where the CPU publishes it, or measures it over
** a short spin (SPYH_CLOCK_SPIN_NS); spyH_clock_refine later re-measures
** it over the whole time since then, which makes it as exact as the
** process is old. After init, spyH_now is one rdtsc.
*/
#ifndef SPY_CLOCK_H
#define SPY_CLOCK_H

#include "config.h"

#include <spyon.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <time.h>
#if defined(HAVE_X86INTRIN_H) && (defined(__x86_64__) || defined(__i386__))
#include <x86intrin.h>
#define SPY_HAVE_TSC 1
#endif

/* How long spyH_clock_init measures the TSC rate when nothing publishes it:
** with clock reads ~25 ns apart this bounds the rate's error near 1e-4,
** enough to place the sampling grid; the conversion to nanoseconds is
** refined later (spyH_clock_refine). */
#define SPYH_CLOCK_SPIN_NS 200000u

typedef struct spyH_clock_t {
  int use_tsc;          /* 1: ticks are TSC cycles; 0: nanoseconds */
  const char *source;   /* where the rate came from: "cpuid",
                           "hypervisor", "measured", or "none" (ns) */
  /* The conversion, as the bits of a double each: refined while other
  ** threads convert. */
  atomic_uint_least64_t ns_per_tick_, ticks_per_ns_;
  uint64_t tick0;       /* a calibration point: tick0 <-> mono0_ns */
  uint64_t mono0_ns;
  uint64_t read_cost;   /* ticks between two back-to-back reads (min) */
} spyH_clock_t;

SPY_INTERNAL extern spyH_clock_t spyH_clock;

/* Initialise once (thread-safe, idempotent; at most SPYH_CLOCK_SPIN_NS
** plus ~50 us the first time). force_gettime selects CLOCK_MONOTONIC even
** where a TSC is usable; it only takes effect on the first call. Returns 0
** or SPY_ENOTSUP. */
SPY_INTERNAL int spyH_clock_init(int force_gettime);

/* Re-measure the TSC rate over the time since init, if that measures it
** better than the rate in use (thread-safe; one pair of clock reads). Call
** before converting a profile's ticks to nanoseconds. */
SPY_INTERNAL void spyH_clock_refine(void);

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

static inline double spyH_clock_ld_(atomic_uint_least64_t *a) {
  uint64_t b = atomic_load_explicit(a, memory_order_relaxed);
  double d;
  memcpy(&d, &b, sizeof d);
  return d;
}

static inline double spyH_ns_per_tick(void) {
  return spyH_clock_ld_(&spyH_clock.ns_per_tick_);
}

static inline uint64_t spyH_ticks_to_ns(uint64_t t) {
  return (uint64_t)((double)t * spyH_ns_per_tick() + 0.5);
}

static inline uint64_t spyH_ns_to_ticks(uint64_t ns) {
  return (uint64_t)((double)ns * spyH_clock_ld_(&spyH_clock.ticks_per_ns_) +
                    0.5);
}

/* The CLOCK_MONOTONIC time (ns) of a tick value, for sleeping until it. */
static inline uint64_t spyH_ticks_to_mono(uint64_t t) {
  if (!spyH_clock.use_tsc) return t;
  int64_t d = (int64_t)(t - spyH_clock.tick0);
  return spyH_clock.mono0_ns +
         (uint64_t)(int64_t)((double)d * spyH_ns_per_tick());
}

#endif
