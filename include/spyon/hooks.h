/*
** spyon/hooks.h: the hot-path hooks an interpreter calls. Reference
** documentation; see docs/embedding.md for a walk-through.
**
** All hooks take the spy_vm of the calling interpreter thread and must be
** called only from that thread. None of them locks, allocates or waits; all
** are async-signal-unsafe (call them from the interpreter loop, not from a
** signal handler).
**
** Cost when the profiler is stopped: every hook is one load and one
** predictable branch (spy_process_switch adds one store).
** Compiled with -DSPY_DISABLE every hook is an empty inline function.
**
** Where to call them (seed 004):
**   spy_poll            at every interrupt check: method activation and
**                       backward jumps. Takes a sample when one is due.
**   spy_prim_begin..end  around every non-trivial primitive; n operand sizes
**                       (0..4) are recorded for cost fitting. The time
**                       between them is charged to the primitive, never to
**                       the code that runs next. Pairs may nest up to
**                       SPY_PRIM_NEST deep (a primitive that calls back
**                       into the interpreter); deeper pairs are ignored.
**   spy_process_switch  before the new process runs; a sample that fell due
**                       is charged to the process switched from.
**   spy_gc_begin/end    around every collection; shown as a "GC" frame
**                       under the stack that triggered it.
**   spy_region_begin/end around user-named regions (nestable up to
**                       SPY_REGION_NEST); exact times per region, and the
**                       region shown as a frame in the tree.
*/
#ifndef SPYON_HOOKS_H
#define SPYON_HOOKS_H

#include <spyon.h>
#include <stdatomic.h>

#ifdef __cplusplus
extern "C" {
#endif

#define SPY_PRIM_NEST 8
#define SPY_REGION_NEST 16

#if defined(__GNUC__)
#define SPY_UNLIKELY(x) __builtin_expect(!!(x), 0)
#else
#define SPY_UNLIKELY(x) (x)
#endif

/* The first bytes of every spy_vm: what the inline hooks read. Private:
** do not touch these fields; they are here only so the hooks can inline. */
typedef struct spy_hot_ {
  atomic_int trap;   /* nonzero: a sample is due (set by the sampler) */
  atomic_int active; /* nonzero while the profiler runs */
} spy_hot_;

#define SPY_HOT_(v) ((spy_hot_ *)(void *)(v))

/* ------------------------------------------------------------------------
** The stack walk: spy_host.walk receives a spy_stack and pushes keys.
** --------------------------------------------------------------------- */

struct spy_stack {
  uint64_t *keys_;    /* private */
  uint32_t leaf_cap_; /* private: innermost frames kept */
  uint32_t root_cap_; /* private: root-most frames kept (a ring) */
  uint64_t depth_;    /* private: frames pushed so far */
};

/* Push the next frame's key, innermost frame first. Any depth is fine: the
** leaf-most and root-most frames are kept and the cut between them marked. */
static inline void spy_stack_push(spy_stack *s, uint64_t key) {
  uint64_t d = s->depth_++;
  if (d < s->leaf_cap_)
    s->keys_[d] = key;
  else if (s->root_cap_)
    s->keys_[s->leaf_cap_ + (d - s->leaf_cap_) % s->root_cap_] = key;
}

/* For very deep stacks, a walker that can jump (frames in an array, say)
** need not visit every frame: push the innermost spy_stack_leaf_cap()
** frames, call spy_stack_skip() with the number of frames between them and
** the root-most spy_stack_root_cap() ones, then push those. Skipped frames
** count in the depth (the cut node says how many were left out). Skip only
** where at least spy_stack_root_cap() frames still follow; with both caps
** 0 (a walk that only counts frames) the whole stack may be skipped. */
static inline uint32_t spy_stack_leaf_cap(const spy_stack *s) {
  return s->leaf_cap_;
}
static inline uint32_t spy_stack_root_cap(const spy_stack *s) {
  return s->root_cap_;
}
static inline void spy_stack_skip(spy_stack *s, uint64_t n) {
  s->depth_ += n;
}

/* ------------------------------------------------------------------------
** Out-of-line halves (exported, but call the inline hooks instead).
** --------------------------------------------------------------------- */

SPY_API void spy_poll_slow_(spy_vm *v);
SPY_API void spy_prim_begin_slow_(spy_vm *v, int prim, unsigned n,
                                  uint64_t s0, uint64_t s1, uint64_t s2,
                                  uint64_t s3);
SPY_API void spy_prim_end_slow_(spy_vm *v);
SPY_API void spy_process_switch_slow_(spy_vm *v, uint64_t pid);
SPY_API void spy_process_set_(spy_vm *v, uint64_t pid);
SPY_API void spy_gc_begin_slow_(spy_vm *v);
SPY_API void spy_gc_end_slow_(spy_vm *v);
SPY_API void spy_region_begin_slow_(spy_vm *v, int region);
SPY_API void spy_region_end_slow_(spy_vm *v);

/* ------------------------------------------------------------------------
** The hooks
** --------------------------------------------------------------------- */

#ifndef SPY_DISABLE

/* The interrupt-check hook: one load and one predictable branch. When the
** sampler thread has marked a sample due, takes it. */
static inline void spy_poll(spy_vm *v) {
  if (SPY_UNLIKELY(atomic_load_explicit(&SPY_HOT_(v)->trap,
                                        memory_order_relaxed)))
    spy_poll_slow_(v);
}

static inline int spy_active_(spy_vm *v) {
  return atomic_load_explicit(&SPY_HOT_(v)->active, memory_order_relaxed);
}

/* Enter primitive prim (an id from spy_prim_register) with 0..4 operand
** sizes (their meaning is the one named at registration). */
static inline void spy_prim_begin(spy_vm *v, int prim) {
  if (SPY_UNLIKELY(spy_active_(v))) spy_prim_begin_slow_(v, prim, 0, 0, 0, 0, 0);
}
static inline void spy_prim_begin1(spy_vm *v, int prim, uint64_t a) {
  if (SPY_UNLIKELY(spy_active_(v))) spy_prim_begin_slow_(v, prim, 1, a, 0, 0, 0);
}
static inline void spy_prim_begin2(spy_vm *v, int prim, uint64_t a,
                                   uint64_t b) {
  if (SPY_UNLIKELY(spy_active_(v))) spy_prim_begin_slow_(v, prim, 2, a, b, 0, 0);
}
static inline void spy_prim_begin3(spy_vm *v, int prim, uint64_t a,
                                   uint64_t b, uint64_t c) {
  if (SPY_UNLIKELY(spy_active_(v))) spy_prim_begin_slow_(v, prim, 3, a, b, c, 0);
}
static inline void spy_prim_begin4(spy_vm *v, int prim, uint64_t a,
                                   uint64_t b, uint64_t c, uint64_t d) {
  if (SPY_UNLIKELY(spy_active_(v))) spy_prim_begin_slow_(v, prim, 4, a, b, c, d);
}

/* Leave the innermost primitive entered with spy_prim_begin*. A begin made
** while the profiler was stopped has no end to match; that is handled. */
static inline void spy_prim_end(spy_vm *v) {
  if (SPY_UNLIKELY(spy_active_(v))) spy_prim_end_slow_(v);
}

/* The thread now runs process pid (any id; name it with spy_process_name).
** Call it for the first process too, before or after spy_start. */
static inline void spy_process_switch(spy_vm *v, uint64_t pid) {
  if (SPY_UNLIKELY(spy_active_(v))) spy_process_switch_slow_(v, pid);
  else spy_process_set_(v, pid);
}

static inline void spy_gc_begin(spy_vm *v) {
  if (SPY_UNLIKELY(spy_active_(v))) spy_gc_begin_slow_(v);
}
static inline void spy_gc_end(spy_vm *v) {
  if (SPY_UNLIKELY(spy_active_(v))) spy_gc_end_slow_(v);
}

/* Enter / leave a region registered with spy_region_register. */
static inline void spy_region_begin(spy_vm *v, int region) {
  if (SPY_UNLIKELY(spy_active_(v))) spy_region_begin_slow_(v, region);
}
static inline void spy_region_end(spy_vm *v) {
  if (SPY_UNLIKELY(spy_active_(v))) spy_region_end_slow_(v);
}

#else /* SPY_DISABLE: every hook compiles to nothing. */

static inline void spy_poll(spy_vm *v) { (void)v; }
static inline void spy_prim_begin(spy_vm *v, int p) { (void)v; (void)p; }
static inline void spy_prim_begin1(spy_vm *v, int p, uint64_t a) {
  (void)v; (void)p; (void)a;
}
static inline void spy_prim_begin2(spy_vm *v, int p, uint64_t a, uint64_t b) {
  (void)v; (void)p; (void)a; (void)b;
}
static inline void spy_prim_begin3(spy_vm *v, int p, uint64_t a, uint64_t b,
                                   uint64_t c) {
  (void)v; (void)p; (void)a; (void)b; (void)c;
}
static inline void spy_prim_begin4(spy_vm *v, int p, uint64_t a, uint64_t b,
                                   uint64_t c, uint64_t d) {
  (void)v; (void)p; (void)a; (void)b; (void)c; (void)d;
}
static inline void spy_prim_end(spy_vm *v) { (void)v; }
static inline void spy_process_switch(spy_vm *v, uint64_t pid) {
  (void)v; (void)pid;
}
static inline void spy_gc_begin(spy_vm *v) { (void)v; }
static inline void spy_gc_end(spy_vm *v) { (void)v; }
static inline void spy_region_begin(spy_vm *v, int r) { (void)v; (void)r; }
static inline void spy_region_end(spy_vm *v) { (void)v; }

#endif /* SPY_DISABLE */

#ifdef __cplusplus
}
#endif

#endif
