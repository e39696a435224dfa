# profile: the shared data model and its file format. The runtime builds
# and saves profiles (profile.c: the arena; save.c: the writer; atomic.c:
# replace a file whole); the tools load them (load.c). jsonw.c is the one
# JSON string writer of the whole project (the JSON export is report/json.c).
libspyon_core_la_SOURCES += profile/profile.c profile/profile.h \
	profile/atomic.c profile/atomic.h profile/save.c profile/file.h
libspyon_tools_core_la_SOURCES += profile/load.c profile/jsonw.c \
	profile/jsonw.h

# The JSON string writer, for the fuzz targets of the folders that use it.
profile_jsonw_sources = $(top_srcdir)/profile/jsonw.c

# The loader's libFuzzer target (`make fuzz`, see Makefile.am). Run it
# with e.g.
#   mkdir -p fuzz-corpus
#   profile/fuzz_load -max_total_time=300 fuzz-corpus \
#       $(top_srcdir)/tests/data/profile
profile_fuzz_sources = $(top_srcdir)/profile/fuzz_load.c \
	$(top_srcdir)/profile/save.c $(top_srcdir)/profile/load.c \
	$(top_srcdir)/report/json.c $(profile_jsonw_sources) \
	$(top_srcdir)/profile/atomic.c $(report_fuzz_sources) \
	$(top_srcdir)/profile/profile.c
EXTRA_DIST += profile/fuzz_load.c
fuzz_targets += profile/fuzz_load
profile/fuzz_load: $(profile_fuzz_sources) $(top_srcdir)/profile/file.h \
		$(top_srcdir)/profile/profile.h $(top_srcdir)/profile/jsonw.h \
		$(top_srcdir)/include/spyon/profile.h
	@$(MKDIR_P) profile
	$(FUZZ_CC) $(FUZZ_CFLAGS) $(AM_CPPFLAGS) $(ZLIB_CFLAGS) \
		-o $@ $(profile_fuzz_sources) $(ZLIB_LIBS) -lm
CLEANFILES += profile/fuzz_load
