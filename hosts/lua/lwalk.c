/*
** hosts/lua/lwalk.c: the Lua host's stack walk (the walker spyon calls
** for a sample), over lua_getstack, or over Lua 5.4's CallInfo links
** with a memo of every 64th frame when the stack is deep.
*/
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "hosts/lua/lspy_int.h"

/* ------------------------------------------------------------------------
** The stack walk
** --------------------------------------------------------------------- */

#define SHALLOW 256u /* walks up to this many frames visit every frame */
#define MAP_STRIDE 64u /* nodes at depths divisible by this are memorised */

/* Forget every node: only the slots used are cleared (the table is large,
** and a collection that frees a known node clears it). */
void lspyC_map_clear(lspy *s) {
  for (uint32_t i = 0; i < s->map_n; i++) s->map_key[s->map_used[i]] = 0;
  s->map_n = 0;
  s->path_n = 0;
  s->map_L = NULL;
}

static uint32_t map_slot(uintptr_t k, uint32_t mask) {
  return (uint32_t)((k >> 6) * 0x9E3779B97F4A7C15ull >> 32) & mask;
}

static int map_get(const lspy *s, const void *node, uint32_t *d) {
  uintptr_t k = (uintptr_t)node;
  for (uint32_t i = map_slot(k, s->map_mask);; i = (i + 1) & s->map_mask) {
    if (s->map_key[i] == k) {
      *d = s->map_val[i];
      return 1;
    }
    if (!s->map_key[i]) return 0;
  }
}

/* Keep the map at most half full. It starts small (its pages fault in as
** it fills) and grows outside the walker (map_grow, from the count hook
** and after bracketed calls): a full map just stops recording, and the
** walks go further down until it has grown. */
static int map_put(lspy *s, const void *node, uint32_t d) {
  if (s->map_n >= (s->map_mask + 1) / 4) s->map_full = 1;
  if (s->map_n >= (s->map_mask + 1) / 2) return 0;
  uintptr_t k = (uintptr_t)node;
  uint32_t i = map_slot(k, s->map_mask);
  while (s->map_key[i] && s->map_key[i] != k) i = (i + 1) & s->map_mask;
  if (!s->map_key[i]) s->map_used[s->map_n++] = i;
  s->map_key[i] = k;
  s->map_val[i] = d;
  return 1;
}

/* Four times the slots, rehashed. Not in the walker: it allocates. */
void lspyC_map_grow(lspy *s) {
  s->map_full = 0;
  uint32_t n = (s->map_mask + 1) * 4;
  if (n > (1u << 24)) return;
  uintptr_t *key = calloc(n, sizeof *key);
  uint32_t *val = calloc(n, sizeof *val), *used = calloc(n / 2, sizeof *used);
  if (!key || !val || !used) {
    free(key), free(val), free(used);
    return;
  }
  uint32_t m = 0;
  for (uint32_t i = 0; i < s->map_n; i++) {
    uint32_t o = s->map_used[i];
    uint32_t j = map_slot(s->map_key[o], n - 1);
    while (key[j]) j = (j + 1) & (n - 1);
    key[j] = s->map_key[o];
    val[j] = s->map_val[o];
    used[m++] = j;
  }
  free(s->map_key), free(s->map_val), free(s->map_used);
  s->map_key = key, s->map_val = val, s->map_used = used;
  s->map_mask = n - 1;
  s->map_n = m;
}

/* The allocator tells the walker when a CallInfo node it knows is freed:
** the positions it remembers are then stale (luaE_shrinkCI unlinks free
** nodes during collections), and the next deep walk starts afresh. */
static void ci_freed(lspy *s, void *p) {
  uint32_t d;
  if (s->map_n && map_get(s, p, &d)) lspyC_map_clear(s);
}

/* A memorised node still at the depth it was seen at. luaE_shrinkCI
** frees every other unused node above the running frame and relinks the
** rest: a memorised node that survives moves down, and ci_freed sees only
** the freed ones. Its link to the node below then differs from what path
** holds at its old depth (the freed node), and so does path when a later
** walk has seen another node there. */
static int known(const lspy *s, const ci_head *c, uint32_t *d) {
  if (!map_get(s, c, d) || *d > s->path_n || s->path[*d] != c) return 0;
  return *d <= 1 || (const void *)c->previous == s->path[*d - 1];
}

static int lua_frame(lua_State *L, lua_Debug *ar, void *ci) {
  ar->i_ci = (struct CallInfo *)ci;
  return lua_getinfo(L, "S", ar) && ar->what[0] != 'C';
}

/* Deep stacks. A sample needs the innermost and root-most frames and the
** depth between. lua_getstack(L, n) costs O(n), so the walker follows the
** CallInfo links itself, and keeps, for the state it walked last, the
** node at each depth: an active node never moves in Lua's list (nodes are
** added at the top and freed only above the running frame), so a node
** seen before at depth d is still at depth d until the allocator sees a
** known node freed. A walk then follows links down only to the first
** known node, reads the innermost and the root-most frames, and skips
** the middle with spy_stack_skip: its cost depends on how much of the
** stack changed since the last sample, not on the depth. Depths here
** count C frames too; only Lua frames are pushed. */
static void walk_deep(lspy *s, lua_State *L, spy_stack *st, ci_head *top) {
  if (s->map_L != L) {
    lspyC_map_clear(s);
    s->map_L = L;
  }
  /* Down to the first known node (or the base: a full walk). */
  uint32_t steps = 0, d0 = 0;
  ci_head *c = top;
  while (c->previous && !known(s, c, &d0)) {
    c = c->previous;
    steps++;
  }
  uint32_t depth = c->previous ? d0 + steps : steps;
  if (depth + 1 > s->path_cap) { /* too deep for the arrays: no memo */
    lspyC_map_clear(s);
    uint32_t n = 0;
    lua_Debug ar;
    for (c = top; c->previous && n < spy_stack_leaf_cap(st); c = c->previous)
      if (lua_frame(L, &ar, c))
        spy_stack_push(st, lspyC_fn_key(s, L, &ar, 1)), n++;
    spy_stack_skip(st, depth - n);
    return;
  }
  /* Record the new nodes: each in path, every MAP_STRIDE-th in the map
  ** (a walk then goes at most that many nodes past the changed ones, and
  ** the map of a 100k-deep stack holds 1.6k nodes: growing it to hold
  ** them all cost 10 ms of page faults). */
  c = top;
  for (uint32_t i = 0; i < steps; i++, c = c->previous) {
    s->path[depth - i] = c;
    if ((depth - i) % MAP_STRIDE == 0) map_put(s, c, depth - i);
  }
  if (depth > s->path_n) s->path_n = depth;
  /* The innermost Lua frames... */
  lua_Debug ar;
  uint32_t lcap = spy_stack_leaf_cap(st), rcap = spy_stack_root_cap(st);
  uint32_t pushed = 0, used_top = 0;
  for (c = top; pushed < lcap && used_top < depth; c = c->previous) {
    used_top++;
    if (lua_frame(L, &ar, c))
      spy_stack_push(st, lspyC_fn_key(s, L, &ar, 1)), pushed++;
  }
  /* ...the root-most ones, from depth 1 up... */
  uint64_t root[256];
  uint32_t nroot = 0, used_root = 0;
  if (rcap > 256) rcap = 256;
  for (uint32_t d = 1; nroot < rcap && used_top + used_root < depth; d++) {
    used_root++;
    if (lua_frame(L, &ar, s->path[d]))
      root[nroot++] = lspyC_fn_key(s, L, &ar, 1);
  }
  /* ...and the middle counted, not visited. */
  spy_stack_skip(st, depth - used_top - used_root);
  while (nroot) spy_stack_push(st, root[--nroot]);
}

/* The key of the Lua function at idx (0 for a C function). */
uint64_t lspyC_key_of(lspy *s, lua_State *L, int idx) {
  lua_Debug ar;
  lua_pushvalue(L, idx);
  if (!lua_getinfo(L, ">S", &ar) || ar.what[0] == 'C') return 0;
  return lspyC_fn_key(s, L, &ar, 0);
}

/* The walker: the running state's Lua frames, innermost first. At a
** callback's end the function called back has returned; its key stands
** for it on top (s->cb_key), so that a sample taken there is charged to
** it as the contract says, not to the primitive. */
void lspyC_walk(void *ud, spy_stack *st) {
  lspy *s = ud;
  lua_State *L = s->cur;
  lua_Debug ar;
  if (s->cb_key) spy_stack_push(st, s->cb_key);
  if (!L || !lua_getstack(L, 0, &ar)) return;
  if (!s->ci_ok) { /* O(depth^2), but correct */
    for (int lv = 0; lua_getstack(L, lv, &ar); lv++)
      if (lua_getinfo(L, "S", &ar) && ar.what[0] != 'C')
        spy_stack_push(st, lspyC_fn_key(s, L, &ar, 1));
    return;
  }
  ci_head *top = (ci_head *)(s->walk_from ? s->walk_from : ar.i_ci), *c = top;
  uint32_t n = 0;
  while (c->previous && n < SHALLOW) c = c->previous, n++;
  if (c->previous) {
    walk_deep(s, L, st, top);
    return;
  }
  for (c = top; c->previous; c = c->previous)
    if (lua_frame(L, &ar, c)) spy_stack_push(st, lspyC_fn_key(s, L, &ar, 1));
}

/* Where lua_State keeps its running frame's CallInfo: the first word of
** its head that holds what lua_getstack(L, 0) returns, in a C function
** (-1: none; with `unique`, -1 also if another word does: run deeper than
** one frame, where the base CallInfo's next, further on, is not it). */
static long ci_off_found;
static long find_ci_off(lua_State *L, int unique) {
  lua_Debug a;
  if (!lua_getstack(L, 0, &a)) return -1;
  long off = -1;
  for (long i = 0; i < 16; i++)
    if (((void *const *)(const void *)L)[i] == (void *)a.i_ci) {
      if (off >= 0) return unique ? -1 : off;
      off = i * (long)sizeof(void *);
    }
  return off;
}

/* A probe run from a known stack: does lua_getstack's node chain match
** ci_head's links? */
static int probe_ci(lua_State *L) {
  lua_Debug a, b;
  int ok = 1, lv;
  ci_off_found = find_ci_off(L, 1);
  for (lv = 0; lua_getstack(L, lv + 1, &b); lv++) {
    if (!lua_getstack(L, lv, &a)) return ok = 0, lua_pushboolean(L, 0), 1;
    ci_head *ca = (ci_head *)a.i_ci, *cb = (ci_head *)b.i_ci;
    if (ca->previous != cb || cb->next != ca) ok = 0;
  }
  lua_getstack(L, lv, &a);
  ci_head *last = (ci_head *)a.i_ci;
  /* The bottom frame's previous is the base node, whose previous is NULL. */
  if (!last->previous || last->previous->previous) ok = 0;
  lua_pushboolean(L, ok && lv >= 3);
  return 1;
}

/* Allocation accounting for the CallInfo check below. */
static int ci_probe_on;
static uint64_t ci_probe_frees;

/* Check the CallInfo layout: links from a Lua-C-Lua-Lua stack, and that a
** finished coroutine's nodes are freed with CI_SIZE bytes (what ci_freed
** relies on); *ci_off: where lua_State holds the running CallInfo, or -1
** (checked again from a coroutine's stack). */
static int probe_off(lua_State *L) {
  lua_pushboolean(L, find_ci_off(L, 0) == ci_off_found);
  return 1;
}

int lspyC_check_ci(lua_State *L, long *ci_off) {
  *ci_off = -1;
  static const char code[] =
      "local probe = ...\n"
      "local function f(n) if n == 0 then return probe() end "
      "local r = f(n - 1) return r end\n"
      "local ok = f(5)\n"
      "local co = coroutine.create(function() return f(40) end)\n"
      "coroutine.resume(co)\n"
      "return ok, co\n";
  if (luaL_loadbuffer(L, code, sizeof code - 1, "=lspy") != LUA_OK) {
    lua_pop(L, 1);
    return 0;
  }
  lua_pushcfunction(L, probe_ci);
  if (lua_pcall(L, 1, 2, 0) != LUA_OK) {
    lua_pop(L, 1);
    return 0;
  }
  int ok = lua_toboolean(L, -2);
  lua_pop(L, 2);
  if (ci_off_found >= 0) { /* the same word in another state */
    lua_State *co = lua_newthread(L);
    lua_pushcfunction(co, probe_off);
    if (lua_pcall(co, 0, 1, 0) == LUA_OK && lua_toboolean(co, -1))
      *ci_off = ci_off_found;
    lua_pop(L, 1);
  }
  ci_probe_frees = 0;
  ci_probe_on = 1;
  lua_gc(L, LUA_GCCOLLECT);
  lua_gc(L, LUA_GCCOLLECT);
  ci_probe_on = 0;
  return ok && ci_probe_frees >= 40;
}

void lspyC_freed(lspy *s, void *p, size_t osize) {
  if (osize != CI_SIZE) return;
  if (ci_probe_on) ci_probe_frees++;
  ci_freed(s, p);
}
