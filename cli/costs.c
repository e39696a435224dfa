/*
** cli/costs.c: spyon costs FILE.spy|FILE.csv [options] — fit a cost model
** per primitive and print it as a table, CSV or JSON, write a C header of
** integer cost functions, or draw one SVG per primitive.
*/
#include "config.h"

#include <errno.h>
#include <math.h>
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

static void usage(FILE *f) {
  fputs(
      "usage: spyon costs FILE.spy|FILE.csv [options]\n"
      "output:\n"
      "  --format table|csv|json    what to print (default table)\n"
      "  -o FILE                    write to FILE instead of stdout\n"
      "  --codegen c                write a C header of integer cost "
      "functions\n"
      "  --unit ns|us|ms|NAME=NS    unit of the generated costs (e.g. "
      "gas=2.5)\n"
      "  --codegen-model bound|typical   which model to compile (bound)\n"
      "  --prefix PREFIX            generated function prefix (spy_cost_)\n"
      "  --plot DIR                 one SVG per primitive in DIR\n"
      "  --plot-format svg|png      picture format of --plot (svg)\n"
      "what to fit:\n"
      "  --primitive NAME           only this primitive (repeatable)\n"
      "  --model [PRIM=]EXPR        a model, e.g. 'c0 + c1*a*b' "
      "(repeatable)\n"
      "  --family [PRIM=]NAME       force a built-in family\n"
      "  --families LIST            choose among these families only\n"
      "  --breaks K1,K2,...         add the piecewise-linear family\n"
      "  --no-extras                ignore extra predictor columns (gc)\n"
      "  --min-calls N              fit only primitives with N calls (8)\n"
      "how:\n"
      "  --solver NAME              median|ols|wls|ridge|huber|bisquare|"
      "nnls|quantile\n"
      "  --tau T                    level of --solver quantile (0.5)\n"
      "  --ridge LAMBDA             penalty of --solver ridge (0.001)\n"
      "  --allow-negative           do not keep coefficients >= 0\n"
      "  --confidence D             level of the upper bound (0.95)\n"
      "  --no-compare               skip seed 002's algorithms 1 and 2\n"
      "  --holdout F                calls held out to check bounds (0.2)\n"
      "  --folds K                  cross-validation folds (5)\n"
      "  --select-rows N            calls used for selection (2048)\n"
      "  --bootstrap B              bootstrap replicates, 0 for none (200)\n"
      "  --level L                  interval level (0.95)\n"
      "  --cull NSIGMA              drop calls beyond NSIGMA robust sigmas\n"
      "  --seed S                   random seed (1)\n"
      "  --threads N                primitives fitted in parallel (CPUs)\n"
      "  --csv                      read FILE as CSV whatever its name\n"
      "  --export-csv OUT.csv       write the observations as CSV, no "
      "fitting\n"
      "  --list-families            print the built-in families\n"
      "See docs/costs.md.\n",
      f);
}

static int fail(const char *fmt, const char *arg) {
  fprintf(stderr, "spyon costs: ");
  fprintf(stderr, fmt, arg);
  fputc('\n', stderr);
  return 2;
}

/* A number in [lo, hi]; a trailing % divides by 100. */
static int number(const char *opt, const char *arg, double lo, double hi,
                  double *out) {
  char *end;
  errno = 0;
  double v = arg ? strtod(arg, &end) : NAN;
  if (arg && end != arg && *end == '%' && end[1] == '\0') {
    v /= 100;
    end++;
  }
  if (!arg || !*arg || *end || errno || !(v >= lo && v <= hi)) {
    fprintf(stderr, "spyon costs: %s: bad value '%s'\n", opt,
            arg ? arg : "");
    return -1;
  }
  *out = v;
  return 0;
}

static int ends_with(const char *s, const char *suf) {
  size_t n = strlen(s), m = strlen(suf);
  return n >= m && strcasecmp(s + n - m, suf) == 0;
}

#define MAXLIST 256

typedef struct args {
  const char *input, *format, *output, *codegen, *unit, *plot, *prefix;
  const char *export_csv;
  int typical, force_csv, png;
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

static int solver_by_name(const char *s, spy_cost_solver *out) {
  static const char *const n[] = {"median", "ols", "wls", "ridge",
                                  "huber", "bisquare", "nnls", "quantile"};
  for (int i = 0; i < 8; i++)
    if (!strcmp(s, n[i])) {
      *out = (spy_cost_solver)i;
      return 0;
    }
  return -1;
}

/* Parse the command line into *a; returns -1 to go on, else an exit
** status. */
static int parse(args *a, int argc, char **argv) {
  double v;
  for (int i = 1; i < argc; i++) {
    const char *o = argv[i];
    const char *arg = i + 1 < argc ? argv[i + 1] : NULL;
#define NEEDARG()                                                       \
  do {                                                                  \
    if (!arg) return fail("%s needs a value", o);                       \
    i++;                                                                \
  } while (0)
    if (!strcmp(o, "-h") || !strcmp(o, "--help")) {
      usage(stdout);
      return 0;
    } else if (!strcmp(o, "--list-families")) {
      printf("%s\n", spy_cost_families());
      return 0;
    } else if (!strcmp(o, "--format") || !strcmp(o, "-f")) {
      NEEDARG();
      if (strcmp(arg, "table") && strcmp(arg, "csv") && strcmp(arg, "json"))
        return fail("unknown format '%s' (table, csv or json)", arg);
      a->format = arg;
    } else if (!strcmp(o, "-o") || !strcmp(o, "--output")) {
      NEEDARG();
      a->output = arg;
    } else if (!strcmp(o, "--codegen")) {
      NEEDARG();
      if (strcmp(arg, "c")) return fail("unknown codegen '%s' (c)", arg);
      a->codegen = arg;
    } else if (!strcmp(o, "--unit")) {
      NEEDARG();
      const char *eq = strchr(arg, '=');
      if (!strcmp(arg, "ns")) a->cg.ns_per_unit = 1;
      else if (!strcmp(arg, "us")) a->cg.ns_per_unit = 1e3;
      else if (!strcmp(arg, "ms")) a->cg.ns_per_unit = 1e6;
      else if (eq && eq > arg) {
        if (number("--unit", eq + 1, 1e-300, 1e300, &v)) return 2;
        a->cg.ns_per_unit = v;
      } else {
        return fail("--unit: '%s' is not ns, us, ms or NAME=NS", arg);
      }
      a->unit = arg;
    } else if (!strcmp(o, "--codegen-model")) {
      NEEDARG();
      if (!strcmp(arg, "typical")) a->typical = 1;
      else if (!strcmp(arg, "bound")) a->typical = 0;
      else return fail("--codegen-model: '%s' is not bound or typical", arg);
    } else if (!strcmp(o, "--prefix")) {
      NEEDARG();
      a->prefix = arg;
    } else if (!strcmp(o, "--plot")) {
      NEEDARG();
      a->plot = arg;
    } else if (!strcmp(o, "--plot-format")) {
      NEEDARG();
      if (!strcmp(arg, "png")) a->png = 1;
      else if (!strcmp(arg, "svg")) a->png = 0;
      else return fail("--plot-format: '%s' is not svg or png", arg);
    } else if (!strcmp(o, "--primitive") || !strcmp(o, "-p")) {
      NEEDARG();
      if (a->nonly == MAXLIST) return fail("too many %s options", o);
      a->only[a->nonly++] = arg;
    } else if (!strcmp(o, "--model") || !strcmp(o, "-m")) {
      NEEDARG();
      if (add_model(a, arg, "")) return fail("too many %s options", o);
    } else if (!strcmp(o, "--family")) {
      NEEDARG();
      if (add_model(a, arg, "family:")) return fail("too many %s options", o);
    } else if (!strcmp(o, "--families")) {
      NEEDARG();
      a->o.families = arg;
    } else if (!strcmp(o, "--breaks")) {
      NEEDARG();
      const char *s = arg;
      a->nbreaks = 0;
      while (*s) {
        char *end;
        errno = 0;
        double b = strtod(s, &end);
        if (end == s || errno || !isfinite(b) || (*end && *end != ',') ||
            a->nbreaks == 64)
          return fail("--breaks: bad list '%s'", arg);
        a->breaks[a->nbreaks++] = b;
        s = *end ? end + 1 : end;
      }
      a->o.breaks = a->breaks;
      a->o.nbreaks = a->nbreaks;
    } else if (!strcmp(o, "--no-extras")) {
      a->o.extras = 0;
    } else if (!strcmp(o, "--min-calls")) {
      NEEDARG();
      if (number(o, arg, 2, 1e15, &v)) return 2;
      a->o.min_obs = (size_t)v;
    } else if (!strcmp(o, "--solver")) {
      NEEDARG();
      if (solver_by_name(arg, &a->o.solver))
        return fail("unknown solver '%s'", arg);
    } else if (!strcmp(o, "--tau")) {
      NEEDARG();
      if (number(o, arg, 1e-9, 1 - 1e-9, &a->o.tau)) return 2;
    } else if (!strcmp(o, "--ridge")) {
      NEEDARG();
      if (number(o, arg, 0, 1e12, &a->o.ridge)) return 2;
    } else if (!strcmp(o, "--allow-negative")) {
      a->o.nonneg = 0;
    } else if (!strcmp(o, "--confidence") || !strcmp(o, "-D")) {
      NEEDARG();
      if (number(o, arg, 1e-6, 1 - 1e-6, &a->o.confidence)) return 2;
    } else if (!strcmp(o, "--no-compare")) {
      a->o.compare = 0;
    } else if (!strcmp(o, "--holdout")) {
      NEEDARG();
      if (number(o, arg, 1e-6, 1 - 1e-6, &a->o.holdout)) return 2;
    } else if (!strcmp(o, "--folds")) {
      NEEDARG();
      if (number(o, arg, 2, 100, &v)) return 2;
      a->o.folds = (unsigned)v;
    } else if (!strcmp(o, "--select-rows")) {
      NEEDARG();
      if (number(o, arg, 10, 1e15, &v)) return 2;
      a->o.select_rows = (size_t)v;
    } else if (!strcmp(o, "--bootstrap")) {
      NEEDARG();
      if (number(o, arg, 0, 1e6, &v)) return 2;
      a->o.bootstrap = (unsigned)v;
    } else if (!strcmp(o, "--level")) {
      NEEDARG();
      if (number(o, arg, 1e-6, 1 - 1e-6, &a->o.level)) return 2;
    } else if (!strcmp(o, "--cull")) {
      NEEDARG();
      if (number(o, arg, 0, 1e6, &a->o.cull)) return 2;
    } else if (!strcmp(o, "--seed")) {
      NEEDARG();
      if (number(o, arg, 0, 1.8e19, &v)) return 2;
      a->o.seed = (uint64_t)v;
    } else if (!strcmp(o, "--threads")) {
      NEEDARG();
      if (number(o, arg, 0, 64, &v)) return 2;
      a->o.threads = (unsigned)v;
    } else if (!strcmp(o, "--csv")) {
      a->force_csv = 1;
    } else if (!strcmp(o, "--export-csv")) {
      NEEDARG();
      a->export_csv = arg;
    } else if (o[0] == '-' && o[1]) {
      return fail("unknown option '%s' (see spyon costs --help)", o);
    } else if (!a->input) {
      a->input = o;
    } else {
      return fail("one input file only (got '%s' too)", o);
    }
#undef NEEDARG
  }
  if (!a->input) {
    fputs("usage: spyon costs FILE.spy|FILE.csv [options] (--help for "
          "the options)\n",
          stderr);
    return 2;
  }
  return -1;
}

/* Read the input: CSV by name (or --csv, or "-"), else a profile. */
static int load(const args *a, spy_cost_data **d) {
  char err[1024];
  int rc;
  if (a->force_csv || !strcmp(a->input, "-") || ends_with(a->input, ".csv")) {
    rc = spy_cost_data_load_csv(a->input, d, err, sizeof err);
  } else {
    spy_profile *p;
    rc = spy_profile_load(a->input, &p, err, sizeof err);
    if (rc == 0) {
      rc = spy_cost_data_from_profile(p, d, err, sizeof err);
      spy_profile_free(p);
    }
  }
  if (rc) {
    fprintf(stderr, "spyon: %s\n", err);
    return rc == SPY_ENOMEM ? 1 : 2;
  }
  if (spy_cost_data_nprims(*d) == 0) {
    fprintf(stderr, "spyon: %s: no cost observations\n", a->input);
    spy_cost_data_free(*d);
    *d = NULL;
    return 2;
  }
  return 0;
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
  a.format = "table";
  spy_cost_options_init(&a.o);
  spy_cost_codegen_init(&a.cg);
  int st = parse(&a, argc, argv);
  if (st < 0) {
    st = 0;
    a.o.models = a.models;
    a.o.nmodels = a.nmodels;
    if (a.prefix) a.cg.prefix = a.prefix;
    if (a.unit) {
      const char *eq = strchr(a.unit, '=');
      static char uname[64];
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
    if ((st = load(&a, &d)) != 0) goto done;
    if (a.export_csv) {
      FILE *ef = strcmp(a.export_csv, "-") ? fopen(a.export_csv, "w")
                                           : stdout;
      int erc = ef ? spy_cost_data_write_csv(d, ef) : SPY_EIO;
      if (ef && ef != stdout && fclose(ef)) erc = SPY_EIO;
      if (erc) {
        fprintf(stderr, "spyon costs: %s: %s\n", a.export_csv,
                ef ? spy_strerror(erc) : strerror(errno));
        st = 1;
      }
      goto done;
    }
    int rc = spy_cost_fit_data(d, &a.o, a.only, a.nonly, &r, err,
                               sizeof err);
    if (rc) {
      fprintf(stderr, "spyon costs: %s\n", err);
      st = rc == SPY_ENOMEM ? 1 : 2;
      goto done;
    }
    FILE *out = stdout;
    if (a.output && !(out = fopen(a.output, "w"))) {
      fprintf(stderr, "spyon costs: %s: %s\n", a.output, strerror(errno));
      st = 1;
      goto done;
    }
    if (a.codegen) rc = spy_cost_write_c(r, out, &a.cg);
    else if (!strcmp(a.format, "csv")) rc = spy_cost_write_csv(r, out);
    else if (!strcmp(a.format, "json")) rc = spy_cost_write_json(r, out);
    else rc = spy_cost_write_table(r, out);
    if (rc == 0 && (fflush(out) || ferror(out))) rc = SPY_EIO;
    if (out != stdout && fclose(out) && rc == 0) rc = SPY_EIO;
    if (rc) {
      fprintf(stderr, "spyon costs: writing %s: %s\n",
              a.output ? a.output : "the output", spy_strerror(rc));
      st = 1;
      goto done;
    }
    if (a.plot) st = plots(&a, r, d);
  done:
    spy_cost_result_free(r);
    spy_cost_data_free(d);
  }
  for (size_t i = 0; i < a.nowned; i++) free(a.owned[i]);
  return st;
}
