/*
** vm-hooks/clock.c: TSC detection, its rate, and the rate's refinement.
**
** The rate is needed at once only to place the sampling grid (an interval
** in ticks); every weight and duration stays in ticks until a profile is
** read. So start-up takes the rate from where the CPU publishes it (CPUID
** leaf 0x15 with its crystal, or 0x16's base frequency; a hypervisor's
** leaf 0x40000010), else measures it over a short spin, and never sleeps.
** spyH_clock_refine then measures it against CLOCK_MONOTONIC over the
** whole life of the clock, which beats any published figure within a
** second and makes the nanoseconds of a long profile exact.
*/
#include "config.h"

#include "vm-hooks/clock.h"

#include <pthread.h>
#ifdef HAVE_CPUID_H
#include <cpuid.h>
#endif

spyH_clock_t spyH_clock = {0, "none", 0, 0, 0, 0, 0};

static pthread_once_t once = PTHREAD_ONCE_INIT;
static atomic_int forced = -1; /* what the first caller asked for */

/* The refinement's state, under refine_lock: the relative error bound of
** the rate in use, and the start point the measurement runs from (m0
** read as a tight pair: tick0 between two monotonic reads `w0` ns
** apart). */
static pthread_mutex_t refine_lock = PTHREAD_MUTEX_INITIALIZER;
static double rate_err = 1.0;
static uint64_t pair_w0;

/* Published rates are nominal: trust them to this relative error (a
** crystal's tolerance, a hypervisor's kHz), so that a measurement over a
** few seconds replaces them. */
#define PUBLISHED_ERR 1e-5

static void set_rate(double ticks_per_ns) {
  double npt = 1.0 / ticks_per_ns;
  uint64_t a, b;
  memcpy(&a, &npt, sizeof a);
  memcpy(&b, &ticks_per_ns, sizeof b);
  atomic_store_explicit(&spyH_clock.ns_per_tick_, a, memory_order_relaxed);
  atomic_store_explicit(&spyH_clock.ticks_per_ns_, b, memory_order_relaxed);
}

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

/* The TSC rate in Hz where the CPU or the hypervisor publishes it, or 0.
** Leaf 0x15 gives TSC = crystal * b / a; where the crystal is left 0,
** Intel documents the crystal as 0x16's base MHz * a / b, which makes the
** TSC the base frequency. A hypervisor (VMware, some KVM set-ups) may
** publish the guest's TSC kHz in leaf 0x40000010. */
static uint64_t published_hz(const char **src) {
#if defined(SPY_HAVE_TSC) && defined(HAVE_CPUID_H)
  unsigned a, b, c, d, max = __get_cpuid_max(0, NULL);
  if (max >= 0x15) {
    __cpuid_count(0x15, 0, a, b, c, d);
    if (a && b && c) {
      *src = "cpuid";
      return (uint64_t)c * b / a;
    }
    if (a && b && max >= 0x16) {
      __cpuid_count(0x16, 0, a, b, c, d);
      if (a & 0xffff) {
        *src = "cpuid";
        return (uint64_t)(a & 0xffff) * 1000000u;
      }
    }
  }
  __cpuid(1, a, b, c, d);
  if ((c >> 31) & 1) { /* running under a hypervisor */
    __cpuid(0x40000000u, a, b, c, d);
    if (a >= 0x40000010u && a < 0x40010000u) {
      __cpuid(0x40000010u, a, b, c, d);
      if (a) {
        *src = "hypervisor";
        return (uint64_t)a * 1000u;
      }
    }
  }
#endif
  (void)src;
  return 0;
}

/* Read a (ticks, monotonic ns) pair as tightly as possible: the TSC read
** between two monotonic reads, the narrowest of `tries`. Returns the
** width (ns) of the kept pair; *m is its midpoint. */
static uint64_t read_pair(uint64_t *t, uint64_t *m, int tries) {
  uint64_t best = UINT64_MAX;
#ifdef SPY_HAVE_TSC
  for (int i = 0; i < tries; i++) {
    uint64_t m0 = spyH_mono_ns();
    uint64_t tt = __rdtsc();
    uint64_t m1 = spyH_mono_ns();
    if (m1 - m0 < best) {
      best = m1 - m0;
      *t = tt;
      *m = m0 + (m1 - m0) / 2;
    }
  }
#else
  (void)t, (void)m, (void)tries;
#endif
  return best;
}

/* Choose the clock and a first rate, without sleeping. */
static void calibrate(void) {
  spyH_clock.use_tsc = 0;
  spyH_clock.source = "none";
  set_rate(1.0);
  if (atomic_load(&forced) == 1 || !tsc_invariant()) return;
  uint64_t t0 = 0, m0 = 0;
  pair_w0 = read_pair(&t0, &m0, 5);
  spyH_clock.tick0 = t0;
  spyH_clock.mono0_ns = m0;
  const char *src = "measured";
  uint64_t hz = published_hz(&src);
  if (hz) {
    set_rate((double)hz / 1e9);
    rate_err = PUBLISHED_ERR;
  } else {
    uint64_t t1 = t0, m1 = m0, w1 = 0;
    while (spyH_mono_ns() - m0 < SPYH_CLOCK_SPIN_NS) {}
    w1 = read_pair(&t1, &m1, 5);
    if (t1 <= t0 || m1 <= m0) return;
    set_rate((double)(t1 - t0) / (double)(m1 - m0));
    rate_err = (double)(pair_w0 + w1) / 2.0 / (double)(m1 - m0);
  }
  spyH_clock.source = src;
  spyH_clock.use_tsc = 1;
}

void spyH_clock_refine(void) {
  if (!spyH_clock.use_tsc) return;
  pthread_mutex_lock(&refine_lock);
  uint64_t t1 = 0, m1 = 0;
  uint64_t w1 = read_pair(&t1, &m1, 3);
  uint64_t t0 = spyH_clock.tick0, m0 = spyH_clock.mono0_ns;
  if (t1 > t0 && m1 > m0) {
    double err = (double)(pair_w0 + w1) / 2.0 / (double)(m1 - m0);
    if (err < rate_err) {
      set_rate((double)(t1 - t0) / (double)(m1 - m0));
      rate_err = err;
    }
  }
  pthread_mutex_unlock(&refine_lock);
}

/* What one clock read adds to an interval timed with two reads: the
** smallest gap between back-to-back reads. Timing the hooks' own cost
** subtracts it, since it is the measurement's, not the hook's. */
static void measure_read_cost(void) {
  uint64_t best = UINT64_MAX;
  for (int i = 0; i < 200; i++) {
    uint64_t a = spyH_now(), b = spyH_now();
    if (b - a < best) best = b - a;
  }
  spyH_clock.read_cost = best == UINT64_MAX ? 0 : best;
}

static void init_once(void) {
  calibrate();
  measure_read_cost();
}

/* The clock is chosen once per process, as the first caller asks.
** A later request for clock_gettime that the TSC already answers cannot
** be met: SPY_ENOTSUP. */
int spyH_clock_init(int force_gettime) {
  int none = -1;
  atomic_compare_exchange_strong(&forced, &none, force_gettime);
  pthread_once(&once, init_once);
  return force_gettime && spyH_clock.use_tsc ? SPY_ENOTSUP : 0;
}
