/*
** hosts/st/stprof.h: where the interpreter meets the profiler.
**
** The dispatch loop calls the hooks of <spyon/hooks.h> through the macros
** below, always on a valid spy_vm: when no profiler is attached, prof.v is
** the library's spy_vm_stopped() stand-in, so the hot path is the hook's
** own countdown or load-and-branch, with no NULL test.
** Building with -DSPY_DISABLE (the standalone hosts/st/st binary) turns
** every hook into nothing.
**
** Primitives that report to the profiler are named in the primitive table
** (prims.c); stprof.c registers them when a profiler is attached and keeps
** the registered ids here, indexed by primitive number.
*/
#ifndef ST_STPROF_H
#define ST_STPROF_H

#include <spyon.h>
#include <spyon/hooks.h>
#include <spyon/profile.h>

/* Primitives that report to the profiler: id, report name, size names.
** Sizes are in bytes (digits) for integers and elements for collections. */
#define ST_SPY_PRIMS(X)                                                   \
  X(DIGIT_MUL, "Integer>>digitMultiply:neg:", "a,b")                      \
  X(DIGIT_ADD, "Integer>>digitAdd:", "a,b")                               \
  X(DIGIT_SUB, "Integer>>digitSubtract:", "a,b")                          \
  X(DIGIT_DIV, "Integer>>digitDiv:neg:", "a,b")                           \
  X(DIGIT_SHIFT, "Integer>>bitShiftMagnitude:", "a,shift")                \
  X(DIGIT_CMP, "Integer>>digitCompare:", "a,b")                           \
  X(DIGIT_LOGIC, "Integer>>bitLogic:", "a,b")                             \
  X(DIGIT_SLICE, "Integer>>digitsFrom:count:", "n")                       \
  X(DIGIT_ACC, "LargePositiveInteger>>inplaceAdd:digitShiftBy:", "a,b")   \
  X(INT_PRINT, "Integer>>printString:", "digits")                         \
  X(CONCAT, "ArrayedCollection>>,", "a,b")                                \
  X(SEARCH, "String>>indexOf:", "n,m")                                    \
  X(REPLACE, "ArrayedCollection>>replaceFrom:to:with:startingAt:", "n")   \
  X(REPLACE_ALL, "String>>copyReplaceAll:with:", "n,m,k")                 \
  X(HASH, "String>>hash", "n")                                            \
  X(REVERSE, "ArrayedCollection>>reversed", "n")                          \
  X(CASE, "String>>asUppercase/asLowercase", "n")                         \
  X(COPY, "ArrayedCollection>>copyFrom:to:", "n")                         \
  X(SORT, "ArrayedCollection>>sort", "n")                                 \
  X(SORT_BLOCK, "ArrayedCollection>>sort:", "n")                          \
  X(COMPARE, "String>>compare:", "a,b")                                   \
  X(FILL, "ArrayedCollection>>atAllPut:", "n")                            \
  X(NEW, "Behavior>>basicNew:", "n")

#define ST_SPY_ENUM(id, name, sizes) SPYP_##id,
enum { ST_SPY_PRIMS(ST_SPY_ENUM) SPYP__COUNT };
#undef ST_SPY_ENUM
#define ST_MAX_PRIMS SPYP__COUNT

typedef struct StProf {
  spy_vm *v;              /* attached vm, or the stopped stand-in */
  spy_profiler *P;        /* the session's profiler, or NULL */
  int attached;           /* v is a real attachment */
  int owned;              /* started by Profiler spyOn: (not the CLI) */
  int running;
  int timer;              /* timer mode: poll at interrupt checks only */
  uint64_t walked;        /* vm->serial at the last walk (see walk) */
  uint32_t loading;       /* 1 + vm->files index of the file being loaded
                             (its statements are not loading), or 0 */
  int prim_id[ST_MAX_PRIMS]; /* spy primitive id per primitive, or -1 */
  uint8_t *named;         /* bitmap of process ids already named */
  size_t named_bytes;
} StProf;

struct VM;

/* The hot-path hooks. */
#define ST_PRIM_BEGIN1(vm, p, a)                                         \
  spy_prim_begin1((vm)->prof.v, (vm)->prof.prim_id[p], (a))
#define ST_PRIM_BEGIN2(vm, p, a, b)                                      \
  spy_prim_begin2((vm)->prof.v, (vm)->prof.prim_id[p], (a), (b))
#define ST_PRIM_BEGIN3(vm, p, a, b, c)                                   \
  spy_prim_begin3((vm)->prof.v, (vm)->prof.prim_id[p], (a), (b), (c))
#define ST_PRIM_END(vm) spy_prim_end((vm)->prof.v)
#define ST_GC_BEGIN(vm) spy_gc_begin((vm)->prof.v)
#define ST_GC_END(vm) spy_gc_end((vm)->prof.v)

/* Is a sample due on v? The one relaxed load and predictable branch of
** spy_poll (spy_poll_due in <spyon/hooks.h>), made here so that the
** dispatch loop can save its frame state (the walker reads it) only when a
** sample will be taken: the poll points (every send, return and backward
** jump) then cost that load alone. */
static inline int st_prof_due(spy_vm *v) { return spy_poll_due(v); }

/* Out of line (stprof.c). */
void st_prof_init(struct VM *vm);
/* Long work of the runtime's own that runs no interrupt check -- the
** collector marking and sweeping, a primitive filling a large new object
** -- calls this every ST_PROF_WORK units of it (slots, cells): a clock
** read against the deadline (spy_tick) and a sample that fell due taken
** (spy_poll), charged to the bracket open, the GC or the primitive. Else
** such work took a single sample at its end for all the grid points it
** spanned (bench/cost.sh: collections.st, its 5-7 ms collections and 2
** M-slot arrays, reached 80 % of the asked rate). Only where the frame
** state is saved (the collector's and primitives' safe points); not in
** timer mode, whose samples come at interrupt checks only. 1024 units:
** a piece of a new object's fill is 8 KB, two pages, and the kernel
** faults each page in on its first touch (1-2 us each on this project's
** virtual machines): with 4096-unit pieces a fill took 10-20 us between
** its points, more than a 100 kHz interval, and collections.st reached
** 88-92 % of that rate (basicNew:'s samples weighed 1.4-2.1 intervals
** each; 93-95 % and 1.0-1.1 now; the collector's 1.5 -> 1.2). The points
** cost nothing measurable (bench/st/ab.sh, 11-25). */
#define ST_PROF_WORK 1024
void st_prof_work(struct VM *vm);
/* After work that may have taken a while outside any check, where the
** frame state may not be saved (a new heap page faulted in): spy_tick
** alone, the sample left to the next poll. Not in timer mode. */
void st_prof_tick(struct VM *vm);
/* A poll point found a sample due (st_prof_due) and saved the frame
** state: take it (in timer mode the interrupt check takes it instead). */
void st_prof_poll(struct VM *vm);
/* The loader is reading and compiling file (interned in vm->files) from
** now on (begin; answers what to restore), has ended or paused (end, which
** first takes a sample that fell due) or has compiled a method (poll). */
uint32_t st_prof_load_begin(struct VM *vm, const char *file);
void st_prof_load_end(struct VM *vm, uint32_t prev);
void st_prof_load_poll(struct VM *vm);
/* Process pid has ended (st_proc_free). */
void st_prof_process_end(struct VM *vm, uint64_t pid);
/* Tell the profiler the running process changed. Each process is named
** the first time (again when rename is set: its priority changed). */
void st_prof_switch(struct VM *vm, uint64_t pid, const char *name,
                    int rename);
/* Create a profiler with *o, attach this thread, register primitives and
** start. Returns 0 or a negative SPY_E* code (message in vm->errbuf). */
int st_prof_start(struct VM *vm, const spy_options *o);
/* Profiler class>>primStart:/primStop: (a CTL_SPY primitive). */
int st_prof_control(struct VM *vm, uintptr_t *args, int na);
/* Stop and detach; *out receives the profile (may be NULL to discard). */
int st_prof_stop(struct VM *vm, spy_profile **out);
void st_prof_free(struct VM *vm);

#endif
