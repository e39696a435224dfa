/*
** bench/ovm.h: a small bytecode VM for the overhead benchmark.
**
** A stack machine with a computed-goto dispatch loop, frames with locals,
** calls and returns, and two primitives. It embeds the hooks like a real
** VM: spy_poll at every method activation and every backward jump, the
** primitives bracketed with spy_prim_begin1/spy_prim_end, and a stack walk
** over its frame array. The same loop (bench/ovm_loop.h) is compiled in
** several variants:
**   ovm_run_off  with -DSPY_DISABLE: the hooks compiled out (the baseline)
**   ovm_run_on   the hooks compiled in (profiler stopped or running)
**   ovm_run_clk  no hooks, but clock_gettime read at every poll point
**   ovm_run_tsc  no hooks, but rdtsc read at every poll point
**   ovm_run_flag no hooks, a due-flag test at every poll point (a relaxed
**                atomic load and a branch: the trap design spy_poll uses)
**   ovm_run_cd   no hooks, a countdown at every poll point (load, store,
**                branch: the alternative)
** The last four isolate what each way of noticing a due sample costs the
** dispatch loop, without the rest of the library.
*/
#ifndef SPY_OVM_H
#define SPY_OVM_H

#include <spyon.h>

#include <stdatomic.h>
#include <stdint.h>

enum ovm_op {
  OP_HALT,
  OP_PUSHK,  /* k: push k */
  OP_LOADL,  /* i: push local i */
  OP_STOREL, /* i: pop into local i */
  OP_INCL,   /* i k: local i += k */
  OP_ADD,
  OP_SUB,
  OP_MUL,
  OP_AND,
  OP_LT,     /* a b -> a < b */
  OP_JMP,    /* off: pc += off (backward: poll) */
  OP_JZ,     /* off: pop; if zero pc += off */
  OP_JNZ,    /* off: pop; if nonzero pc += off */
  OP_CALL,   /* f: call function f (poll at activation) */
  OP_RET,    /* return top of stack */
  OP_PRIM,   /* p: pop n, push prim_p(n) */
  OP_POP,
  OP_NOPS
};

#define OVM_MAX_FUNCS 8
#define OVM_MAX_CODE 256
#define OVM_STACK 4096
#define OVM_FRAMES 1024
#define OVM_ARRAY 4096

typedef struct ovm_func {
  int entry, nargs, nlocals;
  uint64_t key; /* frame key for the profiler */
  const char *name;
} ovm_func;

typedef struct ovm_frame {
  int fn, ret_pc, bp;
} ovm_frame;

typedef struct ovm {
  int64_t code[OVM_MAX_CODE];
  int ncode;
  ovm_func funcs[OVM_MAX_FUNCS];
  int nfuncs;
  int fib, loop; /* function indices of the two programs */
  int prim_ids[2]; /* spy ids of the primitives (sum, hash) */
  int64_t array[OVM_ARRAY];
  /* Run state. */
  int64_t stack[OVM_STACK];
  ovm_frame frames[OVM_FRAMES];
  int nframes;
  spy_vm *spy;
  uint64_t polls;    /* poll points passed (counted by the clock variants) */
  uint64_t deadline; /* clock variants: next due time */
  uint64_t period;   /* clock variants: interval in their clock's units */
  uint64_t due;      /* clock variants: samples that fell due */
  atomic_int sim_flag; /* flag variant: never set */
  atomic_int sim_cd;   /* countdown variant: reset when it expires */
} ovm;

/* Assemble the two programs (fib and a loop-heavy one with primitive
** calls) into vm. */
void ovm_build(ovm *vm);

/* Register the VM's primitives on p and remember their ids. */
int ovm_register(ovm *vm, spy_profiler *p);

/* The stack walk for spy_host (ud is the ovm). */
void ovm_walk(void *ud, spy_stack *st);
int ovm_name(void *ud, uint64_t key, char *buf, size_t len);

/* The primitives' bodies (shared by all variants). */
int64_t ovm_prim_sum(ovm *vm, int64_t n);
int64_t ovm_prim_hash(ovm *vm, int64_t n);

/* Run function fn with one argument; the variants of the loop. */
int64_t ovm_run_off(ovm *vm, int fn, int64_t arg);
int64_t ovm_run_on(ovm *vm, int fn, int64_t arg);
int64_t ovm_run_clk(ovm *vm, int fn, int64_t arg);
int64_t ovm_run_tsc(ovm *vm, int fn, int64_t arg);
int64_t ovm_run_flag(ovm *vm, int fn, int64_t arg);
int64_t ovm_run_cd(ovm *vm, int fn, int64_t arg);

/* Out of line, like spy_poll_slow_: what the simulated variants call when
** their flag or countdown fires. */
void ovm_sim_slow(ovm *vm);

#endif
