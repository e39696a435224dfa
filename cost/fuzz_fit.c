/*
** cost/fuzz_fit.c: libFuzzer target for the whole pipeline on hostile
** numbers: a CSV that loads is fitted (selection, bootstrap, bounds and
** comparisons, small sizes), written as a table, JSON and a C header.
** Built by `make fuzz`.
*/
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <spyon/cost.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size > 4096) return 0;
  spy_cost_data *d = NULL;
  char err[256];
  if (spy_cost_data_parse_csv((const char *)data, size, "fuzz.csv", &d, err,
                              sizeof err))
    return 0;
  spy_cost_options o;
  spy_cost_options_init(&o);
  o.bootstrap = 20;
  o.min_obs = 2;
  o.threads = 1;
  o.cull = 3;
  spy_cost_result *r = NULL;
  if (spy_cost_fit_data(d, &o, NULL, 0, &r, err, sizeof err) == 0) {
    FILE *f = fopen("/dev/null", "w");
    if (f) {
      spy_cost_write_table(r, f);
      spy_cost_write_json(r, f);
      spy_cost_write_csv(r, f);
      spy_cost_write_c(r, f, NULL);
      fclose(f);
    }
    for (size_t i = 0; i < r->nfits; i++) {
      double v[SPY_COST_MAXVARS] = {1, 2, 3, 4, 5, 6, 7, 8};
      (void)spy_cost_eval(&r->fits[i], 0, v);
      (void)spy_cost_eval(&r->fits[i], 1, v);
    }
    spy_cost_result_free(r);
  }
  spy_cost_data_free(d);
  return 0;
}
