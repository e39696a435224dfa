/*
** cost/util.h: small helpers shared by the cost/ components: a growable
** string buffer, strdup without feature macros, numbers that read back
** exactly, quantiles in O(n) and sampling without replacement on GSL, and
** seeding of GSL generators from a name.
*/
#ifndef SPY_COST_UTIL_H
#define SPY_COST_UTIL_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <gsl/gsl_rng.h>

#include "spyon.h"

typedef struct spyC_buf {
  char *s;    /* NUL-terminated once anything was written */
  size_t n;   /* length without the NUL */
  size_t cap;
  int oom;    /* set when an allocation failed; later writes are dropped */
} spyC_buf;

/* Append printf-style text; on allocation failure sets b->oom. */
SPY_INTERNAL void spyC_bprintf(spyC_buf *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
SPY_INTERNAL void spyC_bvprintf(spyC_buf *b, const char *fmt, va_list ap);

/* Take the buffer's string (caller frees); NULL if it ran out of memory. */
SPY_INTERNAL char *spyC_btake(spyC_buf *b);

SPY_INTERNAL char *spyC_strdup(const char *s);

/* V as the shorter of %.15g and %.17g that reads back as the same double
** (the CSV and JSON writers' numbers, a model's constants), in BUF. */
SPY_INTERNAL const char *spyC_fmt_num(char buf[40], double v);

/* The same written to F. */
SPY_INTERNAL void spyC_fput_num(FILE *f, double v);

/* The P-quantile (0..1) of X[0..N), type 7 (linear interpolation between
** order statistics, as R's default), rearranging X. */
SPY_INTERNAL double spyC_quantile(double *x, size_t n, double p);

/* K distinct indices of [0, N) drawn uniformly, in random order (K is
** capped at N): a malloc'd array the caller frees, NULL when out of
** memory. */
SPY_INTERNAL size_t *spyC_sample(gsl_rng *rng, size_t n, size_t k);

/* A 64-bit seed mixed from SEED and a name, so that every primitive gets
** its own stream and results do not depend on which others are fitted. */
SPY_INTERNAL unsigned long spyC_seed(uint64_t seed, const char *name);

#endif
