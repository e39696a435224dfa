/*
** cli/report.c: spyon report FILE.spy and spyon diff BEFORE.spy AFTER.spy:
** print a saved profile in one of the formats below, or the frames whose
** share changed most between two. With -o the output replaces FILE
** atomically (never one of the inputs).
*/
#include "config.h"

#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <spyon.h>
#include <spyon/cost.h>
#include <spyon/profile.h>

#include "cli/cli.h"

typedef struct report_opts {
  const char *out;
  double threshold;
  int format; /* index in formats[] */
} report_opts;

typedef struct report_job {
  spy_profile *p;
  const report_opts *o;
} report_job;

static int fmt_text(FILE *f, void *ctx) {
  report_job *j = ctx;
  spy_report_options ro;
  spy_report_options_init(&ro);
  ro.threshold_pct = j->o->threshold;
  spy_cost_annotate_profile(j->p, NULL); /* the fitted model beside prims */
  return spy_report_text(j->p, f, &ro);
}

static int fmt_json(FILE *f, void *ctx) {
  return spy_profile_write_json(((report_job *)ctx)->p, f);
}

static int fmt_folded(FILE *f, void *ctx) {
  return spy_report_folded(((report_job *)ctx)->p, f, 0);
}

static int fmt_folded_tallies(FILE *f, void *ctx) {
  return spy_report_folded(((report_job *)ctx)->p, f, 1);
}

static int fmt_speedscope(FILE *f, void *ctx) {
  return spy_report_speedscope(((report_job *)ctx)->p, f, NULL);
}

/* The formats of `spyon report --format`: one entry each. */
static const struct format {
  const char *name;
  int (*write)(FILE *f, void *ctx); /* ctx: a report_job */
} formats[] = {
  {"text", fmt_text},
  {"json", fmt_json},
  {"folded", fmt_folded},
  {"folded-tallies", fmt_folded_tallies},
  {"speedscope", fmt_speedscope},
};
#define NFORMATS (sizeof formats / sizeof formats[0])

static int set_format(void *o, const cli_opt *opt, const char *name,
                      const char *v) {
  (void)opt;
  for (size_t i = 0; i < NFORMATS; i++)
    if (!strcmp(v, formats[i].name)) {
      ((report_opts *)o)->format = (int)i;
      return 0;
    }
  fprintf(stderr, "%s: %s: unknown format '%s' (", cli_prog, name, v);
  for (size_t i = 0; i < NFORMATS; i++)
    fprintf(stderr, "%s%s", i ? ", " : "", formats[i].name);
  fputs(")\n", stderr);
  return 2;
}

/* Not const: the --format line of the help is made from formats[] (see
** format_help), so that a new format is one entry there. */
static cli_opt report_opt_table[] = {
  {"--format", "-f", "FORMAT", NULL, set_format, 0, 0, 0, NULL, 0, 0},
  {"--threshold", NULL, "PCT", "hide tree nodes below PCT percent "
   "(default 0.5)", cli_set_num, offsetof(report_opts, threshold), 0, 100,
   NULL, 0, 0},
  {"--output", "-o", "FILE", "write to FILE (replaced atomically)",
   cli_set_str, offsetof(report_opts, out), 0, 0, NULL, 0, 0},
  {NULL, NULL, NULL, NULL, NULL, 0, 0, 0, NULL, 0, 0},
};

static const cli_cmd report_cmd = {
  "spyon report", "FILE.spy [options]",
  "Print a saved profile: the report, JSON, folded stacks or speedscope.",
  report_opt_table, 1, 1, 0, "See spyon(1) and docs/report.md."};

static const cli_opt diff_opt_table[] = {
  {"--threshold", NULL, "PCT", "hide frames below PCT percent in both\n"
   "profiles (default 0.5)", cli_set_num,
   offsetof(report_opts, threshold), 0, 100, NULL, 0, 0},
  {"--output", "-o", "FILE", "write to FILE (replaced atomically)",
   cli_set_str, offsetof(report_opts, out), 0, 0, NULL, 0, 0},
  {NULL, NULL, NULL, NULL, NULL, 0, 0, 0, NULL, 0, 0},
};

static const cli_cmd diff_cmd = {
  "spyon diff", "BEFORE.spy AFTER.spy [options]",
  "List the frames whose share of self time changed most between two\n"
  "saved profiles.",
  diff_opt_table, 2, 2, 0, "See spyon(1)."};

/* "text (default), json, ..." from formats[], wrapped for --help. */
static void format_help(void) {
  static char help[512];
  size_t n = 0, col = 0;
  for (size_t i = 0; i < NFORMATS && n < sizeof help - 64; i++) {
    const char *sep = i == 0 ? "" : i + 1 == NFORMATS ? " or " : ", ";
    size_t w = strlen(sep) + strlen(formats[i].name) + (i ? 0 : 10);
    if (col + w > 50) {
      n += (size_t)snprintf(help + n, sizeof help - n, "%s\n",
                            i + 1 == NFORMATS ? " or" : ",");
      sep = "";
      col = 0;
    }
    n += (size_t)snprintf(help + n, sizeof help - n, "%s%s%s", sep,
                          formats[i].name, i ? "" : " (default)");
    col += w;
  }
  report_opt_table[0].help = help;
}

/* Load a profile or print "spyon: FILE: ..." (status 1). */
static int load(const char *path, spy_profile **p) {
  char err[512];
  if (spy_profile_load(path, p, err, sizeof err) < 0) {
    fprintf(stderr, "spyon: %s\n", err);
    return 1;
  }
  return 0;
}

int cli_report(int argc, char **argv) {
  report_opts o = {NULL, 0.5, 0};
  cli_args a;
  format_help();
  int rc = cli_parse(&report_cmd, argc, argv, &o, &a);
  if (rc >= 0) return rc;
  if (cli_check_output(report_cmd.prog, o.out, a.pos, 1)) return 2;
  report_job j = {NULL, &o};
  if (load(a.pos[0], &j.p)) return 1;
  rc = cli_write_to("spyon", o.out, formats[o.format].write, &j);
  spy_profile_free(j.p);
  return rc;
}

typedef struct diff_job {
  spy_profile *p[2];
  const report_opts *o;
} diff_job;

static int write_diff(FILE *f, void *ctx) {
  diff_job *j = ctx;
  spy_report_options ro;
  spy_report_options_init(&ro);
  ro.threshold_pct = j->o->threshold;
  return spy_report_diff(j->p[0], j->p[1], f, &ro);
}

/* spyon diff BEFORE.spy AFTER.spy: the frames whose share changed most. */
int cli_diff(int argc, char **argv) {
  report_opts o = {NULL, 0.5, 0};
  cli_args a;
  int rc = cli_parse(&diff_cmd, argc, argv, &o, &a);
  if (rc >= 0) return rc;
  if (cli_check_output(diff_cmd.prog, o.out, a.pos, 2)) return 2;
  diff_job j = {{NULL, NULL}, &o};
  if (load(a.pos[0], &j.p[0])) return 1;
  if (load(a.pos[1], &j.p[1])) {
    spy_profile_free(j.p[0]);
    return 1;
  }
  rc = cli_write_to("spyon", o.out, write_diff, &j);
  spy_profile_free(j.p[0]);
  spy_profile_free(j.p[1]);
  return rc;
}
