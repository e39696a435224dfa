/*
** cli/report.c: spyon report FILE.spy — print a saved profile.
*/
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <spyon.h>
#include <spyon/cost.h>
#include <spyon/profile.h>

#include "cli/cli.h"
#include "report/report.h"

int cli_report(int argc, char **argv) {
  const char *path = NULL, *format = "text";
  spy_report_options ro;
  spy_report_options_init(&ro);
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (!strcmp(a, "--threshold") && i + 1 < argc) {
      double d = cli_percent(a, argv[++i]);
      if (d < 0) return 2;
      ro.threshold_pct = d;
    } else if (!strcmp(a, "--format") && i + 1 < argc) {
      format = argv[++i];
    } else if (a[0] == '-' && a[1]) {
      fprintf(stderr, "spyon report: unknown option '%s'\n", a);
      return 2;
    } else if (!path) {
      path = a;
    } else {
      fprintf(stderr, "spyon report: one profile file only\n");
      return 2;
    }
  }
  if (!path) {
    fprintf(stderr, "usage: spyon report FILE.spy [--threshold PCT] "
                    "[--format text|json|folded|folded-tallies|\n"
                    "                                 speedscope|pprof|svg]\n");
    return 2;
  }
  char err[512];
  spy_profile *p;
  int rc = spy_profile_load(path, &p, err, sizeof err);
  if (rc < 0) {
    fprintf(stderr, "spyon: %s\n", err);
    return 1;
  }
  if (!strcmp(format, "text")) {
    spy_cost_annotate_profile(p, NULL); /* the fitted model beside prims */
    rc = spy_report_text(p, stdout, &ro);
  }
  else if (!strcmp(format, "json")) rc = spy_profile_write_json(p, stdout);
  else if (!strcmp(format, "folded")) rc = spy_report_folded(p, stdout, 0);
  else if (!strcmp(format, "folded-tallies"))
    rc = spy_report_folded(p, stdout, 1);
  else if (!strcmp(format, "speedscope"))
    rc = spy_report_speedscope(p, stdout, NULL);
  else if (!strcmp(format, "svg")) rc = spyR_write_svg(p, stdout, NULL);
  else if (!strcmp(format, "pprof")) {
    if (isatty(fileno(stdout))) {
      fprintf(stderr, "spyon report: pprof is gzip data: redirect stdout "
                      "to a file (> profile.pb.gz)\n");
      spy_profile_free(p);
      return 2;
    }
    rc = spyR_write_pprof(p, stdout);
  } else {
    fprintf(stderr, "spyon report: unknown format '%s'\n", format);
    spy_profile_free(p);
    return 2;
  }
  spy_profile_free(p);
  if (rc < 0) {
    fprintf(stderr, "spyon: writing the report: %s\n", spy_strerror(rc));
    return 1;
  }
  return 0;
}

/* spyon diff BEFORE.spy AFTER.spy: where the time changed, ranked by
** absolute change, with sampling noise (report/diff.c). */
int cli_diff(int argc, char **argv) {
  spy_report_options ro;
  spy_report_options_init(&ro);
  const char *path[2] = {NULL, NULL}, *format = "text";
  int n = 0;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--threshold") && i + 1 < argc) {
      double d = cli_percent("--threshold", argv[i + 1]);
      i++;
      if (d < 0) return 2;
      ro.threshold_pct = d;
    } else if (!strcmp(argv[i], "--format") && i + 1 < argc) {
      format = argv[++i];
    } else if (argv[i][0] == '-' && argv[i][1]) {
      fprintf(stderr, "spyon diff: unknown option '%s'\n", argv[i]);
      return 2;
    } else if (n < 2) {
      path[n++] = argv[i];
    } else {
      n = 3;
    }
  }
  if (n != 2) {
    fprintf(stderr, "usage: spyon diff BEFORE.spy AFTER.spy [--threshold PCT] "
                    "[--format text|json|folded]\n");
    return 2;
  }
  if (strcmp(format, "text") && strcmp(format, "json") &&
      strcmp(format, "folded")) {
    fprintf(stderr, "spyon diff: unknown format '%s'\n", format);
    return 2;
  }
  spy_profile *p[2] = {NULL, NULL};
  char err[512];
  for (int i = 0; i < 2; i++)
    if (spy_profile_load(path[i], &p[i], err, sizeof err) < 0) {
      fprintf(stderr, "spyon: %s\n", err);
      spy_profile_free(p[0]);
      return 1;
    }
  int rc;
  if (!strcmp(format, "json")) rc = spyR_write_diff_json(p[0], p[1], stdout);
  else if (!strcmp(format, "folded"))
    rc = spyR_write_diff_folded(p[0], p[1], stdout);
  else rc = spy_report_diff(p[0], p[1], stdout, &ro);
  spy_profile_free(p[0]);
  spy_profile_free(p[1]);
  if (rc < 0) {
    fprintf(stderr, "spyon: diff: %s\n", spy_strerror(rc));
    return 1;
  }
  return 0;
}

/* spyon merge A.spy B.spy... -o C.spy: one profile from runs of one
** program (report/merge.c). */
int cli_merge(int argc, char **argv) {
  const char *out = NULL;
  int n = 0;
  char **paths = calloc((size_t)argc, sizeof *paths);
  if (!paths) return 1;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "-o") && i + 1 < argc) {
      out = argv[++i];
    } else if (argv[i][0] == '-' && argv[i][1]) {
      fprintf(stderr, "spyon merge: unknown option '%s'\n", argv[i]);
      free(paths);
      return 2;
    } else {
      paths[n++] = argv[i];
    }
  }
  if (!out || n < 1) {
    fprintf(stderr, "usage: spyon merge A.spy B.spy... -o OUT.spy\n");
    free(paths);
    return 2;
  }
  spy_profile **p = calloc((size_t)n, sizeof *p);
  char err[512];
  int rc = p ? 0 : SPY_ENOMEM, status = 0;
  for (int i = 0; i < n && rc == 0; i++)
    if (spy_profile_load(paths[i], &p[i], err, sizeof err) < 0) {
      fprintf(stderr, "spyon: %s\n", err);
      status = 1;
      rc = 1;
    }
  spy_profile *m = NULL;
  if (rc == 0) {
    rc = spyR_merge((const spy_profile *const *)p, (size_t)n, &m);
    if (rc == SPY_EINVAL) {
      fprintf(stderr, "spyon merge: the profiles were taken in different "
                      "modes (poll and timer): runs of one program and one "
                      "mode only\n");
      status = 1;
    } else if (rc < 0) {
      fprintf(stderr, "spyon merge: %s\n", spy_strerror(rc));
      status = 1;
    } else if (spy_profile_save(m, out, err, sizeof err) < 0) {
      fprintf(stderr, "spyon: %s\n", err);
      status = 1;
    } else {
      fprintf(stderr, "spyon: %d profiles, %" PRIu64 " tallies, %" PRIu64
                      " ms, saved to %s\n", n, m->tallies,
              (m->wall_ns + 500000) / 1000000, out);
    }
  }
  spy_profile_free(m);
  for (int i = 0; p && i < n; i++) spy_profile_free(p[i]);
  free(p);
  free(paths);
  return status;
}
