/*
** report/merge.c: one profile from several runs of one program.
**
** Sampling profiles of short runs are noisy; merging N runs gives the
** samples of all of them, so shares settle and a diff against another
** merged set has N times the tallies (report/diff.c: its noise interval
** shrinks with them). Runs are matched the way a diff matches them: keys
** are the host's and need not be stable between runs, names are. So
** processes match by name, frames by kind and report label, primitives by
** name, regions by name under their merged parent, and a call-tree node by
** its merged parent and frame. The merged profile is built in plain
** malloc'd arrays (sizes are not known up front) and copied into a fresh
** profile's arena at the end; names point into the inputs until then.
*/
#include "config.h"

#include <spyon.h>

#include "profile/profile.h"
#include "report/format.h"
#include "report/walk.h"
#include <spyon/report.h>

#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------------
** Maps
** --------------------------------------------------------------------- */

/* String -> index, open addressing; keys are malloc'd copies. */
typedef struct smap {
  char **key;
  uint32_t *val;
  size_t n, hcap;
} smap;

static uint64_t fnv(const void *s, size_t n) {
  const unsigned char *c = s;
  uint64_t h = 1469598103934665603ull;
  for (size_t i = 0; i < n; i++) h = (h ^ c[i]) * 1099511628211ull;
  return h;
}

static int smap_grow(smap *m) {
  size_t hcap = m->hcap ? m->hcap * 2 : 64;
  char **key = calloc(hcap, sizeof *key);
  uint32_t *val = calloc(hcap, sizeof *val);
  if (!key || !val) {
    free(key);
    free(val);
    return SPY_ENOMEM;
  }
  for (size_t i = 0; i < m->hcap; i++) {
    if (!m->key[i]) continue;
    size_t h = (size_t)fnv(m->key[i], strlen(m->key[i])) & (hcap - 1);
    while (key[h]) h = (h + 1) & (hcap - 1);
    key[h] = m->key[i];
    val[h] = m->val[i];
  }
  free(m->key);
  free(m->val);
  m->key = key;
  m->val = val;
  m->hcap = hcap;
  return 0;
}

/* The slot of k: *found says whether it holds k; otherwise it is where k
** goes. SIZE_MAX when out of memory. */
static size_t smap_slot(smap *m, const char *k, int *found) {
  if (2 * (m->n + 1) > m->hcap && smap_grow(m)) return SIZE_MAX;
  size_t h = (size_t)fnv(k, strlen(k)) & (m->hcap - 1);
  while (m->key[h]) {
    if (!strcmp(m->key[h], k)) {
      *found = 1;
      return h;
    }
    h = (h + 1) & (m->hcap - 1);
  }
  *found = 0;
  return h;
}

/* The index of k; when new, `next` is stored and *added set. UINT32_MAX
** when out of memory. */
static uint32_t smap_get(smap *m, const char *k, uint32_t next, int *added) {
  int found;
  size_t h = smap_slot(m, k, &found);
  if (h == SIZE_MAX) return UINT32_MAX;
  *added = !found;
  if (found) return m->val[h];
  if (!(m->key[h] = strdup(k))) return UINT32_MAX;
  m->val[h] = next;
  m->n++;
  return next;
}

static void smap_free(smap *m) {
  for (size_t i = 0; i < m->hcap; i++) free(m->key[i]);
  free(m->key);
  free(m->val);
}

/* A growable array of fixed-size items. */
typedef struct vec {
  void *a;
  size_t n, cap, size;
} vec;

/* A pointer to a new zeroed item, NULL when out of memory. */
static void *vec_push(vec *v) {
  if (v->n == v->cap) {
    size_t cap = v->cap ? v->cap * 2 : 64;
    void *a = realloc(v->a, cap * v->size);
    if (!a) return NULL;
    v->a = a;
    v->cap = cap;
  }
  void *it = (char *)v->a + v->n++ * v->size;
  memset(it, 0, v->size);
  return it;
}

#define VEC(T) {NULL, 0, 0, sizeof(T)}
#define AT(v, T, i) (((T *)(v).a)[i])

/* ------------------------------------------------------------------------
** Merging
** --------------------------------------------------------------------- */

typedef struct mprim {
  const spy_profile_prim *first;
  uint64_t calls, total_ns, max_ns, offered;
  vec obs; /* spy_obs */
} mprim;

typedef struct merger {
  smap frames, procs, prims, regions, natives, nodes;
  vec frame;  /* spy_frame (names point into the inputs) */
  vec node;   /* spy_node */
  vec proc;   /* spy_process */
  vec prim;   /* mprim */
  vec region; /* spy_profile_region */
  vec step;   /* spy_step (frames malloc'd) */
  vec native; /* spy_native (frames malloc'd) */
  spyR_buf key;
} merger;

/* The merged node for (parent, frame), made when new. */
static uint32_t node_for(merger *m, uint32_t parent, uint32_t frame) {
  spyR_buf_clear(&m->key);
  spyR_buf_printf(&m->key, "%u/%u", parent, frame);
  if (m->key.oom) return UINT32_MAX;
  int added;
  uint32_t n = smap_get(&m->nodes, m->key.s, (uint32_t)m->node.n, &added);
  if (n == UINT32_MAX || !added) return n;
  spy_node *nd = vec_push(&m->node);
  if (!nd) return UINT32_MAX;
  *nd = (spy_node){frame, parent, SPY_NONE, SPY_NONE, 0, 0, 0, 0};
  if (parent != SPY_NONE) {
    /* Prepend; children are sorted by weight at the end. */
    nd->next_sibling = AT(m->node, spy_node, parent).first_child;
    AT(m->node, spy_node, parent).first_child = n;
  }
  return n;
}

/* The merged region of p's region j (parents first; depth bounds a chain
** that loops, which the loader has ruled out anyway). */
static uint32_t region_for(merger *m, const spy_profile *p, uint32_t j,
                           uint32_t *rm, size_t depth) {
  if (rm[j] != SPY_NONE) return rm[j];
  if (depth > p->nregions) return UINT32_MAX;
  const spy_profile_region *r = &p->regions[j];
  uint32_t parent = SPY_NONE;
  if (r->parent != SPY_NONE) {
    if (r->parent >= p->nregions) return UINT32_MAX;
    parent = region_for(m, p, r->parent, rm, depth + 1);
    if (parent == UINT32_MAX) return parent;
  }
  spyR_buf_clear(&m->key);
  spyR_buf_printf(&m->key, "%u/%s", parent, r->name ? r->name : "");
  if (m->key.oom) return UINT32_MAX;
  int added;
  uint32_t k = smap_get(&m->regions, m->key.s, (uint32_t)m->region.n, &added);
  if (k == UINT32_MAX) return k;
  if (added) {
    spy_profile_region *nr = vec_push(&m->region);
    if (!nr) return UINT32_MAX;
    nr->name = r->name;
    nr->parent = parent;
  }
  spy_profile_region *mr = &AT(m->region, spy_profile_region, k);
  mr->calls += r->calls;
  mr->total_ns += r->total_ns;
  if (r->max_ns > mr->max_ns) mr->max_ns = r->max_ns;
  return rm[j] = k;
}

/* Where one input's primitives, frames, processes and regions went in the
** merger (index in the input -> index in the merger), and the stack of
** the tree walk: what add's steps share. */
typedef struct inmap {
  uint32_t *pm, *fm, *prm, *rm;
  uint32_t (*stack)[2];
} inmap;

/* Primitives by name: counts and times summed, observations appended. */
static int add_prims(merger *m, const spy_profile *p, inmap *x) {
  for (size_t i = 0; i < p->nprims; i++) {
    const spy_profile_prim *sp = &p->prims[i];
    int added;
    uint32_t k = smap_get(&m->prims, sp->name ? sp->name : "",
                          (uint32_t)m->prim.n, &added);
    if (k == UINT32_MAX) return SPY_ENOMEM;
    if (added) {
      mprim *np = vec_push(&m->prim);
      if (!np) return SPY_ENOMEM;
      np->first = sp;
      np->obs.size = sizeof(spy_obs);
    }
    mprim *mp = &AT(m->prim, mprim, k);
    mp->calls += sp->calls;
    mp->total_ns += sp->total_ns;
    if (sp->max_ns > mp->max_ns) mp->max_ns = sp->max_ns;
    mp->offered += sp->obs_offered;
    for (size_t o = 0; o < sp->nobs; o++) {
      spy_obs *ob = vec_push(&mp->obs);
      if (!ob) return SPY_ENOMEM;
      *ob = sp->obs[o];
    }
    x->pm[i] = k;
  }
  return 0;
}

/* Frame I of p by kind and label (built in LAB); a primitive's key
** becomes its merged index. */
static int add_frame(merger *m, const spy_profile *p, inmap *x, size_t i,
                     spyR_buf *lab) {
  const spy_frame *fr = &p->frames[i];
  if (fr->kind == SPY_FRAME_PRIM && fr->key >= p->nprims) return SPY_EFORMAT;
  spyR_buf_clear(lab);
  spyR_buf_printf(lab, "%d/", (int)fr->kind);
  spyR_label(lab, p, (uint32_t)i);
  if (lab->oom) return SPY_ENOMEM;
  int added;
  uint32_t k = smap_get(&m->frames, lab->s, (uint32_t)m->frame.n, &added);
  if (k == UINT32_MAX) return SPY_ENOMEM;
  if (added) {
    spy_frame *nf = vec_push(&m->frame);
    if (!nf) return SPY_ENOMEM;
    *nf = *fr;
    if (fr->kind == SPY_FRAME_PRIM) nf->key = x->pm[fr->key];
  }
  x->fm[i] = k;
  return 0;
}

static int add_frames(merger *m, const spy_profile *p, inmap *x) {
  spyR_buf lab = {0};
  int rc = 0;
  for (size_t i = 0; i < p->nframes && rc == 0; i++)
    rc = add_frame(m, p, x, i, &lab);
  spyR_buf_free(&lab);
  return rc;
}

/* The tree under p's node ROOT into the merged node MROOT, depth first
** with pairs (source node, merged node) on x's stack. */
static int add_tree(merger *m, const spy_profile *p, inmap *x, uint32_t root,
                    uint32_t mroot) {
  uint32_t(*stack)[2] = x->stack;
  size_t sp = 0, visited = 0;
  stack[sp][0] = root;
  stack[sp++][1] = mroot;
  while (sp) {
    sp--;
    uint32_t s = stack[sp][0], d = stack[sp][1];
    const spy_node *sn = &p->nodes[s];
    if (++visited > p->nnodes) return SPY_EFORMAT;
    spy_node *dn = &AT(m->node, spy_node, d);
    dn->total_ns += sn->total_ns;
    dn->self_ns += sn->self_ns;
    dn->tallies += sn->tallies;
    dn->self_tallies += sn->self_tallies;
    for (uint32_t c = sn->first_child; c != SPY_NONE;
         c = p->nodes[c].next_sibling) {
      if (c >= p->nnodes || p->nodes[c].frame >= p->nframes ||
          sp >= p->nnodes)
        return SPY_EFORMAT;
      uint32_t dc = node_for(m, d, x->fm[p->nodes[c].frame]);
      if (dc == UINT32_MAX) return SPY_ENOMEM;
      stack[sp][0] = c;
      stack[sp++][1] = dc;
    }
  }
  return 0;
}

/* Processes by name, each with its tree. */
static int add_processes(merger *m, const spy_profile *p, inmap *x) {
  for (size_t i = 0; i < p->nprocesses; i++) {
    const spy_process *pr = &p->processes[i];
    if (pr->root >= p->nnodes || p->nodes[pr->root].frame >= p->nframes)
      return SPY_EFORMAT;
    int added;
    uint32_t k = smap_get(&m->procs, pr->name ? pr->name : "",
                          (uint32_t)m->proc.n, &added);
    if (k == UINT32_MAX) return SPY_ENOMEM;
    if (added) {
      spy_process *np = vec_push(&m->proc);
      if (!np) return SPY_ENOMEM;
      np->pid = pr->pid;
      np->name = pr->name;
      np->root = node_for(m, SPY_NONE, x->fm[p->nodes[pr->root].frame]);
      if (np->root == UINT32_MAX) return SPY_ENOMEM;
    }
    spy_process *mp = &AT(m->proc, spy_process, k);
    mp->total_ns += pr->total_ns;
    mp->tallies += pr->tallies;
    x->prm[i] = k;
    int rc = add_tree(m, p, x, pr->root, mp->root);
    if (rc) return rc;
  }
  return 0;
}

/* Regions by path of names (region_for). */
static int add_regions(merger *m, const spy_profile *p, inmap *x) {
  for (size_t j = 0; j < p->nregions; j++) x->rm[j] = SPY_NONE;
  for (size_t j = 0; j < p->nregions; j++)
    if (region_for(m, p, (uint32_t)j, x->rm, 0) == UINT32_MAX)
      return SPY_ENOMEM;
  return 0;
}

/* Steps appended, their indices mapped (the longest are kept in build). */
static int add_steps(merger *m, const spy_profile *p, inmap *x) {
  for (size_t i = 0; i < p->nsteps; i++) {
    const spy_step *st = &p->steps[i];
    if (st->process >= p->nprocesses ||
        (st->prim != SPY_NONE && st->prim >= p->nprims))
      return SPY_EFORMAT;
    spy_step *ns = vec_push(&m->step);
    if (!ns) return SPY_ENOMEM;
    *ns = *st;
    ns->prim = st->prim == SPY_NONE ? SPY_NONE : x->pm[st->prim];
    ns->process = x->prm[st->process];
    ns->frames = malloc((st->nframes + 1) * sizeof *ns->frames);
    if (!ns->frames) {
      ns->nframes = 0;
      return SPY_ENOMEM;
    }
    for (uint32_t k = 0; k < st->nframes; k++) {
      if (st->frames[k] >= p->nframes) return SPY_EFORMAT;
      ns->frames[k] = x->fm[st->frames[k]];
    }
  }
  return 0;
}

/* Native stacks by primitive and frames: counts summed. */
static int add_natives(merger *m, const spy_profile *p, inmap *x) {
  for (size_t i = 0; i < p->nnatives; i++) {
    const spy_native *nt = &p->natives[i];
    if (nt->prim >= p->nprims) return SPY_EFORMAT;
    spyR_buf_clear(&m->key);
    spyR_buf_printf(&m->key, "%u", x->pm[nt->prim]);
    for (uint32_t k = 0; k < nt->nframes; k++) {
      if (nt->frames[k] >= p->nframes) return SPY_EFORMAT;
      spyR_buf_printf(&m->key, ",%u", x->fm[nt->frames[k]]);
    }
    if (m->key.oom) return SPY_ENOMEM;
    int added;
    uint32_t k = smap_get(&m->natives, m->key.s, (uint32_t)m->native.n,
                          &added);
    if (k == UINT32_MAX) return SPY_ENOMEM;
    if (added) {
      spy_native *nn = vec_push(&m->native);
      if (!nn) return SPY_ENOMEM;
      nn->prim = x->pm[nt->prim];
      nn->frames = malloc((nt->nframes + 1) * sizeof *nn->frames);
      if (!nn->frames) return SPY_ENOMEM;
      nn->nframes = nt->nframes;
      for (uint32_t f = 0; f < nt->nframes; f++)
        nn->frames[f] = x->fm[nt->frames[f]];
    }
    AT(m->native, spy_native, k).count += nt->count;
  }
  return 0;
}

/* Add profile p to the merger: 0, SPY_ENOMEM, or SPY_EFORMAT for an index
** out of range. */
static int add(merger *m, const spy_profile *p) {
  inmap x = {calloc(p->nprims + 1, sizeof *x.pm),
             calloc(p->nframes + 1, sizeof *x.fm),
             calloc(p->nprocesses + 1, sizeof *x.prm),
             malloc((p->nregions + 1) * sizeof *x.rm),
             malloc((p->nnodes + 1) * sizeof *x.stack)};
  int rc = SPY_ENOMEM;
  if (x.pm && x.fm && x.prm && x.rm && x.stack) {
    rc = add_prims(m, p, &x);
    if (rc == 0) rc = add_frames(m, p, &x);
    if (rc == 0) rc = add_processes(m, p, &x);
    if (rc == 0) rc = add_regions(m, p, &x);
    if (rc == 0) rc = add_steps(m, p, &x);
    if (rc == 0) rc = add_natives(m, p, &x);
  }
  free(x.pm);
  free(x.fm);
  free(x.prm);
  free(x.rm);
  free(x.stack);
  return rc;
}

static int step_cmp(const void *a, const void *b) {
  const spy_step *x = a, *y = b;
  return x->ns < y->ns ? 1 : x->ns > y->ns ? -1 : 0;
}

static int native_cmp(const void *a, const void *b) {
  const spy_native *x = a, *y = b;
  if (x->prim != y->prim) return x->prim < y->prim ? -1 : 1;
  return x->count < y->count ? 1 : x->count > y->count ? -1 : 0;
}

/* Copy the merged arrays into a new profile's arena. */
static int build(merger *m, const spy_profile *const *in, size_t nin,
                 size_t maxsteps, spy_profile **out) {
  spy_profile *p = spyP_new();
  if (!p) return SPY_ENOMEM;
  const spy_profile *f = in[0];
  p->mode = f->mode;
  p->interval_ns = f->interval_ns;
  p->start_unix_ns = f->start_unix_ns;
  for (size_t i = 0; i < nin; i++) {
    const spy_profile *q = in[i];
    p->wall_ns += q->wall_ns;
    p->tallies += q->tallies;
    p->dropped += q->dropped;
    p->obs_dropped += q->obs_dropped;
    p->hook_ns += q->hook_ns;
    if (q->start_unix_ns &&
        (!p->start_unix_ns || q->start_unix_ns < p->start_unix_ns))
      p->start_unix_ns = q->start_unix_ns;
    p->gc.count += q->gc.count;
    p->gc.total_ns += q->gc.total_ns;
    if (q->gc.max_ns > p->gc.max_ns) p->gc.max_ns = q->gc.max_ns;
  }
  int bad = !(p->clock = spyP_strdup(p, f->clock)) ||
            !(p->command = spyP_strdup(p, f->command));

  p->nframes = m->frame.n;
  p->frames = spyP_calloc(p, m->frame.n, sizeof *p->frames);
  bad |= !p->frames;
  for (size_t i = 0; !bad && i < m->frame.n; i++) {
    p->frames[i] = AT(m->frame, spy_frame, i);
    bad |= !(p->frames[i].name = spyP_strdup(p, p->frames[i].name));
  }
  p->nnodes = m->node.n;
  p->nodes = spyP_calloc(p, m->node.n, sizeof *p->nodes);
  bad |= !p->nodes;
  if (!bad) memcpy(p->nodes, m->node.a, m->node.n * sizeof *p->nodes);
  p->nprocesses = m->proc.n;
  p->processes = spyP_calloc(p, m->proc.n, sizeof *p->processes);
  bad |= !p->processes;
  for (size_t i = 0; !bad && i < m->proc.n; i++) {
    p->processes[i] = AT(m->proc, spy_process, i);
    bad |= !(p->processes[i].name = spyP_strdup(p, p->processes[i].name));
  }
  p->nprims = m->prim.n;
  p->prims = spyP_calloc(p, m->prim.n, sizeof *p->prims);
  bad |= !p->prims;
  for (size_t i = 0; !bad && i < m->prim.n; i++) {
    const mprim *mp = &AT(m->prim, mprim, i);
    spy_profile_prim *pp = &p->prims[i];
    pp->name = spyP_strdup(p, mp->first->name);
    pp->nsizes = mp->first->nsizes;
    for (unsigned s = 0; s < pp->nsizes && s < 4; s++)
      bad |= !(pp->size_names[s] = spyP_strdup(p, mp->first->size_names[s]));
    pp->flags = mp->first->flags;
    pp->calls = mp->calls;
    pp->total_ns = mp->total_ns;
    pp->max_ns = mp->max_ns;
    pp->obs_offered = mp->offered;
    pp->nobs = mp->obs.n;
    pp->obs = spyP_calloc(p, mp->obs.n, sizeof *pp->obs);
    bad |= !pp->name || !pp->obs;
    if (!bad) memcpy(pp->obs, mp->obs.a, mp->obs.n * sizeof *pp->obs);
  }
  p->nregions = m->region.n;
  p->regions = spyP_calloc(p, m->region.n, sizeof *p->regions);
  bad |= !p->regions;
  for (size_t i = 0; !bad && i < m->region.n; i++) {
    p->regions[i] = AT(m->region, spy_profile_region, i);
    bad |= !(p->regions[i].name = spyP_strdup(p, p->regions[i].name));
  }
  if (m->step.n) qsort(m->step.a, m->step.n, sizeof(spy_step), step_cmp);
  p->nsteps = m->step.n < maxsteps ? m->step.n : maxsteps;
  p->steps = spyP_calloc(p, p->nsteps, sizeof *p->steps);
  bad |= !p->steps;
  for (size_t i = 0; !bad && i < p->nsteps; i++) {
    spy_step *s = &p->steps[i];
    *s = AT(m->step, spy_step, i);
    s->frames = spyP_calloc(p, s->nframes, sizeof *s->frames);
    bad |= !s->frames;
    if (!bad)
      memcpy(s->frames, AT(m->step, spy_step, i).frames,
             s->nframes * sizeof *s->frames);
  }
  if (m->native.n)
    qsort(m->native.a, m->native.n, sizeof(spy_native), native_cmp);
  p->nnatives = m->native.n;
  p->natives = spyP_calloc(p, m->native.n, sizeof *p->natives);
  bad |= !p->natives;
  for (size_t i = 0; !bad && i < m->native.n; i++) {
    spy_native *s = &p->natives[i];
    *s = AT(m->native, spy_native, i);
    s->frames = spyP_calloc(p, s->nframes, sizeof *s->frames);
    bad |= !s->frames;
    if (!bad)
      memcpy(s->frames, AT(m->native, spy_native, i).frames,
             s->nframes * sizeof *s->frames);
  }
  if (bad) {
    spy_profile_free(p);
    return SPY_ENOMEM;
  }
  *out = p;
  return 0;
}

int spy_profile_merge(const spy_profile *const *in, size_t n, spy_profile **out) {
  if (!in || !n || !out) return SPY_EINVAL;
  *out = NULL;
  size_t maxsteps = 0;
  for (size_t i = 0; i < n; i++) {
    if (!in[i] || in[i]->mode != in[0]->mode) return SPY_EINVAL;
    if (in[i]->nsteps > maxsteps) maxsteps = in[i]->nsteps;
  }
  merger m;
  memset(&m, 0, sizeof m);
  m.frame = (vec)VEC(spy_frame);
  m.node = (vec)VEC(spy_node);
  m.proc = (vec)VEC(spy_process);
  m.prim = (vec)VEC(mprim);
  m.region = (vec)VEC(spy_profile_region);
  m.step = (vec)VEC(spy_step);
  m.native = (vec)VEC(spy_native);
  int rc = 0;
  for (size_t i = 0; i < n && rc == 0; i++) rc = add(&m, in[i]);
  if (rc == 0) rc = spyR_sort_siblings(m.node.a, m.node.n);
  if (rc == 0) rc = build(&m, in, n, maxsteps, out);
  smap_free(&m.frames);
  smap_free(&m.procs);
  smap_free(&m.prims);
  smap_free(&m.regions);
  smap_free(&m.natives);
  smap_free(&m.nodes);
  for (size_t i = 0; i < m.prim.n; i++) free(AT(m.prim, mprim, i).obs.a);
  for (size_t i = 0; i < m.step.n; i++) free(AT(m.step, spy_step, i).frames);
  for (size_t i = 0; i < m.native.n; i++)
    free(AT(m.native, spy_native, i).frames);
  free(m.frame.a);
  free(m.node.a);
  free(m.proc.a);
  free(m.prim.a);
  free(m.region.a);
  free(m.step.a);
  free(m.native.a);
  spyR_buf_free(&m.key);
  return rc;
}
