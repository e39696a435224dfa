/*
** report/walk.c: flatten a call tree into rows with `|` guides.
**
** Iterative, with an explicit stack of levels, so a deep tree (a recursive
** program profiled with a large max_depth) cannot overflow the C stack, and
** with a visited bitmap, so a malformed profile whose links loop gives
** SPY_EFORMAT instead of a hang.
*/
#include "config.h"

#include "report/walk.h"

#include "report/format.h"

#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------------
** Children
** --------------------------------------------------------------------- */

/* Sort context: qsort has no user pointer, so sort (total, index) pairs. */
typedef struct kid {
  uint64_t total;
  uint32_t node;
} kid;

static int kid_cmp(const void *a, const void *b) {
  const kid *x = a, *y = b;
  if (x->total != y->total) return x->total < y->total ? 1 : -1;
  return x->node < y->node ? -1 : x->node > y->node;
}

/* The model promises children heaviest first, but a profile built by hand,
** merged or loaded from an older writer may not keep that order; sorting
** here costs little and makes every tool agree. */
int spyR_children(const spy_profile *p, uint32_t n, double min_ns,
                  uint32_t **out, size_t *count) {
  *out = NULL;
  *count = 0;
  size_t k = 0;
  uint32_t c = p->nodes[n].first_child;
  while (c != SPY_NONE) {
    if (c >= p->nnodes || k >= p->nnodes) return SPY_EFORMAT;
    k++;
    c = p->nodes[c].next_sibling;
  }
  if (k == 0) return 0;
  kid *kids = malloc(k * sizeof *kids);
  if (!kids) return SPY_ENOMEM;
  size_t m = 0;
  for (c = p->nodes[n].first_child; c != SPY_NONE; c = p->nodes[c].next_sibling)
    if (min_ns <= 0 || (double)p->nodes[c].total_ns >= min_ns)
      kids[m++] = (kid){p->nodes[c].total_ns, c};
  if (m == 0) {
    free(kids);
    return 0;
  }
  qsort(kids, m, sizeof *kids, kid_cmp);
  uint32_t *r = malloc(m * sizeof *r);
  if (!r) {
    free(kids);
    return SPY_ENOMEM;
  }
  for (size_t i = 0; i < m; i++) r[i] = kids[i].node;
  free(kids);
  *out = r;
  *count = m;
  return 0;
}

int spyR_sort_siblings(spy_node *nd, size_t n) {
  kid *k = malloc((n + 1) * sizeof *k);
  if (!k) return SPY_ENOMEM;
  for (size_t i = 0; i < n; i++) {
    size_t c = 0;
    for (uint32_t x = nd[i].first_child; x != SPY_NONE; x = nd[x].next_sibling)
      k[c++] = (kid){nd[x].total_ns, x};
    if (c < 2) continue;
    qsort(k, c, sizeof *k, kid_cmp);
    nd[i].first_child = k[0].node;
    for (size_t j = 0; j < c; j++)
      nd[k[j].node].next_sibling = j + 1 < c ? k[j + 1].node : SPY_NONE;
  }
  free(k);
  return 0;
}

typedef struct pkey {
  uint64_t total, pid;
  uint32_t ix;
} pkey;

static int pkey_cmp(const void *a, const void *b) {
  const pkey *x = a, *y = b;
  if (x->total != y->total) return x->total < y->total ? 1 : -1;
  if (x->pid != y->pid) return x->pid < y->pid ? -1 : 1;
  return x->ix < y->ix ? -1 : x->ix > y->ix;
}

uint32_t *spyR_process_order(const spy_profile *p) {
  size_t n = p->nprocesses;
  uint32_t *ix = malloc((n + 1) * sizeof *ix);
  pkey *k = malloc((n + 1) * sizeof *k);
  if (!ix || !k) {
    free(ix);
    free(k);
    return NULL;
  }
  for (size_t i = 0; i < n; i++)
    k[i] = (pkey){p->processes[i].total_ns, p->processes[i].pid, (uint32_t)i};
  qsort(k, n, sizeof *k, pkey_cmp);
  for (size_t i = 0; i < n; i++) ix[i] = k[i].ix;
  free(k);
  return ix;
}

/* ------------------------------------------------------------------------
** The walk
** --------------------------------------------------------------------- */

/* One open level: the visible children of a node being listed, and the
** guide prefix (its length and tab count) their rows get. */
typedef struct level {
  uint32_t *kids;
  size_t n, i;
  size_t gstart;   /* where the prefix for these rows starts in guides */
  size_t glen;     /* and its length in bytes */
  unsigned tabs;   /* tabs in that prefix, "[" blocks included */
  unsigned wraps;  /* "[" blocks at its start */
} level;

/* The prefixes of all open levels share one buffer. A child level's prefix
** extends its parent's in place (same start, longer), which leaves the
** parent's bytes intact; a wrapped prefix starts after the parent's. Only
** the top level emits rows, so the byte after its prefix is free for the
** NUL. */

typedef struct walker {
  level *lv;
  size_t nlv, caplv;
  spyR_buf guides;
  unsigned char *seen;
} walker;

static int push(walker *w, uint32_t *kids, size_t n, size_t gstart,
                size_t glen, unsigned tabs, unsigned wraps) {
  if (w->nlv == w->caplv) {
    size_t cap = w->caplv ? 2 * w->caplv : 32;
    level *nl = realloc(w->lv, cap * sizeof *nl);
    if (!nl) return SPY_ENOMEM;
    w->lv = nl;
    w->caplv = cap;
  }
  w->lv[w->nlv++] = (level){kids, n, 0, gstart, glen, tabs, wraps};
  return 0;
}

/* Set the prefix for the children of the row just emitted from level L:
** L's prefix plus the row's own tab, or a fresh run of "[" on a wrap. */
static void child_prefix(walker *w, const level *L, int last, unsigned wrap,
                         size_t *gstart, size_t *glen, unsigned *tabs,
                         unsigned *wraps) {
  spyR_buf *g = &w->guides;
  g->len = L->gstart + L->glen;
  if (wrap && L->tabs + 1 > wrap) {
    spyR_buf_add(g, "", 1); /* keep the parent's NUL slot */
    *gstart = g->len;
    *wraps = L->wraps + 1;
    for (unsigned i = 0; i < *wraps; i++) spyR_buf_add(g, "[", 1);
    *tabs = *wraps;
  } else {
    *gstart = L->gstart;
    spyR_buf_puts(g, last ? "  " : "  |");
    *tabs = L->tabs + 1;
    *wraps = L->wraps;
  }
  *glen = g->len - *gstart;
}

int spyR_walk(const spy_profile *p, uint32_t process, double threshold_pct,
              unsigned wrap, spyR_sink sink, void *ud) {
  if (!p || !sink || process >= p->nprocesses) return SPY_EINVAL;
  uint32_t root = p->processes[process].root;
  if (root >= p->nnodes) return SPY_EFORMAT;
  double min_ns = threshold_pct > 0
                      ? threshold_pct / 100.0 * (double)spyR_base_ns(p)
                      : 0;
  walker w = {0};
  int rc = 0;
  w.seen = calloc(p->nnodes / 8 + 1, 1);
  if (!w.seen) return SPY_ENOMEM;
  /* The guide buffer must exist before the first row points into it. */
  spyR_buf_puts(&w.guides, "");
  uint32_t *kids;
  size_t nk;
  if ((rc = spyR_children(p, root, min_ns, &kids, &nk)) != 0) goto out;
  if (nk && (rc = push(&w, kids, nk, 0, 0, 0, 0)) != 0) {
    free(kids);
    goto out;
  }
  while (w.nlv > 0) {
    level *L = &w.lv[w.nlv - 1];
    if (L->i == L->n) {
      free(L->kids);
      w.nlv--;
      continue;
    }
    uint32_t n = L->kids[L->i++];
    if (w.seen[n / 8] & (1u << (n % 8))) {
      rc = SPY_EFORMAT;
      goto out;
    }
    w.seen[n / 8] |= (unsigned char)(1u << (n % 8));
    if ((rc = spyR_children(p, n, min_ns, &kids, &nk)) != 0) goto out;
    if (w.guides.oom) {
      free(kids);
      rc = SPY_ENOMEM;
      goto out;
    }
    char *guides = w.guides.s + L->gstart;
    guides[L->glen] = '\0';
    spyR_row row = {process, n, (unsigned)(w.nlv - 1), guides, L->glen,
                    L->i == L->n, nk};
    int s = sink(ud, p, &row);
    if (s < 0 || s == SPYR_SKIP || nk == 0) {
      free(kids);
      if (s < 0) {
        rc = s;
        goto out;
      }
      continue;
    }
    size_t gstart, glen;
    unsigned tabs, wraps;
    child_prefix(&w, L, row.last, wrap, &gstart, &glen, &tabs, &wraps);
    if (w.guides.oom) {
      free(kids);
      rc = SPY_ENOMEM;
      goto out;
    }
    if ((rc = push(&w, kids, nk, gstart, glen, tabs, wraps)) != 0) {
      free(kids);
      goto out;
    }
  }
out:
  while (w.nlv > 0) free(w.lv[--w.nlv].kids);
  free(w.lv);
  free(w.seen);
  spyR_buf_free(&w.guides);
  return rc;
}

/* Leaves: self time summed per frame over every process tree. A frame that
** is a leaf in many places (a primitive called from everywhere) is one line,
** as in MessageTally's leaves. */
static int leaf_cmp(const void *a, const void *b) {
  const spy_leaf *x = a, *y = b;
  if (x->self_ns != y->self_ns) return x->self_ns < y->self_ns ? 1 : -1;
  return x->frame < y->frame ? -1 : x->frame > y->frame;
}

int spy_profile_leaves(const spy_profile *p, spy_leaf *out, size_t n) {
  if (!p || (!out && n)) return SPY_EINVAL;
  if (p->nframes == 0 || n == 0) return 0;
  spy_leaf *all = calloc(p->nframes, sizeof *all);
  if (!all) return SPY_ENOMEM;
  for (size_t i = 0; i < p->nframes; i++) all[i].frame = (uint32_t)i;
  for (size_t i = 0; i < p->nnodes; i++) {
    const spy_node *nd = &p->nodes[i];
    if (nd->frame >= p->nframes || nd->self_ns == 0) continue;
    /* A loaded profile's sums cannot overflow (the loader checks that the
    ** grand total fits); one built in memory saturates instead of wrapping. */
    spy_leaf *l = &all[nd->frame];
    l->self_ns = l->self_ns + nd->self_ns < l->self_ns
                     ? UINT64_MAX : l->self_ns + nd->self_ns;
    l->self_tallies = l->self_tallies + nd->self_tallies < l->self_tallies
                          ? UINT64_MAX : l->self_tallies + nd->self_tallies;
  }
  qsort(all, p->nframes, sizeof *all, leaf_cmp);
  size_t k = 0;
  while (k < n && k < p->nframes && all[k].self_ns > 0) {
    out[k] = all[k];
    k++;
  }
  free(all);
  return (int)k;
}
