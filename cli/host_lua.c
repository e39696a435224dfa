/*
** cli/host_lua.c: the Lua 5.4 host of "spyon SCRIPT.lua" (cli/run.c picks
** it by the script's name, or by --lang lua). Built with hosts/lua; see
** docs/lua.md.
**
** The script runs as lua5.4 would run it (hosts/lua/lrun.c). os.exit ends
** the process from inside the script, so the profile is stopped and
** reported there, through cli_run_report_now, before exit().
**
** Environment, for tests and bench/lua only: SPYON_LUA_HOOK=count:N|none
** (the alternatives to the signal-armed hook), SPYON_LUA_TIMER=cpu,
** SPYON_LUA_ADAPT=0 (the timer never slows down: hosts/lua/lspy.c),
** SPYON_LUA_TIMES=1 (print this thread's CPU time on stderr at the end).
*/
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli/cli.h"
#include "hosts/lua/lspy.h"

static lspy *volatile current;

/* From cli/run.c's signal handler: arm a hook that raises "interrupted!",
** as lua.c does on SIGINT. */
static void lua_interrupt(void) {
  lspy *s = current;
  if (s) lspy_interrupt(s);
}

/* os.exit: stop the profiler and report now; exit() follows. */
static void on_exit_report(void *ud, int status) {
  (void)status;
  lspy *s = ud;
  spy_profile *p = NULL;
  fflush(stdout);
  if (lspy_stop(s, &p) == 0 && p) cli_run_report_now(p);
}

static int lua_run(const char *script, int argc, char **argv,
                   const spy_options *so, spy_profile **out) {
  *out = NULL;
  lspy_options lo;
  lspy_options_init(&lo);
  lo.coroutine_each = cli_run_current() ? cli_run_current()->co_each : 0;
  const char *hm = getenv("SPYON_LUA_HOOK");
  if (hm && !strcmp(hm, "none")) lo.hook_mode = 2;
  if (hm && !strncmp(hm, "count:", 6)) {
    lo.hook_mode = 1;
    lo.hook_count = atoi(hm + 6);
  }
  lspy *s = lspy_new(&lo);
  if (!s) {
    fprintf(stderr, "spyon: cannot create the Lua state: out of memory\n");
    return 2;
  }
  current = s;
  lspy_on_exit(s, on_exit_report, s);
  if (so) {
    spy_options o = *so;
    cli_block_stop_signals(1); /* the sampler thread inherits the mask */
    int rc = lspy_start(s, &o);
    cli_block_stop_signals(0);
    if (rc < 0) {
      fprintf(stderr, "spyon: %s\n", lspy_error(s));
      current = NULL;
      lspy_free(s);
      return 2;
    }
  }
  /* argv as lua.c sees it: the script at index 0 of arg. */
  int n = argc + 1;
  char **av = malloc((size_t)(n + 1) * sizeof *av);
  if (!av) {
    current = NULL;
    lspy_free(s);
    return 2;
  }
  av[0] = (char *)script;
  for (int i = 0; i < argc; i++) av[i + 1] = argv[i];
  av[n] = NULL;
  int status = lspy_run_script(s, n, av, 0);
  free(av);
  fflush(stdout);
  if (getenv("SPYON_LUA_TIMES")) {
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    fprintf(stderr, "spyon: lua thread cpu %.6f s\n",
            (double)ts.tv_sec + (double)ts.tv_nsec / 1e9);
  }
  if (so && lspy_stop(s, out) < 0) *out = NULL;
  current = NULL;
  lspy_free(s);
  return status;
}

/* The Lua host marks samples and arms its count hook from its own timer
** signal (lspy_start chooses SPY_MARKER_TICK for that, whatever the
** marker asked for); its brackets do not tick. */
/* 1 kHz by default: each sample costs a timer signal, 20-25 us of CPU on
** a virtual machine (bench/lua: 22 % of a core at 10 kHz before anything
** is sampled); docs/lua.md. */
const cli_host cli_host_lua = {".lua", "Lua", lua_run, lua_interrupt, 0,
                               LSPY_INTERVAL_NS / 1000.0};
