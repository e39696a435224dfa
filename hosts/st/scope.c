/*
** hosts/st/scope.c: the compiler's first pass.
**
** Every name is resolved against a chain of lexical scopes; sends of
** ifTrue:, whileTrue:, to:do:, and:, ifNil: ... with literal blocks are
** marked for inlining (their blocks' names join the enclosing real scope);
** variables used by inner real blocks are marked captured. Storage then
** follows Squeak's closure design: a captured temporary that is assigned
** lives in a per-activation temp vector (an Array), a captured argument or
** read-only temporary is copied into the closure, and each real scope's
** frame holds its receiver, arguments, copied values and temporaries.
*/
#include "config.h"

#include "hosts/st/compile.h"
#include "hosts/st/symbols.h"
#include "hosts/st/classes.h"

#include <stdlib.h>
#include <string.h>

static void pvv_push(Comp *c, PVecV *v, void *x) {
  if (v->n == v->cap) {
    int ncap = v->cap ? v->cap * 2 : 8;
    void **nv = st_arena_alloc(c->arena, (size_t)ncap * sizeof(void *));
    if (v->n) memcpy(nv, v->v, (size_t)v->n * sizeof(void *));
    v->v = nv;
    v->cap = ncap;
  }
  v->v[v->n++] = x;
}

static Var *new_var(Comp *c, char *name, VarKind k, Scope *s) {
  Var *v = st_arena_alloc(c->arena, sizeof(Var));
  v->name = name;
  v->kind = k;
  v->scope = s;
  if (s) pvv_push(c, &s->vars, v);
  return v;
}

static Scope *new_scope(Comp *c, Scope *outer, Node *blk) {
  Scope *s = st_arena_alloc(c->arena, sizeof(Scope));
  s->outer = outer;
  s->block = blk;
  s->depth = outer ? outer->depth + 1 : 0;
  blk->scope = s;
  pvv_push(c, &c->scopes, s);
  return s;
}

/* ===================================================================== */
/* Pass 1: resolution and inlining                                       */
/* ===================================================================== */

static Lex *lex_push(Comp *c, Lex *parent, char **names, int n, Scope *s,
                     VarKind k, Node *where) {
  Lex *l = st_arena_alloc(c->arena, sizeof(Lex));
  l->parent = parent;
  l->vars = st_arena_alloc(c->arena, (size_t)(n ? n : 1) * sizeof(Var *));
  for (int i = 0; i < n; i++) {
    for (int j = 0; j < i; j++)
      if (strcmp(names[i], names[j]) == 0)
        ERR(where, "duplicate name '%s'", names[i]);
    l->vars[i] = new_var(c, names[i], k, s);
  }
  l->n = n;
  return l;
}

static int is_block(Node *n, int nparams) {
  return n && n->kind == N_BLOCK && n->nparams == nparams;
}

/* Decide whether a send compiles to inline control flow. */
static int inlinable(Node *s) {
  const char *sel = s->sel;
  Node **a = s->args;
  if (s->value == NULL) return 0; /* cascade parts are real sends */
  if (!strcmp(sel, "ifTrue:") || !strcmp(sel, "ifFalse:") ||
      !strcmp(sel, "and:") || !strcmp(sel, "or:"))
    return is_block(a[0], 0);
  if (!strcmp(sel, "ifTrue:ifFalse:") || !strcmp(sel, "ifFalse:ifTrue:"))
    return is_block(a[0], 0) && is_block(a[1], 0);
  if (!strcmp(sel, "whileTrue:") || !strcmp(sel, "whileFalse:"))
    return is_block(s->value, 0) && is_block(a[0], 0);
  if (!strcmp(sel, "whileTrue") || !strcmp(sel, "whileFalse") ||
      !strcmp(sel, "repeat"))
    return is_block(s->value, 0);
  if (!strcmp(sel, "to:do:")) return is_block(a[1], 1);
  if (!strcmp(sel, "to:by:do:")) return is_block(a[2], 1);
  if (!strcmp(sel, "ifNil:")) return is_block(a[0], 0);
  if (!strcmp(sel, "ifNotNil:"))
    return is_block(a[0], 0) || is_block(a[0], 1);
  if (!strcmp(sel, "ifNil:ifNotNil:"))
    return is_block(a[0], 0) && (is_block(a[1], 0) || is_block(a[1], 1));
  if (!strcmp(sel, "ifNotNil:ifNil:"))
    return is_block(a[1], 0) && (is_block(a[0], 0) || is_block(a[0], 1));
  return 0;
}

static void resolve(Comp *c, Node *n, Lex *lex, Scope *s);

static Var *lookup_name(Comp *c, Node *n, Lex *lex, Scope *s) {
  VM *vm = c->vm;
  for (Lex *l = lex; l; l = l->parent)
    for (int i = l->n - 1; i >= 0; i--)
      if (strcmp(l->vars[i]->name, n->name) == 0) {
        Var *v = l->vars[i];
        if (v->scope && v->scope != s) {
          v->captured = 1;
          for (Scope *t = s; t && t != v->scope; t = t->outer)
            if (pvv_index(&t->needs, v) < 0) pvv_push(c, &t->needs, v);
        }
        return v;
      }
  const char *nm = n->name;
  if (!strcmp(nm, "self")) return new_var(c, n->name, V_SELF, NULL);
  if (!strcmp(nm, "super")) return new_var(c, n->name, V_SUPER, NULL);
  if (!strcmp(nm, "thisContext")) ERR(n, "thisContext is not supported");
  Value sym = st_sym(vm, nm);
  int iv = st_class_ivar_index(vm, c->cid, sym);
  if (iv >= 0) {
    Var *v = new_var(c, n->name, V_IVAR, NULL);
    v->ivar = iv;
    return v;
  }
  Value b = st_class_pool_lookup(vm, c->cid, sym);
  if (!b) b = st_script_binding(vm, sym, 0);
  if (!b && (nm[0] >= 'A' && nm[0] <= 'Z')) b = st_global_binding(vm, sym, 1);
  if (!b && c->is_doit) b = st_script_binding(vm, sym, 1);
  if (!b) ERR(n, "undeclared variable '%s'", nm);
  Var *v = new_var(c, n->name, V_GLOBAL, NULL);
  v->binding = b;
  return v;
}

/* Resolve an inlined block: its names join the current real scope. */
static void resolve_inlined(Comp *c, Node *b, Lex *lex, Scope *s) {
  Lex *l = lex_push(c, lex, b->params, b->nparams, s, V_TEMP, b);
  l = lex_push(c, l, b->temps, b->ntemps, s, V_TEMP, b);
  for (int i = 0; i < b->nlist; i++) resolve(c, b->list[i], l, s);
}

static void resolve(Comp *c, Node *n, Lex *lex, Scope *s) {
  switch (n->kind) {
  case N_LIT:
    return;
  case N_VAR:
    n->var = lookup_name(c, n, lex, s);
    return;
  case N_ASSIGN: {
    Node tmp = *n;
    tmp.kind = N_VAR;
    n->var = lookup_name(c, &tmp, lex, s);
    VarKind k = n->var->kind;
    if (k == V_ARG) ERR(n, "cannot assign to argument '%s'", n->name);
    if (k == V_SELF || k == V_SUPER) ERR(n, "cannot assign to '%s'", n->name);
    n->var->assigned = 1;
    resolve(c, n->value, lex, s);
    return;
  }
  case N_RETURN:
    resolve(c, n->value, lex, s);
    return;
  case N_BRACE:
  case N_CASCADE:
    if (n->kind == N_CASCADE) resolve(c, n->value, lex, s);
    for (int i = 0; i < n->nlist; i++) resolve(c, n->list[i], lex, s);
    return;
  case N_SEND:
    if (inlinable(n)) {
      n->inlined = 1;
      if (!strncmp(n->sel, "to:", 3))
        n->var = new_var(c, "<limit>", V_TEMP, s);
      if (!strcmp(n->sel, "to:by:do:") &&
          !(n->args[1]->kind == N_LIT && n->args[1]->lit->kind == L_INT &&
            n->args[1]->lit->i != 0))
        n->step = new_var(c, "<step>", V_TEMP, s);
      if (n->value->kind == N_BLOCK &&
          (strncmp(n->sel, "while", 5) == 0 || !strcmp(n->sel, "repeat")))
        resolve_inlined(c, n->value, lex, s);
      else
        resolve(c, n->value, lex, s);
      for (int i = 0; i < n->nargs; i++) {
        if (n->args[i]->kind == N_BLOCK) resolve_inlined(c, n->args[i], lex, s);
        else resolve(c, n->args[i], lex, s);
      }
      return;
    }
    if (n->value) resolve(c, n->value, lex, s);
    for (int i = 0; i < n->nargs; i++) resolve(c, n->args[i], lex, s);
    return;
  case N_BLOCK: {
    Scope *bs = new_scope(c, s, n);
    Lex *l = lex_push(c, lex, n->params, n->nparams, bs, V_ARG, n);
    bs->nargs = n->nparams;
    l = lex_push(c, l, n->temps, n->ntemps, bs, V_TEMP, n);
    for (int i = 0; i < n->nlist; i++) resolve(c, n->list[i], l, bs);
    return;
  }
  }
}

/* Storage: temp vectors, copied values and frame slots for every scope. */
static void assign_storage(Comp *c) {
  for (int i = 0; i < c->scopes.n; i++) {
    Scope *s = c->scopes.v[i];
    for (int k = 0; k < s->vars.n; k++) {
      Var *v = s->vars.v[k];
      if (v->kind == V_TEMP && v->captured && v->assigned) {
        v->in_vector = 1;
        v->vec_index = s->nvec++;
      }
    }
    if (s->nvec) {
      s->vecvar = new_var(c, "<tempvector>", V_TEMP, s);
    }
  }
  for (int i = 0; i < c->scopes.n; i++) {
    Scope *s = c->scopes.v[i];
    for (int k = 0; k < s->needs.n; k++) {
      Var *v = s->needs.v[k];
      Var *held = v->in_vector ? v->scope->vecvar : v;
      if (pvv_index(&s->copied, held) < 0) pvv_push(c, &s->copied, held);
    }
    /* Slots: 0 self, args, copied values, then temps. */
    int slot = 1;
    for (int k = 0; k < s->vars.n; k++) {
      Var *v = s->vars.v[k];
      if (v->kind == V_ARG) v->slot = slot++;
    }
    slot += s->copied.n;
    for (int k = 0; k < s->vars.n; k++) {
      Var *v = s->vars.v[k];
      if (v->kind == V_TEMP && !v->in_vector) {
        v->slot = slot++;
        s->ntemps++;
      }
    }
  }
}

/* Resolve a whole method (or DoIt) and lay out its scopes. */
Scope *st_resolve(Comp *c, MethodAst *ast) {
  Node *body = ast->body;
  body->params = ast->params;
  body->nparams = ast->nparams;
  Scope *s = new_scope(c, NULL, body);
  s->nargs = ast->nparams;
  Lex *l = lex_push(c, NULL, ast->params, ast->nparams, s, V_ARG, body);
  l = lex_push(c, l, body->temps, body->ntemps, s, V_TEMP, body);
  for (int i = 0; i < body->nlist; i++) resolve(c, body->list[i], l, s);
  assign_storage(c);
  return s;
}
