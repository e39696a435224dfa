/*
** tui/tui.c: the curses half of the browser: set up the terminal, map
** keys and mouse events to tui/view.c's actions, draw its lines. Nothing
** here knows what a tree is.
**
** Colours are used only when the terminal has them and NO_COLOR is unset
** or empty (https://no-color.org); the cursor line is reverse video and
** matches are bold either way, so the browser reads the same in black and
** white.
*/
#include "config.h"

#define _XOPEN_SOURCE_EXTENDED 1
#include <curses.h>
#include <locale.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "tui/tui.h"

enum { PAIR_HEADER = 1, PAIR_PRIM, PAIR_GC, PAIR_NATIVE, PAIR_REGION,
       PAIR_MATCH, PAIR_STATUS };

static int colours;

int spyT_have_terminal(const char *what) {
  if (isatty(0) && isatty(1)) return 1;
  fprintf(stderr, "spyon: %s needs a terminal (stdin and stdout); "
                  "use `spyon report` for text\n", what);
  return 0;
}

static void setup_colours(void) {
  const char *nc = getenv("NO_COLOR");
  colours = has_colors() && !(nc && *nc);
  if (!colours) return;
  start_color();
  short bg = COLOR_BLACK;
  if (use_default_colors() == OK) bg = -1;
  init_pair(PAIR_HEADER, COLOR_BLACK, COLOR_CYAN);
  init_pair(PAIR_PRIM, COLOR_MAGENTA, bg);
  init_pair(PAIR_GC, COLOR_RED, bg);
  init_pair(PAIR_NATIVE, COLOR_CYAN, bg);
  init_pair(PAIR_REGION, COLOR_GREEN, bg);
  init_pair(PAIR_MATCH, COLOR_YELLOW, bg);
  init_pair(PAIR_STATUS, COLOR_BLACK, COLOR_WHITE);
}

static attr_t line_attr(const spyT_line *l) {
  attr_t at = A_NORMAL;
  switch (l->attr) {
  case SPYT_A_HEADER:
  case SPYT_A_STATUS:
    at = colours ? COLOR_PAIR(l->attr == SPYT_A_HEADER ? PAIR_HEADER
                                                       : PAIR_STATUS)
                 : A_REVERSE;
    break;
  case SPYT_A_TABS:
  case SPYT_A_HEADING: at = A_BOLD; break;
  default: break;
  }
  if (l->selected) at |= A_REVERSE;
  return at;
}

static attr_t label_attr(const spyT_line *l) {
  attr_t at = l->selected ? A_REVERSE : A_NORMAL;
  if (l->match) at |= A_BOLD | (colours ? COLOR_PAIR(PAIR_MATCH) : A_UNDERLINE);
  else if (colours) {
    switch (l->kind) {
    case SPY_FRAME_PRIM: at |= COLOR_PAIR(PAIR_PRIM); break;
    case SPY_FRAME_GC: at |= COLOR_PAIR(PAIR_GC); break;
    case SPY_FRAME_NATIVE: at |= COLOR_PAIR(PAIR_NATIVE); break;
    case SPY_FRAME_REGION: at |= COLOR_PAIR(PAIR_REGION); break;
    default: break;
    }
  }
  return at;
}

/* The sink: one screen line. The label part may have its own colour. */
static void draw_line(void *ud, const spyT_line *l) {
  (void)ud;
  move(l->y, 0);
  attrset(line_attr(l));
  if (l->label_at >= 0) {
    addnstr(l->text, l->label_at);
    attrset(label_attr(l));
    addstr(l->text + l->label_at);
  } else {
    addstr(l->text);
  }
  attrset(A_NORMAL);
}

static int map_key(int ch) {
  switch (ch) {
  case KEY_UP: return SPYT_K_UP;
  case KEY_DOWN: return SPYT_K_DOWN;
  case KEY_LEFT: return SPYT_K_LEFT;
  case KEY_RIGHT: return SPYT_K_RIGHT;
  case KEY_PPAGE: return SPYT_K_PGUP;
  case KEY_NPAGE: return SPYT_K_PGDN;
  case KEY_HOME: return SPYT_K_HOME;
  case KEY_END: return SPYT_K_END;
  case KEY_ENTER: case '\n': case '\r': return SPYT_K_ENTER;
  case KEY_BACKSPACE: case 127: case 8: return SPYT_K_BACKSPACE;
  case '\t': return SPYT_K_TAB;
  case KEY_BTAB: return SPYT_K_BTAB;
  case 27: return SPYT_K_ESC;
  case 3: return SPYT_K_CTRL_C;
  default: return ch;
  }
}

static int mouse(spyT_app *a) {
  MEVENT ev;
  if (getmouse(&ev) != OK) return SPYT_NOTHING;
  if (ev.bstate & BUTTON4_PRESSED) return spyT_wheel(a, -1);
#ifdef BUTTON5_PRESSED
  if (ev.bstate & BUTTON5_PRESSED) return spyT_wheel(a, 1);
#endif
  if (ev.bstate & BUTTON1_DOUBLE_CLICKED) return spyT_click(a, ev.y, ev.x, 1);
  if (ev.bstate & (BUTTON1_CLICKED | BUTTON1_PRESSED))
    return spyT_click(a, ev.y, ev.x, 0);
  return SPYT_NOTHING;
}

int spyT_run(spyT_app *a, FILE *tty_out, spyT_poll_fn refresh_fn, void *ud) {
  setlocale(LC_ALL, "");
  SCREEN *scr = newterm(NULL, tty_out ? tty_out : stdout, stdin);
  if (!scr) {
    fprintf(stderr, "spyon: cannot set up the terminal (TERM=%s)\n",
            getenv("TERM") ? getenv("TERM") : "");
    return 1;
  }
  set_term(scr);
  raw();
  noecho();
  nonl();
  keypad(stdscr, TRUE);
  set_escdelay(25);
  curs_set(0);
  mousemask(BUTTON1_CLICKED | BUTTON1_DOUBLE_CLICKED | BUTTON4_PRESSED
#ifdef BUTTON5_PRESSED
                | BUTTON5_PRESSED
#endif
            , NULL);
  mouseinterval(200);
  setup_colours();
  int redraw = 1;
  for (;;) {
    if (redraw) {
      erase();
      spyT_draw(a, LINES, COLS, draw_line, NULL);
      refresh();
      redraw = 0;
    }
    /* While the tree's rows are being counted, a slice of that whenever
    ** no key is waiting. */
    timeout(a->counting ? 0 : refresh_fn ? 250 : -1);
    int ch = getch();
    if (ch == ERR) {
      /* The terminal went away (a closed window, a killed tmux session):
      ** getch fails at once from now on, so quit rather than spin. */
      struct pollfd in = {0, POLLIN, 0};
      if (poll(&in, 1, 0) > 0 && (in.revents & (POLLHUP | POLLERR | POLLNVAL)))
        break;
      if (spyT_idle(a)) redraw = 1;
      if (refresh_fn && refresh_fn(ud, a)) redraw = 1;
      continue;
    }
    if (ch == KEY_RESIZE) {
      redraw = 1;
      continue;
    }
    int r = ch == KEY_MOUSE ? mouse(a) : spyT_key(a, map_key(ch));
    if (r == SPYT_QUIT) break;
    if (r == SPYT_REDRAW) redraw = 1;
    /* In live mode a burst of keys must not starve the refresh. */
    if (refresh_fn && refresh_fn(ud, a)) redraw = 1;
  }
  endwin();
  delscreen(scr);
  return 0;
}

int spyT_browse_profile(spy_profile *p, double threshold_pct) {
  spyT_app a;
  spy_profile_symbolize(p);         /* native frames named, */
  spy_profile_natives_to_tree(p); /* under their primitives */
  int rc = spyT_app_init(&a, p, threshold_pct);
  if (rc < 0) {
    fprintf(stderr, "spyon: browse: %s\n", spy_strerror(rc));
    spyT_app_free(&a);
    return 1;
  }
  rc = spyT_run(&a, NULL, NULL, NULL);
  spyT_app_free(&a);
  return rc;
}

/* spyon browse FILE.spy [--threshold PCT] */
int cli_browse(int argc, char **argv) {
  const char *path = NULL;
  double threshold = 0.5;
  for (int i = 1; i < argc; i++) {
    const char *s = argv[i];
    if (!strcmp(s, "--threshold") && i + 1 < argc) {
      char *end;
      const char *v = argv[++i];
      threshold = strtod(v, &end);
      if (!*v || *end || !(threshold >= 0 && threshold <= 100)) {
        fprintf(stderr, "spyon browse: --threshold: a percentage 0..100, "
                        "not '%s'\n", v);
        return 2;
      }
    } else if (!strcmp(s, "-h") || !strcmp(s, "--help")) {
      printf("usage: spyon browse FILE.spy [--threshold PCT]\n"
             "Browse a saved profile in the terminal (also: spyon --browse "
             "SCRIPT,\nspyon --live SCRIPT). Keys (? in the browser lists "
             "them all):\n");
      for (size_t k = 0; k < spyT_help_lines(); k++)
        printf("  %s\n", spyT_help_line(k));
      printf("NO_COLOR=1 turns colours off. See docs/browse.md.\n");
      return 0;
    } else if (s[0] == '-' && s[1]) {
      fprintf(stderr, "spyon browse: unknown option '%s'\n", s);
      return 2;
    } else if (!path) {
      path = s;
    } else {
      fprintf(stderr, "spyon browse: one profile file only\n");
      return 2;
    }
  }
  if (!path) {
    fprintf(stderr, "usage: spyon browse FILE.spy [--threshold PCT]\n");
    return 2;
  }
  /* The loader's one-line error comes before curses touches the screen. */
  char err[512];
  spy_profile *p;
  if (spy_profile_load(path, &p, err, sizeof err) < 0) {
    fprintf(stderr, "spyon: %s\n", err);
    return 1;
  }
  if (!spyT_have_terminal("browse")) {
    spy_profile_free(p);
    return 2;
  }
  return spyT_browse_profile(p, threshold);
}
