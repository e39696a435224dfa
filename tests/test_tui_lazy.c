/*
** tests/test_tui_lazy.c: the "tui" suite, part two: the browser's lazy
** tree (views built on demand, rows without a row list, subtree marks for
** + and -) against eager references over every view.
*/
#include "config.h"

#include "tests/test.h"
#include "tests/test_tui.h"

#include <spyon.h>
#include <spyon/profile.h>

#include "profile/profile.h"
#include "report/format.h"
#include "report/tree.h"
#include "report/walk.h"
#include "tui/keys.h"

/* The lazy views against a reference computed the plain way, with no
** code in common with report/tview.c: every profile node's path in the
** view is worked out on its own (walking up the profile to the process
** root, then applying the view's rule), and its self time is added to
** every prefix of that path (totals) and to the path itself (self). The
** fully made tree must have exactly these nodes (a path hash each: 64
** bits, a collision among these few thousand paths has odds about 2^-40)
** with exactly these four numbers; with a threshold and everything
** expanded, the rows must be exactly the reference paths at or above the
** threshold, each under its parent, siblings heaviest first (siblings of
** equal totals may come in either order). */
typedef struct rent {
  uint64_t key, parent, total, self, tal, stal;
  uint32_t depth;
} rent;

typedef struct rmap {
  rent *e;
  size_t cap, n;
} rmap;

static uint64_t rmix(uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdu;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53u;
  return x ^ (x >> 33);
}

static rent *rget(rmap *m, uint64_t key) {
  for (size_t i = key & (m->cap - 1);; i = (i + 1) & (m->cap - 1))
    if (m->e[i].key == key || !m->e[i].key) return m->e[i].key ? &m->e[i]
                                                               : NULL;
}

/* The child of path `key` by frame f, made on first use. */
static uint64_t rchild(rmap *m, uint64_t key, uint32_t f) {
  uint64_t c = rmix(key * 1000003u + f + 1) | 1;
  if (rget(m, c)) return c;
  if (2 * (m->n + 1) > m->cap) {
    rmap g = {calloc(2 * m->cap, sizeof *g.e), 2 * m->cap, 0};
    T_ASSERT(g.e);
    for (size_t i = 0; i < m->cap; i++)
      if (m->e[i].key) {
        size_t j = m->e[i].key & (g.cap - 1);
        while (g.e[j].key) j = (j + 1) & (g.cap - 1);
        g.e[j] = m->e[i];
      }
    g.n = m->n;
    free(m->e);
    *m = g;
  }
  size_t j = c & (m->cap - 1);
  while (m->e[j].key) j = (j + 1) & (m->cap - 1);
  m->e[j] = (rent){c, key, 0, 0, 0, 0, rget(m, key)->depth + 1};
  m->n++;
  return c;
}

/* The reference view: every node's path by the view's rule, its self
** added to the path and its totals to every prefix. */
static rmap reference(const spy_profile *p, uint32_t proc, int inv, int col) {
  rmap m = {calloc(4096, sizeof *m.e), 4096, 1};
  T_ASSERT(m.e);
  m.e[7] = (rent){7, 0, 0, 0, 0, 0, 0}; /* the root: key 7, slot 7 */
  size_t nf = p->nframes;
  uint64_t *onkey = calloc(nf, sizeof *onkey);
  uint32_t *onst = calloc(nf, sizeof *onst), stamp = 0;
  uint32_t *up = malloc((p->nnodes + 1) * sizeof *up);
  T_ASSERT(onkey && onst && up);
  for (uint32_t k = 0; k < p->nprocesses; k++) {
    if (proc != SPYR_ALL && proc != k) continue;
    for (uint32_t x = 0; x < p->nnodes; x++) {
      size_t nu = 0;
      uint32_t a = x;
      for (; p->nodes[a].parent != SPY_NONE; a = p->nodes[a].parent)
        up[nu++] = p->nodes[a].frame; /* x's frame first */
      if (a != p->processes[k].root) continue;
      const spy_node *nd = &p->nodes[x];
      if (inv && nu && !nd->self_ns && !nd->self_tallies) continue;
      uint64_t key = 7;
      stamp++;
      for (size_t i = 0; i < nu; i++) {
        /* Inverted: the frames from x up; collapsed: each frame once.
        ** Plain: from the top down; collapsed: a frame met before on the
        ** way down goes back to the node its first occurrence made. */
        uint32_t f = inv ? up[i] : up[nu - 1 - i];
        if (col && onst[f] == stamp) {
          if (!inv) key = onkey[f];
          continue;
        }
        key = rchild(&m, key, f);
        onst[f] = stamp;
        onkey[f] = key;
      }
      rent *e = rget(&m, key);
      e->self += nd->self_ns;
      e->stal += nd->self_tallies;
      for (;; e = rget(&m, e->parent)) {
        e->total += nd->self_ns;
        e->tal += nd->self_tallies;
        if (e->key == 7) break;
      }
    }
  }
  free(onkey);
  free(onst);
  free(up);
  return m;
}

/* The path key of every node of the made tree (parents come first). */
static uint64_t *tree_keys(const spyR_tree *t) {
  uint64_t *key = malloc((t->nn + 1) * sizeof *key);
  T_ASSERT(key);
  for (size_t i = 0; i < t->nn; i++) {
    uint32_t par = t->n[i].parent;
    T_ASSERT(par == SPY_NONE || par < i);
    key[i] = par == SPY_NONE ? 7
                             : rmix(key[par] * 1000003u + t->n[i].frame + 1) |
                                   1;
  }
  return key;
}

static void t_lazy_views(void) {
  for (unsigned round = 0; round < 6; round++) {
    rng = 1000 + round;
    /* Few frames: much recursion, and processes that share paths. */
    spy_profile *p = random_profile(3, 700 + 300 * round, 6 + 3 * round,
                                    round % 2);
    for (uint32_t proc = 0; proc <= 3; proc++)
      for (int inv = 0; inv < 2; inv++)
        for (int col = 0; col < 2; col++) {
          uint32_t sel = proc == 3 ? SPYR_ALL : proc;
          rmap m = reference(p, sel, inv, col);
          spyR_tree t;
          spyR_tree_init(&t, p);
          t.process = sel;
          t.inverted = inv;
          t.collapse = col;
          T_EQ_INT(spyR_tree_build(&t), 0);
          T_EQ_INT(spyR_tree_materialize(&t), 0);
          T_EQ_INT(t.nn, m.n);
          uint64_t *key = tree_keys(&t);
          for (size_t i = 0; i < t.nn; i++) {
            const rent *e = rget(&m, key[i]);
            if (!e) T_FAIL("view %u/%d/%d: node %zu not in the reference",
                           proc, inv, col, i);
            T_EQ_INT(t.n[i].depth, e->depth);
            T_EQ_INT(t.n[i].total_ns, e->total);
            T_EQ_INT(t.n[i].self_ns, e->self);
            T_EQ_INT(t.n[i].tallies, e->tal);
            T_EQ_INT(t.n[i].self_tallies, e->stal);
          }
          free(key);
          /* Rows, built lazily again from a fresh tree this time. */
          spyR_tree_free(&t);
          spyR_tree_init(&t, p);
          t.process = sel;
          t.inverted = inv;
          t.collapse = col;
          t.threshold_pct = 0.3;
          T_EQ_INT(spyR_tree_build(&t), 0);
          T_EQ_INT(spyR_tree_all(&t, 1), 0);
          size_t want = 0;
          for (size_t i = 0; i < m.cap; i++)
            want += m.e[i].key && m.e[i].key != 7 &&
                    (double)m.e[i].total >= t.min_ns;
          T_EQ_INT(spyR_tree_nrows(&t), want);
          key = tree_keys(&t);
          /* By depth: the previous sibling's total (UINT64_MAX before the
          ** first child of a row), the key of the row's ancestor. */
          uint64_t *at = malloc((t.nn + 2) * sizeof *at);
          uint64_t *pk = calloc(t.nn + 2, sizeof *pk);
          T_ASSERT(at && pk);
          at[1] = UINT64_MAX;
          pk[0] = 7;
          for (size_t r = 0; r < spyR_tree_nrows(&t); r++) {
            uint32_t n = spyR_tree_row(&t, r), d = spyR_tree_row_depth(&t, spyR_tree_row(&t, r)) + 1;
            const rent *e = rget(&m, key[n]);
            T_ASSERT(e);
            T_EQ_INT(e->depth, d);
            T_ASSERT((double)e->total >= t.min_ns);
            T_EQ_INT(e->parent, pk[d - 1]); /* under the row above it */
            T_ASSERT(at[d] >= e->total); /* heaviest first */
            at[d] = e->total;
            at[d + 1] = UINT64_MAX;
            pk[d] = e->key;
          }
          free(at);
          free(pk);
          free(key);
          free(m.e);
          spyR_tree_free(&t);
        }
    spy_profile_free(p);
  }
}

/* The rows without a row list (report/tree.h): after E the rows stepped
** through one by one (Down from the first, Up from the last), looked up
** by number, counted a budget at a time, paged and searched are exactly
** the rows the eager tree lists: every node made first, then flattened
** the way the browser used to (the shown children in order, into the
** open ones), compared by node id since the two trees make their nodes
** in different orders. Over every view (one process and all merged,
** callers, recursion collapsed), with and without a threshold, sorted by
** total and re-sorted by name after E (the lazy re-sort). */
static size_t eager_rows(spyR_tree *t, uint64_t **ids) {
  T_EQ_INT(spyR_tree_materialize(t), 0);
  size_t n = 0, cap = 64, sp = 0;
  *ids = malloc(cap * sizeof **ids);
  uint32_t *stk = malloc(2 * (t->nn + 1) * sizeof *stk);
  T_ASSERT(*ids && stk);
  stk[sp++] = t->top, stk[sp++] = 0;
  while (sp) {
    uint32_t p = stk[sp - 2], j = stk[sp - 1];
    T_EQ_INT(spyR_tree_kids(t, p), 0);
    if (j == t->n[p].nkids) {
      sp -= 2;
      continue;
    }
    stk[sp - 1]++;
    uint32_t c = t->kid[t->n[p].kids + j];
    if (!spyR_tree_shown(t, c)) continue;
    if (n == cap) {
      cap *= 2;
      *ids = realloc(*ids, cap * sizeof **ids);
      T_ASSERT(*ids);
    }
    (*ids)[n++] = t->n[c].id;
    if (spyR_tree_expanded(t, c)) stk[sp++] = c, stk[sp++] = 0;
  }
  free(stk);
  return n;
}

/* A view built and expanded with E, nothing else made. */
static void lazy_view(spyR_tree *t, spy_profile *p, uint32_t proc, int inv,
                      int col, double pct, int name) {
  spyR_tree_init(t, p);
  t->process = proc;
  t->inverted = inv;
  t->collapse = col;
  t->threshold_pct = pct;
  T_EQ_INT(spyR_tree_build(t), 0);
  T_EQ_INT(spyR_tree_all(t, 1), 0);
  if (name) {
    t->sort = SPYR_SORT_NAME;
    T_EQ_INT(spyR_tree_resort(t), 0);
  }
}

static void t_lazy_rows(void) {
  rng = 4242;
  spy_profile *p = random_profile(3, 2500, 40, 0);
  const char *query = "method2";
  size_t views = 0;
  for (uint32_t proc = 0; proc <= 3; proc++)
    for (int inv = 0; inv < 2; inv++)
      for (int col = 0; col < 2; col++)
        for (int th = 0; th < 2; th++) {
          uint32_t pr = proc == 3 ? SPYR_ALL : proc;
          double pct = th ? 0.5 : 0;
          int name = (proc + (uint32_t)inv + (uint32_t)col) % 2;
          spyR_tree e;
          lazy_view(&e, p, pr, inv, col, pct, name);
          uint64_t *want;
          size_t n = eager_rows(&e, &want);
          spyR_tree_free(&e);
          if (!n) continue;
          views++;
          /* Down from the first row, and the rows by number. */
          spyR_tree t;
          lazy_view(&t, p, pr, inv, col, pct, name);
          size_t made = t.nn;
          if (!th) T_ASSERT(made * 4 < n); /* E made next to nothing */
          size_t k = 0;
          for (uint32_t x = spyR_tree_first(&t); x != SPY_NONE;
               x = spyR_tree_next(&t, x), k++) {
            T_ASSERT(k < n);
            T_EQ_INT(t.n[x].id, want[k]);
          }
          T_EQ_INT(k, n);
          T_EQ_INT(spyR_tree_nrows(&t), n);
          for (size_t r = 0; r < n; r++) {
            uint32_t x = spyR_tree_row(&t, r);
            T_ASSERT(x != SPY_NONE);
            T_EQ_INT(t.n[x].id, want[r]);
            T_EQ_INT(spyR_tree_row_of(&t, x), r);
          }
          T_EQ_INT(spyR_tree_row(&t, n), SPY_NONE);
          spyR_tree_free(&t);
          /* End right after E, then Up to the first row. */
          lazy_view(&t, p, pr, inv, col, pct, name);
          spyR_tree_end(&t);
          T_EQ_INT(t.n[spyR_tree_cur(&t)].id, want[n - 1]);
          T_EQ_INT(spyR_tree_prev(&t, spyR_tree_first(&t)), SPY_NONE);
          k = n;
          for (uint32_t x = spyR_tree_cur(&t); x != SPY_NONE;
               x = spyR_tree_prev(&t, x)) {
            T_ASSERT(k > 0);
            T_EQ_INT(t.n[x].id, want[--k]);
          }
          T_EQ_INT(k, 0);
          /* The row numbers a budget at a time: every call makes progress
          ** (at most one call per row), and they end where they should. */
          spyR_tree_end(&t);
          size_t row, rows, calls = 0;
          int rc;
          while ((rc = spyR_tree_position(&t, 3, &row, &rows)) == 1)
            T_ASSERT(++calls <= n);
          T_EQ_INT(rc, 0);
          T_EQ_INT(rows, n);
          T_EQ_INT(row, n - 1);
          /* A 7-row screen after End shows the last 7 rows. */
          spyR_tree_scroll(&t, 7);
          for (size_t i = 0; i < 7; i++) {
            uint32_t x = spyR_tree_screen_row(&t, i);
            if (n < 7 + i + 1 && i >= n) T_EQ_INT(x, SPY_NONE);
            else T_EQ_INT(t.n[x].id, want[(n > 7 ? n - 7 : 0) + i]);
          }
          spyR_tree_free(&t);
          /* PgDn and PgUp (23 rows) from Home right after E. */
          lazy_view(&t, p, pr, inv, col, pct, name);
          spyR_tree_home(&t);
          size_t at = 0;
          for (int i = 0; i < 3; i++) {
            spyR_tree_move(&t, 23);
            at = at + 23 < n ? at + 23 : n - 1;
            T_EQ_INT(t.n[spyR_tree_cur(&t)].id, want[at]);
          }
          spyR_tree_move(&t, -23);
          at = at >= 23 ? at - 23 : 0;
          T_EQ_INT(t.n[spyR_tree_cur(&t)].id, want[at]);
          spyR_tree_free(&t);
          /* `/` right after E: the matches are the rows whose label has
          ** the query, in row order; n from Home lands on the first after
          ** row 0, at its row number. */
          lazy_view(&t, p, pr, inv, col, pct, name);
          spyR_tree_home(&t);
          int nm = spyR_tree_search(&t, query);
          T_ASSERT(nm >= 0);
          size_t expect = 0, first = SIZE_MAX, second = SIZE_MAX;
          for (size_t r = 0; r < n; r++) {
            uint32_t x = spyR_tree_row(&t, r);
            if (!spyR_tree_is_match(&t, x)) continue;
            expect++;
            if (first == SIZE_MAX) first = r;
            else if (second == SIZE_MAX) second = r;
          }
          T_EQ_INT(nm, expect);
          if (expect) {
            size_t to = first > 0 || second == SIZE_MAX ? first : second;
            uint32_t m = spyR_tree_next_match(&t, 1);
            T_ASSERT(m != SPY_NONE);
            T_EQ_INT(spyR_tree_reveal(&t, m), 0);
            T_EQ_INT(t.n[spyR_tree_cur(&t)].id, want[to]);
            T_EQ_INT(spyR_tree_row_of(&t, spyR_tree_cur(&t)), to);
          }
          spyR_tree_free(&t);
          free(want);
        }
  T_ASSERT(views >= 24);
  spy_profile_free(p);
}

/* `+` and `-` as subtree marks (report/tree.c) against what they mean,
** done the plain way: a reference state per node of a fully made tree,
** where `+` / `-` walk the subtree and set the node and every node below
** it at or above the threshold of the moment (what the browser did before
** marks), Enter sets one node, f opens the node it focuses, E and C set
** every node. Random sequences of these (nested marks, marks under and
** over other marks, Enter inside marked subtrees, E and C between, the
** threshold raised and lowered between marks, focus and back) on a lazy
** tree must give, after every step: the rows of the reference (stepped
** through down and up, looked up by number, counted a budget at a time),
** the state of every node made with children, and the cursor where the
** browser keeps it (on its node, else its nearest ancestor that is a row,
** else the first row). Every view: each process and all merged, callers,
** recursion collapsed, sorted by total and by name. `+` makes no node. */
typedef struct idix {
  uint64_t id;
  uint32_t i;
} idix;

static int idix_cmp(const void *a, const void *b) {
  const idix *x = a, *y = b;
  return (x->id > y->id) - (x->id < y->id);
}

/* e's node with this id (SPY_NONE: none). */
static uint32_t e_index(const idix *ix, size_t n, uint64_t id) {
  idix k = {id, 0};
  const idix *f = bsearch(&k, ix, n, sizeof *ix, idix_cmp);
  return f ? f->i : SPY_NONE;
}

/* t's node with the path of ids of e's node x (made on the way). */
static uint32_t t_node(spyR_tree *t, const spyR_tree *e, uint32_t x) {
  uint32_t d = e->n[x].depth, n = 0;
  uint64_t *path = malloc((d + 1) * sizeof *path);
  T_ASSERT(path);
  for (uint32_t a = x; e->n[a].depth > 0; a = e->n[a].parent)
    path[e->n[a].depth] = e->n[a].id;
  for (uint32_t k = 1; k <= d; k++) {
    T_EQ_INT(spyR_tree_kids(t, n), 0);
    uint32_t c = SPY_NONE;
    for (uint32_t j = 0; j < t->n[n].nkids && c == SPY_NONE; j++)
      if (t->n[t->kid[t->n[n].kids + j]].id == path[k])
        c = t->kid[t->n[n].kids + j];
    T_ASSERT(c != SPY_NONE);
    n = c;
  }
  free(path);
  return n;
}

/* The reference rows (e's nodes, in order) from e's top, by want. */
static size_t ref_rows(spyR_tree *e, const unsigned char *want,
                       uint32_t *out) {
  size_t n = 0, sp = 0;
  uint32_t *stk = malloc(2 * (e->nn + 1) * sizeof *stk);
  T_ASSERT(stk);
  stk[sp++] = e->top, stk[sp++] = 0;
  while (sp) {
    uint32_t p = stk[sp - 2], j = stk[sp - 1];
    T_EQ_INT(spyR_tree_kids(e, p), 0);
    if (j == e->n[p].nkids) {
      sp -= 2;
      continue;
    }
    stk[sp - 1]++;
    uint32_t c = e->kid[e->n[p].kids + j];
    if (!spyR_tree_shown(e, c)) continue;
    out[n++] = c;
    if (want[c]) stk[sp++] = c, stk[sp++] = 0;
  }
  free(stk);
  return n;
}

/* `+` / `-` the plain way: x and every node below it at or above the
** threshold. */
static void ref_subtree(spyR_tree *e, unsigned char *want, uint32_t x,
                        int on) {
  size_t sp = 0;
  uint32_t *stk = malloc((e->nn + 1) * sizeof *stk);
  T_ASSERT(stk);
  want[x] = (unsigned char)on;
  stk[sp++] = x;
  while (sp) {
    uint32_t p = stk[--sp];
    for (uint32_t j = 0; j < e->n[p].nkids; j++) {
      uint32_t c = e->kid[e->n[p].kids + j];
      if (e->min_ns > 0 && (double)e->n[c].total_ns < e->min_ns) continue;
      want[c] = (unsigned char)on;
      stk[sp++] = c;
    }
  }
  free(stk);
}

static void t_marks(void) {
  rng = 777;
  spy_profile *p = random_profile(3, 2500, 40, 0);
  size_t checks = 0, marks = 0;
  for (uint32_t proc = 0; proc <= 3; proc++)
    for (int inv = 0; inv < 2; inv++)
      for (int col = 0; col < 2; col++) {
        uint32_t pr = proc == 3 ? SPYR_ALL : proc;
        int name = (proc + (uint32_t)inv + (uint32_t)col) % 2;
        spyR_tree e, t;
        spyR_tree *both[2] = {&e, &t};
        for (int k = 0; k < 2; k++) {
          spyR_tree *x = both[k];
          spyR_tree_init(x, p);
          x->process = pr;
          x->inverted = inv;
          x->collapse = col;
          T_EQ_INT(spyR_tree_build(x), 0);
          if (name) {
            x->sort = SPYR_SORT_NAME;
            T_EQ_INT(spyR_tree_resort(x), 0);
          }
        }
        T_EQ_INT(spyR_tree_materialize(&e), 0);
        size_t nn = e.nn;
        idix *ix = malloc(nn * sizeof *ix);
        unsigned char *want = calloc(nn, 1), *isrow = calloc(nn, 1);
        uint32_t *rows = malloc((nn + 1) * sizeof *rows);
        T_ASSERT(ix && want && isrow && rows);
        for (size_t i = 0; i < nn; i++) ix[i] = (idix){e.n[i].id, (uint32_t)i};
        qsort(ix, nn, sizeof *ix, idix_cmp);
        size_t nr = ref_rows(&e, want, rows);
        for (int step = 0; step < 120; step++) {
          /* The cursor on a row (as the browser's keys act on it) or, now
          ** and then, an action on any node. */
          uint32_t x = nr && rnd() % 4 ? rows[rnd() % nr]
                                       : 1 + (uint32_t)(rnd() % (nn - 1));
          uint32_t tx = t_node(&t, &e, x);
          if (isrow[x]) t.cur = tx;
          uint32_t oc = spyR_tree_cur(&t);
          uint64_t ocid = oc == SPY_NONE ? 0 : t.n[oc].id;
          unsigned op = (unsigned)(rnd() % 100);
          int on = (int)(rnd() % 2), cursor_kept = 1;
          if (op < 30) {
            T_EQ_INT(spyR_tree_set(&t, tx, on), 0);
            want[x] = (unsigned char)on;
          } else if (op < 65) {
            size_t made = t.nn;
            T_EQ_INT(spyR_tree_subtree(&t, tx, on), 0);
            T_EQ_INT(t.nn, made); /* O(1): nothing made */
            ref_subtree(&e, want, x, on);
            marks++;
          } else if (op < 72) {
            T_EQ_INT(spyR_tree_all(&t, on), 0);
            memset(want, on, nn);
          } else if (op < 84) {
            double pct = (double)(rnd() % 3) * 0.4;
            e.threshold_pct = t.threshold_pct = pct;
            T_EQ_INT(spyR_tree_refilter(&e), 0);
            T_EQ_INT(spyR_tree_refilter(&t), 0);
          } else if (op < 93) {
            int rc = spyR_tree_focus(&t, tx);
            T_EQ_INT(spyR_tree_focus(&e, x), rc);
            if (rc == 0) want[x] = 1;
            cursor_kept = 0;
          } else {
            int rc = spyR_tree_unfocus(&t);
            T_EQ_INT(spyR_tree_unfocus(&e), rc);
            cursor_kept = 0;
          }
          T_EQ_INT(t.n[t.top].id, e.n[e.top].id);
          for (size_t i = 0; i < nr; i++) isrow[rows[i]] = 0;
          nr = ref_rows(&e, want, rows);
          for (size_t i = 0; i < nr; i++) isrow[rows[i]] = 1;
          checks++;
          /* The rows, down and up. */
          size_t k = 0;
          for (uint32_t y = spyR_tree_first(&t); y != SPY_NONE;
               y = spyR_tree_next(&t, y), k++) {
            T_ASSERT(k < nr);
            if (t.n[y].id != e.n[rows[k]].id)
              T_FAIL("view %u/%d/%d step %d: row %zu differs", proc, inv,
                     col, step, k);
          }
          T_EQ_INT(k, nr);
          T_EQ_INT(spyR_tree_nrows(&t), nr);
          k = nr;
          for (uint32_t y = spyR_tree_last(&t); y != SPY_NONE;
               y = spyR_tree_prev(&t, y)) {
            T_ASSERT(k > 0);
            T_EQ_INT(t.n[y].id, e.n[rows[--k]].id);
          }
          T_EQ_INT(k, 0);
          for (int i = 0; i < 4 && nr; i++) {
            size_t r = (size_t)(rnd() % nr);
            uint32_t y = spyR_tree_row(&t, r);
            T_ASSERT(y != SPY_NONE);
            T_EQ_INT(t.n[y].id, e.n[rows[r]].id);
            T_EQ_INT(spyR_tree_row_of(&t, y), r);
          }
          /* The state of every node made with children. */
          for (uint32_t i = 0; i < t.nn; i++) {
            if (!t.n[i].known || !t.n[i].nkids) continue;
            uint32_t ei = e_index(ix, nn, t.n[i].id);
            T_ASSERT(ei != SPY_NONE);
            if (ei && spyR_tree_expanded(&t, i) != want[ei])
              T_FAIL("view %u/%d/%d step %d: node %u open %d, want %d", proc,
                     inv, col, step, i, spyR_tree_expanded(&t, i), want[ei]);
          }
          /* The cursor, and its row number a budget at a time. */
          uint32_t c = spyR_tree_cur(&t);
          if (!nr) {
            T_EQ_INT(c, SPY_NONE);
            continue;
          }
          T_ASSERT(c != SPY_NONE);
          if (cursor_kept) {
            uint32_t w = ocid ? e_index(ix, nn, ocid) : SPY_NONE;
            while (w != SPY_NONE && w != e.top && !isrow[w])
              w = e.n[w].parent;
            if (w == SPY_NONE || w == e.top) w = rows[0];
            T_EQ_INT(t.n[c].id, e.n[w].id);
          }
          T_ASSERT(isrow[e_index(ix, nn, t.n[c].id)]);
          size_t row, nrows, calls = 0;
          int rc;
          while ((rc = spyR_tree_position(&t, 3, &row, &nrows)) == 1)
            T_ASSERT(++calls <= nr);
          T_EQ_INT(rc, 0);
          T_EQ_INT(nrows, nr);
          T_EQ_INT(e.n[rows[row]].id, t.n[c].id);
        }
        free(ix);
        free(want);
        free(isrow);
        free(rows);
        spyR_tree_free(&e);
        spyR_tree_free(&t);
      }
  T_ASSERT(checks == 16 * 120);
  T_ASSERT(marks > 16 * 30);
  spy_profile_free(p);
}

const struct spy_test t_tui_lazy[] = {
  {"tree_lazy_views", t_lazy_views, 0},
  {"tree_lazy_rows", t_lazy_rows, 0},
  {"tree_marks", t_marks, 0},
  {0}
};
