/*
** cost/dconf.h: D-confidence upper bounds (seed 002), internal.
*/
#ifndef SPY_COST_DCONF_H
#define SPY_COST_DCONF_H

#include <gsl/gsl_rng.h>

#include "cost/models.h"
#include "cost/solve.h"

enum { SPYC_BOUND_QUANTILE, SPYC_BOUND_SHIFT, SPYC_BOUND_ASYM };

typedef struct spyC_bound {
  int ok;
  double beta[SPYC_MAXCOEF]; /* the bound's coefficients (shift folded into
                                the intercept when there is one) */
  double shift;              /* added to the model when it has no
                                intercept (algorithm 1) */
  double param;              /* shift (ns) or alpha */
  double coverage, train_coverage;
  size_t ntrain, ntest;
} spyC_bound;

/* Fit upper bounds that a fraction D of calls stay under, on the model BM
** (sizes only), for primitive P: a random HOLDOUT fraction of the calls is
** set aside (at most BOUND_ROWS of the rest train), the bounds are fitted
** on the training calls and their coverage is measured on the held-out
** ones. OUT[SPYC_BOUND_QUANTILE] is quantile regression at D;
** with COMPARE, also seed 002's algorithm 1 (least squares shifted by the
** D-quantile of its residuals) and algorithm 2 (least squares with
** residuals above the curve weighted by alpha, alpha searched until D of
** the training calls are under the curve), both on at most 10000 of the
** training calls. NONNEG constrains the
** quantile bound's coefficients. Returns 0, SPY_ENOMEM or SPY_EFORMAT
** (model undefined on the data). */
SPY_INTERNAL int spyC_dconf(const spyC_prim *p, const spyC_model *bm,
                            double D, double holdout, size_t bound_rows,
                            int compare, int nonneg, unsigned long seed,
                            gsl_rng *rng, spyC_bound out[3]);

#endif
