/*
** report/tsearch.c: searching the browsable call tree of report/tree.h
** (the query, the matches in pre-order, stepping between them), over
** spyR_tree_walk.
*/
#include "config.h"

#include "report/tree.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

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

int spyR_tree_hits(spyR_tree *t) {
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
  int rc = spyR_tree_hits(t);
  if (rc) return rc;
  free(t->match);
  t->match = NULL;
  matcher m = {0, 0};
  t->n[t->top].pre = 0;
  rc = spyR_tree_walk(t, t->top, t->min_ns, match_visit, &m);
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
    uint32_t *ns = spyR_stack_room(stk, &cap, sp + 2, sizeof *stk);
    if (!ns) {
      rc = SPY_ENOMEM;
      break;
    }
    stk = ns;
    stk[sp++] = c, stk[sp++] = e == 2 ? t->n[c].nkids : 0;
  }
  free(stk);
  return rc;
}

static uint32_t step_match(spyR_tree *t, int dir) {
  if (spyR_tree_hits(t) < 0 || !t->nhit) return SPY_NONE;
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
    int rc = dir > 0 ? spyR_tree_walk(t, t->top, t->min_ns, fwd_visit, &s)
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
