/*
** cli/main.c: the spyon command: dispatch to a subcommand.
**
**   spyon [options] SCRIPT.st [args]   run a script under the profiler
**   spyon report FILE.spy [options]    print a saved profile
**   spyon costs FILE.spy|FILE.csv      fit per-primitive cost models
*/
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <spyon.h>

#include "cli/cli.h"

/* Subcommands built by other modules' fragments; weak until all land. */
#pragma weak cli_costs
#pragma weak cli_run

static void usage(FILE *f) {
  fputs("usage: spyon [options] SCRIPT.st [args...]\n"
        "       spyon report FILE.spy [--threshold PCT] "
        "[--format text|json|folded|speedscope|pprof|svg]\n"
        "       spyon diff BEFORE.spy AFTER.spy [--threshold PCT] "
        "[--format text|json|folded]\n"
        "       spyon merge A.spy B.spy... -o OUT.spy\n"
        "       spyon costs FILE.spy|FILE.csv [options]\n"
        "       spyon --version | --help\n"
        "See spyon(1).\n",
        f);
}

double cli_number(const char *opt, const char *arg) {
  char *end;
  errno = 0;
  double d = arg ? strtod(arg, &end) : 0;
  if (!arg || !*arg || *end || errno || d < 0 || d != d) {
    fprintf(stderr, "spyon: %s: bad number '%s'\n", opt, arg ? arg : "");
    return -1;
  }
  return d;
}

double cli_percent(const char *opt, const char *arg) {
  double d = cli_number(opt, arg);
  if (d > 100) {
    fprintf(stderr, "spyon: %s: PCT must be 0..100, not '%s'\n", opt, arg);
    return -1;
  }
  return d;
}

static int missing(const char *what) {
  fprintf(stderr, "spyon: %s is not part of this build\n", what);
  return 2;
}

int main(int argc, char **argv) {
  if (argc < 2) {
    usage(stderr);
    return 2;
  }
  const char *cmd = argv[1];
  if (!strcmp(cmd, "--version") || !strcmp(cmd, "-V")) {
    printf("spyon %s\n", spy_version_string());
    return 0;
  }
  if (!strcmp(cmd, "--help") || !strcmp(cmd, "-h") || !strcmp(cmd, "help")) {
    usage(stdout);
    return 0;
  }
  if (!strcmp(cmd, "report")) return cli_report(argc - 1, argv + 1);
  if (!strcmp(cmd, "diff")) return cli_diff(argc - 1, argv + 1);
  if (!strcmp(cmd, "merge")) return cli_merge(argc - 1, argv + 1);
  if (!strcmp(cmd, "costs"))
    return cli_costs ? cli_costs(argc - 1, argv + 1) : missing("costs");
  return cli_run ? cli_run(argc, argv) : missing("running scripts");
}
