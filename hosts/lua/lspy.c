/*
** hosts/lua/lspy.c: the Lua 5.4 state as a spyon host, with no patched
** interpreter.
**
** Sampling. A per-thread POSIX timer sends a real-time signal to this
** thread every interval; its handler marks the sample due (spy_tick: the
** profiler runs with SPY_MARKER_TICK, so its sampler thread wakes only to
** drain) and arms Lua's count hook with a count of 1 (lua_sethook is safe
** in a signal handler: lua.c does it on SIGINT). The hook takes the sample
** and disarms itself, so the interpreter runs at full speed between
** samples; bracketed C functions (lspylib.c) take a mark at their hooks.
** Lua code that a bracketed C function calls back is found late, at the
** hook (poll_called_back): the signal notes the frame it interrupted, so
** that a sample due while the C function itself ran stays its own.
** While a mark waits (a long primitive), the timer slows down (on_tick).
** lua_sethook sets a trap in every Lua frame, O(stack depth); the handler
** makes it O(1) by hiding all but the top frames from it (see arm). A
** permanent count hook (lspy_options.hook_mode = 1) and no Lua sampling at
** all (2) are kept for comparison: bench/lua measures them.
**
** Frames. A Lua frame's key is an interned (short_src, linedefined): it
** stays valid when a closure is collected and its memory reused. C frames
** are never reported (a bracketed C function is its primitive's node).
** Deep stacks use the CallInfo links directly (lwalk.c).
*/
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "hosts/lua/lspy_int.h"

#ifndef sigev_notify_thread_id
#define sigev_notify_thread_id _sigev_un._tid
#endif

/* The host that profiles: one per process (the signal handler has no
** other way to find it); the latest made or started. Everything else
** finds its host from its state (lspy_of: the allocator's data). */
static lspy *volatile the_host;

/* ------------------------------------------------------------------------
** Brackets opened by this host
** --------------------------------------------------------------------- */

void lspyC_gc_begin(lspy *s) {
  lspyC_event(s);
  spy_gc_begin(s->v);
}

void lspyC_gc_end(lspy *s) {
  lspyC_event(s);
  spy_gc_end(s->v);
}

/* The nesting at a catch point (pcall entry, coroutine resume), and the
** closing of every bracket opened since, after an error unwound past
** their ends. */
uint32_t lspyC_nest_save(lspy *s) {
  return spy_nest_save(s->v);
}

void lspyC_nest_unwind(lspy *s, uint32_t saved) {
  if (spy_nest_save(s->v) > saved) lspyC_event(s);
  spy_nest_unwind(s->v, saved);
}

/* ------------------------------------------------------------------------
** Interned functions
** --------------------------------------------------------------------- */

#define FN_CAP 65536u     /* distinct Lua functions named; more share one */
#define FN_OVERFLOW 1u    /* key of "(other functions)" */

static uint32_t hash_fn(const char *src, int line) {
  uint32_t h = 2166136261u ^ (uint32_t)line;
  for (const unsigned char *p = (const unsigned char *)src; *p; p++)
    h = (h ^ *p) * 16777619u;
  return h;
}

/* The index of (short_src, linedefined), interned on first sight. Called
** in the walker: no allocation (the arrays are made with the host). */
static uint32_t intern(lspy *s, const lua_Debug *ar) {
  uint32_t h = hash_fn(ar->short_src, ar->linedefined);
  for (uint32_t i = h & s->fn_hash_mask;; i = (i + 1) & s->fn_hash_mask) {
    uint32_t e = s->fn_hash[i];
    if (!e) {
      if (s->nfns >= s->capfns) return 0;
      lspy_fn *f = &s->fns[s->nfns];
      memcpy(f->src, ar->short_src, sizeof f->src);
      f->line = ar->linedefined;
      f->main = ar->what[0] == 'm';
      f->name_tries = 4;
      f->name[0] = '\0';
      s->fn_hash[i] = ++s->nfns;
      return s->nfns - 1;
    }
    lspy_fn *f = &s->fns[e - 1];
    if (f->line == ar->linedefined && !strcmp(f->src, ar->short_src))
      return e - 1;
  }
}

/* The key of the Lua frame described by *ar (lua_getinfo "S" done). A
** direct-mapped cache on (source pointer, line) skips the hashing; a hit
** is checked against the interned text, since the source string may have
** been collected and its memory reused by another chunk's. */
uint64_t lspyC_fn_key(lspy *s, lua_State *L, lua_Debug *ar, int can_name) {
  uintptr_t sp = (uintptr_t)ar->source;
  uint32_t c = (uint32_t)((sp >> 4) ^ (sp >> 13) ^ (uint32_t)ar->linedefined *
                          2654435761u) & s->fn_cache_mask;
  uint32_t idx;
  if (s->fn_cache[c].source == ar->source &&
      s->fn_cache[c].line == ar->linedefined &&
      !strcmp(s->fns[s->fn_cache[c].idx].src, ar->short_src)) {
    idx = s->fn_cache[c].idx;
  } else {
    idx = intern(s, ar);
    s->fn_cache[c].source = ar->source;
    s->fn_cache[c].line = ar->linedefined;
    s->fn_cache[c].idx = idx;
  }
  lspy_fn *f = &s->fns[idx];
  if (can_name && !f->name[0] && f->name_tries > 0 && !f->main && idx != 0) {
    /* The name Lua gives this call ("fib", "method 'push'"), from the
    ** calling instruction; a function first seen called from C (a sort
    ** comparator) gets another chance later. */
    f->name_tries--;
    if (lua_getinfo(L, "n", ar) && ar->name)
      snprintf(f->name, sizeof f->name, "%s", ar->name);
  }
  return (uint64_t)idx + 1;
}

static int name_key(void *ud, uint64_t key, char *buf, size_t len) {
  lspy *s = ud;
  if (key == 0 || key > s->nfns) return 1;
  const lspy_fn *f = &s->fns[key - 1];
  if (key == FN_OVERFLOW)
    snprintf(buf, len, "(other functions)");
  else if (f->main)
    snprintf(buf, len, "main chunk (%s)", f->src);
  else if (f->name[0])
    snprintf(buf, len, "%s (%s:%d)", f->name, f->src, f->line);
  else
    snprintf(buf, len, "function <%s:%d>", f->src, f->line);
  return 0;
}

/* ------------------------------------------------------------------------
** Processes
** --------------------------------------------------------------------- */

#define PID_MAIN 1u
#define PID_BODY (1ull << 40) /* | key: one process per body function */
#define PID_EACH (2ull << 40) /* | n: one process per coroutine */

static int name_process(void *ud, uint64_t pid, char *buf, size_t len) {
  lspy *s = ud;
  if (pid == PID_MAIN) {
    snprintf(buf, len, "main");
    return 0;
  }
  if ((pid & ~(PID_BODY - 1)) == PID_BODY) {
    char fn[128];
    if (name_key(s, pid & (PID_BODY - 1), fn, sizeof fn)) return 1;
    snprintf(buf, len, "coroutine %s", fn);
    return 0;
  }
  snprintf(buf, len, "coroutine %llu",
           (unsigned long long)(pid & (PID_BODY - 1)));
  return 0;
}

/* The process of coroutine co, kept in its extra space (copied from the
** main state's, 0, when C code makes a thread): by default the key of its
** body function, read once, so that 100k generators of one function are
** one process. */
uint64_t lspyC_co_pid(lspy *s, lua_State *co, lua_State *from) {
  uint64_t *slot = lua_getextraspace(co);
  if (*slot) return *slot;
  uint64_t pid = PID_MAIN;
  if (s->o.coroutine_each) {
    pid = PID_EACH | ++s->next_co;
  } else if (co != from && lua_status(co) == LUA_OK &&
             lua_gettop(co) > 0 && lua_type(co, 1) == LUA_TFUNCTION &&
             !lua_getstack(co, 0, &(lua_Debug){0}) &&
             lua_checkstack(from, 1)) { /* not started: its body at 1 */
    lua_Debug ar;
    lua_pushvalue(co, 1);
    lua_xmove(co, from, 1);
    if (lua_getinfo(from, ">S", &ar)) {
      if (ar.what[0] == 'C') pid = PID_BODY;
      else pid = PID_BODY | lspyC_fn_key(s, from, &ar, 0);
    }
  } else {
    pid = PID_BODY;
  }
  *slot = pid;
  return pid;
}

/* The thread now runs state `to` as process pid. Open brackets belong to
** the process switched from: spyon keeps them for it. */
void lspyC_switch(lspy *s, lua_State *to, uint64_t pid) {
  /* A sample due now is the old process's: walk it before changing. */
  if (pid != s->pid) {
    lspyC_event(s);
    s->pid = pid;
    spy_process_switch(s->v, pid);
  }
  s->cur = to;
}

/* ------------------------------------------------------------------------
** The allocator
** --------------------------------------------------------------------- */

/* Lua's default allocator plus accounting. Lua 5.4 has no collector hook,
** so the cost of collection cannot be bracketed; what the allocator sees
** (calls, bytes, live and peak bytes) is counted instead. */
static void *alloc(void *ud, void *p, size_t osize, size_t nsize) {
  lspy *s = ud;
  if (nsize == 0) {
    if (p) {
      s->live_bytes -= osize;
      lspyC_freed(s, p, osize);
    }
    free(p);
    return NULL;
  }
  void *q = realloc(p, nsize);
  if (!q) return NULL;
  s->alloc_calls++;
  size_t old = p ? osize : 0;
  if (nsize > old) s->alloc_bytes += nsize - old;
  s->live_bytes += nsize - old;
  if (s->live_bytes > s->peak_bytes) s->peak_bytes = s->live_bytes;
  return q;
}

/* ------------------------------------------------------------------------
** Sampling: the timer signal and the count hook
** --------------------------------------------------------------------- */

/* Callbacks found late (docs/lua.md, "Callbacks"). If L runs code that
** the innermost open bracket, a primitive, called back: that primitive's
** frame, noted at its begin by nesting depth; else NULL. */
static void *called_back_by(lspy *s, lua_State *L) {
  if (!s->lazy_cb || !spy_prim_open(s->v)) return NULL;
  unsigned n = spy_nest_save(s->v) - 1;
  return s->pci[n].L == L ? s->pci[n].ci : NULL;
}

/* Before something the code called back does that opens a bracket or
** switches process (a bracketed call, a collection, a resume): open the
** callback's bracket (the primitive placed by a walk from its frame), so
** that what follows sits under the code called back, and a sample due
** there is that code's. 1 if opened: close it with lspyC_callback_end. */
int lspyC_open_called_back_slow(lspy *s, lua_State *L) {
  void *pci = called_back_by(s, L);
  if (!pci) return 0;
  s->walk_from = pci;
  spy_callback_open(s->v);
  s->walk_from = NULL;
  return 1;
}

/* A sample due in code called back. The signal noted the frame it
** interrupted: if that was the primitive's own (its C code, or liblua's
** on its behalf), the sample is the primitive's, taken with the walk
** starting at its frame; otherwise the code called back's, taken in the
** callback's bracket. 0: not in code called back (or by another
** coroutine's primitive: the note does not match). */
static int poll_called_back(lspy *s, lua_State *L) {
  void *pci = spy_poll_due(s->v) ? called_back_by(s, L) : NULL;
  if (!pci) return 0;
  void *sig = s->sig_ci;
  s->sig_ci = NULL;
  if (sig == pci) {
    s->walk_from = pci;
    spy_poll(s->v);
    s->walk_from = NULL;
  } else {
    lspyC_open_called_back(s, L);
    spy_poll(s->v);
    spy_callback_end(s->v);
  }
  return 1;
}

static void hook(lua_State *L, lua_Debug *ar) {
  (void)ar;
  lspy *s = the_host;
  if (s->interrupted) { /* lspy_interrupt: as lua.c on SIGINT */
    s->interrupted = 0;
    lua_sethook(L, NULL, 0, 0);
    luaL_error(L, "interrupted!");
  }
  if (s->o.hook_mode == 0) lua_sethook(L, NULL, 0, 0);
  s->cur = L;
  lspyC_event_slow(s);
  if (!s->lazy_cb || !poll_called_back(s, L)) spy_poll(s->v);
  if (s->map_full) lspyC_map_grow(s);
}

static uint64_t mono_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Arm the count hook of L. lua_sethook sets a trap in every Lua frame of
** the stack (settraps), which costs O(depth): on a 100k-deep stack, more
** than a sample interval. Only the frames near the top need it (the hook
** fires at the next instruction there, or at the next call), so the chain
** is cut below the top few frames for the duration of the call and put
** back at once. This is safe in the handler: the interrupted code is
** suspended, and Lua only relinks nodes above the running frame. It uses
** the CallInfo links checked by lspyC_check_ci; without them, the plain
** call. */
static void arm(lspy *s, lua_State *L) {
  lua_Debug ar;
  if (!s->ci_ok || !lua_getstack(L, 0, &ar)) {
    lua_sethook(L, hook, LUA_MASKCOUNT, 1);
    return;
  }
  ci_head *c = (ci_head *)ar.i_ci;
  for (int k = 0; k < 4 && c->previous && c->previous->previous; k++)
    c = c->previous;
  ci_head *below = c->previous;
  c->previous = NULL;
  lua_sethook(L, hook, LUA_MASKCOUNT, 1);
  c->previous = below;
}

/* (Re)start the timer: first expiry after `first_ns`, then every
** `period_ns`. timer_settime is async-signal-safe; it costs a few
** microseconds here (the timer hardware is reprogrammed), so the handler
** calls it only when the timer changes mode or phase. */
static void timer_set(lspy *s, uint64_t first_ns, uint64_t period_ns) {
  struct itimerspec it = {
      {(time_t)(period_ns / 1000000000u), (long)(period_ns % 1000000000u)},
      {(time_t)(first_ns / 1000000000u), (long)(first_ns % 1000000000u)}};
  timer_settime(s->timer, 0, &it, NULL);
}

/* While the thread cannot take a sample anyway (on_tick), the timer
** slows to a backstop every SLOW_N intervals. */
#define SLOW_N 20u

/* A signal every interval, the first half an interval from now. */
static void go_fast(lspy *s) {
  s->stuck = 0;
  timer_set(s, s->iv_ns / 2, s->iv_ns);
}

/* A bracket, a process switch or the count hook while a mark is pending
** (lspyC_event): renew the mark, so that it covers the grid points up to
** now (they are charged to what ran until now, which is what runs when
** a mark waits: a primitive until its end, a stretch of Lua code until
** the hook or a primitive's begin), and if the timer was slowed because
** the mark waited, a signal every interval again. */
void lspyC_event_slow(lspy *s) {
  spy_tick(s->v);
  if (s->stuck) go_fast(s);
}

/* Arm the count hook of the running state for a mark, unless the script
** has its own hook (debug.sethook) or arming is being skipped because it
** costs too much on a deep stack. */
static void arm_for_mark(lspy *s, lua_State *L) {
  if (s->skip_left > 0) {
    s->skip_left--;
    return;
  }
  lua_Hook h = lua_gethook(L);
  if (h != NULL && h != hook) return;
  if (s->ci_ok) {
    arm(s, L); /* O(1) */
    return;
  }
  /* lua_sethook is O(depth): keep arming under ~2% of the time by
  ** skipping ticks after an arm that cost more than that (at most 100: a
  ** thread descheduled inside the call looks slow). */
  uint64_t t0 = mono_ns();
  arm(s, L);
  uint64_t dt = mono_ns() - t0, k = dt / s->arm_budget_ns;
  s->skip_left = s->skip = (sig_atomic_t)(k > 100 ? 100 : k);
}

/* The timer's signal. spy_tick marks the sample due if a grid point has
** passed since the last one was taken (spy_tick is async-signal-safe: it
** is what spyon's own signal marker runs in its handler), and the count
** hook is armed to take it at the next Lua instruction. The sampler
** thread then has nothing to mark: it wakes only to drain.
**
** A signal costs 20-25 us of CPU on the virtual machines measured (the
** timer interrupt exits to the hypervisor; bare metal: 1-2 us), so the
** timer slows to a backstop when signals cannot help: when the previous
** signal's mark is still pending with the hook armed, the thread runs
** something that takes no sample (a long primitive, a collection step,
** unbracketed C code, or it is descheduled). The mark covers that time;
** the bracket end, switch or hook that takes it renews it first and
** restores a signal every interval (lspyC_event_slow).
**
** Brackets do not tick: a sample taken at a bracket is charged to the Lua
** code that calls it, and Lua functions run between two C calls would
** lose their samples to their caller (tests/lua/gt_helper.lua measured
** 2-37 % for a truth of 87 %). A signal that finds nothing due and none
** pending fired before its grid point (the timer runs on CLOCK_MONOTONIC,
** the grid on the TSC): the timer's phase moves a quarter interval later. */
static void on_tick(int sig) {
  (void)sig;
  int e = errno;
  lspy *s = the_host;
  lua_State *L = s ? s->cur : NULL;
  if (L && s->running) {
    int pending = spy_poll_due(s->v);
    spy_tick(s->v);
    /* The frame a new mark interrupted (poll_called_back). */
    if (!pending && s->lazy_cb && spy_poll_due(s->v)) s->sig_ci = lspyC_ci(s, L);
    if (!spy_poll_due(s->v)) {
      if (s->adaptive) timer_set(s, s->iv_ns / 4, s->iv_ns);
    } else if (pending && lua_gethook(L) == hook) {
      /* armed on the running state, and no Lua instruction since */
      if (!s->stuck && s->adaptive) {
        s->stuck = 1;
        timer_set(s, SLOW_N * s->iv_ns, SLOW_N * s->iv_ns);
      }
    } else {
      arm_for_mark(s, L);
    }
  }
  errno = e;
}

#define TICK_SIG (SIGRTMIN + 5)

static int timer_start(lspy *s, uint64_t interval_ns) {
  struct sigaction sa, old;
  if (sigaction(TICK_SIG, NULL, &old) == 0 && old.sa_handler != SIG_DFL &&
      old.sa_handler != SIG_IGN && old.sa_handler != on_tick) {
    snprintf(s->err, sizeof s->err,
             "profiler: signal %d is in use by another handler", TICK_SIG);
    return SPY_EEXIST;
  }
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_tick;
  sa.sa_flags = SA_RESTART;
  sigemptyset(&sa.sa_mask);
  sigaction(TICK_SIG, &sa, NULL);
  struct sigevent ev;
  memset(&ev, 0, sizeof ev);
  ev.sigev_notify = SIGEV_THREAD_ID;
  ev.sigev_signo = TICK_SIG;
  ev.sigev_notify_thread_id = (pid_t)syscall(SYS_gettid);
  /* Wall clock. The thread's CPU clock (SPYON_LUA_TIMER=cpu, for
  ** comparison) costs less, but Linux checks CPU-clock timers only at the
  ** scheduler tick (4 ms here): most marks then wait for the next bracket
  ** and Lua code loses its samples to the primitives around it (the
  ** errors test: 5 % for work whose truth is 47 %). */
  const char *tc = getenv("SPYON_LUA_TIMER");
  clockid_t clk = tc && !strcmp(tc, "cpu") ? CLOCK_THREAD_CPUTIME_ID
                                           : CLOCK_MONOTONIC;
  if (timer_create(clk, &ev, &s->timer) < 0) {
    snprintf(s->err, sizeof s->err, "profiler: timer_create: %s",
             strerror(errno));
    return SPY_ENOTSUP;
  }
  /* Half an interval after spyon's grid (which starts at spy_start). */
  s->iv_ns = interval_ns;
  s->stuck = 0;
  const char *ad = getenv("SPYON_LUA_ADAPT");
  s->adaptive = clk == CLOCK_MONOTONIC && !(ad && !strcmp(ad, "0"));
  timer_set(s, interval_ns + interval_ns / 2, interval_ns);
  s->timer_on = 1;
  s->arm_budget_ns = interval_ns / 50 ? interval_ns / 50 : 1;
  return 0;
}

static void timer_stop(lspy *s) {
  if (!s->timer_on) return;
  timer_delete(s->timer);
  s->timer_on = 0;
}

/* ------------------------------------------------------------------------
** Life cycle
** --------------------------------------------------------------------- */

void lspy_options_init(lspy_options *o) {
  memset(o, 0, sizeof *o);
  o->progname = "lua5.4";
  o->hook_count = 1000;
}

lspy *lspy_of(lua_State *L) {
  void *ud = NULL;
  return lua_getallocf(L, &ud) == alloc ? ud : NULL;
}

static void *zalloc(size_t n, size_t sz) {
  return calloc(n ? n : 1, sz);
}

lspy *lspy_new(const lspy_options *o) {
  lspy *s = calloc(1, sizeof *s);
  if (!s) return NULL;
  if (o) s->o = *o;
  else lspy_options_init(&s->o);
  if (!s->o.progname) s->o.progname = "lua5.4";
  if (s->o.hook_count <= 0) s->o.hook_count = 1000;
  s->v = spy_vm_stopped();
  s->pid = PID_MAIN;
  s->capfns = FN_CAP;
  s->fns = zalloc(FN_CAP, sizeof *s->fns);
  s->fn_hash_mask = FN_CAP * 2 - 1;
  s->fn_hash = zalloc(FN_CAP * 2, sizeof *s->fn_hash);
  s->fn_cache_mask = 4095;
  s->fn_cache = zalloc(4096, sizeof *s->fn_cache);
  s->path_cap = 1u << 21; /* 2M frames: beyond Lua's own limit (1M slots) */
  s->path = zalloc(s->path_cap + 1, sizeof *s->path);
  s->map_mask = (1u << 14) - 1;
  s->map_key = zalloc(s->map_mask + 1, sizeof *s->map_key);
  s->map_val = zalloc(s->map_mask + 1, sizeof *s->map_val);
  s->map_used = zalloc((s->map_mask + 1) / 2, sizeof *s->map_used);
  if (!s->fns || !s->fn_hash || !s->fn_cache || !s->path || !s->map_key ||
      !s->map_val || !s->map_used) {
    lspy_free(s);
    return NULL;
  }
  /* Key 1: functions beyond FN_CAP. */
  memcpy(s->fns[0].src, "?", 2);
  s->nfns = 1;
  s->L = lua_newstate(alloc, s);
  if (!s->L) {
    lspy_free(s);
    return NULL;
  }
  the_host = s;
  s->cur = s->L;
  *(uint64_t *)lua_getextraspace(s->L) = 0;
  lua_gc(s->L, LUA_GCSTOP); /* as lua.c: no collection while building */
  luaL_openlibs(s->L);
  s->ci_ok = lspyC_check_ci(s->L, &s->ci_off);
  s->top_off = s->ci_off >= 0 ? lspyL_check_args(s, s->L) : -1;
  lspyC_map_clear(s);
  lspyL_wrap_stdlib(s, s->L);
  lua_gc(s->L, LUA_GCRESTART);
  lua_gc(s->L, LUA_GCGEN, 0, 0); /* lua.c runs scripts in generational mode */
  return s;
}

void lspy_alloc_get(const lspy *s, lspy_alloc_stats *out) {
  out->calls = s->alloc_calls;
  out->bytes = s->alloc_bytes;
  out->peak = s->peak_bytes;
  out->live = s->live_bytes;
}

lua_State *lspy_state(lspy *s) {
  return s->L;
}

const char *lspy_error(lspy *s) {
  return s->err;
}

void lspy_on_exit(lspy *s, void (*fn)(void *ud, int status), void *ud) {
  s->on_exit = fn;
  s->exit_ud = ud;
}

int lspy_start(lspy *s, const spy_options *so) {
  if (s->attached) return SPY_ESTATE;
  spy_profiler *P;
  /* With the signal-armed hook the host marks samples itself (spy_tick
  ** in on_tick): the sampler thread then wakes only to drain. Its own
  ** marks (SPY_MARKER_THREAD) would be a second timer per interval, and
  ** SPY_MARKER_SIGNAL's handler would own our signal. */
  spy_options opt;
  if (so) {
    opt = *so;
  } else {
    spy_options_init(&opt);
    opt.interval_ns = LSPY_INTERVAL_NS;
  }
  if (s->o.hook_mode == 0) opt.marker = SPY_MARKER_TICK;
  int rc = spy_profiler_new(&P, &opt);
  if (rc < 0) {
    snprintf(s->err, sizeof s->err, "profiler: %s", spy_strerror(rc));
    return rc;
  }
  s->P = P;
  the_host = s;
  lspyL_register_prims(s);
  spy_host h = {.ud = s, .walk = lspyC_walk, .name = name_key,
                .process_name = name_process};
  spy_vm *v;
  if ((rc = spy_attach(P, &h, &v)) < 0) {
    spy_profiler_free(P);
    s->P = NULL;
    snprintf(s->err, sizeof s->err, "profiler: %s", spy_strerror(rc));
    return rc;
  }
  s->v = v;
  s->attached = 1;
  spy_process_switch(v, s->pid);
  if ((rc = spy_start(P)) < 0) {
    lspy_stop(s, NULL);
    snprintf(s->err, sizeof s->err, "profiler: %s", spy_strerror(rc));
    return rc;
  }
  s->running = 1;
  /* Callbacks found late (poll_called_back) need the CallInfo layout and
  ** the signal's note (not the permanent count hook's comparison mode);
  ** exact accounting wraps every callback, so that each primitive's time
  ** excludes them (SPYON_LUA_WRAP=1 too, for bench/lua's comparison). */
  s->lazy_cb = s->o.hook_mode != 1 && s->ci_ok && s->ci_off >= 0 &&
               !opt.exact_prims && !getenv("SPYON_LUA_WRAP");
  lspyL_set_lean(s);
  uint64_t iv = opt.interval_ns;
  if (s->o.hook_mode == 1) {
    lua_sethook(s->L, hook, LUA_MASKCOUNT, s->o.hook_count);
  } else if (s->o.hook_mode == 2) {
    /* no sampling of Lua code: only the brackets take samples */
  } else if ((rc = timer_start(s, iv)) < 0) {
    char keep[sizeof s->err];
    memcpy(keep, s->err, sizeof keep);
    lspy_stop(s, NULL);
    memcpy(s->err, keep, sizeof keep);
    return rc;
  }
  return 0;
}

int lspy_stop(lspy *s, spy_profile **out) {
  if (out) *out = NULL;
  if (!s->attached) return SPY_ESTATE;
  timer_stop(s);
  if (s->o.hook_mode == 1 && s->L) lua_sethook(s->L, NULL, 0, 0);
  int rc = 0;
  if (s->running) rc = spy_stop(s->P);
  s->running = 0;
  if (out && rc == 0) rc = spy_profile_take(s->P, out);
  spy_detach(s->v);
  spy_profiler_free(s->P);
  s->P = NULL;
  s->v = spy_vm_stopped();
  s->attached = 0;
  return rc;
}

/* From a signal handler: stop the script at the next Lua instruction with
** lua.c's "interrupted!" error. */
void lspy_interrupt(lspy *s) {
  s->interrupted = 1;
  lua_State *L = s->cur;
  if (L) lua_sethook(L, hook, LUA_MASKCALL | LUA_MASKRET | LUA_MASKLINE |
                                  LUA_MASKCOUNT, 1);
}

/* Called by the os.exit wrapper: let the CLI report before exit(). */
void lspyC_exiting(lspy *s, int status) {
  if (s->on_exit) {
    void (*fn)(void *, int) = s->on_exit;
    s->on_exit = NULL;
    fn(s->exit_ud, status);
  }
}

void lspy_free(lspy *s) {
  if (!s) return;
  if (s->attached) lspy_stop(s, NULL);
  if (s->L) lua_close(s->L);
  s->L = NULL;
  if (the_host == s) the_host = NULL;
  for (lspy_wrap *w = s->wraps, *n; w; w = n) {
    n = w->next;
    lspyL_release(w);
    free(w->label);
    free(w);
  }
  free(s->fns);
  free(s->fn_hash);
  free(s->fn_cache);
  free(s->path);
  free(s->map_key);
  free(s->map_val);
  free(s->map_used);
  free(s);
}
