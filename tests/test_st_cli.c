/*
** tests/test_st_cli.c: profiles kept on errors and SIGINT, the profiler
** from inside the language, the overhead harness, usage messages
** (part of the "st" suite; helpers in tests/test_st.c).
*/
#include "config.h"

#include "tests/test_st.h"

#include <errno.h>
#include <gmp.h>
#include <math.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <spyon/profile.h>


/* ===================================================================== */
/* spyon: exit status, saved profiles, interruption                      */
/* ===================================================================== */

/* A failing script keeps its exit status, and its profile is saved. */
static void t_error_keeps_profile(void) {
  char line[4300], *out, *err;
  write_file("fail.st", "Object subclass: W [ spin [ | s | s := 0.\n"
                        "  1 to: 3000000 do: [:i | s := s + i]. ^s ] ]\n"
                        "W new spin. W new spin.\n"
                        "nil foo.\n");
  snprintf(line, sizeof line, "'%s/spyon' -o fail.spy fail.st", t_builddir);
  T_EQ_INT(run_in_tmp(line, &out, &err), 1);
  T_ASSERT(strstr(err, "MessageNotUnderstood: nil does not understand #foo"));
  T_ASSERT(strstr(err, "spyon: "));
  T_ASSERT(strstr(err, "saved to fail.spy"));
  spy_profile *p = load("fail.spy");
  T_ASSERT(p->tallies > 0);
  T_ASSERT(has_frame(p, "W>>spin"));
  spy_profile_free(p);
  free(out);
  free(err);
  /* Smalltalk quit: keeps its status too; the report still follows. */
  stage("tests/st", "err_quit.st");
  snprintf(line, sizeof line, "'%s/spyon' err_quit.st", t_builddir);
  T_EQ_INT(run_in_tmp(line, &out, NULL), 3);
  T_ASSERT(strncmp(out, "quitting\n", 9) == 0);
  T_ASSERT(strstr(out, "**Tree**"));
  free(out);
}

/* SIGINT stops the run; the profile of what ran is still written. */
static void t_sigint(void) {
  write_file("forever.st", "Object subclass: F [ loop [ [true] whileTrue: "
                           "[3 + 4] ] ]\nF new loop.\n");
  char spyon[4200], kernel[4200], dir[4200];
  snprintf(spyon, sizeof spyon, "%s/spyon", t_builddir);
  snprintf(kernel, sizeof kernel, "%s/hosts/st/kernel", t_srcdir);
  snprintf(dir, sizeof dir, "%s", t_tmpdir());
  pid_t pid = fork();
  if (pid == 0) {
    if (chdir(dir) != 0) _exit(99);
    setenv("SPYON_KERNEL", kernel, 1);
    if (!freopen("/dev/null", "w", stdout) ||
        !freopen("/dev/null", "w", stderr))
      _exit(97);
    execl(spyon, "spyon", "-o", "int.spy", "forever.st", (char *)NULL);
    _exit(98);
  }
  struct timespec ts = {0, 600 * 1000 * 1000};
  nanosleep(&ts, NULL);
  kill(pid, SIGINT);
  int st;
  while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {}
  T_ASSERT(WIFEXITED(st));
  T_EQ_INT(WEXITSTATUS(st), 130);
  spy_profile *p = load("int.spy");
  T_ASSERT(p->tallies > 100);
  T_ASSERT(has_frame(p, "F>>loop"));
  spy_profile_free(p);
}

/* Profiler spyOn: inside a script: the report on stdout, or a file. */
static void t_spyon_in_language(void) {
  char line[4300], *out;
  write_file("in.st", "| r |\n"
                      "r := Profiler spyOn: [| x | 30 timesRepeat: "
                      "[x := 500 factorial]. x].\n"
                      "Profiler spyOn: [20 timesRepeat: [400 factorial]] "
                      "toFile: 'in.spy'.\n"
                      "r printString size printNl.\n");
  snprintf(line, sizeof line, "'%s/spyon' --no-profile in.st", t_builddir);
  T_EQ_INT(run_in_tmp(line, &out, NULL), 0);
  T_ASSERT(strstr(out, "**Tree**"));
  T_ASSERT(strstr(out, "SmallInteger(Integer)>>factorial"));
  T_ASSERT(strstr(out, "\n1135\n"));
  spy_profile *p = load("in.spy");
  T_ASSERT(has_frame(p, "Integer>>digitMultiply:neg:"));
  T_ASSERT(has_frame(p, "Profiler class>>spyOn:every:toFile:"));
  spy_profile_free(p);
  free(out);
  /* Without a profiler (the standalone interpreter) the block just runs. */
  T_EQ_INT(run_st("in.st", &out, NULL), 0);
  T_EQ_STR(out, "1135\n");
  free(out);
}

/* The overhead harness of bench/st (Profiler class>>overheadOf:...): a
** profiled run has its work in the saved profile, an unprofiled one only
** the start and stop around it; the answer is the sorted ratios; without a
** profiler compiled in it answers nil. */
static void t_overhead_harness(void) {
  char line[4300], *out;
  write_file("oh.st",
             "Object subclass: W [ spin [ ^(1 to: 20000) inject: 0 "
             "into: [:a :b | a + b] ] ]\n"
             "| r |\n"
             "Profiler cpuOf: [20 timesRepeat: [W new spin]] every: 100 "
             "toFile: 'on.spy' profiled: true.\n"
             "Profiler cpuOf: [20 timesRepeat: [W new spin]] every: 100 "
             "toFile: 'off.spy' profiled: false.\n"
             "r := Profiler overheadOf: [W new spin] every: 100 rounds: 5 "
             "toFile: 'o.spy' profiled: true.\n"
             "r isNil printNl.\n"
             "r isNil ifFalse: [r size printNl.\n"
             "  (r allSatisfy: [:x | x > 0]) printNl.\n"
             "  ((1 to: 4) allSatisfy: [:i | (r at: i) <= (r at: i + 1)]) "
             "printNl].\n");
  snprintf(line, sizeof line, "'%s/spyon' --no-profile oh.st", t_builddir);
  T_EQ_INT(run_in_tmp(line, &out, NULL), 0);
  T_EQ_STR(out, "false\n5\ntrue\ntrue\n");
  free(out);
  spy_profile *on = load("on.spy"), *off = load("off.spy");
  T_ASSERT(has_frame(on, "W>>spin"));
  T_ASSERT(!has_frame(off, "W>>spin"));
  T_ASSERT(on->tallies > 20 && off->tallies < 5);
  spy_profile_free(on);
  spy_profile_free(off);
  T_EQ_INT(run_st("oh.st", &out, NULL), 0); /* hooks compiled out */
  T_EQ_STR(out, "true\n");
  free(out);
}

/* Bad options are one clear line and status 2. */
static void t_cli_usage(void) {
  char line[4300], *out, *err;
  snprintf(line, sizeof line, "'%s/spyon' --mode fast x.st", t_builddir);
  T_EQ_INT(run_in_tmp(line, &out, &err), 2);
  T_EQ_STR(err, "spyon: --mode: expected poll or timer, not 'fast'\n");
  free(out);
  free(err);
  snprintf(line, sizeof line, "'%s/spyon' missing.st", t_builddir);
  T_EQ_INT(run_in_tmp(line, &out, &err), 2);
  T_ASSERT(strstr(err, "missing.st: cannot open"));
  free(out);
  free(err);
  /* Found by a review of the CLI: a directory ran as an empty script, a
  ** threshold over 100 failed without a word, and `costs` on a profile
  ** without primitives freed its data twice. */
  static const struct { const char *args, *err; } cases[] = {
    {".", "spyon: .: is a directory\n"},
    {"--threshold 101 x.st",
     "spyon: --threshold: '101' is not a number from 0 to 100\n"},
    {"report none.spy --threshold inf",
     "spyon report: --threshold: 'inf' is not a number from 0 to 100\n"},
    {"costs np.spy", "spyon: np.spy: no cost observations\n"},
    {"-i inf np.st", "spyon: -i: 'inf' is not a number from 1 to 10000000\n"},
  };
  write_file("np.st", "| a | a := 3.\n");
  snprintf(line, sizeof line, "'%s/spyon' -o np.spy np.st", t_builddir);
  T_EQ_INT(run_in_tmp(line, &out, NULL), 0);
  free(out);
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    snprintf(line, sizeof line, "'%s/spyon' %s", t_builddir, cases[i].args);
    T_EQ_INT(run_in_tmp(line, &out, &err), 2);
    T_EQ_STR(err, cases[i].err);
    free(out);
    free(err);
  }
  /* A report that cannot be written is an error, not a silent 0. */
  snprintf(line, sizeof line, "'%s/spyon' np.st > /dev/full", t_builddir);
  T_EQ_INT(run_in_tmp(line, NULL, &err), 1);
  T_ASSERT(strstr(err, "spyon: writing the report: "));
  free(err);
}


const struct spy_test t_st_cli[] = {
  {"error_keeps_profile", t_error_keeps_profile, 0},
  {"sigint", t_sigint, 0},
  {"spyon_in_language", t_spyon_in_language, 0},
  {"overhead_harness", t_overhead_harness, 0},
  {"cli_usage", t_cli_usage, 0},
  {0},
};
