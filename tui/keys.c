/*
** tui/keys.c: the browser's keys, free of curses (see tui/keys.h): one
** table maps a key to an action and gives the help screen its lines; the
** actions change the tree model (report/tree.h) or the app's state, and
** the next spyT_draw (tui/view.c) shows the result.
*/
#include "config.h"

#include "tui/keys.h"

#include "report/walk.h"

#include <spyon.h>

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------------
** Key table
** --------------------------------------------------------------------- */

typedef enum action {
  A_NONE, A_UP, A_DOWN, A_PGUP, A_PGDN, A_HOME, A_END, A_OPEN, A_CLOSE,
  A_TOGGLE, A_SUB_OPEN, A_SUB_CLOSE, A_ALL_OPEN, A_ALL_CLOSE, A_SEARCH,
  A_NEXT, A_PREV, A_FOCUS, A_BACK, A_INVERT, A_RECUR, A_PICK, A_SORT,
  A_THRESHOLD, A_VIEW_NEXT, A_VIEW_PREV, A_VIEW_N, A_HELP, A_ESC, A_QUIT
} action;

/* The one key table: every binding, and the help screen's text. Entries
** with a help text start a help line; the keys named there are the ones
** bound below it. */
static const struct keydef {
  int key;
  action act;
  const char *help; /* NULL: same line as the previous entry */
} keys[] = {
  {SPYT_K_DOWN, A_DOWN, "Down j        next row"},
  {'j', A_DOWN, NULL},
  {SPYT_K_UP, A_UP, "Up k          previous row"},
  {'k', A_UP, NULL},
  {SPYT_K_PGDN, A_PGDN, "PgDn Space ^F next page"},
  {' ', A_PGDN, NULL},
  {6, A_PGDN, NULL},
  {SPYT_K_PGUP, A_PGUP, "PgUp ^B       previous page"},
  {2, A_PGUP, NULL},
  {SPYT_K_HOME, A_HOME, "Home          first row"},
  {SPYT_K_END, A_END, "End           last row"},
  {SPYT_K_RIGHT, A_OPEN, "Right l       expand (on an open node: go to its "
                         "first child)"},
  {'l', A_OPEN, NULL},
  {SPYT_K_LEFT, A_CLOSE, "Left h        collapse (on a closed node: go to "
                         "its parent)"},
  {'h', A_CLOSE, NULL},
  {SPYT_K_ENTER, A_TOGGLE, "Enter         expand/collapse; in Leaves: show "
                           "the callers"},
  {'+', A_SUB_OPEN, "+             expand the whole subtree"},
  {'=', A_SUB_OPEN, NULL},
  {'-', A_SUB_CLOSE, "-             collapse the whole subtree"},
  {'E', A_ALL_OPEN, "E             expand everything"},
  {'C', A_ALL_CLOSE, "C             collapse everything"},
  {'/', A_SEARCH, "/             search method names (case-insensitive)"},
  {'n', A_NEXT, "n             next match"},
  {'N', A_PREV, "N             previous match"},
  {'f', A_FOCUS, "f             focus: the selected node becomes the root"},
  {'u', A_BACK, "u Backspace   back out of the last focus"},
  {SPYT_K_BACKSPACE, A_BACK, NULL},
  {'G', A_INVERT, "G             invert: callers of the selected method "
                  "(again: callees)"},
  {'r', A_RECUR, "r             collapse recursion (on/off)"},
  {'t', A_PICK, "t p           pick a process, or all merged"},
  {'p', A_PICK, NULL},
  {'s', A_SORT, "s             sort by total, self time, name"},
  {'T', A_THRESHOLD, "T             hide rows below a percentage"},
  {SPYT_K_TAB, A_VIEW_NEXT, "Tab S-Tab     next/previous view"},
  {SPYT_K_BTAB, A_VIEW_PREV, NULL},
  {'1', A_VIEW_N, "1..7          Tree Leaves Primitives Native Steps GC "
                  "Regions"},
  {'2', A_VIEW_N, NULL}, {'3', A_VIEW_N, NULL}, {'4', A_VIEW_N, NULL},
  {'5', A_VIEW_N, NULL}, {'6', A_VIEW_N, NULL}, {'7', A_VIEW_N, NULL},
  {'?', A_HELP, "?             this help (any key closes it)"},
  {SPYT_K_ESC, A_ESC, "Esc           clear the message and the search"},
  {'q', A_QUIT, "q ^C          quit"},
  {SPYT_K_CTRL_C, A_QUIT, NULL},
};

#define NKEYS (sizeof keys / sizeof keys[0])

static const char *const help_extra[] = {
  "",
  "Mouse: click a row to select it, click again (or double-click) to",
  "expand it; the wheel scrolls; click a view's name to switch to it.",
  "Columns: share of the profile % (ms); tallies (and self ms if wide).",
  "Markers: + closed, - open. Rows: guides `|` as in `spyon report`.",
};

size_t spyT_help_lines(void) {
  size_t n = 0;
  for (size_t i = 0; i < NKEYS; i++) n += keys[i].help != NULL;
  return n + sizeof help_extra / sizeof help_extra[0];
}

const char *spyT_help_line(size_t i) {
  for (size_t k = 0; k < NKEYS; k++)
    if (keys[k].help && i-- == 0) return keys[k].help;
  size_t ne = sizeof help_extra / sizeof help_extra[0];
  return i < ne ? help_extra[i] : NULL;
}

/* ------------------------------------------------------------------------
** Actions
** --------------------------------------------------------------------- */

static void say(spyT_app *a, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void say(spyT_app *a, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(a->msg, sizeof a->msg, fmt, ap);
  va_end(ap);
}

static void oops(spyT_app *a, int rc) {
  if (rc < 0) say(a, "error: %s", spy_strerror(rc));
}

/* The label of tree node n in a->lab. */
static const char *node_label(spyT_app *a, uint32_t n) {
  spyR_buf_clear(&a->lab);
  spyR_tree_label(&a->tree, n, &a->lab);
  return spyR_buf_str(&a->lab);
}

static void move(spyT_app *a, long d) {
  if (a->view == SPYT_TREE) {
    spyR_tree_move(&a->tree, d);
    return;
  }
  size_t n = spyT_count(a), *c = spyT_cursor(a);
  if (!n) return;
  long to = (long)*c + d;
  if (to < 0) to = 0;
  if (to >= (long)n) to = (long)n - 1;
  *c = (size_t)to;
}

static void go_match(spyT_app *a, int dir) {
  spyR_tree *t = &a->tree;
  if (!t->query) {
    say(a, "no search yet: press /");
    return;
  }
  uint32_t m = spyR_tree_next_match(t, dir);
  if (m == SPY_NONE) {
    say(a, "no match for '%s'", t->query);
    return;
  }
  oops(a, spyR_tree_reveal(t, m));
  if (t->match_stale) {
    /* The view changed since the search: n/N stepped to the match
    ** without counting them all (/ Enter counts them again). */
    say(a, "match for '%s' (n/N)", t->query);
    return;
  }
  size_t k = 0;
  while (k < t->nmatch && t->match[k] != m) k++;
  say(a, "match %zu of %zu for '%s' (n/N)", k + 1, t->nmatch, t->query);
}

static void set_view(spyT_app *a, int v) {
  if (v < 0 || v >= SPYT_NVIEWS || !spyT_has_view(a, v)) return;
  int rc = spyT_ensure_view(a, v);
  if (rc) {
    oops(a, rc);
    return;
  }
  a->view = v;
}

static void cycle_view(spyT_app *a, int dir) {
  int v = a->view;
  do v = (v + dir + SPYT_NVIEWS) % SPYT_NVIEWS;
  while (!spyT_has_view(a, v));
  set_view(a, v);
}

static void rebuild(spyT_app *a) {
  spyT_invalidate(a);
  oops(a, spyR_tree_build(&a->tree));
  if (a->view != SPYT_TREE) oops(a, spyT_ensure_view(a, a->view));
}

/* G: the callers view of the selected method, or back. */
static void invert(spyT_app *a) {
  spyR_tree *t = &a->tree;
  uint32_t cn = spyR_tree_cur(t);
  uint32_t frame = cn == SPY_NONE ? SPY_NONE : t->n[cn].frame;
  if (a->view == SPYT_LEAVES && a->sel[SPYT_LEAVES] < a->lines[SPYT_LEAVES].n)
    frame = a->lines[SPYT_LEAVES].aux[a->sel[SPYT_LEAVES]];
  t->inverted = !t->inverted;
  rebuild(a);
  a->view = SPYT_TREE;
  if (!t->inverted) {
    say(a, "callee tree");
    return;
  }
  uint32_t c = frame == SPY_NONE ? SPY_NONE : spyR_tree_find_top(t, frame);
  if (c == SPY_NONE) {
    say(a, "callers view (leaves by self time)%s",
        frame == SPY_NONE ? "" : "; the selected method has no self time");
    spyR_tree_home(t);
    return;
  }
  oops(a, spyR_tree_set(t, c, 1));
  oops(a, spyR_tree_reveal(t, c));
  say(a, "callers of %s", node_label(a, c));
}

/* Enter (or G) on a leaf: the callers view, on that leaf. */
static void leaf_callers(spyT_app *a) {
  spyR_tree *t = &a->tree;
  if (!t->inverted) {
    invert(a);
    return;
  }
  spyT_lines *l = &a->lines[SPYT_LEAVES];
  size_t k = a->sel[SPYT_LEAVES];
  uint32_t fr = k < l->n ? l->aux[k] : SPY_NONE;
  uint32_t c = fr == SPY_NONE ? SPY_NONE : spyR_tree_find_top(t, fr);
  a->view = SPYT_TREE;
  if (c == SPY_NONE) return;
  oops(a, spyR_tree_set(t, c, 1));
  oops(a, spyR_tree_reveal(t, c));
  say(a, "callers of %s", node_label(a, c));
}

/* Enter/Right/Left/+/- on the tree. */
static void tree_open(spyT_app *a, action act) {
  spyR_tree *t = &a->tree;
  uint32_t n = spyR_tree_cur(t);
  if (n == SPY_NONE) return;
  a->touched = 1;
  int has = spyR_tree_nshown(t, n) > 0, open = spyR_tree_expanded(t, n);
  switch (act) {
  case A_TOGGLE:
    if (has) oops(a, spyR_tree_set(t, n, !open));
    break;
  case A_OPEN:
    if (has && !open) oops(a, spyR_tree_set(t, n, 1));
    else if (has) move(a, 1);
    break;
  case A_CLOSE:
    if (has && open) {
      oops(a, spyR_tree_set(t, n, 0));
    } else {
      uint32_t par = t->n[n].parent;
      if (par != t->top && par != SPY_NONE) t->cur = par;
    }
    break;
  case A_SUB_OPEN: oops(a, spyR_tree_subtree(t, n, 1)); break;
  case A_SUB_CLOSE: oops(a, spyR_tree_subtree(t, n, 0)); break;
  default: break;
  }
}

static void start_prompt(spyT_app *a, int mode) {
  a->mode = mode;
  a->ninput = 0;
  a->input[0] = '\0';
}

/* Enter in a prompt. */
static void prompt_done(spyT_app *a) {
  spyR_tree *t = &a->tree;
  int mode = a->mode;
  a->mode = SPYT_NORMAL;
  if (mode == SPYT_SEARCH) {
    if (!a->ninput) {
      spyR_tree_search(t, NULL);
      say(a, "search cleared");
      return;
    }
    int k = spyR_tree_search(t, a->input);
    if (k < 0) {
      oops(a, k);
      return;
    }
    a->view = SPYT_TREE;
    if (k == 0) {
      say(a, "no match for '%s'", a->input);
      return;
    }
    go_match(a, 1);
    return;
  }
  char *end;
  errno = 0;
  double d = strtod(a->input, &end);
  if (!a->ninput || *end || errno || !(d >= 0 && d <= 100)) {
    say(a, "threshold: a percentage 0..100, not '%s'", a->input);
    return;
  }
  t->threshold_pct = d;
  spyT_invalidate(a);
  oops(a, spyR_tree_refilter(t));
  if (a->view != SPYT_TREE) oops(a, spyT_ensure_view(a, a->view));
  say(a, "hiding rows under %g %%", d);
}

static int prompt_key(spyT_app *a, int key) {
  if (key == SPYT_K_ENTER) {
    prompt_done(a);
  } else if (key == SPYT_K_ESC || key == SPYT_K_CTRL_C) {
    a->mode = SPYT_NORMAL;
    say(a, "cancelled");
  } else if (key == SPYT_K_BACKSPACE) {
    /* Drop one UTF-8 character. */
    while (a->ninput > 0 &&
           ((unsigned char)a->input[--a->ninput] & 0xC0) == 0x80)
      ;
    a->input[a->ninput] = '\0';
  } else if (key == 21) { /* ^U */
    a->ninput = 0;
    a->input[0] = '\0';
  } else if (key >= 32 && key < 256 && key != 127 &&
             a->ninput + 1 < sizeof a->input) {
    a->input[a->ninput++] = (char)key;
    a->input[a->ninput] = '\0';
  }
  return SPYT_REDRAW;
}

/* The process picker: entry 0 is "all merged", then the processes in
** report order. */
static int pick_key(spyT_app *a, int key) {
  size_t n = a->p->nprocesses + 1;
  if (key == SPYT_K_DOWN || key == 'j') {
    if (a->pick + 1 < n) a->pick++;
  } else if (key == SPYT_K_UP || key == 'k') {
    if (a->pick > 0) a->pick--;
  } else if (key == SPYT_K_ENTER || key == 'l' || key == SPYT_K_RIGHT) {
    a->mode = SPYT_NORMAL;
    uint32_t proc = SPYR_ALL;
    if (a->pick > 0) {
      uint32_t *ix = spyR_process_order(a->p);
      if (!ix) {
        oops(a, SPY_ENOMEM);
        return SPYT_REDRAW;
      }
      proc = ix[a->pick - 1];
      free(ix);
    }
    a->tree.process = proc;
    spyR_tree_home(&a->tree);
    a->picked = 1;
    rebuild(a);
    say(a, "%s", proc == SPYR_ALL ? "all processes merged"
                                  : a->p->processes[proc].name);
  } else if (key == SPYT_K_ESC || key == 'q' || key == SPYT_K_CTRL_C) {
    a->mode = SPYT_NORMAL;
  }
  return SPYT_REDRAW;
}

int spyT_key(spyT_app *a, int key) {
  if (a->mode == SPYT_SEARCH || a->mode == SPYT_THRESHOLD)
    return prompt_key(a, key);
  if (a->mode == SPYT_PICK) return pick_key(a, key);
  if (a->mode == SPYT_HELP) {
    size_t n = spyT_help_lines();
    if (key == SPYT_K_DOWN || key == 'j') {
      if (a->help_scroll + 1 < n) a->help_scroll++;
    } else if (key == SPYT_K_UP || key == 'k') {
      if (a->help_scroll) a->help_scroll--;
    } else {
      a->mode = SPYT_NORMAL;
    }
    return SPYT_REDRAW;
  }
  action act = A_NONE;
  for (size_t i = 0; i < NKEYS; i++)
    if (keys[i].key == key) {
      act = keys[i].act;
      break;
    }
  if (act == A_NONE) return SPYT_NOTHING;
  a->msg[0] = '\0';
  spyR_tree *t = &a->tree;
  int tree = a->view == SPYT_TREE;
  long page = a->body > 1 ? a->body - 1 : 1;
  switch (act) {
  case A_UP: move(a, -1); break;
  case A_DOWN: move(a, 1); break;
  case A_PGUP: move(a, -page); break;
  case A_PGDN: move(a, page); break;
  case A_HOME:
    if (tree) spyR_tree_home(t);
    else *spyT_cursor(a) = 0;
    break;
  case A_END:
    if (tree) spyR_tree_end(t);
    else move(a, (long)spyT_count(a));
    break;
  case A_OPEN:
  case A_CLOSE:
  case A_TOGGLE:
  case A_SUB_OPEN:
  case A_SUB_CLOSE:
    if (tree) tree_open(a, act);
    else if (act == A_TOGGLE && a->view == SPYT_LEAVES) leaf_callers(a);
    break;
  case A_ALL_OPEN:
  case A_ALL_CLOSE:
    a->touched = 1;
    oops(a, spyR_tree_all(t, act == A_ALL_OPEN));
    a->view = SPYT_TREE;
    break;
  case A_SEARCH: start_prompt(a, SPYT_SEARCH); break;
  case A_NEXT: a->view = SPYT_TREE; go_match(a, 1); break;
  case A_PREV: a->view = SPYT_TREE; go_match(a, -1); break;
  case A_FOCUS: {
    if (!tree) break;
    uint32_t n = spyR_tree_cur(t);
    int rc = n == SPY_NONE ? 1 : spyR_tree_focus(t, n);
    if (rc == 1) say(a, "nothing to focus on: pick a node with children");
    else if (rc) oops(a, rc);
    else say(a, "focus on %s (u: back)", node_label(a, n));
    break;
  }
  case A_BACK: {
    if (!tree) {
      a->view = SPYT_TREE;
      break;
    }
    int rc = spyR_tree_unfocus(t);
    if (rc == 1) say(a, "not focused");
    else oops(a, rc);
    break;
  }
  case A_INVERT:
    if (a->view == SPYT_LEAVES) leaf_callers(a);
    else invert(a);
    break;
  case A_RECUR:
    t->collapse = !t->collapse;
    rebuild(a);
    say(a, "recursion %s", t->collapse ? "collapsed" : "shown");
    break;
  case A_PICK:
    a->mode = SPYT_PICK;
    a->pick = 0;
    if (t->process != SPYR_ALL) {
      uint32_t *ix = spyR_process_order(a->p);
      for (size_t i = 0; ix && i < a->p->nprocesses; i++)
        if (ix[i] == t->process) a->pick = i + 1;
      free(ix);
    }
    break;
  case A_SORT:
    t->sort = (spyR_sort)((t->sort + 1) % SPYR_SORT_N);
    oops(a, spyR_tree_resort(t));
    say(a, "sorted by %s", t->sort == SPYR_SORT_TOTAL  ? "total"
                           : t->sort == SPYR_SORT_SELF ? "self time"
                                                       : "name");
    break;
  case A_THRESHOLD: start_prompt(a, SPYT_THRESHOLD); break;
  case A_VIEW_NEXT: cycle_view(a, 1); break;
  case A_VIEW_PREV: cycle_view(a, -1); break;
  case A_VIEW_N: set_view(a, key - '1'); break;
  case A_HELP:
    a->mode = SPYT_HELP;
    a->help_scroll = 0;
    break;
  case A_ESC:
    spyR_tree_search(t, NULL);
    break;
  case A_QUIT: return SPYT_QUIT;
  case A_NONE: break;
  }
  return SPYT_REDRAW;
}

/* ------------------------------------------------------------------------
** Mouse
** --------------------------------------------------------------------- */

int spyT_click(spyT_app *a, int y, int x, int twice) {
  if (a->mode != SPYT_NORMAL) return spyT_key(a, SPYT_K_ESC);
  if (y == 1) {
    for (int v = 0; v < SPYT_NVIEWS; v++)
      if (spyT_has_view(a, v) && x >= a->tab_x[v] && x < a->tab_x[v + 1]) {
        set_view(a, v);
        return SPYT_REDRAW;
      }
    return SPYT_NOTHING;
  }
  if (y < SPYT_BODY_Y || y >= SPYT_BODY_Y + a->body) return SPYT_NOTHING;
  if (a->view == SPYT_TREE) {
    uint32_t n = spyR_tree_screen_row(&a->tree, (size_t)(y - SPYT_BODY_Y));
    if (n == SPY_NONE) return SPYT_NOTHING;
    int again = a->tree.cur == n;
    a->tree.cur = n;
    return again || twice ? spyT_key(a, SPYT_K_ENTER) : SPYT_REDRAW;
  }
  size_t r = a->scroll[a->view] + (size_t)(y - SPYT_BODY_Y);
  if (r >= spyT_count(a)) return SPYT_NOTHING;
  size_t *c = spyT_cursor(a);
  if (*c == r || twice) {
    *c = r;
    return spyT_key(a, SPYT_K_ENTER);
  }
  *c = r;
  return SPYT_REDRAW;
}

int spyT_wheel(spyT_app *a, int dir) {
  if (a->mode != SPYT_NORMAL) return SPYT_NOTHING;
  move(a, 3 * dir);
  return SPYT_REDRAW;
}

