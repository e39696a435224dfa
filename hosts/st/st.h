/*
** hosts/st/st.h: the Smalltalk interpreter's internal vocabulary.
**
** Values are tagged words: SmallIntegers carry a 1 in bit 0, Characters
** end in binary 10, and everything else is a pointer to a heap object with
** a 16-byte header. The heap never moves objects (mark-sweep), and the
** collector only runs at the interpreter's safe points (method activation
** and backward jumps), where every live value sits on a process stack, in
** a frame, in a method's literals or in a global: C code may therefore hold
** raw object pointers across allocations without registering them.
**
** Compiled methods are C structures that live for the whole run in one
** table; their index is the stable method id the profiler uses as a frame
** key.
**
** This header holds only what every component shares: values, objects,
** instructions, methods, frames, processes, the VM, and fatal errors. Each
** component declares its functions in its own header: heap.h, symbols.h,
** classes.h, loader.h (with parse.h and compile.h), interp.h (the
** dispatch loop), call.h (the call protocol), proc.h (processes and the
** scheduler), primtab.h and prims.h (primitives), stprof.h (the
** profiler). Cross-file internals are prefixed st_.
*/
#ifndef ST_H
#define ST_H

#include <setjmp.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "hosts/st/stprof.h"

#if defined(__GNUC__)
#define st_likely(x) __builtin_expect(!!(x), 1)
#define st_unlikely(x) __builtin_expect(!!(x), 0)
#else
#define st_likely(x) (x)
#define st_unlikely(x) (x)
#endif

/* Invariants: checked in debug builds (--enable-debug builds without
** optimisation; -DST_DEBUG forces them on), free otherwise. Compile-time
** ones use _Static_assert. */
#if !defined(__OPTIMIZE__) || defined(ST_DEBUG)
#include <assert.h>
#define ST_CHECKS 1
#define st_assert(c) assert(c)
#else
#define ST_CHECKS 0
#define st_assert(c) ((void)0)
#endif

/* ===================================================================== */
/* Values                                                                */
/* ===================================================================== */

typedef uintptr_t Value;

#define IS_INT(v) (((v) & 1) != 0)
#define INT_VAL(v) ((intptr_t)(v) >> 1)
#define MK_INT(i) ((Value)(((uintptr_t)(intptr_t)(i) << 1) | 1))
#define IS_CHAR(v) (((v) & 3) == 2)
#define CHAR_VAL(v) ((unsigned)((v) >> 2))
#define MK_CHAR(c) (((Value)(c) << 2) | 2)
#define IS_PTR(v) (((v) & 3) == 0)
/* A C pointer stored in an object slot looks like a SmallInteger to the
** collector, so it is never traced. */
#define MK_RAW(p) ((Value)(p) | 1)
#define RAW_PTR(v) ((void *)((v) & ~(Value)1))

#define ST_INT_MAX (((intptr_t)1 << 62) - 1)
#define ST_INT_MIN (-((intptr_t)1 << 62))
#define FITS_INT(i) ((i) >= ST_INT_MIN && (i) <= ST_INT_MAX)

/* Object formats. */
enum {
  FMT_PTR = 0,  /* slots are Values (fixed instance variables, then indexed) */
  FMT_BYTES = 1 /* bytes after the fixed slots count; n is the byte count */
};

typedef struct Obj {
  uint32_t cls;  /* class id */
  uint8_t fmt;   /* FMT_* */
  uint8_t mark;  /* collector mark bit */
  uint16_t szc;  /* allocator size class, ST_LARGE_SZC for big objects */
  uint64_t n;    /* pointer formats: slot count; byte formats: byte count */
} Obj;

#define ST_LARGE_SZC 0xFFFF
#define OBJ(v) ((Obj *)(v))
#define SLOTS(v) ((Value *)(OBJ(v) + 1))
#define BYTES(v) ((uint8_t *)(OBJ(v) + 1))
#define NSLOTS(v) (OBJ(v)->n)

/* Class ids of the classes the VM knows by layout. Bootstrap creates them in
** this order; the kernel files then give them superclasses and methods. */
enum {
  CID_NONE = 0,
  CID_OBJECT,
  CID_UNDEFINED,
  CID_TRUE,
  CID_FALSE,
  CID_SMALLINT,
  CID_LARGEPOS,
  CID_LARGENEG,
  CID_FLOAT,
  CID_CHARACTER,
  CID_STRING,
  CID_SYMBOL,
  CID_ARRAY,
  CID_BYTEARRAY,
  CID_BLOCK,
  CID_PROCESS,
  CID_SEMAPHORE,
  CID_MESSAGE,
  CID_ASSOC,
  CID_COMPILEDMETHOD,
  CID_BEHAVIOR,
  CID_CLASS,
  CID_METACLASS,
  CID_SCHEDULER,
  CID_BOOT_LAST
};

/* Fixed slot layouts shared by C and the kernel (checked at boot). */
enum { MSG_SELECTOR, MSG_ARGS, MSG_NSLOTS };
enum { ASSOC_KEY, ASSOC_VALUE, ASSOC_NSLOTS };
enum {
  BLK_METHOD,     /* raw Method pointer */
  BLK_RECEIVER,   /* the home method's self */
  BLK_HOMEPROC,   /* Process whose stack holds the home frame */
  BLK_HOMEFRAME,  /* frame index of the home method activation */
  BLK_HOMESERIAL, /* that activation's serial, to detect dead homes */
  BLK_NSLOTS      /* copied values follow */
};
enum { PROC_HANDLE, PROC_PRIORITY, PROC_NAME, PROC_MYLIST, PROC_NSLOTS };
enum { SEM_SIGNALS, SEM_WAITERS, SEM_NSLOTS };
/* Class objects: slot 0 is the class id, then class-instance variables. */
#define CLASS_EXTRA_SLOTS 16

/* ===================================================================== */
/* Compiled code                                                         */
/* ===================================================================== */

typedef uint32_t Instr;

#define OP(i) ((i) & 0xFF)
#define ARG(i) ((i) >> 8)
#define SARG(i) ((int32_t)(i) >> 8)
#define ARG_A(i) (((i) >> 8) & 0xFF)
#define ARG_B(i) ((i) >> 16)
#define MK_OP(op, a) ((Instr)(op) | ((Instr)(a) << 8))
#define MK_OPS(op, a) ((Instr)(op) | ((Instr)(uint32_t)(a) << 8))
#define MK_OP2(op, a, b) ((Instr)(op) | ((Instr)(a) << 8) | ((Instr)(b) << 16))

/* Opcodes. The special-selector sends carry a call-site index for their
** slow path. */
#define ST_OPCODES(X)                                                      \
  X(PUSH_SELF) X(PUSH_NIL) X(PUSH_TRUE) X(PUSH_FALSE) X(PUSH_TEMP)         \
  X(PUSH_IVAR) X(PUSH_LIT) X(PUSH_INT) X(PUSH_GLOBAL) X(PUSH_REMOTE)       \
  X(STORE_TEMP) X(STORE_IVAR) X(STORE_GLOBAL) X(STORE_REMOTE)              \
  X(POPSTORE_TEMP) X(POPSTORE_IVAR) X(POPSTORE_REMOTE) X(POP) X(DUP)       \
  X(SEND) X(SUPER) X(ADD) X(SUB) X(MUL) X(LT) X(GT) X(LE) X(GE) X(EQ)      \
  X(NE) X(IDEQ) X(IDNE) X(AT) X(ATPUT) X(SIZE) X(VALUE) X(VALUE1)          \
  X(BITXOR) X(BITAND) X(BITOR) X(SHIFT) X(IDIV) X(IMOD)                     \
  X(JUMP) X(JUMPT) X(JUMPF) X(LOOP) X(RETURN) X(RETURN_SELF) X(BLOCK_RET)  \
  X(NLR) X(CLOSURE) X(TEMPVEC) X(MKARRAY) X(FORTEST) X(FORTESTDN)      \
  X(FORINC) X(FORTESTV) X(FORINCV) X(PRIMSTEP)

#define ST_OPENUM(n) OP_##n,
enum { ST_OPCODES(ST_OPENUM) OP__COUNT };
#undef ST_OPENUM

struct Method;

/* A send site with its monomorphic inline cache. */
typedef struct CallSite {
  uint32_t cid;          /* cached receiver class id; 0 = empty */
  uint16_t nargs;
  uint16_t special;      /* 1 for special-selector sites */
  struct Method *m;      /* cached target */
  Value sel;             /* selector Symbol */
  uint32_t supercid;     /* super sends: class to start the lookup in */
} CallSite;

enum {
  MF_BLOCK = 1,      /* block body, not a method */
  MF_UNWIND = 2,     /* ensure:/ifCurtailed: (temp 1 is the "complete" flag) */
  MF_HANDLER = 4,    /* on:do: (temp 1 is the handler-active flag) */
  MF_DOIT = 8,       /* top-level statement */
  MF_HIDDEN = 16,    /* machinery hidden from backtraces */
  MF_RUNS_HANDLER = 32, /* runs handler blocks (Exception>>findHandlerBelow:) */
  MF_DRIVER = 64     /* a primitive's own frame (interp.c) */
};

typedef struct Method {
  Instr *code;
  uint32_t ncode;
  uint32_t id;            /* index in the method table: the stable id */
  Value *lits;            /* literals (traced through the method table) */
  uint32_t nlits;
  uint32_t nsites;
  CallSite *sites;
  struct Method **blocks; /* nested block bodies, for OP_CLOSURE */
  uint32_t nblocks;
  Value sel;              /* selector Symbol (blocks: the home's) */
  uint32_t cid;           /* defining class (a metaclass for class side) */
  uint16_t nargs;
  uint16_t ncopied;       /* blocks: copied values after the arguments */
  uint16_t ntemps;        /* temporaries after args and copied values */
  uint16_t depth;         /* block nesting depth, 0 for methods */
  uint32_t maxstack;      /* operand stack slots needed */
  int32_t prim;           /* primitive index, or -1 */
  uint32_t flags;         /* MF_* */
  struct Method *home;    /* blocks: the enclosing method; methods: self */
  const char *file;       /* source file (interned, never freed) */
  int line;               /* line of the method header */
  uint32_t *lines;        /* source line per instruction */
} Method;

/* ===================================================================== */
/* Processes, frames, classes                                            */
/* ===================================================================== */

typedef struct Frame {
  Value *base;       /* receiver slot; args, copied values, temps follow */
  const Instr *ip;   /* where to resume when a callee returns */
  Method *m;
  Value closure;     /* block frames: the BlockClosure; method frames: 0 */
  uint64_t serial;   /* activation serial (identifies dead homes) */
} Frame;

enum { PS_READY, PS_RUNNING, PS_WAITING, PS_SUSPENDED, PS_DEAD };

typedef struct Proc {
  Value obj;            /* the Process object */
  Value *stack, *stack_end, *sp;
  Frame *frames, *frames_end, *f;
  size_t stack_bytes, frames_bytes;
  int priority;
  int state;            /* PS_* */
  uint32_t pid;         /* profiler process id */
  int is_main;
  struct Proc *next;    /* ready-queue / wait-list link */
  Value waiting_on;     /* Semaphore the process waits on, or 0 */
  uint64_t slice_left;  /* preempted: the rest of its time slice, in ns */
} Proc;

#define ST_MAX_PRIORITY 100

typedef struct MethodDict {
  Value *keys;
  Method **vals;
  uint32_t cap, count;
} MethodDict;

typedef struct ClassInfo {
  Value obj;          /* the class object */
  Value name;         /* Symbol */
  Value ivnames;      /* Array of this class's own instance variable names */
  Value pool;         /* Array of class-variable Associations */
  uint32_t super;     /* superclass id or 0 */
  uint32_t meta;      /* classes: their metaclass; metaclasses: the class */
  uint32_t ninst;     /* fixed slots of instances */
  uint8_t fmt;        /* instance format */
  uint8_t indexed;    /* instances have indexed slots or bytes */
  uint8_t is_meta;
  uint8_t declared;   /* defined by source (bootstrap classes start at 0) */
  uint8_t hidden;     /* slots before the first named one (class objects) */
  uint8_t instantiated; /* basicNew/basicNew: made an instance */
  uint32_t boot_ninst;/* bootstrap classes: the slot count C relies on */
  MethodDict md;
} ClassInfo;

/* Delay timers: a semaphore signalled at a deadline. */
typedef struct Timer {
  uint64_t due_ns;
  Value sem;
} Timer;

/* ===================================================================== */
/* The VM                                                                */
/* ===================================================================== */

/* A send's operands, for the out-of-line parts of the call protocol
** (call.h). The loop keeps them in locals and copies them in and out of
** vm->sc around those calls. */
typedef struct StCall {
  Value *sp;  /* the value stack's top */
  Method *t;  /* the method to run */
  Value rcv;  /* the receiver (a block's value: the BlockClosure) */
  int na;     /* arguments on the stack above the receiver */
  Value res;  /* a return's value */
  Frame *to;  /* the frame a return or restart goes to */
} StCall;

typedef struct Heap Heap;
typedef struct SymTab SymTab;

typedef struct VM {
  Heap *heap;
  Value nil, vtrue, vfalse;
  ClassInfo *classes;
  uint32_t nclasses, capclasses;
  Method **methods;
  uint32_t nmethods, capmethods;
  SymTab *syms;
  Value globals;         /* Array of Associations, open hashing (classes.c) */
  uint32_t nglobals;
  Value script_vars;     /* Array of Associations: top-level temporaries */
  uint64_t nscript_vars; /* how many (script_vars is a hash table) */
  Value unbound;         /* marker value of undeclared globals */
  Value specials[8];     /* selectors the VM sends itself (SP_*) */
  /* Lookup cache (class id, selector) -> method. */
  struct { uint32_t cid; Value sel; Method *m; } *mcache;
  int mc_dirty;          /* the method cache was filled since the last flush */
  int ic_dirty;          /* an inline cache was filled since the last flush */
  /* Processes. */
  Proc *cur;             /* running process */
  Proc *main;            /* the script's process */
  Proc *ready[ST_MAX_PRIORITY + 1]; /* ready queues, FIFO */
  Proc *ready_tail[ST_MAX_PRIORITY + 1];
  Proc **procs;          /* all live processes (GC roots) */
  uint32_t nprocs, capprocs;
  uint32_t next_pid;
  Timer *timers;
  uint32_t ntimers, captimers;
  uint64_t serial;       /* activation serial counter */
  uint64_t slice_ns;     /* time-slice length */
  uint64_t slice_end;    /* when the running process's slice expires */
  /* The running process's frames_end and frames + 1 (its first frame),
  ** read by the send's room check and the return's bottom check; the
  ** profiler trips them when a sample falls due (call.h). */
  uintptr_t flimit, fstop;
  int icount;            /* interrupt-check countdown */
  int iperiod;           /* what icount was set to (st_interrupt) */
  int ticks;             /* checks since the last full interrupt check */
  int idle;              /* sleeping until a Delay fires */
  int gc_pending;
  volatile int sigint;   /* set from the SIGINT handler */
  /* Results and errors. */
  int exit_code;         /* -1 while running */
  int stopping;          /* quit:, an unhandled error or SIGINT */
  int check_only;        /* load files without running their statements */
  char errbuf[1024];
  jmp_buf *oom_jmp;      /* set while a script runs: see st_out_of_memory */
  void *oom_reserve;     /* memory given back when it runs out */
  /* Script. */
  Value argv;            /* Array of Strings: script arguments */
  const char *script;
  char *kernel_dir;
  char **files;          /* source file names (methods point at them) */
  uint32_t nfiles;
  Method *sort_driver;   /* the frame of sort: with a block (call.c) */
  StCall sc;             /* a send's operands for call.c (interp.c) */
  /* Profiler glue (stprof.c). */
  StProf prof;
} VM;

/* Selectors the VM sends by itself, indexed by SP_*. */
enum {
  SP_DNU, SP_MUSTBEBOOL, SP_CANNOTRETURN, SP_NLR, SP_VALUE, SP_VALUE1,
  SP_UNDECLARED, SP__COUNT
};

#define NIL (vm->nil)
#define TRUE_V (vm->vtrue)
#define FALSE_V (vm->vfalse)
#define BOOL(c) ((c) ? vm->vtrue : vm->vfalse)

/* A value's sanity, for assertions: a SmallInteger or a Character, or a
** pointer to an object whose header names a class that exists and a known
** format. */
static inline int st_value_ok(const VM *vm, Value v) {
  if (!IS_PTR(v)) return 1;
  return v != 0 && OBJ(v)->cls < vm->nclasses && OBJ(v)->fmt <= FMT_BYTES;
}

static inline int st_values_ok(const VM *vm, const Value *v, int n) {
  for (int k = 0; k < n; k++)
    if (!st_value_ok(vm, v[k])) return 0;
  return 1;
}

static inline uint32_t st_cid(const VM *vm, Value v) {
  (void)vm;
  if (IS_INT(v)) return CID_SMALLINT;
  if (IS_CHAR(v)) return CID_CHARACTER;
  return OBJ(v)->cls;
}

/* ===================================================================== */
/* Value accessors                                                       */
/* ===================================================================== */

static inline double st_float(Value v) {
  double d;
  __builtin_memcpy(&d, BYTES(v), sizeof d);
  return d;
}

/* Memory ran out where the run cannot go on (bytes: what was asked for,
** SIZE_MAX for an impossible size). While a script runs (stvm_run_file),
** this prints the reason and a backtrace, stops the run with status 1
** and unwinds to stvm_run_file, so that the profile is still saved;
** otherwise it is st_panic. */
void st_out_of_memory(size_t bytes) __attribute__((noreturn));
/* The VM whose script runs in this thread (st_out_of_memory needs it). */
extern _Thread_local VM *st_running_vm;

/* Fatal internal error: print and abort (VM invariant broken). */
void st_panic(const char *fmt, ...)
    __attribute__((noreturn, format(printf, 1, 2)));

#endif
