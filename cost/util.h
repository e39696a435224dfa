/*
** cost/util.h: small helpers shared by the cost/ components: a growable
** string buffer, strdup without feature macros, order statistics in O(n),
** and seeding of GSL generators from a name.
*/
#ifndef SPY_COST_UTIL_H
#define SPY_COST_UTIL_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

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

/* The K-th smallest of X[0..N) (0-based), rearranging X. O(N) expected. */
SPY_INTERNAL double spyC_kth(double *x, size_t n, size_t k);

/* The P-quantile (0..1) of X[0..N), type 7 (linear interpolation between
** order statistics, as R's default), rearranging X. */
SPY_INTERNAL double spyC_quantile(double *x, size_t n, double p);

/* A 64-bit seed mixed from SEED and a name, so that every primitive gets
** its own stream and results do not depend on which others are fitted. */
SPY_INTERNAL unsigned long spyC_seed(uint64_t seed, const char *name);

#endif
