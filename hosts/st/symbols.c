/*
** hosts/st/symbols.c: the Symbol table.
**
** Symbols are unique byte objects of class Symbol, kept for the life of the
** VM (they are roots), found through an open-addressing table keyed by
** their bytes. Selectors are compared by identity everywhere else.
*/
#include "config.h"

#include "hosts/st/st.h"
#include "hosts/st/heap.h"
#include "hosts/st/symbols.h"

#include <stdlib.h>
#include <string.h>

struct SymTab {
  Value *slots;
  uint32_t cap, count;
};

static uint32_t hash_bytes(const char *s, size_t len) {
  uint32_t h = 2166136261u;
  for (size_t i = 0; i < len; i++) {
    h ^= (uint8_t)s[i];
    h *= 16777619u;
  }
  return h;
}

int st_syms_init(VM *vm) {
  vm->syms = calloc(1, sizeof(SymTab));
  if (!vm->syms) return -1;
  vm->syms->cap = 4096;
  vm->syms->slots = calloc(vm->syms->cap, sizeof(Value));
  return vm->syms->slots ? 0 : -1;
}

void st_syms_free(VM *vm) {
  if (!vm->syms) return;
  free(vm->syms->slots);
  free(vm->syms);
  vm->syms = NULL;
}

static void grow(SymTab *t) {
  uint32_t ncap = t->cap * 2;
  Value *ns = calloc(ncap, sizeof(Value));
  if (!ns) st_out_of_memory((size_t)ncap * sizeof(Value));
  for (uint32_t i = 0; i < t->cap; i++) {
    Value v = t->slots[i];
    if (!v) continue;
    uint32_t k = hash_bytes((char *)BYTES(v), NSLOTS(v)) & (ncap - 1);
    while (ns[k]) k = (k + 1) & (ncap - 1);
    ns[k] = v;
  }
  free(t->slots);
  t->slots = ns;
  t->cap = ncap;
}

Value st_intern(VM *vm, const char *s, size_t len) {
  SymTab *t = vm->syms;
  uint32_t k = hash_bytes(s, len) & (t->cap - 1);
  for (;;) {
    Value v = t->slots[k];
    if (!v) break;
    if (NSLOTS(v) == len && memcmp(BYTES(v), s, len) == 0) return v;
    k = (k + 1) & (t->cap - 1);
  }
  Value sym = st_alloc(vm, CID_SYMBOL, FMT_BYTES, len);
  memcpy(BYTES(sym), s, len);
  t->slots[k] = sym;
  if (++t->count * 2 > t->cap) grow(t);
  return sym;
}

Value st_sym(VM *vm, const char *s) {
  return st_intern(vm, s, strlen(s));
}

void st_syms_mark(VM *vm, void (*mark)(VM *, Value)) {
  SymTab *t = vm->syms;
  for (uint32_t i = 0; i < t->cap; i++)
    if (t->slots[i]) mark(vm, t->slots[i]);
}

const char *st_cstr(Value s, char *buf, size_t len) {
  size_t n = NSLOTS(s);
  if (n >= len) n = len - 1;
  memcpy(buf, BYTES(s), n);
  buf[n] = '\0';
  return buf;
}

/* Arguments a selector takes: colons for keywords, 1 for binary. */
int st_sym_nargs(Value sym) {
  const uint8_t *b = BYTES(sym);
  size_t n = NSLOTS(sym);
  if (n == 0) return 0;
  int c = b[0];
  if (!(c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')))
    return 1;
  int k = 0;
  for (size_t i = 0; i < n; i++) k += b[i] == ':';
  return k;
}
