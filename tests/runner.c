/*
** tests/runner.c: the one test binary.
**
**   tests/runner                 run every test
**   tests/runner PATTERN...      run the tests whose "suite/name" contains
**                                one of the patterns
**   tests/runner -l              list the tests
**
** Each test runs in a forked child under alarm(); the parent reports
** "ok"/"FAIL" per test and ends with the line "N passed, N failed".
** The exit status is 0 only when nothing failed.
*/
#include "config.h"

#include "tests/test.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern const struct spy_test t_core[], t_core_exact[], t_profile[],
    t_profile_bad[], t_report[], t_cost[], t_st[], t_native[], t_contract[],
    t_cli[], t_export[], t_tui[], t_lua[];

static const struct {
  const char *name;
  const struct spy_test *tests;
} suites[] = {
  {"core", t_core},   {"core", t_core_exact}, {"contract", t_contract},
  {"profile", t_profile},
  {"profile", t_profile_bad},
  {"report", t_report},
  {"cost", t_cost},   {"st", t_st},       {"native", t_native}, {"tui", t_tui},
  {"cli", t_cli},
  {"export", t_export},
  {"lua", t_lua},
};

const char *t_builddir = ".";
const char *t_srcdir = ".";
static char tmpdir[4096];

const char *t_tmpdir(void) {
  return tmpdir;
}

char *t_slurp(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  size_t cap = 4096, n = 0;
  char *buf = malloc(cap);
  size_t r;
  while (buf && (r = fread(buf + n, 1, cap - n - 1, f)) > 0) {
    n += r;
    if (cap - n - 1 == 0) {
      char *nb = realloc(buf, cap *= 2);
      if (!nb) { free(buf); buf = NULL; }
      else buf = nb;
    }
  }
  fclose(f);
  if (!buf) return NULL;
  buf[n] = '\0';
  if (len) *len = n;
  return buf;
}

int t_run(const char *cmdline, char **out) {
  char path[4200];
  snprintf(path, sizeof path, "%s/cmd.out", tmpdir);
  char *full = malloc(strlen(cmdline) + strlen(path) + 16);
  if (!full) return -1;
  sprintf(full, "(%s) > '%s'", cmdline, path);
  int st = system(full);
  free(full);
  if (out) *out = t_slurp(path, NULL);
  if (st == -1 || !WIFEXITED(st)) return -1;
  return WEXITSTATUS(st);
}

static int matches(const char *full, int argc, char **argv) {
  if (argc <= 1) return 1;
  for (int i = 1; i < argc; i++)
    if (strstr(full, argv[i])) return 1;
  return 0;
}

static void rmtree(const char *dir) {
  char cmd[4200];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  if (system(cmd) != 0) fprintf(stderr, "runner: could not remove %s\n", dir);
}

/* Run one test in a child; return 1 when it passed, 2 when it skipped
** itself (T_SKIP). */
static int run_one(const struct spy_test *t, const char *full) {
  snprintf(tmpdir, sizeof tmpdir, "%s/spyon-test-XXXXXX",
           getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
  if (!mkdtemp(tmpdir)) {
    printf("FAIL %s (mkdtemp: %s)\n", full, strerror(errno));
    return 0;
  }
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  fflush(stdout);
  pid_t pid = fork();
  if (pid == 0) {
    alarm(t->timeout_s ? t->timeout_s : 60);
    t->fn();
    fflush(NULL);
    _exit(0);
  }
  int st = 0;
  while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {}
  clock_gettime(CLOCK_MONOTONIC, &t1);
  double ms = (t1.tv_sec - t0.tv_sec) * 1e3 + (t1.tv_nsec - t0.tv_nsec) / 1e6;
  rmtree(tmpdir);
  if (WIFEXITED(st) && WEXITSTATUS(st) == 0) {
    printf("ok   %s (%.0f ms)\n", full, ms);
    return 1;
  }
  if (WIFEXITED(st) && WEXITSTATUS(st) == T_SKIP_STATUS) {
    printf("skip %s\n", full);
    return 2;
  }
  if (WIFSIGNALED(st))
    printf("FAIL %s (%s%s)\n", full, strsignal(WTERMSIG(st)),
           WTERMSIG(st) == SIGALRM ? ": timed out" : "");
  else
    printf("FAIL %s (exit %d)\n", full, WEXITSTATUS(st));
  return 0;
}

int main(int argc, char **argv) {
  if (getenv("SPY_BUILDDIR")) t_builddir = getenv("SPY_BUILDDIR");
  if (getenv("SPY_SRCDIR")) t_srcdir = getenv("SPY_SRCDIR");
  int list = argc > 1 && strcmp(argv[1], "-l") == 0;
  int passed = 0, failed = 0, skipped = 0;
  char full[256];
  for (size_t s = 0; s < sizeof suites / sizeof suites[0]; s++) {
    for (const struct spy_test *t = suites[s].tests; t->name; t++) {
      snprintf(full, sizeof full, "%s/%s", suites[s].name, t->name);
      if (list) { puts(full); continue; }
      if (!matches(full, argc, argv)) continue;
      int r = run_one(t, full);
      if (r == 1) passed++;
      else if (r == 2) skipped++;
      else failed++;
    }
  }
  if (list) return 0;
  if (skipped) printf("%d skipped\n", skipped);
  printf("%d passed, %d failed\n", passed, failed);
  return failed ? 1 : 0;
}
