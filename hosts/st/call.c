/*
** hosts/st/call.c: the out-of-line parts of the call protocol (call.h).
**
** The dispatch loop (interp.c) runs the common case of every send, block
** value and return itself; it comes here, with its state saved in the
** running Proc, for what needs more than a frame push: messages not
** understood, non-Boolean conditions, non-local returns, the control
** primitives that change frames (perform:, valueWithArguments:,
** returnValue:fromFrame:, restartFrame:, sort: with a block) or switch
** processes, and a process's bottom. Each answers what the loop does next.
*/
#include "config.h"

#include "hosts/st/call.h"
#include "hosts/st/interp.h"
#include "hosts/st/heap.h"
#include "hosts/st/symbols.h"
#include "hosts/st/classes.h"
#include "hosts/st/proc.h"
#include "hosts/st/primtab.h"

#include <stdlib.h>

/* ===================================================================== */
/* Sends the VM makes itself                                             */
/* ===================================================================== */

/* A method the VM sends by itself must exist: the kernel defines it. */
static Method *vm_lookup(VM *vm, uint32_t cid, int special,
                         const char *what) {
  Method *t = st_lookup_cached(vm, cid, vm->specials[special]);
  if (!t) st_panic("%s", what);
  return t;
}

void st_call_dnu(VM *vm, Value sel, uint32_t cid, StCall *c) {
  /* rcv doesNotUnderstand: (Message selector: sel arguments: args) */
  int n = c->na;
  Value arr = st_new_array(vm, (uint64_t)n);
  for (int k = 0; k < n; k++) SLOTS(arr)[k] = c->sp[k - n];
  Value msg = st_new_slots(vm, CID_MESSAGE, MSG_NSLOTS);
  SLOTS(msg)[MSG_SELECTOR] = sel;
  SLOTS(msg)[MSG_ARGS] = arr;
  c->sp -= n;
  *c->sp++ = msg;
  c->na = 1;
  c->t = vm_lookup(vm, cid, SP_DNU, "doesNotUnderstand: is not understood");
}

void st_call_not_boolean(VM *vm, StCall *c) {
  /* value mustBeBoolean: the value was just popped; push it back. */
  c->rcv = c->sp[0];
  c->sp++;
  c->na = 0;
  c->t = vm_lookup(vm, st_cid(vm, c->rcv), SP_MUSTBEBOOL,
                   "mustBeBoolean is not understood");
}

void st_call_undeclared(VM *vm, Value b, StCall *c) {
  /* nil undeclaredVariable: #Name */
  *c->sp++ = vm->nil;
  *c->sp++ = SLOTS(b)[ASSOC_KEY];
  c->na = 1;
  c->rcv = vm->nil;
  c->t = vm_lookup(vm, CID_UNDEFINED, SP_UNDECLARED,
                   "undeclared variable and no handler");
}

/* rcv perform: sel with the na arguments on the stack. */
static StGo perform(VM *vm, Value sel, StCall *c) {
  uint32_t cid = st_cid(vm, c->rcv);
  c->t = st_lookup_cached(vm, cid, sel);
  if (!c->t) st_call_dnu(vm, sel, cid, c);
  return ST_GO_CALL;
}

/* ===================================================================== */
/* Leaving frames                                                        */
/* ===================================================================== */

/* A non-local exit (a block's ^, an exception's return: or retry)
** discards the frames above keep up to top. A primitive frame among them
** (sort: with a block, left from inside its block) has brackets open in
** the profiler, its primitive and its callback: close them, and whatever
** was opened above it, by unwinding to the nesting saved when the lowest
** such frame began. */
static void unwind_brackets(VM *vm, Frame *top, Frame *keep) {
  if (!spy_nest_save(vm->prof.v)) return; /* no bracket open */
  for (Frame *k = keep + 1; k <= top; k++)
    if ((k->m->flags & MF_DRIVER) && k->base[SB_N] != vm->nil) {
      spy_nest_unwind(vm->prof.v, (unsigned)INT_VAL(k->base[SB_NEST]));
      return;
    }
}

StGo st_call_nlr(VM *vm, Frame *f, StCall *c) {
  Proc *P = vm->cur;
  Value cl = f->closure;
  Value hp = SLOTS(cl)[BLK_HOMEPROC];
  intptr_t hidx = INT_VAL(SLOTS(cl)[BLK_HOMEFRAME]);
  Frame *home = P->frames + hidx;
  st_assert(f == P->f && cl != 0);
  if (hp != P->obj || home > f ||
      home->serial != (uint64_t)INT_VAL(SLOTS(cl)[BLK_HOMESERIAL])) {
    /* The home method has returned: closure cannotReturn: value. */
    c->sp[-1] = cl;
    *c->sp++ = c->res;
    c->na = 1;
    c->rcv = cl;
    c->t = vm_lookup(vm, CID_BLOCK, SP_CANNOTRETURN, "no cannotReturn:");
    return ST_GO_CALL;
  }
  for (Frame *k = f; k > home; k--)
    if (k->m->flags & MF_UNWIND) {
      /* Unwind blocks in between: closure nonLocalReturn: v to: i,
      ** which runs them and then returns from the home frame. */
      c->sp[-1] = cl;
      *c->sp++ = c->res;
      *c->sp++ = MK_INT(hidx);
      c->na = 2;
      c->rcv = cl;
      c->t = vm_lookup(vm, CID_BLOCK, SP_NLR, "no nonLocalReturn:to:");
      return ST_GO_CALL;
    }
  unwind_brackets(vm, f, home);
  c->to = home;
  return ST_GO_RETURN;
}

StGo st_call_bottom(VM *vm) {
  Proc *P = vm->cur;
  st_assert(P->f == P->frames);
  if (P == vm->main) return ST_GO_DONE;
  st_proc_finished(vm, P);
  return vm->stopping ? ST_GO_STOP : ST_GO_RELOAD;
}

/* ===================================================================== */
/* The room and bottom checks: poll points (call.h)                      */
/* ===================================================================== */

/* The words' normal values for the running process. */
static void words_restore(VM *vm) {
  Proc *P = vm->cur;
  spy_trip_store(&vm->flimit, (uintptr_t)P->frames_end);
  spy_trip_store(&vm->fstop, (uintptr_t)(P->frames + 1));
}

void st_call_words(VM *vm) {
  words_restore(vm);
  spy_trip_rearm(vm->prof.v);
}

/* A word was tripped (or the check failed for real), state saved: take a
** due sample; restore the words unless a mark is being made (then the
** next check takes it: spyon/hooks.h). */
void st_call_poll(VM *vm) {
  switch (spy_trip_state(vm->prof.v)) {
  case SPY_TRIP_TAKE:
    words_restore(vm);
    st_prof_poll(vm);
    break;
  case SPY_TRIP_RESTORE: words_restore(vm); break;
  default: break;
  }
}

static void overflow(VM *vm);

int st_call_room(VM *vm, size_t n) {
  Proc *P = vm->cur;
  st_call_poll(vm);
  if (P->f + 1 < P->frames_end && P->sp + n < P->stack_end) return 1;
  overflow(vm);
  return 0;
}

int st_call_last(VM *vm) {
  Proc *P = vm->cur;
  st_call_poll(vm);
  st_assert(P->f > P->frames);
  return P->f == P->frames + 1;
}

static void overflow(VM *vm) {
  fflush(stdout);
  fprintf(stderr, "Error: stack overflow (%ld frames)\n",
          (long)(vm->cur->f - vm->cur->frames));
  st_backtrace(vm, vm->cur, stderr);
  vm->stopping = 1;
  vm->exit_code = 1;
}

/* ===================================================================== */
/* sort: with a block                                                    */
/* ===================================================================== */

/* The method of sort:'s frame (OP_PRIMSTEP), made on first use from the
** kernel method k so that backtraces and profiles name it as k. The
** walker reports the frame always (the contract asks for the same stack
** at every hook of one primitive): "Array(ArrayedCollection)>>sort:",
** the primitive under it, the block's frames under that. MF_DRIVER marks
** the frames that hold a nesting to unwind to (SB_NEST). */
static Method *sort_driver(VM *vm, Method *k) {
  if (vm->sort_driver) return vm->sort_driver;
  Method *d = st_method_new(vm);
  d->code = malloc(sizeof(Instr));
  d->lines = malloc(sizeof(uint32_t));
  if (!d->code || !d->lines) st_panic("out of memory");
  d->code[0] = MK_OP(OP_PRIMSTEP, 0);
  d->lines[0] = (uint32_t)k->line;
  d->ncode = 1;
  d->nargs = 1;
  d->ntemps = SB_NSLOTS - 2;
  d->maxstack = 4;
  d->flags = MF_DRIVER;
  d->sel = k->sel;
  d->cid = k->cid;
  d->file = k->file;
  d->line = k->line;
  vm->sort_driver = d;
  return d;
}

/* The frame of sort: with a block (a primitive that calls back): run the
** merge until it needs the block, call the block (its return comes back
** to the frame's one instruction), and return the receiver when sorted.
** The hooks may walk the stack: the state is saved, and the walker sees
** this frame on top at each of them. */
StGo st_call_sort_step(VM *vm, Frame *f, StCall *c) {
  spy_vm *sv = vm->prof.v;
  Value *base = f->base;
  int answer = -1;
  st_assert(f->m == vm->sort_driver);
  if (base[SB_N] == vm->nil) {
    /* The nesting to go back to if the frame is left non-locally. */
    base[SB_NEST] = MK_INT(spy_nest_save(sv));
    ST_PRIM_BEGIN1(vm, SPYP_SORT_BLOCK, NSLOTS(base[SB_RCV]));
  } else {
    answer = *--c->sp == vm->vtrue;
    vm->cur->sp = c->sp;
    spy_callback_end(sv);
  }
  Value x, y;
  if (st_sort_step(vm, base, answer, &x, &y)) {
    spy_callback_begin(sv);
    f->ip = f->m->code; /* the block returns to OP_PRIMSTEP again */
    c->rcv = base[SB_BLOCK];
    *c->sp++ = c->rcv;
    *c->sp++ = x;
    *c->sp++ = y;
    c->na = 2;
    c->t = NULL;
    return ST_GO_BLOCK;
  }
  ST_PRIM_END(vm);
  c->res = base[SB_RCV];
  c->to = f;
  return ST_GO_RETURN;
}

/* ===================================================================== */
/* Control primitives                                                    */
/* ===================================================================== */

/* The argument of returnValue:fromFrame: / restartFrame:, a frame index
** of the running process at or below the top: the frame, or NULL. */
static Frame *frame_arg(VM *vm, Value rcv, Value x) {
  Proc *P = vm->cur;
  if (rcv != P->obj || !IS_INT(x) || INT_VAL(x) < 1 ||
      P->frames + INT_VAL(x) > P->f)
    return NULL;
  return P->frames + INT_VAL(x);
}

static int is_class(Value v, uint32_t cid) {
  return IS_PTR(v) && OBJ(v)->cls == cid;
}

StGo st_call_control(VM *vm, int ctl, StCall *c) {
  Proc *P = vm->cur;
  Value *sp = c->sp;
  switch (ctl) {
  case CTL_VALUE:
    return is_class(c->rcv, CID_BLOCK) ? ST_GO_BLOCK : ST_GO_ACTIVATE;
  case CTL_VALUE_ARGS: {
    /* aBlock valueWithArguments: anArray */
    Value arr = sp[-1];
    if (!is_class(arr, CID_ARRAY)) return ST_GO_ACTIVATE;
    Method *bm = RAW_PTR(SLOTS(c->rcv)[BLK_METHOD]);
    uint64_t n = NSLOTS(arr);
    if (bm->nargs != n || sp + n + 8 >= P->stack_end) return ST_GO_ACTIVATE;
    sp--;
    for (uint64_t k = 0; k < n; k++) *sp++ = SLOTS(arr)[k];
    c->sp = sp;
    c->na = (int)n;
    return ST_GO_BLOCK;
  }
  case CTL_PERFORM: {
    /* rcv perform: sel with: args... */
    int na = c->na;
    Value sel = sp[-na];
    if (!is_class(sel, CID_SYMBOL) || st_sym_nargs(sel) != na - 1)
      return ST_GO_ACTIVATE;
    for (int k = -na; k < -1; k++) sp[k] = sp[k + 1];
    c->sp = sp - 1;
    c->na = na - 1;
    return perform(vm, sel, c);
  }
  case CTL_PERFORM_ARGS: {
    /* rcv perform: sel withArguments: anArray */
    Value arr = sp[-1], sel = sp[-2];
    if (!is_class(sel, CID_SYMBOL) || !is_class(arr, CID_ARRAY) ||
        (uint64_t)st_sym_nargs(sel) != NSLOTS(arr) ||
        sp + NSLOTS(arr) + 8 >= P->stack_end)
      return ST_GO_ACTIVATE;
    sp -= 2;
    for (uint64_t k = 0; k < NSLOTS(arr); k++) *sp++ = SLOTS(arr)[k];
    c->sp = sp;
    c->na = (int)NSLOTS(arr);
    return perform(vm, sel, c);
  }
  case CTL_RETURN_FROM: {
    /* aProcess returnValue: v fromFrame: idx */
    Frame *to = frame_arg(vm, c->rcv, sp[-1]);
    if (!to) return ST_GO_ACTIVATE;
    unwind_brackets(vm, P->f, to);
    c->res = sp[-2];
    c->to = to;
    return ST_GO_RETURN;
  }
  case CTL_RESTART: {
    /* aProcess restartFrame: idx: the frame runs again from its start,
    ** with its arguments and copied values, its temporaries nil. */
    Frame *to = frame_arg(vm, c->rcv, sp[-1]);
    if (!to) return ST_GO_ACTIVATE;
    unwind_brackets(vm, P->f, to);
    Method *m = to->m;
    sp = to->base + 1 + m->nargs + m->ncopied;
    for (int k = m->ntemps; k > 0; k--) *sp++ = vm->nil;
    to->ip = m->code;
    P->f = to;
    P->sp = sp;
    return ST_GO_RESTART;
  }
  case CTL_SORTBLOCK: {
    /* anArray sort: aTwoArgumentBlock: run in a frame of its own (see
    ** st_call_sort_step); other receivers run the Smalltalk merge sort. */
    Value b = sp[-1];
    if (!is_class(c->rcv, CID_ARRAY) || !is_class(b, CID_BLOCK) ||
        ((Method *)RAW_PTR(SLOTS(b)[BLK_METHOD]))->nargs != 2)
      return ST_GO_ACTIVATE;
    c->t = sort_driver(vm, c->t);
    return ST_GO_ACTIVATE;
  }
  default: {
    /* Scheduling and run control: the primitive may switch processes
    ** or stop the run; its result is left on the current stack first. */
    P->sp = sp;
    if (st_control(vm, ctl, sp - c->na - 1, c->na) < 0)
      return ST_GO_ACTIVATE; /* failed: run the fallback code */
    return vm->stopping ? ST_GO_STOP : ST_GO_RELOAD;
  }
  }
}

/* ===================================================================== */
/* Invariants                                                            */
/* ===================================================================== */

void st_call_check(const VM *vm, const Proc *p) {
  (void)vm;
  (void)p;
  st_assert(vm->cur == p);
  st_assert(vm->flimit == (uintptr_t)p->frames_end ||
            vm->flimit == ST_TRIP_FLIMIT);
  st_assert(p->frames[0].m == NULL);
  st_assert(p->f >= p->frames && p->f < p->frames_end);
  st_assert(p->sp >= p->stack && p->sp <= p->stack_end);
  for (const Frame *f = p->f; f > p->frames; f--) {
    st_assert(f->m != NULL);
    st_assert(f->base >= f[-1].base && f->base < p->sp + 1);
  }
}
