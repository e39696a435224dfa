/*
** hosts/st/symbols.h: interned Symbols and C strings (symbols.c).
*/
#ifndef ST_SYMBOLS_H
#define ST_SYMBOLS_H

#include "hosts/st/st.h"

int st_syms_init(VM *vm);
void st_syms_free(VM *vm);
Value st_intern(VM *vm, const char *s, size_t len);
Value st_sym(VM *vm, const char *s);
void st_syms_mark(VM *vm, void (*mark)(VM *, Value));
/* Copy a String/Symbol's bytes into buf as a C string (truncating). */
const char *st_cstr(Value s, char *buf, size_t len);
int st_sym_nargs(Value sym);

#endif
