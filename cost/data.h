/*
** cost/data.h: the observation store behind spy_cost_data (internal).
**
** Observations are kept per primitive in row-major arrays (the variables
** of one call side by side, then its duration), which is the order in
** which the design matrices are built.
*/
#ifndef SPY_COST_DATA_H
#define SPY_COST_DATA_H

#include <stddef.h>
#include <stdint.h>

#include <spyon.h>
#include <spyon/cost.h>

typedef struct spyC_prim {
  char *name;
  unsigned nsizes, nvars;        /* sizes first, then extra predictors */
  char *var[SPY_COST_MAXVARS];
  size_t n, cap;
  double *x;                     /* n rows of nvars values */
  double *t;                     /* n durations, ns */
  uint32_t *line;                /* source line of each row, or NULL */
  size_t src;                    /* index in the source profile */
} spyC_prim;

struct spy_cost_data {
  size_t n, cap;
  spyC_prim *prim;
  char *source;                  /* file name, or NULL */
  size_t *hash;                  /* open addressing: index + 1, 0 = free */
  size_t hcap;
};

/* Index of the primitive called NAME[0..LEN), or -1. */
SPY_INTERNAL long spyC_data_find(const spy_cost_data *d, const char *name,
                                 size_t len);

/* Append a row with its source line (0 when none). */
SPY_INTERNAL int spyC_data_push(spy_cost_data *d, size_t prim,
                                const double *vars, double ns,
                                uint32_t line);

/* Whether NAME is an identifier usable in model expressions. */
SPY_INTERNAL int spyC_is_ident(const char *name, size_t len);

#endif
