/*
** hosts/lua/lrun.c: run a script as `lua5.4 script args...` does.
**
** Follows lua.c of Lua 5.4 for a script given on the command line: the arg
** table (negative indices hold what came before the script), LUA_INIT_5_4
** or LUA_INIT, the message handler that appends a traceback, and errors
** printed as "PROGNAME: message" on stderr with exit status 1. So a script
** prints, fails and exits the same under spyon as under lua5.4.
*/
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hosts/lua/lspy_int.h"

static void l_message(const char *pname, const char *msg) {
  if (pname) fprintf(stderr, "%s: ", pname);
  fprintf(stderr, "%s\n", msg);
  fflush(stderr);
}

static int report(lspy *s, lua_State *L, int status) {
  if (status != LUA_OK) {
    const char *msg = lua_tostring(L, -1);
    l_message(s->o.progname, msg ? msg : "(error object is not a string)");
    lua_pop(L, 1);
  }
  return status;
}

/* lua.c's msghandler: a traceback after the message. */
static int msghandler(lua_State *L) {
  const char *msg = lua_tostring(L, 1);
  if (msg == NULL) {
    if (luaL_callmeta(L, 1, "__tostring") && lua_type(L, -1) == LUA_TSTRING)
      return 1;
    msg = lua_pushfstring(L, "(error object is a %s value)",
                          luaL_typename(L, 1));
  }
  luaL_traceback(L, L, msg, 1);
  return 1;
}

/* A protected call with the traceback handler; brackets left open by an
** error that reached the top are closed. */
static int docall(lspy *s, lua_State *L, int narg, int nres) {
  int base = lua_gettop(L) - narg;
  lua_pushcfunction(L, msghandler);
  lua_insert(L, base);
  uint32_t saved = lspyC_nest_save(s);
  int status = lua_pcall(L, narg, nres, base);
  if (status != LUA_OK) lspyC_nest_unwind(s, saved);
  lua_remove(L, base);
  return status;
}

static int dochunk(lspy *s, lua_State *L, int status) {
  if (status == LUA_OK) status = docall(s, L, 0, 0);
  return report(s, L, status);
}

/* LUA_INIT_5_4, else LUA_INIT: "@file" runs a file, else a chunk. */
static int handle_luainit(lspy *s, lua_State *L) {
  const char *name = "=LUA_INIT_5_4";
  const char *init = getenv(name + 1);
  if (init == NULL) {
    name = "=LUA_INIT";
    init = getenv(name + 1);
  }
  if (init == NULL) return LUA_OK;
  if (init[0] == '@')
    return dochunk(s, L, luaL_loadfile(L, init + 1));
  return dochunk(s, L, luaL_loadbuffer(L, init, strlen(init), name));
}

typedef struct run_args {
  lspy *s;
  int argc, script;
  char **argv;
} run_args;

/* lua.c's pmain: everything runs inside one protected C function, so that
** tracebacks end with its "[C]: in ?" line as lua5.4's do. Returns true
** on success. */
static int pmain(lua_State *L) {
  run_args *a = lua_touserdata(L, 1);
  lspy *s = a->s;
  char **argv = a->argv;
  int argc = a->argc, script = a->script;
  /* arg: the script at 0, its arguments from 1, what precedes it below. */
  lua_createtable(L, argc - script - 1, script + 1);
  for (int i = 0; i < argc; i++) {
    lua_pushstring(L, argv[i]);
    lua_rawseti(L, -2, i - script);
  }
  lua_setglobal(L, "arg");
  if (handle_luainit(s, L) != LUA_OK) return 0;
  const char *fname = argv[script];
  if (!strcmp(fname, "-") && (script == 0 || strcmp(argv[script - 1], "--")))
    fname = NULL;
  int status = luaL_loadfile(L, fname);
  if (status == LUA_OK) {
    int n = argc - script - 1;
    luaL_checkstack(L, n + 3, "too many arguments to script");
    for (int i = 1; i <= n; i++) lua_pushstring(L, argv[script + i]);
    status = docall(s, L, n, LUA_MULTRET);
  }
  if (report(s, L, status) != LUA_OK) return 0;
  lua_pushboolean(L, 1);
  return 1;
}

int lspy_run_script(lspy *s, int argc, char **argv, int script) {
  lua_State *L = s->L;
  run_args a = {s, argc, script, argv};
  lua_pushcfunction(L, pmain);
  lua_pushlightuserdata(L, &a);
  int status = lua_pcall(L, 1, 1, 0);
  int result = lua_toboolean(L, -1);
  report(s, L, status);
  lua_settop(L, 0);
  return result && status == LUA_OK ? 0 : 1;
}
