/*
** hosts/st/parse.h: tokens, the syntax tree and the parser's interface.
**
** The lexer and parser produce plain C data (strings, numbers, nodes in an
** arena) and never allocate Smalltalk objects, so a collection can never
** run while a tree is half built. The compiler (compile.c) turns a method
** tree into a Method; the loader (loader.c) drives the file syntax.
*/
#ifndef ST_PARSE_H
#define ST_PARSE_H

#include <setjmp.h>
#include <stddef.h>
#include <stdint.h>

/* ===================================================================== */
/* Tokens                                                                */
/* ===================================================================== */

typedef enum {
  T_EOF, T_IDENT, T_KEYWORD, T_BINARY, T_INT, T_FLOAT, T_CHAR, T_STRING,
  T_SYMBOL, T_LITARRAY, T_BYTEARRAY, T_ASSIGN, T_CARET, T_COLON, T_PERIOD,
  T_SEMI, T_LPAREN, T_RPAREN, T_LBRACK, T_RBRACK, T_LBRACE, T_RBRACE,
  T_BANG
} TokType;

/* The most digits an integer literal may have (exponent zeros included):
** 1e999999 is an exact Integer, 1e1000000 a syntax error. */
#define ST_MAX_LITERAL_DIGITS 1000000

typedef struct Token {
  TokType type;
  const char *text;  /* points into the source */
  size_t len;
  int line, col;
  int64_t ival;      /* T_INT that fits 62 bits; T_CHAR code */
  int big;           /* T_INT too large: digits are in sval (base 10) */
  double dval;       /* T_FLOAT */
  char *sval;        /* T_STRING/T_SYMBOL contents, big integer digits */
  size_t slen;
  int space_before;  /* whitespace precedes the token */
} Token;

/* Arena for trees and strings, freed in one go. */
typedef struct Arena {
  struct ArenaBlock *blocks;
} Arena;

typedef struct ArenaMark {
  struct ArenaBlock *block;
  size_t used;
} ArenaMark;

void *st_arena_alloc(Arena *a, size_t n);
/* Free what was allocated after a mark (the loader does after each item
** of a file, so that a file's trees are never all held at once). */
ArenaMark st_arena_mark(Arena *a);
void st_arena_release(Arena *a, ArenaMark m);
char *st_arena_strdup(Arena *a, const char *s, size_t n);
void st_arena_free(Arena *a);

typedef struct Lexer {
  const char *src, *p, *end;
  const char *file;
  int line;
  const char *line_start;
  Token tok;         /* current token */
  Token peek;        /* one token of lookahead */
  int has_peek;
  Arena *arena;
  jmp_buf *err;      /* syntax errors longjmp here */
  char *msg;         /* "file:line:col: message" */
  size_t msglen;
} Lexer;

void st_lex_init(Lexer *lx, const char *file, const char *src, size_t len,
                 Arena *arena, jmp_buf *err, char *msg, size_t msglen);
void st_lex_next(Lexer *lx);
const Token *st_lex_peek(Lexer *lx);
/* Scan the current token again (its strings were in released memory). */
void st_lex_rescan(Lexer *lx);
/* Report a syntax error at (line, col) and longjmp. */
void st_syntax_error(Lexer *lx, int line, int col, const char *fmt, ...)
    __attribute__((noreturn, format(printf, 4, 5)));
int st_tok_is(const Token *t, TokType type, const char *text);

/* ===================================================================== */
/* Syntax tree                                                           */
/* ===================================================================== */

typedef enum { N_LIT, N_VAR, N_ASSIGN, N_SEND, N_CASCADE, N_BLOCK, N_RETURN,
               N_BRACE } NodeKind;

typedef enum { L_NIL, L_TRUE, L_FALSE, L_INT, L_BIGINT, L_FLOAT, L_CHAR,
               L_STRING, L_SYMBOL, L_ARRAY, L_BYTEARRAY } LitKind;

typedef struct Lit {
  LitKind kind;
  int64_t i;
  double d;
  char *s;          /* strings, symbols, big integer digits (base 10) */
  size_t slen;
  int neg;          /* L_BIGINT */
  struct Lit **elems;
  int nelems;
} Lit;

struct Scope;
struct Var;

typedef struct Node {
  NodeKind kind;
  int line, col;
  /* N_LIT */
  Lit *lit;
  /* N_VAR / N_ASSIGN target */
  char *name;
  struct Var *var;   /* resolved by the compiler; to:do: its limit */
  struct Var *step;  /* to:by:do: with a computed step: its temporary */
  /* N_ASSIGN: value; N_RETURN: value; N_SEND / N_CASCADE: receiver */
  struct Node *value;
  /* N_SEND */
  char *sel;
  struct Node **args;
  int nargs;
  int is_super;
  int inlined;       /* compiled as control flow */
  /* N_CASCADE: messages (N_SEND without receiver); N_BRACE: elements;
  ** N_BLOCK: statements */
  struct Node **list;
  int nlist;
  /* N_BLOCK */
  char **params;
  int nparams;
  char **temps;
  int ntemps;
  int *param_lines;
  struct Scope *scope;
} Node;

/* A method (or top-level statement) as parsed. */
typedef struct MethodAst {
  char *sel;          /* NULL for a DoIt */
  char **params;
  int nparams;
  Node *body;         /* an N_BLOCK holding temps and statements */
  char *prim;         /* <primitive: 'name'> */
  int prim_line, prim_col;
  unsigned flags;     /* MF_* from pragmas */
  int line, col;
} MethodAst;

/* Parse "pattern [ body ]" (the bracket already expected after the
** pattern); used for method definitions inside class bodies. */
MethodAst *st_parse_method_def(Lexer *lx);
/* Parse the body of a method up to (not including) the closing ']'. */
void st_parse_body(Lexer *lx, MethodAst *m);
/* Parse one top-level statement (up to '.', '!' or end of file). */
MethodAst *st_parse_doit(Lexer *lx);
/* Parse top-level "| a b |" temporaries into names; returns count. */
int st_parse_temps(Lexer *lx, char ***names);
/* Parse a literal after '#(' (the lexer is on the first element). */
Lit *st_parse_literal_array(Lexer *lx);

#endif
