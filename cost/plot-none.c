/*
** cost/plot-none.c: plots left out (configured without cairo). spyon costs
** --plot then ends with one clear error instead of a picture.
*/
#include "config.h"

#include <stdio.h>

#include "cost/plot.h"

int spyC_plot_svg(const spy_cost_fit *f, const spy_cost_data *d,
                  const char *dir, int png, char *path_out, size_t pathlen,
                  char *err, size_t errlen) {
  (void)f, (void)d, (void)dir, (void)png, (void)path_out, (void)pathlen;
  if (err && errlen)
    snprintf(err, errlen, "plots need cairo: this spyon was configured "
                          "without it (--with-cairo)");
  return SPY_ENOTSUP;
}

void spyC_plot_done(void) {}
