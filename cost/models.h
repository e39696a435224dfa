/*
** cost/models.h: built-in model families and design matrices (internal).
*/
#ifndef SPY_COST_MODELS_H
#define SPY_COST_MODELS_H

#include <stddef.h>

#include "cost/data.h"
#include "cost/expr.h"

typedef struct spyC_family {
  const char *name;  /* as in --families, e.g. "nlogn" */
  const char *label; /* for people, e.g. "n log n" */
  int arity;         /* 0: any primitive; 1: exactly one size; 2: two or
                        more sizes */
} spyC_family;

/* The table of families, in the order they are listed. */
SPY_INTERNAL const spyC_family *spyC_families(size_t *n);

/* Family by name, or NULL. */
SPY_INTERNAL const spyC_family *spyC_family_find(const char *name);

/* The expression of family F over the size names SIZES[0..NSIZES), or NULL
** when it does not apply to that many sizes (or, for "piecewise", when no
** breakpoints are given) or memory ran out. Malloc'd. */
SPY_INTERNAL char *spyC_family_expr(const spyC_family *f,
                                    const char *const *sizes,
                                    unsigned nsizes, const double *breaks,
                                    size_t nbreaks);

/* EXPR plus "c_NAME*NAME" for each extra predictor of P that EXPR does not
** already mention and whose bit (variable index) is set in VARYING: a
** predictor that never changes (gc always 0) cannot be told from the
** intercept. Malloc'd. */
SPY_INTERNAL char *spyC_add_extras(const char *expr, const spyC_prim *p,
                                   unsigned varying);

/* A design matrix: row i holds the basis values of observation rows[i],
** y[i] its duration minus the model's coefficient-free part. */
typedef struct spyC_design {
  size_t n;
  int p;
  double *X;
  double *y;
} spyC_design;

/* Build the design of model M for the rows ROWS[0..N) of P (ROWS NULL: all
** rows, N ignored). Returns 0, SPY_ENOMEM, or SPY_EFORMAT when the model
** is undefined at a row (*BAD receives its index in P). */
SPY_INTERNAL int spyC_design_build(const spyC_model *m, const spyC_prim *p,
                                   const size_t *rows, size_t n,
                                   spyC_design *d, size_t *bad);
SPY_INTERNAL void spyC_design_free(spyC_design *d);

/* Index of the coefficient whose basis is the constant 1 (the intercept),
** or -1. */
SPY_INTERNAL int spyC_model_intercept(const spyC_model *m);

#endif
