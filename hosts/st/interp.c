/*
** hosts/st/interp.c: the bytecode interpreter.
**
** Built like Lua's lvm.c: one loop over 32-bit instructions written
** against vmfetch/vmdispatch/vmcase/vmbreak, so it compiles to computed
** gotos under GCC/Clang and to a switch elsewhere. Interpreter state (ip,
** sp, frame, method) lives in locals; SAVE writes it back to the running
** Proc before anything that may look at the stack (primitives, the
** profiler's walker, the collector, process switches) and LOAD reloads it,
** possibly for another process.
**
** Sends go through a per-site monomorphic inline cache; SmallInteger
** arithmetic and comparisons, ==, at:/at:put:/size on plain arrays and
** strings, and value/value: on blocks run inline. Frames are C structures
** on a per-process frame stack; the values (receiver, arguments, copied
** values, temporaries, operands) on a per-process value stack.
**
** Poll points (every send and return) are where the profiler takes its
** samples, and they cost nothing: the frame room check and the
** first-frame check the loop makes anyway fail when a sample is due (trip
** words, call.h). A loop without sends is polled at its interrupt checks
** (LOOP_CHECK), still in its own method.
** Interrupt checks (method activation and backward jumps) are where the
** collector may run and where processes are preempted, behind one
** countdown and one predictable branch.
*/
#include "config.h"

#include "hosts/st/interp.h"

#include "hosts/st/call.h"
#include "hosts/st/heap.h"
#include "hosts/st/classes.h"
#include "hosts/st/proc.h"
#include "hosts/st/primtab.h"


/* ===================================================================== */
/* Dispatch macros                                                       */
/* ===================================================================== */

#if defined(__GNUC__) && !defined(ST_NO_COMPUTED_GOTO)
#define ST_COMPUTED_GOTO 1
#endif

#define vmfetch() (i = *ip++)

#ifdef ST_COMPUTED_GOTO
#define vmdispatch(o) goto *disptab[o];
#define vmcase(l) L_##l:
#define vmbreak                                                           \
  do {                                                                    \
    vmfetch();                                                            \
    goto *disptab[OP(i)];                                                 \
  } while (0)
#else
#define vmdispatch(o) switch (o)
#define vmcase(l) case l:
#define vmbreak break
#endif

#define SAVE()                                                            \
  do {                                                                    \
    f->ip = ip;                                                           \
    P->sp = sp;                                                           \
    P->f = f;                                                             \
  } while (0)

#define LOAD()                                                            \
  do {                                                                    \
    P = vm->cur;                                                          \
    f = P->f;                                                             \
    sp = P->sp;                                                           \
    ip = f->ip;                                                           \
    m = f->m;                                                             \
    base = f->base;                                                       \
    sv = vm->prof.v;                                                      \
    st_call_words(vm);                                                    \
    if (ST_CHECKS) st_call_check(vm, P);                                  \
  } while (0)

/* Interrupt check: one countdown in the hot path, at method activation
** and backward jumps. When it runs out, the slow path (st_interrupt)
** handles collection, timers, time slices and SIGINT with the frame state
** saved, every ST_ICOUNT checks. The profiler is not polled here (except
** in timer mode): see POLL. */
#define INTERRUPT_CHECK()                                                 \
  do {                                                                    \
    if (st_unlikely(--vm->icount < 0)) {                                  \
      SAVE();                                                             \
      st_interrupt(vm);                                                   \
      if (vm->stopping) return 1;                                         \
      if (st_unlikely(vm->cur != P)) LOAD();                              \
    }                                                                     \
  } while (0)

/* The interrupt check of a backward jump, which is also its poll point:
** a loop that makes no send and no return is polled at every ST_ICOUNT-th
** check (a few microseconds), in the method whose loop it is, so that its
** samples are still charged to it (the running method cannot change
** without a send or a return, which poll) for no cost in the loop. */
#define LOOP_CHECK()                                                      \
  do {                                                                    \
    if (st_unlikely(--vm->icount < 0)) {                                  \
      SAVE();                                                             \
      st_call_poll(vm);                                                   \
      st_interrupt(vm);                                                   \
      if (vm->stopping) return 1;                                         \
      if (st_unlikely(vm->cur != P)) LOAD();                              \
    }                                                                     \
  } while (0)

/* Poll point where no check of the loop's own can carry it (a restarted
** frame): one load of the hook's flag and one predictable branch; the
** frame state is saved for the walker only when a sample is due. */
#define POLL()                                                            \
  do {                                                                    \
    if (st_unlikely(st_prof_due(sv))) {                                   \
      SAVE();                                                             \
      st_prof_poll(vm);                                                   \
    }                                                                     \
  } while (0)

/* Reload the top frame's state saved by SAVE, after a slow path that
** cannot change it: nothing of the fast path then lives across the call
** (which would cost the fast path spills and moves). */
#define RELOAD_TOP()                                                      \
  do {                                                                    \
    f = P->f;                                                             \
    sp = P->sp;                                                           \
    ip = f->ip;                                                           \
  } while (0)

/* Take the send's operands back from vm->sc after an out-of-line part of the
** call protocol (call.c). */
#define CALL_IN()                                                         \
  do {                                                                    \
    sp = vm->sc.sp;                                                            \
    t = vm->sc.t;                                                              \
    rcv = vm->sc.rcv;                                                          \
    na = vm->sc.na;                                                            \
  } while (0)

#define PUSH(v) (*sp++ = (v))
#define TOP() (sp[-1])

/* ===================================================================== */
/* Slow paths                                                            */
/* ===================================================================== */

/* The sign of a to:by:do: step (-1, 0, 1) for the loop test's slow path.
** Numbers other than Integers and Floats count as positive (there are no
** others in the kernel); a NaN as zero, so the loop stops. */
static int step_sign(VM *vm, Value st) {
  if (IS_INT(st)) return INT_VAL(st) < 0 ? -1 : INT_VAL(st) > 0;
  if (!IS_PTR(st) || st == vm->nil) return 1;
  uint32_t c = OBJ(st)->cls;
  if (c == CID_LARGENEG) return -1;
  if (c == CID_FLOAT) {
    double d = st_float(st);
    return d < 0 ? -1 : d > 0;
  }
  return 1;
}

/* ===================================================================== */
/* The loop                                                              */
/* ===================================================================== */

/* Run the current process until the main process returns from its bottom
** frame (0) or the run must stop (1). Aligned to a cache line and placed
** with the hot code (.text.hot, first in the program text), so that its
** layout, and so its speed, is much the same in every binary linking it. */
#if defined(__GNUC__)
__attribute__((aligned(64), hot))
#endif
static int interpret(VM *vm) {
#ifdef ST_COMPUTED_GOTO
#define ST_LABEL(n) &&L_OP_##n,
  static const void *const disptab[OP__COUNT] = {ST_OPCODES(ST_LABEL)};
#undef ST_LABEL
#endif
  Proc *P;
  Frame *f;
  spy_vm *sv; /* the profiler's hooks (LOAD refreshes it: spyOn: starts one) */
  Value *sp, *base;
  const Instr *ip;
  Method *m;
  Instr i;
  /* Operands shared by the send paths. */
  Method *t;
  CallSite *cs;
  Value rcv, res;
  int na;
  uint32_t cid;
  LOAD();
  for (;;) {
    vmfetch();
    vmdispatch(OP(i)) {
      vmcase(OP_PUSH_SELF) {
        PUSH(base[0]);
        vmbreak;
      }
      vmcase(OP_PUSH_NIL) {
        PUSH(vm->nil);
        vmbreak;
      }
      vmcase(OP_PUSH_TRUE) {
        PUSH(vm->vtrue);
        vmbreak;
      }
      vmcase(OP_PUSH_FALSE) {
        PUSH(vm->vfalse);
        vmbreak;
      }
      vmcase(OP_PUSH_TEMP) {
        PUSH(base[ARG(i)]);
        vmbreak;
      }
      vmcase(OP_PUSH_IVAR) {
        PUSH(SLOTS(base[0])[ARG(i)]);
        vmbreak;
      }
      vmcase(OP_PUSH_LIT) {
        PUSH(m->lits[ARG(i)]);
        vmbreak;
      }
      vmcase(OP_PUSH_INT) {
        PUSH(MK_INT(SARG(i)));
        vmbreak;
      }
      vmcase(OP_PUSH_GLOBAL) {
        Value b = m->lits[ARG(i)];
        res = SLOTS(b)[ASSOC_VALUE];
        if (st_unlikely(res == vm->unbound)) {
          vm->sc.sp = sp;
          st_call_undeclared(vm, b, &vm->sc);
          CALL_IN();
          goto activate;
        }
        PUSH(res);
        vmbreak;
      }
      vmcase(OP_PUSH_REMOTE) {
        PUSH(SLOTS(base[ARG_A(i)])[ARG_B(i)]);
        vmbreak;
      }
      vmcase(OP_STORE_TEMP) {
        base[ARG(i)] = TOP();
        vmbreak;
      }
      vmcase(OP_STORE_IVAR) {
        SLOTS(base[0])[ARG(i)] = TOP();
        vmbreak;
      }
      vmcase(OP_STORE_GLOBAL) {
        SLOTS(m->lits[ARG(i)])[ASSOC_VALUE] = TOP();
        vmbreak;
      }
      vmcase(OP_STORE_REMOTE) {
        SLOTS(base[ARG_A(i)])[ARG_B(i)] = TOP();
        vmbreak;
      }
      vmcase(OP_POPSTORE_TEMP) {
        base[ARG(i)] = *--sp;
        vmbreak;
      }
      vmcase(OP_POPSTORE_IVAR) {
        SLOTS(base[0])[ARG(i)] = *--sp;
        vmbreak;
      }
      vmcase(OP_POPSTORE_REMOTE) {
        SLOTS(base[ARG_A(i)])[ARG_B(i)] = *--sp;
        vmbreak;
      }
      vmcase(OP_POP) {
        sp--;
        vmbreak;
      }
      vmcase(OP_DUP) {
        sp[0] = sp[-1];
        sp++;
        vmbreak;
      }
      vmcase(OP_SEND) {
        cs = &m->sites[ARG(i)];
      send:
        na = cs->nargs;
        rcv = sp[-na - 1];
        cid = st_cid(vm, rcv);
        if (st_likely(cs->cid == cid)) {
          t = cs->m;
        } else {
          t = st_lookup_cached(vm, cid, cs->sel);
          if (st_unlikely(!t)) goto dnu;
          cs->cid = cid;
          cs->m = t;
          vm->ic_dirty = 1;
        }
        goto call;
      }
      vmcase(OP_SUPER) {
        cs = &m->sites[ARG(i)];
        na = cs->nargs;
        rcv = sp[-na - 1];
        if (st_likely(cs->m != NULL)) {
          t = cs->m;
        } else {
          t = st_lookup(vm, cs->supercid, cs->sel);
          if (!t) {
            cid = st_cid(vm, rcv);
            goto dnu;
          }
          cs->m = t;
          vm->ic_dirty = 1;
        }
        goto call;
      }
/* SmallInteger arithmetic on tagged values (2n + 1): a + (b - 1) and
** a - (b - 1) keep the tag; n * (b - 1) is even, and `tag` puts it back.
** On overflow or another receiver the operator is sent. */
#define ARITH(opname, overflows, lhs, tag)                                \
  vmcase(opname) {                                                        \
    Value a = sp[-2], b = sp[-1];                                         \
    intptr_t r;                                                           \
    if (st_likely(a & b & 1) && !overflows(lhs, (intptr_t)b - 1, &r)) {   \
      sp[-2] = (Value)(r tag);                                            \
      sp--;                                                               \
      vmbreak;                                                            \
    }                                                                     \
    cs = &m->sites[ARG(i)];                                               \
    goto send;                                                            \
  }
      ARITH(OP_ADD, __builtin_add_overflow, (intptr_t)a, )
      ARITH(OP_SUB, __builtin_sub_overflow, (intptr_t)a, )
      ARITH(OP_MUL, __builtin_mul_overflow, INT_VAL(a), | 1)
/* SmallInteger comparisons; one followed by a JUMPF branches at once. */
#define COMPARE(opname, op)                                               \
  vmcase(opname) {                                                        \
    Value a = sp[-2], b = sp[-1];                                         \
    if (st_likely(a & b & 1)) {                                           \
      Instr nx = *ip;                                                     \
      if (OP(nx) == OP_JUMPF) {                                           \
        sp -= 2;                                                          \
        ip++;                                                             \
        if (!((intptr_t)a op (intptr_t)b)) ip += SARG(nx);                \
        vmbreak;                                                          \
      }                                                                   \
      sp[-2] = ((intptr_t)a op (intptr_t)b) ? vm->vtrue : vm->vfalse;     \
      sp--;                                                               \
      vmbreak;                                                            \
    }                                                                     \
    cs = &m->sites[ARG(i)];                                               \
    goto send;                                                            \
  }
      COMPARE(OP_LT, <)
      COMPARE(OP_GT, >)
      COMPARE(OP_LE, <=)
      COMPARE(OP_GE, >=)
      COMPARE(OP_EQ, ==)
      COMPARE(OP_NE, !=)
#undef COMPARE
#undef ARITH
      vmcase(OP_IDEQ) {
        sp[-2] = sp[-2] == sp[-1] ? vm->vtrue : vm->vfalse;
        sp--;
        vmbreak;
      }
      vmcase(OP_IDNE) {
        sp[-2] = sp[-2] != sp[-1] ? vm->vtrue : vm->vfalse;
        sp--;
        vmbreak;
      }
#define BITOP(opname, expr)                                               \
  vmcase(opname) {                                                        \
    Value a = sp[-2], b = sp[-1];                                         \
    if (st_likely(a & b & 1)) {                                           \
      sp[-2] = (expr);                                                    \
      sp--;                                                               \
      vmbreak;                                                            \
    }                                                                     \
    cs = &m->sites[ARG(i)];                                               \
    goto send;                                                            \
  }
      BITOP(OP_BITAND, a & b)
      BITOP(OP_BITOR, a | b)
      BITOP(OP_BITXOR, (a ^ b) | 1)
#undef BITOP
      vmcase(OP_SHIFT) {
        Value a = sp[-2], b = sp[-1];
        if (st_likely(a & b & 1)) {
          intptr_t x = INT_VAL(a), s = INT_VAL(b);
          if (s <= 0) {
            sp[-2] = MK_INT(s > -64 ? x >> -s : (x < 0 ? -1 : 0));
            sp--;
            vmbreak;
          }
          if (s < 62) {
            intptr_t r = (intptr_t)((uintptr_t)x << s);
            if ((r >> s) == x && FITS_INT(r)) {
              sp[-2] = MK_INT(r);
              sp--;
              vmbreak;
            }
          }
        }
        cs = &m->sites[ARG(i)];
        goto send;
      }
      vmcase(OP_IDIV) {
        Value a = sp[-2], b = sp[-1];
        if (st_likely(a & b & 1) && b != MK_INT(0)) {
          intptr_t x = INT_VAL(a), y = INT_VAL(b), q = x / y;
          if ((x % y != 0) && ((x < 0) != (y < 0))) q--;
          if (FITS_INT(q)) {
            sp[-2] = MK_INT(q);
            sp--;
            vmbreak;
          }
        }
        cs = &m->sites[ARG(i)];
        goto send;
      }
      vmcase(OP_IMOD) {
        Value a = sp[-2], b = sp[-1];
        if (st_likely(a & b & 1) && b != MK_INT(0)) {
          intptr_t x = INT_VAL(a), y = INT_VAL(b), r = x % y;
          if (r != 0 && ((r < 0) != (y < 0))) r += y;
          sp[-2] = MK_INT(r);
          sp--;
          vmbreak;
        }
        cs = &m->sites[ARG(i)];
        goto send;
      }
      vmcase(OP_AT) {
        Value a = sp[-2], x = sp[-1];
        if (IS_PTR(a) && IS_INT(x)) {
          uint64_t k = (uint64_t)INT_VAL(x) - 1;
          uint32_t c = OBJ(a)->cls;
          if (c == CID_ARRAY && k < NSLOTS(a)) {
            sp[-2] = SLOTS(a)[k];
            sp--;
            vmbreak;
          }
          if ((c == CID_STRING || c == CID_SYMBOL) && k < NSLOTS(a)) {
            sp[-2] = MK_CHAR(BYTES(a)[k]);
            sp--;
            vmbreak;
          }
          if (c == CID_BYTEARRAY && k < NSLOTS(a)) {
            sp[-2] = MK_INT(BYTES(a)[k]);
            sp--;
            vmbreak;
          }
        }
        cs = &m->sites[ARG(i)];
        goto send;
      }
      vmcase(OP_ATPUT) {
        Value a = sp[-3], x = sp[-2], v = sp[-1];
        if (IS_PTR(a) && IS_INT(x)) {
          uint64_t k = (uint64_t)INT_VAL(x) - 1;
          uint32_t c = OBJ(a)->cls;
          if (c == CID_ARRAY && k < NSLOTS(a)) {
            SLOTS(a)[k] = v;
            sp[-3] = v;
            sp -= 2;
            vmbreak;
          }
          if (c == CID_STRING && k < NSLOTS(a) && IS_CHAR(v) &&
              CHAR_VAL(v) < 256) {
            BYTES(a)[k] = (uint8_t)CHAR_VAL(v);
            sp[-3] = v;
            sp -= 2;
            vmbreak;
          }
          if (c == CID_BYTEARRAY && k < NSLOTS(a) && IS_INT(v) &&
              (uint64_t)INT_VAL(v) < 256) {
            BYTES(a)[k] = (uint8_t)INT_VAL(v);
            sp[-3] = v;
            sp -= 2;
            vmbreak;
          }
        }
        cs = &m->sites[ARG(i)];
        goto send;
      }
      vmcase(OP_SIZE) {
        Value a = sp[-1];
        if (IS_PTR(a)) {
          uint32_t c = OBJ(a)->cls;
          if (c == CID_ARRAY || c == CID_STRING || c == CID_SYMBOL ||
              c == CID_BYTEARRAY) {
            sp[-1] = MK_INT(NSLOTS(a));
            vmbreak;
          }
        }
        cs = &m->sites[ARG(i)];
        goto send;
      }
      vmcase(OP_VALUE) {
        rcv = sp[-1];
        if (IS_PTR(rcv) && OBJ(rcv)->cls == CID_BLOCK) {
          na = 0;
          t = NULL;
          goto block_value;
        }
        cs = &m->sites[ARG(i)];
        goto send;
      }
      vmcase(OP_VALUE1) {
        rcv = sp[-2];
        if (IS_PTR(rcv) && OBJ(rcv)->cls == CID_BLOCK) {
          na = 1;
          t = NULL;
          goto block_value;
        }
        cs = &m->sites[ARG(i)];
        goto send;
      }
      vmcase(OP_JUMP) {
        ip += SARG(i);
        vmbreak;
      }
      vmcase(OP_JUMPT) {
        Value c = *--sp;
        if (c == vm->vtrue) {
          ip += SARG(i);
          vmbreak;
        }
        if (st_likely(c == vm->vfalse)) vmbreak;
        goto not_boolean;
      }
      vmcase(OP_JUMPF) {
        Value c = *--sp;
        if (c == vm->vfalse) {
          ip += SARG(i);
          vmbreak;
        }
        if (st_likely(c == vm->vtrue)) vmbreak;
        goto not_boolean;
      }
      vmcase(OP_LOOP) {
        ip += SARG(i);
        LOOP_CHECK();
        vmbreak;
      }
      vmcase(OP_RETURN) {
        res = sp[-1];
        goto ret;
      }
      vmcase(OP_RETURN_SELF) {
        res = base[0];
        goto ret;
      }
      vmcase(OP_BLOCK_RET) {
        res = sp[-1];
        goto ret;
      }
      vmcase(OP_NLR) {
        SAVE();
        vm->sc.sp = sp;
        vm->sc.res = sp[-1];
        if (st_call_nlr(vm, f, &vm->sc) == ST_GO_CALL) {
          CALL_IN();
          goto call;
        }
        f = vm->sc.to;
        base = f->base;
        res = vm->sc.res;
        goto ret;
      }
      vmcase(OP_CLOSURE) {
        Method *bm = m->blocks[ARG(i)];
        int nc = bm->ncopied;
        Value cl = st_alloc(vm, CID_BLOCK, FMT_PTR, BLK_NSLOTS + (uint64_t)nc);
        Value *s = SLOTS(cl);
        s[BLK_METHOD] = MK_RAW(bm);
        s[BLK_RECEIVER] = base[0];
        if (f->closure) {
          Value *o = SLOTS(f->closure);
          s[BLK_HOMEPROC] = o[BLK_HOMEPROC];
          s[BLK_HOMEFRAME] = o[BLK_HOMEFRAME];
          s[BLK_HOMESERIAL] = o[BLK_HOMESERIAL];
        } else {
          s[BLK_HOMEPROC] = P->obj;
          s[BLK_HOMEFRAME] = MK_INT(f - P->frames);
          s[BLK_HOMESERIAL] = MK_INT(f->serial);
        }
        sp -= nc;
        for (int k = 0; k < nc; k++) s[BLK_NSLOTS + k] = sp[k];
        PUSH(cl);
        vmbreak;
      }
      /* to:do: loop test: continue, or jump past the loop; the word after
      ** holds the <= (or >=) site used when a bound is not a SmallInteger. */
#define FORTEST(opname, op)                                               \
  vmcase(opname) {                                                        \
    Value a = base[ARG_A(i)], b = base[ARG_B(i)];                         \
    if (st_likely(a & b & 1)) {                                           \
      ip += (intptr_t)a op (intptr_t)b ? 2 : 2 + SARG(ip[1]);             \
      vmbreak;                                                            \
    }                                                                     \
    PUSH(a);                                                              \
    PUSH(b);                                                              \
    cs = &m->sites[*ip++];                                                \
    goto send;                                                            \
  }
      FORTEST(OP_FORTEST, <=)
      FORTEST(OP_FORTESTDN, >=)
#undef FORTEST
      vmcase(OP_FORINC) {
        /* to:do: increment and jump back to the test; the generic
        ** increment follows for the slow path. */
        Value a = base[ARG_A(i)];
        intptr_t r;
        if (st_likely(IS_INT(a)) &&
            !__builtin_add_overflow((intptr_t)a,
                                    (intptr_t)(int16_t)ARG_B(i) * 2, &r)) {
          base[ARG_A(i)] = (Value)r;
          ip += 1 + (int32_t)*ip;
          LOOP_CHECK();
          vmbreak;
        }
        ip++;
        vmbreak;
      }
      vmcase(OP_FORTESTV) {
        /* to:by:do: test with a computed step: three words follow (the
        ** step's slot, the <= site, the >= site), then the JUMPF. */
        Value a = base[ARG_A(i)], b = base[ARG_B(i)], st = base[ip[0]];
        if (st_likely(a & b & st & 1)) {
          intptr_t x = (intptr_t)a, y = (intptr_t)b, z = (intptr_t)st;
          int go = z > (intptr_t)MK_INT(0)   ? x <= y
                   : z < (intptr_t)MK_INT(0) ? x >= y
                                             : 0;
          ip += go ? 4 : 4 + SARG(ip[3]);
          vmbreak;
        }
        /* A bound or the step is not a SmallInteger: send <= for a
        ** positive step, >= for a negative one, and stop for zero. */
        int sign = step_sign(vm, st);
        if (!sign) {
          ip += 4 + SARG(ip[3]);
          vmbreak;
        }
        PUSH(a);
        PUSH(b);
        cs = &m->sites[sign < 0 ? ip[2] : ip[1]];
        ip += 3;
        goto send;
      }
      vmcase(OP_FORINCV) {
        Value a = base[ARG_A(i)], st = base[ARG_B(i)];
        intptr_t r;
        if (st_likely(a & st & 1) &&
            !__builtin_add_overflow((intptr_t)a, (intptr_t)st - 1, &r)) {
          base[ARG_A(i)] = (Value)r;
          ip += 1 + (int32_t)*ip;
          LOOP_CHECK();
          vmbreak;
        }
        ip++;
        vmbreak;
      }
      vmcase(OP_TEMPVEC) {
        PUSH(st_new_array(vm, ARG(i)));
        vmbreak;
      }
      vmcase(OP_PRIMSTEP) {
        /* The frame of sort: with a block (call.c). */
        SAVE();
        vm->sc.sp = sp;
        if (st_call_sort_step(vm, f, &vm->sc) == ST_GO_BLOCK) {
          CALL_IN();
          ip = f->ip;
          goto block_value;
        }
        res = vm->sc.res;
        goto ret;
      }
      vmcase(OP_MKARRAY) {
        uint32_t n = ARG(i);
        Value a = st_new_array(vm, n);
        sp -= n;
        for (uint32_t k = 0; k < n; k++) SLOTS(a)[k] = sp[k];
        PUSH(a);
        vmbreak;
      }
    }
#ifndef ST_COMPUTED_GOTO
    continue;
#endif

    /* ----------------------------------------------------------------- */
    /* The call protocol (call.h): sends, block values, returns           */
    /* ----------------------------------------------------------------- */
  dnu:
    vm->sc.sp = sp;
    vm->sc.na = na;
    vm->sc.rcv = rcv;
    st_call_dnu(vm, cs->sel, cid, &vm->sc);
    CALL_IN();
    goto call;
  not_boolean:
    /* The send returns to the jump itself, which then tests the answer. */
    vm->sc.sp = sp;
    st_call_not_boolean(vm, &vm->sc);
    CALL_IN();
    ip--;
    goto call;
  call:
    if (t->prim >= 0) {
      const PrimDef *pd = st_prim(t->prim);
      if (pd->ctl) goto control;
      SAVE();
      /* The primitive boundary: what goes in and comes out is sane. */
      st_assert(st_values_ok(vm, sp - na - 1, na + 1));
      if (pd->fn(vm, sp - na - 1, na, &res) == PRIM_OK) {
        st_assert(st_value_ok(vm, res));
        sp -= na;
        sp[-1] = res;
        vmbreak;
      }
    }
  activate:
    if (st_unlikely(
            !st_frame_room(vm, P, f + 1, sp + t->ntemps + t->maxstack))) {
      SAVE();
      if (!st_call_room(vm, (size_t)t->ntemps + t->maxstack)) return 1;
      RELOAD_TOP();
    }
    f = st_push_method(vm, f, ip, &sp, t, na);
    m = t;
    base = f->base;
    ip = t->code;
    INTERRUPT_CHECK();
    vmbreak;
  block_value : {
    /* rcv (a BlockClosure) value: na arguments. */
    Method *bm = RAW_PTR(SLOTS(rcv)[BLK_METHOD]);
    if (st_unlikely(bm->nargs != na)) {
      /* Run the value method's fallback code, which reports the error;
      ** the inline value/value: ops come here without one. */
      if (!t)
        t = st_lookup_cached(vm, CID_BLOCK, na ? vm->specials[SP_VALUE1]
                                               : vm->specials[SP_VALUE]);
      if (!t) st_panic("no BlockClosure>>value");
      goto activate;
    }
    if (st_unlikely(!st_frame_room(
            vm, P, f + 1, sp + bm->ncopied + bm->ntemps + bm->maxstack))) {
      SAVE();
      if (!st_call_room(vm, (size_t)bm->ncopied + bm->ntemps + bm->maxstack))
        return 1;
      RELOAD_TOP();
    }
    f = st_push_block(vm, f, ip, &sp, rcv, bm, na);
    m = bm;
    base = f->base;
    ip = bm->code;
    INTERRUPT_CHECK();
    vmbreak;
  }
  ret:
    /* Return res from frame f to its caller. The test for the process's
    ** first frame is also the return's poll point (call.h). */
    if (st_unlikely(st_frame_last(vm, f))) {
      /* res waits on the stack and the state is reloaded after the call,
      ** so that nothing of the fast path lives across it (which would
      ** cost the fast path spills). */
      *sp++ = res;
      SAVE();
      int last = st_call_last(vm);
      RELOAD_TOP();
      base = f->base;
      res = *--sp;
      if (last) {
        /* Back at the bottom of the process. */
        sp = base;
        *sp++ = res;
        f--;
        SAVE();
        switch (st_call_bottom(vm)) {
        case ST_GO_DONE: return 0;
        case ST_GO_RELOAD: LOAD(); vmbreak;
        default: return 1;
        }
      }
    }
    sp = base;
    *sp++ = res;
    f--;
    m = f->m;
    base = f->base;
    ip = f->ip;
    vmbreak;
  control : {
    /* A block's value runs here; the other control primitives in call.c,
    ** which answers where to go on. */
    int ctl = st_prim(t->prim)->ctl;
    if (ctl == CTL_VALUE) {
      if (IS_PTR(rcv) && OBJ(rcv)->cls == CID_BLOCK) goto block_value;
      goto activate;
    }
    SAVE();
    vm->sc.sp = sp;
    vm->sc.t = t;
    vm->sc.rcv = rcv;
    vm->sc.na = na;
    StGo go = st_call_control(vm, ctl, &vm->sc);
    CALL_IN();
    switch (go) {
    case ST_GO_CALL: goto call;
    case ST_GO_ACTIVATE: goto activate;
    case ST_GO_BLOCK: goto block_value;
    case ST_GO_RETURN:
      f = vm->sc.to;
      base = f->base;
      res = vm->sc.res;
      goto ret;
    case ST_GO_RESTART:
      LOAD();
      POLL();
      INTERRUPT_CHECK();
      vmbreak;
    case ST_GO_RELOAD: LOAD(); vmbreak;
    default: return 1;
    }
  }
  }
}

/* ===================================================================== */
/* Entry                                                                 */
/* ===================================================================== */

/* Run DoIt m with receiver rcv on the main process. */
int st_execute(VM *vm, Method *m, Value rcv) {
  Proc *p = vm->main;
  if (vm->stopping) return 1;
  if (vm->cur != p) st_panic("st_execute while another process runs");
  p->sp = p->frames[0].base;
  p->f = p->frames;
  Frame *f = p->frames + 1;
  f->base = p->sp;
  *p->sp++ = rcv;
  for (int k = 0; k < m->ntemps; k++) *p->sp++ = vm->nil;
  f->m = m;
  f->ip = m->code;
  f->closure = 0;
  f->serial = ++vm->serial;
  p->f = f;
  int r = interpret(vm);
  /* Leave the main stack empty for the next statement. */
  p->sp = p->frames[0].base;
  p->f = p->frames;
  return r;
}
