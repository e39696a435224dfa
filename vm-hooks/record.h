/*
** vm-hooks/record.h: the records the hooks send about what ran -- a
** SAMPLE (a tick charged to the state that runs) and a STEP (one long
** primitive call or GC pause) -- with the stack walked and the brackets
** placed in its path (internal, spyH_). The hooks (vm-hooks/hooks.c)
** decide when; this says what. Interpreter thread only: no lock, no
** allocation; a full ring drops the record and counts it (dropped).
*/
#ifndef SPY_RECORD_H
#define SPY_RECORD_H

#include "vm-hooks/slot.h"

/* Send a SAMPLE of weight w (grid ticks), taken `lag` ticks after the
** grid point it stands for (with the CPU clock the weight is the thread's
** CPU time between the grid points: vm-hooks/cpuclock.h). */
SPY_INTERNAL void spyH_emit_sample(spy_vm *v, uint64_t w, uint64_t lag);

/* A primitive call (prim, its sizes) or GC pause (prim -1) of kind
** (spy_step_kind) over [t0, t1], dur ticks: sent as a STEP if it may be
** among the thread's longest. Called after its bracket is closed, so the
** path is its caller's. */
SPY_INTERNAL void spyH_maybe_step(spy_vm *v, uint8_t kind, int32_t prim,
                                  uint64_t dur, unsigned nsizes,
                                  const uint64_t *size, uint64_t t0,
                                  uint64_t t1);

#endif
