/*
** tests/test_tui.c: the browser without a terminal.
**
** The tree model (report/tree.c) against the profile's own numbers: every
** view (each process and all merged, inverted or not, recursion collapsed
** or not, focused, expanded) keeps "total = self + children" and the
** selected processes' total at the root; the callers view's top level is
** spy_profile_leaves; the fully expanded tree of one process is, row for
** row and guide for guide, what the text report's walker (report/walk.c)
** prints; search finds every matching row of the expanded tree, in
** reading order, and n/N visit them in order; with everything expanded
** and nothing made yet, the rows stepped through, looked up by number,
** counted on a budget, paged and searched are the eager tree's, row for
** row. The screens (tui/view.c)
** are checked through the same key table the terminal uses. The real
** binary in a real terminal is tests/tui/e2e.sh (suite "tui/e2e").
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

/* ------------------------------------------------------------------------
** Profiles
** --------------------------------------------------------------------- */

/* A small deterministic generator (xorshift), so failures reproduce. */
uint64_t rng = 88172645463325252u;
uint64_t rnd(void) {
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return rng;
}

/* A random profile: `nproc` processes, about `nnodes` nodes in all, frames
** drawn from a pool of `nframes` methods and a few primitives (so paths
** repeat frames: recursion). Siblings have distinct frames when `unique`
** (as the sampler makes them). Totals are self + children, as the
** sampler aggregates. */
spy_profile *random_profile(unsigned nproc, unsigned nnodes,
                            unsigned nframes, int unique) {
  spy_profile *p = spyP_new();
  T_ASSERT(p);
  size_t nf = nframes + nproc;
  p->frames = spyP_calloc(p, nf, sizeof *p->frames);
  p->nodes = spyP_calloc(p, nnodes + nproc, sizeof *p->nodes);
  p->processes = spyP_calloc(p, nproc, sizeof *p->processes);
  T_ASSERT(p->frames && p->nodes && p->processes);
  for (unsigned i = 0; i < nframes; i++) {
    char name[64];
    int prim = i % 7 == 6;
    snprintf(name, sizeof name, prim ? "Prim%u>>op" : "Class%u>>method%u",
             i, i % 5);
    p->frames[i] = (spy_frame){prim ? SPY_FRAME_PRIM : SPY_FRAME_METHOD,
                               prim ? i : 0x1000 + i, spyP_strdup(p, name)};
  }
  for (unsigned k = 0; k < nproc; k++) {
    char name[32];
    snprintf(name, sizeof name, "proc %u", k);
    p->frames[nframes + k] =
        (spy_frame){SPY_FRAME_ROOT, k, spyP_strdup(p, name)};
  }
  p->nframes = nf;
  uint32_t *nkids = calloc(nnodes + nproc, sizeof *nkids);
  T_ASSERT(nkids);
  for (unsigned k = 0; k < nproc; k++) {
    uint32_t r = (uint32_t)p->nnodes++;
    p->nodes[r] = (spy_node){nframes + k, SPY_NONE, SPY_NONE, SPY_NONE,
                             0, k == 1 ? 7000 : 0, 0, k == 1 ? 1 : 0};
    p->processes[k] = (spy_process){k + 1, p->frames[nframes + k].name, r, 0,
                                    0};
    p->nprocesses++;
  }
  for (unsigned i = 0; i < nnodes; i++) {
    /* A parent among the last nodes made gives depth; among all gives
    ** breadth. */
    uint32_t span = (uint32_t)p->nnodes;
    uint32_t par = rnd() % 3 ? span - 1 - (uint32_t)(rnd() % (span < 8 ? span
                                                                       : 8))
                             : (uint32_t)(rnd() % span);
    uint32_t f = unique ? (uint32_t)((p->nodes[par].frame * 31u + nkids[par] +
                                      (uint32_t)(rnd() % 2)) % nframes)
                        : (uint32_t)(rnd() % nframes);
    if (unique) {
      /* Skip frames a sibling already has. */
      int clash = 1;
      for (unsigned tries = 0; clash && tries < nframes; tries++) {
        clash = 0;
        for (uint32_t c = p->nodes[par].first_child; c != SPY_NONE;
             c = p->nodes[c].next_sibling)
          if (p->nodes[c].frame == f) clash = 1;
        if (clash) f = (f + 1) % nframes;
      }
      if (clash) continue;
    }
    uint32_t n = (uint32_t)p->nnodes++;
    uint64_t self = rnd() % 4 ? (rnd() % 1000) * 1000 + 1 : 0;
    p->nodes[n] = (spy_node){f, par, SPY_NONE, p->nodes[par].first_child, 0,
                             self, 0, self / 1000};
    p->nodes[par].first_child = n;
    nkids[par]++;
  }
  free(nkids);
  /* Totals bottom-up (children have larger indices). */
  for (size_t i = 0; i < p->nnodes; i++) {
    p->nodes[i].total_ns = p->nodes[i].self_ns;
    p->nodes[i].tallies = p->nodes[i].self_tallies;
  }
  for (size_t i = p->nnodes; i-- > 0;) {
    uint32_t par = p->nodes[i].parent;
    if (par == SPY_NONE) continue;
    p->nodes[par].total_ns += p->nodes[i].total_ns;
    p->nodes[par].tallies += p->nodes[i].tallies;
  }
  for (unsigned k = 0; k < nproc; k++) {
    p->processes[k].total_ns = p->nodes[p->processes[k].root].total_ns;
    p->processes[k].tallies = p->nodes[p->processes[k].root].tallies;
    p->wall_ns += p->processes[k].total_ns;
    p->tallies += p->processes[k].tallies;
  }
  p->interval_ns = 100000;
  p->clock = "tsc";
  return p;
}

/* ------------------------------------------------------------------------
** Invariants
** --------------------------------------------------------------------- */

uint64_t selected_total(const spy_profile *p, uint32_t process) {
  uint64_t s = 0;
  for (uint32_t i = 0; i < p->nprocesses; i++)
    if (process == SPYR_ALL || process == i) s += p->processes[i].total_ns;
  return s;
}

/* Every node: total = self + children, tallies likewise, children's
** parent is the node, depth one more; the root holds the selection's
** total; with collapse no frame repeats on a path. */
void check_tree(const spyR_tree *t) {
  T_EQ_INT(t->n[0].total_ns, selected_total(t->p, t->process));
  for (size_t i = 0; i < t->nn; i++) {
    const spyR_tnode *n = &t->n[i];
    uint64_t tot = n->self_ns, tal = n->self_tallies;
    for (uint32_t j = 0; j < n->nkids; j++) {
      const spyR_tnode *c = &t->n[t->kid[n->kids + j]];
      T_EQ_INT(c->parent, i);
      T_EQ_INT(c->depth, n->depth + 1);
      tot += c->total_ns;
      tal += c->tallies;
    }
    T_EQ_INT(n->total_ns, tot);
    T_EQ_INT(n->tallies, tal);
    if (t->collapse && n->frame != SPY_NONE)
      for (uint32_t a = n->parent; a != SPY_NONE; a = t->n[a].parent)
        if (t->n[a].frame == n->frame) T_FAIL("frame %u repeats", n->frame);
  }
}

/* With everything expanded and no threshold, the rows at depth 0 plus the
** top's self time are the top's total: nothing is lost or counted twice
** on screen. */
void check_rows(spyR_tree *t) {
  uint64_t s = t->n[t->top].self_ns;
  for (size_t r = 0; r < spyR_tree_nrows(t); r++)
    if (spyR_tree_row_depth(t, spyR_tree_row(t, r)) == 0) s += t->n[spyR_tree_row(t, r)].total_ns;
  T_EQ_INT(s, t->n[t->top].total_ns);
}

static void t_totals(void) {
  spy_profile *p = random_profile(3, 4000, 40, 0);
  for (uint32_t proc = 0; proc <= 3; proc++)
    for (int inv = 0; inv < 2; inv++)
      for (int col = 0; col < 2; col++) {
        spyR_tree t;
        spyR_tree_init(&t, p);
        t.process = proc == 3 ? SPYR_ALL : proc;
        t.inverted = inv;
        t.collapse = col;
        T_EQ_INT(spyR_tree_build(&t), 0);
        T_EQ_INT(spyR_tree_materialize(&t), 0);
        check_tree(&t);
        T_EQ_INT(spyR_tree_all(&t, 1), 0);
        check_rows(&t);
        /* Focus on the heaviest child with children, twice, and back. */
        for (int k = 0; k < 2; k++) {
          uint32_t best = SPY_NONE;
          for (size_t r = 0; r < spyR_tree_nrows(&t); r++)
            if (spyR_tree_row_depth(&t, spyR_tree_row(&t, r)) == 0 && t.n[spyR_tree_row(&t, r)].nkids) {
              best = spyR_tree_row(&t, r);
              break;
            }
          if (best == SPY_NONE) break;
          T_EQ_INT(spyR_tree_focus(&t, best), 0);
          T_EQ_INT(t.top, best);
          check_rows(&t);
        }
        while (spyR_tree_unfocus(&t) == 0) {
        }
        T_EQ_INT(t.top, 0);
        check_rows(&t);
        /* Sorting changes the order only. */
        for (int s = 0; s < SPYR_SORT_N; s++) {
          t.sort = (spyR_sort)s;
          T_EQ_INT(spyR_tree_resort(&t), 0);
          check_rows(&t);
        }
        spyR_tree_free(&t);
      }
  spy_profile_free(p);
}

/* The callers view's first level is the leaves: self time per frame, as
** the library's spy_profile_leaves computes it for the whole profile. */
static void t_inverted_leaves(void) {
  spy_profile *p = random_profile(2, 3000, 30, 0);
  spyR_tree t;
  spyR_tree_init(&t, p);
  t.process = SPYR_ALL;
  t.inverted = 1;
  T_EQ_INT(spyR_tree_build(&t), 0);
  spy_leaf *lv = malloc(p->nframes * sizeof *lv);
  T_ASSERT(lv);
  int k = spy_profile_leaves(p, lv, p->nframes);
  T_ASSERT(k > 0);
  size_t seen = 0;
  for (int i = 0; i < k; i++) {
    if (p->frames[lv[i].frame].kind == SPY_FRAME_ROOT) continue;
    uint32_t c = spyR_tree_find_top(&t, lv[i].frame);
    T_ASSERT(c != SPY_NONE);
    T_EQ_INT(t.n[c].total_ns, lv[i].self_ns);
    seen++;
  }
  /* And nothing else is at the top (the merged root keeps root self). */
  T_EQ_INT(t.n[0].nkids, seen);
  /* The Leaves list of the model agrees, in the same order. */
  spy_leaf *ml;
  size_t mn;
  T_EQ_INT(spyR_tree_leaves(&t, &ml, &mn), 0);
  T_EQ_INT(mn, seen);
  for (size_t i = 0, j = 0; i < (size_t)k; i++) {
    if (p->frames[lv[i].frame].kind == SPY_FRAME_ROOT) continue;
    T_EQ_INT(ml[j].self_ns, lv[i].self_ns);
    j++;
  }
  free(ml);
  free(lv);
  spyR_tree_free(&t);
  spy_profile_free(p);
}

/* A hand-made recursion: f -> g -> f -> g -> h, self 1/2/3/4/5 ms. With
** recursion collapsed: f (total 15, self 1+3) -> g (total 11, self 2+4)
** -> h (5). */
static void t_collapse(void) {
  spy_profile *p = spyP_new();
  p->frames = spyP_calloc(p, 4, sizeof *p->frames);
  p->nodes = spyP_calloc(p, 6, sizeof *p->nodes);
  p->processes = spyP_calloc(p, 1, sizeof *p->processes);
  const char *nm[] = {"main", "f", "g", "h"};
  for (int i = 0; i < 4; i++)
    p->frames[i] = (spy_frame){i ? SPY_FRAME_METHOD : SPY_FRAME_ROOT,
                               (uint64_t)i, nm[i]};
  p->nframes = 4;
  uint32_t fr[] = {0, 1, 2, 1, 2, 3};
  uint64_t self[] = {0, 1, 2, 3, 4, 5};
  for (uint32_t i = 0; i < 6; i++) {
    uint64_t tot = 0;
    for (uint32_t j = i; j < 6; j++) tot += self[j] * 1000000;
    p->nodes[i] = (spy_node){fr[i], i ? i - 1 : SPY_NONE,
                             i < 5 ? i + 1 : SPY_NONE, SPY_NONE, tot,
                             self[i] * 1000000, tot / 100000,
                             self[i] * 10};
  }
  p->nnodes = 6;
  p->processes[0] = (spy_process){1, "main", 0, 15000000, 150};
  p->nprocesses = 1;
  p->wall_ns = 15000000;
  spyR_tree t;
  spyR_tree_init(&t, p);
  t.collapse = 1;
  T_EQ_INT(spyR_tree_build(&t), 0);
  T_EQ_INT(spyR_tree_materialize(&t), 0);
  check_tree(&t);
  T_EQ_INT(t.nn, 4); /* root, f, g, h */
  uint32_t f = spyR_tree_find_top(&t, 1);
  T_ASSERT(f != SPY_NONE);
  T_EQ_INT(t.n[f].total_ns, 15000000);
  T_EQ_INT(t.n[f].self_ns, 4000000);
  T_EQ_INT(t.n[f].nkids, 1);
  uint32_t g = t.kid[t.n[f].kids];
  T_EQ_INT(t.n[g].total_ns, 11000000);
  T_EQ_INT(t.n[g].self_ns, 6000000);
  T_EQ_INT(t.n[g].nkids, 1);
  T_EQ_INT(t.n[t.kid[t.n[g].kids]].total_ns, 5000000);
  /* Uncollapsed it is the profile's own chain, node for node. */
  t.collapse = 0;
  T_EQ_INT(spyR_tree_build(&t), 0);
  T_EQ_INT(spyR_tree_materialize(&t), 0);
  T_EQ_INT(t.nn, 6);
  check_tree(&t);
  /* Inverted and collapsed: h's callers are g, then f, once each. */
  t.inverted = 1;
  t.collapse = 1;
  T_EQ_INT(spyR_tree_build(&t), 0);
  T_EQ_INT(spyR_tree_materialize(&t), 0);
  check_tree(&t);
  uint32_t h = spyR_tree_find_top(&t, 3);
  T_ASSERT(h != SPY_NONE);
  T_EQ_INT(t.n[h].total_ns, 5000000);
  T_EQ_INT(t.n[h].nkids, 1);
  uint32_t hg = t.kid[t.n[h].kids];
  T_EQ_INT(t.n[hg].frame, 2);
  T_EQ_INT(t.n[hg].nkids, 1);
  T_EQ_INT(t.n[t.kid[t.n[hg].kids]].frame, 1);
  T_EQ_INT(t.n[t.kid[t.n[hg].kids]].nkids, 0);
  spyR_tree_free(&t);
  spy_profile_free(p);
}

/* The expanded tree of one process is the text report's tree: the same
** rows in the same order with the same guides (report/walk.c). */
typedef struct wrow {
  uint32_t frame;
  unsigned depth;
  char guides[512];
} wrow;

typedef struct wrows {
  wrow *r;
  size_t n, cap;
} wrows;

static int walk_sink(void *ud, const spy_profile *p, const spyR_row *row) {
  wrows *w = ud;
  if (w->n == w->cap) {
    w->cap = w->cap ? 2 * w->cap : 256;
    w->r = realloc(w->r, w->cap * sizeof *w->r);
    T_ASSERT(w->r);
  }
  wrow *x = &w->r[w->n++];
  x->frame = p->nodes[row->node].frame;
  x->depth = row->depth;
  snprintf(x->guides, sizeof x->guides, "%s", row->guides);
  return 0;
}

static void t_matches_report(void) {
  spy_profile *p = random_profile(2, 3000, 60, 1);
  for (uint32_t proc = 0; proc < 2; proc++) {
    wrows w = {0};
    T_EQ_INT(spyR_walk(p, proc, 0.5, SPYR_WRAP_DEFAULT, walk_sink, &w), 0);
    spyR_tree t;
    spyR_tree_init(&t, p);
    t.process = proc;
    t.threshold_pct = 0.5;
    T_EQ_INT(spyR_tree_build(&t), 0);
    T_EQ_INT(spyR_tree_all(&t, 1), 0);
    T_EQ_INT(spyR_tree_nrows(&t), w.n);
    T_ASSERT(w.n > 20);
    spyR_buf g = {0};
    for (size_t r = 0; r < spyR_tree_nrows(&t); r++) {
      T_EQ_INT(t.n[spyR_tree_row(&t, r)].frame, w.r[r].frame);
      T_EQ_INT(spyR_tree_row_depth(&t, spyR_tree_row(&t, r)), w.r[r].depth);
      spyR_buf_clear(&g);
      spyR_tree_guides(&t, spyR_tree_row(&t, r), SPYR_WRAP_DEFAULT, &g);
      T_EQ_STR(spyR_buf_str(&g), w.r[r].guides);
    }
    spyR_buf_free(&g);
    free(w.r);
    spyR_tree_free(&t);
  }
  spy_profile_free(p);
}

/* Search: the matches are exactly the expanded tree's rows whose label
** contains the query (any case), in reading order; n walks them in that
** order and wraps; N walks back; every match is revealed when visited.
** The same holds when n/N step without the list (it went stale). */
static void t_search(void) {
  spy_profile *p = random_profile(2, 2000, 30, 0);
  const char *queries[] = {"method3", "CLASS1", "prim", "nothing-like-it"};
  for (size_t qi = 0; qi < 4; qi++) {
    spyR_tree t;
    spyR_tree_init(&t, p);
    t.threshold_pct = 0.2;
    T_EQ_INT(spyR_tree_build(&t), 0);
    T_EQ_INT(spyR_tree_all(&t, 1), 0);
    /* Brute force over the expanded rows. */
    size_t nexp = 0;
    uint32_t *exp = malloc((spyR_tree_nrows(&t) + 1) * sizeof *exp);
    spyR_buf lab = {0};
    for (size_t r = 0; r < spyR_tree_nrows(&t); r++) {
      spyR_buf_clear(&lab);
      spyR_tree_label(&t, spyR_tree_row(&t, r), &lab);
      char low[256], q[64];
      size_t i;
      for (i = 0; lab.s[i] && i < 255; i++)
        low[i] = (char)(lab.s[i] | (lab.s[i] >= 'A' && lab.s[i] <= 'Z' ? 32
                                                                       : 0));
      low[i] = 0;
      for (i = 0; queries[qi][i]; i++)
        q[i] = (char)(queries[qi][i] |
                      (queries[qi][i] >= 'A' && queries[qi][i] <= 'Z' ? 32
                                                                      : 0));
      q[i] = 0;
      if (strstr(low, q)) exp[nexp++] = spyR_tree_row(&t, r);
    }
    spyR_buf_free(&lab);
    T_EQ_INT(spyR_tree_all(&t, 0), 0);
    int k = spyR_tree_search(&t, queries[qi]);
    T_EQ_INT(k, nexp);
    for (size_t i = 0; i < nexp; i++) T_EQ_INT(t.match[i], exp[i]);
    if (nexp) {
      /* n from the first row visits every match in order, then wraps. */
      spyR_tree_home(&t);
      size_t start = spyR_tree_cur(&t) == exp[0] ? 1 : 0;
      for (size_t i = 0; i < nexp + 1; i++) {
        uint32_t m = spyR_tree_next_match(&t, 1);
        T_EQ_INT(m, exp[(i + start) % nexp]);
        T_EQ_INT(spyR_tree_reveal(&t, m), 0);
        T_EQ_INT(spyR_tree_cur(&t), m);
      }
      /* N goes back one. */
      uint32_t cur = spyR_tree_cur(&t);
      size_t at = 0;
      while (exp[at] != cur) at++;
      T_EQ_INT(spyR_tree_next_match(&t, -1), exp[(at + nexp - 1) % nexp]);
      /* With the list stale (a rebuild since the search), n and N step
      ** through a tree made afresh, making nodes as they go, and meet the
      ** same matches (by id) in the same order, both ways round. */
      spyR_tree u;
      spyR_tree_init(&u, p);
      u.threshold_pct = 0.2;
      T_EQ_INT(spyR_tree_build(&u), 0);
      T_EQ_INT(spyR_tree_search(&u, queries[qi]), nexp);
      T_EQ_INT(spyR_tree_build(&u), 0);
      T_ASSERT(u.match_stale);
      spyR_tree_home(&u);
      start = u.n[spyR_tree_cur(&u)].id == t.n[exp[0]].id ? 1 : 0;
      for (size_t i = 0; i < nexp + 1; i++) {
        uint32_t m = spyR_tree_next_match(&u, 1);
        T_ASSERT(m != SPY_NONE);
        T_EQ_INT(u.n[m].id, t.n[exp[(i + start) % nexp]].id);
        T_EQ_INT(spyR_tree_reveal(&u, m), 0);
        T_EQ_INT(spyR_tree_cur(&u), m);
      }
      at = (nexp + start) % nexp; /* the last one visited */
      for (size_t i = 1; i < nexp + 2; i++) {
        uint32_t m = spyR_tree_next_match(&u, -1);
        T_ASSERT(m != SPY_NONE);
        T_EQ_INT(u.n[m].id, t.n[exp[(at + (nexp + 1) * nexp - i) % nexp]].id);
        T_EQ_INT(spyR_tree_reveal(&u, m), 0);
      }
      T_ASSERT(u.match_stale);
      spyR_tree_free(&u);
    }
    /* Past the search budget: 1 if there is a match at all (0 if not),
    ** the list left stale, and n goes to the first match. */
    spyR_tree v;
    spyR_tree_init(&v, p);
    v.threshold_pct = 0.2;
    v.search_budget = 3;
    T_EQ_INT(spyR_tree_build(&v), 0);
    T_EQ_INT(spyR_tree_search(&v, queries[qi]), nexp ? 1 : 0);
    T_ASSERT(v.match_stale);
    spyR_tree_home(&v);
    uint32_t m = spyR_tree_next_match(&v, 1);
    if (!nexp) T_EQ_INT(m, SPY_NONE);
    else {
      size_t first = v.n[spyR_tree_cur(&v)].id == t.n[exp[0]].id ? 1 : 0;
      T_EQ_INT(v.n[m].id, t.n[exp[first % nexp]].id);
    }
    spyR_tree_free(&v);
    free(exp);
    spyR_tree_free(&t);
  }
  spy_profile_free(p);
}

/* Expansion, focus and the cursor are kept by node id: they survive a
** resort, a rebuild from a new profile object with the same content (a
** live snapshot), and a trip to another process and back. */
static void t_stable_ids(void) {
  rng = 12345;
  spy_profile *p = random_profile(2, 1500, 25, 0);
  spyR_tree t;
  spyR_tree_init(&t, p);
  t.process = 0;
  T_EQ_INT(spyR_tree_build(&t), 0);
  T_EQ_INT(spyR_tree_open_heavy(&t, 2.0), 0);
  /* Open the last row with children, put the cursor on the last row. */
  size_t r = spyR_tree_nrows(&t);
  while (r-- > 0 && !spyR_tree_nshown(&t, spyR_tree_row(&t, r))) {
  }
  T_ASSERT(r < spyR_tree_nrows(&t));
  T_EQ_INT(spyR_tree_set(&t, spyR_tree_row(&t, r), 1), 0);
  spyR_tree_end(&t);
  uint64_t cur = t.n[spyR_tree_cur(&t)].id;
  size_t rows = spyR_tree_nrows(&t);
  t.sort = SPYR_SORT_NAME;
  T_EQ_INT(spyR_tree_resort(&t), 0);
  T_EQ_INT(spyR_tree_nrows(&t), rows);
  T_EQ_INT(t.n[spyR_tree_cur(&t)].id, cur);
  t.sort = SPYR_SORT_TOTAL;
  T_EQ_INT(spyR_tree_resort(&t), 0);
  /* A second profile, same content (another "snapshot"). */
  rng = 12345;
  spy_profile *q = random_profile(2, 1500, 25, 0);
  t.p = q;
  T_EQ_INT(spyR_tree_build(&t), 0);
  T_EQ_INT(spyR_tree_nrows(&t), rows);
  T_EQ_INT(t.n[spyR_tree_cur(&t)].id, cur);
  t.process = 1;
  T_EQ_INT(spyR_tree_build(&t), 0);
  t.process = 0;
  T_EQ_INT(spyR_tree_build(&t), 0);
  T_EQ_INT(spyR_tree_nrows(&t), rows);
  /* Two nested focuses survive a rebuild from the other profile (whose
  ** nodes are made afresh: the focus path is followed down by id), and u
  ** goes back to the outer one, then to the root. */
  uint32_t f1 = SPY_NONE, f2 = SPY_NONE;
  for (size_t k = 0; k < spyR_tree_nrows(&t) && f1 == SPY_NONE; k++)
    if (spyR_tree_nshown(&t, spyR_tree_row(&t, k))) f1 = spyR_tree_row(&t, k);
  T_ASSERT(f1 != SPY_NONE);
  T_EQ_INT(spyR_tree_focus(&t, f1), 0);
  for (size_t k = 0; k < spyR_tree_nrows(&t) && f2 == SPY_NONE; k++)
    if (spyR_tree_nshown(&t, spyR_tree_row(&t, k))) f2 = spyR_tree_row(&t, k);
  T_ASSERT(f2 != SPY_NONE);
  T_EQ_INT(spyR_tree_focus(&t, f2), 0);
  uint64_t id1 = t.n[f1].id, id2 = t.n[f2].id;
  t.p = p;
  T_EQ_INT(spyR_tree_build(&t), 0);
  T_EQ_INT(t.n[t.top].id, id2);
  T_EQ_INT(spyR_tree_unfocus(&t), 0);
  T_EQ_INT(t.n[t.top].id, id1);
  T_EQ_INT(spyR_tree_unfocus(&t), 0);
  T_EQ_INT(t.top, 0);
  spyR_tree_free(&t);
  spy_profile_free(p);
  spy_profile_free(q);
}

/* A root with two children a and b of the given self times. */
static spy_profile *two_kids(uint64_t a, uint64_t b) {
  spy_profile *p = spyP_new();
  p->frames = spyP_calloc(p, 3, sizeof *p->frames);
  p->nodes = spyP_calloc(p, 3, sizeof *p->nodes);
  p->processes = spyP_calloc(p, 1, sizeof *p->processes);
  T_ASSERT(p->frames && p->nodes && p->processes);
  p->nframes = 3, p->nnodes = 3, p->nprocesses = 1;
  const char *nm[] = {"(root)", "A>>a", "B>>b"};
  for (uint32_t i = 0; i < 3; i++) {
    p->frames[i].kind = i ? SPY_FRAME_METHOD : SPY_FRAME_ROOT;
    p->frames[i].key = i;
    p->frames[i].name = nm[i];
  }
  int a_first = a >= b;
  p->nodes[0] = (spy_node){0, SPY_NONE, a_first ? 1 : 2, SPY_NONE,
                           a + b, 0, a + b, 0};
  p->nodes[1] = (spy_node){1, 0, SPY_NONE, a_first ? 2 : SPY_NONE, a, a, a, a};
  p->nodes[2] = (spy_node){2, 0, SPY_NONE, a_first ? SPY_NONE : 1, b, b, b, b};
  p->processes[0] = (spy_process){1, "main", 0, a + b, a + b};
  return p;
}

/* A live view: a cursor on the first row stays on the first row when a
** new snapshot reorders the tree (the node it was on follows elsewhere
** otherwise); a cursor lower down follows its node. */
static void t_live_top(void) {
  spy_profile *p = two_kids(100, 50), *q = two_kids(10, 50);
  spyR_tree t;
  spyR_tree_init(&t, p);
  T_EQ_INT(spyR_tree_build(&t), 0);
  spyR_tree_home(&t);
  uint32_t c = spyR_tree_cur(&t);
  T_EQ_STR(p->frames[t.n[c].frame].name, "A>>a");
  t.p = q;
  T_EQ_INT(spyR_tree_build(&t), 0);
  c = spyR_tree_cur(&t);
  T_EQ_STR(q->frames[t.n[c].frame].name, "B>>b"); /* the first row */
  spyR_tree_move(&t, 1); /* A, second */
  t.p = p;
  T_EQ_INT(spyR_tree_build(&t), 0);
  c = spyR_tree_cur(&t);
  T_EQ_STR(p->frames[t.n[c].frame].name, "A>>a"); /* followed: now first */
  spyR_tree_free(&t);
  spy_profile_free(p);
  spy_profile_free(q);
}

/* Expansion state against a plain array: random opens and closes (the map
** of own states grows and is overwritten) under both E and C. */
static void t_expansion(void) {
  spy_profile *p = random_profile(1, 3000, 50, 1);
  spyR_tree t;
  spyR_tree_init(&t, p);
  T_EQ_INT(spyR_tree_build(&t), 0);
  T_EQ_INT(spyR_tree_materialize(&t), 0);
  unsigned char *want = calloc(t.nn, 1);
  T_ASSERT(want);
  for (int round = 0; round < 4; round++) {
    int all = round % 2;
    T_EQ_INT(spyR_tree_all(&t, all), 0);
    memset(want, all, t.nn);
    for (int i = 0; i < 20000; i++) {
      uint32_t n = (uint32_t)(rnd() % t.nn);
      int on = (int)(rnd() % 2);
      T_EQ_INT(spyR_tree_set(&t, n, on), 0);
      want[n] = (unsigned char)on;
      if (i % 1000 == 0)
        for (uint32_t k = 0; k < t.nn; k++)
          if (spyR_tree_expanded(&t, k) != want[k])
            T_FAIL("node %u: expanded %d, want %d", k,
                   spyR_tree_expanded(&t, k), want[k]);
    }
    /* The rows are exactly the shown nodes whose ancestors are open. */
    size_t rows = 0;
    for (uint32_t k = 1; k < t.nn; k++) {
      int vis = 1;
      for (uint32_t a = t.n[k].parent; a != 0; a = t.n[a].parent)
        vis &= want[a];
      rows += (size_t)vis;
    }
    T_EQ_INT(spyR_tree_nrows(&t), rows);
  }
  free(want);
  spyR_tree_free(&t);
  spy_profile_free(p);
}

/* A profile whose sibling links loop is an error, not a hang. */
static void t_cycle(void) {
  spy_profile *p = random_profile(1, 50, 10, 0);
  uint32_t c = p->nodes[0].first_child;
  T_ASSERT(c != SPY_NONE);
  p->nodes[c].next_sibling = c;
  spyR_tree t;
  spyR_tree_init(&t, p);
  T_EQ_INT(spyR_tree_build(&t), SPY_EFORMAT);
  T_EQ_INT(spyR_tree_nrows(&t), 0);
  spyR_tree_free(&t);
  spy_profile_free(p);
}

/* ------------------------------------------------------------------------
** Screens and keys (tui/view.c), no terminal
** --------------------------------------------------------------------- */

static void keys(spyT_app *a, const char *s) {
  for (; *s; s++) spyT_key(a, *s == '\n' ? SPYT_K_ENTER : *s);
}

static void t_screens(void) {
  spy_profile *p = random_profile(2, 800, 20, 1);
  spyT_app a;
  T_EQ_INT(spyT_app_init(&a, p, 0.5), 0);
  char *s = spyT_dump(&a, 24, 80);
  T_ASSERT(s);
  /* 24 lines of at most 80 columns; the tree's first row under the
  ** heading is the heaviest child. */
  size_t lines = 0;
  for (char *l = s, *e; (e = strchr(l, '\n')); l = e + 1, lines++)
    T_ASSERT(spyR_columns(l, (size_t)(e - l)) <= 80);
  T_EQ_INT(lines, 24);
  T_ASSERT(strstr(s, "[Tree]"));
  T_ASSERT(strstr(s, "tallies"));
  free(s);
  /* Search moves the cursor onto a matching row. */
  keys(&a, "/method4\n");
  uint32_t n = spyR_tree_cur(&a.tree);
  T_ASSERT(n != SPY_NONE && spyR_tree_is_match(&a.tree, n));
  /* f focuses (if the match has children), u comes back. */
  if (a.tree.n[n].nkids) {
    keys(&a, "f");
    T_EQ_INT(a.tree.top, n);
    keys(&a, "u");
    T_EQ_INT(a.tree.top, 0);
  }
  /* G: the callers view; again: back. */
  keys(&a, "G");
  T_EQ_INT(a.tree.inverted, 1);
  T_EQ_INT(spyR_tree_materialize(&a.tree), 0);
  check_tree(&a.tree);
  keys(&a, "G");
  T_EQ_INT(a.tree.inverted, 0);
  /* ? lists every help line, each at most 80 columns on screen. */
  keys(&a, "?");
  s = spyT_dump(&a, 60, 80);
  for (size_t i = 0; i < spyT_help_lines(); i++)
    if (spyT_help_line(i)[0] && !strstr(s, spyT_help_line(i)))
      T_FAIL("help line missing: %s", spyT_help_line(i));
  free(s);
  keys(&a, "x");
  T_EQ_INT(a.mode, SPYT_NORMAL);
  /* Tab walks the views and comes back; each draws at 300 columns. */
  int seen = 0;
  do {
    spyT_key(&a, SPYT_K_TAB);
    s = spyT_dump(&a, 50, 300);
    T_ASSERT(s);
    free(s);
    T_ASSERT(++seen <= SPYT_NVIEWS);
  } while (a.view != SPYT_TREE);
  T_ASSERT(seen >= 5); /* Tree Leaves Primitives Steps GC at least */
  /* T 100: nothing left on screen, but no crash; T 0 shows all. */
  keys(&a, "T100\n");
  T_EQ_INT(spyR_tree_nrows(&a.tree), 0);
  s = spyT_dump(&a, 15, 60);
  T_ASSERT(strstr(s, "nothing above the threshold"));
  free(s);
  keys(&a, "T0\nE");
  T_ASSERT(spyR_tree_nrows(&a.tree) > 100);
  /* A tiny screen draws without crashing. */
  s = spyT_dump(&a, 3, 10);
  T_ASSERT(s);
  free(s);
  T_EQ_INT(spyT_key(&a, 'q'), SPYT_QUIT);
  spyT_app_free(&a);
}

/* An empty profile (no process, no node) and an empty live snapshot
** still draw, in every view, at any size. */
static void t_empty(void) {
  spy_profile *p = spyP_new();
  T_ASSERT(p);
  spyT_app a;
  T_EQ_INT(spyT_app_init(&a, p, 0.5), 0);
  for (int v = 0; v < SPYT_NVIEWS; v++) {
    keys(&a, (char[]){(char)('1' + v), 0});
    char *s = spyT_dump(&a, 24, 80);
    T_ASSERT(s);
    free(s);
    s = spyT_dump(&a, 2, 5);
    T_ASSERT(s);
    free(s);
  }
  keys(&a, "1jkhlEC+-fuGrs/x\nnNT5\n?q");
  spyT_key(&a, SPYT_K_ESC);
  char *s = spyT_dump(&a, 24, 80);
  T_ASSERT(strstr(s, "(nothing above the threshold: T)"));
  free(s);
  /* A snapshot with a process replaces it. */
  T_EQ_INT(spyT_app_set_profile(&a, random_profile(1, 200, 10, 1)), 0);
  T_ASSERT(spyR_tree_nrows(&a.tree) > 0);
  spyT_app_free(&a);
}

/* The real binary in tmux: tests/tui/e2e.sh, every case. */
static void t_e2e(void) {
  char cmd[8192];
  snprintf(cmd, sizeof cmd, "bash '%s/tests/tui/e2e.sh' '%s/spyon' '%s' '%s' 2>&1",
           t_srcdir, t_builddir, t_srcdir, t_tmpdir());
  char *out = NULL;
  int rc = t_run(cmd, &out);
  if (rc != 0) T_FAIL("tests/tui/e2e.sh exited %d:\n%s", rc, out ? out : "");
  size_t ok = 0;
  for (const char *s = out; (s = strstr(s, "e2e: ok ")); s++) ok++;
  T_EQ_INT(ok, 11);
  free(out);
}

const struct spy_test t_tui[] = {
  {"tree_totals", t_totals, 0},
  {"tree_inverted_leaves", t_inverted_leaves, 0},
  {"tree_collapse", t_collapse, 0},
  {"tree_matches_report", t_matches_report, 0},
  {"tree_search", t_search, 0},
  {"tree_stable_ids", t_stable_ids, 0},
  {"tree_live_top", t_live_top, 0},
  {"tree_cycle", t_cycle, 0},
  {"tree_expansion", t_expansion, 0},
  {"screens", t_screens, 0},
  {"empty", t_empty, 0},
  {"e2e", t_e2e, 900},
  {0}
};
