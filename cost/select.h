/*
** cost/select.h: choosing a model by k-fold cross-validation (internal).
*/
#ifndef SPY_COST_SELECT_H
#define SPY_COST_SELECT_H

#include <gsl/gsl_rng.h>

#include "cost/models.h"
#include "cost/solve.h"

typedef struct spyC_cand {
  const char *family;  /* family name or "user" */
  char *text;          /* expression with coefficient names (owned) */
  spyC_model m;
  int ok;              /* parsed, defined on the data, not singular */
  double loss, se;     /* cross-validated loss per call, its std. error */
} spyC_cand;

/* Score every candidate with ok set by K-fold cross-validation on a random
** subsample of at most SELECT_ROWS rows of P (the same folds for all), and
** return the index of the choice: the candidate with the fewest
** coefficients among those within one standard error of the best loss
** (ties: lower loss). Candidates that cannot be fitted get ok = 0.
** Returns -1 when none can, or SPY_ENOMEM (as a negative below -1). */
SPY_INTERNAL int spyC_select(const spyC_prim *p, spyC_cand *c, size_t nc,
                             unsigned folds, size_t select_rows,
                             const spyC_sopt *so, gsl_rng *rng);

#endif
