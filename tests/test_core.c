/*
** tests/test_core.c: the "core" suite, the ground-truth proof of the hooks
** and the sampler.
**
** Every test runs a program on the ground-truth host (tests/gt/gthost.h),
** which measures what really happened, and compares the profile with it.
**
** Tolerances, derived once here and used throughout:
**  - A share p (a leaf's or a process's fraction of the time) measured from
**    N samples has a sampling error of about sqrt(p(1-p)/N). We allow 4 such
**    sigmas plus a systematic 0.5 percentage point (pp) for what the host and
**    the hooks themselves cost and for clock checks that come a few polls
**    after a grid point. At 10 kHz over 1 s (N = 10000) and p = 0.3 that
**    is 2.3 pp; grid sampling is in practice much tighter than binomial.
**  - Stalls: when the interpreter thread is preempted, the profiler notices
**    only at its next clock check, so a stall can be charged to code that
**    runs a little later. The host measures the stall fraction f (1 - CPU
**    time / wall time of its thread) and the systematic term grows by
**    STALL_PP * f (10 pp per unit: 0.3 pp on a quiet machine, 6 pp when the
**    thread gets only 40 % of a CPU). The long leaf-share tests retry (at
**    most 3 runs) when a run fails while the thread was stalled > 10 %.
**  - Exact durations (primitives, GC, regions) are bracketed by the host:
**    "inner" (between the hook calls) and "outer" (around them). The
**    profiler reads its clock inside the hooks, so its figure must lie in
**    [inner, outer], widened by CLK_REL (TSC calibration against
**    CLOCK_MONOTONIC) and CLK_ABS_NS per call.
**  - Counts (calls, GC pauses, region entries) are exact.
** The whole suite takes about 10 s of wall time (more when a stalled run
** is retried).
*/
#include "config.h"

#include "tests/test_core.h"

#include <pthread.h>
#include <unistd.h>

/* ------------------------------------------------------------------------
** Leaf comparison against the host's truth
** --------------------------------------------------------------------- */

typedef struct leafrow {
  char name[64];
  double truth, prof, tol; /* percent */
} leafrow;

typedef struct leaftab {
  leafrow row[96];
  int n, bad;
  double stall;
} leaftab;

static void leaf_add(leaftab *t, const char *name, double truth, double prof,
                     double tol) {
  if (t->n >= 96) return;
  leafrow *r = &t->row[t->n++];
  snprintf(r->name, sizeof r->name, "%s", name);
  r->truth = truth;
  r->prof = prof;
  r->tol = tol;
  if (fabs(truth - prof) > tol) t->bad++;
}

static void leaf_print(const leaftab *t, const char *what) {
  fprintf(stderr, "%s: leaf shares (%%) vs ground truth (thread stalled "
          "%.0f%% of the time)\n", what, 100 * t->stall);
  fprintf(stderr, "  %-28s %8s %8s %8s\n", "leaf", "truth", "profile", "tol");
  for (int i = 0; i < t->n; i++)
    fprintf(stderr, "  %-28s %8.2f %8.2f %8.2f%s\n", t->row[i].name,
            t->row[i].truth, t->row[i].prof, t->row[i].tol,
            fabs(t->row[i].truth - t->row[i].prof) > t->row[i].tol ? "  <--"
                                                                   : "");
}

static void leaf_check(const leaftab *t, const char *what) {
  if (!t->bad) return;
  leaf_print(t, what);
  T_FAIL("%s: %d leaf share(s) off by more than the tolerance", what,
         t->bad);
}

/* After a failed attempt: 1 to try again (retry_miss), else 0 (the caller
** fails). A first miss is run again whatever the stall: ./build.sh check
** on a noisy evening read the long primitive of core/multi_thread at
** 37.1 % for 33.7 % (tolerance 3.0 pp), the thread not stalled, then it
** passed alone. */
static int retry(const leaftab *t, const char *what, int attempt) {
  if (!t->bad || !retry_miss(attempt, t->stall)) return 0;
  leaf_print(t, what);
  fprintf(stderr, "%s: attempt %d missed (stalled %.0f%%); retrying\n", what,
          attempt, 100 * t->stall);
  return 1;
}

/* Compare every leaf of host h (methods, primitives, GC) in process proc
** (-1: all) with the profile. Shares are of truth_den / prof_den; n is the
** number of samples behind the profile's shares. */
static void compare_leaves(leaftab *t, const spy_profile *pr, const gt_host *h,
                           int proc, double truth_den, double prof_den,
                           double n) {
  double f = gt_stall(h);
  t->stall = f;
  for (uint64_t k = 1; k < GT_MAX_KEYS; k++) {
    if (!h->t_method[k]) continue;
    double tr = 100.0 * (double)h->t_method[k] / truth_den;
    uint32_t fr = gt_find_frame(pr, SPY_FRAME_METHOD, k);
    double pf = 100.0 * (double)gt_frame_self(pr, fr, proc) / prof_den;
    leaf_add(t, h->names[k] ? h->names[k] : "?", tr, pf,
             share_tol_pp(tr / 100, n, f));
  }
  for (int i = 0; i < GT_MAX_PRIMS; i++) {
    if (!h->t_prim[i]) continue;
    double tr = 100.0 * (double)h->t_prim[i] / truth_den;
    uint32_t fr = gt_find_frame(pr, SPY_FRAME_PRIM, (uint64_t)i);
    double pf = 100.0 * (double)gt_frame_self(pr, fr, proc) / prof_den;
    leaf_add(t, fr != SPY_NONE ? pr->frames[fr].name : "prim?", tr, pf,
             share_tol_pp(tr / 100, n, f));
  }
  if (h->t_root) { /* between top-level calls: the polls at sends take
                      samples before the callee's frame exists */
    double tr = 100.0 * (double)h->t_root / truth_den;
    uint32_t fr = gt_find_frame(pr, SPY_FRAME_ROOT, 0);
    double pf = 100.0 * (double)gt_frame_self(pr, fr, proc) / prof_den;
    leaf_add(t, "(root)", tr, pf, share_tol_pp(tr / 100, n, f));
  }
  if (h->t_gc) {
    double tr = 100.0 * (double)h->t_gc / truth_den;
    uint32_t fr = SPY_NONE;
    for (size_t i = 0; i < pr->nframes; i++)
      if (pr->frames[i].kind == SPY_FRAME_GC) fr = (uint32_t)i;
    double pf = 100.0 * (double)gt_frame_self(pr, fr, proc) / prof_den;
    leaf_add(t, "GC", tr, pf, share_tol_pp(tr / 100, n, f));
  }
}


/* ------------------------------------------------------------------------
** Attribution
** --------------------------------------------------------------------- */

/* Each leaf's share of the standard program (methods, two primitives, GC)
** in poll mode at 10 kHz over 1 s equals the truth within the sampling
** tolerance; no unknown frame gets more than the systematic term. Frame
** names are the host's. */
static void leaves_poll(void) {
  for (int attempt = 1;; attempt++) {
    spy_profiler *p = new_prof(0, SPY_MODE_POLL, NULL);
    gt_host *h;
    gt_std s;
    session ss;
    spy_profile *pr = run_std(p, &h, &s, 1000 * MS, &ss, 0);
    double den = (double)gt_process_totals(pr);
    T_ASSERT(den > 0);
    leaftab t = {0};
    compare_leaves(&t, pr, h, -1, (double)h->t_total, den,
                   (double)pr->tallies);
    if (retry(&t, "leaves_poll", attempt)) {
      run_free(p, h, pr);
      continue;
    }
    leaf_check(&t, "leaves_poll");
    /* Nothing else carries real time. */
    spy_leaf lv[64];
    int n = spy_profile_leaves(pr, lv, 64);
    T_ASSERT(n > 0);
    for (int i = 0; i < n; i++) {
      const spy_frame *f = &pr->frames[lv[i].frame];
      int known = (f->kind == SPY_FRAME_METHOD && f->key < GT_MAX_KEYS &&
                   h->t_method[f->key]) ||
                  (f->kind == SPY_FRAME_PRIM && f->key < GT_MAX_PRIMS &&
                   h->t_prim[f->key]) ||
                  f->kind == SPY_FRAME_GC ||
                  (f->kind == SPY_FRAME_ROOT && h->t_root);
      if (!known && 100.0 * (double)lv[i].self_ns / den > SYS_PP)
        T_FAIL("unexpected leaf %s with %.2f%%", f->name,
               100.0 * (double)lv[i].self_ns / den);
    }
    /* The overhead estimate is there and plausible (under 10 %). */
    T_ASSERT(pr->hook_ns > 0 && pr->hook_ns < pr->wall_ns / 10);
    T_ASSERT(strcmp(pr->clock, "tsc") == 0 ||
             strcmp(pr->clock, "clock_gettime") == 0);
    /* Leaves come heaviest first and agree with the tree. */
    for (int i = 1; i < n; i++) T_ASSERT(lv[i - 1].self_ns >= lv[i].self_ns);
    T_EQ_INT(lv[0].self_ns, gt_frame_self(pr, lv[0].frame, -1));
    /* Eagerly named keys carry the host's names. */
    uint32_t f = gt_find_frame(pr, SPY_FRAME_METHOD, GT_K_PARSE);
    T_ASSERT(f != SPY_NONE);
    T_EQ_STR(pr->frames[f].name, "Parser>>parse");
    f = gt_find_frame(pr, SPY_FRAME_PRIM, (uint64_t)s.mul);
    T_ASSERT(f != SPY_NONE);
    T_EQ_STR(pr->frames[f].name, "LargeInt>>mul");
    run_free(p, h, pr);
    return;
  }
}

/* Totals add up: the sum of the process totals equals wall_ns (within 1 %,
** by construction it should be exact), wall_ns lies between the host's
** inner and outer start..stop brackets (within CLK_REL + 200 us), and the
** tallies are at most one per interval. */
static void totals_wall(void) {
  spy_profiler *p = new_prof(0, SPY_MODE_POLL, NULL);
  gt_host *h;
  gt_std s;
  session ss;
  spy_profile *pr = run_std(p, &h, &s, 500 * MS, &ss, 1);
  double sum = (double)gt_process_totals(pr), wall = (double)pr->wall_ns;
  T_NEAR(sum, wall, 0.01 * wall);
  double lo = (double)(ss.stop0 - ss.start1);
  double hi = (double)(ss.stop1 - ss.start0);
  T_ASSERT(wall >= lo * (1 - CLK_REL) - 200e3);
  T_ASSERT(wall <= hi * (1 + CLK_REL) + 200e3);
  T_EQ_INT(pr->interval_ns, 100000);
  T_EQ_INT(pr->mode, SPY_MODE_POLL);
  T_ASSERT(pr->tallies > 0);
  T_ASSERT((double)pr->tallies <= wall / 1e5 + 2);
  totals_add_up(pr);
  run_free(p, h, pr);
}

/* Default options (10 kHz, 4 MiB ring) over 1 s drop nothing. */
static void zero_drops(void) {
  spy_profiler *p = new_prof(0, SPY_MODE_POLL, NULL);
  gt_host *h;
  gt_std s;
  session ss;
  spy_profile *pr = run_std(p, &h, &s, 1000 * MS, &ss, 0);
  spy_counters c;
  T_EQ_INT(spy_counters_get(p, &c), 0);
  T_EQ_INT(c.dropped, 0);
  T_EQ_INT(c.obs_dropped, 0);
  T_EQ_INT(pr->dropped, 0);
  T_EQ_INT(pr->obs_dropped, 0);
  T_EQ_INT(c.samples, pr->tallies);
  /* About one sample per grid point was taken while the thread ran: at
  ** least half of (1 - stall) * wall / interval (a stall merges the grid
  ** points it spans into one sample). */
  double grid = (1 - gt_stall(h)) * (double)pr->wall_ns / 1e5;
  if (!((double)pr->tallies >= 0.5 * grid))
    T_FAIL("%" PRIu64 " tallies in %" PRIu64 " ns at 10 kHz (thread stalled "
           "%.0f%%)", pr->tallies, pr->wall_ns, 100 * gt_stall(h));
  run_free(p, h, pr);
}

/* The MessageTally trap: a long primitive (~1 ms, no polls inside) followed
** by a cheap method (~25 us). Returns the profile; *cheap_key etc. out. */
enum { K_LOOP = 31, K_CHEAP = 32 };

static spy_profile *run_trap(spy_mode mode, gt_host **hout, int *prim) {
  spy_profiler *p = new_prof(0, mode, NULL);
  *prim = spy_prim_register(p, "LargeInt>>raisedTo:", "n", 0);
  T_ASSERT(*prim >= 0);
  gt_host *h = gt_new(p);
  gt_method(h, K_LOOP, "Bench>>loop");
  gt_method(h, K_CHEAP, "SmallInt>>+");
  T_EQ_INT(gt_attach(h), 0);
  session ss;
  start(p, h, &ss);
  uint64_t rng = 7, end = gt_now() + 600 * MS;
  gt_enter(h, K_LOOP);
  while (gt_now() < end) {
    uint64_t n = gt_rand_range(&rng, 700, 1300);
    gt_prim(h, *prim, 1, &n, n * US);
    gt_enter(h, K_CHEAP);
    gt_work(h, gt_rand_range(&rng, 12, 38) * US);
    gt_leave(h);
  }
  gt_leave(h);
  spy_profile *pr = stop_take(p, h, &ss);
  T_NEAR((double)gt_process_totals(pr), (double)pr->wall_ns,
         0.01 * (double)pr->wall_ns);
  gt_detach(h);
  T_EQ_INT(spy_profiler_free(p), 0);
  *hout = h;
  return pr;
}

/* Poll mode: the cheap method gets its true ~2.5 % and the primitive its
** ~97 % (sampling tolerance). */
static void trap_poll(void) {
  gt_host *h;
  int prim;
  spy_profile *pr = run_trap(SPY_MODE_POLL, &h, &prim);
  double den = (double)gt_process_totals(pr), n = (double)pr->tallies;
  double tc = 100.0 * (double)h->t_method[K_CHEAP] / (double)h->t_total;
  double tp = 100.0 * (double)h->t_prim[prim] / (double)h->t_total;
  double pc = 100.0 * (double)gt_frame_self(
      pr, gt_find_frame(pr, SPY_FRAME_METHOD, K_CHEAP), -1) / den;
  double pp = 100.0 * (double)gt_frame_self(
      pr, gt_find_frame(pr, SPY_FRAME_PRIM, (uint64_t)prim), -1) / den;
  T_NEAR(pc, tc, share_tol_pp(tc / 100, n, gt_stall(h)));
  T_NEAR(pp, tp, share_tol_pp(tp / 100, n, gt_stall(h)));
  /* The primitive is a leaf under the method that called it. */
  for (size_t i = 0; i < pr->nnodes; i++) {
    const spy_frame *f = &pr->frames[pr->nodes[i].frame];
    if (f->kind != SPY_FRAME_PRIM) continue;
    uint32_t par = pr->nodes[i].parent;
    T_ASSERT(par != SPY_NONE);
    T_EQ_INT(pr->frames[pr->nodes[par].frame].kind, SPY_FRAME_METHOD);
    T_EQ_INT(pr->frames[pr->nodes[par].frame].key, K_LOOP);
  }
  spy_profile_free(pr);
  gt_free(h);
}

/* Timer mode (MessageTally): the same program charges the primitive's time
** to the cheap method that polls next: it gets more than half of the time
** (truth ~2.5 %) and the primitive less than 10 % (truth ~97 %). This is
** the error the product exists to fix; the test proves the comparison mode
** really reproduces it. */
static void trap_timer(void) {
  gt_host *h;
  int prim;
  spy_profile *pr = run_trap(SPY_MODE_TIMER, &h, &prim);
  T_EQ_INT(pr->mode, SPY_MODE_TIMER);
  double den = (double)gt_process_totals(pr);
  double pc = 100.0 * (double)gt_frame_self(
      pr, gt_find_frame(pr, SPY_FRAME_METHOD, K_CHEAP), -1) / den;
  double pp = 100.0 * (double)gt_frame_self(
      pr, gt_find_frame(pr, SPY_FRAME_PRIM, (uint64_t)prim), -1) / den;
  double pl = 100.0 * (double)gt_frame_self(
      pr, gt_find_frame(pr, SPY_FRAME_METHOD, K_LOOP), -1) / den;
  double tc = 100.0 * (double)h->t_method[K_CHEAP] / (double)h->t_total;
  /* The send to the cheap method polls before its frame exists, so the
  ** late sample lands on the sender or the cheap method: either way not
  ** on the primitive, which is what MessageTally gets wrong. */
  if (!(pc + pl > 50.0 && pp < 10.0))
    T_FAIL("timer mode: cheap %.2f%% + loop %.2f%% (truth %.2f%%), prim "
           "%.2f%%", pc, pl, tc, pp);
  spy_profile_free(pr);
  gt_free(h);
}

/* Two processes on one thread. Process A polls for ~20 us, then runs ~60 us
** without any poll and switches to B, which polls for ~40 us and switches
** back. In poll mode the samples that fell due in A's unpolled stretch are
** taken at the switch and charged to A, so the process shares equal the
** truth (~67 % / 33 %). In timer mode they land on B, and A gets ~17 %. */
enum { K_PA = 21, K_PB = 22 };

static spy_profile *run_switch(spy_mode mode, gt_host **hout) {
  spy_profiler *p = new_prof(0, mode, NULL);
  gt_host *h = gt_new(p);
  gt_method(h, K_PA, "ProcA>>run");
  gt_method(h, K_PB, "ProcB>>run");
  gt_process(h, 0, 10, NULL);
  gt_process(h, 1, 20, NULL);
  T_EQ_INT(gt_attach(h), 0);
  spy_process_name(h->vm, 10, "A (10)");
  spy_process_name(h->vm, 20, "B (20)");
  session ss;
  start(p, h, &ss);
  gt_enter(h, K_PA);
  gt_switch(h, 1);
  gt_enter(h, K_PB);
  gt_switch(h, 0);
  uint64_t rng = 3, end = gt_now() + 500 * MS;
  while (gt_now() < end) {
    gt_work(h, gt_rand_range(&rng, 10, 30) * US);
    gt_work_nopoll(h, gt_rand_range(&rng, 30, 90) * US);
    gt_switch(h, 1);
    gt_work(h, gt_rand_range(&rng, 20, 60) * US);
    gt_switch(h, 0);
  }
  spy_profile *pr = stop_take(p, h, &ss);
  gt_detach(h);
  T_EQ_INT(spy_profiler_free(p), 0);
  *hout = h;
  return pr;
}

static void switch_from(void) {
  gt_host *h;
  spy_profile *pr = run_switch(SPY_MODE_POLL, &h);
  int a = gt_proc_index(pr, 10), b = gt_proc_index(pr, 20);
  T_ASSERT(a >= 0 && b >= 0);
  T_EQ_STR(pr->processes[a].name, "A (10)");
  T_EQ_STR(pr->processes[b].name, "B (20)");
  double den = (double)gt_process_totals(pr), n = (double)pr->tallies;
  double ta = 100.0 * (double)h->t_proc[0] / (double)h->t_total;
  double pa = 100.0 * (double)pr->processes[a].total_ns / den;
  T_NEAR(pa, ta, share_tol_pp(ta / 100, n, gt_stall(h)));
  /* And within A, on A's own stack. */
  double tl = 100.0 * (double)h->t_method[K_PA] / (double)h->t_total;
  double pl = 100.0 * (double)gt_frame_self(
      pr, gt_find_frame(pr, SPY_FRAME_METHOD, K_PA), a) / den;
  T_NEAR(pl, tl, share_tol_pp(tl / 100, n, gt_stall(h)));
  T_EQ_INT(gt_frame_self(pr, gt_find_frame(pr, SPY_FRAME_METHOD, K_PB), a), 0);
  T_EQ_INT(gt_frame_self(pr, gt_find_frame(pr, SPY_FRAME_METHOD, K_PA), b), 0);
  spy_profile_free(pr);
  gt_free(h);
}

/* The contrast: timer mode gives A at most 60 % of its true share (a
** loaded machine moves the truth itself, so the bound is relative), 75 %
** under ASan, and a first miss runs again, as the share tests'
** (retry_miss): the polled part of A's work, the part timer mode does
** charge to A, grows when the polls run slow -- under ASan, 12-07: 60.1,
** 62.1 and 64.2 % of the truth in 3 of 7 runs, one of them a CI run
** (nothing here brackets a primitive: no change of that day runs in
** it). Poll mode's A is within a few points of the truth (switch_from). */
#define TIMER_A_MAX (T_ASAN ? 0.75 : 0.6)
static void switch_timer(void) {
  for (int attempt = 1;; attempt++) {
    gt_host *h;
    spy_profile *pr = run_switch(SPY_MODE_TIMER, &h);
    int a = gt_proc_index(pr, 10);
    T_ASSERT(a >= 0);
    double ta = 100.0 * (double)h->t_proc[0] / (double)h->t_total;
    double pa = 100.0 * (double)pr->processes[a].total_ns /
                (double)gt_process_totals(pr);
    double stall = gt_stall(h);
    spy_profile_free(pr);
    gt_free(h);
    if (pa < TIMER_A_MAX * ta) return;
    if (!retry_miss(attempt, stall))
      T_FAIL("timer mode: process A %.2f%%, truth %.2f%%", pa, ta);
    fprintf(stderr, "timer mode: process A %.2f%%, truth %.2f%% (stalled "
            "%.0f%%); retrying\n", pa, ta, 100 * stall);
  }
}

/* ------------------------------------------------------------------------
** Two interpreter threads
** --------------------------------------------------------------------- */

typedef struct worker {
  spy_profiler *p;
  gt_std s;
  uint64_t pid;
  gt_host *h;
  pthread_barrier_t *bar;
  uint64_t run_ns;  /* program time (0: 600 ms) */
  unsigned idle_ms; /* then this long without any hook */
  int rc;
} worker;

/* Attach, wait for the start, run 600 ms of the standard program (each
** thread with its own keys and weights), optionally idle without hooks,
** wait for the stop, detach. */
static void *worker_main(void *arg) {
  worker *w = arg;
  w->h = gt_new(w->p);
  gt_std_define(w->h, &w->s);
  gt_process(w->h, 0, w->pid, NULL);
  w->rc = gt_attach(w->h);
  pthread_barrier_wait(w->bar); /* attached */
  pthread_barrier_wait(w->bar); /* started */
  if (w->rc == 0) {
    gt_truth_begin(w->h);
    gt_std_run(w->h, &w->s, w->run_ns ? w->run_ns : 600 * MS, w->pid);
    gt_truth_end(w->h);
    if (w->idle_ms) usleep(w->idle_ms * 1000u);
  }
  pthread_barrier_wait(w->bar); /* done */
  pthread_barrier_wait(w->bar); /* stopped */
  if (w->rc == 0) w->rc = gt_detach(w->h);
  return NULL;
}

/* One run of two threads. Both threads' leaves, each in its own process,
** equal their own truth (shares of the time each spent in the program,
** excluding the barrier waits), and each process's total equals wall_ns
** within 1 %. Returns 0 when a stalled run should be tried again. */
static int multi_once(int attempt) {
  spy_profiler *p = new_prof(0, SPY_MODE_POLL, NULL);
  pthread_barrier_t bar;
  pthread_barrier_init(&bar, NULL, 3);
  worker w[2];
  memset(w, 0, sizeof w);
  pthread_t th[2];
  gt_std base;
  T_EQ_INT(gt_std_register(p, &base), 0);
  for (int i = 0; i < 2; i++) {
    w[i].p = p;
    w[i].s = base;
    w[i].s.key_base = 100 * (uint64_t)(i + 1);
    w[i].pid = 1001 + (uint64_t)i;
    w[i].bar = &bar;
  }
  w[1].s.weight[GT_K_PARSE] = 3.0; /* a different profile per thread */
  w[1].s.weight[GT_K_STEP] = 0.3;
  for (int i = 0; i < 2; i++)
    T_EQ_INT(pthread_create(&th[i], NULL, worker_main, &w[i]), 0);
  pthread_barrier_wait(&bar);
  T_EQ_INT(spy_start(p), 0);
  pthread_barrier_wait(&bar);
  pthread_barrier_wait(&bar);
  T_EQ_INT(spy_stop(p), 0);
  pthread_barrier_wait(&bar);
  for (int i = 0; i < 2; i++) pthread_join(th[i], NULL);
  for (int i = 0; i < 2; i++) T_EQ_INT(w[i].rc, 0);
  spy_profile *pr = NULL;
  T_EQ_INT(spy_profile_take(p, &pr), 0);
  T_EQ_INT(pr->dropped, 0);
  leaftab t[2];
  memset(t, 0, sizeof t);
  for (int i = 0; i < 2; i++) {
    int pi = gt_proc_index(pr, w[i].pid);
    T_ASSERT(pi >= 0);
    const spy_process *pc = &pr->processes[pi];
    T_NEAR((double)pc->total_ns, (double)pr->wall_ns,
           0.01 * (double)pr->wall_ns);
    /* Never named with spy_process_name: named by host->process_name. */
    char want[32];
    snprintf(want, sizeof want, "process %llu",
             (unsigned long long)w[i].pid);
    T_EQ_STR(pc->name, want);
    /* Denominators: the program's time, not the waits at the barriers. */
    gt_host *h = w[i].h;
    double tden = (double)(h->t_total - h->t_root);
    double pden = 0;
    for (size_t f = 0; f < pr->nframes; f++)
      if (pr->frames[f].kind != SPY_FRAME_ROOT)
        pden += (double)gt_frame_self(pr, (uint32_t)f, pi);
    /* Keys of the other thread never appear in this process. */
    uint64_t other = w[1 - i].s.key_base;
    for (int k = 1; k < GT_K_NSTD; k++)
      T_EQ_INT(gt_frame_self(pr, gt_find_frame(pr, SPY_FRAME_METHOD, other + k),
                          pi), 0);
    double n = (double)pc->tallies * tden / (double)pc->total_ns;
    compare_leaves(&t[i], pr, h, pi, tden, pden, n);
  }
  int again = retry(&t[0], "thread 1", attempt) ||
              retry(&t[1], "thread 2", attempt);
  if (!again) {
    leaf_check(&t[0], "thread 1");
    leaf_check(&t[1], "thread 2");
  }
  spy_profile_free(pr);
  for (int i = 0; i < 2; i++) gt_free(w[i].h);
  pthread_barrier_destroy(&bar);
  T_EQ_INT(spy_profiler_free(p), 0);
  return !again;
}

static void multi_thread(void) {
  for (int attempt = 1; !multi_once(attempt); attempt++) {}
}

/* A thread that is idle (no hook at all) when another thread stops the
** profiler, and detaches afterwards, still gets its whole profiled time:
** its process total equals wall_ns within 1 % (100 ms of work, 150 ms of
** idling with the program's last stack before the stop). */
static void stop_from_other_thread(void) {
  spy_profiler *p = new_prof(0, SPY_MODE_POLL, NULL);
  pthread_barrier_t bar;
  pthread_barrier_init(&bar, NULL, 2);
  worker w;
  memset(&w, 0, sizeof w);
  T_EQ_INT(gt_std_register(p, &w.s), 0);
  w.p = p;
  w.pid = 77;
  w.bar = &bar;
  w.run_ns = 100 * MS;
  w.idle_ms = 150;
  pthread_t th;
  T_EQ_INT(pthread_create(&th, NULL, worker_main, &w), 0);
  pthread_barrier_wait(&bar);
  T_EQ_INT(spy_start(p), 0);
  pthread_barrier_wait(&bar);
  pthread_barrier_wait(&bar);
  T_EQ_INT(spy_stop(p), 0);
  pthread_barrier_wait(&bar);
  pthread_join(th, NULL);
  T_EQ_INT(w.rc, 0);
  spy_profile *pr = NULL;
  T_EQ_INT(spy_profile_take(p, &pr), 0);
  int pi = gt_proc_index(pr, 77);
  T_ASSERT(pi >= 0);
  T_ASSERT(pr->wall_ns >= 240 * MS);
  T_NEAR((double)pr->processes[pi].total_ns, (double)pr->wall_ns,
         0.01 * (double)pr->wall_ns);
  spy_profile_free(pr);
  gt_free(w.h);
  pthread_barrier_destroy(&bar);
  T_EQ_INT(spy_profiler_free(p), 0);
}

const struct spy_test t_core[] = {
  {"leaves_poll", leaves_poll, 30},
  {"totals_wall", totals_wall, 30},
  {"zero_drops", zero_drops, 30},
  {"trap_poll", trap_poll, 30},
  {"trap_timer", trap_timer, 30},
  {"switch_from", switch_from, 30},
  {"switch_timer", switch_timer, 30},
  {"multi_thread", multi_thread, 30},
  {"stop_from_other_thread", stop_from_other_thread, 30},
  {0},
};
