/*
** sampler/agg.h: aggregation of drained records into call trees per
** process, leaves, steps, regions and cost reservoirs (internal, spyS_).
**
** Only one thread at a time touches an aggregate: the sampler thread while
** draining, or a controlling thread in spy_stop / spy_profile_take, all
** under the profiler's lock. Times are kept in ticks and converted to
** nanoseconds when a profile is built.
*/
#ifndef SPY_AGG_H
#define SPY_AGG_H

#include <spyon/profile.h>

#include "sampler/map.h"
#include "vm-hooks/slot.h"

typedef struct spyS_agg spyS_agg;

/* Per-thread state of the aggregator: the last path, to reuse the nodes of
** the common prefix of consecutive samples (most of a deep stack). */
typedef struct spyS_cache spyS_cache;

SPY_INTERNAL spyS_agg *spyS_agg_new(const spyH_cfg *cfg);
SPY_INTERNAL void spyS_agg_free(spyS_agg *a);
SPY_INTERNAL spyS_cache *spyS_cache_new(const spyH_cfg *cfg);
SPY_INTERNAL void spyS_cache_free(spyS_cache *c);

/* Aggregate one record from a thread's sample ring / obs ring. */
SPY_INTERNAL void spyS_agg_record(spyS_agg *a, spyS_cache *c,
                                  const spyH_rec *rec);
SPY_INTERNAL void spyS_agg_obs(spyS_agg *a, const spyH_rec *rec);
/* ... and from its native ring (native stacks inside primitives). */
SPY_INTERNAL void spyS_agg_native(spyS_agg *a, const spyH_rec *rec);

/* Apply queued names (takes ownership of the list). */
SPY_INTERNAL void spyS_agg_names(spyS_agg *a, spyH_name *list);

/* Ask fn for the name of every method frame and process still unnamed. */
SPY_INTERNAL void spyS_agg_name_missing(spyS_agg *a, const spy_host *h);

/* Resolves names of primitives and regions for spyS_agg_build. */
typedef const char *(*spyS_namer)(void *ud, spy_frame_kind kind,
                                  uint64_t key);

/* Fill frames, nodes, processes, steps, regions, natives and each prim's
** obs of p (p->prims must already hold cfg->nprims entries). Native
** frames get an "0x..." name and a location with the address to name (the
** IP for an interrupted pc, the IP minus one for a return address) and
** module SPY_NONE: spyS_modules_resolve finds their modules, the tools
** name them. 0 or SPY_ENOMEM. */
SPY_INTERNAL int spyS_agg_build(const spyS_agg *a, spy_profile *p,
                                spyS_namer namer, void *ud);

/* Samples aggregated so far, and records lost to allocation failure. */
/* The weight of the samples taken while primitive prim ran (its own time
** as the samples see it: nested primitives and GC included, callbacks
** not). */
SPY_INTERNAL uint64_t spyS_agg_prim_ticks(const spyS_agg *a, uint32_t prim);
SPY_INTERNAL uint64_t spyS_agg_samples(const spyS_agg *a);
SPY_INTERNAL uint64_t spyS_agg_lost(const spyS_agg *a);
/* Cost observations of prim that reached the sampler (timed calls sent,
** whether kept or not). */
SPY_INTERNAL uint64_t spyS_agg_obs_received(const spyS_agg *a, uint32_t prim);

#endif
