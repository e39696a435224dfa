/*
** bench/lua/inproc.c: what profiling costs the Lua thread, measured inside
** one process.
**
**   bench/lua/lua_inproc [-i US] [-r ROUNDS] [-k RESERVOIR] [-b BUDGET]
**                        SCRIPT [ARGS...]
**
** Loads SCRIPT once and runs it 2 * ROUNDS + 1 times in one Lua state
** (the host's, lspy_new: the standard library wrapped), every other run
** under the profiler (lspy_start at an interval of US microseconds,
** default 1000000: one sample a second, so what remains is the brackets'
** cost, the "bracketing alone"), the others with it stopped (the
** wrappers return at their first test, as under `spyon --no-profile`).
** A round's ratio is the profiled run's thread CPU over the mean of its
** two neighbours'; prints the median, quartiles and extremes of the
** rounds, and the least profiled run over the least stopped one (on a
** guest whose host slows it now and then by up to 2x -- this project's
** on 12-07 -- the least times are the runs nothing slowed). Whole runs of the same binary differ by 2-5 % on this project's
** guests (bench/lua/bench_lua.sh's "brackets" column): here both sides of
** a ratio run within a second of each other, in the same memory. The
** script's own output goes to stdout (redirect it).
*/
#include "config.h"

#include <lauxlib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "hosts/lua/lspy.h"

static double thread_cpu(void) {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* One run of the chunk (a copy of it at the top of the stack), timed. */
static double run(lua_State *L, int nargs, char **args) {
  /* Each run starts from a collected heap: the garbage a run leaves
  ** would otherwise be collected in the next, whichever kind it is
  ** (strings.lua's runs moved by +-10 % with it). */
  lua_gc(L, LUA_GCCOLLECT);
  lua_pushvalue(L, -1);
  for (int i = 0; i < nargs; i++) lua_pushstring(L, args[i]);
  double t0 = thread_cpu();
  int rc = lua_pcall(L, nargs, 0, 0);
  double t = thread_cpu() - t0;
  if (rc != LUA_OK) {
    fprintf(stderr, "lua_inproc: %s\n", lua_tostring(L, -1));
    exit(1);
  }
  return t;
}

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

int main(int argc, char **argv) {
  long us = 1000000, rounds = 11, reservoir = -1;
  double budget = -1;
  int i = 1;
  for (; i + 1 < argc && argv[i][0] == '-'; i += 2) {
    if (!strcmp(argv[i], "-i")) us = strtol(argv[i + 1], NULL, 10);
    else if (!strcmp(argv[i], "-r")) rounds = strtol(argv[i + 1], NULL, 10);
    else if (!strcmp(argv[i], "-k")) reservoir = strtol(argv[i + 1], NULL, 10);
    else if (!strcmp(argv[i], "-b")) budget = strtod(argv[i + 1], NULL);
    else break;
  }
  if (i >= argc || us <= 0 || rounds <= 0 || rounds > 1000) {
    fprintf(stderr, "usage: lua_inproc [-i US] [-r ROUNDS] [-k RESERVOIR] [-b BUDGET] SCRIPT [ARGS...]\n");
    return 2;
  }
  const char *script = argv[i];
  char **args = argv + i + 1;
  int nargs = argc - i - 1;
  lspy *s = lspy_new(NULL);
  if (!s) {
    fprintf(stderr, "lua_inproc: out of memory\n");
    return 1;
  }
  lua_State *L = lspy_state(s);
  /* arg, as lua.c sets it: the script at 0, its arguments from 1. */
  lua_createtable(L, nargs, 1);
  lua_pushstring(L, script);
  lua_rawseti(L, -2, 0);
  for (int k = 0; k < nargs; k++) {
    lua_pushstring(L, args[k]);
    lua_rawseti(L, -2, k + 1);
  }
  lua_setglobal(L, "arg");
  if (luaL_loadfile(L, script) != LUA_OK) {
    fprintf(stderr, "lua_inproc: %s\n", lua_tostring(L, -1));
    return 1;
  }
  spy_options o;
  spy_options_init(&o);
  o.interval_ns = (uint64_t)us * 1000;
  if (reservoir >= 0) o.reservoir = (uint32_t)reservoir;
  if (budget >= 0) o.obs_budget = budget;
  double *r = calloc((size_t)rounds, sizeof *r);
  double before = run(L, nargs, args), on_sum = 0, off_sum = before;
  double on_min = 1e300, off_min = before;
  for (long k = 0; k < rounds; k++) {
    if (lspy_start(s, &o) < 0) {
      fprintf(stderr, "lua_inproc: %s\n", lspy_error(s));
      return 1;
    }
    double on = run(L, nargs, args);
    lspy_stop(s, NULL);
    double after = run(L, nargs, args);
    r[k] = on / ((before + after) / 2);
    on_sum += on;
    off_sum += after;
    if (on < on_min) on_min = on;
    if (after < off_min) off_min = after;
    before = after;
  }
  qsort(r, (size_t)rounds, sizeof *r, cmp);
  fprintf(stderr,
          "%s: profiled at %ld us over stopped, %ld rounds: median %.4f "
          "(quartiles %.4f %.4f, range %.4f %.4f), least runs %.4f; mean "
          "run %.3f s stopped, %.3f s profiled\n",
          script, us, rounds, r[rounds / 2], r[rounds / 4],
          r[(3 * rounds) / 4], r[0], r[rounds - 1], on_min / off_min,
          off_sum / (double)(rounds + 1), on_sum / (double)rounds);
  free(r);
  lspy_free(s);
  return 0;
}
