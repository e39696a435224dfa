/*
** cli/report.c: spyon report FILE.spy — print a saved profile.
*/
#include "config.h"

#include <stdio.h>
#include <string.h>

#include <spyon.h>
#include <spyon/profile.h>

#include "cli/cli.h"

int cli_report(int argc, char **argv) {
  const char *path = NULL, *format = "text";
  spy_report_options ro;
  spy_report_options_init(&ro);
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (!strcmp(a, "--threshold") && i + 1 < argc) {
      double d = cli_number(a, argv[++i]);
      if (d < 0 || d > 100) return 2;
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
                    "[--format text|json|folded|speedscope]\n");
    return 2;
  }
  char err[512];
  spy_profile *p;
  int rc = spy_profile_load(path, &p, err, sizeof err);
  if (rc < 0) {
    fprintf(stderr, "spyon: %s\n", err);
    return 1;
  }
  if (!strcmp(format, "text")) rc = spy_report_text(p, stdout, &ro);
  else if (!strcmp(format, "json")) rc = spy_profile_write_json(p, stdout);
  else {
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
