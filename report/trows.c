/*
** report/trows.c: the rows of the browsable call tree of report/tree.h:
** stepping from row to row through the tree (no list of rows is kept),
** the cursor and the screen, and row numbers from memoized counts that
** are forgotten where the expansion changes.
*/
#include "config.h"

#include "report/tree.h"

#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------------
** Rows: steps through the tree
** --------------------------------------------------------------------- */

size_t spyR_tree_nshown(spyR_tree *t, uint32_t n) {
  if (spyR_tree_kids(t, n) < 0) return 0;
  size_t k = 0;
  for (uint32_t j = 0; j < t->n[n].nkids; j++)
    k += spyR_tree_shown(t, t->kid[t->n[n].kids + j]) != 0;
  return k;
}

uint32_t spyR_tree_cur(const spyR_tree *t) {
  return t->cur < t->nn ? t->cur : SPY_NONE;
}

/* Is a row's subtree open: the top always is, below it the expansion. */
static int open_row(spyR_tree *t, uint32_t n) {
  return n == t->top || spyR_tree_expanded(t, n);
}

/* The first shown child of p from place j on, going by dir (+1 or -1);
** SPY_NONE when none (or out of memory: t->oom). */
static uint32_t shown_from(spyR_tree *t, uint32_t p, int64_t j, int dir) {
  if (spyR_tree_kids(t, p) < 0) {
    t->oom = 1;
    return SPY_NONE;
  }
  for (; j >= 0 && j < (int64_t)t->n[p].nkids; j += dir) {
    uint32_t c = t->kid[t->n[p].kids + (uint32_t)j];
    if (spyR_tree_shown(t, c)) return c;
  }
  return SPY_NONE;
}

/* The last row of n's subtree (n itself when closed or childless). */
static uint32_t last_below(spyR_tree *t, uint32_t n) {
  while (open_row(t, n) && spyR_tree_kids(t, n) == 0) {
    uint32_t c = shown_from(t, n, (int64_t)t->n[n].nkids - 1, -1);
    if (c == SPY_NONE) break;
    n = c;
  }
  return n;
}

uint32_t spyR_tree_first(spyR_tree *t) {
  return t->nn ? shown_from(t, t->top, 0, 1) : SPY_NONE;
}

uint32_t spyR_tree_last(spyR_tree *t) {
  if (!t->nn) return SPY_NONE;
  uint32_t c = spyR_tree_first(t);
  return c == SPY_NONE ? SPY_NONE : last_below(t, t->top);
}

uint32_t spyR_tree_next(spyR_tree *t, uint32_t n) {
  if (n >= t->nn) return SPY_NONE;
  if (open_row(t, n)) {
    uint32_t c = shown_from(t, n, 0, 1);
    if (c != SPY_NONE) return c;
  }
  for (; n != t->top && n != SPY_NONE; n = t->n[n].parent) {
    uint32_t p = t->n[n].parent;
    /* Children first: sorting p's list may move n (its sib). */
    if (spyR_tree_kids(t, p) < 0) break;
    uint32_t c = shown_from(t, p, (int64_t)t->n[n].sib + 1, 1);
    if (c != SPY_NONE) return c;
  }
  return SPY_NONE;
}

uint32_t spyR_tree_prev(spyR_tree *t, uint32_t n) {
  if (n >= t->nn || n == t->top) return SPY_NONE;
  uint32_t p = t->n[n].parent;
  if (spyR_tree_kids(t, p) < 0) return SPY_NONE;
  uint32_t c = shown_from(t, p, (int64_t)t->n[n].sib - 1, -1);
  if (c != SPY_NONE) return last_below(t, c);
  return p == t->top ? SPY_NONE : p;
}

uint32_t spyR_tree_step(spyR_tree *t, uint32_t n, long d) {
  for (; d > 0; d--) {
    uint32_t x = spyR_tree_next(t, n);
    if (x == SPY_NONE) break;
    n = x;
  }
  for (; d < 0; d++) {
    uint32_t x = spyR_tree_prev(t, n);
    if (x == SPY_NONE) break;
    n = x;
  }
  return n;
}

int spyR_tree_visible(spyR_tree *t, uint32_t n) {
  if (n >= t->nn || n == t->top || !spyR_tree_shown(t, n)) return 0;
  for (uint32_t a = t->n[n].parent; a != t->top; a = t->n[a].parent)
    if (a == SPY_NONE || !spyR_tree_shown(t, a) || !spyR_tree_expanded(t, a))
      return 0;
  return 1;
}

uint32_t spyR_tree_row_depth(const spyR_tree *t, uint32_t n) {
  return t->n[n].depth - t->n[t->top].depth - 1;
}

/* Does row a come before row b? Up to their common ancestor, then their
** places under it. */
static int before(spyR_tree *t, uint32_t a, uint32_t b) {
  uint32_t x = a, y = b;
  while (t->n[x].depth > t->n[y].depth) x = t->n[x].parent;
  while (t->n[y].depth > t->n[x].depth) y = t->n[y].parent;
  if (x == y) return t->n[a].depth < t->n[b].depth;
  while (t->n[x].parent != t->n[y].parent)
    x = t->n[x].parent, y = t->n[y].parent;
  if (spyR_tree_kids(t, t->n[x].parent) < 0) return 0;
  return t->n[x].sib < t->n[y].sib;
}

/* After the rows changed: the cursor on its node, or on the nearest
** ancestor that is still a row, or on the first row. */
void spyR_tree_keep_cursor(spyR_tree *t) {
  uint32_t c = spyR_tree_cur(t);
  while (c != SPY_NONE && c != t->top && !spyR_tree_visible(t, c))
    c = t->n[c].parent;
  t->cur = c == SPY_NONE || c == t->top ? spyR_tree_first(t) : c;
}

void spyR_tree_move(spyR_tree *t, long d) {
  uint32_t c = spyR_tree_cur(t);
  t->cur = c == SPY_NONE ? spyR_tree_first(t) : spyR_tree_step(t, c, d);
}

void spyR_tree_home(spyR_tree *t) { t->cur = spyR_tree_first(t); }

void spyR_tree_end(spyR_tree *t) { t->cur = spyR_tree_last(t); }

void spyR_tree_scroll(spyR_tree *t, size_t h) {
  t->screen_h = h;
  uint32_t c = spyR_tree_cur(t);
  if (c == SPY_NONE || !h) {
    t->anchor = spyR_tree_first(t);
    return;
  }
  uint32_t a = t->anchor;
  if (a >= t->nn || !spyR_tree_visible(t, a)) a = c;
  /* The cursor within h rows from the anchor? Else the anchor moves:
  ** to the cursor (above), or so that the cursor is the last row. */
  uint32_t x = a;
  size_t i = 0;
  while (x != c && x != SPY_NONE && ++i < h) x = spyR_tree_next(t, x);
  if (x != c) a = before(t, c, a) ? c : spyR_tree_step(t, c, -(long)(h - 1));
  /* No blank lines at the bottom while there are rows above. */
  x = a;
  for (i = 1; i < h; i++) {
    uint32_t y = spyR_tree_next(t, x);
    if (y == SPY_NONE) break;
    x = y;
  }
  if (i < h) a = spyR_tree_step(t, a, -(long)(h - i));
  t->anchor = a;
}

uint32_t spyR_tree_screen_row(spyR_tree *t, size_t i) {
  uint32_t x = t->anchor < t->nn ? t->anchor : spyR_tree_first(t);
  while (x != SPY_NONE && i-- > 0) x = spyR_tree_next(t, x);
  return x;
}

/* ------------------------------------------------------------------------
** Rows: counts
** --------------------------------------------------------------------- */

/* A node's rows when open are forgotten when its expansion or a
** descendant's changes: forget n and its ancestors. */
void spyR_tree_forget_rows(spyR_tree *t, uint32_t n) {
  for (; n != SPY_NONE; n = t->n[n].parent) t->n[n].vis_at = 0;
}

/* Forget every count (E, C, T, a rebuild). */
void spyR_tree_rows_epoch(spyR_tree *t) {
  if (++t->epoch == 0) {
    for (size_t i = 0; i < t->nn; i++) t->n[i].vis_at = 0;
    t->epoch = 1;
  }
}

typedef struct cframe {
  uint32_t n, j;
  uint64_t rows;
} cframe;

/* Is n's count current: made in this epoch, and no mark that covers n
** (so none that covers a node below it) made since? Changes below n
** forget it (spyR_tree_forget_rows). */
static int counted(spyR_tree *t, uint32_t n) {
  if (t->n[n].vis_at != t->epoch) return 0;
  uint32_t m = spyR_tree_cover(t, n);
  return m == SPY_NONE || t->marks[m].stamp <= t->n[n].vis_clock;
}

/* The rows below n when it is open (t->n[n].vis): each shown child, and
** the rows below each open one, depth first, iteratively. Children whose
** count is known are not entered. When budget is not NULL, entering a
** node costs one of *budget; once that is spent the count goes on to the
** next node it completes and returns 1: the next call goes down the path
** already counted (known counts) and on from there, so every call makes
** progress. Else 0 or SPY_ENOMEM. */
static int count(spyR_tree *t, uint32_t n, size_t *budget) {
  if (counted(t, n)) return 0;
  int rc = spyR_tree_kids(t, n);
  if (rc) return rc;
  size_t cap = 64, sp = 0;
  cframe *stk = malloc(cap * sizeof *stk);
  if (!stk) return SPY_ENOMEM;
  stk[sp++] = (cframe){n, 0, 0};
  int spent = 0;
  while (sp) {
    cframe *f = &stk[sp - 1];
    if (f->j == t->n[f->n].nkids) {
      uint64_t rows = f->rows;
      t->n[f->n].vis = (uint32_t)rows;
      t->n[f->n].vis_at = t->epoch;
      t->n[f->n].vis_clock = t->clock;
      if (--sp) stk[sp - 1].rows += rows;
      if (spent && sp) {
        rc = 1;
        break;
      }
      continue;
    }
    uint32_t c = t->kid[t->n[f->n].kids + f->j++];
    if (!spyR_tree_shown(t, c)) continue;
    f->rows++;
    if (!spyR_tree_expanded(t, c)) continue;
    if (counted(t, c)) {
      f->rows += t->n[c].vis;
      continue;
    }
    if (budget) {
      if (*budget) (*budget)--;
      else spent = 1;
    }
    if ((rc = spyR_tree_kids(t, c)) != 0) break;
    cframe *ns = spyR_stack_room(stk, &cap, sp + 1, sizeof *stk);
    if (!ns) {
      rc = SPY_ENOMEM;
      break;
    }
    stk = ns;
    stk[sp++] = (cframe){c, 0, 0};
  }
  free(stk);
  return rc;
}

/* The rows before row n: up to the top, the rows of the shown siblings
** before each ancestor, and the ancestors' own rows. */
static int rows_before(spyR_tree *t, uint32_t n, size_t *budget, size_t *out) {
  size_t r = 0;
  *out = 0;
  if (!spyR_tree_visible(t, n)) return 0;
  for (uint32_t a = n; a != t->top; a = t->n[a].parent) {
    uint32_t p = t->n[a].parent;
    int rc = spyR_tree_kids(t, p);
    if (rc) return rc;
    for (uint32_t j = 0; j < t->n[a].sib; j++) {
      uint32_t c = t->kid[t->n[p].kids + j];
      if (!spyR_tree_shown(t, c)) continue;
      r++;
      if (!spyR_tree_expanded(t, c)) continue;
      if ((rc = count(t, c, budget)) != 0) return rc;
      r += t->n[c].vis;
    }
    if (p != t->top) r++;
  }
  *out = r;
  return 0;
}

int spyR_tree_position(spyR_tree *t, size_t budget, size_t *row,
                       size_t *rows) {
  *row = *rows = 0;
  if (!t->nn) return 0;
  size_t b = budget, *bp = budget ? &b : NULL;
  int rc = count(t, t->top, bp);
  if (rc) return rc;
  *rows = t->n[t->top].vis;
  uint32_t c = spyR_tree_cur(t);
  return c == SPY_NONE ? 0 : rows_before(t, c, bp, row);
}

size_t spyR_tree_nrows(spyR_tree *t) {
  size_t row, rows;
  if (spyR_tree_position(t, 0, &row, &rows) < 0) t->oom = 1;
  return rows;
}

size_t spyR_tree_row_of(spyR_tree *t, uint32_t n) {
  size_t r = 0;
  if (n < t->nn && rows_before(t, n, NULL, &r) < 0) t->oom = 1;
  return r;
}

uint32_t spyR_tree_row(spyR_tree *t, size_t r) {
  if (!t->nn) return SPY_NONE;
  uint32_t n = t->top;
  for (;;) {
    if (spyR_tree_kids(t, n) < 0) break;
    uint32_t into = SPY_NONE;
    for (uint32_t j = 0; j < t->n[n].nkids && into == SPY_NONE; j++) {
      uint32_t c = t->kid[t->n[n].kids + j];
      if (!spyR_tree_shown(t, c)) continue;
      if (r == 0) return c;
      size_t size = 1;
      if (spyR_tree_expanded(t, c)) {
        if (count(t, c, NULL) < 0) {
          t->oom = 1;
          return SPY_NONE;
        }
        size += t->n[c].vis;
      }
      if (r < size) into = c;
      else r -= size;
    }
    if (into == SPY_NONE) break;
    r--;
    n = into;
  }
  return SPY_NONE;
}
