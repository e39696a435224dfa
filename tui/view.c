/*
** tui/view.c: the browser's screens and key actions, free of curses (see
** tui/view.h). The tree view draws report/tree.h's model row by row with
** the text report's layout ("GUIDES PCT (MS)  LABEL"); the other views
** are the text report's own sections (spy_report_text into memory, cut at
** the "**Title**" lines), so the browser and `spyon report` never
** disagree; Leaves is computed from the tree so that it follows the
** process picked.
*/
#include "config.h"

#include "tui/view.h"

#include "report/walk.h"

#include <spyon.h>
#include <spyon/cost.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const view_name[SPYT_NVIEWS] = {
  "Tree", "Leaves", "Primitives", "Native", "Steps", "GC", "Regions"};

/* Right-hand columns of the tree: tallies from 60 columns on, self ms
** too from 110, so that names keep most of a narrow screen. */
enum { TALLY_W = 10, SELF_W = 11, TALLY_COLS = 60, SELF_COLS = 110 };

static int right_w(int cols) {
  return cols >= SELF_COLS ? TALLY_W + SELF_W : cols >= TALLY_COLS ? TALLY_W : 0;
}

/* ------------------------------------------------------------------------
** Lines
** --------------------------------------------------------------------- */

static void lines_clear(spyT_lines *l) {
  for (size_t i = 0; i < l->n; i++) free(l->s[i]);
  l->n = 0;
}

static void lines_free(spyT_lines *l) {
  lines_clear(l);
  free(l->s);
  free(l->aux);
  memset(l, 0, sizeof *l);
}

static int lines_add(spyT_lines *l, const char *s, size_t len, uint32_t aux) {
  if (l->n == l->cap) {
    size_t cap = l->cap ? 2 * l->cap : 64;
    char **ns = realloc(l->s, cap * sizeof *ns);
    if (!ns) return SPY_ENOMEM;
    l->s = ns;
    uint32_t *na = realloc(l->aux, cap * sizeof *na);
    if (!na) return SPY_ENOMEM;
    l->aux = na;
    l->cap = cap;
  }
  char *c = malloc(len + 1);
  if (!c) return SPY_ENOMEM;
  memcpy(c, s, len);
  c[len] = '\0';
  l->s[l->n] = c;
  l->aux[l->n++] = aux;
  return 0;
}

/* Is view v offered for this profile? */
static int has_view(const spyT_app *a, int v) {
  if (v == SPYT_NATIVE) return a->p->nnatives > 0;
  if (v == SPYT_REGIONS) return a->p->nregions > 0;
  return 1;
}

/* The report's sections into the list views: one spy_report_text into
** memory, split at its "**Title**" lines. */
static int build_report_views(spyT_app *a) {
  if (!a->annotated) {
    /* The fitted model beside each primitive, as `spyon report` shows. */
    spy_cost_annotate_profile(a->p, NULL);
    a->annotated = 1;
  }
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  if (!f) return SPY_ENOMEM;
  spy_report_options ro;
  spy_report_options_init(&ro);
  ro.threshold_pct = a->tree.threshold_pct;
  ro.sections = SPY_REPORT_PRIMS | SPY_REPORT_LONGEST | SPY_REPORT_GC |
                SPY_REPORT_REGIONS;
  ro.longest = (unsigned)(a->p->nsteps < 100000 ? a->p->nsteps : 100000);
  int rc = spy_report_text(a->p, f, &ro);
  if (fclose(f) != 0 && rc == 0) rc = SPY_EIO;
  if (rc < 0) {
    free(buf);
    return rc;
  }
  static const struct {
    const char *title;
    int view;
  } sec[] = {{"**Primitives**", SPYT_PRIMS}, {"**Native**", SPYT_NATIVE},
             {"**Longest single steps**", SPYT_STEPS}, {"**GC**", SPYT_GC},
             {"**Regions**", SPYT_REGIONS}};
  int v = -1;
  for (size_t i = 0; i < sizeof sec / sizeof sec[0]; i++)
    lines_clear(&a->lines[sec[i].view]);
  /* GC pauses are steps too: the GC view lists them under its table. */
  int gc_entry = 0;
  spyT_lines gcsteps = {0};
  for (char *s = buf; s && *s && rc == 0;) {
    char *e = strchr(s, '\n');
    size_t n = e ? (size_t)(e - s) : strlen(s);
    if (n >= 2 && s[0] == '*' && s[1] == '*') {
      v = -1;
      for (size_t i = 0; i < sizeof sec / sizeof sec[0]; i++)
        if (!strncmp(s, sec[i].title, strlen(sec[i].title))) v = sec[i].view;
    } else if (v >= 0 && !(n == 0 && !e)) {
      if (v == SPYT_STEPS) {
        /* An entry starts "NN. " (rank, %2u); its stack lines follow,
        ** indented. */
        int head = n > 4 && (s[0] == ' ' || (s[0] >= '0' && s[0] <= '9')) &&
                   s[1] >= '0' && s[1] <= '9' && s[2] == '.';
        if (head) {
          char *gc = strstr(s, " ms  GC");
          gc_entry = gc && gc < s + n;
        }
        if (gc_entry) rc = lines_add(&gcsteps, s, n, SPY_NONE);
      }
      if (rc == 0) rc = lines_add(&a->lines[v], s, n, SPY_NONE);
    }
    s = e ? e + 1 : NULL;
  }
  free(buf);
  /* Drop the blank line that separates sections. */
  for (size_t i = 0; i < sizeof sec / sizeof sec[0]; i++) {
    spyT_lines *l = &a->lines[sec[i].view];
    while (l->n && !l->s[l->n - 1][0]) free(l->s[--l->n]);
  }
  if (rc == 0 && gcsteps.n) {
    rc = lines_add(&a->lines[SPYT_GC], "", 0, SPY_NONE);
    if (rc == 0)
      rc = lines_add(&a->lines[SPYT_GC], "Longest GC pauses:", 18, SPY_NONE);
    for (size_t i = 0; i < gcsteps.n && rc == 0; i++)
      rc = lines_add(&a->lines[SPYT_GC], gcsteps.s[i], strlen(gcsteps.s[i]),
                     SPY_NONE);
  }
  lines_free(&gcsteps);
  for (size_t i = 0; i < sizeof sec / sizeof sec[0]; i++)
    a->built[sec[i].view] = 1;
  return rc;
}

/* "24.69 (1,235)": the report's number pair. */
static void pct_ms(spyR_buf *b, uint64_t ns, uint64_t base) {
  char ms[32];
  spyR_buf_printf(b, "%.2f (%s)", spyR_pct(ns, base),
                  spyR_fmt_group(ms, spyR_ms(ns)));
}

/* Leaves of the processes picked, as the report prints them, with
** tallies; aux is the frame, so Enter can show its callers. */
static int build_leaves(spyT_app *a) {
  spyT_lines *l = &a->lines[SPYT_LEAVES];
  lines_clear(l);
  spy_leaf *lv;
  size_t n;
  int rc = spyR_tree_leaves(&a->tree, &lv, &n);
  if (rc) return rc;
  for (size_t i = 0; i < n && rc == 0; i++) {
    if (a->tree.min_ns > 0 && (double)lv[i].self_ns < a->tree.min_ns) break;
    char t[32], ms[32];
    spyR_buf_clear(&a->b);
    spyR_buf_printf(&a->b, "%6.2f %10s %10s  ",
                    spyR_pct(lv[i].self_ns, a->tree.base_ns),
                    spyR_fmt_group(ms, spyR_ms(lv[i].self_ns)),
                    spyR_fmt_group(t, lv[i].self_tallies));
    spyR_label(&a->b, a->p, lv[i].frame);
    rc = lines_add(l, a->b.s, a->b.len, lv[i].frame);
  }
  free(lv);
  if (rc == 0 && !l->n) rc = lines_add(l, "(none)", 6, SPY_NONE);
  a->built[SPYT_LEAVES] = 1;
  return rc;
}

static int ensure_view(spyT_app *a, int v) {
  if (v == SPYT_TREE || a->built[v]) return 0;
  if (v == SPYT_LEAVES) return build_leaves(a);
  return build_report_views(a);
}

static void invalidate(spyT_app *a) {
  for (int v = 0; v < SPYT_NVIEWS; v++) a->built[v] = 0;
}

/* ------------------------------------------------------------------------
** Life cycle
** --------------------------------------------------------------------- */

int spyT_app_init(spyT_app *a, spy_profile *p, double threshold_pct) {
  memset(a, 0, sizeof *a);
  a->p = p;
  a->body = 20;
  spyR_tree_init(&a->tree, p);
  if (p->nprocesses >= 1) {
    uint32_t *ix = spyR_process_order(p);
    if (!ix) return SPY_ENOMEM;
    a->tree.process = ix[0];
    free(ix);
  }
  a->tree.threshold_pct = threshold_pct;
  int rc = spyR_tree_build(&a->tree);
  if (rc == 0) rc = spyR_tree_open_heavy(&a->tree, 5.0);
  return rc;
}

void spyT_app_free(spyT_app *a) {
  spyR_tree_free(&a->tree);
  for (int v = 0; v < SPYT_NVIEWS; v++) lines_free(&a->lines[v]);
  spy_profile_free(a->p);
  spyR_buf_free(&a->b);
  spyR_buf_free(&a->lab);
  memset(a, 0, sizeof *a);
}

/* A live profile starts with no process and grows: until the user picks
** one or opens and closes nodes, each snapshot gets the first screen's
** choices again (heaviest process, heavy paths open). */
int spyT_app_set_profile(spyT_app *a, spy_profile *p) {
  spy_profile *old = a->p;
  a->p = p;
  a->tree.p = p;
  a->annotated = 0;
  invalidate(a);
  if (a->tree.process != SPYR_ALL && a->tree.process >= p->nprocesses)
    a->tree.process = SPYR_ALL;
  spyR_tree_forget(&a->tree);
  if (!a->picked && p->nprocesses) {
    uint32_t *ix = spyR_process_order(p);
    if (ix) a->tree.process = ix[0];
    free(ix);
  }
  int rc = spyR_tree_build(&a->tree);
  if (rc == 0 && !a->touched) rc = spyR_tree_open_heavy(&a->tree, 5.0);
  spy_profile_free(old);
  if (!has_view(a, a->view)) a->view = SPYT_TREE;
  return rc;
}

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

static size_t count(const spyT_app *a) {
  return a->view == SPYT_TREE ? a->tree.nrows : a->lines[a->view].n;
}

static size_t *cursor(spyT_app *a) {
  return a->view == SPYT_TREE ? &a->tree.cursor : &a->sel[a->view];
}

static void move(spyT_app *a, long d) {
  size_t n = count(a), *c = cursor(a);
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
  size_t k = 0;
  while (k < t->nmatch && t->match[k] != m) k++;
  say(a, "match %zu of %zu for '%s' (n/N)", k + 1, t->nmatch, t->query);
}

static void set_view(spyT_app *a, int v) {
  if (v < 0 || v >= SPYT_NVIEWS || !has_view(a, v)) return;
  int rc = ensure_view(a, v);
  if (rc) {
    oops(a, rc);
    return;
  }
  a->view = v;
}

static void cycle_view(spyT_app *a, int dir) {
  int v = a->view;
  do v = (v + dir + SPYT_NVIEWS) % SPYT_NVIEWS;
  while (!has_view(a, v));
  set_view(a, v);
}

static void rebuild(spyT_app *a) {
  invalidate(a);
  oops(a, spyR_tree_build(&a->tree));
  if (a->view != SPYT_TREE) oops(a, ensure_view(a, a->view));
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
    t->cursor = 0;
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
      for (size_t r = t->cursor; par != t->top && r-- > 0;)
        if (t->row[r].node == par) {
          t->cursor = r;
          break;
        }
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
  invalidate(a);
  oops(a, spyR_tree_refilter(t));
  if (a->view != SPYT_TREE) oops(a, ensure_view(a, a->view));
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
    a->tree.cursor = 0;
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
  case A_HOME: *cursor(a) = 0; break;
  case A_END: move(a, (long)count(a)); break;
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

/* Screen rows: 0 header, 1 tabs, 2 heading, 3.. body, last: status. */
enum { BODY_Y = 3 };

int spyT_click(spyT_app *a, int y, int x, int twice) {
  if (a->mode != SPYT_NORMAL) return spyT_key(a, SPYT_K_ESC);
  if (y == 1) {
    for (int v = 0; v < SPYT_NVIEWS; v++)
      if (has_view(a, v) && x >= a->tab_x[v] && x < a->tab_x[v + 1]) {
        set_view(a, v);
        return SPYT_REDRAW;
      }
    return SPYT_NOTHING;
  }
  if (y < BODY_Y || y >= BODY_Y + a->body) return SPYT_NOTHING;
  size_t r = a->scroll[a->view] + (size_t)(y - BODY_Y);
  if (r >= count(a)) return SPYT_NOTHING;
  size_t *c = cursor(a);
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

/* ------------------------------------------------------------------------
** Drawing
** --------------------------------------------------------------------- */

typedef struct screen {
  spyT_app *a;
  int rows, cols;
  spyT_sink sink;
  void *ud;
  spyR_buf line;
} screen;

/* Pad or cut b to exactly cols columns. */
static void fit(spyR_buf *b, int cols) {
  size_t have = spyR_columns(spyR_buf_str(b), b->len);
  if (have > (size_t)cols) spyR_truncate(b, (size_t)cols);
  else
    for (; have < (size_t)cols; have++) spyR_buf_add(b, " ", 1);
}

static void emit(screen *s, int y, spyR_buf *b, spyT_attr attr, int selected,
                 int match, int label_at, int kind) {
  if (y < 0 || y >= s->rows) return;
  fit(b, s->cols);
  if (label_at > (int)b->len) label_at = -1;
  spyT_line l = {y, spyR_buf_str(b), attr, selected, match, label_at, kind};
  s->sink(s->ud, &l);
}

static void put(screen *s, int y, spyT_attr attr, const char *text) {
  spyR_buf_clear(&s->line);
  spyR_buf_puts(&s->line, text);
  emit(s, y, &s->line, attr, 0, 0, -1, -1);
}

static void header(screen *s) {
  spyT_app *a = s->a;
  const spy_profile *p = a->p;
  spyR_buf *b = &s->line;
  char n1[32], n2[32];
  spyR_buf_clear(b);
  if (a->live[0]) spyR_buf_printf(b, "[%s]  ", a->live);
  spyR_buf_printf(b, "%s tallies  %s ms", spyR_fmt_group(n1, p->tallies),
                  spyR_fmt_group(n2, spyR_ms(p->wall_ns)));
  double asked = (double)p->interval_ns / 1000.0;
  double got = p->tallies ? (double)p->wall_ns / (double)p->tallies / 1000.0
                          : 0;
  spyR_buf_printf(b, "  interval %g/%.0f us", asked, got);
  spyR_buf_printf(b, "  %zu proc%s", p->nprocesses,
                  p->nprocesses == 1 ? "" : "s");
  spyR_buf_printf(b, "  %s dropped", spyR_fmt_group(n1, p->dropped));
  if (!a->live[0] && p->command && *p->command) spyR_buf_printf(b, "  %s", p->command);
  emit(s, 0, b, SPYT_A_HEADER, 0, 0, -1, -1);
}

static void tabs(screen *s) {
  spyT_app *a = s->a;
  spyR_buf *b = &s->line;
  spyR_buf_clear(b);
  for (int v = 0; v < SPYT_NVIEWS; v++) {
    a->tab_x[v] = (int)b->len;
    if (!has_view(a, v)) continue;
    spyR_buf_printf(b, v == a->view ? "[%s]" : " %s ", view_name[v]);
  }
  a->tab_x[SPYT_NVIEWS] = (int)b->len;
  const spyR_tree *t = &a->tree;
  spyR_buf_printf(b, "  %s",
                  t->process == SPYR_ALL ? "all processes"
                                         : a->p->processes[t->process].name);
  spyR_buf_printf(b, " | by %s", t->sort == SPYR_SORT_TOTAL  ? "total"
                                   : t->sort == SPYR_SORT_SELF ? "self"
                                                               : "name");
  spyR_buf_printf(b, " | >=%g%%", t->threshold_pct);
  if (t->inverted) spyR_buf_puts(b, " | callers");
  if (t->collapse) spyR_buf_puts(b, " | no recursion");
  emit(s, 1, b, SPYT_A_TABS, 0, 0, -1, -1);
}

/* The tree's heading: where we are (focus path) and the column names. */
static void tree_heading(screen *s) {
  spyT_app *a = s->a;
  const spyR_tree *t = &a->tree;
  spyR_buf *b = &s->line;
  spyR_buf_clear(b);
  int right = right_w(s->cols);
  int left = s->cols - right;
  spyR_buf_puts(b, "  ");
  if (t->nn) {
    spyR_buf *path = &a->b;
    spyR_buf_clear(path);
    if (t->top) {
      uint32_t up[64];
      size_t np = 0;
      for (uint32_t n = t->top; n && np < 64; n = t->n[n].parent)
        up[np++] = n;
      for (size_t i = np; i-- > 0;) {
        spyR_tree_label(t, up[i], path);
        if (i) spyR_buf_puts(path, " > ");
      }
    } else {
      spyR_tree_label(t, 0, path);
    }
    char num[64];
    snprintf(num, sizeof num, "%.2f (", spyR_pct(t->n[t->top].total_ns,
                                                  t->base_ns));
    /* The focus path keeps its innermost end: cut from the left. */
    size_t room = (size_t)(left > 30 ? left : 30) - 2 - 7 - strlen(num) - 12;
    const char *ps = spyR_buf_str(path);
    size_t cols = spyR_columns(ps, path->len);
    if (t->top) spyR_buf_puts(b, "focus: ");
    if (cols > room) {
      spyR_buf_puts(b, "...");
      while (*ps && cols > room - 3) {
        ps++;
        while ((*ps & 0xC0) == 0x80) ps++;
        cols--;
      }
    }
    spyR_buf_puts(b, ps);
    spyR_buf_puts(b, "  ");
    pct_ms(b, t->n[t->top].total_ns, t->base_ns);
  }
  if (right) {
    fit(b, left);
    if (right > TALLY_W) spyR_buf_printf(b, "%*s", SELF_W, "self ms");
    spyR_buf_printf(b, "%*s", TALLY_W, "tallies");
  }
  emit(s, 2, b, SPYT_A_HEADING, 0, 0, -1, -1);
}

static void tree_body(screen *s, int y0, int h) {
  spyT_app *a = s->a;
  spyR_tree *t = &a->tree;
  spyR_buf *b = &s->line;
  int right = right_w(s->cols);
  int left = s->cols - right;
  unsigned wrap = left >= 60 ? (unsigned)(left - 36) / 3 : 8;
  if (wrap > SPYR_WRAP_DEFAULT) wrap = SPYR_WRAP_DEFAULT;
  for (int i = 0; i < h; i++) {
    size_t r = a->scroll[SPYT_TREE] + (size_t)i;
    spyR_buf_clear(b);
    if (r >= t->nrows) {
      if (r == 0 && i == 0)
        spyR_buf_puts(b, t->nn ? "(nothing above the threshold: T)"
                               : "(empty profile)");
      emit(s, y0 + i, b, SPYT_A_TEXT, 0, 0, -1, -1);
      continue;
    }
    uint32_t n = t->row[r].node;
    /* The marker in a fixed column, then the report's row (counting the
    ** children may make them, moving t->n: nd after). */
    int kids = spyR_tree_nshown(t, n) > 0;
    const spyR_tnode *nd = &t->n[n];
    spyR_buf_puts(b, !kids ? "  " : spyR_tree_expanded(t, n) ? "- " : "+ ");
    spyR_tree_guides(t, r, wrap, b);
    pct_ms(b, nd->total_ns, t->base_ns);
    spyR_buf_puts(b, "  ");
    int at = (int)b->len;
    spyR_tree_label(t, n, b);
    int kind = nd->frame == SPY_NONE ? -1 : (int)a->p->frames[nd->frame].kind;
    if (right) {
      fit(b, left);
      char n1[48], n2[32];
      if (right > TALLY_W)
        spyR_buf_printf(b, "%*s", SELF_W,
                        spyR_fmt_fixed(n1, (double)nd->self_ns / 1e6, 1));
      spyR_buf_printf(b, "%*s", TALLY_W, spyR_fmt_group(n2, nd->tallies));
    }
    emit(s, y0 + i, b, SPYT_A_TEXT, r == t->cursor,
         spyR_tree_is_match(t, n), at, kind);
  }
}

static const char *list_heading(int v) {
  switch (v) {
  case SPYT_LEAVES: return "self %    self ms    tallies  method (Enter: its callers)";
  case SPYT_PRIMS: return "primitives: calls, time, the fitted cost model";
  case SPYT_NATIVE: return "native functions inside primitives (signals)";
  case SPYT_STEPS: return "longest single steps: operand sizes, stacks";
  case SPYT_GC: return "garbage collection";
  case SPYT_REGIONS: return "regions: exact timers";
  default: return "";
  }
}

static void list_body(screen *s, int y0, int h) {
  spyT_app *a = s->a;
  spyT_lines *l = &a->lines[a->view];
  for (int i = 0; i < h; i++) {
    size_t r = a->scroll[a->view] + (size_t)i;
    spyR_buf_clear(&s->line);
    if (r < l->n) spyR_buf_puts(&s->line, l->s[r]);
    else if (r == 0) spyR_buf_puts(&s->line, "(none)");
    int kind = r < l->n && l->aux[r] != SPY_NONE
                   ? (int)a->p->frames[l->aux[r]].kind
                   : -1;
    emit(s, y0 + i, &s->line, SPYT_A_TEXT, r < l->n && r == a->sel[a->view], 0,
         -1, kind);
  }
}

static void help_body(screen *s, int y0, int h) {
  size_t n = spyT_help_lines();
  put(s, y0 - 1, SPYT_A_HEADING, "keys (any other key closes this help)");
  for (int i = 0; i < h; i++) {
    size_t r = s->a->help_scroll + (size_t)i;
    put(s, y0 + i, SPYT_A_TEXT, r < n ? spyT_help_line(r) : "");
  }
}

static void pick_body(screen *s, int y0, int h) {
  spyT_app *a = s->a;
  const spy_profile *p = a->p;
  put(s, y0 - 1, SPYT_A_HEADING, "pick a process (Enter; Esc cancels)");
  uint32_t *ix = spyR_process_order(p);
  size_t n = p->nprocesses + 1;
  size_t first = a->pick >= (size_t)h ? a->pick - (size_t)h + 1 : 0;
  for (int i = 0; i < h; i++) {
    size_t r = first + (size_t)i;
    spyR_buf_clear(&s->line);
    if (r == 0) {
      spyR_buf_puts(&s->line, "  all processes merged  ");
      pct_ms(&s->line, a->tree.base_ns, a->tree.base_ns);
    } else if (r < n && ix) {
      const spy_process *pr = &p->processes[ix[r - 1]];
      spyR_buf_printf(&s->line, "  %s (pid %" PRIu64 ")  ", pr->name, pr->pid);
      pct_ms(&s->line, pr->total_ns, a->tree.base_ns);
    }
    emit(s, y0 + i, &s->line, SPYT_A_TEXT, r == a->pick, 0, -1, -1);
  }
  free(ix);
}

static void status(screen *s, int y) {
  spyT_app *a = s->a;
  spyR_buf *b = &s->line;
  spyR_buf_clear(b);
  if (a->mode == SPYT_SEARCH) spyR_buf_printf(b, "/%s", a->input);
  else if (a->mode == SPYT_THRESHOLD)
    spyR_buf_printf(b, "threshold %%: %s", a->input);
  else if (a->msg[0]) spyR_buf_puts(b, a->msg);
  else {
    size_t n = count(a);
    spyR_buf_printf(b, "%zu/%zu  ? help  q quit", n ? *cursor(a) + 1 : 0, n);
  }
  emit(s, y, b, SPYT_A_STATUS, 0, 0, -1, -1);
}

void spyT_draw(spyT_app *a, int rows, int cols, spyT_sink sink, void *ud) {
  if (rows <= 0 || cols <= 0) return;
  screen s = {a, rows, cols, sink, ud, {0}};
  int h = rows - BODY_Y - 1;
  if (h < 1) h = rows >= 2 ? 1 : 0;
  a->body = h;
  if (a->view != SPYT_TREE && ensure_view(a, a->view) < 0) a->view = SPYT_TREE;
  /* Keep the cursor on the screen. */
  size_t *sc = &a->scroll[a->view], c = *cursor(a);
  if (c < *sc) *sc = c;
  if (h > 0 && c >= *sc + (size_t)h) *sc = c - (size_t)h + 1;
  if (*sc + (size_t)h > count(a))
    *sc = count(a) > (size_t)h ? count(a) - (size_t)h : 0;
  if (rows < BODY_Y + 2) {
    /* Too small for the frame: the body and the status line only. */
    for (int i = 0; i < rows - 1; i++) put(&s, i, SPYT_A_TEXT, "");
    if (a->view == SPYT_TREE) tree_body(&s, 0, rows - 1);
    status(&s, rows - 1);
    spyR_buf_free(&s.line);
    return;
  }
  header(&s);
  tabs(&s);
  if (a->mode == SPYT_HELP) help_body(&s, BODY_Y, h);
  else if (a->mode == SPYT_PICK) pick_body(&s, BODY_Y, h);
  else if (a->view == SPYT_TREE) {
    tree_heading(&s);
    tree_body(&s, BODY_Y, h);
  } else {
    put(&s, 2, SPYT_A_HEADING, list_heading(a->view));
    list_body(&s, BODY_Y, h);
  }
  status(&s, rows - 1);
  spyR_buf_free(&s.line);
}

static void dump_sink(void *ud, const spyT_line *l) {
  spyR_buf *b = ud;
  spyR_buf_puts(b, l->text);
  spyR_buf_add(b, "\n", 1);
}

char *spyT_dump(spyT_app *a, int rows, int cols) {
  spyR_buf b = {0};
  spyT_draw(a, rows, cols, dump_sink, &b);
  if (b.oom) {
    spyR_buf_free(&b);
    return NULL;
  }
  return b.s ? b.s : strdup("");
}
