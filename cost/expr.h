/*
** cost/expr.h: the model expression language (internal to cost/).
**
** A model is text such as "c0 + c1*a*b + c2*log2(a+1)". Names that are
** variables (columns of the data) are sizes; any other name that starts
** with 'c' is an unknown coefficient. The parser checks that the model is
** linear in its coefficients and splits it into
**
**     f(x) = offset(x) + sum_k c_k * basis_k(x)
**
** where offset and every basis are coefficient-free expression trees,
** compiled to small postfix programs so that a design matrix of a million
** rows is built quickly. Everything lives in one node array, so a parsed
** model is freed in one call and malformed text can never leak.
*/
#ifndef SPY_COST_EXPR_H
#define SPY_COST_EXPR_H

#include <stddef.h>

#include "spyon.h"

enum spyC_op {
  SPYC_NUM, SPYC_VAR, SPYC_COEF, SPYC_ADD, SPYC_SUB, SPYC_MUL, SPYC_DIV,
  SPYC_NEG, SPYC_POW, SPYC_LOG2, SPYC_SQRT, SPYC_MAX, SPYC_MIN
};

/* Limits that keep hostile text cheap to reject. */
#define SPYC_MAXCOEF 32
#define SPYC_MAXNODE 4096
#define SPYC_MAXDEPTH 64
#define SPYC_MAXTEXT 4096

typedef struct spyC_node {
  unsigned char op;
  unsigned char dep; /* 1 when the subtree mentions a coefficient */
  int a, b;          /* children, -1 when absent */
  int index;         /* SPYC_VAR: variable index; SPYC_COEF: coefficient */
  int col;           /* 1-based column in the source text, 0 if made up */
  double num;        /* SPYC_NUM: value; SPYC_POW: the constant exponent */
} spyC_node;

typedef struct spyC_ins {
  unsigned char op;
  int index;
  double num;
} spyC_ins;

typedef struct spyC_prog {
  int n, depth;
  spyC_ins *ins;
} spyC_prog;

typedef struct spyC_model {
  char *text;            /* normalised source text (malloc'd) */
  spyC_node *node;
  int nnode, cap, root;
  int nvar;              /* number of variables the caller named */
  int ncoef;
  char *coef[SPYC_MAXCOEF];   /* names in order of first appearance */
  int basis[SPYC_MAXCOEF];    /* coefficient-free tree of each basis */
  int offset;                 /* coefficient-free part, -1 if none */
  spyC_prog prog[SPYC_MAXCOEF], offprog;
  int maxdepth;               /* largest program stack depth */
} spyC_model;

/* Parse TEXT against the variable names VARS[0..NVARS). On success returns
** 0 and fills *M (free with spyC_model_free). On error returns SPY_EINVAL,
** writes a message to ERR and the 1-based column of the fault to *ERRCOL,
** and leaves *M empty. */
SPY_INTERNAL int spyC_model_parse(spyC_model *m, const char *text,
                                  const char *const *vars, int nvars,
                                  int *errcol, char *err, size_t errlen);
SPY_INTERNAL void spyC_model_free(spyC_model *m);

/* Deep copy (0 or SPY_ENOMEM). */
SPY_INTERNAL int spyC_model_copy(spyC_model *dst, const spyC_model *src);

/* Evaluate the basis functions at the variable values X: G[k] for each
** coefficient and *OFF for the offset. Returns 0, or -1 when a value is not
** finite (log2 of 0, division by 0, ...). STACK has room for maxdepth. */
SPY_INTERNAL int spyC_model_basis(const spyC_model *m, const double *x,
                                  double *g, double *off, double *stack);

/* The model's value at X with coefficients BETA (NaN if undefined). */
SPY_INTERNAL double spyC_model_eval(const spyC_model *m, const double *beta,
                                    const double *x);

/* Print the model as text: coefficient names when BETA is NULL, otherwise
** their values with SIG significant digits. VARS names the variables.
** Returns a malloc'd string or NULL. */
SPY_INTERNAL char *spyC_model_print(const spyC_model *m, const double *beta,
                                    int sig, const char *const *vars);

/* Print one coefficient-free subtree (for codegen comments and plot axis
** labels). */
SPY_INTERNAL char *spyC_tree_print(const spyC_model *m, int node,
                                   const char *const *vars);

/* Whether the model mentions variable V. */
SPY_INTERNAL int spyC_model_uses(const spyC_model *m, int v);

/* Coefficient index by name, or -1. */
SPY_INTERNAL int spyC_model_coef(const spyC_model *m, const char *name);

#endif
