# sampler: the profiler object, the sampler thread, aggregation.
libspyon_core_la_SOURCES += sampler/map.c sampler/map.h sampler/agg.c \
	sampler/agg.h sampler/profiler.c sampler/profiler.h sampler/sampler.c \
	sampler/symbols.h
# Names for native frames need libdw (configure --with-libdw); without it
# native frames keep their module+offset names.
if HAVE_LIBDW
libspyon_core_la_SOURCES += sampler/symbols.c
else
libspyon_core_la_SOURCES += sampler/symbols-none.c
endif
