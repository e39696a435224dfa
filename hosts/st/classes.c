/*
** hosts/st/classes.c: classes, method dictionaries, lookup and globals.
**
** Classes live in a C table indexed by class id (the id is what objects
** carry in their header and what inline caches compare); each has a
** Smalltalk class object (an instance of its metaclass) whose slot 0 holds
** the id. Bootstrap creates the classes whose layout the VM knows, with
** provisional superclasses; the kernel files then declare them properly.
** Compiled methods are C structures in vm->methods for the whole run: the
** index is the stable method id used in profiler frame keys.
*/
#include "config.h"

#include "hosts/st/st.h"
#include "hosts/st/heap.h"
#include "hosts/st/symbols.h"
#include "hosts/st/classes.h"

#include <stdlib.h>
#include <string.h>

#define MCACHE_SIZE 4096

static void *xcalloc(size_t n, size_t sz) {
  void *p = calloc(n, sz);
  if (!p) st_out_of_memory(n * sz);
  return p;
}

/* ===================================================================== */
/* Method dictionaries                                                   */
/* ===================================================================== */

static uint32_t sel_hash(Value sel) {
  return (uint32_t)(((uint64_t)sel >> 4) * 0x9E3779B1u);
}

static Method *md_get(MethodDict *d, Value sel) {
  if (!d->cap) return NULL;
  uint32_t k = sel_hash(sel) & (d->cap - 1);
  for (;;) {
    if (d->keys[k] == sel) return d->vals[k];
    if (!d->keys[k]) return NULL;
    k = (k + 1) & (d->cap - 1);
  }
}

static void md_put(MethodDict *d, Value sel, Method *m) {
  if ((d->count + 1) * 2 > d->cap) {
    MethodDict n = {0};
    n.cap = d->cap ? d->cap * 2 : 16;
    n.keys = xcalloc(n.cap, sizeof(Value));
    n.vals = xcalloc(n.cap, sizeof(Method *));
    for (uint32_t i = 0; i < d->cap; i++)
      if (d->keys[i]) md_put(&n, d->keys[i], d->vals[i]);
    free(d->keys);
    free(d->vals);
    *d = n;
  }
  uint32_t k = sel_hash(sel) & (d->cap - 1);
  while (d->keys[k] && d->keys[k] != sel) k = (k + 1) & (d->cap - 1);
  if (!d->keys[k]) d->count++;
  d->keys[k] = sel;
  d->vals[k] = m;
}

/* ===================================================================== */
/* Classes                                                               */
/* ===================================================================== */

static uint32_t new_info(VM *vm) {
  if (vm->nclasses == vm->capclasses) {
    vm->capclasses = vm->capclasses ? vm->capclasses * 2 : 128;
    vm->classes = realloc(vm->classes, vm->capclasses * sizeof(ClassInfo));
    if (!vm->classes)
      st_out_of_memory(vm->capclasses * sizeof(ClassInfo));
  }
  uint32_t id = vm->nclasses++;
  memset(&vm->classes[id], 0, sizeof(ClassInfo));
  return id;
}

/* Create a class and its metaclass; returns the class id. */
uint32_t st_new_class(VM *vm, Value name, uint32_t super, int fmt,
                      int indexed) {
  uint32_t cid = new_info(vm);
  uint32_t mid = new_info(vm);
  ClassInfo *c = &vm->classes[cid], *mc = &vm->classes[mid];
  c->name = name;
  c->meta = mid;
  c->fmt = (uint8_t)fmt;
  c->indexed = (uint8_t)indexed;
  c->ivnames = vm->nil;
  c->pool = vm->nil;
  mc->name = vm->nil;
  mc->meta = cid;
  mc->is_meta = 1;
  mc->fmt = FMT_PTR;
  mc->ninst = 1;
  mc->ivnames = vm->nil;
  mc->pool = vm->nil;
  c->obj = st_alloc(vm, mid, FMT_PTR, 1 + CLASS_EXTRA_SLOTS);
  SLOTS(c->obj)[0] = MK_INT(cid);
  mc->obj = st_alloc(vm, CID_METACLASS, FMT_PTR, 1 + CLASS_EXTRA_SLOTS);
  SLOTS(mc->obj)[0] = MK_INT(mid);
  st_class_set_super(vm, cid, super);
  return cid;
}

/* Slots of instances: the inherited ones plus this class's own names. */
static void recompute_ninst(VM *vm, uint32_t cid) {
  ClassInfo *c = &vm->classes[cid];
  uint32_t base = (c->super ? vm->classes[c->super].ninst : 0) + c->hidden;
  uint32_t own = c->ivnames == vm->nil ? 0 : (uint32_t)NSLOTS(c->ivnames);
  c->ninst = base + own;
  for (uint32_t i = 1; i < vm->nclasses; i++)
    if (vm->classes[i].super == cid && i != cid) recompute_ninst(vm, i);
}

/* Re-parent a class: instances inherit the superclass's fixed slots, and
** the metaclass follows (Object class inherits from Class). */
void st_class_set_super(VM *vm, uint32_t cid, uint32_t super) {
  ClassInfo *c = &vm->classes[cid];
  c->super = super;
  ClassInfo *mc = &vm->classes[c->meta];
  mc->super = super ? vm->classes[super].meta : CID_CLASS;
  recompute_ninst(vm, cid);
  recompute_ninst(vm, c->meta);
  st_flush_caches(vm);
}

/* Append an instance variable; returns its slot index, or -1 if the name is
** taken (in this class or an ancestor) or the class object is full. */
int st_class_add_ivar(VM *vm, uint32_t cid, Value name) {
  if (st_class_ivar_index(vm, cid, name) >= 0) return -1;
  ClassInfo *c = &vm->classes[cid];
  if (c->is_meta && c->ninst + 1 > 1 + CLASS_EXTRA_SLOTS) return -1;
  uint64_t n = c->ivnames == vm->nil ? 0 : NSLOTS(c->ivnames);
  Value a = st_new_array(vm, n + 1);
  for (uint64_t i = 0; i < n; i++) SLOTS(a)[i] = SLOTS(c->ivnames)[i];
  SLOTS(a)[n] = name;
  c->ivnames = a;
  recompute_ninst(vm, cid);
  return (int)vm->classes[cid].ninst - 1;
}

/* Slot index of a named instance variable, searching ancestors; -1. */
int st_class_ivar_index(VM *vm, uint32_t cid, Value name) {
  while (cid) {
    ClassInfo *c = &vm->classes[cid];
    if (c->ivnames != vm->nil) {
      uint64_t n = NSLOTS(c->ivnames);
      uint32_t base = c->ninst - (uint32_t)n;
      for (uint64_t i = 0; i < n; i++)
        if (SLOTS(c->ivnames)[i] == name) return (int)(base + i);
    }
    cid = c->super;
  }
  return -1;
}

/* Class variables: each class has an Array of Associations; lookups see
** the pools of the class and its superclasses (class side: the instance
** side's pools). */
Value st_class_pool_lookup(VM *vm, uint32_t cid, Value name) {
  if (vm->classes[cid].is_meta) cid = vm->classes[cid].meta;
  while (cid) {
    Value pool = vm->classes[cid].pool;
    if (pool != vm->nil)
      for (uint64_t i = 0; i < NSLOTS(pool); i++)
        if (SLOTS(SLOTS(pool)[i])[ASSOC_KEY] == name) return SLOTS(pool)[i];
    cid = vm->classes[cid].super;
  }
  return 0;
}

Value st_class_pool_define(VM *vm, uint32_t cid, Value name) {
  if (vm->classes[cid].is_meta) cid = vm->classes[cid].meta;
  ClassInfo *c = &vm->classes[cid];
  if (c->pool != vm->nil)
    for (uint64_t i = 0; i < NSLOTS(c->pool); i++)
      if (SLOTS(SLOTS(c->pool)[i])[ASSOC_KEY] == name)
        return SLOTS(c->pool)[i];
  uint64_t n = c->pool == vm->nil ? 0 : NSLOTS(c->pool);
  Value a = st_new_array(vm, n + 1);
  for (uint64_t i = 0; i < n; i++) SLOTS(a)[i] = SLOTS(c->pool)[i];
  Value assoc = st_new_assoc(vm, name, vm->nil);
  SLOTS(a)[n] = assoc;
  vm->classes[cid].pool = a;
  return assoc;
}

const char *st_class_name(VM *vm, uint32_t cid, char *buf, size_t len) {
  ClassInfo *c = &vm->classes[cid];
  char tmp[200];
  if (c->is_meta) {
    st_cstr(vm->classes[c->meta].name, tmp, sizeof tmp);
    snprintf(buf, len, "%s class", tmp);
  } else {
    st_cstr(c->name, buf, len);
  }
  return buf;
}

uint32_t st_class_by_name(VM *vm, const char *name) {
  Value b = st_global_binding(vm, st_sym(vm, name), 0);
  if (!b) return 0;
  Value c = SLOTS(b)[ASSOC_VALUE];
  if (!IS_PTR(c) || c == vm->nil) return 0;
  uint32_t k = OBJ(c)->cls;
  if (k >= vm->nclasses || !vm->classes[k].is_meta) return 0;
  return vm->classes[k].meta;
}

/* ===================================================================== */
/* Methods and lookup                                                    */
/* ===================================================================== */

Method *st_method_new(VM *vm) {
  if (vm->nmethods == vm->capmethods) {
    vm->capmethods = vm->capmethods ? vm->capmethods * 2 : 1024;
    vm->methods = realloc(vm->methods, vm->capmethods * sizeof(Method *));
    if (!vm->methods)
      st_out_of_memory(vm->capmethods * sizeof(Method *));
  }
  Method *m = xcalloc(1, sizeof(Method));
  m->id = vm->nmethods;
  m->prim = -1;
  m->home = m;
  m->sel = vm->nil;
  vm->methods[vm->nmethods++] = m;
  return m;
}

void st_flush_caches(VM *vm) {
  /* Loading a file installs a method at a time: only a cache that was
  ** filled since the last flush needs clearing. */
  if (vm->mc_dirty) memset(vm->mcache, 0, MCACHE_SIZE * sizeof(*vm->mcache));
  vm->mc_dirty = 0;
  if (!vm->ic_dirty) return;
  for (uint32_t i = 0; i < vm->nmethods; i++) {
    Method *m = vm->methods[i];
    for (uint32_t k = 0; k < m->nsites; k++) {
      m->sites[k].cid = 0;
      m->sites[k].m = NULL;
    }
  }
  vm->ic_dirty = 0;
}

void st_install_method(VM *vm, uint32_t cid, Method *m) {
  m->cid = cid;
  md_put(&vm->classes[cid].md, m->sel, m);
  st_flush_caches(vm);
}

Method *st_lookup(VM *vm, uint32_t cid, Value sel) {
  for (; cid; cid = vm->classes[cid].super) {
    Method *m = md_get(&vm->classes[cid].md, sel);
    if (m) return m;
  }
  return NULL;
}

Method *st_lookup_cached(VM *vm, uint32_t cid, Value sel) {
  uint32_t k = (sel_hash(sel) ^ (cid * 0x45D9F3Bu)) & (MCACHE_SIZE - 1);
  if (vm->mcache[k].cid == cid && vm->mcache[k].sel == sel)
    return vm->mcache[k].m;
  Method *m = st_lookup(vm, cid, sel);
  if (m) {
    vm->mc_dirty = 1;
    vm->mcache[k].cid = cid;
    vm->mcache[k].sel = sel;
    vm->mcache[k].m = m;
  }
  return m;
}

/* "Class>>sel", "Rcv(Class)>>sel", "[] in Class>>sel". */
const char *st_method_name(VM *vm, Method *m, uint32_t rcid, char *buf,
                           size_t len) {
  Method *h = m->home;
  char def[200], rcv[200], sel[256], pre[40] = "";
  st_class_name(vm, h->cid, def, sizeof def);
  if (h->sel == vm->nil) snprintf(sel, sizeof sel, "DoIt");
  else st_cstr(h->sel, sel, sizeof sel);
  if (m->depth > 0) {
    size_t d = m->depth < 8 ? m->depth : 8, k = 0;
    for (size_t i = 0; i < d; i++) pre[k++] = '[';
    for (size_t i = 0; i < d; i++) pre[k++] = ']';
    snprintf(pre + k, sizeof pre - k, " in ");
  }
  if (rcid && rcid != h->cid) {
    st_class_name(vm, rcid, rcv, sizeof rcv);
    snprintf(buf, len, "%s%s(%s)>>%s", pre, rcv, def, sel);
  } else {
    snprintf(buf, len, "%s%s>>%s", pre, def, sel);
  }
  return buf;
}

/* ===================================================================== */
/* Globals: an open-addressing Array of Associations keyed by Symbol     */
/* ===================================================================== */

static void globals_grow(VM *vm) {
  uint64_t cap = vm->globals == vm->nil ? 0 : NSLOTS(vm->globals);
  uint64_t ncap = cap ? cap * 2 : 512;
  Value old = vm->globals, a = st_new_array(vm, ncap);
  for (uint64_t i = 0; i < cap; i++) {
    Value as = SLOTS(old)[i];
    if (as == vm->nil) continue;
    uint64_t k = sel_hash(SLOTS(as)[ASSOC_KEY]) & (ncap - 1);
    while (SLOTS(a)[k] != vm->nil) k = (k + 1) & (ncap - 1);
    SLOTS(a)[k] = as;
  }
  vm->globals = a;
}

/* The binding of a global name; created unbound (value vm->unbound) when
** create is set, else 0 if missing. */
Value st_global_binding(VM *vm, Value name, int create) {
  if (vm->globals == vm->nil) {
    if (!create) return 0;
    globals_grow(vm);
  }
  uint64_t cap = NSLOTS(vm->globals);
  uint64_t k = sel_hash(name) & (cap - 1);
  for (;;) {
    Value as = SLOTS(vm->globals)[k];
    if (as == vm->nil) break;
    if (SLOTS(as)[ASSOC_KEY] == name) return as;
    k = (k + 1) & (cap - 1);
  }
  if (!create) return 0;
  if ((vm->nglobals + 1) * 2 > cap) {
    globals_grow(vm);
    return st_global_binding(vm, name, create);
  }
  Value as = st_new_assoc(vm, name, vm->unbound);
  SLOTS(vm->globals)[k] = as;
  vm->nglobals++;
  return as;
}

void st_global_set(VM *vm, const char *name, Value v) {
  SLOTS(st_global_binding(vm, st_sym(vm, name), 1))[ASSOC_VALUE] = v;
}

/* ===================================================================== */
/* Bootstrap                                                             */
/* ===================================================================== */

static const struct {
  uint32_t cid;
  const char *name;
  uint8_t fmt, indexed;
  uint32_t ninst;
} boot[] = {
  {CID_OBJECT, "Object", FMT_PTR, 0, 0},
  {CID_UNDEFINED, "UndefinedObject", FMT_PTR, 0, 0},
  {CID_TRUE, "True", FMT_PTR, 0, 0},
  {CID_FALSE, "False", FMT_PTR, 0, 0},
  {CID_SMALLINT, "SmallInteger", FMT_PTR, 0, 0},
  {CID_LARGEPOS, "LargePositiveInteger", FMT_BYTES, 1, 0},
  {CID_LARGENEG, "LargeNegativeInteger", FMT_BYTES, 1, 0},
  {CID_FLOAT, "Float", FMT_BYTES, 0, 0},
  {CID_CHARACTER, "Character", FMT_PTR, 0, 0},
  {CID_STRING, "String", FMT_BYTES, 1, 0},
  {CID_SYMBOL, "Symbol", FMT_BYTES, 1, 0},
  {CID_ARRAY, "Array", FMT_PTR, 1, 0},
  {CID_BYTEARRAY, "ByteArray", FMT_BYTES, 1, 0},
  {CID_BLOCK, "BlockClosure", FMT_PTR, 1, BLK_NSLOTS},
  {CID_PROCESS, "Process", FMT_PTR, 0, PROC_NSLOTS},
  {CID_SEMAPHORE, "Semaphore", FMT_PTR, 0, SEM_NSLOTS},
  {CID_MESSAGE, "Message", FMT_PTR, 0, MSG_NSLOTS},
  {CID_ASSOC, "Association", FMT_PTR, 0, ASSOC_NSLOTS},
  {CID_COMPILEDMETHOD, "CompiledMethod", FMT_PTR, 0, 1},
  {CID_BEHAVIOR, "Behavior", FMT_PTR, 0, 1},
  {CID_CLASS, "Class", FMT_PTR, 0, 1},
  {CID_METACLASS, "Metaclass", FMT_PTR, 0, 1},
  {CID_SCHEDULER, "ProcessorScheduler", FMT_PTR, 0, 0},
};

static const char *special_names[SP__COUNT] = {
  [SP_DNU] = "doesNotUnderstand:", [SP_MUSTBEBOOL] = "mustBeBoolean",
  [SP_CANNOTRETURN] = "cannotReturn:", [SP_NLR] = "nonLocalReturn:to:",
  [SP_VALUE] = "value", [SP_VALUE1] = "value:",
  [SP_UNDECLARED] = "undeclaredVariable:",
};

/* Build the object memory's first objects: nil, true, false, the classes
** the VM knows by layout, and the symbols it sends. */
int st_boot(VM *vm) {
  vm->nil = 0;
  vm->nil = st_alloc(vm, CID_UNDEFINED, FMT_PTR, 0);
  vm->vtrue = st_alloc(vm, CID_TRUE, FMT_PTR, 0);
  vm->vfalse = st_alloc(vm, CID_FALSE, FMT_PTR, 0);
  vm->globals = vm->nil;
  vm->script_vars = vm->nil;
  vm->argv = vm->nil;
  vm->unbound = st_alloc(vm, CID_OBJECT, FMT_PTR, 0);
  vm->mcache = xcalloc(MCACHE_SIZE, sizeof(*vm->mcache));
  new_info(vm); /* id 0: no class */
  /* The bootstrap ids must come out in enum order: reserve them first. */
  while (vm->nclasses < CID_BOOT_LAST) new_info(vm);
  for (size_t i = 0; i < sizeof boot / sizeof boot[0]; i++) {
    uint32_t cid = boot[i].cid, mid = new_info(vm);
    ClassInfo *c = &vm->classes[cid], *mc = &vm->classes[mid];
    c->name = st_sym(vm, boot[i].name);
    c->meta = mid;
    c->fmt = boot[i].fmt;
    c->indexed = boot[i].indexed;
    c->ivnames = vm->nil;
    c->pool = vm->nil;
    c->hidden = (uint8_t)(cid == CID_BEHAVIOR || cid == CID_COMPILEDMETHOD
                              ? 1 : 0);
    c->boot_ninst = boot[i].ninst;
    c->ninst = c->hidden;
    mc->meta = cid;
    mc->is_meta = 1;
    mc->fmt = FMT_PTR;
    mc->name = vm->nil;
    mc->ivnames = vm->nil;
    mc->pool = vm->nil;
  }
  for (size_t i = 0; i < sizeof boot / sizeof boot[0]; i++) {
    uint32_t cid = boot[i].cid;
    ClassInfo *c = &vm->classes[cid];
    c->obj = st_alloc(vm, c->meta, FMT_PTR, 1 + CLASS_EXTRA_SLOTS);
    SLOTS(c->obj)[0] = MK_INT(cid);
    Value mo = st_alloc(vm, CID_METACLASS, FMT_PTR, 1 + CLASS_EXTRA_SLOTS);
    SLOTS(mo)[0] = MK_INT(c->meta);
    vm->classes[c->meta].obj = mo;
  }
  /* Provisional hierarchy: everything under Object, classes under
  ** Behavior. The kernel re-declares each class with its real superclass. */
  for (size_t i = 0; i < sizeof boot / sizeof boot[0]; i++) {
    uint32_t cid = boot[i].cid;
    uint32_t sup = cid == CID_OBJECT ? 0
                   : (cid == CID_CLASS || cid == CID_METACLASS) ? CID_BEHAVIOR
                   : CID_OBJECT;
    st_class_set_super(vm, cid, sup);
    st_global_set(vm, boot[i].name, vm->classes[cid].obj);
  }
  for (int i = 0; i < SP__COUNT; i++)
    vm->specials[i] = st_sym(vm, special_names[i]);
  return 0;
}
