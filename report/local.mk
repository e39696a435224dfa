# report (tools library): the text report, the exports (json.c: the
# profile as JSON; export.c: folded stacks, speedscope; flame.c: SVG;
# pprof.c), the profile diff and merge, native frame names (paths from the top directory).
# walk.c is the one tree walker every tree view uses. pprof needs
# protobuf-c and zlib;
# report/profile.pb-c.[ch] are generated from report/profile.proto by
# protoc-c into the build tree.
libspyon_tools_core_la_SOURCES += report/tree.c report/tree.h report/trows.c report/tsearch.c \
	report/tview.c report/tview.h \
	report/format.c report/format.h \
	report/walk.c report/walk.h report/text.c report/json.c report/export.c \
	report/diff.c report/merge.c report/flame.c report/pprof.c \
	report/natives.c
nodist_libspyon_tools_core_la_SOURCES += report/profile.pb-c.c \
	report/profile.pb-c.h
# Names for native frames (spy_profile_symbolize) need libdw (configure
# --with-libdw); without it native frames keep their "0x..." names.
libspyon_tools_core_la_SOURCES += report/symbols.h
if HAVE_LIBDW
libspyon_tools_core_la_SOURCES += report/symbols.c
else
libspyon_tools_core_la_SOURCES += report/symbols-none.c
endif
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
