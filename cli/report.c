/*
** cli/report.c: spyon report FILE.spy — print a saved profile.
*/
#include "config.h"

#include <stdio.h>
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
                    "[--format text|json|folded|folded-tallies|speedscope|pprof]\n");
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

/* spyon diff BEFORE.spy AFTER.spy: the frames whose share changed most. */
int cli_diff(int argc, char **argv) {
  spy_report_options ro;
  spy_report_options_init(&ro);
  const char *path[2] = {NULL, NULL};
  int n = 0;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--threshold") && i + 1 < argc) {
      double d = cli_percent("--threshold", argv[i + 1]);
      i++;
      if (d < 0) return 2;
      ro.threshold_pct = d;
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
    fprintf(stderr, "usage: spyon diff BEFORE.spy AFTER.spy [--threshold PCT]\n");
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
  int rc = spy_report_diff(p[0], p[1], stdout, &ro);
  spy_profile_free(p[0]);
  spy_profile_free(p[1]);
  if (rc < 0) {
    fprintf(stderr, "spyon: diff: %s\n", spy_strerror(rc));
    return 1;
  }
  return 0;
}
