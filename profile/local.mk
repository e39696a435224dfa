# profile: the shared data model, its file format and JSON export.
libspyon_core_la_SOURCES += profile/profile.c profile/profile.h \
	profile/atomic.c profile/atomic.h \
	profile/file.c profile/file.h profile/validate.c \
	profile/json.c profile/jsonw.c profile/jsonw.h

EXTRA_DIST += profile/fuzz_load.c docs/format.md \
	tests/data/profile/small.spy

# The loader's libFuzzer target, built only on request (`make fuzz`): it
# needs clang, while the normal build may use gcc. Run it with e.g.
#   mkdir -p fuzz-corpus
#   profile/fuzz_load -max_total_time=300 fuzz-corpus \
#       $(top_srcdir)/tests/data/profile
FUZZ_CC = clang
FUZZ_CFLAGS = -g -O1 -fsanitize=fuzzer,address,undefined \
	-fno-sanitize-recover=undefined
profile_fuzz_sources = $(top_srcdir)/profile/fuzz_load.c \
	$(top_srcdir)/profile/file.c $(top_srcdir)/profile/validate.c \
	$(top_srcdir)/profile/json.c $(top_srcdir)/profile/jsonw.c \
	$(top_srcdir)/profile/atomic.c \
	$(top_srcdir)/report/text.c $(top_srcdir)/report/walk.c \
	$(top_srcdir)/report/format.c $(top_srcdir)/report/export.c \
	$(top_srcdir)/report/diff.c \
	$(top_srcdir)/profile/profile.c

.PHONY: fuzz
fuzz: profile/fuzz_load
profile/fuzz_load: $(profile_fuzz_sources) $(top_srcdir)/profile/file.h \
		$(top_srcdir)/profile/profile.h $(top_srcdir)/profile/jsonw.h \
		$(top_srcdir)/include/spyon/profile.h
	@$(MKDIR_P) profile
	$(FUZZ_CC) $(FUZZ_CFLAGS) $(AM_CPPFLAGS) $(ZLIB_CFLAGS) \
		-o $@ $(profile_fuzz_sources) $(ZLIB_LIBS) -lm
CLEANFILES += profile/fuzz_load
