/*
** tests/gt/gthost.h: the ground-truth host.
**
** A tiny "interpreter" that embeds the spyon hooks the way a VM would, and
** that knows exactly what it did. Its program is made of methods (frame keys
** on a virtual stack, one stack per process) whose self part burns a known
** amount of CPU in small work units with spy_poll between units (as a VM's
** backward jump would), primitives that burn CPU with no poll inside and are
** bracketed with spy_prim_begin* and spy_prim_end, GC pauses bracketed with
** spy_gc_begin/end, process switches and user regions.
**
** The truth. At every transition (method entry/exit, primitive begin/end, GC
** begin/end, process switch, region begin/end) the host reads
** CLOCK_MONOTONIC and charges the time since the previous transition to the
** state it was in: the innermost primitive, else GC, else the method on top
** of the current process's stack (or the process root when that stack is
** empty), and to the current process. Work units never read the clock, so
** the host disturbs what it measures only at transitions. Primitive, GC and
** region durations are measured twice: "inner" (between the hooks, the
** lower bound of what the profiler can see) and "outer" (around the hooks,
** the upper bound).
**
** Threads: one gt_host per interpreter thread; nothing here is shared except
** the work-unit calibration (computed once, read-only afterwards).
*/
#ifndef SPY_GTHOST_H
#define SPY_GTHOST_H

#include <spyon.h>
#include <spyon/hooks.h>
#include <spyon/profile.h>

#include <stddef.h>
#include <stdint.h>

#define GT_MAX_KEYS 4096   /* method keys are 1 .. GT_MAX_KEYS-1 */
#define GT_MAX_DEPTH (1 << 21) /* virtual frames per process (grown as used) */
#define GT_NEST 16         /* brackets per process the host tracks */
#define GT_MAX_PROCS 8
#define GT_MAX_PRIMS 64    /* primitive ids the host tracks */
#define GT_MAX_REGIONS 16
#define GT_TOP 64          /* longest steps the host keeps */
#define GT_STEP_FRAMES 32  /* stack keys kept per step (root-most first) */

/* ------------------------------------------------------------------------
** Clock and work
** --------------------------------------------------------------------- */

/* CLOCK_MONOTONIC in nanoseconds. */
uint64_t gt_now(void);

/* Nanoseconds one work unit takes on this machine (calibrated once). */
double gt_unit_ns(void);

/* Burn n work units without polling. */
void gt_burn_units(uint64_t n);

/* Burn about ns nanoseconds of CPU without polling. */
void gt_burn_ns(uint64_t ns);

/* xorshift64*: a small deterministic generator for the programs. */
uint64_t gt_rand(uint64_t *state);

/* Uniform in [lo, hi]. */
uint64_t gt_rand_range(uint64_t *state, uint64_t lo, uint64_t hi);

/* ------------------------------------------------------------------------
** The host
** --------------------------------------------------------------------- */

/* One open bracket of a process, as the host sees it: 'P' a primitive,
** 'C' a callback out of the primitive or GC below it, 'G' a GC pause.
** excl_min/excl_max bound the time that is not the bracket's own (its
** callbacks, its process switched out): the profiler's figure lies
** between them. */
typedef struct gt_bracket {
  char kind;
  int prim;
  unsigned nsizes;
  uint64_t size[4];
  uint64_t t0_outer, t0_inner;   /* around the begin hook */
  uint64_t excl_min, excl_max;
  uint64_t cb_t0_outer, cb_t0_inner; /* 'C': around its begin hook */
} gt_bracket;

typedef struct gt_proc {
  uint64_t pid;
  int depth, cap;
  uint64_t *stack;   /* [cap]; stack[0] is the root-most frame */
  uint8_t *seen;     /* [cap]; 1: reported by a walk (incremental walks) */
  int nb;            /* open brackets (at most GT_NEST tracked) */
  gt_bracket b[GT_NEST];
  uint64_t out_outer, out_inner; /* around the hook that switched it out */
} gt_proc;

/* What gt_save returns and gt_unwind takes: a catch point. */
typedef struct gt_catch {
  unsigned spy;      /* spy_nest_save */
  int nb;            /* the host's own brackets then */
  int regions;
} gt_catch;

/* Exact per-primitive figures measured by the host. */
typedef struct gt_prim_truth {
  uint64_t calls;
  uint64_t inner_ns, outer_ns;         /* sums */
  uint64_t max_inner_ns, max_outer_ns; /* the longest call */
} gt_prim_truth;

/* One primitive call or GC pause, as the host saw it. */
typedef struct gt_step {
  int kind;  /* SPY_STEP_PRIM or SPY_STEP_GC */
  int prim;  /* primitive id, -1 for GC */
  unsigned nsizes;
  uint64_t size[4];
  uint64_t inner_ns, outer_ns;
  int proc;
  int depth;                       /* frames on the stack at the call */
  uint64_t stack[GT_STEP_FRAMES];  /* root-most first (first min(depth, 32)) */
} gt_step;

/* Exact region timings per nesting path (region, parent region or -1). */
typedef struct gt_region_truth {
  uint64_t calls;
  uint64_t inner_ns, outer_ns;
  uint64_t max_inner_ns, max_outer_ns;
} gt_region_truth;

/* Optional log of every primitive call (the test provides the buffer). */
typedef struct gt_call {
  int prim;
  uint64_t size[2];
  uint64_t inner_ns, outer_ns;
} gt_call;

typedef struct gt_host {
  spy_profiler *prof;
  spy_vm *vm;
  int eager_names; /* 1: spy_name every defined key (default); 0: lazily */
  /* For SPY_MARKER_TICK: 0 (default) never calls spy_tick; N calls it at
  ** every Nth poll (a periodic slow path) and at every bracket (primitive,
  ** GC, process switch); -N counts its polls down from what spy_tick_next
  ** returns (at most N), as an interrupt check would. */
  int tick_every, tick_left, tick_period, tick_word;
  /* 1: the truth (t_method, t_prim, ...) counts the thread's CPU time, not
  ** wall time (one clock_gettime system call per transition); set before
  ** gt_attach. For the CPU clock's tests. */
  int cpu_truth;
  const char *names[GT_MAX_KEYS]; /* owned copies; NULL: unnamed */

  /* The machine state. */
  gt_proc procs[GT_MAX_PROCS];
  int nprocs, cur;
  int incremental;   /* 1: the walker stops at frames already reported
                        (default); 0: it pushes every frame */
  int sparse;        /* 1: poll only at activation (after the callee's
                        frame exists) and in loops, never at returns: the
                        placement the contract warns against */
  int region_stack[SPY_REGION_NEST];
  uint64_t region_t0_outer[SPY_REGION_NEST];
  uint64_t region_t0_inner[SPY_REGION_NEST];
  int region_depth;

  /* The truth, accumulated while `accounting` is set. */
  int accounting;
  uint64_t last_ns;  /* the previous transition */
  uint64_t t_begin, t_end;
  uint64_t cpu_begin, cpu_end; /* CLOCK_THREAD_CPUTIME_ID at begin/end */
  uint64_t t_total;
  uint64_t t_method[GT_MAX_KEYS];  /* self time of each method key */
  uint64_t t_prim[GT_MAX_PRIMS];   /* time inside each primitive */
  uint64_t t_gc;                   /* time inside GC */
  uint64_t t_root;                 /* time with an empty stack */
  uint64_t t_proc[GT_MAX_PROCS];   /* time per process */

  gt_prim_truth prims[GT_MAX_PRIMS];
  struct {
    uint64_t count, inner_ns, outer_ns, max_inner_ns, max_outer_ns;
  } gc;
  gt_region_truth regions[GT_MAX_REGIONS][GT_MAX_REGIONS + 1];

  gt_step top[GT_TOP]; /* the longest steps seen, unordered */
  int ntop;

  gt_call *log;        /* optional call log */
  size_t log_cap, log_n;
} gt_host;

/* A new host for profiler p (which may be NULL for a host that only runs the
** program), with process 0 (pid 1, "main") current. NULL when out of
** memory. Calibrates the work unit on first use. */
gt_host *gt_new(spy_profiler *p);

/* Detach if attached and free. */
void gt_free(gt_host *h);

/* Attach the calling thread (spy_attach with this host's walker and namer)
** and name the defined keys and processes when eager_names is set. Returns
** the spy_attach result. */
int gt_attach(gt_host *h);

/* spy_detach; returns its result. */
int gt_detach(gt_host *h);

/* Give a method key a name (copied). Calls spy_name when attached and
** eager_names is set. */
void gt_method(gt_host *h, uint64_t key, const char *name);

/* Define process idx (0 .. GT_MAX_PROCS-1) with pid and name. */
void gt_process(gt_host *h, int idx, uint64_t pid, const char *name);

/* Start / stop accumulating the truth (reset by gt_truth_reset). */
void gt_truth_begin(gt_host *h);
void gt_truth_end(gt_host *h);
void gt_truth_reset(gt_host *h);

/* The fraction of the accounted wall time this thread did not run (1 - its
** CPU time / wall time; 0 .. 1): how much it was preempted. A sampler can
** only notice a stall at its next clock check, so stalls blur attribution
** across that check's spacing; tests widen their systematic term by it. */
double gt_stall(const gt_host *h);

/* ------------------------------------------------------------------------
** The program's vocabulary
** --------------------------------------------------------------------- */

/* Send to method key: poll (before the callee's frame exists), then push
** it. Sparse hosts push first and poll after. */
void gt_enter(gt_host *h, uint64_t key);

/* Poll (before the frame is popped), then return from the current method.
** Sparse hosts do not poll here. */
void gt_leave(gt_host *h);

/* The current method's self work: about ns of CPU in units, spy_poll after
** every unit. */
void gt_work(gt_host *h, uint64_t ns);

/* Self work with no poll at all (an uninterruptible stretch). */
void gt_work_nopoll(gt_host *h, uint64_t ns);

/* Call primitive prim (a spy id) with nsizes (0..4) operand sizes, burning
** about ns inside with no poll. */
void gt_prim(gt_host *h, int prim, unsigned nsizes, const uint64_t *sizes,
             uint64_t ns);

/* Begin / end a primitive explicitly (for nesting and GC inside a call). */
void gt_prim_begin(gt_host *h, int prim, unsigned nsizes,
                   const uint64_t *sizes);
void gt_prim_end(gt_host *h);

/* A GC pause of about ns. */
void gt_gc(gt_host *h, uint64_t ns);

/* The innermost open primitive (or GC) calls back into interpreter code:
** until gt_callback_end the methods the host enters run as that code. */
void gt_callback_begin(gt_host *h);
void gt_callback_end(gt_host *h);

/* Non-local exits: gt_save at a catch point; gt_unwind when it catches
** (every bracket and region opened since is closed, as if ended now; the
** host's stack is popped back to depth `depth`, as a longjmp would). */
gt_catch gt_save(gt_host *h);
void gt_unwind(gt_host *h, gt_catch c, int depth);

/* Process idx has ended with brackets open (spy_process_end); its
** brackets are dropped, as the profiler drops them. */
void gt_process_end(gt_host *h, int idx);

/* Switch to process idx (spy_process_switch, then the host's own switch). */
void gt_switch(gt_host *h, int idx);

/* Enter / leave region r (a spy region id). */
void gt_region_begin(gt_host *h, int r);
void gt_region_end(gt_host *h);

/* The host's longest steps sorted longest (by outer time) first; returns
** how many (<= GT_TOP) and points *out at the host's array. */
int gt_longest(gt_host *h, const gt_step **out);

/* ------------------------------------------------------------------------
** Reading profiles: the queries the tests and benches compare with truth
** --------------------------------------------------------------------- */

/* The index of the frame (kind, key), or SPY_NONE. */
uint32_t gt_find_frame(const spy_profile *pr, spy_frame_kind kind,
                       uint64_t key);

/* The index of the process whose tree holds node n, or -1. */
int gt_node_proc(const spy_profile *pr, uint32_t n);

/* The index of the process with pid, or -1. */
int gt_proc_index(const spy_profile *pr, uint64_t pid);

/* Self time of frame f (SPY_NONE: 0) in process proc (-1: all). */
uint64_t gt_frame_self(const spy_profile *pr, uint32_t f, int proc);

/* Total time of frame f over the nodes with no ancestor on the same frame
** (so recursion does not count twice). */
uint64_t gt_frame_total(const spy_profile *pr, uint32_t f);

/* The sum of the process totals. */
uint64_t gt_process_totals(const spy_profile *pr);

/* ------------------------------------------------------------------------
** The standard program: a small mixed workload used by tests and benches.
**
**   Main>>run         self ~3 us per iteration, calls everything below
**   Parser>>parse     self ~15 us, calls Lexer>>next (self ~10 us)
**   Model>>step       self ~30 us, calls the primitive LargeInt>>mul (a,b)
**                     costing ~2 ns * a * b, then the cheap Model>>small
**                     (~4 us): the MessageTally trap
**   Printer>>emit     self ~8 us, calls String>>copy (n) ~1 us + 5 ns * n
**   Alloc>>new        every 8th iteration: self ~2 us, then a GC of ~60 us
** Costs are drawn uniformly within +-50 % of these means. With long_prims,
** one Model>>step in 10 multiplies large operands (~1 ms).
** --------------------------------------------------------------------- */

enum {
  GT_K_MAIN = 1,
  GT_K_PARSE,
  GT_K_LEX,
  GT_K_STEP,
  GT_K_SMALL,
  GT_K_EMIT,
  GT_K_ALLOC,
  GT_K_NSTD /* keys are key_base + GT_K_* */
};

typedef struct gt_std {
  int mul, copy;      /* primitive ids */
  uint64_t key_base;  /* added to every GT_K_* key */
  int long_prims;     /* see above */
  double weight[GT_K_NSTD]; /* cost multiplier per key (default 1) */
} gt_std;

/* Register the standard primitives on p (before spy_start) and fill *s with
** defaults. Returns 0 or the spy_prim_register error. */
int gt_std_register(spy_profiler *p, gt_std *s);

/* Name the standard methods on h. */
void gt_std_define(gt_host *h, const gt_std *s);

/* Run the standard program for about run_ns of wall time. */
void gt_std_run(gt_host *h, const gt_std *s, uint64_t run_ns,
                uint64_t seed);

#endif
