/*
** tests/test_runner.c: the "runner" suite, tests of tests/runner.c itself.
**
** The runner's promises (a hang fails one test and its whole process group
** is killed; T_SKIP counts as skipped with its reason; tests run side by
** side with -j; the closing line counts all three outcomes) are checked by
** running the runner on the "selftest" suite below, which is only listed
** with SPY_TEST_SELF=1 because its tests fail, hang and skip on purpose.
** Nothing is timed: the side-by-side test is a rendezvous that can only
** complete when both halves run at once.
*/
#include "config.h"

#include "tests/test.h"

#include <errno.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

/* The directory the self-tests and their outer test share. */
static const char *shared(void) {
  const char *d = getenv("SPY_TEST_SHARED");
  if (!d) T_FAIL("SPY_TEST_SHARED is not set");
  return d;
}

static int exists(const char *dir, const char *name) {
  char path[4200];
  struct stat st;
  snprintf(path, sizeof path, "%s/%s", dir, name);
  return stat(path, &st) == 0;
}

static void touch(const char *dir, const char *name) {
  char path[4200];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  FILE *f = fopen(path, "w");
  T_ASSERT(f);
  fclose(f);
}

/* Start a grandchild that would outlive us (a shell sleeping), record its
** pid, then hang until the runner kills the group. */
static void self_hang(void) {
  char cmd[4400];
  snprintf(cmd, sizeof cmd, "sleep 300 & echo $! > '%s/grandchild'",
           shared());
  T_EQ_INT(system(cmd), 0);
  for (;;) pause();
}

static void self_skip(void) {
  T_SKIP("not here: %s", "a reason");
}

static void self_fail(void) {
  T_EQ_INT(1 + 1, 3);
}

/* Each half leaves a mark and waits for the other's: both finish only
** when they run at the same time (else the first one times out). */
static void rendezvous(const char *mine, const char *theirs) {
  touch(shared(), mine);
  for (int i = 0; i < 20000 && !exists(shared(), theirs); i++)
    usleep(1000);
  T_ASSERT(exists(shared(), theirs));
}

static void self_pair_a(void) {
  rendezvous("a", "b");
}

static void self_pair_b(void) {
  rendezvous("b", "a");
}

const struct spy_test t_selftest[] = {
    {"hang", self_hang, 1},
    {"skip", self_skip, 0},
    {"fail", self_fail, 0},
    {"pair_a", self_pair_a, 30},
    {"pair_b", self_pair_b, 30},
    {0},
};

/* Run the runner on PATTERNS with -j JOBS; its output into *OUT. */
static int runner(const char *patterns, int jobs, char **out) {
  char cmd[9000];
  snprintf(cmd, sizeof cmd,
           "SPY_TEST_SELF=1 SPY_TEST_SHARED='%s' '%s/tests/runner' -j %d %s "
           "2>&1",
           t_tmpdir(), t_builddir, jobs, patterns);
  return t_run(cmd, out);
}

/* A hang fails its test after its timeout, and the grandchild it started
** dies with it. */
static void t_timeout(void) {
  char *out;
  T_EQ_INT(runner("selftest/hang", 1, &out), 1);
  if (!strstr(out, "FAIL selftest/hang (timed out after 1 s; process group "
                   "killed)\n"))
    T_FAIL("runner said:\n%s", out);
  T_ASSERT(strstr(out, "\n0 passed, 1 failed, 0 skipped\n"));
  char path[4200];
  snprintf(path, sizeof path, "%s/grandchild", t_tmpdir());
  char *s = t_slurp(path, NULL);
  T_ASSERT(s);
  pid_t g = (pid_t)atol(s);
  T_ASSERT(g > 1);
  /* Gone, or a zombie waiting for its new parent to reap it. SIGKILL is
  ** delivered when the process next runs, which on a loaded machine can
  ** take a while: wait for it (up to 20 s), not for a time. */
  char stat[64];
  snprintf(stat, sizeof stat, "/proc/%ld/stat", (long)g);
  int dead = 0;
  for (int i = 0; i < 2000 && !dead; i++) {
    char *st = t_slurp(stat, NULL);
    const char *e = st ? strrchr(st, ')') : NULL;
    dead = st ? e && e[1] == ' ' && e[2] == 'Z'
              : kill(g, 0) != 0 && errno == ESRCH;
    free(st);
    if (!dead) usleep(10000);
  }
  if (!dead) {
    kill(g, SIGKILL);
    T_FAIL("the hung test's grandchild %ld survived the runner", (long)g);
  }
  free(s);
  free(out);
}

/* Skips, failures and passes are counted apart, with the skip's reason. */
static void t_outcomes(void) {
  char *out;
  T_EQ_INT(runner("selftest/skip selftest/fail selftest/pair", 2, &out), 1);
  if (!strstr(out, "skip selftest/skip (not here: a reason)\n") ||
      !strstr(out, "FAIL selftest/fail (exit 1)\n") ||
      !strstr(out, "1 + 1 == 3: 2 != 3") ||
      !strstr(out, "ok   selftest/pair_a") ||
      !strstr(out, "ok   selftest/pair_b") ||
      !strstr(out, "\n2 passed, 1 failed, 1 skipped\n"))
    T_FAIL("runner said:\n%s", out);
  free(out);
  /* Only skips: nothing failed, so the run succeeds. */
  T_EQ_INT(runner("selftest/skip", 1, &out), 0);
  T_ASSERT(strstr(out, "\n0 passed, 0 failed, 1 skipped\n"));
  free(out);
}

const struct spy_test t_runner[] = {
    {"timeout", t_timeout, 0},
    {"outcomes", t_outcomes, 0},
    {0},
};
