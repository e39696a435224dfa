/*
** report/tree.c: the browsable call tree of report/tree.h: the state a
** browser keeps (expansion, focus, cursor, rows, search) over a view whose
** nodes report/tview.c makes on demand.
**
** Every walk below a node goes through spyR_tree_walk(): the shown
** children in order, depth first, iteratively (a deep recursive profile
** cannot overflow the C stack), making children known only where the walk
** goes into them. A search (report/tsearch.c) goes into every shown node;
** `+` and `-` are marks (below), not walks; the rows are not walked at
** all: row to row is a step through the tree (spyR_tree_next,
** spyR_tree_prev), and row numbers come from memoized counts (count).
*/
#include "config.h"

#include "report/tree.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------------
** A map of ids (expansion)
** --------------------------------------------------------------------- */

/* The value of id, or 0 when it is not in the map (values are never 0). */
static uint64_t hmap_get(const spyR_hmap *h, uint64_t id) {
  if (!h->n) return 0;
  size_t m = h->cap - 1;
  for (size_t i = (size_t)spyR_mix(id) & m;; i = (i + 1) & m) {
    if (h->key[i] == id) return h->val[i];
    if (!h->key[i]) return 0;
  }
}

static int hmap_grow(spyR_hmap *h) {
  size_t cap = h->cap ? 2 * h->cap : 64;
  uint64_t *k = calloc(cap, sizeof *k), *v = malloc(cap * sizeof *v);
  if (!k || !v) {
    free(k);
    free(v);
    return SPY_ENOMEM;
  }
  for (size_t j = 0; j < h->cap; j++) {
    if (!h->key[j]) continue;
    size_t i = (size_t)spyR_mix(h->key[j]) & (cap - 1);
    while (k[i]) i = (i + 1) & (cap - 1);
    k[i] = h->key[j];
    v[i] = h->val[j];
  }
  free(h->key);
  free(h->val);
  h->key = k;
  h->val = v;
  h->cap = cap;
  return 0;
}

/* Map id to val (not 0), replacing what it had. 0 or SPY_ENOMEM. */
static int hmap_put(spyR_hmap *h, uint64_t id, uint64_t val) {
  if (2 * (h->n + 1) > h->cap && hmap_grow(h) < 0) return SPY_ENOMEM;
  size_t m = h->cap - 1, i = (size_t)spyR_mix(id) & m;
  while (h->key[i] && h->key[i] != id) i = (i + 1) & m;
  if (!h->key[i]) h->n++;
  h->key[i] = id;
  h->val[i] = val;
  return 0;
}

static void hmap_clear(spyR_hmap *h) {
  if (h->cap) memset(h->key, 0, h->cap * sizeof *h->key);
  h->n = 0;
}

static void hmap_free(spyR_hmap *h) {
  free(h->key);
  free(h->val);
}

/* ------------------------------------------------------------------------
** Life cycle
** --------------------------------------------------------------------- */

void spyR_tree_init(spyR_tree *t, const spy_profile *p) {
  memset(t, 0, sizeof *t);
  t->p = p;
  t->process = p && p->nprocesses == 1 ? 0 : SPYR_ALL;
  t->sort = SPYR_SORT_TOTAL;
  t->cur = t->anchor = SPY_NONE;
  t->epoch = t->order_epoch = t->mk_epoch = 1;
}

void spyR_tree_forget(spyR_tree *t) {
  spyR_tview_free(t->ix);
  t->ix = NULL;
  free(t->rank);
  t->rank = NULL;
  t->rank_p = NULL;
  free(t->hit_query);
  t->hit_query = NULL;
  t->hit_p = NULL;
}

void spyR_tree_free(spyR_tree *t) {
  if (!t) return;
  spyR_tree_forget(t);
  free(t->n);
  free(t->kid);
  free(t->mem);
  hmap_free(&t->state);
  hmap_free(&t->mark);
  free(t->marks);
  free(t->mkpath);
  free(t->focus);
  free(t->fpath);
  free(t->cpath);
  free(t->query);
  free(t->match);
  free(t->frame_hit);
  spyR_buf_free(&t->lab);
  memset(t, 0, sizeof *t);
}

/* ------------------------------------------------------------------------
** The one walk
** --------------------------------------------------------------------- */

void *spyR_stack_room(void *stk, size_t *cap, size_t need, size_t size) {
  if (need <= *cap) return stk;
  size_t n = *cap ? *cap : 64;
  while (n < need) n *= 2;
  void *ns = realloc(stk, n * size);
  if (ns) *cap = n;
  return ns;
}

/* The walk (report/tree.h). */
int spyR_tree_walk(spyR_tree *t, uint32_t from, double min,
                   spyR_visit_fn visit, void *ud) {
  int rc = spyR_tree_kids(t, from);
  if (rc) return rc;
  size_t cap = 64, sp = 0;
  uint32_t *stk = malloc(cap * sizeof *stk);
  if (!stk) return SPY_ENOMEM;
  stk[sp++] = from, stk[sp++] = 0;
  while (sp && rc >= 0) {
    uint32_t n = stk[sp - 2], j = stk[sp - 1];
    if (j == t->n[n].nkids) {
      sp -= 2;
      continue;
    }
    stk[sp - 1]++;
    uint32_t c = t->kid[t->n[n].kids + j];
    if (min > 0 && (double)t->n[c].total_ns < min) continue;
    if ((rc = visit(t, c, ud)) <= 0) continue;
    if ((rc = spyR_tree_kids(t, c)) != 0) break;
    uint32_t *ns = spyR_stack_room(stk, &cap, sp + 2, sizeof *stk);
    if (!ns) {
      rc = SPY_ENOMEM;
      break;
    }
    stk = ns;
    stk[sp++] = c, stk[sp++] = 0;
  }
  free(stk);
  return rc < 0 ? rc : 0;
}

/* ------------------------------------------------------------------------
** Children: sorted and marked when they become known
** --------------------------------------------------------------------- */

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
** (t->rank[frame]; byte-wise strcmp, so stable), made once per profile.
** SPY_ENOMEM or 0. */
static int frame_ranks(spyR_tree *t) {
  const spy_profile *p = t->p;
  if (t->rank && t->rank_p == p) return 0;
  free(t->rank);
  t->rank = NULL;
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
  t->rank = rank;
  t->rank_p = p;
  return 0;
fail:
  for (size_t j = 0; fl && j < i; j++) free(fl[j].lab);
  free(fl);
  free(rank);
  return SPY_ENOMEM;
}

/* Order node n's children by t->sort (ties: the text report's order). */
static int sort_one(spyR_tree *t, uint32_t n) {
  uint32_t nk = t->n[n].nkids;
  if (nk == 1) t->n[t->kid[t->n[n].kids]].sib = 0;
  if (nk < 2) return 0;
  if (t->sort == SPYR_SORT_NAME && frame_ranks(t) < 0) return SPY_ENOMEM;
  skey stackbuf[16];
  skey *k = nk <= 16 ? stackbuf : malloc(nk * sizeof *k);
  if (!k) return SPY_ENOMEM;
  uint32_t *kid = t->kid + t->n[n].kids;
  for (uint32_t j = 0; j < nk; j++) {
    const spyR_tnode *c = &t->n[kid[j]];
    uint64_t key = t->sort == SPYR_SORT_TOTAL  ? UINT64_MAX - c->total_ns
                   : t->sort == SPYR_SORT_SELF ? UINT64_MAX - c->self_ns
                   : c->frame == SPY_NONE      ? 0
                                               : t->rank[c->frame];
    k[j] = (skey){key, c->src, kid[j]};
  }
  if (nk <= 16) {
    for (uint32_t j = 1; j < nk; j++) {
      skey x = k[j];
      uint32_t m = j;
      while (m > 0 && skey_cmp(&k[m - 1], &x) > 0) {
        k[m] = k[m - 1];
        m--;
      }
      k[m] = x;
    }
  } else {
    qsort(k, nk, sizeof *k, skey_cmp);
  }
  for (uint32_t j = 0; j < nk; j++) {
    kid[j] = k[j].node;
    t->n[kid[j]].sib = j;
  }
  if (k != stackbuf) free(k);
  return 0;
}

/* Mark n's last child that passes the threshold, for the guides. */
static void mark_last(spyR_tree *t, uint32_t n) {
  const spyR_tnode *nd = &t->n[n];
  int found = 0;
  for (uint32_t j = nd->nkids; j-- > 0;) {
    uint32_t c = t->kid[nd->kids + j];
    t->n[c].last = !found && spyR_tree_shown(t, c);
    found |= t->n[c].last;
  }
}

/* Children are made once; they are sorted and marked again when the sort
** or the threshold changed since (s and T bump t->order_epoch and leave
** the work to the nodes that are touched afterwards). */
int spyR_tree_kids(spyR_tree *t, uint32_t n) {
  if (n >= t->nn || (t->n[n].known && t->n[n].ord == t->order_epoch))
    return 0;
  int rc = t->n[n].known ? 0 : spyR_tview_expand(t, n);
  if (rc == 0) rc = sort_one(t, n);
  if (rc) return rc;
  mark_last(t, n);
  t->n[n].ord = t->order_epoch;
  return 0;
}

static int go_in(spyR_tree *t, uint32_t c, void *ud) {
  (void)t, (void)c, (void)ud;
  return 1;
}

int spyR_tree_materialize(spyR_tree *t) {
  return t->nn ? spyR_tree_walk(t, 0, 0, go_in, NULL) : 0;
}

int spyR_tree_shown(const spyR_tree *t, uint32_t n) {
  return t->min_ns <= 0 || (double)t->n[n].total_ns >= t->min_ns;
}

/* ------------------------------------------------------------------------
** Expansion: own states, subtree marks, E and C
**
** `+` on a node used to walk its subtree and record every shown node's
** state; now it records one mark, and a node's state is the most recent
** of its own state and the marks that cover it. A mark covers its node
** and every node below it whose total is at least the threshold the mark
** was made under: totals do not grow down a path, so those are exactly
** the nodes the walk used to reach, and the meaning is unchanged (tested
** against that walk). Which mark covers a node is found from its parent:
** the parent's newest covering mark, if it covers the node too, is the
** node's newest from above (every mark above that covers the node covers
** the parent); if not (a threshold was lowered since that mark), the path
** is searched. Kept per node until the marks change.
** --------------------------------------------------------------------- */

static uint64_t tick(spyR_tree *t) { return ++t->clock; }

/* The marks on node x, newest first (SPY_NONE: none). */
static uint32_t own_mark(const spyR_tree *t, uint32_t x) {
  uint64_t v = t->mark.n ? hmap_get(&t->mark, t->n[x].id) : 0;
  return v ? (uint32_t)(v - 1) : SPY_NONE;
}

/* Does mark m, made on x (own) or on a node above it, cover x? */
static int covers(const spyR_tree *t, uint32_t m, uint32_t x, int own) {
  const spyR_tmark *k = &t->marks[m];
  return own || !(k->min_ns > 0 && (double)t->n[x].total_ns < k->min_ns);
}

static uint32_t newer(const spyR_tree *t, uint32_t a, uint32_t b) {
  if (a == SPY_NONE) return b;
  if (b == SPY_NONE) return a;
  return t->marks[a].stamp > t->marks[b].stamp ? a : b;
}

/* The newest mark above x that covers x, up the whole path. */
static uint32_t scan_up(const spyR_tree *t, uint32_t x) {
  uint32_t best = SPY_NONE;
  for (uint32_t a = t->n[x].parent; a != SPY_NONE; a = t->n[a].parent)
    for (uint32_t m = own_mark(t, a); m != SPY_NONE; m = t->marks[m].prev)
      if (covers(t, m, x, 0)) {
        best = newer(t, best, m);
        break;
      }
  return best;
}

/* x's newest covering mark, given its parent's (wp). */
static uint32_t mark_from(const spyR_tree *t, uint32_t x, uint32_t wp) {
  uint32_t w = wp;
  if (w != SPY_NONE && !covers(t, w, x, 0)) w = scan_up(t, x);
  return newer(t, w, own_mark(t, x));
}

/* report/tree.h. Down from the nearest node on x's path whose answer is
** kept, keeping each one's. */
uint32_t spyR_tree_cover(spyR_tree *t, uint32_t x) {
  if (!t->nmarks) return SPY_NONE;
  if (t->n[x].mk_at == t->mk_epoch) return t->n[x].mk;
  size_t k = 0;
  uint32_t a = x;
  for (; a != SPY_NONE && t->n[a].mk_at != t->mk_epoch; a = t->n[a].parent) {
    if (k == t->capmkpath) {
      size_t cap = t->capmkpath ? 2 * t->capmkpath : 64;
      uint32_t *np = realloc(t->mkpath, cap * sizeof *np);
      if (!np) /* the slow way, nothing kept */
        return newer(t, scan_up(t, x), own_mark(t, x));
      t->mkpath = np;
      t->capmkpath = cap;
    }
    t->mkpath[k++] = a;
  }
  uint32_t w = a == SPY_NONE ? SPY_NONE : t->n[a].mk;
  while (k-- > 0) {
    uint32_t y = t->mkpath[k];
    w = mark_from(t, y, w);
    t->n[y].mk = w;
    t->n[y].mk_at = t->mk_epoch;
  }
  return w;
}

/* The marks changed: every node's covering mark is found again. */
static void new_mk_epoch(spyR_tree *t) {
  if (++t->mk_epoch == 0) {
    for (size_t i = 0; i < t->nn; i++) t->n[i].mk_at = 0;
    t->mk_epoch = 1;
  }
}

/* Mark n's subtree open or closed under the current threshold. Older
** marks on n that cover nothing this one does not (a bound as high or
** higher) leave its list. 0 or SPY_ENOMEM. */
static int add_mark(spyR_tree *t, uint32_t n, int on) {
  if (t->nmarks == t->capmarks) {
    size_t cap = t->capmarks ? 2 * t->capmarks : 16;
    spyR_tmark *m = cap < SPY_NONE ? realloc(t->marks, cap * sizeof *m)
                                   : NULL;
    if (!m) return SPY_ENOMEM;
    t->marks = m;
    t->capmarks = cap;
  }
  uint32_t m = (uint32_t)t->nmarks, old = own_mark(t, n);
  double min = t->min_ns > 0 ? t->min_ns : 0;
  if (hmap_put(&t->mark, t->n[n].id, (uint64_t)m + 1) < 0) return SPY_ENOMEM;
  uint32_t keep = SPY_NONE, *link = &keep;
  for (uint32_t o = old; o != SPY_NONE; o = t->marks[o].prev)
    if (t->marks[o].min_ns < min) {
      *link = o;
      link = &t->marks[o].prev;
    }
  *link = SPY_NONE;
  t->marks[m] = (spyR_tmark){t->n[n].id, min, tick(t), keep, on != 0};
  t->nmarks++;
  new_mk_epoch(t);
  return 0;
}

int spyR_tree_expanded(spyR_tree *t, uint32_t n) {
  uint64_t s = t->state.n ? hmap_get(&t->state, t->n[n].id) : 0;
  uint32_t m = spyR_tree_cover(t, n);
  if (m != SPY_NONE && t->marks[m].stamp > (s >> 1)) return t->marks[m].on;
  return s ? (int)(s & 1) : t->all_expanded;
}

/* ------------------------------------------------------------------------
** Building
** --------------------------------------------------------------------- */

static void resolve_top(spyR_tree *t);

static void drop(spyR_tree *t) {
  t->nn = 0, t->nkid = 0, t->nmem = 0;
  new_mk_epoch(t);
  t->cur = t->anchor = SPY_NONE;
  t->top = 0, t->nmatch = 0;
}

/* The ids from the root down to node n into *path (its depth of them). */
static int id_path(spyR_tree *t, uint32_t n, uint64_t **path, size_t *len,
                   size_t *cap) {
  uint32_t d = t->n[n].depth;
  if (d > *cap) {
    uint64_t *f = realloc(*path, d * sizeof *f);
    if (!f) return SPY_ENOMEM;
    *path = f;
    *cap = d;
  }
  *len = d;
  for (uint32_t a = n; t->n[a].depth > 0; a = t->n[a].parent)
    (*path)[t->n[a].depth - 1] = t->n[a].id;
  return 0;
}

/* The deepest node down a path of ids from the root (the root when the
** first id is not there). */
static uint32_t follow(spyR_tree *t, const uint64_t *path, size_t len) {
  uint32_t n = 0;
  for (size_t d = 0; d < len && spyR_tree_kids(t, n) == 0; d++) {
    uint32_t c = SPY_NONE;
    for (uint32_t j = 0; j < t->n[n].nkids && c == SPY_NONE; j++)
      if (t->n[t->kid[t->n[n].kids + j]].id == path[d])
        c = t->kid[t->n[n].kids + j];
    if (c == SPY_NONE) break;
    n = c;
  }
  return n;
}

int spyR_tree_build(spyR_tree *t) {
  const spy_profile *p = t->p;
  if (!p) return SPY_EINVAL;
  if (t->process != SPYR_ALL && t->process >= p->nprocesses)
    return SPY_EINVAL;
  /* The cursor is kept by its path of ids, and the screen by the rows
  ** between its first row and the cursor. */
  uint32_t cn = spyR_tree_cur(t);
  t->ncpath = 0;
  long above = -1;
  /* A cursor on the first row stays there (a live view refreshing under
  ** it keeps its top in sight, as top and htop do): the node that was
  ** first, the loading node early in a run, may sort last later. */
  int at_first = cn != SPY_NONE && cn == spyR_tree_first(t);
  if (cn != SPY_NONE) {
    if (id_path(t, cn, &t->cpath, &t->ncpath, &t->capcpath)) t->ncpath = 0;
    uint32_t x = t->anchor;
    for (long i = 0; x != SPY_NONE && x < t->nn && (size_t)i < t->screen_h;
         i++, x = spyR_tree_next(t, x))
      if (x == cn) {
        above = i;
        break;
      }
  }
  drop(t);
  spyR_tree_rows_epoch(t);
  int rc = spyR_tview_index(t);
  if (rc) return rc;
  t->built_p = p, t->built_process = t->process, t->built_sort = t->sort;
  t->built_inverted = t->inverted, t->built_collapse = t->collapse;
  t->base_ns = spyR_base_ns(p);
  t->min_ns = t->threshold_pct > 0
                  ? t->threshold_pct / 100.0 * (double)t->base_ns
                  : 0;
  if ((rc = spyR_tview_root(t)) == 0 && (rc = spyR_tree_hits(t)) == 0)
    resolve_top(t);
  if (rc) {
    drop(t);
    return rc;
  }
  t->cur = t->ncpath && !at_first ? follow(t, t->cpath, t->ncpath)
                                  : SPY_NONE;
  spyR_tree_keep_cursor(t);
  if (at_first) t->anchor = t->cur;
  else if (above >= 0 && t->cur != SPY_NONE)
    t->anchor = spyR_tree_step(t, t->cur, -above);
  t->match_stale = 1;
  return t->oom ? SPY_ENOMEM : 0;
}

int spyR_tree_resort(spyR_tree *t) {
  t->built_sort = t->sort;
  if (!t->nn) return 0;
  t->order_epoch++;
  t->match_stale = 1;
  return 0;
}

int spyR_tree_refilter(spyR_tree *t) {
  t->min_ns = t->threshold_pct > 0
                  ? t->threshold_pct / 100.0 * (double)t->base_ns
                  : 0;
  if (!t->nn) return 0;
  t->order_epoch++;
  spyR_tree_rows_epoch(t);
  t->match_stale = 1;
  spyR_tree_keep_cursor(t);
  return 0;
}

/* ------------------------------------------------------------------------
** Expansion and focus
** --------------------------------------------------------------------- */

/* Set n's own state, its count forgotten (not its ancestors'). */
static int set_state(spyR_tree *t, uint32_t n, int on) {
  t->n[n].vis_at = 0;
  return hmap_put(&t->state, t->n[n].id, tick(t) << 1 | (on != 0));
}

/* Set n's state (the counts above it are forgotten when it changes). */
static int set1(spyR_tree *t, uint32_t n, int on) {
  if ((on != 0) != spyR_tree_expanded(t, n)) spyR_tree_forget_rows(t, n);
  return set_state(t, n, on);
}

int spyR_tree_set(spyR_tree *t, uint32_t n, int on) {
  if (n >= t->nn) return 0;
  int rc = set1(t, n, on);
  if (!rc) spyR_tree_keep_cursor(t);
  return rc;
}

/* Set every node with children that the walk meets to *(int *)ud. The
** walk goes through every ancestor of a node it sets below where it
** starts, so each node's count is forgotten as it is met (not its whole
** path each time): the caller forgets the start's path. */
static int set_visit(spyR_tree *t, uint32_t c, void *ud) {
  int rc = spyR_tree_kids(t, c);
  if (rc == 0 && t->n[c].nkids) rc = set_state(t, c, *(int *)ud);
  return rc ? rc : 1;
}

/* + and -: one mark, O(1) (its count and its ancestors' forgotten; the
** counts below it are stale by the mark's time stamp). */
int spyR_tree_subtree(spyR_tree *t, uint32_t n, int on) {
  if (n >= t->nn) return 0;
  int rc = add_mark(t, n, on);
  if (rc) return rc;
  spyR_tree_forget_rows(t, n);
  spyR_tree_keep_cursor(t);
  return 0;
}

/* E and C: O(1) (the rows are stepped through, and counted, when asked). */
int spyR_tree_all(spyR_tree *t, int on) {
  t->all_expanded = on != 0;
  hmap_clear(&t->state);
  hmap_clear(&t->mark);
  t->nmarks = 0;
  new_mk_epoch(t);
  spyR_tree_rows_epoch(t);
  spyR_tree_keep_cursor(t);
  return t->oom ? SPY_ENOMEM : 0;
}

int spyR_tree_open_heavy(spyR_tree *t, double pct) {
  if (!t->nn) return 0;
  double min = pct / 100.0 * (double)t->base_ns;
  int on = 1, rc = 0;
  /* A node at least that heavy has ancestors at least that heavy: the
  ** walk reaches every one. */
  if ((double)t->n[0].total_ns >= min) {
    rc = set_visit(t, 0, &on);
    if (rc > 0)
      rc = spyR_tree_walk(t, 0, min > 0 ? min : 0, set_visit, &on);
  }
  if (!rc) spyR_tree_keep_cursor(t);
  return rc;
}

/* Which node the focus stack resolves to: down the focus path as far as
** its ids exist in this view, then the deepest focus at or above that. */
static void resolve_top(spyR_tree *t) {
  t->top = 0;
  if (!t->nfocus || !t->nn) return;
  uint32_t want = t->focus[t->nfocus - 1];
  uint32_t n = follow(t, t->fpath, want < t->nfpath ? want : t->nfpath);
  size_t i = t->nfocus;
  while (i > 0 && t->focus[i - 1] > t->n[n].depth) i--;
  if (!i) return;
  while (t->n[n].depth > t->focus[i - 1]) n = t->n[n].parent;
  t->top = n;
}

int spyR_tree_focus(spyR_tree *t, uint32_t n) {
  if (n >= t->nn || n == t->top) return 1;
  int rc = spyR_tree_kids(t, n);
  if (rc) return rc;
  if (!t->n[n].nkids) return 1;
  if (t->nfocus == t->capfocus) {
    size_t cap = t->capfocus ? 2 * t->capfocus : 8;
    uint32_t *f = realloc(t->focus, cap * sizeof *f);
    if (!f) return SPY_ENOMEM;
    t->focus = f;
    t->capfocus = cap;
  }
  if ((rc = id_path(t, n, &t->fpath, &t->nfpath, &t->capfpath)) != 0)
    return rc;
  t->focus[t->nfocus++] = t->n[n].depth;
  t->top = n;
  rc = set1(t, n, 1);
  t->cur = t->anchor = spyR_tree_first(t);
  t->match_stale = 1;
  return rc ? rc : t->oom ? SPY_ENOMEM : 0;
}

int spyR_tree_unfocus(spyR_tree *t) {
  if (!t->nfocus) return 1;
  uint32_t was = t->top;
  t->nfocus--;
  resolve_top(t);
  /* The cursor back on the node that was focused. */
  t->cur = was;
  spyR_tree_keep_cursor(t);
  t->match_stale = 1;
  return t->oom ? SPY_ENOMEM : 0;
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
  t->cur = n;
  spyR_tree_keep_cursor(t);
  return t->oom ? SPY_ENOMEM : 0;
}

uint32_t spyR_tree_find_top(spyR_tree *t, uint32_t frame) {
  if (!t->nn || spyR_tree_kids(t, 0) < 0) return SPY_NONE;
  for (uint32_t j = 0; j < t->n[0].nkids; j++) {
    uint32_t c = t->kid[t->n[0].kids + j];
    if (t->n[c].frame == frame) return c;
  }
  return SPY_NONE;
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
void spyR_tree_guides(spyR_tree *t, uint32_t n, unsigned wrap,
                      spyR_buf *b) {
  if (n >= t->nn || n == t->top) return;
  uint32_t d = spyR_tree_row_depth(t, n);
  if (!d) return;
  uint32_t stackbuf[256];
  uint32_t *anc = d <= 256 ? stackbuf : malloc(d * sizeof *anc);
  if (!anc) {
    b->oom = 1;
    return;
  }
  uint32_t a = t->n[n].parent;
  for (uint32_t i = d; i-- > 0; a = t->n[a].parent) anc[i] = a;
  /* The `last` marks are made with the children lists: after s or T a
  ** list not touched since is marked again first. */
  for (uint32_t i = 0; i < d; i++)
    if (spyR_tree_kids(t, t->n[anc[i]].parent) < 0) b->oom = 1;
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
      spyR_buf_puts(b, t->n[anc[i]].last ? "  " : "  |");
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
  spyR_tview_leaves(t, lv);
  size_t k = 0;
  for (size_t i = 0; i < nf; i++)
    if (lv[i].self_ns || lv[i].self_tallies) lv[k++] = lv[i];
  qsort(lv, k, sizeof *lv, leaf_cmp);
  *out = lv;
  *n = k;
  return 0;
}
