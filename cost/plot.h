/*
** cost/plot.h: one SVG per fitted primitive (cairo). Built into the spyon
** program only: libspyon does not link cairo.
*/
#ifndef SPY_COST_PLOT_H
#define SPY_COST_PLOT_H

#include <stddef.h>

#include <spyon/cost.h>

/* Draw fit F of data set D (measured calls, the fitted curve, the D bound,
** labelled axes) into DIR/<name>.svg (DIR/<name>.png with PNG set),
** <name> being the primitive's name made safe for a file name; the path
** goes to PATH_OUT. Returns 0, or a negative SPY_E* code with a message in
** ERR. */
int spyC_plot_svg(const spy_cost_fit *f, const spy_cost_data *d,
                  const char *dir, int png, char *path_out, size_t pathlen,
                  char *err, size_t errlen);

/* Release cairo's caches (font faces and their fontconfig patterns) once
** every plot is drawn, so that leak checkers see a clean exit. */
void spyC_plot_done(void);

#endif
