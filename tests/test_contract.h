/*
** tests/test_contract.h: what the "contract" suite's files share: the
** ground-truth comparisons (a share within the suite's tolerance, an
** exact total within the host's bracket), the rig (a profiler with three
** primitives and a ground-truth host with named methods) and RETRYING,
** for tests whose share checks may be retried on a stalled run.
*/
#ifndef SPY_TEST_CONTRACT_H
#define SPY_TEST_CONTRACT_H

#include "tests/test_core.h"

/* Share of frame (kind, key)'s self time in the profile, percent. */
static inline double prof_share(const spy_profile *pr, spy_frame_kind kind,
                                uint64_t key) {
  double den = (double)gt_process_totals(pr);
  return 100.0 * (double)gt_frame_self(pr, gt_find_frame(pr, kind, key), -1) /
         den;
}

static inline double truth_share(const gt_host *h, uint64_t t) {
  return 100.0 * (double)t / (double)h->t_total;
}

/* Defined in tests/test_contract.c: share checks missed in this attempt,
** and a test's own systematic term added to the tolerance, if any. */
extern int share_bad;
extern double share_extra_pp;

/* Check a share against the truth with the suite's tolerance. A miss is
** printed and counted; the test decides with again() whether the run was
** stalled enough to be tried once more (as tests/test_core.c does). */
static inline void share_near(const char *what, double prof, double truth,
                              const spy_profile *pr, const gt_host *h) {
  double tol = share_tol_pp(truth / 100, (double)pr->tallies, gt_stall(h)) +
               share_extra_pp;
  if (fabs(prof - truth) > tol || getenv("SPY_TEST_SHARES"))
    fprintf(stderr, "%s: profile %.2f%% vs truth %.2f%% (tolerance %.2f pp, "
            "thread stalled %.0f%%)\n", what, prof, truth, tol,
            100 * gt_stall(h));
  if (fabs(prof - truth) > tol) share_bad++;
}

/* share_near for the self time of method KEY. */
static inline void method_near(const char *what, const spy_profile *pr,
                               const gt_host *h, uint64_t key) {
  share_near(what, prof_share(pr, SPY_FRAME_METHOD, key),
             truth_share(h, h->t_method[key]), pr, h);
}

/* share_near for the time inside primitive ID. */
static inline void prim_near(const char *what, const spy_profile *pr,
                             const gt_host *h, int id) {
  share_near(what, prof_share(pr, SPY_FRAME_PRIM, (uint64_t)id),
             truth_share(h, h->t_prim[id]), pr, h);
}

/* After a test's share checks: 0 when they held; 1 to run again (some
** missed on a run whose thread was stalled and attempts remain, or on the
** first attempt); else the test fails. A first miss is run once more
** whatever the stall: in clean-clone CI runs on this project's VM,
** contract/deep_stack missed twice in three runs of the suite (recursion
** 96.4 % for 97.9 %, tolerance 1.2 pp; 94.0 % under ASan), its thread not
** stalled, while 18 runs of it alone or after its suite, of the same code
** and of the session's first, read within 0.3 pp: something else on the
** machine (the sampler thread's marks late, which the thread's own stall
** does not show). A bias misses every attempt. */
static inline int again(const gt_host *h, int attempt) {
  if (!share_bad) return 0;
  int n = share_bad;
  share_bad = 0;
  if (retry_miss(attempt, gt_stall(h))) {
    fprintf(stderr, "attempt %d missed (thread stalled %.0f %%); retrying\n",
            attempt, 100 * gt_stall(h));
    return 1;
  }
  T_FAIL("%d share(s) off by more than the tolerance", n);
}

/* The profile's total of primitive id against the host's: the calls
** agree; an exact total lies within the host's [inner, outer] bracket
** (widened for the clocks); an estimated one (cheap accounting, from the
** samples that fell inside) within its sampling interval: 4 sigmas of n
** samples of one interval each (n = truth / interval), plus the suite's
** systematic and stall terms (and the test's own, share_extra_pp) on the
** wall time. */
static inline void prim_exact(const spy_profile *pr, const gt_host *h, int id) {
  const spy_profile_prim *pp = &pr->prims[id];
  const gt_prim_truth *t = &h->prims[id];
  T_EQ_INT(pp->calls, t->calls);
  if (pp->flags & SPY_PRIM_ESTIMATED) {
    double iv = (double)pr->interval_ns, tr = (double)t->inner_ns;
    double tol = SIGMAS * iv * sqrt(tr / iv + 1) +
                 (SYS_PP + share_extra_pp + STALL_PP * gt_stall(h)) / 100 *
                     (double)pr->wall_ns;
    if (fabs((double)pp->total_ns - tr) > tol) {
      fprintf(stderr, "%s: estimated total %" PRIu64 " ns vs truth %.0f "
              "(interval %.0f)\n", pp->name, pp->total_ns, tr, tol);
      share_bad++;
    }
    return;
  }
  double lo = (double)t->inner_ns * (1 - CLK_REL) - CLK_ABS_NS * t->calls;
  double hi = (double)t->outer_ns * (1 + CLK_REL) + CLK_ABS_NS * t->calls;
  if (!((double)pp->total_ns >= lo && (double)pp->total_ns <= hi))
    T_FAIL("%s: total %" PRIu64 " ns outside [%.0f, %.0f] (inner %" PRIu64
           ", outer %" PRIu64 ")", pp->name, pp->total_ns, lo, hi,
           t->inner_ns, t->outer_ns);
}

/* The parent frame of every node of frame (kind, key) is (pkind, pkey). */
static inline void parent_is(const spy_profile *pr, spy_frame_kind kind,
                             uint64_t key, spy_frame_kind pkind,
                             uint64_t pkey) {
  uint32_t f = gt_find_frame(pr, kind, key);
  if (f == SPY_NONE) { /* never sampled: a starved run; retried */
    fprintf(stderr, "frame %d:%" PRIu64 " not in the profile\n", (int)kind,
            key);
    share_bad++;
    return;
  }
  int seen = 0;
  for (size_t i = 0; i < pr->nnodes; i++) {
    if (pr->nodes[i].frame != f) continue;
    uint32_t par = pr->nodes[i].parent;
    T_ASSERT(par != SPY_NONE);
    const spy_frame *pf = &pr->frames[pr->nodes[par].frame];
    if (pf->kind != pkind || pf->key != pkey)
      T_FAIL("%s is under %s, not the expected frame",
             pr->frames[f].name, pf->name);
    seen++;
  }
  T_ASSERT(seen > 0);
}

/* A host with methods named after their keys, attached to a new profiler
** with primitives "P1".."P3" registered. */
typedef struct rig {
  spy_profiler *p;
  gt_host *h;
  int prim[3];
  session ss;
} rig;

static inline void rig_new(rig *r, spy_options *o) {
  r->p = new_prof(0, SPY_MODE_POLL, o);
  static const char *names[] = {"Prim>>one", "Prim>>two", "Prim>>three"};
  for (int i = 0; i < 3; i++) {
    r->prim[i] = spy_prim_register(r->p, names[i], "n", 0);
    T_ASSERT(r->prim[i] >= 0);
  }
  r->h = gt_new(r->p);
  T_ASSERT(r->h != NULL);
  static const char *mnames[] = {"", "Main>>run", "Sort>>compare:",
                                 "Model>>inner", "Model>>leaf", "After>>work",
                                 "Deep>>recurse", "Short>>a", "Long>>b"};
  for (uint64_t k = 1; k < sizeof mnames / sizeof *mnames; k++)
    gt_method(r->h, k, mnames[k]);
  T_EQ_INT(gt_attach(r->h), 0);
}

static inline spy_profile *rig_run(rig *r, void (*body)(rig *, uint64_t),
                                   uint64_t run_ns) {
  start(r->p, r->h, &r->ss);
  body(r, gt_now() + run_ns);
  spy_profile *pr = stop_take(r->p, r->h, &r->ss);
  /* Weights add up to the profiled time whatever the contract did. */
  T_NEAR((double)gt_process_totals(pr), (double)pr->wall_ns,
         0.01 * (double)pr->wall_ns);
  return pr;
}

static inline void rig_free(rig *r, spy_profile *pr) {
  spy_profile_free(pr);
  gt_free(r->h);
  T_EQ_INT(spy_profiler_free(r->p), 0);
}

/* The end of an attempt: again(), then rig_free. Returns again()'s
** answer (1: run the test once more). */
static inline int rig_end(rig *r, spy_profile *pr, int attempt) {
  int retry = again(r->h, attempt);
  rig_free(r, pr);
  return retry;
}

/* A test whose share checks may be retried on a stalled run: its body
** runs with `attempt` and sets *retry from again(). */
#define RETRYING(name)                                                    \
  static void name##_once(int attempt, int *retry);                       \
  static void name(void) {                                                \
    for (int a_ = 1;; a_++) {                                             \
      int r_ = 0;                                                         \
      name##_once(a_, &r_);                                               \
      if (!r_) return;                                                    \
    }                                                                     \
  }                                                                       \
  static void name##_once(int attempt, int *retry)

enum { K_MAIN = 1, K_CMP, K_INNER, K_LEAF, K_AFTER, K_DEEP, K_SHORT, K_LONG };

#endif
