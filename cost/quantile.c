/*
** cost/quantile.c: exact quantile regression for large n.
**
** Quantile regression is a linear program; iteratively reweighted least
** squares approaches its answer only slowly (hundreds of passes at 1e5
** rows), so this file solves it the way R's quantreg does:
**
**  - a Frisch-Newton interior-point method on the dual (Portnoy and
**    Koenker 1997, the algorithm of quantreg's rq.fit.fnb): about twenty
**    Newton steps whatever n is, each one pass that forms X'QX (p x p)
**    and a few passes over n-vectors;
**  - "globbing" preprocessing for large n (same paper, rq.fit.pfn): fit a
**    random subsample of m ~ 2 (p n)^(2/3) rows, keep only the rows whose
**    residual is near the fitted quantile, replace the rows confidently
**    above and below it by one summed row each, solve that small problem,
**    and verify that no collapsed row changed side (otherwise move the
**    offenders back in and solve again). The answer is the exact solution
**    of the full problem, at the cost of a few passes over it.
**
** Non-negative coefficients are an active-set loop around the solver:
** drop a coefficient that comes out negative, re-add a dropped one when
** the subgradient says the loss would fall by making it positive.
*/
#include "config.h"

#include "cost/quantile.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_errno.h>
#include <gsl/gsl_linalg.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>

#include "cost/util.h"

#define PMAX 32
#define IPM_MAXIT 80

/* ===================================================================
** Frisch-Newton interior point
** =================================================================== */

/* Factor the p x p matrix M (upper part filled, symmetric) with GSL's
** Cholesky, adding a little to the diagonal if rounding made it
** indefinite. Returns 0 or -1 (singular). */
static int pp_factor(double *M, int p) {
  double diag = 0, keep[PMAX * PMAX];
  for (int j = 0; j < p; j++)
    for (int k = 0; k < j; k++) M[j * p + k] = M[k * p + j];
  for (int j = 0; j < p; j++) diag = fmax(diag, M[j * p + j]);
  if (!(diag > 0) || !isfinite(diag)) return -1;
  memcpy(keep, M, (size_t)(p * p) * sizeof *M);
  gsl_matrix_view Mv = gsl_matrix_view_array(M, (size_t)p, (size_t)p);
  for (double jit = 1e-13;; jit *= 100) {
    if (gsl_linalg_cholesky_decomp1(&Mv.matrix) == GSL_SUCCESS) return 0;
    if (jit > 1e-5) return -1;
    memcpy(M, keep, (size_t)(p * p) * sizeof *M);
    for (int j = 0; j < p; j++) M[j * p + j] += jit * diag;
  }
}

static void pp_solve(const double *L, int p, double *b) {
  gsl_matrix_const_view Lv =
      gsl_matrix_const_view_array(L, (size_t)p, (size_t)p);
  gsl_vector_view bv = gsl_vector_view_array(b, (size_t)p);
  gsl_linalg_cholesky_svx(&Lv.matrix, &bv.vector);
}

/* Solve min sum_i u_i rho_tau(y_i - x_i beta) (all u_i > 0) with the
** Frisch-Newton method on the dual
**     max y'a  subject to  X'a = (1 - tau) X'u,  0 <= a <= u,
** as a bounded LP  min c'x, A x = b, 0 <= x <= u  with c = -y, A = X':
** an affine-scaling predictor, then Mehrotra's corrector with the
** centring parameter mu (g / mu)^3 / 2n, step lengths 0.99995 of the way
** to the boundary, until the complementarity gap is tiny. The right-hand
** side carries the primal residual b - Ax, so rounding cannot drift the
** iterate off the constraints. Columns are scaled by powers of two and y
** by one, and the coefficients are -dual y. Returns 0, -1 when the normal
** matrix is singular, SPY_ENOMEM. */
static inline __attribute__((always_inline)) int
ipm_body(size_t n, const int p, const double *X0, const double *y0,
         const double *u, double tau, double reltol, double *beta,
         int *iters) {
  double *buf = malloc((12 * n + n * (size_t)p) * sizeof *buf);
  if (!buf) return SPY_ENOMEM;
  double *x = buf, *s = buf + n, *z = buf + 2 * n, *w = buf + 3 * n;
  double *d = buf + 4 * n, *dx = buf + 5 * n, *dz = buf + 6 * n;
  double *dw = buf + 7 * n, *dr = buf + 8 * n, *c = buf + 9 * n;
  double *xinv = buf + 10 * n, *sinv = buf + 11 * n;
  double *X = buf + 12 * n; /* scaled copy, n x p */
  double ada[PMAX * PMAX], rhs[PMAX], dy[PMAX], yd[PMAX], b[PMAX];
  double cs[PMAX] = {0}, ys = 0;
  int rc = 0, it = 0;

  for (size_t i = 0; i < n; i++) {
    ys += u[i] * fabs(y0[i]);
    for (int j = 0; j < p; j++) cs[j] += X0[i * p + j] * X0[i * p + j];
  }
  double usum = 0;
  for (size_t i = 0; i < n; i++) usum += u[i];
  int e;
  frexp(ys > 0 && isfinite(ys) ? ys / usum : 1.0, &e);
  double yscale = ldexp(1.0, e - 1);
  for (int j = 0; j < p; j++) {
    double rms = sqrt(cs[j] / (double)n);
    frexp(rms > 0 && isfinite(rms) ? rms : 1.0, &e);
    cs[j] = ldexp(1.0, e - 1);
  }
  for (size_t i = 0; i < n; i++) {
    for (int j = 0; j < p; j++) X[i * p + j] = X0[i * p + j] / cs[j];
    c[i] = -y0[i] / yscale;
  }

  /* b = (1 - tau) X'u; primal start x = (1 - tau) u, s = u - x. */
  for (int j = 0; j < p; j++) b[j] = 0;
  for (size_t i = 0; i < n; i++) {
    x[i] = (1 - tau) * u[i];
    s[i] = u[i] - x[i];
    for (int j = 0; j < p; j++) b[j] += X[i * p + j] * x[i];
  }
  /* Dual start: least squares of c on X; z and w split the residual. */
  memset(ada, 0, sizeof ada);
  for (int j = 0; j < p; j++) yd[j] = 0;
  for (size_t i = 0; i < n; i++) {
    const double *xi = X + i * (size_t)p;
    for (int j = 0; j < p; j++) {
      for (int k = j; k < p; k++) ada[j * p + k] += xi[j] * xi[k];
      yd[j] += xi[j] * c[i];
    }
  }
  if (pp_factor(ada, p)) {
    rc = -1;
    goto out;
  }
  pp_solve(ada, p, yd);
  /* z and w split the residual r = c - A'y by sign; a margin of a tenth
  ** of the mean |r| on both keeps the start away from the boundary
  ** (rqfnb adds one only where r is 0; heavy-tailed timings converge in
  ** far fewer steps from a centred start). */
  double rmean = 0;
  for (size_t i = 0; i < n; i++) {
    const double *xi = X + i * (size_t)p;
    double r = c[i];
    for (int j = 0; j < p; j++) r -= xi[j] * yd[j];
    dr[i] = r;
    rmean += fabs(r);
  }
  double eps = 0.1 * rmean / (double)n + 1e-12;
  for (size_t i = 0; i < n; i++) {
    z[i] = (dr[i] > 0 ? dr[i] : 0) + eps;
    w[i] = (dr[i] < 0 ? -dr[i] : 0) + eps;
  }
  double gap = 0;
  for (size_t i = 0; i < n; i++) gap += z[i] * x[i] + w[i] * s[i];
  const double tol = reltol * usum;
  for (it = 0; it < IPM_MAXIT && gap > tol; it++) {
    /* Predictor: ADA' dy = b - A x + A d (z - w). The step lengths are
    ** found as the largest -dv/v over the four vectors, from reciprocals
    ** computed once, so the loops carry no divisions. */
    memset(ada, 0, sizeof ada);
    for (int j = 0; j < p; j++) rhs[j] = b[j];
    for (size_t i = 0; i < n; i++) {
      double xi_ = 1 / x[i], si_ = 1 / s[i];
      xinv[i] = xi_;
      sinv[i] = si_;
      double di = 1 / (z[i] * xi_ + w[i] * si_);
      d[i] = di;
      double t = di * (z[i] - w[i]) - x[i];
      const double *xr = X + i * (size_t)p;
      for (int j = 0; j < p; j++) {
        double a = di * xr[j];
        for (int k = j; k < p; k++) ada[j * p + k] += a * xr[k];
        rhs[j] += xr[j] * t;
      }
    }
    if (pp_factor(ada, p)) {
      rc = -1;
      goto out;
    }
    memcpy(dy, rhs, (size_t)p * sizeof *dy);
    pp_solve(ada, p, dy);
    double rp = 0, rd = 0;
    for (size_t i = 0; i < n; i++) {
      const double *xr = X + i * (size_t)p;
      double ady = 0;
      for (int j = 0; j < p; j++) ady += xr[j] * dy[j];
      double dxi = d[i] * (ady - z[i] + w[i]);
      double ux = dxi * xinv[i], us = dxi * sinv[i];
      dx[i] = dxi;
      dz[i] = -z[i] * (ux + 1);
      dw[i] = -w[i] * (1 - us);
      /* -dx/x, -ds/s = dx/s, -dz/z = ux + 1, -dw/w = 1 - us */
      rp = -ux > rp ? -ux : rp;
      rp = us > rp ? us : rp;
      rd = ux + 1 > rd ? ux + 1 : rd;
      rd = 1 - us > rd ? 1 - us : rd;
    }
    double fp = rp > 0.99995 ? 0.99995 / rp : 1;
    double fd = rd > 0.99995 ? 0.99995 / rd : 1;
    if (fp < 1 || fd < 1) {
      /* Corrector: aim at complementarity mu, with the second-order
      ** terms dx dz and ds dw of the predictor (ds = -dx). */
      double mu = 0, g = 0;
      for (size_t i = 0; i < n; i++) {
        mu += x[i] * z[i] + s[i] * w[i];
        g += (z[i] + fd * dz[i]) * (x[i] + fp * dx[i]) +
             (w[i] + fd * dw[i]) * (s[i] - fp * dx[i]);
      }
      double ratio = g / mu;
      mu = mu * ratio * ratio * ratio / (2.0 * (double)n);
      for (int j = 0; j < p; j++) dy[j] = rhs[j];
      for (size_t i = 0; i < n; i++) {
        double dri = d[i] * (mu * (sinv[i] - xinv[i]) +
                             dx[i] * dz[i] * xinv[i] +
                             dx[i] * dw[i] * sinv[i]);
        dr[i] = dri;
        const double *xr = X + i * (size_t)p;
        for (int j = 0; j < p; j++) dy[j] += xr[j] * dri;
      }
      pp_solve(ada, p, dy);
      rp = 0, rd = 0;
      for (size_t i = 0; i < n; i++) {
        const double *xr = X + i * (size_t)p;
        double ady = 0;
        for (int j = 0; j < p; j++) ady += xr[j] * dy[j];
        double dxdz = dx[i] * dz[i], dsdw = -dx[i] * dw[i];
        double dxi = d[i] * (ady - z[i] + w[i]) - dr[i];
        double tz = (mu - z[i] * dxi - dxdz) * xinv[i];
        double tw = (mu + w[i] * dxi - dsdw) * sinv[i];
        dx[i] = dxi;
        dz[i] = tz - z[i];
        dw[i] = tw - w[i];
        double ux = dxi * xinv[i], us = dxi * sinv[i];
        rp = -ux > rp ? -ux : rp;
        rp = us > rp ? us : rp;
        /* -dz/z > r  <=>  z - tz > r z (z > 0): compare without dividing
        ** unless it matters. */
        if (tz < z[i] * (1 - rd)) rd = 1 - tz / z[i];
        if (tw < w[i] * (1 - rd)) rd = 1 - tw / w[i];
      }
      fp = rp > 0.99995 ? 0.99995 / rp : 1;
      fd = rd > 0.99995 ? 0.99995 / rd : 1;
    }
    gap = 0;
    for (size_t i = 0; i < n; i++) {
      x[i] += fp * dx[i];
      s[i] -= fp * dx[i];
      z[i] += fd * dz[i];
      w[i] += fd * dw[i];
      gap += z[i] * x[i] + w[i] * s[i];
    }
    for (int j = 0; j < p; j++) yd[j] += fd * dy[j];
  }
  for (int j = 0; j < p; j++) beta[j] = -yd[j] * yscale / cs[j];
out:
  if (iters) *iters = it;
  free(buf);
  return rc;
}

/* The loops above with the number of coefficients known at compile time
** for the common models (an intercept and a term or three), so that the
** compiler unrolls the p x p updates. */
static int ipm_solve(size_t n, int p, const double *X, const double *y,
                     const double *u, double tau, double reltol,
                     double *beta, int *iters) {
  switch (p) {
  case 1: return ipm_body(n, 1, X, y, u, tau, reltol, beta, iters);
  case 2: return ipm_body(n, 2, X, y, u, tau, reltol, beta, iters);
  case 3: return ipm_body(n, 3, X, y, u, tau, reltol, beta, iters);
  case 4: return ipm_body(n, 4, X, y, u, tau, reltol, beta, iters);
  default: return ipm_body(n, p, X, y, u, tau, reltol, beta, iters);
  }
}

/* ===================================================================
** Globbing preprocessing
** =================================================================== */

/* A compacted problem: selected rows plus up to two summed rows. */
typedef struct small {
  size_t n;
  double *X, *y, *u;
} small;

static int small_alloc(small *sm, size_t cap, int p) {
  sm->n = 0;
  sm->X = malloc(cap * (size_t)p * sizeof *sm->X);
  sm->y = malloc(cap * sizeof *sm->y);
  sm->u = malloc(cap * sizeof *sm->u);
  return sm->X && sm->y && sm->u ? 0 : SPY_ENOMEM;
}

static void small_free(small *sm) {
  free(sm->X);
  free(sm->y);
  free(sm->u);
}

static void small_push(small *sm, int p, const double *x, double y,
                       double u) {
  memcpy(sm->X + sm->n * (size_t)p, x, (size_t)p * sizeof *x);
  sm->y[sm->n] = y;
  sm->u[sm->n] = u;
  sm->n++;
}

/* Solve on the rows with positive weight, using globbing above GLOB_MIN
** rows. *ITERS gets the interior-point steps of the last solve. */
#define GLOB_MIN 8000

static int qr_direct(const spyC_prob *pb, double tau, double tol,
                     double *beta, int *iters) {
  int p = pb->p;
  size_t n = 0;
  for (size_t i = 0; i < pb->n; i++) n += !pb->w || pb->w[i] > 0;
  small sm;
  if (n == pb->n && !pb->w) {
    double *ones = malloc(n * sizeof *ones);
    if (!ones) return SPY_ENOMEM;
    for (size_t i = 0; i < n; i++) ones[i] = 1;
    int rc = ipm_solve(n, p, pb->X, pb->y, ones, tau, tol, beta, iters);
    free(ones);
    return rc;
  }
  if (small_alloc(&sm, n ? n : 1, p)) {
    small_free(&sm);
    return SPY_ENOMEM;
  }
  for (size_t i = 0; i < pb->n; i++)
    if (!pb->w || pb->w[i] > 0)
      small_push(&sm, p, pb->X + i * (size_t)p, pb->y[i],
                 pb->w ? pb->w[i] : 1);
  int rc = n ? ipm_solve(sm.n, p, sm.X, sm.y, sm.u, tau, tol, beta, iters) : -1;
  small_free(&sm);
  return rc;
}

static int qr_glob(const spyC_prob *pb, double tau, double tol,
                   double *beta, int *iters, unsigned long seed) {
  int p = pb->p;
  size_t n = pb->n;
  double m = 2 * pow((double)p * (double)n, 2.0 / 3.0);
  if (m > (double)n / 2) return qr_direct(pb, tau, tol, beta, iters);
  double *r = malloc(n * sizeof *r), *rs = malloc(n * sizeof *rs);
  double *lv = malloc(n * sizeof *lv);
  unsigned char *side = malloc(n);
  gsl_rng *rng = gsl_rng_alloc(gsl_rng_taus2);
  small sm = {0};
  int rc = SPY_ENOMEM;
  if (!r || !rs || !lv || !side || !rng) goto out;
  gsl_rng_set(rng, seed);
  for (int attempt = 0; attempt < 4; attempt++) {
    size_t msz = (size_t)m;
    if (msz >= n / 2) {
      rc = qr_direct(pb, tau, tol, beta, iters);
      goto out;
    }
    /* 1. A preliminary fit on a random subsample (Bernoulli, so the
    **    subsample costs one pass and no index array). */
    small_free(&sm);
    if (small_alloc(&sm, n, p)) goto out;
    double keep = (double)msz / (double)n;
    for (size_t i = 0; i < n; i++) {
      double wi = pb->w ? pb->w[i] : 1;
      if (wi > 0 && gsl_rng_uniform(rng) < keep)
        small_push(&sm, p, pb->X + i * (size_t)p, pb->y[i], wi);
    }
    if (sm.n < (size_t)(4 * p)) {
      rc = qr_direct(pb, tau, tol, beta, iters);
      goto out;
    }
    if ((rc = ipm_solve(sm.n, p, sm.X, sm.y, sm.u, tau, tol, beta, iters)))
      goto out;
    /* 2. Residuals of every row, each divided by the standard error of
    **    the preliminary fit there (sqrt(x_i' (Xs'Xs)^-1 x_i), Portnoy and
    **    Koenker's band), so that rows far out in x, where the preliminary
    **    slope is least certain, are not collapsed too eagerly. The band
    **    of these quotients' quantiles around tau keeps the rows near the
    **    answer. */
    double G[PMAX * PMAX] = {0};
    for (size_t i = 0; i < sm.n; i++) {
      const double *xi = sm.X + i * (size_t)p;
      for (int j = 0; j < p; j++)
        for (int k = j; k < p; k++) G[j * p + k] += sm.u[i] * xi[j] * xi[k];
    }
    for (int j = 0; j < p; j++)
      for (int k = 0; k < j; k++) G[j * p + k] = G[k * p + j];
    gsl_matrix_view Gv = gsl_matrix_view_array(G, (size_t)p, (size_t)p);
    if (gsl_linalg_cholesky_decomp1(&Gv.matrix) != GSL_SUCCESS) {
      rc = qr_direct(pb, tau, tol, beta, iters);
      goto out;
    }
    /* Timing noise usually grows with the cost: a local scale
    ** s(f) = a + b |f| fitted to the subsample's absolute residuals
    ** widens the band where the preliminary fit is large. */
    double sa = 0, sb = 0;
    {
      double s00 = 0, s01 = 0, s11 = 0, t0 = 0, t1 = 0;
      for (size_t i = 0; i < sm.n; i++) {
        const double *xi = sm.X + i * (size_t)p;
        double f = 0;
        for (int j = 0; j < p; j++) f += xi[j] * beta[j];
        double af = fabs(f), ar = fabs(sm.y[i] - f);
        s00 += 1, s01 += af, s11 += af * af, t0 += ar, t1 += af * ar;
      }
      double det = s00 * s11 - s01 * s01;
      if (det > 0) {
        sb = (s00 * t1 - s01 * t0) / det;
        sa = (t0 - sb * s01) / s00;
      }
      if (!(sb > 0)) sb = 0;
      if (!(sa > 0)) sa = 0;
      if (sa == 0 && sb == 0) sa = 1;
      /* Never let the scale vary by more than 1e6 across rows. */
      if (sa < 1e-6 * sb * (s01 / s00)) sa = 1e-6 * sb * (s01 / s00);
    }
    size_t nr = 0;
    for (size_t i = 0; i < n; i++) {
      const double *xi = pb->X + i * (size_t)p;
      double f = 0, v[PMAX], band = 0;
      for (int j = 0; j < p; j++) f += xi[j] * beta[j];
      for (int j = 0; j < p; j++) { /* v = L^-1 x_i */
        double acc = xi[j];
        for (int k = 0; k < j; k++) acc -= G[j * p + k] * v[k];
        v[j] = acc / G[j * p + j];
        band += v[j] * v[j];
      }
      lv[i] = sqrt(band) * (sa + sb * fabs(f));
      r[i] = (pb->y[i] - f) / (lv[i] + 1e-300);
      if (!pb->w || pb->w[i] > 0) rs[nr++] = r[i];
    }
    double half = m / (2.0 * (double)nr);
    double lo = spyC_quantile(rs, nr, fmax(0, tau - half));
    double hi = spyC_quantile(rs, nr, fmin(1, tau + half));
    /* The m/2 rows where the preliminary fit is least certain are never
    ** collapsed: with sizes spread over decades a handful of the largest
    ** calls carry most of the design's mass, and one of them on the wrong
    ** side would tip the small problem's balance. */
    nr = 0;
    for (size_t i = 0; i < n; i++)
      if (!pb->w || pb->w[i] > 0) rs[nr++] = lv[i];
    double lvtop = spyC_quantile(rs, nr, fmax(0, 1 - half));
    /* 3. Glob and solve; move any collapsed row that changed side back
    **    in and solve again. A summed row keeps the sum of its rows' x but
    **    gets a y ten times its natural residual away from the preliminary
    **    fit: a summed row whose residual can shrink to 0 would otherwise
    **    be interpolated (the LP picks p rows to pass through). */
    double btil[PMAX];
    memcpy(btil, beta, (size_t)p * sizeof *beta);
    for (int fix = 0; fix < 4; fix++) {
      double xl[PMAX] = {0}, xh[PMAX] = {0}, kl = 0, kh = 0;
      int anyl = 0, anyh = 0;
      sm.n = 0;
      for (size_t i = 0; i < n; i++) {
        double wi = pb->w ? pb->w[i] : 1;
        const double *xi = pb->X + i * (size_t)p;
        if (!(wi > 0)) {
          side[i] = 3;
          continue;
        }
        if (fix == 0)
          side[i] = lv[i] >= lvtop ? 1 : r[i] < lo ? 0 : r[i] > hi ? 2 : 1;
        if (side[i] == 1) {
          small_push(&sm, p, xi, pb->y[i], wi);
          continue;
        }
        double f = 0;
        for (int j = 0; j < p; j++) f += xi[j] * btil[j];
        double *xs = side[i] == 0 ? xl : xh;
        for (int j = 0; j < p; j++) xs[j] += wi * xi[j];
        if (side[i] == 0) kl += wi * fabs(pb->y[i] - f), anyl = 1;
        else kh += wi * fabs(pb->y[i] - f), anyh = 1;
      }
      double yl = 0, yh = 0;
      for (int j = 0; j < p; j++) yl += xl[j] * btil[j], yh += xh[j] * btil[j];
      yl -= 2 * kl + 1;
      yh += 2 * kh + 1;
      if (anyl) small_push(&sm, p, xl, yl, 1);
      if (anyh) small_push(&sm, p, xh, yh, 1);
      if ((rc = ipm_solve(sm.n, p, sm.X, sm.y, sm.u, tau, tol, beta, iters)))
        goto out;
      double fl = 0, fh = 0;
      for (int j = 0; j < p; j++) fl += xl[j] * beta[j], fh += xh[j] * beta[j];
      if ((anyl && yl - fl >= 0) || (anyh && yh - fh <= 0)) break;
      size_t bad = 0;
      for (size_t i = 0; i < n; i++) {
        if (side[i] == 1 || side[i] == 3) continue;
        const double *xi = pb->X + i * (size_t)p;
        double f = 0;
        for (int j = 0; j < p; j++) f += xi[j] * beta[j];
        double ri = pb->y[i] - f;
        if ((side[i] == 0 && ri > 0) || (side[i] == 2 && ri < 0)) {
          side[i] = 1;
          bad++;
        }
      }
      if (bad == 0) {
        rc = 0;
        goto out;
      }
      if ((double)bad > 0.5 * m) break;
    }
    m *= 2;
  }
  rc = qr_direct(pb, tau, tol, beta, iters);
out:
  small_free(&sm);
  free(r);
  free(rs);
  free(lv);
  free(side);
  gsl_rng_free(rng);
  return rc;
}

/* ===================================================================
** Entry point with the non-negativity active set
** =================================================================== */

static int qr_any(const spyC_prob *pb, double tau, double tol, double *beta,
                  int *iters, unsigned long seed) {
  if (pb->n >= GLOB_MIN) return qr_glob(pb, tau, tol, beta, iters, seed);
  return qr_direct(pb, tau, tol, beta, iters);
}

/* Fit with only the columns in ACTIVE (bit mask); the others are 0. */
static int qr_cols(const spyC_prob *pb, unsigned active, double tau,
                   double tol, double *beta, int *iters,
                   unsigned long seed) {
  int p = pb->p, np = 0, cols[PMAX];
  for (int j = 0; j < p; j++)
    if (active >> j & 1) cols[np++] = j;
  for (int j = 0; j < p; j++) beta[j] = 0;
  if (np == 0) return 0;
  if (np == p) return qr_any(pb, tau, tol, beta, iters, seed);
  double *X = malloc(pb->n * (size_t)np * sizeof *X);
  if (!X) return SPY_ENOMEM;
  for (size_t i = 0; i < pb->n; i++)
    for (int k = 0; k < np; k++)
      X[i * (size_t)np + k] = pb->X[i * (size_t)p + cols[k]];
  spyC_prob sub = {pb->n, np, X, pb->y, pb->w};
  double b[PMAX];
  int rc = qr_any(&sub, tau, tol, b, iters, seed);
  free(X);
  for (int k = 0; k < np; k++) beta[cols[k]] = b[k];
  return rc;
}

int spyC_quantreg(const spyC_prob *pb, double tau, double tol, int nonneg,
                  double *beta, spyC_sinfo *info, unsigned long seed) {
  int p = pb->p, iters = 0;
  unsigned all = p >= 32 ? 0xffffffffu : (1u << p) - 1, active = all;
  int rc = qr_cols(pb, active, tau, tol, beta, &iters, seed);
  if (rc) return rc;
  info->clamped = 0;
  for (int j = 0; j < p; j++)
    if (beta[j] < 0) info->clamped |= 1u << j;
  if (!nonneg || !info->clamped) {
    info->iters = iters;
    info->converged = iters < IPM_MAXIT;
    return 0;
  }
  for (int round = 0; round < 2 * p + 2; round++) {
    /* Drop the most negative coefficient ... */
    int worst = -1;
    for (int j = 0; j < p; j++)
      if ((active >> j & 1) && beta[j] < 0 &&
          (worst < 0 || beta[j] < beta[worst]))
        worst = j;
    if (worst >= 0) {
      active &= ~(1u << worst);
      if ((rc = qr_cols(pb, active, tau, tol, beta, &iters, seed))) return rc;
      continue;
    }
    /* ... and re-admit a dropped one whose subgradient says the loss
    ** falls if it grows. */
    double g[PMAX] = {0}, gs[PMAX] = {0};
    for (size_t i = 0; i < pb->n; i++) {
      const double *xi = pb->X + i * (size_t)p;
      double f = 0;
      for (int j = 0; j < p; j++) f += xi[j] * beta[j];
      double ri = pb->y[i] - f, wi = pb->w ? pb->w[i] : 1;
      double psi = ri > 0 ? tau : ri < 0 ? tau - 1 : 0;
      for (int j = 0; j < p; j++) {
        g[j] += wi * xi[j] * psi;
        gs[j] += wi * fabs(xi[j]);
      }
    }
    int add = -1;
    for (int j = 0; j < p; j++)
      if (!(active >> j & 1) && g[j] > 1e-9 * gs[j] &&
          (add < 0 || g[j] / gs[j] > g[add] / gs[add]))
        add = j;
    if (add < 0) break;
    active |= 1u << add;
    if ((rc = qr_cols(pb, active, tau, tol, beta, &iters, seed))) return rc;
  }
  for (int j = 0; j < p; j++)
    if (beta[j] < 0) beta[j] = 0;
  info->iters = iters;
  info->converged = iters < IPM_MAXIT;
  return 0;
}
