# hosts/st: the Smalltalk reference interpreter. libstvm.la (with the
# profiler hooks) is linked by the spyon command and the test runner; the
# standalone hosts/st/st is the same interpreter built with -DSPY_DISABLE,
# the baseline for the overhead benchmark. The kernel (hosts/st/kernel/*.st)
# is found at run time in $SPYON_KERNEL, else this source tree, else the
# installed $(pkgdatadir)/kernel.

st_vm_sources = hosts/st/st.h hosts/st/stprof.h hosts/st/stvm.h \
	hosts/st/heap.h hosts/st/symbols.h hosts/st/classes.h \
	hosts/st/parse.h hosts/st/compile.h hosts/st/loader.h \
	hosts/st/interp.h hosts/st/call.h hosts/st/proc.h \
	hosts/st/primtab.h hosts/st/prims.h hosts/st/lint.h \
	hosts/st/heap.c hosts/st/symbols.c hosts/st/classes.c hosts/st/lex.c \
	hosts/st/parse.c hosts/st/scope.c hosts/st/compile.c \
	hosts/st/loader.c \
	hosts/st/interp.c hosts/st/call.c hosts/st/proc.c hosts/st/prims.c \
	hosts/st/primlint.c hosts/st/primcoll.c hosts/st/stprof.c \
	hosts/st/stvm.c

stkerneldir = $(pkgdatadir)/kernel
dist_stkernel_DATA = hosts/st/kernel/Object.st hosts/st/kernel/Boolean.st \
	hosts/st/kernel/Magnitude.st hosts/st/kernel/Number.st \
	hosts/st/kernel/Integer.st hosts/st/kernel/LargeInt.st \
	hosts/st/kernel/Float.st hosts/st/kernel/Character.st \
	hosts/st/kernel/Collection.st hosts/st/kernel/ArrayedCollection.st \
	hosts/st/kernel/String.st hosts/st/kernel/OrderedCollection.st \
	hosts/st/kernel/HashedCollection.st hosts/st/kernel/Interval.st \
	hosts/st/kernel/Stream.st hosts/st/kernel/BlockClosure.st \
	hosts/st/kernel/Exception.st hosts/st/kernel/Process.st \
	hosts/st/kernel/Transcript.st hosts/st/kernel/Profiler.st

st_kernel_cppflags = \
	-DST_KERNEL_SRCDIR='"$(abs_top_srcdir)/hosts/st/kernel"' \
	-DST_KERNEL_DATADIR='"$(stkerneldir)"'

noinst_LTLIBRARIES += hosts/st/libstvm.la
hosts_st_libstvm_la_SOURCES = $(st_vm_sources)
hosts_st_libstvm_la_CPPFLAGS = $(AM_CPPFLAGS) $(st_kernel_cppflags)
# Only programs link it, so its code need not be PIC (which measurably
# slows the dispatch loop).
hosts_st_libstvm_la_CFLAGS = $(AM_CFLAGS) -prefer-non-pic
hosts_st_libstvm_la_LIBADD = $(GMP_LIBS) -lm

noinst_PROGRAMS += hosts/st/st
hosts_st_st_SOURCES = $(st_vm_sources) hosts/st/main.c
hosts_st_st_CPPFLAGS = $(AM_CPPFLAGS) $(st_kernel_cppflags) -DSPY_DISABLE
hosts_st_st_LDADD = $(GMP_LIBS) -lm

# The script loader's libFuzzer target (`make fuzz`, see Makefile.am and
# hosts/st/fuzz_load.c).
st_fuzz_sources = $(top_srcdir)/hosts/st/fuzz_load.c \
	$(top_srcdir)/hosts/st/heap.c $(top_srcdir)/hosts/st/symbols.c \
	$(top_srcdir)/hosts/st/classes.c $(top_srcdir)/hosts/st/lex.c \
	$(top_srcdir)/hosts/st/parse.c $(top_srcdir)/hosts/st/scope.c \
	$(top_srcdir)/hosts/st/compile.c $(top_srcdir)/hosts/st/loader.c \
	$(top_srcdir)/hosts/st/interp.c $(top_srcdir)/hosts/st/call.c \
	$(top_srcdir)/hosts/st/proc.c \
	$(top_srcdir)/hosts/st/prims.c $(top_srcdir)/hosts/st/primlint.c \
	$(top_srcdir)/hosts/st/primcoll.c $(top_srcdir)/hosts/st/stprof.c \
	$(top_srcdir)/hosts/st/stvm.c
EXTRA_DIST += hosts/st/fuzz_load.c
fuzz_targets += hosts/st/fuzz_load
hosts/st/fuzz_load: $(st_fuzz_sources) $(st_vm_sources)
	@$(MKDIR_P) hosts/st
	$(FUZZ_CC) $(FUZZ_CFLAGS) $(AM_CPPFLAGS) $(st_kernel_cppflags) \
		-DSPY_DISABLE -o $@ $(st_fuzz_sources) $(GMP_LIBS) -lm
CLEANFILES += hosts/st/fuzz_load
