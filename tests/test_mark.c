/*
** tests/test_mark.c: the "mark" suite: the clock's rate and the markers
** (vm-hooks/clock.c, vm-hooks/mark.c).
**
** Tolerances.
**  - Clock: the rate in use right after start-up (published, or measured
**    over SPYH_CLOCK_SPIN_NS) converts a 200 ms TSC span to within 1e-3 of
**    CLOCK_MONOTONIC; after spyH_clock_refine, to within 1e-4 (the test's
**    own reads are pairs at most a few us wide, 2e-5 of the span).
**  - Rate: the machine is shared, and a thread that is off the CPU takes
**    the grid points it missed as one sample of their total weight (no
**    time lost, fewer samples). So the achieved rate is counted per second
**    of the thread's CPU time (a lower bound: a thread resuming after a
**    wait takes one sample for the wait too): the signal and tick markers
**    must reach 90 % of the asked rate at 1 and 10 kHz, the thread marker
**    90 % at 1 kHz and 50 % at 10 kHz (the target on an idle machine is
**    95 % per wall second; bench/cost.sh measures that).
**  - Leaves with the tick marker: the tolerances of tests/test_core.c.
**  - CPU clock: with a busy thread on the same core the profiled thread
**    gets at most half of it; the weights must add up to the thread's own
**    CPU time within 3 % + 2 ms (the wall clock would give at least twice
**    that), and each primitive's share of the host's CPU-time truth stays
**    within the tolerance of tests/test_core.c, stall term included: a
**    sample due while the thread is off the CPU is taken at its first
**    hook after it resumes, which skids the same way with either clock
**    (a thread preempted inside a primitive is sampled at its end).
*/
#include "config.h"

#include "tests/test_core.h"

#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <time.h>

#include "vm-hooks/clock.h"
#include "vm-hooks/mark.h"
#include "vm-hooks/slot.h"

static uint64_t mono(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* A (TSC, monotonic) pair, the narrowest of 20 tries; returns its width. */
static uint64_t pair(uint64_t *t, uint64_t *m) {
  uint64_t best = UINT64_MAX;
  for (int i = 0; i < 20; i++) {
    uint64_t a = mono(), tt = spyH_now(), b = mono();
    if (b - a < best) best = b - a, *t = tt, *m = a + (b - a) / 2;
  }
  return best;
}

/* The TSC rate: right after start-up and after refinement. */
static void clock_rate(void) {
  spyH_clock_init(0);
  if (!spyH_clock.use_tsc) {
    T_EQ_STR(spyH_clock.source, "none");
    T_EQ_INT(spyH_ticks_to_ns(12345), 12345);
    return;
  }
  T_ASSERT(!strcmp(spyH_clock.source, "cpuid") ||
           !strcmp(spyH_clock.source, "hypervisor") ||
           !strcmp(spyH_clock.source, "measured"));
  uint64_t t0, m0, t1, m1;
  uint64_t w = pair(&t0, &m0);
  while (mono() - m0 < 200 * MS) {}
  w += pair(&t1, &m1);
  double span = (double)(m1 - m0), slack = (double)w;
  double first = (double)spyH_ticks_to_ns(t1 - t0);
  T_NEAR(first, span, 1e-3 * span + slack);
  spyH_clock_refine();
  double refined = (double)spyH_ticks_to_ns(t1 - t0);
  T_NEAR(refined, span, 1e-4 * span + slack);
  /* The other direction agrees. */
  T_NEAR((double)spyH_ns_to_ticks(1000000000u),
         1e9 / spyH_ns_per_tick(), 1.0);
}

/* The calling thread's CPU time in ms. */
static double cpu_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* A new profiler with options O and, attached to it, a host that defines
** the standard program with short primitives only (tests/gt/gthost.h),
** its tick_every and cpu_truth set before the attach. */
static gt_host *std_host(spy_options *o, gt_std *s, int tick_every,
                         int cpu_truth) {
  spy_profiler *p = new_prof(0, SPY_MODE_POLL, o);
  T_EQ_INT(gt_std_register(p, s), 0);
  s->long_prims = 0;
  gt_host *h = gt_new(p);
  T_ASSERT(h != NULL);
  h->tick_every = tick_every;
  h->cpu_truth = cpu_truth;
  gt_std_define(h, s);
  T_EQ_INT(gt_attach(h), 0);
  return h;
}

/* Free the profile PR, then detach and free the host and its profiler. */
static void host_free(gt_host *h, spy_profile *pr) {
  spy_profiler *p = h->prof;
  spy_profile_free(pr);
  T_EQ_INT(gt_detach(h), 0);
  gt_free(h);
  T_EQ_INT(spy_profiler_free(p), 0);
}

/* The host's time T as a percentage of all it measured. */
static double truth_pct(const gt_host *h, uint64_t t) {
  return 100.0 * (double)t / (double)h->t_total;
}

/* The self time of frame (KIND, KEY) as a percentage of DEN ns. */
static double self_pct(const spy_profile *pr, spy_frame_kind kind,
                       uint64_t key, double den) {
  return 100.0 *
         (double)gt_frame_self(pr, gt_find_frame(pr, kind, key), -1) / den;
}

/* Run gt_work until the thread has used run_ms more CPU (at most 20 s of
** wall time) with the given marker and interval; return the samples taken
** per asked sample of the thread's CPU time. */
static double rate_of(spy_marker m, uint64_t interval_ns, double run_ms,
                      int tick_every) {
  spy_options o;
  spy_options_init(&o);
  o.marker = m;
  spy_profiler *p = new_prof(interval_ns, SPY_MODE_POLL, &o);
  gt_host *h = gt_new(p);
  T_ASSERT(h != NULL);
  h->tick_every = tick_every;
  gt_method(h, 1, "Work>>run");
  T_EQ_INT(gt_attach(h), 0);
  session ss;
  start(p, h, &ss);
  run_ms += cpu_ms();
  gt_enter(h, 1);
  uint64_t t0 = gt_now();
  while (cpu_ms() < run_ms && gt_now() - t0 < 20000 * MS)
    gt_work(h, 100 * US);
  gt_leave(h);
  spy_profile *pr = stop_take(p, h, &ss);
  double cpu = (double)(h->cpu_end - h->cpu_begin);
  double r = (double)pr->tallies / (cpu / (double)interval_ns);
  fprintf(stderr, "marker %d, %llu ns: %llu samples in %.0f ms CPU, "
          "%.0f ms wall: %.1f %% of the asked rate per CPU second\n",
          (int)m, (unsigned long long)interval_ns,
          (unsigned long long)pr->tallies, cpu / 1e6,
          (double)pr->wall_ns / 1e6, 100 * r);
  host_free(h, pr);
  return r;
}

/* Under TSan everything here runs 5-15x slower, the signal handler and
** the sampler thread included: only a sanity bound. */
#define RATE_MIN (T_TSAN ? 0.5 : 0.9)

/* The thread marker needs the sampler thread on a CPU at every grid
** point: on a loaded machine it is late, and the rate drops (the very
** weakness the other markers remove). So at 10 kHz only half is asked,
** and at 1 kHz a miss is run once more (12-07, the full suite on the
** project's guest: 90.0 % once, a hair under, in one of two runs). */
static void rate_thread(void) {
  double r = rate_of(SPY_MARKER_THREAD, 1000 * US, 200, 0);
  if (r < RATE_MIN) {
    fprintf(stderr, "rate %.1f %% of the asked: once more\n", 100 * r);
    r = rate_of(SPY_MARKER_THREAD, 1000 * US, 200, 0);
  }
  T_ASSERT(r >= RATE_MIN);
  T_ASSERT(rate_of(SPY_MARKER_THREAD, 100 * US, 200, 0) >= 0.5);
}

static void rate_signal(void) {
  uint64_t n0 = spyH_mark_signals();
  T_ASSERT(rate_of(SPY_MARKER_SIGNAL, 1000 * US, 200, 0) >= RATE_MIN);
  T_ASSERT(rate_of(SPY_MARKER_SIGNAL, 100 * US, 200, 0) >= RATE_MIN);
  T_ASSERT(spyH_mark_signals() > n0); /* the signals did the marking */
}

/* The host ticks every 8th poll (gt_work polls every ~100 ns or so). */
static void rate_tick(void) {
  T_ASSERT(rate_of(SPY_MARKER_TICK, 1000 * US, 200, 8) >= RATE_MIN);
  T_ASSERT(rate_of(SPY_MARKER_TICK, 100 * US, 200, 8) >= RATE_MIN);
}

/* A tick-marked host that never ticks still gets the sampler's backstop
** marks (every half drain period), so a sample is not lost forever: far
** below the asked rate, but some. */
/* spy_tick_next: an interrupt check whose countdown the library sets
** (at most 1024 polls, ~100 us here): the rate comes from the countdowns
** it returns, not from a fixed tick period. A deadline that passes while
** the thread is descheduled in its last approach is skipped (its time
** goes to the samples after it: vm-hooks/mark.c), so on a loaded machine
** (the suite runs two tests at once on two cores) fewer samples may be
** taken: 88.5 % and 75.5 % at 1 kHz in two CI check stages (with the
** thread on the CPU throughout; 100-112 % in every run here, alone or
** beside a busy loop). 80 %, and one more try, here; bench/cost.sh
** measures the idle machine's (97-99.6 %). */
#define RATE_MIN_SKIP (T_TSAN ? 0.5 : 0.8)
static void rate_tick_next(void) {
  static const uint64_t iv[] = {1000 * US, 100 * US};
  for (int i = 0; i < 2; i++) {
    double r = rate_of(SPY_MARKER_TICK, iv[i], 200, -1024);
    if (r < RATE_MIN_SKIP) {
      fprintf(stderr, "rate %.1f %% of the asked: once more\n", 100 * r);
      r = rate_of(SPY_MARKER_TICK, iv[i], 200, -1024);
    }
    T_ASSERT(r >= RATE_MIN_SKIP);
  }
}

static void tick_backstop(void) {
  double r = rate_of(SPY_MARKER_TICK, 100 * US, 200, 0);
  T_ASSERT(r > 0.0 && r < 0.2);
}

/* The process's threads named "spyon-sampler" (sampler/sampler.c; not
** a count of all threads: the sanitizers' runtimes make their own). */
static int samplers(void) {
  DIR *d = opendir("/proc/self/task");
  T_ASSERT(d != NULL);
  int n = 0;
  for (struct dirent *e; (e = readdir(d));) {
    char path[300], comm[32] = "";
    if (e->d_name[0] == '.') continue;
    snprintf(path, sizeof path, "/proc/self/task/%s/comm", e->d_name);
    FILE *f = fopen(path, "r");
    if (!f) continue; /* exited since */
    if (fgets(comm, sizeof comm, f)) n += !strcmp(comm, "spyon-sampler\n");
    fclose(f);
  }
  closedir(d);
  return n;
}

typedef struct second {
  spy_profiler *p;
  int rc, samplers;
} second;

/* A second thread attaches, counts the sampler threads, detaches. */
static void *attach_second(void *arg) {
  second *sc = arg;
  gt_host *h = gt_new(sc->p);
  if (!h) return NULL;
  if ((sc->rc = gt_attach(h)) == 0) {
    sc->samplers = samplers();
    sc->rc = gt_detach(h);
  }
  gt_free(h);
  return NULL;
}

/* spy_options.self_drain: with spy_tick_next, the one attached thread
** drains its own rings and the process makes no sampler thread; the
** profile fills while it runs (the drains, 1, 2, 4, 8 ms into the run and
** then every 10 ms: about 22 in 200 ms) and gets its samples; a second
** attach starts the sampler thread. Only with the tick marker, without
** native stacks. */
static void self_drain(void) {
  spy_options o;
  spy_options_init(&o);
  spy_profiler *p = NULL;
  o.self_drain = 1; /* the thread marker */
  T_EQ_INT(spy_profiler_new(&p, &o), SPY_EINVAL);
  o.marker = SPY_MARKER_TICK;
  o.native_stacks = 1;
  T_EQ_INT(spy_profiler_new(&p, &o), SPY_EINVAL);
  o.native_stacks = 0;
  o.self_drain = 2;
  T_EQ_INT(spy_profiler_new(&p, &o), SPY_EINVAL);
  o.self_drain = 1;
  uint64_t iv = 100 * US;
  p = new_prof(iv, SPY_MODE_POLL, &o);
  gt_host *h = gt_new(p);
  T_ASSERT(h != NULL);
  h->tick_every = -1024;
  gt_method(h, 1, "Work>>run");
  T_EQ_INT(gt_attach(h), 0);
  session ss;
  start(p, h, &ss);
  T_EQ_INT(samplers(), 0);
  gt_enter(h, 1);
  uint64_t t0 = gt_now();
  while (gt_now() - t0 < 200 * MS) gt_work(h, 100 * US);
  spy_counters c;
  T_EQ_INT(spy_counters_get(p, &c), 0);
  fprintf(stderr, "self-drained %llu times, %llu samples, in 200 ms\n",
          (unsigned long long)c.drains, (unsigned long long)c.samples);
  T_ASSERT(c.drains >= 10 && c.samples >= 200);
  second sc = {p, -1, 0};
  pthread_t th;
  T_EQ_INT(pthread_create(&th, NULL, attach_second, &sc), 0);
  pthread_join(th, NULL);
  T_EQ_INT(sc.rc, 0);
  T_EQ_INT(sc.samplers, 1);
  gt_leave(h);
  spy_profile *pr = stop_take(p, h, &ss);
  double cpu = (double)(h->cpu_end - h->cpu_begin);
  double r = (double)pr->tallies / (cpu / (double)iv);
  fprintf(stderr, "%llu samples in %.0f ms CPU: %.1f %% of the asked\n",
          (unsigned long long)pr->tallies, cpu / 1e6, 100 * r);
  T_ASSERT(r >= RATE_MIN_SKIP);
  host_free(h, pr);
}

/* The signal handler keeps errno: a thread that sets errno and checks it
** while its timer fires sees its own value every time. */
static void signal_errno(void) {
  spy_options o;
  spy_options_init(&o);
  o.marker = SPY_MARKER_SIGNAL;
  spy_profiler *p = new_prof(50 * US, SPY_MODE_POLL, &o);
  gt_host *h = gt_new(p);
  T_ASSERT(h != NULL);
  T_EQ_INT(gt_attach(h), 0);
  T_EQ_INT(spy_start(p), 0);
  uint64_t n0 = spyH_mark_signals(), t0 = gt_now();
  long bad = 0;
  while (gt_now() - t0 < 100 * MS || spyH_mark_signals() - n0 < 20) {
    errno = 4242;
    gt_burn_units(100);
    if (errno != 4242) bad++;
    if (gt_now() - t0 > 5000 * MS) break;
  }
  T_EQ_INT(bad, 0);
  T_ASSERT(spyH_mark_signals() - n0 >= 20);
  T_EQ_INT(spy_stop(p), 0);
  T_EQ_INT(gt_detach(h), 0);
  gt_free(h);
  T_EQ_INT(spy_profiler_free(p), 0);
}

static void other_handler(int sig) { (void)sig; }

/* A host that owns the marker's signal is not overridden: attach says so,
** and the handler stays the host's. */
static void signal_owned(void) {
  struct sigaction sa, cur;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = other_handler;
  sigemptyset(&sa.sa_mask);
  T_EQ_INT(sigaction(SPYH_MARK_SIG, &sa, NULL), 0);
  spy_options o;
  spy_options_init(&o);
  o.marker = SPY_MARKER_SIGNAL;
  spy_profiler *p = new_prof(0, SPY_MODE_POLL, &o);
  gt_host *h = gt_new(p);
  T_ASSERT(h != NULL);
  T_EQ_INT(gt_attach(h), SPY_EEXIST);
  T_EQ_INT(sigaction(SPYH_MARK_SIG, NULL, &cur), 0);
  T_ASSERT(cur.sa_handler == other_handler);
  gt_free(h);
  T_EQ_INT(spy_profiler_free(p), 0);
  o.marker = (spy_marker)7;
  T_EQ_INT(spy_profiler_new(&p, &o), SPY_EINVAL);
  /* Below 50 us a thread would livelock in signal delivery on a VM. */
  o.marker = SPY_MARKER_SIGNAL;
  o.interval_ns = 49999;
  T_EQ_INT(spy_profiler_new(&p, &o), SPY_EINVAL);
  o.interval_ns = 50000;
  T_EQ_INT(spy_profiler_new(&p, &o), 0);
  T_EQ_INT(spy_profiler_free(p), 0);
}

static atomic_int spin_stop;

/* Pin the calling thread to one CPU the process may use (the first;
** the same one for the test thread and its busy competitor), keeping the
** test thread's mask for unpin. */
static cpu_set_t allowed;
static int shared_cpu = -1;

static void pin_shared_cpu(void) {
  if (shared_cpu < 0) {
    T_EQ_INT(sched_getaffinity(0, sizeof allowed, &allowed), 0);
    for (int i = 0; i < CPU_SETSIZE && shared_cpu < 0; i++)
      if (CPU_ISSET(i, &allowed)) shared_cpu = i;
    T_ASSERT(shared_cpu >= 0);
  }
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(shared_cpu, &set);
  T_EQ_INT(sched_setaffinity(0, sizeof set, &set), 0);
}

static void *spinner(void *arg) {
  (void)arg;
  pin_shared_cpu();
  while (!atomic_load_explicit(&spin_stop, memory_order_relaxed))
    gt_burn_units(1000);
  return NULL;
}

static void unpin(void) {
  if (shared_cpu >= 0) sched_setaffinity(0, sizeof allowed, &allowed);
}

/* With the tick marker and a host that ticks at its brackets, every leaf
** of the standard program (methods, long and short primitives, GC) gets
** its true share: a sample falling due inside a primitive is charged to
** it, not to the code after it. With `competitor`, a busy thread shares
** the test thread's core: the thread is preempted every few milliseconds,
** and a deadline passed while it was out before a primitive's call is the
** caller's (wall clock), found by the begin's clock read.
**
** A first miss is run once more whatever the stall, as the contract
** tests' (tests/test_contract.h, again): a clean-clone CI run's check
** read prim 0 at 35.8 % for 32.5 % (tolerance 2.4 pp) with self_drain,
** the thread not stalled, where 24 runs here, alone or beside the core
** suite or the competitor test, read within 1.4 pp. The long primitive
** reads +0.8 pp over its truth on average with the tick marker (+0.3 with
** the sampler thread's): the near visits' time is left out of the
** program's (vm-hooks/due.h), and the truth charges it to the callers.
** A bias misses every attempt. */
static void leaves_ticking(const char *what, int tick_every, int competitor,
                           int self_drain) {
  for (int attempt = 1;; attempt++) {
    spy_options o;
    spy_options_init(&o);
    o.marker = SPY_MARKER_TICK;
    o.self_drain = self_drain;
    gt_std s;
    gt_host *h = std_host(&o, &s, tick_every, 0);
    pthread_t th;
    if (competitor) {
      pin_shared_cpu();
      atomic_store(&spin_stop, 0);
      T_EQ_INT(pthread_create(&th, NULL, spinner, NULL), 0);
    }
    session ss;
    start(h->prof, h, &ss);
    gt_std_run(h, &s, 1000 * MS, 42);
    spy_profile *pr = stop_take(h->prof, h, &ss);
    if (competitor) {
      atomic_store(&spin_stop, 1);
      pthread_join(th, NULL);
      unpin();
    }
    double den = (double)gt_process_totals(pr), n = (double)pr->tallies;
    double f = gt_stall(h);
    int bad = 0;
    T_ASSERT(den > 0);
    for (uint64_t k = 1; k < GT_MAX_KEYS; k++) {
      if (!h->t_method[k]) continue;
      double tr = truth_pct(h, h->t_method[k]);
      double pf = self_pct(pr, SPY_FRAME_METHOD, k, den);
      double tol = share_tol_pp(tr / 100, n, f);
      if (fabs(tr - pf) > tol) {
        fprintf(stderr, "  method %s: truth %.2f profile %.2f tol %.2f\n",
                h->names[k] ? h->names[k] : "?", tr, pf, tol);
        bad++;
      }
    }
    for (int i = 0; i < GT_MAX_PRIMS; i++) {
      if (!h->t_prim[i]) continue;
      double tr = truth_pct(h, h->t_prim[i]);
      double pf = self_pct(pr, SPY_FRAME_PRIM, (uint64_t)i, den);
      double tol = share_tol_pp(tr / 100, n, f);
      if (fabs(tr - pf) > tol || getenv("SPY_TEST_SHARES")) {
        fprintf(stderr, "  prim %d: truth %.2f profile %.2f tol %.2f\n", i,
                tr, pf, tol);
        bad += fabs(tr - pf) > tol;
      }
    }
    host_free(h, pr);
    if (!bad) return;
    if (!(competitor ? attempt < ATTEMPTS : retry_miss(attempt, f)))
      T_FAIL("%s: %d leaf share(s) off (stalled %.0f%%)", what, bad, 100 * f);
    fprintf(stderr, "%s: attempt %d missed (stalled %.0f%%); retrying\n",
            what, attempt, 100 * f);
  }
}

/* spy_tick at every 8th poll and at the brackets. */
static void leaves_tick(void) { leaves_ticking("leaves_tick", 8, 0, 0); }

/* spy_tick_next setting the countdown of the polls (at most 1024), no
** tick at the brackets: the deadlines' near states take the samples. */
static void leaves_tick_next(void) {
  leaves_ticking("leaves_tick_next", -1024, 0, 0);
}

/* The same with the thread draining its own rings (spy_options.
** self_drain): the drains' time, in the ticks, must not go to the code
** around them. */
static void leaves_self_drain(void) {
  leaves_ticking("leaves_self_drain", -1024, 0, 1);
}

/* The same beside a busy thread on the thread's core. Without the begin's
** watch (or with a deschedule check that misses preemptions) the
** primitives take the samples that fell due while their callers were out:
** prim 0 at 44-53 % for 33 %. */
static void leaves_tick_next_competitor(void) {
  leaves_ticking("leaves_tick_next_competitor", -1024, 1, 0);
}

/* A deadline that passes while the thread is off the CPU just before a
** primitive's call is the caller's: a method is interrupted by a signal
** whose handler sleeps 2 ms (wall clock: the method's time, as a
** preemption's would be), then calls a 5 us primitive. The primitive's
** end finds the deadlines passed; without the begin's clock read the
** primitive takes the sleeps (78 % for 0.24 %). */
static void nap_2ms(int sig) {
  (void)sig;
  struct timespec nap = {0, 2000000};
  nanosleep(&nap, NULL);
}

static void descheduled_before_call(void) {
  struct sigaction sa, old;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = nap_2ms;
  sigemptyset(&sa.sa_mask);
  T_EQ_INT(sigaction(SIGUSR1, &sa, &old), 0);
  spy_options o;
  spy_options_init(&o);
  o.marker = SPY_MARKER_TICK;
  /* 1 ms: after each sample the next deadline is most often farther than
  ** the method's 20 us of work, and the thread not near it (a near state
  ** makes the begin read the clock anyway). */
  o.interval_ns = 1000000;
  gt_std s;
  gt_host *h = std_host(&o, &s, -1024, 0);
  /* No cost observations: an observed call's begin reads the clock. */
  int hash = spy_prim_register(h->prof, "Object>>hash", NULL, 0);
  T_ASSERT(hash >= 0);
  session ss;
  start(h->prof, h, &ss);
  uint64_t key = s.key_base + GT_K_MAIN, t0 = gt_now();
  while (gt_now() - t0 < 300 * MS) {
    gt_enter(h, key);
    gt_work(h, 20 * US);
    pthread_kill(pthread_self(), SIGUSR1);
    gt_prim(h, hash, 0, NULL, 5 * US);
    gt_leave(h);
  }
  spy_profile *pr = stop_take(h->prof, h, &ss);
  T_EQ_INT(sigaction(SIGUSR1, &old, NULL), 0);
  double den = (double)gt_process_totals(pr), n = (double)pr->tallies;
  double tr = truth_pct(h, h->t_prim[hash]);
  double pf = self_pct(pr, SPY_FRAME_PRIM, (uint64_t)hash, den);
  fprintf(stderr, "  prim: truth %.2f profile %.2f (%.0f samples)\n", tr, pf,
          n);
  T_ASSERT(n > 100);
  T_NEAR(pf, tr, share_tol_pp(tr / 100, n, 0) + 1.0);
  host_free(h, pr);
}

/* A deadline that passes in host code with no check in it, just before
** a primitive's call, is the caller's too: no tick can go near there, and
** only a clock read at the begin sees it. A method calls a 2 us
** primitive, works 3 us with no poll and no check (the VM's own code
** between two checks: an inlined loop, a stretch of C), calls a 0.3 us
** primitive, and works 5 us polling. Until 12-07 a begin skipped the
** clock read while the thread had not been preempted since the last one
** that read it (Linux's rseq word), on the premise that the host's ticks
** watch every stretch between two hooks: the short primitive's end took
** the stretch's deadlines, 28-35 % for 3 % (the 2 us one's end watches
** only its own). Each share within its tolerance and 1.5 pp: the near
** visits' time, left out of the program's (leaves_ticking), moves 1-2 pp
** from the method to the primitives here (6 runs, 12-08: the 2 us one
** -1.7 to +0.4 pp, the 0.3 us one +0.6 to +1.5).
**
** The polled work varies from 3 to 7 us: a loop of one fixed length
** (11.1 us with the hooks) against the 100 us grid is 9 loops a sample,
** phase-locked, and the deadlines kept falling in the same places -- the
** shares moved with the build's code layout and the machine's load by
** 5 pp in runs of one build (prim 2 at 12.6-13.5 % for 18.4 in three CI
** dry runs of 12-07, 18-20 % in the others). Under TSan the hooks' own
** code is instrumented and takes a large part of the loop: the 0.3 us
** primitive reads 2.5-4x its truth of 2.7 % (the profile's interval of
** a primitive runs from its begin's clock read to its end's, the truth's
** between the hooks), so there each share is given 6 pp more -- still
** far from the 28-35 % a missed deadline gives. */
#define CHECKFREE_SLACK_PP (T_TSAN ? 6.0 : 1.5)
static void checkfree_before_call(void) {
  for (int attempt = 1;; attempt++) {
    spy_options o;
    spy_options_init(&o);
    o.marker = SPY_MARKER_TICK;
    gt_std s;
    gt_host *h = std_host(&o, &s, -1024, 0);
    int pa = spy_prim_register(h->prof, "Long>>a", NULL, 0);
    int pb = spy_prim_register(h->prof, "Short>>b", NULL, 0);
    T_ASSERT(pa >= 0 && pb >= 0);
    session ss;
    start(h->prof, h, &ss);
    uint64_t key = s.key_base + GT_K_MAIN, t0 = gt_now(), seed = 7;
    gt_enter(h, key);
    while (gt_now() - t0 < 500 * MS) {
      gt_prim(h, pa, 0, NULL, 2 * US);
      gt_work_nopoll(h, 3 * US);
      gt_prim(h, pb, 0, NULL, 300);
      gt_work(h, gt_rand_range(&seed, 3 * US, 7 * US));
    }
    gt_leave(h);
    spy_profile *pr = stop_take(h->prof, h, &ss);
    double den = (double)gt_process_totals(pr), n = (double)pr->tallies;
    double f = gt_stall(h);
    int bad = 0;
    const int prims[2] = {pa, pb};
    for (int i = 0; i < 2; i++) {
      double tr = truth_pct(h, h->t_prim[prims[i]]);
      double pf = self_pct(pr, SPY_FRAME_PRIM, (uint64_t)prims[i], den);
      double tol = share_tol_pp(tr / 100, n, f) + CHECKFREE_SLACK_PP;
      fprintf(stderr, "  prim %d: truth %.2f profile %.2f tol %.2f\n",
              prims[i], tr, pf, tol);
      bad += fabs(tr - pf) > tol;
    }
    double tr = truth_pct(h, h->t_method[key]);
    double pf = self_pct(pr, SPY_FRAME_METHOD, key, den);
    double tol = share_tol_pp(tr / 100, n, f) + CHECKFREE_SLACK_PP;
    fprintf(stderr, "  method: truth %.2f profile %.2f tol %.2f\n", tr, pf,
            tol);
    bad += fabs(tr - pf) > tol;
    T_ASSERT(n > 1000);
    host_free(h, pr);
    if (!bad) return;
    if (!retry_miss(attempt, f))
      T_FAIL("%d leaf share(s) off (stalled %.0f%%)", bad, 100 * f);
    fprintf(stderr, "attempt %d missed (stalled %.0f%%); retrying\n",
            attempt, 100 * f);
  }
}

/* The CPU clock's leaves, alone and beside a competing busy thread on the
** same core (`competitor`). The host counts its truth in CPU time too, and
** runs until its thread has had 300 ms of CPU (at most 20 s of wall
** time). The weights add up to the thread's CPU time; each primitive's
** share is within its tolerance. Until 12-08 a sample weighed the CPU
** time up to its take rather than its grid point: the long primitive (45
** us, no poll inside), whose end takes the samples that fall due in it,
** read 39-40 % for a truth of 30.5 % alone and 35-40 % beside the busy
** thread; now within 2 pp alone and 3 pp beside it (12-08). */
static void cpu_clock_leaves_run(int competitor) {
  pthread_t th;
  if (competitor) {
    pin_shared_cpu();
    atomic_store(&spin_stop, 0);
    T_EQ_INT(pthread_create(&th, NULL, spinner, NULL), 0);
  }
  spy_options o;
  spy_options_init(&o);
  o.clock = SPY_CLOCK_CPU;
  gt_std s;
  gt_host *h = std_host(&o, &s, 0, 1);
  session ss;
  start(h->prof, h, &ss);
  uint64_t w0 = gt_now();
  double c0 = cpu_ms();
  for (uint64_t seed = 42; cpu_ms() - c0 < 300 && gt_now() - w0 < 20000 * MS;
       seed++)
    gt_std_run(h, &s, 50 * MS, seed);
  spy_profile *pr = stop_take(h->prof, h, &ss);
  if (competitor) {
    atomic_store(&spin_stop, 1);
    pthread_join(th, NULL);
    unpin();
  }
  T_EQ_STR(pr->clock, "cpu");
  double cpu = (double)(h->cpu_end - h->cpu_begin);
  double tot = (double)gt_process_totals(pr);
  fprintf(stderr, "cpu clock: weights %.1f ms, thread CPU %.1f ms, wall "
          "%.1f ms\n", tot / 1e6, cpu / 1e6, (double)pr->wall_ns / 1e6);
  T_NEAR(tot, cpu, 0.03 * cpu + 2e6);
  double n = (double)pr->tallies;
  int bad = 0;
  for (int i = 0; i < GT_MAX_PRIMS; i++) {
    if (!h->t_prim[i]) continue;
    double tr = truth_pct(h, h->t_prim[i]);
    double pf = self_pct(pr, SPY_FRAME_PRIM, (uint64_t)i, tot);
    double tol = share_tol_pp(tr / 100, n, gt_stall(h));
    fprintf(stderr, "  prim %d: truth %.2f profile %.2f tol %.2f\n", i, tr,
            pf, tol);
    bad += fabs(tr - pf) > tol;
  }
  T_EQ_INT(bad, 0);
  host_free(h, pr);
}

static void cpu_clock_leaves(void) { cpu_clock_leaves_run(0); }
static void cpu_clock_competitor(void) { cpu_clock_leaves_run(1); }

const struct spy_test t_mark[] = {
    {"clock_rate", clock_rate, 0},
    {"rate_thread", rate_thread, 0},
    {"rate_signal", rate_signal, 0},
    {"rate_tick", rate_tick, 0},
    {"rate_tick_next", rate_tick_next, 0},
    {"tick_backstop", tick_backstop, 0},
    {"self_drain", self_drain, 0},
    {"signal_errno", signal_errno, 0},
    {"signal_owned", signal_owned, 0},
    {"leaves_tick", leaves_tick, 0},
    {"leaves_tick_next", leaves_tick_next, 0},
    {"leaves_self_drain", leaves_self_drain, 0},
    {"leaves_tick_next_competitor", leaves_tick_next_competitor, 0},
    {"cpu_clock_leaves", cpu_clock_leaves, 0},
    {"cpu_clock_competitor", cpu_clock_competitor, 0},
    {"descheduled_before_call", descheduled_before_call, 0},
    {"checkfree_before_call", checkfree_before_call, 0},
    {0, 0, 0},
};
