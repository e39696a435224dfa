/*
** hosts/st/fuzz_load.c: libFuzzer target for the script loader.
**
** Each input is a script: the lexer, the parser, the file syntax (class
** definitions, extensions, methods) and the compiler take it as hostile
** input. Nothing it loads runs (vm->check_only): a fuzzed statement could
** loop, sleep or allocate without bound, and what is under test is that
** any text gives a compiled file or one "file:line:col: message", never a
** crash. Class definitions do take effect, so the VM is made anew every
** 4096 inputs to keep what they add bounded (making it is most of the
** time of 256 inputs under ASan).
**
**   make fuzz
**   hosts/st/fuzz_load -max_total_time=300 -close_fd_mask=2 corpus \
**       $(top_srcdir)/tests/st $(top_srcdir)/examples
*/
#include "config.h"

#include <stdint.h>
#include <stdlib.h>

#include "hosts/st/stvm.h"
#include "hosts/st/loader.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static stvm *vm;
  static unsigned inputs;
  if (!vm || ++inputs % 4096 == 0) {
    stvm_free(vm);
    vm = stvm_new(0, NULL);
    if (!vm) abort(); /* no kernel: set SPYON_KERNEL */
    vm->check_only = 1;
  }
  st_load_source(vm, "fuzz.st", (const char *)data, size);
  vm->exit_code = -1;
  return 0;
}
