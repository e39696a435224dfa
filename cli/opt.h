/*
** cli/opt.h: the option tables of the spyon command.
**
** Every command (running a script, report, diff, costs, ...) describes its
** options as one table of cli_opt; one parser reads them all the same way
** and one printer makes the --help text from the same table, so an option
** that exists is always listed and always takes both `--opt value` and
** `--opt=value` (a short alias also takes `-x value` and `-xvalue`).
** Adding an option is one table entry; adding a subcommand is one entry in
** cli/main.c's command table plus its cli_cmd.
**
** Errors are one line on stderr, prefixed with the command's name
** ("spyon report: option --threshold needs a value"), and exit status 2.
*/
#ifndef SPY_CLI_OPT_H
#define SPY_CLI_OPT_H

#include <stddef.h>
#include <stdio.h>

typedef struct cli_opt cli_opt;

/* Store the value of option opt (val is NULL for a flag) into the command's
** options struct o; return 0, or an exit status after printing one line
** (cli_bad helps). `name` is the spelling the user typed. */
typedef int (*cli_setter)(void *o, const cli_opt *opt, const char *name,
                          const char *val);

struct cli_opt {
  const char *name;    /* "--threshold" */
  const char *alias;   /* "-t", or NULL */
  const char *arg;     /* the value's name in --help ("PCT"); NULL: a flag */
  const char *help;    /* one line; "\n" continues on an indented line */
  cli_setter set;      /* one of the cli_set_* below, or the command's own */
  size_t off;          /* where the setter stores: offsetof(opts, field) */
  double lo, hi;       /* cli_set_num: accepted range, inclusive */
  const char *choices; /* cli_set_choice: "poll|timer" (stores the index) */
  unsigned excl;       /* options whose excl share a bit conflict */
  unsigned conflicts;  /* and this one conflicts with those whose excl has
                          one of these bits */
};

/* A command: its name as messages print it, its operands, its options. */
typedef struct cli_cmd {
  const char *prog;     /* "spyon report" */
  const char *operands; /* "FILE.spy [options]", for the usage line */
  const char *about;    /* what it does, one or more lines, for --help */
  const cli_opt *opts;  /* terminated by an entry with name NULL */
  int min_pos, max_pos; /* operands accepted */
  int rest;             /* 1: the first operand ends the options; it and
                           everything after it are the caller's (a script
                           and its arguments) */
  const char *footer;   /* printed after the options, or NULL */
} cli_cmd;

#define CLI_MAXPOS 8

/* What cli_parse leaves for the command. */
typedef struct cli_args {
  const char *pos[CLI_MAXPOS]; /* the operands, in order */
  int npos;
  int rest; /* c->rest: argv index of the first operand (argc if none) */
} cli_args;

/* Parse argv[1..argc-1] (argv[0] is the command's name) against c into
** the options struct o and a. Returns -1 to go on, 0 after printing
** --help, or 2 after printing one error line. "--" ends the options. */
int cli_parse(const cli_cmd *c, int argc, char **argv, void *o,
              cli_args *a);

/* The --help text of c. */
void cli_help(const cli_cmd *c, FILE *f);

/* Print "PROG: OPT: MESSAGE" (printf-style) and return 2. */
int cli_bad(const char *prog, const char *opt, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* The program name of the command being parsed, for setters' messages. */
extern const char *cli_prog;

/* Ready-made setters, storing at opt->off:
**   cli_set_on / cli_set_off   int 1 / 0 (flags)
**   cli_set_str                const char * (the argv string itself)
**   cli_set_num                double in [lo, hi] (decimal, no suffix)
**   cli_set_choice             int: the index of val in choices */
int cli_set_on(void *o, const cli_opt *opt, const char *name, const char *v);
int cli_set_off(void *o, const cli_opt *opt, const char *name, const char *v);
int cli_set_str(void *o, const cli_opt *opt, const char *name, const char *v);
int cli_set_num(void *o, const cli_opt *opt, const char *name, const char *v);
int cli_set_choice(void *o, const cli_opt *opt, const char *name,
                   const char *v);

/* The index of word in a "a|b|c" list, or -1. */
int cli_choice(const char *choices, const char *word);

#endif
