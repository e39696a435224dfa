/*
** cost/fromprofile.c: a profile's cost observations as a data set, and the
** fitted model written back beside each primitive for reports.
*/
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <spyon/profile.h>

#include "cost/data.h"
#include "cost/fit.h"
#include "cost/util.h"

int spy_cost_data_from_profile(const spy_profile *p, spy_cost_data **out,
                               char *err, size_t errlen) {
  if (!p || !out) return SPY_EINVAL;
  *out = NULL;
  spy_cost_data *d = spy_cost_data_new();
  if (!d) return SPY_ENOMEM;
  int rc = 0;
  for (size_t i = 0; i < p->nprims && rc == 0; i++) {
    const spy_profile_prim *pp = &p->prims[i];
    if (pp->nobs == 0 || !pp->obs) continue;
    unsigned ns = pp->nsizes > 4 ? 4 : pp->nsizes;
    const char *names[4];
    char fallback[4][8];
    for (unsigned v = 0; v < ns; v++) {
      const char *nm = pp->size_names[v];
      /* Size names become variables of model expressions. */
      if (!nm || !spyC_is_ident(nm, strlen(nm)) || strcmp(nm, "gc") == 0) {
        snprintf(fallback[v], sizeof fallback[v], "s%u", v + 1);
        nm = fallback[v];
      }
      names[v] = nm;
    }
    int anygc = 0;
    for (size_t k = 0; k < pp->nobs && !anygc; k++) anygc = pp->obs[k].gc > 0;
    const char *gc = "gc";
    int id = spy_cost_data_add_prim(d, pp->name, ns, names, anygc ? 1 : 0,
                                    &gc);
    if (id == SPY_EINVAL) {
      /* Duplicate size names: fall back to s1..s4. */
      for (unsigned v = 0; v < ns; v++) {
        snprintf(fallback[v], sizeof fallback[v], "s%u", v + 1);
        names[v] = fallback[v];
      }
      id = spy_cost_data_add_prim(d, pp->name, ns, names, anygc ? 1 : 0,
                                  &gc);
    }
    if (id == SPY_EEXIST) continue; /* same name twice: keep the first */
    if (id < 0) {
      rc = id;
      break;
    }
    d->prim[id].src = i;
    for (size_t k = 0; k < pp->nobs && rc == 0; k++) {
      double v[5];
      for (unsigned j = 0; j < ns; j++) v[j] = (double)pp->obs[k].size[j];
      v[ns] = (double)pp->obs[k].gc;
      rc = spyC_data_push(d, (size_t)id, v, (double)pp->obs[k].ns, 0);
    }
  }
  if (rc) {
    if (err && errlen) snprintf(err, errlen, "%s", spy_strerror(rc));
    spy_cost_data_free(d);
    return rc;
  }
  d->source = spyC_strdup(p->command && *p->command ? p->command
                                                    : "profile");
  *out = d;
  return 0;
}

int spy_cost_annotate_profile(spy_profile *p, const spy_cost_options *o) {
  if (!p) return SPY_EINVAL;
  spy_cost_options def;
  if (!o) {
    /* Reports only need the model: no intervals, no comparisons. */
    spy_cost_options_init(&def);
    def.bootstrap = 0;
    def.compare = 0;
    o = &def;
  }
  spy_cost_data *d;
  int rc = spy_cost_data_from_profile(p, &d, NULL, 0);
  if (rc) return rc;
  spy_cost_result *r;
  rc = spy_cost_fit_data(d, o, NULL, 0, &r, NULL, 0);
  if (rc) {
    spy_cost_data_free(d);
    return rc;
  }
  int n = 0;
  for (size_t i = 0; i < r->nfits; i++) {
    const spy_cost_fit *f = &r->fits[i];
    size_t src = d->prim[f->prim].src;
    if (f->status || !f->fitted || src >= p->nprims) continue;
    spyC_buf b = {0};
    spyC_bprintf(&b, "%s ns", f->fitted);
    /* R^2 < 0: the model predicts worse than the mean time would; say so
    ** beside it rather than let it pass for a cost. A constant (the
    ** median: the time does not follow the sizes) claims no fit to judge:
    ** with skewed times its R^2 is just below 0, and the caveat read as if
    ** every such primitive's figure were wrong. */
    if (f->family && !strcmp(f->family, "const")) {
      if (p->prims[src].nsizes)
        spyC_bprintf(&b, "  (constant: no dependence on the sizes found)");
    }
    else if (f->r2 < 0)
      spyC_bprintf(&b, "  (R^2 %.2f < 0: worse than the mean; not a "
                       "usable model)", f->r2);
    char *text = spyC_btake(&b);
    if (!text) {
      rc = SPY_ENOMEM;
      break;
    }
    free(p->prims[src].model);
    p->prims[src].model = text;
    n++;
  }
  spy_cost_result_free(r);
  spy_cost_data_free(d);
  return rc ? rc : n;
}
