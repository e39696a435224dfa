/*
** cost/dconf.c: upper bounds that D % of calls stay under (seed 002).
**
** An engineer setting a gas price needs a curve most calls stay under, not
** the average. Three ways are fitted on the same training calls and judged
** on the same held-out ones:
**   quantile   quantile regression at level D (the one reported and used),
**   shift      seed 002's algorithm 1: least squares, moved up by the D
**              quantile of its residuals,
**   asymmetric seed 002's algorithm 2: least squares in which residuals
**              of calls above the curve count alpha times, alpha searched
**              so that D of the training calls fall under the curve.
** The reported coverage is always measured on calls the fit never saw.
*/
#include "config.h"

#include "cost/dconf.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_statistics_double.h>

#include "cost/util.h"

#define COMPARE_ROWS 10000

static double coverage(const spyC_design *d, const double *beta,
                       double shift) {
  if (d->n == 0) return NAN;
  size_t under = 0;
  for (size_t i = 0; i < d->n; i++) {
    const double *x = d->X + i * (size_t)d->p;
    double f = shift;
    for (int j = 0; j < d->p; j++) f += x[j] * beta[j];
    under += d->y[i] <= f;
  }
  return (double)under / (double)d->n;
}

/* Algorithm 1: OLS plus the ceil(D n)-th smallest residual. */
static int fit_shift(const spyC_design *tr, int icpt, double D,
                     spyC_bound *b) {
  spyC_sopt s = {.method = SPY_COST_OLS, .maxit = 1, .tol = 1e-8};
  if (spyC_solve(&(spyC_prob){tr->n, tr->p, tr->X, tr->y, NULL}, &s,
                 b->beta, NULL))
    return -1;
  double *r = malloc(tr->n * sizeof *r);
  if (!r) return SPY_ENOMEM;
  for (size_t i = 0; i < tr->n; i++) {
    const double *x = tr->X + i * (size_t)tr->p;
    double f = 0;
    for (int j = 0; j < tr->p; j++) f += x[j] * b->beta[j];
    r[i] = tr->y[i] - f;
  }
  size_t k = (size_t)ceil(D * (double)tr->n);
  if (k < 1) k = 1;
  if (k > tr->n) k = tr->n;
  double c = gsl_stats_select(r, 1, tr->n, k - 1);
  free(r);
  b->param = c;
  if (icpt >= 0) b->beta[icpt] += c;
  else b->shift = c;
  return 0;
}

/* The asymmetric fit whose in-sample coverage came closest to D so far. */
typedef struct asym_best {
  double gap, alpha;
  double beta[SPYC_MAXCOEF];
} asym_best;

/* Solve at alpha = exp(LA) into BETA (warm-started from it); its coverage
** in *C, and the fit kept in *BEST when it is the closest to D yet.
** Returns spyC_solve's code. */
static int try_alpha(const spyC_prob *pb, spyC_sopt *s, const spyC_design *tr,
                     double la, double D, double *beta, asym_best *best,
                     double *c) {
  s->alpha = exp(la);
  int rc = spyC_solve(pb, s, beta, NULL);
  if (rc) return rc;
  *c = coverage(tr, beta, 0);
  if (fabs(*c - D) < best->gap) {
    best->gap = fabs(*c - D);
    best->alpha = s->alpha;
    memcpy(best->beta, beta, sizeof best->beta);
  }
  return 0;
}

/* Algorithm 2: bisection on log(alpha) for in-sample coverage D. */
static int fit_asym(const spyC_design *tr, double D, spyC_bound *b) {
  spyC_prob pb = {tr->n, tr->p, tr->X, tr->y, NULL};
  spyC_sopt s = {.method = SPYC_ASYM, .alpha = 1, .maxit = 50, .tol = 1e-9};
  double beta[SPYC_MAXCOEF];
  int rc = spyC_solve(&pb, &s, beta, NULL);
  if (rc) return rc == SPY_ENOMEM ? rc : -1;
  s.warm = 1;
  double cov = coverage(tr, beta, 0), lo, hi, c;
  asym_best best = {fabs(cov - D), 1, {0}};
  memcpy(best.beta, beta, sizeof beta);
  /* Bracket: coverage grows with alpha. */
  double la = 0, step = cov < D ? 1 : -1;
  lo = hi = 0;
  for (int i = 0; i < 40; i++) {
    la += step;
    if ((rc = try_alpha(&pb, &s, tr, la, D, beta, &best, &c))) break;
    if ((step > 0) == (c >= D)) {
      lo = step > 0 ? la - step : la;
      hi = step > 0 ? la : la - step;
      break;
    }
    step *= 2;
  }
  if (rc == 0 && lo < hi) {
    /* Coverage moves in steps of 1/n; a tenth of a percentage point is
    ** finer than the held-out check can see. */
    double tol = fmax(0.5 / (double)tr->n, 1e-3);
    for (int i = 0; i < 40 && best.gap > tol; i++) {
      double mid = 0.5 * (lo + hi);
      if ((rc = try_alpha(&pb, &s, tr, mid, D, beta, &best, &c))) break;
      if (c >= D) hi = mid;
      else lo = mid;
    }
  }
  if (rc == SPY_ENOMEM) return rc;
  memcpy(b->beta, best.beta, sizeof best.beta);
  b->param = best.alpha;
  return 0;
}

int spyC_dconf(const spyC_prim *p, const spyC_model *bm, double D,
               double holdout, size_t bound_rows, int compare, int nonneg,
               unsigned long seed, gsl_rng *rng, spyC_bound out[3]) {
  memset(out, 0, 3 * sizeof *out);
  size_t n = p->n;
  size_t ntest = (size_t)ceil(holdout * (double)n);
  if (n < 10 || ntest < 1 || ntest >= n) return 0;
  size_t ntrain = n - ntest;
  if (ntrain > bound_rows) ntrain = bound_rows;
  size_t *perm = spyC_sample(rng, n, ntest + ntrain);
  if (!perm) return SPY_ENOMEM;
  spyC_design te = {0}, tr = {0};
  int rc = spyC_design_build(bm, p, perm, ntest, &te, NULL);
  if (rc == 0) rc = spyC_design_build(bm, p, perm + ntest, ntrain, &tr, NULL);
  free(perm);
  if (rc) {
    spyC_design_free(&te);
    return rc;
  }
  if ((size_t)tr.p >= tr.n) goto done;
  int icpt = spyC_model_intercept(bm);

  spyC_sopt s = {.method = SPY_COST_QUANTILE, .tau = D, .nonneg = nonneg,
                 .maxit = 100, .tol = 1e-7, .seed = seed};
  spyC_sinfo info;
  int q = spyC_solve(&(spyC_prob){tr.n, tr.p, tr.X, tr.y, NULL}, &s,
                     out[SPYC_BOUND_QUANTILE].beta, &info);
  if (q == SPY_ENOMEM) {
    rc = q;
    goto done;
  }
  out[SPYC_BOUND_QUANTILE].ok = q == 0;
  out[SPYC_BOUND_QUANTILE].param = D;
  if (compare) {
    /* The comparison algorithms train on at most COMPARE_ROWS of the
    ** training calls: they are there to be compared, and algorithm 2
    ** refits dozens of times. */
    spyC_design trc = tr;
    if (trc.n > COMPARE_ROWS) trc.n = COMPARE_ROWS;
    int a = fit_shift(&trc, icpt, D, &out[SPYC_BOUND_SHIFT]);
    if (a == SPY_ENOMEM) {
      rc = a;
      goto done;
    }
    out[SPYC_BOUND_SHIFT].ok = a == 0;
    a = fit_asym(&trc, D, &out[SPYC_BOUND_ASYM]);
    if (a == SPY_ENOMEM) {
      rc = a;
      goto done;
    }
    out[SPYC_BOUND_ASYM].ok = a == 0;
  }
  for (int k = 0; k < 3; k++) {
    spyC_bound *b = &out[k];
    if (!b->ok) continue;
    spyC_design trk = tr;
    if (k > 0 && trk.n > COMPARE_ROWS) trk.n = COMPARE_ROWS;
    b->ntrain = trk.n;
    b->ntest = te.n;
    b->train_coverage = coverage(&trk, b->beta, b->shift);
    b->coverage = coverage(&te, b->beta, b->shift);
  }
done:
  spyC_design_free(&te);
  spyC_design_free(&tr);
  return rc;
}
