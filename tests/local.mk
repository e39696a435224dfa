# tests: one runner binary; each suite is one tests/test_*.c file.
check_PROGRAMS += tests/runner
tests_runner_SOURCES = tests/runner.c tests/test.h \
	tests/test_core.c tests/test_core.h tests/test_core_exact.c \
	tests/test_contract.c tests/test_contract.h tests/test_contract_cost.c \
	tests/test_profile.c tests/test_profile.h tests/test_profile_bad.c \
	tests/test_report.c tests/test_report_walk.c \
	tests/test_report_export.c tests/test_cost.c tests/test_cost.h \
	tests/test_cost_fit.c tests/test_st.c tests/test_st.h \
	tests/test_st_prof.c tests/test_st_cli.c tests/test_st_hostile.c \
	tests/test_native.c \
	tests/test_cli.c \
	tests/test_export.c tests/test_report.h tests/test_json.c \
	tests/test_runner.c \
	tests/test_mark.c tests/test_lua.c tests/test_arch.c \
	tests/test_steps.c tests/test_tui.c tests/test_tui.h \
	tests/test_tui_lazy.c
tests_runner_CFLAGS = $(AM_CFLAGS) $(GSL_CFLAGS) $(JANSSON_CFLAGS) $(LUA_CFLAGS)
tests_runner_LDADD = tests/gt/libgthost.la hosts/st/libstvm.la \
	hosts/lua/libluahost.la libspyon_tools_core.la libspyon_core.la \
	$(GMP_LIBS) $(LUA_LIBS) $(JANSSON_LIBS) -lm
TESTS += tests/runner
AM_TESTS_ENVIRONMENT = SPY_BUILDDIR='$(abs_top_builddir)' \
	SPY_SRCDIR='$(abs_top_srcdir)'; export SPY_BUILDDIR SPY_SRCDIR;

# The ground-truth host: a program whose methods and primitives have known
# costs (tests/test_core.c, test_contract.c, bench/bench_accuracy and
# bench_deep).
noinst_LTLIBRARIES += tests/gt/libgthost.la
tests_gt_libgthost_la_SOURCES = tests/gt/gthost.c tests/gt/gthost.h

# Expected outputs and inputs the suites read.
EXTRA_DIST += tests/arch/install.sh tests/data/profile/small.spy \
	tests/data/report/synthetic.txt \
	tests/data/report/synthetic-options.txt tests/data/report/empty.txt \
	tests/data/report/synthetic.folded tests/data/report/diff.txt \
	tests/data/report/seed004-tree.txt \
	tests/data/cost/example.csv tests/data/cost/multiply.st \
	tests/st/lang.st tests/st/lang.out tests/st/exceptions.st \
	tests/st/exceptions.out tests/st/processes.st tests/st/processes.out \
	tests/st/err_syntax.st tests/st/err_runtime.st tests/st/err_quit.st \
	tests/st/skid.st tests/st/callback.st tests/st/nonlocal.st \
	tests/st/switch.st tests/st/deep.st tests/st/hostile.st \
	tests/st/hostile.out tests/st/bulk.st
