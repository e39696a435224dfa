/*
** tui/live.h: `spyon --live SCRIPT` (tui/live.c).
*/
#ifndef SPY_TUI_LIVE_H
#define SPY_TUI_LIVE_H

#include <spyon.h>

#include "cli/cli.h"

/* Run `script` with host (in a worker thread; the host publishes its
** profiler with cli_live_publish) and browse its profile while it runs.
** The final profile is handed back in *out (NULL if none; the caller
** saves and frees it). Returns the script's exit status (the stop signal
** is recorded by the command's handler when the browser was quit first),
** or 1 when the terminal or the thread could not be set up. */
int spyT_live(const cli_host *host, const char *script, int argc,
              char **argv, const spy_options *so, double threshold_pct,
              spy_profile **out);

#endif
