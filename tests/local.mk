# tests: one runner binary; each suite is one tests/test_*.c file.
check_PROGRAMS += tests/runner
tests_runner_SOURCES = tests/runner.c tests/test.h \
	tests/test_core.c tests/test_core.h tests/test_core_exact.c \
	tests/test_contract.c \
	tests/test_profile.c tests/test_profile.h tests/test_profile_bad.c \
	tests/test_report.c tests/test_cost.c tests/test_cost.h \
	tests/test_cost_fit.c tests/test_st.c tests/test_native.c \
	tests/test_cli.c \
	tests/test_export.c tests/test_report.h tests/test_lua.c
tests_runner_CFLAGS = $(AM_CFLAGS) $(GSL_CFLAGS) $(JANSSON_CFLAGS) $(LUA_CFLAGS)
tests_runner_LDADD = hosts/st/libstvm.la hosts/lua/libluahost.la \
	libspyon_tools.la libspyon_core.la $(GMP_LIBS) $(LUA_LIBS) \
	$(JANSSON_LIBS) -lm
TESTS += tests/runner
AM_TESTS_ENVIRONMENT = SPY_BUILDDIR='$(abs_top_builddir)' \
	SPY_SRCDIR='$(abs_top_srcdir)'; export SPY_BUILDDIR SPY_SRCDIR;
