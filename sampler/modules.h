/*
** sampler/modules.h: which loaded object each native frame belongs to
** (internal, spyS_).
**
** The runtime records native frames as addresses only; naming them needs
** libdw, which lives in the tools library (report/symbols.c). What the
** tools need to do that later, in this process or another one, is the
** object's file, its build-id and its load bias: this component reads them
** from the dynamic loader (dl_iterate_phdr: libc only) when a profile is
** taken, never in a signal handler.
*/
#ifndef SPY_SAMPLER_MODULES_H
#define SPY_SAMPLER_MODULES_H

#include <spyon/profile.h>

/* Set the module of every location of p from its address, and fill
** p->modules with the objects they point into (those only). A location no
** object covers keeps module SPY_NONE. 0 or SPY_ENOMEM. */
SPY_INTERNAL int spyS_modules_resolve(spy_profile *p);

#endif
