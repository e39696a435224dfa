/*
** hosts/lua/lspy_int.h: what the Lua host's files share (lspy.c: the
** profiler glue, walker and sampling; lspylib.c: the wrapped standard
** library; lrun.c: the lua5.4-compatible script runner).
*/
#ifndef LSPY_INT_H
#define LSPY_INT_H

#include <signal.h>
#include <stdint.h>
#include <time.h>

#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>

#include <spyon/hooks.h>

#include "hosts/lua/lspy.h"

/* One wrapped C function. Its address is the light userdata upvalue of the
** wrapper closure, so it never moves: wrappers are allocated one by one. */
typedef struct lspy_wrap {
  lspy *s;
  /* Its wrapper's call: the fast path for its kind of sizes (lspylib.c,
  ** call_fast) where it may be taken (set_prim: registered, s->lazy_cb,
  ** not LSPY_W_ITER), else call_wrapped_full; called while profiling. */
  int (*call)(lua_State *L, struct lspy_wrap *w);
  lua_CFunction orig;
  int prim;            /* spyon primitive id, or -1 before registration */
  lspy_sizes sizes;
  int special;         /* LSPY_W_*: extra behaviour of this wrapper */
  int slot;            /* its wrapper's slot (lspylib.c), or -1 */
  char *label;         /* "string.rep" */
  struct lspy_wrap *next;
} lspy_wrap;

enum {
  LSPY_W_PLAIN = 0,
  LSPY_W_SORT,     /* table.sort: comparator (arg 2) is a callback */
  LSPY_W_GSUB,     /* string.gsub: replacement (arg 3) is a callback */
  LSPY_W_LOAD,     /* load: a reader function (arg 1) is a callback */
  LSPY_W_ITER      /* returns an iterator (gmatch, lines): wrap it too */
};

/* An interned function: what a frame key names. */
typedef struct lspy_fn {
  char src[LUA_IDSIZE];   /* short_src */
  int line;               /* linedefined */
  int main;               /* a main chunk */
  int name_tries;         /* lookups of a name left */
  char name[48];          /* first name seen, or "" */
} lspy_fn;

/* A bracketed call's frame, noted at its nesting depth (callbacks found
** late, below): the CallInfo and the state it runs in. */
typedef struct lspy_note {
  void *ci;
  lua_State *L;
} lspy_note;

struct lspy {
  /* What every bracketed call reads and writes (lspylib.c, call_wrapped),
  ** together at the front: two cache lines, not six (each field is
  ** described where it would otherwise stand, below). */
  spy_vm *v;             /* attached vm, or the stopped stand-in */
  int lazy_cb;
  volatile sig_atomic_t stuck;
  long ci_off;
  long top_off;
  int map_full;
  lspy_note pci[SPY_NEST_MAX];

  lua_State *L;          /* the main state */
  lspy_options o;
  spy_profiler *P;
  int attached, running;
  char err[256];
  lspy_wrap *wraps;
  void (*on_exit)(void *ud, int status);
  void *exit_ud;

  /* The state now running Lua code: the signal handler arms its hook. */
  lua_State *volatile cur;
  uint64_t cb_key;       /* during spy_callback_end: the returned function */
  /* Callbacks found late (lspy.c, lspyC_lazy): Lua code a bracketed C
  ** function calls back is not wrapped; each bracketed call notes its
  ** frame (the CallInfo its state's ci pointed to, at byte ci_off of the
  ** lua_State: found by lspyC_check_ci) by nesting depth; the signal that
  ** marks a sample notes the frame it interrupted; the walker starts at
  ** walk_from when set. lazy_cb 0: every callback is wrapped (exact
  ** accounting, or the layout unknown). At the front: lazy_cb, ci_off,
  ** top_off (lua_State.top, when string lengths are read from the stack,
  ** lspylib.c: str_len; or -1) and the notes (pci). */
  void *volatile sig_ci;
  void *walk_from;
  volatile sig_atomic_t interrupted; /* lspy_interrupt was called */
  uint64_t pid;          /* the running process */
  uint64_t next_co;      /* per-coroutine process numbers */

  /* Sampling by signal (lspy.c). */
  timer_t timer;
  int timer_on;
  volatile sig_atomic_t skip, skip_left; /* ticks not armed (deep stacks) */
  uint64_t arm_budget_ns;
  uint64_t iv_ns;        /* the sampling interval */
  int adaptive;          /* the timer may slow down (see on_tick) */
  /* stuck (at the front): slowed, a mark waits to be taken */

  /* Interned functions: keys are index + 1. Fixed arrays: the walker
  ** runs inside a hook and must not allocate. */
  lspy_fn *fns;
  uint32_t nfns, capfns;
  uint32_t *fn_hash;     /* open addressing: index + 1, 0 empty */
  uint32_t fn_hash_mask;
  struct { const char *source; int line; uint32_t idx; } *fn_cache;
  uint32_t fn_cache_mask;

  /* Deep stacks: CallInfo nodes of the last walked state and their
  ** depths (see walk_deep in lspy.c). */
  int ci_ok;             /* the CallInfo layout check passed */
  lua_State *map_L;
  uintptr_t *map_key;
  uint32_t *map_val;
  uint32_t *map_used;    /* slots in use, for clearing */
  uint32_t map_mask, map_n;
  /* map_full (at the front): a quarter full, grow at the next safe point */
  void **path;           /* node by depth (1-based), valid up to path_n */
  uint32_t path_cap, path_n;

  /* Allocator accounting (lua_setallocf). */
  uint64_t alloc_calls, alloc_bytes, live_bytes, peak_bytes;
};

/* lspylib.c */
void lspyL_wrap_stdlib(lspy *s, lua_State *L);
int lspyL_wrap_at(lspy *s, lua_State *L, int idx, const char *name,
                  const char *label, lspy_sizes sizes, int special);
void lspyL_register_prims(lspy *s);
/* Which wraps may take the fast path: after s->lazy_cb is set. */
void lspyL_set_lean(lspy *s);
/* Give w's wrapper slot back (its state closed). */
void lspyL_release(lspy_wrap *w);
/* Where lua_State holds its stack top, if the stack and string layout
** the wrappers read lengths with checks out on L (s->ci_off found); else
** -1. */
long lspyL_check_args(lspy *s, lua_State *L);

/* lspy.c: the bracketing hooks on the host's spy_vm. Each is an event:
** a pending mark is renewed first (see lspyC_event_slow). */
void lspyC_gc_begin(lspy *s);
void lspyC_gc_end(lspy *s);
uint32_t lspyC_nest_save(lspy *s);
void lspyC_nest_unwind(lspy *s, uint32_t saved);

void lspyC_event_slow(lspy *s);
int lspyC_open_called_back_slow(lspy *s, lua_State *L);
/* Before something code called back does that opens a bracket or switches
** process (lspy.c): 1 if it opened the callback's bracket (close it with
** lspyC_callback_end). Inline: most calls are made with no primitive
** open, and find out with one load. */
static inline int lspyC_open_called_back(lspy *s, lua_State *L) {
  if (!s->lazy_cb || !spy_prim_open(s->v)) return 0;
  return lspyC_open_called_back_slow(s, L);
}
static inline void lspyC_event(lspy *s) {
  if (SPY_UNLIKELY(s->stuck | spy_poll_due(s->v))) lspyC_event_slow(s);
}

static inline int lspyC_profiling(lspy *s) {
  return spy_profiling(s->v);
}

static inline void lspyC_prim_end(lspy *s) {
  if (spy_profiling(s->v)) {
    lspyC_event(s);
    spy_prim_end(s->v);
  }
}

/* A bracketed C function hands control to Lua code (a comparator, a gsub
** function) and gets it back. */
static inline void lspyC_callback_begin(lspy *s) {
  if (spy_profiling(s->v)) {
    lspyC_event(s);
    spy_callback_begin(s->v);
  }
}

static inline void lspyC_callback_end(lspy *s) {
  if (spy_profiling(s->v)) {
    lspyC_event(s);
    spy_callback_end(s->v);
  }
}
/* The running frame of L: its CallInfo (lua_State.ci, at ci_off). */
static inline void *lspyC_ci(const lspy *s, lua_State *L) {
  return *(void *const *)(const void *)((const char *)L + s->ci_off);
}

/* The head of Lua 5.4's CallInfo (lstate.h): two stack pointers, then the
** links. lua_getstack returns a node in lua_Debug.i_ci; the layout is
** checked against lua_getstack when the host is made (lspyC_check_ci),
** and the walker falls back to lua_getstack when it does not match. */
typedef struct ci_head {
  void *func, *top;
  struct ci_head *previous, *next;
} ci_head;

#define CI_SIZE 64 /* sizeof(CallInfo), 5.4 on LP64: lspyC_check_ci checks */

/* Frame keys (lspy.c): the key of the Lua frame *ar describes
** (lua_getinfo "S" done); can_name: queue its name now. */
uint64_t lspyC_fn_key(lspy *s, lua_State *L, lua_Debug *ar, int can_name);
/* The stack walk (lwalk.c): the walker, the CallInfo layout check made
** when the host is made, the deep-walk memo's reset and growth, and the
** key of the function at stack index idx. */
void lspyC_walk(void *ud, spy_stack *st);
int lspyC_check_ci(lua_State *L, long *ci_off);
void lspyC_map_clear(lspy *s);
/* The allocator freed the block p of osize bytes: a CallInfo node the
** deep walk knows is forgotten. */
void lspyC_freed(lspy *s, void *p, size_t osize);
void lspyC_map_grow(lspy *s);
uint64_t lspyC_key_of(lspy *s, lua_State *L, int idx);
void lspyC_exiting(lspy *s, int status);
/* Process switches for coroutines (lspy.c). */
uint64_t lspyC_co_pid(lspy *s, lua_State *co, lua_State *from);
void lspyC_switch(lspy *s, lua_State *to, uint64_t pid);

#endif
