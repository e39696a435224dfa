/*
** sampler/symbols-none.c: native frame names left out (configured without
** libdw). There is never a symbolizer, so native frames keep the "0x..."
** address names the profiler gives what it cannot name.
*/
#include "config.h"

#include "sampler/symbols.h"

spyS_symbols *spyS_symbols_new(void) {
  return NULL;
}

void spyS_symbols_free(spyS_symbols *s) {
  (void)s;
}

void spyS_symbols_begin(spyS_symbols *s) {
  (void)s;
}

const char *spyS_symbols_name(spyS_symbols *s, uint64_t addr) {
  (void)s;
  (void)addr;
  return NULL;
}
