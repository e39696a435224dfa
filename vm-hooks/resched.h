/*
** vm-hooks/resched.h: has this thread been descheduled since a point?
** (internal; the library's half -- the inline check is spy_begin_ok_ in
** <spyon/hooks.h>).
**
** Why. With spy_tick_next, a deadline that passes while the thread is
** descheduled just before a primitive's call must be charged to the
** caller, and the primitive's begin read the clock for it: a TSC read at
** every bracketed call, 3.5 % of examples/largeint.st at 10 kHz. Between
** two hooks the thread runs the interpreter's own code, whose ticks and
** near states watch the deadline, and every end of a primitive reads the
** clock; what carries the thread past a deadline unseen before a call is
** a deschedule (a deadline the ticks misjudge by a few checks is taken at
** the next clock read -- the call's end -- within the ticks' own skid).
** So a begin reads the clock only when the thread may have been
** descheduled since the last begin that read it.
**
** How. Linux's restartable sequences: glibc (2.35 and later) registers a
** struct rseq for each thread, whose rseq_cs word names the critical
** section the thread is in; the kernel sets it to 0 when it preempts the
** thread or delivers it a signal outside that section (<linux/rseq.h>).
** A begin that read the clock stores ("arms") the address of an empty
** section there -- no instruction is ever inside it, so nothing is ever
** restarted -- and a begin that still finds it there knows the thread was
** not preempted since. The kernel checks the section at each preemption
** (version 0, its abort address outside its empty range and preceded by
** the signature glibc registered) and would end the thread for a bad one.
** A library of the process that uses rseq_cs for its own sections
** overwrites the word: the check fails and the begin reads the clock, as
** it would without rseq. Without rseq (a libc without it, registration
** turned off by GLIBC_TUNABLES, refused as under valgrind) the check is
** the clock read, as before.
**
** A virtual machine's own stalls (the hypervisor running something else)
** are invisible to the guest's kernel, and so to this check.
*/
#ifndef SPY_RESCHED_H
#define SPY_RESCHED_H

#include "vm-hooks/slot.h"

/* Find the calling thread's rseq_cs word (v's thread, at attach): sets
** v->hot.sched_ and armed_, or leaves sched_ NULL. */
SPY_INTERNAL void spyH_resched_bind(spy_vm *v);

/* Disarm on v's thread before the slot goes (a library unloaded while
** the word names its section would have the kernel read freed memory). */
SPY_INTERNAL void spyH_resched_unbind(spy_vm *v);

/* A begin has just read the clock: from here on, a deschedule shows. */
static inline void spyH_resched_arm(spy_vm *v) {
  if (v->hot.sched_)
    __atomic_store_n(v->hot.sched_, v->hot.armed_, __ATOMIC_RELAXED);
}

#endif
