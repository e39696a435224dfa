/*
** bench/ovm.c: the overhead VM's programs, primitives and stack walk (the
** parts every variant shares; the loop is in ovm_loop.h).
*/
#include "config.h"

#include "bench/ovm.h"

#include <spyon/hooks.h>

#include <stdio.h>
#include <string.h>

/* ------------------------------------------------------------------------
** A tiny assembler
** --------------------------------------------------------------------- */

static void emit(ovm *vm, int64_t w) {
  if (vm->ncode < OVM_MAX_CODE) vm->code[vm->ncode++] = w;
}

static void emit1(ovm *vm, int op, int64_t a) {
  emit(vm, op);
  emit(vm, a);
}

/* A forward jump: emit op with a placeholder, return where to patch. */
static int jump_fwd(ovm *vm, int op) {
  emit1(vm, op, 0);
  return vm->ncode - 1;
}

/* Point the jump operand at `at` to the current position. */
static void patch(ovm *vm, int at) {
  vm->code[at] = vm->ncode - (at + 1);
}

/* A backward jump to `target`. */
static void jump_back(ovm *vm, int op, int target) {
  emit(vm, op);
  emit(vm, target - (vm->ncode + 1));
}

static int func(ovm *vm, int nargs, int nlocals, uint64_t key,
                const char *name) {
  int f = vm->nfuncs++;
  vm->funcs[f] = (ovm_func){vm->ncode, nargs, nlocals, key, name};
  return f;
}

/* fib(n) = n < 2 ? n : fib(n-1) + fib(n-2): call-heavy. */
static void build_fib(ovm *vm) {
  int f = func(vm, 1, 1, 101, "Bench>>fib:");
  vm->fib = f;
  emit1(vm, OP_LOADL, 0);
  emit1(vm, OP_PUSHK, 2);
  emit(vm, OP_LT);
  int j = jump_fwd(vm, OP_JZ);
  emit1(vm, OP_LOADL, 0);
  emit(vm, OP_RET);
  patch(vm, j);
  emit1(vm, OP_LOADL, 0);
  emit1(vm, OP_PUSHK, 1);
  emit(vm, OP_SUB);
  emit1(vm, OP_CALL, f);
  emit1(vm, OP_LOADL, 0);
  emit1(vm, OP_PUSHK, 2);
  emit(vm, OP_SUB);
  emit1(vm, OP_CALL, f);
  emit(vm, OP_ADD);
  emit(vm, OP_RET);
}

/* loop(n): for i < n: acc = (acc + i*i) & mask, and every 1024th iteration
** two primitive calls (sum of 512 words, hash of 256 words): loop-heavy,
** one backward jump per iteration. Locals: 0 n, 1 i, 2 acc. */
static void build_loop(ovm *vm) {
  vm->loop = func(vm, 1, 3, 102, "Bench>>loop:");
  int top = vm->ncode;
  emit1(vm, OP_LOADL, 1);
  emit1(vm, OP_LOADL, 0);
  emit(vm, OP_LT);
  int jend = jump_fwd(vm, OP_JZ);
  emit1(vm, OP_LOADL, 2);
  emit1(vm, OP_LOADL, 1);
  emit1(vm, OP_LOADL, 1);
  emit(vm, OP_MUL);
  emit(vm, OP_ADD);
  emit1(vm, OP_PUSHK, 0xffffff);
  emit(vm, OP_AND);
  emit1(vm, OP_STOREL, 2);
  emit1(vm, OP_LOADL, 1);
  emit1(vm, OP_PUSHK, 1023);
  emit(vm, OP_AND);
  int jskip = jump_fwd(vm, OP_JNZ);
  emit1(vm, OP_PUSHK, 512);
  emit1(vm, OP_PRIM, 0);
  emit1(vm, OP_LOADL, 2);
  emit(vm, OP_ADD);
  emit1(vm, OP_STOREL, 2);
  emit1(vm, OP_PUSHK, 256);
  emit1(vm, OP_PRIM, 1);
  emit1(vm, OP_LOADL, 2);
  emit(vm, OP_ADD);
  emit1(vm, OP_PUSHK, 0xffffff);
  emit(vm, OP_AND);
  emit1(vm, OP_STOREL, 2);
  patch(vm, jskip);
  emit(vm, OP_INCL);
  emit(vm, 1);
  emit(vm, 1);
  jump_back(vm, OP_JMP, top);
  patch(vm, jend);
  emit1(vm, OP_LOADL, 2);
  emit(vm, OP_RET);
}

void ovm_build(ovm *vm) {
  memset(vm, 0, sizeof *vm);
  build_fib(vm);
  build_loop(vm);
  for (int i = 0; i < OVM_ARRAY; i++)
    vm->array[i] = (int64_t)i * 2654435761;
}

int ovm_register(ovm *vm, spy_profiler *p) {
  vm->prim_ids[0] = spy_prim_register(p, "Array>>sum", "n", SPY_PRIM_COST);
  vm->prim_ids[1] = spy_prim_register(p, "Array>>hash", "n", SPY_PRIM_COST);
  return vm->prim_ids[0] < 0 ? vm->prim_ids[0] : vm->prim_ids[1];
}

/* ------------------------------------------------------------------------
** Primitives and the host callbacks
** --------------------------------------------------------------------- */

int64_t ovm_prim_sum(ovm *vm, int64_t n) {
  int64_t s = 0;
  if (n > OVM_ARRAY) n = OVM_ARRAY;
  for (int64_t i = 0; i < n; i++) s += vm->array[i];
  return s & 0xffff;
}

int64_t ovm_prim_hash(ovm *vm, int64_t n) {
  uint64_t h = 1469598103934665603ull;
  if (n > OVM_ARRAY) n = OVM_ARRAY;
  const unsigned char *b = (const unsigned char *)vm->array;
  for (int64_t i = 0; i < n * 8; i++) h = (h ^ b[i]) * 1099511628211ull;
  return (int64_t)(h & 0xffff);
}

void ovm_walk(void *ud, spy_stack *st) {
  ovm *vm = ud;
  for (int i = vm->nframes; i-- > 0;)
    spy_stack_push(st, vm->funcs[vm->frames[i].fn].key);
}

/* Far from the hot loop on purpose (like spy_poll_slow_): re-arm the
** simulated countdown to ~1000 polls, count the expiry. */
void ovm_sim_slow(ovm *vm) {
  atomic_store_explicit(&vm->sim_cd, 1000, memory_order_relaxed);
  vm->due++;
}

int ovm_name(void *ud, uint64_t key, char *buf, size_t len) {
  ovm *vm = ud;
  for (int i = 0; i < vm->nfuncs; i++)
    if (vm->funcs[i].key == key) {
      snprintf(buf, len, "%s", vm->funcs[i].name);
      return 0;
    }
  return 1;
}
