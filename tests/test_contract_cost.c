/*
** tests/test_contract_cost.c: the "contract" suite's cost tests: cost
** reservoirs fed by several threads, and cheap primitive accounting (the
** default: a call reads no clock unless a sample falls in it or it is
** drawn for a cost observation) against every call's own time, for the
** cost models and the longest steps. Helpers and tolerances:
** tests/test_contract.h.
*/
#include "config.h"

#include "tests/test_contract.h"

#include "sampler/agg.h"
#include "sampler/profiler.h"
#include "vm-hooks/obs.h"

#include <math.h>
#include <pthread.h>
#include <stdatomic.h>

/* ------------------------------------------------------------------------
** Cost reservoirs across threads
** --------------------------------------------------------------------- */

static void noop_walk(void *ud, spy_stack *st) {
  (void)ud;
  spy_stack_push(st, 1);
}

typedef struct caller {
  spy_profiler *p;
  int prim;
  uint64_t size;
  int n;
} caller;

static void *call_many(void *arg) {
  caller *c = arg;
  spy_host hs = {NULL, noop_walk, NULL, NULL};
  spy_vm *v;
  T_EQ_INT(spy_attach(c->p, &hs, &v), 0);
  for (int i = 0; i < c->n; i++) {
    spy_prim_begin1(v, c->prim, c->size);
    gt_burn_units(4);
    spy_prim_end(v);
  }
  T_EQ_INT(spy_detach(v), 0);
  return NULL;
}

/* Two threads call one primitive, one after the other, 20 000 times each
** with operand sizes 1 and 2. The observations must be a uniform sample
** of all 40 000 calls: half of each size within 4 binomial sigmas. With no
** budget the reservoir (4 096) fills (3.1 pp); with a budget (5 % of the
** primitive's time, its calls ~0.1 us) only about one call in 80 may be
** timed, the threshold falls while the first thread calls, and what is
** kept must still be uniform. (Per-thread Algorithm R counted
** each thread's calls apart and kept ~20 % of the first thread's.) */
static void reservoir_threads_with(double budget) {
  spy_options o;
  spy_options_init(&o);
  o.obs_budget = budget;
  spy_profiler *p = new_prof(0, SPY_MODE_POLL, &o);
  int prim = spy_prim_register(p, "Prim>>shared", "n", SPY_PRIM_COST);
  T_ASSERT(prim >= 0);
  T_EQ_INT(spy_start(p), 0);
  caller c1 = {p, prim, 1, 20000}, c2 = {p, prim, 2, 20000};
  pthread_t t;
  T_EQ_INT(pthread_create(&t, NULL, call_many, &c1), 0);
  pthread_join(t, NULL);
  T_EQ_INT(pthread_create(&t, NULL, call_many, &c2), 0);
  pthread_join(t, NULL);
  T_EQ_INT(spy_stop(p), 0);
  spy_profile *pr = NULL;
  T_EQ_INT(spy_profile_take(p, &pr), 0);
  const spy_profile_prim *pp = &pr->prims[prim];
  T_EQ_INT(pp->calls, 40000);
  if (budget == 0) T_EQ_INT(pp->nobs, 4096);
  else T_ASSERT(pp->nobs >= 40); /* full under TSan: its calls are slow */
  size_t ones = 0;
  for (size_t i = 0; i < pp->nobs; i++) ones += pp->obs[i].size[0] == 1;
  double f = (double)ones / (double)pp->nobs;
  fprintf(stderr, "budget %g: %zu kept, size-1 share %.3f, %llu offered, "
          "%llu dropped\n", budget, pp->nobs, f,
          (unsigned long long)pp->obs_offered,
          (unsigned long long)pr->obs_dropped);
  T_ASSERT(pp->obs_offered + pr->obs_dropped <= 40000);
  T_ASSERT(pp->obs_offered >= pp->nobs);
  /* A sampler starved of CPU (a loaded machine, sanitizers) lets the
  ** observation ring overflow while the first thread offers every call:
  ** the calls dropped then are that thread's, and the sample is no longer
  ** uniform (the report counts them). Nothing to judge then. */
  unsigned long long dropped = (unsigned long long)pr->obs_dropped;
  if (dropped) {
    spy_profile_free(pr);
    T_EQ_INT(spy_profiler_free(p), 0);
    T_SKIP("%llu observations dropped: the sampler was starved", dropped);
  }
  T_NEAR(f, 0.5, 4 * sqrt(0.25 / (double)pp->nobs));
  spy_profile_free(pr);
  T_EQ_INT(spy_profiler_free(p), 0);
}

/* The sampler's reservoir alone (vm-hooks/obs.c), against a brute force:
** records with random priorities, offered as the threads would send them
** (each under the threshold last published, a few from before it), with
** budget caps that fall now and then. What it keeps must be exactly the k
** smallest priorities of all records offered, less those at or above the
** lowest cap -- for k from 1 to 300, before the buffer ever filled, just
** when it did and many times over, and with records whose priorities tie.
** Every kept observation is its record's (the size names it). */
static int cmp_u64(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

static void reservoir_select_exact(void) {
  static const uint32_t ks[] = {1, 2, 3, 7, 64, 300};
  static const uint32_t counts[] = {1, 2, 5, 100, 449, 450, 451, 5000};
  uint64_t rng = 99;
  for (size_t ki = 0; ki < sizeof ks / sizeof *ks; ki++) {
    for (size_t ci = 0; ci < sizeof counts / sizeof *counts; ci++) {
      for (int caps = 0; caps < 2; caps++) {
        for (int ties = 0; ties < 2; ties++) {
          uint32_t k = ks[ki], n = counts[ci];
          spyH_res r;
          memset(&r, 0, sizeof r);
          uint64_t *prio = calloc(n, sizeof *prio), pub = UINT64_MAX;
          uint64_t cap = 0;
          T_ASSERT(prio != NULL);
          uint32_t sent = 0;
          for (uint32_t i = 0; i < n; i++) {
            spyH_obs_rec o;
            memset(&o, 0, sizeof o);
            uint64_t x = gt_rand_range(&rng, 0, UINT64_MAX - 1);
            if (ties) x = gt_rand_range(&rng, 0, 40) << 58;
            /* the thread sends only what is under the last threshold,
            ** except for one record in eight sent under an older one */
            if (x >= pub && gt_rand_range(&rng, 0, 7) != 0) continue;
            o.prio = x;
            o.cap = UINT64_MAX;
            if (caps && gt_rand_range(&rng, 0, 99) == 0) {
              uint64_t c = gt_rand_range(&rng, 0, UINT64_MAX / 2);
              if (!cap || c < cap) cap = c;
              o.cap = c;
            }
            o.size[0] = sent;
            o.ticks = 3 * (uint64_t)sent;
            prio[sent++] = x;
            T_EQ_INT(spyH_res_offer(&r, k, &o, &pub), 0);
            T_ASSERT(pub == UINT64_MAX || !cap || pub <= cap);
          }
          T_EQ_INT(r.offered, sent);
          /* the truth: the k smallest sent, under the lowest cap */
          uint64_t *sorted = malloc((sent + 1) * sizeof *sorted);
          T_ASSERT(sorted != NULL);
          memcpy(sorted, prio, sent * sizeof *prio);
          qsort(sorted, sent, sizeof *sorted, cmp_u64);
          uint32_t want = 0;
          while (want < sent && want < k &&
                 (!cap || sorted[want] < cap))
            want++;
          spy_obs *out = calloc(r.n + 1, sizeof *out);
          T_ASSERT(out != NULL);
          uint32_t got = 0;
          T_EQ_INT(spyH_res_kept(&r, k, out, &got), 0);
          T_EQ_INT(got, want);
          uint64_t *kept = malloc((got + 1) * sizeof *kept);
          T_ASSERT(kept != NULL);
          for (uint32_t j = 0; j < got; j++) {
            T_ASSERT(out[j].size[0] < sent);
            kept[j] = prio[out[j].size[0]];
          }
          qsort(kept, got, sizeof *kept, cmp_u64);
          for (uint32_t j = 0; j < got; j++)
            if (kept[j] != sorted[j]) {
              T_FAIL("k %u, %u sent, caps %d, ties %d: kept #%u has "
                     "priority %llx, the truth %llx",
                     k, sent, caps, ties, j, (unsigned long long)kept[j],
                     (unsigned long long)sorted[j]);
            }
          free(kept);
          free(out);
          free(sorted);
          free(prio);
          spyH_res_free(&r);
        }
      }
    }
  }
}

/* The count to the next call that draws a priority (vm-hooks/obs.c,
** spyH_obs_gap) against its law, for call probabilities p from 0.9 to
** 1e-6: drawn 200 000 times, P(gap > k) = (1 - p)^k at the law's 10th,
** 50th, 90th and 99th percentiles within 5 standard errors (so the
** priorities drawn where the counts end fall on each call with
** probability p, independently), and the mean 1/p within 5 standard
** errors ((1 - p)^(1/2) / p / sqrt(n)). The thresholds' ends: every call
** (UINT64_MAX), none (0). A count drawn with a wrong logarithm, off by
** one or from too few random bits fails it. */
static void gap_geometric(void) {
  static const double ps[] = {0.9, 0.5, 0.1, 0.0123, 1e-3, 1e-4, 1e-6};
  static const double qs[] = {0.10, 0.50, 0.90, 0.99};
  enum { N = 200000 };
  uint64_t rng = 7;
  T_EQ_INT(spyH_obs_gap(UINT64_MAX, 12345), 1);
  T_EQ_INT(spyH_obs_gap(UINT64_MAX - 1000, 12345), 1); /* p rounds to 1 */
  T_ASSERT(spyH_obs_gap(0, 12345) == INT64_MAX);
  for (size_t pi = 0; pi < sizeof ps / sizeof *ps; pi++) {
    double p = ps[pi];
    uint64_t t = (uint64_t)(p * 0x1p64);
    int64_t *g = malloc(N * sizeof *g);
    T_ASSERT(g != NULL);
    double sum = 0;
    for (int i = 0; i < N; i++) {
      g[i] = spyH_obs_gap(t, gt_rand(&rng));
      T_ASSERT(g[i] >= 1);
      sum += (double)g[i];
    }
    double mean = sum / N, sd = sqrt(1 - p) / p / sqrt((double)N);
    fprintf(stderr, "p %g: mean %.4g (law %.4g +- %.2g)", p, mean, 1 / p,
            sd);
    T_ASSERT(fabs(mean - 1 / p) < 5 * sd);
    for (size_t qi = 0; qi < sizeof qs / sizeof *qs; qi++) {
      /* k with P(gap > k) = 1 - q under the law, rounded down */
      double k = floor(log(1 - qs[qi]) / log1p(-p));
      double want = pow(1 - p, k), got = 0;
      for (int i = 0; i < N; i++) got += (double)g[i] > k;
      got /= N;
      double se = sqrt(want * (1 - want) / N);
      fprintf(stderr, "; P(gap > %.0f) %.4f (law %.4f)", k, got, want);
      T_ASSERT(fabs(got - want) < 5 * se + 1e-12);
    }
    fprintf(stderr, "\n");
    free(g);
  }
}

/* spy_options.reservoir 0: no observations kept, every call counted,
** and a profile to take (spy_profile_take read an empty reservoir's heap,
** NULL: a crash). */
static void reservoir_none(void) {
  spy_options o;
  spy_options_init(&o);
  o.reservoir = 0;
  spy_profiler *p = new_prof(0, SPY_MODE_POLL, &o);
  int prim = spy_prim_register(p, "Prim>>none", "n", SPY_PRIM_COST);
  T_ASSERT(prim >= 0);
  T_EQ_INT(spy_start(p), 0);
  caller c = {p, prim, 3, 5000};
  pthread_t t;
  T_EQ_INT(pthread_create(&t, NULL, call_many, &c), 0);
  pthread_join(t, NULL);
  T_EQ_INT(spy_stop(p), 0);
  spy_profile *pr = NULL;
  T_EQ_INT(spy_profile_take(p, &pr), 0);
  T_EQ_INT(pr->prims[prim].calls, 5000);
  T_EQ_INT(pr->prims[prim].nobs, 0);
  spy_profile_free(pr);
  T_EQ_INT(spy_profiler_free(p), 0);
}

/* Every call is counted once, whichever path took it: since 12-07 a call
** is counted at its begin (the inline begin, or the slow path's when a
** sample is due there, the call is drawn for a cost observation or the
** primitive records none), and no end counts. Calls of a primitive that
** records costs and of one that does not, at 50 kHz so that samples fall
** due at begins and ends alike, plain, nested 40 deep (past
** SPY_NEST_MAX: the deepest are counted but not tracked), closed by
** spy_nest_unwind from inside a callback, and left for another process
** and back: the profile's counts are the begins made, in both accounting
** modes. */
static void calls_counted_once_in(int exact) {
  spy_options o;
  spy_options_init(&o);
  o.exact_prims = exact;
  spy_profiler *p = new_prof(20000, SPY_MODE_POLL, &o);
  int pa = spy_prim_register(p, "Prim>>costs", "n", SPY_PRIM_COST);
  int pb = spy_prim_register(p, "Prim>>plain", "", 0);
  T_ASSERT(pa >= 0 && pb >= 0);
  spy_host hs = {NULL, noop_walk, NULL, NULL};
  spy_vm *v;
  T_EQ_INT(spy_attach(p, &hs, &v), 0);
  spy_process_switch(v, 1);
  T_EQ_INT(spy_start(p), 0);
  uint64_t na = 0, nb = 0;
  for (int i = 0; i < 3000; i++) {
    spy_prim_begin1(v, pa, (uint64_t)(i % 5)), na++;
    gt_burn_ns(3000);
    spy_prim_end(v);
    spy_prim_begin(v, pb), nb++;
    spy_poll(v);
    spy_prim_end(v);
    if (i % 10 == 0) { /* 40 deep, alternating */
      for (int d = 0; d < 40; d++) {
        if (d % 2) spy_prim_begin(v, pb), nb++;
        else spy_prim_begin1(v, pa, (uint64_t)d), na++;
      }
      gt_burn_ns(1000);
      for (int d = 0; d < 40; d++) spy_prim_end(v);
    }
    if (i % 10 == 3) { /* an error thrown in a callback, caught outside */
      unsigned saved = spy_nest_save(v);
      spy_prim_begin1(v, pa, 1), na++;
      spy_callback_begin(v);
      spy_poll(v);
      spy_prim_begin(v, pb), nb++;
      gt_burn_ns(500);
      spy_nest_unwind(v, saved);
    }
    if (i % 10 == 6) { /* a process switch inside a primitive */
      spy_prim_begin1(v, pa, 2), na++;
      spy_process_switch(v, 2);
      spy_prim_begin(v, pb), nb++;
      gt_burn_ns(500);
      spy_prim_end(v);
      spy_process_switch(v, 1);
      spy_prim_end(v);
    }
    spy_poll(v);
  }
  T_EQ_INT(spy_nest_save(v), 0);
  T_EQ_INT(spy_stop(p), 0);
  spy_profile *pr = NULL;
  T_EQ_INT(spy_profile_take(p, &pr), 0);
  fprintf(stderr,
          "%s: %llu and %llu calls counted, %llu and %llu made; %llu samples\n",
          exact ? "exact" : "cheap",
          (unsigned long long)pr->prims[pa].calls,
          (unsigned long long)pr->prims[pb].calls, (unsigned long long)na,
          (unsigned long long)nb, (unsigned long long)pr->tallies);
  T_EQ_INT(pr->prims[pa].calls, na);
  T_EQ_INT(pr->prims[pb].calls, nb);
  T_ASSERT(pr->tallies > 20); /* samples fell due among them (~100) */
  spy_profile_free(pr);
  T_EQ_INT(spy_detach(v), 0);
  T_EQ_INT(spy_profiler_free(p), 0);
}
static void calls_counted_once(void) {
  calls_counted_once_in(0);
  calls_counted_once_in(1);
}

/* The timing budget holds from a run's start: a hot primitive of ~0.1 us
** calls, 20 000 of them in a fresh run (a few milliseconds: the sampler's
** first drain comes after one), has its first SPYH_OBS_CAP_N (64) calls
** timed, then about budget * mean / 250 ns of them (vm-hooks/obs.h), the
** mean that of the timed calls (the kept observations': under ASan their
** slow paths make them longer than the loop's ~50 ns a call). Bound: 128
** plus twice that. When the sampler set
** the cap at its drains, every call before the first was timed, up to the
** reservoir's margin (4 624 here): 7 000-11 000 of this loop's calls.
** The cap comes from the timed calls' mean so far, so a preemption among
** the first 64 raises it for the next 64 (318 timed for a bound of 285
** once in a full-suite run of 12-07, 104-134 in the runs around it): a
** miss runs once more. */
static int budget_run(void) {
  spy_options o;
  spy_options_init(&o);
  spy_profiler *p = new_prof(0, SPY_MODE_POLL, &o);
  int prim = spy_prim_register(p, "Prim>>hot", "n", SPY_PRIM_COST);
  T_ASSERT(prim >= 0);
  spy_host hs = {NULL, noop_walk, NULL, NULL};
  spy_vm *v;
  T_EQ_INT(spy_attach(p, &hs, &v), 0);
  T_EQ_INT(spy_start(p), 0);
  uint64_t t0 = gt_now();
  for (int i = 0; i < 20000; i++) {
    spy_prim_begin1(v, prim, (uint64_t)(i % 7));
    gt_burn_units(4);
    spy_prim_end(v);
  }
  double loop_ns = (double)(gt_now() - t0);
  T_EQ_INT(spy_stop(p), 0);
  spy_profile *pr = NULL;
  T_EQ_INT(spy_profile_take(p, &pr), 0);
  const spy_profile_prim *pp = &pr->prims[prim];
  uint64_t got = spyS_agg_obs_received(p->agg, (uint32_t)prim);
  T_EQ_INT(pp->calls, 20000);
  T_ASSERT(pp->nobs > 0 && pp->nobs <= got);
  double mean = 0;
  for (size_t i = 0; i < pp->nobs; i++) mean += (double)pp->obs[i].ns;
  mean /= (double)pp->nobs;
  double bound = 128 + 2 * o.obs_budget * 20000 * mean / 250;
  fprintf(stderr, "%llu calls timed in %.2f ms (%.0f ns each; bound %.0f), "
          "%zu kept\n", (unsigned long long)got, loop_ns / 1e6, mean, bound,
          pp->nobs);
  spy_profile_free(pr);
  T_EQ_INT(spy_detach(v), 0);
  T_EQ_INT(spy_profiler_free(p), 0);
  return got >= 64 && (double)got <= bound;
}

static void budget_from_start(void) {
  if (budget_run()) return;
  fprintf(stderr, "once more\n");
  T_ASSERT(budget_run());
}

static void reservoir_threads(void) {
  reservoir_threads_with(0);
  /* 5 % rather than the default 1 %: ~500 kept rather than ~100, a test
  ** five times as sharp (under ASan, 14 runs at 1 % read 0.40-0.56, and
  ** one in a CI run 0.713, 4.1 sigma: not seen again). */
  reservoir_threads_with(0.05);
}

/* ------------------------------------------------------------------------
** Cheap primitive accounting (the default)
** --------------------------------------------------------------------- */

/* A cost-recording primitive whose cost grows with its operand size,
** called 60 000 times with sizes 1..4000. With cheap accounting only a
** priority-sampled subset is timed. The kept observations must describe
** the same cost function as every call the host timed itself: in each of
** 8 size bins the median duration (robust to a preempted call) agrees
** within 2 % + 50 ns, and the slope through the bins' medians within 2 %.
** The reservoir is full. */
static void fit_line(const double *x, const double *y, size_t n, double *a,
                     double *b) {
  double sx = 0, sy = 0, sxx = 0, sxy = 0;
  for (size_t i = 0; i < n; i++)
    sx += x[i], sy += y[i], sxx += x[i] * x[i], sxy += x[i] * y[i];
  *b = ((double)n * sxy - sx * sy) / ((double)n * sxx - sx * sx);
  *a = (sy - *b * sx) / (double)n;
}

static int cmp_dbl(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

/* Median duration of the calls whose size falls in bin k of 8 over
** 1..4000; xs/ys are sizes and durations. */
static double bin_median(const double *xs, const double *ys, size_t n,
                         int k, double *tmp) {
  size_t m = 0;
  for (size_t i = 0; i < n; i++)
    if ((int)((xs[i] - 1) / 500) == k) tmp[m++] = ys[i];
  if (m == 0) return 0;
  qsort(tmp, m, sizeof *tmp, cmp_dbl);
  return tmp[m / 2];
}

RETRYING(cheap_costs_unbiased) {
  rig r;
  rig_new(&r, NULL);
  int prim = spy_prim_register(r.p, "Array>>fill:", "n", SPY_PRIM_COST);
  T_ASSERT(prim >= 0 && prim < GT_MAX_PRIMS);
  enum { CALLS = 60000 };
  gt_call *log = calloc(CALLS, sizeof *log);
  double *x = malloc(CALLS * sizeof *x), *y = malloc(CALLS * sizeof *y);
  double *tmp = malloc(CALLS * sizeof *tmp);
  T_ASSERT(log && x && y && tmp);
  r.h->log = log;
  r.h->log_cap = CALLS;
  start(r.p, r.h, &r.ss);
  gt_enter(r.h, K_MAIN);
  uint64_t rng = 5;
  for (int i = 0; i < CALLS; i++) {
    uint64_t n = gt_rand_range(&rng, 1, 4000);
    gt_prim(r.h, prim, 1, &n, 200 + n * 2); /* ~0.2 + 0.002 n us */
  }
  gt_leave(r.h);
  spy_profile *pr = stop_take(r.p, r.h, &r.ss);
  const spy_profile_prim *pp = &pr->prims[prim];
  T_EQ_INT(pp->calls, CALLS);
  T_ASSERT(pp->flags & SPY_PRIM_ESTIMATED);
  T_EQ_INT(pp->nobs, 4096);
  /* The hooks time a call between their own clock reads, so each
  ** observation lies between the host's inner and outer times of the call
  ** (tests/test_core.c): compare with both. */
  double ti[8], to[8], pm[8], c[8];
  size_t m = r.h->log_n;
  for (size_t i = 0; i < m; i++)
    x[i] = (double)log[i].size[0], y[i] = (double)log[i].inner_ns;
  for (int k = 0; k < 8; k++) ti[k] = bin_median(x, y, m, k, tmp);
  for (size_t i = 0; i < m; i++) y[i] = (double)log[i].outer_ns;
  for (int k = 0; k < 8; k++) to[k] = bin_median(x, y, m, k, tmp);
  for (size_t i = 0; i < pp->nobs; i++)
    x[i] = (double)pp->obs[i].size[0], y[i] = (double)pp->obs[i].ns;
  for (int k = 0; k < 8; k++) {
    pm[k] = bin_median(x, y, pp->nobs, k, tmp);
    c[k] = 250.0 + 500.0 * k;
    /* Under TSan a timed call's slow paths, partly inside its measured
    ** window, cost hundreds of ns more than the inline fast path of the
    ** calls not timed, which are most of the host's: 1705 ns against an
    ** outer median of 1611 once (bin 0). */
    double up = T_TSAN ? 1.15 : 1.02;
    if (pm[k] < 0.98 * ti[k] - 50 || pm[k] > up * to[k] + 50) {
      fprintf(stderr, "size bin %d: median %.0f ns from the reservoir, "
              "every call's %.0f (inner) .. %.0f (outer)\n", k, pm[k], ti[k],
              to[k]);
      share_bad++;
    }
  }
  double a_, bi, bo, bp;
  fit_line(c, ti, 8, &a_, &bi);
  fit_line(c, to, 8, &a_, &bo);
  fit_line(c, pm, 8, &a_, &bp);
  double lo = (bi < bo ? bi : bo) * 0.98, hi = (bi > bo ? bi : bo) * 1.02;
  if (bp < lo || bp > hi) {
    fprintf(stderr, "slope %.4f ns/element from the reservoir, every "
            "call's %.4f (inner) .. %.4f (outer)\n", bp, bi, bo);
    share_bad++;
  }
  free(x), free(y), free(tmp), free(log);
  r.h->log = NULL;
  *retry = rig_end(&r, pr, attempt);
}

/* Long calls among short ones (1 in 40 takes ~2 ms, the rest ~5 us), with
** no call timed by cost sampling: the longest steps are still the long
** calls, each measured from the deadline before the first sample inside
** it: at most an interval short of the host's measurement, and not over
** it, when the marks come on time (a late mark makes the estimate late by
** as much: retried). */
RETRYING(cheap_longest) {
  rig r;
  rig_new(&r, NULL);
  start(r.p, r.h, &r.ss);
  gt_enter(r.h, K_MAIN);
  uint64_t end = gt_now() + 400 * MS, n = 1, long_ns = 0, nlong = 0;
  for (int i = 0; gt_now() < end; i++) {
    uint64_t t0 = gt_now();
    gt_prim(r.h, r.prim[1], 1, &n, i % 40 == 39 ? 2 * MS : 5 * US);
    if (i % 40 == 39) long_ns += gt_now() - t0, nlong++;
    gt_work(r.h, 5 * US);
  }
  gt_leave(r.h);
  spy_profile *pr = stop_take(r.p, r.h, &r.ss);
  const gt_step *top;
  int nt = gt_longest(r.h, &top);
  size_t want = nt < 10 ? (size_t)nt : 10; /* 10 unless starved: retried */
  if (want < 10 || pr->nsteps < want) share_bad++;
  /* Each of the 10 longest steps is a long call, and at least half of
  ** them are within tol of one: a sample missed before a call (a mark
  ** late by more than the 50 us slack: on this project's VM a thread
  ** sleeping 100 us wakes over 200 us late 0.1-0.25 % of the time when
  ** idle, over 1 ms late 1.3 % of the time beside one busy thread) puts
  ** that call's estimate an interval or more early, and the longest
  ** estimates are those; that says nothing about the estimator. (A wrong
  ** estimator misses all.) */
  double slack = 20000 + CLK_ABS_NS, under = (double)pr->interval_ns + slack;
  size_t matched = 0;
  for (size_t i = 0; i < want && i < pr->nsteps; i++) {
    const spy_step *st = &pr->steps[i];
    T_EQ_INT(st->prim, r.prim[1]);
    int near = 0;
    for (int j = 0; j < nt; j++) {
      double d = (double)st->ns - (double)top[j].inner_ns;
      if (d >= -under && d <= slack) near = 1;
    }
    if (st->ns < 1 * MS) share_bad++;
    if (near) {
      matched++;
    } else {
      fprintf(stderr, "step %zu: %" PRIu64 " ns matches no long call "
              "(%.0f ns under .. %.0f over)\n", i, st->ns, under, slack);
    }
  }
  if (2 * matched < want) share_bad++;
  /* The estimate starts from the sample before the call: when marks came
  ** late (the sampler starved of CPU) or the thread was descheduled
  ** between that sample and the call, so does the estimate, by as much.
  ** Such a run says nothing about the estimator: retried, and skipped if
  ** every attempt was disturbed. The rate counts the short calls' part:
  ** a long call takes one sample for the ~20 grid points it spans. */
  double short_ns = (double)pr->wall_ns - (double)long_ns;
  double rate = ((double)pr->tallies - (double)nlong) *
                (double)pr->interval_ns / (short_ns > 1 ? short_ns : 1);
  double stall = gt_stall(r.h);
  int disturbed = rate < 0.9 || stall >= STALL_RETRY;
  if (share_bad) {
    fprintf(stderr, "attempt %d: %zu of %zu steps matched; marks at %.0f%% "
            "of the asked rate, thread stalled %.0f%%\n", attempt, matched,
            want, 100 * rate, 100 * stall);
    if (attempt < ATTEMPTS || disturbed) { /* late marks come in bursts */
      share_bad = 0;
      rig_free(&r, pr);
      if (attempt >= ATTEMPTS)
        T_SKIP("every attempt disturbed (marks at %.0f%% of the asked "
               "rate, the thread stalled %.0f%%)", 100 * rate, 100 * stall);
      *retry = 1;
      return;
    }
  }
  *retry = rig_end(&r, pr, attempt);
}

/* Only short calls (5 us), at a 1 ms interval: the longest steps and the
** primitive's maximum are no longer than the longest call the host
** measured, with the tick marker (a call a sample falls in began before
** the deadline: its begin watches it) and with the sampler thread's
** (before the first mark: its begin takes marks). (Started half way
** between the samples, each sampled call was a step of about half an
** interval, 500 us: every step listed was such a guess; started at the
** deadline, the sampler thread's late marks made steps of 2-5 ms out of
** calls of 2 ms in contract/cheap_longest.) Until 12-07, with the tick
** marker a begin read no clock unless the kernel had preempted the thread
** since the last one that did (Linux's rseq word): a stall of the virtual
** machine itself, which the guest's kernel does not see, just before a
** call was found by the call's end, and the call became a step from the
** deadline (steps of 0.3-9 ms for calls of 110 us once, in a make
** distcheck on the loaded CI machine); a begin reads the clock now.
** Retried as the other share tests: once, then
** while the thread stalled (the thread's CPU time leaves out the
** machine's steal). Returns the thread's stall. */
static double short_steps(spy_marker marker) {
  spy_options o;
  spy_options_init(&o);
  o.marker = marker;
  o.interval_ns = 1 * MS;
  rig r;
  rig_new(&r, &o);
  if (marker == SPY_MARKER_TICK) r.h->tick_every = -1024;
  start(r.p, r.h, &r.ss);
  gt_enter(r.h, K_MAIN);
  uint64_t end = gt_now() + 300 * MS, n = 1;
  while (gt_now() < end) {
    gt_prim(r.h, r.prim[1], 1, &n, 5 * US);
    gt_work(r.h, 5 * US);
  }
  gt_leave(r.h);
  spy_profile *pr = stop_take(r.p, r.h, &r.ss);
  const gt_step *top;
  int nt = gt_longest(r.h, &top);
  double longest = 0;
  for (int j = 0; j < nt; j++)
    if ((double)top[j].outer_ns > longest) longest = (double)top[j].outer_ns;
  double bound = longest + 20000 + CLK_ABS_NS;
  T_ASSERT(pr->prims[r.prim[1]].flags & SPY_PRIM_ESTIMATED);
  T_ASSERT(pr->tallies >= 100);
  T_ASSERT(pr->nsteps > 0);
  for (size_t i = 0; i < pr->nsteps; i++)
    if ((double)pr->steps[i].ns > bound) {
      fprintf(stderr, "marker %d, step %zu: %" PRIu64 " ns, the longest "
              "call %.0f ns\n", (int)marker, i, pr->steps[i].ns, longest);
      share_bad++;
    }
  if ((double)pr->prims[r.prim[1]].max_ns > bound) {
    fprintf(stderr, "marker %d, max %" PRIu64 " ns, the longest call %.0f "
            "ns\n", (int)marker, pr->prims[r.prim[1]].max_ns, longest);
    share_bad++;
  }
  double stall = gt_stall(r.h);
  spy_profile_free(pr);
  gt_free(r.h);
  T_EQ_INT(spy_profiler_free(r.p), 0);
  return stall;
}

static void cheap_short_steps(void) {
  for (int attempt = 1;; attempt++) {
    double a = short_steps(SPY_MARKER_TICK);
    double b = short_steps(SPY_MARKER_THREAD);
    double stall = a > b ? a : b;
    if (!share_bad) return;
    int n = share_bad;
    share_bad = 0;
    if (retry_miss(attempt, stall)) {
      fprintf(stderr, "attempt %d missed (thread stalled %.0f %%); retrying\n",
              attempt, 100 * stall);
      continue;
    }
    T_FAIL("%d maximum(s) over the longest call", n);
  }
}

const struct spy_test t_contract_cost[] = {
  {"reservoir_threads", reservoir_threads, 30},
  {"reservoir_none", reservoir_none, 10},
  {"reservoir_select_exact", reservoir_select_exact, 10},
  {"gap_geometric", gap_geometric, 10},
  {"calls_counted_once", calls_counted_once, 20},
  {"budget_from_start", budget_from_start, 10},
  {"cheap_costs_unbiased", cheap_costs_unbiased, 60},
  {"cheap_longest", cheap_longest, 30},
  {"cheap_short_steps", cheap_short_steps, 30},
  {0}};
