/*
** hosts/st/loader.h: source files to classes, methods and statements run
** (loader.c, with parse.c and compile.c).
*/
#ifndef ST_LOADER_H
#define ST_LOADER_H

#include "hosts/st/st.h"

/* Load and run a whole source file (classes, methods, statements). Returns
** 0, or the exit status to use: 2 for a syntax error (message already
** printed), 1 for an unhandled error, or what quit: asked for. */
int st_load_file(VM *vm, const char *path);
int st_load_source(VM *vm, const char *file, const char *src, size_t len);

#endif
