/*
** cli/report.c: spyon report FILE.spy, spyon diff BEFORE.spy AFTER.spy and
** spyon merge A.spy B.spy... -o OUT.spy: print a saved profile in one of
** the formats below, what changed between two (ranked by absolute change,
** with sampling noise: report/diff.c), or one profile from several runs of
** one program (report/merge.c). With -o the output replaces FILE
** atomically (never one of the inputs).
*/
#include "config.h"

#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <spyon.h>
#include <spyon/cost.h>
#include <spyon/report.h>

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

/* The report options: the defaults, with THRESHOLD percent. */
static spy_report_options options_at(double threshold) {
  spy_report_options ro;
  spy_report_options_init(&ro);
  ro.threshold_pct = threshold;
  return ro;
}

int cli_text_report(spy_profile *p, FILE *f, double threshold) {
  spy_report_options ro = options_at(threshold);
  spy_cost_annotate_profile(p, NULL); /* the fitted model beside prims */
  return spy_report_text(p, f, &ro);
}

static int fmt_text(FILE *f, void *ctx) {
  report_job *j = ctx;
  return cli_text_report(j->p, f, j->o->threshold);
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

static int fmt_svg(FILE *f, void *ctx) {
  return spy_report_svg(((report_job *)ctx)->p, f, NULL);
}

/* pprof is gzip data: not for a terminal. */
static int fmt_pprof(FILE *f, void *ctx) {
  if (isatty(fileno(f))) {
    fprintf(stderr, "spyon report: pprof is gzip data: use -o FILE or "
                    "redirect stdout (> profile.pb.gz)\n");
    return SPY_EINVAL;
  }
  return spy_report_pprof(((report_job *)ctx)->p, f);
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
  {"pprof", fmt_pprof},
  {"svg", fmt_svg},
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
  "Print a saved profile: the report, JSON, folded stacks, speedscope,\n"
  "pprof (for go tool pprof) or an interactive SVG flame graph.",
  report_opt_table, 1, 1, 0, "See spyon(1) and docs/report.md."};

static const cli_opt diff_opt_table[] = {
  {"--format", "-f", "FORMAT", "text (default), json or folded (the\n"
   "input of a differential flame graph)", cli_set_choice,
   offsetof(report_opts, format), 0, 0, "text|json|folded", 0, 0},
  {"--threshold", NULL, "PCT", "hide frames below PCT percent in both\n"
   "profiles (default 0.5)", cli_set_num,
   offsetof(report_opts, threshold), 0, 100, NULL, 0, 0},
  {"--output", "-o", "FILE", "write to FILE (replaced atomically)",
   cli_set_str, offsetof(report_opts, out), 0, 0, NULL, 0, 0},
  {NULL, NULL, NULL, NULL, NULL, 0, 0, 0, NULL, 0, 0},
};

static const cli_cmd diff_cmd = {
  "spyon diff", "BEFORE.spy AFTER.spy [options]",
  "Where the time changed between two saved profiles: each method and\n"
  "primitive's self and total time, ranked by absolute change, with the\n"
  "changes larger than sampling noise marked.",
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

/* Load a profile and name its native frames from their objects (what
** cannot be named keeps its name), or print "spyon: FILE: ..." (status
** 1). */
static int load(const char *path, spy_profile **p) {
  char err[512];
  if (spy_profile_load(path, p, err, sizeof err) < 0) {
    fprintf(stderr, "spyon: %s\n", err);
    return 1;
  }
  spy_profile_symbolize(*p);
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
  /* Native frames under their primitives, except in the JSON export, which
  ** is the profile's data as it is. */
  if (formats[o.format].write != fmt_json) spy_profile_natives_to_tree(j.p);
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
  spy_report_options ro = options_at(j->o->threshold);
  switch (j->o->format) {
  case 1: return spy_report_diff_json(j->p[0], j->p[1], f);
  case 2: return spy_report_diff_folded(j->p[0], j->p[1], f);
  default: return spy_report_diff(j->p[0], j->p[1], f, &ro);
  }
}

/* spyon diff BEFORE.spy AFTER.spy: where the time changed. */
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

/* ------------------------------------------------------------------------
** spyon merge
** --------------------------------------------------------------------- */

typedef struct merge_opts {
  const char *out;
} merge_opts;

static const cli_opt merge_opt_table[] = {
  {"--output", "-o", "FILE", "write the merged profile to FILE (required;\n"
   "replaced atomically)", cli_set_str, offsetof(merge_opts, out), 0, 0,
   NULL, 0, 0},
  {NULL, NULL, NULL, NULL, NULL, 0, 0, 0, NULL, 0, 0},
};

static const cli_cmd merge_cmd = {
  "spyon merge", "A.spy B.spy... -o OUT.spy",
  "One profile from several runs of one program in one mode: processes,\n"
  "frames, primitives, regions and tree nodes are matched by name and\n"
  "their times and counts summed (at most 8 inputs).",
  merge_opt_table, 1, CLI_MAXPOS, 0, "See spyon(1) and docs/report.md."};

int cli_merge(int argc, char **argv) {
  merge_opts o = {NULL};
  cli_args a;
  int rc = cli_parse(&merge_cmd, argc, argv, &o, &a);
  if (rc >= 0) return rc;
  if (!o.out) return cli_bad(merge_cmd.prog, "--output", "is required");
  if (cli_check_output(merge_cmd.prog, o.out, a.pos, a.npos)) return 2;
  spy_profile *p[CLI_MAXPOS] = {NULL}, *m = NULL;
  int status = 0;
  for (int i = 0; i < a.npos && !status; i++) status = load(a.pos[i], &p[i]);
  if (!status) {
    rc = spy_profile_merge((const spy_profile *const *)p, (size_t)a.npos, &m);
    char err[512];
    if (rc == SPY_EINVAL) {
      fprintf(stderr, "spyon merge: the profiles were taken in different "
                      "modes (poll and timer): runs of one program and one "
                      "mode only\n");
      status = 1;
    } else if (rc < 0) {
      fprintf(stderr, "spyon merge: %s\n", spy_strerror(rc));
      status = 1;
    } else if (spy_profile_save(m, o.out, err, sizeof err) < 0) {
      fprintf(stderr, "spyon: %s\n", err);
      status = 1;
    } else {
      fprintf(stderr, "spyon: %d profiles, %" PRIu64 " tallies, %" PRIu64
                      " ms, saved to %s\n", a.npos, m->tallies,
              (m->wall_ns + 500000) / 1000000, o.out);
    }
  }
  spy_profile_free(m);
  for (int i = 0; i < a.npos; i++) spy_profile_free(p[i]);
  return status;
}
