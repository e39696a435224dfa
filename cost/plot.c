/*
** cost/plot.c: an SVG per primitive with cairo: the measured calls, the
** fitted typical-cost curve and the D bound, on axes labelled with units.
**
** What goes on the x axis depends on the model: the size itself when the
** model has one size variable; the model's one size term (a*b, say) when
** it has one, so the fit is a straight line; otherwise the fitted time,
** with the measured time against it. Axes that span more than two decades
** are logarithmic, which is what timings over sizes usually need.
*/
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cairo-svg.h>
#include <cairo.h>
#include <dlfcn.h>

#include "cost/data.h"
#include "cost/fit.h"
#include "cost/models.h"
#include "cost/plot.h"
#include "profile/atomic.h"
#include "cost/util.h"

#define W 900.0
#define H 580.0
#define ML 96.0  /* margins of the plotting area */
#define MR 28.0
#define MT 78.0
#define MB 64.0
#define MAXPTS 5000

typedef struct axis {
  double lo, hi;
  int log;
} axis;

static double amap(const axis *a, double v) {
  if (a->log)
    return (log10(v) - log10(a->lo)) / (log10(a->hi) - log10(a->lo));
  return (v - a->lo) / (a->hi - a->lo);
}

static double px(const axis *a, double v) {
  return ML + amap(a, v) * (W - ML - MR);
}

static double py(const axis *a, double v) {
  return H - MB - amap(a, v) * (H - MT - MB);
}

/* Choose a range (and log scale when it spans more than two decades). */
static void axis_fit(axis *a, double lo, double hi) {
  if (!(hi > lo)) {
    double d = fabs(lo) > 0 ? fabs(lo) * 0.1 : 1;
    lo -= d;
    hi += d;
  }
  a->log = lo > 0 && hi / lo > 100;
  if (a->log) {
    a->lo = lo / 1.3;
    a->hi = hi * 1.3;
  } else {
    double pad = (hi - lo) * 0.05;
    a->lo = lo >= 0 && lo - pad < 0 ? 0 : lo - pad;
    a->hi = hi + pad;
  }
}

/* Tick labels: 1, 20, 500, 10k, 2M, 1e+09. */
static void tick_label(char *out, size_t len, double v) {
  double a = fabs(v);
  if (a == 0) snprintf(out, len, "0");
  else if (a >= 1e9 || a < 1e-3) snprintf(out, len, "%.0e", v);
  else if (a >= 1e6) snprintf(out, len, "%gM", v / 1e6);
  else if (a >= 1e4) snprintf(out, len, "%gk", v / 1e3);
  else snprintf(out, len, "%g", v);
}

static void text_at(cairo_t *cr, double x, double y, const char *s,
                    double align) {
  cairo_text_extents_t te;
  cairo_text_extents(cr, s, &te);
  cairo_move_to(cr, x - align * te.x_advance, y);
  cairo_show_text(cr, s);
}

/* A time tick in its own unit: 500 ns, 1 µs, 20 ms. */
static void time_label(char *out, size_t len, double ns) {
  double a = fabs(ns);
  if (a == 0) snprintf(out, len, "0");
  else if (a >= 1e9) snprintf(out, len, "%g s", ns / 1e9);
  else if (a >= 1e6) snprintf(out, len, "%g ms", ns / 1e6);
  else if (a >= 1e3) snprintf(out, len, "%g \xc2\xb5s", ns / 1e3);
  else snprintf(out, len, "%g ns", ns);
}

/* Ticks, grid lines and labels of one axis. The time axis (TIME set)
** labels every tick with its own unit, since a log axis may span ns to
** ms. */
static void draw_axis(cairo_t *cr, const axis *a, int vertical, int time) {
  double ticks[64];
  int nt = 0;
  if (a->log) {
    for (double d = pow(10, floor(log10(a->lo))); d <= a->hi && nt < 60;
         d *= 10)
      if (d >= a->lo) ticks[nt++] = d;
  } else {
    double span = a->hi - a->lo, raw = span / 6;
    double mag = pow(10, floor(log10(raw))), step = mag;
    if (raw / mag >= 5) step = 5 * mag;
    else if (raw / mag >= 2) step = 2 * mag;
    for (double t = ceil(a->lo / step) * step; t <= a->hi && nt < 60;
         t += step)
      ticks[nt++] = fabs(t) < step * 1e-9 ? 0 : t;
  }
  cairo_set_font_size(cr, 11);
  for (int i = 0; i < nt; i++) {
    char lab[32];
    if (time) time_label(lab, sizeof lab, ticks[i]);
    else tick_label(lab, sizeof lab, ticks[i]);
    cairo_set_source_rgb(cr, 0.9, 0.9, 0.9);
    cairo_set_line_width(cr, 1);
    if (vertical) {
      double y = py(a, ticks[i]);
      cairo_move_to(cr, ML, y);
      cairo_line_to(cr, W - MR, y);
      cairo_stroke(cr);
      cairo_set_source_rgb(cr, 0.2, 0.2, 0.2);
      text_at(cr, ML - 6, y + 4, lab, 1);
    } else {
      double x = px(a, ticks[i]);
      cairo_move_to(cr, x, MT);
      cairo_line_to(cr, x, H - MB);
      cairo_stroke(cr);
      cairo_set_source_rgb(cr, 0.2, 0.2, 0.2);
      text_at(cr, x, H - MB + 16, lab, 0.5);
    }
  }
}

/* Whether a coefficient-free tree mentions one of the sizes. */
static int tree_uses_size(const spyC_model *m, int k, unsigned nsizes) {
  const spyC_node *n = &m->node[k];
  if (n->op == SPYC_VAR) return (unsigned)n->index < nsizes;
  return (n->a >= 0 && tree_uses_size(m, n->a, nsizes)) ||
         (n->b >= 0 && tree_uses_size(m, n->b, nsizes));
}

/* cairo's write callback: into the temporary file. */
static cairo_status_t to_file(void *f, const unsigned char *data,
                              unsigned int len) {
  return fwrite(data, 1, len, f) == len ? CAIRO_STATUS_SUCCESS
                                        : CAIRO_STATUS_WRITE_ERROR;
}

/* How the x axis is chosen (see the file comment). */
enum { X_VAR, X_TERM, X_FITTED };

void spyC_plot_done(void) {
  cairo_debug_reset_static_data();
  /* cairo found its fonts through fontconfig, whose configuration lives
  ** until FcFini; look it up rather than link fontconfig ourselves. */
  void (*fini)(void);
  *(void **)&fini = dlsym(RTLD_DEFAULT, "FcFini");
  if (fini) fini();
}

/* One picture being made: what is plotted against what, the sampled
** calls, the two curves and the axes. */
enum { NC = 240 }; /* points on each curve */

typedef struct plot {
  const spy_cost_fit *f;
  const spyC_fitpriv *pv;
  const spyC_prim *p;
  const spyC_model *m;
  int mode, var, term; /* X_*; the size variable (X_VAR); the term (X_TERM) */
  size_t stride;       /* every stride-th call is drawn */
  size_t np;
  double *xs, *ys;     /* the drawn calls */
  unsigned char *over; /* ... above the bound */
  double xlo, xhi, ylo, yhi;
  double cx[NC], cf[NC], cb[NC]; /* x, fit and bound along the x axis */
  axis ax, ay;
} plot;

/* The x axis (see the file comment): the model's one size variable, else
** its one term of sizes when there is no coefficient-free part, else the
** fitted time. */
static void choose_x(plot *pl) {
  const spyC_model *m = pl->m;
  int nused = 0;
  pl->mode = X_FITTED;
  pl->var = pl->term = -1;
  for (unsigned v = 0; v < pl->p->nsizes; v++)
    if (spyC_model_uses(m, (int)v)) nused++, pl->var = (int)v;
  if (nused == 1) {
    pl->mode = X_VAR;
    return;
  }
  int nterm = 0;
  for (int k = 0; k < m->ncoef; k++) {
    const spyC_node *bn = &m->node[m->basis[k]];
    if (bn->op == SPYC_NUM) continue;
    /* A term of extra predictors only (c_gc*gc) is held at its mean. */
    if (!tree_uses_size(m, m->basis[k], pl->p->nsizes)) continue;
    nterm++;
    pl->term = k;
  }
  if (nterm == 1 && m->offset < 0) pl->mode = X_TERM;
}

/* The calls drawn (a deterministic stride through them, at most MAXPTS),
** each marked when above the bound, and their ranges. Returns 0 or
** SPY_ENOMEM. */
static int gather_points(plot *pl) {
  const spyC_prim *p = pl->p;
  size_t stride = p->n > MAXPTS ? (p->n + MAXPTS - 1) / MAXPTS : 1;
  pl->stride = stride;
  pl->xs = malloc((p->n / stride + 2) * sizeof *pl->xs);
  pl->ys = malloc((p->n / stride + 2) * sizeof *pl->ys);
  pl->over = malloc(p->n / stride + 2);
  if (!pl->xs || !pl->ys || !pl->over) return SPY_ENOMEM;
  double st[4 * SPYC_MAXDEPTH + 16], g[SPYC_MAXCOEF], off;
  pl->xlo = pl->ylo = INFINITY;
  pl->xhi = pl->yhi = -INFINITY;
  for (size_t i = 0; i < p->n; i += stride) {
    const double *v = p->x + i * p->nvars;
    double x;
    if (pl->mode == X_VAR) x = v[pl->var];
    else if (pl->mode == X_TERM) {
      if (spyC_model_basis(pl->m, v, g, &off, st) < 0) continue;
      x = g[pl->term];
    } else x = spy_cost_eval(pl->f, 0, v);
    if (!isfinite(x)) continue;
    double b = spy_cost_eval(pl->f, 1, v);
    pl->xs[pl->np] = x;
    pl->ys[pl->np] = p->t[i];
    pl->over[pl->np] = isfinite(b) && p->t[i] > b;
    pl->xlo = fmin(pl->xlo, x), pl->xhi = fmax(pl->xhi, x);
    pl->ylo = fmin(pl->ylo, p->t[i]), pl->yhi = fmax(pl->yhi, p->t[i]);
    pl->np++;
  }
  return 0;
}

/* The x axis over the points. A few zero sizes should not cost it its
** log scale: they are drawn at its left edge. */
static void fit_x_axis(plot *pl) {
  double xpos = INFINITY;
  size_t nonpos = 0;
  for (size_t i = 0; i < pl->np; i++) {
    if (pl->xs[i] > 0) xpos = fmin(xpos, pl->xs[i]);
    else nonpos++;
  }
  if (nonpos > 0 && nonpos * 20 < pl->np && xpos < INFINITY)
    axis_fit(&pl->ax, xpos, pl->xhi);
  else
    axis_fit(&pl->ax, pl->xlo, pl->xhi);
  if (pl->ax.log)
    for (size_t i = 0; i < pl->np; i++)
      if (pl->xs[i] < pl->ax.lo) pl->xs[i] = pl->ax.lo;
}

/* The fit and the bound along the x axis, then the y axis over points and
** curves. Sizes not on the axis are held at their mean, extra predictors
** at 0, so that the curve is the nominal cost (no GC in the call). */
static void make_curves(plot *pl) {
  const spyC_prim *p = pl->p;
  const spy_cost_fit *f = pl->f;
  double mean[SPY_COST_MAXVARS];
  memcpy(mean, pl->pv->mean, sizeof mean);
  for (unsigned v = p->nsizes; v < p->nvars; v++) mean[v] = 0;
  double a0 = 0, a1 = 0, b0 = NAN, b1 = NAN;
  if (pl->mode == X_TERM) {
    /* Fit and bound are affine in the term: two points define them. */
    double st[4 * SPYC_MAXDEPTH + 16], g[SPYC_MAXCOEF], off;
    double vals[SPY_COST_MAXVARS];
    memcpy(vals, mean, sizeof vals);
    spyC_model_basis(pl->m, vals, g, &off, st);
    double gm = g[pl->term];
    double fm = spy_cost_eval(f, 0, vals);
    a1 = pl->pv->beta[pl->term];
    a0 = fm - a1 * gm;
    /* Two calls with different term values pin the bound's line. */
    const double *xs = pl->xs;
    size_t i1 = 0, i2 = 0;
    for (size_t i = 0; i < pl->np; i++) {
      if (xs[i] < xs[i1]) i1 = i;
      if (xs[i] > xs[i2]) i2 = i;
    }
    size_t r1 = i1 * pl->stride, r2 = i2 * pl->stride;
    if (r1 < p->n && r2 < p->n && xs[i2] > xs[i1]) {
      double v1 = spy_cost_eval(f, 1, p->x + r1 * p->nvars);
      double v2 = spy_cost_eval(f, 1, p->x + r2 * p->nvars);
      b1 = (v2 - v1) / (xs[i2] - xs[i1]);
      b0 = v1 - b1 * xs[i1];
    }
  }
  const axis *ax = &pl->ax;
  for (int k = 0; k < NC; k++) {
    double t = (double)k / (NC - 1);
    double x = ax->log ? pow(10, log10(ax->lo) + t * (log10(ax->hi) -
                                                      log10(ax->lo)))
                       : ax->lo + t * (ax->hi - ax->lo);
    pl->cx[k] = x;
    if (pl->mode == X_VAR) {
      double vals[SPY_COST_MAXVARS];
      memcpy(vals, mean, sizeof vals);
      vals[pl->var] = x;
      pl->cf[k] = spy_cost_eval(f, 0, vals);
      pl->cb[k] = spy_cost_eval(f, 1, vals);
    } else if (pl->mode == X_TERM) {
      pl->cf[k] = a0 + a1 * x;
      pl->cb[k] = b0 + b1 * x;
    } else {
      pl->cf[k] = x;
      pl->cb[k] = NAN;
    }
    if (x >= pl->xlo && x <= pl->xhi) {
      if (isfinite(pl->cf[k]) && pl->cf[k] > 0)
        pl->ylo = fmin(pl->ylo, pl->cf[k]);
      if (isfinite(pl->cb[k])) pl->yhi = fmax(pl->yhi, pl->cb[k]);
    }
  }
  axis_fit(&pl->ay, pl->ylo, pl->yhi);
  if (pl->ay.log && pl->ylo <= 0) pl->ay.log = 0;
}

/* The calls (those above the bound in orange, on top) and the two
** curves, clipped to the plotting area. */
static void draw_data(cairo_t *cr, const plot *pl) {
  const axis *ax = &pl->ax, *ay = &pl->ay;
  cairo_save(cr);
  cairo_rectangle(cr, ML, MT, W - ML - MR, H - MT - MB);
  cairo_clip(cr);
  for (int pass = 0; pass < 2; pass++) {
    if (pass == 0) cairo_set_source_rgba(cr, 0.16, 0.38, 0.72, 0.35);
    else cairo_set_source_rgba(cr, 0.90, 0.45, 0.05, 0.6);
    for (size_t i = 0; i < pl->np; i++) {
      if (pl->over[i] != pass || (ay->log && pl->ys[i] <= 0)) continue;
      cairo_arc(cr, px(ax, pl->xs[i]), py(ay, pl->ys[i]), 2.0, 0, 2 * M_PI);
      cairo_fill(cr);
    }
  }
  for (int which = 0; which < 2; which++) {
    const double *cy = which ? pl->cb : pl->cf;
    if (which) {
      double dash[] = {7, 4};
      cairo_set_dash(cr, dash, 2, 0);
      cairo_set_source_rgb(cr, 0.80, 0.10, 0.10);
    } else {
      cairo_set_source_rgb(cr, 0.05, 0.15, 0.45);
    }
    cairo_set_line_width(cr, 2.2);
    int pen = 0;
    for (int k = 0; k < NC; k++) {
      if (!isfinite(cy[k]) || (ay->log && cy[k] <= 0)) {
        pen = 0;
        continue;
      }
      double X = px(ax, pl->cx[k]), Y = py(ay, cy[k]);
      if (pen) cairo_line_to(cr, X, Y);
      else cairo_move_to(cr, X, Y);
      pen = 1;
    }
    cairo_stroke(cr);
    cairo_set_dash(cr, NULL, 0, 0);
  }
  cairo_restore(cr);
}

/* The title, the subtitle (calls, model, R^2, scales) and both axes'
** labels. */
static void draw_titles(cairo_t *cr, const plot *pl) {
  const spy_cost_fit *f = pl->f;
  const spyC_prim *p = pl->p;
  const axis *ax = &pl->ax, *ay = &pl->ay;
  char line[512];
  cairo_set_source_rgb(cr, 0.1, 0.1, 0.1);
  cairo_select_font_face(cr, "sans-serif", CAIRO_FONT_SLANT_NORMAL,
                         CAIRO_FONT_WEIGHT_BOLD);
  cairo_set_font_size(cr, 16);
  text_at(cr, ML, 28, f->name, 0);
  cairo_select_font_face(cr, "sans-serif", CAIRO_FONT_SLANT_NORMAL,
                         CAIRO_FONT_WEIGHT_NORMAL);
  cairo_set_font_size(cr, 12);
  snprintf(line, sizeof line, "%zu calls; %s model, R^2 %.3f; %s axes",
           f->nobs, f->family, f->r2,
           ax->log && ay->log ? "log-log" : ax->log ? "log x" : ay->log
                                                          ? "log y"
                                                          : "linear");
  text_at(cr, ML, 48, line, 0);
  cairo_set_font_size(cr, 13);
  if (pl->mode == X_VAR) snprintf(line, sizeof line, "%s (operand size)",
                                  p->var[pl->var]);
  else if (pl->mode == X_TERM) {
    char *t = spyC_tree_print(pl->m, pl->m->basis[pl->term],
                              (const char *const *)p->var);
    snprintf(line, sizeof line, "%s (size term of the model)", t ? t : "?");
    free(t);
  } else snprintf(line, sizeof line, "fitted typical time per call");
  text_at(cr, ML + (W - ML - MR) / 2, H - 20, line, 0.5);
  snprintf(line, sizeof line, "measured time per call");
  cairo_save(cr);
  cairo_move_to(cr, 24, MT + (H - MT - MB) / 2);
  cairo_rotate(cr, -M_PI / 2);
  cairo_text_extents_t te;
  cairo_text_extents(cr, line, &te);
  cairo_rel_move_to(cr, -te.x_advance / 2, 0);
  cairo_show_text(cr, line);
  cairo_restore(cr);
}

/* The legend, top left inside the plot: the calls, the typical model and,
** when there is one, the bound and the calls above it. */
static void draw_legend(cairo_t *cr, const plot *pl) {
  const spy_cost_fit *f = pl->f;
  const spyC_prim *p = pl->p;
  char line[512];
  cairo_set_font_size(cr, 11.5);
  double lx = ML + 12, ly = MT + 18;
  cairo_set_source_rgba(cr, 1, 1, 1, 0.85);
  cairo_rectangle(cr, lx - 6, ly - 13, 520, f->bound[0].ok ? 70 : 38);
  cairo_fill(cr);
  cairo_set_source_rgba(cr, 0.16, 0.38, 0.72, 0.7);
  cairo_arc(cr, lx + 8, ly - 4, 3, 0, 2 * M_PI);
  cairo_fill(cr);
  cairo_set_source_rgb(cr, 0.1, 0.1, 0.1);
  snprintf(line, sizeof line, "measured calls (%zu shown)", pl->np);
  text_at(cr, lx + 24, ly, line, 0);
  ly += 16;
  cairo_set_source_rgb(cr, 0.05, 0.15, 0.45);
  cairo_set_line_width(cr, 2.2);
  cairo_move_to(cr, lx, ly - 4);
  cairo_line_to(cr, lx + 18, ly - 4);
  cairo_stroke(cr);
  cairo_set_source_rgb(cr, 0.1, 0.1, 0.1);
  int extras = 0;
  for (unsigned v = p->nsizes; v < p->nvars; v++)
    extras |= spyC_model_uses(pl->m, (int)v);
  snprintf(line, sizeof line, "typical%s: %s ns",
           extras ? " (curve without GC)" : "", f->fitted);
  text_at(cr, lx + 24, ly, line, 0);
  if (!f->bound[0].ok) return;
  ly += 16;
  double dash[] = {7, 4};
  cairo_set_dash(cr, dash, 2, 0);
  cairo_set_source_rgb(cr, 0.80, 0.10, 0.10);
  cairo_move_to(cr, lx, ly - 4);
  cairo_line_to(cr, lx + 18, ly - 4);
  cairo_stroke(cr);
  cairo_set_dash(cr, NULL, 0, 0);
  cairo_set_source_rgb(cr, 0.1, 0.1, 0.1);
  snprintf(line, sizeof line, "D=%g%% bound: %s ns", 100 * f->confidence,
           f->bound[0].fitted);
  text_at(cr, lx + 24, ly, line, 0);
  ly += 16;
  cairo_set_source_rgba(cr, 0.90, 0.45, 0.05, 0.8);
  cairo_arc(cr, lx + 8, ly - 4, 3, 0, 2 * M_PI);
  cairo_fill(cr);
  cairo_set_source_rgb(cr, 0.1, 0.1, 0.1);
  snprintf(line, sizeof line, "calls above the bound (held-out coverage "
                              "%.1f%%)",
           100 * f->bound[0].coverage);
  text_at(cr, lx + 24, ly, line, 0);
}

/* Draw PL into a new SVG (or PNG) surface written to PATH through a
** temporary replaced into place at the end (profile/atomic.h), like every
** file spyon writes. Returns 0, or SPY_EIO (or the atomic writer's code)
** with ERR set. */
static int render(const plot *pl, const char *path, int png, char *err,
                  size_t errlen) {
  spyP_afile af;
  int arc = spyP_aopen(&af, path, err, errlen);
  if (arc) return arc;
  cairo_surface_t *sf =
      png ? cairo_image_surface_create(CAIRO_FORMAT_ARGB32, (int)W, (int)H)
          : cairo_svg_surface_create_for_stream(to_file, af.f, W, H);
  cairo_status_t cs = cairo_surface_status(sf);
  if (cs == CAIRO_STATUS_SUCCESS) {
    cairo_t *cr = cairo_create(sf);
    cairo_set_source_rgb(cr, 1, 1, 1);
    cairo_paint(cr);
    cairo_select_font_face(cr, "sans-serif", CAIRO_FONT_SLANT_NORMAL,
                           CAIRO_FONT_WEIGHT_NORMAL);
    draw_axis(cr, &pl->ax, 0, pl->mode == X_FITTED);
    draw_axis(cr, &pl->ay, 1, 1);
    cairo_set_source_rgb(cr, 0.3, 0.3, 0.3);
    cairo_set_line_width(cr, 1);
    cairo_rectangle(cr, ML, MT, W - ML - MR, H - MT - MB);
    cairo_stroke(cr);
    draw_data(cr, pl);
    draw_titles(cr, pl);
    draw_legend(cr, pl);
    cairo_destroy(cr);
    if (png) cs = cairo_surface_write_to_png_stream(sf, to_file, af.f);
    cairo_surface_finish(sf);
    if (cs == CAIRO_STATUS_SUCCESS) cs = cairo_surface_status(sf);
  }
  cairo_surface_destroy(sf);
  if (cs != CAIRO_STATUS_SUCCESS) {
    spyP_aabort(&af);
    if (err && errlen)
      snprintf(err, errlen, "%s: %s", path, cairo_status_to_string(cs));
    return SPY_EIO;
  }
  return spyP_acommit(&af, err, errlen);
}

int spyC_plot_svg(const spy_cost_fit *f, const spy_cost_data *d,
                  const char *dir, int png, char *path_out, size_t pathlen,
                  char *err, size_t errlen) {
  if (!f || !d || !dir || f->status || f->prim >= d->n) return SPY_EINVAL;
  char *base = spy_cost_c_name("", f->name);
  if (!base) return SPY_ENOMEM;
  char path[4096];
  snprintf(path, sizeof path, "%s/%s.%s", dir, base, png ? "png" : "svg");
  free(base);
  if (path_out && pathlen) snprintf(path_out, pathlen, "%s", path);

  plot *pl = calloc(1, sizeof *pl);
  if (!pl) return SPY_ENOMEM;
  pl->f = f;
  pl->pv = SPYC_PRIV(f);
  pl->p = &d->prim[f->prim];
  pl->m = &pl->pv->m;
  choose_x(pl);
  int rc = gather_points(pl);
  if (rc == 0 && pl->np == 0) {
    if (err && errlen) snprintf(err, errlen, "%s: nothing to plot", f->name);
    rc = SPY_EINVAL;
  }
  if (rc == 0) {
    fit_x_axis(pl);
    make_curves(pl);
    rc = render(pl, path, png, err, errlen);
  }
  free(pl->xs);
  free(pl->ys);
  free(pl->over);
  free(pl);
  return rc;
}
