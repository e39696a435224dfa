/*
** hosts/st/interp.h: the dispatch loop (interp.c); the call protocol it
** uses is call.h.
*/
#ifndef ST_INTERP_H
#define ST_INTERP_H

#include "hosts/st/st.h"

/* Run method m (a DoIt) on receiver rcv in the main process until it
** returns. Returns 0, or nonzero when the run must stop (vm->exit_code). */
int st_execute(VM *vm, Method *m, Value rcv);

#endif
