/*
** tui/tui.h: the curses browser's entry points, for the spyon command
** (spyT_). Only the spyon program links ncursesw; libspyon never does.
*/
#ifndef SPY_TUI_TUI_H
#define SPY_TUI_TUI_H

#include <spyon.h>
#include <spyon/report.h>

#include "tui/keys.h"

/* Called about four times a second while the browser waits for a key
** (live mode): may replace the app's profile with a newer snapshot and
** set a->live. Returns 1 when the screen must be redrawn. */
typedef int (*spyT_poll_fn)(void *ud, spyT_app *a);

/* Browse app a in the terminal until `q`. The terminal is the one on
** tty_out (NULL: stdout) and stdin; it is restored on return. Returns 0,
** or 1 when the terminal could not be set up (message on stderr). */
int spyT_run(spyT_app *a, FILE *tty_out, spyT_poll_fn poll, void *ud);

/* 1 when stdin and stdout are a terminal curses can drive; else prints
** "spyon: WHAT needs a terminal" and returns 0. */
int spyT_have_terminal(const char *what);

/* Browse profile p (owned; freed here) with the given threshold; returns
** the exit status (0; 1 on error, with the message on stderr). */
int spyT_browse_profile(spy_profile *p, double threshold_pct);

#endif
