/*
** cost/bootstrap.c: pairs bootstrap intervals for fitted coefficients.
**
** core_bench gives every estimate a bootstrap interval: resample the
** (size, time) pairs with replacement, refit, and read the interval off the
** replicates' percentiles. A resample is a vector of multiplicities, which
** every solver takes as observation weights, so no data is copied.
**
** For a million observations B refits of n rows are too many passes, so
** above boot_rows rows the bootstrap runs on a random m = boot_rows of
** them and the replicates' deviations are scaled by sqrt(m/n): the
** m-out-of-n bootstrap (Bickel, Goetze and van Zwet 1997), valid for the
** root-n consistent estimators used here. The bag of little bootstraps
** (Kleiner et al. 2014) was tried first and dropped: with sizes spread over
** decades its subsets of n^0.7 rows misjudge the high-leverage calls, and
** slope intervals covered 85 % instead of 95 % in tests/test_cost.c's
** planted data.
*/
#include "config.h"

#include "cost/bootstrap.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cost/util.h"

/* The percentile interval of column J of REP (R replicates x P). */
static void percentile(const double *rep, size_t r, int p, int j,
                       double level, double *tmp, double *lo, double *hi) {
  size_t k = 0;
  for (size_t i = 0; i < r; i++)
    if (isfinite(rep[i * (size_t)p + j])) tmp[k++] = rep[i * (size_t)p + j];
  if (k < 10) {
    *lo = *hi = NAN;
    return;
  }
  *lo = spyC_quantile(tmp, k, (1 - level) / 2);
  *hi = spyC_quantile(tmp, k, (1 + level) / 2);
}

/* R pairs-bootstrap replicates on D: multiplicities of N draws with
** replacement as observation weights, each fit starting from BETA. */
static int replicate(const spyC_design *d, const spyC_sopt *so,
                     const double *beta, size_t r, size_t ntotal,
                     gsl_rng *rng, double *rep, double *w) {
  spyC_sopt s = *so;
  s.warm = 1;
  s.fast = 1;
  s.maxit = 20;
  for (size_t b = 0; b < r; b++) {
    memset(w, 0, d->n * sizeof *w);
    for (size_t i = 0; i < ntotal; i++)
      w[gsl_rng_uniform_int(rng, d->n)] += 1;
    double *out = rep + b * (size_t)d->p;
    memcpy(out, beta, (size_t)d->p * sizeof *out);
    spyC_prob pb = {d->n, d->p, d->X, d->y, w};
    int rc = spyC_solve(&pb, &s, out, NULL);
    if (rc == SPY_ENOMEM) return rc;
    if (rc)
      for (int j = 0; j < d->p; j++) out[j] = NAN;
  }
  return 0;
}

int spyC_bootstrap(const spyC_design *d, const spyC_sopt *so,
                   const double *beta, unsigned B, size_t boot_rows,
                   double level, gsl_rng *rng, double *lo, double *hi) {
  int p = d->p;
  for (int j = 0; j < p; j++) lo[j] = hi[j] = NAN;
  if (B == 0 || d->n < 2) return 0;
  /* The rows resampled: all of them, or a random m = boot_rows. */
  size_t m = d->n <= boot_rows ? d->n : boot_rows;
  size_t least = (size_t)(10 * p);
  if (m < least) m = d->n < least ? d->n : least;
  spyC_design sub = *d;
  size_t *perm = NULL;
  double *band = NULL;
  int rc = SPY_ENOMEM;
  double *rep = malloc((size_t)B * (size_t)p * sizeof *rep);
  double *w = malloc(m * sizeof *w);
  double *tmp = malloc((size_t)B * sizeof *tmp);
  if (!rep || !w || !tmp) goto out;
  if (m < d->n) {
    sub.n = m;
    sub.X = malloc(m * (size_t)p * sizeof *sub.X);
    sub.y = malloc(m * sizeof *sub.y);
    perm = spyC_sample(rng, d->n, m);
    if (!sub.X || !sub.y || !perm) goto out;
    for (size_t i = 0; i < m; i++) {
      memcpy(sub.X + i * (size_t)p, d->X + perm[i] * (size_t)p,
             (size_t)p * sizeof(double));
      sub.y[i] = d->y[perm[i]];
    }
  }
  /* The replicates' solver on the resampled rows as they are: the
  ** replicates are read relative to it (see newton_quantile). All share
  ** one smoothing band, computed once around BETA. */
  double centre[SPYC_MAXCOEF];
  spyC_prob all = {m, p, sub.X, sub.y, NULL};
  spyC_sopt cs = *so;
  if (so->method == SPY_COST_MEDIAN || so->method == SPY_COST_QUANTILE) {
    if (!(band = malloc(m * sizeof *band))) goto out;
    if (spyC_band(&all, beta, band) == 0) cs.band = band;
  }
  memcpy(centre, beta, (size_t)p * sizeof *centre);
  cs.warm = 1;
  cs.fast = 1;
  cs.maxit = 20;
  rc = spyC_solve(&all, &cs, centre, NULL);
  if (rc == SPY_ENOMEM) goto out;
  if (rc) memcpy(centre, beta, (size_t)p * sizeof *centre);
  if ((rc = replicate(&sub, &cs, centre, B, m, rng, rep, w)))
    goto out;
  /* Deviations of an m-row estimate shrink like 1/sqrt(m): rescale them
  ** to n rows (the m-out-of-n bootstrap; a no-op when m = n). */
  double scale = sqrt((double)m / (double)d->n);
  for (int j = 0; j < p; j++) {
    double l, h;
    percentile(rep, B, p, j, level, tmp, &l, &h);
    lo[j] = beta[j] + scale * (l - centre[j]);
    hi[j] = beta[j] + scale * (h - centre[j]);
  }
  rc = 0;
out:
  if (sub.X != d->X) free(sub.X);
  if (sub.y != d->y) free(sub.y);
  free(perm);
  free(band);
  free(rep);
  free(w);
  free(tmp);
  return rc;
}
