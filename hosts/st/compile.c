/*
** hosts/st/compile.c: syntax trees to bytecode.
**
** The second pass (the first, name resolution and frame layout, is in
** scope.c): emit 32-bit instructions for each real scope (the method and
** every block), with inline control flow for the inlined sends, the
** special-selector ops (arithmetic, comparisons, at:, value ...) with a
** call site for their slow path, fused to:do: loop ops, and a small
** peephole (store then pop becomes pop-store).
*/
#include "config.h"

#include "hosts/st/compile.h"
#include "hosts/st/lint.h"
#include "hosts/st/heap.h"
#include "hosts/st/symbols.h"
#include "hosts/st/classes.h"
#include "hosts/st/primtab.h"
#include <stdlib.h>
#include <string.h>

/* ===================================================================== */
/* Pass 2: code generation                                               */
/* ===================================================================== */

typedef struct Gen {
  Comp *c;
  Scope *s;
  Method *home;          /* the method being compiled (for blocks) */
  Instr *code;
  uint32_t *lines;
  uint32_t n, cap;
  Value *lits;
  uint32_t nlits, caplits;
  CallSite *sites;
  uint32_t nsites, capsites;
  Method **blocks;
  uint32_t nblocks, capblocks;
  int depth, maxdepth;
  int line;
  int is_block;
  uint32_t label;        /* last jump target (no peephole across it) */
} Gen;

/* The generator's buffers live in the file's arena, so that a syntax
** error (a longjmp out of any depth) leaves nothing behind; gen_scope
** copies them into the method. Each growth doubles, so the arena holds at
** most twice what the final buffers take. */
static void *grow(Gen *g, const void *old, uint32_t n, uint32_t *cap,
                  size_t size) {
  uint32_t ncap = *cap ? *cap * 2 : 16;
  void *p = st_arena_alloc(g->c->arena, (size_t)ncap * size);
  if (n) memcpy(p, old, (size_t)n * size);
  *cap = ncap;
  return p;
}

#define GROW(ptr, n, cap)                                                 \
  do {                                                                    \
    if ((n) == (cap)) (ptr) = grow(g, (ptr), (n), &(cap), sizeof *(ptr)); \
  } while (0)

static uint32_t emit(Gen *g, Instr i, int delta) {
  /* Peephole: "store; pop" is "pop-store" unless the pop is a jump target. */
  if (i == OP_POP && g->n > 0 && g->label != g->n) {
    Instr *last = &g->code[g->n - 1];
    int op = OP(*last), nop = -1;
    if (op == OP_STORE_TEMP) nop = OP_POPSTORE_TEMP;
    else if (op == OP_STORE_IVAR) nop = OP_POPSTORE_IVAR;
    else if (op == OP_STORE_REMOTE) nop = OP_POPSTORE_REMOTE;
    if (nop >= 0) {
      *last = (*last & ~(Instr)0xFF) | (Instr)nop;
      g->depth += delta;
      return g->n - 1;
    }
  }
  if (g->n == g->cap) {
    uint32_t cap = g->cap;
    g->code = grow(g, g->code, g->n, &cap, sizeof *g->code);
    g->lines = grow(g, g->lines, g->n, &g->cap, sizeof *g->lines);
  }
  g->code[g->n] = i;
  g->lines[g->n] = (uint32_t)g->line;
  g->depth += delta;
  if (g->depth > g->maxdepth) g->maxdepth = g->depth;
  return g->n++;
}

static uint32_t add_lit(Gen *g, Value v) {
  for (uint32_t i = 0; i < g->nlits; i++)
    if (g->lits[i] == v) return i;
  GROW(g->lits, g->nlits, g->caplits);
  g->lits[g->nlits] = v;
  return g->nlits++;
}

static uint32_t add_site(Gen *g, Value sel, int nargs, uint32_t supercid,
                         int special) {
  GROW(g->sites, g->nsites, g->capsites);
  CallSite *cs = &g->sites[g->nsites];
  memset(cs, 0, sizeof *cs);
  cs->sel = sel;
  cs->nargs = (uint16_t)nargs;
  cs->supercid = supercid;
  cs->special = (uint16_t)special;
  return g->nsites++;
}

/* A data word inside the code; the peephole never looks across it. */
static void emit_raw(Gen *g, Instr w, int delta) {
  g->label = g->n;
  emit(g, w, delta);
  g->label = g->n;
}

/* Patch a forward jump at index at to land on the next instruction. */
static void patch(Gen *g, uint32_t at) {
  int32_t off = (int32_t)g->n - (int32_t)(at + 1);
  g->label = g->n;
  g->code[at] = MK_OPS(OP(g->code[at]), off);
}

/* Mark the current position as a jump target. */
static uint32_t here(Gen *g) {
  g->label = g->n;
  return g->n;
}

static void emit_loop(Gen *g, uint32_t target) {
  int32_t off = (int32_t)target - (int32_t)(g->n + 1);
  emit(g, MK_OPS(OP_LOOP, off), 0);
}

static int copied_slot(Gen *g, Var *v, Node *n) {
  Comp *c = g->c;
  int k = pvv_index(&g->s->copied, v);
  if (k < 0) ERR(n, "internal error: '%s' not copied into block", v->name);
  return g->s->nargs + 1 + k;
}

static int check_a(Gen *g, int slot, Node *n) {
  Comp *c = g->c;
  if (slot > 255) ERR(n, "too many temporaries");
  return slot;
}

/* Push, store (keeping the value) or pop-store a variable. */
enum { ACC_PUSH, ACC_STORE, ACC_POPSTORE };

static void access_var(Gen *g, Var *v, int how, Node *n) {
  static const int tempop[] = {OP_PUSH_TEMP, OP_STORE_TEMP, OP_POPSTORE_TEMP};
  static const int remop[] = {OP_PUSH_REMOTE, OP_STORE_REMOTE,
                              OP_POPSTORE_REMOTE};
  static const int ivop[] = {OP_PUSH_IVAR, OP_STORE_IVAR, OP_POPSTORE_IVAR};
  int delta = how == ACC_PUSH ? 1 : how == ACC_POPSTORE ? -1 : 0;
  switch (v->kind) {
  case V_SELF:
  case V_SUPER:
    emit(g, OP_PUSH_SELF, 1);
    return;
  case V_IVAR:
    emit(g, MK_OP(ivop[how], v->ivar), delta);
    return;
  case V_GLOBAL: {
    uint32_t k = add_lit(g, v->binding);
    if (how == ACC_PUSH) emit(g, MK_OP(OP_PUSH_GLOBAL, k), 1);
    else {
      emit(g, MK_OP(OP_STORE_GLOBAL, k), 0);
      if (how == ACC_POPSTORE) emit(g, OP_POP, -1);
    }
    return;
  }
  case V_TEMP:
  case V_ARG:
    if (v->in_vector) {
      Var *holder = v->scope->vecvar;
      int slot = holder->scope == g->s ? holder->slot
                                       : copied_slot(g, holder, n);
      emit(g, MK_OP2(remop[how], check_a(g, slot, n), v->vec_index), delta);
    } else {
      int slot = v->scope == g->s ? v->slot : copied_slot(g, v, n);
      emit(g, MK_OP(tempop[how], slot), delta);
    }
    return;
  default:
    return;
  }
}

static void gen_expr(Gen *g, Node *n);
static Method *gen_scope(Comp *c, Scope *s, Method *home);

/* Statements of an inlined block; leaves the last value (nil if none). */
static void gen_inline_body(Gen *g, Node *b) {
  if (b->nlist == 0) {
    emit(g, OP_PUSH_NIL, 1);
    return;
  }
  for (int i = 0; i < b->nlist; i++) {
    gen_expr(g, b->list[i]);
    if (i + 1 < b->nlist) emit(g, OP_POP, -1);
  }
}

static void gen_real_block(Gen *g, Node *b) {
  Method *bm = gen_scope(g->c, b->scope, g->home);
  for (int i = 0; i < b->scope->copied.n; i++)
    access_var(g, b->scope->copied.v[i], ACC_PUSH, b);
  GROW(g->blocks, g->nblocks, g->capblocks);
  g->blocks[g->nblocks] = bm;
  emit(g, MK_OP(OP_CLOSURE, g->nblocks), 1 - b->scope->copied.n);
  g->nblocks++;
}

static const struct { const char *sel; int op; int site; } specials[] = {
  {"+", OP_ADD, 1}, {"-", OP_SUB, 1}, {"*", OP_MUL, 1}, {"<", OP_LT, 1},
  {">", OP_GT, 1}, {"<=", OP_LE, 1}, {">=", OP_GE, 1}, {"=", OP_EQ, 1},
  {"~=", OP_NE, 1}, {"==", OP_IDEQ, 0}, {"~~", OP_IDNE, 0},
  {"at:", OP_AT, 1}, {"at:put:", OP_ATPUT, 1}, {"size", OP_SIZE, 1},
  {"value", OP_VALUE, 1}, {"value:", OP_VALUE1, 1},
  {"bitAnd:", OP_BITAND, 1}, {"bitOr:", OP_BITOR, 1},
  {"bitXor:", OP_BITXOR, 1},
  {"bitShift:", OP_SHIFT, 1}, {"//", OP_IDIV, 1}, {"\\\\", OP_IMOD, 1},
};

/* Condition of an inlined conditional, then a jump; returns its index. */
static uint32_t cond_jump(Gen *g, int op) {
  return emit(g, MK_OP(op, 0), -1);
}

static Var *param_var(Gen *g, Node *blk, int i) {
  for (int k = 0; k < g->s->vars.n; k++)
    if (((Var *)g->s->vars.v[k])->name == blk->params[i])
      return g->s->vars.v[k];
  st_panic("inlined parameter not found");
}

static void gen_nil_test(Gen *g, Node *n, Node *nilblk, Node *notnilblk) {
  /* Receiver is on the stack. */
  emit(g, OP_DUP, 1);
  emit(g, OP_PUSH_NIL, 1);
  emit(g, OP_IDEQ, -1);
  int d = g->depth;
  uint32_t j = cond_jump(g, OP_JUMPF); /* not nil */
  uint32_t jend;
  if (nilblk) {
    emit(g, OP_POP, -1);
    gen_inline_body(g, nilblk);
  }
  jend = emit(g, MK_OP(OP_JUMP, 0), 0);
  g->depth = d - 1;
  patch(g, j);
  if (notnilblk) {
    if (notnilblk->nparams == 1) {
      access_var(g, param_var(g, notnilblk, 0), ACC_POPSTORE, n);
    } else {
      emit(g, OP_POP, -1);
    }
    gen_inline_body(g, notnilblk);
  }
  patch(g, jend);
}

/* to:by:do: with a step computed at run time (or a literal that is not a
** nonzero SmallInteger): the direction is the step's sign, whatever kind
** of number it is. A step equal to zero would loop forever: it is an
** error (step error: '...'), as in Number>>to:by:do:; if that returns,
** the body runs no times. Plain slots get FORTESTV/FORINCV; otherwise the
** test picks <= or >= by comparing the step with 0. */
static void gen_to_by_do(Gen *g, Node *n, Node *blk) {
  Comp *c = g->c;
  Var *iv = param_var(g, blk, 0), *lim = n->var, *st = n->step;
  access_var(g, iv, ACC_POPSTORE, n);
  gen_expr(g, n->args[0]);
  access_var(g, lim, ACC_POPSTORE, n);
  gen_expr(g, n->args[1]);
  access_var(g, st, ACC_POPSTORE, n);
  static const char zero_msg[] = "step must not be zero";
  access_var(g, st, ACC_PUSH, n);
  emit(g, MK_OPS(OP_PUSH_INT, 0), 1);
  emit(g, MK_OP(OP_EQ, add_site(g, st_sym(c->vm, "="), 1, 0, 1)), -1);
  uint32_t jnz = cond_jump(g, OP_JUMPF);
  access_var(g, st, ACC_PUSH, n);
  emit(g, MK_OP(OP_PUSH_LIT, add_lit(g, st_new_string(c->vm, zero_msg,
                                                      sizeof zero_msg - 1))),
       1);
  emit(g, MK_OP(OP_SEND, add_site(g, st_sym(c->vm, "error:"), 1, 0, 0)), -1);
  emit(g, OP_POP, -1);
  patch(g, jnz);
  uint32_t le = add_site(g, st_sym(c->vm, "<="), 1, 0, 1);
  uint32_t ge = add_site(g, st_sym(c->vm, ">="), 1, 0, 1);
  uint32_t gt = add_site(g, st_sym(c->vm, ">"), 1, 0, 1);
  uint32_t inc = add_site(g, st_sym(c->vm, "+"), 1, 0, 1);
  int fused = !iv->in_vector && !lim->in_vector && !st->in_vector &&
              iv->slot < 256 && lim->slot < 65536 && st->slot < 65536;
  uint32_t top = here(g), j;
  if (fused) {
    emit(g, MK_OP2(OP_FORTESTV, iv->slot, lim->slot), 2);
    emit_raw(g, (Instr)st->slot, 0);
    emit_raw(g, (Instr)le, 0);
    emit_raw(g, (Instr)ge, -1);
    j = cond_jump(g, OP_JUMPF);
  } else {
    access_var(g, st, ACC_PUSH, n);
    emit(g, MK_OPS(OP_PUSH_INT, 0), 1);
    emit(g, MK_OP(OP_GT, gt), -1);
    uint32_t jdown = cond_jump(g, OP_JUMPF);
    access_var(g, iv, ACC_PUSH, n);
    access_var(g, lim, ACC_PUSH, n);
    emit(g, MK_OP(OP_LE, le), -1);
    uint32_t jtest = emit(g, MK_OP(OP_JUMP, 0), 0);
    g->depth--;
    patch(g, jdown);
    access_var(g, iv, ACC_PUSH, n);
    access_var(g, lim, ACC_PUSH, n);
    emit(g, MK_OP(OP_GE, ge), -1);
    patch(g, jtest);
    j = cond_jump(g, OP_JUMPF);
  }
  gen_inline_body(g, blk);
  emit(g, OP_POP, -1);
  if (fused) {
    emit(g, MK_OP2(OP_FORINCV, iv->slot, st->slot), 0);
    emit_raw(g, (Instr)(int32_t)((int32_t)top - (int32_t)(g->n + 1)), 0);
  }
  access_var(g, iv, ACC_PUSH, n);
  access_var(g, st, ACC_PUSH, n);
  emit(g, MK_OP(OP_ADD, inc), -1);
  access_var(g, iv, ACC_POPSTORE, n);
  emit_loop(g, top);
  patch(g, j);
  emit(g, OP_PUSH_NIL, 1);
}

static void gen_inlined(Gen *g, Node *n) {
  const char *sel = n->sel;
  Node **a = n->args;
  int d;
  if (!strcmp(sel, "whileTrue:") || !strcmp(sel, "whileFalse:") ||
      !strcmp(sel, "whileTrue") || !strcmp(sel, "whileFalse")) {
    uint32_t top = here(g);
    gen_inline_body(g, n->value);
    uint32_t j = cond_jump(g, sel[5] == 'T' ? OP_JUMPF : OP_JUMPT);
    if (n->nargs) {
      gen_inline_body(g, a[0]);
      emit(g, OP_POP, -1);
    }
    emit_loop(g, top);
    patch(g, j);
    emit(g, OP_PUSH_NIL, 1);
    return;
  }
  if (!strcmp(sel, "repeat")) {
    uint32_t top = here(g);
    gen_inline_body(g, n->value);
    emit(g, OP_POP, -1);
    emit_loop(g, top);
    emit(g, OP_PUSH_NIL, 1);
    return;
  }
  gen_expr(g, n->value);
  if (!strcmp(sel, "ifTrue:ifFalse:") || !strcmp(sel, "ifFalse:ifTrue:") ||
      !strcmp(sel, "ifTrue:") || !strcmp(sel, "ifFalse:")) {
    int t = sel[2] == 'T';
    uint32_t j = cond_jump(g, t ? OP_JUMPF : OP_JUMPT);
    d = g->depth;
    gen_inline_body(g, a[0]);
    uint32_t jend = emit(g, MK_OP(OP_JUMP, 0), 0);
    g->depth = d;
    patch(g, j);
    if (n->nargs == 2) gen_inline_body(g, a[1]);
    else emit(g, OP_PUSH_NIL, 1);
    patch(g, jend);
    return;
  }
  if (!strcmp(sel, "and:") || !strcmp(sel, "or:")) {
    int isand = sel[0] == 'a';
    uint32_t j = cond_jump(g, isand ? OP_JUMPF : OP_JUMPT);
    d = g->depth;
    gen_inline_body(g, a[0]);
    uint32_t jend = emit(g, MK_OP(OP_JUMP, 0), 0);
    g->depth = d;
    patch(g, j);
    emit(g, isand ? OP_PUSH_FALSE : OP_PUSH_TRUE, 1);
    patch(g, jend);
    return;
  }
  if (!strcmp(sel, "ifNil:")) return gen_nil_test(g, n, a[0], NULL);
  if (!strcmp(sel, "ifNotNil:")) return gen_nil_test(g, n, NULL, a[0]);
  if (!strcmp(sel, "ifNil:ifNotNil:")) return gen_nil_test(g, n, a[0], a[1]);
  if (!strcmp(sel, "ifNotNil:ifNil:")) return gen_nil_test(g, n, a[1], a[0]);
  /* to:do: and to:by:do: */
  Comp *c = g->c;
  int by = n->nargs == 3;
  Node *blk = a[by ? 2 : 1];
  if (n->step) return gen_to_by_do(g, n, blk);
  int64_t step = by ? a[1]->lit->i : 1;
  Var *iv = param_var(g, blk, 0);
  Var *lim = n->var;
  access_var(g, iv, ACC_POPSTORE, n);
  gen_expr(g, a[0]);
  access_var(g, lim, ACC_POPSTORE, n);
  uint32_t cmp = add_site(g, st_sym(c->vm, step > 0 ? "<=" : ">="), 1, 0, 1);
  uint32_t inc = add_site(g, st_sym(c->vm, "+"), 1, 0, 1);
  /* Plain frame slots get the fused loop ops: FORTEST (compare and exit,
  ** with a send of <= as the slow path) and FORINC (add the step and jump
  ** back, with the generic increment after it as the slow path). */
  int fused = !iv->in_vector && !lim->in_vector && iv->slot < 256 &&
              lim->slot < 65536 && step >= -32768 && step < 32768;
  uint32_t top = here(g), j;
  if (fused) {
    emit(g, MK_OP2(step > 0 ? OP_FORTEST : OP_FORTESTDN, iv->slot, lim->slot),
         2);
    emit_raw(g, (Instr)cmp, -1);
    j = cond_jump(g, OP_JUMPF);
  } else {
    access_var(g, iv, ACC_PUSH, n);
    access_var(g, lim, ACC_PUSH, n);
    emit(g, MK_OP(step > 0 ? OP_LE : OP_GE, cmp), -1);
    j = cond_jump(g, OP_JUMPF);
  }
  gen_inline_body(g, blk);
  emit(g, OP_POP, -1);
  if (fused) {
    emit(g, MK_OP2(OP_FORINC, iv->slot, (uint16_t)(int16_t)step), 0);
    emit_raw(g, (Instr)(int32_t)((int32_t)top - (int32_t)(g->n + 1)), 0);
  }
  access_var(g, iv, ACC_PUSH, n);
  if (step >= -(1 << 23) && step < (1 << 23))
    emit(g, MK_OPS(OP_PUSH_INT, (int32_t)step), 1);
  else
    emit(g, MK_OP(OP_PUSH_LIT, add_lit(g, MK_INT(step))), 1);
  emit(g, MK_OP(OP_ADD, inc), -1);
  access_var(g, iv, ACC_POPSTORE, n);
  emit_loop(g, top);
  patch(g, j);
  emit(g, OP_PUSH_NIL, 1);
}

static void gen_send(Gen *g, Node *n) {
  Comp *c = g->c;
  if (n->inlined) {
    gen_inlined(g, n);
    return;
  }
  if (n->value) gen_expr(g, n->value);
  for (int i = 0; i < n->nargs; i++) gen_expr(g, n->args[i]);
  Value sel = st_sym(c->vm, n->sel);
  if (st_sym_nargs(sel) != n->nargs) ERR(n, "bad selector '%s'", n->sel);
  if (!n->is_super)
    for (size_t i = 0; i < sizeof specials / sizeof specials[0]; i++)
      if (!strcmp(specials[i].sel, n->sel)) {
        uint32_t site = specials[i].site ? add_site(g, sel, n->nargs, 0, 1) : 0;
        emit(g, MK_OP(specials[i].op, site), -n->nargs);
        return;
      }
  if (n->is_super) {
    uint32_t sup = c->vm->classes[c->cid].super;
    if (!sup) ERR(n, "super used in a class without superclass");
    emit(g, MK_OP(OP_SUPER, add_site(g, sel, n->nargs, sup, 0)), -n->nargs);
  } else {
    emit(g, MK_OP(OP_SEND, add_site(g, sel, n->nargs, 0, 0)), -n->nargs);
  }
}

static void gen_expr(Gen *g, Node *n) {
  Comp *c = g->c;
  g->line = n->line;
  switch (n->kind) {
  case N_LIT: {
    Lit *l = n->lit;
    if (l->kind == L_NIL) emit(g, OP_PUSH_NIL, 1);
    else if (l->kind == L_TRUE) emit(g, OP_PUSH_TRUE, 1);
    else if (l->kind == L_FALSE) emit(g, OP_PUSH_FALSE, 1);
    else if (l->kind == L_INT && l->i >= -(1 << 23) && l->i < (1 << 23))
      emit(g, MK_OPS(OP_PUSH_INT, (int32_t)l->i), 1);
    else
      emit(g, MK_OP(OP_PUSH_LIT, add_lit(g, st_literal_value(c->vm, l))), 1);
    return;
  }
  case N_VAR:
    access_var(g, n->var, ACC_PUSH, n);
    return;
  case N_ASSIGN:
    gen_expr(g, n->value);
    g->line = n->line;
    access_var(g, n->var, ACC_STORE, n);
    return;
  case N_RETURN:
    gen_expr(g, n->value);
    g->line = n->line;
    emit(g, g->is_block ? OP_NLR : OP_RETURN, -1);
    emit(g, OP_PUSH_NIL, 1); /* unreachable; keeps the stack count */
    return;
  case N_SEND:
    gen_send(g, n);
    return;
  case N_CASCADE:
    gen_expr(g, n->value);
    for (int i = 0; i < n->nlist; i++) {
      if (i + 1 < n->nlist) emit(g, OP_DUP, 1);
      gen_expr(g, n->list[i]);
      if (i + 1 < n->nlist) emit(g, OP_POP, -1);
    }
    return;
  case N_BRACE:
    for (int i = 0; i < n->nlist; i++) gen_expr(g, n->list[i]);
    emit(g, MK_OP(OP_MKARRAY, n->nlist), 1 - n->nlist);
    return;
  case N_BLOCK:
    gen_real_block(g, n);
    return;
  }
}

static void *dup_mem(const void *p, size_t n) {
  if (!n) return NULL;
  void *d = malloc(n);
  if (!d) st_out_of_memory(n);
  memcpy(d, p, n);
  return d;
}

/* Generate the code of one real scope (a method, DoIt or block body). */
static Method *gen_scope(Comp *c, Scope *s, Method *home) {
  Gen g;
  memset(&g, 0, sizeof g);
  g.c = c;
  g.s = s;
  g.is_block = s->outer != NULL;
  Method *m = st_method_new(c->vm);
  g.home = home ? home : m;
  if (!home) m->sel = c->sel;
  g.line = s->block->line;
  if (s->vecvar) {
    emit(&g, MK_OP(OP_TEMPVEC, s->nvec), 1);
    emit(&g, MK_OP(OP_POPSTORE_TEMP, s->vecvar->slot), -1);
  }
  Node *b = s->block;
  if (g.is_block) {
    gen_inline_body(&g, b);
    emit(&g, OP_BLOCK_RET, -1);
  } else if (c->is_doit) {
    gen_inline_body(&g, b);
    emit(&g, OP_RETURN, -1);
  } else {
    for (int i = 0; i < b->nlist; i++) {
      gen_expr(&g, b->list[i]);
      emit(&g, OP_POP, -1);
    }
    emit(&g, OP_RETURN_SELF, 0);
  }
  m->code = dup_mem(g.code, g.n * sizeof(Instr));
  m->lines = dup_mem(g.lines, g.n * sizeof(uint32_t));
  m->ncode = g.n;
  m->lits = dup_mem(g.lits, g.nlits * sizeof(Value));
  m->nlits = g.nlits;
  m->sites = dup_mem(g.sites, g.nsites * sizeof(CallSite));
  m->nsites = g.nsites;
  m->blocks = dup_mem(g.blocks, g.nblocks * sizeof(Method *));
  m->nblocks = g.nblocks;
  m->nargs = (uint16_t)s->nargs;
  m->ncopied = (uint16_t)s->copied.n;
  m->ntemps = (uint16_t)s->ntemps;
  m->depth = (uint16_t)s->depth;
  m->maxstack = (uint32_t)g.maxdepth + 4;
  m->cid = c->cid;
  m->home = g.home;
  m->file = c->lx->file;
  m->line = s->block->line;
  if (g.is_block) {
    m->flags |= MF_BLOCK;
    m->sel = g.home->sel;
  }
  return m;
}

Method *st_compile(VM *vm, Lexer *lx, MethodAst *ast, uint32_t cid,
                   const char *file) {
  Comp c;
  memset(&c, 0, sizeof c);
  c.vm = vm;
  c.lx = lx;
  c.cid = cid;
  c.is_doit = ast->sel == NULL;
  c.arena = lx->arena;
  c.sel = ast->sel ? st_sym(vm, ast->sel) : vm->nil;
  (void)file;
  Scope *s = st_resolve(&c, ast);
  Method *m = gen_scope(&c, s, NULL);
  m->flags |= ast->flags;
  m->line = ast->line;
  if (ast->prim) {
    m->prim = st_prim_index(ast->prim);
    if (m->prim < 0)
      st_syntax_error(lx, ast->prim_line, ast->prim_col,
                      "unknown primitive '%s'", ast->prim);
  }
  return m;
}

/* ===================================================================== */
/* Literals and top-level variables                                      */
/* ===================================================================== */

Value st_literal_value(VM *vm, Lit *l) {
  switch (l->kind) {
  case L_NIL: return vm->nil;
  case L_TRUE: return vm->vtrue;
  case L_FALSE: return vm->vfalse;
  case L_INT: return st_int_from_i64(vm, l->i);
  case L_FLOAT: return st_new_float(vm, l->d);
  case L_CHAR: return MK_CHAR(l->i);
  case L_STRING: return st_new_string(vm, l->s, l->slen);
  case L_SYMBOL: return st_intern(vm, l->s, l->slen);
  case L_BIGINT: {
    const char *colon = strchr(l->s, ':');
    int radix = atoi(l->s);
    mpz_t z;
    mpz_init(z);
    mpz_set_str(z, colon + 1, radix);
    if (l->neg) mpz_neg(z, z);
    Value v = st_int_from_mpz(vm, z);
    mpz_clear(z);
    return v;
  }
  case L_ARRAY: {
    Value a = st_new_array(vm, (uint64_t)l->nelems);
    for (int i = 0; i < l->nelems; i++)
      SLOTS(a)[i] = st_literal_value(vm, l->elems[i]);
    return a;
  }
  case L_BYTEARRAY: {
    Value a = st_new_bytes(vm, CID_BYTEARRAY, (uint64_t)l->nelems);
    for (int i = 0; i < l->nelems; i++) BYTES(a)[i] = (uint8_t)l->elems[i]->i;
    return a;
  }
  }
  return vm->nil;
}

/* Top-level variables live in an open-addressing Array of Associations
** keyed by Symbol (symbols never move), grown by doubling: a script that
** declares many of them costs linear time and memory, not quadratic. */
static uint64_t script_slot(VM *vm, Value sv, Value name) {
  uint64_t cap = NSLOTS(sv);
  uint64_t k = ((uint64_t)(((uint64_t)name >> 4) * 0x9E3779B1u)) & (cap - 1);
  while (SLOTS(sv)[k] != vm->nil && SLOTS(SLOTS(sv)[k])[ASSOC_KEY] != name)
    k = (k + 1) & (cap - 1);
  return k;
}

Value st_script_binding(VM *vm, Value name, int create) {
  Value sv = vm->script_vars;
  if (sv != vm->nil) {
    Value as = SLOTS(sv)[script_slot(vm, sv, name)];
    if (as != vm->nil) return as;
  }
  if (!create) return 0;
  uint64_t cap = sv == vm->nil ? 0 : NSLOTS(sv);
  if ((vm->nscript_vars + 1) * 2 > cap) {
    uint64_t ncap = cap ? cap * 2 : 64;
    Value a = st_new_array(vm, ncap);
    for (uint64_t i = 0; i < cap; i++) {
      Value as = SLOTS(sv)[i];
      if (as != vm->nil)
        SLOTS(a)[script_slot(vm, a, SLOTS(as)[ASSOC_KEY])] = as;
    }
    vm->script_vars = sv = a;
  }
  Value as = st_new_assoc(vm, name, vm->nil);
  SLOTS(sv)[script_slot(vm, sv, name)] = as;
  vm->nscript_vars++;
  return as;
}
