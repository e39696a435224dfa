/*
** hosts/st/prims.h: primitive functions, split by subject across
** prims.c (objects, numbers, system), primlint.c (large-integer digits on
** GMP's mpn layer) and primcoll.c (strings, collections, sorting,
** printing). The table that names them is in prims.c.
**
** Protocol: args[0] is the receiver, args[1..na] the arguments. Return
** PRIM_OK with *res set, or PRIM_FAIL (the method's Smalltalk code then
** runs, usually to report a meaningful error).
*/
#ifndef ST_PRIMS_H
#define ST_PRIMS_H

#include "hosts/st/st.h"
#include "hosts/st/primtab.h"

#define PRIM(name) int name(VM *vm, Value *args, int na, Value *res)
#define RCV (args[0])
#define ARG1 (args[1])
#define ARG2 (args[2])
#define ARG3 (args[3])
#define ARG4 (args[4])
#define OK(v) (*res = (v), PRIM_OK)
#define FAIL() PRIM_FAIL

static inline int is_kind(VM *vm, Value v, uint32_t cid) {
  return IS_PTR(v) && v != vm->nil && OBJ(v)->cls == cid;
}

/* Bytes-format objects indexed from 1 (String, Symbol, ByteArray, large
** integers); pointer objects with indexed slots after their fixed ones. */
static inline int is_bytes(Value v) {
  return IS_PTR(v) && OBJ(v)->fmt == FMT_BYTES;
}

static inline int is_string(Value v) {
  return IS_PTR(v) && (OBJ(v)->cls == CID_STRING || OBJ(v)->cls == CID_SYMBOL);
}

/* Number of indexed elements and the index of the first. */
uint64_t st_indexed_size(VM *vm, Value v);
uint64_t st_fixed_slots(VM *vm, Value v);

#define ST_PRIM_DECL(name) PRIM(name);
/* primlint.c */
#define ST_LINT_PRIMS(X)                                                   \
  X(p_digitLength) X(p_digitAt) X(p_digitAtPut) X(p_digitAdd)              \
  X(p_digitSubtract) X(p_digitMultiply) X(p_digitDiv) X(p_digitCompare)    \
  X(p_bitShiftMagnitude) X(p_normalize) X(p_highBit) X(p_bitAnd)           \
  X(p_bitOr) X(p_bitXor) X(p_largeAsFloat) X(p_printBase)    \
  X(p_largeEq) X(p_largeHash) X(p_digitsFrom) X(p_inplaceAdd)          \
  X(p_floatAsInteger)
ST_LINT_PRIMS(ST_PRIM_DECL)

/* primcoll.c */
#define ST_COLL_PRIMS(X)                                                   \
  X(p_concat) X(p_indexOfChar) X(p_indexOfSub) X(p_replace)                \
  X(p_copyReplaceAll) X(p_stringHash) X(p_reversed) X(p_asUppercase)       \
  X(p_asLowercase) X(p_copyFromTo) X(p_sort) X(p_stringEq)                 \
  X(p_stringCompare) X(p_asSymbol) X(p_asString) X(p_atAllPut)             \
  X(p_stringAsNumber) X(p_printStringQuoted)       \
  X(p_occurrencesOfChar) X(p_copyReplacingChar) X(p_trimSeparators)        \
  X(p_substrings) X(p_indexOfIdentity)
ST_COLL_PRIMS(ST_PRIM_DECL)

/* Floats print as the shortest decimal that reads back the same. */
void st_format_float(double d, char *buf, size_t len);

#endif
