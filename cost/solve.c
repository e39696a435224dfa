/*
** cost/solve.c: least squares and its reweighted relatives on GSL.
**
** The core is a weighted normal-equation solve on equilibrated columns:
** one pass over the rows accumulates X'VX and X'Vy, the p x p system is
** factored with GSL's Cholesky, and Lawson-Hanson runs on that factor when
** coefficients must stay non-negative. Equilibration (scaling every column
** by a power of two to unit root-mean-square) keeps sizes of 1e6 and their
** squares from ruining the conditioning, and p is small (a few terms), so
** one streaming pass per iteration is what dominates: that is what keeps a
** million observations under a second.
*/
#include "config.h"

#include "cost/solve.h"
#include "cost/quantile.h"
#include "cost/util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_errno.h>
#include <gsl/gsl_linalg.h>
#include <gsl/gsl_multifit.h>
#include <gsl/gsl_statistics_double.h>
#include <gsl/gsl_vector.h>

#define PMAX 32

void spyC_sopt_init(spyC_sopt *s, const spy_cost_options *o) {
  memset(s, 0, sizeof *s);
  s->method = o->solver;
  s->tau = o->solver == SPY_COST_QUANTILE ? o->tau : 0.5;
  s->ridge = o->ridge;
  s->nonneg = o->nonneg || o->solver == SPY_COST_NNLS;
  s->alpha = 1;
  s->maxit = 100;
  s->tol = 1e-7;
  s->seed = o->seed;
}

/* ===================================================================
** Lawson-Hanson NNLS on a small dense system
** =================================================================== */

/* Least squares on the columns of A listed in P[0..np): s[P[i]] = sol. */
static int passive_solve(const double *A, int m, int p, const double *z,
                         const int *P, int np, double *s) {
  gsl_matrix *Q = gsl_matrix_alloc((size_t)m, (size_t)np);
  gsl_vector *tau = gsl_vector_alloc((size_t)np);
  gsl_vector *x = gsl_vector_alloc((size_t)np);
  gsl_vector *res = gsl_vector_alloc((size_t)m);
  int rc = 0;
  if (!Q || !tau || !x || !res) {
    rc = SPY_ENOMEM;
    goto out;
  }
  for (int i = 0; i < m; i++)
    for (int j = 0; j < np; j++)
      gsl_matrix_set(Q, (size_t)i, (size_t)j, A[i * p + P[j]]);
  gsl_vector_const_view zv = gsl_vector_const_view_array(z, (size_t)m);
  for (int j = 0; j < p; j++) s[j] = 0;
  if (gsl_linalg_QR_decomp(Q, tau) ||
      gsl_linalg_QR_lssolve(Q, tau, &zv.vector, x, res)) {
    rc = SPY_ENOTSUP;
    goto out;
  }
  for (int j = 0; j < np; j++) s[P[j]] = gsl_vector_get(x, (size_t)j);
out:
  gsl_matrix_free(Q);
  gsl_vector_free(tau);
  gsl_vector_free(x);
  gsl_vector_free(res);
  return rc;
}

int spyC_nnls(const double *A, int m, int p, const double *z, double *x) {
  int inP[PMAX] = {0}, P[PMAX], np = 0;
  double w[PMAX], s[PMAX];
  double anorm = 0;
  for (int i = 0; i < m * p; i++) anorm = fmax(anorm, fabs(A[i]));
  double ztop = 0;
  for (int i = 0; i < m; i++) ztop = fmax(ztop, fabs(z[i]));
  const double tol = 1e-12 * (anorm * ztop + 1e-300) * (m + p);
  for (int j = 0; j < p; j++) x[j] = 0;
  for (int outer = 0; outer < 3 * p + 3; outer++) {
    /* w = A'(z - Ax): the negative gradient. */
    for (int j = 0; j < p; j++) {
      double acc = 0;
      for (int i = 0; i < m; i++) {
        double r = z[i];
        for (int k = 0; k < p; k++) r -= A[i * p + k] * x[k];
        acc += A[i * p + j] * r;
      }
      w[j] = acc;
    }
    int t = -1;
    for (int j = 0; j < p; j++)
      if (!inP[j] && w[j] > tol && (t < 0 || w[j] > w[t])) t = j;
    if (t < 0) break;
    inP[t] = 1;
    for (int inner = 0; inner < 3 * p + 3; inner++) {
      np = 0;
      for (int j = 0; j < p; j++)
        if (inP[j]) P[np++] = j;
      int rc = passive_solve(A, m, p, z, P, np, s);
      if (rc == SPY_ENOMEM) return rc;
      if (rc) { /* a dependent column: drop the one just added */
        inP[t] = 0;
        break;
      }
      int allpos = 1;
      for (int i = 0; i < np; i++)
        if (s[P[i]] <= 0) allpos = 0;
      if (allpos) {
        memcpy(x, s, (size_t)p * sizeof *x);
        break;
      }
      double alpha = 1;
      for (int i = 0; i < np; i++) {
        int j = P[i];
        if (s[j] <= 0) {
          double a = x[j] / (x[j] - s[j]);
          if (a < alpha) alpha = a;
        }
      }
      for (int j = 0; j < p; j++) {
        x[j] += alpha * (s[j] - x[j]);
        if (inP[j] && x[j] <= 1e-15 * (fabs(s[j]) + 1e-300)) {
          x[j] = 0;
          inP[j] = 0;
        }
      }
    }
  }
  for (int j = 0; j < p; j++)
    if (x[j] < 0) x[j] = 0;
  return 0;
}

/* ===================================================================
** The weighted normal-equation core
** =================================================================== */

typedef struct core {
  const spyC_prob *pb;
  int p;
  double scale[PMAX];   /* column j is divided by scale[j] */
  int isconst[PMAX];    /* the column is constant (an intercept) */
  double *v;            /* per-row weights of the current iteration */
} core;

/* Powers of two so the scaling itself is exact. */
static void equilibrate(core *c) {
  const spyC_prob *pb = c->pb;
  int p = c->p;
  double ss[PMAX] = {0}, first[PMAX];
  for (int j = 0; j < p; j++) {
    first[j] = pb->X[j];
    c->isconst[j] = 1;
  }
  for (size_t i = 0; i < pb->n; i++) {
    const double *x = pb->X + i * (size_t)p;
    for (int j = 0; j < p; j++) {
      ss[j] += x[j] * x[j];
      if (x[j] != first[j]) c->isconst[j] = 0;
    }
  }
  for (int j = 0; j < p; j++) {
    double rms = sqrt(ss[j] / (double)pb->n);
    int e;
    frexp(rms > 0 && isfinite(rms) ? rms : 1.0, &e);
    c->scale[j] = ldexp(1.0, e - 1);
  }
}

/* Accumulate the scaled X'VX (upper triangle into M) and X'Vy. V NULL
** means the observation weights alone. */
static double accumulate(const core *c, const double *v, double *M,
                         double *b) {
  const spyC_prob *pb = c->pb;
  int p = c->p;
  double sw = 0;
  memset(M, 0, (size_t)(p * p) * sizeof *M);
  memset(b, 0, (size_t)p * sizeof *b);
  if (p == 2) {
    double m00 = 0, m01 = 0, m11 = 0, b0 = 0, b1 = 0;
    for (size_t i = 0; i < pb->n; i++) {
      double wi = v ? v[i] : pb->w ? pb->w[i] : 1.0;
      const double *x = pb->X + 2 * i;
      double x0 = wi * x[0], x1 = wi * x[1];
      m00 += x0 * x[0];
      m01 += x0 * x[1];
      m11 += x1 * x[1];
      b0 += x0 * pb->y[i];
      b1 += x1 * pb->y[i];
      sw += wi;
    }
    M[0] = m00, M[1] = m01, M[3] = m11, b[0] = b0, b[1] = b1;
  } else {
    for (size_t i = 0; i < pb->n; i++) {
      double wi = v ? v[i] : pb->w ? pb->w[i] : 1.0;
      const double *x = pb->X + i * (size_t)p;
      for (int j = 0; j < p; j++) {
        double xj = wi * x[j];
        for (int k = j; k < p; k++) M[j * p + k] += xj * x[k];
        b[j] += xj * pb->y[i];
      }
      sw += wi;
    }
  }
  for (int j = 0; j < p; j++) {
    b[j] /= c->scale[j];
    for (int k = j; k < p; k++) {
      M[j * p + k] /= c->scale[j] * c->scale[k];
      M[k * p + j] = M[j * p + k];
    }
  }
  return sw;
}

/* Solve the scaled system M beta = b (ridge added to the non-constant
** diagonal, then non-negativity if asked). Writes the unscaled solution to
** BETA and the coefficients the unconstrained solution wanted negative to
** *CLAMPED. */
static int core_solve(const core *c, const double *M0, const double *b,
                      double ridge, int nonneg, double *beta,
                      unsigned *clamped, int *illcond) {
  int p = c->p;
  double M[PMAX * PMAX], diag = 0;
  memcpy(M, M0, (size_t)(p * p) * sizeof *M);
  for (int j = 0; j < p; j++) diag = fmax(diag, M[j * p + j]);
  if (!(diag > 0) || !isfinite(diag)) return SPY_ENOTSUP;
  for (int j = 0; j < p; j++)
    if (!c->isconst[j] || p == 1) M[j * p + j] += ridge;
  gsl_matrix_view Mv = gsl_matrix_view_array(M, (size_t)p, (size_t)p);
  /* A singular or nearly singular system is regularised a little and
  ** reported, rather than failing: the data cannot tell some terms apart,
  ** and the caller flags it. */
  double jitter = 0;
  for (int attempt = 0;; attempt++) {
    int bad = gsl_linalg_cholesky_decomp1(&Mv.matrix) != GSL_SUCCESS;
    double dmin = INFINITY, dmax = 0;
    for (int j = 0; j < p && !bad; j++) {
      double d = M[j * p + j];
      dmin = fmin(dmin, d);
      dmax = fmax(dmax, d);
    }
    if (!bad && dmin > 1e-7 * dmax) break;
    if (attempt == 3) return SPY_ENOTSUP;
    *illcond = 1;
    jitter = jitter ? jitter * 1e3 : 1e-10 * diag;
    memcpy(M, M0, (size_t)(p * p) * sizeof *M);
    for (int j = 0; j < p; j++)
      M[j * p + j] += jitter + ((!c->isconst[j] || p == 1) ? ridge : 0);
  }
  double sol[PMAX];
  gsl_vector_const_view bv = gsl_vector_const_view_array(b, (size_t)p);
  gsl_vector_view xv = gsl_vector_view_array(sol, (size_t)p);
  if (gsl_linalg_cholesky_solve(&Mv.matrix, &bv.vector, &xv.vector))
    return SPY_ENOTSUP;
  *clamped = 0;
  for (int j = 0; j < p; j++)
    if (sol[j] < 0) *clamped |= 1u << j;
  if (nonneg && *clamped) {
    /* M = L L': with R = L' and z = L^-1 b, |R x - z| is the weighted
    ** residual up to a constant, so NNLS on (R, z) is the constrained
    ** least-squares problem. */
    double R[PMAX * PMAX], z[PMAX];
    for (int i = 0; i < p; i++)
      for (int j = 0; j < p; j++) R[i * p + j] = j >= i ? M[j * p + i] : 0;
    for (int i = 0; i < p; i++) {
      double acc = b[i];
      for (int k = 0; k < i; k++) acc -= M[i * p + k] * z[k];
      z[i] = acc / M[i * p + i];
    }
    int rc = spyC_nnls(R, p, p, z, sol);
    if (rc) return rc;
  }
  for (int j = 0; j < p; j++) beta[j] = sol[j] / c->scale[j];
  return 0;
}

/* One weighted least-squares solve with row weights V (NULL: pb->w). */
static int wls_step(core *c, const double *v, double ridge, int nonneg,
                    double *beta, spyC_sinfo *info) {
  double M[PMAX * PMAX], b[PMAX];
  double sw = accumulate(c, v, M, b);
  if (!(sw > 0)) return SPY_ENOTSUP;
  return core_solve(c, M, b, ridge * sw, nonneg, beta, &info->clamped,
                    &info->illcond);
}

/* ===================================================================
** Reweighting schemes
** =================================================================== */

static double rel_change(const core *c, const double *a, const double *b) {
  double num = 0, den = 1e-300;
  for (int j = 0; j < c->p; j++) {
    num = fmax(num, fabs(a[j] - b[j]) * c->scale[j]);
    den = fmax(den, fabs(b[j]) * c->scale[j]);
  }
  return num / den;
}

static void residuals(const spyC_prob *pb, const double *beta, double *r) {
  int p = pb->p;
  for (size_t i = 0; i < pb->n; i++) {
    const double *x = pb->X + i * (size_t)p;
    double f = 0;
    for (int j = 0; j < p; j++) f += x[j] * beta[j];
    r[i] = pb->y[i] - f;
  }
}

/* Quantile regression near a good start (bootstrap replicates): Newton's
** method on the check function with its kink rounded off,
**     rho(r) = |r|_h / 2 + (tau - 1/2) r,
**     |r|_h = r^2 / 2 h_i inside |r| <= h_i, |r| - h_i / 2 outside.
** The band h_i = h f_i follows the fitted value f_i at the start, because
** timing noise grows with the cost: a band of fixed width would hold only
** the cheapest calls and say nothing about the slope. h makes it hold 5 %
** of the calls. The Hessian comes from the calls inside the band, so a
** step costs one pass, and the iteration ends when a full step leaves the
** band's membership unchanged (the minimum of that quadratic piece).
** The rounding changes the estimator a little, the same way for the
** replicates and for the original data; the bootstrap reads its intervals
** relative to the latter. */
typedef struct smooth {
  const spyC_prob *pb;
  double tau;
  double *hb; /* per-row band half-widths */
} smooth;

/* The rounded check loss at BETA (residuals into R), in one pass; P is a
** compile-time constant in the common cases (see smooth_loss). */
static inline __attribute__((always_inline)) double
smooth_loss_p(const smooth *sm, const double *beta, double *r, const int p) {
  const spyC_prob *pb = sm->pb;
  double L = 0, half = sm->tau - 0.5;
  for (size_t i = 0; i < pb->n; i++) {
    const double *x = pb->X + i * (size_t)p;
    double f = 0;
    for (int j = 0; j < p; j++) f += x[j] * beta[j];
    double ri = pb->y[i] - f, h = sm->hb[i];
    r[i] = ri;
    double a = ri < 0 ? -ri : ri;
    double hub = a <= h ? ri * ri / (2 * h) : a - h / 2;
    L += (pb->w ? pb->w[i] : 1.0) * (hub / 2 + half * ri);
  }
  return L;
}

static double smooth_loss(const smooth *sm, const double *beta, double *r) {
  switch (sm->pb->p) {
  case 2: return smooth_loss_p(sm, beta, r, 2);
  case 3: return smooth_loss_p(sm, beta, r, 3);
  default: return smooth_loss_p(sm, beta, r, sm->pb->p);
  }
}

/* One pass of Newton's method: the gradient G (sum w psi x) and the
** Hessian M (upper triangle) from the rows inside the band; returns how
** many are inside. */
static inline __attribute__((always_inline)) size_t
newton_pass_p(const spyC_prob *pb, const double *r, const double *hb,
              double tau, double *M, double *g, const int p) {
  size_t in = 0;
  for (size_t i = 0; i < pb->n; i++) {
    double wi = pb->w ? pb->w[i] : 1.0;
    if (wi == 0) continue;
    const double *x = pb->X + i * (size_t)p;
    double ri = r[i], hi = hb[i], psi;
    if (ri > hi) psi = tau;
    else if (ri < -hi) psi = tau - 1;
    else {
      psi = ri / (2 * hi) + tau - 0.5;
      in++;
      double a = wi / (2 * hi);
      for (int j = 0; j < p; j++)
        for (int l = j; l < p; l++) M[j * p + l] += a * x[j] * x[l];
    }
    for (int j = 0; j < p; j++) g[j] += wi * psi * x[j];
  }
  return in;
}

static size_t newton_pass(const spyC_prob *pb, const double *r,
                          const double *hb, double tau, double *M,
                          double *g) {
  switch (pb->p) {
  case 2: return newton_pass_p(pb, r, hb, tau, M, g, 2);
  case 3: return newton_pass_p(pb, r, hb, tau, M, g, 3);
  default: return newton_pass_p(pb, r, hb, tau, M, g, pb->p);
  }
}

/* Band half-widths h f_i: f_i the fitted value at BETA (floored at a
** thousandth of the mean), h making the band hold 5 % of the rows (at
** least 10 per coefficient). R and V are scratch. */
static int band_widths(const spyC_prob *pb, const double *beta, double *hb,
                       double *r, double *v) {
  residuals(pb, beta, r);
  double fmean = 0;
  size_t k = 0;
  for (size_t i = 0; i < pb->n; i++) {
    hb[i] = fabs(pb->y[i] - r[i]);
    fmean += hb[i];
  }
  fmean /= (double)pb->n;
  for (size_t i = 0; i < pb->n; i++) {
    if (!(hb[i] > 1e-3 * fmean)) hb[i] = 1e-3 * fmean + 1e-300;
    if (!pb->w || pb->w[i] > 0) v[k++] = fabs(r[i]) / hb[i];
  }
  if (k == 0) return SPY_ENOTSUP;
  double frac = 0.05;
  if (frac * (double)k < 10.0 * pb->p)
    frac = fmin(1.0, 10.0 * pb->p / (double)k);
  double h = spyC_quantile(v, k, frac);
  if (!(h > 0)) {
    /* Timers with coarse ticks leave many residuals exactly 0: take the
    ** band from the others, or rows inside it would have no curvature to
    ** speak of and the fit could not move. */
    size_t kp = 0;
    for (size_t i = 0; i < k; i++)
      if (v[i] > 0) v[kp++] = v[i];
    h = kp ? spyC_quantile(v, kp, frac) : 1e-6;
    if (!(h > 0)) h = 1e-6;
  }
  for (size_t i = 0; i < pb->n; i++) hb[i] *= h;
  return 0;
}

int spyC_band(const spyC_prob *pb, const double *beta, double *band) {
  double *r = malloc(pb->n * sizeof *r), *v = malloc(pb->n * sizeof *v);
  int rc = r && v ? band_widths(pb, beta, band, r, v) : SPY_ENOMEM;
  free(r);
  free(v);
  return rc;
}

static int newton_quantile(core *c, const spyC_sopt *s, double *beta,
                           spyC_sinfo *info, double *r, double *v) {
  const spyC_prob *pb = c->pb;
  int p = c->p;
  double tau = s->tau;
  double *hb = malloc(pb->n * sizeof *hb);
  if (!hb) return SPY_ENOMEM;
  smooth sm = {pb, tau, hb};
  if (s->band) {
    memcpy(hb, s->band, pb->n * sizeof *hb);
  } else {
    int brc = band_widths(pb, beta, hb, r, v);
    if (brc) {
      free(hb);
      return brc;
    }
  }
  double L = smooth_loss(&sm, beta, r);
  /* v[i] records whether row i is inside the band. */
  for (size_t i = 0; i < pb->n; i++) v[i] = fabs(r[i]) <= hb[i];
  int rc = 0;
  for (int it = 0; it < s->maxit; it++) {
    double M[PMAX * PMAX] = {0}, g[PMAX] = {0};
    size_t in = newton_pass(pb, r, hb, tau, M, g);
    for (int j = 0; j < p; j++) {
      g[j] /= c->scale[j];
      for (int l = j; l < p; l++) {
        M[j * p + l] /= c->scale[j] * c->scale[l];
        M[l * p + j] = M[j * p + l];
      }
    }
    double step[PMAX], trial[PMAX];
    unsigned clamped;
    int ill = 0;
    if (in < (size_t)p + 1 ||
        core_solve(c, M, g, 0, 0, step, &clamped, &ill) || ill) {
      /* Too few rows in the band to curve the loss: widen it. */
      for (size_t i = 0; i < pb->n; i++) hb[i] *= 2;
      L = smooth_loss(&sm, beta, r);
      for (size_t i = 0; i < pb->n; i++) v[i] = fabs(r[i]) <= hb[i];
      continue;
    }
    /* Backtrack until the loss does not grow. */
    double t = 1, Lt = L;
    for (int bt = 0; bt < 30; bt++, t *= 0.5) {
      for (int j = 0; j < p; j++) trial[j] = beta[j] + t * step[j];
      Lt = smooth_loss(&sm, trial, r);
      if (Lt <= L) break;
    }
    info->iters = it + 1;
    if (!(Lt <= L)) { /* no descent left: at the minimum */
      residuals(pb, beta, r);
      info->converged = 1;
      break;
    }
    double big = 0, sz = 1e-300;
    for (int j = 0; j < p; j++) {
      big = fmax(big, fabs(trial[j] - beta[j]) * c->scale[j]);
      sz = fmax(sz, fabs(trial[j]) * c->scale[j]);
    }
    memcpy(beta, trial, (size_t)p * sizeof *beta);
    /* A full step that leaves the band's membership as it was landed on
    ** the minimum of this quadratic piece: that is the answer. */
    size_t moved = 0;
    for (size_t i = 0; i < pb->n; i++) {
      if (pb->w && pb->w[i] == 0) continue;
      int now = fabs(r[i]) <= hb[i];
      moved += now != (v[i] != 0);
      v[i] = now;
    }
    L = Lt;
    if (big <= 1e-9 * sz || (t == 1 && moved == 0)) {
      info->converged = 1;
      break;
    }
  }
  if (s->nonneg)
    for (int j = 0; j < p; j++)
      if (beta[j] < 0) beta[j] = 0;
  free(hb);
  return rc;
}

/* ===================================================================
** Iteratively reweighted least squares
** =================================================================== */

/* What one reweighting scheme supplies to irls(): from the residuals R of
** the current beta it fills the row weights V[0..n) (observation weights
** included). It returns 0 to take a step with them, 1 when the current
** beta is already the answer (the weights would be the last step's, or
** the fit is exact), or a negative SPY_E* code. IT counts the steps
** taken so far; on a later call V still holds the last step's weights. */
typedef int (*weigh_fn)(const spyC_prob *pb, const spyC_sopt *s,
                        const double *r, double *v, void *ctx, int it);

/* The one IRLS loop every reweighted method shares, so they agree on
** what convergence means: a step whose relative change of beta is below
** s->tol ends it converged (or the scheme saying its weights are settled);
** s->maxit steps end it unconverged. */
static int irls(core *c, const spyC_sopt *s, weigh_fn weigh, void *ctx,
                double *beta, spyC_sinfo *info, double *r, double *v) {
  const spyC_prob *pb = c->pb;
  double prev[PMAX];
  for (int it = 0;; it++) {
    residuals(pb, beta, r);
    int w = weigh(pb, s, r, v, ctx, it);
    if (w < 0) return w;
    if (w == 1) {
      info->converged = 1;
      break;
    }
    if (it >= s->maxit) break;
    memcpy(prev, beta, (size_t)c->p * sizeof *beta);
    int rc = wls_step(c, v, 0, s->nonneg, beta, info);
    if (rc) return rc;
    info->iters = it + 1;
    if (rel_change(c, prev, beta) < s->tol) {
      info->converged = 1;
      break;
    }
  }
  return 0;
}

/* Seed 002's algorithm 2 inner fit: least squares with the residuals of
** points above the curve weighted by alpha (their squares by alpha^2).
** Once no point changed side since the last step, the weights would be
** the same again: that beta is the answer. */
static int weigh_asym(const spyC_prob *pb, const spyC_sopt *s,
                      const double *r, double *v, void *ctx, int it) {
  double a2 = s->alpha * s->alpha;
  (void)ctx;
  if (it > 0) {
    size_t flips = 0;
    for (size_t i = 0; i < pb->n; i++)
      flips += (r[i] > 0) != (v[i] == (pb->w ? pb->w[i] * a2 : a2));
    if (flips == 0) return 1;
  }
  for (size_t i = 0; i < pb->n; i++) {
    double wi = r[i] > 0 ? a2 : 1.0;
    v[i] = pb->w ? pb->w[i] * wi : wi;
  }
  return 0;
}

/* Relative-error weighted least squares: weights 1/fit^2 from the previous
** iterate (feasible GLS for timing noise that grows with the cost). CTX
** points to the floor under the fitted values (a thousandth of the mean
** time), so a fit near zero does not take all the weight. */
static int weigh_wls(const spyC_prob *pb, const spyC_sopt *s,
                     const double *r, double *v, void *ctx, int it) {
  double floor = *(const double *)ctx;
  (void)s;
  (void)it;
  for (size_t i = 0; i < pb->n; i++) {
    double f = pb->y[i] - r[i];
    f = f > floor ? f : floor;
    v[i] = (pb->w ? pb->w[i] : 1.0) / (f * f);
  }
  return 0;
}

/* Huber or bisquare M-estimation with GSL's weight functions and default
** tuning constants; the scale is the median absolute residual / 0.6745
** (as GSL's gsl_multifit_robust), weights multiply the observation
** weights. A zero scale is an exact fit. */
typedef struct robust {
  const gsl_multifit_robust_type *T;
  double *a; /* n scratch values */
} robust;

static int weigh_robust(const spyC_prob *pb, const spyC_sopt *s,
                        const double *r, double *v, void *ctx, int it) {
  const robust *rb = ctx;
  double *a = rb->a;
  (void)s;
  (void)it;
  for (size_t i = 0; i < pb->n; i++) a[i] = fabs(r[i]);
  double sigma = gsl_stats_select(a, 1, pb->n, pb->n / 2) / 0.6745;
  if (!(sigma > 0)) return 1;
  for (size_t i = 0; i < pb->n; i++)
    a[i] = r[i] / (rb->T->tuning_default * sigma);
  gsl_vector_view av = gsl_vector_view_array(a, pb->n);
  gsl_vector_view vv = gsl_vector_view_array(v, pb->n);
  if (rb->T->wfun(&av.vector, &vv.vector)) return SPY_ENOTSUP;
  if (pb->w)
    for (size_t i = 0; i < pb->n; i++) v[i] *= pb->w[i];
  return 0;
}

/* Run the reweighted method S->method through irls(). */
static int reweighted(core *c, const spyC_sopt *s, double *beta,
                      spyC_sinfo *info, double *r, double *v) {
  const spyC_prob *pb = c->pb;
  if (s->method == SPYC_ASYM)
    return irls(c, s, weigh_asym, NULL, beta, info, r, v);
  if (s->method == SPY_COST_WLS) {
    double ymean = 0;
    for (size_t i = 0; i < pb->n; i++) ymean += fabs(pb->y[i]);
    ymean /= (double)pb->n;
    double floor = fmax(ymean * 1e-3, 1e-300);
    return irls(c, s, weigh_wls, &floor, beta, info, r, v);
  }
  robust rb = {s->method == SPY_COST_HUBER ? gsl_multifit_robust_huber
                                           : gsl_multifit_robust_bisquare,
               malloc(pb->n * sizeof(double))};
  if (!rb.a) return SPY_ENOMEM;
  int rc = irls(c, s, weigh_robust, &rb, beta, info, r, v);
  free(rb.a);
  return rc;
}

/* ===================================================================
** Entry point
** =================================================================== */

int spyC_solve(const spyC_prob *pb, const spyC_sopt *s, double *beta,
               spyC_sinfo *info) {
  spyC_sinfo dummy;
  if (!info) info = &dummy;
  memset(info, 0, sizeof *info);
  if (pb->n < 1 || pb->p < 1 || pb->p > PMAX) return SPY_EINVAL;
  int m = s->method;
  if ((m == SPY_COST_MEDIAN || m == SPY_COST_QUANTILE) &&
      !(s->fast && s->warm)) {
    int rc = spyC_quantreg(pb, s->tau, s->tol, s->nonneg, beta, info,
                           s->seed);
    if (rc) {
      for (int j = 0; j < pb->p; j++) beta[j] = NAN;
      return rc == SPY_ENOMEM ? rc : SPY_ENOTSUP;
    }
    return 0;
  }
  core c = {.pb = pb, .p = pb->p};
  equilibrate(&c);
  int iterative = m == SPY_COST_MEDIAN || m == SPY_COST_QUANTILE ||
                  m == SPYC_ASYM || m == SPY_COST_WLS ||
                  m == SPY_COST_HUBER || m == SPY_COST_BISQUARE;
  int rc = 0;
  if (!iterative || !s->warm) {
    /* Least squares, which is also the starting point of the others. */
    int nonneg = s->nonneg || m == SPY_COST_NNLS;
    double ridge = m == SPY_COST_RIDGE ? s->ridge : 0;
    rc = wls_step(&c, NULL, ridge, nonneg, beta, info);
    info->converged = 1;
  }
  if (rc == 0 && iterative) {
    double *r = malloc(pb->n * sizeof *r), *v = malloc(pb->n * sizeof *v);
    unsigned clamped0 = info->clamped;
    info->converged = 0;
    if (!r || !v) rc = SPY_ENOMEM;
    else if (m == SPY_COST_MEDIAN || m == SPY_COST_QUANTILE)
      rc = newton_quantile(&c, s, beta, info, r, v);
    else rc = reweighted(&c, s, beta, info, r, v);
    if (info->iters == 0) info->clamped = clamped0;
    free(r);
    free(v);
  }
  if (rc) {
    for (int j = 0; j < pb->p; j++) beta[j] = NAN;
    return rc;
  }
  for (int j = 0; j < pb->p; j++)
    if (!isfinite(beta[j])) return SPY_ENOTSUP;
  return 0;
}

/* For the quantile and robust solvers the loss is taken on log(time /
** fit): timings are positive and their noise grows with the cost, so on
** that scale every call counts alike, and a slow call 100 times its fit
** weighs log(100), not 100 times more than the rest. Quantiles commute
** with the logarithm, so the right model still has the least loss. */
static double logratio(double y, double yhat) {
  const double floor_ns = 1e-3;
  return log(y > floor_ns ? y : floor_ns) -
         log(yhat > floor_ns ? yhat : floor_ns);
}

double spyC_loss(const spyC_sopt *s, double y, double yhat) {
  switch (s->method) {
  case SPY_COST_MEDIAN: case SPY_COST_QUANTILE: {
    double r = logratio(y, yhat);
    return r > 0 ? s->tau * r : (s->tau - 1) * r;
  }
  case SPY_COST_HUBER: case SPY_COST_BISQUARE:
    return fabs(logratio(y, yhat));
  case SPY_COST_WLS: {
    double d = fabs(yhat) > 1e-300 ? (y - yhat) / yhat : y - yhat;
    return d * d;
  }
  default:
    return (y - yhat) * (y - yhat);
  }
}

const char *spyC_loss_name(const spyC_sopt *s) {
  switch (s->method) {
  case SPY_COST_MEDIAN: return "absolute log-ratio error";
  case SPY_COST_QUANTILE: return "pinball loss of log-ratios";
  case SPY_COST_HUBER: case SPY_COST_BISQUARE:
    return "absolute log-ratio error";
  case SPY_COST_WLS: return "squared relative error";
  default: return "squared error";
  }
}
