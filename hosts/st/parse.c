/*
** hosts/st/parse.c: the expression parser.
**
** Recursive descent over Smalltalk-80 expression syntax: statements,
** assignments, cascades, keyword/binary/unary sends, blocks with
** parameters and temporaries, literals (including literal and byte arrays)
** and brace arrays. Method headers and the file-level bracket syntax are
** parsed here too, but the decisions about classes are the loader's.
*/
#include "config.h"

#include "hosts/st/parse.h"
#include "hosts/st/st.h"

#include <stdlib.h>
#include <string.h>

#define TOK (&lx->tok)

static Node *parse_expr(Lexer *lx);
static Node *parse_block(Lexer *lx);

static Node *new_node(Lexer *lx, NodeKind k, int line, int col) {
  Node *n = st_arena_alloc(lx->arena, sizeof(Node));
  n->kind = k;
  n->line = line;
  n->col = col;
  return n;
}

static char *tok_str(Lexer *lx, const Token *t) {
  return st_arena_strdup(lx->arena, t->text, t->len);
}

static void expect(Lexer *lx, TokType type, const char *what) {
  if (TOK->type != type)
    st_syntax_error(lx, TOK->line, TOK->col, "expected %s", what);
  st_lex_next(lx);
}

/* A growable array of pointers in the arena (copied on growth). */
typedef struct PVec {
  void **v;
  int n, cap;
} PVec;

static void pv_push(Lexer *lx, PVec *pv, void *x) {
  if (pv->n == pv->cap) {
    int ncap = pv->cap ? pv->cap * 2 : 4;
    void **nv = st_arena_alloc(lx->arena, (size_t)ncap * sizeof(void *));
    if (pv->n) memcpy(nv, pv->v, (size_t)pv->n * sizeof(void *));
    pv->v = nv;
    pv->cap = ncap;
  }
  pv->v[pv->n++] = x;
}

/* ===================================================================== */
/* Literals                                                              */
/* ===================================================================== */

static Lit *new_lit(Lexer *lx, LitKind k) {
  Lit *l = st_arena_alloc(lx->arena, sizeof(Lit));
  l->kind = k;
  return l;
}

/* A number token as a literal, negated if neg. */
static Lit *number_lit(Lexer *lx, const Token *t, int neg) {
  Lit *l;
  if (t->type == T_FLOAT) {
    l = new_lit(lx, L_FLOAT);
    l->d = neg ? -t->dval : t->dval;
  } else if (t->big) {
    l = new_lit(lx, L_BIGINT);
    l->s = t->sval;
    l->slen = t->slen;
    l->neg = neg;
  } else {
    l = new_lit(lx, L_INT);
    l->i = neg ? -t->ival : t->ival;
  }
  return l;
}

static Lit *parse_byte_array(Lexer *lx) {
  PVec el = {0};
  for (;;) {
    st_lex_next(lx);
    if (TOK->type == T_RBRACK) break;
    if (TOK->type != T_INT || TOK->big || TOK->ival > 255)
      st_syntax_error(lx, TOK->line, TOK->col,
                      "byte array elements must be integers 0-255");
    Lit *e = new_lit(lx, L_INT);
    e->i = TOK->ival;
    pv_push(lx, &el, e);
  }
  Lit *l = new_lit(lx, L_BYTEARRAY);
  l->elems = (Lit **)el.v;
  l->nelems = el.n;
  return l;
}

/* Elements of #( ... ) up to the closing paren; the lexer is on the
** token after the opening one. */
Lit *st_parse_literal_array(Lexer *lx) {
  PVec el = {0};
  int line = TOK->line, col = TOK->col;
  for (;;) {
    const Token *t = TOK;
    Lit *e;
    switch (t->type) {
    case T_RPAREN:
      goto done;
    case T_EOF:
      st_syntax_error(lx, line, col, "unterminated literal array");
    case T_INT:
    case T_FLOAT:
      e = number_lit(lx, t, 0);
      break;
    case T_BINARY:
      if (st_tok_is(t, T_BINARY, "-") && !st_lex_peek(lx)->space_before &&
          (st_lex_peek(lx)->type == T_INT ||
           st_lex_peek(lx)->type == T_FLOAT)) {
        st_lex_next(lx);
        e = number_lit(lx, TOK, 1);
      } else {
        e = new_lit(lx, L_SYMBOL);
        e->s = tok_str(lx, t);
        e->slen = t->len;
      }
      break;
    case T_CHAR:
      e = new_lit(lx, L_CHAR);
      e->i = t->ival;
      break;
    case T_STRING:
    case T_SYMBOL:
      e = new_lit(lx, t->type == T_STRING ? L_STRING : L_SYMBOL);
      e->s = t->sval;
      e->slen = t->slen;
      break;
    case T_IDENT:
    case T_KEYWORD:
      if (st_tok_is(t, T_IDENT, "nil")) e = new_lit(lx, L_NIL);
      else if (st_tok_is(t, T_IDENT, "true")) e = new_lit(lx, L_TRUE);
      else if (st_tok_is(t, T_IDENT, "false")) e = new_lit(lx, L_FALSE);
      else {
        /* foo, foo:, foo:bar: (keywords run together) are Symbols. */
        const char *s = t->text;
        size_t n = t->len;
        while (t->type == T_KEYWORD && st_lex_peek(lx)->type == T_KEYWORD &&
               !st_lex_peek(lx)->space_before) {
          st_lex_next(lx);
          n = (size_t)(TOK->text + TOK->len - s);
        }
        e = new_lit(lx, L_SYMBOL);
        e->s = st_arena_strdup(lx->arena, s, n);
        e->slen = n;
      }
      break;
    case T_LPAREN:
    case T_LITARRAY:
      st_lex_next(lx);
      e = st_parse_literal_array(lx);
      break;
    case T_LBRACK:
    case T_BYTEARRAY:
      e = parse_byte_array(lx);
      break;
    default:
      st_syntax_error(lx, t->line, t->col, "bad literal array element");
    }
    pv_push(lx, &el, e);
    st_lex_next(lx);
  }
done:;
  Lit *l = new_lit(lx, L_ARRAY);
  l->elems = (Lit **)el.v;
  l->nelems = el.n;
  return l;
}

/* ===================================================================== */
/* Expressions                                                           */
/* ===================================================================== */

static Node *lit_node(Lexer *lx, Lit *l, int line, int col) {
  Node *n = new_node(lx, N_LIT, line, col);
  n->lit = l;
  return n;
}

static Node *parse_primary(Lexer *lx) {
  Token t = *TOK;
  Node *n;
  switch (t.type) {
  case T_IDENT:
    st_lex_next(lx);
    if (st_tok_is(&t, T_IDENT, "nil"))
      return lit_node(lx, new_lit(lx, L_NIL), t.line, t.col);
    if (st_tok_is(&t, T_IDENT, "true"))
      return lit_node(lx, new_lit(lx, L_TRUE), t.line, t.col);
    if (st_tok_is(&t, T_IDENT, "false"))
      return lit_node(lx, new_lit(lx, L_FALSE), t.line, t.col);
    n = new_node(lx, N_VAR, t.line, t.col);
    n->name = tok_str(lx, &t);
    return n;
  case T_INT:
  case T_FLOAT:
    st_lex_next(lx);
    return lit_node(lx, number_lit(lx, &t, 0), t.line, t.col);
  case T_CHAR:
    st_lex_next(lx);
    n = lit_node(lx, new_lit(lx, L_CHAR), t.line, t.col);
    n->lit->i = t.ival;
    return n;
  case T_STRING:
  case T_SYMBOL:
    st_lex_next(lx);
    n = lit_node(lx, new_lit(lx, t.type == T_STRING ? L_STRING : L_SYMBOL),
                 t.line, t.col);
    n->lit->s = t.sval;
    n->lit->slen = t.slen;
    return n;
  case T_LITARRAY: {
    st_lex_next(lx);
    Lit *l = st_parse_literal_array(lx);
    st_lex_next(lx);
    return lit_node(lx, l, t.line, t.col);
  }
  case T_BYTEARRAY: {
    Lit *l = parse_byte_array(lx);
    st_lex_next(lx);
    return lit_node(lx, l, t.line, t.col);
  }
  case T_LBRACK:
    return parse_block(lx);
  case T_LPAREN:
    st_lex_next(lx);
    n = parse_expr(lx);
    expect(lx, T_RPAREN, "')'");
    return n;
  case T_LBRACE: {
    st_lex_next(lx);
    PVec el = {0};
    while (TOK->type != T_RBRACE) {
      pv_push(lx, &el, parse_expr(lx));
      if (TOK->type == T_PERIOD) st_lex_next(lx);
      else if (TOK->type != T_RBRACE)
        st_syntax_error(lx, TOK->line, TOK->col, "expected '.' or '}'");
    }
    st_lex_next(lx);
    n = new_node(lx, N_BRACE, t.line, t.col);
    n->list = (Node **)el.v;
    n->nlist = el.n;
    return n;
  }
  case T_BINARY:
    if (st_tok_is(&t, T_BINARY, "-")) {
      const Token *p = st_lex_peek(lx);
      if ((p->type == T_INT || p->type == T_FLOAT) && !p->space_before) {
        st_lex_next(lx);
        Token num = *TOK;
        st_lex_next(lx);
        return lit_node(lx, number_lit(lx, &num, 1), t.line, t.col);
      }
    }
    /* fall through */
  default:
    if (t.type == T_EOF)
      st_syntax_error(lx, t.line, t.col,
                      "expression expected before end of file");
    st_syntax_error(lx, t.line, t.col, "expression expected, found '%.*s'",
                    (int)t.len, t.text);
  }
}

static Node *new_send(Lexer *lx, Node *rcv, char *sel, int line, int col) {
  Node *n = new_node(lx, N_SEND, line, col);
  n->value = rcv;
  n->sel = sel;
  if (rcv && rcv->kind == N_VAR && strcmp(rcv->name, "super") == 0)
    n->is_super = 1;
  return n;
}

static Node *parse_unary_tail(Lexer *lx, Node *rcv) {
  while (TOK->type == T_IDENT) {
    rcv = new_send(lx, rcv, tok_str(lx, TOK), TOK->line, TOK->col);
    st_lex_next(lx);
  }
  return rcv;
}

static Node *parse_binary_tail(Lexer *lx, Node *rcv) {
  while (TOK->type == T_BINARY) {
    Token op = *TOK;
    st_lex_next(lx);
    Node *arg = parse_unary_tail(lx, parse_primary(lx));
    rcv = new_send(lx, rcv, tok_str(lx, &op), op.line, op.col);
    rcv->args = st_arena_alloc(lx->arena, sizeof(Node *));
    rcv->args[0] = arg;
    rcv->nargs = 1;
  }
  return rcv;
}

static Node *parse_keyword_tail(Lexer *lx, Node *rcv) {
  if (TOK->type != T_KEYWORD) return rcv;
  char sel[1024];
  size_t sl = 0;
  PVec args = {0};
  int line = TOK->line, col = TOK->col;
  while (TOK->type == T_KEYWORD) {
    if (sl + TOK->len >= sizeof sel)
      st_syntax_error(lx, TOK->line, TOK->col, "selector too long");
    memcpy(sel + sl, TOK->text, TOK->len);
    sl += TOK->len;
    st_lex_next(lx);
    Node *a = parse_binary_tail(lx, parse_unary_tail(lx, parse_primary(lx)));
    pv_push(lx, &args, a);
  }
  Node *n = new_send(lx, rcv, st_arena_strdup(lx->arena, sel, sl), line, col);
  n->args = (Node **)args.v;
  n->nargs = args.n;
  return n;
}

/* A message (no receiver) inside a cascade. */
static Node *parse_cascade_msg(Lexer *lx) {
  Node *dummy = new_node(lx, N_LIT, TOK->line, TOK->col);
  Node *n;
  if (TOK->type == T_IDENT) {
    n = parse_unary_tail(lx, dummy);
    n = parse_binary_tail(lx, n);
    n = parse_keyword_tail(lx, n);
  } else if (TOK->type == T_BINARY) {
    n = parse_keyword_tail(lx, parse_binary_tail(lx, dummy));
  } else if (TOK->type == T_KEYWORD) {
    n = parse_keyword_tail(lx, dummy);
  } else {
    st_syntax_error(lx, TOK->line, TOK->col, "message expected after ';'");
  }
  /* The cascade's receiver replaces the dummy innermost receiver. */
  Node *inner = n;
  while (inner->value != dummy) inner = inner->value;
  inner->value = NULL;
  return n;
}

/* The pseudo-variables name fixed values: they can be neither assigned
** nor declared (a temporary called true would hide the constant). */
static void check_not_pseudo(Lexer *lx, const Token *t, const char *what) {
  static const char *const names[] = {"self", "super", "nil", "true",
                                      "false", "thisContext"};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
    if (st_tok_is(t, T_IDENT, names[i]))
      st_syntax_error(lx, t->line, t->col, "cannot %s pseudo-variable '%s'",
                      what, names[i]);
}

static Node *parse_expr(Lexer *lx) {
  if (TOK->type == T_IDENT && st_lex_peek(lx)->type == T_ASSIGN) {
    check_not_pseudo(lx, TOK, "assign to");
    Node *n = new_node(lx, N_ASSIGN, TOK->line, TOK->col);
    n->name = tok_str(lx, TOK);
    st_lex_next(lx);
    st_lex_next(lx);
    n->value = parse_expr(lx);
    return n;
  }
  Node *prim = parse_primary(lx);
  Node *e = parse_keyword_tail(
      lx, parse_binary_tail(lx, parse_unary_tail(lx, prim)));
  if (TOK->type != T_SEMI) return e;
  if (e->kind != N_SEND)
    st_syntax_error(lx, TOK->line, TOK->col, "cascade needs a message send");
  Node *c = new_node(lx, N_CASCADE, e->line, e->col);
  c->value = e->value;
  e->value = NULL;
  PVec msgs = {0};
  pv_push(lx, &msgs, e);
  while (TOK->type == T_SEMI) {
    st_lex_next(lx);
    Node *m = parse_cascade_msg(lx);
    /* Only the outermost message of the part goes to the cascade
    ** receiver; "a foo; bar baz" sends baz to (a bar). */
    pv_push(lx, &msgs, m);
  }
  c->list = (Node **)msgs.v;
  c->nlist = msgs.n;
  return c;
}

static Node *parse_statement(Lexer *lx) {
  if (TOK->type == T_CARET) {
    Node *n = new_node(lx, N_RETURN, TOK->line, TOK->col);
    st_lex_next(lx);
    n->value = parse_expr(lx);
    return n;
  }
  return parse_expr(lx);
}

/* "| a b |" at the current token; names into an arena vector. */
int st_parse_temps(Lexer *lx, char ***names) {
  PVec v = {0};
  if (st_tok_is(TOK, T_BINARY, "||")) {
    st_lex_next(lx);
    *names = NULL;
    return 0;
  }
  if (!st_tok_is(TOK, T_BINARY, "|")) {
    *names = NULL;
    return 0;
  }
  st_lex_next(lx);
  while (TOK->type == T_IDENT) {
    check_not_pseudo(lx, TOK, "declare");
    pv_push(lx, &v, tok_str(lx, TOK));
    st_lex_next(lx);
  }
  if (!st_tok_is(TOK, T_BINARY, "|"))
    st_syntax_error(lx, TOK->line, TOK->col, "expected '|' after temporaries");
  st_lex_next(lx);
  *names = (char **)v.v;
  return v.n;
}

/* Statements up to a closing bracket (not consumed), into blk->list. */
static void parse_statements(Lexer *lx, Node *blk, TokType close) {
  PVec st = {0};
  while (TOK->type != close) {
    if (TOK->type == T_EOF)
      st_syntax_error(lx, blk->line, blk->col, "missing ']'");
    Node *s = parse_statement(lx);
    pv_push(lx, &st, s);
    if (TOK->type == T_PERIOD) {
      while (TOK->type == T_PERIOD) st_lex_next(lx);
    } else if (TOK->type != close) {
      st_syntax_error(lx, TOK->line, TOK->col,
                      "expected '.' or ']' after statement, found '%.*s'",
                      (int)TOK->len, TOK->text);
    }
  }
  blk->list = (Node **)st.v;
  blk->nlist = st.n;
}

static Node *parse_block(Lexer *lx) {
  Node *b = new_node(lx, N_BLOCK, TOK->line, TOK->col);
  st_lex_next(lx);
  PVec params = {0};
  while (TOK->type == T_COLON) {
    st_lex_next(lx);
    if (TOK->type != T_IDENT)
      st_syntax_error(lx, TOK->line, TOK->col, "parameter name expected");
    check_not_pseudo(lx, TOK, "declare");
    pv_push(lx, &params, tok_str(lx, TOK));
    st_lex_next(lx);
  }
  if (params.n) {
    if (st_tok_is(TOK, T_BINARY, "||")) {
      /* "[:x || t |": the bar ends the parameters and opens temps. */
      lx->tok.text++;
      lx->tok.len = 1;
    } else if (st_tok_is(TOK, T_BINARY, "|")) {
      st_lex_next(lx);
    } else if (TOK->type != T_RBRACK) {
      st_syntax_error(lx, TOK->line, TOK->col,
                      "expected '|' after block parameters");
    }
  }
  b->params = (char **)params.v;
  b->nparams = params.n;
  b->ntemps = st_parse_temps(lx, &b->temps);
  parse_statements(lx, b, T_RBRACK);
  st_lex_next(lx);
  return b;
}

/* ===================================================================== */
/* Methods                                                               */
/* ===================================================================== */

/* Pragmas: <primitive: 'name'>, <category: ...> and the VM markers. */
static int parse_pragma(Lexer *lx, MethodAst *m) {
  if (!st_tok_is(TOK, T_BINARY, "<")) return 0;
  const Token *p = st_lex_peek(lx);
  if (p->type != T_KEYWORD && p->type != T_IDENT) return 0;
  st_lex_next(lx);
  if (st_tok_is(TOK, T_KEYWORD, "primitive:")) {
    int line = TOK->line, col = TOK->col;
    st_lex_next(lx);
    if (TOK->type != T_STRING && TOK->type != T_SYMBOL)
      st_syntax_error(lx, TOK->line, TOK->col, "primitive name expected");
    m->prim = TOK->sval;
    m->prim_line = line;
    m->prim_col = col;
    st_lex_next(lx);
  } else if (TOK->type == T_IDENT) {
    if (st_tok_is(TOK, T_IDENT, "unwind")) m->flags |= MF_UNWIND;
    else if (st_tok_is(TOK, T_IDENT, "exceptionHandler"))
      m->flags |= MF_HANDLER;
    else if (st_tok_is(TOK, T_IDENT, "hidden")) m->flags |= MF_HIDDEN;
    else if (st_tok_is(TOK, T_IDENT, "runsHandler"))
      m->flags |= MF_RUNS_HANDLER;
    st_lex_next(lx);
  } else {
    /* Other keyword pragmas (category:, comment:) are skipped. */
    while (TOK->type != T_EOF && !st_tok_is(TOK, T_BINARY, ">"))
      st_lex_next(lx);
  }
  if (!st_tok_is(TOK, T_BINARY, ">"))
    st_syntax_error(lx, TOK->line, TOK->col, "expected '>' to end pragma");
  st_lex_next(lx);
  return 1;
}

void st_parse_body(Lexer *lx, MethodAst *m) {
  Node *b = new_node(lx, N_BLOCK, TOK->line, TOK->col);
  while (parse_pragma(lx, m)) {}
  b->ntemps = st_parse_temps(lx, &b->temps);
  while (parse_pragma(lx, m)) {}
  parse_statements(lx, b, T_RBRACK);
  m->body = b;
}

/* A method pattern and its bracketed body. */
MethodAst *st_parse_method_def(Lexer *lx) {
  MethodAst *m = st_arena_alloc(lx->arena, sizeof(MethodAst));
  m->line = TOK->line;
  m->col = TOK->col;
  PVec params = {0};
  if (TOK->type == T_IDENT) {
    m->sel = tok_str(lx, TOK);
    st_lex_next(lx);
  } else if (TOK->type == T_BINARY) {
    m->sel = tok_str(lx, TOK);
    st_lex_next(lx);
    if (TOK->type != T_IDENT)
      st_syntax_error(lx, TOK->line, TOK->col, "argument name expected");
    check_not_pseudo(lx, TOK, "declare");
    pv_push(lx, &params, tok_str(lx, TOK));
    st_lex_next(lx);
  } else if (TOK->type == T_KEYWORD) {
    char sel[1024];
    size_t sl = 0;
    while (TOK->type == T_KEYWORD) {
      if (sl + TOK->len >= sizeof sel)
        st_syntax_error(lx, TOK->line, TOK->col, "selector too long");
      memcpy(sel + sl, TOK->text, TOK->len);
      sl += TOK->len;
      st_lex_next(lx);
      if (TOK->type != T_IDENT)
        st_syntax_error(lx, TOK->line, TOK->col, "argument name expected");
      check_not_pseudo(lx, TOK, "declare");
      pv_push(lx, &params, tok_str(lx, TOK));
      st_lex_next(lx);
    }
    m->sel = st_arena_strdup(lx->arena, sel, sl);
  } else {
    st_syntax_error(lx, TOK->line, TOK->col, "method pattern expected");
  }
  m->params = (char **)params.v;
  m->nparams = params.n;
  if (TOK->type != T_LBRACK)
    st_syntax_error(lx, TOK->line, TOK->col,
                    "expected '[' to begin method body");
  st_lex_next(lx);
  st_parse_body(lx, m);
  st_lex_next(lx);
  return m;
}

/* One top-level statement: its tree is a one-statement body. */
MethodAst *st_parse_doit(Lexer *lx) {
  MethodAst *m = st_arena_alloc(lx->arena, sizeof(MethodAst));
  m->line = TOK->line;
  m->col = TOK->col;
  Node *b = new_node(lx, N_BLOCK, TOK->line, TOK->col);
  Node *s = parse_statement(lx);
  b->list = st_arena_alloc(lx->arena, sizeof(Node *));
  b->list[0] = s;
  b->nlist = 1;
  if (TOK->type == T_PERIOD || TOK->type == T_BANG) {
    st_lex_next(lx);
  } else if (TOK->type != T_EOF) {
    st_syntax_error(lx, TOK->line, TOK->col,
                    "expected '.' after statement, found '%.*s'",
                    (int)TOK->len, TOK->text);
  }
  m->body = b;
  m->flags = MF_DOIT;
  return m;
}
