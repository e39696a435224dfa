/*
** hosts/st/classes.h: the class table, method dictionaries, lookup and
** the method cache, globals (classes.c).
*/
#ifndef ST_CLASSES_H
#define ST_CLASSES_H

#include "hosts/st/st.h"

int st_boot(VM *vm);
uint32_t st_new_class(VM *vm, Value name, uint32_t super, int fmt,
                      int indexed);
void st_class_set_super(VM *vm, uint32_t cid, uint32_t super);
int st_class_add_ivar(VM *vm, uint32_t cid, Value name);
int st_class_ivar_index(VM *vm, uint32_t cid, Value name);
Value st_class_pool_lookup(VM *vm, uint32_t cid, Value name);
Value st_class_pool_define(VM *vm, uint32_t cid, Value name);
void st_install_method(VM *vm, uint32_t cid, Method *m);
Method *st_lookup(VM *vm, uint32_t cid, Value sel);
Method *st_lookup_cached(VM *vm, uint32_t cid, Value sel);
void st_flush_caches(VM *vm);
Value st_global_binding(VM *vm, Value name, int create);
void st_global_set(VM *vm, const char *name, Value v);
uint32_t st_class_by_name(VM *vm, const char *name);
/* Name a class for printing: "Point", "Point class". */
const char *st_class_name(VM *vm, uint32_t cid, char *buf, size_t len);
Method *st_method_new(VM *vm);
/* Printable "Class>>sel" / "[] in Class>>sel" for method m run by a
** receiver of class rcid (0: the defining class). */
const char *st_method_name(VM *vm, Method *m, uint32_t rcid, char *buf,
                           size_t len);

#endif
