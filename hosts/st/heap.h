/*
** hosts/st/heap.h: allocation and the mark-sweep collector (heap.c).
*/
#ifndef ST_HEAP_H
#define ST_HEAP_H

#include "hosts/st/st.h"

int st_heap_init(VM *vm);
void st_heap_free(VM *vm);
/* No object has more slots or bytes than this (8 TB of slots). */
#define ST_MAX_OBJ_SLOTS ((uint64_t)1 << 40)
Value st_alloc(VM *vm, uint32_t cid, int fmt, uint64_t n);
Value st_alloc_try(VM *vm, uint32_t cid, int fmt, uint64_t n);
/* st_alloc from a primitive (its caller saved the interpreter's state): a
** large object fills with sample points between its pieces (stprof.h,
** st_prof_work). */
Value st_alloc_prim(VM *vm, uint32_t cid, int fmt, uint64_t n);
Value st_new_slots(VM *vm, uint32_t cid, uint64_t n);
Value st_new_bytes(VM *vm, uint32_t cid, uint64_t nbytes);
Value st_new_array(VM *vm, uint64_t n);
Value st_new_string(VM *vm, const char *s, size_t len);
Value st_new_float(VM *vm, double d);
Value st_new_assoc(VM *vm, Value k, Value v);
void st_gc(VM *vm);
uint32_t st_identity_hash(Value v);
size_t st_heap_live_bytes(VM *vm);

#endif
