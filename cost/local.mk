# cost: per-primitive cost regression (docs/costs.md). The fitting is
# library code on GSL; plotting needs cairo and goes into the spyon program
# only, so that libspyon never links cairo. Paths from the top directory.

libspyon_core_la_SOURCES += cost/util.c cost/util.h cost/expr.c \
	cost/expr.h cost/data.c cost/data.h cost/csv.c cost/solve.c \
	cost/solve.h cost/quantile.c cost/quantile.h cost/models.c \
	cost/models.h cost/select.c cost/select.h cost/bootstrap.c \
	cost/bootstrap.h cost/dconf.c cost/dconf.h cost/fit.c cost/fit.h \
	cost/output.c cost/codegen.c cost/fromprofile.c

# spyon costs, and its plots.
spyon_SOURCES += cli/costs.c cost/plot.c cost/plot.h
spyon_CFLAGS += $(CAIRO_CFLAGS) $(GSL_CFLAGS)
spyon_LDADD += $(CAIRO_LIBS) $(GSL_LIBS) -ldl -lm

# The speed target: 1M observations over 10 primitives, with selection and
# bootstrap, in under a second (bench/bench_costs prints the table).
noinst_PROGRAMS += bench/bench_costs
bench_bench_costs_SOURCES = bench/bench_costs.c
bench_bench_costs_CFLAGS = $(AM_CFLAGS) $(GSL_CFLAGS)
bench_bench_costs_LDADD = libspyon_core.la $(GSL_LIBS) -lm

# libFuzzer targets, built by `make fuzz` with $(FUZZ_CC) (clang; the
# variables come from profile/local.mk). Run them with e.g.
#   cost/fuzz_csv -max_total_time=60 corpus $(top_srcdir)/tests/data/cost
#   cost/fuzz_expr -max_total_time=60 corpus-expr
#   cost/fuzz_fit -max_total_time=60 -max_len=2048 corpus-fit
cost_fuzz_lib = $(top_srcdir)/cost/util.c $(top_srcdir)/cost/expr.c \
	$(top_srcdir)/cost/data.c $(top_srcdir)/cost/csv.c \
	$(top_srcdir)/cost/solve.c $(top_srcdir)/cost/quantile.c \
	$(top_srcdir)/cost/models.c $(top_srcdir)/cost/select.c \
	$(top_srcdir)/cost/bootstrap.c $(top_srcdir)/cost/dconf.c \
	$(top_srcdir)/cost/fit.c $(top_srcdir)/cost/output.c \
	$(top_srcdir)/cost/codegen.c $(top_srcdir)/profile/jsonw.c
cost_fuzz_headers = $(top_srcdir)/include/spyon/cost.h \
	$(top_srcdir)/cost/data.h $(top_srcdir)/cost/expr.h \
	$(top_srcdir)/cost/util.h

.PHONY: fuzz
fuzz: cost/fuzz_csv cost/fuzz_expr cost/fuzz_fit
cost/fuzz_csv: $(top_srcdir)/cost/fuzz_csv.c $(cost_fuzz_lib) \
		$(cost_fuzz_headers)
	@$(MKDIR_P) cost
	$(FUZZ_CC) $(FUZZ_CFLAGS) $(AM_CPPFLAGS) $(GSL_CFLAGS) -o $@ \
		$(top_srcdir)/cost/fuzz_csv.c $(top_srcdir)/cost/csv.c \
		$(top_srcdir)/cost/data.c $(top_srcdir)/cost/util.c $(GSL_LIBS)
cost/fuzz_expr: $(top_srcdir)/cost/fuzz_expr.c $(cost_fuzz_lib) \
		$(cost_fuzz_headers)
	@$(MKDIR_P) cost
	$(FUZZ_CC) $(FUZZ_CFLAGS) $(AM_CPPFLAGS) $(GSL_CFLAGS) -o $@ \
		$(top_srcdir)/cost/fuzz_expr.c $(top_srcdir)/cost/expr.c \
		$(top_srcdir)/cost/util.c $(GSL_LIBS) -lm
cost/fuzz_fit: $(top_srcdir)/cost/fuzz_fit.c $(cost_fuzz_lib) \
		$(cost_fuzz_headers)
	@$(MKDIR_P) cost
	$(FUZZ_CC) $(FUZZ_CFLAGS) $(AM_CPPFLAGS) $(GSL_CFLAGS) -o $@ \
		$(top_srcdir)/cost/fuzz_fit.c $(cost_fuzz_lib) $(GSL_LIBS) -lm \
		$(PTHREAD_LIBS)
CLEANFILES += cost/fuzz_csv cost/fuzz_expr cost/fuzz_fit

EXTRA_DIST += cost/fuzz_csv.c cost/fuzz_expr.c cost/fuzz_fit.c \
	docs/costs.md docs/costs-multiply.png tests/data/cost/example.csv \
	tests/data/cost/multiply.st
