/*
** vm-hooks/clock.c: TSC detection and calibration.
*/
#include "config.h"

#include "vm-hooks/clock.h"

#include <pthread.h>
#include <stdatomic.h>
#ifdef HAVE_CPUID_H
#include <cpuid.h>
#endif

spyH_clock_t spyH_clock = {0, 1.0, 1.0, 0, 0, 0};

static pthread_once_t once = PTHREAD_ONCE_INIT;
static atomic_int forced = -1; /* what the first caller asked for */

/* The TSC is usable only when it is invariant (constant rate in every
** P-/C-state, CPUID 0x80000007 EDX bit 8): otherwise ticks would not be
** time. */
static int tsc_invariant(void) {
#if defined(SPY_HAVE_TSC) && defined(HAVE_CPUID_H)
  unsigned a, b, c, d;
  /* A cast: clang declares __get_cpuid_max as int, gcc as unsigned. */
  if ((unsigned)__get_cpuid_max(0x80000000u, NULL) < 0x80000007u) return 0;
  __cpuid(0x80000007u, a, b, c, d);
  return (d >> 8) & 1;
#else
  return 0;
#endif
}

/* Measure TSC cycles against CLOCK_MONOTONIC over about 20 ms. Each end is
** read as a tight pair (the TSC read between two monotonic reads) so a
** preemption in between cannot skew the ratio much; the best of three short
** tries is kept for each end. */
static void calibrate(void) {
  spyH_clock.use_tsc = 0;
  spyH_clock.ns_per_tick = spyH_clock.ticks_per_ns = 1.0;
  if (atomic_load(&forced) == 1 || !tsc_invariant()) return;
#ifdef SPY_HAVE_TSC
  uint64_t t[2], m[2];
  for (int end = 0; end < 2; end++) {
    uint64_t best = UINT64_MAX;
    for (int i = 0; i < 3; i++) {
      uint64_t m0 = spyH_mono_ns();
      uint64_t tt = __rdtsc();
      uint64_t m1 = spyH_mono_ns();
      if (m1 - m0 < best) {
        best = m1 - m0;
        t[end] = tt;
        m[end] = m0 + (m1 - m0) / 2;
      }
    }
    if (end == 0) {
      struct timespec ts = {0, 20 * 1000 * 1000};
      while (nanosleep(&ts, &ts) != 0) {}
    }
  }
  if (t[1] <= t[0] || m[1] <= m[0]) return;
  spyH_clock.ticks_per_ns = (double)(t[1] - t[0]) / (double)(m[1] - m[0]);
  spyH_clock.ns_per_tick = 1.0 / spyH_clock.ticks_per_ns;
  spyH_clock.tick0 = t[1];
  spyH_clock.mono0_ns = m[1];
  spyH_clock.use_tsc = 1;
#endif
}

/* What one clock read adds to an interval timed with two reads: the
** smallest gap between back-to-back reads. Timing the hooks' own cost
** subtracts it, since it is the measurement's, not the hook's. */
static void measure_read_cost(void) {
  uint64_t best = UINT64_MAX;
  for (int i = 0; i < 1000; i++) {
    uint64_t a = spyH_now(), b = spyH_now();
    if (b - a < best) best = b - a;
  }
  spyH_clock.read_cost = best == UINT64_MAX ? 0 : best;
}

static void init_once(void) {
  calibrate();
  measure_read_cost();
}

/* The clock is calibrated once per process, as the first caller asks.
** A later request for clock_gettime that the TSC already answers cannot
** be met: SPY_ENOTSUP. */
int spyH_clock_init(int force_gettime) {
  int none = -1;
  atomic_compare_exchange_strong(&forced, &none, force_gettime);
  pthread_once(&once, init_once);
  return force_gettime && spyH_clock.use_tsc ? SPY_ENOTSUP : 0;
}
