# hosts/lua: Lua 5.4 scripts on the system's unpatched liblua5.4
# (docs/lua.md). libluahost.la is linked by the spyon command (spyon
# script.lua) and the test runner.
noinst_LTLIBRARIES += hosts/lua/libluahost.la
hosts_lua_libluahost_la_SOURCES = hosts/lua/lspy.h hosts/lua/lspy_int.h \
	hosts/lua/lspy.c hosts/lua/lwalk.c hosts/lua/lspylib.c \
	hosts/lua/lrun.c
hosts_lua_libluahost_la_CFLAGS = $(AM_CFLAGS) $(LUA_CFLAGS)
hosts_lua_libluahost_la_LIBADD = -lrt

# spyon links liblua5.4's archive when there is one (configure.ac says
# why) and exports its symbols for the C modules scripts load.
spyon_SOURCES += cli/host_lua.c
spyon_CFLAGS += $(LUA_CFLAGS)
spyon_LDADD += hosts/lua/libluahost.la libspyon_tools_core.la libspyon_core.la \
	$(LUA_STATIC_LIBS)
spyon_LDFLAGS = -export-dynamic

EXTRA_DIST += docs/lua.md

# The Lua host's tests (tests/test_lua.c) and their scripts.
EXTRA_DIST += tests/lua/out_ok.lua tests/lua/out_error.lua \
	tests/lua/out_exit.lua tests/lua/out_exitbool.lua \
	tests/lua/out_syntax.lua tests/lua/out_errobj.lua \
	tests/lua/gt_prim_tiny.lua tests/lua/gt_errors.lua \
	tests/lua/gt_pingpong.lua tests/lua/gt_deep.lua tests/lua/gen_many.lua \
	tests/lua/gt_gsub.lua tests/lua/gt_helper.lua tests/lua/gt_shrink.lua \
	tests/lua/gt_sort.lua tests/lua/gt_nested.lua tests/lua/keys_reuse.lua \
	tests/lua/out_coroutines.lua \
	bench/lua/bench_lua.sh bench/lua/deep.lua bench/lua/sigfloor.c
