/*
** sampler/profiler.h: struct spy_profiler (internal, spyS_).
*/
#ifndef SPY_PROFILER_H
#define SPY_PROFILER_H

#include <pthread.h>
#include <spyon/profile.h>

#include "sampler/agg.h"
#include "vm-hooks/slot.h"

/* A registered primitive. */
typedef struct spyS_prim {
  char *name;
  unsigned nsizes;
  char *size_names[4];
} spyS_prim;

/* What the sampler keeps per attached thread, in the profiler's list
** (under its lock). The thread's slot (struct spy_vm, vm-hooks/slot.h)
** holds what the hooks and the marking side share, nothing of this. */
typedef struct spyS_thread {
  struct spyS_thread *next;
  spy_vm *vm;
  spyS_cache *cache;    /* frame interning (sampler/agg.h) */
  uint64_t native_sent; /* native stacks: signals sent up to this time */
} spyS_thread;

/* Totals kept from threads that have detached. */
typedef struct spyS_dead {
  uint64_t calls, ticks, max;
} spyS_dead;

struct spy_profiler {
  spy_options opt;
  spyH_cfg cfg;
  spyS_prim *prims;    /* [opt.max_prims] */
  unsigned *prim_flags;/* [opt.max_prims], shared with the slots */
  atomic_uint_least64_t *obs_tau; /* [opt.max_prims], cfg.obs_tau */
  char **regions;      /* [opt.max_regions] */
  uint32_t nregions;

  pthread_mutex_t lock; /* the slot list, the aggregate, the fields below */
  pthread_cond_t cond;
  pthread_t thread;
  int have_thread, quit; /* the sampler thread: started (start_thread) */
  int started;          /* spy_start has been called */
  atomic_int running;
  spyS_thread *threads; /* attached threads, newest first */
  spyS_agg *agg;
  uint64_t run_start;   /* ticks at the current spy_start */
  uint64_t wall_ticks;  /* sum of finished start..stop periods */
  uint64_t start_unix_ns;
  uint64_t drains;
  spyS_dead *dead;      /* [opt.max_prims] */
  uint64_t dead_gc_count, dead_gc_ticks, dead_gc_max;
  uint64_t dead_dropped, dead_obs_dropped, dead_hook_ticks;
  uint64_t dead_nest_dropped, dead_full_walks, dead_frames_walked;
};

/* Drain every slot's rings and name queue into the aggregate. Called with
** p->lock held, by the sampler thread or a controlling thread. */
SPY_INTERNAL void spyS_drain_all(spy_profiler *p);

/* The sampler thread's body (sampler/sampler.c), and its name. */
#define SPYS_THREAD_NAME "spyon-sampler"
SPY_INTERNAL void *spyS_thread_main(void *arg);

/* The drains' period without marking (sampler/sampler.c). */
SPY_INTERNAL uint64_t spyS_drain_period(const spy_options *o);

/* spy_options.self_drain: the attached thread's drain (spyH_cfg.drain). */
SPY_INTERNAL int spyS_self_drain(spy_vm *v);

#endif
