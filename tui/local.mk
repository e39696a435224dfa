# tui: the curses browser (`spyon browse`, `spyon --browse`, `--live`).
# ncursesw links into the spyon program only, never into libspyon: the
# tree model is report/tree.c (in the library, curses-free); tui/view.c
# lays out screens and tui/keys.c maps keys to actions without curses, so
# the test runner and the benchmark link them too; tui/tui.c and
# tui/live.c are the terminal half.
spyon_SOURCES += tui/tui.c tui/tui.h tui/live.c tui/live.h tui/view.c \
	tui/view.h tui/keys.c tui/keys.h
spyon_CFLAGS += $(NCURSES_CFLAGS)
spyon_LDADD += $(NCURSES_LIBS)

tests_runner_SOURCES += tui/view.c tui/view.h tui/keys.c tui/keys.h

# The browser's speed targets (bench/bench_browse prints the table).
noinst_PROGRAMS += bench/bench_browse
bench_bench_browse_SOURCES = bench/bench_browse.c tui/view.c tui/view.h \
	tui/keys.c tui/keys.h
bench_bench_browse_CFLAGS = $(AM_CFLAGS) $(GSL_CFLAGS)
bench_bench_browse_LDADD = libspyon_tools_core.la libspyon_core.la $(GSL_LIBS) -lm

EXTRA_DIST += docs/browse.md tests/tui/e2e.sh tests/tui/work.st \
	tests/tui/live.st
