/*
** bench/ovm_loop.h: the dispatch loop of the overhead VM, written once and
** instantiated per variant (see ovm.h). Before including it, define
**   OVM_NAME        the function's name
**   OVM_POLL(vm)    what happens at a poll point (activation, backward jump)
**   OVM_PRIM_BEGIN(vm, id, n) and OVM_PRIM_END(vm)
** These may use `hv`, the spy_vm handle the loop keeps in a local for the
** whole run (as Lua keeps L in a register).
** No include guard: included several times on purpose.
*/

/* Computed goto, as in Lua's lvm.c with LUA_USE_JUMPTABLE. */
int64_t OVM_NAME(ovm *vm, int fn, int64_t arg) {
  static void *const disp[OP_NOPS] = {
    &&L_HALT, &&L_PUSHK, &&L_LOADL, &&L_STOREL, &&L_INCL, &&L_ADD,
    &&L_SUB,  &&L_MUL,   &&L_AND,   &&L_LT,     &&L_JMP,  &&L_JZ,
    &&L_JNZ,  &&L_CALL,  &&L_RET,   &&L_PRIM,   &&L_POP,
  };
  spy_vm *const hv = vm->spy;
  (void)hv;
  const int64_t *code = vm->code;
  int64_t *sp = vm->stack; /* points at the next free slot */
  int64_t *bp;
  int pc;
  int64_t a, b;

  /* The initial activation: a frame whose return pc is -1. */
  *sp++ = arg;
  {
    const ovm_func *f = &vm->funcs[fn];
    bp = sp - f->nargs;
    for (int i = f->nargs; i < f->nlocals; i++) *sp++ = 0;
    vm->nframes = 0;
    vm->frames[vm->nframes++] = (ovm_frame){fn, -1, 0};
    pc = f->entry;
    OVM_POLL(vm);
  }
#define NEXT() goto *disp[code[pc++]]
  NEXT();

L_HALT:
  return sp[-1];
L_PUSHK:
  *sp++ = code[pc++];
  NEXT();
L_LOADL:
  *sp++ = bp[code[pc++]];
  NEXT();
L_STOREL:
  bp[code[pc++]] = *--sp;
  NEXT();
L_INCL:
  bp[code[pc]] += code[pc + 1];
  pc += 2;
  NEXT();
L_ADD:
  b = *--sp; a = sp[-1]; sp[-1] = a + b;
  NEXT();
L_SUB:
  b = *--sp; a = sp[-1]; sp[-1] = a - b;
  NEXT();
L_MUL:
  b = *--sp; a = sp[-1]; sp[-1] = (int64_t)((uint64_t)a * (uint64_t)b);
  NEXT();
L_AND:
  b = *--sp; a = sp[-1]; sp[-1] = a & b;
  NEXT();
L_LT:
  b = *--sp; a = sp[-1]; sp[-1] = a < b;
  NEXT();
L_JMP:
  a = code[pc];
  pc += 1 + (int)a;
  if (a < 0) OVM_POLL(vm);
  NEXT();
L_JZ:
  a = code[pc++];
  if (*--sp == 0) {
    pc += (int)a;
    if (a < 0) OVM_POLL(vm);
  }
  NEXT();
L_JNZ:
  a = code[pc++];
  if (*--sp != 0) {
    pc += (int)a;
    if (a < 0) OVM_POLL(vm);
  }
  NEXT();
L_CALL: {
  const ovm_func *f = &vm->funcs[code[pc++]];
  vm->frames[vm->nframes].fn = (int)(f - vm->funcs);
  vm->frames[vm->nframes].ret_pc = pc;
  vm->frames[vm->nframes].bp = (int)(bp - vm->stack);
  vm->nframes++;
  bp = sp - f->nargs;
  for (int i = f->nargs; i < f->nlocals; i++) *sp++ = 0;
  pc = f->entry;
  OVM_POLL(vm);
  NEXT();
}
L_RET: {
  int64_t r = sp[-1];
  const ovm_frame *fr = &vm->frames[--vm->nframes];
  sp = bp;
  *sp++ = r;
  if (fr->ret_pc < 0) return r;
  pc = fr->ret_pc;
  bp = vm->stack + fr->bp;
  NEXT();
}
L_PRIM: {
  int p = (int)code[pc++];
  a = sp[-1];
  OVM_PRIM_BEGIN(vm, vm->prim_ids[p], (uint64_t)a);
  sp[-1] = p == 0 ? ovm_prim_sum(vm, a) : ovm_prim_hash(vm, a);
  OVM_PRIM_END(vm);
  NEXT();
}
L_POP:
  sp--;
  NEXT();
#undef NEXT
}

#undef OVM_NAME
#undef OVM_POLL
#undef OVM_PRIM_BEGIN
#undef OVM_PRIM_END
