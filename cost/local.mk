# cost (tools library): per-primitive cost regression (docs/costs.md). The
# fitting is library code on GSL; plotting needs cairo and goes into the spyon program
# only, so that libspyon never links cairo. Paths from the top directory.

libspyon_tools_core_la_SOURCES += cost/util.c cost/util.h cost/expr.c \
	cost/expr.h cost/data.c cost/data.h cost/csv.c cost/solve.c \
	cost/solve.h cost/quantile.c cost/quantile.h cost/models.c \
	cost/models.h cost/select.c cost/select.h cost/bootstrap.c \
	cost/bootstrap.h cost/dconf.c cost/dconf.h cost/fit.c cost/fit.h \
	cost/output.c cost/codegen.c cost/fromprofile.c

# spyon costs --plot: cairo, in the spyon program only (libspyon never
# links it); configured without cairo, plot-none.c says why there is no
# picture.
if HAVE_CAIRO
spyon_SOURCES += cost/plot.c cost/plot.h
spyon_CFLAGS += $(CAIRO_CFLAGS)
spyon_LDADD += $(CAIRO_LIBS) -ldl
else
spyon_SOURCES += cost/plot-none.c cost/plot.h
endif

# libFuzzer targets (`make fuzz`, see Makefile.am). Run them with e.g.
#   cost/fuzz_csv -max_total_time=60 corpus $(top_srcdir)/tests/data/cost
#   cost/fuzz_expr -max_total_time=60 corpus-expr
#   cost/fuzz_fit -max_total_time=60 -max_len=2048 corpus-fit
cost_fuzz_lib = $(top_srcdir)/cost/util.c $(top_srcdir)/cost/expr.c \
	$(top_srcdir)/cost/data.c $(top_srcdir)/cost/csv.c \
	$(top_srcdir)/cost/solve.c $(top_srcdir)/cost/quantile.c \
	$(top_srcdir)/cost/models.c $(top_srcdir)/cost/select.c \
	$(top_srcdir)/cost/bootstrap.c $(top_srcdir)/cost/dconf.c \
	$(top_srcdir)/cost/fit.c $(top_srcdir)/cost/output.c \
	$(top_srcdir)/cost/codegen.c $(profile_jsonw_sources)
cost_fuzz_headers = $(top_srcdir)/include/spyon/cost.h \
	$(top_srcdir)/cost/data.h $(top_srcdir)/cost/expr.h \
	$(top_srcdir)/cost/util.h

fuzz_targets += cost/fuzz_csv cost/fuzz_expr cost/fuzz_fit
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
# fuzz_fit without comparison tracing: in the solvers' floating-point
# loops it took half the time (the CSV parser, where tracing finds magic
# values, has fuzz_csv); edge coverage stays. 1.9x the inputs a second.
cost/fuzz_fit: $(top_srcdir)/cost/fuzz_fit.c $(cost_fuzz_lib) \
		$(cost_fuzz_headers)
	@$(MKDIR_P) cost
	$(FUZZ_CC) $(FUZZ_CFLAGS) -fno-sanitize-coverage=trace-cmp \
		$(AM_CPPFLAGS) $(GSL_CFLAGS) -o $@ \
		$(top_srcdir)/cost/fuzz_fit.c $(cost_fuzz_lib) $(GSL_LIBS) -lm \
		$(PTHREAD_LIBS)
CLEANFILES += cost/fuzz_csv cost/fuzz_expr cost/fuzz_fit

EXTRA_DIST += cost/fuzz_csv.c cost/fuzz_expr.c cost/fuzz_fit.c
