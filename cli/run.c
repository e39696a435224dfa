/*
** cli/run.c: "spyon [options] SCRIPT [args]": run a script under the
** profiler, with the interpreter its name ending picks (`hosts` below).
**
** The script's output goes to stdout as it runs; then the report follows
** on stdout (text, or JSON with --json), unless -o saves the profile, in
** which case one summary line goes to stderr. The exit status is the
** script's own (1 after an unhandled error, 2 for a syntax error), or
** 128+N when signal N (SIGINT, SIGTERM or SIGHUP: what a terminal,
** `timeout`, a CI runner or systemd send) stopped it. The profile collected
** so far is reported or saved in every case. An output path that cannot
** be written, or that is the script itself, is refused before the script
** starts.
*/
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <spyon.h>
#include <spyon/report.h>

#include "cli/cli.h"
#include "profile/atomic.h"
#include "tui/live.h"
#include "tui/tui.h"

/* Interpreters by script name ending; the first is the default. Hosts
** come from other modules' fragments, hence weak. */
extern const cli_host cli_host_st __attribute__((weak));
extern const cli_host cli_host_lua __attribute__((weak));
static const cli_host *const *hosts(void) {
  static const cli_host *t[4];
  size_t n = 0;
  if (&cli_host_st) t[n++] = &cli_host_st;
  if (&cli_host_lua) t[n++] = &cli_host_lua;
  t[n] = NULL;
  return t;
}

#define EXCL_OUTPUT 1u /* -o and --json: one destination */

static const cli_opt run_opts[] = {
  {"--output", "-o", "FILE", "save the profile to FILE, not the report",
   cli_set_str, offsetof(cli_run_opts, out), 0, 0, NULL, EXCL_OUTPUT, 0},
  {"--interval", "-i", "USEC", "sampling interval in microseconds, 1 to "
   "10000000\n(default 100; for Lua 1000: each sample costs a\ntimer "
   "signal there)", cli_set_num,
   offsetof(cli_run_opts, interval_us), 1, 1e7, NULL, 0, 0},
  {"--threshold", NULL, "PCT", "hide tree nodes below PCT percent "
   "(default 0.5)", cli_set_num, offsetof(cli_run_opts, threshold), 0, 100,
   NULL, 0, EXCL_OUTPUT}, /* only the text report has a threshold */
  {"--mode", NULL, "poll|timer", "poll: charge primitives exactly "
   "(default);\ntimer: MessageTally-style, for comparison", cli_set_choice,
   offsetof(cli_run_opts, mode), 0, 0, "poll|timer", 0, 0},
  {"--json", NULL, NULL, "print the profile as JSON instead of the report",
   cli_set_on, offsetof(cli_run_opts, json), 0, 0, NULL, EXCL_OUTPUT, 0},
  {"--native", NULL, NULL, "also sample native stacks inside primitives "
   "(C functions\nshown under their primitive)", cli_set_on, offsetof(cli_run_opts, native), 0, 0, NULL, 0, 0},
  {"--native-interval", NULL, "USEC", "native samples: how often, 10 to "
   "10000000\n(default 1000); implies --native", cli_set_num,
   offsetof(cli_run_opts, native_us), 10, 1e7, NULL, 0, 0},
  {"--marker", NULL, "tick|thread|signal", "what marks samples due: the "
   "interpreter's\ninterrupt checks (default for .st), the sampler thread,"
   "\nor a per-thread timer signal", cli_set_choice,
   offsetof(cli_run_opts, marker), 0, 0, "tick|thread|signal", 0, 0},
  {"--clock", NULL, "wall|cpu", "what a sample weighs: wall time (default) "
   "or the\ninterpreter thread's own CPU time", cli_set_choice,
   offsetof(cli_run_opts, cpu_clock), 0, 0, "wall|cpu", 0, 0},
  {"--exact-prims", NULL, NULL, "time every primitive call (default: "
   "totals estimated\nfrom the samples, calls counted exactly)", cli_set_on,
   offsetof(cli_run_opts, exact_prims), 0, 0, NULL, 0, 0},
  {"--no-profile", NULL, NULL, "run without profiling (hooks stopped)",
   cli_set_off, offsetof(cli_run_opts, profile), 0, 0, NULL, 0, 0},
  {"--browse", NULL, NULL, "browse the profile in the terminal when the "
   "script ends", cli_set_on, offsetof(cli_run_opts, browse), 0, 0, NULL, 0,
   0},
  {"--live", NULL, NULL, "browse the profile while the script runs; its "
   "output\nis written out when the browser exits", cli_set_on,
   offsetof(cli_run_opts, live), 0, 0, NULL, 0, 0},
  {"--lang", NULL, "st|lua", "the script's language (default: by its "
   "name,\n.lua Lua, else Smalltalk)", cli_set_choice,
   offsetof(cli_run_opts, lang), 0, 0, "st|lua", 0, 0},
  {"--coroutine-each", NULL, NULL, "one process per Lua coroutine (default:"
   "\none per coroutine body function)", cli_set_on,
   offsetof(cli_run_opts, co_each), 0, 0, NULL, 0, 0},
  {NULL, NULL, NULL, NULL, NULL, 0, 0, 0, NULL, 0, 0},
};

static const cli_cmd run_cmd = {
  "spyon", "[options] SCRIPT [args...]",
  "Run a script under the profiler; the report follows the script's output."
  "\nThe interpreter is chosen by the script's name: .st Smalltalk "
  "(the default),\n.lua Lua 5.4 (docs/lua.md); or by --lang.",
  run_opts, 0, 0, 1,
  "SIGINT, SIGTERM and SIGHUP stop the script; the profile is still "
  "printed or\nsaved and the exit status is 128 + the signal's number. "
  "See spyon(1)."};

int cli_check_output(const char *prog, const char *out,
                     const char *const *inputs, int ninputs) {
  if (!out || !strcmp(out, "-")) return 0;
  for (int i = 0; i < ninputs; i++)
    if (inputs[i] && spyP_same_file(out, inputs[i])) {
      fprintf(stderr, "%s: %s is the input %s: refusing to overwrite it\n",
              prog, out, inputs[i]);
      return 2;
    }
  char err[512];
  if (spyP_acheck(out, err, sizeof err)) {
    fprintf(stderr, "%s: %s\n", prog, err);
    return 2;
  }
  return 0;
}

int cli_write_to(const char *prog, const char *path,
                 int (*write)(FILE *f, void *ctx), void *ctx) {
  char err[512];
  if (!path || !strcmp(path, "-")) {
    errno = 0;
    int rc = write(stdout, ctx);
    if (rc == 0 && (fflush(stdout) || ferror(stdout))) rc = SPY_EIO;
    if (rc) {
      fprintf(stderr, "%s: writing the report: %s\n", prog,
              errno ? strerror(errno) : spy_strerror(rc));
      return 1;
    }
    return 0;
  }
  spyP_afile a;
  if (spyP_aopen(&a, path, err, sizeof err)) {
    fprintf(stderr, "%s: %s\n", prog, err);
    return 1;
  }
  int rc = write(a.f, ctx);
  if (rc) {
    int e = errno;
    spyP_aabort(&a);
    fprintf(stderr, "%s: %s: write error: %s\n", prog, path,
            e ? strerror(e) : spy_strerror(rc));
    return 1;
  }
  if (spyP_acommit(&a, err, sizeof err)) {
    fprintf(stderr, "%s: %s\n", prog, err);
    return 1;
  }
  return 0;
}

/* ---- signals ---------------------------------------------------------- */

static const cli_host *running;
static volatile sig_atomic_t stopped_by;

/* The first SIGINT, SIGTERM or SIGHUP asks the interpreter to stop; what
** ran is still reported. A second one while the first is being handled
** (a script that does not reach an interrupt check, a save that hangs)
** ends the process the default way. */
static void on_stop(int sig) {
  if (stopped_by) {
    signal(sig, SIG_DFL);
    raise(sig);
    return;
  }
  stopped_by = sig;
  if (running && running->interrupt) running->interrupt();
}

int cli_stop_requested(void) {
  return stopped_by != 0;
}

static const int stop_signals[] = {SIGINT, SIGTERM, SIGHUP};
#define NSTOP (sizeof stop_signals / sizeof stop_signals[0])

void cli_block_stop_signals(int block) {
  sigset_t set;
  sigemptyset(&set);
  for (size_t i = 0; i < NSTOP; i++) sigaddset(&set, stop_signals[i]);
  pthread_sigmask(block ? SIG_BLOCK : SIG_UNBLOCK, &set, NULL);
}

/* ---- the report ------------------------------------------------------- */

typedef struct emit_ctx {
  spy_profile *p;
  const cli_run_opts *o;
} emit_ctx;

static int write_report(FILE *f, void *ctx) {
  emit_ctx *e = ctx;
  if (e->o->json) return spy_profile_write_json(e->p, f);
  /* Native frames named and shown under their primitives. (A profile
  ** saved with -o keeps addresses: its reader names them.) */
  spy_profile_symbolize(e->p);
  spy_profile_natives_to_tree(e->p);
  return cli_text_report(e->p, f, e->o->threshold);
}

/* Report, print as JSON or save the profile; returns 0 or 1. */
static int emit(spy_profile *p, const cli_run_opts *o) {
  if (o->out) {
    char err[512];
    if (spy_profile_save(p, o->out, err, sizeof err) < 0) {
      fprintf(stderr, "spyon: %s\n", err);
      return 1;
    }
    fprintf(stderr, "spyon: %llu tallies, %.0f ms, saved to %s\n",
            (unsigned long long)p->tallies, (double)p->wall_ns / 1e6, o->out);
    return 0;
  }
  emit_ctx e = {p, o};
  return cli_write_to("spyon", NULL, write_report, &e);
}

/* "spyon SCRIPT ARGS..." for the header, with the script's arguments. */
static void set_command(spy_profile *p, int argc, char **argv) {
  size_t n = 16;
  for (int i = 0; i < argc; i++) n += strlen(argv[i]) + 1;
  char *cmd = malloc(n);
  if (!cmd) return;
  strcpy(cmd, "spyon");
  for (int i = 0; i < argc; i++) {
    strcat(cmd, " ");
    strcat(cmd, argv[i]);
  }
  spy_profile_set_command(p, cmd);
  free(cmd);
}

static const cli_host *host_for(const char *script, int lang) {
  const cli_host *const *t = hosts();
  if (lang >= 0) { /* --lang: the host whose ending is ".st" / ".lua" */
    static const char *const ext[] = {".st", ".lua"};
    for (size_t i = 0; t[i]; i++)
      if (!strcmp(t[i]->ext, ext[lang])) return t[i];
    return NULL;
  }
  size_t n = strlen(script);
  for (size_t i = 0; t[i]; i++) {
    size_t m = strlen(t[i]->ext);
    if (n > m && !strcmp(script + n - m, t[i]->ext)) return t[i];
  }
  return t[0];
}

/* The run in progress, for hosts (cli_run_current, cli_run_report_now). */
static const cli_run_opts *cur_opts;
static int cur_argc, cur_reported;
static char **cur_argv;

const cli_run_opts *cli_run_current(void) {
  return cur_opts;
}

void cli_run_report_now(spy_profile *p) {
  if (!cur_opts || cur_reported) {
    spy_profile_free(p);
    return;
  }
  cur_reported = 1;
  set_command(p, cur_argc, cur_argv);
  emit(p, cur_opts);
  spy_profile_free(p);
  fflush(stdout);
}

int cli_run(int argc, char **argv) {
  cli_run_opts o = {NULL, 0, 0.5, 0, 0, 1, 0, 0, 0, 0, -1, 0, 0, -1, 0};
  cli_args a;
  int r = cli_parse(&run_cmd, argc, argv, &o, &a);
  if (r >= 0) return r;
  const char *script = argv[a.rest];
  const cli_host *h = host_for(script, o.lang);
  if (!h) {
    fprintf(stderr, "spyon: running scripts is not part of this build\n");
    return 2;
  }
  if (o.native_us > 0) o.native = 1;
  if (o.interval_us == 0) o.interval_us = h->interval_us; /* no -i */
  struct stat sb;
  if (stat(script, &sb) != 0) {
    fprintf(stderr, "spyon: %s: cannot open: %s\n", script, strerror(errno));
    return 2;
  }
  if (S_ISDIR(sb.st_mode)) {
    fprintf(stderr, "spyon: %s: is a directory\n", script);
    return 2;
  }
  if (o.profile && cli_check_output("spyon", o.out, &script, 1)) return 2;
  if ((o.browse || o.live) && (!o.profile || o.json)) {
    fprintf(stderr, "spyon: --browse and --live need the profile "
                    "(not --no-profile or --json)\n");
    return 2;
  }
  if ((o.browse || o.live) &&
      !spyT_have_terminal(o.live ? "--live" : "--browse"))
    return 2;

  struct sigaction sa, old[NSTOP];
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_stop;
  sigemptyset(&sa.sa_mask);
  for (size_t i = 0; i < NSTOP; i++) sigaddset(&sa.sa_mask, stop_signals[i]);
  running = h;
  stopped_by = 0;
  for (size_t i = 0; i < NSTOP; i++)
    sigaction(stop_signals[i], &sa, &old[i]);

  spy_options so;
  spy_options_init(&so);
  so.interval_ns = (uint64_t)(o.interval_us * 1000.0 + 0.5);
  so.mode = o.mode ? SPY_MODE_TIMER : SPY_MODE_POLL;
  so.native_stacks = o.native;
  if (o.native_us > 0)
    so.native_interval_ns = (uint64_t)(o.native_us * 1000.0 + 0.5);
  /* A host that ticks needs no wake-ups at the sampling rate (cost.sh). */
  static const spy_marker markers[] = {SPY_MARKER_TICK, SPY_MARKER_THREAD,
                                       SPY_MARKER_SIGNAL};
  so.marker = o.marker >= 0 ? markers[o.marker]
              : h->ticks    ? SPY_MARKER_TICK
                            : SPY_MARKER_THREAD;
  so.clock = o.cpu_clock ? SPY_CLOCK_CPU : SPY_CLOCK_WALL;
  so.exact_prims = o.exact_prims;
  spy_profile *p = NULL;
  cur_opts = &o, cur_argc = argc - a.rest, cur_argv = argv + a.rest;
  cur_reported = 0;
  int status;
  if (o.live) /* the browser here, the script in a thread (tui/live.c) */
    status = spyT_live(h, script, argc - a.rest - 1, argv + a.rest + 1, &so,
                       o.threshold, &p);
  else
    status = h->run(script, argc - a.rest - 1, argv + a.rest + 1,
                    o.profile ? &so : NULL, &p);
  fflush(stdout);
  cur_opts = NULL;
  if (cur_reported) {
    spy_profile_free(p);
    p = NULL;
  } else if (p) {
    set_command(p, argc - a.rest, argv + a.rest);
    if (o.browse || o.live) {
      /* Saved with -o; browsed (--browse), or already seen (--live). */
      if (o.out && emit(p, &o) && !status) status = 1;
      if (o.browse) {
        int b = spyT_browse_profile(p, o.threshold); /* frees p */
        p = NULL;
        if (b && !status) status = b;
      }
    } else if (emit(p, &o) && !status) {
      status = 1;
    }
    spy_profile_free(p);
  } else if (o.profile && status != 2) {
    fprintf(stderr, "spyon: could not collect the profile\n");
    if (!status) status = 1;
  }
  fflush(stdout);
  if (stopped_by) status = 128 + stopped_by;
  running = NULL;
  for (size_t i = 0; i < NSTOP; i++) sigaction(stop_signals[i], &old[i], NULL);
  return status;
}
