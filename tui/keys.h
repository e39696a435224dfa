/*
** tui/keys.h: the browser's keys, without curses (spyT_). One table maps
** each key to an action (the same table prints the help screen); an
** action changes the app (tui/view.h) and says what to redraw.
*/
#ifndef SPY_TUI_KEYS_H
#define SPY_TUI_KEYS_H

#include "tui/view.h"

/* Keys that are not plain characters (curses' KEY_* mapped by tui.c). */
enum {
  SPYT_K_UP = 0x101, SPYT_K_DOWN, SPYT_K_LEFT, SPYT_K_RIGHT, SPYT_K_PGUP,
  SPYT_K_PGDN, SPYT_K_HOME, SPYT_K_END, SPYT_K_ENTER, SPYT_K_BACKSPACE,
  SPYT_K_TAB, SPYT_K_BTAB, SPYT_K_ESC, SPYT_K_CTRL_C
};

/* Handle one key; returns SPYT_NOTHING, SPYT_REDRAW or SPYT_QUIT. */
int spyT_key(spyT_app *a, int key);

/* A mouse click at screen (y, x) (twice: a double click), or the wheel
** (dir -1 up, +1 down). Return as spyT_key. */
int spyT_click(spyT_app *a, int y, int x, int twice);
int spyT_wheel(spyT_app *a, int dir);

/* The help text: one line per key binding (from the key table). */
size_t spyT_help_lines(void);
const char *spyT_help_line(size_t i);

#endif
