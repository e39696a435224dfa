/*
** cost/select.c: model selection by k-fold cross-validation.
**
** All candidates see the same subsample and the same folds, so their
** losses are comparable call for call. A fold is held out by giving its
** rows weight 0, which every solver honours, so each candidate's design
** matrix is built once.
*/
#include "config.h"

#include "cost/select.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cost/util.h"

/* Cross-validate one candidate: per-fold mean losses into FL[0..k). The
** candidate is first fitted exactly on the whole subsample; each fold's
** fit then starts there and takes the fast path (a few Newton steps for
** the quantile solvers), which is plenty to compare models. */
static int cv_one(const spyC_design *d, const unsigned char *fold,
                  unsigned k, const spyC_sopt *so, double *fl, double *w) {
  double all[SPYC_MAXCOEF], beta[SPYC_MAXCOEF];
  spyC_sopt s = *so;
  s.warm = 0;
  s.tol = 1e-6;
  int rc = spyC_solve(&(spyC_prob){d->n, d->p, d->X, d->y, NULL}, &s, all,
                      NULL);
  if (rc) return rc == SPY_ENOMEM ? rc : -1;
  s.warm = 1;
  s.fast = 1;
  s.maxit = 20;
  for (unsigned f = 0; f < k; f++) {
    size_t ntest = 0;
    for (size_t i = 0; i < d->n; i++) {
      w[i] = fold[i] == f ? 0.0 : 1.0;
      ntest += fold[i] == f;
    }
    spyC_prob pb = {d->n, d->p, d->X, d->y, w};
    memcpy(beta, all, (size_t)d->p * sizeof *beta);
    rc = spyC_solve(&pb, &s, beta, NULL);
    if (rc == SPY_ENOMEM) return rc;
    if (rc) return -1;
    double sum = 0;
    for (size_t i = 0; i < d->n; i++) {
      if (fold[i] != f) continue;
      const double *x = d->X + i * (size_t)d->p;
      double f_ = 0;
      for (int j = 0; j < d->p; j++) f_ += x[j] * beta[j];
      sum += spyC_loss(so, d->y[i], f_);
    }
    fl[f] = ntest ? sum / (double)ntest : 0;
  }
  return 0;
}

int spyC_select(const spyC_prim *p, spyC_cand *c, size_t nc, unsigned k,
                size_t select_rows, const spyC_sopt *so, gsl_rng *rng) {
  if (k < 2) k = 2;
  size_t m = p->n < select_rows ? p->n : select_rows;
  size_t *rows = spyC_sample(rng, p->n, m);
  unsigned char *fold = malloc(m ? m : 1);
  double *w = malloc((m ? m : 1) * sizeof *w);
  double fl[256];
  int rc = 0;
  if (!rows || !fold || !w) {
    rc = SPY_ENOMEM;
    goto out;
  }
  if (k > m) k = (unsigned)m;
  if (k > 255) k = 255;
  for (size_t i = 0; i < m; i++) fold[i] = (unsigned char)(i % k);
  for (size_t ci = 0; ci < nc; ci++) {
    if (!c[ci].ok) continue;
    spyC_design d;
    int brc = spyC_design_build(&c[ci].m, p, rows, m, &d, NULL);
    if (brc == SPY_ENOMEM) {
      rc = brc;
      goto out;
    }
    if (brc || (size_t)d.p >= m) {
      c[ci].ok = 0;
      if (!brc) spyC_design_free(&d);
      continue;
    }
    int vrc = cv_one(&d, fold, k, so, fl, w);
    spyC_design_free(&d);
    if (vrc == SPY_ENOMEM) {
      rc = vrc;
      goto out;
    }
    if (vrc) {
      c[ci].ok = 0;
      continue;
    }
    double mean = 0, var = 0;
    for (unsigned f = 0; f < k; f++) mean += fl[f];
    mean /= k;
    for (unsigned f = 0; f < k; f++) var += (fl[f] - mean) * (fl[f] - mean);
    var /= (k - 1);
    c[ci].loss = mean;
    c[ci].se = sqrt(var / k);
    if (!isfinite(mean)) c[ci].ok = 0;
  }
  /* The one-standard-error rule: prefer the simpler model unless the more
  ** complex one is clearly better. */
  int best = -1;
  for (size_t ci = 0; ci < nc; ci++)
    if (c[ci].ok && (best < 0 || c[ci].loss < c[best].loss)) best = (int)ci;
  if (best < 0) {
    rc = -1;
    goto out;
  }
  double limit = c[best].loss + c[best].se;
  int pick = best;
  for (size_t ci = 0; ci < nc; ci++) {
    if (!c[ci].ok || c[ci].loss > limit) continue;
    if (c[ci].m.ncoef < c[pick].m.ncoef ||
        (c[ci].m.ncoef == c[pick].m.ncoef && c[ci].loss < c[pick].loss))
      pick = (int)ci;
  }
  rc = pick;
out:
  free(rows);
  free(fold);
  free(w);
  return rc;
}
