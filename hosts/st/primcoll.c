/*
** hosts/st/primcoll.c: primitives on strings and arrayed collections.
**
** These are the operations whose cost grows with their operands
** (concatenation, search, replacement, hashing, reversal, case
** conversion, copying, sorting, filling); each one reports its operand
** sizes to the profiler, so a profile shows them as leaves of their own
** under the Smalltalk code that called them. Only the plain kernel
** classes (String, Symbol, Array, ByteArray) are handled here; anything
** else fails over to the Smalltalk fallback code.
*/
#include "config.h"

#include "hosts/st/prims.h"

#include <ctype.h>
#include <gmp.h>
#include <stdlib.h>
#include <string.h>

#include "hosts/st/lint.h"
#include "hosts/st/heap.h"
#include "hosts/st/symbols.h"
#include "hosts/st/primtab.h"

/* Elements of an arrayed collection: byte or pointer, base and count. */
typedef struct Seq {
  int bytes;
  uint8_t *b;
  Value *p;
  uint64_t n;
} Seq;

static int get_seq(VM *vm, Value v, Seq *s) {
  if (!IS_PTR(v) || v == vm->nil) return 0;
  uint32_t c = OBJ(v)->cls;
  if (c == CID_STRING || c == CID_SYMBOL || c == CID_BYTEARRAY) {
    s->bytes = 1;
    s->b = BYTES(v);
    s->n = NSLOTS(v);
    return 1;
  }
  if (c == CID_LARGEPOS || c == CID_LARGENEG) {
    s->bytes = 1;
    s->b = BYTES(v);
    s->n = NSLOTS(v);
    return 1;
  }
  if (OBJ(v)->fmt == FMT_PTR && vm->classes[c].indexed) {
    uint64_t fixed = vm->classes[c].ninst;
    s->bytes = 0;
    s->p = SLOTS(v) + fixed;
    s->n = NSLOTS(v) - fixed;
    return 1;
  }
  return 0;
}

/* Bulk copies and fills go in pieces of ST_PROF_WORK slots, a sample
** point between them (st_prof_work): copying 2 M slots takes
** milliseconds. A move whose destination overlaps its source from above
** goes backwards, piece by piece. */
#define PIECE (ST_PROF_WORK * sizeof(Value))
static void move_in_pieces(VM *vm, void *dst, const void *src, size_t n) {
  char *d = dst;
  const char *s = src;
  uintptr_t di = (uintptr_t)dst, si = (uintptr_t)src;
  if (di <= si || di >= si + n) { /* a forward copy reads ahead of writes */
    for (size_t at = 0; at < n; at += PIECE) {
      if (at) st_prof_work(vm);
      memmove(d + at, s + at, n - at < PIECE ? n - at : PIECE);
    }
  } else {
    for (size_t left = n; left > 0;) {
      size_t k = left < PIECE ? left : PIECE;
      left -= k;
      memmove(d + left, s + left, k);
      if (left) st_prof_work(vm);
    }
  }
}

/* A new collection like v (Symbols give Strings) with n elements. */
static Value new_like(VM *vm, Value v, uint64_t n) {
  uint32_t c = OBJ(v)->cls;
  if (c == CID_SYMBOL) c = CID_STRING;
  if (OBJ(v)->fmt == FMT_BYTES) return st_alloc_prim(vm, c, FMT_BYTES, n);
  return st_alloc_prim(vm, c, FMT_PTR, n + vm->classes[c].ninst);
}

static int plain(VM *vm, Value v) {
  return IS_PTR(v) && v != vm->nil &&
         (OBJ(v)->cls == CID_STRING || OBJ(v)->cls == CID_SYMBOL ||
          OBJ(v)->cls == CID_ARRAY || OBJ(v)->cls == CID_BYTEARRAY);
}

static int int_arg(Value v, intptr_t *x) {
  if (!IS_INT(v)) return 0;
  *x = INT_VAL(v);
  return 1;
}

/* ===================================================================== */
/* Building                                                              */
/* ===================================================================== */

PRIM(p_concat) {
  Seq a, b;
  if (!plain(vm, RCV) || !get_seq(vm, RCV, &a) || !get_seq(vm, ARG1, &b) ||
      a.bytes != b.bytes)
    return FAIL();
  if (a.bytes && OBJ(RCV)->cls != CID_BYTEARRAY &&
      OBJ(ARG1)->cls != CID_STRING && OBJ(ARG1)->cls != CID_SYMBOL)
    return FAIL();
  ST_PRIM_BEGIN2(vm, SPYP_CONCAT, a.n, b.n);
  Value r = new_like(vm, RCV, a.n + b.n);
  Seq d;
  get_seq(vm, r, &d);
  if (a.bytes) {
    move_in_pieces(vm, d.b, a.b, a.n);
    move_in_pieces(vm, d.b + a.n, b.b, b.n);
  } else {
    move_in_pieces(vm, d.p, a.p, a.n * sizeof(Value));
    move_in_pieces(vm, d.p + a.n, b.p, b.n * sizeof(Value));
  }
  ST_PRIM_END(vm);
  return OK(r);
}

PRIM(p_copyFromTo) {
  Seq a;
  intptr_t from, to;
  if (!plain(vm, RCV) || !get_seq(vm, RCV, &a) || !int_arg(ARG1, &from) ||
      !int_arg(ARG2, &to))
    return FAIL();
  if (to < from - 1 || from < 1 || (to >= from && (uint64_t)to > a.n))
    return FAIL();
  uint64_t n = (uint64_t)(to - from + 1);
  ST_PRIM_BEGIN1(vm, SPYP_COPY, n);
  Value r = new_like(vm, RCV, n);
  Seq d;
  get_seq(vm, r, &d);
  if (a.bytes) move_in_pieces(vm, d.b, a.b + from - 1, n);
  else move_in_pieces(vm, d.p, a.p + from - 1, n * sizeof(Value));
  ST_PRIM_END(vm);
  return OK(r);
}

/* replaceFrom: start to: stop with: source startingAt: srcStart */
PRIM(p_replace) {
  Seq d, s;
  intptr_t start, stop, from;
  if (!get_seq(vm, RCV, &d) || !get_seq(vm, ARG3, &s) || d.bytes != s.bytes ||
      OBJ(RCV)->cls == CID_SYMBOL || !int_arg(ARG1, &start) ||
      !int_arg(ARG2, &stop) || !int_arg(ARG4, &from))
    return FAIL();
  if (stop < start - 1 || start < 1 || from < 1) return FAIL();
  uint64_t n = (uint64_t)(stop - start + 1);
  if ((uint64_t)start - 1 + n > d.n || (uint64_t)from - 1 + n > s.n)
    return FAIL();
  ST_PRIM_BEGIN1(vm, SPYP_REPLACE, n);
  if (d.bytes) move_in_pieces(vm, d.b + start - 1, s.b + from - 1, n);
  else move_in_pieces(vm, d.p + start - 1, s.p + from - 1, n * sizeof(Value));
  ST_PRIM_END(vm);
  return OK(RCV);
}

PRIM(p_reversed) {
  Seq a;
  if (!plain(vm, RCV) || !get_seq(vm, RCV, &a)) return FAIL();
  ST_PRIM_BEGIN1(vm, SPYP_REVERSE, a.n);
  Value r = new_like(vm, RCV, a.n);
  Seq d;
  get_seq(vm, r, &d);
  for (uint64_t i = 0; i < a.n; i++) {
    if (a.bytes) d.b[i] = a.b[a.n - 1 - i];
    else d.p[i] = a.p[a.n - 1 - i];
  }
  ST_PRIM_END(vm);
  return OK(r);
}

static int change_case(VM *vm, Value *args, Value *res, int upper) {
  if (!is_string(RCV)) return FAIL();
  uint64_t n = NSLOTS(RCV);
  ST_PRIM_BEGIN1(vm, SPYP_CASE, n);
  Value r = st_alloc(vm, CID_STRING, FMT_BYTES, n);
  for (uint64_t i = 0; i < n; i++)
    BYTES(r)[i] = (uint8_t)(upper ? toupper(BYTES(RCV)[i])
                                  : tolower(BYTES(RCV)[i]));
  if (OBJ(RCV)->cls == CID_SYMBOL) r = st_intern(vm, (char *)BYTES(r), n);
  ST_PRIM_END(vm);
  return OK(r);
}

PRIM(p_asUppercase) { return change_case(vm, args, res, 1); }
PRIM(p_asLowercase) { return change_case(vm, args, res, 0); }

PRIM(p_atAllPut) {
  Seq a;
  if (!plain(vm, RCV) || OBJ(RCV)->cls == CID_SYMBOL || !get_seq(vm, RCV, &a))
    return FAIL();
  if (a.bytes) {
    intptr_t b = OBJ(RCV)->cls == CID_STRING
                     ? (IS_CHAR(ARG1) ? (intptr_t)CHAR_VAL(ARG1) : -1)
                     : (IS_INT(ARG1) ? INT_VAL(ARG1) : -1);
    if (b < 0 || b > 255) return FAIL();
    ST_PRIM_BEGIN1(vm, SPYP_FILL, a.n);
    for (size_t at = 0; at < a.n; at += PIECE) {
      if (at) st_prof_work(vm);
      memset(a.b + at, (int)b, a.n - at < PIECE ? a.n - at : PIECE);
    }
  } else {
    ST_PRIM_BEGIN1(vm, SPYP_FILL, a.n);
    for (uint64_t i = 0; i < a.n; i++) {
      if (i && i % ST_PROF_WORK == 0) st_prof_work(vm);
      a.p[i] = ARG1;
    }
  }
  ST_PRIM_END(vm);
  return OK(RCV);
}

/* ===================================================================== */
/* Searching and comparing                                               */
/* ===================================================================== */

/* indexOf: aCharacter [startingAt: i]: 0 when absent. */
PRIM(p_indexOfChar) {
  intptr_t start = 1;
  if (!is_string(RCV) || !IS_CHAR(ARG1) || (na == 2 && !int_arg(ARG2, &start)))
    return FAIL();
  uint64_t n = NSLOTS(RCV);
  if (CHAR_VAL(ARG1) > 255 || start < 1 || (uint64_t)start > n + 1)
    return OK(MK_INT(0));
  ST_PRIM_BEGIN2(vm, SPYP_SEARCH, n, 1);
  const uint8_t *p = memchr(BYTES(RCV) + start - 1, (int)CHAR_VAL(ARG1),
                            n - (uint64_t)(start - 1));
  ST_PRIM_END(vm);
  return OK(MK_INT(p ? p - BYTES(RCV) + 1 : 0));
}

/* indexOfSubCollection: aString startingAt: i: 0 when absent. */
PRIM(p_indexOfSub) {
  intptr_t start;
  if (!is_string(RCV) || !is_string(ARG1) || !int_arg(ARG2, &start))
    return FAIL();
  uint64_t n = NSLOTS(RCV), m = NSLOTS(ARG1);
  if (start < 1) start = 1;
  if ((uint64_t)start - 1 + m > n) return OK(MK_INT(0));
  ST_PRIM_BEGIN2(vm, SPYP_SEARCH, n, m);
  const uint8_t *p = m == 0 ? BYTES(RCV) + start - 1
                            : memmem(BYTES(RCV) + start - 1,
                                     n - (uint64_t)(start - 1), BYTES(ARG1), m);
  ST_PRIM_END(vm);
  return OK(MK_INT(p ? p - BYTES(RCV) + 1 : 0));
}

PRIM(p_occurrencesOfChar) {
  if (!is_string(RCV) || !IS_CHAR(ARG1)) return FAIL();
  uint64_t n = NSLOTS(RCV), k = 0;
  ST_PRIM_BEGIN2(vm, SPYP_SEARCH, n, 1);
  for (uint64_t i = 0; i < n; i++) k += BYTES(RCV)[i] == CHAR_VAL(ARG1);
  ST_PRIM_END(vm);
  return OK(MK_INT(k));
}

PRIM(p_indexOfIdentity) {
  Seq a;
  if (!plain(vm, RCV) || !get_seq(vm, RCV, &a) || a.bytes) return FAIL();
  for (uint64_t i = 0; i < a.n; i++)
    if (a.p[i] == ARG1) return OK(MK_INT(i + 1));
  return OK(MK_INT(0));
}

PRIM(p_stringEq) {
  if (!is_string(RCV)) return FAIL();
  if (!is_string(ARG1)) return OK(vm->vfalse);
  uint64_t n = NSLOTS(RCV);
  return OK(BOOL(n == NSLOTS(ARG1) && memcmp(BYTES(RCV), BYTES(ARG1), n) == 0));
}

/* compare: aString -> -1, 0, 1 (bytes, then length). */
PRIM(p_stringCompare) {
  if (!is_string(RCV) || !is_string(ARG1)) return FAIL();
  uint64_t a = NSLOTS(RCV), b = NSLOTS(ARG1), n = a < b ? a : b;
  ST_PRIM_BEGIN2(vm, SPYP_COMPARE, a, b);
  int c = memcmp(BYTES(RCV), BYTES(ARG1), n);
  ST_PRIM_END(vm);
  if (c == 0) c = a < b ? -1 : a > b ? 1 : 0;
  return OK(MK_INT(c < 0 ? -1 : c > 0 ? 1 : 0));
}

PRIM(p_stringHash) {
  if (!is_string(RCV)) return FAIL();
  uint64_t n = NSLOTS(RCV);
  ST_PRIM_BEGIN1(vm, SPYP_HASH, n);
  uint32_t h = 2166136261u;
  for (uint64_t i = 0; i < n; i++) h = (h ^ BYTES(RCV)[i]) * 16777619u;
  ST_PRIM_END(vm);
  return OK(MK_INT(h & 0x3FFFFFFF));
}

/* ===================================================================== */
/* Conversions                                                           */
/* ===================================================================== */

PRIM(p_asSymbol) {
  if (!is_string(RCV)) return FAIL();
  return OK(st_intern(vm, (char *)BYTES(RCV), NSLOTS(RCV)));
}

PRIM(p_asString) {
  if (!is_string(RCV)) return FAIL();
  return OK(st_new_string(vm, (char *)BYTES(RCV), NSLOTS(RCV)));
}

/* Read an Integer or Float written in Smalltalk syntax; nil if none. */
PRIM(p_stringAsNumber) {
  if (!is_string(RCV)) return FAIL();
  size_t n = NSLOTS(RCV);
  char *s = malloc(n + 1);
  if (!s) st_out_of_memory(n + 1);
  memcpy(s, BYTES(RCV), n);
  s[n] = '\0';
  char *p = s;
  while (isspace((unsigned char)*p)) p++;
  char *q = p + (*p == '-');
  Value r = vm->nil;
  if (isdigit((unsigned char)*q)) {
    char *e = q;
    while (isdigit((unsigned char)*e)) e++;
    int isfloat = (*e == '.' && isdigit((unsigned char)e[1])) || *e == 'e';
    if (isfloat) {
      char *end;
      double d = strtod(p, &end);
      r = st_new_float(vm, d);
    } else {
      char save = *e;
      *e = '\0';
      mpz_t z;
      if (mpz_init_set_str(z, p, 10) == 0) r = st_int_from_mpz(vm, z);
      mpz_clear(z);
      *e = save;
    }
  }
  free(s);
  return OK(r);
}

/* printString of a String ('it''s') or a Symbol (#foo, #'a b'). */
PRIM(p_printStringQuoted) {
  if (!is_string(RCV)) return FAIL();
  const uint8_t *b = BYTES(RCV);
  uint64_t n = NSLOTS(RCV), q = 0;
  int sym = OBJ(RCV)->cls == CID_SYMBOL, bare = sym && n > 0;
  for (uint64_t i = 0; i < n; i++) {
    q += b[i] == '\'';
    if (!(isalnum(b[i]) || b[i] == ':' || b[i] == '_')) bare = 0;
  }
  if (sym && n > 0 && strchr("+-*/\\<>=~@%|&?,", b[0])) {
    bare = 1;
    for (uint64_t i = 0; i < n; i++)
      if (!strchr("+-*/\\<>=~@%|&?,", b[i])) bare = 0;
  }
  if (bare && isdigit(b[0])) bare = 0;
  uint64_t len = bare ? n + 1 : n + q + 2 + (uint64_t)sym;
  Value r = st_alloc(vm, CID_STRING, FMT_BYTES, len);
  uint8_t *o = BYTES(r);
  if (sym) *o++ = '#';
  if (!bare) *o++ = '\'';
  for (uint64_t i = 0; i < n; i++) {
    *o++ = b[i];
    if (b[i] == '\'' && !bare) *o++ = '\'';
  }
  if (!bare) *o++ = '\'';
  return OK(r);
}

PRIM(p_copyReplaceAll) {
  if (!is_string(RCV) || !is_string(ARG1) || !is_string(ARG2) ||
      NSLOTS(ARG1) == 0)
    return FAIL();
  const uint8_t *s = BYTES(RCV), *old = BYTES(ARG1), *nw = BYTES(ARG2);
  uint64_t n = NSLOTS(RCV), m = NSLOTS(ARG1), k = NSLOTS(ARG2), hits = 0;
  ST_PRIM_BEGIN3(vm, SPYP_REPLACE_ALL, n, m, k);
  for (const uint8_t *p = s; (p = memmem(p, n - (uint64_t)(p - s), old, m));
       p += m)
    hits++;
  Value r = st_alloc(vm, CID_STRING, FMT_BYTES, n + hits * k - hits * m);
  uint8_t *o = BYTES(r);
  const uint8_t *p = s, *h;
  while ((h = memmem(p, n - (uint64_t)(p - s), old, m))) {
    memcpy(o, p, (size_t)(h - p));
    o += h - p;
    memcpy(o, nw, k);
    o += k;
    p = h + m;
  }
  memcpy(o, p, n - (uint64_t)(p - s));
  ST_PRIM_END(vm);
  return OK(r);
}

PRIM(p_copyReplacingChar) {
  if (!is_string(RCV) || !IS_CHAR(ARG1) || !IS_CHAR(ARG2) ||
      CHAR_VAL(ARG2) > 255)
    return FAIL();
  uint64_t n = NSLOTS(RCV);
  ST_PRIM_BEGIN1(vm, SPYP_COPY, n);
  Value r = st_new_string(vm, (char *)BYTES(RCV), n);
  for (uint64_t i = 0; i < n; i++)
    if (BYTES(r)[i] == CHAR_VAL(ARG1)) BYTES(r)[i] = (uint8_t)CHAR_VAL(ARG2);
  ST_PRIM_END(vm);
  return OK(r);
}

PRIM(p_trimSeparators) {
  if (!is_string(RCV)) return FAIL();
  const uint8_t *b = BYTES(RCV);
  uint64_t i = 0, j = NSLOTS(RCV);
  while (i < j && isspace(b[i])) i++;
  while (j > i && isspace(b[j - 1])) j--;
  return OK(st_new_string(vm, (const char *)b + i, j - i));
}

/* substrings / substrings: separators -> Array of Strings. */
PRIM(p_substrings) {
  if (!is_string(RCV) || (na == 1 && !is_string(ARG1))) return FAIL();
  const uint8_t *b = BYTES(RCV);
  uint64_t n = NSLOTS(RCV), count = 0;
  uint8_t sep[256] = {0};
  if (na == 1)
    for (uint64_t i = 0; i < NSLOTS(ARG1); i++) sep[BYTES(ARG1)[i]] = 1;
  else
    sep[' '] = sep['\t'] = sep['\n'] = sep['\r'] = sep['\f'] = 1;
  for (int pass = 0; pass < 2; pass++) {
    Value arr = pass ? st_new_array(vm, count) : 0;
    uint64_t k = 0, i = 0;
    while (i < n) {
      while (i < n && sep[b[i]]) i++;
      uint64_t s = i;
      while (i < n && !sep[b[i]]) i++;
      if (i > s) {
        if (pass) SLOTS(arr)[k] = st_new_string(vm, (const char *)b + s, i - s);
        k++;
      }
    }
    if (pass) return OK(arr);
    count = k;
  }
  return FAIL();
}

/* ===================================================================== */
/* Sorting                                                               */
/* ===================================================================== */

static int cmp_num(const void *a, const void *b) {
  Value x = *(const Value *)a, y = *(const Value *)b;
  double dx = IS_INT(x) ? (double)INT_VAL(x) : st_float(x);
  double dy = IS_INT(y) ? (double)INT_VAL(y) : st_float(y);
  if (IS_INT(x) && IS_INT(y))
    return INT_VAL(x) < INT_VAL(y) ? -1 : INT_VAL(x) > INT_VAL(y);
  return dx < dy ? -1 : dx > dy;
}

static int cmp_str(const void *a, const void *b) {
  Value x = *(const Value *)a, y = *(const Value *)b;
  uint64_t nx = NSLOTS(x), ny = NSLOTS(y);
  int c = memcmp(BYTES(x), BYTES(y), nx < ny ? nx : ny);
  return c ? c : (nx < ny ? -1 : nx > ny);
}

/* sort: ascending, in place, for Arrays of numbers (SmallIntegers and
** Floats) or of strings; anything else fails to the Smalltalk sort. */
PRIM(p_sort) {
  if (!is_kind(vm, RCV, CID_ARRAY)) return FAIL();
  Value *p = SLOTS(RCV);
  uint64_t n = NSLOTS(RCV);
  int nums = 1, strs = 1;
  for (uint64_t i = 0; i < n; i++) {
    Value v = p[i];
    if (!(IS_INT(v) || is_kind(vm, v, CID_FLOAT))) nums = 0;
    if (!is_string(v)) strs = 0;
  }
  if (!nums && !strs) return FAIL();
  ST_PRIM_BEGIN1(vm, SPYP_SORT, n);
  qsort(p, n, sizeof(Value), nums ? cmp_num : cmp_str);
  ST_PRIM_END(vm);
  return OK(RCV);
}

/* The merge sort of sort: with a block, stable and bottom-up, as a state
** machine whose state lives in its frame (SB_* slots, SmallIntegers and
** the scratch Array), so that between two comparisons the interpreter can
** run the block like any other code: switch processes inside it, collect
** garbage, or leave it by a non-local return or an exception, all with
** no C frame of the primitive left on the C stack. */
int st_sort_step(VM *vm, Value *b, int answer, Value *x, Value *y) {
  if (b[SB_N] == vm->nil) {
    uint64_t n0 = NSLOTS(b[SB_RCV]);
    b[SB_N] = MK_INT(n0);
    if (n0 < 2) return 0;
    b[SB_TMP] = st_new_array(vm, n0);
    b[SB_W] = MK_INT(1);
    b[SB_LO] = b[SB_I] = b[SB_K] = b[SB_FLIP] = MK_INT(0);
    b[SB_MID] = b[SB_J] = MK_INT(1);
    b[SB_HI] = MK_INT(2);
  }
  intptr_t n = INT_VAL(b[SB_N]);
  if (n < 2) return 0;
  intptr_t w = INT_VAL(b[SB_W]), lo = INT_VAL(b[SB_LO]);
  intptr_t mid = INT_VAL(b[SB_MID]), hi = INT_VAL(b[SB_HI]);
  intptr_t i = INT_VAL(b[SB_I]), j = INT_VAL(b[SB_J]), k = INT_VAL(b[SB_K]);
  intptr_t flip = INT_VAL(b[SB_FLIP]);
  int r = 0;
  for (;;) {
    /* Pass with flip 0 merges the receiver into the scratch array. */
    Value *src = SLOTS(flip ? b[SB_TMP] : b[SB_RCV]);
    Value *dst = SLOTS(flip ? b[SB_RCV] : b[SB_TMP]);
    if (answer >= 0) {
      dst[k++] = answer ? src[i++] : src[j++];
      answer = -1;
    }
    if (i < mid && j < hi) {
      *x = src[i];
      *y = src[j];
      r = 1;
      break;
    }
    while (i < mid) dst[k++] = src[i++];
    while (j < hi) dst[k++] = src[j++];
    lo += 2 * w;
    if (lo >= n) {
      w *= 2;
      flip ^= 1;
      lo = 0;
      if (w >= n) {
        /* Sorted; after an odd number of passes it is in the scratch. */
        if (flip)
          memcpy(SLOTS(b[SB_RCV]), SLOTS(b[SB_TMP]), (size_t)n * sizeof(Value));
        break;
      }
    }
    mid = lo + w < n ? lo + w : n;
    hi = lo + 2 * w < n ? lo + 2 * w : n;
    i = lo;
    j = mid;
    k = lo;
  }
  b[SB_W] = MK_INT(w);
  b[SB_LO] = MK_INT(lo);
  b[SB_MID] = MK_INT(mid);
  b[SB_HI] = MK_INT(hi);
  b[SB_I] = MK_INT(i);
  b[SB_J] = MK_INT(j);
  b[SB_K] = MK_INT(k);
  b[SB_FLIP] = MK_INT(flip);
  return r;
}
