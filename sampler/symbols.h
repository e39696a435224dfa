/*
** sampler/symbols.h: names for native instruction pointers, with elfutils'
** libdwfl (internal, spyS_).
**
** One Dwfl per profiler, made on first use from /proc/self/maps; lookups
** are cached per address. Used only outside the signal handler: by
** spy_profile_take (under the profiler's lock), never by the interpreter.
*/
#ifndef SPY_SYMBOLS_H
#define SPY_SYMBOLS_H

#include <spyon.h>
#include <stdint.h>

typedef struct spyS_symbols spyS_symbols;

/* A symbolizer for this process, or NULL (out of memory, or libdwfl could
** not read /proc/self/maps). */
SPY_INTERNAL spyS_symbols *spyS_symbols_new(void);
SPY_INTERNAL void spyS_symbols_free(spyS_symbols *s);

/* Allow one re-read of the process's modules during the next lookups (call
** once per snapshot: code loaded since the last one becomes known). */
SPY_INTERNAL void spyS_symbols_begin(spyS_symbols *s);

/* The name of the code at addr: "function (module)" plus " file:line" when
** there is line information; NULL if no module covers addr (the caller
** shows the address). Pass a return address minus one, so that the call
** instruction is named and not what follows it. The string is owned by s
** and lives as long as it. */
SPY_INTERNAL const char *spyS_symbols_name(spyS_symbols *s, uint64_t addr);

#endif
