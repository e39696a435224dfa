# bench: the core benchmarks (bench/run.sh runs them all and prints their
# tables; bench/README.md quotes the latest) and the -DSPY_DISABLE check.
# Paths are written from the top directory.

# The ground-truth host is shared by tests/test_core.c and bench_accuracy.
tests_runner_SOURCES += tests/gt/gthost.c tests/gt/gthost.h

noinst_PROGRAMS += bench/bench_overhead bench/bench_accuracy \
	bench/bench_ingest bench/bench_deep bench/cpurun

# Whole-process CPU of one command, for bench/cost.sh.
bench_cpurun_SOURCES = bench/cpurun.c

# The overhead VM: ovm_off.c builds the dispatch loop with -DSPY_DISABLE
# (and the clock-read-per-poll variants), ovm_on.c with the hooks.
bench_bench_overhead_SOURCES = bench/bench_overhead.c bench/ovm.c \
	bench/ovm.h bench/ovm_loop.h bench/ovm_on.c bench/ovm_off.c
bench_bench_overhead_LDADD = libspyon_core.la

bench_bench_accuracy_SOURCES = bench/bench_accuracy.c tests/gt/gthost.c \
	tests/gt/gthost.h
bench_bench_accuracy_LDADD = libspyon_core.la -lm

bench_bench_deep_SOURCES = bench/bench_deep.c tests/gt/gthost.c \
	tests/gt/gthost.h
bench_bench_deep_LDADD = libspyon_core.la -lm

bench_bench_ingest_SOURCES = bench/bench_ingest.c
bench_bench_ingest_LDADD = libspyon_core.la

# Built with -DSPY_DISABLE and deliberately linked without libspyon: it
# links only if the disabled hooks reference nothing (core/disabled_hooks
# runs it).
check_PROGRAMS += bench/spy_disabled
bench_spy_disabled_SOURCES = bench/spy_disabled.c
bench_spy_disabled_CPPFLAGS = $(AM_CPPFLAGS) -DSPY_DISABLE

EXTRA_DIST += bench/run.sh bench/cost.sh bench/README.md
