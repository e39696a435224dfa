/*
** cost/util.c: helpers shared by the cost/ components (see util.h).
*/
#include "config.h"

#include "cost/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_randist.h>
#include <gsl/gsl_statistics_double.h>

void spyC_bvprintf(spyC_buf *b, const char *fmt, va_list ap) {
  if (b->oom) return;
  va_list ap2;
  va_copy(ap2, ap);
  int len = vsnprintf(NULL, 0, fmt, ap2);
  va_end(ap2);
  if (len < 0) return;
  if (b->n + (size_t)len + 1 > b->cap) {
    size_t cap = b->cap ? b->cap : 128;
    while (b->n + (size_t)len + 1 > cap) cap *= 2;
    char *ns = realloc(b->s, cap);
    if (!ns) {
      b->oom = 1;
      return;
    }
    b->s = ns;
    b->cap = cap;
  }
  vsnprintf(b->s + b->n, (size_t)len + 1, fmt, ap);
  b->n += (size_t)len;
}

void spyC_bprintf(spyC_buf *b, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  spyC_bvprintf(b, fmt, ap);
  va_end(ap);
}

char *spyC_btake(spyC_buf *b) {
  char *s = b->s;
  if (b->oom) {
    free(s);
    s = NULL;
  } else if (!s) {
    s = spyC_strdup("");
  }
  memset(b, 0, sizeof *b);
  return s;
}

char *spyC_strdup(const char *s) {
  size_t n = strlen(s) + 1;
  char *d = malloc(n);
  if (d) memcpy(d, s, n);
  return d;
}

const char *spyC_fmt_num(char buf[40], double v) {
  snprintf(buf, 40, "%.15g", v);
  if (strtod(buf, NULL) != v) snprintf(buf, 40, "%.17g", v);
  return buf;
}

void spyC_fput_num(FILE *f, double v) {
  char buf[40];
  fputs(spyC_fmt_num(buf, v), f);
}

/* Type 7 needs the two order statistics around (n - 1) p; GSL's
** quickselect finds each in expected O(n), rearranging X, and the second
** call works on the array the first one left nearly partitioned. */
double spyC_quantile(double *x, size_t n, double p) {
  if (n == 0) return 0.0 / 0.0;
  if (p <= 0) p = 0;
  if (p >= 1) p = 1;
  double h = (double)(n - 1) * p;
  size_t k = (size_t)h;
  double lo = gsl_stats_select(x, 1, n, k);
  if (k + 1 >= n || h == (double)k) return lo;
  double hi = gsl_stats_select(x, 1, n, k + 1);
  return lo + (h - (double)k) * (hi - lo);
}

/* Sampling without replacement is GSL's: gsl_ran_choose keeps the chosen
** K in index order (one pass over N), gsl_ran_shuffle then orders them at
** random, which the callers need to cut folds or a hold-out from the front
** of the sample. */
size_t *spyC_sample(gsl_rng *rng, size_t n, size_t k) {
  if (k > n) k = n;
  size_t *all = malloc((n ? n : 1) * sizeof *all);
  size_t *out = malloc((k ? k : 1) * sizeof *out);
  if (!all || !out) {
    free(all);
    free(out);
    return NULL;
  }
  for (size_t i = 0; i < n; i++) all[i] = i;
  if (k > 0) {
    gsl_ran_choose(rng, out, k, all, n, sizeof *all);
    gsl_ran_shuffle(rng, out, k, sizeof *out);
  }
  free(all);
  return out;
}

unsigned long spyC_seed(uint64_t seed, const char *name) {
  uint64_t h = 1469598103934665603ull ^ seed;
  for (const unsigned char *p = (const unsigned char *)name; *p; p++) {
    h ^= *p;
    h *= 1099511628211ull;
  }
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdull;
  h ^= h >> 33;
  return (unsigned long)(h ? h : 1);
}
