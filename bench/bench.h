/*
** bench/bench.h: what the benchmark programs share: a clock read in
** seconds and the median of a few rounds.
*/
#ifndef SPY_BENCH_H
#define SPY_BENCH_H

#include <stdlib.h>
#include <time.h>

/* Clock C (CLOCK_MONOTONIC, CLOCK_THREAD_CPUTIME_ID, ...) in seconds. */
static inline double bench_clock_s(clockid_t c) {
  struct timespec ts;
  clock_gettime(c, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static inline int bench_cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

/* The median of V[0..N) (N >= 1), sorting V. */
static inline double bench_median(double *v, int n) {
  qsort(v, (size_t)n, sizeof *v, bench_cmp_double);
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

#endif
