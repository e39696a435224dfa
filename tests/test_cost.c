/*
** tests/test_cost.c: the "cost" suite: per-primitive cost regression.
**
** Ground truth is planted: observations are drawn (with GSL's seeded
** generators, so every run sees the same numbers) from known models with
** heavy-tailed positive noise and spikes, and the fit must recover the
** model, its family, its upper bound's coverage and honest intervals.
**
** The noise: y = f(x) (1 + e), e = s (P - c) with P ~ Pareto(2.5, 1) and
** c chosen so that e has median 0 once a fraction q of calls gets a spike
** of K f(x) on top (c = Pareto quantile at 0.5 / (1 - q)). The median of
** y given x is then exactly f(x), which is what the default (median)
** solver estimates, while the mean is far above it.
*/
#include "config.h"

#include "tests/test_cost.h"

#include <math.h>
#include <unistd.h>

#include <gsl/gsl_errno.h>
#include <gsl/gsl_multifit.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>

#include <spyon.h>
#include <spyon/cost.h>
#include <spyon/profile.h>

#include "cost/expr.h"
#include "cost/quantile.h"
#include "cost/solve.h"

/* ===================================================================
** Planted data
** =================================================================== */

const double PARETO_A = 2.5;

/* The noise centre c that gives e median 0 (see the file comment). */
double centre(double q) {
  return pow(1 - 0.5 / (1 - q), -1 / PARETO_A);
}

double truth(const plant *pl, const double *v) {
  double a = v[0], b = v[1];
  switch (pl->family) {
  case F_PRODUCT: return pl->c0 + pl->c1 * a * b;
  case F_NLOGN: return pl->c0 + pl->c1 * a * log2(a + 1);
  case F_LINEAR: return pl->c0 + pl->c1 * a;
  case F_QUADRATIC: return pl->c0 + pl->c1 * a * a;
  case F_SUM: return pl->c0 + pl->c1 * (a + b);
  case F_MAX: return pl->c0 + pl->c1 * (a > b ? a : b);
  default: return pl->c0 + pl->c1 * a;
  }
}

int twosizes(int family) {
  return family == F_PRODUCT || family == F_SUM || family == F_MAX;
}

/* Sizes log-uniform in [1, hi]. */
double size(gsl_rng *r, double hi) {
  return floor(exp(gsl_rng_uniform(r) * log(hi)));
}

void draw(const plant *pl, gsl_rng *r, double *v, double *y) {
  double hi = twosizes(pl->family) ? 2000 : 100000;
  if (pl->family == F_QUADRATIC) hi = 3000;
  v[0] = size(r, hi);
  v[1] = twosizes(pl->family) ? size(r, hi) : 0;
  double f = truth(pl, v);
  double e = pl->s * (gsl_ran_pareto(r, PARETO_A, 1.0) - centre(pl->q));
  *y = f * (1 + e);
  if (gsl_rng_uniform(r) < pl->q) *y += pl->K * f;
  if (pl->gc_rate > 0) {
    v[2] = gsl_rng_uniform(r) < pl->gc_rate ? 1 : 0;
    *y += v[2] * pl->gc_ns;
  }
}

spy_cost_data *planted(const plant *pl, const char *name, size_t n,
                       unsigned long seed) {
  gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
  gsl_rng_set(r, seed);
  spy_cost_data *d = spy_cost_data_new();
  T_ASSERT(d);
  static const char *ab[] = {"a", "b"}, *nn[] = {"n"}, *gc[] = {"gc"};
  int two = twosizes(pl->family);
  int id = spy_cost_data_add_prim(d, name, two ? 2 : 1, two ? ab : nn,
                                  pl->gc_rate > 0 ? 1 : 0, gc);
  T_ASSERT(id >= 0);
  for (size_t i = 0; i < n; i++) {
    double v[3], y, row[3];
    draw(pl, r, v, &y);
    row[0] = v[0];
    row[1] = two ? v[1] : v[2];
    row[2] = v[2];
    T_EQ_INT(spy_cost_data_add_obs(d, id, row, y), 0);
  }
  gsl_rng_free(r);
  return d;
}

const plant PRODUCT = {F_PRODUCT, 40, 0.5, 0.2, 0.01, 20, 0, 0};
const plant NLOGN = {F_NLOGN, 30, 2.0, 0.2, 0.01, 20, 0, 0};

spy_cost_result *fit(const spy_cost_data *d, const spy_cost_options *o) {
  spy_cost_result *r = NULL;
  char err[256] = "";
  int rc = spy_cost_fit_data(d, o, NULL, 0, &r, err, sizeof err);
  if (rc) T_FAIL("spy_cost_fit_data: %d %s", rc, err);
  T_EQ_INT(r->nfits, spy_cost_data_nprims(d));
  return r;
}

const spy_cost_coef *coef(const spy_cost_fit *f, const char *name) {
  for (size_t k = 0; k < f->ncoef; k++)
    if (!strcmp(f->coef[k].name, name)) return &f->coef[k];
  T_FAIL("no coefficient %s in %s", name, f->model ? f->model : "?");
  return NULL;
}

/* ===================================================================
** The expression language
** =================================================================== */

static void t_expr_parse(void) {
  const char *vars[] = {"a", "b", "gc"};
  spyC_model m;
  char err[200];
  int col = 0;
  T_EQ_INT(spyC_model_parse(&m, "c0 + c1*a*b + c2*log2(a+1) - c3*b/4 + "
                                "c4*max(a, b, 7)^1.5 + sqrt(b)",
                            vars, 3, &col, err, sizeof err),
           0);
  T_EQ_INT(m.ncoef, 5);
  T_EQ_STR(m.coef[0], "c0");
  T_EQ_STR(m.coef[4], "c4");
  double x[3] = {3, 16, 0}, g[SPYC_MAXCOEF], off, st[300];
  T_EQ_INT(spyC_model_basis(&m, x, g, &off, st), 0);
  T_NEAR(g[0], 1, 0);
  T_NEAR(g[1], 48, 0);
  T_NEAR(g[2], 2, 0);
  T_NEAR(g[3], -4, 0);
  T_NEAR(g[4], pow(16, 1.5), 1e-9);
  T_NEAR(off, 4, 0);
  double beta[5] = {1, 2, 3, 4, 5};
  T_NEAR(spyC_model_eval(&m, beta, x), 1 + 96 + 6 - 16 + 5 * 64.0 + 4,
         1e-9);
  char *s = spyC_model_print(&m, NULL, 4, vars);
  T_EQ_STR(s, "c0 + c1*a*b + c2*log2(a + 1) - c3*b/4 + "
              "c4*max(max(a, b), 7)^1.5 + sqrt(b)");
  free(s);
  s = spyC_model_print(&m, beta, 4, vars);
  T_EQ_STR(s, "1 + 2*a*b + 3*log2(a + 1) - 4*b/4 + "
              "5*max(max(a, b), 7)^1.5 + sqrt(b)");
  free(s);
  spyC_model_free(&m);
  /* Coefficients distributed over sums and negations. */
  T_EQ_INT(spyC_model_parse(&m, "-(c0 - c1*a)*(b + 1) + a", vars, 3, NULL,
                            err, sizeof err),
           0);
  T_EQ_INT(spyC_model_basis(&m, x, g, &off, st), 0);
  T_NEAR(g[0], -17, 0);
  T_NEAR(g[1], 51, 0);
  T_NEAR(off, 3, 0);
  spyC_model_free(&m);
  /* Undefined values are reported, not returned. */
  T_EQ_INT(spyC_model_parse(&m, "c0 + c1*log2(gc)", vars, 3, NULL, err,
                            sizeof err),
           0);
  T_EQ_INT(spyC_model_basis(&m, x, g, &off, st), -1);
  spyC_model_free(&m);
}

static void t_expr_errors(void) {
  static const struct {
    const char *text;
    int col;
    const char *msg;
  } cases[] = {
    {"c0*c1", 3, "product of two coefficient terms: a model must be linear "
                 "in its coefficients"},
    {"c0 + log2(c1)", 6, "coefficient inside a function: a model must be "
                         "linear in its coefficients"},
    {"c0 + c1*a/c2", 10, "division by a coefficient term: a model must be "
                         "linear in its coefficients"},
    {"c0 + c1^2", 8, "power of a coefficient term: a model must be linear in "
                     "its coefficients"},
    {"c0 + x", 6, "unknown variable 'x' (variables are the size and "
                  "predictor columns; coefficient names start with 'c')"},
    {"c0 + c1*a +", 12, "expected a number, a name or '(', found end of "
                        "model"},
    {"c0 + (c1*a", 11, "expected ')' to close the '(' at column 6, found end "
                       "of model"},
    {"c0 + c1*a^b", 11, "the exponent must be a constant number"},
    {"a + b", 1, "the model has no coefficients (their names start with "
                 "'c', e.g. c0 + c1*n)"},
    {"", 1, "empty model"},
    {"c0 $ a", 4, "unexpected character '$'"},
    {"c0 + c1*foo(a)", 9, "unknown function 'foo' (known: log2, sqrt, max, "
                          "min)"},
    {"c0 + c1*max(a)", 9, "max() needs 2 arguments"},
    {"c0 c1", 4, "expected an operator or the end of the model, found a "
                 "name"},
  };
  const char *vars[] = {"a", "b"};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    spyC_model m;
    char err[200] = "";
    int col = -1;
    int rc = spyC_model_parse(&m, cases[i].text, vars, 2, &col, err,
                              sizeof err);
    if (rc != SPY_EINVAL) T_FAIL("'%s' parsed", cases[i].text);
    T_EQ_STR(err, cases[i].msg);
    T_EQ_INT(col, cases[i].col);
  }
  /* Deep nesting is refused, not a stack overflow. */
  char deep[400];
  memset(deep, '(', 300);
  strcpy(deep + 300, "c0");
  spyC_model m;
  char err[200];
  T_EQ_INT(spyC_model_parse(&m, deep, vars, 2, NULL, err, sizeof err),
           SPY_EINVAL);
  T_EQ_STR(err, "model nested too deeply");
  /* The public check reports "COL: message". */
  int col = 0;
  T_EQ_INT(spy_cost_check_model("c0 + c1*q", vars, 2, &col, err, sizeof err),
           SPY_EINVAL);
  T_EQ_INT(col, 9);
  T_ASSERT(!strncmp(err, "9: unknown variable 'q'", 23));
}

/* ===================================================================
** CSV
** =================================================================== */

/* Write TEXT to NAME in the test's directory; returns its path (in a
** buffer the next call reuses). */
static const char *tmp_file(const char *name, const char *text) {
  static char path[4200];
  snprintf(path, sizeof path, "%s/%s", t_tmpdir(), name);
  FILE *f = fopen(path, "w");
  T_ASSERT(f);
  fputs(text, f);
  T_ASSERT(fclose(f) == 0);
  return path;
}

static void t_csv_ok(void) {
  const char *csv =
      "\xef\xbb\xbf# cost measurements\r\n"
      "primitive, a , b,time_ns,gc\r\n"
      "mul,3,4,120.5,0\r\n"
      "\n"
      "\"sort, quick\",1000,,5e3,1\n"
      "mul,+5,6,1.5e2,0\n"
      "\"say \"\"hi\"\"\",,,7,\n";
  spy_cost_data *d;
  char err[256] = "";
  T_EQ_INT(spy_cost_data_parse_csv(csv, strlen(csv), "ok.csv", &d, err,
                                   sizeof err),
           0);
  T_EQ_INT(spy_cost_data_nprims(d), 3);
  T_EQ_STR(spy_cost_data_prim_name(d, 0), "mul");
  T_EQ_STR(spy_cost_data_prim_name(d, 1), "sort, quick");
  T_EQ_STR(spy_cost_data_prim_name(d, 2), "say \"hi\"");
  T_EQ_INT(spy_cost_data_prim_nobs(d, 0), 2);
  T_EQ_INT(spy_cost_data_prim_nobs(d, 1), 1);
  spy_cost_data_free(d);
}

static void t_csv_errors(void) {
  static const struct {
    const char *csv, *msg;
  } cases[] = {
    {"", "bad.csv:1: empty file: expected a header row naming the columns "
         "(primitive, sizes..., time_ns)"},
    {"# only a comment\n\n", "bad.csv:1: empty file: expected a header row "
                             "naming the columns (primitive, sizes..., "
                             "time_ns)"},
    {"primitive,a,b\nmul,1,2\n", "bad.csv:1: missing column 'time_ns' (the "
                                 "header must name primitive, the sizes, "
                                 "time_ns)"},
    {"a,time_ns\n1,2\n", "bad.csv:1: missing column 'primitive' (the header "
                         "must name primitive, the sizes, time_ns)"},
    {"primitive,a,time_ns\nmul,x1,5\n",
     "bad.csv:2:5: 'x1' is not a number (column 'a')"},
    {"primitive,a,time_ns\nmul,1,5\nmul,2,nan\n",
     "bad.csv:3:7: 'nan' is not a number (column 'time_ns')"},
    {"primitive,a,time_ns\nmul,1,5\nmul,2\n",
     "bad.csv:3: expected 3 fields as in the header, found 2"},
    {"primitive,a,time_ns\nmul,1,5,6\n",
     "bad.csv:2: expected 3 fields as in the header, found 4"},
    {"primitive,a,time_ns\n\"mul,1,5\n",
     "bad.csv:2:1: unterminated quoted field"},
    {"primitive,a,time_ns\nmul,1,-5\n", "bad.csv:2:7: negative time_ns '-5'"},
    {"primitive,a,time_ns\nmul,1,\n",
     "bad.csv:2:7: missing value in column 'time_ns'"},
    {"primitive,a,time_ns\nmul,1,5\nmul,,6\n",
     "bad.csv:3:5: column 'a' is empty here but has a value for 'mul' at "
     "line 2"},
    {"primitive,a,a,time_ns\n", "bad.csv:1:13: duplicate column 'a'"},
    {"primitive,op size,time_ns\n", "bad.csv:1:11: column name 'op size' is "
                                    "not an identifier (letters, digits and "
                                    "'_')"},
    {"primitive,a,time_ns\n", "bad.csv:1: no data rows after the header"},
    {"primitive,a,time_ns\n,1,5\n", "bad.csv:2:1: empty primitive name"},
    {"primitive,a,time_ns\nmul,1 2,5\n",
     "bad.csv:2:5: '1 2' is not a number (column 'a')"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    spy_cost_data *d = (spy_cost_data *)1;
    char err[256] = "";
    int rc = spy_cost_data_parse_csv(cases[i].csv, strlen(cases[i].csv),
                                     "bad.csv", &d, err, sizeof err);
    if (rc != SPY_EFORMAT) T_FAIL("case %zu: rc %d (%s)", i, rc, err);
    T_ASSERT(d == NULL);
    T_EQ_STR(err, cases[i].msg);
  }
  /* Files: the message names the path; a missing file is an I/O error. */
  char path[512], err[512];
  snprintf(path, sizeof path, "%s",
           tmp_file("ragged.csv", "primitive,n,time_ns\nadd,1,10\nadd,2\n"));
  spy_cost_data *d;
  T_EQ_INT(spy_cost_data_load_csv(path, &d, err, sizeof err), SPY_EFORMAT);
  char want[600];
  snprintf(want, sizeof want, "%s:3: expected 3 fields as in the header, "
                              "found 2", path);
  T_EQ_STR(err, want);
  snprintf(path, sizeof path, "%s/absent.csv", t_tmpdir());
  T_EQ_INT(spy_cost_data_load_csv(path, &d, err, sizeof err), SPY_EIO);
}

/* An input cost/fuzz_fit found (minimised): three calls whose fit has a
** NaN coefficient. The C header generator converted it to an integer
** (undefined: -9223372036854775808 here, a runtime error under UBSan);
** an unknown constant is now the largest, as the header's saturating
** upper bounds read. The header must still compile. */
static void t_fit_fuzz_found(void) {
  static const char csv[] = "primitive,a,b,time_ns,c0\n"
                            "LargeInt>>*,0,-3,251,1\n"
                            "LargeInt>>*,0,-3,255,0\n"
                            "LargeInt>>*,0,4,1,0";
  spy_cost_data *d = NULL;
  char err[256];
  T_EQ_INT(spy_cost_data_parse_csv(csv, sizeof csv - 1, "fuzz.csv", &d, err,
                                   sizeof err),
           0);
  spy_cost_options o; /* as cost/fuzz_fit.c fits */
  spy_cost_options_init(&o);
  o.bootstrap = 20;
  o.min_obs = 2;
  o.threads = 1;
  o.cull = 3;
  spy_cost_result *r = NULL;
  T_EQ_INT(spy_cost_fit_data(d, &o, NULL, 0, &r, err, sizeof err), 0);
  char path[512];
  snprintf(path, sizeof path, "%s/fuzz.h", t_tmpdir());
  FILE *f = fopen(path, "w");
  T_ASSERT(f);
  T_EQ_INT(spy_cost_write_c(r, f, NULL), 0);
  fclose(f);
  char *h = t_slurp(path, NULL);
  T_ASSERT(h && !strstr(h, "-9223372036854775808LL"));
  free(h);
  char cmd[1200], *out = NULL;
  snprintf(cmd, sizeof cmd,
           "printf '#include \"%s\"\nint main(void){return 0;}\n' | "
           "gcc -std=c11 -Wall -Werror -fsyntax-only -x c - 2>&1", path);
  if (t_run(cmd, &out) != 0) T_FAIL("the header does not compile: %s", out);
  free(out);
  spy_cost_result_free(r);
  spy_cost_data_free(d);
}

/* Inputs the fuzzer found (cost/fuzz_csv.c): NUL bytes in names, an
** empty quoted header. */
static void t_csv_fuzz_found(void) {
  static const struct {
    const char *csv;
    size_t len;
    const char *msg;
  } cases[] = {
    {"\"\"", 2, "f.csv:1:1: empty column name"},
    {"primitive,time_ns\nab\0cd,5\n", 25,
     "f.csv:2:1: NUL byte in primitive name"},
    {"primitive,time_ns\nab,1\nab\0,2\n", 29,
     "f.csv:3:1: NUL byte in primitive name"},
    {"primitive,time_ns\n\"\",1\n", 23, "f.csv:2:1: empty primitive name"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    spy_cost_data *d;
    char err[256] = "";
    T_EQ_INT(spy_cost_data_parse_csv(cases[i].csv, cases[i].len, "f.csv", &d,
                                     err, sizeof err),
             SPY_EFORMAT);
    T_EQ_STR(err, cases[i].msg);
  }
  /* Printing never nests deeper than the text it came from. */
  const char *vars[] = {"a"};
  spyC_model m, m2;
  char err[200];
  T_EQ_INT(spyC_model_parse(&m, "---c0 + -c1*-a", vars, 1, NULL, err,
                            sizeof err),
           0);
  char *s = spyC_model_print(&m, NULL, 4, vars);
  T_EQ_STR(s, "---c0 + -c1*-a");
  T_EQ_INT(spyC_model_parse(&m2, s, vars, 1, NULL, err, sizeof err), 0);
  free(s);
  spyC_model_free(&m);
  spyC_model_free(&m2);
  /* Constants print as the shortest text that reads back as the same
  ** double, so a printed model means the same when large constants
  ** cancel (found by cost/fuzz_expr: 15 digits changed the value), and
  ** short ones stay short. */
  T_EQ_INT(spyC_model_parse(&m, "77777777770750032 + c0*a - "
                            "77777777770750031 + 0.585", vars, 1, NULL,
                            err, sizeof err), 0);
  s = spyC_model_print(&m, NULL, 4, vars);
  T_EQ_STR(s, "77777777770750032 + c0*a - 77777777770750032 + 0.585");
  double beta[] = {2}, x[] = {3};
  T_EQ_INT(spyC_model_parse(&m2, s, vars, 1, NULL, err, sizeof err), 0);
  T_ASSERT(spyC_model_eval(&m, beta, x) == spyC_model_eval(&m2, beta, x));
  free(s);
  spyC_model_free(&m);
  spyC_model_free(&m2);
}

/* Observations written as CSV read back the same. */
static void t_csv_roundtrip(void) {
  spy_cost_data *d = planted(&PRODUCT, "weird, \"name\"", 50, 3);
  const char *nn[] = {"n"}, *gc[] = {"gc"};
  int id = spy_cost_data_add_prim(d, "other", 1, nn, 1, gc);
  double v[2] = {12.5, 1};
  spy_cost_data_add_obs(d, id, v, 1e-3);
  char path[512], err[256];
  snprintf(path, sizeof path, "%s/obs.csv", t_tmpdir());
  FILE *f = fopen(path, "w");
  T_EQ_INT(spy_cost_data_write_csv(d, f), 0);
  fclose(f);
  spy_cost_data *e;
  T_EQ_INT(spy_cost_data_load_csv(path, &e, err, sizeof err), 0);
  T_EQ_INT(spy_cost_data_nprims(e), 2);
  T_EQ_STR(spy_cost_data_prim_name(e, 0), "weird, \"name\"");
  T_EQ_INT(spy_cost_data_prim_nobs(e, 0), 50);
  T_EQ_INT(spy_cost_data_prim_nobs(e, 1), 1);
  char *text = t_slurp(path, NULL);
  T_ASSERT(!strncmp(text, "primitive,a,b,n,time_ns,gc\n", 27));
  T_ASSERT(strstr(text, "\nother,,,12.5,0.001,1\n"));
  free(text);
  spy_cost_data_free(d);
  spy_cost_data_free(e);
}

/* The CLI prints the loader's message on one line and exits 2. */
static void t_csv_cli(void) {
  char *out = NULL;
  tmp_file("bad.csv", "primitive,a,b,time_ns\nmul,1,2,10\nmul,3,zz,12\n");
  T_EQ_INT(t_spyon(&out, "costs bad.csv 2>&1"), 2);
  T_EQ_STR(out, "spyon: bad.csv:3:7: 'zz' is not a number (column 'b')\n");
  free(out);
  tmp_file("h.csv", "primitive,n,time_ns\n");
  T_EQ_INT(t_spyon(&out, "costs --model 'c0 + c1*n' h.csv 2>&1"), 2);
  T_EQ_STR(out, "spyon: h.csv:1: no data rows after the header\n");
  free(out);
  tmp_file("m.csv", "primitive,n,time_ns\nf,1,2\nf,2,3\n");
  T_EQ_INT(t_spyon(&out, "costs --model 'c0 + c1*m' m.csv 2>&1"), 2);
  T_EQ_STR(out, "spyon costs: f: model:1:9: unknown variable 'm' "
                "(variables are the size and predictor columns; coefficient "
                "names start with 'c')\n");
  free(out);
}

/* ===================================================================
** Solvers
** =================================================================== */

/* NNLS against enumeration of every active set of a small problem. */
static void t_nnls(void) {
  gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
  gsl_rng_set(r, 11);
  for (int trial = 0; trial < 300; trial++) {
    int m = 6, p = 1 + (int)gsl_rng_uniform_int(r, 4);
    double A[24], z[6], x[4];
    for (int i = 0; i < m * p; i++) A[i] = gsl_ran_gaussian(r, 1);
    for (int i = 0; i < m; i++) z[i] = gsl_ran_gaussian(r, 2);
    T_EQ_INT(spyC_nnls(A, m, p, z, x), 0);
    double got = 0;
    for (int i = 0; i < m; i++) {
      double ri = z[i];
      for (int j = 0; j < p; j++) ri -= A[i * p + j] * x[j];
      got += ri * ri;
    }
    for (int j = 0; j < p; j++) T_ASSERT(x[j] >= 0);
    /* Best feasible objective over all supports by normal equations. */
    double best = INFINITY;
    for (unsigned mask = 0; mask < (1u << p); mask++) {
      int cols[4], k = 0;
      for (int j = 0; j < p; j++)
        if (mask >> j & 1) cols[k++] = j;
      double sol[4] = {0}, xs[4] = {0};
      if (k) {
        double M[16] = {0}, b[4] = {0};
        for (int a = 0; a < k; a++) {
          for (int c = 0; c < k; c++)
            for (int i = 0; i < m; i++)
              M[a * k + c] += A[i * p + cols[a]] * A[i * p + cols[c]];
          for (int i = 0; i < m; i++) b[a] += A[i * p + cols[a]] * z[i];
        }
        /* Gaussian elimination, k <= 4. */
        for (int c = 0; c < k; c++)
          for (int a2 = c + 1; a2 < k; a2++) {
            double fct = M[a2 * k + c] / M[c * k + c];
            for (int c2 = c; c2 < k; c2++)
              M[a2 * k + c2] -= fct * M[c * k + c2];
            b[a2] -= fct * b[c];
          }
        for (int c = k - 1; c >= 0; c--) {
          double acc = b[c];
          for (int c2 = c + 1; c2 < k; c2++) acc -= M[c * k + c2] * sol[c2];
          sol[c] = acc / M[c * k + c];
        }
        int ok = 1;
        for (int a = 0; a < k; a++) ok &= sol[a] >= 0;
        if (!ok) continue;
        for (int a = 0; a < k; a++) xs[cols[a]] = sol[a];
      }
      double obj = 0;
      for (int i = 0; i < m; i++) {
        double ri = z[i];
        for (int j = 0; j < p; j++) ri -= A[i * p + j] * xs[j];
        obj += ri * ri;
      }
      if (obj < best) best = obj;
    }
    T_NEAR(got, best, 1e-9 * (1 + best));
  }
  gsl_rng_free(r);
}

/* The pinball loss at tau of beta on (X, y, w). */
static double pinball(const double *X, const double *y, const double *w,
                      size_t n, const double *b, double tau) {
  double s = 0;
  for (size_t i = 0; i < n; i++) {
    double r = y[i] - X[2 * i] * b[0] - X[2 * i + 1] * b[1];
    s += (w ? w[i] : 1) * (r > 0 ? tau * r : (tau - 1) * r);
  }
  return s;
}

/* Quantile regression is exact: small problems against the best line
** through two points (an optimum passes through p of them), and the
** globbing path for large n against the interior point on all rows. */
static void t_quantreg_exact(void) {
  gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
  gsl_rng_set(r, 5);
  for (int trial = 0; trial < 6; trial++) {
    size_t n = 120;
    double tau = trial % 2 ? 0.9 : 0.5, X[240], y[120], w[120];
    for (size_t i = 0; i < n; i++) {
      X[2 * i] = 1;
      X[2 * i + 1] = size(r, 1e4);
      y[i] = (30 + 2 * X[2 * i + 1]) *
             (1 + 0.3 * gsl_ran_pareto(r, 1.5, 1));
      w[i] = trial >= 4 ? (double)gsl_rng_uniform_int(r, 4) : 1;
    }
    spyC_prob pb = {n, 2, X, y, trial >= 4 ? w : NULL};
    double b[2];
    spyC_sinfo info;
    T_EQ_INT(spyC_quantreg(&pb, tau, 1e-10, 0, b, &info, 1), 0);
    double best = INFINITY;
    for (size_t i = 0; i < n; i++)
      for (size_t j = i + 1; j < n; j++) {
        if (X[2 * i + 1] == X[2 * j + 1]) continue;
        double b1 = (y[j] - y[i]) / (X[2 * j + 1] - X[2 * i + 1]);
        double bb[2] = {y[i] - b1 * X[2 * i + 1], b1};
        double o = pinball(X, y, pb.w, n, bb, tau);
        if (o < best) best = o;
      }
    T_NEAR(pinball(X, y, pb.w, n, b, tau), best, 1e-7 * best);
  }
  /* Large n: globbing (n >= 8000) against the direct interior point. */
  size_t n = 60000;
  double *X = malloc(2 * n * sizeof *X), *y = malloc(n * sizeof *y);
  for (size_t i = 0; i < n; i++) {
    double a = size(r, 1e5);
    X[2 * i] = 1;
    X[2 * i + 1] = a * log2(a + 1);
    y[i] = (30 + 2 * X[2 * i + 1]) * (1 + 0.2 * gsl_ran_pareto(r, 2, 1));
  }
  for (int k = 0; k < 2; k++) {
    double tau = k ? 0.95 : 0.5, bg[2], bd[2];
    spyC_prob big = {n, 2, X, y, NULL};
    spyC_sinfo info;
    T_EQ_INT(spyC_quantreg(&big, tau, 1e-10, 0, bg, &info, 3), 0);
    /* Direct: split into a weighted problem the globbing never sees. */
    double *w = malloc(n * sizeof *w);
    for (size_t i = 0; i < n; i++) w[i] = 1;
    spyC_prob direct = {n, 2, X, y, w};
    T_EQ_INT(spyC_quantreg(&direct, tau, 1e-10, 0, bd, &info, 3), 0);
    double og = pinball(X, y, NULL, n, bg, tau);
    double od = pinball(X, y, NULL, n, bd, tau);
    T_NEAR(og, od, 1e-7 * od);
    free(w);
  }
  free(X);
  free(y);
  gsl_rng_free(r);
}

/* Every solver recovers a clean line; the robust ones agree with GSL's
** own gsl_multifit_robust on unweighted data. */
static void t_solvers(void) {
  gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
  gsl_rng_set(r, 9);
  size_t n = 4000;
  double *X = malloc(2 * n * sizeof *X), *y = malloc(n * sizeof *y);
  for (size_t i = 0; i < n; i++) {
    X[2 * i] = 1;
    X[2 * i + 1] = size(r, 1e4);
    y[i] = (100 + 3 * X[2 * i + 1]) * (1 + gsl_ran_gaussian(r, 0.01));
  }
  spyC_prob pb = {n, 2, X, y, NULL};
  static const int solvers[] = {SPY_COST_MEDIAN, SPY_COST_OLS, SPY_COST_WLS,
                                SPY_COST_RIDGE,  SPY_COST_HUBER,
                                SPY_COST_BISQUARE, SPY_COST_NNLS,
                                SPY_COST_QUANTILE};
  for (size_t k = 0; k < sizeof solvers / sizeof solvers[0]; k++) {
    spy_cost_options o;
    spy_cost_options_init(&o);
    o.solver = (spy_cost_solver)solvers[k];
    o.ridge = 1e-9;
    spyC_sopt s;
    spyC_sopt_init(&s, &o);
    double b[2];
    spyC_sinfo info;
    T_EQ_INT(spyC_solve(&pb, &s, b, &info), 0);
    T_REL(b[0], 100, 0.02);
    T_REL(b[1], 3, 0.005);
  }
  /* With 5 % gross outliers, the Huber and bisquare fits agree with GSL's
  ** own gsl_multifit_robust (same weight functions and tuning). */
  for (size_t i = 0; i < n; i += 20) y[i] *= 5;
  gsl_matrix_view Xv = gsl_matrix_view_array(X, n, 2);
  gsl_vector_view yv = gsl_vector_view_array(y, n);
  for (int k = 0; k < 2; k++) {
    const gsl_multifit_robust_type *T =
        k ? gsl_multifit_robust_bisquare : gsl_multifit_robust_huber;
    gsl_multifit_robust_workspace *ws = gsl_multifit_robust_alloc(T, n, 2);
    gsl_vector *c = gsl_vector_alloc(2);
    gsl_matrix *cov = gsl_matrix_alloc(2, 2);
    gsl_set_error_handler_off();
    gsl_multifit_robust(&Xv.matrix, &yv.vector, c, cov, ws);
    spy_cost_options o;
    spy_cost_options_init(&o);
    o.solver = k ? SPY_COST_BISQUARE : SPY_COST_HUBER;
    spyC_sopt s;
    spyC_sopt_init(&s, &o);
    double b[2];
    T_EQ_INT(spyC_solve(&pb, &s, b, NULL), 0);
    T_REL(b[0], gsl_vector_get(c, 0), 0.01);
    T_REL(b[1], gsl_vector_get(c, 1), 0.002);
    T_REL(b[1], 3, 0.005);
    gsl_multifit_robust_free(ws);
    gsl_vector_free(c);
    gsl_matrix_free(cov);
  }
  gsl_rng_free(r);
  free(X);
  free(y);
}

/* Real runs: the reference interpreter multiplies large integers of many
** sizes; the profile's observations of digitMultiply:neg: are fitted by a
** size-dependent model, and spy_cost_annotate_profile writes it beside
** the primitive for the report. */
static void t_profile_multiply(void) {
  char spy[512], err[512];
  snprintf(spy, sizeof spy, "%s/m.spy", t_tmpdir());
  tmp_file("m.st",
           "| random xs |\n"
           "LargePositiveInteger karatsubaThreshold: 100000000.\n"
           "random := Random seed: 7.\n"
           "xs := (1 to: 100) collect: [:i |\n"
           "  (256 raisedTo: (random between: 4 and: 3000)) - "
           "(random between: 1 and: 1000)].\n"
           "6000 timesRepeat: [(xs at: (random between: 1 and: 100)) * "
           "(xs at: (random between: 1 and: 100))].\n");
  T_EQ_INT(t_spyon(NULL, "-o m.spy m.st >/dev/null 2>&1"), 0);
  spy_profile *p;
  T_EQ_INT(spy_profile_load(spy, &p, err, sizeof err), 0);
  size_t mul = p->nprims;
  for (size_t i = 0; i < p->nprims; i++)
    if (strstr(p->prims[i].name, "digitMultiply:neg:")) mul = i;
  T_ASSERT(mul < p->nprims);
  T_ASSERT(p->prims[mul].nobs >= 1000);
  T_EQ_INT(p->prims[mul].nsizes, 2);
  /* The fit. */
  spy_cost_data *d;
  T_EQ_INT(spy_cost_data_from_profile(p, &d, err, sizeof err), 0);
  const char *only[] = {p->prims[mul].name};
  spy_cost_options o;
  spy_cost_options_init(&o);
  spy_cost_result *r;
  T_EQ_INT(spy_cost_fit_data(d, &o, only, 1, &r, err, sizeof err), 0);
  const spy_cost_fit *fit = &r->fits[0];
  T_EQ_INT(fit->status, 0);
  fprintf(stderr, "digitMultiply: %s: %s ns, median error %.1f%%, bound "
                  "coverage %.1f%%\n",
          fit->family, fit->fitted, 100 * fit->mre,
          100 * fit->bound[0].coverage);
  T_ASSERT(strcmp(fit->family, "const") != 0);
  T_ASSERT(fit->coef[1].value > 0);
  T_ASSERT(fit->mre < 0.6);
  /* Idle 92.6-96.1 % (6 runs); 99.1 % once in a distcheck beside the
  ** build (timing noise unlike the fit's). */
  T_NEAR(fit->bound[0].coverage, 0.95, 0.045);
  spy_cost_result_free(r);
  spy_cost_data_free(d);
  /* The annotation the report shows. */
  int n = spy_cost_annotate_profile(p, NULL);
  T_ASSERT(n >= 1);
  const char *model = p->prims[mul].model;
  T_ASSERT(model != NULL);
  /* "... ns", then a caveat when R^2 < 0 (timings with a heavy tail can
  ** give that even to the right model). */
  const char *caveat = strstr(model, "  (R^2 ");
  size_t len = caveat ? (size_t)(caveat - model) : strlen(model);
  T_ASSERT(len > 3 && !strncmp(model + len - 3, " ns", 3));
  if (caveat)
    T_ASSERT(strstr(caveat, " < 0: worse than the mean; not a usable "
                            "model)"));
  T_ASSERT(strstr(model, "*a*b") || strstr(model, "max(a, b)") ||
           strstr(model, "min(a, b)") || strstr(model, "(a + b)"));
  spy_profile_free(p);
}

/* --plot draws one picture per fitted primitive: SVG by default, PNG of
** 900 x 580 pixels on request; --codegen and --format work from the CLI. */
static void t_cli_outputs(void) {
#if !HAVE_CAIRO
  T_SKIP("plots not built in (configure found no cairo)");
#endif
  char path[600], *out = NULL;
  T_EQ_INT(t_spyon(NULL, "costs '%s/tests/data/cost/example.csv' --plot svg "
                         "--bootstrap 50 > table.txt 2>/dev/null",
                   t_srcdir),
           0);
  T_EQ_INT(t_spyon(NULL, "costs '%s/tests/data/cost/example.csv' --plot png "
                         "--plot-format png --bootstrap 0 > /dev/null 2>&1",
                   t_srcdir),
           0);
  static const char *const names[] = {"LargeInt_", "Array_sort"};
  for (int i = 0; i < 2; i++) {
    size_t len;
    snprintf(path, sizeof path, "%s/svg/%s.svg", t_tmpdir(), names[i]);
    char *svg = t_slurp(path, &len);
    T_ASSERT(svg && len > 10000);
    T_ASSERT(!strncmp(svg, "<?xml", 5) && strstr(svg, "<svg"));
    free(svg);
    snprintf(path, sizeof path, "%s/png/%s.png", t_tmpdir(), names[i]);
    unsigned char *png = (unsigned char *)t_slurp(path, &len);
    T_ASSERT(png && len > 24);
    T_ASSERT(!memcmp(png, "\x89PNG\r\n\x1a\n", 8));
    unsigned w = (unsigned)png[16] << 24 | (unsigned)png[17] << 16 |
                 (unsigned)png[18] << 8 | png[19];
    unsigned h = (unsigned)png[20] << 24 | (unsigned)png[21] << 16 |
                 (unsigned)png[22] << 8 | png[23];
    T_EQ_INT(w, 900);
    T_EQ_INT(h, 580);
    free(png);
  }
  snprintf(path, sizeof path, "%s/table.txt", t_tmpdir());
  out = t_slurp(path, NULL);
  T_ASSERT(out && strstr(out, "LargeInt>>*\n  calls    300 observed"));
  T_ASSERT(strstr(out, "model    product: "));
  T_ASSERT(strstr(out, "model    nlogn: "));
  free(out);
}

/* A primitive with too few calls is listed, not fitted. */
static void t_few_calls(void) {
  spy_cost_data *d = spy_cost_data_new();
  const char *nn[] = {"n"};
  int id = spy_cost_data_add_prim(d, "rare", 1, nn, 0, NULL);
  for (int i = 0; i < 5; i++) {
    double v = i;
    spy_cost_data_add_obs(d, id, &v, 10 + v);
  }
  spy_cost_result *r = fit(d, NULL);
  T_EQ_INT(r->fits[0].status, SPY_ENOENT);
  T_EQ_STR(r->fits[0].message, "5 observations; at least 8 needed to fit");
  T_ASSERT(isnan(spy_cost_eval(&r->fits[0], 0, (double[]){1})));
  spy_cost_result_free(r);
  spy_cost_data_free(d);
}

/* The pipeline tests live in tests/test_cost_fit.c. */
#define SPY_COST_WRAP(name)                                             \
  static void w_##name(void) {                                          \
    if (!t_cost_##name)                                                 \
      T_FAIL("tests/test_cost_fit.c is not linked into the runner");   \
    t_cost_##name();                                                    \
  }
SPY_COST_FIT_TESTS(SPY_COST_WRAP)
#undef SPY_COST_WRAP

const struct spy_test t_cost[] = {
  {"expr_parse", t_expr_parse, 10},
  {"expr_errors", t_expr_errors, 10},
  {"csv_ok", t_csv_ok, 10},
  {"csv_errors", t_csv_errors, 10},
  {"csv_cli", t_csv_cli, 60},
  {"csv_fuzz_found", t_csv_fuzz_found, 10},
  {"fit_fuzz_found", t_fit_fuzz_found, 30},
  {"csv_roundtrip", t_csv_roundtrip, 10},
  {"nnls", t_nnls, 30},
  {"quantreg_exact", t_quantreg_exact, 120},
  {"solvers", t_solvers, 60},
  {"planted_product", w_planted_product, 120},
  {"planted_nlogn", w_planted_nlogn, 120},
  {"planted_families", w_planted_families, 180},
  {"dconf_coverage", w_dconf_coverage, 180},
  {"nonneg", w_nonneg, 60},
  {"bootstrap_coverage", w_bootstrap_coverage, 300},
  {"gc_decomposition", w_gc_decomposition, 60},
  {"outliers_cull", w_outliers_cull, 60},
  {"user_models", w_user_models, 60},
  {"threads_deterministic", w_threads_deterministic, 60},
  {"outputs", w_outputs, 60},
  {"codegen", w_codegen, 120},
  {"few_calls", t_few_calls, 10},
  {"profile_multiply", t_profile_multiply, 120},
  {"cli_outputs", t_cli_outputs, 120},
  {0},
};
