/*
** cost/fit.c: the per-primitive pipeline behind spy_cost_fit_data.
**
** For each primitive: list the candidate models (the user's, or every
** built-in family that fits its number of sizes, each with a term per
** extra predictor such as gc), choose one by cross-validation, fit it on
** every call, optionally cull outlying calls and refit, bootstrap the
** coefficients, classify outliers, decompose the GC cost, and fit the D
** bound on sizes alone with held-out coverage.
*/
#include "config.h"

#include "cost/fit.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <gsl/gsl_errno.h>
#include <gsl/gsl_rng.h>
#include <gsl/gsl_statistics_double.h>

#include "cost/bootstrap.h"
#include "cost/data.h"
#include "cost/models.h"
#include "cost/select.h"
#include "cost/util.h"

/* ===================================================================
** Options
** =================================================================== */

void spy_cost_options_init(spy_cost_options *o) {
  memset(o, 0, sizeof *o);
  o->solver = SPY_COST_MEDIAN;
  o->tau = 0.5;
  o->ridge = 1e-3;
  o->nonneg = 1;
  o->extras = 1;
  o->folds = 5;
  o->select_rows = 2048;
  o->bootstrap = 200;
  o->boot_rows = 2000;
  o->level = 0.95;
  o->confidence = 0.95;
  o->compare = 1;
  o->holdout = 0.2;
  o->bound_rows = 20000;
  o->cull = 0;
  o->min_obs = 8;
  o->seed = 1;
}

const char *spy_cost_families(void) {
  return "const,linear,log,nlogn,quadratic,karatsuba,piecewise,sum,"
         "product,max,min,sumlog,bilinear,karatsuba2";
}

int spy_cost_check_model(const char *expr, const char *const *vars,
                         unsigned nvars, int *col, char *err,
                         size_t errlen) {
  if (!expr) return SPY_EINVAL;
  spyC_model m;
  char msg[256];
  int c = 0;
  int rc = spyC_model_parse(&m, expr, vars, (int)nvars, &c, msg, sizeof msg);
  if (rc) {
    if (col) *col = c;
    if (err && errlen) snprintf(err, errlen, "%d: %s", c, msg);
    return rc;
  }
  spyC_model_free(&m);
  return 0;
}

/* GSL aborts on errors unless told otherwise; switch its handler off for
** the duration of the outermost concurrent fit. */
static pthread_mutex_t gsl_lock = PTHREAD_MUTEX_INITIALIZER;
static int gsl_users;
static gsl_error_handler_t *gsl_saved;

static void gsl_quiet(int on) {
  pthread_mutex_lock(&gsl_lock);
  if (on && gsl_users++ == 0) gsl_saved = gsl_set_error_handler_off();
  if (!on && --gsl_users == 0) gsl_set_error_handler(gsl_saved);
  pthread_mutex_unlock(&gsl_lock);
}

/* ===================================================================
** Strings owned by a fit
** =================================================================== */

static const char *own(spy_cost_fit *f, char *s) {
  spyC_fitpriv *pv = SPYC_PRIV(f);
  if (!s) return NULL;
  if (pv->nstrings == (int)(sizeof pv->strings / sizeof pv->strings[0])) {
    free(s);
    return NULL;
  }
  pv->strings[pv->nstrings++] = s;
  return s;
}

static const char *ownf(spy_cost_fit *f, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static const char *ownf(spy_cost_fit *f, const char *fmt, ...) {
  spyC_buf b = {0};
  va_list ap;
  va_start(ap, fmt);
  spyC_bvprintf(&b, fmt, ap);
  va_end(ap);
  return own(f, spyC_btake(&b));
}

static void fit_release(spy_cost_fit *f) {
  spyC_fitpriv *pv = SPYC_PRIV(f);
  if (pv) {
    spyC_model_free(&pv->m);
    spyC_model_free(&pv->bm);
    for (int i = 0; i < SPY_COST_MAXVARS; i++) free(pv->var[i]);
    for (int i = 0; i < pv->nstrings; i++) free(pv->strings[i]);
    free(pv);
  }
  free(f->coef);
  free(f->cand);
  for (int k = 0; k < 3; k++) free(f->bound[k].coef);
}

void spy_cost_result_free(spy_cost_result *r) {
  if (!r) return;
  for (size_t i = 0; i < r->nfits; i++) fit_release(&r->fits[i]);
  free(r->fits);
  free((char *)r->source);
  free(r);
}

/* ===================================================================
** Evaluation
** =================================================================== */

double spyC_bound_eval(const spy_cost_fit *f, int k, const double *vars) {
  const spyC_fitpriv *pv = f ? SPYC_PRIV(f) : NULL;
  if (!pv || !pv->has_bound || k < 0 || k > 2 || !pv->bound[k].ok)
    return NAN;
  return spyC_model_eval(&pv->bm, pv->bound[k].beta, vars) +
         pv->bound[k].shift;
}

double spy_cost_eval(const spy_cost_fit *f, int which, const double *vars) {
  if (!f || !f->priv_ || f->status || !vars) return NAN;
  if (which == 1) return spyC_bound_eval(f, 0, vars);
  if (which != 0) return NAN;
  return spyC_model_eval(&SPYC_PRIV(f)->m, SPYC_PRIV(f)->beta, vars);
}

/* ===================================================================
** Pieces of the pipeline
** =================================================================== */

/* The candidates for P: the user's model, or every applicable family
** (restricted to FAMILIES when given). Returns the count or an error. */
static int candidates(const spyC_prim *p, const spy_cost_options *o,
                      const char *user, unsigned varying, spyC_cand *c,
                      size_t cap) {
  size_t nf, nc = 0;
  const spyC_family *fam = spyC_families(&nf);
  const char *const *vars = (const char *const *)p->var;
  const char *famname = NULL;
  if (user && strncmp(user, "family:", 7) == 0) famname = user + 7;
  for (size_t i = 0; i < nf && nc < cap; i++) {
    char *text = NULL;
    if (user && !famname) {
      if (i > 0) break;
      text = spyC_strdup(user);
      c[nc].family = "user";
    } else {
      if (famname && strcmp(famname, fam[i].name) != 0) continue;
      if (!famname && o->families) {
        /* Whole-word match in the comma-separated list. */
        size_t len = strlen(fam[i].name);
        const char *s = o->families;
        int found = 0;
        while (*s && !found) {
          const char *e = strchr(s, ',');
          size_t l = e ? (size_t)(e - s) : strlen(s);
          found = l == len && strncmp(s, fam[i].name, len) == 0;
          s = e ? e + 1 : s + l;
        }
        if (!found) continue;
      }
      text = spyC_family_expr(&fam[i], vars, p->nsizes, o->breaks,
                              o->nbreaks);
      if (!text) continue;
      c[nc].family = fam[i].name;
    }
    if (!text) return SPY_ENOMEM;
    char *full = o->extras ? spyC_add_extras(text, p, varying)
                           : spyC_strdup(text);
    free(text);
    if (!full) return SPY_ENOMEM;
    c[nc].text = full;
    char msg[160];
    int col;
    c[nc].ok = spyC_model_parse(&c[nc].m, full, vars, (int)p->nvars, &col,
                                msg, sizeof msg) == 0;
    c[nc].loss = c[nc].se = NAN;
    nc++;
  }
  return (int)nc;
}

/* R^2, adjusted R^2 and RMSE of BETA on D. */
static void goodness(const spyC_design *d, const double *beta, double *r2,
                     double *adj, double *rmse) {
  double mean = 0, ss = 0, sr = 0;
  for (size_t i = 0; i < d->n; i++) mean += d->y[i];
  mean /= (double)d->n;
  for (size_t i = 0; i < d->n; i++) {
    const double *x = d->X + i * (size_t)d->p;
    double f = 0;
    for (int j = 0; j < d->p; j++) f += x[j] * beta[j];
    ss += (d->y[i] - mean) * (d->y[i] - mean);
    sr += (d->y[i] - f) * (d->y[i] - f);
  }
  *r2 = ss > 0 ? 1 - sr / ss : NAN;
  double n = (double)d->n, k = (double)d->p;
  *adj = n - k > 0 && ss > 0 ? 1 - (1 - *r2) * (n - 1) / (n - k) : NAN;
  *rmse = sqrt(sr / n);
}

/* Relative residuals y/fit - 1 (absolute residuals where the fit is not
** positive): timing noise grows with the cost, so outliers are judged on
** this scale. */
static void rel_resid(const spyC_design *d, const double *beta, double *e) {
  for (size_t i = 0; i < d->n; i++) {
    const double *x = d->X + i * (size_t)d->p;
    double f = 0;
    for (int j = 0; j < d->p; j++) f += x[j] * beta[j];
    e[i] = f > 0 ? d->y[i] / f - 1 : d->y[i] - f;
  }
}

static void tukey(spy_cost_fit *f, const double *e, size_t n, double *tmp) {
  memcpy(tmp, e, n * sizeof *tmp);
  double q1 = spyC_quantile(tmp, n, 0.25);
  double q3 = spyC_quantile(tmp, n, 0.75);
  double iqr = q3 - q1;
  for (size_t i = 0; i < n; i++) {
    if (e[i] < q1 - 3 * iqr) f->outliers.low_severe++;
    else if (e[i] < q1 - 1.5 * iqr) f->outliers.low_mild++;
    else if (e[i] > q3 + 3 * iqr) f->outliers.high_severe++;
    else if (e[i] > q3 + 1.5 * iqr) f->outliers.high_mild++;
  }
}

/* Rows to keep after culling: |e - median| <= nsigma * 1.4826 MAD (the
** MAD scaled to a normal's sigma). */
static size_t cull_rows(const double *e, size_t n, double nsigma,
                        double *tmp, size_t *keep) {
  memcpy(tmp, e, n * sizeof *tmp);
  double med = spyC_quantile(tmp, n, 0.5);
  double sigma = 1.4826 * gsl_stats_mad0(e, 1, n, tmp);
  size_t k = 0;
  for (size_t i = 0; i < n; i++)
    if (!(sigma > 0) || fabs(e[i] - med) <= nsigma * sigma) keep[k++] = i;
  return k;
}

static spy_cost_coef *coefs(spy_cost_fit *f, const spyC_model *m,
                            const double *v, const double *lo,
                            const double *hi, unsigned clamped) {
  spy_cost_coef *c = calloc((size_t)m->ncoef, sizeof *c);
  if (!c) return NULL;
  for (int k = 0; k < m->ncoef; k++) {
    c[k].name = m->coef[k];
    c[k].value = v[k];
    c[k].lo = lo ? lo[k] : NAN;
    c[k].hi = hi ? hi[k] : NAN;
    c[k].clamped = (int)(clamped >> k & 1);
  }
  (void)f;
  return c;
}

/* ===================================================================
** One primitive
** =================================================================== */

#define MAXCAND 16

/* Fitting one primitive is a pipeline of steps over this state: describe
** the calls, choose a model, fit it on every call (culling if asked),
** assess it, split off the GC share, fit the upper bound. Each step
** returns 0 to go on, STOP when it has set f->status and f->message (the
** primitive cannot be fitted: not an error of the run), or a negative
** SPY_E* code. */
#define STOP 1

typedef struct fitctx {
  const spyC_prim *p;
  const spy_cost_options *o;
  const char *user;     /* the user's model for this primitive, or NULL */
  spy_cost_fit *f;
  spyC_fitpriv *pv;
  gsl_rng *rng;
  spyC_sopt so;
  spyC_cand cand[MAXCAND];
  int nc;
  int pick;             /* the chosen candidate, or -1 */
  spyC_design d;        /* the chosen model on the calls used */
  const size_t *rowmap; /* design row -> call, after culling; NULL: same */
  spyC_sinfo info;
  double *e;            /* relative residuals of the design's rows */
  double *tmp;          /* scratch of max(n, 1) values */
  size_t *keep;
} fitctx;

/* Mean, median and maximum time, each variable's mean and range: shown
** whether or not a model can be fitted. */
static int describe(fitctx *fc) {
  const spyC_prim *p = fc->p;
  spy_cost_fit *f = fc->f;
  spyC_fitpriv *pv = fc->pv;
  f->nobs = p->n;
  for (unsigned v = 0; v < p->nvars; v++) {
    pv->lo[v] = INFINITY;
    pv->hi[v] = -INFINITY;
  }
  double tsum = 0, tmax = 0;
  for (size_t i = 0; i < p->n; i++) {
    tsum += p->t[i];
    tmax = fmax(tmax, p->t[i]);
    for (unsigned v = 0; v < p->nvars; v++) {
      double x = p->x[i * p->nvars + v];
      pv->mean[v] += x;
      pv->lo[v] = fmin(pv->lo[v], x);
      pv->hi[v] = fmax(pv->hi[v], x);
    }
  }
  for (unsigned v = 0; v < p->nvars; v++)
    pv->mean[v] /= p->n ? (double)p->n : 1;
  f->mean_ns = p->n ? tsum / (double)p->n : NAN;
  f->max_ns = tmax;
  if (!(fc->tmp = malloc((p->n ? p->n : 1) * sizeof *fc->tmp)))
    return SPY_ENOMEM;
  memcpy(fc->tmp, p->t, p->n * sizeof *fc->tmp);
  f->median_ns = p->n ? spyC_quantile(fc->tmp, p->n, 0.5) : NAN;
  if (p->n < 30) f->flags |= SPY_COST_F_FEW;
  if (p->n < fc->o->min_obs || p->n < 2) {
    f->status = SPY_ENOENT;
    f->message = ownf(f, "%zu observation%s; at least %zu needed to fit",
                      p->n, p->n == 1 ? "" : "s",
                      fc->o->min_obs > 2 ? fc->o->min_obs : 2);
    return STOP;
  }
  return 0;
}

/* The candidates as the fit shows them: best cross-validation loss
** first, failed candidates last. */
static int list_candidates(fitctx *fc) {
  spy_cost_fit *f = fc->f;
  int nc = fc->nc;
  f->cand = calloc((size_t)nc, sizeof *f->cand);
  if (!f->cand) return SPY_ENOMEM;
  int order[MAXCAND];
  for (int i = 0; i < nc; i++) order[i] = i;
  for (int i = 1; i < nc; i++)
    for (int j = i; j > 0; j--) {
      const spyC_cand *a = &fc->cand[order[j - 1]], *b = &fc->cand[order[j]];
      int swap = (!a->ok && b->ok) || (a->ok && b->ok && b->loss < a->loss);
      if (!swap) break;
      int t = order[j];
      order[j] = order[j - 1];
      order[j - 1] = t;
    }
  for (int i = 0; i < nc; i++) {
    const spyC_cand *c = &fc->cand[order[i]];
    spy_cost_candidate *o_ = &f->cand[f->ncand++];
    o_->family = c->family;
    o_->expr = ownf(f, "%s", c->text);
    o_->ncoef = (unsigned)c->m.ncoef;
    o_->cv_loss = c->loss;
    o_->cv_se = c->se;
    o_->ok = c->ok;
  }
  return 0;
}

/* The candidate models (the families over the sizes that vary, or the
** user's), chosen by cross-validation when more than one can be fitted;
** the chosen model moves into pv->m. */
static int choose_model(fitctx *fc) {
  const spyC_prim *p = fc->p;
  spy_cost_fit *f = fc->f;
  spyC_fitpriv *pv = fc->pv;
  unsigned varying = 0;
  for (unsigned v = 0; v < p->nvars; v++)
    if (pv->hi[v] > pv->lo[v]) varying |= 1u << v;
  int nc = candidates(p, fc->o, fc->user, varying, fc->cand, MAXCAND);
  if (nc < 0) return nc;
  fc->nc = nc;
  int pick = -1, nok = 0;
  for (int i = 0; i < nc; i++) {
    if (fc->cand[i].ok && pick < 0) pick = i;
    nok += fc->cand[i].ok;
  }
  if (nok > 1) {
    pick = spyC_select(p, fc->cand, (size_t)nc, fc->o->folds,
                       fc->o->select_rows, &fc->so, fc->rng);
    if (pick < -1) return pick;
  }
  for (int i = 0; i < nc; i++)
    if (!fc->cand[i].ok && strcmp(fc->cand[i].family, "user") != 0)
      f->flags |= SPY_COST_F_UNDEF;
  f->loss_name = spyC_loss_name(&fc->so);
  int rc;
  if (nc > 1 && (rc = list_candidates(fc))) return rc;
  if (pick < 0) {
    f->status = SPY_EFORMAT;
    f->message = ownf(f, nc == 1 && strcmp(fc->cand[0].family, "user") == 0
                             ? "the model is undefined on these calls or "
                               "cannot be fitted"
                             : "no candidate model can be fitted to these "
                               "calls");
    return STOP;
  }
  spyC_cand *ch = &fc->cand[pick];
  fc->pick = pick;
  f->family = ch->family;
  pv->m = ch->m;
  memset(&ch->m, 0, sizeof ch->m);
  f->model = ownf(f, "%s", ch->text);
  return 0;
}

/* With --cull: refit without the calls whose relative residual is more
** than o->cull robust sigmas from the median, from the fit on all of
** them; kept only when enough calls remain to fit. */
static int cull(fitctx *fc) {
  spy_cost_fit *f = fc->f;
  spyC_fitpriv *pv = fc->pv;
  size_t k = cull_rows(fc->e, fc->d.n, fc->o->cull, fc->tmp, fc->keep);
  if (k == fc->d.n || k <= (size_t)fc->d.p) return 0;
  spyC_design dc;
  int rc = spyC_design_build(&pv->m, fc->p, fc->keep, k, &dc, NULL);
  if (rc) return rc;
  spyC_design_free(&fc->d);
  fc->d = dc;
  fc->rowmap = fc->keep;
  f->culled = f->nobs - k;
  f->used = k;
  f->flags |= SPY_COST_F_CULLED;
  spyC_sopt warm = fc->so;
  warm.warm = 1;
  if (spyC_solve(&(spyC_prob){dc.n, dc.p, dc.X, dc.y, NULL}, &warm,
                 pv->beta, &fc->info) == SPY_ENOMEM)
    return SPY_ENOMEM;
  rel_resid(&fc->d, pv->beta, fc->e);
  return 0;
}

/* The chosen model fitted on every call (then culled, if asked); the
** model may still be undefined at some call, or the design singular. */
static int fit_calls(fitctx *fc) {
  const spyC_prim *p = fc->p;
  spy_cost_fit *f = fc->f;
  spyC_fitpriv *pv = fc->pv;
  size_t bad;
  int rc = spyC_design_build(&pv->m, p, NULL, 0, &fc->d, &bad);
  if (rc == SPY_EFORMAT) {
    f->status = SPY_EFORMAT;
    if (p->line && p->line[bad])
      f->message = ownf(f, "the model is undefined at line %lu",
                        (unsigned long)p->line[bad]);
    else
      f->message = ownf(f, "the model is undefined at call %zu", bad + 1);
    return STOP;
  }
  if (rc) return rc;
  const spyC_design *d = &fc->d;
  if (spyC_solve(&(spyC_prob){d->n, d->p, d->X, d->y, NULL}, &fc->so,
                 pv->beta, &fc->info)) {
    f->status = SPY_EFORMAT;
    f->message = ownf(f, "the model cannot be fitted (singular design)");
    return STOP;
  }
  fc->e = malloc(d->n * sizeof *fc->e);
  fc->keep = malloc(d->n * sizeof *fc->keep);
  if (!fc->e || !fc->keep) return SPY_ENOMEM;
  rel_resid(d, pv->beta, fc->e);
  f->used = d->n;
  if (fc->o->cull > 0) return cull(fc);
  return 0;
}

/* How good the fit is (flags, R^2, outliers, median relative error) and
** the coefficients with their bootstrap intervals. */
static int assess(fitctx *fc) {
  const spyC_design *d = &fc->d;
  spy_cost_fit *f = fc->f;
  spyC_fitpriv *pv = fc->pv;
  const spy_cost_options *o = fc->o;
  if (fc->info.illcond) f->flags |= SPY_COST_F_ILLCOND;
  if (!fc->info.converged) f->flags |= SPY_COST_F_NOCONV;
  if (fc->info.clamped) f->flags |= SPY_COST_F_NEGATIVE;
  goodness(d, pv->beta, &f->r2, &f->adj_r2, &f->rmse);
  tukey(f, fc->e, d->n, fc->tmp);
  /* The median relative error |time/fit - 1|: what a person means by
  ** "how far off is the model", untouched by the slow tail. */
  for (size_t i = 0; i < d->n; i++) fc->tmp[i] = fabs(fc->e[i]);
  f->mre = spyC_quantile(fc->tmp, d->n, 0.5);

  double lo[SPYC_MAXCOEF], hi[SPYC_MAXCOEF];
  int rc = spyC_bootstrap(d, &fc->so, pv->beta, o->bootstrap, o->boot_rows,
                          o->level, fc->rng, lo, hi);
  if (rc) return rc;
  if (fc->so.nonneg)
    for (int k = 0; k < pv->m.ncoef; k++) {
      /* Intervals of constrained coefficients respect the constraint. */
      if (lo[k] < 0) lo[k] = 0;
      if (hi[k] < 0) hi[k] = 0;
    }
  f->ncoef = (size_t)pv->m.ncoef;
  if (!(f->coef = coefs(f, &pv->m, pv->beta, lo, hi, fc->info.clamped)))
    return SPY_ENOMEM;
  f->fitted = own(f, spyC_model_print(&pv->m, pv->beta, 4,
                                      (const char *const *)fc->p->var));
  return 0;
}

/* GC decomposition (core_bench): time = nominal + ns/GC * GCs, as means
** over the calls, when the model has a c_gc term on a gc column. */
static void gc_split(fitctx *fc) {
  const spyC_prim *p = fc->p;
  const spyC_design *d = &fc->d;
  spy_cost_fit *f = fc->f;
  spyC_fitpriv *pv = fc->pv;
  int gk = spyC_model_coef(&pv->m, "c_gc");
  for (unsigned v = p->nsizes; v < p->nvars && gk >= 0; v++) {
    if (strcmp(p->var[v], "gc") != 0) continue;
    double total = 0;
    for (size_t i = 0; i < d->n; i++) {
      const double *x = d->X + i * (size_t)d->p;
      for (int j = 0; j < d->p; j++) total += x[j] * pv->beta[j];
      /* Plus the coefficient-free part, if the model has one. */
      total += p->t[fc->rowmap ? fc->rowmap[i] : i] - d->y[i];
    }
    total /= (double)d->n;
    f->has_gc = 1;
    f->ns_per_gc = pv->beta[gk];
    f->gc_per_call = pv->mean[v];
    f->nominal_ns = total - f->ns_per_gc * f->gc_per_call;
    f->gc_share = total > 0 ? f->ns_per_gc * f->gc_per_call / total : NAN;
  }
}

/* The fitted bounds into the public f->bound[], and the coverage flag
** when the hold-out coverage of the quantile bound is further from D
** than its binomial noise allows. */
static int show_bounds(fitctx *fc) {
  static const char *const names[3] = {"quantile", "shift", "asymmetric"};
  spy_cost_fit *f = fc->f;
  spyC_fitpriv *pv = fc->pv;
  f->nbounds = fc->o->compare ? 3 : 1;
  for (unsigned k = 0; k < f->nbounds; k++) {
    spy_cost_bound *b = &f->bound[k];
    const spyC_bound *ib = &pv->bound[k];
    b->method = names[k];
    b->ok = ib->ok;
    if (!ib->ok) continue;
    b->coverage = ib->coverage;
    b->train_coverage = ib->train_coverage;
    b->ntrain = ib->ntrain;
    b->ntest = ib->ntest;
    b->param = ib->param;
    b->ncoef = (size_t)pv->bm.ncoef;
    if (!(b->coef = coefs(f, &pv->bm, ib->beta, NULL, NULL, 0)))
      return SPY_ENOMEM;
    char *txt = spyC_model_print(&pv->bm, ib->beta, 4,
                                 (const char *const *)fc->p->var);
    if (txt && ib->shift != 0) {
      b->fitted = ownf(f, "%s + %.4g", txt, ib->shift);
      free(txt);
    } else {
      b->fitted = own(f, txt);
    }
  }
  const spyC_bound *q = &pv->bound[SPYC_BOUND_QUANTILE];
  if (q->ok) {
    double D = fc->o->confidence;
    double se = sqrt(D * (1 - D) *
                     (1.0 / (double)q->ntest + 1.0 / (double)q->ntrain));
    if (fabs(q->coverage - D) > 3 * se + 0.5 / (double)q->ntest)
      f->flags |= SPY_COST_F_COVERAGE;
  }
  return 0;
}

/* The D bound, on sizes alone (the chosen family without its extra
** terms, or the user's model); none when that model cannot be parsed on
** these variables or is undefined somewhere. */
static int fit_bound(fitctx *fc) {
  const spyC_prim *p = fc->p;
  const spy_cost_options *o = fc->o;
  spyC_fitpriv *pv = fc->pv;
  const spyC_cand *ch = &fc->cand[fc->pick];
  fc->f->confidence = o->confidence;
  const char *btext = ch->text;
  char *bfree = NULL;
  if (strcmp(ch->family, "user") != 0) {
    bfree = spyC_family_expr(spyC_family_find(ch->family),
                             (const char *const *)p->var, p->nsizes,
                             o->breaks, o->nbreaks);
    if (!bfree) return SPY_ENOMEM;
    btext = bfree;
  } else if (fc->user) {
    btext = fc->user;
  }
  int prc = spyC_model_parse(&pv->bm, btext, (const char *const *)p->var,
                             (int)p->nvars, NULL, NULL, 0);
  free(bfree);
  if (prc) return 0;
  pv->has_bound = 1;
  int rc = spyC_dconf(p, &pv->bm, o->confidence, o->holdout, o->bound_rows,
                      o->compare, fc->so.nonneg, fc->so.seed, fc->rng,
                      pv->bound);
  if (rc == SPY_EFORMAT) rc = 0; /* undefined somewhere: no bound */
  if (rc) return rc;
  return show_bounds(fc);
}

/* Fit primitive P into F: the steps above in order, each primitive with
** its own random stream (seeded from o->seed and its name). Returns 0
** (F's status says whether a model was fitted) or SPY_ENOMEM. */
static int fit_prim(const spyC_prim *p, const spy_cost_options *o,
                    const char *user, spy_cost_fit *f) {
  fitctx fc = {.p = p, .o = o, .user = user, .f = f, .pv = SPYC_PRIV(f),
               .pick = -1};
  if (!(fc.rng = gsl_rng_alloc(gsl_rng_taus2))) return SPY_ENOMEM;
  gsl_rng_set(fc.rng, spyC_seed(o->seed, p->name));
  spyC_sopt_init(&fc.so, o);
  fc.so.seed = spyC_seed(o->seed, p->name);
  int rc = describe(&fc);
  if (rc == 0) rc = choose_model(&fc);
  if (rc == 0) rc = fit_calls(&fc);
  if (rc == 0) rc = assess(&fc);
  if (rc == 0) {
    gc_split(&fc);
    rc = fit_bound(&fc);
  }
  for (int i = 0; i < fc.nc; i++) {
    free(fc.cand[i].text);
    spyC_model_free(&fc.cand[i].m);
  }
  spyC_design_free(&fc.d);
  free(fc.e);
  free(fc.tmp);
  free(fc.keep);
  gsl_rng_free(fc.rng);
  return rc == STOP ? 0 : rc;
}

/* ===================================================================
** Entry point
** =================================================================== */

/* The user model for primitive NAME: its own, else the global one. */
static const char *user_model(const spy_cost_options *o, const char *name) {
  const char *global = NULL;
  for (size_t i = 0; i < o->nmodels; i++) {
    if (!o->models[i].prim) global = o->models[i].expr;
    else if (strcmp(o->models[i].prim, name) == 0) return o->models[i].expr;
  }
  return global;
}

static int check_options(const spy_cost_options *o, char *err,
                         size_t errlen) {
  const char *bad = NULL;
  if (o->solver < SPY_COST_MEDIAN || o->solver > SPY_COST_QUANTILE)
    bad = "unknown solver";
  else if (!(o->tau > 0 && o->tau < 1)) bad = "tau must be in (0, 1)";
  else if (!(o->confidence > 0 && o->confidence < 1))
    bad = "the confidence D must be in (0, 1)";
  else if (!(o->level > 0 && o->level < 1))
    bad = "the interval level must be in (0, 1)";
  else if (!(o->holdout > 0 && o->holdout < 1))
    bad = "the hold-out fraction must be in (0, 1)";
  else if (!(o->ridge >= 0)) bad = "the ridge penalty must be >= 0";
  else if (!(o->cull >= 0)) bad = "the cull threshold must be >= 0";
  else if (o->folds < 2 || o->folds > 100) bad = "folds must be 2..100";
  else if (o->select_rows < 10) bad = "select_rows must be >= 10";
  else if (o->nbreaks && !o->breaks) bad = "breaks missing";
  if (bad) {
    if (err && errlen) snprintf(err, errlen, "%s", bad);
    return SPY_EINVAL;
  }
  for (size_t i = 0; i < o->nbreaks; i++)
    if (!isfinite(o->breaks[i])) {
      if (err && errlen) snprintf(err, errlen, "breakpoints must be finite");
      return SPY_EINVAL;
    }
  for (const char *s = o->families; s && *s;) {
    const char *e = strchr(s, ',');
    size_t l = e ? (size_t)(e - s) : strlen(s);
    char name[32];
    if (l >= sizeof name) l = sizeof name - 1;
    memcpy(name, s, l);
    name[l] = '\0';
    if (!spyC_family_find(name)) {
      if (err && errlen)
        snprintf(err, errlen, "unknown family '%s' (known: %s)", name,
                 spy_cost_families());
      return SPY_EINVAL;
    }
    s = e ? e + 1 : s + l;
  }
  return 0;
}

/* A pool of workers taking the next unfitted primitive. */
typedef struct pool {
  const spy_cost_data *d;
  const spy_cost_options *o;
  spy_cost_result *r;
  pthread_mutex_t lock;
  size_t next;
  int rc;
} pool;

static void *worker(void *arg) {
  pool *pl = arg;
  for (;;) {
    pthread_mutex_lock(&pl->lock);
    size_t i = pl->next++;
    int stop = pl->rc != 0;
    pthread_mutex_unlock(&pl->lock);
    if (stop || i >= pl->r->nfits) break;
    spy_cost_fit *f = &pl->r->fits[i];
    const spyC_prim *p = &pl->d->prim[f->prim];
    int rc = fit_prim(p, pl->o, user_model(pl->o, p->name), f);
    if (rc) {
      pthread_mutex_lock(&pl->lock);
      if (!pl->rc) pl->rc = rc;
      pthread_mutex_unlock(&pl->lock);
    }
  }
  return NULL;
}

static int fit_all(const spy_cost_data *d, const spy_cost_options *o,
                   spy_cost_result *r) {
  pool pl = {.d = d, .o = o, .r = r};
  unsigned nt = o->threads;
  if (nt == 0) {
    long c = sysconf(_SC_NPROCESSORS_ONLN);
    nt = c > 0 ? (unsigned)c : 1;
  }
  if (nt > r->nfits) nt = (unsigned)r->nfits;
  if (nt > 64) nt = 64;
  pthread_t th[64];
  unsigned started = 0;
  pthread_mutex_init(&pl.lock, NULL);
  for (unsigned t = 1; t < nt; t++)
    if (pthread_create(&th[started], NULL, worker, &pl) == 0) started++;
  worker(&pl);
  for (unsigned t = 0; t < started; t++) pthread_join(th[t], NULL);
  pthread_mutex_destroy(&pl.lock);
  return pl.rc;
}

int spy_cost_fit_data(const spy_cost_data *d, const spy_cost_options *o,
                      const char *const *only, size_t nonly,
                      spy_cost_result **out, char *err, size_t errlen) {
  spy_cost_options def;
  if (!o) {
    spy_cost_options_init(&def);
    o = &def;
  }
  if (!d || !out) return SPY_EINVAL;
  *out = NULL;
  int rc = check_options(o, err, errlen);
  if (rc) return rc;
  for (size_t i = 0; i < nonly; i++)
    if (spyC_data_find(d, only[i], strlen(only[i])) < 0) {
      if (err && errlen)
        snprintf(err, errlen, "no primitive named '%s'", only[i]);
      return SPY_ENOENT;
    }
  /* A model for a primitive that is not there is a typo, not a no-op. */
  for (size_t i = 0; i < o->nmodels; i++)
    if (o->models[i].prim &&
        spyC_data_find(d, o->models[i].prim, strlen(o->models[i].prim)) < 0) {
      if (err && errlen)
        snprintf(err, errlen, "no primitive named '%s' (for the model '%s')",
                 o->models[i].prim, o->models[i].expr);
      return SPY_ENOENT;
    }
  /* Check every user model against its primitives before any work. */
  for (size_t i = 0; i < d->n; i++) {
    const spyC_prim *p = &d->prim[i];
    const char *um = user_model(o, p->name);
    if (!um) continue;
    if (strncmp(um, "family:", 7) == 0) {
      if (!spyC_family_find(um + 7)) {
        if (err && errlen)
          snprintf(err, errlen, "unknown family '%s' (known: %s)", um + 7,
                   spy_cost_families());
        return SPY_EINVAL;
      }
      continue;
    }
    char msg[200];
    int col = 0;
    spyC_model m;
    if (spyC_model_parse(&m, um, (const char *const *)p->var, (int)p->nvars,
                         &col, msg, sizeof msg)) {
      if (err && errlen)
        snprintf(err, errlen, "%s: model:1:%d: %s", p->name, col, msg);
      return SPY_EINVAL;
    }
    spyC_model_free(&m);
  }
  spy_cost_result *r = calloc(1, sizeof *r);
  if (!r) return SPY_ENOMEM;
  r->opts = *o;
  r->opts.models = NULL;
  r->opts.nmodels = 0;
  r->opts.families = NULL;
  r->opts.breaks = NULL;
  r->opts.nbreaks = 0;
  r->source = spyC_strdup(d->source ? d->source : "");
  r->fits = calloc(d->n ? d->n : 1, sizeof *r->fits);
  if (!r->fits || !r->source) {
    spy_cost_result_free(r);
    return SPY_ENOMEM;
  }
  /* Lay out the fits first, then fit them, in parallel when asked. */
  for (size_t i = 0; i < d->n && rc == 0; i++) {
    const spyC_prim *p = &d->prim[i];
    int wanted = nonly == 0;
    for (size_t k = 0; k < nonly && !wanted; k++)
      wanted = strcmp(only[k], p->name) == 0;
    if (!wanted) continue;
    spy_cost_fit *f = &r->fits[r->nfits++];
    spyC_fitpriv *pv = calloc(1, sizeof *pv);
    if (!pv) {
      rc = SPY_ENOMEM;
      break;
    }
    pv->m.root = pv->m.offset = pv->bm.root = pv->bm.offset = -1;
    f->priv_ = pv;
    f->prim = i;
    f->nsizes = p->nsizes;
    f->nvars = p->nvars;
    for (unsigned v = 0; v < p->nvars; v++)
      if (!(pv->var[v] = spyC_strdup(p->var[v]))) rc = SPY_ENOMEM;
    f->vars = (const char *const *)pv->var;
    if (rc == 0 && !(f->name = own(f, spyC_strdup(p->name)))) rc = SPY_ENOMEM;
  }
  gsl_quiet(1);
  if (rc == 0) rc = fit_all(d, o, r);
  gsl_quiet(0);
  if (rc) {
    if (err && errlen)
      snprintf(err, errlen, "%s", rc == SPY_ENOMEM ? "out of memory"
                                                   : "fitting failed");
    spy_cost_result_free(r);
    return rc;
  }
  *out = r;
  return 0;
}
