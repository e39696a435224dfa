/*
** report/tree.c: the browsable call tree of report/tree.h.
**
** Building walks the selected processes' trees once, iteratively (a deep
** recursive profile cannot overflow the C stack) with a visited bitmap (a
** malformed profile whose links loop gives SPY_EFORMAT, never a hang), and
** maps each profile node to a model node through a hash table keyed by
** (model parent, frame): that one mechanism merges processes, inverts
** paths and collapses recursion. Everything after the build (sorting,
** filtering, expansion, search, flattening) works on the model alone.
*/
#include "config.h"

#include "report/tree.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------------
** Small pieces: id hashing, a set of ids, the (parent, frame) map
** --------------------------------------------------------------------- */

/* splitmix64's finalizer: ids of siblings and of the same frame at other
** depths must differ, and a 64-bit mix makes collisions negligible. */
static uint64_t mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15u;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9u;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebu;
  return x ^ (x >> 31);
}

/* A child's id from its parent's and its frame's identity. Frames are
** identified by kind and key, which a live profiler keeps from one
** snapshot to the next, not by their index. */
static uint64_t child_id(uint64_t parent, const spy_frame *f) {
  uint64_t id = mix(parent ^ mix(((uint64_t)f->kind << 56) ^ f->key));
  return id ? id : 1;
}

static int hset_has(const spyR_hset *h, uint64_t id) {
  if (!h->cap) return 0;
  size_t m = h->cap - 1;
  for (size_t i = (size_t)mix(id) & m;; i = (i + 1) & m) {
    if (h->slot[i] == id) return 1;
    if (!h->slot[i]) return 0;
  }
}

static int hset_grow(spyR_hset *h) {
  size_t cap = h->cap ? 2 * h->cap : 64;
  uint64_t *s = calloc(cap, sizeof *s);
  if (!s) return SPY_ENOMEM;
  for (size_t j = 0; j < h->cap; j++) {
    uint64_t id = h->slot[j];
    if (!id) continue;
    size_t i = (size_t)mix(id) & (cap - 1);
    while (s[i]) i = (i + 1) & (cap - 1);
    s[i] = id;
  }
  free(h->slot);
  h->slot = s;
  h->cap = cap;
  return 0;
}

static int hset_add(spyR_hset *h, uint64_t id) {
  if (hset_has(h, id)) return 0;
  if (2 * (h->n + 1) > h->cap && hset_grow(h) < 0) return SPY_ENOMEM;
  size_t m = h->cap - 1, i = (size_t)mix(id) & m;
  while (h->slot[i]) i = (i + 1) & m;
  h->slot[i] = id;
  h->n++;
  return 0;
}

/* Deletion with backward shift, so lookups need no tombstones. */
static void hset_del(spyR_hset *h, uint64_t id) {
  if (!h->cap) return;
  size_t m = h->cap - 1, i = (size_t)mix(id) & m;
  while (h->slot[i] != id) {
    if (!h->slot[i]) return;
    i = (i + 1) & m;
  }
  h->slot[i] = 0;
  h->n--;
  for (size_t j = (i + 1) & m; h->slot[j]; j = (j + 1) & m) {
    size_t home = (size_t)mix(h->slot[j]) & m;
    /* Move slot j into the hole when its home is not in (i, j]. */
    if ((j > i && (home <= i || home > j)) || (j < i && home <= i && home > j)) {
      h->slot[i] = h->slot[j];
      h->slot[j] = 0;
      i = j;
    }
  }
}

static void hset_clear(spyR_hset *h) {
  if (h->cap) memset(h->slot, 0, h->cap * sizeof *h->slot);
  h->n = 0;
}

/* The build's map (model parent, frame index) -> model child. */
typedef struct cmap {
  uint64_t *key; /* (parent + 1) << 32 | frame; 0 empty */
  uint32_t *val;
  size_t cap, n;
} cmap;

static int cmap_grow(cmap *c) {
  size_t cap = c->cap ? 2 * c->cap : 1024;
  uint64_t *k = calloc(cap, sizeof *k);
  uint32_t *v = malloc(cap * sizeof *v);
  if (!k || !v) {
    free(k);
    free(v);
    return SPY_ENOMEM;
  }
  for (size_t j = 0; j < c->cap; j++) {
    if (!c->key[j]) continue;
    size_t i = (size_t)mix(c->key[j]) & (cap - 1);
    while (k[i]) i = (i + 1) & (cap - 1);
    k[i] = c->key[j];
    v[i] = c->val[j];
  }
  free(c->key);
  free(c->val);
  c->key = k;
  c->val = v;
  c->cap = cap;
  return 0;
}

/* ------------------------------------------------------------------------
** Life cycle
** --------------------------------------------------------------------- */

void spyR_tree_init(spyR_tree *t, const spy_profile *p) {
  memset(t, 0, sizeof *t);
  t->p = p;
  t->process = p && p->nprocesses == 1 ? 0 : SPYR_ALL;
  t->sort = SPYR_SORT_TOTAL;
}

static void built_free(spyR_built *b) {
  free(b->n);
  free(b->kid);
  free(b->src);
  memset(b, 0, sizeof *b);
}

void spyR_tree_forget(spyR_tree *t) {
  for (int i = 0; i < SPYR_CACHE; i++) built_free(&t->cache[i]);
  free(t->hit_query);
  t->hit_query = NULL;
  t->hit_p = NULL;
}

void spyR_tree_free(spyR_tree *t) {
  if (!t) return;
  spyR_tree_forget(t);
  free(t->n);
  free(t->kid);
  free(t->flip.slot);
  free(t->focus);
  free(t->row);
  free(t->query);
  free(t->match);
  free(t->frame_hit);
  free(t->src);
  free(t->islast);
  spyR_buf_free(&t->lab);
  memset(t, 0, sizeof *t);
}

/* ------------------------------------------------------------------------
** Building
** --------------------------------------------------------------------- */

typedef struct builder {
  spyR_tree *t;
  size_t capn;
  cmap map;
} builder;

static uint32_t new_node(builder *b, uint32_t parent, uint32_t frame,
                         uint32_t src) {
  spyR_tree *t = b->t;
  if (t->nn == b->capn) {
    size_t cap = b->capn ? 2 * b->capn : 1024;
    spyR_tnode *n = realloc(t->n, cap * sizeof *n);
    uint32_t *s = realloc(t->src, cap * sizeof *s);
    if (s) t->src = s;
    if (n) t->n = n;
    if (!n || !s) return SPY_NONE;
    b->capn = cap;
  }
  uint32_t i = (uint32_t)t->nn++;
  spyR_tnode *nd = &t->n[i];
  memset(nd, 0, sizeof *nd);
  nd->frame = frame;
  nd->parent = parent;
  if (parent != SPY_NONE) {
    nd->depth = t->n[parent].depth + 1;
    nd->id = child_id(t->n[parent].id, &t->p->frames[frame]);
  }
  t->src[i] = src;
  return i;
}

/* The child of model node `parent` with frame `frame`, made on first use
** (src: the profile node it is made from, for ordering ties like the text
** report). SPY_NONE when out of memory. */
static uint32_t child_of(builder *b, uint32_t parent, uint32_t frame,
                         uint32_t src) {
  cmap *c = &b->map;
  if (2 * (c->n + 1) > c->cap && cmap_grow(c) < 0) return SPY_NONE;
  uint64_t key = ((uint64_t)parent + 1) << 32 | frame;
  size_t m = c->cap - 1, i = (size_t)mix(key) & m;
  while (c->key[i]) {
    if (c->key[i] == key) return c->val[i];
    i = (i + 1) & m;
  }
  uint32_t n = new_node(b, parent, frame, src);
  if (n == SPY_NONE) return n;
  c->key[i] = key;
  c->val[i] = n;
  c->n++;
  return n;
}

/* One open level of the profile walk. */
typedef struct pent {
  uint32_t pnode, model, next, setframe;
} pent;

/* Walk one process's tree into the model. Normal: each profile node adds
** its self time to the model node of its path (recursion folded into the
** outermost frame when collapsing). Inverted: each profile node with self
** time adds it along the reversed path from the root. */
static int add_process(builder *b, uint32_t proc, unsigned char *seen,
                       uint32_t *onpath, uint32_t *stamp, uint32_t *walkno,
                       pent **stk, size_t *capstk) {
  spyR_tree *t = b->t;
  const spy_profile *p = t->p;
  uint32_t root = p->processes[proc].root;
  if (root >= p->nnodes) return SPY_EFORMAT;
  if (seen[root / 8] & (1u << (root % 8))) return SPY_EFORMAT;
  seen[root / 8] |= (unsigned char)(1u << (root % 8));
  t->n[0].self_ns += p->nodes[root].self_ns;
  t->n[0].self_tallies += p->nodes[root].self_tallies;
  size_t sp = 0;
  pent *s = *stk;
  s[sp++] = (pent){root, 0, p->nodes[root].first_child, SPY_NONE};
  while (sp > 0) {
    pent *e = &s[sp - 1];
    if (e->next == SPY_NONE) {
      if (e->setframe != SPY_NONE) onpath[e->setframe] = SPY_NONE;
      sp--;
      continue;
    }
    uint32_t c = e->next;
    if (c >= p->nnodes) return SPY_EFORMAT;
    e->next = p->nodes[c].next_sibling;
    if (seen[c / 8] & (1u << (c % 8))) return SPY_EFORMAT;
    seen[c / 8] |= (unsigned char)(1u << (c % 8));
    const spy_node *pn = &p->nodes[c];
    uint32_t f = pn->frame;
    if (f >= p->nframes) return SPY_EFORMAT;
    uint32_t target = e->model, set = SPY_NONE;
    if (!t->inverted) {
      if (t->collapse && onpath[f] != SPY_NONE) {
        target = onpath[f];
      } else {
        target = child_of(b, e->model, f, c);
        if (target == SPY_NONE) return SPY_ENOMEM;
        if (t->collapse) {
          onpath[f] = target;
          set = f;
        }
      }
      t->n[target].self_ns += pn->self_ns;
      t->n[target].self_tallies += pn->self_tallies;
    }
    if (sp == *capstk) {
      size_t cap = 2 * *capstk;
      pent *ns = realloc(s, cap * sizeof *ns);
      if (!ns) return SPY_ENOMEM;
      *stk = s = ns;
      *capstk = cap;
    }
    s[sp++] = (pent){c, target, pn->first_child, set};
    if (t->inverted && (pn->self_ns || pn->self_tallies)) {
      /* The reversed path: this node, its parent, ... up to (not
      ** including) the process root, which is s[0]. */
      uint32_t cur = 0, w = ++*walkno;
      for (size_t i = sp; i-- > 1;) {
        uint32_t fr = p->nodes[s[i].pnode].frame;
        if (t->collapse) {
          if (stamp[fr] == w) continue;
          stamp[fr] = w;
        }
        cur = child_of(b, cur, fr, s[i].pnode);
        if (cur == SPY_NONE) return SPY_ENOMEM;
      }
      t->n[cur].self_ns += pn->self_ns;
      t->n[cur].self_tallies += pn->self_tallies;
    }
  }
  return 0;
}

typedef struct skey {
  uint64_t k;
  uint32_t src, node;
} skey;

static int skey_cmp(const void *a, const void *b) {
  const skey *x = a, *y = b;
  if (x->k != y->k) return x->k < y->k ? -1 : 1;
  if (x->src != y->src) return x->src < y->src ? -1 : 1;
  return (x->node > y->node) - (x->node < y->node);
}

typedef struct flab {
  char *lab;
  uint32_t frame;
} flab;

static int flab_cmp(const void *a, const void *b) {
  const flab *x = a, *y = b;
  int d = strcmp(x->lab, y->lab);
  return d ? d : (x->frame > y->frame) - (x->frame < y->frame);
}

/* Sorting by name sorts numbers: every frame's rank in label order
** (rank[frame]; byte-wise strcmp, so stable). NULL when out of memory. */
static uint32_t *frame_ranks(spyR_tree *t) {
  const spy_profile *p = t->p;
  size_t nf = p->nframes;
  flab *fl = calloc(nf + 1, sizeof *fl);
  uint32_t *rank = malloc((nf + 1) * sizeof *rank);
  size_t i = 0;
  if (!fl || !rank) goto fail;
  for (; i < nf; i++) {
    spyR_buf_clear(&t->lab);
    spyR_label(&t->lab, p, (uint32_t)i);
    fl[i] = (flab){strdup(spyR_buf_str(&t->lab)), (uint32_t)i};
    if (!fl[i].lab) goto fail;
  }
  qsort(fl, nf, sizeof *fl, flab_cmp);
  for (size_t j = 0; j < nf; j++) {
    rank[fl[j].frame] = (uint32_t)j;
    free(fl[j].lab);
  }
  free(fl);
  return rank;
fail:
  for (size_t j = 0; fl && j < i; j++) free(fl[j].lab);
  free(fl);
  free(rank);
  return NULL;
}

/* Order every child list by t->sort, then number the nodes in pre-order
** and mark the last visible child of each parent. */
static int sort_kids(spyR_tree *t) {
  uint32_t *rank = NULL;
  if (t->sort == SPYR_SORT_NAME && !(rank = frame_ranks(t))) return SPY_ENOMEM;
  size_t maxk = 0;
  for (size_t i = 0; i < t->nn; i++)
    if (t->n[i].nkids > maxk) maxk = t->n[i].nkids;
  skey *k = malloc((maxk + 1) * sizeof *k);
  if (!k) {
    free(rank);
    return SPY_ENOMEM;
  }
  for (size_t i = 0; i < t->nn; i++) {
    spyR_tnode *nd = &t->n[i];
    if (nd->nkids < 2) continue;
    uint32_t *kid = t->kid + nd->kids;
    for (uint32_t j = 0; j < nd->nkids; j++) {
      const spyR_tnode *c = &t->n[kid[j]];
      uint64_t key = t->sort == SPYR_SORT_TOTAL  ? UINT64_MAX - c->total_ns
                     : t->sort == SPYR_SORT_SELF ? UINT64_MAX - c->self_ns
                     : c->frame == SPY_NONE      ? 0
                                                 : rank[c->frame];
      k[j] = (skey){key, t->src[kid[j]], kid[j]};
    }
    if (nd->nkids <= 12) {
      for (uint32_t j = 1; j < nd->nkids; j++) {
        skey x = k[j];
        uint32_t m = j;
        while (m > 0 && skey_cmp(&k[m - 1], &x) > 0) {
          k[m] = k[m - 1];
          m--;
        }
        k[m] = x;
      }
    } else {
      qsort(k, nd->nkids, sizeof *k, skey_cmp);
    }
    for (uint32_t j = 0; j < nd->nkids; j++) kid[j] = k[j].node;
  }
  free(k);
  free(rank);
  /* Pre-order numbers, iteratively: a stack of (node, next kid). */
  uint32_t *stk = malloc(2 * (t->nn + 1) * sizeof *stk);
  if (!stk) return SPY_ENOMEM;
  size_t sp = 0;
  uint32_t pre = 0;
  t->n[0].pre = pre++;
  stk[sp++] = 0, stk[sp++] = 0;
  while (sp) {
    uint32_t n = stk[sp - 2], j = stk[sp - 1];
    if (j == t->n[n].nkids) {
      sp -= 2;
      continue;
    }
    stk[sp - 1]++;
    uint32_t c = t->kid[t->n[n].kids + j];
    t->n[c].pre = pre++;
    stk[sp++] = c, stk[sp++] = 0;
  }
  free(stk);
  return 0;
}

/* Mark the last child of each parent that passes the threshold, for the
** guides. */
static void mark_last(spyR_tree *t) {
  memset(t->islast, 0, t->nn);
  for (size_t i = 0; i < t->nn; i++) {
    const spyR_tnode *nd = &t->n[i];
    for (uint32_t j = nd->nkids; j-- > 0;) {
      uint32_t c = t->kid[nd->kids + j];
      if (spyR_tree_shown(t, c)) {
        t->islast[c] = 1;
        break;
      }
    }
  }
}

static int flatten(spyR_tree *t);
static int research(spyR_tree *t);
static uint32_t find_id(const spyR_tree *t, uint64_t id);
static void resolve_top(spyR_tree *t);

/* After the nodes are in place: visibility, focus, rows, the cursor back
** on its node, the search. */
static int finish(spyR_tree *t, uint64_t cur_id, size_t cur_row) {
  t->base_ns = spyR_base_ns(t->p);
  t->min_ns = t->threshold_pct > 0
                  ? t->threshold_pct / 100.0 * (double)t->base_ns
                  : 0;
  mark_last(t);
  resolve_top(t);
  int rc = flatten(t);
  if (rc) return rc;
  t->cursor = cur_row < t->nrows ? cur_row : t->nrows ? t->nrows - 1 : 0;
  if (cur_id) {
    uint32_t n = find_id(t, cur_id);
    for (size_t r = 0; n != SPY_NONE && r < t->nrows; r++)
      if (t->row[r].node == n) {
        t->cursor = r;
        break;
      }
  }
  return research(t);
}

/* Take an earlier build back (sorting it again if the order changed). */
static int adopt(spyR_tree *t, spyR_built *b, uint64_t cur_id,
                 size_t cur_row) {
  t->n = b->n, t->nn = b->nn, t->kid = b->kid, t->src = b->src;
  t->built_p = b->p, t->built_process = b->process;
  t->built_inverted = b->inverted, t->built_collapse = b->collapse;
  t->built_sort = t->sort;
  t->islast = malloc(t->nn + 1);
  int rc = t->islast ? 0 : SPY_ENOMEM;
  if (rc == 0 && b->sort != t->sort) rc = sort_kids(t);
  if (rc == 0) rc = finish(t, cur_id, cur_row);
  if (rc) {
    free(t->n), free(t->kid), free(t->src), free(t->islast);
    t->n = NULL, t->kid = NULL, t->src = NULL, t->islast = NULL;
    t->nn = 0, t->nrows = 0, t->cursor = 0, t->top = 0, t->nmatch = 0;
  }
  return rc;
}

/* The root id: what is browsed (process or all, inverted, collapsed) so
** that expansion in one view does not leak into another, yet returns when
** the view does. */
static uint64_t root_id(const spyR_tree *t) {
  uint64_t seed = t->process == SPYR_ALL ? UINT64_MAX - 1
                                         : t->p->processes[t->process].pid;
  uint64_t id = mix(mix(seed) ^ (uint64_t)(t->inverted ? 2 : 0) ^
                    (uint64_t)(t->collapse ? 1 : 0));
  return id ? id : 1;
}

/* Which node the focus stack resolves to (its deepest id that exists). */
static void resolve_top(spyR_tree *t) {
  t->top = 0;
  for (size_t i = t->nfocus; i-- > 0;) {
    uint32_t n = find_id(t, t->focus[i]);
    if (n != SPY_NONE) {
      t->top = n;
      return;
    }
  }
}

int spyR_tree_build(spyR_tree *t) {
  const spy_profile *p = t->p;
  if (!p) return SPY_EINVAL;
  if (t->process != SPYR_ALL && t->process >= p->nprocesses)
    return SPY_EINVAL;
  uint64_t cur_id = 0;
  uint32_t cn = spyR_tree_cur(t);
  if (cn != SPY_NONE) cur_id = t->n[cn].id;
  size_t cur_row = t->cursor;
  /* Keep the current build for a quick way back; reuse an earlier one
  ** for this view if there is one. */
  spyR_built now = {t->built_p, t->built_process, t->built_inverted,
                    t->built_collapse, t->built_sort, t->n, t->nn, t->kid,
                    t->src};
  spyR_built reuse = {0};
  for (int i = 0; i < SPYR_CACHE; i++) {
    spyR_built *c = &t->cache[i];
    if (c->n && c->p == p && c->process == t->process &&
        c->inverted == t->inverted && c->collapse == t->collapse) {
      reuse = *c;
      memmove(c, c + 1, (size_t)(SPYR_CACHE - 1 - i) * sizeof *c);
      memset(&t->cache[SPYR_CACHE - 1], 0, sizeof *c);
      break;
    }
  }
  if (now.n && now.p == p) {
    built_free(&t->cache[SPYR_CACHE - 1]);
    memmove(&t->cache[1], &t->cache[0], (SPYR_CACHE - 1) * sizeof now);
    t->cache[0] = now;
  } else {
    built_free(&now);
  }
  free(t->islast);
  t->n = NULL, t->kid = NULL, t->src = NULL, t->islast = NULL;
  t->nn = 0;
  t->nrows = 0;
  if (reuse.n) return adopt(t, &reuse, cur_id, cur_row);
  builder b = {t, 0, {0}};
  unsigned char *seen = calloc(p->nnodes / 8 + 1, 1);
  uint32_t *onpath = malloc((p->nframes + 1) * sizeof *onpath);
  uint32_t *stamp = calloc(p->nframes + 1, sizeof *stamp);
  size_t capstk = 64;
  pent *stk = malloc(capstk * sizeof *stk);
  uint32_t walkno = 0;
  int rc = 0;
  if (!seen || !onpath || !stamp || !stk) {
    rc = SPY_ENOMEM;
    goto out;
  }
  for (size_t i = 0; i <= p->nframes; i++) onpath[i] = SPY_NONE;
  /* Size the map for the profile's nodes at once: rehashing a million
  ** entries several times over would double the build. */
  while (b.map.cap < 2 * p->nnodes + 2 && rc == 0) rc = cmap_grow(&b.map);
  if (rc) goto out;
  uint32_t rootframe = SPY_NONE;
  if (t->process != SPYR_ALL) {
    uint32_t r = p->processes[t->process].root;
    if (r >= p->nnodes || p->nodes[r].frame >= p->nframes) {
      rc = SPY_EFORMAT;
      goto out;
    }
    rootframe = p->nodes[r].frame;
  }
  if (new_node(&b, SPY_NONE, rootframe, 0) == SPY_NONE) {
    rc = SPY_ENOMEM;
    goto out;
  }
  t->n[0].id = root_id(t);
  for (uint32_t i = 0; i < p->nprocesses && rc == 0; i++)
    if (t->process == SPYR_ALL || t->process == i)
      rc = add_process(&b, i, seen, onpath, stamp, &walkno, &stk, &capstk);
  if (rc) goto out;
  /* Totals from self times, children before parents (children always
  ** have larger indices). */
  for (size_t i = 0; i < t->nn; i++) {
    t->n[i].total_ns = t->n[i].self_ns;
    t->n[i].tallies = t->n[i].self_tallies;
  }
  for (size_t i = t->nn; i-- > 1;) {
    spyR_tnode *c = &t->n[i], *par = &t->n[c->parent];
    par->total_ns += c->total_ns;
    par->tallies += c->tallies;
    par->nkids++;
  }
  t->kid = malloc((t->nn + 1) * sizeof *t->kid);
  t->islast = malloc(t->nn + 1);
  if (!t->kid || !t->islast) {
    rc = SPY_ENOMEM;
    goto out;
  }
  uint32_t off = 0;
  for (size_t i = 0; i < t->nn; i++) {
    t->n[i].kids = off;
    off += t->n[i].nkids;
    t->n[i].nkids = 0;
  }
  for (size_t i = 1; i < t->nn; i++) {
    spyR_tnode *par = &t->n[t->n[i].parent];
    t->kid[par->kids + par->nkids++] = (uint32_t)i;
  }
  if ((rc = sort_kids(t)) != 0) goto out;
  t->built_p = p, t->built_process = t->process, t->built_sort = t->sort;
  t->built_inverted = t->inverted, t->built_collapse = t->collapse;
  rc = finish(t, cur_id, cur_row);
out:
  free(b.map.key);
  free(b.map.val);
  free(seen);
  free(onpath);
  free(stamp);
  free(stk);
  if (rc) {
    free(t->n);
    free(t->kid);
    free(t->src);
    free(t->islast);
    t->n = NULL, t->kid = NULL, t->src = NULL, t->islast = NULL;
    t->nn = 0, t->nrows = 0, t->cursor = 0, t->top = 0, t->nmatch = 0;
  }
  return rc;
}

/* ------------------------------------------------------------------------
** Visibility, rows
** --------------------------------------------------------------------- */

int spyR_tree_shown(const spyR_tree *t, uint32_t n) {
  return t->min_ns <= 0 || (double)t->n[n].total_ns >= t->min_ns;
}

int spyR_tree_expanded(const spyR_tree *t, uint32_t n) {
  return t->all_expanded != hset_has(&t->flip, t->n[n].id);
}

size_t spyR_tree_nshown(const spyR_tree *t, uint32_t n) {
  size_t k = 0;
  for (uint32_t j = 0; j < t->n[n].nkids; j++)
    k += spyR_tree_shown(t, t->kid[t->n[n].kids + j]) != 0;
  return k;
}

uint32_t spyR_tree_cur(const spyR_tree *t) {
  return t->cursor < t->nrows ? t->row[t->cursor].node : SPY_NONE;
}

static uint32_t find_id(const spyR_tree *t, uint64_t id) {
  for (size_t i = 0; i < t->nn; i++)
    if (t->n[i].id == id) return (uint32_t)i;
  return SPY_NONE;
}

static int push_row(spyR_tree *t, uint32_t n, uint32_t depth) {
  if (t->nrows == t->caprows) {
    size_t cap = t->caprows ? 2 * t->caprows : 256;
    spyR_trow *r = realloc(t->row, cap * sizeof *r);
    if (!r) return SPY_ENOMEM;
    t->row = r;
    t->caprows = cap;
  }
  t->row[t->nrows++] = (spyR_trow){n, depth};
  return 0;
}

/* The rows: the shown, expanded part below the top in reading order. The
** stack holds (node, next kid) pairs. */
static int flatten(spyR_tree *t) {
  t->nrows = 0;
  if (!t->nn) return 0;
  uint32_t top = t->top;
  size_t cap = 64, sp = 0;
  uint32_t *stk = malloc(cap * sizeof *stk);
  if (!stk) return SPY_ENOMEM;
  stk[sp++] = top, stk[sp++] = 0;
  uint32_t base = t->n[top].depth + 1;
  while (sp) {
    uint32_t n = stk[sp - 2], j = stk[sp - 1];
    if (j == t->n[n].nkids) {
      sp -= 2;
      continue;
    }
    stk[sp - 1]++;
    uint32_t c = t->kid[t->n[n].kids + j];
    if (!spyR_tree_shown(t, c)) continue;
    if (push_row(t, c, t->n[c].depth - base) < 0) {
      free(stk);
      return SPY_ENOMEM;
    }
    if (t->n[c].nkids && spyR_tree_expanded(t, c)) {
      if (sp + 2 > cap) {
        uint32_t *ns = realloc(stk, 2 * cap * sizeof *ns);
        if (!ns) {
          free(stk);
          return SPY_ENOMEM;
        }
        stk = ns;
        cap *= 2;
      }
      stk[sp++] = c, stk[sp++] = 0;
    }
  }
  free(stk);
  return 0;
}

/* Re-flatten, keeping the cursor on the node it was on (or its nearest
** shown ancestor, or the same row number). */
static int reflatten(spyR_tree *t) {
  uint32_t cn = spyR_tree_cur(t);
  size_t old = t->cursor;
  int rc = flatten(t);
  if (rc) return rc;
  t->cursor = old < t->nrows ? old : t->nrows ? t->nrows - 1 : 0;
  for (; cn != SPY_NONE && cn != t->top; cn = t->n[cn].parent)
    for (size_t r = 0; r < t->nrows; r++)
      if (t->row[r].node == cn) {
        t->cursor = r;
        return 0;
      }
  return 0;
}

int spyR_tree_resort(spyR_tree *t) {
  if (!t->nn) return 0;
  t->built_sort = t->sort;
  int rc = sort_kids(t);
  if (rc) return rc;
  mark_last(t);
  if ((rc = reflatten(t)) != 0) return rc;
  return research(t);
}

int spyR_tree_refilter(spyR_tree *t) {
  t->min_ns = t->threshold_pct > 0
                  ? t->threshold_pct / 100.0 * (double)t->base_ns
                  : 0;
  if (!t->nn) return 0;
  mark_last(t);
  int rc = reflatten(t);
  if (rc) return rc;
  return research(t);
}

/* ------------------------------------------------------------------------
** Expansion and focus
** --------------------------------------------------------------------- */

/* Set n's state without re-flattening. */
static int set1(spyR_tree *t, uint32_t n, int on) {
  uint64_t id = t->n[n].id;
  int flip = (on != 0) != (t->all_expanded != 0);
  if (flip) return hset_add(&t->flip, id);
  hset_del(&t->flip, id);
  return 0;
}

int spyR_tree_set(spyR_tree *t, uint32_t n, int on) {
  if (n >= t->nn) return 0;
  int rc = set1(t, n, on);
  return rc ? rc : reflatten(t);
}

int spyR_tree_subtree(spyR_tree *t, uint32_t n, int on) {
  if (n >= t->nn) return 0;
  /* Descendants by a stack of nodes (pre-order is not needed). */
  size_t cap = 64, sp = 0;
  uint32_t *stk = malloc(cap * sizeof *stk);
  if (!stk) return SPY_ENOMEM;
  stk[sp++] = n;
  int rc = 0;
  while (sp && rc == 0) {
    uint32_t m = stk[--sp];
    if (t->n[m].nkids) rc = set1(t, m, on);
    if (sp + t->n[m].nkids > cap) {
      size_t nc = 2 * (sp + t->n[m].nkids);
      uint32_t *ns = realloc(stk, nc * sizeof *ns);
      if (!ns) {
        rc = SPY_ENOMEM;
        break;
      }
      stk = ns;
      cap = nc;
    }
    for (uint32_t j = 0; j < t->n[m].nkids; j++)
      stk[sp++] = t->kid[t->n[m].kids + j];
  }
  free(stk);
  return rc ? rc : reflatten(t);
}

int spyR_tree_all(spyR_tree *t, int on) {
  t->all_expanded = on != 0;
  hset_clear(&t->flip);
  return reflatten(t);
}

int spyR_tree_open_heavy(spyR_tree *t, double pct) {
  double min = pct / 100.0 * (double)t->base_ns;
  for (size_t i = 0; i < t->nn; i++)
    if (t->n[i].nkids && (double)t->n[i].total_ns >= min) {
      int rc = set1(t, (uint32_t)i, 1);
      if (rc) return rc;
    }
  return reflatten(t);
}

int spyR_tree_focus(spyR_tree *t, uint32_t n) {
  if (n >= t->nn || n == t->top || !t->n[n].nkids) return 1;
  if (t->nfocus == t->capfocus) {
    size_t cap = t->capfocus ? 2 * t->capfocus : 8;
    uint64_t *f = realloc(t->focus, cap * sizeof *f);
    if (!f) return SPY_ENOMEM;
    t->focus = f;
    t->capfocus = cap;
  }
  t->focus[t->nfocus++] = t->n[n].id;
  t->top = n;
  int rc = set1(t, n, 1);
  if (!rc) rc = flatten(t);
  t->cursor = 0;
  return rc ? rc : research(t);
}

int spyR_tree_unfocus(spyR_tree *t) {
  if (!t->nfocus) return 1;
  uint32_t was = t->top;
  t->nfocus--;
  resolve_top(t);
  int rc = flatten(t);
  if (rc) return rc;
  /* Put the cursor back on the node that was focused. */
  for (size_t r = 0; r < t->nrows; r++)
    if (t->row[r].node == was) {
      t->cursor = r;
      break;
    }
  if (t->cursor >= t->nrows) t->cursor = t->nrows ? t->nrows - 1 : 0;
  return research(t);
}

static int under_top(const spyR_tree *t, uint32_t n) {
  for (uint32_t a = t->n[n].parent; a != SPY_NONE; a = t->n[a].parent)
    if (a == t->top) return 1;
  return 0;
}

int spyR_tree_reveal(spyR_tree *t, uint32_t n) {
  if (n >= t->nn || n == 0) return 0;
  if (!under_top(t, n)) {
    t->nfocus = 0;
    t->top = 0;
  }
  for (uint32_t a = t->n[n].parent; a != t->top; a = t->n[a].parent) {
    int rc = set1(t, a, 1);
    if (rc) return rc;
  }
  int rc = flatten(t);
  if (rc) return rc;
  for (size_t r = 0; r < t->nrows; r++)
    if (t->row[r].node == n) {
      t->cursor = r;
      break;
    }
  return 0;
}

uint32_t spyR_tree_find_top(const spyR_tree *t, uint32_t frame) {
  if (!t->nn) return SPY_NONE;
  for (uint32_t j = 0; j < t->n[0].nkids; j++) {
    uint32_t c = t->kid[t->n[0].kids + j];
    if (t->n[c].frame == frame) return c;
  }
  return SPY_NONE;
}

/* ------------------------------------------------------------------------
** Search
** --------------------------------------------------------------------- */

/* Case-insensitive (ASCII) substring test. */
static int contains(const char *hay, const char *needle) {
  size_t n = strlen(needle);
  if (!n) return 1;
  for (; *hay; hay++) {
    size_t i = 0;
    while (i < n && hay[i] &&
           tolower((unsigned char)hay[i]) == tolower((unsigned char)needle[i]))
      i++;
    if (i == n) return 1;
  }
  return 0;
}

/* Recompute the matches for the current query: each frame's label is
** tested once, then the nodes below the top are listed in pre-order. */
static int research(spyR_tree *t) {
  t->nmatch = 0;
  if (!t->query || !*t->query || !t->nn) return 0;
  const spy_profile *p = t->p;
  free(t->match);
  t->match = NULL;
  if (!t->frame_hit || t->hit_p != p || !t->hit_query ||
      strcmp(t->hit_query, t->query)) {
    free(t->frame_hit);
    free(t->hit_query);
    t->hit_p = NULL;
    t->frame_hit = malloc(p->nframes + 1);
    t->hit_query = strdup(t->query);
    if (!t->frame_hit || !t->hit_query) return SPY_ENOMEM;
    for (size_t i = 0; i < p->nframes; i++) {
      spyR_buf_clear(&t->lab);
      spyR_label(&t->lab, p, (uint32_t)i);
      t->frame_hit[i] =
          (unsigned char)contains(spyR_buf_str(&t->lab), t->query);
    }
    t->hit_p = p;
  }
  size_t cap = 64, sp = 0, capm = 0;
  uint32_t *stk = malloc(cap * sizeof *stk);
  if (!stk) return SPY_ENOMEM;
  stk[sp++] = t->top, stk[sp++] = 0;
  int rc = 0;
  while (sp) {
    uint32_t n = stk[sp - 2], j = stk[sp - 1];
    if (j == t->n[n].nkids) {
      sp -= 2;
      continue;
    }
    stk[sp - 1]++;
    uint32_t c = t->kid[t->n[n].kids + j];
    if (!spyR_tree_shown(t, c)) continue;
    if (t->frame_hit[t->n[c].frame]) {
      if (t->nmatch == capm) {
        capm = capm ? 2 * capm : 64;
        uint32_t *m = realloc(t->match, capm * sizeof *m);
        if (!m) {
          rc = SPY_ENOMEM;
          break;
        }
        t->match = m;
      }
      t->match[t->nmatch++] = c;
    }
    if (sp + 2 > cap) {
      uint32_t *ns = realloc(stk, 2 * cap * sizeof *ns);
      if (!ns) {
        rc = SPY_ENOMEM;
        break;
      }
      stk = ns;
      cap *= 2;
    }
    stk[sp++] = c, stk[sp++] = 0;
  }
  free(stk);
  return rc;
}

int spyR_tree_search(spyR_tree *t, const char *query) {
  free(t->query);
  t->query = NULL;
  t->nmatch = 0;
  if (!query || !*query) return 0;
  if (!(t->query = strdup(query))) return SPY_ENOMEM;
  int rc = research(t);
  return rc ? rc : (int)t->nmatch;
}

uint32_t spyR_tree_next_match(const spyR_tree *t, int dir) {
  if (!t->nmatch) return SPY_NONE;
  uint32_t cn = spyR_tree_cur(t);
  uint32_t pre = cn == SPY_NONE ? 0 : t->n[cn].pre;
  /* Matches are in pre-order: binary search for the first after pre. */
  size_t lo = 0, hi = t->nmatch;
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    if (t->n[t->match[mid]].pre <= pre) lo = mid + 1;
    else hi = mid;
  }
  if (cn == SPY_NONE && dir > 0) return t->match[0];
  if (dir > 0) return t->match[lo < t->nmatch ? lo : 0];
  /* Previous: the last with pre < the cursor's. */
  size_t k = lo;
  if (k > 0 && t->match[k - 1] == cn) k--;
  return t->match[k > 0 ? k - 1 : t->nmatch - 1];
}

int spyR_tree_is_match(const spyR_tree *t, uint32_t n) {
  return t->query && t->frame_hit && t->n[n].frame != SPY_NONE &&
         t->frame_hit[t->n[n].frame];
}

/* ------------------------------------------------------------------------
** Labels, guides, leaves
** --------------------------------------------------------------------- */

void spyR_tree_label(const spyR_tree *t, uint32_t n, spyR_buf *b) {
  if (n >= t->nn) return;
  if (t->n[n].frame == SPY_NONE) spyR_buf_puts(b, "all processes");
  else if (n == 0 && t->process != SPYR_ALL)
    spyR_buf_puts(b, t->p->processes[t->process].name);
  else spyR_label(b, t->p, t->n[n].frame);
}

/* The walk.c rule replayed from the outermost ancestor: a tab per level,
** "  |" when that ancestor has a later shown sibling, a fresh "[" run past
** the wrap. */
void spyR_tree_guides(const spyR_tree *t, size_t r, unsigned wrap,
                      spyR_buf *b) {
  if (r >= t->nrows) return;
  uint32_t n = t->row[r].node;
  uint32_t d = t->row[r].depth;
  if (!d) return;
  uint32_t stackbuf[256];
  uint32_t *anc = d <= 256 ? stackbuf : malloc(d * sizeof *anc);
  if (!anc) {
    b->oom = 1;
    return;
  }
  uint32_t a = t->n[n].parent;
  for (uint32_t i = d; i-- > 0; a = t->n[a].parent) anc[i] = a;
  size_t start = b->len;
  unsigned tabs = 0, wraps = 0;
  for (uint32_t i = 0; i < d; i++) {
    if (wrap && tabs + 1 > wrap) {
      wraps++;
      b->len = start;
      if (b->s) b->s[b->len] = '\0';
      for (unsigned k = 0; k < wraps; k++) spyR_buf_add(b, "[", 1);
      tabs = wraps;
    } else {
      spyR_buf_puts(b, t->islast[anc[i]] ? "  " : "  |");
      tabs++;
    }
  }
  if (anc != stackbuf) free(anc);
}

static int leaf_cmp(const void *a, const void *b) {
  const spy_leaf *x = a, *y = b;
  if (x->self_ns != y->self_ns) return x->self_ns < y->self_ns ? 1 : -1;
  return (x->frame > y->frame) - (x->frame < y->frame);
}

int spyR_tree_leaves(const spyR_tree *t, spy_leaf **out, size_t *n) {
  *out = NULL;
  *n = 0;
  size_t nf = t->p->nframes;
  spy_leaf *lv = calloc(nf + 1, sizeof *lv);
  if (!lv) return SPY_ENOMEM;
  for (size_t i = 0; i < nf; i++) lv[i].frame = (uint32_t)i;
  if (t->inverted) {
    /* The root's children are the leaves (by self time). */
    for (uint32_t j = 0; t->nn && j < t->n[0].nkids; j++) {
      const spyR_tnode *c = &t->n[t->kid[t->n[0].kids + j]];
      lv[c->frame].self_ns += c->total_ns;
      lv[c->frame].self_tallies += c->tallies;
    }
  } else {
    for (size_t i = 0; i < t->nn; i++) {
      const spyR_tnode *c = &t->n[i];
      if (c->frame == SPY_NONE) continue;
      lv[c->frame].self_ns += c->self_ns;
      lv[c->frame].self_tallies += c->self_tallies;
    }
  }
  size_t k = 0;
  for (size_t i = 0; i < nf; i++)
    if (lv[i].self_ns || lv[i].self_tallies) lv[k++] = lv[i];
  qsort(lv, k, sizeof *lv, leaf_cmp);
  *out = lv;
  *n = k;
  return 0;
}
