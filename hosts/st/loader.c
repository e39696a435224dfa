/*
** hosts/st/loader.c: the file syntax (GNU Smalltalk's bracket syntax).
**
** A file is a sequence of items, run in order:
**   Super subclass: Name [ body ]      define (or reopen) a class
**   Name extend [ body ]               add to a class
**   Name class extend [ body ]         add to its metaclass
**   Name >> pattern [ code ]           one method (Name class >> too)
**   | a b |                            declare top-level variables
**   statement.                         run at once, in file order
** A class body holds "| ivars |", pragmas (<comment:>, <shape: #byte>),
** "Name := expr." class variables, "Name class >> pattern [ ]" and
** "Name class [ | civars | methods ]" for the class side, and methods
** "pattern [ | temps | statements ]".
*/
#include "config.h"

#include "hosts/st/compile.h"
#include "hosts/st/heap.h"
#include "hosts/st/symbols.h"
#include "hosts/st/classes.h"
#include "hosts/st/loader.h"
#include "hosts/st/interp.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define TOK (&lx->tok)

static const char *intern_file(VM *vm, const char *file) {
  for (uint32_t i = 0; i < vm->nfiles; i++)
    if (strcmp(vm->files[i], file) == 0) return vm->files[i];
  char **nf = realloc(vm->files, (vm->nfiles + 1) * sizeof(char *));
  if (!nf) st_out_of_memory((vm->nfiles + 1) * sizeof(char *));
  vm->files = nf;
  vm->files[vm->nfiles] = strdup(file);
  if (!vm->files[vm->nfiles]) st_out_of_memory(strlen(file) + 1);
  return vm->files[vm->nfiles++];
}

static Value tok_sym(VM *vm, const Token *t) {
  return st_intern(vm, t->text, t->len);
}

/* The class a token names, or 0. */
static uint32_t named_class(VM *vm, const Token *t) {
  char buf[256];
  if (t->type != T_IDENT || t->len >= sizeof buf) return 0;
  memcpy(buf, t->text, t->len);
  buf[t->len] = '\0';
  return st_class_by_name(vm, buf);
}

/* A DoIt that has run and made no closures is referenced by nothing but
** the method table (which keeps it, so that its id, the profiler's key,
** keeps naming it): its code, lines, literals and call sites are freed, so
** that a script of many statements does not hold them all. */
static void release_doit(Method *m) {
  if (m->nblocks) return;
  free(m->code);
  free(m->lines);
  free(m->lits);
  free(m->sites);
  m->code = NULL;
  m->lines = NULL;
  m->lits = NULL;
  m->sites = NULL;
  m->ncode = m->nlits = m->nsites = 0;
}

/* Run a parsed DoIt; returns 0 or the status that ends the file. A VM
** that only checks files compiles it and runs nothing. */
static int run_doit(VM *vm, Lexer *lx, MethodAst *ast, uint32_t cid,
                    Value rcv) {
  Method *m = st_compile(vm, lx, ast, cid, lx->file);
  m->sel = vm->nil;
  if (vm->check_only) return 0;
  /* A statement with no send or loop has no interrupt check, where the
  ** collector runs: between statements, nothing is held in C, so it runs
  ** here if it is due. */
  if (vm->gc_pending) st_gc(vm);
  uint32_t loading = vm->prof.loading; /* the statement is not loading */
  st_prof_load_end(vm, 0);
  int r = st_execute(vm, m, rcv);
  vm->prof.loading = loading;
  if (!r) release_doit(m);
  return r ? (vm->exit_code > 0 ? vm->exit_code : 1) : 0;
}

/* The C code relies on the slot count of the bootstrap classes: a class
** definition or an extension must leave it as it is. */
static void check_boot_layout(VM *vm, Lexer *lx, uint32_t cid, int line,
                              int col) {
  ClassInfo *c = &vm->classes[cid];
  if (cid < CID_BOOT_LAST && c->ninst != c->boot_ninst) {
    Value name = c->name;
    st_syntax_error(lx, line, col,
                    "class '%.*s' must have %u instance variables (has %u)",
                    (int)NSLOTS(name), (char *)BYTES(name), c->boot_ninst,
                    c->ninst);
  }
}

static void define_method(VM *vm, Lexer *lx, uint32_t cid) {
  MethodAst *ast = st_parse_method_def(lx);
  Method *m = st_compile(vm, lx, ast, cid, lx->file);
  st_install_method(vm, cid, m);
  st_prof_load_poll(vm);
}

/* Instance variables are appended to a class's own slots. Instances made
** before would be too short, and the slots of subclasses (which their
** compiled methods address by index) would move: a class that has either
** is refused, as the kernel classes the C code knows are. */
static void add_ivars(VM *vm, Lexer *lx, uint32_t cid) {
  int line = TOK->line, col = TOK->col;
  char **names, cname[200];
  int n = st_parse_temps(lx, &names);
  if (n == 0) return;
  ClassInfo *c = &vm->classes[cid];
  const char *why = !c->is_meta && c->instantiated ? "it has instances"
                                                   : NULL;
  for (uint32_t i = 1; i < vm->nclasses && !why; i++)
    if (vm->classes[i].super == cid && i != cid) why = "it has subclasses";
  if (why)
    st_syntax_error(lx, line, col, "cannot add instance variables to '%s': %s",
                    st_class_name(vm, cid, cname, sizeof cname), why);
  for (int i = 0; i < n; i++)
    if (st_class_add_ivar(vm, cid, st_sym(vm, names[i])) < 0)
      st_syntax_error(lx, line, col, "cannot add instance variable '%s'",
                      names[i]);
}

/* <shape: #pointer|#byte> and other class pragmas. */
static void class_pragma(VM *vm, Lexer *lx, uint32_t cid) {
  st_lex_next(lx);
  if (st_tok_is(TOK, T_KEYWORD, "shape:")) {
    st_lex_next(lx);
    ClassInfo *c = &vm->classes[cid];
    if (TOK->type == T_SYMBOL && !strcmp(TOK->sval, "byte")) {
      c->fmt = FMT_BYTES;
      c->indexed = 1;
    } else if (TOK->type == T_SYMBOL && !strcmp(TOK->sval, "pointer")) {
      c->fmt = FMT_PTR;
      c->indexed = 1;
    } else {
      st_syntax_error(lx, TOK->line, TOK->col,
                      "shape must be #pointer or #byte");
    }
  }
  while (TOK->type != T_EOF && !st_tok_is(TOK, T_BINARY, ">")) st_lex_next(lx);
  st_lex_next(lx);
}

static int class_body(VM *vm, Lexer *lx, uint32_t cid, int meta_only);

/* "| arg [" starts a method named |, not instance variables. */
static int binary_method(Lexer *lx) {
  Lexer save = *lx;
  st_lex_next(lx);
  int r = TOK->type == T_IDENT;
  if (r) {
    st_lex_next(lx);
    r = TOK->type == T_LBRACK;
  }
  *lx = save;
  return r;
}

/* Name := expr. inside a class body: a class variable, initialized now. */
static int class_variable(VM *vm, Lexer *lx, uint32_t cid) {
  Value name = tok_sym(vm, TOK);
  Value assoc = st_class_pool_define(vm, cid, name);
  (void)assoc;
  /* Parse "Name := expr" as a DoIt assigning the new class variable. */
  MethodAst *ast = st_parse_doit(lx);
  ClassInfo *c = &vm->classes[cid];
  return run_doit(vm, lx, ast, c->meta, c->obj);
}

/* Items of a class body up to its closing bracket. */
static int class_body(VM *vm, Lexer *lx, uint32_t cid, int meta_only) {
  ClassInfo *c;
  int r;
  while (TOK->type != T_RBRACK) {
    c = &vm->classes[cid];
    if (TOK->type == T_EOF)
      st_syntax_error(lx, TOK->line, TOK->col,
                      "missing ']' at end of class body");
    if ((st_tok_is(TOK, T_BINARY, "|") && !binary_method(lx)) ||
        st_tok_is(TOK, T_BINARY, "||")) {
      add_ivars(vm, lx, meta_only ? c->meta : cid);
      continue;
    }
    if (st_tok_is(TOK, T_BINARY, "<") &&
        st_lex_peek(lx)->type == T_KEYWORD) {
      class_pragma(vm, lx, cid);
      continue;
    }
    if (TOK->type == T_IDENT && st_lex_peek(lx)->type == T_ASSIGN &&
        !meta_only) {
      if ((r = class_variable(vm, lx, cid))) return r;
      continue;
    }
    if (TOK->type == T_IDENT && named_class(vm, TOK) == cid) {
      const Token *p = st_lex_peek(lx);
      if (st_tok_is(p, T_IDENT, "class")) {
        st_lex_next(lx);
        st_lex_next(lx);
        if (st_tok_is(TOK, T_BINARY, ">>")) {
          st_lex_next(lx);
          define_method(vm, lx, c->meta);
        } else if (TOK->type == T_LBRACK) {
          st_lex_next(lx);
          if ((r = class_body(vm, lx, cid, 1))) return r;
          st_lex_next(lx);
        } else {
          st_syntax_error(lx, TOK->line, TOK->col, "expected '>>' or '['");
        }
        continue;
      }
      if (st_tok_is(p, T_BINARY, ">>")) {
        st_lex_next(lx);
        st_lex_next(lx);
        define_method(vm, lx, cid);
        continue;
      }
    }
    define_method(vm, lx, meta_only ? c->meta : cid);
  }
  return 0;
}

/* Is c the class anc or one of its subclasses? The walk is bounded by the
** number of classes, so it ends even if a cycle slipped in. */
static int inherits_from(VM *vm, uint32_t c, uint32_t anc) {
  for (uint32_t n = 0; c && n <= vm->nclasses; n++, c = vm->classes[c].super)
    if (c == anc) return 1;
  return 0;
}

/* Super subclass: Name [ body ]. A superclass that is the class itself or
** one of its subclasses would make a cycle, in which method lookup and
** the instance-size computation never end: that is refused. */
static int define_class(VM *vm, Lexer *lx) {
  int line = TOK->line, col = TOK->col;
  uint32_t super = named_class(vm, TOK);
  if (!super)
    st_syntax_error(lx, line, col, "unknown superclass '%.*s'", (int)TOK->len,
                    TOK->text);
  st_lex_next(lx); /* subclass: */
  st_lex_next(lx);
  Value name = tok_sym(vm, TOK);
  uint32_t cid = named_class(vm, TOK);
  int nline = TOK->line, ncol = TOK->col;
  st_lex_next(lx);
  st_lex_next(lx); /* [ */
  if (cid && super == cid)
    st_syntax_error(lx, nline, ncol,
                    "class '%.*s' cannot be its own superclass",
                    (int)NSLOTS(name), (char *)BYTES(name));
  if (cid && inherits_from(vm, super, cid)) {
    Value sn = vm->classes[super].name;
    st_syntax_error(lx, nline, ncol,
                    "class '%.*s' cannot be a subclass of its subclass '%.*s'",
                    (int)NSLOTS(name), (char *)BYTES(name), (int)NSLOTS(sn),
                    (char *)BYTES(sn));
  }
  if (!cid) {
    ClassInfo *s = &vm->classes[super];
    cid = st_new_class(vm, name, super, s->fmt, s->indexed);
    SLOTS(st_global_binding(vm, name, 1))[ASSOC_VALUE] = vm->classes[cid].obj;
  } else if (!vm->classes[cid].declared) {
    st_class_set_super(vm, cid, super);
  } else if (vm->classes[cid].super != super) {
    st_syntax_error(lx, nline, ncol,
                    "class '%.*s' already has another superclass",
                    (int)NSLOTS(name), (char *)BYTES(name));
  }
  vm->classes[cid].declared = 1;
  int r = class_body(vm, lx, cid, 0);
  if (r) return r;
  check_boot_layout(vm, lx, cid, nline, ncol);
  st_lex_next(lx);
  return 0;
}

/* Is the current token the start of a class-level item? Looks ahead on a
** copy of the lexer. */
enum { IT_STATEMENT, IT_CLASS, IT_EXTEND, IT_CLASS_EXTEND, IT_METHOD,
       IT_CLASS_METHOD };

static int classify(Lexer *lx) {
  if (TOK->type != T_IDENT) return IT_STATEMENT;
  Lexer save = *lx;
  int kind = IT_STATEMENT;
  st_lex_next(lx);
  if (st_tok_is(TOK, T_KEYWORD, "subclass:")) {
    st_lex_next(lx);
    if (TOK->type == T_IDENT) {
      st_lex_next(lx);
      if (TOK->type == T_LBRACK) kind = IT_CLASS;
    }
  } else if (st_tok_is(TOK, T_IDENT, "extend")) {
    st_lex_next(lx);
    if (TOK->type == T_LBRACK) kind = IT_EXTEND;
  } else if (st_tok_is(TOK, T_BINARY, ">>")) {
    st_lex_next(lx);
    if (TOK->type != T_SYMBOL) kind = IT_METHOD;
  } else if (st_tok_is(TOK, T_IDENT, "class")) {
    st_lex_next(lx);
    if (st_tok_is(TOK, T_IDENT, "extend")) {
      st_lex_next(lx);
      if (TOK->type == T_LBRACK) kind = IT_CLASS_EXTEND;
    } else if (st_tok_is(TOK, T_BINARY, ">>")) {
      st_lex_next(lx);
      if (TOK->type != T_SYMBOL) kind = IT_CLASS_METHOD;
    }
  }
  *lx = save;
  return kind;
}

static uint32_t expect_class(VM *vm, Lexer *lx) {
  uint32_t cid = named_class(vm, TOK);
  if (!cid)
    st_syntax_error(lx, TOK->line, TOK->col, "unknown class '%.*s'",
                    (int)TOK->len, TOK->text);
  return cid;
}

/* The items of a file, in order; syntax errors longjmp out of here. */
static int load_items(VM *vm, Lexer *lx) {
  int r = 0, mark_set = 0;
  ArenaMark mark;
  st_lex_next(lx);
  while (TOK->type != T_EOF && r == 0) {
    /* Each item's trees are freed once it is compiled (and run). */
    if (mark_set) {
      st_arena_release(lx->arena, mark);
      st_lex_rescan(lx);
    }
    mark = st_arena_mark(lx->arena);
    mark_set = 1;
    if (TOK->type == T_BANG || TOK->type == T_PERIOD) {
      st_lex_next(lx);
      continue;
    }
    if (st_tok_is(TOK, T_BINARY, "|") || st_tok_is(TOK, T_BINARY, "||")) {
      char **names;
      int n = st_parse_temps(lx, &names);
      for (int i = 0; i < n; i++)
        st_script_binding(vm, st_sym(vm, names[i]), 1);
      continue;
    }
    uint32_t cid;
    int kind = classify(lx), meta = 0;
    switch (kind) {
    case IT_CLASS:
      r = define_class(vm, lx);
      break;
    case IT_CLASS_EXTEND:
      meta = 1;
      /* fall through */
    case IT_EXTEND: {
      int line = TOK->line, col = TOK->col;
      cid = expect_class(vm, lx);
      st_lex_next(lx);
      if (meta) st_lex_next(lx);
      st_lex_next(lx);
      st_lex_next(lx);
      r = class_body(vm, lx, cid, meta);
      if (!r) check_boot_layout(vm, lx, cid, line, col);
      st_lex_next(lx);
      break;
    }
    case IT_CLASS_METHOD:
      meta = 1;
      /* fall through */
    case IT_METHOD:
      cid = expect_class(vm, lx);
      st_lex_next(lx);
      if (meta) st_lex_next(lx);
      st_lex_next(lx);
      define_method(vm, lx, meta ? vm->classes[cid].meta : cid);
      break;
    default:
      r = run_doit(vm, lx, st_parse_doit(lx), CID_UNDEFINED, vm->nil);
      break;
    }
  }
  return r;
}

int st_load_source(VM *vm, const char *file, const char *src, size_t len) {
  Arena arena = {0};
  jmp_buf jb;
  char msg[1024];
  Lexer lx;
  const char *f = intern_file(vm, file);
  st_lex_init(&lx, f, src, len, &arena, &jb, msg, sizeof msg);
  uint32_t loading = st_prof_load_begin(vm, f);
  if (setjmp(jb)) {
    st_prof_load_end(vm, loading);
    fflush(stdout);
    fprintf(stderr, "%s\n", msg);
    st_arena_free(&arena);
    vm->exit_code = 2;
    return 2;
  }
  int r = load_items(vm, &lx);
  st_prof_load_end(vm, loading);
  st_arena_free(&arena);
  return r;
}

int st_load_file(VM *vm, const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) {
    fprintf(stderr, "%s: cannot open: %s\n", path, strerror(errno));
    vm->exit_code = 2;
    return 2;
  }
  size_t cap = 65536, n = 0, k;
  char *buf = malloc(cap);
  while (buf && (k = fread(buf + n, 1, cap - n, f)) > 0) {
    n += k;
    if (n == cap) buf = realloc(buf, cap *= 2);
  }
  fclose(f);
  if (!buf) st_out_of_memory(cap);
  int r = st_load_source(vm, path, buf, n);
  free(buf);
  return r;
}
