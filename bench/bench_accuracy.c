/*
** bench/bench_accuracy.c: how far each mode's leaves are from the truth.
**
** The ground-truth host (tests/gt/gthost.h) runs its standard program with
** long primitives (one LargeInt>>mul in ten takes ~1 ms) for 2 s at 10 kHz,
** once in SPY_MODE_POLL and once in SPY_MODE_TIMER (MessageTally style),
** and the host's own measurements give the true self time of every leaf.
** Each run is compared with its own truth. The table shows the first
** round; the summary gives the median over rounds of the max and mean
** absolute error in percentage points (pp). Target: poll max <= 0.5 pp.
**
**   bench/bench_accuracy [-r ROUNDS] [-s SECONDS]
*/
#include "config.h"

#include "bench/bench.h"
#include "tests/gt/gthost.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NLEAF 16

typedef struct leaves {
  char name[NLEAF][48];
  double truth[NLEAF], prof[NLEAF];
  int n;
  double max_err, mean_err;
  uint64_t tallies, dropped;
  double stall; /* fraction of the run the thread was not on a CPU */
} leaves;

/* Self time of all frames of kind (and key, except for GC). */
static uint64_t self_of(const spy_profile *pr, spy_frame_kind kind,
                        uint64_t key) {
  if (kind != SPY_FRAME_GC)
    return gt_frame_self(pr, gt_find_frame(pr, kind, key), -1);
  uint64_t ns = 0;
  for (size_t i = 0; i < pr->nframes; i++)
    if (pr->frames[i].kind == SPY_FRAME_GC)
      ns += gt_frame_self(pr, (uint32_t)i, -1);
  return ns;
}

static void add(leaves *l, const char *name, double truth, double prof) {
  if (l->n >= NLEAF) return;
  snprintf(l->name[l->n], sizeof l->name[0], "%s", name);
  l->truth[l->n] = truth;
  l->prof[l->n] = prof;
  l->n++;
}

/* One profiled run of the standard program in mode m. */
static int run(spy_mode m, double seconds, uint64_t seed, leaves *out) {
  spy_options o;
  spy_options_init(&o);
  o.mode = m;
  spy_profiler *p;
  int rc = spy_profiler_new(&p, &o);
  if (rc) return rc;
  gt_std s;
  if ((rc = gt_std_register(p, &s)) < 0) return rc;
  s.long_prims = 1;
  gt_host *h = gt_new(p);
  if (!h) return SPY_ENOMEM;
  gt_std_define(h, &s);
  if ((rc = gt_attach(h)) < 0) return rc;
  if ((rc = spy_start(p)) < 0) return rc;
  gt_truth_begin(h);
  gt_std_run(h, &s, (uint64_t)(seconds * 1e9), seed);
  gt_truth_end(h);
  spy_stop(p);
  spy_profile *pr;
  if ((rc = spy_profile_take(p, &pr)) < 0) return rc;
  double den = (double)gt_process_totals(pr);
  double tden = (double)h->t_total;
  memset(out, 0, sizeof *out);
  for (int k = 1; k < GT_K_NSTD; k++)
    add(out, h->names[k], 100.0 * (double)h->t_method[k] / tden,
        100.0 * (double)self_of(pr, SPY_FRAME_METHOD, (uint64_t)k) / den);
  add(out, "LargeInt>>mul (prim)", 100.0 * (double)h->t_prim[s.mul] / tden,
      100.0 * (double)self_of(pr, SPY_FRAME_PRIM, (uint64_t)s.mul) / den);
  add(out, "String>>copy (prim)", 100.0 * (double)h->t_prim[s.copy] / tden,
      100.0 * (double)self_of(pr, SPY_FRAME_PRIM, (uint64_t)s.copy) / den);
  add(out, "GC", 100.0 * (double)h->t_gc / tden,
      100.0 * (double)self_of(pr, SPY_FRAME_GC, 0) / den);
  for (int i = 0; i < out->n; i++) {
    double e = fabs(out->truth[i] - out->prof[i]);
    if (e > out->max_err) out->max_err = e;
    out->mean_err += e / out->n;
  }
  out->tallies = pr->tallies;
  out->dropped = pr->dropped;
  out->stall = gt_stall(h);
  spy_profile_free(pr);
  gt_free(h);
  spy_profiler_free(p);
  return 0;
}

/* The median of v[0..n) (n <= 100), leaving v as it was. */
static double median(const double *v, int n) {
  double w[100];
  memcpy(w, v, (size_t)n * sizeof *w);
  return bench_median(w, n);
}

int main(int argc, char **argv) {
  int rounds = 3;
  double seconds = 2.0;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (strcmp(argv[i], "-r") == 0) rounds = atoi(argv[i + 1]);
    else if (strcmp(argv[i], "-s") == 0) seconds = atof(argv[i + 1]);
  }
  if (rounds < 1 || rounds > 100) rounds = 3;
  double pmax[100], pmean[100], tmax[100], tmean[100], pst[100];
  leaves first_p, first_t, lp, lt;
  memset(&first_p, 0, sizeof first_p);
  memset(&first_t, 0, sizeof first_t);
  for (int r = 0; r < rounds; r++) {
    /* Alternate which mode runs first. */
    int rc;
    if (r % 2 == 0) {
      rc = run(SPY_MODE_POLL, seconds, 100 + (uint64_t)r, &lp);
      if (!rc) rc = run(SPY_MODE_TIMER, seconds, 100 + (uint64_t)r, &lt);
    } else {
      rc = run(SPY_MODE_TIMER, seconds, 100 + (uint64_t)r, &lt);
      if (!rc) rc = run(SPY_MODE_POLL, seconds, 100 + (uint64_t)r, &lp);
    }
    if (rc) {
      fprintf(stderr, "bench_accuracy: %s\n", spy_strerror(rc));
      return 1;
    }
    if (r == 0) {
      first_p = lp;
      first_t = lt;
    }
    pst[r] = lp.stall * 100;
    pmax[r] = lp.max_err;
    pmean[r] = lp.mean_err;
    tmax[r] = lt.max_err;
    tmean[r] = lt.mean_err;
  }
  printf("bench_accuracy: standard program with long primitives, 10 kHz, "
         "%.1f s per run, %d round(s)\n\n", seconds, rounds);
  printf("%-22s %8s %8s %8s   (round 1; poll and timer runs each "
         "against their own truth)\n", "leaf", "truth %", "poll %",
         "timer %");
  for (int i = 0; i < first_p.n; i++)
    printf("%-22s %8.2f %8.2f %8.2f   (timer-run truth %.2f)\n",
           first_p.name[i], first_p.truth[i], first_p.prof[i],
           first_t.prof[i], first_t.truth[i]);
  printf("\ntallies: poll %llu, timer %llu; dropped: poll %llu, timer %llu; "
         "thread stalled: poll %.0f%%, timer %.0f%%\n",
         (unsigned long long)first_p.tallies,
         (unsigned long long)first_t.tallies,
         (unsigned long long)first_p.dropped,
         (unsigned long long)first_t.dropped, first_p.stall * 100,
         first_t.stall * 100);
  printf("\n%-10s %16s %16s  %s\n", "mode", "max |err| pp", "mean |err| pp",
         "(median over rounds)");
  printf("%-10s %16.3f %16.3f  target max <= 0.5 pp\n", "poll",
         median(pmax, rounds), median(pmean, rounds));
  printf("(poll runs: max |err| per round");
  for (int r = 0; r < rounds; r++) printf(" %.2f", pmax[r]);
  printf("; thread stalled");
  for (int r = 0; r < rounds; r++) printf(" %.0f%%", pst[r]);
  printf(")\n");
  printf("%-10s %16.3f %16.3f\n", "timer", median(tmax, rounds),
         median(tmean, rounds));
  return 0;
}
