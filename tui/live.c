/*
** tui/live.c: `spyon --live SCRIPT`: browse the profile while the script
** runs.
**
** Threads. The script runs in a worker thread that owns the VM and its
** profiler attachment (the hook contract: attach, hooks and detach from
** the interpreter thread). The main thread runs curses and, about every
** half second, takes a snapshot with spy_profile_take, which reads the
** sampler's aggregate under the profiler's own lock: the interpreter
** thread never waits for the browser. A small mutex only guards the
** profiler pointer, so the worker does not stop and free the profiler
** while a snapshot is being taken; the worker takes it once, at the end.
**
** The script's output. While curses owns the terminal, the script's
** stdout and stderr (file descriptors 1 and 2) go to two temporary files;
** curses writes to a duplicate of the terminal descriptor. When the
** browser exits, the descriptors are restored and the captured output is
** copied to stdout and stderr, in that order, so nothing the script
** printed is lost and nothing corrupts the screen. The Output view is not
** needed: the header says how much output is waiting.
**
** Quitting before the script ends interrupts it (SIGINT to the worker,
** whose handler is the command's usual one): the exit status is then 130,
** as with ^C in `spyon SCRIPT`.
*/
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <spyon.h>
#include <spyon/profile.h>

#include "cli/cli.h"
#include "tui/live.h"
#include "tui/tui.h"

/* Snapshot period: fast enough to feel live, slow enough that a 100k-node
** profile's rebuild stays a small share of one core. */
#define SNAPSHOT_NS 500000000LL

typedef struct live {
  const cli_host *host;
  const spy_options *so;
  const char *script;
  int argc;
  char **argv;
  pthread_mutex_t lock;
  spy_profiler *P;       /* published while the script runs */
  int started, done, status;
  spy_profile *final;    /* the worker's last profile */
  long long t0, last;    /* monotonic ns: start, last snapshot */
  int have_final;
  FILE *out, *errf;      /* the captured output */
} live;

static long long now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* The live session the host publishes its profiler to (one at a time). */
static live *the_live;

void cli_live_publish(spy_profiler *P) {
  live *L = the_live;
  if (!L) return;
  pthread_mutex_lock(&L->lock);
  L->P = P;
  if (P) L->started = 1;
  pthread_mutex_unlock(&L->lock);
}

/* The worker: the host makes its interpreter, profiles, runs and stops,
** all in this thread, publishing the profiler while the script runs. */
static void *worker(void *ud) {
  live *L = ud;
  spy_profile *p = NULL;
  int status = L->host->run(L->script, L->argc, L->argv, L->so, &p);
  fflush(stdout);
  fflush(stderr);
  pthread_mutex_lock(&L->lock);
  L->P = NULL;
  L->final = p;
  L->status = status;
  L->done = 1;
  pthread_mutex_unlock(&L->lock);
  return NULL;
}

/* Output waiting in the capture files, for the header. */
static long long captured(const live *L) {
  struct stat a, b;
  long long n = 0;
  if (L->out && fstat(fileno(L->out), &a) == 0) n += a.st_size;
  if (L->errf && fstat(fileno(L->errf), &b) == 0) n += b.st_size;
  return n;
}

static void set_status(live *L, spyT_app *a, int done, int status) {
  long long out = captured(L);
  char o[64] = "";
  if (out) snprintf(o, sizeof o, ", %lld bytes of output after exit", out);
  if (done)
    snprintf(a->live, sizeof a->live, "finished, exit %d%s", status, o);
  else
    snprintf(a->live, sizeof a->live, "live %.1f s%s",
             (double)(now_ns() - L->t0) / 1e9, o);
}

/* The browser's poll: the final profile once the script is done, else a
** fresh snapshot every SNAPSHOT_NS. */
static int poll_live(void *ud, spyT_app *a) {
  live *L = ud;
  if (L->have_final) return 0;
  spy_profile *p = NULL;
  int done, status;
  pthread_mutex_lock(&L->lock);
  done = L->done;
  status = L->status;
  if (done) {
    p = L->final;
    L->final = NULL;
  } else if (L->P && now_ns() - L->last >= SNAPSHOT_NS) {
    if (spy_profile_take(L->P, &p) < 0) p = NULL;
    L->last = now_ns();
  }
  pthread_mutex_unlock(&L->lock);
  if (done) L->have_final = 1;
  set_status(L, a, done, status);
  if (p) {
    spy_profile_symbolize(p);
    int rc = spyT_app_set_profile(a, p);
    if (rc < 0) snprintf(a->msg, sizeof a->msg, "error: %s", spy_strerror(rc));
  }
  return 1;
}

/* Copy a capture file to fd. */
static void replay(FILE *f, int fd) {
  if (!f) return;
  char buf[65536];
  size_t n;
  rewind(f);
  while ((n = fread(buf, 1, sizeof buf, f)) > 0) {
    size_t off = 0;
    while (off < n) {
      ssize_t w = write(fd, buf + off, n - off);
      if (w < 0 && errno == EINTR) continue;
      if (w <= 0) return;
      off += (size_t)w;
    }
  }
}

int spyT_live(const cli_host *host, const char *script, int argc,
              char **argv, const spy_options *so, double threshold_pct,
              spy_profile **out) {
  *out = NULL;
  live L;
  memset(&L, 0, sizeof L);
  L.host = host;
  L.so = so;
  L.script = script;
  L.argc = argc;
  L.argv = argv;
  pthread_mutex_init(&L.lock, NULL);
  the_live = &L;
  L.out = tmpfile();
  L.errf = tmpfile();
  int tty = dup(1), tty_err = dup(2);
  FILE *tty_out = tty >= 0 ? fdopen(tty, "w") : NULL;
  if (!L.out || !L.errf || !tty_out || tty_err < 0) {
    fprintf(stderr, "spyon: --live: cannot capture the script's output: %s\n",
            strerror(errno));
    if (L.out) fclose(L.out);
    if (L.errf) fclose(L.errf);
    if (tty_out) fclose(tty_out);
    else if (tty >= 0) close(tty);
    if (tty_err >= 0) close(tty_err);
    the_live = NULL;
    return 1;
  }
  fflush(stdout);
  fflush(stderr);
  dup2(fileno(L.out), 1);
  dup2(fileno(L.errf), 2);
  /* The worker keeps SIGWINCH away from itself, so curses sees resizes. */
  sigset_t block, old;
  sigemptyset(&block);
  sigaddset(&block, SIGWINCH);
  pthread_sigmask(SIG_BLOCK, &block, &old);
  L.t0 = L.last = now_ns();
  pthread_t th;
  int bad = pthread_create(&th, NULL, worker, &L);
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  int status = 1, ui = 1;
  spy_profile *first = NULL, *last = NULL;
  if (!bad) {
    /* The first screen: wait until profiling has started (a fraction of a
    ** millisecond) and take the first snapshot; a script that is already
    ** done shows its final profile. */
    for (;;) {
      pthread_mutex_lock(&L.lock);
      int go = L.started || L.done;
      if (L.P && spy_profile_take(L.P, &first) < 0) first = NULL;
      if (!first && L.done) {
        first = L.final;
        L.final = NULL;
        L.have_final = 1;
      }
      pthread_mutex_unlock(&L.lock);
      if (go) break;
      struct timespec ts = {0, 1000000};
      nanosleep(&ts, NULL);
    }
    spyT_app a;
    int ok = first && spyT_app_init(&a, first, threshold_pct) == 0;
    if (ok) {
      pthread_mutex_lock(&L.lock);
      int st0 = L.status;
      pthread_mutex_unlock(&L.lock);
      set_status(&L, &a, L.have_final, st0);
      ui = spyT_run(&a, tty_out, poll_live, &L);
    }
    pthread_mutex_lock(&L.lock);
    int done = L.done;
    pthread_mutex_unlock(&L.lock);
    if (!done) pthread_kill(th, SIGINT); /* quit early: stop the script */
    pthread_join(th, NULL);
    /* The final profile: the app's, once it took it, else the worker's. */
    if (L.have_final && first) {
      last = a.p;
      a.p = NULL;
    } else {
      last = L.final;
    }
    if (first) spyT_app_free(&a);
  }
  /* The terminal back, then what the script printed. */
  fflush(stdout);
  fflush(stderr);
  fflush(tty_out);
  dup2(fileno(tty_out), 1);
  dup2(tty_err, 2);
  fclose(tty_out);
  close(tty_err);
  replay(L.out, 1);
  replay(L.errf, 2);
  fclose(L.out);
  fclose(L.errf);
  the_live = NULL;
  if (bad) {
    fprintf(stderr, "spyon: --live: cannot start the script thread\n");
  } else {
    status = L.status;
    if (ui && !status) status = 1;
    *out = last;
  }
  pthread_mutex_destroy(&L.lock);
  return status;
}
