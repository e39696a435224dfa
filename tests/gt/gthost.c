/*
** tests/gt/gthost.c: the ground-truth host (see gthost.h).
*/
#include "config.h"

#include "tests/gt/gthost.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ------------------------------------------------------------------------
** Clock and work units
** --------------------------------------------------------------------- */

uint64_t gt_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The work is a chain of multiply-adds through a volatile, so the compiler
** can neither drop it nor fold it; 16 dependent steps take a few tens of
** nanoseconds, small enough that a poll between units is as frequent as a
** VM's backward jumps. Each thread has its own sink, so two interpreter
** threads neither race nor share a cache line. */
static _Thread_local volatile uint64_t gt_sink = 1;

static inline void gt_unit(void) {
  uint64_t x = gt_sink;
  for (int i = 0; i < 16; i++)
    x = x * 6364136223846793005ull + 1442695040888963407ull;
  gt_sink = x;
}

void gt_burn_units(uint64_t n) {
  for (uint64_t i = 0; i < n; i++) gt_unit();
}

/* Calibrated once per process: the fastest of a few timed batches, so a
** preempted batch does not make units look slow. Only the planned costs
** depend on it; the truth is always measured. */
static double unit_ns_cached;
static pthread_once_t unit_once = PTHREAD_ONCE_INIT;

static void calibrate(void) {
  double best = 1e9;
  for (int r = 0; r < 5; r++) {
    uint64_t t0 = gt_now();
    gt_burn_units(20000);
    double ns = (double)(gt_now() - t0) / 20000.0;
    if (ns < best) best = ns;
  }
  unit_ns_cached = best < 0.5 ? 0.5 : best;
}

double gt_unit_ns(void) {
  pthread_once(&unit_once, calibrate);
  return unit_ns_cached;
}

static uint64_t units_for(uint64_t ns) {
  return (uint64_t)((double)ns / gt_unit_ns() + 0.5);
}

void gt_burn_ns(uint64_t ns) {
  gt_burn_units(units_for(ns));
}

uint64_t gt_rand(uint64_t *s) {
  uint64_t x = *s ? *s : 0x9e3779b97f4a7c15ull;
  x ^= x >> 12;
  x ^= x << 25;
  x ^= x >> 27;
  *s = x;
  return x * 2685821657736338717ull;
}

uint64_t gt_rand_range(uint64_t *s, uint64_t lo, uint64_t hi) {
  if (hi <= lo) return lo;
  return lo + gt_rand(s) % (hi - lo + 1);
}

/* ------------------------------------------------------------------------
** The truth
** --------------------------------------------------------------------- */

/* Charge the time since the previous transition to the current state. Called
** at every transition, before the state changes. */
static uint64_t cpu_now(void);

static uint64_t truth_clock(const gt_host *h, uint64_t wall) {
  return h->cpu_truth ? cpu_now() : wall;
}

/* charge() with the truth's clock read already: `now` from truth_clock. */
static void charge_at(gt_host *h, uint64_t now) {
  uint64_t dt = now - h->last_ns;
  h->last_ns = now;
  if (!h->accounting) return;
  h->t_total += dt;
  h->t_proc[h->cur] += dt;
  gt_proc *p = &h->procs[h->cur];
  const gt_bracket *b = p->nb > 0 ? &p->b[p->nb - 1] : NULL;
  if (b && b->kind == 'G')
    h->t_gc += dt;
  else if (b && b->kind == 'P')
    h->t_prim[b->prim] += dt;
  else if (p->depth > 0)
    h->t_method[p->stack[p->depth - 1]] += dt;
  else
    h->t_root += dt;
}

static void charge(gt_host *h, uint64_t now) {
  charge_at(h, truth_clock(h, now));
}

void gt_truth_reset(gt_host *h) {
  h->t_total = h->t_gc = h->t_root = 0;
  memset(h->t_method, 0, sizeof h->t_method);
  memset(h->t_prim, 0, sizeof h->t_prim);
  memset(h->t_proc, 0, sizeof h->t_proc);
  memset(h->prims, 0, sizeof h->prims);
  memset(&h->gc, 0, sizeof h->gc);
  memset(h->regions, 0, sizeof h->regions);
  h->ntop = 0;
  h->log_n = 0;
}

static uint64_t cpu_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void gt_truth_begin(gt_host *h) {
  uint64_t now = gt_now();
  charge(h, now);
  h->accounting = 1;
  h->t_begin = now;
  h->cpu_begin = cpu_now();
}

void gt_truth_end(gt_host *h) {
  uint64_t now = gt_now();
  h->cpu_end = cpu_now();
  charge(h, now);
  h->accounting = 0;
  h->t_end = now;
}

double gt_stall(const gt_host *h) {
  if (h->t_end <= h->t_begin) return 0;
  double f = 1.0 - (double)(h->cpu_end - h->cpu_begin) /
                       (double)(h->t_end - h->t_begin);
  return f < 0 ? 0 : f > 1 ? 1 : f;
}

/* Keep the GT_TOP longest steps by outer time (the upper bound of what
** the profiler measures): replace the shortest kept one when the new step
** is longer. (Kept by inner time, a pause whose time fell mostly in its
** hooks -- slow under TSan, preempted on a loaded machine -- ranks behind
** 64 calls of 40 us: core/longest_steps, TSan in a CI dry run of 12-07,
** found a GC step of 147 us the profiler measured matching none.) */
static void note_step(gt_host *h, const gt_step *s) {
  if (!h->accounting) return;
  int slot = h->ntop;
  if (h->ntop == GT_TOP) {
    slot = 0;
    for (int i = 1; i < GT_TOP; i++)
      if (h->top[i].outer_ns < h->top[slot].outer_ns) slot = i;
    if (h->top[slot].outer_ns >= s->outer_ns) return;
  } else {
    h->ntop++;
  }
  h->top[slot] = *s;
}

static void fill_step(gt_host *h, gt_step *s) {
  gt_proc *p = &h->procs[h->cur];
  s->proc = h->cur;
  s->depth = p->depth;
  for (int i = 0; i < p->depth && i < GT_STEP_FRAMES; i++)
    s->stack[i] = p->stack[i];
}

static int cmp_step(const void *a, const void *b) {
  const gt_step *x = a, *y = b;
  return x->outer_ns < y->outer_ns ? 1 : x->outer_ns > y->outer_ns ? -1 : 0;
}

int gt_longest(gt_host *h, const gt_step **out) {
  qsort(h->top, (size_t)h->ntop, sizeof h->top[0], cmp_step);
  *out = h->top;
  return h->ntop;
}

/* ------------------------------------------------------------------------
** Host callbacks and lifecycle
** --------------------------------------------------------------------- */

/* The stack walk a VM would do: innermost frame first. An incremental
** walker marks the frames it reports and stops at the first one already
** marked (the contract in <spyon/hooks.h>); a frame's depth is its index
** + 1. */
static void gt_walk(void *ud, spy_stack *st) {
  gt_host *h = ud;
  gt_proc *p = &h->procs[h->cur];
  for (int i = p->depth; i-- > 0;) {
    if (h->incremental && p->seen[i] && spy_stack_incremental(st)) {
      spy_stack_unchanged(st, (uint64_t)i + 1);
      return;
    }
    p->seen[i] = 1;
    spy_stack_push(st, p->stack[i]);
  }
}

/* Push a frame (a new frame is not yet seen by any walk). */
static void push_frame(gt_proc *p, uint64_t key) {
  if (p->depth == p->cap) {
    if (p->cap >= GT_MAX_DEPTH) return;
    int nc = p->cap ? 2 * p->cap : 256;
    uint64_t *ns = realloc(p->stack, (size_t)nc * sizeof *ns);
    uint8_t *nz = ns ? realloc(p->seen, (size_t)nc) : NULL;
    if (!ns || !nz) abort(); /* a test host: no way to go on */
    p->stack = ns;
    p->seen = nz;
    p->cap = nc;
  }
  p->stack[p->depth] = key;
  p->seen[p->depth] = 0;
  p->depth++;
}

static int gt_name_cb(void *ud, uint64_t key, char *buf, size_t len) {
  gt_host *h = ud;
  if (key >= GT_MAX_KEYS || !h->names[key]) return 1;
  snprintf(buf, len, "%s", h->names[key]);
  return 0;
}

static int gt_pname_cb(void *ud, uint64_t pid, char *buf, size_t len) {
  (void)ud;
  snprintf(buf, len, "process %llu", (unsigned long long)pid);
  return 0;
}

gt_host *gt_new(spy_profiler *p) {
  gt_host *h = calloc(1, sizeof *h);
  if (!h) return NULL;
  h->prof = p;
  h->eager_names = 1;
  h->incremental = 1;
  h->nprocs = 1;
  h->procs[0].pid = 1;
  h->last_ns = gt_now();
  gt_unit_ns();
  return h;
}

void gt_free(gt_host *h) {
  if (!h) return;
  if (h->vm) gt_detach(h);
  for (int i = 0; i < GT_MAX_KEYS; i++) free((char *)h->names[i]);
  for (int i = 0; i < GT_MAX_PROCS; i++) {
    free(h->procs[i].stack);
    free(h->procs[i].seen);
  }
  free(h);
}

int gt_attach(gt_host *h) {
  spy_host sh = {h, gt_walk, gt_name_cb, gt_pname_cb};
  int rc = spy_attach(h->prof, &sh, &h->vm);
  if (rc < 0) {
    h->vm = NULL;
    return rc;
  }
  if (h->eager_names)
    for (int k = 0; k < GT_MAX_KEYS; k++)
      if (h->names[k]) spy_name(h->vm, (uint64_t)k, h->names[k]);
  spy_process_switch(h->vm, h->procs[h->cur].pid);
  return 0;
}

int gt_detach(gt_host *h) {
  int rc = spy_detach(h->vm);
  h->vm = NULL;
  return rc;
}

void gt_method(gt_host *h, uint64_t key, const char *name) {
  if (key == 0 || key >= GT_MAX_KEYS) return;
  free((char *)h->names[key]);
  h->names[key] = strdup(name);
  if (h->vm && h->eager_names) spy_name(h->vm, key, name);
}

void gt_process(gt_host *h, int idx, uint64_t pid, const char *name) {
  if (idx < 0 || idx >= GT_MAX_PROCS) return;
  h->procs[idx].pid = pid;
  if (idx >= h->nprocs) h->nprocs = idx + 1;
  if (h->vm && name) spy_process_name(h->vm, pid, name);
  if (h->vm && idx == h->cur) spy_process_switch(h->vm, pid);
}

/* ------------------------------------------------------------------------
** The program's vocabulary
** --------------------------------------------------------------------- */

/* The host's periodic slow path, for the tick marker: spy_tick every
** tick_every polls (and at its brackets), or, with tick_every < 0, an
** interrupt check's countdown set by spy_tick_next. */
static inline void tick_poll(gt_host *h) {
  if (h->tick_every > 0 && --h->tick_left <= 0) {
    h->tick_left = h->tick_every;
    spy_tick(h->vm);
  } else if (h->tick_every < 0 && --h->tick_left < 0) {
    if (!h->tick_word) h->tick_word = spy_tick_word(h->vm, &h->tick_left) == 0;
    int counted = h->tick_period + 1;
    h->tick_left = h->tick_period =
        spy_tick_next(h->vm, counted, -h->tick_every);
  }
}
static inline void tick_bracket(gt_host *h) {
  if (h->tick_every > 0) spy_tick(h->vm);
}

void gt_enter(gt_host *h, uint64_t key) {
  gt_proc *p = &h->procs[h->cur];
  if (!h->sparse) tick_poll(h), spy_poll(h->vm);
  charge(h, gt_now());
  push_frame(p, key);
  if (h->sparse) tick_poll(h), spy_poll(h->vm);
}

void gt_leave(gt_host *h) {
  gt_proc *p = &h->procs[h->cur];
  if (!h->sparse) tick_poll(h), spy_poll(h->vm);
  charge(h, gt_now());
  if (p->depth > 0) p->depth--;
}

void gt_work(gt_host *h, uint64_t ns) {
  uint64_t n = units_for(ns);
  spy_vm *v = h->vm;
  for (uint64_t i = 0; i < n; i++) {
    gt_unit();
    tick_poll(h);
    spy_poll(v);
  }
}

void gt_work_nopoll(gt_host *h, uint64_t ns) {
  (void)h;
  gt_burn_ns(ns);
}

/* Open a bracket in the running process (NULL past GT_NEST: untracked,
** and then the test is wrong). */
static gt_bracket *open_b(gt_host *h, char kind, uint64_t t0, uint64_t t1) {
  gt_proc *p = &h->procs[h->cur];
  if (p->nb >= GT_NEST) abort();
  gt_bracket *b = &p->b[p->nb++];
  memset(b, 0, sizeof *b);
  b->kind = kind;
  b->prim = -1;
  b->t0_outer = t0;
  b->t0_inner = t1;
  return b;
}

/* The 'P' or 'G' bracket a callback at index i belongs to, or NULL. */
static gt_bracket *owner(gt_proc *p, int i) {
  while (i-- > 0)
    if (p->b[i].kind != 'C') return &p->b[i];
    else return NULL;
  return NULL;
}

/* Record the truth of bracket b, already popped from the running process,
** closed between t2 (before the hook that closed it) and t3 (after). */
static void close_b(gt_host *h, gt_bracket b, uint64_t t2, uint64_t t3) {
  gt_proc *p = &h->procs[h->cur];
  if (b.kind == 'C') {
    gt_bracket *o = owner(p, p->nb);
    if (o) {
      o->excl_max += t3 - b.cb_t0_outer;
      o->excl_min += t2 - b.cb_t0_inner;
    }
    return;
  }
  if (!h->accounting) return;
  uint64_t inner = t2 - b.t0_inner - b.excl_max;
  uint64_t outer = t3 - b.t0_outer - b.excl_min;
  if (b.kind == 'G') {
    h->gc.count++;
    h->gc.inner_ns += inner;
    h->gc.outer_ns += outer;
    if (inner > h->gc.max_inner_ns) h->gc.max_inner_ns = inner;
    if (outer > h->gc.max_outer_ns) h->gc.max_outer_ns = outer;
    gt_step s = {SPY_STEP_GC, -1, 0, {0, 0, 0, 0}, inner, outer, 0, 0, {0}};
    fill_step(h, &s);
    note_step(h, &s);
    return;
  }
  int prim = b.prim;
  gt_prim_truth *t = &h->prims[prim];
  t->calls++;
  t->inner_ns += inner;
  t->outer_ns += outer;
  if (inner > t->max_inner_ns) t->max_inner_ns = inner;
  if (outer > t->max_outer_ns) t->max_outer_ns = outer;
  gt_step s = {SPY_STEP_PRIM, prim, b.nsizes, {0, 0, 0, 0},
               inner, outer, 0, 0, {0}};
  memcpy(s.size, b.size, sizeof s.size);
  fill_step(h, &s);
  note_step(h, &s);
  if (h->log && h->log_n < h->log_cap) {
    gt_call *c = &h->log[h->log_n++];
    c->prim = prim;
    c->size[0] = b.size[0];
    c->size[1] = b.size[1];
    c->inner_ns = inner;
    c->outer_ns = outer;
  }
}

/* The begin hook is bracketed by two clock reads: the first charges the
** caller, the second starts the primitive's inner interval; the end hook
** likewise. The hooks' own time goes to the caller, in the truth as in the
** profiler (which reads its clock after the begin hook's work and before
** the end hook's). */
void gt_prim_begin(gt_host *h, int prim, unsigned nsizes,
                   const uint64_t *sizes) {
  uint64_t s[4] = {0, 0, 0, 0};
  for (unsigned i = 0; i < nsizes && i < 4; i++) s[i] = sizes[i];
  uint64_t t0 = gt_now();
  charge(h, t0);
  tick_bracket(h);
  switch (nsizes) {
  case 0: spy_prim_begin(h->vm, prim); break;
  case 1: spy_prim_begin1(h->vm, prim, s[0]); break;
  case 2: spy_prim_begin2(h->vm, prim, s[0], s[1]); break;
  case 3: spy_prim_begin3(h->vm, prim, s[0], s[1], s[2]); break;
  default: spy_prim_begin4(h->vm, prim, s[0], s[1], s[2], s[3]); break;
  }
  uint64_t t1 = gt_now();
  charge(h, t1);
  if (prim < 0 || prim >= GT_MAX_PRIMS) abort();
  gt_bracket *b = open_b(h, 'P', t0, t1);
  b->prim = prim;
  b->nsizes = nsizes > 4 ? 4 : nsizes;
  memcpy(b->size, s, sizeof s);
}

/* The bracket's time runs to t2, read just before the hook; the hook's
** own time (a sample it takes, say) is charged to what it returns to, as
** the profiler does. The truth's bookkeeping waits until after the hook:
** done between t2 and the hook, it would be time the profiler's end
** (which reads its clock inside the hook) charges to the bracket and the
** truth to the caller (under TSan, where that bookkeeping is slow, it
** moved 2 pp from the method to the primitives of
** mark/checkfree_before_call). */
static void end_hook(gt_host *h, void (*hook)(spy_vm *)) {
  uint64_t t2 = gt_now(), c2 = truth_clock(h, t2);
  tick_bracket(h);
  hook(h->vm);
  uint64_t t3 = gt_now(), c3 = truth_clock(h, t3);
  charge_at(h, c2);
  gt_proc *p = &h->procs[h->cur];
  int had = p->nb > 0;
  gt_bracket b = had ? p->b[--p->nb] : (gt_bracket){0};
  charge_at(h, c3);
  if (had) close_b(h, b, t2, t3);
}

void gt_prim_end(gt_host *h) { end_hook(h, spy_prim_end); }

void gt_prim(gt_host *h, int prim, unsigned nsizes, const uint64_t *sizes,
             uint64_t ns) {
  gt_prim_begin(h, prim, nsizes, sizes);
  gt_burn_ns(ns);
  gt_prim_end(h);
}

void gt_gc(gt_host *h, uint64_t ns) {
  uint64_t t0 = gt_now();
  charge(h, t0);
  tick_bracket(h);
  spy_gc_begin(h->vm);
  uint64_t t1 = gt_now();
  charge(h, t1);
  open_b(h, 'G', t0, t1);
  gt_burn_ns(ns);
  end_hook(h, spy_gc_end);
}

void gt_callback_begin(gt_host *h) {
  uint64_t t0 = gt_now();
  charge(h, t0);
  spy_callback_begin(h->vm);
  uint64_t t1 = gt_now();
  charge(h, t1);
  gt_bracket *b = open_b(h, 'C', t0, t1);
  b->cb_t0_outer = t0;
  b->cb_t0_inner = t1;
}

void gt_callback_end(gt_host *h) { end_hook(h, spy_callback_end); }

gt_catch gt_save(gt_host *h) {
  gt_catch c = {spy_nest_save(h->vm), h->procs[h->cur].nb, h->region_depth};
  return c;
}

static void region_close(gt_host *h, uint64_t t2, uint64_t t3);

void gt_unwind(gt_host *h, gt_catch c, int depth) {
  uint64_t t2 = gt_now();
  charge(h, t2);
  gt_proc *p = &h->procs[h->cur];
  /* The truth changes state before the hook, as at every end. */
  int nb = p->nb;
  p->nb = c.nb;
  int saved_regions = h->region_depth;
  spy_nest_unwind(h->vm, c.spy);
  uint64_t t3 = gt_now();
  p->nb = nb;
  charge(h, t3);
  while (p->nb > c.nb) close_b(h, p->b[--p->nb], t2, t3);
  h->region_depth = saved_regions;
  while (h->region_depth > c.regions) region_close(h, t2, t3);
  if (depth >= 0 && depth < p->depth) p->depth = depth;
}

void gt_process_end(gt_host *h, int idx) {
  if (idx < 0 || idx >= GT_MAX_PROCS) return;
  spy_process_end(h->vm, h->procs[idx].pid);
  h->procs[idx].nb = 0;
}

void gt_switch(gt_host *h, int idx) {
  if (idx < 0 || idx >= GT_MAX_PROCS) return;
  uint64_t t0 = gt_now();
  charge(h, t0);
  /* The hook runs while the host still shows the old process, so a sample
  ** taken inside it walks the stack of the process switched from. */
  tick_bracket(h);
  spy_process_switch(h->vm, h->procs[idx].pid);
  uint64_t t1 = gt_now();
  charge(h, t1);
  gt_proc *from = &h->procs[h->cur], *to = &h->procs[idx];
  from->out_outer = t0;
  from->out_inner = t1;
  h->cur = idx;
  if (idx >= h->nprocs) h->nprocs = idx + 1;
  /* The trailing brackets of the process switched back in did not run
  ** while it was out. */
  if (to->out_outer)
    for (int i = to->nb; i-- > 0;) {
      if (to->b[i].kind == 'C') break;
      to->b[i].excl_max += t1 - to->out_outer;
      to->b[i].excl_min += t0 - to->out_inner;
    }
}

void gt_region_begin(gt_host *h, int r) {
  uint64_t t0 = gt_now();
  charge(h, t0);
  spy_region_begin(h->vm, r);
  uint64_t t1 = gt_now();
  charge(h, t1);
  int d = h->region_depth;
  if (d >= SPY_REGION_NEST) return;
  h->region_stack[d] = r;
  h->region_t0_outer[d] = t0;
  h->region_t0_inner[d] = t1;
  h->region_depth = d + 1;
}

void gt_region_end(gt_host *h) {
  uint64_t t2 = gt_now();
  charge(h, t2);
  spy_region_end(h->vm);
  uint64_t t3 = gt_now();
  charge(h, t3);
  region_close(h, t2, t3);
}

static void region_close(gt_host *h, uint64_t t2, uint64_t t3) {
  if (h->region_depth == 0) return;
  int d = --h->region_depth;
  int r = h->region_stack[d];
  int parent = d > 0 ? h->region_stack[d - 1] : -1;
  if (!h->accounting || r < 0 || r >= GT_MAX_REGIONS) return;
  gt_region_truth *t = &h->regions[r][parent + 1];
  uint64_t inner = t2 - h->region_t0_inner[d];
  uint64_t outer = t3 - h->region_t0_outer[d];
  t->calls++;
  t->inner_ns += inner;
  t->outer_ns += outer;
  if (inner > t->max_inner_ns) t->max_inner_ns = inner;
  if (outer > t->max_outer_ns) t->max_outer_ns = outer;
}

/* ------------------------------------------------------------------------
** Reading profiles
** --------------------------------------------------------------------- */

uint32_t gt_find_frame(const spy_profile *pr, spy_frame_kind kind,
                       uint64_t key) {
  for (size_t i = 0; i < pr->nframes; i++)
    if (pr->frames[i].kind == kind && pr->frames[i].key == key)
      return (uint32_t)i;
  return SPY_NONE;
}

/* The process (index) whose tree holds node n, or -1. */
int gt_node_proc(const spy_profile *pr, uint32_t n) {
  for (unsigned guard = 0; n != SPY_NONE && guard < 100000; guard++) {
    if (pr->nodes[n].parent == SPY_NONE) {
      for (size_t i = 0; i < pr->nprocesses; i++)
        if (pr->processes[i].root == n) return (int)i;
      return -1;
    }
    n = pr->nodes[n].parent;
  }
  return -1;
}

int gt_proc_index(const spy_profile *pr, uint64_t pid) {
  for (size_t i = 0; i < pr->nprocesses; i++)
    if (pr->processes[i].pid == pid) return (int)i;
  return -1;
}

/* Self time of frame f, in process proc (-1: all processes). */
uint64_t gt_frame_self(const spy_profile *pr, uint32_t f, int proc) {
  uint64_t ns = 0;
  if (f == SPY_NONE) return 0;
  for (size_t i = 0; i < pr->nnodes; i++)
    if (pr->nodes[i].frame == f &&
        (proc < 0 || gt_node_proc(pr, (uint32_t)i) == proc))
      ns += pr->nodes[i].self_ns;
  return ns;
}

/* Total time of frame f: nodes with f and no ancestor with f (recursion
** would otherwise count twice). */
uint64_t gt_frame_total(const spy_profile *pr, uint32_t f) {
  uint64_t ns = 0;
  for (size_t i = 0; i < pr->nnodes; i++) {
    if (pr->nodes[i].frame != f) continue;
    int nested = 0;
    for (uint32_t a = pr->nodes[i].parent; a != SPY_NONE;
         a = pr->nodes[a].parent)
      if (pr->nodes[a].frame == f) nested = 1;
    if (!nested) ns += pr->nodes[i].total_ns;
  }
  return ns;
}

uint64_t gt_process_totals(const spy_profile *pr) {
  uint64_t ns = 0;
  for (size_t i = 0; i < pr->nprocesses; i++)
    ns += pr->processes[i].total_ns;
  return ns;
}

/* ------------------------------------------------------------------------
** The standard program
** --------------------------------------------------------------------- */

static const char *const std_names[GT_K_NSTD] = {
  NULL,           "Main>>run",    "Parser>>parse", "Lexer>>next",
  "Model>>step",  "Model>>small", "Printer>>emit", "Alloc>>new",
};

int gt_std_register(spy_profiler *p, gt_std *s) {
  memset(s, 0, sizeof *s);
  for (int k = 0; k < GT_K_NSTD; k++) s->weight[k] = 1.0;
  s->mul = spy_prim_register(p, "LargeInt>>mul", "a,b", SPY_PRIM_COST);
  if (s->mul < 0) return s->mul;
  s->copy = spy_prim_register(p, "String>>copy", "n", SPY_PRIM_COST);
  if (s->copy < 0) return s->copy;
  return 0;
}

void gt_std_define(gt_host *h, const gt_std *s) {
  char buf[64];
  for (int k = 1; k < GT_K_NSTD; k++) {
    if (s->key_base)
      snprintf(buf, sizeof buf, "%s#%llu", std_names[k],
               (unsigned long long)s->key_base);
    else
      snprintf(buf, sizeof buf, "%s", std_names[k]);
    gt_method(h, s->key_base + (uint64_t)k, buf);
  }
}

/* mean * weight, drawn uniformly within +-50 %. */
static uint64_t cost(uint64_t *rng, const gt_std *s, int k, uint64_t mean) {
  double m = (double)mean * s->weight[k];
  uint64_t lo = (uint64_t)(m * 0.5), hi = (uint64_t)(m * 1.5);
  return gt_rand_range(rng, lo, hi);
}

void gt_std_run(gt_host *h, const gt_std *s, uint64_t run_ns,
                uint64_t seed) {
  uint64_t rng = seed ? seed : 88172645463325252ull;
  uint64_t kb = s->key_base;
  uint64_t end = gt_now() + run_ns;
  gt_enter(h, kb + GT_K_MAIN);
  for (unsigned it = 0; gt_now() < end; it++) {
    gt_work(h, cost(&rng, s, GT_K_MAIN, 3000));

    gt_enter(h, kb + GT_K_PARSE);
    gt_work(h, cost(&rng, s, GT_K_PARSE, 15000) / 2);
    gt_enter(h, kb + GT_K_LEX);
    gt_work(h, cost(&rng, s, GT_K_LEX, 10000));
    gt_leave(h);
    gt_work(h, cost(&rng, s, GT_K_PARSE, 15000) / 2);
    gt_leave(h);

    gt_enter(h, kb + GT_K_STEP);
    gt_work(h, cost(&rng, s, GT_K_STEP, 30000));
    {
      uint64_t sz[2];
      if (s->long_prims && it % 10 == 9) {
        sz[0] = gt_rand_range(&rng, 600, 900);
        sz[1] = gt_rand_range(&rng, 600, 900);
      } else {
        sz[0] = gt_rand_range(&rng, 50, 250);
        sz[1] = gt_rand_range(&rng, 50, 250);
      }
      gt_prim(h, s->mul, 2, sz, 2 * sz[0] * sz[1]);
    }
    gt_enter(h, kb + GT_K_SMALL);
    gt_work(h, cost(&rng, s, GT_K_SMALL, 4000));
    gt_leave(h);
    gt_leave(h);

    gt_enter(h, kb + GT_K_EMIT);
    gt_work(h, cost(&rng, s, GT_K_EMIT, 8000));
    {
      uint64_t n = gt_rand_range(&rng, 500, 3000);
      gt_prim(h, s->copy, 1, &n, 1000 + 5 * n);
    }
    gt_leave(h);

    if (it % 8 == 7) {
      gt_enter(h, kb + GT_K_ALLOC);
      gt_work(h, cost(&rng, s, GT_K_ALLOC, 2000));
      gt_gc(h, cost(&rng, s, GT_K_ALLOC, 60000));
      gt_leave(h);
    }
  }
  gt_leave(h);
}
