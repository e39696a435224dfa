/*
** vm-hooks/mark.h: what marks a thread's sample due (internal, spyH_).
**
** A sample falls due on a thread's grid; something must set the thread's
** mark (spyH_mark, vm-hooks/due.h) soon after the grid point passes, and
** the thread's next hook takes it. Three markers, one interface
** (spy_options.marker):
**
**   SPY_MARKER_THREAD  the sampler thread sleeps until the earliest
**                      deadline and marks (wakes at the sampling rate).
**   SPY_MARKER_SIGNAL  a POSIX timer per interpreter thread (timer_create,
**                      SIGEV_THREAD_ID, CLOCK_MONOTONIC) sends it
**                      SPYH_MARK_SIG at each grid point; the handler marks.
**                      The sampler wakes only to drain (SPYH_DRAIN_NS).
**   SPY_MARKER_TICK    the host calls spy_tick_next() from its periodic
**                      slow path (an interrupt-check countdown) and sets
**                      the countdown it returns, so that a tick comes just
**                      before each deadline; near it the thread marks its
**                      own sample at its first hook after the deadline
**                      (vm-hooks/due.h, near). Or spy_tick(): one clock
**                      read against the deadline, marking at the host's
**                      check. The sampler wakes only to drain, and then
**                      marks a thread whose deadline is long past (one
**                      inside a long primitive, which runs no slow path).
**
** The thread and signal markers' lag between a grid point and its mark
** does not depend on what the program does; spy_tick_next's deadlines are
** in the program's own time (the clock less the library's visits near
** them), and one that passes unwatched is skipped (mark.c).
*/
#ifndef SPY_MARK_H
#define SPY_MARK_H

#include <signal.h>
#include <time.h>

#include "vm-hooks/slot.h"

/* The signal of SPY_MARKER_SIGNAL: a real-time one (SIGPROF belongs to the
** native stacks, SIGALRM to the host's alarm()). */
#define SPYH_MARK_SIG (SIGRTMIN + 5)

/* The shortest interval the signal marker takes (spy_profiler_new). */
#define SPYH_MARK_SIG_MIN_NS 50000u

/* How often the sampler thread drains the rings when it does not mark
** (signal and tick markers): rarely enough that its wake-ups cost nothing
** measurable, often enough that no ring fills (a 4 MiB ring holds about
** 20 k samples; 10 ms at 100 kHz is 1000). */
#define SPYH_DRAIN_NS 10000000u
/* ... and a run's first drain, which comes sooner (sampler/sampler.c). */
#define SPYH_FIRST_DRAIN_NS 1000000u

/* spy_options.self_drain: a new run's first drain by the thread itself
** (at its spy_tick_next, mark.c), from the run's start (v->last). */
SPY_INTERNAL void spyH_drain_start(spy_vm *v);

/* One interpreter thread's marker state (SPY_MARKER_SIGNAL: its timer). */
typedef struct spyH_marker {
  spy_marker kind;
  int have_timer;
  timer_t timer;
  spy_vm *v;
} spyH_marker;

/* Install the process-wide SPYH_MARK_SIG handler if not yet installed
** (thread-safe). 0, SPY_EEXIST (another handler owns the signal) or
** SPY_ENOTSUP. */
SPY_INTERNAL int spyH_mark_install(void);

/* Bind the calling thread's slot v: for the signal marker, create its
** timer (disarmed) and point the handler at v. Call from v's thread once
** the slot is complete. 0 or an error (SPY_ENOTSUP: no timer). */
SPY_INTERNAL int spyH_marker_bind(spyH_marker *m, spy_vm *v, spy_marker kind);

/* Arm the marker on the grid origin + k * interval (ticks): the timer's
** first expiry is the first grid point after now, each a quarter interval
** late so that a timer running a little fast of the TSC never fires before
** its grid point; then every interval. Re-arming re-aligns a timer that
** drifted. Any thread. */
SPY_INTERNAL void spyH_marker_arm(spyH_marker *m, uint64_t origin,
                                  uint64_t interval);
SPY_INTERNAL void spyH_marker_disarm(spyH_marker *m);

/* Delete the timer and unpoint the handler. From v's thread, before the
** slot is freed. */
SPY_INTERNAL void spyH_marker_unbind(spyH_marker *m);

/* Signals handled / marks made by the handler in this process (tests). */
SPY_INTERNAL uint64_t spyH_mark_signals(void);

#endif
