/*
** cost/bootstrap.h: uncertainty of fitted coefficients (internal).
*/
#ifndef SPY_COST_BOOTSTRAP_H
#define SPY_COST_BOOTSTRAP_H

#include <gsl/gsl_rng.h>

#include "cost/models.h"
#include "cost/solve.h"

/* Percentile intervals at LEVEL for the coefficients BETA fitted to D:
** the pairs bootstrap with B replicates, on all rows of D when it has at
** most BOOT_ROWS, else on a random BOOT_ROWS of them with the deviations
** scaled by sqrt(m/n). Replicates start from BETA; quantile replicates use
** the fast solver and are read relative to its answer on the unresampled
** rows. Returns 0 or SPY_ENOMEM; LO/HI get NaN where replicates failed. */
SPY_INTERNAL int spyC_bootstrap(const spyC_design *d, const spyC_sopt *so,
                                const double *beta, unsigned B,
                                size_t boot_rows, double level,
                                gsl_rng *rng, double *lo, double *hi);

#endif
