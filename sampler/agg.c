/*
** sampler/agg.c: turning records into trees, leaves, steps and reservoirs.
*/
#include "config.h"

#include "sampler/agg.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profile/profile.h"
#include "vm-hooks/clock.h"
#include "vm-hooks/native.h"
#include "vm-hooks/obs.h"

/* One element of a path: a frame before interning. */
typedef struct pel {
  uint32_t kind;
  uint64_t key;
} pel;

typedef struct frame {
  uint32_t kind;
  uint64_t key;
  uint32_t ret; /* native frame seen as a return address: name key - 1 */
} frame;

/* Native stacks: a trie per primitive. Node 0 is unused; a primitive's
** root has parent 0 and frame SPY_NONE. */
typedef struct nnode {
  uint32_t parent, frame, prim;
  uint64_t count; /* signals whose innermost frame is this node */
} nnode;

typedef struct node {
  uint32_t frame, parent;
  uint64_t self, tallies; /* ticks and samples with this node as leaf */
} node;

typedef struct proc {
  uint64_t pid;
  uint32_t root;
} proc;

typedef struct step {
  spy_step_kind kind;
  int32_t prim;
  unsigned nsizes;
  uint64_t size[4];
  uint64_t ticks;
  uint32_t process;
  uint32_t nframes;
  uint32_t *frames; /* root first */
  unsigned cpu_pct; /* on the CPU, 0..100, or SPYH_CPU_UNKNOWN */
} step;

typedef struct region {
  int32_t id;
  uint32_t parent;
  uint64_t calls, ticks, max;
} region;

struct spyS_cache {
  uint64_t *raw; /* the previous SAMPLE's keys, as the thread sent them */
  uint32_t raw_n;
  pel *path;     /* the previous sample's path, root first */
  uint32_t *ids; /* its nodes */
  uint32_t len, cap;
  uint64_t pid;
  int valid;
};

/* A growable array: v.p has v.n elements of v.cap. */
#define VEC(T) struct { T *p; size_t n, cap; }

struct spyS_agg {
  const spyH_cfg *cfg;
  VEC(frame) frames;
  spyS_map frame_map; /* (kind, key) -> frame */
  VEC(node) nodes;
  spyS_map child_map; /* (parent, frame) -> node */
  VEC(proc) procs;
  spyS_map proc_map;  /* (pid, 0) -> proc */
  VEC(char *) names;
  spyS_map name_map;  /* (is_process, key) -> name */
  VEC(region) regions;
  spyS_map region_map; /* (parent + 1, id) -> region */
  spyH_res *res;       /* [cfg->max_prims] (vm-hooks/obs.h) */
  uint64_t *prim_ticks;/* [cfg->max_prims]: weight of the samples taken
                          while each primitive ran (cheap accounting) */
  step *steps;         /* [cfg->longest], unordered */
  uint32_t nsteps;
  uint64_t samples;
  uint64_t lost;       /* records not aggregated: out of memory */
  pel *scratch;        /* a path being built */
  uint32_t scratch_cap;
  VEC(nnode) nnodes;   /* native stacks (trie) */
  spyS_map nnode_map;  /* (0, prim) -> root; (parent, frame) -> node */
  size_t nnative;      /* trie nodes with a count */
};

/* Make room for one more element; 0 or -1. */
static int vec_grow_(void **p, size_t *cap, size_t n, size_t elem) {
  if (n < *cap) return 0;
  size_t nc = *cap ? *cap * 2 : 64;
  void *np = realloc(*p, nc * elem);
  if (!np) return -1;
  *p = np;
  *cap = nc;
  return 0;
}
#define VEC_PUSH_ROOM(v) \
  vec_grow_((void **)&(v).p, &(v).cap, (v).n, sizeof *(v).p)

static uint32_t path_cap(const spyH_cfg *c) {
  return c->leaf_cap + c->root_cap + SPY_NEST_MAX + 2;
}

spyS_agg *spyS_agg_new(const spyH_cfg *cfg) {
  spyS_agg *a = calloc(1, sizeof *a);
  if (!a) return NULL;
  a->cfg = cfg;
  spyS_map_init(&a->frame_map);
  spyS_map_init(&a->child_map);
  spyS_map_init(&a->proc_map);
  spyS_map_init(&a->name_map);
  spyS_map_init(&a->region_map);
  spyS_map_init(&a->nnode_map);
  a->res = calloc(cfg->max_prims, sizeof *a->res);
  a->prim_ticks = calloc(cfg->max_prims, sizeof *a->prim_ticks);
  a->steps = calloc(cfg->longest + 1, sizeof *a->steps);
  a->scratch_cap = path_cap(cfg);
  a->scratch = calloc(a->scratch_cap, sizeof *a->scratch);
  if (!a->res || !a->prim_ticks || !a->steps || !a->scratch) {
    spyS_agg_free(a);
    return NULL;
  }
  return a;
}

void spyS_agg_free(spyS_agg *a) {
  if (!a) return;
  free(a->frames.p);
  free(a->nodes.p);
  free(a->procs.p);
  for (size_t i = 0; i < a->names.n; i++) free(a->names.p[i]);
  free(a->names.p);
  free(a->regions.p);
  spyS_map_free(&a->frame_map);
  spyS_map_free(&a->child_map);
  spyS_map_free(&a->proc_map);
  spyS_map_free(&a->name_map);
  spyS_map_free(&a->region_map);
  spyS_map_free(&a->nnode_map);
  free(a->nnodes.p);
  if (a->res)
    for (uint32_t i = 0; i < a->cfg->max_prims; i++) spyH_res_free(&a->res[i]);
  free(a->res);
  free(a->prim_ticks);
  if (a->steps)
    for (uint32_t i = 0; i < a->nsteps; i++) free(a->steps[i].frames);
  free(a->steps);
  free(a->scratch);
  free(a);
}

spyS_cache *spyS_cache_new(const spyH_cfg *cfg) {
  spyS_cache *c = calloc(1, sizeof *c);
  if (!c) return NULL;
  c->cap = path_cap(cfg);
  c->path = calloc(c->cap, sizeof *c->path);
  c->ids = calloc(c->cap, sizeof *c->ids);
  c->raw = calloc((size_t)cfg->leaf_cap + cfg->root_cap + 1, sizeof *c->raw);
  if (!c->path || !c->ids || !c->raw) {
    spyS_cache_free(c);
    return NULL;
  }
  return c;
}

void spyS_cache_free(spyS_cache *c) {
  if (!c) return;
  free(c->path);
  free(c->ids);
  free(c->raw);
  free(c);
}

uint64_t spyS_agg_samples(const spyS_agg *a) { return a->samples; }

uint64_t spyS_agg_prim_ticks(const spyS_agg *a, uint32_t prim) {
  return prim < a->cfg->max_prims ? a->prim_ticks[prim] : 0;
}
uint64_t spyS_agg_lost(const spyS_agg *a) { return a->lost; }
uint64_t spyS_agg_obs_received(const spyS_agg *a, uint32_t prim) {
  return prim < a->cfg->max_prims ? a->res[prim].offered : 0;
}

/* ------------------------------------------------------------------------
** Interning
** --------------------------------------------------------------------- */

static uint32_t intern_frame(spyS_agg *a, uint32_t kind, uint64_t key) {
  uint32_t f = spyS_map_get(&a->frame_map, kind, key);
  if (f != UINT32_MAX) return f;
  if (VEC_PUSH_ROOM(a->frames) != 0) return UINT32_MAX;
  f = (uint32_t)a->frames.n;
  if (spyS_map_put(&a->frame_map, kind, key, f) != 0) return UINT32_MAX;
  a->frames.p[a->frames.n++] = (frame){kind, key, 0};
  return f;
}

static uint32_t new_node(spyS_agg *a, uint32_t frame_i, uint32_t parent) {
  if (VEC_PUSH_ROOM(a->nodes) != 0) return UINT32_MAX;
  uint32_t n = (uint32_t)a->nodes.n;
  if (parent != UINT32_MAX &&
      spyS_map_put(&a->child_map, parent, frame_i, n) != 0)
    return UINT32_MAX;
  a->nodes.p[a->nodes.n++] = (node){frame_i, parent, 0, 0};
  return n;
}

static uint32_t child(spyS_agg *a, uint32_t parent, uint32_t frame_i) {
  uint32_t n = spyS_map_get(&a->child_map, parent, frame_i);
  return n != UINT32_MAX ? n : new_node(a, frame_i, parent);
}

static uint32_t process(spyS_agg *a, uint64_t pid) {
  uint32_t p = spyS_map_get(&a->proc_map, pid, 0);
  if (p != UINT32_MAX) return p;
  uint32_t rootf = intern_frame(a, SPY_FRAME_ROOT, 0);
  if (rootf == UINT32_MAX || VEC_PUSH_ROOM(a->procs) != 0) return UINT32_MAX;
  uint32_t root = new_node(a, rootf, UINT32_MAX);
  if (root == UINT32_MAX) return UINT32_MAX;
  p = (uint32_t)a->procs.n;
  if (spyS_map_put(&a->proc_map, pid, 0, p) != 0) return UINT32_MAX;
  a->procs.p[a->procs.n++] = (proc){pid, root};
  return p;
}

/* ------------------------------------------------------------------------
** Paths
** --------------------------------------------------------------------- */

/* The root-first path of a SAMPLE or STEP record: the kept frames, a CUT
** where the depth cap left some out, and each bracket (region, primitive,
** GC) before the frame at the depth where the hooks placed it (after all
** frames when its depth is the stack's). Returns the length. */
static uint32_t build_path(spyS_agg *a, const spyH_sample *r,
                           const uint64_t *k) {
  const spyH_place *m = (const spyH_place *)(r + 1);
  uint32_t nleaf = r->nleaf, nroot = r->nroot, nm = r->nmarks;
  uint64_t depth = r->depth;
  pel *out = a->scratch;
  uint32_t n = 0, mi = 0;
  uint32_t kept = nleaf + nroot;
#define PUT_MARK_(mk)                                                    \
  do {                                                                   \
    uint32_t k_ = (mk).kind & 0xff;                                      \
    if (k_ == SPY_FRAME_GC) out[n++] = (pel){SPY_FRAME_GC, 0};           \
    else if ((mk).id >= 0) out[n++] = (pel){k_, (uint64_t)(mk).id};      \
  } while (0)
  for (uint32_t j = 0; j < kept; j++) {
    /* Root first: the root part reversed, then the leaf part reversed. */
    uint64_t full, key;
    int cut_before = 0;
    if (j < nroot) {
      full = j;
      key = k[nleaf + nroot - 1 - j];
    } else {
      uint32_t i = j - nroot;
      full = depth - nleaf + i;
      key = k[nleaf - 1 - i];
      cut_before = i == 0 && depth > kept;
    }
    if (cut_before) out[n++] = (pel){SPY_FRAME_CUT, depth - kept};
    for (; mi < nm && m[mi].depth <= full; mi++) PUT_MARK_(m[mi]);
    out[n++] = (pel){SPY_FRAME_METHOD, key};
  }
  for (; mi < nm; mi++) PUT_MARK_(m[mi]);
#undef PUT_MARK_
  return n;
}

/* Charge one sample to its path in its process's tree, reusing the nodes
** of the prefix it shares with the thread's previous sample. */
/* The keys of a SAMPLE: those sent, then the root-most `same` keys of the
** thread's previous sample. */
static const uint64_t *sample_keys(spyS_cache *c, const spyH_sample *r) {
  const uint64_t *sent = (const uint64_t *)((const spyH_place *)(r + 1) +
                                            r->nmarks);
  uint32_t n = (uint32_t)r->nleaf + r->nroot;
  if (r->same > n || r->same > c->raw_n) return NULL;
  uint32_t nsent = n - r->same;
  memmove(c->raw + nsent, c->raw + c->raw_n - r->same,
          r->same * sizeof *c->raw);
  memcpy(c->raw, sent, nsent * sizeof *c->raw);
  c->raw_n = n;
  return c->raw;
}

static void add_sample(spyS_agg *a, spyS_cache *c, const spyH_sample *r) {
  const uint64_t *keys = sample_keys(c, r);
  if (!keys) { /* cannot happen: producer and consumer see the same records */
    a->lost++;
    return;
  }
  uint32_t len = build_path(a, r, keys);
  uint32_t p = process(a, r->pid);
  if (p == UINT32_MAX) {
    a->lost++;
    return;
  }
  uint32_t same = 0;
  if (c->valid && c->pid == r->pid) {
    uint32_t lim = len < c->len ? len : c->len;
    while (same < lim && c->path[same].kind == a->scratch[same].kind &&
           c->path[same].key == a->scratch[same].key)
      same++;
  }
  uint32_t at = same ? c->ids[same - 1] : a->procs.p[p].root;
  for (uint32_t i = same; i < len; i++) {
    uint32_t f = intern_frame(a, a->scratch[i].kind, a->scratch[i].key);
    at = f == UINT32_MAX ? UINT32_MAX : child(a, at, f);
    if (at == UINT32_MAX) {
      c->valid = 0;
      a->lost++;
      return;
    }
    c->path[i] = a->scratch[i];
    c->ids[i] = at;
  }
  c->len = len;
  c->pid = r->pid;
  c->valid = 1;
  a->nodes.p[at].self += r->ticks;
  a->nodes.p[at].tallies++;
  a->samples++;
  /* Each primitive that ran (not waiting on a callback) gets the weight. */
  const spyH_place *m = (const spyH_place *)(r + 1);
  for (uint32_t i = 0; i < r->nmarks; i++)
    if (m[i].kind == (SPY_FRAME_PRIM | SPYH_PLACE_RUNNING) && m[i].id >= 0 &&
        (uint32_t)m[i].id < a->cfg->max_prims)
      a->prim_ticks[m[i].id] += r->ticks;
}

/* Keep the step if it is among the longest: replace the shortest kept. */
static void add_step(spyS_agg *a, const spyH_sample *r) {
  uint32_t cap = a->cfg->longest, slot = a->nsteps;
  if (cap == 0) return;
  if (a->nsteps == cap) {
    slot = 0;
    for (uint32_t i = 1; i < cap; i++)
      if (a->steps[i].ticks < a->steps[slot].ticks) slot = i;
    if (a->steps[slot].ticks >= r->ticks) return;
  }
  const uint64_t *keys = (const uint64_t *)((const spyH_place *)(r + 1) +
                                            r->nmarks);
  uint32_t len = build_path(a, r, keys);
  uint32_t *frames = malloc((len + 1) * sizeof *frames);
  uint32_t p = process(a, r->pid);
  if (!frames || p == UINT32_MAX) {
    free(frames);
    a->lost++;
    return;
  }
  for (uint32_t i = 0; i < len; i++) {
    frames[i] = intern_frame(a, a->scratch[i].kind, a->scratch[i].key);
    if (frames[i] == UINT32_MAX) {
      free(frames);
      a->lost++;
      return;
    }
  }
  step *s = &a->steps[slot];
  if (slot < a->nsteps) free(s->frames);
  else a->nsteps++;
  *s = (step){.kind = r->kind == SPY_STEP_GC ? SPY_STEP_GC : SPY_STEP_PRIM,
              .prim = r->kind == SPY_STEP_GC ? -1 : r->prim,
              .nsizes = r->nsizes,
              .ticks = r->ticks,
              .process = p,
              .nframes = len,
              .frames = frames,
              .cpu_pct = r->cpu_pct};
  memcpy(s->size, r->size, sizeof s->size);
  if (s->kind == SPY_STEP_PRIM && s->prim >= 0)
    intern_frame(a, SPY_FRAME_PRIM, (uint64_t)s->prim);
}

/* Exact region times, per nesting path. */
static void add_region(spyS_agg *a, const spyH_region_rec *r) {
  const int32_t *ids = (const int32_t *)(r + 1);
  uint32_t at = UINT32_MAX;
  for (uint32_t i = 0; i < r->n; i++) {
    if (ids[i] < 0) continue;
    uint32_t g = spyS_map_get(&a->region_map, (uint64_t)at + 1, (uint64_t)ids[i]);
    if (g == UINT32_MAX) {
      if (VEC_PUSH_ROOM(a->regions) != 0) goto oom;
      g = (uint32_t)a->regions.n;
      if (spyS_map_put(&a->region_map, (uint64_t)at + 1, (uint64_t)ids[i], g))
        goto oom;
      a->regions.p[a->regions.n++] = (region){ids[i], at, 0, 0, 0};
    }
    at = g;
  }
  if (at == UINT32_MAX) return;
  region *g = &a->regions.p[at];
  g->calls++;
  g->ticks += r->ticks;
  if (r->ticks > g->max) g->max = r->ticks;
  return;
oom:
  a->lost++;
}

void spyS_agg_record(spyS_agg *a, spyS_cache *c, const spyH_rec *rec) {
  switch (rec->type) {
  case SPYH_REC_SAMPLE: add_sample(a, c, (const spyH_sample *)rec); break;
  case SPYH_REC_STEP: add_step(a, (const spyH_sample *)rec); break;
  case SPYH_REC_REGION: add_region(a, (const spyH_region_rec *)rec); break;
  default: break;
  }
}

/* The sampler's half of the cost observations' priority sampling
** (vm-hooks/obs.h): keep a record in its primitive's reservoir, and
** publish the threshold under which the threads time and send calls. */
void spyS_agg_obs(spyS_agg *a, const spyH_rec *rec) {
  const spyH_obs_rec *o = (const spyH_obs_rec *)rec;
  uint32_t k = a->cfg->reservoir;
  if (rec->type != SPYH_REC_OBS || o->prim >= a->cfg->max_prims || k == 0)
    return;
  uint64_t t;
  if (spyH_res_offer(&a->res[o->prim], k, o, &t) != 0) {
    a->lost++;
    return;
  }
  if (t != UINT64_MAX)
    atomic_store_explicit(&a->cfg->obs_tau[o->prim], t, memory_order_relaxed);
}

/* ------------------------------------------------------------------------
** Native stacks
** --------------------------------------------------------------------- */

/* The trie node under parent for frame f (0 for a primitive's root, keyed
** by the primitive), made if new; UINT32_MAX when out of memory. */
static uint32_t nchild(spyS_agg *a, uint32_t parent, uint32_t f,
                       uint32_t prim) {
  uint64_t k2 = parent ? f : prim;
  uint32_t n = spyS_map_get(&a->nnode_map, parent, k2);
  if (n != UINT32_MAX) return n;
  if (a->nnodes.n == 0) { /* node 0: unused, so parents are nonzero */
    if (VEC_PUSH_ROOM(a->nnodes) != 0) return UINT32_MAX;
    a->nnodes.p[a->nnodes.n++] = (nnode){0, SPY_NONE, 0, 0};
  }
  if (VEC_PUSH_ROOM(a->nnodes) != 0) return UINT32_MAX;
  n = (uint32_t)a->nnodes.n;
  if (spyS_map_put(&a->nnode_map, parent, k2, n) != 0) return UINT32_MAX;
  a->nnodes.p[a->nnodes.n++] = (nnode){parent, parent ? f : SPY_NONE, prim, 0};
  return n;
}

/* One signal's native stack: count it on its path (root first) under its
** primitive. Frames are interned by IP; a return address is marked so that
** it is named at IP - 1 (the call), not at the instruction after it. */
void spyS_agg_native(spyS_agg *a, const spyH_rec *rec) {
  const spyH_native_rec *r = (const spyH_native_rec *)rec;
  if (rec->type != SPYH_REC_NATIVE || r->prim >= a->cfg->max_prims ||
      r->n == 0 || r->n > SPYH_NATIVE_MAX ||
      rec->size < sizeof *r + r->n * sizeof(uint64_t))
    return;
  const uint64_t *ip = (const uint64_t *)(r + 1);
  uint32_t at = nchild(a, 0, 0, r->prim);
  for (uint32_t i = r->n; at != UINT32_MAX && i-- > 0;) {
    uint32_t f = intern_frame(a, SPY_FRAME_NATIVE, ip[i]);
    if (f == UINT32_MAX) {
      at = UINT32_MAX;
      break;
    }
    if (i > 0) a->frames.p[f].ret = 1;
    at = nchild(a, at, f, r->prim);
  }
  if (at == UINT32_MAX) {
    a->lost++;
    return;
  }
  if (a->nnodes.p[at].count++ == 0) a->nnative++;
}

/* Natives in a stable order: by primitive, heaviest first, then by path. */
static int by_native(const void *x, const void *y) {
  const spy_native *a = x, *b = y;
  if (a->prim != b->prim) return a->prim < b->prim ? -1 : 1;
  if (a->count != b->count) return a->count > b->count ? -1 : 1;
  uint32_t n = a->nframes < b->nframes ? a->nframes : b->nframes;
  for (uint32_t i = 0; i < n; i++)
    if (a->frames[i] != b->frames[i])
      return a->frames[i] < b->frames[i] ? -1 : 1;
  return a->nframes < b->nframes ? -1 : a->nframes > b->nframes;
}

/* Fill p->natives from the trie. */
static int build_natives(const spyS_agg *a, spy_profile *p) {
  p->nnatives = 0;
  p->natives = spyP_calloc(p, a->nnative, sizeof *p->natives);
  if (!p->natives) return SPY_ENOMEM;
  for (size_t i = 1; i < a->nnodes.n; i++) {
    const nnode *nd = &a->nnodes.p[i];
    if (!nd->count || nd->prim >= p->nprims) continue;
    uint32_t len = 0;
    for (uint32_t j = (uint32_t)i; a->nnodes.p[j].parent;
         j = a->nnodes.p[j].parent)
      len++;
    spy_native *d = &p->natives[p->nnatives++];
    d->prim = nd->prim;
    d->count = nd->count;
    d->nframes = len;
    d->frames = spyP_calloc(p, len, sizeof *d->frames);
    if (!d->frames) return SPY_ENOMEM;
    for (uint32_t j = (uint32_t)i, k = len; a->nnodes.p[j].parent;
         j = a->nnodes.p[j].parent)
      d->frames[--k] = a->nnodes.p[j].frame;
  }
  qsort(p->natives, p->nnatives, sizeof *p->natives, by_native);
  return 0;
}

/* ------------------------------------------------------------------------
** Names
** --------------------------------------------------------------------- */

static void set_name(spyS_agg *a, int is_process, uint64_t key,
                     const char *name) {
  uint32_t i = spyS_map_get(&a->name_map, (uint64_t)is_process, key);
  char *copy = strdup(name);
  if (!copy) return;
  if (i != UINT32_MAX) {
    free(a->names.p[i]);
    a->names.p[i] = copy;
    return;
  }
  if (VEC_PUSH_ROOM(a->names) != 0 ||
      spyS_map_put(&a->name_map, (uint64_t)is_process, key,
                   (uint32_t)a->names.n) != 0) {
    free(copy);
    return;
  }
  a->names.p[a->names.n++] = copy;
}

void spyS_agg_names(spyS_agg *a, spyH_name *list) {
  while (list) {
    spyH_name *next = list->next;
    set_name(a, list->is_process, list->key, list->name);
    free(list);
    list = next;
  }
}

void spyS_agg_name_missing(spyS_agg *a, const spy_host *h) {
  char buf[512];
  if (h->name)
    for (size_t i = 0; i < a->frames.n; i++) {
      const frame *f = &a->frames.p[i];
      if (f->kind != SPY_FRAME_METHOD ||
          spyS_map_get(&a->name_map, 0, f->key) != UINT32_MAX)
        continue;
      buf[0] = '\0';
      if (h->name(h->ud, f->key, buf, sizeof buf) == 0) {
        buf[sizeof buf - 1] = '\0';
        set_name(a, 0, f->key, buf);
      }
    }
  if (h->process_name)
    for (size_t i = 0; i < a->procs.n; i++) {
      uint64_t pid = a->procs.p[i].pid;
      if (spyS_map_get(&a->name_map, 1, pid) != UINT32_MAX) continue;
      buf[0] = '\0';
      if (h->process_name(h->ud, pid, buf, sizeof buf) == 0) {
        buf[sizeof buf - 1] = '\0';
        set_name(a, 1, pid, buf);
      }
    }
}

static const char *lookup_name(const spyS_agg *a, int is_process,
                               uint64_t key) {
  uint32_t i = spyS_map_get(&a->name_map, (uint64_t)is_process, key);
  return i == UINT32_MAX ? NULL : a->names.p[i];
}

/* ------------------------------------------------------------------------
** Building a profile
** --------------------------------------------------------------------- */

static const char *frame_name(const spyS_agg *a, spy_profile *p,
                              const frame *f, spyS_namer namer, void *ud) {
  char buf[64];
  const char *s = NULL;
  switch ((spy_frame_kind)f->kind) {
  case SPY_FRAME_ROOT: s = "(root)"; break;
  case SPY_FRAME_METHOD: s = lookup_name(a, 0, f->key); break;
  case SPY_FRAME_PRIM:
  case SPY_FRAME_REGION: s = namer(ud, (spy_frame_kind)f->kind, f->key); break;
  case SPY_FRAME_NATIVE: break; /* named by the tools from its module */
  case SPY_FRAME_GC: s = "GC"; break;
  case SPY_FRAME_CUT:
    snprintf(buf, sizeof buf, "... %" PRIu64 " frames cut ...", f->key);
    s = buf;
    break;
  }
  if (!s) {
    snprintf(buf, sizeof buf, "0x%" PRIx64, f->key);
    s = buf;
  }
  return spyP_strdup(p, s);
}

/* Children sorted heaviest first, then by frame for a stable order. */
static const spy_node *sort_nodes_;
static int by_total(const void *x, const void *y) {
  const spy_node *a = &sort_nodes_[*(const uint32_t *)x];
  const spy_node *b = &sort_nodes_[*(const uint32_t *)y];
  if (a->total_ns != b->total_ns) return a->total_ns < b->total_ns ? 1 : -1;
  return a->frame < b->frame ? -1 : a->frame > b->frame;
}

static int link_children(spy_profile *p) {
  size_t n = p->nnodes;
  uint32_t *order = malloc((n + 1) * sizeof *order);
  if (!order) return SPY_ENOMEM;
  for (size_t i = 0; i < n; i++) order[i] = (uint32_t)i;
  sort_nodes_ = p->nodes; /* only ever under the profiler's lock */
  qsort(order, n, sizeof *order, by_total);
  /* Prepend in reverse order so each list ends up heaviest first. */
  for (size_t i = n; i-- > 0;) {
    spy_node *nd = &p->nodes[order[i]];
    if (nd->parent == SPY_NONE) continue;
    nd->next_sibling = p->nodes[nd->parent].first_child;
    p->nodes[nd->parent].first_child = order[i];
  }
  free(order);
  return 0;
}

static int by_step(const void *x, const void *y) {
  const spy_step *a = x, *b = y;
  return a->ns < b->ns ? 1 : a->ns > b->ns ? -1 : 0;
}

int spyS_agg_build(const spyS_agg *a, spy_profile *p, spyS_namer namer,
                   void *ud) {
  p->nframes = a->frames.n;
  p->frames = spyP_calloc(p, a->frames.n, sizeof *p->frames);
  p->nnodes = a->nodes.n;
  p->nodes = spyP_calloc(p, a->nodes.n, sizeof *p->nodes);
  p->nprocesses = a->procs.n;
  p->processes = spyP_calloc(p, a->procs.n, sizeof *p->processes);
  p->nsteps = a->nsteps;
  p->steps = spyP_calloc(p, a->nsteps, sizeof *p->steps);
  p->nregions = a->regions.n;
  p->regions = spyP_calloc(p, a->regions.n, sizeof *p->regions);
  if (!p->frames || !p->nodes || !p->processes || !p->steps || !p->regions)
    return SPY_ENOMEM;
  size_t nnative = 0;
  for (size_t i = 0; i < a->frames.n; i++) {
    const frame *f = &a->frames.p[i];
    p->frames[i].kind = (spy_frame_kind)f->kind;
    p->frames[i].key = f->key;
    if (!(p->frames[i].name = frame_name(a, p, f, namer, ud)))
      return SPY_ENOMEM;
    if (f->kind == SPY_FRAME_NATIVE) nnative++;
  }
  /* A location per native frame: the address to name. */
  p->locations = spyP_calloc(p, nnative, sizeof *p->locations);
  if (!p->locations) return SPY_ENOMEM;
  for (size_t i = 0; i < a->frames.n; i++) {
    const frame *f = &a->frames.p[i];
    if (f->kind != SPY_FRAME_NATIVE) continue;
    p->locations[p->nlocations++] = (spy_location){
        (uint32_t)i, SPY_NONE, f->ret && f->key ? f->key - 1 : f->key};
  }
  /* Children are always created after their parents, so one backward pass
  ** sums totals bottom-up. */
  for (size_t i = 0; i < a->nodes.n; i++) {
    const node *s = &a->nodes.p[i];
    spy_node *d = &p->nodes[i];
    d->frame = s->frame;
    d->parent = s->parent == UINT32_MAX ? SPY_NONE : s->parent;
    d->first_child = d->next_sibling = SPY_NONE;
    d->self_ns = spyH_ticks_to_ns(s->self);
    d->self_tallies = s->tallies;
    d->total_ns += d->self_ns;
    d->tallies += s->tallies;
  }
  for (size_t i = a->nodes.n; i-- > 0;) {
    spy_node *d = &p->nodes[i];
    if (d->parent == SPY_NONE) continue;
    p->nodes[d->parent].total_ns += d->total_ns;
    p->nodes[d->parent].tallies += d->tallies;
  }
  if (link_children(p) != 0) return SPY_ENOMEM;
  for (size_t i = 0; i < a->procs.n; i++) {
    const proc *s = &a->procs.p[i];
    spy_process *d = &p->processes[i];
    char buf[64];
    const char *name = lookup_name(a, 1, s->pid);
    if (!name) {
      snprintf(buf, sizeof buf, "process %" PRIu64, s->pid);
      name = buf;
    }
    d->pid = s->pid;
    if (!(d->name = spyP_strdup(p, name))) return SPY_ENOMEM;
    d->root = s->root;
    d->total_ns = p->nodes[s->root].total_ns;
    d->tallies = p->nodes[s->root].tallies;
  }
  for (uint32_t i = 0; i < a->nsteps; i++) {
    const step *s = &a->steps[i];
    spy_step *d = &p->steps[i];
    d->kind = s->kind;
    d->prim = s->prim >= 0 && (size_t)s->prim < p->nprims ? (uint32_t)s->prim
                                                           : SPY_NONE;
    d->nsizes = s->nsizes;
    memcpy(d->size, s->size, sizeof d->size);
    d->ns = spyH_ticks_to_ns(s->ticks);
    d->process = s->process;
    d->off_cpu_pct = s->cpu_pct <= 100 ? 100 - s->cpu_pct : 0;
    d->nframes = s->nframes;
    d->frames = spyP_calloc(p, s->nframes, sizeof *d->frames);
    if (!d->frames) return SPY_ENOMEM;
    memcpy(d->frames, s->frames, s->nframes * sizeof *d->frames);
  }
  qsort(p->steps, p->nsteps, sizeof *p->steps, by_step);
  for (size_t i = 0; i < a->regions.n; i++) {
    const region *s = &a->regions.p[i];
    spy_profile_region *d = &p->regions[i];
    const char *name = namer(ud, SPY_FRAME_REGION, (uint64_t)s->id);
    if (!(d->name = spyP_strdup(p, name ? name : "?"))) return SPY_ENOMEM;
    d->parent = s->parent == UINT32_MAX ? SPY_NONE : s->parent;
    d->calls = s->calls;
    d->total_ns = spyH_ticks_to_ns(s->ticks);
    d->max_ns = spyH_ticks_to_ns(s->max);
  }
  for (size_t i = 0; i < p->nprims && i < a->cfg->max_prims; i++) {
    const spyH_res *r = &a->res[i];
    spy_profile_prim *d = &p->prims[i];
    d->obs_offered = r->offered;
    d->obs = spyP_calloc(p, r->n, sizeof *d->obs);
    if (!d->obs) return SPY_ENOMEM;
    uint32_t n;
    if (spyH_res_kept(r, a->cfg->reservoir, d->obs, &n) != 0) return SPY_ENOMEM;
    d->nobs = n;
  }
  return build_natives(a, p);
}
