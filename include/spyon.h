/*
** spyon.h: the public API of libspyon, a sampling profiler that lives inside
** an interpreter. This header is the reference documentation.
**
** The pieces:
**   spy_profiler  one profiling session: options, registered primitives and
**                 regions, the sampler thread, the aggregated data.
**   spy_vm        one attached interpreter thread. Its hot-path hooks are
**                 inline functions in <spyon/hooks.h>.
**   spy_profile   a snapshot of the results (<spyon/profile.h>): what every
**                 report, export, file and tool reads.
**
** Threads. The interpreter thread owns its spy_vm: spy_attach, the hooks,
** spy_name, spy_process_name and spy_detach are called only from it. The
** hooks never lock, allocate or wait; when the sampler falls behind, samples
** are dropped and counted. spy_profiler_new/free, registration, spy_start,
** spy_stop and spy_profile_take may be called from any one controlling thread
** (often the interpreter thread itself). The sampler thread never calls into
** the interpreter and never reads interpreter memory.
**
** Errors. Every call that can fail returns 0 (or a non-negative id) on
** success and a negative SPY_E* code on failure; spy_strerror() names it.
** Nothing in the library prints, exits or aborts.
*/
#ifndef SPYON_H
#define SPYON_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

#define SPY_VERSION_MAJOR 0
#define SPY_VERSION_MINOR 1
#define SPY_VERSION_PATCH 0
#define SPY_VERSION_STRING "0.1.0"
/* (major << 16) | (minor << 8) | patch, comparable with <. */
#define SPY_VERSION_HEX                                                  \
  ((SPY_VERSION_MAJOR << 16) | (SPY_VERSION_MINOR << 8) | SPY_VERSION_PATCH)

#if defined(__GNUC__)
#define SPY_API __attribute__((visibility("default")))
#define SPY_INTERNAL __attribute__((visibility("hidden")))
#else
#define SPY_API
#define SPY_INTERNAL
#endif

/* The version of the library actually linked (SPY_VERSION_HEX form). */
SPY_API unsigned spy_version(void);
SPY_API const char *spy_version_string(void);

/* ------------------------------------------------------------------------
** Errors
** --------------------------------------------------------------------- */

/* X(name, code, message). Codes are stable: new ones are only appended. */
#define SPY_ERRORS(X)                                                        \
  X(SPY_EINVAL, -1, "invalid argument")                                      \
  X(SPY_ENOMEM, -2, "out of memory")                                         \
  X(SPY_ESTATE, -3, "call not allowed in the current state")                 \
  X(SPY_EFULL, -4, "capacity exhausted")                                     \
  X(SPY_EEXIST, -5, "already exists")                                        \
  X(SPY_ENOENT, -6, "no such item")                                          \
  X(SPY_EIO, -7, "input/output error")                                       \
  X(SPY_EFORMAT, -8, "malformed input")                                      \
  X(SPY_EVERSION, -9, "unsupported format version")                          \
  X(SPY_ETHREAD, -10, "thread error")                                        \
  X(SPY_ENOTSUP, -11, "not supported here")

enum spy_error {
#define SPY_ERR_ENUM_(name, code, msg) name = code,
  SPY_ERRORS(SPY_ERR_ENUM_)
#undef SPY_ERR_ENUM_
};

/* A static message for an error code ("unknown error" for any other value). */
SPY_API const char *spy_strerror(int err);

/* ------------------------------------------------------------------------
** Options
** --------------------------------------------------------------------- */

typedef enum spy_mode {
  /* The VM knows when it enters and leaves a primitive and checks the clock
  ** there, so every tick is charged to what was running when it fell due. */
  SPY_MODE_POLL = 0,
  /* MessageTally style: a timer marks a sample due and the next poll takes
  ** it; primitive bracketing is ignored for attribution. For comparison. */
  SPY_MODE_TIMER = 1
} spy_mode;

/* What marks a sample due (vm-hooks/mark.h; docs/embedding.md). */
typedef enum spy_marker {
  /* The sampler thread wakes at the sampling rate and marks. */
  SPY_MARKER_THREAD = 0,
  /* A POSIX timer per interpreter thread signals it (SIGRTMIN+5) at each
  ** sampling interval; the sampler thread wakes only to drain. */
  SPY_MARKER_SIGNAL = 1,
  /* The host calls spy_tick() from its periodic slow path; the sampler
  ** thread wakes only to drain (and marks threads stuck in a long
  ** primitive). */
  SPY_MARKER_TICK = 2
} spy_marker;

/* What a sample weighs (spy_options.clock). */
typedef enum spy_clock {
  /* Wall time (default): time a thread spends descheduled is charged to
  ** what it runs when it comes back. */
  SPY_CLOCK_WALL = 0,
  /* The thread's own CPU time: samples fall due on the same wall-time
  ** grid, but each weighs the CPU time the thread used between the
  ** previous sample's grid point and its own (what it ran after its grid
  ** point, before the hook that took it, goes to the next sample), so a
  ** loaded machine does not distort the profile. Primitive and GC
  ** durations (totals, longest steps) stay wall time. */
  SPY_CLOCK_CPU = 1
} spy_clock;

typedef struct spy_options {
  uint64_t interval_ns;    /* sampling interval; default 100000 (10 kHz) */
  spy_mode mode;           /* default SPY_MODE_POLL */
  unsigned max_depth;      /* frames kept per sample, >= 2; default 128: the
                              leaf-most and root-most halves are kept and the
                              cut is marked */
  size_t ring_bytes;       /* per-thread sample ring; power of two >= 64 KiB
                              and at least twice a full-depth sample (about
                              16 * max_depth bytes); default 4 MiB */
  size_t obs_ring_bytes;   /* per-thread cost-observation ring; default 1 MiB */
  unsigned reservoir;      /* cost observations kept per primitive; default
                              4096, at most 2^24 (the sampler holds up to
                              1.5 times as many, 64 bytes each, while it
                              selects them) */
  unsigned longest;        /* longest single steps kept; default 20 */
  unsigned max_prims;      /* primitive ids available; default 1024 */
  unsigned max_regions;    /* region ids available; default 256 */
  int force_clock_gettime; /* 1: do not use the TSC; default 0. The clock
                              is chosen once per process, by the first
                              profiler made: a later 1 where the TSC is
                              already in use gives SPY_ENOTSUP */
  /* Native stacks inside primitives (vm-hooks/native.c). Off by default.
  ** When on, each attached thread gets a SIGPROF every native_interval_ns
  ** while profiling runs (a timer of its own; nothing else wakes up); if
  ** the thread is inside a primitive then, the handler records the native
  ** call stack, so natives[] is a sample of the time spent in primitives,
  ** short calls included, saying which C functions each primitive spent
  ** its time in. The call tree the runtime builds is not affected (the
  ** tools can show native frames under their primitive:
  ** spy_profile_natives_to_tree). Addresses only: the tools name them
  ** (spy_profile_symbolize). The
  ** library installs its own SIGPROF handler, once per process, at the
  ** first spy_attach with this on, and leaves it installed; spy_attach
  ** fails with SPY_EEXIST if another SIGPROF handler (not SIG_DFL or
  ** SIG_IGN) is installed. A thread that blocks SIGPROF gets no native
  ** samples. */
  int native_stacks;           /* 0 or 1; default 0 */
  uint64_t native_interval_ns; /* default 1000000 (1 ms); 10 us .. 10 s */
  /* Frames of each thread's stack that spyon keeps a copy of, so that
  ** incremental walks (spy_stack_unchanged in <spyon/hooks.h>) cost only
  ** the frames new since the previous walk. Reserved as address space
  ** (16 bytes a frame, touched only as deep as stacks go); a deeper stack
  ** falls back to full walks. 0 turns incremental walks off; default
  ** 1048576; at most 2^26. */
  unsigned stack_copy;
  /* Processes per thread whose open brackets (spy_process_switch inside a
  ** primitive) can be kept while they are switched out; default 64, 1 ..
  ** 65536. When the table is full the oldest kept nesting is dropped and
  ** counted (spy_counters.nest_dropped). */
  unsigned saved_processes;
  /* Primitive accounting. 0 (default): cheap. spy_prim_begin/end read no
  ** clock unless a sample is due or the call is one of a random subset
  ** timed for cost observations (priority sampling: at most reservoir *
  ** (1 + ln(calls / reservoir)) calls of a SPY_PRIM_COST primitive, and
  ** fewer where obs_budget says so); call counts are exact, each
  ** primitive's total time is estimated from the samples that fell inside
  ** it (the profile marks it SPY_PRIM_ESTIMATED), and a call not timed
  ** that a sample fell in is measured from where it must have begun by, a
  ** lower bound within an interval of its time (so maxima and the longest
  ** steps find the long calls and never make a short one long). 1: every
  ** call is
  ** timed (two clock reads each) and totals, maxima and the longest steps
  ** are exact. */
  int exact_prims;
  /* What marks samples due; default SPY_MARKER_THREAD, which needs
  ** nothing from the host. A host that calls spy_tick() from its periodic
  ** slow path and at its brackets should choose SPY_MARKER_TICK: it costs
  ** no wake-ups at all (bench/cost.sh). With SPY_MARKER_SIGNAL the library
  ** installs a SIGRTMIN+5 handler once per process, at the first
  ** spy_attach, and spy_attach fails with SPY_EEXIST if another handler
  ** owns that signal; its interval must be at least 50 us (SPY_EINVAL):
  ** a timer signal costs 10-20 us on a virtual machine, and at shorter
  ** intervals the thread would do nothing but take signals. */
  spy_marker marker;
  spy_clock clock;         /* default SPY_CLOCK_WALL */
  /* Cheap accounting: the share of a cost-recording primitive's own time
  ** that timing its calls for cost observations may cost (about 250 ns a
  ** call timed, all told). Each call is timed with probability min(1,
  ** obs_budget * its mean time / 250 ns), the mean from the calls timed so
  ** far: a primitive of 0.2 us calls has about one call in a hundred
  ** timed, one of 2 ms calls every call, and the reservoir of a cheap
  ** primitive fills only after reservoir / that probability calls. The
  ** observations stay a uniform sample of the calls. Default 0.01; 0: no
  ** limit but the reservoir's; 0 .. 1. */
  double obs_budget;
  /* 1: no sampler thread while a single thread is attached: that thread
  ** drains its own rings into the profile, at its spy_tick_next calls
  ** every 10 ms or so (the sampler thread's wake-ups otherwise), and only
  ** when the profiler's lock is free (a snapshot or spy_counters_get
  ** being made elsewhere: it tries again at its next tick); the drain
  ** aggregates the samples there, allocating as the profile grows (tens
  ** of microseconds every 10 ms at 10 kHz), which the sampler thread
  ** otherwise does on its own core. A process
  ** that profiles its one interpreter thread then stays single-threaded,
  ** which glibc notices: its malloc and stdio skip their locks in a
  ** process that never made a thread (an idle thread costs an
  ** allocating interpreter 1.5 %: examples/largeint.st). For hosts that
  ** call spy_tick_next from their interrupt check (not from a signal
  ** handler); needs SPY_MARKER_TICK and no native stacks (else
  ** spy_profiler_new gives SPY_EINVAL). No backstop marks then: a sample
  ** that falls due inside a long primitive is found by its end (<spyon/
  ** hooks.h>, spy_tick_next). A second spy_attach starts the sampler
  ** thread, which then drains for both. 0 (default) or 1. */
  int self_drain;
} spy_options;

/* Fill *o with the defaults above. */
SPY_API void spy_options_init(spy_options *o);

/* ------------------------------------------------------------------------
** The profiler
** --------------------------------------------------------------------- */

typedef struct spy_profiler spy_profiler;
typedef struct spy_vm spy_vm;
typedef struct spy_stack spy_stack;       /* defined in <spyon/hooks.h> */
typedef struct spy_profile spy_profile;   /* defined in <spyon/profile.h> */

/* Create a profiler with options *o (NULL: defaults). Chooses the clock
** the first time in a process (at most about 0.3 ms: the TSC rate is read
** where the CPU publishes it, else measured over a 0.2 ms spin and refined
** as the process runs). Returns 0 and sets *out, or
** SPY_EINVAL for a NULL out or an option out of range (zero interval, depth
** below 2, ring not a power of two or too small for max_depth), SPY_ENOTSUP
** (force_clock_gettime asked for after the TSC was chosen), SPY_ENOMEM. */
SPY_API int spy_profiler_new(spy_profiler **out, const spy_options *o);

/* Stop if running, join the sampler thread and free everything.
** All spy_vm handles must have been detached first (else SPY_ESTATE and
** nothing is freed). NULL is a no-op returning 0. */
SPY_API int spy_profiler_free(spy_profiler *p);

/* Flags for spy_prim_register. */
#define SPY_PRIM_COST 1u /* record cost observations (sizes, duration) */
/* Set by the profiler in spy_profile_prim.flags, never at registration:
** total_ns and max_ns are estimates (cheap accounting, see exact_prims). */
#define SPY_PRIM_ESTIMATED 0x100u

/* Register a primitive, before or after spy_start (a module loaded later
** registers its primitives then; ids are not reused). name is copied and is what reports
** show (e.g. "Integer>>digitMultiply:neg:"); sizes names its operand sizes
** as a comma-separated list of at most 4 names ("a,b"), or NULL / "" for
** none. Returns the primitive id (>= 0) to pass to spy_prim_begin*, or
** SPY_EINVAL, SPY_EFULL (max_prims reached). Registering the same name
** twice returns the first id. Call it from the controlling thread or any
** one thread at a time (it takes the profiler's lock; never from inside a
** hook or the walker). */
SPY_API int spy_prim_register(spy_profiler *p, const char *name,
                              const char *sizes, unsigned flags);

/* Register a named user region (timers placed by the user), before or
** after spy_start; returns its id >= 0 for spy_region_begin, or SPY_EINVAL
** / SPY_EFULL. The same name twice returns the first id. Threads as for
** spy_prim_register. */
SPY_API int spy_region_register(spy_profiler *p, const char *name);

/* What an interpreter hands in when it attaches. */
typedef struct spy_host {
  void *ud; /* passed back to the callbacks */
  /* Required. Called in the interpreter thread when a sample is taken (from
  ** inside a hook): push the frame key of every frame, innermost first, with
  ** spy_stack_push(). It must not call any other spy_ function. Keys are
  ** stable for the life of the profile (method ids, not movable pointers). */
  void (*walk)(void *ud, spy_stack *st);
  /* Optional. Write a frame key's name into buf (NUL-terminated, at most len
  ** bytes) and return 0, or return nonzero if unknown. Called from the
  ** interpreter thread inside spy_stop/spy_detach for keys seen in samples
  ** but never named with spy_name(). */
  int (*name)(void *ud, uint64_t key, char *buf, size_t len);
  /* Optional. Like name, for process ids never named with
  ** spy_process_name(). */
  int (*process_name)(void *ud, uint64_t pid, char *buf, size_t len);
} spy_host;

/* Attach the calling thread as an interpreter thread. *host is copied.
** May be called before or after spy_start. Returns 0 and sets *out, or
** SPY_EINVAL (NULL argument, no walk), SPY_EEXIST (this thread is already
** attached to p), SPY_ENOMEM. */
SPY_API int spy_attach(spy_profiler *p, const spy_host *host, spy_vm **out);

/* Detach: names any keys still unnamed (host->name), hands the thread's
** remaining data to the profiler and frees the handle. Call from the
** interpreter thread. NULL is a no-op returning 0. */
SPY_API int spy_detach(spy_vm *v);

/* A shared stand-in handle on which every hook does nothing, for
** interpreter threads that are not attached: hooks then need no NULL test.
** Any thread may use it; never detach it. Its hooks cost the same as on a
** stopped profiler's handle. */
SPY_API spy_vm *spy_vm_stopped(void);

/* Name a frame key (copied). Interpreter thread only; never blocks: the name
** is queued for the sampler. Returns 0, SPY_EINVAL, SPY_ENOMEM. Naming a key
** again replaces the name. */
SPY_API int spy_name(spy_vm *v, uint64_t key, const char *name);

/* Name a process id (copied), e.g. "main (40)". As spy_name. */
SPY_API int spy_process_name(spy_vm *v, uint64_t pid, const char *name);

/* Process pid has ended (its coroutine was collected, its green thread
** terminated). If it was switched out with brackets open, they are
** dropped without being charged. Optional: a host that never calls it
** only fills the saved-process table sooner. Interpreter thread only. */
SPY_API void spy_process_end(spy_vm *v, uint64_t pid);

/* Start sampling all attached threads (and those attached later). Starts the
** sampler thread on first use. SPY_ESTATE if already running. Starting
** again after a stop continues the same profile. */
SPY_API int spy_start(spy_profiler *p);

/* Stop sampling: the hooks fall back to their single branch, the remaining
** ring contents are drained, the time since the last sample is charged, and
** unnamed keys of threads attached to the calling thread are named.
** SPY_ESTATE if not running. */
SPY_API int spy_stop(spy_profiler *p);

/* 1 while started, else 0. */
SPY_API int spy_running(const spy_profiler *p);

/* A snapshot of everything aggregated so far, as a new spy_profile owned by
** the caller (spy_profile_free). Allowed while running (the snapshot is as
** of the last drain) or stopped. Returns 0, SPY_EINVAL, SPY_ENOMEM. */
SPY_API int spy_profile_take(spy_profiler *p, spy_profile **out);

/* Free a profile and everything it owns. NULL is a no-op. */
SPY_API void spy_profile_free(spy_profile *p);

/* Set the command line shown in the header (copied). 0 or SPY_ENOMEM. */
SPY_API int spy_profile_set_command(spy_profile *p, const char *command);

/* Save to path in the binary format of docs/format.md, atomically (a
** temporary file in the same directory, fsync, rename: an existing file is
** replaced whole or not at all). Returns 0, or a negative code with a
** one-line message in err (may be NULL). Reading profiles back, reports and
** exports are in the tools library (<spyon/profile.h>, <spyon/report.h>). */
SPY_API int spy_profile_save(const spy_profile *p, const char *path,
                             char *err, size_t errlen);

/* Counters for the health line of a report, readable at any time. */
typedef struct spy_counters {
  uint64_t samples;        /* samples aggregated */
  uint64_t dropped;        /* samples dropped because a ring was full */
  uint64_t obs_dropped;    /* cost observations dropped (ring full) */
  uint64_t drains;         /* sampler wake-ups that drained data */
  uint64_t nest_dropped;   /* saved nestings dropped: saved-process table
                              full, or brackets deeper than SPY_NEST_MAX */
  uint64_t full_walks;     /* walks that visited the whole stack */
  uint64_t frames_walked;  /* frames the walkers pushed, all walks */
} spy_counters;
SPY_API int spy_counters_get(const spy_profiler *p, spy_counters *out);

#ifdef __cplusplus
}
#endif

#endif
