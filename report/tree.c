/*
** report/tree.c: the browsable call tree of report/tree.h: the state a
** browser keeps (expansion, focus, cursor, rows, search) over a view whose
** nodes report/tview.c makes on demand.
**
** Every walk below a node goes through walk(): the shown children in
** order, depth first, iteratively (a deep recursive profile cannot
** overflow the C stack), making children known only where the walk goes
** into them. Flattening goes into expanded nodes only, so it costs the
** visible rows; a search or `+` goes into every shown node.
*/
#include "config.h"

#include "report/tree.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------------
** A set of ids (expansion)
** --------------------------------------------------------------------- */

static int hset_has(const spyR_hset *h, uint64_t id) {
  if (!h->cap) return 0;
  size_t m = h->cap - 1;
  for (size_t i = (size_t)spyR_mix(id) & m;; i = (i + 1) & m) {
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
    size_t i = (size_t)spyR_mix(id) & (cap - 1);
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
  size_t m = h->cap - 1, i = (size_t)spyR_mix(id) & m;
  while (h->slot[i]) i = (i + 1) & m;
  h->slot[i] = id;
  h->n++;
  return 0;
}

/* Deletion with backward shift, so lookups need no tombstones. */
static void hset_del(spyR_hset *h, uint64_t id) {
  if (!h->cap) return;
  size_t m = h->cap - 1, i = (size_t)spyR_mix(id) & m;
  while (h->slot[i] != id) {
    if (!h->slot[i]) return;
    i = (i + 1) & m;
  }
  h->slot[i] = 0;
  h->n--;
  for (size_t j = (i + 1) & m; h->slot[j]; j = (j + 1) & m) {
    size_t home = (size_t)spyR_mix(h->slot[j]) & m;
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

/* ------------------------------------------------------------------------
** Life cycle
** --------------------------------------------------------------------- */

void spyR_tree_init(spyR_tree *t, const spy_profile *p) {
  memset(t, 0, sizeof *t);
  t->p = p;
  t->process = p && p->nprocesses == 1 ? 0 : SPYR_ALL;
  t->sort = SPYR_SORT_TOTAL;
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
  free(t->flip.slot);
  free(t->focus);
  free(t->fpath);
  free(t->row);
  free(t->query);
  free(t->match);
  free(t->frame_hit);
  spyR_buf_free(&t->lab);
  memset(t, 0, sizeof *t);
}

/* ------------------------------------------------------------------------
** The one walk
** --------------------------------------------------------------------- */

/* What walk() does at a node: 1 to go into its children, 0 not to, or a
** negative SPY_E* code to stop the walk. */
typedef int (*visit_fn)(spyR_tree *t, uint32_t c, void *ud);

/* The children of `from` whose total is at least `min` (0: all), in
** order, depth first, each handed to visit; the children of a node are
** made known before the walk goes into them. 0 or a negative code. */
static int walk(spyR_tree *t, uint32_t from, double min, visit_fn visit,
                void *ud) {
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
  for (uint32_t j = 0; j < nk; j++) kid[j] = k[j].node;
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

int spyR_tree_kids(spyR_tree *t, uint32_t n) {
  if (n >= t->nn || t->n[n].known) return 0;
  int rc = spyR_tview_expand(t, n);
  if (rc == 0) rc = sort_one(t, n);
  if (rc == 0) mark_last(t, n);
  return rc;
}

static int go_in(spyR_tree *t, uint32_t c, void *ud) {
  (void)t, (void)c, (void)ud;
  return 1;
}

int spyR_tree_materialize(spyR_tree *t) {
  return t->nn ? walk(t, 0, 0, go_in, NULL) : 0;
}

/* ------------------------------------------------------------------------
** Building
** --------------------------------------------------------------------- */

static int flatten(spyR_tree *t);
static int hits(spyR_tree *t);
static void resolve_top(spyR_tree *t);

static void drop(spyR_tree *t) {
  t->nn = 0, t->nkid = 0, t->nmem = 0;
  t->nrows = 0, t->cursor = 0, t->top = 0, t->nmatch = 0;
}

/* Put the cursor on the row of node id `id`, else on row `row`. */
static void cursor_to(spyR_tree *t, uint64_t id, size_t row) {
  t->cursor = row < t->nrows ? row : t->nrows ? t->nrows - 1 : 0;
  for (size_t r = 0; id && r < t->nrows; r++)
    if (t->n[t->row[r].node].id == id) {
      t->cursor = r;
      return;
    }
}

int spyR_tree_build(spyR_tree *t) {
  const spy_profile *p = t->p;
  if (!p) return SPY_EINVAL;
  if (t->process != SPYR_ALL && t->process >= p->nprocesses)
    return SPY_EINVAL;
  uint32_t cn = spyR_tree_cur(t);
  uint64_t cur_id = cn != SPY_NONE ? t->n[cn].id : 0;
  size_t cur_row = t->cursor;
  drop(t);
  int rc = spyR_tview_index(t);
  if (rc) return rc;
  t->built_p = p, t->built_process = t->process, t->built_sort = t->sort;
  t->built_inverted = t->inverted, t->built_collapse = t->collapse;
  t->base_ns = spyR_base_ns(p);
  t->min_ns = t->threshold_pct > 0
                  ? t->threshold_pct / 100.0 * (double)t->base_ns
                  : 0;
  if ((rc = spyR_tview_root(t)) == 0 && (rc = hits(t)) == 0) {
    resolve_top(t);
    rc = flatten(t);
  }
  if (rc) {
    drop(t);
    return rc;
  }
  cursor_to(t, cur_id, cur_row);
  t->match_stale = 1;
  return 0;
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

size_t spyR_tree_nshown(spyR_tree *t, uint32_t n) {
  if (spyR_tree_kids(t, n) < 0) return 0;
  size_t k = 0;
  for (uint32_t j = 0; j < t->n[n].nkids; j++)
    k += spyR_tree_shown(t, t->kid[t->n[n].kids + j]) != 0;
  return k;
}

uint32_t spyR_tree_cur(const spyR_tree *t) {
  return t->cursor < t->nrows ? t->row[t->cursor].node : SPY_NONE;
}

static int push_row(spyR_tree *t, uint32_t n) {
  if (t->nrows == t->caprows) {
    size_t cap = t->caprows ? 2 * t->caprows : 256;
    spyR_trow *r = realloc(t->row, cap * sizeof *r);
    if (!r) return SPY_ENOMEM;
    t->row = r;
    t->caprows = cap;
  }
  uint32_t base = t->n[t->top].depth + 1;
  t->row[t->nrows++] = (spyR_trow){n, t->n[n].depth - base};
  return 0;
}

static int row_visit(spyR_tree *t, uint32_t c, void *ud) {
  (void)ud;
  int rc = push_row(t, c);
  return rc ? rc : spyR_tree_expanded(t, c);
}

/* The rows: the shown, expanded part below the top in reading order. */
static int flatten(spyR_tree *t) {
  t->nrows = 0;
  return t->nn ? walk(t, t->top, t->min_ns, row_visit, NULL) : 0;
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
  for (size_t i = 0; i < t->nn; i++)
    if (t->n[i].known) {
      int rc = sort_one(t, (uint32_t)i);
      if (rc) return rc;
      mark_last(t, (uint32_t)i);
    }
  t->match_stale = 1;
  return reflatten(t);
}

int spyR_tree_refilter(spyR_tree *t) {
  t->min_ns = t->threshold_pct > 0
                  ? t->threshold_pct / 100.0 * (double)t->base_ns
                  : 0;
  if (!t->nn) return 0;
  for (size_t i = 0; i < t->nn; i++)
    if (t->n[i].known) mark_last(t, (uint32_t)i);
  t->match_stale = 1;
  return reflatten(t);
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

/* Set every node with children that the walk meets to *(int *)ud. */
static int set_visit(spyR_tree *t, uint32_t c, void *ud) {
  int rc = spyR_tree_kids(t, c);
  if (rc == 0 && t->n[c].nkids) rc = set1(t, c, *(int *)ud);
  return rc ? rc : 1;
}

int spyR_tree_subtree(spyR_tree *t, uint32_t n, int on) {
  if (n >= t->nn) return 0;
  int rc = set_visit(t, n, &on);
  if (rc > 0) rc = walk(t, n, t->min_ns, set_visit, &on);
  return rc ? rc : reflatten(t);
}

int spyR_tree_all(spyR_tree *t, int on) {
  t->all_expanded = on != 0;
  hset_clear(&t->flip);
  return reflatten(t);
}

int spyR_tree_open_heavy(spyR_tree *t, double pct) {
  if (!t->nn) return 0;
  double min = pct / 100.0 * (double)t->base_ns;
  int on = 1, rc = 0;
  /* A node at least that heavy has ancestors at least that heavy: the
  ** walk reaches every one. */
  if ((double)t->n[0].total_ns >= min) {
    rc = set_visit(t, 0, &on);
    if (rc > 0) rc = walk(t, 0, min > 0 ? min : 0, set_visit, &on);
  }
  return rc ? rc : reflatten(t);
}

/* The focus path: the ids from the root down to node n. */
static int set_fpath(spyR_tree *t, uint32_t n) {
  uint32_t d = t->n[n].depth;
  if (d > t->capfpath) {
    uint64_t *f = realloc(t->fpath, d * sizeof *f);
    if (!f) return SPY_ENOMEM;
    t->fpath = f;
    t->capfpath = d;
  }
  t->nfpath = d;
  for (uint32_t a = n; t->n[a].depth > 0; a = t->n[a].parent)
    t->fpath[t->n[a].depth - 1] = t->n[a].id;
  return 0;
}

/* Which node the focus stack resolves to: down the focus path as far as
** its ids exist in this view, then the deepest focus at or above that. */
static void resolve_top(spyR_tree *t) {
  t->top = 0;
  if (!t->nfocus || !t->nn) return;
  uint32_t want = t->focus[t->nfocus - 1], n = 0;
  while (t->n[n].depth < want && spyR_tree_kids(t, n) == 0) {
    uint32_t c = SPY_NONE, d = t->n[n].depth;
    for (uint32_t j = 0; j < t->n[n].nkids && c == SPY_NONE; j++)
      if (t->n[t->kid[t->n[n].kids + j]].id == t->fpath[d])
        c = t->kid[t->n[n].kids + j];
    if (c == SPY_NONE) break;
    n = c;
  }
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
  if ((rc = set_fpath(t, n)) != 0) return rc;
  t->focus[t->nfocus++] = t->n[n].depth;
  t->top = n;
  rc = set1(t, n, 1);
  if (!rc) rc = flatten(t);
  t->cursor = 0;
  t->match_stale = 1;
  return rc;
}

int spyR_tree_unfocus(spyR_tree *t) {
  if (!t->nfocus) return 1;
  uint32_t was = t->top;
  t->nfocus--;
  resolve_top(t);
  int rc = flatten(t);
  if (rc) return rc;
  /* Put the cursor back on the node that was focused. */
  cursor_to(t, t->n[was].id, t->cursor);
  t->match_stale = 1;
  return 0;
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
  cursor_to(t, t->n[n].id, t->cursor);
  return 0;
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

/* Each frame's label tested once for the query (kept for this query and
** profile). 0 or SPY_ENOMEM. */
static int hits(spyR_tree *t) {
  const spy_profile *p = t->p;
  if (!t->query || !*t->query) return 0;
  if (t->frame_hit && t->hit_p == p && t->hit_query &&
      !strcmp(t->hit_query, t->query))
    return 0;
  free(t->frame_hit);
  free(t->hit_query);
  t->hit_p = NULL;
  t->frame_hit = malloc(p->nframes + 1);
  t->hit_query = strdup(t->query);
  if (!t->frame_hit || !t->hit_query) return SPY_ENOMEM;
  t->nhit = 0;
  for (size_t i = 0; i < p->nframes; i++) {
    spyR_buf_clear(&t->lab);
    spyR_label(&t->lab, p, (uint32_t)i);
    t->frame_hit[i] = (unsigned char)contains(spyR_buf_str(&t->lab), t->query);
    t->nhit += t->frame_hit[i];
  }
  t->hit_p = p;
  return 0;
}

typedef struct matcher {
  uint32_t pre;
  size_t cap;
} matcher;

#define FOUND (-1000)   /* a visit's "stop: found" (not a SPY_E* code) */
#define TOO_BIG (-1001) /* a visit's "stop: past the search budget" */

static int match_visit(spyR_tree *t, uint32_t c, void *ud) {
  matcher *m = ud;
  if (t->search_budget && m->pre >= t->search_budget) return TOO_BIG;
  t->n[c].pre = ++m->pre;
  if (!t->frame_hit[t->n[c].frame]) return 1;
  if (t->nmatch == m->cap) {
    m->cap = m->cap ? 2 * m->cap : 64;
    uint32_t *a = realloc(t->match, m->cap * sizeof *a);
    if (!a) return SPY_ENOMEM;
    t->match = a;
  }
  t->match[t->nmatch++] = c;
  return 1;
}

/* Make the matches for the current query: every shown node below the top
** whose frame's label matches, in pre-order (numbering the nodes). Past
** t->search_budget nodes the list is left stale (TOO_BIG). */
static int research(spyR_tree *t) {
  t->nmatch = 0;
  t->match_stale = 0;
  if (!t->query || !*t->query || !t->nn) return 0;
  int rc = hits(t);
  if (rc) return rc;
  free(t->match);
  t->match = NULL;
  matcher m = {0, 0};
  t->n[t->top].pre = 0;
  rc = walk(t, t->top, t->min_ns, match_visit, &m);
  if (rc) t->nmatch = 0;
  if (rc == TOO_BIG) t->match_stale = 1;
  return rc;
}

static uint32_t step_match(spyR_tree *t, int dir);

int spyR_tree_search(spyR_tree *t, const char *query) {
  free(t->query);
  t->query = NULL;
  t->nmatch = 0;
  if (!query || !*query) return 0;
  if (!(t->query = strdup(query))) return SPY_ENOMEM;
  int rc = research(t);
  if (rc != TOO_BIG) return rc ? rc : (int)t->nmatch;
  /* Too many nodes to count the matches: is there one at all? */
  return step_match(t, 1) != SPY_NONE;
}

/* n/N while the match list is stale: step through the shown nodes below
** the top in pre-order (forward) or reverse pre-order (backward) from the
** cursor, wrapping, up to the first match; the cursor's node is tried
** last. Only the nodes passed over are made: subtrees wholly on the far
** side of the cursor are skipped. */
typedef struct stepper {
  uint32_t cur, found;
  uint32_t *anc; /* anc[d]: the cursor's ancestor at depth d */
  int phase;     /* 0: before the cursor, 1: past it, 2: wrapped */
} stepper;

static int is_anc(const stepper *s, const spyR_tree *t, uint32_t c) {
  return s->cur != SPY_NONE && t->n[c].depth < t->n[s->cur].depth &&
         s->anc[t->n[c].depth] == c;
}

static int fwd_visit(spyR_tree *t, uint32_t c, void *ud) {
  stepper *s = ud;
  if (s->phase == 0) {
    if (c == s->cur) s->phase = 1;
    return c == s->cur || is_anc(s, t, c);
  }
  if (s->phase == 2 && c == s->cur) return FOUND;
  if (!t->frame_hit[t->n[c].frame]) return 1;
  s->found = c;
  return FOUND;
}

/* The reverse walk: children last to first, each subtree before its node;
** enter says whether to go into a node's subtree, and whether to visit
** the node after it (2: both, 1: the node only, 0: neither). */
static int bwd_enter(spyR_tree *t, uint32_t c, stepper *s) {
  if (s->phase != 0) return 2;
  if (is_anc(s, t, c)) return 2;
  return c == s->cur ? 1 : 0;
}

static int bwd_leave(spyR_tree *t, uint32_t c, stepper *s) {
  if (s->phase == 0) {
    s->phase = 1; /* only the cursor's node is left in phase 0 */
    return 0;
  }
  if (s->phase == 2 && c == s->cur) return FOUND;
  if (!t->frame_hit[t->n[c].frame]) return 0;
  s->found = c;
  return FOUND;
}

static int rwalk(spyR_tree *t, uint32_t from, stepper *s) {
  int rc = spyR_tree_kids(t, from);
  if (rc) return rc;
  size_t cap = 64, sp = 0;
  uint32_t *stk = malloc(cap * sizeof *stk);
  if (!stk) return SPY_ENOMEM;
  stk[sp++] = from, stk[sp++] = t->n[from].nkids;
  while (sp && rc == 0) {
    uint32_t n = stk[sp - 2], j = stk[sp - 1];
    if (j == 0) {
      sp -= 2;
      if (n != from) rc = bwd_leave(t, n, s);
      continue;
    }
    uint32_t c = t->kid[t->n[n].kids + --stk[sp - 1]];
    if (!spyR_tree_shown(t, c)) continue;
    int e = bwd_enter(t, c, s);
    if (!e) continue;
    if (e == 2 && (rc = spyR_tree_kids(t, c)) != 0) break;
    if (sp + 2 > cap) {
      uint32_t *ns = realloc(stk, 2 * cap * sizeof *ns);
      if (!ns) {
        rc = SPY_ENOMEM;
        break;
      }
      stk = ns;
      cap *= 2;
    }
    stk[sp++] = c, stk[sp++] = e == 2 ? t->n[c].nkids : 0;
  }
  free(stk);
  return rc;
}

static uint32_t step_match(spyR_tree *t, int dir) {
  if (hits(t) < 0 || !t->nhit) return SPY_NONE;
  stepper s = {spyR_tree_cur(t), SPY_NONE, NULL, 0};
  if (s.cur == SPY_NONE) s.phase = 1;
  else {
    s.anc = malloc((t->n[s.cur].depth + 1) * sizeof *s.anc);
    if (!s.anc) return SPY_NONE;
    for (uint32_t a = s.cur; a != SPY_NONE; a = t->n[a].parent)
      s.anc[t->n[a].depth] = a;
  }
  for (int pass = 0; pass < 2 && s.found == SPY_NONE; pass++) {
    if (pass) s.phase = s.cur == SPY_NONE ? 1 : 2;
    int rc = dir > 0 ? walk(t, t->top, t->min_ns, fwd_visit, &s)
                     : rwalk(t, t->top, &s);
    if (rc < 0 && rc != FOUND) break;
    if (rc == FOUND) break;
  }
  free(s.anc);
  if (s.found == SPY_NONE && s.cur != SPY_NONE &&
      t->frame_hit[t->n[s.cur].frame])
    return s.cur;
  return s.found;
}

uint32_t spyR_tree_next_match(spyR_tree *t, int dir) {
  if (!t->query || !*t->query || !t->nn) return SPY_NONE;
  if (t->match_stale) return step_match(t, dir);
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
  return t->query && t->frame_hit && t->hit_p == t->p &&
         t->n[n].frame != SPY_NONE && t->frame_hit[t->n[n].frame];
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
