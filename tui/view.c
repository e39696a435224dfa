/*
** tui/view.c: the browser's screens, free of curses (see tui/view.h); the
** keys and what they do are tui/keys.c. The tree view draws report/tree.h's
** model row by row with the text report's layout ("GUIDES PCT (MS)
** LABEL"); the other views are the text report's own sections
** (spy_report_text into memory, cut at the "**Title**" lines), so the
** browser and `spyon report` never disagree; Leaves is computed from the
** tree so that it follows the process picked.
*/
#include "config.h"

#include "tui/view.h"

#include "report/walk.h"
#include "tui/keys.h"

#include <spyon.h>
#include <spyon/report.h>
#include <spyon/cost.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

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

int spyT_has_view(const spyT_app *a, int v) {
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

int spyT_ensure_view(spyT_app *a, int v) {
  if (v == SPYT_TREE || a->built[v]) return 0;
  if (v == SPYT_LEAVES) return build_leaves(a);
  return build_report_views(a);
}

size_t spyT_count(const spyT_app *a) {
  return a->view == SPYT_TREE ? 0 : a->lines[a->view].n;
}

size_t *spyT_cursor(spyT_app *a) { return &a->sel[a->view]; }

void spyT_invalidate(spyT_app *a) {
  for (int v = 0; v < SPYT_NVIEWS; v++) a->built[v] = 0;
}

/* ------------------------------------------------------------------------
** Life cycle
** --------------------------------------------------------------------- */

/* `/` lists and counts the matches over at most this many nodes (making
** a node costs about 0.1 us: some 20 ms); past it n/N step to the next
** match without a count, so a key stays under 50 ms on any view. */
enum { SEARCH_BUDGET = 200000 };

/* The tree's row numbers are counted COUNT_SLICE nodes at a time (some
** 1-4 ms when their nodes are still to be made, more in the callers
** view): one slice with each screen, then while no key is waiting
** (spyT_idle) for at most COUNT_MS a call, so a key pressed meanwhile
** waits that long at most. */
enum { COUNT_SLICE = 10000, COUNT_MS = 12 };

int spyT_app_init(spyT_app *a, spy_profile *p, double threshold_pct) {
  memset(a, 0, sizeof *a);
  a->p = p;
  a->body = 20;
  spyR_tree_init(&a->tree, p);
  a->tree.search_budget = SEARCH_BUDGET;
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
  spyT_invalidate(a);
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
  if (!spyT_has_view(a, a->view)) a->view = SPYT_TREE;
  return rc;
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
    if (!spyT_has_view(a, v)) continue;
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
  uint32_t n = t->anchor;
  for (int i = 0; i < h; i++, n = n == SPY_NONE ? n : spyR_tree_next(t, n)) {
    spyR_buf_clear(b);
    if (n == SPY_NONE) {
      if (i == 0)
        spyR_buf_puts(b, t->nn ? "(nothing above the threshold: T)"
                               : "(empty profile)");
      emit(s, y0 + i, b, SPYT_A_TEXT, 0, 0, -1, -1);
      continue;
    }
    /* The marker in a fixed column, then the report's row (counting the
    ** children may make them, moving t->n: nd after). */
    int kids = spyR_tree_nshown(t, n) > 0;
    const spyR_tnode *nd = &t->n[n];
    spyR_buf_puts(b, !kids ? "  " : spyR_tree_expanded(t, n) ? "- " : "+ ");
    spyR_tree_guides(t, n, wrap, b);
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
    emit(s, y0 + i, b, SPYT_A_TEXT, n == t->cur,
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

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

static void status(screen *s, int y) {
  spyT_app *a = s->a;
  spyR_buf *b = &s->line;
  spyR_buf_clear(b);
  if (a->mode == SPYT_SEARCH) spyR_buf_printf(b, "/%s", a->input);
  else if (a->mode == SPYT_THRESHOLD)
    spyR_buf_printf(b, "threshold %%: %s", a->input);
  else if (a->msg[0]) spyR_buf_puts(b, a->msg);
  else if (a->view == SPYT_TREE) {
    /* One slice of counting here (a small view is counted at once); the
    ** rest of a huge one while no key is waiting (spyT_idle). */
    size_t row = 0, n = 0;
    int rc = spyR_tree_position(&a->tree, COUNT_SLICE, &row, &n);
    a->counting = rc == 1;
    if (rc == 0)
      spyR_buf_printf(b, "%zu/%zu  ? help  q quit", n ? row + 1 : 0, n);
    else
      spyR_buf_puts(b, "counting rows...  ? help  q quit");
  } else {
    size_t n = spyT_count(a);
    spyR_buf_printf(b, "%zu/%zu  ? help  q quit", n ? *spyT_cursor(a) + 1 : 0, n);
  }
  emit(s, y, b, SPYT_A_STATUS, 0, 0, -1, -1);
}

int spyT_idle(spyT_app *a) {
  if (!a->counting) return 0;
  size_t row, n;
  double t0 = now_ms();
  int rc;
  while ((rc = spyR_tree_position(&a->tree, COUNT_SLICE, &row, &n)) == 1 &&
         now_ms() - t0 < COUNT_MS) {
  }
  a->counting = rc == 1;
  return 1;
}

void spyT_draw(spyT_app *a, int rows, int cols, spyT_sink sink, void *ud) {
  if (rows <= 0 || cols <= 0) return;
  screen s = {a, rows, cols, sink, ud, {0}};
  int h = rows - SPYT_BODY_Y - 1;
  if (h < 1) h = rows >= 2 ? 1 : 0;
  a->body = h;
  if (a->view != SPYT_TREE && spyT_ensure_view(a, a->view) < 0) a->view = SPYT_TREE;
  /* Keep the cursor on the screen. */
  a->counting = 0;
  if (a->view == SPYT_TREE) {
    spyR_tree_scroll(&a->tree, (size_t)(rows < SPYT_BODY_Y + 2 ? rows - 1 : h));
  } else {
    size_t *sc = &a->scroll[a->view], c = *spyT_cursor(a);
    if (c < *sc) *sc = c;
    if (h > 0 && c >= *sc + (size_t)h) *sc = c - (size_t)h + 1;
    if (*sc + (size_t)h > spyT_count(a))
      *sc = spyT_count(a) > (size_t)h ? spyT_count(a) - (size_t)h : 0;
  }
  if (rows < SPYT_BODY_Y + 2) {
    /* Too small for the frame: the body and the status line only. */
    for (int i = 0; i < rows - 1; i++) put(&s, i, SPYT_A_TEXT, "");
    if (a->view == SPYT_TREE) tree_body(&s, 0, rows - 1);
    status(&s, rows - 1);
    spyR_buf_free(&s.line);
    return;
  }
  header(&s);
  tabs(&s);
  if (a->mode == SPYT_HELP) help_body(&s, SPYT_BODY_Y, h);
  else if (a->mode == SPYT_PICK) pick_body(&s, SPYT_BODY_Y, h);
  else if (a->view == SPYT_TREE) {
    tree_heading(&s);
    tree_body(&s, SPYT_BODY_Y, h);
  } else {
    put(&s, 2, SPYT_A_HEADING, list_heading(a->view));
    list_body(&s, SPYT_BODY_Y, h);
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
