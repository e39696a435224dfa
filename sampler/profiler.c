/*
** sampler/profiler.c: the public lifecycle: options, registration,
** attach/detach, start/stop, snapshots.
*/
#include "config.h"

#include "sampler/profiler.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "profile/profile.h"
#include "sampler/modules.h"
#include "vm-hooks/clock.h"
#include "vm-hooks/cpuclock.h"
#include "vm-hooks/due.h"
#include "vm-hooks/mark.h"
#include "vm-hooks/native.h"

#define RELAXED memory_order_relaxed

/* ------------------------------------------------------------------------
** Versions, errors, options
** --------------------------------------------------------------------- */

unsigned spy_version(void) { return SPY_VERSION_HEX; }
const char *spy_version_string(void) { return SPY_VERSION_STRING; }

const char *spy_strerror(int err) {
  switch (err) {
#define SPY_ERR_CASE_(name, code, msg) \
  case code: return msg;
    SPY_ERRORS(SPY_ERR_CASE_)
#undef SPY_ERR_CASE_
  case 0: return "success";
  default: return "unknown error";
  }
}

void spy_options_init(spy_options *o) {
  if (!o) return;
  memset(o, 0, sizeof *o);
  o->interval_ns = 100000;
  o->mode = SPY_MODE_POLL;
  o->max_depth = 128;
  o->ring_bytes = 4u << 20;
  o->obs_ring_bytes = 1u << 20;
  o->reservoir = 4096;
  o->longest = 20;
  o->max_prims = 1024;
  o->max_regions = 256;
  o->native_stacks = 0;
  o->native_interval_ns = 1000000;
  o->stack_copy = 1u << 20;
  o->saved_processes = 64;
  o->marker = SPY_MARKER_THREAD;
  o->clock = SPY_CLOCK_WALL;
  o->obs_budget = 0.01;
}

static int pow2(size_t x) { return x && !(x & (x - 1)); }

static int check_options(const spy_options *o) {
  if (o->interval_ns < 1000 || o->interval_ns > 10000000000ull)
    return SPY_EINVAL; /* 1 us .. 10 s */
  if (o->mode != SPY_MODE_POLL && o->mode != SPY_MODE_TIMER) return SPY_EINVAL;
  if (o->max_depth < 2 || o->max_depth > 60000) return SPY_EINVAL;
  if (!pow2(o->ring_bytes) || o->ring_bytes < (64u << 10)) return SPY_EINVAL;
  /* The ring takes no record over half its size: a full-depth sample (its
  ** size rounded up to 8, with every region mark) must fit, or every
  ** sample would be dropped. */
  if (o->ring_bytes / 2 < sizeof(spyH_sample) + 8 +
                              SPY_NEST_MAX * sizeof(spyH_place) +
                              (size_t)o->max_depth * sizeof(uint64_t))
    return SPY_EINVAL;
  if (!pow2(o->obs_ring_bytes) || o->obs_ring_bytes < (64u << 10))
    return SPY_EINVAL;
  if (o->max_prims == 0 || o->max_prims > (1u << 20)) return SPY_EINVAL;
  if (o->max_regions == 0 || o->max_regions > (1u << 20)) return SPY_EINVAL;
  if (o->reservoir > (1u << 24) || o->longest > 100000) return SPY_EINVAL;
  if (o->native_stacks != 0 && o->native_stacks != 1) return SPY_EINVAL;
  if (o->native_stacks && (o->native_interval_ns < 10000 ||
                           o->native_interval_ns > 10000000000ull))
    return SPY_EINVAL; /* 10 us .. 10 s */
  if (o->stack_copy > (1u << 26)) return SPY_EINVAL;
  if (o->saved_processes == 0 || o->saved_processes > 65536) return SPY_EINVAL;
  if (o->exact_prims != 0 && o->exact_prims != 1) return SPY_EINVAL;
  if (!(o->obs_budget >= 0 && o->obs_budget <= 1)) return SPY_EINVAL;
  if (o->marker != SPY_MARKER_THREAD && o->marker != SPY_MARKER_SIGNAL &&
      o->marker != SPY_MARKER_TICK)
    return SPY_EINVAL;
  if (o->clock != SPY_CLOCK_WALL && o->clock != SPY_CLOCK_CPU)
    return SPY_EINVAL;
  /* A timer signal costs 1-2 us on bare metal and 10-20 us on a VM: at
  ** shorter intervals the thread would livelock in signal delivery. */
  if (o->marker == SPY_MARKER_SIGNAL && o->interval_ns < SPYH_MARK_SIG_MIN_NS)
    return SPY_EINVAL;
  /* Only spy_tick_next drains, and the native stacks' signals are the
  ** sampler thread's. */
  if (o->self_drain != 0 &&
      (o->self_drain != 1 || o->marker != SPY_MARKER_TICK || o->native_stacks))
    return SPY_EINVAL;
  return 0;
}

/* ------------------------------------------------------------------------
** Create and free
** --------------------------------------------------------------------- */

int spy_profiler_new(spy_profiler **out, const spy_options *o) {
  spy_options def;
  if (!out) return SPY_EINVAL;
  *out = NULL;
  if (!o) {
    spy_options_init(&def);
    o = &def;
  }
  int rc = check_options(o);
  if (rc) return rc;
  if ((rc = spyH_clock_init(o->force_clock_gettime)) < 0) return rc;
  spyH_clock_refine();
  spy_profiler *p = calloc(1, sizeof *p);
  if (!p) return SPY_ENOMEM;
  p->opt = *o;
  p->prims = calloc(o->max_prims, sizeof *p->prims);
  p->prim_flags = calloc(o->max_prims, sizeof *p->prim_flags);
  p->regions = calloc(o->max_regions, sizeof *p->regions);
  p->dead = calloc(o->max_prims, sizeof *p->dead);
  p->obs_tau = calloc(o->max_prims, sizeof *p->obs_tau);
  /* Every call of a primitive not yet registered goes to the slow path
  ** (the inline hooks compare its draw with this); registration lowers it
  ** to 0 for a primitive without cost observations. */
  if (p->obs_tau)
    for (unsigned i = 0; i < o->max_prims; i++)
      atomic_init(&p->obs_tau[i], o->reservoir ? UINT64_MAX : 0);
  spyH_cfg *c = &p->cfg;
  c->interval = spyH_ns_to_ticks(o->interval_ns);
  if (c->interval == 0) c->interval = 1;
  c->hook_cap = spyH_ns_to_ticks(2000);
  c->mode = o->mode;
  c->leaf_cap = o->max_depth - o->max_depth / 2;
  c->root_cap = o->max_depth / 2;
  c->longest = o->longest;
  c->reservoir = o->reservoir;
  uint32_t root = 0; /* isqrt(reservoir): libspyon needs no libm */
  while ((uint64_t)(root + 1) * (root + 1) <= o->reservoir) root++;
  c->obs_margin = (double)o->reservoir + 8.0 * (root + 1) + 8.0;
  c->max_prims = o->max_prims;
  c->prim_flags = p->prim_flags;
  c->obs_tau = p->obs_tau;
  c->max_regions = o->max_regions;
  c->native = o->native_stacks;
  c->native_interval = spyH_ns_to_ticks(o->native_interval_ns);
  c->stack_copy = o->stack_copy;
  c->saved_processes = o->saved_processes;
  c->exact_prims = o->exact_prims;
  c->obs_budget = o->exact_prims ? 0 : o->obs_budget;
  c->cpu_clock = o->clock == SPY_CLOCK_CPU;
  c->tick_marker = o->marker == SPY_MARKER_TICK;
  c->self_drain = o->self_drain;
  c->drain_period = spyS_drain_period(o);
  c->drain = spyS_self_drain;
  atomic_init(&c->nprims, 0);
  atomic_init(&c->nregions, 0);
  atomic_init(&c->epoch, 0);
  atomic_init(&c->origin, 0);
  atomic_init(&p->running, 0);
  if (!p->prims || !p->prim_flags || !p->regions || !p->dead || !p->obs_tau ||
      !(p->agg = spyS_agg_new(c))) {
    spy_profiler_free(p);
    return SPY_ENOMEM;
  }
  pthread_mutex_init(&p->lock, NULL);
  pthread_cond_init(&p->cond, NULL);
  *out = p;
  return 0;
}

int spy_profiler_free(spy_profiler *p) {
  if (!p) return 0;
  if (p->agg) { /* fully constructed */
    pthread_mutex_lock(&p->lock);
    if (p->threads) {
      pthread_mutex_unlock(&p->lock);
      return SPY_ESTATE;
    }
    atomic_store(&p->running, 0);
    p->quit = 1;
    pthread_cond_broadcast(&p->cond);
    pthread_mutex_unlock(&p->lock);
    if (p->have_thread) pthread_join(p->thread, NULL);
    pthread_mutex_destroy(&p->lock);
    pthread_cond_destroy(&p->cond);
  }
  if (p->prims)
    for (uint32_t i = 0; i < atomic_load(&p->cfg.nprims); i++) {
      free(p->prims[i].name);
      for (unsigned j = 0; j < 4; j++) free(p->prims[i].size_names[j]);
    }
  if (p->regions)
    for (uint32_t i = 0; i < p->nregions; i++) free(p->regions[i]);
  free(p->prims);
  free(p->prim_flags);
  free(p->regions);
  free(p->dead);
  free(p->obs_tau);
  spyS_agg_free(p->agg);
  free(p);
  return 0;
}

/* ------------------------------------------------------------------------
** Registration
** --------------------------------------------------------------------- */

/* Split "a,b" into at most 4 trimmed names. */
static int parse_sizes(const char *sizes, spyS_prim *pr) {
  pr->nsizes = 0;
  if (!sizes) return 0;
  const char *s = sizes;
  while (*s) {
    while (*s == ' ') s++;
    const char *e = s;
    while (*e && *e != ',') e++;
    const char *t = e;
    while (t > s && t[-1] == ' ') t--;
    if (t == s || pr->nsizes == 4) return SPY_EINVAL;
    if (!(pr->size_names[pr->nsizes] = strndup(s, (size_t)(t - s))))
      return SPY_ENOMEM;
    pr->nsizes++;
    s = *e ? e + 1 : e;
    if (*e && !*s) return SPY_EINVAL; /* trailing comma */
  }
  return 0;
}

/* Registration may come while running (a module loaded later): the
** arrays are sized for max_prims up front, the new entry is complete
** before the count that makes it visible is published (release; the hooks
** read it with acquire), and the lock keeps registrations and snapshots
** apart. */
int spy_prim_register(spy_profiler *p, const char *name, const char *sizes,
                      unsigned flags) {
  if (!p || !name || !*name || (flags & ~SPY_PRIM_COST)) return SPY_EINVAL;
  pthread_mutex_lock(&p->lock);
  uint32_t n = atomic_load_explicit(&p->cfg.nprims, RELAXED);
  for (uint32_t i = 0; i < n; i++)
    if (strcmp(p->prims[i].name, name) == 0) {
      pthread_mutex_unlock(&p->lock);
      return (int)i;
    }
  if (n >= p->cfg.max_prims) {
    pthread_mutex_unlock(&p->lock);
    return SPY_EFULL;
  }
  spyS_prim pr = {0};
  int rc = parse_sizes(sizes, &pr);
  if (rc == 0 && !(pr.name = strdup(name))) rc = SPY_ENOMEM;
  if (rc) {
    pthread_mutex_unlock(&p->lock);
    for (unsigned j = 0; j < 4; j++) free(pr.size_names[j]);
    return rc;
  }
  p->prims[n] = pr;
  p->prim_flags[n] = flags;
  atomic_store_explicit(&p->cfg.nprims, n + 1, memory_order_release);
  if (!(flags & SPY_PRIM_COST)) /* never timed: the inline paths' too */
    atomic_store_explicit(&p->obs_tau[n], 0, RELAXED);
  pthread_mutex_unlock(&p->lock);
  return (int)n;
}

int spy_region_register(spy_profiler *p, const char *name) {
  if (!p || !name || !*name) return SPY_EINVAL;
  pthread_mutex_lock(&p->lock);
  int rc = SPY_EFULL;
  uint32_t n = p->nregions;
  for (uint32_t i = 0; i < n; i++)
    if (strcmp(p->regions[i], name) == 0) {
      pthread_mutex_unlock(&p->lock);
      return (int)i;
    }
  if (n < p->opt.max_regions) {
    rc = (p->regions[n] = strdup(name)) ? (int)n : SPY_ENOMEM;
    if (rc >= 0) {
      p->nregions = n + 1;
      atomic_store_explicit(&p->cfg.nregions, n + 1, memory_order_release);
    }
  }
  pthread_mutex_unlock(&p->lock);
  return rc;
}

/* ------------------------------------------------------------------------
** Attach and detach
** --------------------------------------------------------------------- */

/* The sampler thread, started once: at the first spy_start, or with
** spy_options.self_drain when a second thread attaches to a profiler
** that has started (the first drains itself: no thread). Under p->lock. */
static int start_thread(spy_profiler *p) {
  if (p->have_thread) return 0;
  if (pthread_create(&p->thread, NULL, spyS_thread_main, p) != 0)
    return SPY_ETHREAD;
  pthread_setname_np(p->thread, SPYS_THREAD_NAME); /* top -H shows it */
  p->have_thread = 1;
  return 0;
}

int spy_attach(spy_profiler *p, const spy_host *host, spy_vm **out) {
  if (!p || !host || !host->walk || !out) return SPY_EINVAL;
  *out = NULL;
  pthread_t self = pthread_self();
  pthread_mutex_lock(&p->lock);
  for (spyS_thread *t = p->threads; t; t = t->next) {
    spy_vm *v = t->vm;
    if (pthread_equal(v->thread, self)) {
      pthread_mutex_unlock(&p->lock);
      return SPY_EEXIST;
    }
  }
  int rc = p->threads && p->started ? start_thread(p) : 0;
  pthread_mutex_unlock(&p->lock);
  if (rc) return rc;
  spy_vm *v;
  rc = p->cfg.native ? spyH_native_install() : 0;
  if (rc) return rc;
  rc = spyH_slot_new(&v, &p->cfg, &p->opt, host);
  if (rc) return rc;
  v->prof = p;
  spyS_thread *t = calloc(1, sizeof *t);
  if (!t || !(t->cache = spyS_cache_new(&p->cfg))) {
    free(t);
    spyH_slot_free(v);
    return SPY_ENOMEM;
  }
  t->vm = v;
  if (!(v->marker = malloc(sizeof *v->marker)) ||
      (rc = spyH_marker_bind(v->marker, v, p->opt.marker)) != 0) {
    free(v->marker);
    spyS_cache_free(t->cache);
    free(t);
    spyH_slot_free(v);
    return rc ? rc : SPY_ENOMEM;
  }
  if (p->cfg.native && (rc = spyH_native_bind(v)) != 0) {
    spyH_marker_unbind(v->marker);
    free(v->marker);
    spyS_cache_free(t->cache);
    free(t);
    spyH_slot_free(v);
    return rc;
  }
  if (p->cfg.cpu_clock) /* a run already going counts from here */
    atomic_store_explicit(&v->cpu_origin, spyH_cpu_ticks(), RELAXED);
  pthread_mutex_lock(&p->lock);
  t->next = p->threads;
  p->threads = t;
  if (atomic_load(&p->running)) {
    spyH_set_active(v, 1);
    spyH_marker_arm(v->marker, atomic_load_explicit(&p->cfg.origin, RELAXED),
                    p->cfg.interval);
    if (p->cfg.native) spyH_native_arm(v, p->opt.native_interval_ns);
  }
  pthread_mutex_unlock(&p->lock);
  *out = v;
  return 0;
}

int spy_detach(spy_vm *v) {
  if (!v) return 0;
  spy_profiler *p = v->prof;
  if (!pthread_equal(v->thread, pthread_self())) return SPY_ESTATE;
  if (p->cfg.native) spyH_native_unbind(v); /* before the slot goes */
  pthread_mutex_lock(&p->lock);
  /* A stop made by another thread left this thread's last stretch to be
  ** charged here; a running profiler charges up to now. */
  if (atomic_load(&p->running)) spyH_settle(v, spyH_now());
  else spyH_settle_stops(v);
  spyH_quiet(v);
  spyS_drain_all(p);
  spyS_agg_name_missing(p->agg, &v->host);
  /* Keep the thread's exact totals. */
  for (uint32_t i = 0; i < atomic_load(&p->cfg.nprims); i++) {
    spyS_dead *d = &p->dead[i];
    uint64_t mx = atomic_load_explicit(&v->pstat[i].max, RELAXED);
    d->calls += atomic_load_explicit(&v->pstat[i].calls, RELAXED);
    d->ticks += atomic_load_explicit(&v->pstat[i].ticks, RELAXED);
    if (mx > d->max) d->max = mx;
  }
  uint64_t gmax = atomic_load_explicit(&v->gc_max, RELAXED);
  p->dead_gc_count += atomic_load_explicit(&v->gc_count, RELAXED);
  p->dead_gc_ticks += atomic_load_explicit(&v->gc_ticks, RELAXED);
  if (gmax > p->dead_gc_max) p->dead_gc_max = gmax;
  p->dead_dropped += atomic_load_explicit(&v->dropped, RELAXED);
  p->dead_obs_dropped += atomic_load_explicit(&v->obs_dropped, RELAXED);
  p->dead_hook_ticks += atomic_load_explicit(&v->hook_ticks, RELAXED);
  p->dead_nest_dropped += atomic_load_explicit(&v->nest_dropped, RELAXED);
  p->dead_full_walks += atomic_load_explicit(&v->full_walks, RELAXED);
  p->dead_frames_walked += atomic_load_explicit(&v->frames_walked, RELAXED);
  spyS_thread **pp = &p->threads;
  while ((*pp)->vm != v) pp = &(*pp)->next;
  spyS_thread *t = *pp;
  *pp = t->next;
  pthread_mutex_unlock(&p->lock);
  spyH_marker_unbind(v->marker);
  free(v->marker);
  spyS_cache_free(t->cache);
  free(t);
  spyH_slot_free(v);
  return 0;
}

/* ------------------------------------------------------------------------
** Start and stop
** --------------------------------------------------------------------- */

int spy_running(const spy_profiler *p) {
  return p ? atomic_load(&((spy_profiler *)p)->running) : 0;
}

int spy_start(spy_profiler *p) {
  if (!p) return SPY_EINVAL;
  pthread_mutex_lock(&p->lock);
  if (atomic_load(&p->running)) {
    pthread_mutex_unlock(&p->lock);
    return SPY_ESTATE;
  }
  p->started = 1;
  int rc = p->opt.self_drain && (!p->threads || !p->threads->next)
               ? 0
               : start_thread(p);
  if (rc) {
    pthread_mutex_unlock(&p->lock);
    return rc;
  }
  uint64_t now = spyH_now();
  if (p->start_unix_ns == 0) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    p->start_unix_ns = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
  }
  /* The origin (and, for the CPU clock, each thread's CPU time now) is
  ** published before the epoch that makes threads read it. */
  atomic_store_explicit(&p->cfg.origin, now, RELAXED);
  if (p->cfg.cpu_clock)
    for (spyS_thread *t = p->threads; t; t = t->next) {
      spy_vm *v = t->vm;
      atomic_store_explicit(&v->cpu_origin, spyH_cpu_ticks_thread(v->thread),
                            RELAXED);
    }
  atomic_fetch_add_explicit(&p->cfg.epoch, 1, memory_order_release);
  for (spyS_thread *t = p->threads; t; t = t->next) {
    spy_vm *v = t->vm;
    atomic_store_explicit(&v->deadline_pub, 0, RELAXED);
    /* A note at the start, for the steps that begin before the first
    ** drain (vm-hooks/cpuclock.h; under the lock, as the drains'). */
    spyH_cpuhist_note(v, now, spyH_cpu_ticks_thread(v->thread));
    spyH_set_active(v, 1);
    spyH_marker_arm(v->marker, now, p->cfg.interval);
    if (p->cfg.native) spyH_native_arm(v, p->opt.native_interval_ns);
  }
  p->run_start = now;
  atomic_store(&p->running, 1);
  pthread_cond_broadcast(&p->cond);
  pthread_mutex_unlock(&p->lock);
  return 0;
}

int spy_stop(spy_profiler *p) {
  if (!p) return SPY_EINVAL;
  pthread_mutex_lock(&p->lock);
  if (!atomic_load(&p->running)) {
    pthread_mutex_unlock(&p->lock);
    return SPY_ESTATE;
  }
  uint64_t now = spyH_now();
  atomic_store(&p->running, 0);
  pthread_t self = pthread_self();
  uint64_t epoch = atomic_load(&p->cfg.epoch);
  uint64_t origin = atomic_load_explicit(&p->cfg.origin, RELAXED);
  for (spyS_thread *t = p->threads; t; t = t->next) {
    spy_vm *v = t->vm;
    spyH_marker_disarm(v->marker);
    if (p->cfg.native) spyH_native_disarm(v);
    if (pthread_equal(v->thread, self)) {
      spyH_settle(v, now);
      spyH_quiet(v);
    } else {
      /* Its own thread charges the rest at its next slow path, and turns
      ** its hooks off then (vm-hooks/due.h). */
      spyH_stop_remote(v, now, epoch, origin);
    }
  }
  p->wall_ticks += now - p->run_start;
  spyS_drain_all(p);
  for (spyS_thread *t = p->threads; t; t = t->next) {
    spy_vm *v = t->vm;
    if (pthread_equal(v->thread, self))
      spyS_agg_name_missing(p->agg, &v->host);
  }
  pthread_mutex_unlock(&p->lock);
  return 0;
}

/* ------------------------------------------------------------------------
** Snapshots
** --------------------------------------------------------------------- */

static const char *namer(void *ud, spy_frame_kind kind, uint64_t key) {
  spy_profiler *p = ud;
  if (kind == SPY_FRAME_PRIM && key < atomic_load(&p->cfg.nprims))
    return p->prims[key].name;
  if (kind == SPY_FRAME_REGION && key < p->nregions) return p->regions[key];
  return NULL;
}

int spy_counters_get(const spy_profiler *cp, spy_counters *out) {
  if (!cp || !out) return SPY_EINVAL;
  spy_profiler *p = (spy_profiler *)cp;
  pthread_mutex_lock(&p->lock);
  out->samples = spyS_agg_samples(p->agg);
  out->dropped = p->dead_dropped;
  out->obs_dropped = p->dead_obs_dropped;
  out->nest_dropped = p->dead_nest_dropped;
  out->full_walks = p->dead_full_walks;
  out->frames_walked = p->dead_frames_walked;
  for (spyS_thread *t = p->threads; t; t = t->next) {
    spy_vm *v = t->vm;
    out->dropped += atomic_load_explicit(&v->dropped, RELAXED);
    out->obs_dropped += atomic_load_explicit(&v->obs_dropped, RELAXED);
    out->nest_dropped += atomic_load_explicit(&v->nest_dropped, RELAXED);
    out->full_walks += atomic_load_explicit(&v->full_walks, RELAXED);
    out->frames_walked += atomic_load_explicit(&v->frames_walked, RELAXED);
  }
  out->drains = p->drains;
  pthread_mutex_unlock(&p->lock);
  return 0;
}

/* Copy the registry and the exact totals (live threads plus detached). */
static int build_prims(spy_profiler *p, spy_profile *pr) {
  uint32_t n = atomic_load(&p->cfg.nprims);
  pr->nprims = n;
  pr->prims = spyP_calloc(pr, n, sizeof *pr->prims);
  if (!pr->prims) return SPY_ENOMEM;
  for (uint32_t i = 0; i < n; i++) {
    spy_profile_prim *d = &pr->prims[i];
    const spyS_prim *s = &p->prims[i];
    if (!(d->name = spyP_strdup(pr, s->name))) return SPY_ENOMEM;
    d->nsizes = s->nsizes;
    for (unsigned j = 0; j < s->nsizes; j++)
      if (!(d->size_names[j] = spyP_strdup(pr, s->size_names[j])))
        return SPY_ENOMEM;
    d->flags = p->prim_flags[i];
    uint64_t calls = p->dead[i].calls, ticks = p->dead[i].ticks;
    uint64_t mx = p->dead[i].max;
    for (spyS_thread *t = p->threads; t; t = t->next) {
      spy_vm *v = t->vm;
      uint64_t m = atomic_load_explicit(&v->pstat[i].max, RELAXED);
      calls += atomic_load_explicit(&v->pstat[i].calls, RELAXED);
      ticks += atomic_load_explicit(&v->pstat[i].ticks, RELAXED);
      if (m > mx) mx = m;
    }
    d->calls = calls;
    if (!p->cfg.exact_prims) { /* cheap accounting: from the samples */
      ticks = spyS_agg_prim_ticks(p->agg, i);
      d->flags |= SPY_PRIM_ESTIMATED;
    }
    d->total_ns = spyH_ticks_to_ns(ticks);
    d->max_ns = spyH_ticks_to_ns(mx);
  }
  return 0;
}

int spy_profile_take(spy_profiler *p, spy_profile **out) {
  if (!p || !out) return SPY_EINVAL;
  *out = NULL;
  spy_profile *pr = spyP_new();
  if (!pr) return SPY_ENOMEM;
  pthread_mutex_lock(&p->lock);
  spyS_drain_all(p);
  spyH_clock_refine(); /* the exactest ticks-to-ns for what follows */
  uint64_t wall = p->wall_ticks;
  if (atomic_load(&p->running)) wall += spyH_now() - p->run_start;
  pr->mode = p->opt.mode;
  pr->interval_ns = p->opt.interval_ns;
  pr->wall_ns = spyH_ticks_to_ns(wall);
  pr->tallies = spyS_agg_samples(p->agg);
  pr->start_unix_ns = p->start_unix_ns;
  pr->clock = p->opt.clock == SPY_CLOCK_CPU ? "cpu"
              : spyH_clock.use_tsc           ? "tsc"
                                             : "clock_gettime";
  uint64_t gcn = p->dead_gc_count, gct = p->dead_gc_ticks;
  uint64_t gcm = p->dead_gc_max, hook = p->dead_hook_ticks;
  pr->dropped = p->dead_dropped;
  pr->obs_dropped = p->dead_obs_dropped;
  for (spyS_thread *t = p->threads; t; t = t->next) {
    spy_vm *v = t->vm;
    uint64_t m = atomic_load_explicit(&v->gc_max, RELAXED);
    gcn += atomic_load_explicit(&v->gc_count, RELAXED);
    gct += atomic_load_explicit(&v->gc_ticks, RELAXED);
    if (m > gcm) gcm = m;
    hook += atomic_load_explicit(&v->hook_ticks, RELAXED);
    pr->dropped += atomic_load_explicit(&v->dropped, RELAXED);
    pr->obs_dropped += atomic_load_explicit(&v->obs_dropped, RELAXED);
  }
  pr->gc.count = gcn;
  pr->gc.total_ns = spyH_ticks_to_ns(gct);
  pr->gc.max_ns = spyH_ticks_to_ns(gcm);
  pr->hook_ns = spyH_ticks_to_ns(hook);
  int rc = build_prims(p, pr);
  if (rc == 0) rc = spyS_agg_build(p->agg, pr, namer, p);
  /* Every call of a cost-recording primitive was offered to its reservoir;
  ** the exact count is the call count. */
  for (size_t i = 0; rc == 0 && i < pr->nprims; i++)
    pr->prims[i].obs_offered =
        pr->prims[i].flags & SPY_PRIM_COST ? pr->prims[i].calls : 0;
  pthread_mutex_unlock(&p->lock);
  /* The objects native frames point into, from the dynamic loader's list
  ** (its lock, not ours). */
  if (rc == 0 && pr->nlocations) rc = spyS_modules_resolve(pr);
  if (rc) {
    spy_profile_free(pr);
    return rc;
  }
  *out = pr;
  return 0;
}
