/*
** bench/ovm_on.c: the overhead VM with the hooks compiled in.
*/
#include "config.h"

#include "bench/ovm.h"

#include <spyon/hooks.h>

#define OVM_NAME ovm_run_on
#define OVM_POLL(vm) spy_poll(hv)
#define OVM_PRIM_BEGIN(vm, id, n) spy_prim_begin1(hv, (id), (n))
#define OVM_PRIM_END(vm) spy_prim_end(hv)
#include "bench/ovm_loop.h"
