/*
** cli/costs.c: spyon costs FILE.spy|FILE.csv [options] — fit a cost model
** per primitive and print it as a table, CSV or JSON, write a C header of
** integer cost functions, or draw one SVG per primitive.
*/
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include <spyon.h>
#include <spyon/cost.h>
#include <spyon/profile.h>

#include "cli/cli.h"
#include "cost/plot.h"

static int ends_with(const char *s, const char *suf) {
  size_t n = strlen(s), m = strlen(suf);
  return n >= m && strcasecmp(s + n - m, suf) == 0;
}

#define MAXLIST 256

typedef struct args {
  const char *input, *output, *unit, *plot, *prefix;
  const char *export_csv;
  int format;  /* 0 table, 1 csv, 2 json */
  int codegen; /* -1 none, 0 C */
  int typical, force_csv, png, list;
  const char *only[MAXLIST];
  size_t nonly;
  spy_cost_model_spec models[MAXLIST];
  size_t nmodels;
  char *owned[MAXLIST];
  size_t nowned;
  double breaks[64];
  size_t nbreaks;
  spy_cost_options o;
  spy_cost_codegen cg;
} args;

/* "[PRIM=]VALUE": the last '=' separates, since expressions have none and
** primitive names may ("Object>>="). */
static int add_model(args *a, const char *arg, const char *prefix) {
  if (a->nmodels == MAXLIST || a->nowned + 2 > MAXLIST) return -1;
  const char *eq = strrchr(arg, '=');
  char *prim = NULL;
  if (eq) {
    prim = malloc((size_t)(eq - arg) + 1);
    if (!prim) return -1;
    memcpy(prim, arg, (size_t)(eq - arg));
    prim[eq - arg] = '\0';
    a->owned[a->nowned++] = prim;
    arg = eq + 1;
  }
  char *expr = malloc(strlen(prefix) + strlen(arg) + 1);
  if (!expr) return -1;
  strcpy(expr, prefix);
  strcat(expr, arg);
  a->owned[a->nowned++] = expr;
  a->models[a->nmodels].prim = prim;
  a->models[a->nmodels].expr = expr;
  a->nmodels++;
  return 0;
}

static int fail(const char *fmt, const char *arg) {
  fprintf(stderr, "spyon costs: ");
  fprintf(stderr, fmt, arg);
  fputc('\n', stderr);
  return 2;
}

/* ---- options ---------------------------------------------------------- */

/* A number in [lo, hi]; a trailing % divides by 100 (--confidence 95%). */
static int number(const char *opt, const char *arg, double lo, double hi,
                  double *out) {
  char *end;
  errno = 0;
  double v = strtod(arg, &end);
  if (end != arg && *end == '%' && end[1] == '\0') {
    v /= 100;
    end++;
  }
  if (!*arg || *end || errno || !(v >= lo && v <= hi)) {
    fprintf(stderr, "spyon costs: %s: bad value '%s'\n", opt, arg);
    return 2;
  }
  *out = v;
  return 0;
}

/* Setters for the table below: the target is args at opt->off. */
#define AT(T) (*(T *)((char *)o + opt->off))

static int set_real(void *o, const cli_opt *opt, const char *name,
                    const char *v) {
  return number(name, v, opt->lo, opt->hi, &AT(double));
}

static int set_size(void *o, const cli_opt *opt, const char *name,
                    const char *v) {
  double d;
  int rc = number(name, v, opt->lo, opt->hi, &d);
  if (!rc) AT(size_t) = (size_t)d;
  return rc;
}

static int set_uns(void *o, const cli_opt *opt, const char *name,
                   const char *v) {
  double d;
  int rc = number(name, v, opt->lo, opt->hi, &d);
  if (!rc) AT(unsigned) = (unsigned)d;
  return rc;
}

static int set_u64(void *o, const cli_opt *opt, const char *name,
                   const char *v) {
  double d;
  int rc = number(name, v, opt->lo, opt->hi, &d);
  if (!rc) AT(uint64_t) = (uint64_t)d;
  return rc;
}

static int set_solver(void *o, const cli_opt *opt, const char *name,
                      const char *v) {
  int k = cli_choice(opt->choices, v);
  if (k < 0) return fail("unknown solver '%s'", v);
  (void)name;
  AT(spy_cost_solver) = (spy_cost_solver)k;
  return 0;
}

static int set_list(void *o, const cli_opt *opt, const char *name,
                    const char *v) {
  args *a = o;
  (void)opt;
  if (a->nonly == MAXLIST) return fail("too many %s options", name);
  a->only[a->nonly++] = v;
  return 0;
}

static int set_model(void *o, const cli_opt *opt, const char *name,
                     const char *v) {
  if (add_model(o, v, opt->choices ? opt->choices : ""))
    return fail("too many %s options", name);
  return 0;
}

/* [A-Za-z_][A-Za-z0-9_]*: what may start a C function name or sit in a
** comment of the generated header without ending it. */
static int c_identifier(const char *s) {
  if (!*s || !(isalpha((unsigned char)*s) || *s == '_')) return 0;
  for (; *s; s++)
    if (!(isalnum((unsigned char)*s) || *s == '_')) return 0;
  return 1;
}

static int set_prefix(void *o, const cli_opt *opt, const char *name,
                      const char *v) {
  (void)opt;
  if (!c_identifier(v))
    return cli_bad("spyon costs", name, "'%s' is not a C identifier "
                   "(letters, digits and _, not first a digit)", v);
  ((args *)o)->prefix = v;
  return 0;
}

static int set_unit(void *o, const cli_opt *opt, const char *name,
                    const char *v) {
  args *a = o;
  (void)opt;
  const char *eq = strchr(v, '=');
  if (!strcmp(v, "ns")) a->cg.ns_per_unit = 1;
  else if (!strcmp(v, "us")) a->cg.ns_per_unit = 1e3;
  else if (!strcmp(v, "ms")) a->cg.ns_per_unit = 1e6;
  else if (eq && eq > v) {
    char unit[64];
    snprintf(unit, sizeof unit, "%.*s", (int)(eq - v), v);
    if ((size_t)(eq - v) >= sizeof unit || !c_identifier(unit))
      return cli_bad("spyon costs", name, "unit name '%s' is not a C "
                     "identifier", unit);
    if (number(name, eq + 1, 1e-300, 1e300, &a->cg.ns_per_unit)) return 2;
  } else {
    return fail("--unit: '%s' is not ns, us, ms or NAME=NS", v);
  }
  a->unit = v;
  return 0;
}

static int set_breaks(void *o, const cli_opt *opt, const char *name,
                      const char *v) {
  args *a = o;
  (void)opt, (void)name;
  const char *s = v;
  a->nbreaks = 0;
  while (*s) {
    char *end;
    errno = 0;
    double b = strtod(s, &end);
    if (end == s || errno || !isfinite(b) || (*end && *end != ',') ||
        a->nbreaks == 64)
      return fail("--breaks: bad list '%s'", v);
    a->breaks[a->nbreaks++] = b;
    s = *end ? end + 1 : end;
  }
  a->o.breaks = a->breaks;
  a->o.nbreaks = a->nbreaks;
  return 0;
}

#define OFF(f) offsetof(args, f)
#define OOFF(f) (offsetof(args, o) + offsetof(spy_cost_options, f))
#define END {NULL, NULL, NULL, NULL, NULL, 0, 0, 0, NULL, 0, 0}
/* What is written: a table, CSV or JSON, or a C header, or the
** observations as CSV (no fit): one of these (X_OUT). What only a fit
** uses conflicts with --export-csv (X_EXPORT). */
#define X_OUT 1u
#define X_EXPORT 2u
#define FIT 0, X_EXPORT

static const cli_opt costs_opts[] = {
  /* output */
  {"--format", "-f", "table|csv|json", "what to print (default table)",
   cli_set_choice, OFF(format), 0, 0, "table|csv|json", X_OUT, X_EXPORT},
  {"--output", "-o", "FILE", "write to FILE (replaced atomically)",
   cli_set_str, OFF(output), 0, 0, NULL, FIT},
  {"--codegen", NULL, "c", "write a C header of integer cost functions",
   cli_set_choice, OFF(codegen), 0, 0, "c", X_OUT, X_EXPORT},
  {"--unit", NULL, "ns|us|ms|NAME=NS", "unit of the generated costs "
   "(e.g. gas=2.5)", set_unit, 0, 0, 0, NULL, FIT},
  {"--codegen-model", NULL, "bound|typical", "which model to compile "
   "(bound)", cli_set_choice, OFF(typical), 0, 0, "bound|typical",
   FIT},
  {"--prefix", NULL, "PREFIX", "generated function prefix, a C\nidentifier "
   "(spy_cost_)", set_prefix, 0, 0, 0, NULL, FIT},
  {"--plot", NULL, "DIR", "one SVG per primitive in DIR", cli_set_str,
   OFF(plot), 0, 0, NULL, FIT},
  {"--plot-format", NULL, "svg|png", "picture format of --plot (svg)",
   cli_set_choice, OFF(png), 0, 0, "svg|png", FIT},
  /* what to fit */
  {"--primitive", "-p", "NAME", "only this primitive (repeatable)",
   set_list, 0, 0, 0, NULL, FIT},
  {"--model", "-m", "[PRIM=]EXPR", "a model, e.g. 'c0 + c1*a*b' "
   "(repeatable)", set_model, 0, 0, 0, NULL, FIT},
  {"--family", NULL, "[PRIM=]NAME", "force a built-in family", set_model, 0,
   0, 0, "family:", FIT},
  {"--families", NULL, "LIST", "choose among these families only",
   cli_set_str, OOFF(families), 0, 0, NULL, FIT},
  {"--breaks", NULL, "K1,K2,...", "add the piecewise-linear family",
   set_breaks, 0, 0, 0, NULL, FIT},
  {"--no-extras", NULL, NULL, "ignore extra predictor columns (gc)",
   cli_set_off, OOFF(extras), 0, 0, NULL, FIT},
  {"--min-calls", NULL, "N", "fit only primitives with N calls (8)",
   set_size, OOFF(min_obs), 2, 1e15, NULL, FIT},
  /* how */
  {"--solver", NULL, "NAME", "median|ols|wls|ridge|huber|bisquare|nnls|"
   "quantile", set_solver, OOFF(solver), 0, 0,
   "median|ols|wls|ridge|huber|bisquare|nnls|quantile", FIT},
  {"--tau", NULL, "T", "level of --solver quantile (0.5)", set_real,
   OOFF(tau), 1e-9, 1 - 1e-9, NULL, FIT},
  {"--ridge", NULL, "LAMBDA", "penalty of --solver ridge (0.001)", set_real,
   OOFF(ridge), 0, 1e12, NULL, FIT},
  {"--allow-negative", NULL, NULL, "do not keep coefficients >= 0",
   cli_set_off, OOFF(nonneg), 0, 0, NULL, FIT},
  {"--confidence", "-D", "D", "level of the upper bound (0.95)", set_real,
   OOFF(confidence), 1e-6, 1 - 1e-6, NULL, FIT},
  {"--no-compare", NULL, NULL, "skip the shift and quantile-loss "
   "comparisons\n(the two other ways to fit a bound; docs/costs.md)",
   cli_set_off, OOFF(compare), 0, 0, NULL, FIT},
  {"--holdout", NULL, "F", "calls held out to check bounds (0.2)", set_real,
   OOFF(holdout), 1e-6, 1 - 1e-6, NULL, FIT},
  {"--folds", NULL, "K", "cross-validation folds (5)", set_uns, OOFF(folds),
   2, 100, NULL, FIT},
  {"--select-rows", NULL, "N", "calls used for selection (2048)", set_size,
   OOFF(select_rows), 10, 1e15, NULL, FIT},
  {"--bootstrap", NULL, "B", "bootstrap replicates, 0 for none (200)",
   set_uns, OOFF(bootstrap), 0, 1e6, NULL, FIT},
  {"--level", NULL, "L", "interval level (0.95)", set_real, OOFF(level),
   1e-6, 1 - 1e-6, NULL, FIT},
  {"--cull", NULL, "NSIGMA", "drop calls beyond NSIGMA robust sigmas",
   set_real, OOFF(cull), 0, 1e6, NULL, FIT},
  {"--seed", NULL, "S", "random seed (1)", set_u64, OOFF(seed), 0, 1.8e19,
   NULL, FIT},
  {"--threads", NULL, "N", "primitives fitted in parallel (CPUs)", set_uns,
   OOFF(threads), 0, 64, NULL, FIT},
  {"--csv", NULL, NULL, "read FILE as CSV whatever its name", cli_set_on,
   OFF(force_csv), 0, 0, NULL, 0, 0},
  {"--export-csv", NULL, "OUT.csv", "write the observations as CSV, no "
   "fitting", cli_set_str, OFF(export_csv), 0, 0, NULL, X_OUT | X_EXPORT, 0},
  {"--list-families", NULL, NULL, "print the built-in families",
   cli_set_on, OFF(list), 0, 0, NULL, 0, 0},
  END,
};

static const cli_cmd costs_cmd = {
  "spyon costs", "FILE.spy|FILE.csv [options]",
  "Fit a cost model per primitive against its operand sizes, from the "
  "cost\nobservations of a saved profile or a CSV file (\"-\": stdin).",
  costs_opts, 0, 1, 0,
  "Options that write or fit conflict with --export-csv. See "
  "docs/costs.md."};

/* Read the input: CSV by name (or --csv, or "-"), else a profile. The
** status is 1 for a file that cannot be read or a corrupt profile (as
** `spyon report` says), 2 for a malformed CSV (its message names
** file:line:col) or a profile with nothing to fit. */
static int load(const args *a, spy_cost_data **d) {
  char err[1024];
  int rc, csv = 0;
  if (a->force_csv || !strcmp(a->input, "-") || ends_with(a->input, ".csv")) {
    csv = 1;
    rc = spy_cost_data_load_csv(a->input, d, err, sizeof err);
  } else {
    spy_profile *p;
    rc = spy_profile_load(a->input, &p, err, sizeof err);
    if (rc == 0) {
      rc = spy_cost_data_from_profile(p, d, err, sizeof err);
      spy_profile_free(p);
    } else {
      rc = SPY_EIO; /* missing, unreadable or corrupt: status 1 */
    }
  }
  if (rc) {
    fprintf(stderr, "spyon: %s\n", err);
    return rc == SPY_ENOMEM || rc == SPY_EIO || !csv ? 1 : 2;
  }
  if (spy_cost_data_nprims(*d) == 0) {
    fprintf(stderr, "spyon: %s: no cost observations\n", a->input);
    spy_cost_data_free(*d);
    *d = NULL;
    return 2;
  }
  return 0;
}

static int write_obs(FILE *f, void *ctx) {
  return spy_cost_data_write_csv(ctx, f);
}

typedef struct out_job {
  const args *a;
  const spy_cost_result *r;
} out_job;

static int write_fits(FILE *f, void *ctx) {
  out_job *j = ctx;
  if (j->a->codegen >= 0) return spy_cost_write_c(j->r, f, &j->a->cg);
  if (j->a->format == 1) return spy_cost_write_csv(j->r, f);
  if (j->a->format == 2) return spy_cost_write_json(j->r, f);
  return spy_cost_write_table(j->r, f);
}

static int plots(const args *a, const spy_cost_result *r,
                 const spy_cost_data *d) {
  if (mkdir(a->plot, 0777) && errno != EEXIST) {
    fprintf(stderr, "spyon costs: %s: %s\n", a->plot, strerror(errno));
    return 1;
  }
  for (size_t i = 0; i < r->nfits; i++) {
    if (r->fits[i].status) continue;
    char path[4096], err[512] = "";
    int rc = spyC_plot_svg(&r->fits[i], d, a->plot, a->png, path,
                           sizeof path, err, sizeof err);
    if (rc) {
      fprintf(stderr, "spyon costs: %s\n", *err ? err : spy_strerror(rc));
      return 1;
    }
    fprintf(stderr, "spyon costs: wrote %s\n", path);
  }
  spyC_plot_done();
  return 0;
}

int cli_costs(int argc, char **argv) {
  static args a; /* large; one invocation per process */
  memset(&a, 0, sizeof a);
  a.codegen = -1;
  spy_cost_options_init(&a.o);
  spy_cost_codegen_init(&a.cg);
  cli_args pa;
  static char uname[64];
  int st = cli_parse(&costs_cmd, argc, argv, &a, &pa);
  if (st < 0 && a.list) {
    printf("%s\n", spy_cost_families());
    st = 0;
  } else if (st < 0 && pa.npos == 0) {
    fprintf(stderr, "usage: %s %s (see %s --help)\n", costs_cmd.prog,
            costs_cmd.operands, costs_cmd.prog);
    st = 2;
  }
  if (st < 0) {
    st = 0;
    a.input = pa.pos[0];
    a.o.models = a.models;
    a.o.nmodels = a.nmodels;
    if (a.prefix) a.cg.prefix = a.prefix;
    if (a.unit) {
      const char *eq = strchr(a.unit, '=');
      size_t l = eq ? (size_t)(eq - a.unit) : strlen(a.unit);
      if (l >= sizeof uname) l = sizeof uname - 1;
      memcpy(uname, a.unit, l);
      uname[l] = '\0';
      a.cg.unit = uname;
    }
    a.cg.typical = a.typical;
    spy_cost_data *d = NULL;
    spy_cost_result *r = NULL;
    char err[1024];
    const char *in[1] = {a.input};
    if (cli_check_output(costs_cmd.prog, a.output, in, 1) ||
        cli_check_output(costs_cmd.prog, a.export_csv, in, 1)) {
      st = 2;
      goto done;
    }
    if ((st = load(&a, &d)) != 0) goto done;
    if (a.export_csv) {
      st = cli_write_to(costs_cmd.prog, a.export_csv, write_obs, d);
      goto done;
    }
    int rc = spy_cost_fit_data(d, &a.o, a.only, a.nonly, &r, err,
                               sizeof err);
    if (rc) {
      fprintf(stderr, "spyon costs: %s\n", err);
      st = rc == SPY_ENOMEM ? 1 : 2;
      goto done;
    }
    out_job j = {&a, r};
    if ((st = cli_write_to(costs_cmd.prog, a.output, write_fits, &j)) != 0)
      goto done;
    if (a.plot) st = plots(&a, r, d);
  done:
    spy_cost_result_free(r);
    spy_cost_data_free(d);
  }
  for (size_t i = 0; i < a.nowned; i++) free(a.owned[i]);
  return st;
}
