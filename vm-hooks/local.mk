# vm-hooks: clock, per-thread slots and rings, the hooks' slow paths.
libspyon_core_la_SOURCES += vm-hooks/clock.c vm-hooks/clock.h \
	vm-hooks/ring.c vm-hooks/ring.h vm-hooks/slot.c vm-hooks/slot.h \
	vm-hooks/hooks.c vm-hooks/due.h vm-hooks/native.h \
	vm-hooks/mark.c vm-hooks/mark.h vm-hooks/obs.c vm-hooks/obs.h \
	vm-hooks/record.c vm-hooks/record.h \
	vm-hooks/cpuclock.h \
	vm-hooks/walk.c vm-hooks/walk.h
# Native stacks in long primitives need libunwind (configure
# --with-libunwind); without it native-none.c says SPY_ENOTSUP.
if HAVE_LIBUNWIND
libspyon_core_la_SOURCES += vm-hooks/native.c
else
libspyon_core_la_SOURCES += vm-hooks/native-none.c
endif
