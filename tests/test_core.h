/*
** tests/test_core.h: what the two files of the "core" suite share: the
** tolerances (see the comment at the top of tests/test_core.c) and the
** session helpers.
*/
#ifndef SPY_TEST_CORE_H
#define SPY_TEST_CORE_H

#include "tests/test.h"
#include "tests/gt/gthost.h"

#include <math.h>

#define MS 1000000ull
#define US 1000ull

#define SIGMAS 4.0
/* Under ASan the hooks run instrumented (a microsecond where they take
** tens of ns), and their time goes to the state around them: wider. */
#define SYS_PP (T_TSAN ? 4.0 : T_ASAN ? 2.0 : 0.5)
#define STALL_PP 10.0
#define STALL_RETRY 0.10
#define ATTEMPTS 3

/* The share tests' retry policy, after a miss: run again while attempts
** remain, on the first attempt whatever the stall (tests/test_contract.h,
** again, says why), later only if the thread stalled. A bias misses every
** attempt. */
static inline int retry_miss(int attempt, double stall) {
  return attempt < ATTEMPTS && (attempt == 1 || stall >= STALL_RETRY);
}
/* Under TSan the hooks' own clock reads are instrumented: wider. */
#define CLK_REL (T_TSAN ? 0.05 : 0.005)
#define CLK_ABS_NS (T_TSAN ? 20000.0 : 200.0)

/* ------------------------------------------------------------------------
** Helpers: sessions and profile queries
** --------------------------------------------------------------------- */

/* A profiler with the defaults, then interval and mode set. */
static inline spy_profiler *new_prof(uint64_t interval_ns, spy_mode mode,
                              spy_options *o) {
  spy_options def;
  if (!o) {
    spy_options_init(&def);
    o = &def;
  }
  if (interval_ns) o->interval_ns = interval_ns;
  o->mode = mode;
  spy_profiler *p = NULL;
  int rc = spy_profiler_new(&p, o);
  if (rc != 0) T_FAIL("spy_profiler_new: %s", spy_strerror(rc));
  return p;
}

/* The same with exact primitive accounting (every call timed): for the
** tests of exact figures. */
static inline spy_profiler *new_exact(spy_mode mode, spy_options *o) {
  spy_options def;
  if (!o) {
    spy_options_init(&def);
    o = &def;
  }
  o->exact_prims = 1;
  return new_prof(0, mode, o);
}

/* Host and profiler timestamps around start and stop, to bracket wall_ns. */
typedef struct session {
  uint64_t start0, start1, stop0, stop1;
} session;

static inline void start(spy_profiler *p, gt_host *h, session *s) {
  s->start0 = gt_now();
  T_EQ_INT(spy_start(p), 0);
  s->start1 = gt_now();
  gt_truth_begin(h);
}

static inline spy_profile *stop_take(spy_profiler *p, gt_host *h, session *s) {
  gt_truth_end(h);
  s->stop0 = gt_now();
  T_EQ_INT(spy_stop(p), 0);
  s->stop1 = gt_now();
  spy_profile *pr = NULL;
  T_EQ_INT(spy_profile_take(p, &pr), 0);
  T_ASSERT(pr != NULL);
  return pr;
}

/* The share tolerance in pp for share p (0..1) from n samples, with the
** thread stalled a fraction f of the time. */
static inline double share_tol_pp(double p, double n, double f) {
  if (n < 1) n = 1;
  return SIGMAS * 100.0 * sqrt(p * (1 - p) / n) + SYS_PP + STALL_PP * f;
}


/* Run the standard program for run_ns on one attached host; returns the
** profile (and the host in *hout, the prims in *sout). */
static inline spy_profile *run_std(spy_profiler *p, gt_host **hout,
                                   gt_std *sout, uint64_t run_ns,
                                   session *ss, int long_prims) {
  T_EQ_INT(gt_std_register(p, sout), 0);
  sout->long_prims = long_prims;
  gt_host *h = gt_new(p);
  T_ASSERT(h != NULL);
  gt_std_define(h, sout);
  T_EQ_INT(gt_attach(h), 0);
  start(p, h, ss);
  gt_std_run(h, sout, run_ns, 42);
  spy_profile *pr = stop_take(p, h, ss);
  *hout = h;
  return pr;
}

/* Every node's total is its self time plus its children's totals. */
static inline void totals_add_up(const spy_profile *pr) {
  for (size_t i = 0; i < pr->nnodes; i++) {
    uint64_t c = pr->nodes[i].self_ns;
    for (uint32_t k = pr->nodes[i].first_child; k != SPY_NONE;
         k = pr->nodes[k].next_sibling)
      c += pr->nodes[k].total_ns;
    T_EQ_INT(c, pr->nodes[i].total_ns);
  }
}

/* Free what a test ran: the profile, the host and the profiler. */
static inline void run_free(spy_profiler *p, gt_host *h, spy_profile *pr) {
  spy_profile_free(pr);
  gt_free(h);
  T_EQ_INT(spy_profiler_free(p), 0);
}

#endif
