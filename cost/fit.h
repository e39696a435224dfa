/*
** cost/fit.h: what a spy_cost_fit keeps privately (internal), for the
** output, codegen and plot components.
*/
#ifndef SPY_COST_FIT_H
#define SPY_COST_FIT_H

#include "cost/dconf.h"
#include "cost/expr.h"

typedef struct spyC_fitpriv {
  spyC_model m;                   /* the typical model */
  double beta[SPYC_MAXCOEF];
  int has_bound;
  spyC_model bm;                  /* the bound's model (sizes only) */
  spyC_bound bound[3];
  char *var[SPY_COST_MAXVARS];
  double mean[SPY_COST_MAXVARS];  /* of each variable over the calls */
  double lo[SPY_COST_MAXVARS], hi[SPY_COST_MAXVARS]; /* their range */
  char *strings[64];              /* every string the public struct shows */
  int nstrings;
} spyC_fitpriv;

#define SPYC_PRIV(f) ((spyC_fitpriv *)(f)->priv_)

/* Evaluate a bound (0: quantile, 1: shift, 2: asymmetric) at VARS. */
SPY_INTERNAL double spyC_bound_eval(const spy_cost_fit *f, int k,
                                    const double *vars);

#endif
