/*
** tui/view.h: the browser's screens, without curses (spyT_); its keys are
** tui/keys.h.
**
** The app holds a profile, the tree model (report/tree.h) and the other
** views as lines of text. spyT_key (tui/keys.h) maps a key to an action
** and says what to redraw; spyT_draw lays out a whole screen of rows x cols and hands each line to
** a sink. tui/tui.c's sink draws it with curses; tests and the benchmark
** use a sink that keeps the text, so everything here runs without a
** terminal.
*/
#ifndef SPY_TUI_VIEW_H
#define SPY_TUI_VIEW_H

#include <spyon/profile.h>

#include "report/tree.h"

/* The views, in Tab order. Native and Regions exist only when the
** profile has some. */
typedef enum spyT_view {
  SPYT_TREE, SPYT_LEAVES, SPYT_PRIMS, SPYT_NATIVE, SPYT_STEPS, SPYT_GC,
  SPYT_REGIONS, SPYT_NVIEWS
} spyT_view;

/* What a line is, for colours and attributes. */
typedef enum spyT_attr {
  SPYT_A_TEXT, SPYT_A_HEADER, SPYT_A_TABS, SPYT_A_TAB_ON, SPYT_A_HEADING,
  SPYT_A_STATUS
} spyT_attr;

/* One screen line handed to a sink: the text (exactly what fits in the
** screen's columns), its attribute, whether it is the cursor's line,
** whether it matches the search, and where the label starts (byte offset;
** -1 if none) with the frame kind of that label (for colouring). */
typedef struct spyT_line {
  int y;
  const char *text;
  spyT_attr attr;
  int selected, match;
  int label_at;
  int kind; /* spy_frame_kind, -1 if none */
} spyT_line;

typedef void (*spyT_sink)(void *ud, const spyT_line *line);

/* Text lines of a list view; aux is a frame index per line (SPY_NONE when
** the line names no frame). */
typedef struct spyT_lines {
  char **s;
  uint32_t *aux;
  size_t n, cap;
} spyT_lines;

/* Modes: what keys go to. */
enum { SPYT_NORMAL, SPYT_HELP, SPYT_SEARCH, SPYT_THRESHOLD, SPYT_PICK };

/* What spyT_key returns. */
enum { SPYT_NOTHING = 0, SPYT_REDRAW = 1, SPYT_QUIT = 2 };

typedef struct spyT_app {
  spy_profile *p;        /* owned */
  spyR_tree tree;
  int view;
  int mode;
  spyT_lines lines[SPYT_NVIEWS]; /* list views (not SPYT_TREE) */
  int built[SPYT_NVIEWS];
  int annotated;         /* cost models fitted for this profile */
  int picked;            /* the user picked a process (t/p) */
  int touched;           /* the user expanded or collapsed something */
  size_t sel[SPYT_NVIEWS], scroll[SPYT_NVIEWS];
  size_t help_scroll, pick;
  int body;              /* body rows at the last draw */
  int counting;          /* the tree's rows are not all counted yet */
  char input[256];
  size_t ninput;
  char msg[512];
  char live[128];        /* live status ("" when not live) */
  int tab_x[SPYT_NVIEWS + 1]; /* tab positions on screen, for clicks */
  spyR_buf b, lab;       /* scratch */
} spyT_app;

/* Take ownership of p and build the first screen: the heaviest process
** when there is one, all merged otherwise, sorted by total, with threshold
** `threshold_pct` and the paths above 5 % open. 0 or a negative SPY_E*. */
int spyT_app_init(spyT_app *a, spy_profile *p, double threshold_pct);
void spyT_app_free(spyT_app *a);

/* Replace the profile by a newer snapshot (owned), keeping the view,
** expansion, focus, cursor and search. */
int spyT_app_set_profile(spyT_app *a, spy_profile *p);

/* Lay out a screen of rows x cols and call sink for every line, top to
** bottom (rows lines, each at most cols columns). */
void spyT_draw(spyT_app *a, int rows, int cols, spyT_sink sink, void *ud);

/* Work for when no key is waiting: count the tree's rows for a slice of
** time (the status line shows "row/rows" once they are counted). Returns
** 1 when the screen should be drawn again; a->counting stays set while
** there is more to do. */
int spyT_idle(spyT_app *a);

/* The screen as plain text, one line each (malloc'd), for tests. */
char *spyT_dump(spyT_app *a, int rows, int cols);

/* Shared with tui/keys.c. Screen rows: 0 header, 1 tabs, 2 heading,
** SPYT_BODY_Y.. the body, the last one the status line. */
enum { SPYT_BODY_Y = 3 };

/* Is view v offered for this profile (Native, Regions: when it has
** some)? Make view v's lines if they are not made (0 or SPY_E*); forget
** every view's lines (the tree or the threshold changed). */
int spyT_has_view(const spyT_app *a, int v);
int spyT_ensure_view(spyT_app *a, int v);
void spyT_invalidate(spyT_app *a);

/* A list view's number of rows, and its cursor (the tree's rows and
** cursor are nodes: report/tree.h). */
size_t spyT_count(const spyT_app *a);
size_t *spyT_cursor(spyT_app *a);

#endif
