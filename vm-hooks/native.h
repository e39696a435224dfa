/*
** vm-hooks/native.h: native stacks inside long primitives (internal,
** spyH_).
**
** When spy_options.native_stacks is on, the sampler thread sends SIGPROF
** (tgkill) to an interpreter thread that has been inside one primitive for
** longer than native_interval_ns. The handler installed here unwinds the
** interrupted native stack with libunwind into a fixed buffer and pushes
** one NATIVE record into the slot's native ring, of which it is the only
** producer; the sampler drains it with the other rings. The addresses are
** named later: sampler/modules.c finds their objects when a profile is
** taken, report/symbols.c (tools) names them. The handler does nothing
** else: no allocation, no locks, no stdio, and it never touches the
** interpreter thread's own rings.
*/
#ifndef SPY_NATIVE_H
#define SPY_NATIVE_H

#include "vm-hooks/slot.h"

/* Frames kept per native stack (the innermost ones). */
#define SPYH_NATIVE_MAX 64

/* NATIVE: followed by n uint64 instruction pointers, innermost first (the
** first is the interrupted pc, the others are return addresses). */
typedef struct spyH_native_rec {
  spyH_rec h;
  uint64_t pid;   /* the process running then */
  uint32_t prim;  /* the primitive running then */
  uint32_t n;
} spyH_native_rec;

/* Install the process-wide SIGPROF handler if it is not installed yet.
** Returns 0, or SPY_EEXIST when another handler (not SIG_DFL / SIG_IGN) is
** installed, or SPY_ENOTSUP if sigaction fails. Once installed it stays
** installed for the life of the process: a SIGPROF still pending after the
** last detach must find a handler that ignores it, not the default action
** (which would end the process). Thread-safe. */
SPY_INTERNAL int spyH_native_install(void);

/* Bind / unbind the calling thread's slot for the handler. Call bind after
** the slot is complete, unbind before it is freed; both from the slot's
** own thread. A thread has one bound slot: the last bound wins (a thread
** attached to two profilers with native stacks records for the later). */
SPY_INTERNAL void spyH_native_bind(spy_vm *v);
SPY_INTERNAL void spyH_native_unbind(spy_vm *v);

/* 1 if the library's handler is the installed SIGPROF handler (tests). */
SPY_INTERNAL int spyH_native_installed(void);

#endif
