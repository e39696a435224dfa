/*
** hosts/st/compile.h: the compiler's interface (compile.c, loader.c).
*/
#ifndef ST_COMPILE_H
#define ST_COMPILE_H

#include "hosts/st/parse.h"
#include "hosts/st/st.h"

typedef struct PVecV {
  void **v;
  int n, cap;
} PVecV;

/* ===================================================================== */
/* The compiler's own structures (scope.c and compile.c)                 */
/* ===================================================================== */

typedef enum { V_TEMP, V_ARG, V_IVAR, V_GLOBAL, V_SELF, V_SUPER } VarKind;

typedef struct Var {
  char *name;
  VarKind kind;
  struct Scope *scope;   /* declaring real scope (temps and args) */
  int slot;              /* frame slot in the declaring scope */
  int ivar;              /* V_IVAR: slot index */
  Value binding;         /* V_GLOBAL: the Association */
  int captured, assigned, in_vector, vec_index;
} Var;

typedef struct Scope {
  struct Scope *outer;
  Node *block;
  PVecV vars;            /* declared here: args first, then temps */
  int nargs;
  PVecV needs;           /* outer variables used inside */
  PVecV copied;          /* what the closure copies (after storage pass) */
  Var *vecvar;           /* hidden temp holding the temp vector, or NULL */
  int nvec;
  int depth;
  int ntemps;            /* frame temps after args and copied values */
} Scope;

/* Lexical visibility (inlined blocks add names but not storage). */
typedef struct Lex {
  struct Lex *parent;
  Var **vars;
  int n;
} Lex;

typedef struct Comp {
  VM *vm;
  Lexer *lx;
  uint32_t cid;          /* class the method is compiled in */
  int is_doit;
  Value sel;             /* selector of the method (nil for a DoIt) */
  PVecV scopes;          /* every real scope, outermost first */
  Arena *arena;
} Comp;

static inline int pvv_index(PVecV *v, void *x) {
  for (int i = 0; i < v->n; i++)
    if (v->v[i] == x) return i;
  return -1;
}

#define ERR(node, ...)                                                    \
  st_syntax_error(c->lx, (node)->line, (node)->col, __VA_ARGS__)

/* Pass 1 (scope.c): resolve names, choose inlined sends, find captured
** variables and lay out every scope's frame. Returns the method scope. */
Scope *st_resolve(Comp *c, MethodAst *ast);

/* Compile a parsed method (or DoIt when ast->sel is NULL) for class cid.
** Errors longjmp through the lexer like syntax errors. The Method is in
** the method table; the caller installs it (methods) or runs it (DoIts). */
Method *st_compile(VM *vm, Lexer *lx, MethodAst *ast, uint32_t cid,
                   const char *file);

/* The Association of a top-level variable; created (nil) when create. */
Value st_script_binding(VM *vm, Value name, int create);

/* A literal as an object (numbers, strings, symbols, arrays). */
Value st_literal_value(VM *vm, Lit *l);

#endif
