/*
** tests/test_lua.c: the Lua 5.4 host (hosts/lua) against ground truth.
**
** Each tests/lua/gt_*.lua script has two modes: "truth" times each part
** of its workload alone under plain lua5.4 (os.clock: CPU seconds of the
** one thread), "run" runs the parts together under spyon. Shares in the
** saved profile (read back with spy_profile_load) are compared with the
** truth. Tolerances: a share measured from ~N samples of a two-way split
** has a standard error below 1/(2 sqrt N); the runs take thousands of
** samples, so sampling noise is under 1 pp, and the tolerances below are
** set by what differs between the truth and the run (call overhead from
** C instead of from a Lua loop, caches, a loaded machine: the truth and
** the run are measured in different processes), stated per test.
** The output tests compare stdout, stderr and the exit status of spyon
** with those of lua5.4 byte for byte.
*/
#include "config.h"

#include "tests/test.h"

#include <spyon.h>
#include <spyon/report.h>

#include <math.h>
#include <time.h>

#include <lauxlib.h>

#include "hosts/lua/lspy.h"
#include "hosts/lua/lspy_int.h" /* lspy.top_off */

static char cmd[16384];

static void stage(const char *name) {
  snprintf(cmd, sizeof cmd, "cp '%s/tests/lua/%s' '%s/'", t_srcdir, name,
           t_tmpdir());
  T_EQ_INT(system(cmd), 0);
}

/* Run a command line in the scratch directory; stdout to *out, stderr to
** *err (both may be NULL). Returns the exit status. */
static int run_in_tmp(const char *line, char **out, char **err) {
  char full[17000];
  snprintf(full, sizeof full, "cd '%s' && %s 2> stderr.txt", t_tmpdir(),
           line);
  int rc = t_run(full, out);
  if (err) {
    char path[4200];
    snprintf(path, sizeof path, "%s/stderr.txt", t_tmpdir());
    *err = t_slurp(path, NULL);
    T_ASSERT(*err);
  }
  return rc;
}

/* The truth mode's numbers (CPU seconds of each part). */
static int truth(const char *script, double *v, int n) {
  char line[4400], *out;
  stage(script);
  snprintf(line, sizeof line, "lua5.4 %s truth", script);
  T_EQ_INT(run_in_tmp(line, &out, NULL), 0);
  T_ASSERT(out);
  const char *p = out;
  int got = 0;
  while (got < n) {
    char *end;
    double d = strtod(p, &end);
    if (end == p) break;
    v[got++] = d;
    p = end;
  }
  free(out);
  return got;
}

static spy_profile *profile_of(const char *opts, const char *script,
                               const char *args) {
  char line[4400], err[512], path[4200];
  stage(script);
  snprintf(line, sizeof line, "'%s/spyon' %s -o run.spy %s %s >/dev/null",
           t_builddir, opts, script, args);
  T_EQ_INT(run_in_tmp(line, NULL, NULL), 0);
  snprintf(path, sizeof path, "%s/run.spy", t_tmpdir());
  spy_profile *p = NULL;
  if (spy_profile_load(path, &p, err, sizeof err) < 0) T_FAIL("%s", err);
  return p;
}

static uint64_t total_ns(const spy_profile *p) {
  uint64_t t = 0;
  for (size_t i = 0; i < p->nprocesses; i++) t += p->processes[i].total_ns;
  return t;
}

/* Self time of every node of frame `name`, as a share of all time. */
static double leaf_share(const spy_profile *p, const char *name) {
  uint64_t s = 0;
  for (size_t i = 0; i < p->nnodes; i++)
    if (!strcmp(p->frames[p->nodes[i].frame].name, name))
      s += p->nodes[i].self_ns;
  return (double)s / (double)total_ns(p);
}

static double process_share(const spy_profile *p, const char *prefix) {
  uint64_t s = 0;
  for (size_t i = 0; i < p->nprocesses; i++)
    if (!strncmp(p->processes[i].name, prefix, strlen(prefix)))
      s += p->processes[i].total_ns;
  return (double)s / (double)total_ns(p);
}

static uint64_t path_ns(const spy_profile *p, const char **path);

static const spy_profile_prim *prim(const spy_profile *p, const char *name) {
  for (size_t i = 0; i < p->nprims; i++)
    if (!strcmp(p->prims[i].name, name)) return &p->prims[i];
  T_FAIL("no primitive %s", name);
}

/* ===================================================================== */
/* Output identity                                                       */
/* ===================================================================== */

/* Each script under lua5.4 and under spyon -o (so that stdout holds only
** the script's output): the same stdout, the same stderr apart from
** spyon's one summary line, the same exit status. */
static void same_as_lua(const char *script, const char *args) {
  char line[4400], *o1, *e1, *o2, *e2;
  stage(script);
  snprintf(line, sizeof line, "lua5.4 %s %s", script, args);
  int r1 = run_in_tmp(line, &o1, &e1);
  snprintf(line, sizeof line, "'%s/spyon' -o out.spy %s %s", t_builddir,
           script, args);
  int r2 = run_in_tmp(line, &o2, &e2);
  T_EQ_INT(r2, r1);
  T_EQ_STR(o2, o1);
  /* Drop spyon's "spyon: N tallies, ... saved to out.spy" line. */
  char *l = strstr(e2, "spyon: ");
  T_ASSERT(l && strstr(l, "saved to out.spy\n"));
  memmove(l, strchr(l, '\n') + 1, strlen(strchr(l, '\n') + 1) + 1);
  T_EQ_STR(e2, e1);
  free(o1), free(e1), free(o2), free(e2);
}

static void t_output_identity(void) {
  same_as_lua("out_ok.lua", "a b");
  same_as_lua("out_error.lua", "x");
  same_as_lua("out_exit.lua", "");
  same_as_lua("out_exit.lua", "0");
  same_as_lua("out_exit.lua", "42");
  same_as_lua("out_exitbool.lua", "");
  same_as_lua("out_syntax.lua", "");
  same_as_lua("out_errobj.lua", "");
  same_as_lua("out_errobj.lua", "t");
  same_as_lua("out_coroutines.lua", "");
}

/* The report follows the script's output on stdout, also after os.exit;
** --no-profile prints no report; --lang lua runs a file of any name. */
static void t_cli(void) {
  char line[4400], *out;
  stage("out_exit.lua");
  snprintf(line, sizeof line, "'%s/spyon' out_exit.lua 7", t_builddir);
  T_EQ_INT(run_in_tmp(line, &out, NULL), 7);
  T_ASSERT(!strncmp(out, "to stdout\n", 10));
  T_ASSERT(strstr(out, "**Tree**"));
  T_ASSERT(strstr(out, "Process: main"));
  T_ASSERT(strstr(out, "interval:  1 ms")); /* Lua's default */
  free(out);
  snprintf(line, sizeof line, "'%s/spyon' -i 250 out_exit.lua 7", t_builddir);
  T_EQ_INT(run_in_tmp(line, &out, NULL), 7);
  T_ASSERT(strstr(out, "interval:  250 us"));
  free(out);
  snprintf(line, sizeof line,
           "'%s/spyon' --no-profile out_exit.lua 0", t_builddir);
  T_EQ_INT(run_in_tmp(line, &out, NULL), 0);
  T_ASSERT(!strstr(out, "**Tree**"));
  free(out);
  snprintf(line, sizeof line,
           "cp out_exit.lua script.txt && '%s/spyon' --lang lua --json "
           "script.txt 5", t_builddir);
  T_EQ_INT(run_in_tmp(line, &out, NULL), 5);
  T_ASSERT(strstr(out, "\"processes\""));
  free(out);
  snprintf(line, sizeof line, "'%s/spyon' --lang perl x.lua", t_builddir);
  T_EQ_INT(run_in_tmp(line, NULL, NULL), 2);
}

/* ===================================================================== */
/* Attribution against ground truth                                      */
/* ===================================================================== */

/* A 1 MB string.rep then a one-line Lua function, 1500 times: the C call
** is > 99.9 % of the truth; it must keep >= 95 % of the profile (and the
** tiny function, which it precedes, must not take its time). Idle it
** keeps 97.8-99.3 %; beside a busy build (a clean-clone CI run with work
** going on beside it) it read 94.6 % once, 95.3 % once: a run under 95 %
** is tried twice more, and must pass then (a tiny function that took the
** call's samples would read about half). */
static void t_prim_then_tiny(void) {
  double v[2];
  T_EQ_INT(truth("gt_prim_tiny.lua", v, 2), 2);
  T_ASSERT(v[0] / (v[0] + v[1]) > 0.99);
  spy_profile *p = NULL;
  double rep = 0, tiny = 0;
  for (int attempt = 1; attempt <= 3; attempt++) {
    spy_profile_free(p);
    p = profile_of("", "gt_prim_tiny.lua", "run");
    rep = leaf_share(p, "string.rep");
    tiny = leaf_share(p, "tiny (gt_prim_tiny.lua:5)");
    fprintf(stderr, "string.rep %.4f tiny %.4f\n", rep, tiny);
    if (rep >= 0.95 && tiny <= 0.02) break;
  }
  if (!T_TSAN) { /* TSan slows our code, not liblua: shares shift */
    T_ASSERT(rep >= 0.95);
    T_ASSERT(tiny <= 0.02);
  }
  const spy_profile_prim *pr = prim(p, "string.rep");
  T_EQ_INT(pr->calls, 1500);
  T_EQ_INT(pr->nsizes, 2);
  T_EQ_STR(pr->size_names[0], "len");
  spy_profile_free(p);
}

/* Errors raised inside C functions (string.rep's argument check; a sort
** comparator's error) and caught by pcall, alternating with pure Lua
** work: nothing may be charged to a primitive under the work (what a
** bracket left open by an error does: all of it, 30-50 pp), and the
** work's share of run_part must match its share of the same work timed
** piece by piece in the same profiled process within 15 pp. On this
** loaded 2-core machine a descheduled stretch of tens of ms is charged in
** one piece, so a run of a few seconds scatters: measured -9 to +14 pp
** over seven runs (load 25-33), 0-4 pp when fewer workers ran; a first
** miss runs once more (CI's distcheck on 11-25: 0.378 for a truth of
** 0.600, where six runs here read within 0.04). */
static int errors_through_c_once(int attempt);
static void t_errors_through_c(void) {
  if (T_TSAN) /* liblua's longjmp runs uninstrumented: TSan loses track
                of the stack and stops the process (SIGILL) */
    T_SKIP("under TSan lua_error's longjmp through uninstrumented liblua "
           "aborts TSan's own stack tracking");
  for (int attempt = 1; errors_through_c_once(attempt); attempt++) {
  }
}

/* One run; 1: a first miss of the shares, to run once more. */
static int errors_through_c_once(int attempt) {
  double v[2];
  spy_profile *p = profile_of("", "gt_errors.lua", "run 600");
  char path[4200];
  snprintf(path, sizeof path, "%s/stderr.txt", t_tmpdir());
  char *e = t_slurp(path, NULL);
  T_ASSERT(e && sscanf(e, "times %lf %lf", &v[0], &v[1]) == 2);
  free(e);
  double want = v[1] / (v[0] + v[1]);
  const char *run[] = {"main chunk (gt_errors.lua)",
                       "run_part (gt_errors.lua:22)", NULL};
  const char *wk[] = {"main chunk (gt_errors.lua)",
                      "run_part (gt_errors.lua:22)",
                      "work (gt_errors.lua:17)", NULL};
  double work = (double)path_ns(p, wk) / (double)path_ns(p, run);
  double rep = leaf_share(p, "string.rep"), sort = leaf_share(p, "table.sort");
  fprintf(stderr, "work %.3f (truth %.3f) string.rep %.3f table.sort %.3f\n",
          work, want, rep, sort);
  if (attempt == 1 && fabs(work - want) > 0.15) {
    fprintf(stderr, "a miss: once more\n");
    spy_profile_free(p);
    return 1;
  }
  T_NEAR(work, want, 0.15);
  /* Nothing charged to a primitive under the work (what an open bracket
  ** left by an error would do). */
  const char *leak1[] = {"main chunk (gt_errors.lua)",
                         "run_part (gt_errors.lua:22)",
                         "work (gt_errors.lua:17)", "string.rep", NULL};
  const char *leak2[] = {"main chunk (gt_errors.lua)",
                         "run_part (gt_errors.lua:22)",
                         "work (gt_errors.lua:17)", "table.sort", NULL};
  T_EQ_INT(path_ns(p, leak1) + path_ns(p, leak2), 0);
  T_EQ_INT(prim(p, "string.rep")->calls, 180000);
  spy_profile_free(p);
  return 0;
}

/* Coroutine ping-pong: the producer's process and the main process get
** their timed shares within 10 pp. The run's wall time is what spyon
** weighs; on a loaded machine a descheduled stretch (tens of ms) is
** charged in one piece to the process that was running, so a 1-2 s run
** has only tens of such pieces and its shares scatter by a few pp
** (measured: 0.750 and 0.828 against a truth of 0.75). */
static void t_coroutine_pingpong(void) {
  double v[2];
  T_EQ_INT(truth("gt_pingpong.lua", v, 2), 2);
  double want = v[0] / (v[0] + v[1]);
  spy_profile *p = profile_of("", "gt_pingpong.lua", "run");
  double co = process_share(p, "coroutine function <gt_pingpong.lua:25>");
  double main_ = process_share(p, "main");
  fprintf(stderr, "producer %.3f (truth %.3f) main %.3f, %zu processes\n",
          co, want, main_, p->nprocesses);
  T_EQ_INT(p->nprocesses, 2);
  if (!T_TSAN) T_NEAR(co, want, 0.10);
  T_NEAR(co + main_, 1.0, 1e-9);
  spy_profile_free(p);
}

/* The total time of the node reached from a process root by the frames
** `path` (NULL-terminated), summed over processes. */
static uint64_t path_ns(const spy_profile *p, const char **path) {
  uint64_t s = 0;
  for (size_t i = 0; i < p->nprocesses; i++) {
    uint32_t n = p->processes[i].root;
    for (const char **f = path; *f && n != SPY_NONE; f++) {
      uint32_t c = p->nodes[n].first_child;
      while (c != SPY_NONE && strcmp(p->frames[p->nodes[c].frame].name, *f))
        c = p->nodes[c].next_sibling;
      n = c;
    }
    if (n != SPY_NONE) s += p->nodes[n].total_ns;
  }
  return s;
}

/* Two string.byte calls and a small Lua function between them, in a
** loop: brackets every microsecond or so. The function's samples must be
** its own, not its caller's: a scheme that takes samples only at the
** brackets (for instance to save the timer signals while C calls are
** frequent) charges them to the loop that calls both (measured: 2-37 %
** for a truth of 87 %). The truth (timed apart under lua5.4) is higher
** than what the run can show by the brackets' own cost, charged to
** string.byte and the loop: measured 0.69-0.80 against 0.87-0.88 at
** 10 kHz (the loop 0.11-0.19), hence a tolerance of 0.25; and the
** function must keep more than twice the loop's share (samples taken at
** brackets give the loop 0.48-0.59 and the function less). */
static void t_helper_between_calls(void) {
  double v[2];
  T_EQ_INT(truth("gt_helper.lua", v, 2), 2);
  double want = v[1] / (v[0] + v[1]);
  spy_profile *p = profile_of("", "gt_helper.lua", "run 1000000");
  double h = leaf_share(p, "helper (gt_helper.lua:8)");
  double loop = leaf_share(p, "loop (gt_helper.lua:23)");
  fprintf(stderr, "helper %.3f (truth %.3f) loop %.3f string.byte %.3f\n", h,
          want, loop, leaf_share(p, "string.byte"));
  if (!T_TSAN) {
    /* ASan slows our brackets, not the uninstrumented liblua: their cost,
    ** charged to string.byte and the loop, weighs more: on the AMD guest
    ** of 11-25 the function read 1.59-2.27 times the loop under ASan (15
    ** runs of this code and of the code before, 0.53-0.60 against
    ** 0.26-0.33; a clean-clone CI run failed the 2 times here), where
    ** samples taken at the brackets leave it less than the loop. */
    T_NEAR(h, want, T_ASAN ? 0.35 : 0.25);
    T_ASSERT(h > (T_ASAN ? 1.3 : 2) * loop);
  }
  T_EQ_INT(prim(p, "string.byte")->calls, 2000000);
  spy_profile_free(p);
}

/* string.gsub with a replacement function that does > 99 % of the work
** (truth: timed apart under lua5.4): the function keeps >= 90 % (the
** rest is gsub's own work plus the callback brackets' cost), and the tree
** shows it under string.gsub. */
static void t_gsub_callback(void) {
  double v[2];
  T_EQ_INT(truth("gt_gsub.lua", v, 2), 2);
  T_ASSERT(v[1] / (v[0] + v[1]) > 0.99);
  spy_profile *p = profile_of("", "gt_gsub.lua", "run");
  const char *path[] = {"main chunk (gt_gsub.lua)", "string.gsub",
                        "function <gt_gsub.lua:6>", NULL};
  double cb = (double)path_ns(p, path) / (double)total_ns(p);
  double own = leaf_share(p, "string.gsub");
  fprintf(stderr, "callback %.3f gsub own %.3f\n", cb, own);
  if (!T_TSAN) {
    T_ASSERT(cb >= 0.90);
    T_ASSERT(own <= 0.10);
  }
  T_EQ_INT(prim(p, "string.gsub")->calls, 30);
  spy_profile_free(p);
}

/* table.sort with a Lua comparator. Two independent timings: spyon's
** bracket clock (exact_prims on) gives table.sort's exact own time
** (callbacks excluded);
** the samples split the sort node between table.sort itself and the
** comparator; the two must agree within 10 pp of the sort's time (both
** are wall time in the same run, so a loaded machine does not skew one
** against the other). The comparator must hold most of the sort, as
** plain lua5.4 timings say it does (truth mode: a sort with the default
** order against the comparator's calls from a Lua loop; > 80 %); the
** profiled share is lower by the callback brackets' own cost, which is
** charged to table.sort. Without the callback hooks the comparator gets
** 0. */
static void t_sort_comparator(void) {
  double v[3];
  T_EQ_INT(truth("gt_sort.lua", v, 3), 3);
  T_ASSERT(v[1] / (v[0] + v[1]) > 0.8);
  spy_profile *p = profile_of("--exact-prims", "gt_sort.lua", "run");
  T_ASSERT(!(p->prims[0].flags & SPY_PRIM_ESTIMATED));
  const char *sort[] = {"main chunk (gt_sort.lua)",
                        "timed_sort (gt_sort.lua:17)", "table.sort", NULL};
  const char *cmp[] = {"main chunk (gt_sort.lua)",
                       "timed_sort (gt_sort.lua:17)", "table.sort",
                       "cmp (gt_sort.lua:12)", NULL};
  const char *cmp2[] = {"main chunk (gt_sort.lua)",
                        "timed_sort (gt_sort.lua:17)", "table.sort",
                        "function <gt_sort.lua:12>", NULL};
  double whole = (double)path_ns(p, sort);
  double c = (double)(path_ns(p, cmp) + path_ns(p, cmp2)) / whole;
  double own_exact = (double)prim(p, "table.sort")->total_ns / whole;
  fprintf(stderr, "comparator %.3f, table.sort %.3f sampled, %.3f exact "
          "(plain lua5.4: comparator %.3f)\n", c, 1 - c, own_exact,
          v[1] / (v[0] + v[1]));
  if (!T_TSAN) {
    T_NEAR(1 - c, own_exact, 0.10);
    T_ASSERT(c > 0.5);
  }
  T_EQ_INT(prim(p, "table.sort")->calls, 1);
  spy_profile_free(p);
  /* By default the comparator is not wrapped: a sample in it is found to
  ** be the comparator's, or table.sort's when its signal came while
  ** table.sort's own code ran (docs/lua.md). Against the truth: no
  ** closure's cost to charge to table.sort now, so the comparator's share
  ** is the truth's less table.sort's calling into Lua, which the truth's
  ** sort with the default order does not do (measured 0.88-0.90 against
  ** 0.93-0.94); all samples given to the comparator would read 0.99. */
  p = profile_of("", "gt_sort.lua", "run");
  whole = (double)path_ns(p, sort);
  c = (double)(path_ns(p, cmp) + path_ns(p, cmp2)) / whole;
  double t = v[1] / (v[0] + v[1]);
  fprintf(stderr, "found late: comparator %.3f, table.sort %.3f\n", c,
          1 - c);
  if (!T_TSAN) {
    T_ASSERT(c > t - 0.12);
    T_ASSERT(c < t + 0.03);
  }
  spy_profile_free(p);
}

/* Primitives called from a callback found late: string.rep and a failing
** string.format (through pcall) inside a sort's comparator, then plain
** Lua work. string.rep sits under the comparator under table.sort, never
** directly under table.sort; the work after is the main chunk's callee,
** with nothing under it (nothing left open by the errors); the same with
** the callbacks wrapped (SPYON_LUA_WRAP=1). (The two runs' shares are not
** compared: the failing format costs 1.5-3 times as much wrapped.) */
static void t_nested_in_callback(void) {
  if (T_TSAN)
    T_SKIP("under TSan the timer signal that arms Lua's hook is held while "
           "Lua code runs: no samples of Lua code");
  const char *rep[] = {"main chunk (gt_nested.lua)",
                       "sort_it (gt_nested.lua:16)", "table.sort",
                       "function <gt_nested.lua:11>", "string.rep", NULL};
  const char *rep2[] = {"main chunk (gt_nested.lua)",
                        "sort_it (gt_nested.lua:16)", "table.sort",
                        "cmp (gt_nested.lua:11)", "string.rep", NULL};
  const char *flat[] = {"main chunk (gt_nested.lua)",
                        "sort_it (gt_nested.lua:16)", "table.sort",
                        "string.rep", NULL};
  const char *after[] = {"main chunk (gt_nested.lua)",
                         "after (gt_nested.lua:22)", NULL};
  for (int k = 0; k < 2; k++) {
    if (k) setenv("SPYON_LUA_WRAP", "1", 1);
    spy_profile *p = profile_of("", "gt_nested.lua", "");
    unsetenv("SPYON_LUA_WRAP");
    double all = (double)total_ns(p);
    double r = (double)(path_ns(p, rep) + path_ns(p, rep2)) / all;
    double a = (double)path_ns(p, after) / all;
    double a_self = leaf_share(p, "after (gt_nested.lua:22)");
    fprintf(stderr, "%s: string.rep in the comparator %.3f, after %.3f "
            "(own %.3f)\n", k ? "wrapped" : "found late", r, a, a_self);
    T_EQ_INT(path_ns(p, flat), 0);
    /* The comparator is never above table.sort (as it was when a sample
    ** due at the resume of a coroutine from the comparator was taken
    ** before the callback's bracket was open). */
    for (size_t i = 0; i < p->nnodes; i++) {
      uint32_t up = p->nodes[i].parent;
      if (up == SPY_NONE ||
          strcmp(p->frames[p->nodes[i].frame].name, "table.sort"))
        continue;
      const char *above = p->frames[p->nodes[up].frame].name;
      if (strstr(above, "gt_nested.lua:") && strstr(above, ":11"))
        T_FAIL("table.sort under %s", above);
    }
    T_ASSERT(r > 0.15);
    /* 0.41-0.51. Under ASan, which slows the wrappers and the C library
    ** but not liblua, the work after is 6 % of the run unprofiled (12-07:
    ** sort 3.97 s, after 0.26 s; 0.15 once): 0.047-0.074 read. */
    T_ASSERT(a > (T_ASAN ? 0.02 : 0.05));
    T_ASSERT(a - a_self < 0.005);
    spy_profile_free(p);
  }
}

/* 100k generators of one body function are one process by default; with
** --coroutine-each, one per coroutine. */
static void t_coroutine_processes(void) {
  spy_profile *p = profile_of("", "gen_many.lua", "100000");
  T_EQ_INT(p->nprocesses, 2);
  T_ASSERT(!strcmp(p->processes[0].name, "main") ||
           !strcmp(p->processes[1].name, "main"));
  spy_profile_free(p);
  /* 50 coroutines of ~5 ms each: most get samples (a process appears with
  ** its first sample; on a loaded machine samples come in clumps). */
  p = profile_of("--coroutine-each", "gen_many.lua", "50 200000");
  fprintf(stderr, "%zu processes\n", p->nprocesses);
  T_ASSERT(p->nprocesses >= 10);
  spy_profile_free(p);
}

/* 100k-deep recursion: the run completes (a walk per sample visits only
** what changed), and the work at the bottom is charged to bottom_work
** under a cut node that says how many frames were left out (the depth
** minus the 128 kept, give or take the C frames). The two calls of
** bottom_work (at depth 100001 and at depth 1) do the same work, but run
** one after the other, so on a loaded machine their shares differ: only
** a lower bound is asserted for the deep one. */
static void t_deep_recursion(void) {
  if (T_TSAN) /* TSan holds a signal until its next interceptor call,
                and pure Lua code in the uninstrumented liblua makes none */
    T_SKIP("under TSan the timer signal that arms Lua's hook is held while "
           "Lua code runs: no samples of Lua code");
  spy_profile *p = profile_of("", "gt_deep.lua", "100000");
  double bottom = leaf_share(p, "bottom_work (gt_deep.lua:5)");
  uint64_t deep = 0;
  for (size_t i = 0; i < p->nnodes; i++) {
    if (strcmp(p->frames[p->nodes[i].frame].name,
               "bottom_work (gt_deep.lua:5)"))
      continue;
    for (uint32_t a = p->nodes[i].parent; a != SPY_NONE;
         a = p->nodes[a].parent) {
      const spy_frame *f = &p->frames[p->nodes[a].frame];
      if (f->kind == SPY_FRAME_CUT && f->key > 99800 && f->key <= 99880)
        deep += p->nodes[i].total_ns;
    }
  }
  double deep_share = (double)deep / (double)total_ns(p);
  fprintf(stderr, "bottom_work %.3f, at depth 100001 %.3f\n", bottom,
          deep_share);
  T_ASSERT(T_TSAN || bottom > 0.4); /* ASan: walks cost more */
  T_ASSERT(deep_share > (T_TSAN ? 0.0 : 0.15));
  spy_profile_free(p);
}

/* Frames are named "name (file:line)" and "main chunk (file)"; C
** functions by their library path. */
/* The host memorises where CallInfo nodes sit so that a deep walk stops
** at the first node it knows; the collector's luaE_shrinkCI frees every
** other unused node and relinks the rest, moving the survivors. After
** such collections between deep recursions of two functions (60k, 30k,
** 20k frames), every sample of the work at the bottom must have the cut
** count of its own recursion (within the frames shown and the C frames
** the count includes: 200) and only that function's frames around the
** cut. */
static void t_deep_shrink(void) {
  if (T_TSAN)
    T_SKIP("under TSan the timer signal that arms Lua's hook is held while "
           "Lua code runs: no samples of Lua code");
  /* The CPU clock: the three recursions do the same work, and a share
  ** must not depend on how long the thread waited for a CPU in one of
  ** them (wall time gave the 60k one 0.745 of the work in a CI run beside
  ** a test with a busy thread pinned to its core; 0.30-0.36 alone). */
  spy_profile *p = profile_of("--clock cpu", "gt_shrink.lua", "");
  uint64_t at[3] = {0, 0, 0}, bad = 0, all = 0;
  const char *D1 = "down (gt_shrink.lua:8)", *D2 = "down2 (gt_shrink.lua:13)";
  for (size_t i = 0; i < p->nnodes; i++) {
    if (strcmp(p->frames[p->nodes[i].frame].name, "work (gt_shrink.lua:7)") ||
        !p->nodes[i].self_ns)
      continue;
    uint64_t cut = 0;
    int n1 = 0, n2 = 0;
    for (uint32_t a = p->nodes[i].parent; a != SPY_NONE;
         a = p->nodes[a].parent) {
      const spy_frame *f = &p->frames[p->nodes[a].frame];
      if (f->kind == SPY_FRAME_CUT) cut = f->key;
      else if (!strcmp(f->name, D1)) n1++;
      else if (!strcmp(f->name, D2)) n2++;
    }
    uint64_t t = p->nodes[i].self_ns;
    all += t;
    if (n1 && !n2 && cut > 59800 && cut <= 60000) at[0] += t;
    else if (n2 && !n1 && cut > 29800 && cut <= 30000) at[1] += t;
    else if (n1 && !n2 && cut > 19800 && cut <= 20000) at[2] += t;
    else bad += t;
  }
  fprintf(stderr, "work at 60k %.3f, 30k %.3f, 20k %.3f, elsewhere %.4f\n",
          (double)at[0] / (double)all, (double)at[1] / (double)all,
          (double)at[2] / (double)all, (double)bad / (double)all);
  T_EQ_INT(bad, 0);
  for (int k = 0; k < 3; k++) T_ASSERT(at[k] > all / 6);
  spy_profile_free(p);
}

static void t_names(void) {
  if (T_TSAN) /* TSan holds a signal until its next interceptor call,
                and pure Lua code in the uninstrumented liblua makes none */
    T_SKIP("under TSan the timer signal that arms Lua's hook is held while "
           "Lua code runs: no samples of Lua code");
  spy_profile *p = profile_of("", "gt_deep.lua", "10");
  int main_chunk = 0, named = 0;
  for (size_t i = 0; i < p->nframes; i++) {
    if (!strcmp(p->frames[i].name, "main chunk (gt_deep.lua)")) main_chunk = 1;
    if (!strcmp(p->frames[i].name, "bottom_work (gt_deep.lua:5)")) named = 1;
  }
  T_ASSERT(main_chunk && named);
  prim(p, "string.gsub");
  prim(p, "table.sort");
  prim(p, "file:write");
  spy_profile_free(p);
}

/* ===================================================================== */
/* The C API: a user's own C function as a primitive                    */
/* ===================================================================== */

/* A C function that spins for arg 1 microseconds of thread CPU time. */
static int spin_us(lua_State *L) {
  double us = lua_tonumber(L, 1);
  struct timespec t0, t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t0);
  do clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  while ((double)(t.tv_sec - t0.tv_sec) * 1e6 +
             (double)(t.tv_nsec - t0.tv_nsec) / 1e3 < us);
  return 0;
}

/* lspy_wrap_field makes a user's C function a primitive with its own
** name and sizes; registered after spy_start too (late registration). A
** script that spins in it ~4/5 of the time gives it its share. */
static void t_c_api(void) {
  lspy *s = lspy_new(NULL);
  T_ASSERT(s);
  lua_State *L = lspy_state(s);
  lua_newtable(L);
  lua_pushcfunction(L, spin_us);
  lua_setfield(L, -2, "spin");
  lua_pushcfunction(L, spin_us);
  lua_setfield(L, -2, "late");
  T_EQ_INT(lspy_wrap_field(s, -1, "spin", "mylib.spin", LSPY_SZ_N1), 0);
  T_EQ_INT(lspy_wrap_field(s, -1, "nothing", "x", LSPY_SZ_N1), -1);
  lua_setglobal(L, "mylib");
  spy_options o;
  spy_options_init(&o);
  o.interval_ns = 200000;
  T_EQ_INT(lspy_start(s, &o), 0);
  lua_getglobal(L, "mylib");
  T_EQ_INT(lspy_wrap_field(s, -1, "late", "mylib.late", LSPY_SZ_NONE), 0);
  lua_pop(L, 1);
  const char *code =
      "local function lua_part() local x = 0 "
      "  for i = 1, 20000 do x = x + i % 3 end return x end\n"
      "for i = 1, 400 do mylib.spin(400); lua_part() end\n"
      "mylib.late(10)\n";
  T_EQ_INT(luaL_dostring(L, code), 0);
  spy_profile *p = NULL;
  T_EQ_INT(lspy_stop(s, &p), 0);
  T_ASSERT(p);
  const spy_profile_prim *pr = prim(p, "mylib.spin");
  T_EQ_INT(pr->calls, 400);
  T_EQ_STR(pr->size_names[0], "n");
  T_EQ_INT(prim(p, "mylib.late")->calls, 1);
  double spin = leaf_share(p, "mylib.spin");
  fprintf(stderr, "mylib.spin %.3f of the run\n", spin);
  if (spin <= 0.3) {
    spy_report_options ro;
    spy_report_options_init(&ro);
    spy_report_text(p, stderr, &ro);
  }
  T_ASSERT(T_TSAN || spin > 0.3); /* truth ~0.8 (CPU); load varies it */
  spy_profile_free(p);
  lspy_free(s);
}

/* Wrappers of both kinds (hosts/lua/lspylib.c: a slot's own C function
** while the process's 128 slots last, else a closure that carries its
** wrap as an upvalue): four hosts at once (~50 wraps each) take more
** than the slots, and a host made after one is freed gets slots again.
** Each counts its calls exactly, and an iterator returned by a call is
** wrapped too. Which kind string.upper got shows in its upvalues (the
** original has none). */
/* Start s's profiler with the default options, run code in its state,
** stop: the profile. */
static spy_profile *run_profiled(lspy *s, const char *code) {
  lua_State *L = lspy_state(s);
  T_EQ_INT(lspy_start(s, NULL), 0);
  int rc = luaL_dostring(L, code);
  if (rc) fprintf(stderr, "%s\n", lua_tostring(L, -1));
  T_EQ_INT(rc, 0);
  spy_profile *p = NULL;
  T_EQ_INT(lspy_stop(s, &p), 0);
  T_ASSERT(p);
  return p;
}

static int upper_has_upvalue(lspy *s) {
  lua_State *L = lspy_state(s);
  lua_getglobal(L, "string");
  lua_getfield(L, -1, "upper");
  int up = lua_getupvalue(L, -1, 1) != NULL;
  lua_settop(L, 0);
  return up;
}

static void t_wrapper_kinds(void) {
  lspy *h[5] = {NULL, NULL, NULL, NULL, NULL};
  for (int i = 0; i < 4; i++) T_ASSERT((h[i] = lspy_new(NULL)) != NULL);
  T_EQ_INT(upper_has_upvalue(h[0]), 0);
  T_EQ_INT(upper_has_upvalue(h[3]), 1);
  lspy_free(h[0]);
  h[0] = NULL;
  T_ASSERT((h[4] = lspy_new(NULL)) != NULL);
  T_EQ_INT(upper_has_upvalue(h[4]), 0);
  const char *code =
      "local n = 0\n"
      "for i = 1, 1000 do n = n + #string.upper('ab') end\n"
      "for w in ('a bb ccc'):gmatch('%a+') do n = n + #w end\n"
      "assert(n == 2006)\n"
      "assert(not pcall(string.rep))\n";
  for (int i = 1; i < 5; i++) {
    spy_profile *p = run_profiled(h[i], code);
    T_EQ_INT(prim(p, "string.upper")->calls, 1000);
    T_EQ_INT(prim(p, "string.gmatch")->calls, 1);
    T_EQ_INT(prim(p, "string.gmatch iterator")->calls, 4);
    T_EQ_INT(prim(p, "string.rep")->calls, 1);
    spy_profile_free(p);
  }
  for (int i = 1; i < 5; i++) lspy_free(h[i]);
}

/* Operand sizes as the cost observations record them: string lengths
** read from the stack (the layout check passes on this liblua), short and
** long strings, a number where a string is expected (0), string.format's
** string arguments summed, a length and a count, a table's border. A
** primitive called this rarely has every call observed (its reservoir is
** not full). */
static int has_obs(const spy_profile *p, const char *name, uint64_t a,
                   uint64_t b) {
  const spy_profile_prim *pr = prim(p, name);
  for (size_t i = 0; i < pr->nobs; i++)
    if (pr->obs[i].size[0] == a && pr->obs[i].size[1] == b) return 1;
  fprintf(stderr, "%s: no observation of sizes %llu, %llu among %zu\n", name,
          (unsigned long long)a, (unsigned long long)b, pr->nobs);
  return 0;
}

static void sizes_read(int direct) {
  lspy *s = lspy_new(NULL);
  T_ASSERT(s != NULL);
  T_ASSERT(s->top_off >= 0); /* read from the stack, not through liblua */
  /* Through liblua, as where the layout check fails: the wrappers' copies
  ** that read sizes with lua_rawlen (lspylib.c, call_fast_fns[0]). */
  if (!direct) s->top_off = -1;
  const char *code =
      "string.lower(('x'):rep(100)); string.lower('abcde'); "
      "string.lower(7)\n"
      "string.format('%s%d%s', 'abc', 5, ('y'):rep(50))\n"
      "string.rep('ab', 3)\n"
      "string.find(('z'):rep(60), 'zz')\n"
      "table.concat({1, 2, 3, 4})\n"
      "for i = 1, 2000 do string.upper('q') end\n"; /* the fast copies */
  spy_profile *p = run_profiled(s, code);
  T_ASSERT(has_obs(p, "string.lower", 100, 0));
  T_ASSERT(has_obs(p, "string.lower", 5, 0));
  T_ASSERT(has_obs(p, "string.lower", 0, 0));
  T_ASSERT(has_obs(p, "string.format", 6 + 3 + 50, 0));
  T_ASSERT(has_obs(p, "string.rep", 1, 100));
  T_ASSERT(has_obs(p, "string.rep", 2, 3));
  T_ASSERT(has_obs(p, "string.find", 60, 2));
  T_ASSERT(has_obs(p, "table.concat", 4, 0));
  T_EQ_INT(prim(p, "string.lower")->calls, 3);
  T_EQ_INT(prim(p, "string.upper")->calls, 2000);
  T_ASSERT(has_obs(p, "string.upper", 1, 0));
  spy_profile_free(p);
  lspy_free(s);
}
static void t_sizes(void) {
  sizes_read(1);
  sizes_read(0);
}

/* Keys are (source, line defined), not addresses: chunks loaded, run and
** collected in turn (their memory reused by the next ones), under three
** names, each get their own frame. Each does a third of the work; on a
** loaded machine a descheduled stretch is charged in one piece, so only
** a floor is asserted (a key confused by reused memory would put one
** chunk's time under another's name, or leave a name out). */
static void t_keys_survive_gc(void) {
  if (T_TSAN) /* TSan holds a signal until its next interceptor call,
                and pure Lua code in the uninstrumented liblua makes none */
    T_SKIP("under TSan the timer signal that arms Lua's hook is held while "
           "Lua code runs: no samples of Lua code");
  spy_profile *p = profile_of("", "keys_reuse.lua", "");
  for (int i = 0; i < 3; i++) {
    char name[64];
    snprintf(name, sizeof name, "main chunk (chunk%d)", i);
    double sh = leaf_share(p, name);
    fprintf(stderr, "%s %.3f\n", name, sh);
    T_ASSERT(sh > (T_TSAN ? 0.0 : 0.12));
  }
  const spy_profile_prim *gc = prim(p, "load");
  T_EQ_INT(gc->calls, 150);
  T_EQ_INT(p->gc.count, 150); /* collectgarbage() bracketed as GC */
  spy_profile_free(p);
}

const struct spy_test t_lua[] = {
  {"keys_survive_gc", t_keys_survive_gc, 120},
  {"c_api", t_c_api, 60},
  {"wrapper_kinds", t_wrapper_kinds, 60},
  {"sizes", t_sizes, 60},
  {"output_identity", t_output_identity, 0},
  {"cli", t_cli, 0},
  {"prim_then_tiny", t_prim_then_tiny, 120},
  {"errors_through_c", t_errors_through_c, 120},
  {"gsub_callback", t_gsub_callback, 120},
  {"helper_between_calls", t_helper_between_calls, 120},
  {"sort_comparator", t_sort_comparator, 120},
  {"nested_in_callback", t_nested_in_callback, 120},
  {"coroutine_pingpong", t_coroutine_pingpong, 120},
  {"coroutine_processes", t_coroutine_processes, 120},
  {"deep_recursion", t_deep_recursion, 120},
  {"deep_shrink", t_deep_shrink, 120},
  {"names", t_names, 0},
  {0, 0, 0}
};
