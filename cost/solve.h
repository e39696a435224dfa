/*
** cost/solve.h: the regression solvers (internal).
**
** Every solver fits beta in  y ~ X beta  for a design matrix X of n rows
** and p columns (row-major) with optional observation weights w (bootstrap
** multiplicities). The iterated ones (asymmetric, robust, WLS) are
** reweighted least squares over one weighted normal-equation core, so
** non-negativity, weights and warm starts work the same way for all of
** them; quantile regression has its exact solver in quantile.c and a
** fast one for warm starts here.
*/
#ifndef SPY_COST_SOLVE_H
#define SPY_COST_SOLVE_H

#include <stddef.h>

#include <spyon.h>
#include <spyon/cost.h>

/* Seed 002's algorithm 2: least squares with residuals above the curve
** weighted by alpha (an internal method, not a user solver). */
#define SPYC_ASYM 100

typedef struct spyC_prob {
  size_t n;
  int p;
  const double *X; /* n x p, row-major */
  const double *y;
  const double *w; /* NULL: all 1 */
} spyC_prob;

typedef struct spyC_sopt {
  int method;      /* spy_cost_solver or SPYC_ASYM */
  double tau;      /* quantile level (SPY_COST_QUANTILE, SPY_COST_MEDIAN
                      uses 0.5) */
  double ridge;    /* SPY_COST_RIDGE penalty */
  int nonneg;      /* constrain beta >= 0 */
  double alpha;    /* SPYC_ASYM: weight of residuals above the curve */
  int maxit;       /* iteration cap for the iterative methods */
  double tol;      /* relative change of beta that ends the iteration */
  int warm;        /* 1: beta holds a starting point */
  int fast;        /* with warm: quantile methods take a few Newton steps
                      on a slightly rounded check loss from the start
                      instead of the exact solver (bootstrap replicates,
                      cross-validation folds: answers near the start);
                      the iterated methods start from beta */
  unsigned long seed; /* for the quantile solver's subsampling */
  const double *band; /* fast quantile fits: per-row band half-widths from
                         spyC_band (NULL: computed from the start) */
} spyC_sopt;

typedef struct spyC_sinfo {
  int iters;
  int converged;
  int illcond;       /* singular or nearly singular normal equations */
  unsigned clamped;  /* bit k: coefficient k wanted to go negative */
} spyC_sinfo;

/* Default options for a user solver (see spy_cost_options). */
SPY_INTERNAL void spyC_sopt_init(spyC_sopt *s, const spy_cost_options *o);

/* Fit. BETA (p values) receives the solution; with s->warm it also holds
** the starting point. Returns 0, SPY_EINVAL (n < 1, p < 1 or p > 32),
** SPY_ENOMEM, or SPY_ENOTSUP when the problem is singular even after
** regularisation (beta then holds NaN). */
SPY_INTERNAL int spyC_solve(const spyC_prob *pb, const spyC_sopt *s,
                            double *beta, spyC_sinfo *info);

/* The per-row band half-widths of the fast quantile solver around BETA
** (see newton_quantile in solve.c) into BAND[0..n). Returns 0 or
** SPY_ENOMEM. Computing them once lets bootstrap replicates share them. */
SPY_INTERNAL int spyC_band(const spyC_prob *pb, const double *beta,
                           double *band);

/* Non-negative least squares  min |A x - z|, x >= 0, for a small dense
** A (m x p, row-major, m >= p): Lawson and Hanson's active-set algorithm,
** each passive-set subproblem solved with GSL's Householder QR. Returns 0
** or SPY_ENOMEM. Exposed for the tests. */
SPY_INTERNAL int spyC_nnls(const double *A, int m, int p, const double *z,
                           double *x);

/* The loss cross-validation scores a prediction with, for a method:
** squared error (least squares), squared relative error (WLS), absolute
** error (robust), pinball loss at tau (quantile, median). */
SPY_INTERNAL double spyC_loss(const spyC_sopt *s, double y, double yhat);
SPY_INTERNAL const char *spyC_loss_name(const spyC_sopt *s);

#endif
