/*
** cli/cli.h: the subcommands of the spyon command. Each takes the argument
** vector from its own name on (argv[0] is the subcommand or "spyon") and
** returns the process exit status: 0 success, 1 failure (a file that
** cannot be read, is corrupt or cannot be written), 2 bad usage (an
** option, a malformed script or CSV), 128+N after signal N stopped a run.
** Each prints one clear line on stderr for an error. Options are parsed
** by cli/opt.c from one table per command.
*/
#ifndef SPY_CLI_H
#define SPY_CLI_H

#include <stdio.h>

#include <spyon.h>
#include <spyon/profile.h>

#include "cli/opt.h"

int cli_report(int argc, char **argv); /* spyon report FILE.spy */
int cli_diff(int argc, char **argv);   /* spyon diff A.spy B.spy */
int cli_merge(int argc, char **argv);  /* spyon merge A.spy... -o C.spy */
int cli_costs(int argc, char **argv);  /* spyon costs FILE.spy|FILE.csv */
int cli_browse(int argc, char **argv); /* spyon browse FILE.spy (tui/) */
int cli_run(int argc, char **argv);    /* spyon [options] SCRIPT [args] */

/* ---- running a script: options shared by every host ----------------- */

typedef struct cli_run_opts {
  const char *out;    /* -o */
  double interval_us; /* -i */
  double threshold;   /* --threshold */
  int mode;           /* --mode: SPY_MODE_* */
  int json, profile;  /* --json, !--no-profile */
  int native;         /* --native */
  double native_us;   /* --native-interval */
  int browse, live;   /* --browse, --live (tui/) */
  int marker;         /* --marker: index in "tick|thread|signal", or -1 */
  int cpu_clock;      /* --clock: index in "wall|cpu" */
  int exact_prims;    /* --exact-prims */
  int lang;           /* --lang: index in "st|lua", -1: by name */
  int co_each;        /* --coroutine-each (Lua) */
} cli_run_opts;

/* The options of the run in progress (NULL outside cli_run), for hosts. */
const cli_run_opts *cli_run_current(void);

/* Report (or save) profile p now and free it, as cli_run would after the
** script: for a host whose script ends the process itself (Lua's
** os.exit). cli_run then reports nothing more. */
void cli_run_report_now(spy_profile *p);

/* An interpreter spyon can run scripts with, chosen by the script's file
** name ending (cli/run.c's table; the first entry is the default). The
** host runs one script with the profiler configured by so (NULL with
** --no-profile) and hands back the profile taken (*out, NULL if none) and
** the script's exit status; `interrupt` is called from a signal handler
** (SIGINT, SIGTERM, SIGHUP) and must be async-signal-safe. */
typedef struct cli_host {
  const char *ext;  /* ".st" */
  const char *what; /* "Smalltalk", for messages */
  int (*run)(const char *script, int argc, char **argv,
             const spy_options *so, spy_profile **out);
  void (*interrupt)(void);
  int ticks;        /* 1: calls spy_tick (SPY_MARKER_TICK by default) */
  double interval_us; /* the default sampling interval (-i) */
} cli_host;

/* Block (1) or unblock (0) the stop signals in the calling thread. A host
** blocks them around starting its profiler, so that the threads it makes
** inherit the mask and the handler always runs on the interpreter's
** thread, never concurrently with it on the sampler's. */
void cli_block_stop_signals(int block);

/* For `spyon --live` (tui/live.c): a host publishes its profiler once it
** has started (P) and withdraws it before stopping it (NULL), so that the
** browser's thread can take snapshots while the script runs. A host that
** never publishes is browsed when its script ends. */
void cli_live_publish(spy_profiler *P);

/* Has a stop signal arrived since the run began? (For a host that makes
** its interpreter after the signal handlers are installed.) */
int cli_stop_requested(void);

/* Refuse an output path before anything runs: a directory, a path that
** cannot be created or replaced, or the same file as one of the inputs
** (device and inode: links and other spellings are seen through). Prints
** "PROG: ..." and returns 2, or returns 0. */
int cli_check_output(const char *prog, const char *out,
                     const char *const *inputs, int ninputs);

/* Write a report to path atomically (or stdout when path is NULL or "-")
** by calling write(f, ctx); 0, or 1 after printing "PROG: ...". */
int cli_write_to(const char *prog, const char *path,
                 int (*write)(FILE *f, void *ctx), void *ctx);

/* The text report of p to f, nodes under threshold percent hidden, each
** primitive with its fitted cost model beside it (cli/report.c; for
** `spyon report` and the report after a run). */
int cli_text_report(spy_profile *p, FILE *f, double threshold);

#endif
