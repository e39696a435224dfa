/*
** cost/models.c: the built-in model families and design matrices.
**
** Every family is an ordinary model expression written over the
** primitive's own size names, so what is fitted, printed, exported as JSON
** and compiled to C is one and the same text. Logarithms take log2(n + 1)
** so that a size of 0 is defined.
*/
#include "config.h"

#include "cost/models.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cost/util.h"

static const spyC_family families[] = {
  {"const", "constant", 0},
  {"linear", "n", 1},
  {"log", "log n", 1},
  {"nlogn", "n log n", 1},
  {"quadratic", "n^2", 1},
  {"karatsuba", "n^1.585", 1},
  {"piecewise", "piecewise linear", 1},
  {"sum", "a+b", 2},
  {"product", "a*b", 2},
  {"max", "max(a,b)", 2},
  {"min", "min(a,b)", 2},
  {"sumlog", "(a+b) log(a+b)", 2},
  {"bilinear", "c1*a + c2*b", 2},
  {"karatsuba2", "max(a,b)*min(a,b)^0.585", 2},
};

const spyC_family *spyC_families(size_t *n) {
  *n = sizeof families / sizeof families[0];
  return families;
}

const spyC_family *spyC_family_find(const char *name) {
  for (size_t i = 0; i < sizeof families / sizeof families[0]; i++)
    if (strcmp(families[i].name, name) == 0) return &families[i];
  return NULL;
}

/* "a + b + c" or "a*b*c" (JOIN between the names). */
static void join(spyC_buf *b, const char *const *v, unsigned n,
                 const char *sep) {
  for (unsigned i = 0; i < n; i++)
    spyC_bprintf(b, "%s%s", i ? sep : "", v[i]);
}

/* Nested binary max/min over the names. */
static void nest(spyC_buf *b, const char *fn, const char *const *v,
                 unsigned n) {
  spyC_bprintf(b, "%s(", fn);
  join(b, v, n, ", ");
  spyC_bprintf(b, ")");
}

char *spyC_family_expr(const spyC_family *f, const char *const *v,
                       unsigned nsizes, const double *breaks,
                       size_t nbreaks) {
  if (f->arity == 1 && nsizes != 1) return NULL;
  if (f->arity == 2 && nsizes < 2) return NULL;
  spyC_buf b = {0};
  const char *n = nsizes ? v[0] : "";
  const char *name = f->name;
  if (strcmp(name, "const") == 0) {
    spyC_bprintf(&b, "c0");
  } else if (strcmp(name, "linear") == 0) {
    spyC_bprintf(&b, "c0 + c1*%s", n);
  } else if (strcmp(name, "log") == 0) {
    spyC_bprintf(&b, "c0 + c1*log2(%s + 1)", n);
  } else if (strcmp(name, "nlogn") == 0) {
    spyC_bprintf(&b, "c0 + c1*%s*log2(%s + 1)", n, n);
  } else if (strcmp(name, "quadratic") == 0) {
    spyC_bprintf(&b, "c0 + c1*%s^2", n);
  } else if (strcmp(name, "karatsuba") == 0) {
    spyC_bprintf(&b, "c0 + c1*%s^1.585", n);
  } else if (strcmp(name, "piecewise") == 0) {
    if (!nbreaks) return NULL;
    spyC_bprintf(&b, "c0 + c1*%s", n);
    for (size_t k = 0; k < nbreaks; k++)
      spyC_bprintf(&b, " + c%zu*max(%s - %.15g, 0)", k + 2, n, breaks[k]);
  } else if (strcmp(name, "sum") == 0) {
    spyC_bprintf(&b, "c0 + c1*(");
    join(&b, v, nsizes, " + ");
    spyC_bprintf(&b, ")");
  } else if (strcmp(name, "product") == 0) {
    spyC_bprintf(&b, "c0 + c1*");
    join(&b, v, nsizes, "*");
  } else if (strcmp(name, "max") == 0 || strcmp(name, "min") == 0) {
    spyC_bprintf(&b, "c0 + c1*");
    nest(&b, name, v, nsizes);
  } else if (strcmp(name, "sumlog") == 0) {
    spyC_bprintf(&b, "c0 + c1*(");
    join(&b, v, nsizes, " + ");
    spyC_bprintf(&b, ")*log2(");
    join(&b, v, nsizes, " + ");
    spyC_bprintf(&b, " + 1)");
  } else if (strcmp(name, "karatsuba2") == 0) {
    /* Karatsuba on unequal operands: max * min^0.585 (two sizes only). */
    if (nsizes != 2) return NULL;
    spyC_bprintf(&b, "c0 + c1*max(%s, %s)*min(%s, %s)^0.585", v[0], v[1],
                 v[0], v[1]);
  } else if (strcmp(name, "bilinear") == 0) {
    spyC_bprintf(&b, "c0");
    for (unsigned i = 0; i < nsizes; i++)
      spyC_bprintf(&b, " + c%u*%s", i + 1, v[i]);
  } else {
    return NULL;
  }
  return spyC_btake(&b);
}

/* Whether NAME occurs in TEXT as a whole identifier. */
static int mentions(const char *text, const char *name) {
  size_t len = strlen(name);
  for (const char *p = strstr(text, name); p; p = strstr(p + 1, name)) {
    int before = p > text && (p[-1] == '_' || (p[-1] >= '0' && p[-1] <= '9') ||
                              ((p[-1] | 32) >= 'a' && (p[-1] | 32) <= 'z'));
    char c = p[len];
    int after = c == '_' || (c >= '0' && c <= '9') ||
                ((c | 32) >= 'a' && (c | 32) <= 'z');
    if (!before && !after) return 1;
  }
  return 0;
}

char *spyC_add_extras(const char *expr, const spyC_prim *p,
                      unsigned varying) {
  spyC_buf b = {0};
  spyC_bprintf(&b, "%s", expr);
  for (unsigned v = p->nsizes; v < p->nvars; v++)
    if ((varying >> v & 1) && !mentions(expr, p->var[v]))
      spyC_bprintf(&b, " + c_%s*%s", p->var[v], p->var[v]);
  return spyC_btake(&b);
}

int spyC_design_build(const spyC_model *m, const spyC_prim *p,
                      const size_t *rows, size_t n, spyC_design *d,
                      size_t *bad) {
  if (!rows) n = p->n;
  int np = m->ncoef;
  d->n = n;
  d->p = np;
  d->X = malloc((n ? n : 1) * (size_t)np * sizeof *d->X);
  d->y = malloc((n ? n : 1) * sizeof *d->y);
  if (!d->X || !d->y) {
    spyC_design_free(d);
    return SPY_ENOMEM;
  }
  double stack[4 * SPYC_MAXDEPTH + 16];
  for (size_t i = 0; i < n; i++) {
    size_t r = rows ? rows[i] : i;
    double off;
    if (spyC_model_basis(m, p->x + r * p->nvars, d->X + i * (size_t)np,
                         &off, stack) < 0) {
      if (bad) *bad = r;
      spyC_design_free(d);
      return SPY_EFORMAT;
    }
    d->y[i] = p->t[r] - off;
  }
  return 0;
}

void spyC_design_free(spyC_design *d) {
  free(d->X);
  free(d->y);
  d->X = d->y = NULL;
  d->n = 0;
}

int spyC_model_intercept(const spyC_model *m) {
  for (int k = 0; k < m->ncoef; k++) {
    const spyC_node *n = &m->node[m->basis[k]];
    if (n->op == SPYC_NUM && n->num == 1) return k;
  }
  return -1;
}
