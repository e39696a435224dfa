/*
** cost/quantile.h: exact quantile regression (internal; see quantile.c).
*/
#ifndef SPY_COST_QUANTILE_H
#define SPY_COST_QUANTILE_H

#include "cost/solve.h"

/* Minimise sum_i w_i rho_tau(y_i - x_i beta), optionally with beta >= 0.
** SEED drives the subsample of the globbing preprocessing (the answer does
** not depend on it, only the time taken). TOL is the complementarity gap
** per unit of weight that ends the interior-point iteration (1e-9: exact
** to print precision; 1e-6: plenty to compare models). Returns 0,
** SPY_ENOMEM, or -1 when the design is singular. */
SPY_INTERNAL int spyC_quantreg(const spyC_prob *pb, double tau, double tol,
                               int nonneg, double *beta, spyC_sinfo *info,
                               unsigned long seed);

#endif
