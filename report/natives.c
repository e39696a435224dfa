/*
** report/natives.c: native frames in the call tree (spy_profile_natives_
** to_tree, <spyon/report.h>).
**
** The runtime's call tree is exact and has no native frames; natives[] is
** a separate sample of where each primitive's native code was, counted per
** distinct native path. Here each primitive node's self time (and self
** tallies) is split over its primitive's native paths in proportion to
** their counts, and the paths become child nodes of the primitive, so
** that the tree, the leaves and every export show the C functions a
** primitive spent its time in (a mixed tree, as py-spy --native shows).
** The split is an estimate: the counts are the primitive's over all its
** calls, not per call site. Totals do not change: a primitive node keeps
** its total, and its self time moves, exactly, to the native leaves.
**
** A path is shown from its primitive's deepest frame common to all of its
** paths (the C function that implements it, or deeper): the frames above
** it are the interpreter's own (main, the dispatch loop), the same for
** every path. A function's addresses are one frame (named without the
** line when their lines differ). Applying it twice changes nothing: a
** primitive node that already has native children is left alone, and the
** per-function frames made the first time serve again. (On SPY_ENOMEM,
** p's frames may have grown by those; nothing else has changed.)
*/
#include "config.h"

#include <spyon/report.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "profile/profile.h"

typedef struct grow {
  spy_node *v;
  size_t n, cap;
} grow;

static uint32_t add_node(grow *g, spy_node nd) {
  if (g->n == g->cap) {
    size_t cap = g->cap ? g->cap * 2 : 64;
    spy_node *nv = realloc(g->v, cap * sizeof *nv);
    if (!nv) return SPY_NONE;
    g->v = nv;
    g->cap = cap;
  }
  g->v[g->n] = nd;
  return (uint32_t)g->n++;
}

/* x * num / den without overflow (den > 0, num <= den). */
static uint64_t share(uint64_t x, uint64_t num, uint64_t den) {
  return (uint64_t)((unsigned __int128)x * num / den);
}

/* (parent, frame) -> the child node made for it: an open-addressing
** table, so that a primitive with many native paths (a hostile profile
** can have millions) is not quadratic. Only children made here are in it:
** a primitive node's other children are never native frames. */
typedef struct childmap {
  uint64_t *key; /* parent << 32 | frame, + 1 (0: empty) */
  uint32_t *node;
  size_t n, cap;   /* cap a power of two */
} childmap;

static size_t slot_of(const childmap *t, uint64_t key) {
  size_t h = (size_t)((key * 0x9E3779B97F4A7C15ull) >> 17) & (t->cap - 1);
  while (t->key[h] && t->key[h] != key) h = (h + 1) & (t->cap - 1);
  return h;
}

static int map_grow(childmap *t) {
  childmap b = {0};
  b.cap = t->cap ? t->cap * 2 : 1024;
  b.key = calloc(b.cap, sizeof *b.key);
  b.node = malloc(b.cap * sizeof *b.node);
  if (!b.key || !b.node) {
    free(b.key);
    free(b.node);
    return SPY_ENOMEM;
  }
  for (size_t i = 0; i < t->cap; i++)
    if (t->key[i]) {
      size_t h = slot_of(&b, t->key[i]);
      b.key[h] = t->key[i];
      b.node[h] = t->node[i];
    }
  b.n = t->n;
  free(t->key);
  free(t->node);
  *t = b;
  return 0;
}

/* The child of parent for frame, made when missing; SPY_NONE when out of
** memory. */
static uint32_t child_for(grow *g, childmap *t, uint32_t parent, uint32_t frame) {
  if (2 * (t->n + 1) > t->cap && map_grow(t)) return SPY_NONE;
  uint64_t key = ((uint64_t)parent << 32 | frame) + 1;
  size_t h = slot_of(t, key);
  if (t->key[h]) return t->node[h];
  spy_node nd = {frame, parent, SPY_NONE, g->v[parent].first_child,
                 0, 0, 0, 0};
  uint32_t c = add_node(g, nd);
  if (c == SPY_NONE) return SPY_NONE;
  g->v[parent].first_child = c;
  t->key[h] = key;
  t->node[h] = c;
  t->n++;
  return c;
}

static const spy_node *sort_nodes_;
static int heavier(const void *x, const void *y) {
  const spy_node *a = &sort_nodes_[*(const uint32_t *)x];
  const spy_node *b = &sort_nodes_[*(const uint32_t *)y];
  if (a->total_ns != b->total_ns) return a->total_ns < b->total_ns ? 1 : -1;
  return a->frame < b->frame ? -1 : a->frame > b->frame;
}

/* Re-link the children of every node in [from, n) and of the nodes in
** roots, heaviest first (the order every tree of a profile keeps). */
static int sort_children(grow *g, const uint32_t *roots, size_t nroots,
                         size_t from) {
  uint32_t *kids = NULL;
  size_t cap = 0;
  for (size_t k = 0; k < nroots + (g->n - from); k++) {
    uint32_t i = k < nroots ? roots[k] : (uint32_t)(from + k - nroots);
    size_t m = 0;
    for (uint32_t c = g->v[i].first_child; c != SPY_NONE;
         c = g->v[c].next_sibling) {
      if (m == cap) {
        cap = cap ? cap * 2 : 16;
        uint32_t *nk = realloc(kids, cap * sizeof *nk);
        if (!nk) {
          free(kids);
          return SPY_ENOMEM;
        }
        kids = nk;
      }
      kids[m++] = c;
    }
    sort_nodes_ = g->v;
    qsort(kids, m, sizeof *kids, heavier);
    g->v[i].first_child = m ? kids[0] : SPY_NONE;
    for (size_t j = 0; j < m; j++)
      g->v[kids[j]].next_sibling = j + 1 < m ? kids[j + 1] : SPY_NONE;
  }
  free(kids);
  return 0;
}

/* A path's first frame and its count, to find the weightiest root. */
typedef struct rootw {
  uint32_t root;
  uint64_t w;
} rootw;

static int by_root(const void *x, const void *y) {
  uint32_t a = ((const rootw *)x)->root, b = ((const rootw *)y)->root;
  return a < b ? -1 : a > b;
}

/* Where each of one primitive's paths is cut (start[j] for natives[j],
** j in its list ix[0..m)), comparing frames by function (canon): below the
** deepest function common to the paths that start where most paths of more
** than one frame start (a stack unwound to the end starts at the program's
** entry, never at an address no object covers); any other path (an unwind
** that stopped early or went astray, in code without unwind tables) keeps
** its leaf only. roots is scratch space for m entries. */
static void cut_paths(const spy_profile *p, const uint32_t *ix, size_t m,
                      const uint32_t *canon, uint32_t *start, rootw *roots) {
  size_t nr = 0;
  for (size_t k = 0; k < m; k++) {
    const spy_native *a = &p->natives[ix[k]];
    if (a->nframes < 2 || !strncmp(p->frames[a->frames[0]].name, "0x", 2))
      continue; /* one frame, or an address nothing names at the root */
    roots[nr++] = (rootw){canon[a->frames[0]], a->count};
  }
  qsort(roots, nr, sizeof *roots, by_root);
  uint32_t root = SPY_NONE; /* the weightiest root */
  uint64_t best = 0;
  for (size_t k = 0, l; k < nr; k = l) {
    uint64_t w = 0;
    for (l = k; l < nr && roots[l].root == roots[k].root; l++)
      w = w + roots[l].w < w ? UINT64_MAX : w + roots[l].w;
    if (w > best) best = w, root = roots[k].root;
  }
  const spy_native *first = NULL;
  uint32_t common = 0;
  for (size_t k = 0; k < m; k++) {
    const spy_native *nt = &p->natives[ix[k]];
    if (nt->nframes < 2 || canon[nt->frames[0]] != root) continue;
    if (!first) {
      first = nt;
      common = nt->nframes;
      continue;
    }
    uint32_t d = 0;
    while (d < common && d < nt->nframes &&
           canon[nt->frames[d]] == canon[first->frames[d]])
      d++;
    common = d;
  }
  for (size_t k = 0; k < m; k++) {
    const spy_native *nt = &p->natives[ix[k]];
    int whole = nt->nframes > 1 && canon[nt->frames[0]] == root && common;
    start[ix[k]] = whole && common - 1 < nt->nframes ? common - 1
                                                      : nt->nframes - 1;
  }
}

/* A native frame's name without its line ("f (lib) f.c:12" -> "f (lib)
** f.c"): the tree groups a function's addresses as one frame. */
static size_t fn_len(const char *s) {
  size_t n = strlen(s), k = n;
  while (k > 0 && s[k - 1] >= '0' && s[k - 1] <= '9') k--;
  return k < n && k > 0 && s[k - 1] == ':' ? k - 1 : n;
}

static const spy_frame *cmp_frames_;
static int by_fn(const void *x, const void *y) {
  const char *a = cmp_frames_[*(const uint32_t *)x].name;
  const char *b = cmp_frames_[*(const uint32_t *)y].name;
  size_t la = fn_len(a), lb = fn_len(b);
  int c = memcmp(a, b, la < lb ? la : lb);
  if (c) return c;
  if (la != lb) return la < lb ? -1 : 1;
  return *(const uint32_t *)x < *(const uint32_t *)y ? -1 : 1;
}

static int same_fn(const spy_frame *fr, uint32_t a, uint32_t b) {
  size_t la = fn_len(fr[a].name);
  return la == fn_len(fr[b].name) && !memcmp(fr[a].name, fr[b].name, la);
}

/* canon[f]: the frame a native frame f is shown as: one per function, a
** new frame (named without the line) where a function's addresses had
** different lines. New frames are appended to p (in its arena). */
static int group_functions(spy_profile *p, uint32_t *canon) {
  size_t nn = 0;
  for (uint32_t f = 0; f < p->nframes; f++) {
    canon[f] = f;
    nn += p->frames[f].kind == SPY_FRAME_NATIVE;
  }
  uint32_t *ix = malloc((nn + 1) * sizeof *ix);
  if (!ix) return SPY_ENOMEM;
  size_t k = 0;
  for (uint32_t f = 0; f < p->nframes; f++)
    if (p->frames[f].kind == SPY_FRAME_NATIVE) ix[k++] = f;
  cmp_frames_ = p->frames;
  qsort(ix, nn, sizeof *ix, by_fn);
  /* A group of one function's frames needs a frame of its own when their
  ** names differ (different lines). Count them, then make them. */
  size_t extra = 0;
  for (size_t i = 0, j; i < nn; i = j) {
    int same = 1, bare = 0;
    for (j = i + 1; j < nn && same_fn(p->frames, ix[i], ix[j]); j++)
      same &= !strcmp(p->frames[ix[i]].name, p->frames[ix[j]].name);
    for (size_t m = i; m < j; m++)
      bare |= fn_len(p->frames[ix[m]].name) == strlen(p->frames[ix[m]].name);
    extra += !same && !bare;
  }
  spy_frame *fr = p->frames;
  if (extra) {
    fr = spyP_calloc(p, p->nframes + extra, sizeof *fr);
    if (!fr) {
      free(ix);
      return SPY_ENOMEM;
    }
    memcpy(fr, p->frames, p->nframes * sizeof *fr);
  }
  size_t nf = p->nframes;
  int rc = 0;
  for (size_t i = 0, j; i < nn && rc == 0; i = j) {
    int same = 1;
    for (j = i + 1; j < nn && same_fn(fr, ix[i], ix[j]); j++)
      same &= !strcmp(fr[ix[i]].name, fr[ix[j]].name);
    uint32_t to = ix[i];
    /* A frame of the group already named without a line (made by an
    ** earlier call) serves. */
    for (size_t m = i; m < j && !same; m++)
      if (fn_len(fr[ix[m]].name) == strlen(fr[ix[m]].name)) {
        to = ix[m];
        same = 1;
      }
    if (!same) {
      fr[nf] = fr[ix[i]];
      fr[nf].name = spyP_strndup(p, fr[ix[i]].name, fn_len(fr[ix[i]].name));
      if (!fr[nf].name) rc = SPY_ENOMEM;
      to = (uint32_t)nf++;
    }
    for (size_t m = i; m < j; m++) canon[ix[m]] = to;
  }
  free(ix);
  /* A new frame is located where its first member is (pprof's mappings
  ** need every native frame's object). */
  spy_location *lo = p->locations;
  size_t nl = p->nlocations, nnew = nf - p->nframes;
  unsigned char *have = nnew ? calloc(nnew, 1) : NULL;
  if (rc == 0 && nnew) {
    lo = spyP_calloc(p, nl + nnew, sizeof *lo);
    if (!lo || !have) rc = SPY_ENOMEM;
    else if (nl) memcpy(lo, p->locations, nl * sizeof *lo);
    for (size_t i = 0, n0 = nl; rc == 0 && i < n0; i++) {
      uint32_t to = canon[lo[i].frame];
      if (to < p->nframes || have[to - p->nframes]) continue;
      have[to - p->nframes] = 1;
      lo[nl++] = (spy_location){to, lo[i].module, lo[i].addr};
    }
  }
  free(have);
  if (rc == 0) {
    p->frames = fr;
    p->nframes = nf;
    p->locations = lo;
    p->nlocations = nl;
  }
  return rc;
}

int spy_profile_natives_to_tree(spy_profile *p) {
  if (!p) return SPY_EINVAL;
  if (p->nnatives == 0) return 0;
  /* Each primitive's paths: ix[off[k] .. off[k + 1]), and their total
  ** count. */
  uint64_t *count = calloc(p->nprims + 1, sizeof *count);
  size_t *off = calloc(p->nprims + 2, sizeof *off);
  uint32_t *ix = malloc(p->nnatives * sizeof *ix);
  uint32_t *start = calloc(p->nnatives, sizeof *start);
  uint32_t *canon = malloc((p->nframes + 1) * sizeof *canon);
  rootw *roots = malloc(p->nnatives * sizeof *roots);
  uint32_t *touched = NULL;
  size_t ntouched = 0;
  grow g = {0};
  childmap t = {0};
  int rc = 0;
  if (!count || !off || !ix || !start || !canon || !roots) rc = SPY_ENOMEM;
  for (size_t i = 0; rc == 0 && i < p->nnatives; i++) {
    const spy_native *nt = &p->natives[i];
    if (nt->prim >= p->nprims || nt->nframes == 0) continue;
    count[nt->prim] = count[nt->prim] + nt->count < count[nt->prim]
                          ? UINT64_MAX : count[nt->prim] + nt->count;
    off[nt->prim + 2]++;
  }
  for (size_t k = 2; rc == 0 && k < p->nprims + 2; k++) off[k] += off[k - 1];
  for (size_t i = 0; rc == 0 && i < p->nnatives; i++) {
    const spy_native *nt = &p->natives[i];
    if (nt->prim < p->nprims && nt->nframes)
      ix[off[nt->prim + 1]++] = (uint32_t)i;
  }
  if (rc == 0) rc = group_functions(p, canon);
  for (uint32_t k = 0; rc == 0 && k < p->nprims; k++)
    if (off[k + 1] > off[k])
      cut_paths(p, ix + off[k], off[k + 1] - off[k], canon, start, roots);
  if (rc == 0 && p->nnodes > 0) {
    g.v = malloc(p->nnodes * 2 * sizeof *g.v);
    touched = malloc(p->nnodes * sizeof *touched);
    if (!g.v || !touched) rc = SPY_ENOMEM;
    else {
      memcpy(g.v, p->nodes, p->nnodes * sizeof *g.v);
      g.n = p->nnodes;
      g.cap = p->nnodes * 2;
    }
  }
  for (uint32_t i = 0; rc == 0 && i < p->nnodes; i++) {
    if (g.v[i].frame >= p->nframes) continue;
    const spy_frame *fr = &p->frames[g.v[i].frame];
    if (fr->kind != SPY_FRAME_PRIM || fr->key >= p->nprims) continue;
    uint32_t prim = (uint32_t)fr->key;
    uint64_t c = count[prim];
    if (!c || (g.v[i].self_ns == 0 && g.v[i].self_tallies == 0)) continue;
    int done = 0; /* native children already: made by an earlier call */
    for (uint32_t k = g.v[i].first_child; k != SPY_NONE; k = g.v[k].next_sibling)
      done |= g.v[k].frame < p->nframes &&
              p->frames[g.v[k].frame].kind == SPY_FRAME_NATIVE;
    if (done) continue;
    uint64_t self = g.v[i].self_ns, tal = g.v[i].self_tallies;
    uint64_t given = 0, given_t = 0, seen = 0;
    uint32_t last_leaf = SPY_NONE;
    for (size_t q = off[prim]; rc == 0 && q < off[prim + 1]; q++) {
      const spy_native *nt = &p->natives[ix[q]];
      /* Cumulative shares, so that the parts sum to the whole exactly. */
      seen = seen + nt->count < seen ? UINT64_MAX : seen + nt->count;
      if (seen > c) seen = c;
      uint64_t w = share(self, seen, c) - given;
      uint64_t wt = share(tal, seen, c) - given_t;
      given += w;
      given_t += wt;
      if (w == 0 && wt == 0) continue;
      uint32_t at = i;
      for (uint32_t f = start[ix[q]]; f < nt->nframes; f++) {
        at = child_for(&g, &t, at, canon[nt->frames[f]]);
        if (at == SPY_NONE) break;
        g.v[at].total_ns += w;
        g.v[at].tallies += wt;
      }
      if (at == SPY_NONE) {
        rc = SPY_ENOMEM;
        break;
      }
      g.v[at].self_ns += w;
      g.v[at].self_tallies += wt;
      last_leaf = at;
    }
    if (rc || last_leaf == SPY_NONE) continue;
    /* Whatever rounding left (nothing, when every count was seen). */
    g.v[last_leaf].self_ns += self - given;
    g.v[last_leaf].self_tallies += tal - given_t;
    g.v[i].self_ns = 0;
    g.v[i].self_tallies = 0;
    touched[ntouched++] = i;
  }
  if (rc == 0 && ntouched) rc = sort_children(&g, touched, ntouched, p->nnodes);
  if (rc == 0 && g.n > UINT32_MAX - 1) rc = SPY_ENOMEM;
  if (rc == 0 && g.n > p->nnodes) {
    spy_node *nodes = spyP_calloc(p, g.n, sizeof *nodes);
    if (!nodes) rc = SPY_ENOMEM;
    else {
      memcpy(nodes, g.v, g.n * sizeof *nodes);
      p->nodes = nodes;
      size_t added = g.n - p->nnodes;
      rc = added > INT32_MAX ? INT32_MAX : (int)added;
      p->nnodes = g.n;
    }
  }
  free(g.v);
  free(t.key);
  free(t.node);
  free(touched);
  free(count);
  free(off);
  free(ix);
  free(start);
  free(canon);
  free(roots);
  return rc;
}
