/*
** spyon/hooks.h: the hot-path hooks an interpreter calls. Reference
** documentation; docs/embedding.md walks through every situation.
**
** All hooks take the spy_vm of the calling interpreter thread and must be
** called only from that thread. None of them locks, allocates or waits; all
** are async-signal-unsafe (call them from the interpreter, not from a
** signal handler). The header compiles as C99/C11 and as C++11 or later.
**
** Cost when the profiler is stopped: every hook is one load and one
** predictable branch (spy_process_switch adds one store).
** Compiled with -DSPY_DISABLE every hook is an empty inline function.
**
** Where to call them:
**   spy_poll             wherever the running method changes: every send
**                        (before the callee's frame exists), every return
**                        (before the frame is popped), and backward jumps.
**                        A due sample is taken at the next poll and charged
**                        to what runs there: a poll that comes late charges
**                        one method's time to another (skid). Trip words
**                        (below) make these polls free where the host
**                        already checks a limit.
**   spy_prim_begin..end  around every non-trivial primitive; n operand sizes
**                        (0..4) are recorded for cost fitting. The time
**                        between them is charged to the primitive, never to
**                        the code that runs next. A host whose call path
**                        has a fast path of its own uses spy_prim_try_begin*
**                        and spy_prim_try_end there (below).
**   spy_callback_begin..end  around every call a primitive makes back into
**                        interpreter code (a sort comparator, a gsub
**                        function, a metamethod): that code gets its own
**                        time; the primitive keeps only the rest.
**   spy_nest_save / spy_nest_unwind  at the catch point of every non-local
**                        exit (longjmp, exception, error, yield across C):
**                        brackets jumped over are closed.
**   spy_process_switch   before the new process runs; a sample that fell due
**                        is charged to the process switched from. Open
**                        brackets belong to the process and come back with
**                        it.
**   spy_gc_begin/end     around every collection; shown as a "GC" frame
**                        under the stack that triggered it.
**   spy_region_begin/end around user-named regions; exact times per region,
**                        and the region shown as a frame in the tree.
** Brackets of all kinds nest, in any mix, up to SPY_NEST_MAX deep per
** process; deeper ones are counted but not tracked.
*/
#ifndef SPYON_HOOKS_H
#define SPYON_HOOKS_H

#include <spyon.h>

#ifdef __cplusplus
extern "C" {
#endif

#define SPY_NEST_MAX 32   /* brackets tracked per process */
#define SPY_PRIM_NEST 8   /* older name: primitives are tracked this deep
                             at least (now SPY_NEST_MAX brackets of any
                             kind) */
#define SPY_REGION_NEST 16 /* likewise for regions */

#if defined(__GNUC__)
#define SPY_UNLIKELY(x) __builtin_expect(!!(x), 0)
#else
#define SPY_UNLIKELY(x) (x)
#endif

/* An open bracket (private: the library's, vm-hooks/slot.h documents the
** fields); here so that a primitive's begin and end can inline. */
typedef struct spy_bracket_ {
  uint8_t kind, nsizes, timed, pad_;
  int32_t id;
  uint64_t depth;
  uint64_t size[4]; /* the inline begin's stores: its first 16 + 8n bytes */
  uint64_t t0, prio, excl;
  uint32_t gc0, pad2_;
} spy_bracket_;
#define SPY_B_PRIM_ 1                 /* bracket kind: a primitive */
#define SPY_B_CALLBACK_ 2             /* ... a callback */
#define SPY_FAST_TSC_ 2               /* spy_hot_.fast_: the clock is the TSC */
#define SPY_DEPTH_UNKNOWN_ UINT64_MAX /* bracket depth: not yet walked */

/* The first bytes of every spy_vm: what the inline hooks read. Private:
** do not touch these fields; they are here only so the hooks can inline.
** They are shared with the sampler thread and written atomically; the
** accessors below use the compiler's atomic builtins so that the header
** needs neither <stdatomic.h> (C11 only) nor <atomic> (C++ only). */
typedef struct spy_hot_ {
  int trap_;     /* nonzero: a sample is due (set by the marking side) */
  int active_;   /* nonzero while this thread is profiled */
  unsigned nest_;/* open brackets of the running process */
  int fast_;     /* nonzero: primitives' and callbacks' begins and ends
                    may inline; SPY_FAST_TSC_ set: the clock is the TSC
                    (the library sets it; written by this thread only) */
  uint64_t until_;    /* spy_tick_next hosts: the clock (TSC) before which
                         a primitive's begin and end need not look at the
                         deadline; UINT64_MAX for the other markers; 0
                         while fast_ is 0 (a primitive's inline begin and
                         end test only this) */
  uint64_t tick_until_; /* the same limit whatever fast_, for spy_tick */
  uint64_t rng_;      /* cost observations' priorities (xorshift64; the
                         slow paths draw) */
  uint64_t *calls_;   /* [nprims_ * SPY_PRIM_WORDS_]: per primitive its
                         call count (counted at begin), then the count of
                         the next call that draws a priority (a geometric
                         count: vm-hooks/obs.h; written by this thread
                         only), then the library's */
  spy_bracket_ *b_;   /* [SPY_NEST_MAX] the brackets */
  unsigned nprims_;
} spy_hot_;
#define SPY_PRIM_WORDS_ 4 /* hot.calls_: words per primitive */

#define SPY_HOT_(v) ((spy_hot_ *)(void *)(v))

#if defined(__GNUC__) || defined(__clang__)
#define SPY_LOAD_RELAXED_(p) __atomic_load_n((p), __ATOMIC_RELAXED)
#else /* a plain read: a hint only; every slow path re-reads atomically */
#define SPY_LOAD_RELAXED_(p) (*(p))
#endif

/* ------------------------------------------------------------------------
** The stack walk: spy_host.walk receives a spy_stack and pushes keys.
** --------------------------------------------------------------------- */

struct spy_stack {
  uint64_t *keys_;      /* private: pushes by position up to direct_, */
  uint64_t direct_;     /*   then a ring of ring_ keys (the root-most) */
  uint32_t ring_;
  uint32_t leaf_cap_;   /* private: what spy_stack_leaf_cap() reports */
  uint32_t root_cap_;   /* private: what spy_stack_root_cap() reports */
  int incremental_;     /* private: the walk may stop early */
  uint64_t depth_;      /* private: frames pushed or skipped so far */
  uint64_t pushed_;     /* private: frames pushed */
  uint64_t unchanged_;  /* private: root-most frames taken from the copy */
};

/* Push the next frame's key, innermost frame first. Any depth is fine: the
** leaf-most and root-most frames are kept and the cut between them marked.
** After spy_stack_unchanged() pushes are ignored. */
static inline void spy_stack_push(spy_stack *s, uint64_t key) {
  if (s->unchanged_) return;
  uint64_t d = s->depth_++;
  s->pushed_++;
  if (d < s->direct_)
    s->keys_[d] = key;
  else if (s->ring_)
    s->keys_[s->direct_ + (d - s->direct_) % s->ring_] = key;
}

/* Incremental walks: the cost of a sample need not grow with stack depth.
** spyon keeps a copy of the keys this thread's walker reported last time.
** While spy_stack_incremental(s) is nonzero the walker may stop at the
** first frame that an earlier walk of this thread reported and that is
** still live, and call spy_stack_unchanged(s, n) with n the number of
** frames from the root up to and including that frame (its 1-based depth):
** spyon takes those n keys from its copy. The host's part:
**   - mark a frame when the walker pushes it, and clear the mark whenever
**     a frame is created (also when frame memory is reused);
**   - know each frame's depth from the root (caller's depth + 1);
**   - a marked frame's key does not change while it lives.
** When spy_stack_incremental(s) is 0 (the first walk, a walk after a
** process switch, a stack deeper than spy_options.stack_copy) push every
** frame. Calling spy_stack_unchanged() then, or with n larger than the
** previous walk's depth, makes spyon call the walker again for a full walk.
** Push nothing after spy_stack_unchanged(): such pushes are ignored. */
static inline int spy_stack_incremental(const spy_stack *s) {
  return s->incremental_;
}
static inline void spy_stack_unchanged(spy_stack *s, uint64_t n) {
  if (!s->unchanged_) s->unchanged_ = n ? n : 1; /* 0 is taken as 1 */
}

/* For walkers that can jump (frames in an array, say) and need no copy:
** push the innermost spy_stack_leaf_cap() frames, call spy_stack_skip()
** with the number of frames between them and the root-most
** spy_stack_root_cap() ones, then push those. Skipped frames count in the
** depth (the cut node says how many were left out). Skip only where at
** least spy_stack_root_cap() frames still follow; with both caps 0 (a walk
** that only counts frames) the whole stack may be skipped. */
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
** Trip words: polls fused with checks the host makes anyway.
**
** A poll at every send and return costs one load and one branch each,
** a few per cent of a send-heavy interpreter. Most interpreters already
** compare against a word of their own there: a frame or stack limit at
** activation, the bottom of the stack at return. Register such a word
** with a trip value that makes the check fail: whenever a sample is
** marked due on v (from the sampler thread, a signal handler or
** spy_tick), the marking side stores the trip value into every
** registered word, before setting the mark and again after. The check's
** slow path then
**   1. asks spy_trip_state(v): SPY_TRIP_TAKE (a sample is due: store
**      every word's normal value back with spy_trip_store, save the frame
**      state, call spy_poll_take), SPY_TRIP_RESTORE (nothing is due, the
**      trip is stale: store the normal values back) or SPY_TRIP_WAIT (a
**      mark is being made, or spy_tick_next is watching for a deadline a
**      few checks away: leave the words tripped, so that the next check
**      takes it even if the marking thread is preempted between its
**      stores);
**   2. goes on with the check's own test against the normal value.
** That is the poll, skid-free as spy_poll at the same places, at no cost
** while no sample is due (the safepoint trick of V8's stack limit and the
** JVM's polling page). A host that changes a word's normal value (another
** process's limits after a switch) stores it with spy_trip_store and then
** calls spy_trip_rearm, which trips the words again if a mark is pending.
** Other hooks may take a mark (a primitive's begin, say) and leave the
** words tripped: the next check's slow path finds SPY_TRIP_RESTORE.
** Read the words in the hot path with spy_trip_load (a relaxed atomic
** load: a plain load in the machine code). Polls where no such check
** exists (backward jumps) stay spy_poll.
** --------------------------------------------------------------------- */

#define SPY_TRIP_MAX 4 /* words per spy_vm */

/* Register *word with its trip value. From v's thread, after spy_attach;
** the word must stay valid until spy_detach (there is no unregistering).
** 0, SPY_EINVAL (NULL word, or v is the stopped stand-in) or SPY_EFULL
** (SPY_TRIP_MAX words registered already). */
SPY_API int spy_trip_word(spy_vm *v, uintptr_t *word, uintptr_t trip);

/* In the slow path of a tripped check: what to do (above). Any v,
** including the stopped stand-in (always SPY_TRIP_RESTORE).
** spy_trip_rearm: the host stored new normal values in its words; trip
** them again if a sample is due; returns whether one is. (Both are
** inline stand-ins under SPY_DISABLE, below.) */
enum { SPY_TRIP_RESTORE = 0, SPY_TRIP_TAKE = 1, SPY_TRIP_WAIT = 2 };
#ifndef SPY_DISABLE
SPY_API int spy_trip_state(spy_vm *v);
SPY_API int spy_trip_rearm(spy_vm *v);
#endif

#if defined(__GNUC__) || defined(__clang__)
static inline uintptr_t spy_trip_load(const uintptr_t *word) {
  return __atomic_load_n(word, __ATOMIC_RELAXED);
}
static inline void spy_trip_store(uintptr_t *word, uintptr_t value) {
  __atomic_store_n(word, value, __ATOMIC_SEQ_CST);
}
#else /* see SPY_LOAD_RELAXED_ */
static inline uintptr_t spy_trip_load(const uintptr_t *word) {
  return *(const volatile uintptr_t *)word;
}
static inline void spy_trip_store(uintptr_t *word, uintptr_t value) {
  *(volatile uintptr_t *)word = value;
}
#endif

/* With spy_tick_next (below): register the countdown itself (the int
** the interrupt check decrements; NULL unregisters). From v's thread after
** spy_attach; it must stay valid until spy_detach, and live in memory the
** interpreter reloads after calling a primitive (a field of the VM's
** struct). A primitive's end that finds a deadline near may store 0 into
** it, so that the next check ticks at once: no check ran inside the
** primitive, and the countdown set before it may reach past the
** deadline. Then `counted` at the next spy_tick_next is too large by the
** checks cut off; the library knows how many. 0, or SPY_EINVAL. */
SPY_API int spy_tick_word(spy_vm *v, int *countdown);

/* ------------------------------------------------------------------------
** Out-of-line halves (exported, but call the inline hooks instead).
** --------------------------------------------------------------------- */

SPY_API void spy_poll_slow_(spy_vm *v);
SPY_API void spy_prim_begin_slow_(spy_vm *v, int prim, unsigned n,
                                  uint64_t s0, uint64_t s1, uint64_t s2,
                                  uint64_t s3);
SPY_API void spy_prim_end_slow_(spy_vm *v);
SPY_API void spy_callback_begin_slow_(spy_vm *v);
SPY_API void spy_callback_end_slow_(spy_vm *v);
SPY_API void spy_callback_open_slow_(spy_vm *v);
SPY_API void spy_nest_unwind_slow_(spy_vm *v, unsigned saved);
SPY_API void spy_process_switch_slow_(spy_vm *v, uint64_t pid);
SPY_API void spy_process_set_(spy_vm *v, uint64_t pid);
SPY_API void spy_gc_begin_slow_(spy_vm *v);
SPY_API void spy_gc_end_slow_(spy_vm *v);
SPY_API void spy_region_begin_slow_(spy_vm *v, int region);
SPY_API void spy_region_end_slow_(spy_vm *v);
SPY_API void spy_tick_slow_(spy_vm *v);
SPY_API int spy_tick_next_slow_(spy_vm *v, int counted, int most);

/* ------------------------------------------------------------------------
** The hooks
** --------------------------------------------------------------------- */

#ifndef SPY_DISABLE

static inline int spy_active_(spy_vm *v) {
  return SPY_LOAD_RELAXED_(&SPY_HOT_(v)->active_);
}

/* Nonzero while this thread is being profiled. A host can skip computing
** operand sizes (or anything else only the profiler wants) when it is 0.
** One load. */
static inline int spy_profiling(spy_vm *v) { return spy_active_(v); }

/* The poll: one load and one predictable branch. When a sample is due,
** takes it and charges it to the running code. */
static inline void spy_poll(spy_vm *v) {
  if (SPY_UNLIKELY(SPY_LOAD_RELAXED_(&SPY_HOT_(v)->trap_))) spy_poll_slow_(v);
}

/* The poll in two halves, for a VM that keeps its frame state in locals
** of the dispatch loop and must store it before anything walks the stack:
**     if (SPY_UNLIKELY(spy_poll_due(v))) { save_state(); spy_poll_take(v); }
** spy_poll_due is the same single load as spy_poll. */
static inline int spy_poll_due(spy_vm *v) {
  return SPY_LOAD_RELAXED_(&SPY_HOT_(v)->trap_);
}
static inline void spy_poll_take(spy_vm *v) { spy_poll_slow_(v); }

/* The primitive hooks' fast path (private), inlined with GCC and clang:
** when nothing but the bracket is to be done -- no sample due, the call
** not drawn for a cost observation, no deadline of spy_tick_next near --
** begin counts the call and pushes the bracket and end pops it, without a
** call into the library. Anything else goes to the slow path, which does
** everything (vm-hooks/hooks.c). */
#if defined(__GNUC__) || defined(__clang__)
#define SPY_STORE_RELAXED_(p, x) __atomic_store_n((p), (x), __ATOMIC_RELAXED)
/* The watch of a spy_tick_next deadline: before hot.until_ none can have
** passed; after it the slow path compares the clock with the deadline.
** Ends and begins both read it: a deadline that passed before the call
** -- in host code with no check in it, or while the thread was
** descheduled -- is the caller's, and only the begin's clock read sees
** it (tests mark/checkfree_before_call, mark/descheduled_before_call). */
static inline int spy_clock_ok_(const spy_hot_ *h) {
  uint64_t u = h->until_;
  if (u == UINT64_MAX) return 1;
#if defined(__x86_64__) || defined(__i386__)
  return __builtin_ia32_rdtsc() < u;
#else
  return 0;
#endif
}
/* A bracket's first four bytes (kind, nsizes, timed, pad_) in one store:
** the ends read them in one load, and the CPU forwards a load from one
** pending store but not from several, so an end that came soon after its
** begin waited for the begin's stores to reach the cache (GCC 12 made
** three stores of the fields' assignments: a bracket around an empty
** primitive cost 8.3 ns in a tight loop, 3.2 ns with one store;
** bench/obs_window). */
static inline void spy_bracket_head_(spy_bracket_ *k, uint8_t kind,
                                     uint8_t nsizes) {
  const uint8_t head[4] = {kind, nsizes, 0, 0};
  __builtin_memcpy(k, head, sizeof head);
}
/* The fast paths as a test and a commit: each does its whole work and
** returns 1, or returns 0 having changed nothing -- not even the call
** count, which the slow path then counts (a call that draws a priority is
** always the slow path's). A call is counted at its begin, so that an
** end has only the bracket to pop. */
static inline int spy_prim_try_begin_(spy_vm *v, int prim, unsigned n,
                                      uint64_t a, uint64_t b, uint64_t c,
                                      uint64_t d) {
  spy_hot_ *h = SPY_HOT_(v);
  unsigned i = h->nest_;
  if ((unsigned)prim >= h->nprims_ || i >= SPY_NEST_MAX ||
      SPY_LOAD_RELAXED_(&h->trap_))
    return 0;
  uint64_t *count = h->calls_ + (size_t)(unsigned)prim * SPY_PRIM_WORDS_;
  uint64_t calls = SPY_LOAD_RELAXED_(count) + 1;
  if (calls >= count[1] || !spy_clock_ok_(h)) return 0;
  SPY_STORE_RELAXED_(count, calls);
  /* Only what an untimed bracket is read for: sizes past n are not read,
  ** t0, prio, excl and gc0 are set when a sample times it. */
  spy_bracket_ *k = &h->b_[i];
  spy_bracket_head_(k, SPY_B_PRIM_, (uint8_t)n);
  k->id = prim;
  k->depth = SPY_DEPTH_UNKNOWN_;
  if (n > 0) k->size[0] = a;
  if (n > 1) k->size[1] = b;
  if (n > 2) k->size[2] = c;
  if (n > 3) k->size[3] = d;
  SPY_STORE_RELAXED_(&h->nest_, i + 1);
  return 1;
}
static inline int spy_prim_try_end_(spy_vm *v) {
  spy_hot_ *h = SPY_HOT_(v);
  unsigned n = h->nest_;
  if (n - 1 >= SPY_NEST_MAX || SPY_LOAD_RELAXED_(&h->trap_)) return 0;
  const spy_bracket_ *k = &h->b_[n - 1];
  if (k->kind != SPY_B_PRIM_ || k->timed || !spy_clock_ok_(h)) return 0;
  SPY_STORE_RELAXED_(&h->nest_, n - 1);
  return 1;
}
static inline void spy_prim_begin_(spy_vm *v, int prim, unsigned n,
                                   uint64_t a, uint64_t b, uint64_t c,
                                   uint64_t d) {
  if (!spy_prim_try_begin_(v, prim, n, a, b, c, d))
    spy_prim_begin_slow_(v, prim, n, a, b, c, d);
}
static inline void spy_prim_end_(spy_vm *v) {
  if (!spy_prim_try_end_(v)) spy_prim_end_slow_(v);
}
/* A callback's fast path: its primitive (the innermost bracket) has been
** placed in the stack already (its first callback walked it), no sample
** is due and no deadline near. A timed primitive's own time excludes its
** callbacks: their begin and end read the clock then. */
static inline uint64_t spy_tsc_(void) {
#if defined(__x86_64__) || defined(__i386__)
  return __builtin_ia32_rdtsc();
#else
  return 0;
#endif
}
static inline void spy_callback_begin_(spy_vm *v) {
  spy_hot_ *h = SPY_HOT_(v);
  unsigned i = h->nest_;
  if (h->fast_ && i - 1 < SPY_NEST_MAX - 1 && !SPY_LOAD_RELAXED_(&h->trap_) &&
      spy_clock_ok_(h)) {
    const spy_bracket_ *o = &h->b_[i - 1];
    if (o->kind == SPY_B_PRIM_ && o->depth != SPY_DEPTH_UNKNOWN_ &&
        (!o->timed || (h->fast_ & SPY_FAST_TSC_))) {
      spy_bracket_ *k = &h->b_[i];
      spy_bracket_head_(k, SPY_B_CALLBACK_, 0);
      k->id = -1;
      k->gc0 = 0;
      k->depth = SPY_DEPTH_UNKNOWN_;
      k->prio = 0;
      k->excl = 0;
      k->t0 = o->timed ? spy_tsc_() : 0;
      SPY_STORE_RELAXED_(&h->nest_, i + 1);
      return;
    }
  }
  spy_callback_begin_slow_(v);
}
static inline void spy_callback_end_(spy_vm *v) {
  spy_hot_ *h = SPY_HOT_(v);
  unsigned n = h->nest_;
  if (h->fast_ && n - 2 < SPY_NEST_MAX - 1 && !SPY_LOAD_RELAXED_(&h->trap_)) {
    const spy_bracket_ *k = &h->b_[n - 1];
    spy_bracket_ *o = &h->b_[n - 2];
    if (k->kind == SPY_B_CALLBACK_ && o->kind == SPY_B_PRIM_) {
      if (k->t0 && o->timed) {
        uint64_t t = spy_tsc_();
        o->excl += t > k->t0 ? t - k->t0 : 0;
      }
      SPY_STORE_RELAXED_(&h->nest_, n - 1);
      return;
    }
  }
  spy_callback_end_slow_(v);
}
#else /* no atomic builtins: the slow paths only */
static inline int spy_prim_try_begin_(spy_vm *v, int prim, unsigned n,
                                      uint64_t a, uint64_t b, uint64_t c,
                                      uint64_t d) {
  (void)v, (void)prim, (void)n, (void)a, (void)b, (void)c, (void)d;
  return 0;
}
static inline int spy_prim_try_end_(spy_vm *v) {
  (void)v;
  return 0;
}
static inline void spy_prim_begin_(spy_vm *v, int prim, unsigned n,
                                   uint64_t a, uint64_t b, uint64_t c,
                                   uint64_t d) {
  spy_prim_begin_slow_(v, prim, n, a, b, c, d);
}
static inline void spy_prim_end_(spy_vm *v) { spy_prim_end_slow_(v); }
static inline void spy_callback_begin_(spy_vm *v) {
  spy_callback_begin_slow_(v);
}
static inline void spy_callback_end_(spy_vm *v) { spy_callback_end_slow_(v); }
#endif

/* spy_tick's fast path: before hot.tick_until_ no spy_tick_next deadline can
** have passed, and there is nothing to mark -- one line of the slot and
** the clock rather than a call that reads three (a tick after a
** collector's or a bulk fill's stretch of work finds them evicted: 250
** ns). UINT64_MAX: the host does not use spy_tick_next, the slow path
** decides. Async-signal-safe, as spy_tick. */
static inline int spy_tick_early_(spy_vm *v) {
#if (defined(__GNUC__) || defined(__clang__)) && \
    (defined(__x86_64__) || defined(__i386__))
  uint64_t u = SPY_LOAD_RELAXED_(&SPY_HOT_(v)->tick_until_);
  return u != UINT64_MAX && __builtin_ia32_rdtsc() < u;
#else
  (void)v;
  return 0;
#endif
}

/* Enter primitive prim (an id from spy_prim_register) with 0..4 operand
** sizes (their meaning is the one named at registration). */
static inline void spy_prim_begin(spy_vm *v, int prim) {
  if (SPY_UNLIKELY(spy_active_(v))) spy_prim_begin_(v, prim, 0, 0, 0, 0, 0);
}
static inline void spy_prim_begin1(spy_vm *v, int prim, uint64_t a) {
  if (SPY_UNLIKELY(spy_active_(v))) spy_prim_begin_(v, prim, 1, a, 0, 0, 0);
}
static inline void spy_prim_begin2(spy_vm *v, int prim, uint64_t a,
                                   uint64_t b) {
  if (SPY_UNLIKELY(spy_active_(v))) spy_prim_begin_(v, prim, 2, a, b, 0, 0);
}
static inline void spy_prim_begin3(spy_vm *v, int prim, uint64_t a,
                                   uint64_t b, uint64_t c) {
  if (SPY_UNLIKELY(spy_active_(v))) spy_prim_begin_(v, prim, 3, a, b, c, 0);
}
static inline void spy_prim_begin4(spy_vm *v, int prim, uint64_t a,
                                   uint64_t b, uint64_t c, uint64_t d) {
  if (SPY_UNLIKELY(spy_active_(v))) spy_prim_begin_(v, prim, 4, a, b, c, d);
}

/* Leave the innermost primitive entered with spy_prim_begin*. An end with
** no open primitive (its begin came while the profiler was stopped) is
** ignored. */
static inline void spy_prim_end(spy_vm *v) {
  if (SPY_UNLIKELY(spy_active_(v))) spy_prim_end_(v);
}

/* The same two hooks as a test and a commit, for a host whose call path
** has a fast path of its own to keep short (the Lua host's wrappers of C
** functions, hosts/lua/). spy_prim_try_begin* enters the primitive and
** returns 1 when that was all there was to do; otherwise -- the profiler
** stopped, a sample due, the call drawn to be timed for a cost
** observation, a spy_tick_next deadline near, brackets too deep -- it
** returns 0 having changed nothing, and the host then calls
** spy_prim_begin* with the same arguments (after whatever else its own
** slow path does). spy_prim_try_end: the same with spy_prim_end. A call
** entered with a try may be left with spy_prim_end, and one entered with
** spy_prim_begin* with a try. Inline: a few loads and stores, no call;
** under SPY_DISABLE they return 1. */
static inline int spy_prim_try_begin(spy_vm *v, int prim) {
  return spy_prim_try_begin_(v, prim, 0, 0, 0, 0, 0);
}
static inline int spy_prim_try_begin1(spy_vm *v, int prim, uint64_t a) {
  return spy_prim_try_begin_(v, prim, 1, a, 0, 0, 0);
}
static inline int spy_prim_try_begin2(spy_vm *v, int prim, uint64_t a,
                                      uint64_t b) {
  return spy_prim_try_begin_(v, prim, 2, a, b, 0, 0);
}
static inline int spy_prim_try_end(spy_vm *v) { return spy_prim_try_end_(v); }

/* The innermost open primitive (or GC) now runs interpreter code: a
** comparator, a replacement function, a metamethod, a block. Until the
** matching spy_callback_end, samples are charged to that code (the tree
** shows it under the primitive) and the primitive's own time stops. Call
** spy_callback_end when the code returns to the primitive; if it exits
** non-locally, spy_nest_unwind closes the callback with the rest. Nest to
** any depth (primitive, callback, primitive, callback, ...). */
static inline void spy_callback_begin(spy_vm *v) {
  if (SPY_UNLIKELY(spy_active_(v))) spy_callback_begin_(v);
}
static inline void spy_callback_end(spy_vm *v) {
  if (SPY_UNLIKELY(spy_active_(v))) spy_callback_end_(v);
}

/* Callbacks found late. A host that does not wrap every call back into
** interpreter code (a wrapper costs an extra call level per comparison)
** can find out where it stands instead, at the places that need it: at a
** poll in interpreter code, spy_prim_open(v) says whether the innermost
** open bracket is a primitive, and so whether that code was called back
** by it. If the sample due was marked while the code called back ran,
** open the callback's bracket with spy_callback_open -- like
** spy_callback_begin, but the sample due is not taken first: it belongs
** to the code called back -- then spy_poll, then spy_callback_end. If it
** was marked while the primitive's own code ran, just spy_poll with the
** primitive's frame as the stack's top (the code called back left out of
** the walk). A primitive called from code called back opens the callback
** with spy_callback_open just before its own begin, and closes it with
** spy_callback_end just after its end. While spy_callback_open runs, the
** walker must report the stack as it was when the primitive was called
** (without the code called back): that places the primitive. The Lua host
** does this (docs/lua.md). spy_prim_open is one load when profiling. */
static inline int spy_prim_open(spy_vm *v) {
  if (!spy_active_(v)) return 0;
  const spy_hot_ *h = SPY_HOT_(v);
  unsigned n = SPY_LOAD_RELAXED_(&h->nest_);
  return n - 1 < SPY_NEST_MAX && h->b_[n - 1].kind == SPY_B_PRIM_;
}
static inline void spy_callback_open(spy_vm *v) {
  if (SPY_UNLIKELY(spy_active_(v))) spy_callback_open_slow_(v);
}

/* Non-local exits. At a catch point (setjmp, pcall, try), save the nesting;
** when the catch point catches, unwind to it: every primitive, callback,
** region and GC bracket opened since is closed, innermost first, as if its
** end hook ran now (a primitive's call is counted, its time charged).
**     unsigned n = spy_nest_save(v);
**     if (setjmp(jb) == 0) run(); else spy_nest_unwind(v, n);
** Both are one load when nothing needs closing; a save made while the
** profiler was stopped is 0, and unwinding to it closes everything opened
** since the start. */
static inline unsigned spy_nest_save(spy_vm *v) {
  return SPY_LOAD_RELAXED_(&SPY_HOT_(v)->nest_);
}
static inline void spy_nest_unwind(spy_vm *v, unsigned saved) {
  if (SPY_UNLIKELY(SPY_LOAD_RELAXED_(&SPY_HOT_(v)->nest_) > saved))
    spy_nest_unwind_slow_(v, saved);
}

/* The thread now runs process pid (any id; name it with spy_process_name).
** Call it for the first process too, before or after spy_start. Brackets
** open in the process switched from are kept for it (a switch inside a
** primitive keeps the primitive) and restored when it runs again; the
** time it spends switched out is not charged to them. */
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

/* For SPY_MARKER_TICK (spy_options.marker), the simple form; prefer
** spy_tick_next below where the countdown's length can change. Call from
** the interpreter's periodic slow path (an interrupt-check countdown that
** runs every few microseconds), before spy_poll there. While running,
** one call and one clock read against the thread's next deadline,
** marking the sample due when it has passed; the poll then takes it, so
** a sample is only as precise as the ticks are frequent. Harmless with
** the other markers. Inside a long primitive no tick runs, and the
** sampler thread marks the thread when it wakes to drain (every 10 ms);
** a host can tick (and poll) inside such work itself where it pauses every
** few microseconds -- a collector between objects, a bulk copy between
** pieces (docs/embedding.md, section 11).
** Unlike the other hooks, spy_tick is async-signal-safe (it only reads the
** clock and stores the mark, as the signal marker's handler does): a host
** may call it from its own timer signal's handler in the thread. */
static inline void spy_tick(spy_vm *v) {
  if (SPY_UNLIKELY(spy_active_(v)) && !spy_tick_early_(v)) spy_tick_slow_(v);
}

/* The skid-free tick, for a host whose periodic slow path is a countdown
** of checks it makes anyway (at activations and backward jumps): call it
** there instead of spy_tick, with the number of checks counted since the
** previous call, and set the countdown to what it returns -- at most
** `most` (the host's own period), fewer when the next sample falls due
** sooner. The ticks then land just before each deadline, and within a
** few checks of it the library makes every hook (polls, tripped words,
** brackets) read the clock until the deadline passes: the sample is
** taken at the first hook after it, as the sampler thread's mark would
** be, with no wake-up. Interpreter thread only (not from a signal
** handler). With the other markers, or stopped, it returns `most`.
**   if (--countdown < 0) {             (ran out after period + 1 checks)
**     int n = spy_tick_next(v, period + 1, MOST);
**     checks += period + 1;
**     period = countdown = n;
**     if (checks >= MOST) { checks = 0; ... the host's own periodic work }
**   }
** and register the countdown with spy_tick_word (above). */
static inline int spy_tick_next(spy_vm *v, int counted, int most) {
  return SPY_UNLIKELY(spy_active_(v)) ? spy_tick_next_slow_(v, counted, most)
                                      : most;
}

#else /* SPY_DISABLE: every hook compiles to nothing. */

static inline int spy_profiling(spy_vm *v) { (void)v; return 0; }
static inline void spy_poll(spy_vm *v) { (void)v; }
static inline int spy_poll_due(spy_vm *v) { (void)v; return 0; }
static inline void spy_poll_take(spy_vm *v) { (void)v; }
static inline int spy_trip_state(spy_vm *v) { (void)v; return SPY_TRIP_RESTORE; }
static inline int spy_trip_rearm(spy_vm *v) { (void)v; return 0; }
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
static inline int spy_prim_try_begin(spy_vm *v, int p) {
  (void)v, (void)p;
  return 1;
}
static inline int spy_prim_try_begin1(spy_vm *v, int p, uint64_t a) {
  (void)v, (void)p, (void)a;
  return 1;
}
static inline int spy_prim_try_begin2(spy_vm *v, int p, uint64_t a,
                                      uint64_t b) {
  (void)v, (void)p, (void)a, (void)b;
  return 1;
}
static inline int spy_prim_try_end(spy_vm *v) { (void)v; return 1; }
static inline void spy_callback_begin(spy_vm *v) { (void)v; }
static inline void spy_callback_end(spy_vm *v) { (void)v; }
static inline int spy_prim_open(spy_vm *v) { (void)v; return 0; }
static inline void spy_callback_open(spy_vm *v) { (void)v; }
static inline unsigned spy_nest_save(spy_vm *v) { (void)v; return 0; }
static inline void spy_nest_unwind(spy_vm *v, unsigned n) { (void)v; (void)n; }
static inline void spy_process_switch(spy_vm *v, uint64_t pid) {
  (void)v; (void)pid;
}
static inline void spy_gc_begin(spy_vm *v) { (void)v; }
static inline void spy_gc_end(spy_vm *v) { (void)v; }
static inline void spy_region_begin(spy_vm *v, int r) { (void)v; (void)r; }
static inline void spy_region_end(spy_vm *v) { (void)v; }
static inline void spy_tick(spy_vm *v) { (void)v; }
static inline int spy_tick_next(spy_vm *v, int counted, int most) {
  (void)v; (void)counted; return most;
}

#endif /* SPY_DISABLE */

#ifdef __cplusplus
}
#endif

#endif
