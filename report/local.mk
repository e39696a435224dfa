# report: the text report, the exports and the profile diff (paths from the
# top directory). walk.c is the one tree walker every tree view uses.
libspyon_core_la_SOURCES += report/format.c report/format.h \
	report/walk.c report/walk.h report/text.c report/export.c \
	report/diff.c report/report.h

# The report suite's expected outputs (tests/test_report.c) and the guide to
# reading a report, so that `make distcheck` has them.
EXTRA_DIST += tests/data/report/synthetic.txt \
	tests/data/report/synthetic-options.txt tests/data/report/empty.txt \
	tests/data/report/synthetic.folded tests/data/report/diff.txt \
	tests/data/report/seed004-tree.txt docs/report.md
