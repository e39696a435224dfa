/*
** report/tview.c: the lazily built views of report/tview.h.
**
** The index is arrays over the profile's nodes, made by one iterative walk
** per process and a few linear passes; an expansion groups a node's
** members' next frames with per-frame stamps (no hash table, nothing to
** clear), then lays the groups out as children with contiguous member
** ranges. Members stay in walk order, so a child's first member is the
** profile node an eager walk would have met first (ties sort alike).
*/
#include "config.h"

#include "report/tview.h"

#include "report/tree.h"

#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------------
** The index
** --------------------------------------------------------------------- */

void spyR_tview_free(spyR_tindex *ix) {
  if (!ix) return;
  free(ix->par), free(ix->kofs), free(ix->kid), free(ix->tot);
  free(ix->ttal), free(ix->order), free(ix->oofs), free(ix->leaf);
  free(ix->lofs), free(ix->cofs), free(ix->ckid), free(ix->cself);
  free(ix->cstal), free(ix->ctot), free(ix->cttal), free(ix->gmark);
  free(ix->gidx), free(ix->pmark), free(ix->scr), free(ix->grp);
  free(ix);
}

#define SEEN(x) (seen[(x) / 8] & (1u << ((x) % 8)))
#define MARK(x) (seen[(x) / 8] |= (unsigned char)(1u << ((x) % 8)))

/* Visit node c (a child of par) in the walk: checked, marked, numbered.
** SPY_EFORMAT when it is out of range, has a bad frame or was met before
** (a loop, or a node reached twice). */
static int visit(spyR_tindex *ix, unsigned char *seen, size_t *no,
                 uint32_t c, uint32_t par) {
  const spy_profile *p = ix->p;
  if (c >= p->nnodes || SEEN(c) || p->nodes[c].frame >= p->nframes)
    return SPY_EFORMAT;
  MARK(c);
  ix->par[c] = par;
  ix->order[(*no)++] = c;
  if (par != SPY_NONE) ix->kofs[par + 1]++;
  return 0;
}

/* Pre-order walk of every process's tree without a stack: down to the
** first child, else to the next sibling, else up until a sibling. */
static int walk(spyR_tindex *ix, unsigned char *seen) {
  const spy_profile *p = ix->p;
  size_t no = 0;
  for (uint32_t k = 0; k < p->nprocesses; k++) {
    ix->oofs[k] = (uint32_t)no;
    uint32_t r = p->processes[k].root, x = r;
    int rc = visit(ix, seen, &no, r, SPY_NONE);
    while (rc == 0) {
      uint32_t c = p->nodes[x].first_child;
      if (c != SPY_NONE) {
        rc = visit(ix, seen, &no, c, x);
        x = c;
        continue;
      }
      while (x != r && p->nodes[x].next_sibling == SPY_NONE) x = ix->par[x];
      if (x == r) break;
      c = p->nodes[x].next_sibling;
      rc = visit(ix, seen, &no, c, ix->par[x]);
      x = c;
    }
    if (rc) return rc;
  }
  ix->oofs[p->nprocesses] = (uint32_t)no;
  return 0;
}

/* Children arrays, subtree totals and leaves from the walk's order. */
static int arrange(spyR_tindex *ix) {
  const spy_profile *p = ix->p;
  size_t nn = p->nnodes, no = ix->oofs[p->nprocesses];
  for (size_t i = 0; i < nn; i++) ix->kofs[i + 1] += ix->kofs[i];
  uint32_t *fill = malloc((nn + 1) * sizeof *fill);
  if (!fill) return SPY_ENOMEM;
  memcpy(fill, ix->kofs, (nn + 1) * sizeof *fill);
  size_t nl = 0;
  for (uint32_t k = 0; k < p->nprocesses; k++) {
    ix->lofs[k] = (uint32_t)nl;
    for (size_t i = ix->oofs[k]; i < ix->oofs[k + 1]; i++) {
      uint32_t x = ix->order[i], par = ix->par[x];
      const spy_node *nd = &p->nodes[x];
      ix->tot[x] = nd->self_ns;
      ix->ttal[x] = nd->self_tallies;
      if (par == SPY_NONE) continue;
      ix->kid[fill[par]++] = x;
      if (nd->self_ns || nd->self_tallies) ix->leaf[nl++] = x;
    }
  }
  ix->lofs[p->nprocesses] = (uint32_t)nl;
  free(fill);
  for (size_t i = no; i-- > 0;) {
    uint32_t x = ix->order[i], par = ix->par[x];
    if (par == SPY_NONE) continue;
    ix->tot[par] += ix->tot[x];
    ix->ttal[par] += ix->ttal[x];
  }
  return 0;
}

static int index_build(spyR_tindex *ix, const spy_profile *p) {
  size_t nn = p->nnodes, nf = p->nframes, np = p->nprocesses;
  ix->p = p;
  ix->par = malloc((nn + 1) * sizeof *ix->par);
  ix->kofs = calloc(nn + 2, sizeof *ix->kofs);
  ix->kid = malloc((nn + 1) * sizeof *ix->kid);
  ix->tot = malloc((nn + 1) * sizeof *ix->tot);
  ix->ttal = malloc((nn + 1) * sizeof *ix->ttal);
  ix->order = malloc((nn + 1) * sizeof *ix->order);
  ix->oofs = malloc((np + 1) * sizeof *ix->oofs);
  ix->leaf = malloc((nn + 1) * sizeof *ix->leaf);
  ix->lofs = malloc((np + 1) * sizeof *ix->lofs);
  ix->gmark = calloc(nf + 1, sizeof *ix->gmark);
  ix->gidx = malloc((nf + 1) * sizeof *ix->gidx);
  ix->pmark = calloc(nf + 1, sizeof *ix->pmark);
  unsigned char *seen = calloc(nn / 8 + 1, 1);
  int rc = 0;
  if (!ix->par || !ix->kofs || !ix->kid || !ix->tot || !ix->ttal ||
      !ix->order || !ix->oofs || !ix->leaf || !ix->lofs || !ix->gmark ||
      !ix->gidx || !ix->pmark || !seen)
    rc = SPY_ENOMEM;
  if (rc == 0) rc = walk(ix, seen);
  if (rc == 0) rc = arrange(ix);
  free(seen);
  return rc;
}

/* The collapsed forest. fo(x), the outermost node on x's path with x's
** frame (x itself when none; process roots never count), comes from one
** pre-order pass: the last outermost node seen with that frame is x's
** when it is an ancestor of x (pre-order intervals), else there is none.
** An outermost y hangs below fo(parent(y)); every node's self time goes to
** fo(x). */
static int collapse_build(spyR_tindex *ix) {
  const spy_profile *p = ix->p;
  size_t nn = p->nnodes, nf = p->nframes, no = ix->oofs[p->nprocesses];
  uint32_t *fo = malloc((nn + 1) * sizeof *fo);
  uint32_t *pre = malloc((nn + 1) * sizeof *pre);
  uint32_t *size = malloc((nn + 1) * sizeof *size);
  uint32_t *last = malloc((nf + 1) * sizeof *last);
  ix->cofs = calloc(nn + 2, sizeof *ix->cofs);
  ix->ckid = malloc((nn + 1) * sizeof *ix->ckid);
  ix->cself = calloc(nn + 1, sizeof *ix->cself);
  ix->cstal = calloc(nn + 1, sizeof *ix->cstal);
  ix->ctot = malloc((nn + 1) * sizeof *ix->ctot);
  ix->cttal = malloc((nn + 1) * sizeof *ix->cttal);
  int rc = 0;
  if (!fo || !pre || !size || !last || !ix->cofs || !ix->ckid ||
      !ix->cself || !ix->cstal || !ix->ctot || !ix->cttal) {
    rc = SPY_ENOMEM;
    goto out;
  }
  for (size_t i = 0; i < no; i++) {
    pre[ix->order[i]] = (uint32_t)i;
    size[ix->order[i]] = 1;
  }
  for (size_t i = no; i-- > 0;) {
    uint32_t x = ix->order[i];
    if (ix->par[x] != SPY_NONE) size[ix->par[x]] += size[x];
  }
  for (size_t f = 0; f <= nf; f++) last[f] = SPY_NONE;
  for (size_t i = 0; i < no; i++) {
    uint32_t x = ix->order[i], f = p->nodes[x].frame, y = last[f];
    if (ix->par[x] == SPY_NONE) fo[x] = x;
    else if (y != SPY_NONE && pre[y] < i && i < (size_t)pre[y] + size[y])
      fo[x] = y;
    else fo[x] = last[f] = x;
    ix->cself[fo[x]] += p->nodes[x].self_ns;
    ix->cstal[fo[x]] += p->nodes[x].self_tallies;
    if (fo[x] == x && ix->par[x] != SPY_NONE) ix->cofs[fo[ix->par[x]] + 1]++;
  }
  for (size_t i = 0; i < nn; i++) ix->cofs[i + 1] += ix->cofs[i];
  /* pre is free again: it becomes the fill pointers. */
  memcpy(pre, ix->cofs, nn * sizeof *pre);
  for (size_t i = 0; i < no; i++) {
    uint32_t x = ix->order[i];
    ix->ctot[x] = ix->cself[x];
    ix->cttal[x] = ix->cstal[x];
    if (fo[x] == x && ix->par[x] != SPY_NONE)
      ix->ckid[pre[fo[ix->par[x]]]++] = x;
  }
  for (size_t i = no; i-- > 0;) {
    uint32_t x = ix->order[i];
    if (fo[x] != x || ix->par[x] == SPY_NONE) continue;
    uint32_t up = fo[ix->par[x]];
    ix->ctot[up] += ix->ctot[x];
    ix->cttal[up] += ix->cttal[x];
  }
  ix->collapsed = 1;
out:
  free(fo), free(pre), free(size), free(last);
  return rc;
}

int spyR_tview_index(spyR_tree *t) {
  if (!t->ix || t->ix->p != t->p) {
    spyR_tview_free(t->ix);
    t->ix = calloc(1, sizeof *t->ix);
    if (!t->ix) return SPY_ENOMEM;
    int rc = index_build(t->ix, t->p);
    if (rc) {
      spyR_tview_free(t->ix);
      t->ix = NULL;
      return rc;
    }
  }
  /* The collapsed forest costs about as much as the rest of the index
  ** (tens of ms a million nodes): made with it, at open, so that `r`
  ** answers at once. */
  if (!t->ix->collapsed) return collapse_build(t->ix);
  return 0;
}

/* ------------------------------------------------------------------------
** Nodes
** --------------------------------------------------------------------- */

/* A child's id from its parent's and its frame's identity. Frames are
** identified by kind and key, which a live profiler keeps from one
** snapshot to the next, not by their index. */
static uint64_t child_id(uint64_t parent, const spy_frame *f) {
  uint64_t id = spyR_mix(parent ^ spyR_mix(((uint64_t)f->kind << 56) ^ f->key));
  return id ? id : 1;
}

/* Room for `nodes` more nodes and kids and `mems` more members. Node,
** kid and member indices are 32-bit: a view past that (the callers view
** of a huge deep profile, all made) is out of memory, not wrapped. */
static int reserve(spyR_tree *t, size_t nodes, size_t mems) {
  if (t->nn + nodes >= UINT32_MAX || t->nkid + nodes >= UINT32_MAX ||
      t->nmem + mems >= UINT32_MAX)
    return SPY_ENOMEM;
  if (t->nn + nodes > t->capn) {
    size_t cap = t->capn ? t->capn : 1024;
    while (cap < t->nn + nodes) cap *= 2;
    spyR_tnode *n = realloc(t->n, cap * sizeof *n);
    if (!n) return SPY_ENOMEM;
    t->n = n;
    t->capn = cap;
  }
  if (t->nkid + nodes > t->capkid) {
    size_t cap = t->capkid ? t->capkid : 1024;
    while (cap < t->nkid + nodes) cap *= 2;
    uint32_t *k = realloc(t->kid, cap * sizeof *k);
    if (!k) return SPY_ENOMEM;
    t->kid = k;
    t->capkid = cap;
  }
  if (t->nmem + mems > t->capmem) {
    size_t cap = t->capmem ? t->capmem : 1024;
    while (cap < t->nmem + mems) cap *= 2;
    spyR_tmem *m = realloc(t->mem, cap * sizeof *m);
    if (!m) return SPY_ENOMEM;
    t->mem = m;
    t->capmem = cap;
  }
  return 0;
}

static uint32_t new_node(spyR_tree *t, uint32_t parent, uint32_t frame) {
  uint32_t i = (uint32_t)t->nn++;
  spyR_tnode *nd = &t->n[i];
  memset(nd, 0, sizeof *nd);
  nd->frame = frame;
  nd->parent = parent;
  nd->mem = (uint32_t)t->nmem;
  if (parent != SPY_NONE) {
    nd->depth = t->n[parent].depth + 1;
    nd->id = child_id(t->n[parent].id, &t->p->frames[frame]);
  }
  return i;
}

static void add_mem(spyR_tree *t, uint32_t n, uint32_t leaf, uint32_t at) {
  t->mem[t->nmem++] = (spyR_tmem){leaf, at};
  t->n[n].nmem++;
}

/* The root id: what is browsed (process or all, inverted, collapsed) so
** that expansion in one view does not leak into another, yet returns when
** the view does. */
static uint64_t root_id(const spyR_tree *t) {
  uint64_t seed = t->process == SPYR_ALL ? UINT64_MAX - 1
                                         : t->p->processes[t->process].pid;
  uint64_t id = spyR_mix(spyR_mix(seed) ^ (uint64_t)(t->inverted ? 2 : 0) ^
                         (uint64_t)(t->collapse ? 1 : 0));
  return id ? id : 1;
}

static int selected(const spyR_tree *t, uint32_t k) {
  return t->built_process == SPYR_ALL || t->built_process == k;
}

int spyR_tview_root(spyR_tree *t) {
  const spy_profile *p = t->p;
  const spyR_tindex *ix = t->ix;
  size_t nm = 0;
  for (uint32_t k = 0; k < p->nprocesses; k++)
    if (selected(t, k))
      nm += t->built_inverted ? ix->lofs[k + 1] - ix->lofs[k] : 1;
  /* A callee view has at most a node and a member per profile node: room
  ** for all at once, so that making the whole view (E with no threshold,
  ** a search) never copies the arrays as they grow. Pages nobody touches
  ** cost nothing. */
  int rc = reserve(t, t->built_inverted ? 1 : p->nnodes + 1,
                   t->built_inverted ? nm : p->nnodes + 1);
  if (rc) return rc;
  uint32_t frame = t->built_process == SPYR_ALL
                       ? SPY_NONE
                       : p->nodes[p->processes[t->built_process].root].frame;
  uint32_t r = new_node(t, SPY_NONE, frame);
  t->n[r].id = root_id(t);
  int col = t->built_collapse && !t->built_inverted;
  for (uint32_t k = 0; k < p->nprocesses; k++) {
    if (!selected(t, k)) continue;
    uint32_t root = p->processes[k].root;
    spyR_tnode *nd = &t->n[r];
    nd->total_ns += ix->tot[root];
    nd->tallies += ix->ttal[root];
    nd->self_ns += col ? ix->cself[root] : p->nodes[root].self_ns;
    nd->self_tallies += col ? ix->cstal[root] : p->nodes[root].self_tallies;
    if (!t->built_inverted) {
      add_mem(t, r, root, root);
      continue;
    }
    for (size_t i = ix->lofs[k]; i < ix->lofs[k + 1]; i++)
      add_mem(t, r, ix->leaf[i], ix->leaf[i]);
  }
  t->n[r].src = t->n[r].nmem ? t->mem[t->n[r].mem].at : 0;
  return 0;
}

/* ------------------------------------------------------------------------
** Expansion
** --------------------------------------------------------------------- */

typedef struct groups {
  spyR_tgroup *g;
  size_t n, cap;
} groups;

static uint32_t next_stamp(spyR_tindex *ix) {
  if (++ix->stamp == 0) {
    memset(ix->gmark, 0, (ix->p->nframes + 1) * sizeof *ix->gmark);
    memset(ix->pmark, 0, (ix->p->nframes + 1) * sizeof *ix->pmark);
    ix->stamp = 1;
  }
  return ix->stamp;
}

/* The group of frame f in this expansion (stamp st), made on first use;
** its index, or SPY_NONE when out of memory. */
static uint32_t group_of(spyR_tindex *ix, groups *gs, uint32_t st, uint32_t f,
                         uint32_t src) {
  if (ix->gmark[f] == st) return ix->gidx[f];
  if (gs->n == gs->cap) {
    size_t cap = gs->cap ? 2 * gs->cap : 64;
    spyR_tgroup *g = realloc(gs->g, cap * sizeof *g);
    if (!g) return SPY_NONE;
    gs->g = g;
    gs->cap = cap;
  }
  gs->g[gs->n] = (spyR_tgroup){f, src, 0, 0, 0, 0, 0, 0};
  ix->gmark[f] = st;
  ix->gidx[f] = (uint32_t)gs->n;
  return (uint32_t)gs->n++;
}

/* The next caller of member `at` of a node whose path frames carry the
** mark st (collapsed views skip those): SPY_NONE when only the process
** root is left. also: one more frame counted as on the path. */
static uint32_t caller(const spyR_tindex *ix, int col, uint32_t at,
                       uint32_t st, uint32_t also) {
  const spy_node *nodes = ix->p->nodes;
  uint32_t x = ix->par[at];
  if (col)
    while (ix->par[x] != SPY_NONE &&
           (ix->pmark[nodes[x].frame] == st || nodes[x].frame == also))
      x = ix->par[x];
  return ix->par[x] == SPY_NONE ? SPY_NONE : x;
}

/* Lay the groups out as n's children, with room for their members. */
static int make_kids(spyR_tree *t, uint32_t n, groups *gs) {
  size_t nm = 0;
  for (size_t j = 0; j < gs->n; j++) nm += gs->g[j].count;
  int rc = reserve(t, gs->n, nm);
  if (rc) return rc;
  t->n[n].kids = (uint32_t)t->nkid;
  t->n[n].nkids = (uint32_t)gs->n;
  for (size_t j = 0; j < gs->n; j++) {
    spyR_tgroup *g = &gs->g[j];
    uint32_t c = new_node(t, n, g->frame);
    spyR_tnode *nd = &t->n[c];
    nd->src = g->src;
    nd->total_ns = g->total, nd->self_ns = g->self;
    nd->tallies = g->tallies, nd->self_tallies = g->stal;
    t->nmem += g->count; /* filled by the second pass */
    g->node = c;
    t->kid[t->nkid++] = c;
  }
  return 0;
}

/* Plain and collapsed views: the members' children by frame. */
static int expand_down(spyR_tree *t, uint32_t n, groups *gs) {
  spyR_tindex *ix = t->ix;
  const spy_node *nodes = t->p->nodes;
  int col = t->built_collapse;
  const uint32_t *ofs = col ? ix->cofs : ix->kofs;
  const uint32_t *kid = col ? ix->ckid : ix->kid;
  const uint64_t *tot = col ? ix->ctot : ix->tot;
  const uint64_t *tal = col ? ix->cttal : ix->ttal;
  uint32_t st = next_stamp(ix);
  uint32_t m0 = t->n[n].mem, nm = t->n[n].nmem;
  for (uint32_t i = m0; i < m0 + nm; i++) {
    uint32_t x = t->mem[i].at;
    for (uint32_t k = ofs[x]; k < ofs[x + 1]; k++) {
      uint32_t c = kid[k];
      uint32_t j = group_of(ix, gs, st, nodes[c].frame, c);
      if (j == SPY_NONE) return SPY_ENOMEM;
      spyR_tgroup *g = &gs->g[j];
      g->count++;
      g->total += tot[c];
      g->tallies += tal[c];
      g->self += col ? ix->cself[c] : nodes[c].self_ns;
      g->stal += col ? ix->cstal[c] : nodes[c].self_tallies;
    }
  }
  int rc = make_kids(t, n, gs);
  if (rc) return rc;
  for (uint32_t i = m0; i < m0 + nm; i++) {
    uint32_t x = t->mem[i].at;
    for (uint32_t k = ofs[x]; k < ofs[x + 1]; k++) {
      uint32_t c = kid[k];
      uint32_t node = gs->g[ix->gidx[nodes[c].frame]].node;
      spyR_tnode *nd = &t->n[node];
      t->mem[nd->mem + nd->nmem++] = (spyR_tmem){c, c};
    }
  }
  return 0;
}

/* Inverted views: each member's next caller by frame (the root's members
** are the leaves themselves: their own frame comes first). A child's self
** time is its members with no caller left beyond it. */
static int expand_up(spyR_tree *t, uint32_t n, groups *gs) {
  spyR_tindex *ix = t->ix;
  const spy_node *nodes = t->p->nodes;
  int col = t->built_collapse;
  uint32_t m0 = t->n[n].mem, nm = t->n[n].nmem;
  if (nm > ix->capscr) {
    uint32_t *s = realloc(ix->scr, nm * sizeof *s);
    if (!s) return SPY_ENOMEM;
    ix->scr = s;
    ix->capscr = nm;
  }
  uint32_t pst = next_stamp(ix);
  if (col)
    for (uint32_t a = n; a != SPY_NONE && t->n[a].depth > 0; a = t->n[a].parent)
      ix->pmark[t->n[a].frame] = pst;
  uint32_t st = next_stamp(ix);
  for (uint32_t i = 0; i < nm; i++) {
    spyR_tmem m = t->mem[m0 + i];
    uint32_t x = n == 0 ? m.at : caller(ix, col, m.at, pst, SPY_NONE);
    ix->scr[i] = x;
    if (x == SPY_NONE) continue;
    uint32_t j = group_of(ix, gs, st, nodes[x].frame, x);
    if (j == SPY_NONE) return SPY_ENOMEM;
    spyR_tgroup *g = &gs->g[j];
    g->count++;
    g->total += nodes[m.leaf].self_ns;
    g->tallies += nodes[m.leaf].self_tallies;
    if (caller(ix, col, x, pst, nodes[x].frame) == SPY_NONE) {
      g->self += nodes[m.leaf].self_ns;
      g->stal += nodes[m.leaf].self_tallies;
    }
  }
  int rc = make_kids(t, n, gs);
  if (rc) return rc;
  for (uint32_t i = 0; i < nm; i++) {
    uint32_t x = ix->scr[i];
    if (x == SPY_NONE) continue;
    spyR_tnode *nd = &t->n[gs->g[ix->gidx[nodes[x].frame]].node];
    t->mem[nd->mem + nd->nmem++] = (spyR_tmem){t->mem[m0 + i].leaf, x};
  }
  return 0;
}

int spyR_tview_expand(spyR_tree *t, uint32_t n) {
  if (n >= t->nn || t->n[n].known) return 0;
  /* The groups' array is kept from one expansion to the next: most nodes
  ** have a child or two, and a million of them are made for a search. */
  groups gs = {t->ix->grp, 0, t->ix->capgrp};
  int rc = t->built_inverted ? expand_up(t, n, &gs) : expand_down(t, n, &gs);
  t->ix->grp = gs.g;
  t->ix->capgrp = gs.cap;
  if (rc == 0) t->n[n].known = 1;
  return rc;
}

void spyR_tview_leaves(const spyR_tree *t, spy_leaf *lv) {
  const spy_profile *p = t->p;
  const spyR_tindex *ix = t->ix;
  if (!ix) return;
  for (uint32_t k = 0; k < p->nprocesses; k++) {
    if (!selected(t, k)) continue;
    for (size_t i = ix->lofs[k]; i < ix->lofs[k + 1]; i++) {
      const spy_node *nd = &p->nodes[ix->leaf[i]];
      lv[nd->frame].self_ns += nd->self_ns;
      lv[nd->frame].self_tallies += nd->self_tallies;
    }
    /* A single process's root is a node of the callee tree. */
    if (t->built_process != SPYR_ALL && !t->built_inverted) {
      const spy_node *nd = &p->nodes[p->processes[k].root];
      lv[nd->frame].self_ns += nd->self_ns;
      lv[nd->frame].self_tallies += nd->self_tallies;
    }
  }
}
