/*
** hosts/st/primtab.h: the primitive table as the interpreter sees it
** (prims.c), the entry points of large integers (primlint.c) and of
** sort: with a block (primcoll.c). The primitives themselves: prims.h.
*/
#ifndef ST_PRIMTAB_H
#define ST_PRIMTAB_H

#include "hosts/st/st.h"

/* Result of a primitive. */
enum { PRIM_OK = 0, PRIM_FAIL = 1 };

typedef int (*PrimFn)(VM *vm, Value *args, int nargs, Value *result);

typedef struct PrimDef {
  const char *name;
  PrimFn fn;
  int nargs;          /* -1: any */
  int ctl;            /* nonzero: handled inside the interpreter loop */
  const char *spy_name; /* non-NULL: reported to the profiler under it */
  const char *spy_sizes;
} PrimDef;

/* Control primitives run inside the dispatch loop (they change frames or
** switch processes). */
enum {
  CTL_NONE = 0, CTL_VALUE, CTL_VALUE_ARGS, CTL_PERFORM, CTL_PERFORM_ARGS,
  CTL_WAIT, CTL_SIGNAL, CTL_YIELD, CTL_RESUME, CTL_SUSPEND, CTL_TERMINATE,
  CTL_RETURN_FROM, CTL_RESTART, CTL_QUIT, CTL_SPY,
  CTL_UNHANDLED, CTL_PRIORITY, CTL_SORTBLOCK
};

int st_prim_index(const char *name);
/* The table, indexed by primitive number (st_prim_index); inline, since
** every send of a primitive method reads it. */
extern const PrimDef st_prim_table[];
static inline const PrimDef *st_prim(int index) {
  return &st_prim_table[index];
}

/* Large integers (primlint.c). */
Value st_int_from_i64(VM *vm, int64_t i);
Value st_normalize(VM *vm, Value v);
int st_is_integer(Value v);

/* sort: with a block (primcoll.c), a primitive that calls back: its frame
** (the driver, run by OP_PRIMSTEP in interp.c) holds the receiver, the
** block and the merge sort's state in these slots. st_sort_step merges
** until it needs the block's answer for a pair (returns 1 with the pair
** in *x, *y) or the receiver is sorted (returns 0); answer is the block's
** answer to the pair it returned last (1: in order), or -1 at the start. */
enum { SB_RCV, SB_BLOCK, SB_TMP, SB_N, SB_W, SB_LO, SB_MID, SB_HI, SB_I,
       SB_J, SB_K, SB_FLIP, SB_NEST, SB_NSLOTS };
int st_sort_step(VM *vm, Value *b, int answer, Value *x, Value *y);

#endif
