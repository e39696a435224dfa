/*
** vm-hooks/slot.h: one attached interpreter thread (struct spy_vm) and the
** records it sends to the sampler (internal, spyH_).
**
** Ownership: every field below "interpreter thread only" is read and written
** by the owning thread alone; the sampler sees the slot through the rings,
** the atomics and, once the thread is quiescent (stopped or detached), the
** statistics.
*/
#ifndef SPY_SLOT_H
#define SPY_SLOT_H

#include <stddef.h>
#include <pthread.h>
#include <spyon/hooks.h>
#include <stdatomic.h>
#include <time.h>

#include "vm-hooks/ring.h"

/* What the profiler shares with its slots. Written before spy_start and
** read-only while running, except the atomics. */
typedef struct spyH_cfg {
  uint64_t interval;         /* ticks */
  uint64_t hook_cap;         /* ticks: longest credible bracketing hook */
  spy_mode mode;
  uint32_t leaf_cap, root_cap;
  uint32_t longest;          /* steps kept */
  uint32_t reservoir;        /* cost observations kept per primitive */
  double obs_margin;         /* reservoir + 8 sqrt(reservoir) + 8 (vm-hooks/obs.h) */
  uint32_t max_prims;
  atomic_uint nprims;        /* registered so far (grows while running) */
  const unsigned *prim_flags;/* [max_prims], SPY_PRIM_* */
  atomic_uint_least64_t *obs_tau; /* [max_prims]: the sampler keeps the
                                     calls of priority below this (its
                                     reservoir's largest once full) */
  uint32_t max_regions;
  atomic_uint nregions;
  atomic_uint_least64_t epoch;  /* bumped by every spy_start */
  atomic_uint_least64_t origin; /* start of the current run, ticks */
  int native;                /* spy_options.native_stacks */
  uint32_t stack_copy;       /* spy_options.stack_copy */
  int exact_prims;           /* spy_options.exact_prims */
  double obs_budget;         /* spy_options.obs_budget (0 with exact) */
  int cpu_clock;             /* spy_options.clock == SPY_CLOCK_CPU */
  int tick_marker;           /* spy_options.marker == SPY_MARKER_TICK */
  uint32_t saved_processes;  /* spy_options.saved_processes */
  uint64_t native_interval;  /* ticks */
  /* spy_options.self_drain: the drains' period (ticks) once a run has
  ** had its first few, and the sampler's half of a drain made by the
  ** attached thread itself (sampler/sampler.c, spyS_self_drain). */
  int self_drain;
  uint64_t drain_period;
  int (*drain)(spy_vm *v);
} spyH_cfg;

/* Record types. */
enum {
  SPYH_REC_PAD = 0,
  SPYH_REC_SAMPLE = 1, /* a tick (or several) charged to a state */
  SPYH_REC_STEP = 2,   /* one long primitive call or GC pause */
  SPYH_REC_REGION = 3, /* one region's exact time */
  SPYH_REC_OBS = 4,    /* one cost observation (obs ring) */
  SPYH_REC_NATIVE = 5  /* one native stack (native ring, vm-hooks/native.h) */
};

/* A bracket's place in a sample's path: the frame (a primitive, GC or
** region) goes after the first `depth` frames from the root. */
#define SPYH_PLACE_RUNNING 0x100u /* in kind: the bracket takes the sample
                                    (not waiting on a callback) */
typedef struct spyH_place {
  uint32_t kind;   /* SPY_FRAME_PRIM, SPY_FRAME_GC or SPY_FRAME_REGION, with
                      SPYH_PLACE_RUNNING */
  int32_t id;      /* primitive or region id; -1: unknown (not shown) */
  uint64_t depth;
} spyH_place;

/* SAMPLE and STEP. Followed by nmarks spyH_place (outermost first, depths
** non-decreasing), then the keys: the innermost nleaf frames innermost
** first, then the root-most nroot frames in the same direction (the root
** last); when depth > nleaf + nroot, frames between the two were cut. Of
** these nleaf + nroot keys only the first nleaf + nroot - same are sent:
** consecutive samples of a thread share most of their stack, and the
** sampler keeps the previous one. */
/* CPU-time notes kept per thread (vm-hooks/cpuclock.h), and a step's
** on-CPU share when it was not measured. */
#define SPYH_HIST 32      /* notes kept, at each level (cpuclock.h) */
#define SPYH_HIST_STRIDE 32 /* every 32nd note goes to the coarse level */
#define SPYH_CPU_UNKNOWN 255

typedef struct spyH_sample {
  spyH_rec h;
  uint64_t pid;
  uint64_t ticks;    /* SAMPLE: weight; STEP: duration */
  uint64_t depth;    /* frames on the host's stack */
  uint64_t size[4];  /* STEP: operand sizes */
  int32_t prim;      /* STEP: the primitive, or -1 */
  uint8_t nsizes;    /* STEP */
  uint8_t nmarks;
  uint8_t kind;      /* STEP: spy_step_kind */
  uint8_t cpu_pct;   /* STEP: % of it the thread was on the CPU, 0..100;
                        SPYH_CPU_UNKNOWN (255) when not measured */
  uint16_t nleaf, nroot;
  uint32_t same;     /* SAMPLE: root-most keys shared with this thread's
                        previous SAMPLE, not sent; STEP: 0 */
} spyH_sample;

/* REGION: followed by n int32 region ids, outermost first (the path). */
typedef struct spyH_region_rec {
  spyH_rec h;
  uint64_t ticks;
  uint32_t n;
  uint32_t pad_;
} spyH_region_rec;

/* OBS: one primitive call offered to the reservoir. */
typedef struct spyH_obs_rec {
  spyH_rec h;
  uint32_t prim;
  uint32_t gc;
  uint64_t ticks;
  uint64_t prio;     /* its priority: uniform, smaller is kept first */
  uint64_t cap;      /* the thread's budget cap for the primitive when it
                        sent this (vm-hooks/obs.h): the calls it
                        times from now have priorities below; UINT64_MAX
                        none */
  uint64_t size[4];
} spyH_obs_rec;

/* A name queued for the sampler (spy_name / spy_process_name). */
typedef struct spyH_name {
  struct spyH_name *next;
  int is_process;
  uint64_t key;
  char name[];
} spyH_name;

/* Exact per-primitive totals kept by the interpreter thread. Relaxed atomics
** so that a snapshot taken while running is well defined. */
typedef struct spyH_pstat {
  atomic_uint_least64_t calls; /* counted at begin */
  /* Cost observations (vm-hooks/obs.h): the count of the next call that
  ** draws a priority (interpreter thread only). calls and draw_at first,
  ** in this order: hot.calls_. */
  atomic_uint_least64_t draw_at;
  atomic_uint_least64_t ticks, max;
} spyH_pstat;
_Static_assert(sizeof(atomic_uint_least64_t) == sizeof(uint64_t) &&
                   sizeof(spyH_pstat) == SPY_PRIM_WORDS_ * sizeof(uint64_t),
               "the inline hooks read calls and draw_at as uint64_t words");

/* One open bracket of the running process (vm-hooks/hooks.c). */
enum { SPYH_B_PRIM = 1, SPYH_B_CALLBACK, SPYH_B_GC, SPYH_B_REGION };
#define SPYH_DEPTH_UNKNOWN UINT64_MAX
/* The fields (spy_bracket_, in <spyon/hooks.h> for the inline fast
** paths):
**   kind     SPYH_B_*
**   nsizes   PRIM
**   timed    PRIM, GC: 2 both ends read the clock (exact); 1 t0 estimated
**            at the first sample inside; 0 untimed
**   id       PRIM, REGION: the id, or -1 if out of range
**   gc0      PRIM: the thread's GC count at begin
**   depth    stack depth at begin (REGION: always known; PRIM, GC: found
**            when a callback begins above it)
**   t0       when it began (ticks; see timed)
**   prio     PRIM, timed: its cost-observation priority
**   excl     PRIM, GC: ticks not its own (callbacks, switched out)
**   size     PRIM: [0, nsizes)
** The inline begin of an untimed primitive writes kind, nsizes, timed, id,
** depth and its sizes only; gc0, t0, prio and excl are set when the
** bracket is timed (its slow begin, or the first sample inside: take_due
** zeroes excl then). */
typedef spy_bracket_ spyH_bracket;
_Static_assert(SPYH_B_PRIM == SPY_B_PRIM_ && SPYH_B_CALLBACK == SPY_B_CALLBACK_,
               "the inline hooks' bracket kinds");
_Static_assert(SPYH_DEPTH_UNKNOWN == SPY_DEPTH_UNKNOWN_, "and depth");

/* A stop made by another thread: when, and the run it ended. */
#define SPYH_STOPS 8
typedef struct spyH_stop {
  atomic_uint_least64_t at, epoch, origin;
} spyH_stop;

/* A process switched out with brackets open (hooks.c). */
typedef struct spyH_saved {
  uint64_t pid;      /* valid when n > 0 */
  uint64_t out_at;   /* when it was switched out (ticks) */
  uint64_t serial;   /* for evicting the oldest */
  uint32_t n;
  spyH_bracket b[SPY_NEST_MAX];
} spyH_saved;

struct spy_vm {
  spy_hot_ hot; /* first: the inline hooks read it */
  spyH_cfg *cfg;
  spy_host host;
  pthread_t thread;
  struct spy_profiler *prof; /* the profiler attached to */

  spyH_ring ring;            /* samples, steps, regions */
  spyH_ring obs_ring;        /* cost observations */
  _Atomic(spyH_name *) names;
  atomic_uint_least64_t deadline_pub; /* deadline, for the marking side */
  atomic_uint_least64_t marked_upto;  /* the marking side's clock when it
                                         last marked (vm-hooks/due.h) */
  atomic_uint_least64_t marked_first; /* ... when it first marked since the
                                         last take, 0 if not since */
  /* Stops made by other threads, to charge up to at the next slow path
  ** (vm-hooks/due.h): a single-producer ring, counts written and read. */
  spyH_stop stopq[SPYH_STOPS];
  atomic_uint_least64_t stopq_w, stopq_r;
  atomic_uint_least64_t dropped, obs_dropped, nest_dropped;
  atomic_uint_least64_t hook_ticks;   /* time spent in slow paths */
  atomic_uint_least64_t full_walks, frames_walked;
  atomic_uint_least64_t pid_pub;
  spyH_pstat *pstat;         /* [cfg->max_prims] */
  /* Cost observations (vm-hooks/obs.h): per primitive, the threshold
  ** pstat's draw_at was drawn for, and the call count when the run
  ** began. */
  uint64_t *gap_tau;         /* [cfg->max_prims] */
  uint64_t *calls0;          /* [cfg->max_prims] */
  /* The timing budget (spy_options.obs_budget, vm-hooks/obs.h):
  ** per primitive, this run's timed calls of this thread (count and
  ** ticks) and the priority cap their mean sets, which only falls
  ** (UINT64_MAX: none yet). Interpreter thread only. */
  uint64_t *obs_n, *obs_ticks, *obs_cap; /* [cfg->max_prims] each */
  /* Native stacks (cfg->native only; vm-hooks/native.h). The SIGPROF
  ** handler is native_ring's only producer. native_prim is the innermost
  ** primitive + 1 (0: none), written by the interpreter thread's hooks and
  ** read by the handler. native_timer signals this thread every native
  ** interval while profiling runs (native_timer_ok: it exists). */
  spyH_ring native_ring;
  atomic_uint_least64_t native_prim, native_dropped;
  timer_t native_timer;
  int native_timer_ok;
  struct spyH_marker *marker; /* vm-hooks/mark.h (the profiler's) */
  /* Trip words (spy_trip_word): the host's own check words the marking
  ** side sets with every mark (vm-hooks/due.h). Registered by v's thread:
  ** word and value first, then trip_n (release). */
  uintptr_t *trip_word[SPY_TRIP_MAX];
  uintptr_t trip_value[SPY_TRIP_MAX];
  atomic_uint trip_n;
  atomic_uint trip_marking;  /* marks being made (spyH_raise) */
  atomic_uint_least64_t cpu_origin; /* CPU clock: the thread's CPU ticks at
                                       the run's start (or its attach) */
  /* The thread's CPU time noted by the sampler at its drains, for telling
  ** long steps spent descheduled (vm-hooks/cpuclock.h, both halves). */
  atomic_uint_least64_t hist_wall[2][SPYH_HIST], hist_cpu[2][SPYH_HIST];
  atomic_uint_least64_t hist_n;
  atomic_uint_least64_t gc_count, gc_ticks, gc_max;

  /* Interpreter thread only. */
  uint64_t epoch;            /* cfg->epoch this state belongs to */
  int tracking;              /* 1: every hook since the last sync ran its
                                slow path, so the brackets are exact */
  uint64_t last;             /* time charged up to */
  uint64_t cpu_last;         /* CPU clock: thread CPU ticks charged up to */
  uint64_t cpu_epoch;        /* the run cpu_last belongs to */
  uint64_t deadline;         /* next grid point */
  uint64_t mark_first;       /* marked_first of the mark last taken */
  /* spy_tick_next (vm-hooks/mark.c): when the host's previous tick ran
  ** (in the program's time), its checks' pace (ticks per check, x 256),
  ** how long before the deadline the hooks start reading the clock; the
  ** time the ticks and near checks took since the last sample and in all,
  ** when the last one ended and the host's part of one (vm-hooks/due.h). */
  uint64_t tick_at, tick_pace, tick_lead, tick_n; /* tick_n: returned */
  uint64_t tick_backlog;     /* skipped grid time, spread over samples */
  int *tick_word;            /* the host's countdown (spy_tick_word) */
  uint64_t tick_uncounted;   /* checks it was cut short by */
  uint64_t tick_time, tick_checks; /* their long-run sums, decaying */
  uint64_t tick_debt, tick_spent, tick_out, tick_host;
  /* spy_options.self_drain: when this thread's next spy_tick_next drains
  ** (UINT64_MAX: never), and the step to the one after (mark.c). */
  uint64_t drain_at, drain_step;
  uint64_t pid;
  uint64_t attached_at;
  /* The walk (hooks.c). walk_buf takes pushes: copy_cap by position, then
  ** a ring of root_cap; copy is the last full stack, root first. */
  uint64_t *walk_buf;        /* [copy_cap + root_cap] */
  uint64_t *copy;            /* [copy_cap], NULL when stack_copy is 0 */
  uint64_t copy_cap, copy_n;
  uint64_t copy_pid;
  int copy_ok;
  size_t walk_bytes, copy_bytes; /* mapped sizes */
  uint64_t *cur_keys;        /* [leaf_cap + root_cap]: this sample's keys */
  uint64_t *prev_keys;       /* the previous SAMPLE's keys, as sent */
  uint32_t prev_n;
  uint32_t hook_n;           /* bracketing hook calls, for sample_cost */
  spyH_bracket b[SPY_NEST_MAX]; /* hot.nest_ open (hot.b_ points here) */
  spyH_saved *saved;         /* [cfg->saved_processes] */
  uint64_t saved_serial;
  uint32_t nsaved;           /* entries with n > 0 */
  uint64_t *longest;         /* [cfg->longest]: this thread's longest steps
                                so far, to skip stack walks for short ones */
  uint64_t longest_min;      /* smallest kept once full, else 0 */
  uint32_t nlongest;
};

/* The inline hooks of <spyon/hooks.h> read a spy_vm through SPY_HOT_(v):
** the hot fields must be its first member. */
_Static_assert(offsetof(struct spy_vm, hot) == 0,
               "spy_hot_ must be the first member of struct spy_vm");

/* The native-stack ring's size (cfg->native only). */
#define SPYH_NATIVE_RING (256u << 10)

/* Open brackets of the running process (may exceed SPY_NEST_MAX; deeper
** ones are counted, not tracked). The inline fast paths of
** <spyon/hooks.h> change it too. */
static inline uint32_t spyH_nest(const spy_vm *v) {
  return __atomic_load_n(&v->hot.nest_, __ATOMIC_RELAXED);
}

/* Brackets tracked (the nesting may go deeper; those are only counted). */
static inline uint32_t spyH_tracked(const spy_vm *v) {
  uint32_t n = spyH_nest(v);
  return n < SPY_NEST_MAX ? n : SPY_NEST_MAX;
}

/* Whether v is the spy_vm_stopped() stand-in. */
SPY_INTERNAL int spyH_is_stopped_vm(const spy_vm *v);

/* Allocate a slot for the calling thread (rings sized from o). */
SPY_INTERNAL int spyH_slot_new(spy_vm **out, spyH_cfg *cfg,
                               const spy_options *o, const spy_host *host);
SPY_INTERNAL void spyH_slot_free(spy_vm *v);

/* Charge the time since the last sample up to `until` to the current state,
** as one final sample (spy_stop, spy_detach). Interpreter thread only. */
SPY_INTERNAL void spyH_final(spy_vm *v, uint64_t until);

/* Charge each stop made by another thread and not yet settled, up to it,
** in the run it ended (adopted first if this thread never ran a slow path
** in it). Returns the last one's epoch, 0 if none. Interpreter thread. */
SPY_INTERNAL uint64_t spyH_settle_stops(spy_vm *v);

/* The same from outside the hooks (spy_stop on the owning thread, or a
** stop made elsewhere): first adopt the current run's state if needed. */
SPY_INTERNAL void spyH_settle(spy_vm *v, uint64_t until);

/* Turn the calling thread's own hooks off after settling a stop: its
** brackets are no longer tracked and are forgotten at the next run. */
SPY_INTERNAL void spyH_quiet(spy_vm *v);

/* Take the queued names (oldest first); the caller frees the list. */
SPY_INTERNAL spyH_name *spyH_take_names(spy_vm *v);

#endif
