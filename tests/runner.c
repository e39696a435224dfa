/*
** tests/runner.c: the one test binary.
**
**   tests/runner [-j N] [PATTERN...]   run the tests whose "suite/name"
**                                      contains one of the patterns (all
**                                      of them when none is given)
**   tests/runner -l                    list the tests
**
** Each test runs in a forked child that leads its own process group, with
** its output captured and a fresh temporary directory; N of them run at a
** time (-j, default the number of online CPUs). When a test outlives its
** timeout the runner kills its whole process group (the child and
** whatever it started: spyon commands, shells), so a hang fails that one
** test and leaves nothing behind. Each finished test prints its captured
** output and then one line: "ok", "FAIL" (exit status, signal or timeout)
** or "skip" (the test called T_SKIP: it cannot run here, and says why).
** A few timing tests run alone after the others (see `serial` below).
** The last line is "N passed, N failed, N skipped", which .ci/run reads;
** the exit status is 0 only when nothing failed.
**
** SPY_TEST_SELF=1 adds the "selftest" suite (tests/test_runner.c), tests
** of the runner itself that are meant to fail, hang or skip: the
** runner/ tests run the runner on them.
*/
#include "config.h"

#include "tests/test.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern const struct spy_test t_core[], t_core_exact[], t_profile[],
    t_profile_bad[], t_report[], t_cost[], t_st[], t_st_prof[], t_st_cli[],
    t_st_hostile[], t_native[], t_contract[], t_contract_cost[],
    t_cli[], t_export[], t_tui[], t_json[], t_runner[], t_selftest[], t_mark[], t_lua[],
    t_arch[], t_steps[], t_tui_lazy[];
extern const struct spy_test t_report_walk[], t_report_export[];

/* SERIAL: the tests whose names start with one of its space-separated
** prefixes run alone, after the others ("" all, NULL none): they compare
** wall-clock shares with a ground truth or count what a fixed wall time
** produced, which holds on a loaded machine within their tolerances but
** need not hold next to another test of ours competing for the same
** cores. */
static const struct {
  const char *name;
  const struct spy_test *tests;
  const char *serial;
  int self; /* listed only with SPY_TEST_SELF=1 */
} suites[] = {
  {"core", t_core, "", 0},
  {"core", t_core_exact, "", 0},
  {"contract", t_contract, "", 0},
  {"contract", t_contract_cost, "", 0},
  {"profile", t_profile, NULL, 0},
  {"profile", t_profile_bad, NULL, 0},
  {"report", t_report, NULL, 0},
  {"report", t_report_walk, NULL, 0},
  {"report", t_report_export, NULL, 0},
  {"cost", t_cost, NULL, 0},
  {"st", t_st, NULL, 0},
  {"st", t_st_hostile, NULL, 0},
  {"st", t_st_prof, "", 0},
  {"st", t_st_cli, "sigint overhead_", 0},
  {"native", t_native, "breakdown", 0},
  {"tui", t_tui, "", 0},
  {"tui", t_tui_lazy, "", 0},
  {"cli", t_cli, NULL, 0},
  {"export", t_export, "diff_ merge", 0},
  {"json", t_json, NULL, 0},
  {"runner", t_runner, NULL, 0},
  {"mark", t_mark, "", 0},
  {"lua", t_lua, "", 0},
  {"arch", t_arch, NULL, 0},
  {"steps", t_steps, "", 0},
  {"selftest", t_selftest, NULL, 1},
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

int t_spyon(char **out, const char *fmt, ...) {
  char args[8000], line[12500];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(args, sizeof args, fmt, ap);
  va_end(ap);
  snprintf(line, sizeof line, "cd '%s' && '%s/spyon' %s", tmpdir, t_builddir,
           args);
  return t_run(line, out);
}

static void rmtree(const char *dir) {
  char cmd[4200];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  if (system(cmd) != 0) fprintf(stderr, "runner: could not remove %s\n", dir);
}

/* ------------------------------------------------------------------------
** Running tests in parallel
** --------------------------------------------------------------------- */

/* A test the runner selected, and while it runs, its child. */
typedef struct job {
  const struct spy_test *t;
  char full[256];   /* "suite/name" */
  char dir[4096];   /* its temporary directory */
  FILE *log;        /* its stdout and stderr */
  pid_t pid;        /* also its process group */
  double start, deadline;
  int killed;       /* the runner killed it for its timeout */
} job;

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Fork job J's child: its own process group, SIGCHLD unblocked again (the
** runner blocks it to wait), output into the log. Returns 0, or -1 with
** the job already reported as failed. */
static int start(job *j, const sigset_t *oldmask) {
  snprintf(j->dir, sizeof j->dir, "%s/spyon-test-XXXXXX",
           getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
  if (!mkdtemp(j->dir)) {
    printf("FAIL %s (mkdtemp: %s)\n", j->full, strerror(errno));
    return -1;
  }
  if (!(j->log = tmpfile())) {
    printf("FAIL %s (tmpfile: %s)\n", j->full, strerror(errno));
    rmtree(j->dir);
    return -1;
  }
  fflush(NULL);
  j->start = now_s();
  j->deadline = j->start + (j->t->timeout_s ? j->t->timeout_s : 60);
  pid_t pid = fork();
  if (pid < 0) {
    printf("FAIL %s (fork: %s)\n", j->full, strerror(errno));
    fclose(j->log);
    rmtree(j->dir);
    return -1;
  }
  if (pid == 0) {
    setpgid(0, 0);
    sigprocmask(SIG_SETMASK, oldmask, NULL);
    int fd = fileno(j->log);
    dup2(fd, STDOUT_FILENO);
    dup2(fd, STDERR_FILENO);
    setvbuf(stdout, NULL, _IOLBF, 0);
    snprintf(tmpdir, sizeof tmpdir, "%s", j->dir);
    j->t->fn();
    fflush(NULL);
    _exit(0);
  }
  setpgid(pid, pid); /* also here: no race with a kill before the child's */
  j->pid = pid;
  j->killed = 0;
  return 0;
}

/* Copy the captured output of J to stdout, except the T_SKIP line, whose
** reason goes into REASON. */
static void show_log(job *j, char *reason, size_t rlen) {
  char line[4096];
  reason[0] = '\0';
  rewind(j->log);
  while (fgets(line, sizeof line, j->log)) {
    if (strncmp(line, "skip: ", 6) == 0) {
      size_t k = strcspn(line + 6, "\n");
      if (k >= rlen) k = rlen - 1;
      memcpy(reason, line + 6, k);
      reason[k] = '\0';
      continue;
    }
    fputs(line, stdout);
    if (!strchr(line, '\n')) putchar('\n');
  }
}

/* J's child ended with status ST: report it, clean up. Returns the
** outcome: 0 passed, 1 failed, 2 skipped. */
static int finish(job *j, int st) {
  double ms = (now_s() - j->start) * 1e3;
  /* Whatever the test started and left running goes with it. */
  kill(-j->pid, SIGKILL);
  char reason[512];
  show_log(j, reason, sizeof reason);
  fclose(j->log);
  rmtree(j->dir);
  int outcome = 1;
  if (j->killed) {
    printf("FAIL %s (timed out after %u s; process group killed)\n", j->full,
           j->t->timeout_s ? j->t->timeout_s : 60);
  } else if (WIFEXITED(st) && WEXITSTATUS(st) == 0) {
    printf("ok   %s (%.0f ms)\n", j->full, ms);
    outcome = 0;
  } else if (WIFEXITED(st) && WEXITSTATUS(st) == T_SKIP_STATUS) {
    printf("skip %s (%s)\n", j->full, reason[0] ? reason : "no reason given");
    outcome = 2;
  } else if (WIFSIGNALED(st)) {
    printf("FAIL %s (%s)\n", j->full, strsignal(WTERMSIG(st)));
  } else {
    printf("FAIL %s (exit %d)\n", j->full, WEXITSTATUS(st));
  }
  fflush(stdout);
  return outcome;
}

/* Run the N selected jobs, at most JOBS at a time; COUNT[outcome] adds
** up the results. The runner waits for SIGCHLD with sigtimedwait, waking
** by the nearest deadline to kill a test that outlived it. */
static void run_all(job *js, size_t n, int jobs, int count[3]) {
  sigset_t chld, old;
  sigemptyset(&chld);
  sigaddset(&chld, SIGCHLD);
  sigprocmask(SIG_BLOCK, &chld, &old);
  job **run = calloc((size_t)jobs, sizeof *run);
  if (!run) {
    fprintf(stderr, "runner: out of memory\n");
    exit(2);
  }
  size_t next = 0;
  int nrun = 0;
  while (next < n || nrun > 0) {
    while (nrun < jobs && next < n) {
      job *j = &js[next++];
      if (start(j, &old) == 0) {
        for (int k = 0; k < jobs; k++)
          if (!run[k]) {
            run[k] = j;
            break;
          }
        nrun++;
      } else {
        count[1]++;
      }
    }
    /* Reap what has ended. */
    int st;
    pid_t pid;
    while (nrun > 0 && (pid = waitpid(-1, &st, WNOHANG)) > 0) {
      for (int k = 0; k < jobs; k++)
        if (run[k] && run[k]->pid == pid) {
          count[finish(run[k], st)]++;
          run[k] = NULL;
          nrun--;
          break;
        }
    }
    if (nrun == 0) continue;
    /* Kill what outlived its timeout (reaped on a later round). */
    double t = now_s(), wake = t + 1.0;
    for (int k = 0; k < jobs; k++) {
      job *j = run[k];
      if (!j || j->killed) continue;
      if (t >= j->deadline) {
        kill(-j->pid, SIGKILL);
        j->killed = 1;
      } else if (j->deadline < wake) {
        wake = j->deadline;
      }
    }
    double d = wake - t;
    if (d < 0.001) d = 0.001;
    struct timespec ts = {(time_t)d, (long)((d - (double)(time_t)d) * 1e9)};
    sigtimedwait(&chld, NULL, &ts);
  }
  free(run);
  sigprocmask(SIG_SETMASK, &old, NULL);
}

/* Whether NAME starts with one of the space-separated PREFIXES ("" is
** the prefix of every name). */
static int runs_alone(const char *name, const char *prefixes) {
  const char *p = prefixes;
  do {
    size_t n = strcspn(p, " ");
    if (strncmp(name, p, n) == 0) return 1;
    p += n;
  } while (*p++);
  return 0;
}

static int matches(const char *full, char **pat, int npat) {
  if (npat == 0) return 1;
  for (int i = 0; i < npat; i++)
    if (strstr(full, pat[i])) return 1;
  return 0;
}

int main(int argc, char **argv) {
  if (getenv("SPY_BUILDDIR")) t_builddir = getenv("SPY_BUILDDIR");
  if (getenv("SPY_SRCDIR")) t_srcdir = getenv("SPY_SRCDIR");
  int self = getenv("SPY_TEST_SELF") && strcmp(getenv("SPY_TEST_SELF"), "1") == 0;
  long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
  int list = 0, jobs = ncpu > 0 ? (int)ncpu : 1, npat = 0;
  char **pat = calloc((size_t)argc, sizeof *pat);
  if (!pat) return 2;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (strcmp(a, "-l") == 0) {
      list = 1;
    } else if (strncmp(a, "-j", 2) == 0) {
      const char *v = a[2] ? a + 2 : i + 1 < argc ? argv[++i] : "";
      char *end;
      long j = strtol(v, &end, 10);
      if (!*v || *end || j < 1 || j > 1024) {
        fprintf(stderr, "runner: -j wants a number of jobs (1..1024)\n");
        return 2;
      }
      jobs = (int)j;
    } else {
      pat[npat++] = argv[i];
    }
  }
  /* The selected tests: those that may run side by side first, from
  ** the front of js; those that run alone from the back. */
  size_t cap = 0, n = 0, nserial = 0;
  for (size_t s = 0; s < sizeof suites / sizeof suites[0]; s++)
    for (const struct spy_test *t = suites[s].tests; t->name; t++) cap++;
  job *js = calloc(cap ? cap : 1, sizeof *js);
  if (!js) return 2;
  for (size_t s = 0; s < sizeof suites / sizeof suites[0]; s++) {
    if (suites[s].self && !self) continue;
    const char *serial = suites[s].serial;
    for (const struct spy_test *t = suites[s].tests; t->name; t++) {
      char full[256];
      snprintf(full, sizeof full, "%s/%s", suites[s].name, t->name);
      if (list) {
        puts(full);
        continue;
      }
      if (!matches(full, pat, npat)) continue;
      int alone = serial && runs_alone(t->name, serial);
      job *j = alone ? &js[cap - ++nserial] : &js[n++];
      snprintf(j->full, sizeof j->full, "%s", full);
      j->t = t;
    }
  }
  if (list) return 0;
  int count[3] = {0, 0, 0};
  run_all(js, n, jobs, count);
  for (size_t i = 0; i < nserial; i++)
    run_all(&js[cap - 1 - i], 1, 1, count);
  printf("%d passed, %d failed, %d skipped\n", count[0], count[1], count[2]);
  free(js);
  free(pat);
  return count[1] ? 1 : 0;
}
