/*
** hosts/st/heap.c: object allocation and the garbage collector.
**
** Objects up to ST_SMALL_MAX bytes come from pages of equal-sized cells,
** one free list per size class (16-byte steps); bigger ones are malloc'd
** one by one and listed. The collector is a precise, non-moving mark-sweep:
** it traces from the VM's roots only (process stacks and frames, the method
** table's literals, classes, globals, symbols, timers) and runs only when
** the interpreter reaches a safe point with vm->gc_pending set, so nothing
** held in a C local can be missed. Allocation just sets gc_pending when
** enough bytes were allocated since the last collection.
*/
#include "config.h"

#include "hosts/st/st.h"
#include "hosts/st/heap.h"
#include "hosts/st/proc.h"
#include "hosts/st/symbols.h"

#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#define ST_SMALL_MAX 2048
#define ST_NSIZES (ST_SMALL_MAX / 16)
#define ST_PAGE_BYTES (128 * 1024)
#define ST_GC_MIN_BYTES ((size_t)32 << 20)

typedef struct Page {
  struct Page *next;
  uint32_t szc;   /* cell size / 16 - 1 */
  uint32_t ncells;
  uint64_t pad_;
  /* cells follow, 16-byte aligned */
} Page;

struct Heap {
  Obj *free[ST_NSIZES];      /* free lists, linked through the n field */
  Page *pages[ST_NSIZES];
  uint32_t npages[ST_NSIZES];
  Obj **large;               /* big objects */
  size_t nlarge, caplarge;
  size_t since_gc;           /* bytes allocated since the last collection */
  size_t threshold;          /* collect when since_gc exceeds it */
  size_t live;               /* bytes live after the last collection */
  Obj **mstack;              /* mark stack */
  size_t msp, mcap;
  uint64_t collections;
  size_t limit;              /* no object may be larger (memory_limit) */
  int64_t work;              /* the collector's units to its next sample
                                point (st_prof_work) */
};

/* ===================================================================== */
/* Allocation                                                            */
/* ===================================================================== */

/* The most memory the heap may hold: the machine's physical memory, or
** the process's address-space or data limit if lower. An object that
** cannot fit under it is refused at once, rather than granted by an
** overcommitting kernel and then filled page by page until the OOM
** killer ends the run with nothing saved. */
static size_t memory_limit(void) {
  size_t lim = SIZE_MAX;
  long pages = sysconf(_SC_PHYS_PAGES), psize = sysconf(_SC_PAGESIZE);
  if (pages > 0 && psize > 0) lim = (size_t)pages * (size_t)psize;
  struct rlimit rl;
  if (getrlimit(RLIMIT_AS, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY &&
      rl.rlim_cur < lim)
    lim = (size_t)rl.rlim_cur;
  if (getrlimit(RLIMIT_DATA, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY &&
      rl.rlim_cur < lim)
    lim = (size_t)rl.rlim_cur;
  return lim;
}

int st_heap_init(VM *vm) {
  vm->heap = calloc(1, sizeof(Heap));
  if (!vm->heap) return -1;
  vm->heap->threshold = ST_GC_MIN_BYTES;
  vm->heap->limit = memory_limit();
  return 0;
}

void st_heap_free(VM *vm) {
  Heap *h = vm->heap;
  if (!h) return;
  for (int i = 0; i < ST_NSIZES; i++) {
    Page *p = h->pages[i];
    while (p) {
      Page *n = p->next;
      free(p);
      p = n;
    }
  }
  for (size_t i = 0; i < h->nlarge; i++) free(h->large[i]);
  free(h->large);
  free(h->mstack);
  free(h);
  vm->heap = NULL;
}

static void *xmalloc(size_t n) {
  void *p = malloc(n);
  if (!p) st_out_of_memory(n);
  return p;
}

/* Carve a new page for size class szc into its free list. Its first
** touch faults its memory in (tens of microseconds on a VM) inside
** interpreter code that runs no check: a tick after it marks a deadline
** passed meanwhile, for the next poll, where the tick's planning would
** have skipped it (vm-hooks/mark.c). */
static void refill(VM *vm, Heap *h, uint32_t szc) {
  size_t cell = (size_t)(szc + 1) * 16;
  size_t ncells = (ST_PAGE_BYTES - sizeof(Page)) / cell;
  Page *p = xmalloc(sizeof(Page) + ncells * cell);
  p->szc = szc;
  p->ncells = (uint32_t)ncells;
  p->next = h->pages[szc];
  h->pages[szc] = p;
  h->npages[szc]++;
  char *c = (char *)(p + 1);
  for (size_t i = ncells; i-- > 0;) {
    Obj *o = (Obj *)(c + i * cell);
    o->cls = CID_NONE;
    o->mark = 0;
    o->n = (uint64_t)(uintptr_t)h->free[szc];
    h->free[szc] = o;
  }
  st_prof_tick(vm);
}

/* Fill a new object: n slots of nil, or payload zero bytes. From a
** primitive (prim), a large one fills in pieces with a sample point
** between them (st_prof_work): filling 2 M slots takes milliseconds. */
static void fill(VM *vm, Obj *o, int fmt, uint64_t n, size_t payload,
                 int prim) {
  uint64_t units = fmt == FMT_PTR ? n : payload / sizeof(Value);
  uint64_t piece = prim ? ST_PROF_WORK : units;
  for (uint64_t at = 0; at < units; at += piece) {
    if (at) st_prof_work(vm);
    uint64_t k = units - at < piece ? units - at : piece;
    Value *s = (Value *)(o + 1) + at;
    if (fmt == FMT_PTR) {
      Value nil = vm->nil;
      for (uint64_t i = 0; i < k; i++) s[i] = nil;
    } else {
      memset(s, 0, k * sizeof(Value));
    }
  }
}

/* Allocate an object of class cid: n slots (FMT_PTR, filled with nil) or
** n bytes (FMT_BYTES, zeroed and padded with zeros to a multiple of 8, so
** large-integer primitives can treat the bytes as 64-bit limbs). Answers 0
** when the memory is not there and !fatal; with fatal set that ends the
** run (st_out_of_memory). prim: called from a primitive (fill). */
static Value alloc_obj(VM *vm, uint32_t cid, int fmt, uint64_t n, int fatal,
                       int prim) {
  Heap *h = vm->heap;
  /* n is at most 2^40 here (callers check): the sums cannot wrap. */
  size_t payload = fmt == FMT_PTR ? n * sizeof(Value) : (n + 7) & ~(size_t)7;
  size_t total = (sizeof(Obj) + payload + 15) & ~(size_t)15;
  Obj *o;
  if (total <= ST_SMALL_MAX) {
    uint32_t szc = (uint32_t)(total / 16 - 1);
    if (!h->free[szc]) refill(vm, h, szc);
    o = h->free[szc];
    h->free[szc] = (Obj *)(uintptr_t)o->n;
    o->szc = (uint16_t)szc;
  } else {
    if (h->nlarge == h->caplarge) {
      size_t ncap = h->caplarge ? h->caplarge * 2 : 256;
      Obj **nl = realloc(h->large, ncap * sizeof(Obj *));
      if (!nl) {
        if (fatal) st_out_of_memory(ncap * sizeof(Obj *));
        return 0;
      }
      h->large = nl;
      h->caplarge = ncap;
    }
    o = total > h->limit ? NULL : malloc(total);
    if (!o) {
      if (fatal) st_out_of_memory(total);
      return 0;
    }
    o->szc = ST_LARGE_SZC;
    h->large[h->nlarge++] = o;
  }
  o->cls = cid;
  o->fmt = (uint8_t)fmt;
  o->mark = 0;
  o->n = n;
  fill(vm, o, fmt, n, payload, prim);
  h->since_gc += total;
  if (st_unlikely(h->since_gc > h->threshold)) {
    vm->gc_pending = 1;
    st_interrupt_soon(vm);
  }
  return (Value)o;
}

Value st_alloc(VM *vm, uint32_t cid, int fmt, uint64_t n) {
  if (n > ST_MAX_OBJ_SLOTS) st_out_of_memory(SIZE_MAX);
  return alloc_obj(vm, cid, fmt, n, 1, 0);
}

Value st_alloc_prim(VM *vm, uint32_t cid, int fmt, uint64_t n) {
  if (n > ST_MAX_OBJ_SLOTS) st_out_of_memory(SIZE_MAX);
  return alloc_obj(vm, cid, fmt, n, 1, 1);
}

/* An allocation the script asked for (Array new: n): 0 when it cannot be
** had, after a collection to make room, so that the primitive fails and
** the script gets an OutOfMemory error it can handle. Called only from
** primitives, whose caller has saved the interpreter's state: every live
** value is then reachable from the roots, and collecting here is safe. */
Value st_alloc_try(VM *vm, uint32_t cid, int fmt, uint64_t n) {
  if (n > ST_MAX_OBJ_SLOTS) return 0;
  Value v = alloc_obj(vm, cid, fmt, n, 0, 1);
  if (!v) {
    st_gc(vm);
    v = alloc_obj(vm, cid, fmt, n, 0, 1);
  }
  return v;
}

Value st_new_slots(VM *vm, uint32_t cid, uint64_t n) {
  return st_alloc(vm, cid, FMT_PTR, n);
}

Value st_new_bytes(VM *vm, uint32_t cid, uint64_t nbytes) {
  return st_alloc(vm, cid, FMT_BYTES, nbytes);
}

Value st_new_array(VM *vm, uint64_t n) {
  return st_alloc(vm, CID_ARRAY, FMT_PTR, n);
}

Value st_new_string(VM *vm, const char *s, size_t len) {
  Value v = st_alloc(vm, CID_STRING, FMT_BYTES, len);
  if (len) memcpy(BYTES(v), s, len);
  return v;
}

Value st_new_float(VM *vm, double d) {
  Value v = st_alloc(vm, CID_FLOAT, FMT_BYTES, sizeof d);
  memcpy(BYTES(v), &d, sizeof d);
  return v;
}

Value st_new_assoc(VM *vm, Value k, Value v) {
  Value a = st_alloc(vm, CID_ASSOC, FMT_PTR, ASSOC_NSLOTS);
  SLOTS(a)[ASSOC_KEY] = k;
  SLOTS(a)[ASSOC_VALUE] = v;
  return a;
}

/* Identity hashes come from the address: objects never move. */
uint32_t st_identity_hash(Value v) {
  uint64_t x = (uint64_t)v >> 4;
  x *= 0x9E3779B97F4A7C15ull;
  return (uint32_t)(x >> 40) & 0x3FFFFF;
}

size_t st_heap_live_bytes(VM *vm) {
  return vm->heap->live;
}

/* ===================================================================== */
/* Marking                                                               */
/* ===================================================================== */

static void push_mark(Heap *h, Obj *o) {
  if (h->msp == h->mcap) {
    h->mcap = h->mcap ? h->mcap * 2 : 4096;
    h->mstack = realloc(h->mstack, h->mcap * sizeof(Obj *));
    if (!h->mstack) st_out_of_memory(h->mcap * sizeof(Obj *));
  }
  h->mstack[h->msp++] = o;
}

static void mark_value(VM *vm, Value v) {
  if (!IS_PTR(v) || v == 0) return;
  Obj *o = OBJ(v);
  if (o->mark) return;
  o->mark = 1;
  if (o->fmt == FMT_PTR && o->n) push_mark(vm->heap, o);
}

/* The collector's sample points: every ST_PROF_WORK slots marked or
** cells swept (st_prof_work). */
static inline void gc_work(VM *vm, Heap *h, int64_t units) {
  if ((h->work -= units) <= 0) {
    h->work = ST_PROF_WORK;
    st_prof_work(vm);
  }
}

static void drain(VM *vm) {
  Heap *h = vm->heap;
  while (h->msp) {
    Obj *o = h->mstack[--h->msp];
    Value *s = (Value *)(o + 1);
    for (uint64_t i = 0; i < o->n; i++) {
      gc_work(vm, h, 1);
      Value v = s[i];
      if (IS_PTR(v) && v != 0 && !OBJ(v)->mark) {
        OBJ(v)->mark = 1;
        if (OBJ(v)->fmt == FMT_PTR && OBJ(v)->n) push_mark(h, OBJ(v));
      }
    }
  }
}

static void mark_proc(VM *vm, Proc *p) {
  mark_value(vm, p->obj);
  mark_value(vm, p->waiting_on);
  for (Value *s = p->stack; s < p->sp; s++) mark_value(vm, *s);
  for (Frame *f = p->frames; f <= p->f; f++) mark_value(vm, f->closure);
}

static void mark_roots(VM *vm) {
  mark_value(vm, vm->nil);
  mark_value(vm, vm->vtrue);
  mark_value(vm, vm->vfalse);
  mark_value(vm, vm->globals);
  mark_value(vm, vm->script_vars);
  mark_value(vm, vm->unbound);
  mark_value(vm, vm->argv);
  for (int i = 0; i < SP__COUNT; i++) mark_value(vm, vm->specials[i]);
  for (uint32_t i = 1; i < vm->nclasses; i++) {
    ClassInfo *c = &vm->classes[i];
    mark_value(vm, c->obj);
    mark_value(vm, c->name);
    mark_value(vm, c->ivnames);
    mark_value(vm, c->pool);
    for (uint32_t k = 0; k < c->md.cap; k++)
      if (c->md.keys[k]) mark_value(vm, c->md.keys[k]);
  }
  for (uint32_t i = 0; i < vm->nmethods; i++) {
    Method *m = vm->methods[i];
    mark_value(vm, m->sel);
    for (uint32_t k = 0; k < m->nlits; k++) mark_value(vm, m->lits[k]);
    for (uint32_t k = 0; k < m->nsites; k++) mark_value(vm, m->sites[k].sel);
  }
  st_syms_mark(vm, mark_value);
  for (uint32_t i = 0; i < vm->nprocs; i++) mark_proc(vm, vm->procs[i]);
  for (uint32_t i = 0; i < vm->ntimers; i++) mark_value(vm, vm->timers[i].sem);
  drain(vm);
}

/* ===================================================================== */
/* Sweeping                                                              */
/* ===================================================================== */

static size_t sweep(VM *vm) {
  Heap *h = vm->heap;
  size_t live = 0;
  for (uint32_t szc = 0; szc < ST_NSIZES; szc++) {
    size_t cell = (size_t)(szc + 1) * 16;
    Obj *freelist = NULL;
    Page **pp = &h->pages[szc];
    while (*pp) {
      Page *p = *pp;
      char *c = (char *)(p + 1);
      Obj *pfree = freelist;
      uint32_t nlive = 0;
      gc_work(vm, h, p->ncells);
      for (uint32_t i = 0; i < p->ncells; i++) {
        Obj *o = (Obj *)(c + i * cell);
        if (o->cls != CID_NONE && o->mark) {
          o->mark = 0;
          nlive++;
          continue;
        }
        o->cls = CID_NONE;
        o->n = (uint64_t)(uintptr_t)pfree;
        pfree = o;
      }
      if (nlive == 0 && h->npages[szc] > 1) {
        /* An empty page goes back to malloc; its cells never joined the
        ** list (pfree is dropped, freelist keeps the previous pages). */
        *pp = p->next;
        h->npages[szc]--;
        free(p);
        continue;
      }
      freelist = pfree;
      live += (size_t)nlive * cell;
      pp = &p->next;
    }
    h->free[szc] = freelist;
  }
  size_t j = 0;
  for (size_t i = 0; i < h->nlarge; i++) {
    gc_work(vm, h, 16);
    Obj *o = h->large[i];
    if (o->mark) {
      o->mark = 0;
      live += sizeof(Obj) + (o->fmt == FMT_PTR ? o->n * 8 : o->n);
      h->large[j++] = o;
    } else {
      free(o);
    }
  }
  h->nlarge = j;
  return live;
}

/* Collect now. Only called at a safe point (or when nothing runs). */
void st_gc(VM *vm) {
  Heap *h = vm->heap;
  ST_GC_BEGIN(vm);
  mark_roots(vm);
  h->live = sweep(vm);
  h->since_gc = 0;
  h->threshold = h->live > ST_GC_MIN_BYTES ? h->live : ST_GC_MIN_BYTES;
  h->collections++;
  vm->gc_pending = 0;
  ST_GC_END(vm);
}
