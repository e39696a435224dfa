/*
** hosts/st/primlint.c: large-integer digit primitives on GMP's mpn layer.
**
** These are Squeak's digit primitives (digitAdd:, digitSubtract:,
** digitMultiply:neg:, digitDiv:neg:, digitCompare:, bitShiftMagnitude:
** ...): each works on magnitudes and a sign, and the Smalltalk kernel
** builds the algorithms (Karatsuba, Toom-4 squaring, exponentiation,
** division, printing by divide and conquer) on top of them. Results are
** computed straight into the new object's bytes, which are whole zero-
** padded limbs, then normalized (a SmallInteger when the value fits).
** Every primitive whose cost grows with its operands reports their sizes
** (in bytes) to the profiler.
*/
#include "config.h"

#include "hosts/st/lint.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "hosts/st/prims.h"
#include "hosts/st/heap.h"
#include "hosts/st/primtab.h"

/* A magnitude and sign, read in place from an Integer. */
typedef struct Mag {
  const mp_limb_t *d;
  mp_size_t n;      /* limbs, no leading zero limb */
  int neg;
  mp_limb_t small;  /* storage for SmallIntegers */
} Mag;

int st_is_integer(Value v) {
  return IS_INT(v) || (IS_PTR(v) && (OBJ(v)->cls == CID_LARGEPOS ||
                                     OBJ(v)->cls == CID_LARGENEG));
}

static int get_mag(Value v, Mag *m) {
  if (IS_INT(v)) {
    intptr_t x = INT_VAL(v);
    m->neg = x < 0;
    m->small = (mp_limb_t)(x < 0 ? -(uintptr_t)x : (uintptr_t)x);
    m->d = &m->small;
    m->n = m->small ? 1 : 0;
    return 1;
  }
  if (!IS_PTR(v)) return 0;
  uint32_t c = OBJ(v)->cls;
  if (c != CID_LARGEPOS && c != CID_LARGENEG) return 0;
  m->neg = c == CID_LARGENEG;
  m->d = (const mp_limb_t *)BYTES(v);
  m->n = (mp_size_t)((NSLOTS(v) + 7) / 8);
  while (m->n > 0 && m->d[m->n - 1] == 0) m->n--;
  return 1;
}

static uint64_t mag_bytes(const Mag *m) {
  if (m->n == 0) return 0;
  mp_limb_t top = m->d[m->n - 1];
  return (uint64_t)(m->n - 1) * 8 +
         (uint64_t)((64 - __builtin_clzll(top) + 7) / 8);
}

/* A fresh large integer with room for n limbs (zeroed). */
static Value new_large(VM *vm, mp_size_t n, int neg) {
  return st_alloc(vm, neg ? CID_LARGENEG : CID_LARGEPOS, FMT_BYTES,
                  (uint64_t)(n > 0 ? n : 1) * 8);
}

/* Shrink a result computed into v's limbs to its exact byte length, or
** answer a SmallInteger when it fits. */
static Value finish(VM *vm, Value v) {
  const mp_limb_t *d = (const mp_limb_t *)BYTES(v);
  mp_size_t n = (mp_size_t)((NSLOTS(v) + 7) / 8);
  while (n > 0 && d[n - 1] == 0) n--;
  int neg = OBJ(v)->cls == CID_LARGENEG;
  if (n == 0) return MK_INT(0);
  if (n == 1 && d[0] <= (mp_limb_t)ST_INT_MAX)
    return MK_INT(neg ? -(intptr_t)d[0] : (intptr_t)d[0]);
  if (n == 1 && neg && d[0] == (mp_limb_t)1 << 62) return MK_INT(ST_INT_MIN);
  Mag m = {d, n, neg, 0};
  OBJ(v)->n = mag_bytes(&m);
  return v;
}

static Value make_int(VM *vm, const mp_limb_t *d, mp_size_t n, int neg) {
  while (n > 0 && d[n - 1] == 0) n--;
  Value v = new_large(vm, n, neg);
  if (n) memcpy(BYTES(v), d, (size_t)n * 8);
  return finish(vm, v);
}

Value st_int_from_i64(VM *vm, int64_t i) {
  if (FITS_INT(i)) return MK_INT(i);
  mp_limb_t l = (mp_limb_t)(i < 0 ? -(uint64_t)i : (uint64_t)i);
  return make_int(vm, &l, 1, i < 0);
}

Value st_int_from_mpz(VM *vm, const mpz_t z) {
  mp_size_t n = (mp_size_t)mpz_size(z);
  return make_int(vm, mpz_limbs_read(z), n, mpz_sgn(z) < 0);
}

void st_int_to_mpz(Value v, mpz_t z) {
  Mag m;
  if (!get_mag(v, &m)) {
    mpz_set_ui(z, 0);
    return;
  }
  mpz_import(z, (size_t)m.n, -1, sizeof(mp_limb_t), 0, 0, m.d);
  if (m.neg) mpz_neg(z, z);
}

Value st_normalize(VM *vm, Value v) {
  if (IS_INT(v)) return v;
  return finish(vm, v);
}

/* ===================================================================== */
/* Digit access                                                          */
/* ===================================================================== */

PRIM(p_digitLength) {
  Mag m;
  if (!get_mag(RCV, &m)) return FAIL();
  return OK(MK_INT(mag_bytes(&m)));
}

PRIM(p_digitAt) {
  Mag m;
  if (!get_mag(RCV, &m) || !IS_INT(ARG1) || INT_VAL(ARG1) < 1) return FAIL();
  uint64_t k = (uint64_t)INT_VAL(ARG1) - 1;
  if (k >= (uint64_t)m.n * 8) return OK(MK_INT(0));
  return OK(MK_INT((m.d[k / 8] >> (8 * (k % 8))) & 0xFF));
}

PRIM(p_digitAtPut) {
  if (IS_INT(RCV) || !st_is_integer(RCV) || !IS_INT(ARG1) || !IS_INT(ARG2))
    return FAIL();
  intptr_t k = INT_VAL(ARG1), b = INT_VAL(ARG2);
  if (k < 1 || (uint64_t)k > NSLOTS(RCV) || b < 0 || b > 255) return FAIL();
  BYTES(RCV)[k - 1] = (uint8_t)b;
  return OK(ARG2);
}

PRIM(p_normalize) {
  if (!st_is_integer(RCV)) return FAIL();
  return OK(st_normalize(vm, RCV));
}

PRIM(p_highBit) {
  Mag m;
  if (!get_mag(RCV, &m)) return FAIL();
  if (m.n == 0) return OK(MK_INT(0));
  return OK(MK_INT((m.n - 1) * 64 + (64 - __builtin_clzll(m.d[m.n - 1]))));
}

/* ===================================================================== */
/* Arithmetic on magnitudes                                              */
/* ===================================================================== */

/* |a| + |b| with the sign of a. */
PRIM(p_digitAdd) {
  Mag a, b;
  if (!get_mag(RCV, &a) || !get_mag(ARG1, &b)) return FAIL();
  ST_PRIM_BEGIN2(vm, SPYP_DIGIT_ADD, mag_bytes(&a), mag_bytes(&b));
  const Mag *x = &a, *y = &b;
  if (x->n < y->n) {
    x = &b;
    y = &a;
  }
  Value r = new_large(vm, x->n + 1, a.neg);
  mp_limb_t *d = (mp_limb_t *)BYTES(r);
  if (y->n) d[x->n] = mpn_add(d, x->d, x->n, y->d, y->n);
  else if (x->n) memcpy(d, x->d, (size_t)x->n * 8);
  r = finish(vm, r);
  ST_PRIM_END(vm);
  return OK(r);
}

/* |a| - |b|: the sign of a if |a| >= |b|, else the opposite. */
PRIM(p_digitSubtract) {
  Mag a, b;
  if (!get_mag(RCV, &a) || !get_mag(ARG1, &b)) return FAIL();
  ST_PRIM_BEGIN2(vm, SPYP_DIGIT_SUB, mag_bytes(&a), mag_bytes(&b));
  int neg = a.neg;
  int cmp = a.n != b.n ? (a.n > b.n ? 1 : -1)
                       : a.n ? mpn_cmp(a.d, b.d, a.n) : 0;
  const Mag *x = &a, *y = &b;
  if (cmp < 0) {
    x = &b;
    y = &a;
    neg = !neg;
  }
  Value r = new_large(vm, x->n, neg);
  mp_limb_t *d = (mp_limb_t *)BYTES(r);
  if (x->n) {
    if (y->n) mpn_sub(d, x->d, x->n, y->d, y->n);
    else memcpy(d, x->d, (size_t)x->n * 8);
  }
  r = finish(vm, r);
  ST_PRIM_END(vm);
  return OK(r);
}

/* |a| * |b|, negative when neg is true. */
PRIM(p_digitMultiply) {
  Mag a, b;
  if (!get_mag(RCV, &a) || !get_mag(ARG1, &b)) return FAIL();
  if (ARG2 != vm->vtrue && ARG2 != vm->vfalse) return FAIL();
  ST_PRIM_BEGIN2(vm, SPYP_DIGIT_MUL, mag_bytes(&a), mag_bytes(&b));
  Value r;
  if (a.n == 0 || b.n == 0) {
    r = MK_INT(0);
  } else {
    r = new_large(vm, a.n + b.n, ARG2 == vm->vtrue);
    mp_limb_t *d = (mp_limb_t *)BYTES(r);
    if (RCV == ARG1 && !IS_INT(RCV)) mpn_sqr(d, a.d, a.n);
    else if (a.n >= b.n) mpn_mul(d, a.d, a.n, b.d, b.n);
    else mpn_mul(d, b.d, b.n, a.d, a.n);
    r = finish(vm, r);
  }
  ST_PRIM_END(vm);
  return OK(r);
}

/* Truncated division of magnitudes: an Array with the quotient (negative
** when neg) and the remainder (with the receiver's sign). */
PRIM(p_digitDiv) {
  Mag a, b;
  if (!get_mag(RCV, &a) || !get_mag(ARG1, &b) || b.n == 0) return FAIL();
  if (ARG2 != vm->vtrue && ARG2 != vm->vfalse) return FAIL();
  ST_PRIM_BEGIN2(vm, SPYP_DIGIT_DIV, mag_bytes(&a), mag_bytes(&b));
  Value q, r;
  if (a.n < b.n) {
    q = MK_INT(0);
    r = make_int(vm, a.d, a.n, a.neg);
  } else {
    q = new_large(vm, a.n - b.n + 1, ARG2 == vm->vtrue);
    r = new_large(vm, b.n, a.neg);
    mpn_tdiv_qr((mp_limb_t *)BYTES(q), (mp_limb_t *)BYTES(r), 0, a.d, a.n,
                b.d, b.n);
    q = finish(vm, q);
    r = finish(vm, r);
  }
  Value arr = st_new_array(vm, 2);
  SLOTS(arr)[0] = q;
  SLOTS(arr)[1] = r;
  ST_PRIM_END(vm);
  return OK(arr);
}

PRIM(p_digitCompare) {
  Mag a, b;
  if (!get_mag(RCV, &a) || !get_mag(ARG1, &b)) return FAIL();
  int c;
  if (a.n != b.n) {
    c = a.n > b.n ? 1 : -1;
  } else {
    ST_PRIM_BEGIN2(vm, SPYP_DIGIT_CMP, mag_bytes(&a), mag_bytes(&b));
    c = a.n ? mpn_cmp(a.d, b.d, a.n) : 0;
    c = c > 0 ? 1 : c < 0 ? -1 : 0;
    ST_PRIM_END(vm);
  }
  return OK(MK_INT(c));
}

/* |self| shifted left (n > 0) or right, keeping the receiver's sign. */
PRIM(p_bitShiftMagnitude) {
  Mag a;
  if (!get_mag(RCV, &a) || !IS_INT(ARG1)) return FAIL();
  intptr_t s = INT_VAL(ARG1);
  if (s > ((intptr_t)1 << 36)) return FAIL();
  ST_PRIM_BEGIN2(vm, SPYP_DIGIT_SHIFT, mag_bytes(&a),
                 (uint64_t)(s < 0 ? -s : s));
  Value r;
  if (a.n == 0) {
    r = MK_INT(0);
  } else if (s >= 0) {
    mp_size_t limbs = (mp_size_t)(s / 64);
    unsigned bits = (unsigned)(s % 64);
    r = new_large(vm, a.n + limbs + 1, a.neg);
    mp_limb_t *d = (mp_limb_t *)BYTES(r);
    if (bits) d[a.n + limbs] = mpn_lshift(d + limbs, a.d, a.n, bits);
    else memcpy(d + limbs, a.d, (size_t)a.n * 8);
    r = finish(vm, r);
  } else {
    mp_size_t limbs = (mp_size_t)((-s) / 64);
    unsigned bits = (unsigned)((-s) % 64);
    if (limbs >= a.n) {
      r = MK_INT(0);
    } else {
      mp_size_t n = a.n - limbs;
      r = new_large(vm, n, a.neg);
      mp_limb_t *d = (mp_limb_t *)BYTES(r);
      if (bits) mpn_rshift(d, a.d + limbs, n, bits);
      else memcpy(d, a.d + limbs, (size_t)n * 8);
      r = finish(vm, r);
    }
  }
  ST_PRIM_END(vm);
  return OK(r);
}

/* n bytes of |self| from byte start (1-based), as a non-negative Integer:
** how the divide-and-conquer algorithms split their operands. */
PRIM(p_digitsFrom) {
  Mag a;
  if (!get_mag(RCV, &a) || !IS_INT(ARG1) || !IS_INT(ARG2) ||
      INT_VAL(ARG1) < 1 || INT_VAL(ARG2) < 0)
    return FAIL();
  uint64_t have = (uint64_t)a.n * 8, from = (uint64_t)INT_VAL(ARG1) - 1;
  uint64_t nb = (uint64_t)INT_VAL(ARG2);
  if (from >= have) return OK(MK_INT(0));
  if (nb > have - from) nb = have - from;
  ST_PRIM_BEGIN1(vm, SPYP_DIGIT_SLICE, nb);
  Value r = new_large(vm, (mp_size_t)((nb + 7) / 8), 0);
  memcpy(BYTES(r), (const uint8_t *)a.d + from, nb);
  r = finish(vm, r);
  ST_PRIM_END(vm);
  return OK(r);
}

/* Add |anInteger| << (8 * shift) into the receiver's digits, in place: the
** receiver is a fresh result buffer (LargePositiveInteger new:) that the
** algorithm normalizes when done. Fails (to the Smalltalk code) when the
** shift is not whole limbs or the sum would not fit. */
PRIM(p_inplaceAdd) {
  Mag b;
  if (IS_INT(RCV) || !st_is_integer(RCV) || !get_mag(ARG1, &b) ||
      !IS_INT(ARG2) || INT_VAL(ARG2) < 0 || INT_VAL(ARG2) % 8)
    return FAIL();
  mp_limb_t *d = (mp_limb_t *)BYTES(RCV);
  mp_size_t dn = (mp_size_t)((NSLOTS(RCV) + 7) / 8);
  mp_size_t off = (mp_size_t)(INT_VAL(ARG2) / 8);
  while (b.n > 0 && b.d[b.n - 1] == 0) b.n--;
  if (b.n == 0) return OK(RCV);
  if (off + b.n > dn) return FAIL();
  ST_PRIM_BEGIN2(vm, SPYP_DIGIT_ACC, NSLOTS(RCV), mag_bytes(&b));
  mp_limb_t carry = mpn_add(d + off, d + off, dn - off, b.d, b.n);
  ST_PRIM_END(vm);
  return carry ? FAIL() : OK(RCV);
}

/* ===================================================================== */
/* Logic, equality, conversion                                           */
/* ===================================================================== */

static int logic(VM *vm, Value *args, Value *res, int op) {
  Mag a, b;
  if (!get_mag(RCV, &a) || !get_mag(ARG1, &b)) return FAIL();
  if (IS_INT(RCV) && IS_INT(ARG1)) {
    intptr_t x = INT_VAL(RCV), y = INT_VAL(ARG1);
    return OK(MK_INT(op == 0 ? (x & y) : op == 1 ? (x | y) : (x ^ y)));
  }
  ST_PRIM_BEGIN2(vm, SPYP_DIGIT_LOGIC, mag_bytes(&a), mag_bytes(&b));
  mpz_t x, y, z;
  mpz_init(x);
  mpz_init(y);
  mpz_init(z);
  st_int_to_mpz(RCV, x);
  st_int_to_mpz(ARG1, y);
  if (op == 0) mpz_and(z, x, y);
  else if (op == 1) mpz_ior(z, x, y);
  else mpz_xor(z, x, y);
  Value r = st_int_from_mpz(vm, z);
  mpz_clear(x);
  mpz_clear(y);
  mpz_clear(z);
  ST_PRIM_END(vm);
  return OK(r);
}

PRIM(p_bitAnd) { return logic(vm, args, res, 0); }
PRIM(p_bitOr) { return logic(vm, args, res, 1); }
PRIM(p_bitXor) { return logic(vm, args, res, 2); }

PRIM(p_largeEq) {
  Mag a, b;
  if (!get_mag(RCV, &a)) return FAIL();
  if (!get_mag(ARG1, &b)) return FAIL();
  if (a.neg != b.neg || a.n != b.n) return OK(vm->vfalse);
  return OK(BOOL(a.n == 0 || mpn_cmp(a.d, b.d, a.n) == 0));
}

PRIM(p_largeHash) {
  Mag a;
  if (!get_mag(RCV, &a)) return FAIL();
  uint64_t h = 1469598103934665603ull;
  for (mp_size_t i = 0; i < a.n; i++) h = (h ^ a.d[i]) * 1099511628211ull;
  return OK(MK_INT((h >> 4) & 0x3FFFFFFF));
}

PRIM(p_largeAsFloat) {
  if (!st_is_integer(RCV)) return FAIL();
  mpz_t z;
  mpz_init(z);
  st_int_to_mpz(RCV, z);
  double d = mpz_get_d(z);
  mpz_clear(z);
  return OK(st_new_float(vm, d));
}

PRIM(p_floatAsInteger) {
  if (!is_kind(vm, RCV, CID_FLOAT)) return FAIL();
  double d = st_float(RCV);
  if (isnan(d) || isinf(d)) return FAIL();
  d = trunc(d);
  if (d > -4e18 && d < 4e18) return OK(st_int_from_i64(vm, (int64_t)d));
  mpz_t z;
  mpz_init_set_d(z, d);
  Value r = st_int_from_mpz(vm, z);
  mpz_clear(z);
  return OK(r);
}

/* ===================================================================== */
/* Printing                                                              */
/* ===================================================================== */

/* printString: base for any Integer (2..36, upper-case digits). The
** kernel splits very large numbers by divide and conquer and prints the
** pieces with this primitive. */
PRIM(p_printBase) {
  Mag a;
  if (!get_mag(RCV, &a) || !IS_INT(ARG1) || INT_VAL(ARG1) < 2 ||
      INT_VAL(ARG1) > 36)
    return FAIL();
  int base = (int)INT_VAL(ARG1);
  if (a.n == 0) return OK(st_new_string(vm, "0", 1));
  ST_PRIM_BEGIN1(vm, SPYP_INT_PRINT, mag_bytes(&a));
  size_t cap = mpn_sizeinbase(a.d, a.n, base) + 2;
  unsigned char *digits = malloc(cap);
  mp_limb_t *tmp = malloc((size_t)(a.n + 1) * sizeof(mp_limb_t));
  if (!digits || !tmp) st_out_of_memory(cap);
  memcpy(tmp, a.d, (size_t)a.n * sizeof(mp_limb_t));
  size_t nd = mpn_get_str(digits, base, tmp, a.n);
  size_t skip = 0;
  while (skip + 1 < nd && digits[skip] == 0) skip++;
  Value s = st_alloc(vm, CID_STRING, FMT_BYTES, nd - skip + (size_t)a.neg);
  uint8_t *out = BYTES(s);
  if (a.neg) *out++ = '-';
  for (size_t i = skip; i < nd; i++)
    out[i - skip] = (uint8_t)"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ"[digits[i]];
  free(digits);
  free(tmp);
  ST_PRIM_END(vm);
  return OK(s);
}
