# sampler: the profiler object, the sampler thread, aggregation.
libspyon_core_la_SOURCES += sampler/map.c sampler/map.h sampler/agg.c \
	sampler/agg.h sampler/profiler.c sampler/profiler.h sampler/sampler.c \
	sampler/modules.c sampler/modules.h
