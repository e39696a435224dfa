/*
** hosts/lua/lspy.h: spyon for Lua 5.4 scripts, on the system's unpatched
** liblua5.4.
**
** The host owns one lua_State (made with lspy_new) and profiles the code it
** runs: Lua functions are frames keyed by their (source, line defined); the
** standard library's non-trivial C functions are spyon primitives named by
** their library path ("string.rep"); coroutines are processes. Nothing in
** Lua is patched: a per-thread timer signal arms Lua's count hook when a
** sample may be due, and the hook disarms itself after polling
** (docs/lua.md says why and what it costs).
**
** Threads: everything here is called from the thread that runs the state.
*/
#ifndef LSPY_H
#define LSPY_H

#include <lua.h>
#include <stdint.h>
#include <spyon.h>
#include <spyon/profile.h>

typedef struct lspy lspy;

/* How a wrapped C function's operand sizes are read from its arguments. */
typedef enum lspy_sizes {
  LSPY_SZ_NONE = 0, /* no sizes */
  LSPY_SZ_S1,       /* len: #arg1 (a string) */
  LSPY_SZ_S1S2,     /* len,pattern: #arg1, #arg2 (find, match, gsub...) */
  LSPY_SZ_S1N2,     /* len,n: #arg1, arg2 (string.rep) */
  LSPY_SZ_T1,       /* n: #arg1 (a table's border, raw) */
  LSPY_SZ_NARGS,    /* n: the number of arguments (string.char, concat
                       of pieces, io.write) */
  LSPY_SZ_SARGS,    /* bytes: total length of the string arguments */
  LSPY_SZ_N1        /* n: arg1 as an integer (e.g. a count) */
} lspy_sizes;

/* Options beyond spy_options. */
typedef struct lspy_options {
  const char *progname;   /* prefix of error messages; default "lua5.4" */
  int coroutine_each;     /* 1: one process per coroutine; default 0: one
                             per coroutine body function */
  int hook_mode;          /* 0: a timer signal arms the count hook (the
                             default); 1: a permanent count hook every
                             hook_count instructions; 2: Lua code not
                             sampled, only brackets (both for comparison) */
  int hook_count;         /* instructions between hooks in mode 1 */
} lspy_options;

void lspy_options_init(lspy_options *o);

/* A new Lua state with the standard libraries opened and wrapped, and the
** profiler glue installed (the profiler itself starts in lspy_start).
** NULL when out of memory. */
lspy *lspy_new(const lspy_options *o);
lua_State *lspy_state(lspy *s);
/* Close the state (stopping the profiler first if needed). NULL: no-op. */
void lspy_free(lspy *s);

/* The host's default sampling interval: 1 ms. Each sample costs a timer
** signal, 20-25 us of CPU on the virtual machines measured (1-2 us on bare
** metal): 2 % of a core at 1 kHz, 22 % at 10 kHz (bench/lua). */
#define LSPY_INTERVAL_NS 1000000

/* Create a profiler with *so (NULL: spy_options_init's, at
** LSPY_INTERVAL_NS), attach this thread and start sampling.
** With the default hook mode so->marker is replaced by SPY_MARKER_TICK:
** the host's timer signal marks the samples itself (docs/lua.md).
** Returns 0 or a negative SPY_E* code (message in lspy_error). */
int lspy_start(lspy *s, const spy_options *so);
/* Stop, take the profile (*out may be NULL to discard) and detach. */
int lspy_stop(lspy *s, spy_profile **out);
const char *lspy_error(lspy *s);

/* Async-signal-safe: stop the running script at its next instruction with
** the error "interrupted!" (what lua.c does on SIGINT). */
void lspy_interrupt(lspy *s);

/* Called by os.exit before the process exits (the CLI reports there). */
void lspy_on_exit(lspy *s, void (*fn)(void *ud, int status), void *ud);

/* Run a script the way lua5.4 does (`lua5.4 script args...`): the arg
** table from argv (argv[script] is the script), LUA_INIT, errors on stderr
** with a traceback, prefixed by progname. Returns the exit status lua5.4
** would (0 or 1). */
int lspy_run_script(lspy *s, int argc, char **argv, int script);

/* Replace the C function at t[name] (t at index idx) with a wrapper that
** brackets every call as the spyon primitive `label` ("mylib.parse") with
** operand sizes read as `sizes` says. The user's own C functions are
** registered this way. Works before or after lspy_start. Returns 0, or -1
** if t[name] is not a C function. */
int lspy_wrap_field(lspy *s, int idx, const char *name, const char *label,
                    lspy_sizes sizes);

/* What Lua's allocator saw since lspy_new (Lua 5.4 has no collector hook:
** this is the part of memory management that can be counted honestly). */
typedef struct lspy_alloc_stats {
  uint64_t calls;      /* allocations and reallocations */
  uint64_t bytes;      /* bytes allocated (growth of reallocations) */
  uint64_t peak;       /* most bytes live at once */
  uint64_t live;       /* bytes live now */
} lspy_alloc_stats;
void lspy_alloc_get(const lspy *s, lspy_alloc_stats *out);

/* The host of a state made by lspy_new (NULL for another state). */
lspy *lspy_of(lua_State *L);

#endif
