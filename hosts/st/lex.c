/*
** hosts/st/lex.c: the Smalltalk lexer.
**
** Tokens are scanned on demand with one token of lookahead. Numbers follow
** Smalltalk-80: radix prefixes (16r1F), exponents on integers (1e6 is an
** Integer), floats need digits on both sides of the point; integers too
** large for a SmallInteger keep their digits for the compiler to build a
** LargeInteger. A minus sign is never lexed into a number: the parser
** joins "-" and a number written without a space between them.
*/
#include "config.h"

#include "hosts/st/parse.h"
#include "hosts/st/st.h"

#include <ctype.h>
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ===================================================================== */
/* Arena                                                                 */
/* ===================================================================== */

typedef struct ArenaBlock {
  struct ArenaBlock *next;
  size_t used, cap;
  max_align_t data[];
} ArenaBlock;

static void *xrealloc(void *p, size_t n) {
  p = realloc(p, n);
  if (!p) st_out_of_memory(n);
  return p;
}

void *st_arena_alloc(Arena *a, size_t n) {
  n = (n + 15) & ~(size_t)15;
  ArenaBlock *b = a->blocks;
  if (!b || b->used + n > b->cap) {
    size_t cap = n > 65536 ? n : 65536;
    b = xrealloc(NULL, sizeof(ArenaBlock) + cap);
    b->used = 0;
    b->cap = cap;
    b->next = a->blocks;
    a->blocks = b;
  }
  void *p = (char *)b->data + b->used;
  b->used += n;
  memset(p, 0, n);
  return p;
}

char *st_arena_strdup(Arena *a, const char *s, size_t n) {
  char *d = st_arena_alloc(a, n + 1);
  memcpy(d, s, n);
  d[n] = '\0';
  return d;
}

ArenaMark st_arena_mark(Arena *a) {
  ArenaMark m = {a->blocks, a->blocks ? a->blocks->used : 0};
  return m;
}

/* Give back everything allocated since the mark: the blocks made after it
** are freed, and the block it was taken in is cut back. */
void st_arena_release(Arena *a, ArenaMark m) {
  while (a->blocks && a->blocks != m.block) {
    ArenaBlock *n = a->blocks->next;
    free(a->blocks);
    a->blocks = n;
  }
  if (a->blocks) a->blocks->used = m.used;
}

void st_arena_free(Arena *a) {
  ArenaBlock *b = a->blocks;
  while (b) {
    ArenaBlock *n = b->next;
    free(b);
    b = n;
  }
  a->blocks = NULL;
}

/* ===================================================================== */
/* Errors                                                                */
/* ===================================================================== */

void st_syntax_error(Lexer *lx, int line, int col, const char *fmt, ...) {
  int k = snprintf(lx->msg, lx->msglen, "%s:%d:%d: ", lx->file, line, col);
  if (k < 0) k = 0;
  if ((size_t)k < lx->msglen) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(lx->msg + k, lx->msglen - (size_t)k, fmt, ap);
    va_end(ap);
  }
  longjmp(*lx->err, 1);
}

/* ===================================================================== */
/* Scanning                                                              */
/* ===================================================================== */

void st_lex_init(Lexer *lx, const char *file, const char *src, size_t len,
                 Arena *arena, jmp_buf *err, char *msg, size_t msglen) {
  memset(lx, 0, sizeof *lx);
  lx->src = lx->p = src;
  lx->end = src + len;
  lx->file = file;
  lx->line = 1;
  lx->line_start = src;
  lx->arena = arena;
  lx->err = err;
  lx->msg = msg;
  lx->msglen = msglen;
}

static int col_of(Lexer *lx, const char *p) {
  return (int)(p - lx->line_start) + 1;
}

static int cur(Lexer *lx) {
  return lx->p < lx->end ? (unsigned char)*lx->p : -1;
}

static int at(Lexer *lx, size_t k) {
  return lx->p + k < lx->end ? (unsigned char)lx->p[k] : -1;
}

static void adv(Lexer *lx) {
  if (lx->p < lx->end) {
    if (*lx->p == '\n') {
      lx->line++;
      lx->line_start = lx->p + 1;
    }
    lx->p++;
  }
}

/* Skip blanks and "comments"; returns nonzero if anything was skipped. */
static int skip_space(Lexer *lx) {
  const char *start = lx->p;
  for (;;) {
    int c = cur(lx);
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f') {
      adv(lx);
    } else if (c == '"') {
      int l = lx->line, k = col_of(lx, lx->p);
      adv(lx);
      while (cur(lx) != '"') {
        if (cur(lx) < 0) st_syntax_error(lx, l, k, "unterminated comment");
        adv(lx);
      }
      adv(lx);
    } else {
      break;
    }
  }
  return lx->p != start;
}

static int is_binary_char(int c) {
  return c > 0 && strchr("+-*/\\<>=~@%|&?,", c) != NULL;
}

static int digit_value(int c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'A' && c <= 'Z') return c - 'A' + 10;
  return 99;
}

/* Scan digits in radix into a 62-bit value, or flag overflow; returns the
** number of digits. Digits are copied to *buf for big integers. */
static int scan_digits(Lexer *lx, int radix, int64_t *val, int *over,
                       char **buf, size_t *blen, size_t *bcap) {
  int n = 0;
  while (digit_value(cur(lx)) < radix) {
    int d = digit_value(cur(lx));
    if (*val > (((int64_t)1 << 62) - 1 - d) / radix) *over = 1;
    else *val = *val * radix + d;
    if (*blen + 2 > *bcap) {
      *bcap = *bcap ? *bcap * 2 : 64;
      *buf = xrealloc(*buf, *bcap);
    }
    (*buf)[(*blen)++] = (char)cur(lx);
    adv(lx);
    n++;
  }
  return n;
}

/* A float literal is read exactly: strtod rounds the whole text (any
** length) correctly. A literal beyond the range of a double (it would be
** inf, or 0.0 although it has a nonzero digit) is refused at its place
** rather than read as something else. The exponent letters d and q are
** Smalltalk's; strtod knows e. */
static double read_float(Lexer *lx, const char *text, size_t n, int line,
                         int col) {
  char *tmp = xrealloc(NULL, n + 1);
  int nonzero = 0, in_exp = 0;
  for (size_t i = 0; i < n; i++) {
    char c = text[i];
    if (c == 'e' || c == 'd' || c == 'q') {
      c = 'e';
      in_exp = 1;
    } else if (!in_exp && c >= '1' && c <= '9') {
      nonzero = 1;
    }
    tmp[i] = c;
  }
  tmp[n] = '\0';
  errno = 0;
  double d = strtod(tmp, NULL);
  free(tmp);
  if (isinf(d))
    st_syntax_error(lx, line, col, "float literal too large (beyond %g)",
                    DBL_MAX);
  if (d == 0.0 && nonzero)
    st_syntax_error(lx, line, col, "float literal too small (below %g)",
                    DBL_TRUE_MIN);
  return d;
}

static void scan_number(Lexer *lx, Token *t) {
  int64_t v = 0;
  int over = 0, radix = 10;
  char *digits = NULL;
  size_t dlen = 0, dcap = 0;
  const char *start = lx->p;
  scan_digits(lx, 10, &v, &over, &digits, &dlen, &dcap);
  if (cur(lx) == 'r' && !over && v >= 2 && v <= 36 &&
      digit_value(at(lx, 1)) < v) {
    radix = (int)v;
    adv(lx);
    v = 0;
    dlen = 0;
    scan_digits(lx, radix, &v, &over, &digits, &dlen, &dcap);
  }
  int isfloat = 0;
  if (cur(lx) == '.' && digit_value(at(lx, 1)) < radix && radix == 10) {
    isfloat = 1;
    adv(lx);
    while (isdigit(cur(lx))) adv(lx);
  }
  int64_t exp = 0;
  int has_exp = 0;
  if ((cur(lx) == 'e' || cur(lx) == 'd' || cur(lx) == 'q') &&
      (isdigit(at(lx, 1)) || (at(lx, 1) == '-' && isdigit(at(lx, 2))))) {
    has_exp = 1;
    adv(lx);
    int neg = 0;
    if (cur(lx) == '-') {
      neg = 1;
      adv(lx);
    }
    while (isdigit(cur(lx))) {
      /* Past the limit the value no longer matters: it is refused. */
      if (exp <= ST_MAX_LITERAL_DIGITS) exp = exp * 10 + (cur(lx) - '0');
      adv(lx);
    }
    if (neg) exp = -exp;
  }
  int line = t->line, col = t->col;
  if (radix == 10 && (isfloat || (has_exp && exp < 0))) {
    free(digits);
    t->type = T_FLOAT;
    t->dval = read_float(lx, start, (size_t)(lx->p - start), line, col);
    return;
  }
  if (has_exp && exp < 0) {
    free(digits);
    st_syntax_error(lx, line, col,
                    "a radix %d integer cannot have a negative exponent",
                    radix);
  }
  t->type = T_INT;
  if (has_exp && exp > 0) {
    if ((uint64_t)exp + dlen > ST_MAX_LITERAL_DIGITS) {
      free(digits);
      st_syntax_error(lx, line, col,
                      "integer literal too large (more than %d digits)",
                      ST_MAX_LITERAL_DIGITS);
    }
    /* Integer with exponent: append zeros (in the radix). */
    while (exp-- > 0) {
      if (v > (((int64_t)1 << 62) - 1) / radix) over = 1;
      else if (!over) v *= radix;
      if (dlen + 2 > dcap) {
        dcap = dcap ? dcap * 2 : 64;
        digits = xrealloc(digits, dcap);
      }
      digits[dlen++] = '0';
    }
  }
  if (dlen > ST_MAX_LITERAL_DIGITS) {
    free(digits);
    st_syntax_error(lx, line, col,
                    "integer literal too large (more than %d digits)",
                    ST_MAX_LITERAL_DIGITS);
  }
  if (!over) {
    t->ival = v;
    free(digits);
    return;
  }
  /* Too big for a SmallInteger: keep the digits, radix-prefixed. */
  t->big = 1;
  char pre[8];
  int k = snprintf(pre, sizeof pre, "%d:", radix);
  t->sval = st_arena_alloc(lx->arena, dlen + (size_t)k + 1);
  memcpy(t->sval, pre, (size_t)k);
  memcpy(t->sval + k, digits, dlen);
  t->slen = dlen + (size_t)k;
  free(digits);
}

/* A quoted string starting at the current quote; contents to t->sval. */
static void scan_string(Lexer *lx, Token *t, int line, int col) {
  adv(lx);
  size_t cap = 64, n = 0;
  char *buf = xrealloc(NULL, cap);
  for (;;) {
    int c = cur(lx);
    if (c < 0) {
      free(buf);
      st_syntax_error(lx, line, col, "unterminated string");
    }
    if (c == '\'') {
      if (at(lx, 1) == '\'') {
        adv(lx);
      } else {
        adv(lx);
        break;
      }
    }
    if (n + 2 > cap) buf = xrealloc(buf, cap *= 2);
    buf[n++] = (char)cur(lx);
    adv(lx);
  }
  t->sval = st_arena_strdup(lx->arena, buf, n);
  t->slen = n;
  free(buf);
}

static void scan(Lexer *lx, Token *t) {
  memset(t, 0, sizeof *t);
  t->space_before = skip_space(lx);
  t->line = lx->line;
  t->col = col_of(lx, lx->p);
  t->text = lx->p;
  int c = cur(lx);
  if (c < 0) {
    t->type = T_EOF;
    return;
  }
  if (isalpha(c) || c == '_') {
    while (isalnum(cur(lx)) || cur(lx) == '_') adv(lx);
    if (cur(lx) == ':' && at(lx, 1) != '=') {
      adv(lx);
      t->type = T_KEYWORD;
    } else {
      t->type = T_IDENT;
    }
  } else if (isdigit(c)) {
    scan_number(lx, t);
  } else if (c == '$') {
    adv(lx);
    if (cur(lx) < 0)
      st_syntax_error(lx, t->line, t->col, "character expected after $");
    t->type = T_CHAR;
    t->ival = cur(lx);
    adv(lx);
  } else if (c == '\'') {
    t->type = T_STRING;
    scan_string(lx, t, t->line, t->col);
  } else if (c == '#') {
    adv(lx);
    int d = cur(lx);
    if (d == '(') {
      adv(lx);
      t->type = T_LITARRAY;
    } else if (d == '[') {
      adv(lx);
      t->type = T_BYTEARRAY;
    } else if (d == '\'') {
      t->type = T_SYMBOL;
      scan_string(lx, t, t->line, t->col);
    } else if (isalpha(d) || d == '_') {
      const char *s = lx->p;
      while (isalnum(cur(lx)) || cur(lx) == '_' || cur(lx) == ':') adv(lx);
      t->type = T_SYMBOL;
      t->sval = st_arena_strdup(lx->arena, s, (size_t)(lx->p - s));
      t->slen = (size_t)(lx->p - s);
    } else if (is_binary_char(d)) {
      const char *s = lx->p;
      while (is_binary_char(cur(lx))) adv(lx);
      t->type = T_SYMBOL;
      t->sval = st_arena_strdup(lx->arena, s, (size_t)(lx->p - s));
      t->slen = (size_t)(lx->p - s);
    } else if (d == '#') {
      scan(lx, t); /* ##foo is #foo */
    } else {
      st_syntax_error(lx, t->line, t->col, "bad literal after #");
    }
  } else if (c == ':' && at(lx, 1) == '=') {
    adv(lx);
    adv(lx);
    t->type = T_ASSIGN;
  } else if (is_binary_char(c)) {
    adv(lx);
    /* A '-' never continues a binary selector, so "3+-4" is 3 + -4. */
    while (is_binary_char(cur(lx)) && cur(lx) != '-') adv(lx);
    t->type = T_BINARY;
  } else {
    adv(lx);
    switch (c) {
    case '^': t->type = T_CARET; break;
    case ':': t->type = T_COLON; break;
    case '.': t->type = T_PERIOD; break;
    case ';': t->type = T_SEMI; break;
    case '(': t->type = T_LPAREN; break;
    case ')': t->type = T_RPAREN; break;
    case '[': t->type = T_LBRACK; break;
    case ']': t->type = T_RBRACK; break;
    case '{': t->type = T_LBRACE; break;
    case '}': t->type = T_RBRACE; break;
    case '!': t->type = T_BANG; break;
    default:
      if (isprint(c))
        st_syntax_error(lx, t->line, t->col, "unexpected character '%c'", c);
      st_syntax_error(lx, t->line, t->col, "unexpected byte 0x%02x", c);
    }
  }
  t->len = (size_t)(lx->p - t->text);
}

void st_lex_next(Lexer *lx) {
  if (lx->has_peek) {
    lx->tok = lx->peek;
    lx->has_peek = 0;
  } else {
    scan(lx, &lx->tok);
  }
}

/* Scan the current token again from its text, dropping the lookahead:
** after the arena its strings were in was released. */
void st_lex_rescan(Lexer *lx) {
  int space = lx->tok.space_before;
  lx->p = lx->tok.text;
  lx->line = lx->tok.line;
  lx->line_start = lx->tok.text - (lx->tok.col - 1);
  lx->has_peek = 0;
  scan(lx, &lx->tok);
  lx->tok.space_before = space;
}

const Token *st_lex_peek(Lexer *lx) {
  if (!lx->has_peek) {
    scan(lx, &lx->peek);
    lx->has_peek = 1;
  }
  return &lx->peek;
}

int st_tok_is(const Token *t, TokType type, const char *text) {
  if (t->type != type) return 0;
  if (!text) return 1;
  size_t n = strlen(text);
  return t->len == n && memcmp(t->text, text, n) == 0;
}
