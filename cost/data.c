/*
** cost/data.c: spy_cost_data, the observation store (see cost/data.h).
*/
#include "config.h"

#include "cost/data.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cost/util.h"

spy_cost_data *spy_cost_data_new(void) {
  return calloc(1, sizeof(spy_cost_data));
}

void spy_cost_data_free(spy_cost_data *d) {
  if (!d) return;
  for (size_t i = 0; i < d->n; i++) {
    spyC_prim *p = &d->prim[i];
    free(p->name);
    for (unsigned v = 0; v < p->nvars; v++) free(p->var[v]);
    free(p->x);
    free(p->t);
    free(p->line);
  }
  free(d->prim);
  free(d->source);
  free(d->hash);
  free(d);
}

int spyC_is_ident(const char *s, size_t len) {
  if (len == 0 || !(isalpha((unsigned char)s[0]) || s[0] == '_')) return 0;
  for (size_t i = 1; i < len; i++)
    if (!(isalnum((unsigned char)s[i]) || s[i] == '_')) return 0;
  return 1;
}

static size_t hash_name(const char *s, size_t len) {
  size_t h = 5381;
  for (size_t i = 0; i < len; i++) h = h * 33 + (unsigned char)s[i];
  return h;
}

long spyC_data_find(const spy_cost_data *d, const char *name, size_t len) {
  if (!d->hcap) return -1;
  for (size_t h = hash_name(name, len) & (d->hcap - 1);;
       h = (h + 1) & (d->hcap - 1)) {
    size_t k = d->hash[h];
    if (!k) return -1;
    const char *pn = d->prim[k - 1].name;
    if (strlen(pn) == len && memcmp(pn, name, len) == 0) return (long)(k - 1);
  }
}

/* Index the newest primitive, growing the table to keep it at most half
** full so that probes stay short. */
static int rehash(spy_cost_data *d) {
  size_t cap = d->hcap ? d->hcap : 16;
  while (cap < 2 * (d->n + 1)) cap *= 2;
  if (cap == d->hcap) {
    const char *pn = d->prim[d->n - 1].name;
    size_t k = hash_name(pn, strlen(pn)) & (cap - 1);
    while (d->hash[k]) k = (k + 1) & (cap - 1);
    d->hash[k] = d->n;
    return 0;
  }
  size_t *h = calloc(cap, sizeof *h);
  if (!h) return SPY_ENOMEM;
  for (size_t i = 0; i < d->n; i++) {
    const char *pn = d->prim[i].name;
    size_t k = hash_name(pn, strlen(pn)) & (cap - 1);
    while (h[k]) k = (k + 1) & (cap - 1);
    h[k] = i + 1;
  }
  free(d->hash);
  d->hash = h;
  d->hcap = cap;
  return 0;
}

int spy_cost_data_add_prim(spy_cost_data *d, const char *name,
                           unsigned nsizes, const char *const *size_names,
                           unsigned nextra, const char *const *extra_names) {
  if (!d || !name || !*name || nsizes + nextra > SPY_COST_MAXVARS ||
      (nsizes && !size_names) || (nextra && !extra_names))
    return SPY_EINVAL;
  const char *names[SPY_COST_MAXVARS];
  for (unsigned v = 0; v < nsizes + nextra; v++) {
    names[v] = v < nsizes ? size_names[v] : extra_names[v - nsizes];
    if (!names[v] || !spyC_is_ident(names[v], strlen(names[v])))
      return SPY_EINVAL;
    for (unsigned w = 0; w < v; w++)
      if (strcmp(names[w], names[v]) == 0) return SPY_EINVAL;
  }
  if (spyC_data_find(d, name, strlen(name)) >= 0) return SPY_EEXIST;
  if (d->n == d->cap) {
    size_t cap = d->cap ? 2 * d->cap : 8;
    spyC_prim *np = realloc(d->prim, cap * sizeof *np);
    if (!np) return SPY_ENOMEM;
    d->prim = np;
    d->cap = cap;
  }
  spyC_prim *p = &d->prim[d->n];
  memset(p, 0, sizeof *p);
  p->src = (size_t)-1;
  p->nsizes = nsizes;
  p->name = spyC_strdup(name);
  int oom = !p->name;
  for (unsigned v = 0; v < nsizes + nextra; v++) {
    p->var[v] = spyC_strdup(names[v]);
    p->nvars = v + 1;
    oom |= !p->var[v];
  }
  d->n++;
  if (oom || rehash(d) < 0) {
    d->n--;
    free(p->name);
    for (unsigned v = 0; v < p->nvars; v++) free(p->var[v]);
    return SPY_ENOMEM;
  }
  return (int)(d->n - 1);
}

int spyC_data_push(spy_cost_data *d, size_t prim, const double *vars,
                   double ns, uint32_t line) {
  spyC_prim *p = &d->prim[prim];
  if (p->n == p->cap) {
    size_t cap = p->cap ? 2 * p->cap : 64;
    double *nx = realloc(p->x, cap * (p->nvars ? p->nvars : 1) * sizeof *nx);
    if (!nx) return SPY_ENOMEM;
    p->x = nx;
    double *nt = realloc(p->t, cap * sizeof *nt);
    if (!nt) return SPY_ENOMEM;
    p->t = nt;
    if (line || p->line) {
      uint32_t *nl = realloc(p->line, cap * sizeof *nl);
      if (!nl) return SPY_ENOMEM;
      if (!p->line) memset(nl, 0, p->n * sizeof *nl);
      p->line = nl;
    }
    p->cap = cap;
  } else if (line && !p->line) {
    p->line = calloc(p->cap, sizeof *p->line);
    if (!p->line) return SPY_ENOMEM;
  }
  if (p->nvars) memcpy(p->x + p->n * p->nvars, vars, p->nvars * sizeof *vars);
  p->t[p->n] = ns;
  if (p->line) p->line[p->n] = line;
  p->n++;
  return 0;
}

int spy_cost_data_add_obs(spy_cost_data *d, int prim, const double *vars,
                          double ns) {
  if (!d || prim < 0 || (size_t)prim >= d->n || !isfinite(ns) || ns < 0)
    return SPY_EINVAL;
  const spyC_prim *p = &d->prim[prim];
  if (p->nvars && !vars) return SPY_EINVAL;
  for (unsigned v = 0; v < p->nvars; v++)
    if (!isfinite(vars[v])) return SPY_EINVAL;
  return spyC_data_push(d, (size_t)prim, vars, ns, 0);
}

size_t spy_cost_data_nprims(const spy_cost_data *d) {
  return d ? d->n : 0;
}

const char *spy_cost_data_prim_name(const spy_cost_data *d, size_t i) {
  return d && i < d->n ? d->prim[i].name : NULL;
}

size_t spy_cost_data_prim_nobs(const spy_cost_data *d, size_t i) {
  return d && i < d->n ? d->prim[i].n : 0;
}
