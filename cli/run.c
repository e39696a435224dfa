/*
** cli/run.c: "spyon [options] SCRIPT.st [args]": run a Smalltalk script
** under the profiler.
**
** The script's output goes to stdout as it runs; then the report follows
** on stdout (text, or JSON with --json), unless -o saves the profile, in
** which case one summary line goes to stderr. The exit status is the
** script's own (Smalltalk quit: n, 1 after an unhandled error, 2 for a
** syntax error, 130 after SIGINT); the profile collected so far is
** reported or saved in every case.
*/
#include "config.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <spyon.h>
#include <spyon/cost.h>
#include <spyon/profile.h>

#include "cli/cli.h"
#include "hosts/st/stvm.h"

static stvm *running;

static void on_sigint(int sig) {
  (void)sig;
  if (running) stvm_interrupt(running);
}

static void usage(FILE *f) {
  fputs("usage: spyon [options] SCRIPT.st [args...]\n"
        "Run a Smalltalk script under the profiler and print the report.\n"
        "  -o FILE           save the profile to FILE instead of printing it\n"
        "  -i USEC           sampling interval in microseconds (default 100)\n"
        "  --threshold PCT   hide tree nodes below PCT percent (default 0.5)\n"
        "  --mode poll|timer poll: charge primitives exactly (default);\n"
        "                    timer: MessageTally-style, for comparison\n"
        "  --json            print the profile as JSON instead of the report\n"
        "  --native          also sample native stacks inside long primitives\n"
        "  --native-interval USEC   how often (default 1000)\n"
        "  --no-profile      run without profiling (hooks stopped)\n"
        "  -h, --help        this help\n"
        "The report follows the script's output on stdout. See\n"
        "docs/smalltalk.md for the language.\n",
        f);
}

typedef struct RunOpts {
  const char *out;      /* -o */
  double interval_us;   /* -i */
  double threshold;     /* --threshold */
  int mode;             /* SPY_MODE_* */
  int json, profile;
  int native;           /* --native */
  double native_us;     /* --native-interval */
  int script;           /* index of the script in argv */
} RunOpts;

/* Options come before the script; everything after it is the script's. */
static int parse(int argc, char **argv, RunOpts *o) {
  memset(o, 0, sizeof *o);
  o->interval_us = 100;
  o->threshold = 0.5;
  o->mode = SPY_MODE_POLL;
  o->profile = 1;
  int i;
  for (i = 1; i < argc && argv[i][0] == '-' && argv[i][1]; i++) {
    const char *a = argv[i];
    const char *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (!strcmp(a, "--")) {
      i++;
      break;
    } else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
      usage(stdout);
      return 0;
    } else if (!strcmp(a, "--json")) {
      o->json = 1;
    } else if (!strcmp(a, "--no-profile")) {
      o->profile = 0;
    } else if (!strcmp(a, "--native")) {
      o->native = 1;
    } else if (!strcmp(a, "--native-interval")) {
      if (!v) goto missing;
      if ((o->native_us = cli_number(a, v)) < 0) return 2;
      if (o->native_us < 10 || o->native_us > 1e7) {
        fprintf(stderr, "spyon: --native-interval: 10 us to 10 s\n");
        return 2;
      }
      o->native = 1;
      i++;
    } else if (!strcmp(a, "-o")) {
      if (!v) goto missing;
      o->out = v;
      i++;
    } else if (!strcmp(a, "-i")) {
      if (!v) goto missing;
      if ((o->interval_us = cli_number(a, v)) < 0) return 2;
      if (o->interval_us > 1e7) {
        fprintf(stderr, "spyon: -i: the interval must be at most 10 s\n");
        return 2;
      }
      if (o->interval_us < 1) {
        fprintf(stderr, "spyon: -i: the interval must be at least 1 us\n");
        return 2;
      }
      i++;
    } else if (!strcmp(a, "--threshold")) {
      if (!v) goto missing;
      if ((o->threshold = cli_percent(a, v)) < 0) return 2;
      i++;
    } else if (!strcmp(a, "--mode")) {
      if (!v) goto missing;
      if (!strcmp(v, "poll")) o->mode = SPY_MODE_POLL;
      else if (!strcmp(v, "timer")) o->mode = SPY_MODE_TIMER;
      else {
        fprintf(stderr, "spyon: --mode: expected poll or timer, not '%s'\n", v);
        return 2;
      }
      i++;
    } else {
      fprintf(stderr, "spyon: unknown option '%s' (see spyon --help)\n", a);
      return 2;
    }
  }
  if (i >= argc) {
    usage(stderr);
    return 2;
  }
  o->script = i;
  return -1;
missing:
  fprintf(stderr, "spyon: %s needs a value\n", argv[i]);
  return 2;
}

/* Report, print as JSON or save the profile; returns 0 or 1. */
static int emit(spy_profile *p, const RunOpts *o) {
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
  int bad;
  if (o->json) {
    bad = spy_profile_write_json(p, stdout) < 0;
  } else {
    spy_report_options ro;
    spy_report_options_init(&ro);
    ro.threshold_pct = o->threshold;
    spy_cost_annotate_profile(p, NULL); /* the fitted model beside each prim */
    bad = spy_report_text(p, stdout, &ro) < 0;
  }
  if (bad || fflush(stdout) || ferror(stdout)) {
    fprintf(stderr, "spyon: writing the report: %s\n", strerror(errno));
    return 1;
  }
  return 0;
}

int cli_run(int argc, char **argv) {
  RunOpts o;
  int r = parse(argc, argv, &o);
  if (r >= 0) return r;
  const char *script = argv[o.script];
  FILE *probe = fopen(script, "rb");
  if (!probe) {
    fprintf(stderr, "spyon: %s: cannot open: %s\n", script, strerror(errno));
    return 2;
  }
  struct stat sb;
  if (fstat(fileno(probe), &sb) == 0 && S_ISDIR(sb.st_mode)) {
    fprintf(stderr, "spyon: %s: is a directory\n", script);
    fclose(probe);
    return 2;
  }
  fclose(probe);
  stvm *vm = stvm_new(argc - o.script - 1, argv + o.script + 1);
  if (!vm) return 2;
  running = vm;
  struct sigaction sa, old;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_sigint;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, &old);
  if (o.profile) {
    spy_options so;
    spy_options_init(&so);
    so.interval_ns = (uint64_t)(o.interval_us * 1000.0 + 0.5);
    so.mode = (spy_mode)o.mode;
    so.native_stacks = o.native;
    if (o.native_us > 0)
      so.native_interval_ns = (uint64_t)(o.native_us * 1000.0 + 0.5);
    if (stvm_profile_start(vm, &so) < 0) {
      fprintf(stderr, "spyon: %s\n", stvm_error(vm));
      sigaction(SIGINT, &old, NULL);
      running = NULL;
      stvm_free(vm);
      return 2;
    }
  }
  int status = stvm_run_file(vm, script);
  fflush(stdout);
  if (o.profile) {
    spy_profile *p = NULL;
    if (stvm_profile_stop(vm, &p) < 0 || !p) {
      fprintf(stderr, "spyon: could not collect the profile\n");
      if (!status) status = 1;
    } else {
      size_t n = 16;
      for (int i = o.script; i < argc; i++) n += strlen(argv[i]) + 1;
      char *cmd = malloc(n);
      if (cmd) {
        strcpy(cmd, "spyon");
        for (int i = o.script; i < argc; i++) {
          strcat(cmd, " ");
          strcat(cmd, argv[i]);
        }
        spy_profile_set_command(p, cmd);
        free(cmd);
      }
      if (emit(p, &o) && !status) status = 1;
      spy_profile_free(p);
    }
  }
  fflush(stdout);
  sigaction(SIGINT, &old, NULL);
  running = NULL;
  stvm_free(vm);
  return status;
}
