/*
** cost/util.c: helpers shared by the cost/ components (see util.h).
*/
#include "config.h"

#include "cost/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

/* Hoare-style quickselect with a median-of-three pivot: expected O(n), and
** the median-of-three keeps sorted input (common: sizes written in order)
** from the quadratic case. */
double spyC_kth(double *x, size_t n, size_t k) {
  size_t lo = 0, hi = n - 1;
  while (hi > lo) {
    size_t mid = lo + (hi - lo) / 2;
    double a = x[lo], b = x[mid], c = x[hi];
    double piv = a < b ? (b < c ? b : (a < c ? c : a))
                       : (a < c ? a : (b < c ? c : b));
    size_t i = lo, j = hi;
    while (i <= j) {
      while (x[i] < piv) i++;
      while (x[j] > piv) j--;
      if (i <= j) {
        double t = x[i];
        x[i] = x[j];
        x[j] = t;
        i++;
        if (j == 0) break;
        j--;
      }
    }
    if (k <= j) hi = j;
    else if (k >= i) lo = i;
    else return x[k];
  }
  return x[k];
}

double spyC_quantile(double *x, size_t n, double p) {
  if (n == 0) return 0.0 / 0.0;
  if (p <= 0) p = 0;
  if (p >= 1) p = 1;
  double h = (double)(n - 1) * p;
  size_t k = (size_t)h;
  double lo = spyC_kth(x, n, k);
  if (k + 1 >= n || h == (double)k) return lo;
  /* The next order statistic is the minimum of the upper part. */
  double hi = x[k + 1];
  for (size_t i = k + 2; i < n; i++)
    if (x[i] < hi) hi = x[i];
  return lo + (h - (double)k) * (hi - lo);
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
