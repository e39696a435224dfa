/*
** report/symbols.h: naming native frames (tools library).
**
** The public entry point is spy_profile_symbolize (<spyon/profile.h>):
** report/symbols.c with elfutils' libdwfl, report/symbols-none.c when
** configured without libdw. Nothing else is needed internally; this header
** only says where the two halves are.
*/
#ifndef SPY_PROFILE_SYMBOLS_H
#define SPY_PROFILE_SYMBOLS_H

#include <spyon/profile.h>

#endif
