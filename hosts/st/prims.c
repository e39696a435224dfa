/*
** hosts/st/prims.c: the primitive table and the primitives on objects,
** classes, small integers, floats, characters, processes and the system.
**
** Kernel methods name their primitive with <primitive: 'name'>; the table
** below maps names to C functions (or to control codes that the dispatch
** loop handles itself because they change frames or switch processes).
*/
#include "config.h"

#include "hosts/st/prims.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "hosts/st/lint.h"
#include "hosts/st/heap.h"
#include "hosts/st/classes.h"
#include "hosts/st/proc.h"
#include "hosts/st/primtab.h"

uint64_t st_fixed_slots(VM *vm, Value v) {
  return OBJ(v)->fmt == FMT_PTR ? vm->classes[OBJ(v)->cls].ninst : 0;
}

uint64_t st_indexed_size(VM *vm, Value v) {
  if (!IS_PTR(v)) return 0;
  return OBJ(v)->n - st_fixed_slots(vm, v);
}

static int get_index(Value x, uint64_t size, uint64_t *k) {
  if (!IS_INT(x)) return 0;
  intptr_t i = INT_VAL(x);
  if (i < 1 || (uint64_t)i > size) return 0;
  *k = (uint64_t)i - 1;
  return 1;
}

/* ===================================================================== */
/* Objects and classes                                                   */
/* ===================================================================== */

static PRIM(p_class) {
  return OK(vm->classes[st_cid(vm, RCV)].obj);
}

static PRIM(p_identityHash) {
  if (IS_INT(RCV)) return OK(RCV);
  if (IS_CHAR(RCV)) return OK(MK_INT(CHAR_VAL(RCV)));
  return OK(MK_INT(st_identity_hash(RCV)));
}

/* The class id a class object stands for, or 0. */
static uint32_t class_id(VM *vm, Value cls) {
  if (!IS_PTR(cls) || cls == vm->nil) return 0;
  uint32_t k = OBJ(cls)->cls;
  if (k >= vm->nclasses) return 0;
  if (vm->classes[k].is_meta || k == CID_METACLASS) {
    Value id = SLOTS(cls)[0];
    if (!IS_INT(id) || INT_VAL(id) <= 0 || INT_VAL(id) >= vm->nclasses)
      return 0;
    return (uint32_t)INT_VAL(id);
  }
  return 0;
}

/* Objects whose slots hold the VM's own values: raw pointers to process
** records and semaphore queues, to compiled blocks, and a class's id.
** Smalltalk may read these slots but not overwrite them; processes and
** semaphores are not copied either (a copy would share the record and the
** queue, and the VM would free or dequeue them twice). Process and
** Semaphore answer themselves to shallowCopy; the primitive's refusal
** covers a subclass that does not. */
static int class_inherits(VM *vm, uint32_t c, uint32_t cid) {
  for (; c; c = vm->classes[c].super)
    if (c == cid) return 1;
  return 0;
}

static int inherits(VM *vm, Value v, uint32_t cid) {
  return IS_PTR(v) && v != vm->nil && class_inherits(vm, OBJ(v)->cls, cid);
}

static int vm_queued(VM *vm, Value v) {
  return inherits(vm, v, CID_PROCESS) || inherits(vm, v, CID_SEMAPHORE);
}

static int vm_owned(VM *vm, Value v) {
  return vm_queued(vm, v) || inherits(vm, v, CID_BLOCK) ||
         class_id(vm, v) != 0;
}

static PRIM(p_basicNew) {
  uint32_t c = class_id(vm, RCV);
  if (!c || vm->classes[c].is_meta) return FAIL();
  ClassInfo *ci = &vm->classes[c];
  if (c == CID_SMALLINT || c == CID_CHARACTER || c == CID_UNDEFINED ||
      c == CID_TRUE || c == CID_FALSE || class_inherits(vm, c, CID_BLOCK))
    return FAIL();
  ci->instantiated = 1;
  return OK(st_alloc(vm, c, ci->fmt, ci->fmt == FMT_PTR ? ci->ninst : 0));
}

/* A request the memory cannot meet fails (the kernel's fallback code
** then signals OutOfMemory), as does a size over 2^40 or not an Integer. */
static PRIM(p_basicNewSize) {
  uint32_t c = class_id(vm, RCV);
  if (!c || vm->classes[c].is_meta || !IS_INT(ARG1) || INT_VAL(ARG1) < 0)
    return FAIL();
  ClassInfo *ci = &vm->classes[c];
  if (!ci->indexed || (uint64_t)INT_VAL(ARG1) > ST_MAX_OBJ_SLOTS ||
      class_inherits(vm, c, CID_BLOCK))
    return FAIL();
  uint64_t n = (uint64_t)INT_VAL(ARG1);
  if (ci->fmt == FMT_PTR) n += ci->ninst;
  ci->instantiated = 1;
  /* Large allocations (filling is linear) report to the profiler. */
  if (n < 1024) return OK(st_alloc(vm, c, ci->fmt, n));
  ST_PRIM_BEGIN1(vm, SPYP_NEW, n);
  Value v = st_alloc_try(vm, c, ci->fmt, n);
  ST_PRIM_END(vm);
  return v ? OK(v) : FAIL();
}

/* Can instances have indexed slots (for basicNew:'s error message)? */
static PRIM(p_isIndexable) {
  uint32_t c = class_id(vm, RCV);
  if (!c || vm->classes[c].is_meta) return OK(vm->vfalse);
  return OK(BOOL(vm->classes[c].indexed && !class_inherits(vm, c, CID_BLOCK)));
}

static PRIM(p_basicAt) {
  uint64_t k;
  if (!IS_PTR(RCV) || !get_index(ARG1, st_indexed_size(vm, RCV), &k))
    return FAIL();
  if (OBJ(RCV)->fmt == FMT_BYTES) {
    if (OBJ(RCV)->cls == CID_STRING || OBJ(RCV)->cls == CID_SYMBOL)
      return OK(MK_CHAR(BYTES(RCV)[k]));
    return OK(MK_INT(BYTES(RCV)[k]));
  }
  return OK(SLOTS(RCV)[st_fixed_slots(vm, RCV) + k]);
}

static PRIM(p_basicAtPut) {
  uint64_t k;
  if (!IS_PTR(RCV) || !get_index(ARG1, st_indexed_size(vm, RCV), &k) ||
      OBJ(RCV)->cls == CID_SYMBOL)
    return FAIL();
  Value v = ARG2;
  if (OBJ(RCV)->fmt == FMT_BYTES) {
    intptr_t b = OBJ(RCV)->cls == CID_STRING
                     ? (IS_CHAR(v) ? (intptr_t)CHAR_VAL(v) : -1)
                     : (IS_INT(v) ? INT_VAL(v) : -1);
    if (b < 0 || b > 255) return FAIL();
    BYTES(RCV)[k] = (uint8_t)b;
    return OK(v);
  }
  SLOTS(RCV)[st_fixed_slots(vm, RCV) + k] = v;
  return OK(v);
}

static PRIM(p_basicSize) {
  return OK(MK_INT(IS_PTR(RCV) ? st_indexed_size(vm, RCV) : 0));
}

static PRIM(p_instVarAt) {
  uint64_t k;
  if (!IS_PTR(RCV) || !get_index(ARG1, st_fixed_slots(vm, RCV), &k))
    return FAIL();
  return OK(SLOTS(RCV)[k]);
}

static PRIM(p_instVarAtPut) {
  uint64_t k;
  if (!IS_PTR(RCV) || vm_owned(vm, RCV) ||
      !get_index(ARG1, st_fixed_slots(vm, RCV), &k))
    return FAIL();
  SLOTS(RCV)[k] = ARG2;
  return OK(ARG2);
}

static PRIM(p_shallowCopy) {
  Value v = RCV;
  if (!IS_PTR(v) || v == vm->nil || v == vm->vtrue || v == vm->vfalse ||
      OBJ(v)->cls == CID_SYMBOL)
    return OK(v);
  if (vm_queued(vm, v)) return FAIL();
  Obj *o = OBJ(v);
  Value c = st_alloc(vm, o->cls, o->fmt, o->n);
  memcpy(OBJ(c) + 1, o + 1,
         o->fmt == FMT_PTR ? o->n * sizeof(Value) : (o->n + 7) & ~7ull);
  return OK(c);
}

static PRIM(p_respondsTo) {
  if (!is_kind(vm, ARG1, CID_SYMBOL)) return FAIL();
  return OK(BOOL(st_lookup(vm, st_cid(vm, RCV), ARG1) != NULL));
}

static PRIM(p_className) {
  uint32_t c = class_id(vm, RCV);
  if (!c) return FAIL();
  char buf[256];
  st_class_name(vm, c, buf, sizeof buf);
  return OK(st_new_string(vm, buf, strlen(buf)));
}

static PRIM(p_superclass) {
  uint32_t c = class_id(vm, RCV);
  if (!c) return FAIL();
  uint32_t s = vm->classes[c].super;
  return OK(s ? vm->classes[s].obj : vm->nil);
}

static PRIM(p_includesSelector) {
  uint32_t c = class_id(vm, RCV);
  if (!c || !is_kind(vm, ARG1, CID_SYMBOL)) return FAIL();
  Method *m = st_lookup(vm, c, ARG1);
  return OK(BOOL(m && m->cid == c));
}

static PRIM(p_canUnderstand) {
  uint32_t c = class_id(vm, RCV);
  if (!c || !is_kind(vm, ARG1, CID_SYMBOL)) return FAIL();
  return OK(BOOL(st_lookup(vm, c, ARG1) != NULL));
}

static PRIM(p_instSize) {
  uint32_t c = class_id(vm, RCV);
  if (!c) return FAIL();
  return OK(MK_INT(vm->classes[c].fmt == FMT_PTR ? vm->classes[c].ninst : 0));
}

static PRIM(p_instanceClass) {
  uint32_t c = class_id(vm, RCV);
  if (!c) return FAIL();
  return OK(vm->classes[vm->classes[c].meta].obj);
}

/* aClass subclass: #Name -- creates (or finds) a class at run time. */
static PRIM(p_subclass) {
  uint32_t c = class_id(vm, RCV);
  if (!c || vm->classes[c].is_meta || !is_kind(vm, ARG1, CID_SYMBOL))
    return FAIL();
  Value b = st_global_binding(vm, ARG1, 1);
  Value old = SLOTS(b)[ASSOC_VALUE];
  uint32_t oc = class_id(vm, old);
  if (oc) return OK(old);
  ClassInfo *ci = &vm->classes[c];
  uint32_t n = st_new_class(vm, ARG1, c, ci->fmt, ci->indexed);
  vm->classes[n].declared = 1;
  SLOTS(b)[ASSOC_VALUE] = vm->classes[n].obj;
  return OK(vm->classes[n].obj);
}

/* ===================================================================== */
/* SmallInteger                                                          */
/* ===================================================================== */

#define BOTH_INT() (IS_INT(RCV) && IS_INT(ARG1))

static PRIM(p_intAdd) {
  if (!BOTH_INT()) return FAIL();
  intptr_t r = INT_VAL(RCV) + INT_VAL(ARG1);
  return FITS_INT(r) ? OK(MK_INT(r)) : FAIL();
}
static PRIM(p_intSub) {
  if (!BOTH_INT()) return FAIL();
  intptr_t r = INT_VAL(RCV) - INT_VAL(ARG1);
  return FITS_INT(r) ? OK(MK_INT(r)) : FAIL();
}
static PRIM(p_intMul) {
  intptr_t r;
  if (!BOTH_INT() || __builtin_mul_overflow(INT_VAL(RCV), INT_VAL(ARG1), &r) ||
      !FITS_INT(r))
    return FAIL();
  return OK(MK_INT(r));
}
#define INTCMP(name, op)                                                  \
  static PRIM(name) {                                                     \
    if (!BOTH_INT()) return FAIL();                                       \
    return OK(BOOL(INT_VAL(RCV) op INT_VAL(ARG1)));                       \
  }
INTCMP(p_intLt, <)
INTCMP(p_intGt, >)
INTCMP(p_intLe, <=)
INTCMP(p_intGe, >=)
INTCMP(p_intEq, ==)
INTCMP(p_intNe, !=)

static PRIM(p_intDiv) {
  if (!BOTH_INT() || INT_VAL(ARG1) == 0) return FAIL();
  intptr_t x = INT_VAL(RCV), y = INT_VAL(ARG1), q = x / y;
  if (x % y != 0 && ((x < 0) != (y < 0))) q--;
  return FITS_INT(q) ? OK(MK_INT(q)) : FAIL();
}
static PRIM(p_intMod) {
  if (!BOTH_INT() || INT_VAL(ARG1) == 0) return FAIL();
  intptr_t x = INT_VAL(RCV), y = INT_VAL(ARG1), r = x % y;
  if (r != 0 && ((r < 0) != (y < 0))) r += y;
  return OK(MK_INT(r));
}
static PRIM(p_intQuo) {
  if (!BOTH_INT() || INT_VAL(ARG1) == 0) return FAIL();
  intptr_t q = INT_VAL(RCV) / INT_VAL(ARG1);
  return FITS_INT(q) ? OK(MK_INT(q)) : FAIL();
}
static PRIM(p_intRem) {
  if (!BOTH_INT() || INT_VAL(ARG1) == 0) return FAIL();
  return OK(MK_INT(INT_VAL(RCV) % INT_VAL(ARG1)));
}
/* Exact quotient, or fail (Smalltalk then answers a Float). */
static PRIM(p_intDivide) {
  if (!BOTH_INT() || INT_VAL(ARG1) == 0) return FAIL();
  intptr_t x = INT_VAL(RCV), y = INT_VAL(ARG1);
  if (x % y != 0) return FAIL();
  return FITS_INT(x / y) ? OK(MK_INT(x / y)) : FAIL();
}
static PRIM(p_intBitShift) {
  if (!BOTH_INT()) return FAIL();
  intptr_t x = INT_VAL(RCV), s = INT_VAL(ARG1);
  if (s <= 0) return OK(MK_INT(s > -64 ? x >> -s : (x < 0 ? -1 : 0)));
  if (s >= 62) return x == 0 ? OK(RCV) : FAIL();
  intptr_t r = (intptr_t)((uintptr_t)x << s);
  if ((r >> s) != x || !FITS_INT(r)) return FAIL();
  return OK(MK_INT(r));
}
static PRIM(p_intAsFloat) {
  if (!IS_INT(RCV)) return FAIL();
  return OK(st_new_float(vm, (double)INT_VAL(RCV)));
}

/* ===================================================================== */
/* Float                                                                 */
/* ===================================================================== */

static int num_value(Value v, double *d) {
  if (IS_INT(v)) {
    *d = (double)INT_VAL(v);
    return 1;
  }
  if (IS_PTR(v) && OBJ(v)->cls == CID_FLOAT) {
    *d = st_float(v);
    return 1;
  }
  return 0;
}

#define FLOATOP(name, expr)                                               \
  static PRIM(name) {                                                     \
    double a, b;                                                          \
    if (!num_value(RCV, &a) || !num_value(ARG1, &b)) return FAIL();       \
    return OK(expr);                                                      \
  }
FLOATOP(p_floatAdd, st_new_float(vm, a + b))
FLOATOP(p_floatSub, st_new_float(vm, a - b))
FLOATOP(p_floatMul, st_new_float(vm, a * b))
FLOATOP(p_floatLt, BOOL(a < b))
FLOATOP(p_floatGt, BOOL(a > b))
FLOATOP(p_floatLe, BOOL(a <= b))
FLOATOP(p_floatGe, BOOL(a >= b))
FLOATOP(p_floatEq, BOOL(a == b))
FLOATOP(p_floatNe, BOOL(a != b))
FLOATOP(p_floatPow, st_new_float(vm, pow(a, b)))
static PRIM(p_floatDiv) {
  double a, b;
  if (!num_value(RCV, &a) || !num_value(ARG1, &b) || b == 0.0) return FAIL();
  return OK(st_new_float(vm, a / b));
}

#define FLOATFN(name, expr)                                               \
  static PRIM(name) {                                                     \
    double a;                                                             \
    if (!num_value(RCV, &a)) return FAIL();                               \
    return expr;                                                          \
  }
FLOATFN(p_floatSqrt, a < 0 ? FAIL() : OK(st_new_float(vm, sqrt(a))))
FLOATFN(p_floatSin, OK(st_new_float(vm, sin(a))))
FLOATFN(p_floatCos, OK(st_new_float(vm, cos(a))))
FLOATFN(p_floatTan, OK(st_new_float(vm, tan(a))))
FLOATFN(p_floatArcTan, OK(st_new_float(vm, atan(a))))
FLOATFN(p_floatLn, a <= 0 ? FAIL() : OK(st_new_float(vm, log(a))))
FLOATFN(p_floatExp, OK(st_new_float(vm, exp(a))))
FLOATFN(p_floatFractionPart, OK(st_new_float(vm, a - trunc(a))))
FLOATFN(p_floatIsNaN, OK(BOOL(isnan(a))))
FLOATFN(p_floatIsInf, OK(BOOL(isinf(a))))

void st_format_float(double d, char *buf, size_t len) {
  if (isnan(d)) {
    snprintf(buf, len, "nan");
    return;
  }
  if (isinf(d)) {
    snprintf(buf, len, d < 0 ? "-inf" : "inf");
    return;
  }
  char tmp[64];
  int p;
  for (p = 1; p <= 17; p++) {
    snprintf(tmp, sizeof tmp, "%.*e", p - 1, d);
    if (strtod(tmp, NULL) == d) break;
  }
  /* tmp is [-]D[.DDD]e[+-]XX: gather the digits and the exponent. */
  char digits[32];
  int nd = 0, neg = tmp[0] == '-';
  const char *q = tmp + neg;
  for (; *q && *q != 'e'; q++)
    if (*q >= '0' && *q <= '9') digits[nd++] = *q;
  int e = atoi(q + 1);
  while (nd > 1 && digits[nd - 1] == '0') nd--;
  digits[nd] = '\0';
  char out[128];
  int k = 0;
  if (neg) out[k++] = '-';
  if (e >= -5 && e < 16) {
    if (e >= 0) {
      for (int i = 0; i <= e; i++) out[k++] = i < nd ? digits[i] : '0';
      out[k++] = '.';
      if (nd > e + 1) for (int i = e + 1; i < nd; i++) out[k++] = digits[i];
      else out[k++] = '0';
    } else {
      out[k++] = '0';
      out[k++] = '.';
      for (int i = 0; i < -e - 1; i++) out[k++] = '0';
      for (int i = 0; i < nd; i++) out[k++] = digits[i];
    }
    out[k] = '\0';
  } else {
    out[k++] = digits[0];
    out[k++] = '.';
    if (nd > 1) for (int i = 1; i < nd; i++) out[k++] = digits[i];
    else out[k++] = '0';
    snprintf(out + k, sizeof out - (size_t)k, "e%d", e);
  }
  snprintf(buf, len, "%s", out);
}

static PRIM(p_floatPrint) {
  double a;
  if (!num_value(RCV, &a)) return FAIL();
  char buf[128];
  st_format_float(a, buf, sizeof buf);
  return OK(st_new_string(vm, buf, strlen(buf)));
}

static PRIM(p_floatTimesTwoPower) {
  double a;
  if (!num_value(RCV, &a) || !IS_INT(ARG1)) return FAIL();
  return OK(st_new_float(vm, ldexp(a, (int)INT_VAL(ARG1))));
}

static PRIM(p_floatExponent) {
  double a;
  if (!num_value(RCV, &a) || a == 0) return FAIL();
  int e;
  frexp(a, &e);
  return OK(MK_INT(e - 1));
}

/* ===================================================================== */
/* Characters                                                            */
/* ===================================================================== */

static PRIM(p_charValue) {
  if (!IS_CHAR(RCV)) return FAIL();
  return OK(MK_INT(CHAR_VAL(RCV)));
}

static PRIM(p_charFromValue) {
  if (!IS_INT(ARG1) || INT_VAL(ARG1) < 0 || INT_VAL(ARG1) > 0x10FFFF)
    return FAIL();
  return OK(MK_CHAR(INT_VAL(ARG1)));
}

/* ===================================================================== */
/* Blocks and processes                                                  */
/* ===================================================================== */

static PRIM(p_blockNumArgs) {
  if (!is_kind(vm, RCV, CID_BLOCK)) return FAIL();
  Method *bm = RAW_PTR(SLOTS(RCV)[BLK_METHOD]);
  return OK(MK_INT(bm->nargs));
}

static PRIM(p_newProcess) {
  if (!is_kind(vm, RCV, CID_BLOCK)) return FAIL();
  Value p = st_fork_block(vm, RCV, vm->cur->priority);
  return p ? OK(p) : FAIL();
}

static PRIM(p_activeProcess) {
  return OK(vm->cur->obj);
}

static PRIM(p_timerSignal) {
  /* Processor signal: aSemaphore afterMicroseconds: n */
  if (!is_kind(vm, ARG1, CID_SEMAPHORE) || !IS_INT(ARG2)) return FAIL();
  intptr_t us = INT_VAL(ARG2);
  st_add_timer(vm, st_now_ns() + (uint64_t)(us > 0 ? us : 0) * 1000ull, ARG1);
  return OK(RCV);
}

/* Frames of the running process (for exceptions and unwinding): index 1
** is the bottom activation; the caller of these primitives is at
** frameDepth. */
static Frame *frame_at(VM *vm, Value x) {
  Proc *p = vm->cur;
  if (!IS_INT(x) || INT_VAL(x) < 1 || p->frames + INT_VAL(x) > p->f)
    return NULL;
  return p->frames + INT_VAL(x);
}

static PRIM(p_frameDepth) {
  return OK(MK_INT(vm->cur->f - vm->cur->frames));
}

/* The serial of a frame tells one activation from a later one at the same
** index: an exception checks that its frames are still the ones it saw. */
static PRIM(p_frameSerial) {
  Frame *f = frame_at(vm, ARG1);
  return OK(f ? MK_INT(f->serial & (uint64_t)ST_INT_MAX) : vm->nil);
}

static PRIM(p_frameFlags) {
  Frame *f = frame_at(vm, ARG1);
  return f ? OK(MK_INT(f->m->flags)) : FAIL();
}

static PRIM(p_frameSlot) {
  Frame *f = frame_at(vm, ARG1);
  if (!f || !IS_INT(ARG2) || INT_VAL(ARG2) < 0) return FAIL();
  intptr_t k = INT_VAL(ARG2);
  if (k > f->m->nargs + f->m->ncopied + f->m->ntemps) return FAIL();
  return OK(f->base[k]);
}

static PRIM(p_frameSlotPut) {
  Frame *f = frame_at(vm, ARG1);
  if (!f || !IS_INT(ARG2) || INT_VAL(ARG2) < 0) return FAIL();
  intptr_t k = INT_VAL(ARG2);
  if (k > f->m->nargs + f->m->ncopied + f->m->ntemps) return FAIL();
  f->base[k] = ARG3;
  return OK(ARG3);
}

static PRIM(p_handlerBelow) {
  if (!IS_INT(ARG1)) return FAIL();
  Proc *p = vm->cur;
  intptr_t k = INT_VAL(ARG1) - 1;
  if (p->frames + k > p->f) k = p->f - p->frames;
  for (; k >= 1; k--)
    if (p->frames[k].m->flags & (MF_HANDLER | MF_RUNS_HANDLER))
      return OK(MK_INT(k));
  return OK(vm->nil);
}

static PRIM(p_printBacktrace) {
  fflush(stdout);
  st_backtrace(vm, vm->cur, stderr);
  return OK(RCV);
}

/* ===================================================================== */
/* System                                                                */
/* ===================================================================== */

/* Write a String to stdout, or to the file descriptor in a second
** argument (1 or 2). */
static PRIM(p_write) {
  FILE *out = (na == 2 && ARG2 == MK_INT(2)) ? stderr : stdout;
  if (!is_string(ARG1)) return FAIL();
  if (out == stderr) fflush(stdout);
  fwrite(BYTES(ARG1), 1, NSLOTS(ARG1), out);
  return OK(RCV);
}

static PRIM(p_flush) {
  fflush(stdout);
  return OK(RCV);
}

static PRIM(p_clockMs) {
  return OK(MK_INT(st_now_ns() / 1000000ull));
}

static PRIM(p_clockUs) {
  return OK(MK_INT(st_now_ns() / 1000ull));
}

/* CPU time of the interpreter thread, for benchmarks that must not count
** time the machine gave to others. */
static PRIM(p_cpuUs) {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return OK(MK_INT((intptr_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000));
}

static PRIM(p_arguments) {
  return OK(vm->argv);
}

static PRIM(p_globalAt) {
  if (!is_kind(vm, ARG1, CID_SYMBOL)) return FAIL();
  Value b = st_global_binding(vm, ARG1, 0);
  if (!b || SLOTS(b)[ASSOC_VALUE] == vm->unbound) return FAIL();
  return OK(SLOTS(b)[ASSOC_VALUE]);
}

static PRIM(p_globalAtPut) {
  if (!is_kind(vm, ARG1, CID_SYMBOL)) return FAIL();
  SLOTS(st_global_binding(vm, ARG1, 1))[ASSOC_VALUE] = ARG2;
  return OK(ARG2);
}

static PRIM(p_globalIncludes) {
  if (!is_kind(vm, ARG1, CID_SYMBOL)) return FAIL();
  Value b = st_global_binding(vm, ARG1, 0);
  return OK(BOOL(b && SLOTS(b)[ASSOC_VALUE] != vm->unbound));
}

static PRIM(p_gc) {
  vm->gc_pending = 1;
  st_interrupt_soon(vm);
  return OK(RCV);
}

static PRIM(p_heapBytes) {
  return OK(MK_INT(st_heap_live_bytes(vm)));
}

/* ===================================================================== */
/* The table                                                             */
/* ===================================================================== */

#define P(n, f) {n, f, -1, CTL_NONE, NULL, NULL}
#define C(n, c) {n, NULL, -1, c, NULL, NULL}

const PrimDef st_prim_table[] = {
  P("class", p_class), P("identityHash", p_identityHash),
  P("basicNew", p_basicNew), P("basicNew:", p_basicNewSize),
  P("isIndexable", p_isIndexable),
  P("basicAt:", p_basicAt), P("basicAt:put:", p_basicAtPut),
  P("basicSize", p_basicSize), P("instVarAt:", p_instVarAt),
  P("instVarAt:put:", p_instVarAtPut), P("shallowCopy", p_shallowCopy),
  P("respondsTo:", p_respondsTo), C("perform", CTL_PERFORM),
  C("performWithArguments", CTL_PERFORM_ARGS),
  P("className", p_className), P("superclass", p_superclass),
  P("includesSelector:", p_includesSelector),
  P("canUnderstand:", p_canUnderstand), P("instanceClass", p_instanceClass),
  P("instSize", p_instSize),
  P("subclass:", p_subclass),
  C("value", CTL_VALUE), C("valueWithArguments:", CTL_VALUE_ARGS),
  P("numArgs", p_blockNumArgs), P("newProcess", p_newProcess),
  P("intAdd", p_intAdd), P("intSub", p_intSub), P("intMul", p_intMul),
  P("intLt", p_intLt), P("intGt", p_intGt), P("intLe", p_intLe),
  P("intGe", p_intGe), P("intEq", p_intEq), P("intNe", p_intNe),
  P("intDiv", p_intDiv), P("intMod", p_intMod), P("intQuo", p_intQuo),
  P("intRem", p_intRem), P("intDivide", p_intDivide),
  P("intBitShift", p_intBitShift), P("intAsFloat", p_intAsFloat),
  P("floatAdd", p_floatAdd), P("floatSub", p_floatSub),
  P("floatMul", p_floatMul), P("floatDiv", p_floatDiv),
  P("floatLt", p_floatLt), P("floatGt", p_floatGt), P("floatLe", p_floatLe),
  P("floatGe", p_floatGe), P("floatEq", p_floatEq), P("floatNe", p_floatNe),
  P("floatPow", p_floatPow), P("floatSqrt", p_floatSqrt),
  P("floatSin", p_floatSin), P("floatCos", p_floatCos),
  P("floatTan", p_floatTan), P("floatArcTan", p_floatArcTan),
  P("floatLn", p_floatLn), P("floatExp", p_floatExp),
  P("floatFractionPart", p_floatFractionPart), P("floatIsNaN", p_floatIsNaN),
  P("floatIsInfinite", p_floatIsInf), P("floatPrint", p_floatPrint),
  P("floatTimesTwoPower", p_floatTimesTwoPower),
  P("floatExponent", p_floatExponent), P("floatTruncated", p_floatAsInteger),
  P("charValue", p_charValue), P("charFromValue", p_charFromValue),
  P("activeProcess", p_activeProcess), P("timerSignal", p_timerSignal),
  P("frameDepth", p_frameDepth), P("frameSerial", p_frameSerial),
  P("frameFlags", p_frameFlags),
  P("frameSlot", p_frameSlot), P("frameSlotPut", p_frameSlotPut),
  P("handlerFrameBelow", p_handlerBelow),
  P("printBacktrace", p_printBacktrace),
  C("returnFromFrame", CTL_RETURN_FROM), C("restartFrame", CTL_RESTART),
  C("wait", CTL_WAIT), C("signal", CTL_SIGNAL), C("yield", CTL_YIELD),
  C("resume", CTL_RESUME), C("suspend", CTL_SUSPEND),
  C("terminate", CTL_TERMINATE), C("priority:", CTL_PRIORITY),
  C("quit", CTL_QUIT), C("exitAfterError", CTL_UNHANDLED),
  C("profiler", CTL_SPY), C("sortBlock", CTL_SORTBLOCK),
  P("write", p_write), P("flush", p_flush), P("clockMs", p_clockMs),
  P("clockUs", p_clockUs), P("cpuUs", p_cpuUs), P("arguments", p_arguments),
  P("globalAt:", p_globalAt), P("globalAt:put:", p_globalAtPut),
  P("globalIncludes:", p_globalIncludes), P("garbageCollect", p_gc),
  P("heapBytes", p_heapBytes),
  /* Large integers (primlint.c). */
  P("digitLength", p_digitLength), P("digitAt:", p_digitAt),
  P("digitAt:put:", p_digitAtPut), P("digitAdd:", p_digitAdd),
  P("digitSubtract:", p_digitSubtract),
  P("digitMultiply:neg:", p_digitMultiply), P("digitDiv:neg:", p_digitDiv),
  P("digitCompare:", p_digitCompare),
  P("bitShiftMagnitude:", p_bitShiftMagnitude), P("normalize", p_normalize),
  P("highBit", p_highBit), P("bitAnd:", p_bitAnd), P("bitOr:", p_bitOr),
  P("bitXor:", p_bitXor), P("largeAsFloat", p_largeAsFloat),
P("printString:", p_printBase),
  P("largeEq", p_largeEq), P("largeHash", p_largeHash),
  P("digitsFrom:count:", p_digitsFrom), P("inplaceAdd", p_inplaceAdd),
  /* Strings and collections (primcoll.c). */
  P("concat", p_concat), P("indexOfChar", p_indexOfChar),
  P("indexOfSubCollection", p_indexOfSub), P("replace", p_replace),
  P("copyReplaceAll", p_copyReplaceAll), P("stringHash", p_stringHash),
  P("reversed", p_reversed), P("asUppercase", p_asUppercase),
  P("asLowercase", p_asLowercase), P("copyFromTo", p_copyFromTo),
  P("sort", p_sort), P("stringEq", p_stringEq),
  P("stringCompare", p_stringCompare), P("asSymbol", p_asSymbol),
  P("asString", p_asString), P("atAllPut", p_atAllPut),
  P("stringAsNumber", p_stringAsNumber),
  P("printStringQuoted", p_printStringQuoted),
  P("occurrencesOfChar", p_occurrencesOfChar),
  P("copyReplacingChar", p_copyReplacingChar),
  P("trimSeparators", p_trimSeparators), P("substrings", p_substrings),
  P("identityIndexOf", p_indexOfIdentity),
};

#define NPRIMS ((int)(sizeof st_prim_table / sizeof st_prim_table[0]))

int st_prim_index(const char *name) {
  for (int i = 0; i < NPRIMS; i++)
    if (strcmp(st_prim_table[i].name, name) == 0) return i;
  return -1;
}


