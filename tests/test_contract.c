/*
** tests/test_contract.c: the "contract" suite: the hook contract in the
** situations real interpreters have and our own host did not (callbacks
** out of primitives at several depths, a process switch inside a
** primitive, non-local exits, deep stacks, where polls sit, registration
** while running, a stop quickly followed by a restart).
**
** Every test runs a program on the ground-truth host (tests/gt/gthost.h)
** and compares the profile with what the host measured. Tolerances are
** those of tests/test_core.c (its header derives them): a share from N
** samples within 4 binomial sigmas + 0.5 pp + 10 pp per unit of stall;
** exact times within [inner, outer] widened by CLK_REL and CLK_ABS_NS per
** call; counts exact.
*/
#include "config.h"

#include "tests/test_contract.h"

#include "vm-hooks/due.h"

#include <pthread.h>
#include <setjmp.h>
#include <stdatomic.h>

int share_bad;
double share_extra_pp;

/* ------------------------------------------------------------------------
** Callbacks
** --------------------------------------------------------------------- */

/* A sort-like primitive: its own work before, between and after calls
** back into a comparator method that does most of the work (the gsub and
** table.sort cases of the Lua embedding). */
static void body_callback(rig *r, uint64_t end) {
  gt_host *h = r->h;
  gt_enter(h, K_MAIN);
  uint64_t n = 10;
  while (gt_now() < end) {
    gt_prim_begin(h, r->prim[0], 1, &n);
    gt_work_nopoll(h, 30 * US);
    for (int i = 0; i < 3; i++) {
      gt_callback_begin(h);
      gt_enter(h, K_CMP);
      gt_work(h, 60 * US);
      gt_leave(h);
      gt_callback_end(h);
      gt_work_nopoll(h, 10 * US);
    }
    gt_prim_end(h);
    gt_work(h, 20 * US);
  }
  gt_leave(h);
}

/* The primitive keeps its own ~20 % and the comparator gets its ~70 %,
** shown under the primitive, which is under its caller; the primitive's
** exact total excludes the callbacks. */
RETRYING(callback_shares) {
  rig r;
  rig_new(&r, NULL);
  spy_profile *pr = rig_run(&r, body_callback, 800 * MS);
  gt_host *h = r.h;
  method_near("comparator", pr, h, K_CMP);
  prim_near("primitive", pr, h, r.prim[0]);
  method_near("caller", pr, h, K_MAIN);
  parent_is(pr, SPY_FRAME_METHOD, K_CMP, SPY_FRAME_PRIM, r.prim[0]);
  parent_is(pr, SPY_FRAME_PRIM, r.prim[0], SPY_FRAME_METHOD, K_MAIN);
  prim_exact(pr, h, r.prim[0]);
  *retry = rig_end(&r, pr, attempt);
}

/* Callbacks three deep: P1 calls back into inner, which calls P2, which
** calls back into leaf. Every leaf's share is its own. */
static void body_nested(rig *r, uint64_t end) {
  gt_host *h = r->h;
  gt_enter(h, K_MAIN);
  uint64_t n = 3;
  while (gt_now() < end) {
    gt_prim_begin(h, r->prim[0], 1, &n);
    gt_work_nopoll(h, 20 * US);
    gt_callback_begin(h);
    gt_enter(h, K_INNER);
    gt_work(h, 30 * US);
    gt_prim_begin(h, r->prim[1], 1, &n);
    gt_work_nopoll(h, 25 * US);
    gt_callback_begin(h);
    gt_enter(h, K_LEAF);
    gt_work(h, 40 * US);
    gt_prim(h, r->prim[2], 1, &n, 15 * US);
    gt_leave(h);
    gt_callback_end(h);
    gt_work_nopoll(h, 10 * US);
    gt_prim_end(h);
    gt_leave(h);
    gt_callback_end(h);
    gt_work_nopoll(h, 10 * US);
    gt_prim_end(h);
    gt_work(h, 10 * US);
  }
  gt_leave(h);
}

RETRYING(callback_nested) {
  rig r;
  rig_new(&r, NULL);
  spy_profile *pr = rig_run(&r, body_nested, 800 * MS);
  gt_host *h = r.h;
  for (int i = 0; i < 3; i++)
    prim_near(pr->prims[r.prim[i]].name, pr, h, r.prim[i]);
  uint64_t keys[] = {K_MAIN, K_INNER, K_LEAF};
  for (int i = 0; i < 3; i++)
    method_near(h->names[keys[i]], pr, h, keys[i]);
  /* main > P1 > inner > P2 > leaf > P3 */
  parent_is(pr, SPY_FRAME_PRIM, r.prim[0], SPY_FRAME_METHOD, K_MAIN);
  parent_is(pr, SPY_FRAME_METHOD, K_INNER, SPY_FRAME_PRIM, r.prim[0]);
  parent_is(pr, SPY_FRAME_PRIM, r.prim[1], SPY_FRAME_METHOD, K_INNER);
  parent_is(pr, SPY_FRAME_METHOD, K_LEAF, SPY_FRAME_PRIM, r.prim[1]);
  parent_is(pr, SPY_FRAME_PRIM, r.prim[2], SPY_FRAME_METHOD, K_LEAF);
  for (int i = 0; i < 3; i++) prim_exact(pr, h, r.prim[i]);
  *retry = rig_end(&r, pr, attempt);
}

/* ------------------------------------------------------------------------
** A process switch inside a primitive
** --------------------------------------------------------------------- */

/* Process A is inside a primitive that resumes process B from a callback
** (a coroutine resumed from a sort comparator); B works, switches back;
** the primitive goes on. The primitive stays in A's tree with its own
** time, and its total excludes B's. */
static void body_switch(rig *r, uint64_t end) {
  gt_host *h = r->h;
  gt_enter(h, K_MAIN);
  uint64_t n = 1;
  while (gt_now() < end) {
    gt_prim_begin(h, r->prim[0], 1, &n);
    gt_work_nopoll(h, 40 * US);
    gt_switch(h, 1);              /* B runs, A's primitive is kept */
    gt_enter(h, K_AFTER);
    gt_work(h, 50 * US);
    gt_leave(h);
    gt_switch(h, 0);
    gt_work_nopoll(h, 30 * US);   /* the primitive again */
    gt_prim_end(h);
    gt_work(h, 10 * US);
  }
  gt_leave(h);
}

RETRYING(switch_in_prim) {
  rig r;
  rig_new(&r, NULL);
  gt_process(r.h, 0, 100, "A");
  gt_process(r.h, 1, 200, "B");
  spy_profile *pr = rig_run(&r, body_switch, 800 * MS);
  gt_host *h = r.h;
  prim_near("primitive", pr, h, r.prim[0]);
  method_near("B's method", pr, h, K_AFTER);
  int pa = gt_proc_index(pr, 100), pb = gt_proc_index(pr, 200);
  T_ASSERT(pa >= 0 && pb >= 0);
  uint32_t fp = gt_find_frame(pr, SPY_FRAME_PRIM, (uint64_t)r.prim[0]);
  T_EQ_INT(gt_frame_self(pr, fp, pb), 0);
  T_ASSERT(gt_frame_self(pr, fp, pa) > 0);
  prim_exact(pr, h, r.prim[0]);
  spy_counters c;
  T_EQ_INT(spy_counters_get(r.p, &c), 0);
  T_EQ_INT(c.nest_dropped, 0);
  *retry = rig_end(&r, pr, attempt);
}

/* ------------------------------------------------------------------------
** Non-local exits
** --------------------------------------------------------------------- */

/* Errors thrown through brackets with longjmp, from three places: inside a
** primitive, inside a callback out of a primitive, and inside a GC and a
** region inside a primitive. After each, pure work in After>>work must
** keep its share (a host that left the brackets open would charge it to
** the primitive), and every unwound primitive call is counted. */
static void body_unwind(rig *r, uint64_t end) {
  gt_host *h = r->h;
  jmp_buf jb;
  int region = spy_region_register(r->p, "risky");
  T_ASSERT(region >= 0);
  gt_enter(h, K_MAIN);
  uint64_t n = 2;
  for (volatile int it = 0; gt_now() < end; it++) {
    gt_catch c = gt_save(h);
    if (setjmp(jb) == 0) {
      gt_prim_begin(h, r->prim[0], 1, &n);
      gt_work_nopoll(h, 20 * US);
      switch (it % 3) {
      case 0: break; /* thrown from the primitive itself */
      case 1:
        gt_callback_begin(h);
        gt_enter(h, K_CMP);
        gt_work(h, 20 * US);
        break; /* thrown from the code called back */
      case 2:
        gt_region_begin(h, region);
        gt_prim_begin(h, r->prim[1], 1, &n);
        gt_work_nopoll(h, 10 * US);
        break; /* thrown from a nested primitive in a region */
      }
      longjmp(jb, 1);
    }
    gt_unwind(h, c, 1);
    gt_enter(h, K_AFTER);
    gt_work(h, 40 * US);
    gt_leave(h);
  }
  gt_leave(h);
}

RETRYING(unwind_kinds) {
  rig r;
  rig_new(&r, NULL);
  spy_profile *pr = rig_run(&r, body_unwind, 800 * MS);
  gt_host *h = r.h;
  /* Under TSan the primitive reads above its truth of 22 %: +0.0 to +5.5
  ** pp in 6 runs of this session's code, +0.4 to +9.8 in 6 of the code
  ** before it (11-25, AMD guest; a clean-clone CI run failed it at
  ** +10.6, then its total at 51 ms over for a tolerance of 49): the
  ** sampler thread's marks come late under TSan, and a late one lands
  ** in the primitive's 20 us without a poll. The normal and ASan builds
  ** hold the suite's tolerance; TSan gets 6 pp more, on its totals too. */
  share_extra_pp = T_TSAN ? 6.0 : 0;
  method_near("work after the error", pr, h, K_AFTER);
  prim_near("primitive", pr, h, r.prim[0]);
  method_near("callback", pr, h, K_CMP);
  T_ASSERT(h->prims[r.prim[0]].calls > 30);
  prim_exact(pr, h, r.prim[0]);
  prim_exact(pr, h, r.prim[1]);
  share_extra_pp = 0;
  /* The region was closed by every unwind through it. */
  T_ASSERT(pr->nregions >= 1);
  T_EQ_INT(pr->regions[0].calls, h->prims[r.prim[1]].calls);
  *retry = rig_end(&r, pr, attempt);
}

/* A coroutine that dies inside a primitive (yielded across C, then
** collected): spy_process_end drops its brackets, and the process that
** goes on is charged right. */
static void body_dead(rig *r, uint64_t end) {
  gt_host *h = r->h;
  gt_enter(h, K_MAIN);
  uint64_t n = 1, rng = 3;
  /* Random lengths: a fixed 50 us cycle would alias with the 100 us grid
  ** and the marks' steady latency, and bias the shares. */
  while (gt_now() < end) {
    gt_switch(h, 1);
    gt_prim_begin(h, r->prim[0], 1, &n);
    gt_work_nopoll(h, gt_rand_range(&rng, 10, 30) * US);
    gt_switch(h, 0); /* never comes back */
    gt_process_end(h, 1);
    gt_work(h, gt_rand_range(&rng, 20, 40) * US);
  }
  gt_leave(h);
}

RETRYING(process_end) {
  rig r;
  spy_options o;
  spy_options_init(&o);
  o.saved_processes = 4;
  rig_new(&r, &o);
  gt_process(r.h, 1, 7, "co");
  spy_profile *pr = rig_run(&r, body_dead, 500 * MS);
  gt_host *h = r.h;
  method_near("main", pr, h, K_MAIN);
  spy_counters c;
  T_EQ_INT(spy_counters_get(r.p, &c), 0);
  T_EQ_INT(c.nest_dropped, 0); /* ended, not evicted */
  *retry = rig_end(&r, pr, attempt);
}

/* ------------------------------------------------------------------------
** Deep stacks
** --------------------------------------------------------------------- */

/* Recurse to 100 000 frames and back, working at every level. With the
** incremental walk the frames visited stay about the frames created (not
** depth x samples), the report keeps the root-most and innermost frames
** with a cut node that counts the rest, and the shares are right. */
static void body_deep(rig *r, uint64_t end) {
  gt_host *h = r->h;
  gt_enter(h, K_MAIN);
  while (gt_now() < end) {
    for (int i = 0; i < 100000; i++) {
      gt_enter(h, K_DEEP);
      gt_work(h, 50);
    }
    for (int i = 0; i < 100000; i++) gt_leave(h);
    gt_work(h, 200 * US);
  }
  gt_leave(h);
}

RETRYING(deep_stack) {
  rig r;
  rig_new(&r, NULL);
  spy_profile *pr = rig_run(&r, body_deep, 800 * MS);
  gt_host *h = r.h;
  if (!T_TSAN) { /* TSan makes each of 200 000 hooks slow where the work
                    is not: the shares describe TSan, not the walk */
    method_near("recursion", pr, h, K_DEEP);
    method_near("main", pr, h, K_MAIN);
  }
  spy_counters c;
  T_EQ_INT(spy_counters_get(r.p, &c), 0);
  /* Frames created: 100 001 per round, and walks visit each about once
  ** (a full walk would visit ~50 000 a sample: see deep_stack_full). */
  double per_sample = (double)c.frames_walked / (double)(pr->tallies + 1);
  if (per_sample > 5000)
    T_FAIL("%.0f frames walked per sample (%" PRIu64 " in %" PRIu64
           " samples): the walk is not incremental", per_sample,
           c.frames_walked, pr->tallies);
  /* The cut node says how many frames were left out. */
  int cut = 0;
  for (size_t i = 0; i < pr->nframes; i++)
    if (pr->frames[i].kind == SPY_FRAME_CUT && pr->frames[i].key > 90000)
      cut = 1;
  T_ASSERT(cut);
  *retry = rig_end(&r, pr, attempt);
}

/* The same recursion walked in full visits the whole stack at every
** sample: the cost the incremental walk removes (bench/bench_deep.c has
** the figures). */
static void deep_stack_full(void) {
  rig r;
  rig_new(&r, NULL);
  r.h->incremental = 0;
  spy_profile *pr = rig_run(&r, body_deep, 300 * MS);
  spy_counters c;
  T_EQ_INT(spy_counters_get(r.p, &c), 0);
  double per_sample = (double)c.frames_walked / (double)(pr->tallies + 1);
  if (per_sample < 5000)
    T_FAIL("%.0f frames a sample: expected full walks of a deep stack",
           per_sample);
  rig_free(&r, pr);
}

/* ------------------------------------------------------------------------
** Where polls sit
** --------------------------------------------------------------------- */

/* A method whose body is straight-line code with no poll of its own
** (Long>>b, ~95 % of the time) called in a loop beside a trivial one
** (Short>>a). Polling at every send and return (the contract) gives both
** their shares; polling only at activations and loops (the placement the
** old guide described) charges Long>>b's time to whatever polls next. */
static void body_polls(rig *r, uint64_t end) {
  gt_host *h = r->h;
  uint64_t rng = 11;
  gt_enter(h, K_MAIN);
  while (gt_now() < end) {
    /* Jittered: a loop of exactly the sampling interval (95 + 5 us) put
    ** the grid points at the same place in it for hundreds of rounds, a
    ** few dozen independent samples (Short>>a 7.8 % for 5.1 % in 1 run
    ** of 20). */
    gt_enter(h, K_LONG);
    gt_work_nopoll(h, gt_rand_range(&rng, 75, 115) * US);
    gt_leave(h);
    gt_enter(h, K_SHORT);
    gt_work_nopoll(h, gt_rand_range(&rng, 3, 7) * US);
    gt_leave(h);
  }
  gt_leave(h);
}

RETRYING(polls_dense_sparse) {
  /* Dense, with the tick marker and an interrupt check at the polls whose
  ** countdown spy_tick_next sets: no sampler thread, and checks ~95 us
  ** apart across Long>>b, as in an interpreter whose straight-line method
  ** runs long without a check. The near states (every hook reads the
  ** clock once a deadline is a few checks away) keep both shares right.
  ** (The sampler thread's marks come 20-60 us after the grid point when
  ** the machine is busy, and a sample due in Short>>a was taken in
  ** Long>>b: 97 % for 95 % in a loaded run.) */
  spy_options o;
  spy_options_init(&o);
  o.marker = SPY_MARKER_TICK;
  rig r;
  rig_new(&r, &o);
  r.h->tick_every = -1024;
  spy_profile *pr = rig_run(&r, body_polls, 600 * MS);
  gt_host *h = r.h;
  /* The samples are not independent here: a deadline in a 75-115 us
  ** stretch without a check, at a 100 us interval, is often passed
  ** unwatched and its weight goes to a later sample (vm-hooks/mark.c).
  ** Long>>b's error over 12 idle runs: mean +0.9 pp, sd 0.6 (16 runs
  ** beside a busy thread: +0.5, sd 1.0), two to three times the binomial
  ** sd the suite's tolerance assumes: 2.5 pp more. */
  share_extra_pp = 2.5;
  method_near("dense: Long>>b", pr, h, K_LONG);
  method_near("dense: Short>>a", pr, h, K_SHORT);
  share_extra_pp = 0;
  if ((*retry = rig_end(&r, pr, attempt))) return;

  rig_new(&r, NULL);
  r.h->sparse = 1;
  pr = rig_run(&r, body_polls, 600 * MS);
  h = r.h;
  double tl = truth_share(h, h->t_method[K_LONG]);
  double pl = prof_share(pr, SPY_FRAME_METHOD, K_LONG);
  /* Sparse: the samples due in Long>>b are taken at the next activation,
  ** in Short>>a. What a host that ignores the contract loses: */
  if (!(tl - pl > 40))
    T_FAIL("sparse polls: Long>>b %.2f%% vs truth %.2f%%; expected the skid",
           pl, tl);
  *retry = rig_end(&r, pr, attempt);
}

/* ------------------------------------------------------------------------
** Registration while running; stop and restart
** --------------------------------------------------------------------- */

RETRYING(late_registration) {
  rig r;
  rig_new(&r, NULL);
  start(r.p, r.h, &r.ss);
  gt_enter(r.h, K_MAIN);
  int late = spy_prim_register(r.p, "Module>>loadedLater", "n", SPY_PRIM_COST);
  T_ASSERT(late >= 0 && late < GT_MAX_PRIMS);
  uint64_t n = 5, end = gt_now() + 200 * MS;
  while (gt_now() < end) {
    gt_prim(r.h, late, 1, &n, 30 * US);
    gt_work(r.h, 10 * US);
  }
  gt_leave(r.h);
  spy_profile *pr = stop_take(r.p, r.h, &r.ss);
  T_EQ_STR(pr->prims[late].name, "Module>>loadedLater");
  prim_exact(pr, r.h, late);
  prim_near("late primitive", pr, r.h, late);
  T_ASSERT(pr->prims[late].nobs > 0);
  *retry = rig_end(&r, pr, attempt);
}

/* The controlling thread stops and at once restarts while the interpreter
** thread is inside a long primitive, with no hook in between: the
** primitive keeps its time (the old protocol charged the rest of it to the
** caller) and the weights still add up to the profiled time. The two
** threads take turns: one stop/restart inside each primitive call. */
typedef struct ctl {
  spy_profiler *p;
  atomic_int in_prim, cycles, done;
} ctl;

static void *controller(void *arg) {
  ctl *c = arg;
  for (int i = 0; i < 20; i++) {
    while (!atomic_load(&c->in_prim)) {
    }
    T_EQ_INT(spy_stop(c->p), 0);
    T_EQ_INT(spy_start(c->p), 0);
    atomic_store(&c->in_prim, 0);
    atomic_fetch_add(&c->cycles, 1);
  }
  atomic_store(&c->done, 1);
  return NULL;
}

RETRYING(restart_keeps_prim) {
  rig r;
  rig_new(&r, NULL);
  start(r.p, r.h, &r.ss);
  ctl c = {r.p, 0, 0, 0};
  pthread_t t;
  T_EQ_INT(pthread_create(&t, NULL, controller, &c), 0);
  gt_enter(r.h, K_MAIN);
  uint64_t n = 9;
  while (!atomic_load(&c.done)) {
    gt_prim_begin(r.h, r.prim[0], 1, &n);
    int before = atomic_load(&c.cycles);
    atomic_store(&c.in_prim, 1);
    gt_work_nopoll(r.h, 3 * MS); /* no hook in here */
    while (atomic_load(&c.cycles) == before && !atomic_load(&c.done)) {
    }
    gt_prim_end(r.h);
    gt_work(r.h, 100 * US);
  }
  gt_leave(r.h);
  pthread_join(t, NULL);
  spy_profile *pr = stop_take(r.p, r.h, &r.ss);
  T_NEAR((double)gt_process_totals(pr), (double)pr->wall_ns,
         0.02 * (double)pr->wall_ns);
  /* ~97 % of the time is in the primitive (75-89 % under TSan, whose
  ** instrumented code between the calls runs slower: Main>>run's truth is
  ** then 8-22 %); the 20 stop/starts land inside it and must not move its
  ** time to Main>>run. */
  double pp = prof_share(pr, SPY_FRAME_PRIM, r.prim[0]);
  double pm = prof_share(pr, SPY_FRAME_METHOD, K_MAIN);
  double tp = truth_share(r.h, r.h->t_prim[r.prim[0]]);
  double tm = truth_share(r.h, r.h->t_method[K_MAIN]);
  fprintf(stderr, "primitive %.2f%% (truth %.2f%%), caller %.2f%% (truth "
          "%.2f%%)\n", pp, tp, pm, tm);
  if (!(pp > tp - 10 && pm < tm + 10)) {
    /* A thread preempted outside the primitive (a loaded machine) is
    ** charged there: retry a stalled run. (Several stop/restart cycles
    ** with no hook in between lose nothing: restarts_queued.) */
    if (attempt < ATTEMPTS && gt_stall(r.h) >= STALL_RETRY) {
      fprintf(stderr, "attempt %d: primitive %.2f%% (truth %.2f%%) on a "
              "stalled run; retrying\n", attempt, pp, tp);
      *retry = 1;
      rig_free(&r, pr);
      return;
    }
    T_FAIL("after stop/restart: primitive %.2f%% (truth %.2f%%), caller "
           "%.2f%% (truth %.2f%%)", pp, tp, pm, tm);
  }
  rig_free(&r, pr);
}

/* Several stop/restart cycles while the interpreter thread is inside one
** primitive (as when it is starved of CPU): each run's stretch is charged
** to the primitive up to that run's own stop, none is lost (the old
** protocol kept only the last stop, and lost every run's stretch before
** it). Deterministic: the thread runs no hook until the controller has
** made all its cycles. The controller times each stop..start gap (not
** profiled), so the primitive's due time is known whatever the load. */
typedef struct cycler {
  spy_profiler *p;
  atomic_int go, done;
  uint64_t gaps; /* ns between each stop's call and its start's return */
} cycler;

static void *cycle_three(void *arg) {
  cycler *c = arg;
  while (!atomic_load(&c->go)) {
  }
  for (int i = 0; i < 3; i++) {
    gt_burn_ns(2 * MS);
    uint64_t t0 = gt_now();
    T_EQ_INT(spy_stop(c->p), 0);
    T_EQ_INT(spy_start(c->p), 0);
    c->gaps += gt_now() - t0;
  }
  atomic_store(&c->done, 1);
  return NULL;
}

static void restarts_queued(void) {
  rig r;
  rig_new(&r, NULL);
  start(r.p, r.h, &r.ss);
  cycler c = {r.p, 0, 0, 0};
  pthread_t t;
  T_EQ_INT(pthread_create(&t, NULL, cycle_three, &c), 0);
  gt_enter(r.h, K_MAIN);
  uint64_t n = 9;
  gt_prim_begin(r.h, r.prim[0], 1, &n);
  uint64_t t_go = gt_now();
  atomic_store(&c.go, 1);
  while (!atomic_load(&c.done)) /* no hook in here */
    gt_burn_units(100);
  gt_work_nopoll(r.h, 2 * MS);
  /* The last run's stretch is charged up to the sampler thread's latest
  ** mark: wait until it has marked past now (on a loaded machine it can be
  ** milliseconds late -- a clean-clone distcheck of 12-08 lost the whole
  ** 2 ms of the last run here, 9.17 of 11.06 ms). */
  uint64_t want = spyH_now(), give_up = gt_now() + 2000 * MS;
  while (spyH_marked_upto(r.h->vm) < want && gt_now() < give_up)
    gt_burn_units(100); /* given up, the check below says what is lost */
  uint64_t t_end = gt_now();
  gt_prim_end(r.h);
  gt_leave(r.h);
  pthread_join(t, NULL);
  spy_profile *pr = stop_take(r.p, r.h, &r.ss);
  double tot = (double)gt_process_totals(pr);
  T_NEAR(tot, (double)pr->wall_ns, 0.02 * (double)pr->wall_ns + 200000);
  double prim_ns = prof_share(pr, SPY_FRAME_PRIM, r.prim[0]) / 100 * tot;
  double due = (double)(t_end - t_go) - (double)c.gaps;
  /* 0.5 ms: the clock reads around the hooks; a lost run is 2 ms. */
  if (prim_ns < due - 0.5 * MS)
    T_FAIL("across queued stops the primitive has %.2f ms of the %.2f ms "
           "it ran while profiled", prim_ns / 1e6, due / 1e6);
  rig_free(&r, pr);
}

/* ------------------------------------------------------------------------
** The headers in C++
** --------------------------------------------------------------------- */

/* The public headers compile as C++11, 17 and 20 with warnings as errors
** (interpreters are often C++). */
static void headers_cxx(void) {
  char cmd[2048];
  for (int i = 0; i < 3; i++) {
    static const char *std[] = {"c++11", "c++17", "c++20"};
    snprintf(cmd, sizeof cmd,
             "printf '#include <spyon.h>\n#include <spyon/hooks.h>\n"
             "#include <spyon/profile.h>\n#include <spyon/report.h>\n"
             "#include <spyon/cost.h>\nint main(){spy_poll(spy_vm_stopped());"
             "return spy_nest_save(spy_vm_stopped());}\n' | "
             "g++ -std=%s -Wall -Wextra -Werror -fsyntax-only -I%s/include "
             "-x c++ - 2>&1", std[i], t_srcdir);
    char *out = NULL;
    int rc = t_run(cmd, &out);
    if (rc != 0) T_FAIL("headers as %s: %s", std[i], out ? out : "");
    free(out);
  }
}

const struct spy_test t_contract[] = {
  {"callback_shares", callback_shares, 30},
  {"callback_nested", callback_nested, 30},
  {"switch_in_prim", switch_in_prim, 30},
  {"unwind_kinds", unwind_kinds, 30},
  {"process_end", process_end, 30},
  {"deep_stack", deep_stack, 60},
  {"deep_stack_full", deep_stack_full, 120},
  {"polls_dense_sparse", polls_dense_sparse, 30},
  {"late_registration", late_registration, 30},
  {"restart_keeps_prim", restart_keeps_prim, 30},
  {"restarts_queued", restarts_queued, 30},
  {"headers_cxx", headers_cxx, 60},
  {0}};
