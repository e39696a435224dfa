/*
** bench/ovm_off.c: the overhead VM with the hooks compiled out
** (-DSPY_DISABLE), plus the two "read the clock at every poll" variants,
** which have no hooks either: what they add over ovm_run_off is the cost
** of the clock read and the compare alone.
*/
#include "config.h"

#define SPY_DISABLE 1

#include "bench/ovm.h"

#include <spyon/hooks.h>

#include <time.h>
#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#define OVM_TSC() __rdtsc()
#else
#define OVM_TSC() 0
#endif

#define OVM_NAME ovm_run_off
#define OVM_POLL(vm) spy_poll(hv)
#define OVM_PRIM_BEGIN(vm, id, n) spy_prim_begin1(hv, (id), (n))
#define OVM_PRIM_END(vm) spy_prim_end(hv)
#include "bench/ovm_loop.h"

/* Every poll point reads CLOCK_MONOTONIC and checks a deadline. */
static inline void poll_clk(ovm *vm) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  uint64_t now = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
  vm->polls++;
  if (now >= vm->deadline) {
    vm->deadline = now + vm->period;
    vm->due++;
  }
}

#define OVM_NAME ovm_run_clk
#define OVM_POLL(vm) poll_clk(vm)
#define OVM_PRIM_BEGIN(vm, id, n) ((void)(id), (void)(n))
#define OVM_PRIM_END(vm) ((void)0)
#include "bench/ovm_loop.h"

/* Every poll point reads the TSC and checks a deadline. */
static inline void poll_tsc(ovm *vm) {
  uint64_t now = OVM_TSC();
  vm->polls++;
  if (now >= vm->deadline) {
    vm->deadline = now + vm->period;
    vm->due++;
  }
}

#define OVM_NAME ovm_run_tsc
#define OVM_POLL(vm) poll_tsc(vm)
#define OVM_PRIM_BEGIN(vm, id, n) ((void)(id), (void)(n))
#define OVM_PRIM_END(vm) ((void)0)
#include "bench/ovm_loop.h"

/* The trap design, as spy_poll does it: a relaxed load of a flag the
** sampler sets. */
static inline void poll_flag(ovm *vm) {
  if (__builtin_expect(
          atomic_load_explicit(&vm->sim_flag, memory_order_relaxed), 0))
    ovm_sim_slow(vm);
}

#define OVM_NAME ovm_run_flag
#define OVM_POLL(vm) poll_flag(vm)
#define OVM_PRIM_BEGIN(vm, id, n) ((void)(id), (void)(n))
#define OVM_PRIM_END(vm) ((void)0)
#include "bench/ovm_loop.h"

/* The countdown design (not used): load, store one less, and go out of
** line when it reaches zero. */
static inline void poll_cd(ovm *vm) {
  int n = atomic_load_explicit(&vm->sim_cd, memory_order_relaxed);
  atomic_store_explicit(&vm->sim_cd, n - 1, memory_order_relaxed);
  if (__builtin_expect(n <= 0, 0)) ovm_sim_slow(vm);
}

#define OVM_NAME ovm_run_cd
#define OVM_POLL(vm) poll_cd(vm)
#define OVM_PRIM_BEGIN(vm, id, n) ((void)(id), (void)(n))
#define OVM_PRIM_END(vm) ((void)0)
#include "bench/ovm_loop.h"
