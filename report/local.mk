# report: the text report, the exports and the profile diff (paths from the
# top directory). walk.c is the one tree walker every tree view uses.
libspyon_core_la_SOURCES += report/tree.c report/tree.h \
	report/tview.c report/tview.h \
	report/format.c report/format.h \
	report/walk.c report/walk.h report/text.c report/export.c \
	report/diff.c report/merge.c report/flame.c report/report.h

# libspyon_tools: the exports that need libraries an interpreter has no use
# for (pprof: protobuf-c), linked by the spyon command and the tests, never
# by libspyon. report/profile.pb-c.[ch] are generated from
# report/profile.proto by protoc-c into the build tree.
noinst_LTLIBRARIES += libspyon_tools.la
libspyon_tools_la_SOURCES = report/pprof.c
nodist_libspyon_tools_la_SOURCES = report/profile.pb-c.c report/profile.pb-c.h
libspyon_tools_la_CFLAGS = $(AM_CFLAGS) -fvisibility=hidden \
	$(PROTOBUF_C_CFLAGS) $(ZLIB_CFLAGS)
libspyon_tools_la_LIBADD = $(PROTOBUF_C_LIBS) $(ZLIB_LIBS)
BUILT_SOURCES += report/profile.pb-c.c report/profile.pb-c.h
CLEANFILES += report/profile.pb-c.c report/profile.pb-c.h
EXTRA_DIST += report/profile.proto
report/profile.pb-c.h: report/profile.pb-c.c
report/profile.pb-c.c: $(top_srcdir)/report/profile.proto
	@$(MKDIR_P) report
	$(AM_V_GEN)$(PROTOC_C) --c_out=$(top_builddir) \
		--proto_path=$(top_srcdir) $(top_srcdir)/report/profile.proto

# The report's sources for profile/fuzz_load, which puts whatever loads
# through the text report, the exports and a diff.
report_fuzz_sources = $(top_srcdir)/report/text.c $(top_srcdir)/report/walk.c \
	$(top_srcdir)/report/format.c $(top_srcdir)/report/export.c \
	$(top_srcdir)/report/diff.c
