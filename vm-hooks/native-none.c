/*
** vm-hooks/native-none.c: native stacks left out (configured without
** libunwind). The interface of vm-hooks/native.h stays, so the profiler
** builds unchanged: asking for native stacks fails with SPY_ENOTSUP when
** a thread attaches, and nothing is ever installed.
*/
#include "config.h"

#include "vm-hooks/native.h"

int spyH_native_install(void) {
  return SPY_ENOTSUP;
}

int spyH_native_installed(void) {
  return 0;
}

int spyH_native_bind(spy_vm *v) {
  (void)v;
  return SPY_ENOTSUP;
}

void spyH_native_arm(spy_vm *v, uint64_t interval_ns) {
  (void)v;
  (void)interval_ns;
}

void spyH_native_disarm(spy_vm *v) {
  (void)v;
}

void spyH_native_unbind(spy_vm *v) {
  (void)v;
}
