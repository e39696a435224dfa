/*
** cli/main.c: the spyon command: dispatch to a subcommand.
**
**   spyon [options] SCRIPT [args]      run a script under the profiler
**   spyon SUBCOMMAND [options] ...     one of the table below
**
** A subcommand is one entry in `commands`; its options are its own table
** (cli/opt.h), so `spyon SUBCOMMAND --help` lists them all.
*/
#include "config.h"

#include <stdio.h>
#include <string.h>

#include <spyon.h>

#include "cli/cli.h"

/* Subcommands built by other modules' fragments; weak until all land. */
#pragma weak cli_costs

static const struct command {
  const char *name;
  int (*main)(int argc, char **argv);
  const char *usage; /* operands and what it does, for spyon --help */
} commands[] = {
  {"report", cli_report, "FILE.spy [options]      print a saved profile"},
  {"diff", cli_diff, "BEFORE.spy AFTER.spy      what changed between two"},
  {"merge", cli_merge, "A.spy B.spy... -o OUT.spy   one profile from runs"},
  {"costs", cli_costs, "FILE.spy|FILE.csv [options]   fit cost models"},
  {"browse", cli_browse, "FILE.spy [--threshold PCT]  browse in the terminal"},
};
#define NCOMMANDS (sizeof commands / sizeof commands[0])

static void usage(FILE *f) {
  fputs("usage: spyon [options] SCRIPT [args...]   run a script under the "
        "profiler\n",
        f);
  for (size_t i = 0; i < NCOMMANDS; i++)
    fprintf(f, "       spyon %s %s\n", commands[i].name, commands[i].usage);
  fputs("       spyon --version | --help\n"
        "`spyon --help` lists the options of running a script, `spyon "
        "SUBCOMMAND --help`\nthose of a subcommand. See spyon(1).\n",
        f);
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
  if (!strcmp(cmd, "help")) {
    usage(stdout);
    return 0;
  }
  if (!strcmp(cmd, "--help") || !strcmp(cmd, "-h")) {
    usage(stdout);
    putchar('\n');
    /* and the run options, from their table */
    char *hv[] = {argv[0], (char *)"--help", NULL};
    return cli_run(2, hv);
  }
  for (size_t i = 0; i < NCOMMANDS; i++)
    if (!strcmp(cmd, commands[i].name)) {
      if (!commands[i].main) {
        fprintf(stderr, "spyon: %s is not part of this build\n", cmd);
        return 2;
      }
      return commands[i].main(argc - 1, argv + 1);
    }
  return cli_run(argc, argv);
}
