# bench: the core benchmarks (bench/run.sh runs them all and prints their
# tables; bench/README.md quotes the latest) and the -DSPY_DISABLE check.
# Paths are written from the top directory.

noinst_PROGRAMS += bench/bench_overhead bench/bench_accuracy \
	bench/bench_ingest bench/bench_deep bench/cpurun bench/obs_window

# A timed call's window: what the hooks add to a cost observation.
bench_obs_window_SOURCES = bench/obs_window.c
bench_obs_window_LDADD = libspyon_tools_core.la libspyon_core.la

# Whole-process CPU of one command, for bench/cost.sh.
bench_cpurun_SOURCES = bench/cpurun.c

# The overhead VM: ovm_off.c builds the dispatch loop with -DSPY_DISABLE
# (and the clock-read-per-poll variants), ovm_on.c with the hooks.
bench_bench_overhead_SOURCES = bench/bench_overhead.c bench/bench.h \
	bench/ovm.c bench/ovm.h bench/ovm_loop.h bench/ovm_on.c bench/ovm_off.c
bench_bench_overhead_LDADD = libspyon_core.la

# The accuracy benchmark measures against the tests' ground-truth host.
bench_bench_accuracy_SOURCES = bench/bench_accuracy.c bench/bench.h
bench_bench_accuracy_LDADD = tests/gt/libgthost.la libspyon_tools_core.la libspyon_core.la -lm

bench_bench_deep_SOURCES = bench/bench_deep.c bench/bench.h
bench_bench_deep_LDADD = tests/gt/libgthost.la libspyon_tools_core.la libspyon_core.la -lm

# The Lua host's brackets, profiled and stopped runs in one process
# (bench/lua/bench_lua.sh runs it); liblua linked as spyon links it.
noinst_PROGRAMS += bench/lua/lua_inproc
bench_lua_lua_inproc_SOURCES = bench/lua/inproc.c
bench_lua_lua_inproc_CFLAGS = $(AM_CFLAGS) $(LUA_CFLAGS)
bench_lua_lua_inproc_LDADD = hosts/lua/libluahost.la libspyon_tools_core.la \
	libspyon_core.la $(LUA_STATIC_LIBS)

bench_bench_ingest_SOURCES = bench/bench_ingest.c
bench_bench_ingest_LDADD = libspyon_core.la

# Built with -DSPY_DISABLE and deliberately linked without libspyon: it
# links only if the disabled hooks reference nothing (core/disabled_hooks
# runs it).
check_PROGRAMS += bench/spy_disabled
bench_spy_disabled_SOURCES = bench/spy_disabled.c
bench_spy_disabled_CPPFLAGS = $(AM_CPPFLAGS) -DSPY_DISABLE

# The speed target of cost/: 1M observations over 10 primitives, with
# selection and bootstrap, in under a second.
noinst_PROGRAMS += bench/bench_costs
bench_bench_costs_SOURCES = bench/bench_costs.c
bench_bench_costs_CFLAGS = $(AM_CFLAGS) $(GSL_CFLAGS)
bench_bench_costs_LDADD = libspyon_tools_core.la libspyon_core.la $(GSL_LIBS) -lm

# The Smalltalk host against Lua (bench/st/README.md).
EXTRA_DIST += bench/run.sh bench/cost.sh bench/README.md \
	bench/st/bench_st.sh bench/st/README.md bench/st/fib.st bench/st/fib.lua \
	bench/st/sends.st bench/st/sends.lua bench/st/loops.st \
	bench/st/loops.lua bench/st/collections.st bench/st/collections.lua \
	bench/st/ab.sh bench/st/deep.sh bench/st/deep.st bench/st/inproc.sh bench/st/largeint.st \
	bench/st/leaves.sh bench/st/instr.sh \
	bench/lua/bench_lua.sh \
	bench/lua/deep.lua bench/lua/calls.lua bench/lua/sigfloor.c \
	bench/lua/percall.lua bench/lua/instr.sh bench/lua/ab.sh bench/ab_pairs.sh
