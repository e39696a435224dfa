/*
** tests/test_cost_fit.c: the "cost" suite, continued: planted truth through
** the whole pipeline (selection, bounds, intervals, GC, culling, user
** models, threads) and its outputs (tables, JSON, CSV, the generated C
** header). The data are made by tests/test_cost.c's planted().
*/
#include <math.h>
#include <unistd.h>

#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>

#include "tests/test_cost.h"

/* ===================================================================
** Planted truth through the whole pipeline
** =================================================================== */

void t_cost_planted_product(void) {
  spy_cost_data *d = planted(&PRODUCT, "LargeInt>>*", 60000, 1);
  spy_cost_options o;
  spy_cost_options_init(&o);
  spy_cost_result *r = fit(d, &o);
  const spy_cost_fit *f = &r->fits[0];
  T_EQ_INT(f->status, 0);
  T_EQ_STR(f->family, "product");
  T_EQ_STR(f->model, "c0 + c1*a*b");
  T_REL(coef(f, "c0")->value, 40, 0.02);
  T_REL(coef(f, "c1")->value, 0.5, 0.02);
  /* Least squares is dragged up by the slow tail: the point of the
  ** default. */
  o.solver = SPY_COST_OLS;
  o.families = "product";
  o.bootstrap = 0;
  o.nonneg = 0;
  spy_cost_result *ols = fit(d, &o);
  T_ASSERT(ols->fits[0].coef[1].value > 0.5 * 1.1);
  spy_cost_result_free(ols);
  spy_cost_result_free(r);
  spy_cost_data_free(d);
}

void t_cost_planted_nlogn(void) {
  spy_cost_data *d = planted(&NLOGN, "sort", 60000, 2);
  spy_cost_options o;
  spy_cost_options_init(&o);
  spy_cost_result *r = fit(d, &o);
  const spy_cost_fit *f = &r->fits[0];
  T_EQ_STR(f->family, "nlogn");
  T_REL(coef(f, "c0")->value, 30, 0.02);
  T_REL(coef(f, "c1")->value, 2.0, 0.02);
  /* The runners-up are listed, worse first-to-last. */
  T_ASSERT(f->ncand >= 6);
  T_EQ_STR(f->cand[0].family, "nlogn");
  for (size_t k = 1; k < f->ncand; k++)
    T_ASSERT(f->cand[k].cv_loss >= f->cand[k - 1].cv_loss);
  spy_cost_result_free(r);
  spy_cost_data_free(d);
}

/* The right family among the built-ins, for several planted ones. */
void t_cost_planted_families(void) {
  static const struct {
    plant pl;
    const char *family;
  } cases[] = {
    {{F_LINEAR, 50, 4, 0.2, 0.01, 20, 0, 0}, "linear"},
    {{F_QUADRATIC, 200, 0.3, 0.2, 0.01, 20, 0, 0}, "quadratic"},
    {{F_SUM, 60, 7, 0.2, 0.01, 20, 0, 0}, "sum"},
    {{F_MAX, 60, 7, 0.2, 0.01, 20, 0, 0}, "max"},
    {{F_PRODUCT, 40, 0.5, 0.2, 0.01, 20, 0, 0}, "product"},
    {{F_NLOGN, 30, 2, 0.2, 0.01, 20, 0, 0}, "nlogn"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    spy_cost_data *d = planted(&cases[i].pl, "p", 20000, 100 + i);
    spy_cost_options o;
    spy_cost_options_init(&o);
    o.bootstrap = 0;
    o.compare = 0;
    spy_cost_result *r = fit(d, &o);
    if (strcmp(r->fits[0].family, cases[i].family))
      T_FAIL("case %zu: chose %s, planted %s", i, r->fits[0].family,
             cases[i].family);
    T_REL(r->fits[0].coef[1].value, cases[i].pl.c1, 0.02);
    spy_cost_result_free(r);
    spy_cost_data_free(d);
  }
}

/* Coverage of the D bound on held-out calls, and on fresh calls from the
** same distribution: within one percentage point of D. */
void t_cost_dconf_coverage(void) {
  static const double levels[] = {0.95, 0.9, 0.99};
  for (int k = 0; k < 3; k++) {
    double D = levels[k];
    spy_cost_data *d = planted(&PRODUCT, "mul", 100000, 7 + k);
    spy_cost_options o;
    spy_cost_options_init(&o);
    o.confidence = D;
    o.bootstrap = 0;
    o.families = "product";
    spy_cost_result *r = fit(d, &o);
    const spy_cost_fit *f = &r->fits[0];
    T_ASSERT(f->bound[0].ok);
    T_EQ_STR(f->bound[0].method, "quantile");
    T_EQ_INT(f->bound[0].ntest, 20000);
    T_NEAR(f->bound[0].coverage, D, 0.01);
    /* Fresh calls the fit never saw. */
    gsl_rng *g = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(g, 1000 + k);
    size_t under = 0, n = 200000;
    for (size_t i = 0; i < n; i++) {
      double v[3], y;
      draw(&PRODUCT, g, v, &y);
      under += y <= spy_cost_eval(f, 1, v);
    }
    T_NEAR((double)under / (double)n, D, 0.01);
    /* Seed 002's algorithms are reported beside it. */
    T_EQ_INT(f->nbounds, 3);
    T_EQ_STR(f->bound[1].method, "shift");
    T_EQ_STR(f->bound[2].method, "asymmetric");
    T_ASSERT(f->bound[1].ok && f->bound[2].ok);
    T_NEAR(f->bound[1].train_coverage, D, 0.002);
    T_NEAR(f->bound[2].train_coverage, D, 0.002);
    gsl_rng_free(g);
    spy_cost_result_free(r);
    spy_cost_data_free(d);
  }
}

/* NNLS never returns a negative coefficient, and one that wanted to go
** negative is flagged. */
void t_cost_nonneg(void) {
  plant neg = {F_LINEAR, -500, 3, 0.05, 0, 0, 0, 0};
  gsl_rng *g = gsl_rng_alloc(gsl_rng_mt19937);
  gsl_rng_set(g, 3);
  spy_cost_data *d = spy_cost_data_new();
  const char *nn[] = {"n"};
  int id = spy_cost_data_add_prim(d, "neg", 1, nn, 0, NULL);
  for (int i = 0; i < 5000; i++) {
    double v[2] = {200 + gsl_rng_uniform(g) * 1e4, 0};
    double y = truth(&neg, v) * (1 + gsl_ran_gaussian(g, 0.02));
    spy_cost_data_add_obs(d, id, v, y);
  }
  static const spy_cost_solver solvers[] = {SPY_COST_NNLS, SPY_COST_MEDIAN,
                                            SPY_COST_OLS, SPY_COST_QUANTILE};
  for (int k = 0; k < 4; k++) {
    spy_cost_options o;
    spy_cost_options_init(&o);
    o.solver = solvers[k];
    o.tau = 0.8;
    o.families = "linear";
    spy_cost_result *r = fit(d, &o);
    const spy_cost_fit *f = &r->fits[0];
    for (size_t j = 0; j < f->ncoef; j++) {
      T_ASSERT(f->coef[j].value >= 0);
      if (isfinite(f->coef[j].lo)) T_ASSERT(f->coef[j].lo >= 0);
    }
    T_ASSERT(coef(f, "c0")->clamped);
    T_ASSERT(f->flags & SPY_COST_F_NEGATIVE);
    for (size_t j = 0; j < f->bound[0].ncoef; j++)
      T_ASSERT(f->bound[0].coef[j].value >= 0);
    spy_cost_result_free(r);
  }
  /* Allowed to go negative, it does, and is still flagged. */
  spy_cost_options o;
  spy_cost_options_init(&o);
  o.nonneg = 0;
  o.families = "linear";
  spy_cost_result *r = fit(d, &o);
  T_REL(coef(&r->fits[0], "c0")->value, -500, 0.05);
  T_ASSERT(r->fits[0].flags & SPY_COST_F_NEGATIVE);
  spy_cost_result_free(r);
  spy_cost_data_free(d);
  gsl_rng_free(g);
}

/* Percentile intervals contain the truth at about their nominal rate:
** repeated planted data sets, plain pairs bootstrap (n <= boot_rows) and
** the bag of little bootstraps (n > boot_rows). */
void t_cost_bootstrap_coverage(void) {
  static const struct {
    size_t n, reps, boot_rows;
  } runs[] = {{300, 120, 5000}, {6000, 50, 2000}};
  for (int k = 0; k < 2; k++) {
    int hit0 = 0, hit1 = 0, total = 0;
    for (size_t rep = 0; rep < runs[k].reps; rep++) {
      spy_cost_data *d = planted(&PRODUCT, "m", runs[k].n, 5000 + rep);
      spy_cost_options o;
      spy_cost_options_init(&o);
      o.families = "product";
      o.compare = 0;
      o.confidence = 0.5;
      o.seed = rep + 1;
      o.boot_rows = runs[k].boot_rows;
      spy_cost_result *r = fit(d, &o);
      const spy_cost_fit *f = &r->fits[0];
      hit0 += f->coef[0].lo <= 40 && 40 <= f->coef[0].hi;
      hit1 += f->coef[1].lo <= 0.5 && 0.5 <= f->coef[1].hi;
      total++;
      spy_cost_result_free(r);
      spy_cost_data_free(d);
    }
    double c0 = (double)hit0 / total, c1 = (double)hit1 / total;
    fprintf(stderr, "bootstrap n=%zu: coverage %.3f %.3f\n", runs[k].n, c0,
            c1);
    /* 95 % nominal; the binomial spread over 50-120 repetitions is
    ** 2-3 %. */
    T_ASSERT(c0 >= 0.87 && c0 <= 1.0);
    T_ASSERT(c1 >= 0.87 && c1 <= 1.0);
  }
}

/* time = nominal + cost per GC event (core_bench's decomposition). */
void t_cost_gc_decomposition(void) {
  plant pl = NLOGN;
  pl.gc_rate = 0.05;
  pl.gc_ns = 80000;
  spy_cost_data *d = planted(&pl, "alloc", 40000, 21);
  spy_cost_options o;
  spy_cost_options_init(&o);
  o.bootstrap = 0;
  spy_cost_result *r = fit(d, &o);
  const spy_cost_fit *f = &r->fits[0];
  T_EQ_STR(f->model, "c0 + c1*n*log2(n + 1) + c_gc*gc");
  T_ASSERT(f->has_gc);
  T_REL(f->ns_per_gc, 80000, 0.02);
  T_NEAR(f->gc_per_call, 0.05, 0.005);
  T_REL(coef(f, "c1")->value, 2.0, 0.02);
  T_ASSERT(f->gc_share > 0 && f->gc_share < 1);
  spy_cost_result_free(r);
  spy_cost_data_free(d);
}

/* Tukey fences count planted outliers exactly; --cull removes and counts
** them; R^2 of exact data is 1. */
void t_cost_outliers_cull(void) {
  gsl_rng *g = gsl_rng_alloc(gsl_rng_mt19937);
  gsl_rng_set(g, 4);
  spy_cost_data *d = spy_cost_data_new();
  const char *nn[] = {"n"};
  int id = spy_cost_data_add_prim(d, "p", 1, nn, 0, NULL);
  for (int i = 0; i < 3000; i++) {
    double v = 1 + gsl_rng_uniform_int(g, 1000);
    double y = (10 + 2 * v) * (1 + 0.01 * (gsl_rng_uniform(g) - 0.5));
    if (i % 100 == 7) y *= 10; /* 30 planted slow calls */
    spy_cost_data_add_obs(d, id, &v, y);
  }
  spy_cost_options o;
  spy_cost_options_init(&o);
  o.families = "linear";
  o.bootstrap = 0;
  spy_cost_result *r = fit(d, &o);
  const spy_cost_fit *f = &r->fits[0];
  T_EQ_INT(f->outliers.high_severe, 30);
  T_EQ_INT(f->outliers.high_mild + f->outliers.low_mild +
               f->outliers.low_severe,
           0);
  T_EQ_INT(f->culled, 0);
  spy_cost_result_free(r);
  o.cull = 5;
  r = fit(d, &o);
  f = &r->fits[0];
  T_EQ_INT(f->culled, 30);
  T_EQ_INT(f->used, 2970);
  T_ASSERT(f->flags & SPY_COST_F_CULLED);
  T_ASSERT(f->r2 > 0.9999);
  T_REL(coef(f, "c1")->value, 2, 0.001);
  /* The bound still sees every call. */
  T_EQ_INT(f->bound[0].ntrain + f->bound[0].ntest, 3000);
  spy_cost_result_free(r);
  spy_cost_data_free(d);
  gsl_rng_free(g);
}

/* A user model, per primitive, with a piecewise family beside it. */
void t_cost_user_models(void) {
  spy_cost_data *d = spy_cost_data_new();
  const char *nn[] = {"n"}, *ab[] = {"a", "b"};
  int p1 = spy_cost_data_add_prim(d, "hash", 1, nn, 0, NULL);
  int p2 = spy_cost_data_add_prim(d, "cmp", 2, ab, 0, NULL);
  for (int i = 1; i <= 2000; i++) {
    double n = i, v[2] = {i % 97 + 1, i % 31 + 1};
    spy_cost_data_add_obs(d, p1, &n, n <= 1000 ? 5 + 1 * n : 5 + 1000 + 4 *
                                                                 (n - 1000));
    spy_cost_data_add_obs(d, p2, v, 3 + 2 * sqrt(v[0] * v[1]) +
                                        0.5 * (v[0] > v[1] ? v[0] : v[1]));
  }
  double breaks[] = {1000};
  spy_cost_model_spec models[] = {
    {"cmp", "c0 + c1*sqrt(a*b) + c2*max(a, b)"}};
  spy_cost_options o;
  spy_cost_options_init(&o);
  o.breaks = breaks;
  o.nbreaks = 1;
  o.models = models;
  o.nmodels = 1;
  o.bootstrap = 0;
  spy_cost_result *r = fit(d, &o);
  T_EQ_STR(r->fits[0].family, "piecewise");
  T_EQ_STR(r->fits[0].model, "c0 + c1*n + c2*max(n - 1000, 0)");
  T_REL(coef(&r->fits[0], "c2")->value, 3, 1e-6);
  T_EQ_STR(r->fits[1].family, "user");
  T_REL(coef(&r->fits[1], "c1")->value, 2, 1e-6);
  T_REL(coef(&r->fits[1], "c2")->value, 0.5, 1e-6);
  T_ASSERT(r->fits[1].r2 > 0.999999);
  spy_cost_result_free(r);
  /* A model that does not parse fails the whole call with its column. */
  spy_cost_model_spec bad[] = {{"cmp", "c0 + c1*a*z"}};
  o.models = bad;
  char err[256];
  spy_cost_result *none;
  T_EQ_INT(spy_cost_fit_data(d, &o, NULL, 0, &none, err, sizeof err),
           SPY_EINVAL);
  T_EQ_STR(err, "cmp: model:1:11: unknown variable 'z' (variables are the "
                "size and predictor columns; coefficient names start with "
                "'c')");
  spy_cost_data_free(d);
}

/* Threads change nothing: every primitive has its own random stream. */
void t_cost_threads_deterministic(void) {
  spy_cost_data *d = spy_cost_data_new();
  const char *nn[] = {"n"};
  gsl_rng *g = gsl_rng_alloc(gsl_rng_mt19937);
  for (int p = 0; p < 4; p++) {
    char name[16];
    snprintf(name, sizeof name, "p%d", p);
    int id = spy_cost_data_add_prim(d, name, 1, nn, 0, NULL);
    for (int i = 0; i < 3000; i++) {
      double v = size(g, 1e4), y = (20 + (p + 1) * v) *
                                   (1 + 0.1 * gsl_ran_exponential(g, 1));
      spy_cost_data_add_obs(d, id, &v, y);
    }
  }
  spy_cost_options o;
  spy_cost_options_init(&o);
  o.threads = 1;
  spy_cost_result *a = fit(d, &o);
  o.threads = 3;
  spy_cost_result *b = fit(d, &o);
  for (size_t i = 0; i < a->nfits; i++) {
    T_EQ_STR(a->fits[i].fitted, b->fits[i].fitted);
    for (size_t k = 0; k < a->fits[i].ncoef; k++) {
      T_ASSERT(a->fits[i].coef[k].value == b->fits[i].coef[k].value);
      T_ASSERT(a->fits[i].coef[k].lo == b->fits[i].coef[k].lo);
    }
    T_ASSERT(a->fits[i].bound[0].coverage == b->fits[i].bound[0].coverage);
  }
  spy_cost_result_free(a);
  spy_cost_result_free(b);
  spy_cost_data_free(d);
  gsl_rng_free(g);
}

/* ===================================================================
** Output and generated code
** =================================================================== */

static char *write_to_string(int (*fn)(const spy_cost_result *, FILE *),
                             const spy_cost_result *r) {
  char path[512];
  snprintf(path, sizeof path, "%s/out.txt", t_tmpdir());
  FILE *f = fopen(path, "w");
  T_ASSERT(f);
  T_EQ_INT(fn(r, f), 0);
  fclose(f);
  return t_slurp(path, NULL);
}

void t_cost_outputs(void) {
  spy_cost_data *d = planted(&PRODUCT, "LargeInt>>digitMul:", 5000, 31);
  spy_cost_options o;
  spy_cost_options_init(&o);
  spy_cost_result *r = fit(d, &o);
  const spy_cost_fit *f = &r->fits[0];
  char want[512];
  char *s = write_to_string(spy_cost_write_json, r);
  snprintf(want, sizeof want, "\"fitted\": \"%s\"", f->fitted);
  T_ASSERT(strstr(s, want));
  T_ASSERT(strstr(s, "\"model\": \"c0 + c1*a*b\""));
  T_ASSERT(strstr(s, "{\"name\": \"c1\", \"value\": "));
  T_ASSERT(strstr(s, "\"method\": \"quantile\""));
  T_ASSERT(strstr(s, "\"coverage\": "));
  T_ASSERT(strstr(s, "\"r2\": "));
  T_ASSERT(strstr(s, "\"rmse_ns\": "));
  free(s);
  s = write_to_string(spy_cost_write_csv, r);
  T_ASSERT(!strncmp(s, "primitive,kind,family,model,coefficient,value,lo,hi,",
                    52));
  T_ASSERT(strstr(s, "LargeInt>>digitMul:,fit,product,c0 + c1*a*b,c1,"));
  T_ASSERT(strstr(s, "LargeInt>>digitMul:,bound,product,"));
  free(s);
  s = write_to_string(spy_cost_write_table, r);
  snprintf(want, sizeof want, "  model    product: %s ns\n", f->fitted);
  T_ASSERT(strstr(s, want));
  T_ASSERT(strstr(s, "held-out coverage"));
  T_ASSERT(strstr(s, "chosen   by 5-fold cross-validation"));
  free(s);
  spy_cost_result_free(r);
  spy_cost_data_free(d);
}

/* The generated header compiles warning-free and its integer functions
** agree with the fitted models: never below the model, at most one unit
** above, saturating at the extremes. */
void t_cost_codegen(void) {
  spy_cost_data *d = planted(&PRODUCT, "LargeInt>>*", 5000, 41);
  /* Merge the second into the first, and add a user model exercising
  ** sqrt, division, max, a fractional power and an offset. */
  const char *nn[] = {"n"}, *gc[] = {"gc"};
  int id2 = spy_cost_data_add_prim(d, "Array sort", 1, nn, 0, NULL);
  int id3 = spy_cost_data_add_prim(d, "odd", 1, nn, 1, gc);
  gsl_rng *g = gsl_rng_alloc(gsl_rng_mt19937);
  for (int i = 0; i < 5000; i++) {
    double v[3], y;
    draw(&NLOGN, g, v, &y);
    spy_cost_data_add_obs(d, id2, v, y);
    double n = size(g, 1e6), x[2] = {n, (double)(i % 10 == 0)};
    spy_cost_data_add_obs(d, id3, x, (7 + 3 * sqrt(n) + n / 9 +
                                      0.01 * pow(n, 1.5)) *
                                         (1 + 0.05 * gsl_rng_uniform(g)) +
                                     100 * x[1]);
  }
  spy_cost_model_spec models[] = {
    {"odd", "c0 + c1*sqrt(n) + c2*n/9 + c3*max(n, 2)^1.5 + n/1000"}};
  spy_cost_options o;
  spy_cost_options_init(&o);
  o.models = models;
  o.nmodels = 1;
  o.bootstrap = 0;
  spy_cost_result *r = fit(d, &o);
  for (int typical = 0; typical < 2; typical++) {
    spy_cost_codegen cg;
    spy_cost_codegen_init(&cg);
    cg.unit = "gas";
    cg.ns_per_unit = 2.5;
    cg.typical = typical;
    char hpath[512], cpath[512], cmd[2048];
    snprintf(hpath, sizeof hpath, "%s/costs.h", t_tmpdir());
    FILE *h = fopen(hpath, "w");
    T_EQ_INT(spy_cost_write_c(r, h, &cg), 0);
    fclose(h);
    /* A checker that prints the generated cost of every probe. */
    static const double probes[][2] = {
      {0, 0}, {1, 1}, {2, 3}, {10, 20}, {100, 7}, {999, 1000}, {4096, 3},
      {65535, 65535}, {1e6, 5}, {123457, 1}};
    snprintf(cpath, sizeof cpath, "%s/check.c", t_tmpdir());
    FILE *c = fopen(cpath, "w");
    fprintf(c, "#include <stdio.h>\n#include \"costs.h\"\nint main(void) {\n");
    for (size_t i = 0; i < sizeof probes / sizeof probes[0]; i++) {
      unsigned long long a = (unsigned long long)probes[i][0];
      unsigned long long b = (unsigned long long)probes[i][1];
      fprintf(c, "  printf(\"%%llu %%llu %%llu\\n\", (unsigned long long)"
                 "spy_cost_LargeInt_(%lluu, %lluu), (unsigned long long)"
                 "spy_cost_Array_sort(%lluu), (unsigned long long)"
                 "spy_cost_odd(%lluu));\n",
              a, b, a, a);
    }
    fprintf(c, "  printf(\"%%llu\\n\", (unsigned long long)spy_cost_LargeInt_"
               "(UINT64_MAX, UINT64_MAX));\n  return 0;\n}\n");
    fclose(c);
    snprintf(cmd, sizeof cmd,
             "cd '%s' && (cc -std=c11 -O1 -Wall -Wextra -Werror -pedantic "
             "-o check check.c || gcc -std=c11 -O1 -Wall -Wextra -Werror "
             "-pedantic -o check check.c) 1>&2 && ./check",
             t_tmpdir());
    char *out = NULL;
    T_EQ_INT(t_run(cmd, &out), 0);
    const char *s = out;
    for (size_t i = 0; i < sizeof probes / sizeof probes[0]; i++) {
      unsigned long long got[3];
      int used = 0;
      T_EQ_INT(sscanf(s, "%llu %llu %llu\n%n", &got[0], &got[1], &got[2],
                      &used),
               3);
      s += used;
      for (int k = 0; k < 3; k++) {
        const spy_cost_fit *f = &r->fits[k];
        double v[2] = {probes[i][0], probes[i][1]};
        if (k == 2) v[1] = 0.1; /* gc at its mean for the typical model */
        double model = spy_cost_eval(f, typical ? 0 : 1, v) / 2.5;
        if (k == 2 && !typical) model = spy_cost_eval(f, 1, v) / 2.5;
        double want = model <= 0 ? 0 : ceil(model);
        if (fabs((double)got[k] - want) > 1 + 1e-9 * want)
          T_FAIL("%s(%g, %g): generated %llu, model %.6f (typical %d)",
                 f->name, v[0], v[1], got[k], model, typical);
        if ((double)got[k] < model - 1e-6 * (model > 1 ? model : 1))
          T_FAIL("%s: generated %llu below the model %.6f", f->name, got[k],
                 model);
      }
    }
    unsigned long long sat;
    T_EQ_INT(sscanf(s, "%llu", &sat), 1);
    T_ASSERT(sat == UINT64_MAX);
    free(out);
  }
  gsl_rng_free(g);
  spy_cost_result_free(r);
  spy_cost_data_free(d);
}
