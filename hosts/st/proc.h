/*
** hosts/st/proc.h: processes, the scheduler, timers, interrupt checks and
** the scheduling and run-control primitives (proc.c), and backtraces.
*/
#ifndef ST_PROC_H
#define ST_PROC_H

#include "hosts/st/st.h"

/* Interrupt check slow path: profiler sample, collection, timers, time
** slices, SIGINT. May switch vm->cur or set vm->stopping. */
void st_interrupt(VM *vm);

/* Run the interrupt check's slow path at the next check, keeping count of
** the checks made since the last (the profiler's tick paces itself by
** them). */
static inline void st_interrupt_soon(VM *vm) {
  vm->iperiod -= vm->icount;
  vm->icount = 0;
}

/* Scheduling and run-control primitives (CTL_* >= CTL_WAIT). args[0] is
** the receiver, na arguments follow, on the current process's stack whose
** state has been saved. On success the result replaces the receiver, the
** arguments are popped, and vm->cur may have changed; returns 0. Returns
** -1 when the primitive fails (the method's code then runs). */
int st_control(VM *vm, int ctl, Value *args, int na);

/* The current process returned from its bottom frame: retire it and run
** the next one. */
void st_proc_finished(VM *vm, Proc *p);

/* Make p the running process (profiler hook included; rename: tell the
** profiler its name again). */
void st_switch_to(VM *vm, Proc *p, int rename);

/* Run the next ready process, idling until a timer fires if none is
** ready; sets vm->stopping on deadlock or SIGINT. */
void st_schedule(VM *vm);

/* A new process that will run block (no arguments) at priority. Returns
** the Process object, or 0 if block takes arguments. */
Value st_fork_block(VM *vm, Value block, int priority);

#define ST_ICOUNT 1024
#define ST_IDLE_PID 0
#define ST_IDLE_KEY 0xFFFFFFFF00000001ull
/* "[load] FILE" frames: ST_LOAD_KEY | index in vm->files. */
#define ST_LOAD_KEY 0xFFFFFFFE00000000ull

/* Process objects and queues. */
Proc *st_proc_new(VM *vm, Value pobj, int priority, int is_main);
void st_proc_free(VM *vm, Proc *p);
void st_ready(VM *vm, Proc *p);
Proc *st_next_ready(VM *vm);
Proc *st_proc_of(VM *vm, Value pobj);
void st_sem_signal(VM *vm, Value sem);
int st_timers_due(VM *vm, uint64_t now);
uint64_t st_now_ns(void);
void st_add_timer(VM *vm, uint64_t due, Value sem);

/* Print process p's frames, innermost first, as "Class>>sel (file:line)";
** the source line of frame f stopped at ip. */
void st_backtrace(VM *vm, Proc *p, FILE *out);
int st_frame_line(Frame *f, const Instr *ip);

#endif
