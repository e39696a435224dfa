/*
** bench/bench_ingest.c: how many samples per second the sampler thread
** aggregates, at depth 64.
**
** One interpreter thread polls in a tight loop; its stack walk pushes 64
** frames whose 8 innermost keys vary from poll to poll (4096 distinct
** stacks), so aggregation cannot cache a single path. Through the public
** API the sampling rate is set by the interval, so the producer's rate is
** at most 1/interval; the table goes down from 10 kHz to the smallest
** interval the library accepts. For each: samples produced (aggregated +
** dropped) per second, samples aggregated per second, drops. When drops
** appear, the sampler is saturated and "aggregated/s" is its ingest
** capacity. A first 2 s run at the default 10 kHz must drop nothing.
** Target: >= 2 M samples/s aggregated at depth 64.
**
** The public API refuses intervals below its floor, so the second table
** drives the sampler's own pipeline through the internal API instead: a
** producer thread writes SAMPLE records (depth 64, the same 4096 stacks)
** into a spyH_ring as fast as it can, and this thread drains the ring into
** a spyS_agg as the sampler thread does (spyH_ring_drain +
** spyS_agg_record), once with a producer that never waits (drops when the
** ring is full, as the hooks do) and once with one that waits for room.
**
**   bench/bench_ingest [-s SECONDS] [-d DEPTH] [-r RING_MIB]
*/
#include "config.h"

#include <spyon.h>
#include <spyon/hooks.h>
#include <spyon/profile.h>

#include "sampler/agg.h"
#include "vm-hooks/ring.h"
#include "vm-hooks/slot.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static unsigned depth = 64;
static uint64_t counter;

/* 56 fixed root-most frames, then 8 that vary with the counter: 4096
** distinct stacks over the 8 low bits and four more. */
static void walk(void *ud, spy_stack *st) {
  (void)ud;
  uint64_t c = counter;
  unsigned vary = depth < 8 ? depth : 8;
  for (unsigned i = 0; i < vary; i++)
    spy_stack_push(st, 1000 + 16 * i + ((c >> (i + (i > 3 ? 4 : 0))) & 3));
  for (unsigned i = vary; i < depth; i++) spy_stack_push(st, depth - i);
}

typedef struct row {
  uint64_t interval;
  int rc;
  double secs, produced, aggregated;
  uint64_t samples, dropped, drains, nodes;
} row;

static row measure(uint64_t interval, double seconds, size_t ring) {
  row r;
  memset(&r, 0, sizeof r);
  r.interval = interval;
  spy_options o;
  spy_options_init(&o);
  o.interval_ns = interval;
  if (ring) o.ring_bytes = ring;
  spy_profiler *p;
  if ((r.rc = spy_profiler_new(&p, &o)) < 0) return r;
  spy_host h = {NULL, walk, NULL, NULL};
  spy_vm *v;
  if ((r.rc = spy_attach(p, &h, &v)) < 0) {
    spy_profiler_free(p);
    return r;
  }
  spy_process_switch(v, 1);
  double t0 = now_s(), end = t0 + seconds;
  if ((r.rc = spy_start(p)) == 0) {
    do {
      for (int i = 0; i < 4096; i++) {
        counter++;
        spy_poll(v);
      }
    } while (now_s() < end);
    spy_stop(p);
  }
  r.secs = now_s() - t0;
  spy_counters c;
  spy_counters_get(p, &c);
  r.samples = c.samples;
  r.dropped = c.dropped;
  r.drains = c.drains;
  spy_profile *pr;
  if (spy_profile_take(p, &pr) == 0) {
    r.nodes = pr->nnodes;
    spy_profile_free(pr);
  }
  r.produced = (double)(c.samples + c.dropped) / r.secs;
  r.aggregated = (double)c.samples / r.secs;
  spy_detach(v);
  spy_profiler_free(p);
  return r;
}

static void print_row(const row *r) {
  if (r->rc < 0) {
    printf("%10llu  %s\n", (unsigned long long)r->interval,
           spy_strerror(r->rc));
    return;
  }
  printf("%10llu %12.0f %14.0f %12llu %8.2f%% %9llu %8llu\n",
         (unsigned long long)r->interval, r->produced, r->aggregated,
         (unsigned long long)r->dropped,
         r->samples + r->dropped
             ? 100.0 * (double)r->dropped /
                   (double)(r->samples + r->dropped)
             : 0.0,
         (unsigned long long)r->drains, (unsigned long long)r->nodes);
}

/* ------------------------------------------------------------------------
** The internal pipeline: ring + aggregation, without the hooks
** --------------------------------------------------------------------- */

enum { VARY = 8 }; /* keys that differ between consecutive stacks */

typedef struct pipe {
  spyH_ring ring;
  atomic_int stop;
  double rate;       /* records per second offered; 0: as fast as the ring
                        takes them (the producer waits for room) */
  uint64_t produced; /* records committed */
  uint64_t dropped;  /* records refused (ring full) */
  int compress;      /* send records as the hooks do: only the keys that
                        differ from the previous sample at the root end */
} pipe_t;

/* Build one SAMPLE record of `depth` keys for stack number c, of which the
** root-most `same` are not sent (the previous record had them too). */
static void fill(spyH_sample *r, uint32_t size, uint64_t c, uint32_t same) {
  r->h.type = SPYH_REC_SAMPLE;
  r->h.size = size;
  r->pid = 1;
  r->ticks = 100000;
  r->depth = depth;
  memset(r->size, 0, sizeof r->size);
  r->prim = -1;
  r->nsizes = 0;
  r->nmarks = 0;
  r->kind = 0;
  r->cpu_pct = SPYH_CPU_UNKNOWN;
  r->nleaf = (uint16_t)depth;
  r->nroot = 0;
  r->same = same;
  uint64_t *k = (uint64_t *)(r + 1);
  for (unsigned i = 0; i < VARY && i < depth; i++)
    k[i] = 1000 + 16 * i + ((c >> (i + (i > 3 ? 4 : 0))) & 3);
  for (unsigned i = VARY; i < depth - same; i++) k[i] = depth - i;
}

/* Offer records at pp->rate (never waiting: a full ring is a drop, as in
** the hooks), or as fast as the ring takes them when the rate is 0. */
static void *producer(void *arg) {
  pipe_t *pp = arg;
  uint64_t c = 0;
  double t0 = now_s(), next = t0;
  while (!atomic_load_explicit(&pp->stop, memory_order_relaxed)) {
    if (pp->rate > 0) {
      while (now_s() < next) {}
      next += 1.0 / pp->rate;
    }
    /* Only the VARY innermost keys change from one stack to the next. */
    uint32_t same = pp->compress && c > 0 && depth > VARY ? depth - VARY : 0;
    uint32_t size = (uint32_t)(sizeof(spyH_sample) +
                               (depth - same) * sizeof(uint64_t));
    spyH_sample *r = spyH_ring_reserve(&pp->ring, size);
    if (!r) {
      if (pp->rate > 0) pp->dropped++;
      continue;
    }
    fill(r, size, c++, same);
    spyH_ring_commit(&pp->ring, r);
    pp->produced++;
  }
  return NULL;
}

typedef struct sink {
  spyS_agg *agg;
  spyS_cache *cache;
} sink;

static void consume(void *ud, const spyH_rec *rec) {
  sink *k = ud;
  spyS_agg_record(k->agg, k->cache, rec);
}

static unsigned flags[4];

static void init_cfg(spyH_cfg *cfg) {
  memset(cfg, 0, sizeof *cfg);
  cfg->interval = 100000;
  cfg->mode = SPY_MODE_POLL;
  cfg->leaf_cap = 64;
  cfg->root_cap = 64;
  cfg->longest = 20;
  cfg->reservoir = 4096;
  cfg->max_prims = 4;
  cfg->prim_flags = flags;
  cfg->max_regions = 4;
}

/* Aggregation alone, in this thread, from prebuilt records: where the
** pipeline's time goes. */
static double agg_alone(double seconds) {
  spyH_cfg cfg;
  init_cfg(&cfg);
  spyS_agg *agg = spyS_agg_new(&cfg);
  spyS_cache *cache = spyS_cache_new(&cfg);
  uint32_t size = (uint32_t)(sizeof(spyH_sample) + depth * sizeof(uint64_t));
  enum { NREC = 4096 };
  unsigned char *buf = malloc((size_t)NREC * size);
  if (!agg || !cache || !buf) exit(1);
  for (uint64_t c = 0; c < NREC; c++)
    fill((spyH_sample *)(buf + c * size), size, c, 0);
  double t0 = now_s(), end = t0 + seconds;
  do {
    for (size_t c = 0; c < NREC; c++)
      spyS_agg_record(agg, cache, (const spyH_rec *)(buf + c * size));
  } while (now_s() < end);
  double rate = (double)spyS_agg_samples(agg) / (now_s() - t0);
  printf("%-30s %12s %14.0f %12s %9s\n", "aggregation alone (no ring)", "-",
         rate, "-", "-");
  free(buf);
  spyS_cache_free(cache);
  spyS_agg_free(agg);
  return rate;
}

/* One run of the internal pipeline; prints its row. */
static double pipeline(double rate, double seconds, size_t ring,
                       int compress) {
  spyH_cfg cfg;
  init_cfg(&cfg);
  pipe_t pp;
  memset(&pp, 0, sizeof pp);
  pp.rate = rate;
  pp.compress = compress;
  sink k = {spyS_agg_new(&cfg), spyS_cache_new(&cfg)};
  if (!k.agg || !k.cache || spyH_ring_init(&pp.ring, ring) != 0) {
    fprintf(stderr, "bench_ingest: out of memory\n");
    exit(1);
  }
  pthread_t th;
  double t0 = now_s(), end = t0 + seconds;
  pthread_create(&th, NULL, producer, &pp);
  while (now_s() < end) spyH_ring_drain(&pp.ring, consume, &k);
  atomic_store(&pp.stop, 1);
  pthread_join(th, NULL);
  while (spyH_ring_drain(&pp.ring, consume, &k) > 0) {}
  double secs = now_s() - t0;
  uint64_t got = spyS_agg_samples(k.agg);
  double tried = (double)(pp.produced + pp.dropped);
  char what[64];
  if (rate > 0)
    snprintf(what, sizeof what, "offered at %.1f M/s", rate / 1e6);
  else
    snprintf(what, sizeof what, "as fast as drained%s",
             compress ? "" : ", full");
  printf("%-30s %12.0f %14.0f %12llu %8.2f%%\n", what, tried / secs,
         (double)got / secs, (unsigned long long)pp.dropped,
         tried > 0 ? 100.0 * (double)pp.dropped / tried : 0.0);
  spyS_cache_free(k.cache);
  spyS_agg_free(k.agg);
  spyH_ring_free(&pp.ring);
  return (double)got / secs;
}

int main(int argc, char **argv) {
  double seconds = 1.0;
  size_t ring = 0;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (strcmp(argv[i], "-s") == 0) seconds = atof(argv[i + 1]);
    else if (strcmp(argv[i], "-d") == 0) depth = (unsigned)atoi(argv[i + 1]);
    else if (strcmp(argv[i], "-r") == 0)
      ring = (size_t)atol(argv[i + 1]) << 20;
  }
  if (depth < 1 || depth > 120) depth = 64;
  printf("bench_ingest: one producer thread, depth %u, %.1f s per row%s\n\n",
         depth, seconds, ring ? " (custom ring)" : "");
  printf("%10s %12s %14s %12s %9s %9s %8s\n", "interval", "produced/s",
         "aggregated/s", "dropped", "drop %", "drains", "nodes");
  row base = measure(100000, 2.0, ring);
  print_row(&base);
  static const uint64_t iv[] = {10000, 2000, 1000, 500, 250, 100, 50, 1};
  double best = 0;
  uint64_t floor_ns = 0;
  for (size_t i = 0; i < sizeof iv / sizeof iv[0]; i++) {
    row r = measure(iv[i], seconds, ring);
    print_row(&r);
    if (r.rc == 0) {
      floor_ns = iv[i];
      if (r.aggregated > best) best = r.aggregated;
    }
  }
  printf("\nzero drops at 10 kHz: %s (%llu dropped of %llu)\n",
         base.rc == 0 && base.dropped == 0 ? "yes" : "NO",
         (unsigned long long)base.dropped,
         (unsigned long long)(base.samples + base.dropped));
  printf("best aggregated through the public API: %.2f M samples/s at "
         "depth %u (smallest interval accepted: %llu ns)\n",
         best / 1e6, depth, (unsigned long long)floor_ns);

  printf("\ninternal pipeline (spyH_ring -> spyS_agg_record), depth %u, "
         "%.1f s per row, %zu KiB ring\n\n", depth, seconds,
         (ring ? ring : (size_t)4 << 20) >> 10);
  printf("%-30s %12s %14s %12s %9s\n", "producer", "offered/s",
         "aggregated/s", "dropped", "drop %");
  size_t rb = ring ? ring : (size_t)4 << 20;
  pipeline(1e6, seconds, rb, 1);
  pipeline(2e6, seconds, rb, 1);
  double cap = pipeline(0, seconds, rb, 1);
  pipeline(0, seconds, rb, 0);
  agg_alone(seconds);
  printf("\n(records as the hooks send them: the %d innermost keys vary, the "
         "root-most ones are sent as a count; \"full\": every key sent)\n",
         VARY);
  printf("sampler ingest capacity (ring + aggregation, producer and "
         "consumer on the 2 cores): %.2f M samples/s at depth %u "
         "(target >= 2 M/s)\n", cap / 1e6, depth);
  return 0;
}
