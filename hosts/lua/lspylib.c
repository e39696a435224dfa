/*
** hosts/lua/lspylib.c: the standard library's C functions as spyon
** primitives.
**
** Each non-trivial C function of string, table, utf8, io, os (and print,
** load, dofile) is replaced in its library table by a closure that calls
** the original C function *in the same frame* (not through lua_call): an
** argument error then still reads "bad argument #1 to 'rep'", a traceback
** still says "in function 'string.rep'", and the original's upvalues are
** copied to the wrapper so that closures like math.random keep working.
** The primitive is named by its library path. Trivial functions (type,
** select, rawget, math.*, string.len...) are left alone: their time is
** sampled with the Lua code that calls them.
**
** Callbacks: by default found late (lspy.c, poll_called_back): each
** bracketed call notes its frame, and one made from code called back by
** another opens that callback around itself. With exact accounting,
** table.sort's comparator, string.gsub's replacement function and load's
** reader are passed on wrapped in a C closure that brackets the call back
** into Lua. pcall/xpcall and coroutine.resume/wrap are reimplemented with
** the same behaviour (lbaselib.c, lcorolib.c of 5.4) plus the catch-point
** and process-switch hooks.
*/
#include "config.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "hosts/lua/lspy_int.h"

/* ------------------------------------------------------------------------
** The wrapper
** --------------------------------------------------------------------- */

static int wrap_closure(lua_State *L, lspy *s, int idx, const char *label);

/* A C closure that brackets a call back into Lua: upvalue 1 is the Lua
** function, 2 the host, 3 the function's frame key. A sample due at the
** callback's end belongs to the function, which has returned by then: the
** walker pushes its key (s->cb_key) for the end hook. */
static int callback(lua_State *L) {
  lspy *s = lua_touserdata(L, lua_upvalueindex(2));
  int n = lua_gettop(L);
  lua_pushvalue(L, lua_upvalueindex(1));
  lua_insert(L, 1);
  lspyC_callback_begin(s);
  lua_call(L, n, LUA_MULTRET);
  s->cb_key = (uint64_t)lua_tointeger(L, lua_upvalueindex(3));
  lspyC_callback_end(s);
  s->cb_key = 0;
  return lua_gettop(L);
}

static void wrap_callback_arg(lua_State *L, lspy *s, int arg) {
  if (lua_type(L, arg) != LUA_TFUNCTION) return;
  lua_pushvalue(L, arg);
  lua_pushlightuserdata(L, s);
  lua_pushinteger(L, (lua_Integer)lspyC_key_of(s, L, arg));
  lua_pushcclosure(L, callback, 3);
  lua_replace(L, arg);
}

/* Operand sizes: a string argument's length read from the stack itself,
** two loads instead of a call into liblua (string.format's sizes cost
** strings.lua 2-3 %: bench/lua). Lua 5.4's stack slot (lobject.h,
** StackValue: 16 bytes on LP64, the value, then its type tag at byte 8)
** and string header (TString: the short string's length at byte 11, the
** long string's at 16) are not part of its API: lspyL_check_args checks
** them when the host is made, reading back strings of both kinds, numbers
** and a table passed to a probe against lua_rawlen, and the wrappers call
** liblua if the check failed. The running C function's slot is its
** CallInfo's first word (ci_head.func, checked by lspyC_check_ci); its
** arguments follow it up to lua_State's top. */
#define SLOT_BYTES 16
#define TAG_SHORT_STR 0x44 /* LUA_VSHRSTR | BIT_ISCOLLECTABLE */
#define TAG_LONG_STR 0x54  /* LUA_VLNGSTR | BIT_ISCOLLECTABLE */

/* The length of the string in stack slot o, or 0 if it holds no string. */
static inline size_t slot_str_len(const char *o) {
  const char *ts;
  memcpy(&ts, o, sizeof ts);
  switch ((unsigned char)o[8]) {
  case TAG_SHORT_STR: return (unsigned char)ts[11];
  case TAG_LONG_STR: {
    size_t n;
    memcpy(&n, ts + 16, sizeof n);
    return n;
  }
  default: return 0;
  }
}

/* The running C function's stack slot and the stack's top. */
static inline void frame_at(lua_State *L, long ci_off, long top_off,
                            const char **func, const char **top) {
  const char *ci;
  memcpy(&ci, (const char *)L + ci_off, sizeof ci);
  memcpy(func, ci, sizeof *func);
  memcpy(top, (const char *)L + top_off, sizeof *top);
}

static size_t str_len_at(lua_State *L, long ci_off, long top_off, int i) {
  const char *func, *top;
  frame_at(L, ci_off, top_off, &func, &top);
  const char *o = func + (size_t)i * SLOT_BYTES;
  return o < top ? slot_str_len(o) : 0;
}

/* The length of argument i if it is a string, else 0: read from the
** stack where its layout was checked (`direct`: s->top_off >= 0), else
** through liblua. */
static inline size_t str_len(const lspy *s, lua_State *L, int i, int direct) {
  if (direct) return str_len_at(L, s->ci_off, s->top_off, i);
  return lua_type(L, i) == LUA_TSTRING ? lua_rawlen(L, i) : 0;
}

/* The probe: called with some arguments; finds the one word of lua_State
** (among its first 16, where lspyC_check_ci looks for the CallInfo too:
** 5.4 keeps top at the third) that points just past them, and checks
** every argument's length read through it (and one past the top: 0).
** Pushes the offset, or -1. */
static int probe_args(lua_State *L) {
  long ci_off = (long)lua_tointeger(L, lua_upvalueindex(1));
  const char *ci, *func;
  memcpy(&ci, (const char *)L + ci_off, sizeof ci);
  memcpy(&func, ci, sizeof func);
  int n = lua_gettop(L);
  const char *want = func + (size_t)(n + 1) * SLOT_BYTES;
  long off = -1;
  for (long o = 0; o < 16 * (long)sizeof want; o += (long)sizeof want) {
    const char *p;
    memcpy(&p, (const char *)L + o, sizeof p);
    if (p == want) off = off == -1 ? o : -2;
  }
  for (int i = 1; off >= 0 && i <= n + 1; i++) {
    size_t truth = i <= n && lua_type(L, i) == LUA_TSTRING ? lua_rawlen(L, i) : 0;
    if (str_len_at(L, ci_off, off, i) != truth) off = -1;
  }
  lua_pushinteger(L, off < 0 ? -1 : off);
  return 1;
}

long lspyL_check_args(lspy *s, lua_State *L) {
  long found = -1;
  for (int round = 0; round < 2; round++) {
    lua_pushinteger(L, s->ci_off);
    lua_pushcclosure(L, probe_args, 1);
    char long_str[300];
    memset(long_str, 'x', sizeof long_str);
    int n = 0;
    if (round == 0) {
      lua_pushliteral(L, "abc");
      lua_pushlstring(L, long_str, 100);
      lua_pushinteger(L, 42);
      lua_pushnumber(L, 2.5);
      lua_newtable(L);
      lua_pushliteral(L, "");
      n = 6;
    } else {
      lua_pushlstring(L, long_str, sizeof long_str);
      lua_pushlstring(L, long_str, 40); /* the longest short string */
      lua_pushlstring(L, long_str, 41);
      n = 3;
    }
    if (lua_pcall(L, n, 1, 0) != LUA_OK) {
      lua_pop(L, 1);
      return -1;
    }
    long off = (long)lua_tointeger(L, -1);
    lua_pop(L, 1);
    if (off < 0 || (round == 1 && off != found)) return -1;
    found = off;
  }
  return found;
}

/* The total length of the string arguments (LSPY_SZ_SARGS). */
static inline size_t str_lens(const lspy *s, lua_State *L, int direct) {
  size_t a = 0;
  if (direct) {
    const char *func, *top;
    frame_at(L, s->ci_off, s->top_off, &func, &top);
    for (const char *o = func + SLOT_BYTES; o < top; o += SLOT_BYTES)
      a += slot_str_len(o);
    return a;
  }
  int n = lua_gettop(L);
  for (int i = 1; i <= n; i++) a += str_len(s, L, i, 0);
  return a;
}

/* A bracketed call's operand sizes, read from the arguments now on the
** stack: a string's length (str_len; 0 for anything else), a table's
** border (lua_rawlen, raw), a count. Returns how many (0..2), in *a, *b.
** `direct`: string lengths are read from the stack (str_len). */
#if defined(__GNUC__) || defined(__clang__)
__attribute__((always_inline))
#endif
static inline unsigned call_sizes(const lspy *s, lspy_sizes sz, int direct,
                                  lua_State *L, uint64_t *a, uint64_t *b) {
  switch (sz) {
  case LSPY_SZ_NONE: return 0;
  case LSPY_SZ_S1: *a = str_len(s, L, 1, direct); return 1;
  case LSPY_SZ_S1S2:
    *a = str_len(s, L, 1, direct);
    *b = str_len(s, L, 2, direct);
    return 2;
  case LSPY_SZ_S1N2: {
    *a = str_len(s, L, 1, direct);
    lua_Integer n = lua_tointeger(L, 2);
    *b = n > 0 ? (uint64_t)n : 0;
    return 2;
  }
  case LSPY_SZ_T1: *a = lua_rawlen(L, 1); return 1;
  case LSPY_SZ_NARGS: *a = (uint64_t)lua_gettop(L); return 1;
  case LSPY_SZ_SARGS: *a = str_lens(s, L, direct); return 1;
  case LSPY_SZ_N1: {
    lua_Integer n = lua_tointeger(L, 1);
    *a = n > 0 ? (uint64_t)n : 0;
    return 1;
  }
  }
  return 0;
}

/* A bracketed call's begin, every case. */
static void prim_begin(lspy *s, int prim, lspy_sizes sz, lua_State *L) {
  spy_vm *v = s->v;
  uint64_t a = 0, b = 0;
  switch (call_sizes(s, sz, s->top_off >= 0, L, &a, &b)) {
  case 0: spy_prim_begin(v, prim); break;
  case 1: spy_prim_begin1(v, prim, a); break;
  default: spy_prim_begin2(v, prim, a, b); break;
  }
}

/* A bracketed call, every case. With callbacks found late (lspy.c,
** poll_called_back) the functions it calls back are not wrapped: its
** frame is noted at its nesting depth instead, and a call made from code
** called back by another primitive opens that callback's bracket around
** itself (the outer primitive placed by a walk from its frame). */
#if defined(__GNUC__) || defined(__clang__)
__attribute__((noinline))
#endif
static int call_wrapped_full(lua_State *L, lspy_wrap *w) {
  lspy *s = w->s;
  if (w->prim < 0) return w->orig(L); /* not registered yet */
  int in_cb = 0;
  if (!s->lazy_cb) {
    switch (w->special) {
    case LSPY_W_SORT: wrap_callback_arg(L, s, 2); break;
    case LSPY_W_GSUB: wrap_callback_arg(L, s, 3); break;
    case LSPY_W_LOAD: wrap_callback_arg(L, s, 1); break;
    default: break;
    }
  } else {
    in_cb = lspyC_open_called_back(s, L);
    unsigned d = spy_nest_save(s->v);
    if (d < SPY_NEST_MAX) s->pci[d] = (lspy_note){lspyC_ci(s, L), L};
  }
  lspyC_event(s);
  prim_begin(s, w->prim, w->sizes, L);
  int n = w->orig(L);
  lspyC_prim_end(s);
  if (in_cb) lspyC_callback_end(s);
  if (s->map_full) lspyC_map_grow(s);
  if (w->special == LSPY_W_ITER && n >= 1 && lua_iscfunction(L, -n)) {
    /* The iterator does the work of each step: wrap it too. */
    char label[96];
    snprintf(label, sizeof label, "%s iterator", w->label);
    int at = lua_gettop(L) - n + 1;
    if (wrap_closure(L, s, at, label) == 0) lua_replace(L, at);
  }
  return n;
}

/* A bracketed call's end when the library's inline end could not do it
** (a sample due, the call timed): out of line, so that the fast path
** below keeps few registers. A sample's walk may have filled the map
** (lwalk.c): this is where the fast path grows it. */
#if defined(__GNUC__) || defined(__clang__)
__attribute__((noinline))
#endif
static void prim_end_slow(lspy *s) {
  lspyC_prim_end(s);
  if (s->map_full) lspyC_map_grow(s);
}

/* A bracketed call, its fast path: one copy per kind of operand sizes and
** way of reading string lengths (sz and direct constants; the wrap's
** `call`, set from call_fast_fns), so that the sizes are read without a
** switch or a test, and the copies that read them from the stack call
** nothing but the function wrapped (fewer registers to save). Most calls
** are made with callbacks found late, no primitive open (not from code
** called back), no sample due, the call not drawn to be timed, and
** nothing to do after: those read the sizes, enter the primitive with
** the library's inline try (spy_prim_try_begin*), note the frame, and
** leave with spy_prim_try_end, straight through. Anything else goes to
** call_wrapped_full before anything has changed, or to prim_end_slow
** after the call. The tries
** fail with brackets SPY_NEST_MAX deep, so d indexes the notes when the
** begin succeeds; and with a mark pending, which a stuck mark (lspy.c,
** on_tick) is until it is taken, by a slow path that also unsticks it
** (lspyC_event): s->stuck needs no test of its own here. Nor does
** s->map_full: only a sample's walk fills the map, and the slow paths
** that take one grow it after.
** (bench/lua/lua_inproc, strings.lua: bracketing cost 4.9 % of the Lua
** thread before 11-25, 3.7 % with a straight path and the notes and
** fields it uses in two cache lines, lspy_int.h. Since 12-07 the tries,
** one copy per kind and two registers saved, not six: the wrapper's own
** instructions a call 162 -> 121 on strings.lua, callgrind; 111 with the
** inline begin's counted draw, vm-hooks/obs.h; 12-07 evening 86, with
** calls counted at begin (the end pops only), the inline hooks' test of
** hot.fast_ folded into their clock test, the wrap's lean flag into its
** `call`, the direct copies and no tests of s->stuck and s->map_full:
** bench/lua/ab.sh, 2.8-3.4 % of the Lua thread, brackets alone, README.) */
#if defined(__GNUC__) || defined(__clang__)
__attribute__((always_inline))
#endif
static inline int call_fast(lua_State *L, lspy_wrap *w, lspy_sizes sz,
                            int direct) {
  lspy *s = w->s;
  uint64_t a = 0, b = 0;
  unsigned n = call_sizes(s, sz, direct, L, &a, &b);
  spy_vm *v = s->v;
  unsigned d = spy_nest_save(v);
  if (SPY_UNLIKELY(d > 0 && spy_prim_open(v))) return call_wrapped_full(L, w);
  if (!(n == 0   ? spy_prim_try_begin(v, w->prim)
        : n == 1 ? spy_prim_try_begin1(v, w->prim, a)
                 : spy_prim_try_begin2(v, w->prim, a, b)))
    return call_wrapped_full(L, w);
  s->pci[d] = (lspy_note){lspyC_ci(s, L), L};
  int r = w->orig(L);
  if (!spy_prim_try_end(s->v)) prim_end_slow(s);
  return r;
}

#define CALL_FAST(name, sz)                                                 \
  static int name##_direct(lua_State *L, lspy_wrap *w) {                    \
    return call_fast(L, w, sz, 1);                                          \
  }                                                                         \
  static int name(lua_State *L, lspy_wrap *w) { return call_fast(L, w, sz, 0); }
CALL_FAST(call_none, LSPY_SZ_NONE)
CALL_FAST(call_s1, LSPY_SZ_S1)
CALL_FAST(call_s1s2, LSPY_SZ_S1S2)
CALL_FAST(call_s1n2, LSPY_SZ_S1N2)
CALL_FAST(call_t1, LSPY_SZ_T1)
CALL_FAST(call_nargs, LSPY_SZ_NARGS)
CALL_FAST(call_sargs, LSPY_SZ_SARGS)
CALL_FAST(call_n1, LSPY_SZ_N1)
/* By direct, then lspy_sizes. */
static int (*const call_fast_fns[2][8])(lua_State *, lspy_wrap *) = {
    {call_none, call_s1, call_s1s2, call_s1n2, call_t1, call_nargs,
     call_sargs, call_n1},
    {call_none_direct, call_s1_direct, call_s1s2_direct, call_s1n2_direct,
     call_t1_direct, call_nargs_direct, call_sargs_direct, call_n1_direct}};

/* A wrap's fast path may be taken once its primitive is registered, with
** callbacks found late (else they are wrapped), unless it returns an
** iterator to wrap: call_wrapped_full does those. */
static void set_prim(lspy_wrap *w, int prim) {
  w->prim = prim;
  int lean = prim >= 0 && w->s->lazy_cb && w->special != LSPY_W_ITER;
  w->call = lean ? call_fast_fns[w->s->top_off >= 0][w->sizes]
               : call_wrapped_full;
}

void lspyL_set_lean(lspy *s) {
  for (lspy_wrap *w = s->wraps; w; w = w->next) set_prim(w, w->prim);
}

/* A wrapper's call: the function wrapped when the profiler is stopped
** (here, so that this path saves no registers: 11 instructions of
** call_fast's prologue and epilogue a call until 12-07, which made
** stopped runs slower and profiled ones look cheaper), else the wrap's
** `call`. */
static inline int wrap_call(lua_State *L, lspy_wrap *w) {
  if (!spy_profiling(w->s->v)) return w->orig(L);
  return w->call(L, w);
}

/* Wrappers of the first kind: one C function per slot of a table of
** wraps, so that a wrapper finds its wrap without reading an upvalue, and
** wraps a function without upvalues as one (a light C function): 1.5 ns
** a call where the second kind costs 7 (bench/lua, calls.lua). The slots are the
** process's, taken when a wrap is made and given back when its host is
** freed (lspyL_release); a wrap made when all are taken gets a wrapper of
** the second kind. */
#define SLOTS 128
static lspy_wrap *slot_wrap[SLOTS];
static pthread_mutex_t slot_lock = PTHREAD_MUTEX_INITIALIZER;
#define SLOT_WRAPPER(k)                                                     \
  static int slot_wrapper_##k(lua_State *L) {                               \
    lspy_wrap *w = slot_wrap[0x##k];                                        \
    return wrap_call(L, w);                                                 \
  }
#define SLOT_WRAPPERS16(h)                                                  \
  SLOT_WRAPPER(h##0) SLOT_WRAPPER(h##1) SLOT_WRAPPER(h##2)                  \
  SLOT_WRAPPER(h##3) SLOT_WRAPPER(h##4) SLOT_WRAPPER(h##5)                  \
  SLOT_WRAPPER(h##6) SLOT_WRAPPER(h##7) SLOT_WRAPPER(h##8)                  \
  SLOT_WRAPPER(h##9) SLOT_WRAPPER(h##a) SLOT_WRAPPER(h##b)                  \
  SLOT_WRAPPER(h##c) SLOT_WRAPPER(h##d) SLOT_WRAPPER(h##e)                  \
  SLOT_WRAPPER(h##f)
SLOT_WRAPPERS16(0) SLOT_WRAPPERS16(1) SLOT_WRAPPERS16(2) SLOT_WRAPPERS16(3)
SLOT_WRAPPERS16(4) SLOT_WRAPPERS16(5) SLOT_WRAPPERS16(6) SLOT_WRAPPERS16(7)
#define SLOT_NAMES16(h)                                                     \
  slot_wrapper_##h##0, slot_wrapper_##h##1, slot_wrapper_##h##2,            \
  slot_wrapper_##h##3, slot_wrapper_##h##4, slot_wrapper_##h##5,            \
  slot_wrapper_##h##6, slot_wrapper_##h##7, slot_wrapper_##h##8,            \
  slot_wrapper_##h##9, slot_wrapper_##h##a, slot_wrapper_##h##b,            \
  slot_wrapper_##h##c, slot_wrapper_##h##d, slot_wrapper_##h##e,            \
  slot_wrapper_##h##f
static const lua_CFunction slot_wrappers[SLOTS] = {
    SLOT_NAMES16(0), SLOT_NAMES16(1), SLOT_NAMES16(2), SLOT_NAMES16(3),
    SLOT_NAMES16(4), SLOT_NAMES16(5), SLOT_NAMES16(6), SLOT_NAMES16(7)};

static void take_slot(lspy_wrap *w) {
  w->slot = -1;
  pthread_mutex_lock(&slot_lock);
  for (int i = 0; i < SLOTS; i++)
    if (!slot_wrap[i]) {
      slot_wrap[i] = w;
      w->slot = i;
      break;
    }
  pthread_mutex_unlock(&slot_lock);
}

void lspyL_release(lspy_wrap *w) {
  if (w->slot < 0) return;
  pthread_mutex_lock(&slot_lock);
  slot_wrap[w->slot] = NULL;
  pthread_mutex_unlock(&slot_lock);
  w->slot = -1;
}

/* The second kind: one per number of original upvalues, the wrap (a light
** userdata) in the upvalue after them. */
#define WRAPPER(k)                                                          \
  static int wrapper##k(lua_State *L) {                                     \
    lspy_wrap *w = lua_touserdata(L, lua_upvalueindex(k + 1));              \
    return wrap_call(L, w);                                                 \
  }
WRAPPER(0) WRAPPER(1) WRAPPER(2) WRAPPER(3) WRAPPER(4) WRAPPER(5)
WRAPPER(6) WRAPPER(7)
static const lua_CFunction wrappers[] = {wrapper0, wrapper1, wrapper2,
                                         wrapper3, wrapper4, wrapper5,
                                         wrapper6, wrapper7};
#define MAX_UPS 7

static lspy_wrap *find_wrap(lspy *s, lua_CFunction f, const char *label,
                            lspy_sizes sizes, int special) {
  for (lspy_wrap *w = s->wraps; w; w = w->next)
    if (w->orig == f && !strcmp(w->label, label)) return w;
  lspy_wrap *w = calloc(1, sizeof *w);
  if (!w || !(w->label = strdup(label))) {
    free(w);
    return NULL;
  }
  w->s = s;
  w->orig = f;
  w->sizes = sizes;
  w->special = special;
  set_prim(w, -1);
  w->next = s->wraps;
  s->wraps = w;
  take_slot(w);
  static const char *const names[] = {"",      "len",   "len,pattern",
                                      "len,n", "n",     "nargs",
                                      "bytes", "n"};
  if (s->P) /* registered late (contract v2 allows it while running) */
    set_prim(w, spy_prim_register(s->P, label, names[sizes], SPY_PRIM_COST));
  return w;
}

/* Push a wrapper of the C function at idx (its upvalues copied); 0, or -1
** (nothing pushed) if it is not a C function or has too many upvalues. */
static int push_wrapper(lua_State *L, lspy *s, int idx, const char *label,
                        lspy_sizes sizes, int special) {
  idx = lua_absindex(L, idx);
  lua_CFunction f = lua_tocfunction(L, idx);
  if (!f) return -1;
  int nup = 0;
  while (lua_getupvalue(L, idx, nup + 1)) nup++;
  if (nup > MAX_UPS) {
    lua_pop(L, nup);
    return -1;
  }
  lspy_wrap *w = find_wrap(s, f, label, sizes, special);
  if (!w) {
    lua_pop(L, nup);
    return -1;
  }
  if (w->slot >= 0) {
    lua_pushcclosure(L, slot_wrappers[w->slot], nup);
    return 0;
  }
  lua_pushlightuserdata(L, w);
  lua_pushcclosure(L, wrappers[nup], nup + 1);
  return 0;
}

static int wrap_closure(lua_State *L, lspy *s, int idx, const char *label) {
  return push_wrapper(L, s, idx, label, LSPY_SZ_NONE, LSPY_W_PLAIN);
}

int lspyL_wrap_at(lspy *s, lua_State *L, int idx, const char *name,
                  const char *label, lspy_sizes sizes, int special) {
  idx = lua_absindex(L, idx);
  lua_getfield(L, idx, name);
  int rc = push_wrapper(L, s, -1, label, sizes, special);
  if (rc == 0) lua_setfield(L, idx, name);
  lua_pop(L, 1);
  return rc;
}

int lspy_wrap_field(lspy *s, int idx, const char *name, const char *label,
                    lspy_sizes sizes) {
  return lspyL_wrap_at(s, s->L, idx, name, label, sizes, LSPY_W_PLAIN);
}

void lspyL_register_prims(lspy *s) {
  static const char *const names[] = {"",      "len",   "len,pattern",
                                      "len,n", "n",     "nargs",
                                      "bytes", "n"};
  for (lspy_wrap *w = s->wraps; w; w = w->next)
    set_prim(w, spy_prim_register(s->P, w->label, names[w->sizes],
                                  SPY_PRIM_COST));
}

/* ------------------------------------------------------------------------
** pcall, xpcall: catch points
** --------------------------------------------------------------------- */

/* lbaselib.c's finishpcall, plus: after an error, close the brackets that
** the error unwound past (the depth saved at entry is in ctx >> 8). */
static int finishpcall(lua_State *L, int status, lua_KContext extra) {
  if (status != LUA_OK && status != LUA_YIELD) {
    lspy *s = lspy_of(L);
    if (s) lspyC_nest_unwind(s, (uint32_t)((uintptr_t)extra >> 8));
    lua_pushboolean(L, 0);
    lua_pushvalue(L, -2);
    return 2;
  }
  return lua_gettop(L) - (int)(extra & 0xff);
}

static lua_KContext save_ctx(lua_State *L, int extra) {
  lspy *s = lspy_of(L);
  return (lua_KContext)(((uintptr_t)(s ? lspyC_nest_save(s) : 0) << 8) |
                        (uintptr_t)extra);
}

static int l_pcall(lua_State *L) {
  luaL_checkany(L, 1);
  lua_pushboolean(L, 1);
  lua_insert(L, 1);
  lua_KContext ctx = save_ctx(L, 0);
  int status = lua_pcallk(L, lua_gettop(L) - 2, LUA_MULTRET, 0, ctx,
                          finishpcall);
  return finishpcall(L, status, ctx);
}

static int l_xpcall(lua_State *L) {
  int n = lua_gettop(L);
  luaL_checktype(L, 2, LUA_TFUNCTION);
  lua_pushboolean(L, 1);
  lua_pushvalue(L, 1);
  lua_rotate(L, 3, 2);
  lua_KContext ctx = save_ctx(L, 2);
  int status = lua_pcallk(L, n - 2, LUA_MULTRET, 2, ctx, finishpcall);
  return finishpcall(L, status, ctx);
}

/* ------------------------------------------------------------------------
** Coroutines: process switches
** --------------------------------------------------------------------- */

/* lcorolib.c's auxresume with the switches: the coroutine's process runs
** from just before lua_resume until it returns (by yield, return or
** error); brackets opened in it are its own. */
static int auxresume(lua_State *L, lua_State *co, int narg) {
  lspy *s = lspy_of(L);
  if (!lua_checkstack(co, narg)) {
    lua_pushliteral(L, "too many arguments to resume");
    return -1;
  }
  uint64_t from_pid = s->pid;
  lua_State *from = s->cur;
  uint64_t pid = lspyC_co_pid(s, co, L);
  lua_xmove(L, co, narg);
  /* The frames this process's bracketed calls noted (callbacks found
  ** late, lspy.c): the coroutine's calls note theirs at the same depths.
  ** (A suspended coroutine has none open: they cannot yield.) */
  int in_cb = lspyC_open_called_back(s, L);
  unsigned nk = spy_nest_save(s->v);
  if (nk > SPY_NEST_MAX) nk = SPY_NEST_MAX;
  lspy_note kept[SPY_NEST_MAX];
  memcpy(kept, s->pci, nk * sizeof *kept);
  lspyC_switch(s, co, pid);
  uint32_t saved = lspyC_nest_save(s);
  int nres;
  int status = lua_resume(co, L, narg, &nres);
  /* A coroutine that died of an error leaves nothing open. */
  if (status != LUA_OK && status != LUA_YIELD) lspyC_nest_unwind(s, saved);
  lspyC_switch(s, from, from_pid);
  memcpy(s->pci, kept, nk * sizeof *kept);
  if (in_cb) lspyC_callback_end(s);
  if (status == LUA_OK || status == LUA_YIELD) {
    if (!lua_checkstack(L, nres + 1)) {
      lua_pop(co, nres);
      lua_pushliteral(L, "too many results to resume");
      return -1;
    }
    lua_xmove(co, L, nres);
    return nres;
  }
  lua_xmove(co, L, 1);
  return -1;
}

static lua_State *getco(lua_State *L) {
  lua_State *co = lua_tothread(L, 1);
  luaL_argexpected(L, co, 1, "thread"); /* as 5.4.4 says it */
  return co;
}

static int l_resume(lua_State *L) {
  lua_State *co = getco(L);
  int r = auxresume(L, co, lua_gettop(L) - 1);
  if (r < 0) {
    lua_pushboolean(L, 0);
    lua_insert(L, -2);
    return 2;
  }
  lua_pushboolean(L, 1);
  lua_insert(L, -(r + 1));
  return r + 1;
}

static int auxwrap(lua_State *L) {
  lua_State *co = lua_tothread(L, lua_upvalueindex(1));
  int r = auxresume(L, co, lua_gettop(L));
  if (r < 0) {
    int stat = lua_status(co);
    if (stat != LUA_OK && stat != LUA_YIELD) {
      stat = lua_resetthread(co);
      lua_xmove(co, L, 1);
    }
    if (stat != LUA_ERRMEM && lua_type(L, -1) == LUA_TSTRING) {
      luaL_where(L, 1);
      lua_insert(L, -2);
      lua_concat(L, 2);
    }
    return lua_error(L);
  }
  return r;
}

static int l_wrap(lua_State *L) {
  luaL_checktype(L, 1, LUA_TFUNCTION);
  lua_State *NL = lua_newthread(L);
  lua_pushvalue(L, 1);
  lua_xmove(L, NL, 1);
  lua_pushcclosure(L, auxwrap, 1);
  return 1;
}

/* ------------------------------------------------------------------------
** collectgarbage, os.exit
** --------------------------------------------------------------------- */

static lua_CFunction orig_collect, orig_exit;

/* A collection the script asks for is a GC pause spyon can bracket (the
** collector's own steps, run from inside allocations, cannot be). */
static int l_collectgarbage(lua_State *L) {
  lspy *s = lspy_of(L);
  const char *opt = luaL_optstring(L, 1, "collect");
  if (!s || !lspyC_profiling(s) ||
      (strcmp(opt, "collect") && strcmp(opt, "step")))
    return orig_collect(L);
  int in_cb = lspyC_open_called_back(s, L);
  lspyC_gc_begin(s);
  int n = orig_collect(L);
  lspyC_gc_end(s);
  if (in_cb) lspyC_callback_end(s);
  return n;
}

/* os.exit: the profile is reported before the process exits. */
static int l_exit(lua_State *L) {
  lspy *s = lspy_of(L);
  int status = -1;
  if (lua_isboolean(L, 1)) status = lua_toboolean(L, 1) ? 0 : 1;
  else if (lua_isnoneornil(L, 1)) status = 0;
  else if (lua_isinteger(L, 1)) status = (int)lua_tointeger(L, 1);
  if (s && status >= -255 && lua_type(L, 1) != LUA_TSTRING) {
    fflush(stdout);
    lspyC_exiting(s, status);
  }
  return orig_exit(L);
}

/* ------------------------------------------------------------------------
** The table of wrapped functions
** --------------------------------------------------------------------- */

typedef struct wdef {
  const char *name;
  lspy_sizes sizes;
  int special;
} wdef;

static const wdef string_fns[] = {
    {"byte", LSPY_SZ_S1, 0},        {"char", LSPY_SZ_NARGS, 0},
    {"dump", LSPY_SZ_NONE, 0},      {"find", LSPY_SZ_S1S2, 0},
    {"format", LSPY_SZ_SARGS, 0},   {"gmatch", LSPY_SZ_S1S2, LSPY_W_ITER},
    {"gsub", LSPY_SZ_S1S2, LSPY_W_GSUB},
    {"lower", LSPY_SZ_S1, 0},       {"match", LSPY_SZ_S1S2, 0},
    {"rep", LSPY_SZ_S1N2, 0},       {"reverse", LSPY_SZ_S1, 0},
    {"sub", LSPY_SZ_S1, 0},         {"upper", LSPY_SZ_S1, 0},
    {"pack", LSPY_SZ_NARGS, 0},     {"unpack", LSPY_SZ_S1S2, 0},
    {NULL, 0, 0}};
static const wdef table_fns[] = {
    {"concat", LSPY_SZ_T1, 0}, {"insert", LSPY_SZ_T1, 0},
    {"move", LSPY_SZ_T1, 0},   {"pack", LSPY_SZ_NARGS, 0},
    {"remove", LSPY_SZ_T1, 0}, {"sort", LSPY_SZ_T1, LSPY_W_SORT},
    {"unpack", LSPY_SZ_T1, 0}, {NULL, 0, 0}};
static const wdef utf8_fns[] = {
    {"char", LSPY_SZ_NARGS, 0}, {"codepoint", LSPY_SZ_S1, 0},
    {"len", LSPY_SZ_S1, 0},     {"offset", LSPY_SZ_S1, 0},
    {NULL, 0, 0}};
static const wdef io_fns[] = {
    {"close", LSPY_SZ_NONE, 0},  {"flush", LSPY_SZ_NONE, 0},
    {"lines", LSPY_SZ_NONE, LSPY_W_ITER},
    {"open", LSPY_SZ_NONE, 0},   {"popen", LSPY_SZ_NONE, 0},
    {"read", LSPY_SZ_NARGS, 0},  {"write", LSPY_SZ_SARGS, 0},
    {"tmpfile", LSPY_SZ_NONE, 0}, {NULL, 0, 0}};
static const wdef file_fns[] = {
    {"close", LSPY_SZ_NONE, 0}, {"flush", LSPY_SZ_NONE, 0},
    {"lines", LSPY_SZ_NONE, LSPY_W_ITER},
    {"read", LSPY_SZ_NARGS, 0}, {"seek", LSPY_SZ_NONE, 0},
    {"write", LSPY_SZ_SARGS, 0}, {NULL, 0, 0}};
static const wdef os_fns[] = {
    {"date", LSPY_SZ_NONE, 0},   {"execute", LSPY_SZ_NONE, 0},
    {"remove", LSPY_SZ_NONE, 0}, {"rename", LSPY_SZ_NONE, 0},
    {"tmpname", LSPY_SZ_NONE, 0}, {"getenv", LSPY_SZ_NONE, 0},
    {NULL, 0, 0}};
static const wdef base_fns[] = {
    {"print", LSPY_SZ_NARGS, 0}, {"load", LSPY_SZ_S1, LSPY_W_LOAD},
    {"loadfile", LSPY_SZ_NONE, 0},
    {NULL, 0, 0}};

static void wrap_lib(lspy *s, lua_State *L, const char *lib, const char *sep,
                     const wdef *d) {
  int t = lua_gettop(L);
  for (; d->name; d++) {
    char label[64];
    snprintf(label, sizeof label, "%s%s%s", lib, sep, d->name);
    lspyL_wrap_at(s, L, t, d->name, lib[0] ? label : d->name, d->sizes,
                  d->special);
  }
}

void lspyL_wrap_stdlib(lspy *s, lua_State *L) {
  static const struct {
    const char *lib;
    const wdef *fns;
  } libs[] = {{"string", string_fns}, {"table", table_fns},
              {"utf8", utf8_fns},     {"io", io_fns},
              {"os", os_fns}};
  for (size_t i = 0; i < sizeof libs / sizeof libs[0]; i++) {
    lua_getglobal(L, libs[i].lib);
    wrap_lib(s, L, libs[i].lib, ".", libs[i].fns);
    lua_pop(L, 1);
  }
  /* File methods: the __index table of io's file metatable. */
  if (luaL_getmetatable(L, LUA_FILEHANDLE) == LUA_TTABLE &&
      lua_getfield(L, -1, "__index") == LUA_TTABLE)
    wrap_lib(s, L, "file", ":", file_fns);
  lua_settop(L, 0);
  lua_pushglobaltable(L);
  wrap_lib(s, L, "", "", base_fns);
  lua_getfield(L, -1, "collectgarbage");
  orig_collect = lua_tocfunction(L, -1);
  lua_pop(L, 1);
  if (orig_collect) {
    lua_pushcfunction(L, l_collectgarbage);
    lua_setfield(L, -2, "collectgarbage");
  }
  lua_pushcfunction(L, l_pcall);
  lua_setfield(L, -2, "pcall");
  lua_pushcfunction(L, l_xpcall);
  lua_setfield(L, -2, "xpcall");
  lua_pop(L, 1);
  lua_getglobal(L, "coroutine");
  lua_pushcfunction(L, l_resume);
  lua_setfield(L, -2, "resume");
  lua_pushcfunction(L, l_wrap);
  lua_setfield(L, -2, "wrap");
  lua_pop(L, 1);
  lua_getglobal(L, "os");
  lua_getfield(L, -1, "exit");
  orig_exit = lua_tocfunction(L, -1);
  lua_pop(L, 1);
  if (orig_exit) {
    lua_pushcfunction(L, l_exit);
    lua_setfield(L, -2, "exit");
  }
  lua_pop(L, 1);
}
