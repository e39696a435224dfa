/*
** tests/test_cli.c: the spyon command as a user (or an attacker) meets it.
**
** Every test runs the real spyon binary in the test's scratch directory
** and asserts the exact outcome: the exit status, the one line on stderr,
** the bytes left on disk. Signals are sent to a real spyon process; a full
** disk is /dev/full or a small tmpfs mounted in a private mount namespace
** (root only: without it those tests say "skip", they do not pass).
*/
#include "config.h"

#include "tests/test.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <spyon.h>
#include <spyon/profile.h>

#include "profile/profile.h"

/* ---- helpers ---------------------------------------------------------- */

static char *path_in(const char *name) {
  static char buf[4][4300];
  static int k;
  char *p = buf[k++ & 3];
  snprintf(p, 4300, "%s/%s", t_tmpdir(), name);
  return p;
}

static void wfile(const char *name, const char *text) {
  FILE *f = fopen(path_in(name), "wb");
  T_ASSERT(f);
  T_ASSERT(fputs(text, f) >= 0);
  T_ASSERT(fclose(f) == 0);
}

static char *rfile(const char *name) {
  return t_slurp(path_in(name), NULL);
}

/* Run `spyon ARGS` (a shell fragment) in the scratch directory; stdout and
** stderr into *out and *err (either may be NULL). */
static int spyon(char **out, char **err, const char *fmt, ...) {
  char args[8000], line[17000];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(args, sizeof args, fmt, ap);
  va_end(ap);
  snprintf(line, sizeof line,
           "cd '%s' && SPYON_KERNEL='%s/hosts/st/kernel' '%s/spyon' %s "
           "2> stderr.txt",
           t_tmpdir(), t_srcdir, t_builddir, args);
  int rc = t_run(line, out);
  if (err) {
    *err = rfile("stderr.txt");
    T_ASSERT(*err);
  }
  return rc;
}

/* Assert `spyon ARGS` exits with rc and prints exactly want on stderr. */
#define EXPECT(rc, want, ...)                                           \
  do {                                                                  \
    char *e_;                                                           \
    T_EQ_INT(spyon(NULL, &e_, __VA_ARGS__), rc);                        \
    T_EQ_STR(e_, want);                                                 \
    free(e_);                                                           \
  } while (0)

static const char hello_st[] = "'hello' displayNl.\n";
static const char forever_st[] =
    "Object subclass: F [ loop [ [true] whileTrue: [3 + 4] ] ]\n"
    "1 printNl. Transcript flush.\nF new loop.\n";

static void copy_data(const char *from, const char *to) {
  char src[4300];
  snprintf(src, sizeof src, "%s/%s", t_srcdir, from);
  size_t n;
  char *b = t_slurp(src, &n);
  T_ASSERT(b);
  FILE *f = fopen(path_in(to), "wb");
  T_ASSERT(f && fwrite(b, 1, n, f) == n && fclose(f) == 0);
  free(b);
}

/* ---- signals ------------------------------------------------------------ */

/* Start spyon ARGV... in the scratch directory, stdout to out.txt and
** stderr to err.txt. */
static pid_t start(char *const argv[]) {
  char spy[4200], kernel[4200];
  snprintf(spy, sizeof spy, "%s/spyon", t_builddir);
  snprintf(kernel, sizeof kernel, "%s/hosts/st/kernel", t_srcdir);
  remove(path_in("out.txt")); /* wait_for must not see a previous run's */
  pid_t pid = fork();
  if (pid == 0) {
    if (chdir(t_tmpdir()) != 0) _exit(99);
    setenv("SPYON_KERNEL", kernel, 1);
    if (!freopen("out.txt", "w", stdout) || !freopen("err.txt", "w", stderr))
      _exit(97);
    execv(spy, argv);
    _exit(98);
  }
  T_ASSERT(pid > 0);
  return pid;
}

/* Wait (up to 30 s) until file name holds text. */
static void wait_for(const char *name, const char *text) {
  for (int i = 0; i < 3000; i++) {
    char *s = rfile(name);
    int ok = s && strstr(s, text);
    free(s);
    if (ok) return;
    struct timespec ts = {0, 10 * 1000 * 1000};
    nanosleep(&ts, NULL);
  }
  T_FAIL("%s never showed '%s'", name, text);
}

static int wait_exit(pid_t pid) {
  int st;
  while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {}
  if (!WIFEXITED(st)) T_FAIL("spyon died of signal %d", WTERMSIG(st));
  return WEXITSTATUS(st);
}

static int has_frame(const spy_profile *p, const char *name) {
  for (size_t i = 0; i < p->nframes; i++)
    if (!strcmp(p->frames[i].name, name)) return 1;
  return 0;
}

/* SIGINT, SIGTERM and SIGHUP (a terminal, `timeout`, CI runners, systemd)
** all stop the script and keep its profile; the status says which. */
static void t_signals_keep_profile(void) {
  wfile("forever.st", forever_st);
  static const int sigs[] = {SIGINT, SIGTERM, SIGHUP};
  for (int k = 0; k < 3; k++) {
    remove(path_in("sig.spy"));
    char *argv[] = {"spyon", "-o", "sig.spy", "forever.st", NULL};
    pid_t pid = start(argv);
    wait_for("out.txt", "1\n");
    struct timespec ts = {0, 300 * 1000 * 1000};
    nanosleep(&ts, NULL);
    T_EQ_INT(kill(pid, sigs[k]), 0);
    T_EQ_INT(wait_exit(pid), 128 + sigs[k]);
    char err[512];
    spy_profile *p = NULL;
    if (spy_profile_load(path_in("sig.spy"), &p, err, sizeof err))
      T_FAIL("signal %d: %s", sigs[k], err);
    T_ASSERT(p->tallies > 0);
    T_ASSERT(has_frame(p, "F>>loop"));
    spy_profile_free(p);
    char *e = rfile("err.txt");
    T_ASSERT(e && strstr(e, "saved to sig.spy\n"));
    free(e);
  }
  /* Without -o the report still follows on stdout. */
  char *argv[] = {"spyon", "forever.st", NULL};
  pid_t pid = start(argv);
  wait_for("out.txt", "1\n");
  T_EQ_INT(kill(pid, SIGTERM), 0);
  T_EQ_INT(wait_exit(pid), 128 + SIGTERM);
  char *out = rfile("out.txt");
  T_ASSERT(out && strstr(out, "**Tree**"));
  free(out);
}

/* ---- outputs checked before the script starts ---------------------- */

static void t_output_refused_first(void) {
  wfile("hello.st", hello_st);
  T_EQ_INT(mkdir(path_in("adir"), 0777), 0);
  wfile("plain", "x");
  char *out, *err;
  static const struct { const char *args, *err; } cases[] = {
    {"-o nodir/x.spy hello.st",
     "spyon: nodir/x.spy: cannot open for writing: No such file or "
     "directory\n"},
    {"-o adir hello.st",
     "spyon: adir: cannot open for writing: Is a directory\n"},
    {"-o plain/x.spy hello.st",
     "spyon: plain/x.spy: cannot open for writing: Not a directory\n"},
    {"-o hello.st hello.st",
     "spyon: hello.st is the input hello.st: refusing to overwrite it\n"},
    {"-o ./adir/../hello.st hello.st",
     "spyon: ./adir/../hello.st is the input hello.st: refusing to "
     "overwrite it\n"},
    {"-o link.st hello.st",
     "spyon: link.st is the input hello.st: refusing to overwrite it\n"},
  };
  T_EQ_INT(link(path_in("hello.st"), path_in("link.st")), 0);
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    T_EQ_INT(spyon(&out, &err, "%s", cases[i].args), 2);
    T_EQ_STR(out, ""); /* the script never ran */
    T_EQ_STR(err, cases[i].err);
    free(out);
    free(err);
  }
  char *s = rfile("hello.st");
  T_EQ_STR(s, hello_st);
  free(s);
  /* The tools refuse to overwrite their input too. */
  copy_data("tests/data/profile/small.spy", "p.spy");
  copy_data("tests/data/cost/example.csv", "c.csv");
  size_t n0, n1;
  char *before = t_slurp(path_in("p.spy"), &n0);
  EXPECT(2, "spyon report: p.spy is the input p.spy: refusing to overwrite "
            "it\n", "report p.spy -o p.spy");
  EXPECT(2, "spyon diff: p.spy is the input p.spy: refusing to overwrite "
            "it\n", "diff small.spy p.spy -o p.spy 2>/dev/null; "
            "'%s/spyon' diff p.spy p.spy --output=p.spy", t_builddir);
  EXPECT(2, "spyon costs: p.spy is the input p.spy: refusing to overwrite "
            "it\n", "costs p.spy -o p.spy");
  EXPECT(2, "spyon costs: c.csv is the input c.csv: refusing to overwrite "
            "it\n", "costs c.csv --export-csv c.csv");
  char *after = t_slurp(path_in("p.spy"), &n1);
  T_ASSERT(n0 == n1 && !memcmp(before, after, n0));
  free(before);
  free(after);
}

/* ---- full disks ------------------------------------------------------- */

/* /dev/full: every writer reports the error and exits 1. */
static void t_dev_full(void) {
  if (access("/dev/full", W_OK) != 0) T_SKIP("no writable /dev/full");
  wfile("hello.st", hello_st);
  copy_data("tests/data/profile/small.spy", "p.spy");
  copy_data("tests/data/cost/example.csv", "c.csv");
  const char *enospc = "No space left on device";
  char *err;
  T_EQ_INT(spyon(NULL, &err, "-o /dev/full hello.st"), 1);
  T_EQ_STR(err, "spyon: /dev/full: write error: No space left on device\n");
  free(err);
  static const char *const cmds[] = {
    "report p.spy -o /dev/full", "report p.spy --format=json -o /dev/full",
    "report p.spy --format folded -o /dev/full",
    "diff p.spy p.spy -o /dev/full",
    "costs c.csv --bootstrap 0 -o /dev/full",
    "costs c.csv --export-csv /dev/full",
  };
  for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++) {
    T_EQ_INT(spyon(NULL, &err, "%s", cmds[i]), 1);
    if (!strstr(err, "/dev/full: write error: ") || !strstr(err, enospc))
      T_FAIL("%s: %s", cmds[i], err);
    free(err);
  }
}

/* Mount a tmpfs of `kb` KiB at dir in a mount namespace of this test's own
** (gone when the test ends); 0, or -1 when this machine does not allow it. */
static int private_tmpfs(const char *dir, int kb, int ro) {
  static int unshared;
  if (!unshared) {
    if (unshare(CLONE_NEWNS) != 0) return -1;
    if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0) return -1;
    unshared = 1;
  }
  char opts[64];
  snprintf(opts, sizeof opts, "size=%dk", kb);
  if (mkdir(dir, 0777) != 0 && errno != EEXIST) return -1;
  return mount("tmpfs", dir, "tmpfs", ro ? MS_RDONLY : 0, opts) ? -1 : 0;
}

/* Fill the file system of dir: a file `filler` as large as it will go. */
static void fill(const char *dir) {
  char p[4400];
  snprintf(p, sizeof p, "%s/filler", dir);
  int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  T_ASSERT(fd >= 0);
  static char block[4096];
  while (write(fd, block, sizeof block) > 0) {}
  while (write(fd, block, 1) > 0) {}
  T_ASSERT(errno == ENOSPC);
  close(fd);
}

static char *listing(const char *dir) {
  char line[4400], *out;
  snprintf(line, sizeof line, "ls -A '%s' | tr '\\n' ' '", dir);
  T_EQ_INT(t_run(line, &out), 0);
  return out;
}

/* A write that meets a full disk leaves the old file as it was, and no
** temporary: profiles, reports, exports, cost tables and CSV. A read-only
** file system is refused before the script starts. */
static void t_full_disk_keeps_old_file(void) {
  wfile("hello.st", hello_st);
  wfile("work.st", "Object subclass: W [ spin [ | s | s := 0.\n"
                   "  1 to: 3000000 do: [:i | s := s + i]. ^s ] ]\n"
                   "W new spin printNl.\n");
  copy_data("tests/data/cost/example.csv", "c.csv");
  T_EQ_INT(spyon(NULL, NULL, "-o good.spy work.st"), 0);
  if (private_tmpfs(path_in("m"), 256, 0) != 0)
    T_SKIP("cannot mount a tmpfs in a private mount namespace (%s); "
           "needs root", strerror(errno));
  size_t glen;
  char *good = t_slurp(path_in("good.spy"), &glen);
  T_ASSERT(good && glen > 0);
  T_EQ_INT(spyon(NULL, NULL, "-o m/old.spy work.st"), 0);
  size_t olen;
  char *old = t_slurp(path_in("m/old.spy"), &olen);
  T_ASSERT(old && olen > 0);
  wfile("m/old.json", "old json\n");
  wfile("m/old.txt", "old table\n");
  wfile("m/old.csv", "old csv\n");
  T_EQ_INT(mkdir(path_in("m/plots"), 0777), 0);
  fill(path_in("m"));
  char *err;
  T_EQ_INT(spyon(NULL, &err, "-o m/old.spy work.st"), 1);
  T_EQ_STR(err, "spyon: m/old.spy: write error: No space left on device\n");
  free(err);
  size_t nlen;
  char *now = t_slurp(path_in("m/old.spy"), &nlen);
  T_ASSERT(nlen == olen && !memcmp(now, old, olen));
  free(now);
  static const struct { const char *cmd, *file, *old; } w[] = {
    {"report good.spy --format json -o m/old.json", "m/old.json",
     "old json\n"},
    {"report good.spy -o m/old.json", "m/old.json", "old json\n"},
    {"costs c.csv --bootstrap 0 -o m/old.txt", "m/old.txt", "old table\n"},
    {"costs c.csv --export-csv m/old.csv", "m/old.csv", "old csv\n"},
  };
  for (size_t i = 0; i < sizeof w / sizeof w[0]; i++) {
    T_EQ_INT(spyon(NULL, &err, "%s", w[i].cmd), 1);
    if (!strstr(err, "write error: No space left on device\n"))
      T_FAIL("%s: %s", w[i].cmd, err);
    free(err);
    char *s = rfile(w[i].file);
    T_EQ_STR(s, w[i].old);
    free(s);
  }
  /* A plot that does not fit leaves no half picture. */
  T_EQ_INT(spyon(NULL, &err, "costs c.csv --bootstrap 0 --plot m/plots"), 1);
  T_ASSERT(strstr(err, "write error: No space left on device\n") ||
           strstr(err, "error while writing to output stream\n"));
  free(err);
  char *ls = listing(path_in("m"));
  T_EQ_STR(ls, "filler old.csv old.json old.spy old.txt plots ");
  free(ls);
  ls = listing(path_in("m/plots"));
  T_EQ_STR(ls, "");
  free(ls);
  /* Room again: the same save replaces the file whole. */
  T_EQ_INT(remove(path_in("m/filler")), 0);
  T_EQ_INT(spyon(NULL, NULL, "-o m/old.spy work.st"), 0);
  spy_profile *p = NULL;
  char e[512];
  if (spy_profile_load(path_in("m/old.spy"), &p, e, sizeof e)) T_FAIL("%s", e);
  if (!has_frame(p, "W>>spin")) {
    spyon(&now, NULL, "report m/old.spy");
    T_FAIL("no W>>spin in\n%s", now);
  }
  spy_profile_free(p);
  /* Read-only: refused before the script prints a thing. */
  T_EQ_INT(private_tmpfs(path_in("ro"), 64, 1), 0);
  char *out;
  T_EQ_INT(spyon(&out, &err, "-o ro/x.spy hello.st"), 2);
  T_EQ_STR(out, "");
  T_EQ_STR(err,
           "spyon: ro/x.spy: cannot open for writing: Read-only file system\n");
  free(out);
  free(err);
  free(good);
  free(old);
}

/* ---- kill -9 in the middle of a write --------------------------------- */

/* A profile whose JSON export is tens of megabytes: a chain of n frames,
** one sample at the bottom, every total adding up. */
static void save_big(const char *name, uint32_t n) {
  spy_profile *p = spyP_new();
  T_ASSERT(p);
  p->frames = spyP_calloc(p, n, sizeof *p->frames);
  p->nodes = spyP_calloc(p, n, sizeof *p->nodes);
  p->processes = spyP_calloc(p, 1, sizeof *p->processes);
  T_ASSERT(p->frames && p->nodes && p->processes);
  p->nframes = p->nnodes = n;
  p->nprocesses = 1;
  char nm[64];
  for (uint32_t i = 0; i < n; i++) {
    snprintf(nm, sizeof nm, "Class%u>>method:with:and:%u", i % 977, i);
    p->frames[i] = (spy_frame){i ? SPY_FRAME_METHOD : SPY_FRAME_ROOT, i,
                               spyP_strdup(p, nm)};
    p->nodes[i] = (spy_node){i, i ? i - 1 : SPY_NONE,
                             i + 1 < n ? i + 1 : SPY_NONE, SPY_NONE, 1000,
                             i + 1 < n ? 0 : 1000, 1, i + 1 < n ? 0 : 1};
  }
  p->processes[0] = (spy_process){1, "main", 0, 1000, 1};
  p->wall_ns = 1000;
  p->tallies = 1;
  char err[512];
  if (spy_profile_save(p, path_in(name), err, sizeof err)) T_FAIL("%s", err);
  spy_profile_free(p);
}

/* SIGKILL at any moment of `spyon report -o` leaves the old file or the
** whole new one, never a truncated one (before: a 0-byte file). */
static void t_kill9_during_write(void) {
  save_big("big.spy", 100000);
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  T_EQ_INT(spyon(NULL, NULL, "report big.spy --format json -o full.json"), 0);
  clock_gettime(CLOCK_MONOTONIC, &t1);
  double ms = (t1.tv_sec - t0.tv_sec) * 1e3 + (t1.tv_nsec - t0.tv_nsec) / 1e6;
  size_t full_len;
  char *full = t_slurp(path_in("full.json"), &full_len);
  T_ASSERT(full && full_len > 1000000);
  int killed_early = 0, done = 0;
  for (int k = 0; k < 12; k++) {
    wfile("out.json", "old\n");
    char *argv[] = {"spyon", "report", "big.spy", "--format", "json", "-o",
                    "out.json", NULL};
    pid_t pid = start(argv);
    long ns = (long)(ms * 1e6 * (k + 1) / 12.0);
    struct timespec d = {ns / 1000000000L, ns % 1000000000L};
    nanosleep(&d, NULL);
    kill(pid, SIGKILL);
    int st;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {}
    if (WIFSIGNALED(st)) killed_early++;
    else done++;
    size_t len;
    char *now = t_slurp(path_in("out.json"), &len);
    T_ASSERT(now);
    if (!(len == 4 && !memcmp(now, "old\n", 4)) &&
        !(len == full_len && !memcmp(now, full, len)))
      T_FAIL("kill at %ld ms left %zu bytes, neither the old file nor the "
             "new one", ns / 1000000, len);
    free(now);
  }
  fprintf(stderr, "kill -9: %d runs killed mid-way, %d finished (a run takes "
                  "%.0f ms)\n", killed_early, done, ms);
  T_ASSERT(killed_early > 0);
  free(full);
}

/* ---- options ------------------------------------------------------------ */

/* The same rules for every command: --help, --opt=value, missing values,
** unknown and conflicting options. */
static void t_options(void) {
  wfile("hello.st", hello_st);
  copy_data("tests/data/profile/small.spy", "p.spy");
  copy_data("tests/data/cost/example.csv", "c.csv");
  char *out, *err;
  /* Every subcommand has --help, on stdout, status 0. */
  static const struct { const char *cmd, *has[10]; } help[] = {
    {"--help", {"-o, --output FILE", "-i, --interval USEC",
                "--threshold PCT", "--mode poll|timer", "--json",
                "--native ", "--native-interval USEC", "--no-profile",
                "spyon costs "}},
    {"report --help", {"usage: spyon report FILE.spy", "--format FORMAT",
                       "--threshold PCT", "-o, --output FILE", "speedscope"}},
    {"diff --help", {"usage: spyon diff BEFORE.spy AFTER.spy",
                     "--threshold PCT", "-o, --output FILE"}},
    {"costs --help", {"usage: spyon costs FILE.spy|FILE.csv",
                      "--prefix PREFIX", "--export-csv OUT.csv",
                      "--solver NAME"}},
  };
  for (size_t i = 0; i < sizeof help / sizeof help[0]; i++) {
    T_EQ_INT(spyon(&out, &err, "%s", help[i].cmd), 0);
    T_EQ_STR(err, "");
    for (int k = 0; help[i].has[k]; k++)
      if (!strstr(out, help[i].has[k]))
        T_FAIL("%s lacks '%s':\n%s", help[i].cmd, help[i].has[k], out);
    free(out);
    free(err);
  }
  static const struct { const char *args; int rc; const char *err; } c[] = {
    {"report p.spy --threshold", 2,
     "spyon report: option --threshold needs a value\n"},
    {"report p.spy --format", 2,
     "spyon report: option --format needs a value\n"},
    {"hello.st -o", 0, ""}, /* after the script: the script's argument */
    {"-o", 2, "spyon: option -o needs a value\n"},
    {"report p.spy --format=xml", 2,
     "spyon report: --format: unknown format 'xml' (text, json, folded, "
     "folded-tallies, speedscope, pprof, svg)\n"},
    {"report p.spy --format=json > /dev/null", 0, ""},
    {"report p.spy -fjson > /dev/null", 0, ""},
    {"report p.spy --threshold=2 > /dev/null", 0, ""},
    {"--json -o x.spy hello.st", 2,
     "spyon: --json and -o cannot be used together\n"},
    {"--output=x.spy --json hello.st", 2,
     "spyon: --output and --json cannot be used together\n"},
    {"--json=yes hello.st", 2, "spyon: option --json takes no value\n"},
    {"--threshold 2 --json hello.st", 2,
     "spyon: --threshold and --json cannot be used together\n"},
    {"--bogus hello.st", 2,
     "spyon: unknown option '--bogus' (see spyon --help)\n"},
    {"report p.spy --bogus=1", 2,
     "spyon report: unknown option '--bogus' (see spyon report --help)\n"},
    {"report p.spy q.spy", 2,
     "spyon report: unexpected operand 'q.spy' (see spyon report --help)\n"},
    {"report", 2, "usage: spyon report FILE.spy [options] (see spyon report "
                  "--help)\n"},
    {"diff p.spy", 2, "usage: spyon diff BEFORE.spy AFTER.spy [options] (see "
                      "spyon diff --help)\n"},
    {"-i=50 --threshold=1 --mode=timer hello.st > /dev/null", 0, ""},
    {"-i50 --interval 60 hello.st > /dev/null", 0, ""},
    {"-i 0 hello.st", 2, "spyon: -i: '0' is not a number from 1 to "
                         "10000000\n"},
    {"--interval=1e8 hello.st", 2, "spyon: --interval: '1e8' is not a number "
                                   "from 1 to 10000000\n"},
    {"--mode=fast hello.st", 2,
     "spyon: --mode: expected poll or timer, not 'fast'\n"},
    {"costs c.csv --prefix 'a b;c'", 2,
     "spyon costs: --prefix: 'a b;c' is not a C identifier (letters, digits "
     "and _, not first a digit)\n"},
    {"costs c.csv --prefix=9x", 2,
     "spyon costs: --prefix: '9x' is not a C identifier (letters, digits "
     "and _, not first a digit)\n"},
    {"costs c.csv --unit '*/x=2'", 2,
     "spyon costs: --unit: unit name '*/x' is not a C identifier\n"},
    {"costs c.csv --format csv --codegen c", 2,
     "spyon costs: --format and --codegen cannot be used together\n"},
    {"costs c.csv --export-csv o.csv --solver ols", 2,
     "spyon costs: --export-csv and --solver cannot be used together\n"},
    {"costs c.csv -o o.h --export-csv=o.csv", 2,
     "spyon costs: -o and --export-csv cannot be used together\n"},
    {"costs --list-families > /dev/null", 0, ""},
    /* The same status and message for a missing or corrupt profile in
    ** every subcommand (1: a file failed). */
    {"report none.spy", 1,
     "spyon: none.spy: cannot open: No such file or directory\n"},
    {"diff none.spy p.spy", 1,
     "spyon: none.spy: cannot open: No such file or directory\n"},
    {"costs none.spy", 1,
     "spyon: none.spy: cannot open: No such file or directory\n"},
    {"report hello.st", 1,
     "spyon: hello.st: offset 0: not a spyon profile (bad magic number)\n"},
    {"costs hello.st", 1,
     "spyon: hello.st: offset 0: not a spyon profile (bad magic number)\n"},
  };
  for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
    int rc = spyon(NULL, &err, "%s", c[i].args);
    if (rc != c[i].rc || strcmp(err, c[i].err))
      T_FAIL("spyon %s: status %d, stderr \"%s\"; want %d, \"%s\"",
             c[i].args, rc, err, c[i].rc, c[i].err);
    free(err);
  }
  /* --costs --codegen c with a valid prefix compiles (the header is C). */
  T_EQ_INT(spyon(NULL, NULL, "costs c.csv --bootstrap 0 --codegen=c "
                             "--prefix=my_ -o costs.h"), 0);
  char line[4400];
  snprintf(line, sizeof line, "cd '%s' && printf '#include \"costs.h\"\\n"
           "int main(void) { return 0; }\\n' > m.c && cc -c m.c -o m.o",
           t_tmpdir());
  T_EQ_INT(t_run(line, NULL), 0);
}

/* Every option listed by --help takes `--opt value` and `--opt=value` the
** same way: the same status and the same message for the same value. */
static void t_every_option_both_forms(void) {
  wfile("hello.st", hello_st);
  static const char *const cmds[] = {"", "report", "diff", "costs"};
  for (size_t c = 0; c < 4; c++) {
    char *help;
    T_EQ_INT(spyon(&help, NULL, "%s --help", cmds[c]), 0);
    int tried = 0;
    for (char *l = strtok(help, "\n"); l; l = strtok(NULL, "\n")) {
      char *dd = strstr(l, "--");
      const char *first = l + strspn(l, " ");
      if (!dd || l[0] != ' ' || *first != '-') continue;
      char name[64], arg[64];
      if (sscanf(dd, "%63s %63s", name, arg) != 2) continue;
      if (arg[0] < 'A' || arg[0] > 'Z') {
        /* a flag (arg is the help text) or a choice like poll|timer */
        if (!strchr(arg, '|') && strcmp(arg, "c")) continue;
      }
      char *e1, *e2;
      /* No such script: a value that parses ends at "cannot open", the
      ** same for both forms, with nothing run. */
      int r1 = spyon(NULL, &e1, "%s %s @bad@ %s", cmds[c], name,
                     c ? "" : "none.st");
      int r2 = spyon(NULL, &e2, "%s %s=@bad@ %s", cmds[c], name,
                     c ? "" : "none.st");
      if (r1 != r2 || strcmp(e1, e2) || strstr(e1, "unknown option") ||
          strstr(e1, "needs a value"))
        T_FAIL("spyon %s %s: '%s' %d vs '%s' %d", cmds[c], name, e1, r1, e2,
               r2);
      free(e1);
      free(e2);
      tried++;
    }
    T_ASSERT(tried >= 2);
    free(help);
  }
}

/* A model that predicts worse than the mean (R^2 < 0) carries a caveat:
** 90 calls of 100 ns and 10 of 10 us, fitted by the median as a constant,
** give R^2 = 1 - SSE/SST = -1/9. */
static void t_costs_negative_r2(void) {
  FILE *f = fopen(path_in("neg.csv"), "w");
  T_ASSERT(f);
  fputs("primitive,n,time_ns\n", f);
  for (int i = 0; i < 100; i++)
    fprintf(f, "p,%d,%d\n", i, i % 10 ? 100 : 10000);
  T_EQ_INT(fclose(f), 0);
  char *out;
  T_EQ_INT(spyon(&out, NULL, "costs neg.csv --model c0 --bootstrap 0"), 0);
  if (!strstr(out, "R^2 -0.1111, adj. R^2 -0.1111") ||
      !strstr(out, "\n  caveat   R^2 < 0: this model predicts the time "
                   "worse than its mean does;\n           do not use it as "
                   "a cost\n"))
    T_FAIL("no caveat in\n%s", out);
  free(out);
}

const struct spy_test t_cli[] = {
  {"kill9_during_write", t_kill9_during_write, 240},
  {"costs_negative_r2", t_costs_negative_r2, 0},
  {"signals_keep_profile", t_signals_keep_profile, 120},
  {"output_refused_first", t_output_refused_first, 0},
  {"dev_full", t_dev_full, 0},
  {"full_disk_keeps_old_file", t_full_disk_keeps_old_file, 0},
  {"options", t_options, 120},
  {"every_option_both_forms", t_every_option_both_forms, 120},
  {0},
};
