/*
** cost/output.c: the fitted models as a table for people, CSV and JSON for
** programs (spy_cost_write_table, _csv, _json).
*/
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cost/fit.h"
#include "cost/util.h"
#include "profile/jsonw.h"

static const char *solver_name(spy_cost_solver s) {
  static const char *const n[] = {"median", "ols", "wls", "ridge",
                                  "huber", "bisquare", "nnls", "quantile"};
  return (unsigned)s < sizeof n / sizeof n[0] ? n[s] : "?";
}

/* A duration with a unit a person reads at a glance. */
static void dur(char *out, size_t len, double ns) {
  double a = fabs(ns);
  if (!isfinite(ns)) snprintf(out, len, "-");
  else if (a >= 1e9) snprintf(out, len, "%.3g s", ns / 1e9);
  else if (a >= 1e6) snprintf(out, len, "%.3g ms", ns / 1e6);
  else if (a >= 1e3) snprintf(out, len, "%.3g us", ns / 1e3);
  else snprintf(out, len, "%.3g ns", ns);
}

/* The flag words, comma-separated, or "-" (static buffer per call). */
static void flag_words(const spy_cost_fit *f, char *out, size_t len) {
  static const struct {
    unsigned bit;
    const char *word;
  } w[] = {{SPY_COST_F_NEGATIVE, "negative"}, {SPY_COST_F_ILLCOND, "illcond"},
           {SPY_COST_F_FEW, "few"},           {SPY_COST_F_NOCONV, "noconv"},
           {SPY_COST_F_COVERAGE, "coverage"}, {SPY_COST_F_CULLED, "culled"},
           {SPY_COST_F_UNDEF, "undef"}};
  size_t n = 0;
  out[0] = '\0';
  for (size_t i = 0; i < sizeof w / sizeof w[0]; i++)
    if (f->flags & w[i].bit)
      n += (size_t)snprintf(out + n, n < len ? len - n : 0, "%s%s",
                            n ? "," : "", w[i].word);
  if (!n) snprintf(out, len, "-");
}

/* ===================================================================
** Table
** =================================================================== */

static void table_fit(FILE *fp, const spy_cost_result *r,
                      const spy_cost_fit *f) {
  char a[32], b[32], c[32];
  dur(a, sizeof a, f->mean_ns);
  dur(b, sizeof b, f->median_ns);
  dur(c, sizeof c, f->max_ns);
  fprintf(fp, "%s\n  calls    %zu observed; mean %s, median %s, max %s\n",
          f->name, f->nobs, a, b, c);
  if (f->status) {
    fprintf(fp, "  not fitted: %s\n\n", f->message ? f->message : "error");
    return;
  }
  fprintf(fp, "  model    %s: %s ns\n", f->family, f->fitted);
  fprintf(fp, "           %-10s %14s   %g%% interval\n", "coefficient",
          "value", 100 * r->opts.level);
  for (size_t k = 0; k < f->ncoef; k++) {
    const spy_cost_coef *q = &f->coef[k];
    fprintf(fp, "           %-10s %14.6g", q->name, q->value);
    if (isfinite(q->lo))
      fprintf(fp, "   [%.6g, %.6g]", q->lo, q->hi);
    else
      fprintf(fp, "   -");
    if (q->clamped) fprintf(fp, "   wanted < 0");
    fputc('\n', fp);
  }
  dur(a, sizeof a, f->rmse);
  fprintf(fp, "  fit      %s on %zu calls", solver_name(r->opts.solver),
          f->used);
  if (f->culled) fprintf(fp, " (%zu culled)", f->culled);
  fprintf(fp, "; median error %.1f%%, R^2 %.4f, adj. R^2 %.4f, RMSE %s\n",
          100 * f->mre, f->r2, f->adj_r2, a);
  if (f->r2 < 0) /* worse than predicting the mean: not to be used */
    fprintf(fp, "  caveat   R^2 < 0: this model predicts the time worse than "
                "its mean does;\n           do not use it as a cost\n");
  size_t hi = f->outliers.high_mild + f->outliers.high_severe;
  size_t lo = f->outliers.low_mild + f->outliers.low_severe;
  double n = f->used ? (double)f->used : 1;
  fprintf(fp, "  outliers %.1f%% slow (%.1f%% severe), %.1f%% fast "
              "(Tukey fences on time/fit - 1)\n",
          100 * (double)hi / n, 100 * (double)f->outliers.high_severe / n,
          100 * (double)lo / n);
  for (unsigned k = 0; k < f->nbounds; k++) {
    const spy_cost_bound *q = &f->bound[k];
    if (!q->ok) continue;
    if (k == 0)
      fprintf(fp, "  bound    D=%g%%: %s ns\n           held-out coverage "
                  "%.1f%% of %zu calls (training %.1f%% of %zu)\n",
              100 * f->confidence, q->fitted, 100 * q->coverage, q->ntest,
              100 * q->train_coverage, q->ntrain);
    else if (k == 1)
      fprintf(fp, "  compare  shift (least squares %+.4g ns): held-out "
                  "%.1f%%\n",
              q->param, 100 * q->coverage);
    else
      fprintf(fp, "           asymmetric (alpha %.3g): %s ns, held-out "
                  "%.1f%%\n",
              q->param, q->fitted, 100 * q->coverage);
  }
  if (f->has_gc) {
    dur(a, sizeof a, f->ns_per_gc);
    dur(b, sizeof b, f->nominal_ns);
    fprintf(fp, "  gc       %s per collection, %.3g per call: nominal %s, "
                "GC %.1f%% of the time\n",
            a, f->gc_per_call, b, 100 * f->gc_share);
  }
  if (f->ncand > 1) {
    fprintf(fp, "  chosen   by %u-fold cross-validation (%s; the simplest "
                "within one standard error):",
            r->opts.folds, f->loss_name);
    int shown = 0;
    double best = NAN;
    for (size_t k = 0; k < f->ncand; k++)
      if (strcmp(f->cand[k].family, f->family) == 0) best = f->cand[k].cv_loss;
    for (size_t k = 0; k < f->ncand && shown < 4; k++) {
      const spy_cost_candidate *q = &f->cand[k];
      if (!q->ok || strcmp(q->family, f->family) == 0) continue;
      fprintf(fp, "%s %s %+.0f%%", shown ? "," : "", q->family,
              best > 0 ? 100 * (q->cv_loss / best - 1) : 0.0);
      shown++;
    }
    fprintf(fp, "%s\n", shown ? "" : " no runner-up");
  }
  char fl[128];
  flag_words(f, fl, sizeof fl);
  if (strcmp(fl, "-") != 0) fprintf(fp, "  flags    %s\n", fl);
  fputc('\n', fp);
}

int spy_cost_write_table(const spy_cost_result *r, FILE *fp) {
  if (!r || !fp) return SPY_EINVAL;
  /* The source may be a profiled command line: keep it on one line. */
  char src[512];
  snprintf(src, sizeof src, "%s",
           r->source && *r->source ? r->source : "observations");
  for (char *c = src; *c; c++)
    if ((unsigned char)*c < 0x20) *c = ' ';
  fprintf(fp, "Cost models from %s: %s fit, D=%g%% bound, %g%% bootstrap "
              "intervals\n\n",
          src,
          solver_name(r->opts.solver), 100 * r->opts.confidence,
          100 * r->opts.level);
  for (size_t i = 0; i < r->nfits; i++) table_fit(fp, r, &r->fits[i]);
  return ferror(fp) ? SPY_EIO : 0;
}

/* ===================================================================
** CSV
** =================================================================== */

static void csv_str(FILE *fp, const char *s) {
  if (!s) s = "";
  if (!strpbrk(s, ",\"\n\r")) {
    fputs(s, fp);
    return;
  }
  fputc('"', fp);
  for (; *s; s++) {
    if (*s == '"') fputc('"', fp);
    fputc(*s, fp);
  }
  fputc('"', fp);
}

static void csv_num(FILE *fp, double v) {
  if (isfinite(v)) fprintf(fp, "%.10g", v);
}

/* Each of the N strings S, then a comma. */
static void csv_strs(FILE *fp, const char *const *s, size_t n) {
  for (size_t i = 0; i < n; i++) {
    csv_str(fp, s[i]);
    fputc(',', fp);
  }
}

/* Each of the N numbers V, then a comma. */
static void csv_nums(FILE *fp, const double *v, size_t n) {
  for (size_t i = 0; i < n; i++) {
    csv_num(fp, v[i]);
    fputc(',', fp);
  }
}

int spy_cost_write_csv(const spy_cost_result *r, FILE *fp) {
  if (!r || !fp) return SPY_EINVAL;
  fputs("primitive,kind,family,model,coefficient,value,lo,hi,clamped,"
        "calls,r2,adj_r2,rmse_ns,median_rel_error,confidence,coverage,flags\n",
        fp);
  for (size_t i = 0; i < r->nfits; i++) {
    const spy_cost_fit *f = &r->fits[i];
    char fl[128];
    flag_words(f, fl, sizeof fl);
    if (f->status) {
      csv_str(fp, f->name);
      fprintf(fp, ",error,,,,,,,,%zu,,,,,,,", f->nobs);
      csv_str(fp, f->message);
      fputc('\n', fp);
      continue;
    }
    for (int kind = 0; kind < 2; kind++) {
      const spy_cost_coef *c = kind ? f->bound[0].coef : f->coef;
      size_t nc = kind ? f->bound[0].ncoef : f->ncoef;
      if (kind && !f->bound[0].ok) continue;
      for (size_t k = 0; k < nc; k++) {
        csv_str(fp, f->name);
        fprintf(fp, ",%s,", kind ? "bound" : "fit");
        const char *names[] = {f->family,
                               kind ? f->bound[0].fitted : f->model,
                               c[k].name};
        csv_strs(fp, names, sizeof names / sizeof *names);
        const double coef[] = {c[k].value, c[k].lo, c[k].hi};
        csv_nums(fp, coef, sizeof coef / sizeof *coef);
        fprintf(fp, "%d,%zu,", c[k].clamped, f->nobs);
        /* No coverage (an empty cell) without a bound. */
        const double fit[] = {f->r2, f->adj_r2, f->rmse, f->mre,
                              f->confidence,
                              f->bound[0].ok ? f->bound[0].coverage : NAN};
        csv_nums(fp, fit, sizeof fit / sizeof *fit);
        csv_str(fp, fl);
        fputc('\n', fp);
      }
    }
  }
  return ferror(fp) ? SPY_EIO : 0;
}

/* ===================================================================
** JSON
** =================================================================== */

/* A number that reads back exactly; null when it is not finite. */
static void js_num(FILE *fp, double v) {
  if (isfinite(v)) spyC_fput_num(fp, v);
  else fputs("null", fp);
}

/* LEAD (punctuation and a key) and then the number V. */
static void js_put_num(FILE *fp, const char *lead, double v) {
  fputs(lead, fp);
  js_num(fp, v);
}

/* LEAD and then S as a JSON string. */
static void js_put_str(FILE *fp, const char *lead, const char *s) {
  fputs(lead, fp);
  spyP_json_fstr(fp, s);
}

static void js_coefs(FILE *fp, const spy_cost_coef *c, size_t n) {
  fputc('[', fp);
  for (size_t k = 0; k < n; k++) {
    fprintf(fp, "%s{\"name\": ", k ? ", " : "");
    spyP_json_fstr(fp, c[k].name);
    js_put_num(fp, ", \"value\": ", c[k].value);
    js_put_num(fp, ", \"lo\": ", c[k].lo);
    js_put_num(fp, ", \"hi\": ", c[k].hi);
    fprintf(fp, ", \"clamped\": %s}", c[k].clamped ? "true" : "false");
  }
  fputc(']', fp);
}

/* The bounds of F as ", \"bounds\": [...]". */
static void js_bounds(FILE *fp, const spy_cost_fit *f) {
  fputs(", \"bounds\": [", fp);
  for (unsigned k = 0; k < f->nbounds; k++) {
    const spy_cost_bound *q = &f->bound[k];
    fputs(k ? ",\n       " : "\n       ", fp);
    js_put_str(fp, "{\"method\": ", q->method);
    fprintf(fp, ", \"ok\": %s", q->ok ? "true" : "false");
    if (q->ok) {
      js_put_str(fp, ", \"fitted\": ", q->fitted);
      fputs(", \"coefficients\": ", fp);
      js_coefs(fp, q->coef, q->ncoef);
      js_put_num(fp, ", \"coverage\": ", q->coverage);
      js_put_num(fp, ", \"train_coverage\": ", q->train_coverage);
      fprintf(fp, ", \"ntrain\": %zu, \"ntest\": %zu, \"param\": ", q->ntrain,
              q->ntest);
      js_num(fp, q->param);
    }
    fputs("}", fp);
  }
  fputs("]", fp);
}

/* The candidate models of F as ",\n \"candidates\": [...]". */
static void js_candidates(FILE *fp, const spy_cost_fit *f) {
  fputs(",\n     \"candidates\": [", fp);
  for (size_t k = 0; k < f->ncand; k++) {
    const spy_cost_candidate *q = &f->cand[k];
    fputs(k ? ",\n       " : "\n       ", fp);
    js_put_str(fp, "{\"family\": ", q->family);
    js_put_str(fp, ", \"model\": ", q->expr);
    fprintf(fp, ", \"ncoef\": %u, \"ok\": %s, \"cv_loss\": ", q->ncoef,
            q->ok ? "true" : "false");
    js_num(fp, q->cv_loss);
    js_put_num(fp, ", \"cv_se\": ", q->cv_se);
    fputs("}", fp);
  }
  fputs("]", fp);
}

/* The flag words of F as ",\n \"flags\": [...]". */
static void js_flags(FILE *fp, const spy_cost_fit *f) {
  char fl[128];
  flag_words(f, fl, sizeof fl);
  fputs(",\n     \"flags\": [", fp);
  if (strcmp(fl, "-") != 0) {
    for (char *s = fl, *e; s; s = e ? e + 1 : NULL) {
      e = strchr(s, ',');
      if (e) *e = '\0';
      fputs(s == fl ? "" : ", ", fp);
      spyP_json_fstr(fp, s);
    }
  }
  fputs("]", fp);
}

static void js_fit(FILE *fp, const spy_cost_fit *f) {
  js_put_str(fp, "    {\"name\": ", f->name);
  fprintf(fp, ", \"calls\": %zu, \"used\": %zu, \"culled\": %zu,\n", f->nobs,
          f->used, f->culled);
  fputs("     \"variables\": [", fp);
  for (unsigned v = 0; v < f->nvars; v++) {
    fputs(v ? ", " : "", fp);
    spyP_json_fstr(fp, f->vars[v]);
  }
  fprintf(fp, "], \"sizes\": %u,\n     \"mean_ns\": ", f->nsizes);
  js_num(fp, f->mean_ns);
  js_put_num(fp, ", \"median_ns\": ", f->median_ns);
  js_put_num(fp, ", \"max_ns\": ", f->max_ns);
  if (f->status) {
    js_put_str(fp, ",\n     \"status\": \"error\", \"message\": ", f->message);
    fputs("}", fp);
    return;
  }
  js_put_str(fp, ",\n     \"status\": \"ok\", \"family\": ", f->family);
  js_put_str(fp, ", \"model\": ", f->model);
  js_put_str(fp, ",\n     \"fitted\": ", f->fitted);
  fputs(",\n     \"coefficients\": ", fp);
  js_coefs(fp, f->coef, f->ncoef);
  js_put_num(fp, ",\n     \"r2\": ", f->r2);
  js_put_num(fp, ", \"adj_r2\": ", f->adj_r2);
  js_put_num(fp, ", \"rmse_ns\": ", f->rmse);
  js_put_num(fp, ", \"median_rel_error\": ", f->mre);
  js_put_str(fp, ", \"cv_loss\": ", f->loss_name);
  fprintf(fp, ",\n     \"outliers\": {\"low_mild\": %zu, \"low_severe\": %zu, "
              "\"high_mild\": %zu, \"high_severe\": %zu}",
          f->outliers.low_mild, f->outliers.low_severe,
          f->outliers.high_mild, f->outliers.high_severe);
  js_put_num(fp, ",\n     \"confidence\": ", f->confidence);
  js_bounds(fp, f);
  if (f->has_gc) {
    js_put_num(fp, ",\n     \"gc\": {\"ns_per_gc\": ", f->ns_per_gc);
    js_put_num(fp, ", \"gc_per_call\": ", f->gc_per_call);
    js_put_num(fp, ", \"nominal_ns\": ", f->nominal_ns);
    js_put_num(fp, ", \"gc_share\": ", f->gc_share);
    fputs("}", fp);
  }
  js_candidates(fp, f);
  js_flags(fp, f);
  fputs("}", fp);
}

int spy_cost_write_json(const spy_cost_result *r, FILE *fp) {
  if (!r || !fp) return SPY_EINVAL;
  js_put_str(fp, "{\"source\": ", r->source);
  js_put_str(fp, ", \"solver\": ", solver_name(r->opts.solver));
  js_put_num(fp, ", \"confidence\": ", r->opts.confidence);
  js_put_num(fp, ", \"level\": ", r->opts.level);
  fprintf(fp, ", \"folds\": %u, \"bootstrap\": %u,\n \"primitives\": [\n",
          r->opts.folds, r->opts.bootstrap);
  for (size_t i = 0; i < r->nfits; i++) {
    js_fit(fp, &r->fits[i]);
    fputs(i + 1 < r->nfits ? ",\n" : "\n", fp);
  }
  fputs(" ]}\n", fp);
  return ferror(fp) ? SPY_EIO : 0;
}
