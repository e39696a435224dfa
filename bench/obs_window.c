/*
** bench/obs_window.c: what a timed call's observation holds besides the
** primitive -- the part of the hooks inside the window between the two
** clock reads, a bias of every cost observation. Times a primitive that
** does nothing, 2 M calls, with cheap accounting (the default: about one
** call in a hundred timed, so the timed calls' slow paths run cold) and
** with exact accounting (every call timed), and prints the kept
** observations' minimum, median and 90th percentile. Then what an
** untimed bracket costs: the same primitive's calls in a tight loop, with
** and without spy_prim_begin1 / spy_prim_end around them, by the least
** time of 20 chunks of 1 M calls (a begin's stores still pending at its
** end: what spy_bracket_head_ in <spyon/hooks.h> is for). ROUNDS
** processes' worth in one (default 5), the medians of each column.
**   bench/obs_window [ROUNDS]
*/
#include "config.h"

#include <spyon.h>
#include <spyon/hooks.h>
#include <spyon/profile.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static void walk(void *ud, spy_stack *st) {
  (void)ud;
  spy_stack_push(st, 1);
}

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* A profiler started with the empty primitive registered and this
** thread attached (host *h), with exact or cheap accounting and no sample
** in the way; the primitive's id, or -1. */
static int start_empty(int exact, spy_host *h, spy_profiler **p,
                       spy_vm **v) {
  spy_options o;
  spy_options_init(&o);
  o.exact_prims = exact;
  o.interval_ns = 1000000000;
  memset(h, 0, sizeof *h);
  h->walk = walk;
  if (spy_profiler_new(p, &o) < 0) return -1;
  int prim = spy_prim_register(*p, "Empty", "n", SPY_PRIM_COST);
  if (prim < 0 || spy_attach(*p, h, v) < 0 || spy_start(*p) < 0) return -1;
  return prim;
}

/* One run: the empty primitive's observations' quantiles q[0..2]. */
static int run(int exact, double q[3]) {
  spy_profiler *p;
  spy_vm *v;
  spy_host h;
  int prim = start_empty(exact, &h, &p, &v);
  if (prim < 0) return -1;
  volatile int sink = 0;
  for (int i = 0; i < 2000000; i++) {
    spy_prim_begin1(v, prim, 1);
    sink = sink + 1;
    spy_prim_end(v);
  }
  spy_stop(p);
  spy_profile *pr;
  if (spy_profile_take(p, &pr) < 0) return -1;
  const spy_profile_prim *pp = &pr->prims[prim];
  double *ns = malloc((pp->nobs + 1) * sizeof *ns);
  if (!ns || pp->nobs == 0) return -1;
  for (size_t i = 0; i < pp->nobs; i++) ns[i] = (double)pp->obs[i].ns;
  qsort(ns, pp->nobs, sizeof *ns, cmp);
  q[0] = ns[0], q[1] = ns[pp->nobs / 2], q[2] = ns[pp->nobs * 9 / 10];
  free(ns);
  spy_profile_free(pr);
  spy_detach(v);
  spy_profiler_free(p);
  return 0;
}

static double thread_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* The empty primitive (not inlined: a call, as a VM makes one). */
__attribute__((noinline)) static void empty(volatile int *sink) {
  *sink = *sink + 1;
}

/* One run: ns a call of the empty primitive, ns[0] bare and ns[1]
** bracketed (cheap accounting, no sample in the way). */
static int run_bracket(double ns[2]) {
  enum { CHUNK = 1000000, CHUNKS = 20 };
  spy_profiler *p;
  spy_vm *v;
  spy_host h;
  int prim = start_empty(0, &h, &p, &v);
  if (prim < 0) return -1;
  volatile int sink = 0;
  ns[0] = ns[1] = 1e300;
  for (int k = 0; k < CHUNKS; k++) {
    double t0 = thread_s();
    for (int i = 0; i < CHUNK; i++) empty(&sink);
    double t1 = thread_s();
    for (int i = 0; i < CHUNK; i++) {
      spy_prim_begin1(v, prim, (uint64_t)i);
      empty(&sink);
      spy_prim_end(v);
    }
    double t2 = thread_s();
    if ((t1 - t0) * 1e9 / CHUNK < ns[0]) ns[0] = (t1 - t0) * 1e9 / CHUNK;
    if ((t2 - t1) * 1e9 / CHUNK < ns[1]) ns[1] = (t2 - t1) * 1e9 / CHUNK;
  }
  spy_stop(p);
  spy_detach(v);
  spy_profiler_free(p);
  return 0;
}

int main(int argc, char **argv) {
  int rounds = argc > 1 ? atoi(argv[1]) : 5;
  if (rounds < 1 || rounds > 1000) {
    fprintf(stderr, "usage: bench/obs_window [ROUNDS]\n");
    return 2;
  }
  printf("an empty primitive's cost observations, ns (median of %d runs)\n",
         rounds);
  printf("%-22s %8s %8s %8s\n", "accounting", "min", "median", "p90");
  for (int exact = 0; exact < 2; exact++) {
    double *c = malloc(3 * (size_t)rounds * sizeof *c);
    if (!c) return 1;
    for (int r = 0; r < rounds; r++) {
      double q[3];
      if (run(exact, q) < 0) {
        fprintf(stderr, "obs_window: the run failed\n");
        return 1;
      }
      for (int k = 0; k < 3; k++) c[k * rounds + r] = q[k];
    }
    for (int k = 0; k < 3; k++)
      qsort(c + k * rounds, (size_t)rounds, sizeof *c, cmp);
    printf("%-22s %8.0f %8.0f %8.0f\n", exact ? "exact (every call)" :
           "cheap (a few timed)", c[rounds / 2], c[rounds + rounds / 2],
           c[2 * rounds + rounds / 2]);
    free(c);
  }
  double *b = malloc(2 * (size_t)rounds * sizeof *b);
  if (!b) return 1;
  for (int r = 0; r < rounds; r++) {
    double ns[2];
    if (run_bracket(ns) < 0) {
      fprintf(stderr, "obs_window: the run failed\n");
      return 1;
    }
    b[r] = ns[0], b[rounds + r] = ns[1] - ns[0];
  }
  qsort(b, (size_t)rounds, sizeof *b, cmp);
  qsort(b + rounds, (size_t)rounds, sizeof *b, cmp);
  printf("\nan empty primitive in a tight loop, ns a call (least of 20 chunks "
         "of 1 M;\nmedian of %d runs)\n", rounds);
  printf("%-22s %8.2f\n%-22s %8.2f\n", "the call alone", b[rounds / 2],
         "its bracket, cheap", b[rounds + rounds / 2]);
  free(b);
  return 0;
}
