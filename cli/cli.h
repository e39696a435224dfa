/*
** cli/cli.h: the subcommands of the spyon command. Each takes the argument
** vector from its own name on (argv[0] is the subcommand or "spyon") and
** returns the process exit status: 0 success, 1 failure, 2 bad usage or
** input. Each prints one clear line on stderr for an error.
*/
#ifndef SPY_CLI_H
#define SPY_CLI_H

int cli_report(int argc, char **argv); /* spyon report FILE.spy */
int cli_diff(int argc, char **argv);   /* spyon diff A.spy B.spy */
int cli_merge(int argc, char **argv);  /* spyon merge A.spy... -o C.spy */
int cli_costs(int argc, char **argv);  /* spyon costs FILE.spy|FILE.csv */
int cli_run(int argc, char **argv);    /* spyon [options] SCRIPT.st */

/* Parse a non-negative decimal number for option `opt`; on error print
** "spyon: OPT: bad number 'ARG'" and return -1. */
double cli_number(const char *opt, const char *arg);

/* cli_number for a percentage: also -1, with a message, above 100. */
double cli_percent(const char *opt, const char *arg);

#endif
