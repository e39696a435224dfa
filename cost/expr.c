/*
** cost/expr.c: parsing, checking, linearising, compiling and printing model
** expressions (see cost/expr.h and docs/costs.md for the language).
*/
#include "config.h"

#include "cost/expr.h"
#include "cost/util.h"

#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ===================================================================
** Node arena
** =================================================================== */

static int mk(spyC_model *m, int op, int a, int b, int col) {
  if (m->nnode >= 4 * SPYC_MAXNODE) return -1;
  if (m->nnode == m->cap) {
    int cap = m->cap ? 2 * m->cap : 64;
    spyC_node *nn = realloc(m->node, (size_t)cap * sizeof *nn);
    if (!nn) return -1;
    m->node = nn;
    m->cap = cap;
  }
  spyC_node *n = &m->node[m->nnode];
  memset(n, 0, sizeof *n);
  n->op = (unsigned char)op;
  n->a = a;
  n->b = b;
  n->col = col;
  n->dep = (unsigned char)((a >= 0 && m->node[a].dep) ||
                           (b >= 0 && m->node[b].dep));
  return m->nnode++;
}

static int mk_num(spyC_model *m, double v, int col) {
  int k = mk(m, SPYC_NUM, -1, -1, col);
  if (k >= 0) m->node[k].num = v;
  return k;
}

/* ===================================================================
** Lexer and recursive-descent parser
** =================================================================== */

enum { TK_END, TK_NUM, TK_NAME, TK_OP };

typedef struct parser {
  spyC_model *m;
  const char *s;
  size_t pos;
  int tok;          /* TK_* */
  int tcol;         /* column of the current token */
  char op;          /* TK_OP: one of + - * / ^ ( ) ,  ('^' also for **) */
  double num;
  char name[64];
  const char *const *vars;
  int nvars;
  int depth;
  int errcol;
  char *err;
  size_t errlen;
  int failed;
} parser;

static void fail(parser *p, int col, const char *fmt, ...) {
  if (p->failed) return;
  p->failed = 1;
  p->errcol = col > 0 ? col : 1;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(p->err, p->errlen, fmt, ap);
  va_end(ap);
}

/* Read the next token. Numbers follow C's decimal syntax (no sign, no hex);
** names are [A-Za-z_][A-Za-z0-9_]*. */
static void next(parser *p) {
  const char *s = p->s;
  while (s[p->pos] == ' ' || s[p->pos] == '\t' || s[p->pos] == '\n' ||
         s[p->pos] == '\r')
    p->pos++;
  p->tcol = (int)p->pos + 1;
  unsigned char c = (unsigned char)s[p->pos];
  if (c == '\0') {
    p->tok = TK_END;
    return;
  }
  if (isdigit(c) || (c == '.' && isdigit((unsigned char)s[p->pos + 1]))) {
    size_t i = p->pos;
    while (isdigit((unsigned char)s[i])) i++;
    if (s[i] == '.') {
      i++;
      while (isdigit((unsigned char)s[i])) i++;
    }
    if (s[i] == 'e' || s[i] == 'E') {
      size_t j = i + 1;
      if (s[j] == '+' || s[j] == '-') j++;
      if (isdigit((unsigned char)s[j])) {
        while (isdigit((unsigned char)s[j])) j++;
        i = j;
      }
    }
    char buf[80];
    size_t len = i - p->pos;
    if (len >= sizeof buf) {
      fail(p, p->tcol, "number too long");
      p->tok = TK_END;
      return;
    }
    memcpy(buf, s + p->pos, len);
    buf[len] = '\0';
    p->num = strtod(buf, NULL);
    if (!isfinite(p->num)) fail(p, p->tcol, "number out of range");
    p->pos = i;
    p->tok = TK_NUM;
    return;
  }
  if (isalpha(c) || c == '_') {
    size_t i = p->pos;
    while (isalnum((unsigned char)s[i]) || s[i] == '_') i++;
    size_t len = i - p->pos;
    if (len >= sizeof p->name) {
      fail(p, p->tcol, "name too long");
      p->tok = TK_END;
      return;
    }
    memcpy(p->name, s + p->pos, len);
    p->name[len] = '\0';
    p->pos = i;
    p->tok = TK_NAME;
    return;
  }
  if (strchr("+-*/^(),", (int)c)) {
    p->tok = TK_OP;
    p->op = (char)c;
    p->pos++;
    if (c == '*' && s[p->pos] == '*') {
      p->op = '^';
      p->pos++;
    }
    return;
  }
  if (isprint(c))
    fail(p, p->tcol, "unexpected character '%c'", c);
  else
    fail(p, p->tcol, "unexpected byte 0x%02x", c);
  p->tok = TK_END;
}

static int is_op(const parser *p, char op) {
  return p->tok == TK_OP && p->op == op;
}

static const char *tokdesc(const parser *p) {
  static const char *const ops[] = {"'+'", "'-'", "'*'", "'/'", "'^'",
                                    "'('", "')'", "','"};
  switch (p->tok) {
  case TK_END: return "end of model";
  case TK_NUM: return "a number";
  case TK_NAME: return "a name";
  default: {
    const char *k = strchr("+-*/^(),", p->op);
    return k ? ops[k - "+-*/^(),"] : "an operator";
  }
  }
}

static int parse_expr(parser *p);

/* Check the linearity rules when a node is built, so the error points at
** the operator that broke them. */
static int checked(parser *p, int op, int a, int b, int col) {
  if (p->failed || a < 0 || (b < 0 && op != SPYC_NEG && op != SPYC_POW &&
                             op != SPYC_LOG2 && op != SPYC_SQRT))
    return -1;
  spyC_model *m = p->m;
  int da = m->node[a].dep, db = b >= 0 ? m->node[b].dep : 0;
  switch (op) {
  case SPYC_MUL:
    if (da && db) {
      fail(p, col, "product of two coefficient terms: a model must be "
                   "linear in its coefficients");
      return -1;
    }
    break;
  case SPYC_DIV:
    if (db) {
      fail(p, col, "division by a coefficient term: a model must be linear "
                   "in its coefficients");
      return -1;
    }
    break;
  case SPYC_POW:
    if (da) {
      fail(p, col, "power of a coefficient term: a model must be linear in "
                   "its coefficients");
      return -1;
    }
    break;
  case SPYC_LOG2: case SPYC_SQRT: case SPYC_MAX: case SPYC_MIN:
    if (da || db) {
      fail(p, col, "coefficient inside a function: a model must be linear "
                   "in its coefficients");
      return -1;
    }
    break;
  default:
    break;
  }
  int k = mk(m, op, a, b, col);
  if (k < 0) fail(p, col, "model too large");
  return k;
}

/* A constant subtree's value (for exponents), or NAN when it is not
** constant. */
static double const_value(const spyC_model *m, int k) {
  const spyC_node *n = &m->node[k];
  double a = n->a >= 0 ? const_value(m, n->a) : 0;
  double b = n->b >= 0 ? const_value(m, n->b) : 0;
  switch (n->op) {
  case SPYC_NUM: return n->num;
  case SPYC_ADD: return a + b;
  case SPYC_SUB: return a - b;
  case SPYC_MUL: return a * b;
  case SPYC_DIV: return a / b;
  case SPYC_NEG: return -a;
  case SPYC_POW: return pow(a, n->num);
  case SPYC_LOG2: return log2(a);
  case SPYC_SQRT: return sqrt(a);
  case SPYC_MAX: return a > b ? a : b;
  case SPYC_MIN: return a < b ? a : b;
  default: return NAN;
  }
}

static int name_node(parser *p, int col) {
  spyC_model *m = p->m;
  for (int i = 0; i < p->nvars; i++)
    if (p->vars[i] && strcmp(p->vars[i], p->name) == 0) {
      int k = mk(m, SPYC_VAR, -1, -1, col);
      if (k < 0) {
        fail(p, col, "model too large");
        return -1;
      }
      m->node[k].index = i;
      return k;
    }
  if (p->name[0] != 'c') {
    fail(p, col, "unknown variable '%s' (variables are the size and "
                 "predictor columns; coefficient names start with 'c')",
         p->name);
    return -1;
  }
  int ci = spyC_model_coef(m, p->name);
  if (ci < 0) {
    if (m->ncoef == SPYC_MAXCOEF) {
      fail(p, col, "more than %d coefficients", SPYC_MAXCOEF);
      return -1;
    }
    if (!(m->coef[m->ncoef] = spyC_strdup(p->name))) {
      fail(p, col, "out of memory");
      return -1;
    }
    ci = m->ncoef++;
  }
  int k = mk(m, SPYC_COEF, -1, -1, col);
  if (k < 0) {
    fail(p, col, "model too large");
    return -1;
  }
  m->node[k].index = ci;
  m->node[k].dep = 1;
  return k;
}

/* primary := NUMBER | NAME | NAME '(' expr {',' expr} ')' | '(' expr ')' */
static int parse_primary(parser *p) {
  int col = p->tcol;
  if (p->tok == TK_NUM) {
    int k = mk_num(p->m, p->num, col);
    if (k < 0) fail(p, col, "model too large");
    next(p);
    return k;
  }
  if (is_op(p, '(')) {
    next(p);
    int k = parse_expr(p);
    if (p->failed) return -1;
    if (!is_op(p, ')')) {
      fail(p, p->tcol, "expected ')' to close the '(' at column %d, found %s",
           col, tokdesc(p));
      return -1;
    }
    next(p);
    return k;
  }
  if (p->tok != TK_NAME) {
    fail(p, col, "expected a number, a name or '(', found %s", tokdesc(p));
    return -1;
  }
  char name[64];
  memcpy(name, p->name, sizeof name);
  next(p);
  if (!is_op(p, '(')) {
    memcpy(p->name, name, sizeof name);
    return name_node(p, col);
  }
  int op, minargs, maxargs;
  if (strcmp(name, "log2") == 0) op = SPYC_LOG2, minargs = maxargs = 1;
  else if (strcmp(name, "sqrt") == 0) op = SPYC_SQRT, minargs = maxargs = 1;
  else if (strcmp(name, "max") == 0) op = SPYC_MAX, minargs = 2, maxargs = 64;
  else if (strcmp(name, "min") == 0) op = SPYC_MIN, minargs = 2, maxargs = 64;
  else {
    fail(p, col, "unknown function '%s' (known: log2, sqrt, max, min)", name);
    return -1;
  }
  next(p);
  int acc = -1, nargs = 0;
  for (;;) {
    int k = parse_expr(p);
    if (p->failed) return -1;
    nargs++;
    if (nargs > maxargs) {
      fail(p, col, "too many arguments to %s()", name);
      return -1;
    }
    if (op == SPYC_LOG2 || op == SPYC_SQRT) acc = checked(p, op, k, -1, col);
    else acc = acc < 0 ? k : checked(p, op, acc, k, col);
    if (p->failed) return -1;
    if (is_op(p, ',')) {
      next(p);
      continue;
    }
    if (!is_op(p, ')')) {
      fail(p, p->tcol, "expected ',' or ')' in the arguments of %s(), "
                       "found %s", name, tokdesc(p));
      return -1;
    }
    next(p);
    break;
  }
  if (nargs < minargs) {
    fail(p, col, "%s() needs %d argument%s", name, minargs,
         minargs > 1 ? "s" : "");
    return -1;
  }
  return acc;
}

static int parse_unary(parser *p);

/* power := primary [ ('^' | '**') unary ], the exponent a constant. */
static int parse_power(parser *p) {
  int base = parse_primary(p);
  if (p->failed || !is_op(p, '^')) return base;
  int col = p->tcol;
  next(p);
  int ecol = p->tcol;
  if (++p->depth > SPYC_MAXDEPTH) {
    fail(p, ecol, "model nested too deeply");
    return -1;
  }
  int e = parse_unary(p);
  p->depth--;
  if (p->failed) return -1;
  double v = const_value(p->m, e);
  if (!isfinite(v)) {
    fail(p, ecol, "the exponent must be a constant number");
    return -1;
  }
  int k = checked(p, SPYC_POW, base, -1, col);
  if (k >= 0) p->m->node[k].num = v;
  return k;
}

/* unary := ('-' | '+') unary | power */
static int parse_unary(parser *p) {
  if (is_op(p, '-') || is_op(p, '+')) {
    int col = p->tcol;
    int neg = is_op(p, '-');
    next(p);
    if (++p->depth > SPYC_MAXDEPTH) {
      fail(p, col, "model nested too deeply");
      return -1;
    }
    int a = parse_unary(p);
    p->depth--;
    return neg ? checked(p, SPYC_NEG, a, -1, col) : a;
  }
  return parse_power(p);
}

/* term := unary { ('*' | '/') unary } */
static int parse_term(parser *p) {
  int a = parse_unary(p);
  while (!p->failed && (is_op(p, '*') || is_op(p, '/'))) {
    int op = is_op(p, '*') ? SPYC_MUL : SPYC_DIV, col = p->tcol;
    next(p);
    int b = parse_unary(p);
    a = checked(p, op, a, b, col);
  }
  return a;
}

/* expr := term { ('+' | '-') term } */
static int parse_expr(parser *p) {
  if (++p->depth > SPYC_MAXDEPTH) {
    fail(p, p->tcol, "model nested too deeply");
    return -1;
  }
  int a = parse_term(p);
  while (!p->failed && (is_op(p, '+') || is_op(p, '-'))) {
    int op = is_op(p, '+') ? SPYC_ADD : SPYC_SUB, col = p->tcol;
    next(p);
    int b = parse_term(p);
    a = checked(p, op, a, b, col);
  }
  p->depth--;
  return a;
}

/* ===================================================================
** Linearisation: f = offset + sum_k c_k * basis_k
** =================================================================== */

typedef struct term {
  int coef;   /* -1: coefficient-free part */
  int factor; /* coefficient-free tree, -1 meaning the constant 1 */
} term;

typedef struct termlist {
  term *t;
  int n, cap;
} termlist;

static int push_term(termlist *l, int coef, int factor) {
  if (l->n == l->cap) {
    int cap = l->cap ? 2 * l->cap : 16;
    if (cap > 4 * SPYC_MAXNODE) return -1;
    term *nt = realloc(l->t, (size_t)cap * sizeof *nt);
    if (!nt) return -1;
    l->t = nt;
    l->cap = cap;
  }
  l->t[l->n].coef = coef;
  l->t[l->n].factor = factor;
  l->n++;
  return 0;
}

/* Multiply (op SPYC_MUL/SPYC_DIV) or negate the factors of terms [from, n),
** building new coefficient-free nodes. */
static int map_terms(spyC_model *m, termlist *l, int from, int op, int by) {
  for (int i = from; i < l->n; i++) {
    int f = l->t[i].factor, k;
    if (op == SPYC_NEG) {
      k = f < 0 ? mk_num(m, -1, 0) : mk(m, SPYC_NEG, f, -1, 0);
    } else if (f < 0 && op == SPYC_MUL) {
      k = by;
    } else {
      int one = f < 0 ? mk_num(m, 1, 0) : f;
      k = one < 0 ? -1 : mk(m, op, one, by, 0);
    }
    if (k < 0) return -1;
    l->t[i].factor = k;
  }
  return 0;
}

/* Collect the terms of subtree K, which has passed the linearity checks. */
static int linearise(spyC_model *m, int k, termlist *l) {
  spyC_node n = m->node[k];
  if (!n.dep) return push_term(l, -1, k);
  int from = l->n, mid;
  switch (n.op) {
  case SPYC_COEF:
    return push_term(l, n.index, -1);
  case SPYC_ADD:
    return linearise(m, n.a, l) || linearise(m, n.b, l) ? -1 : 0;
  case SPYC_SUB:
    if (linearise(m, n.a, l)) return -1;
    mid = l->n;
    return linearise(m, n.b, l) || map_terms(m, l, mid, SPYC_NEG, -1) ? -1
                                                                      : 0;
  case SPYC_NEG:
    return linearise(m, n.a, l) || map_terms(m, l, from, SPYC_NEG, -1) ? -1
                                                                       : 0;
  case SPYC_MUL:
    if (m->node[n.a].dep)
      return linearise(m, n.a, l) || map_terms(m, l, from, SPYC_MUL, n.b)
                 ? -1 : 0;
    return linearise(m, n.b, l) || map_terms(m, l, from, SPYC_MUL, n.a)
               ? -1 : 0;
  case SPYC_DIV:
    return linearise(m, n.a, l) || map_terms(m, l, from, SPYC_DIV, n.b)
               ? -1 : 0;
  default:
    return -1; /* the parser rejects every other coefficient use */
  }
}

/* ===================================================================
** Compilation to postfix programs and evaluation
** =================================================================== */

static int emit(const spyC_model *m, int k, spyC_prog *pr, int cap, int sp,
                int *maxsp) {
  const spyC_node *n = &m->node[k];
  if (n->a >= 0) {
    sp = emit(m, n->a, pr, cap, sp, maxsp);
    if (sp < 0) return -1;
  }
  if (n->b >= 0) {
    sp = emit(m, n->b, pr, cap, sp, maxsp);
    if (sp < 0) return -1;
  }
  if (pr->n >= cap) return -1;
  spyC_ins *in = &pr->ins[pr->n++];
  in->op = n->op;
  in->index = n->index;
  in->num = n->num;
  if (n->op == SPYC_NUM || n->op == SPYC_VAR) sp++;
  else if (n->b >= 0) sp--;
  if (sp > *maxsp) *maxsp = sp;
  return sp;
}

/* Instructions needed for subtree K (shared subtrees count each time they
** are used), or a number above LIMIT once it is clear the program would be
** too long. */
static int count_nodes(const spyC_model *m, int k, int limit) {
  const spyC_node *n = &m->node[k];
  int c = 1;
  if (n->a >= 0) c += count_nodes(m, n->a, limit - c);
  if (c <= limit && n->b >= 0) c += count_nodes(m, n->b, limit - c);
  return c;
}

#define SPYC_MAXPROG 65536

static int compile(const spyC_model *m, int k, spyC_prog *pr) {
  pr->ins = NULL;
  int cap = count_nodes(m, k, SPYC_MAXPROG);
  if (cap > SPYC_MAXPROG) return -1;
  pr->ins = malloc((size_t)cap * sizeof *pr->ins);
  if (!pr->ins) return -1;
  pr->n = 0;
  pr->depth = 0;
  return emit(m, k, pr, cap, 0, &pr->depth) < 0 ? -1 : 0;
}

static double run(const spyC_prog *pr, const double *x, double *st) {
  int sp = 0;
  for (int i = 0; i < pr->n; i++) {
    const spyC_ins *in = &pr->ins[i];
    switch (in->op) {
    case SPYC_NUM: st[sp++] = in->num; break;
    case SPYC_VAR: st[sp++] = x[in->index]; break;
    case SPYC_ADD: sp--; st[sp - 1] += st[sp]; break;
    case SPYC_SUB: sp--; st[sp - 1] -= st[sp]; break;
    case SPYC_MUL: sp--; st[sp - 1] *= st[sp]; break;
    case SPYC_DIV: sp--; st[sp - 1] /= st[sp]; break;
    case SPYC_NEG: st[sp - 1] = -st[sp - 1]; break;
    case SPYC_POW: st[sp - 1] = pow(st[sp - 1], in->num); break;
    case SPYC_LOG2: st[sp - 1] = log2(st[sp - 1]); break;
    case SPYC_SQRT: st[sp - 1] = sqrt(st[sp - 1]); break;
    case SPYC_MAX:
      sp--;
      if (!(st[sp - 1] >= st[sp])) st[sp - 1] = st[sp];
      break;
    case SPYC_MIN:
      sp--;
      if (!(st[sp - 1] <= st[sp])) st[sp - 1] = st[sp];
      break;
    default: return NAN;
    }
  }
  return st[0];
}

int spyC_model_basis(const spyC_model *m, const double *x, double *g,
                     double *off, double *stack) {
  int bad = 0;
  for (int k = 0; k < m->ncoef; k++) {
    g[k] = run(&m->prog[k], x, stack);
    bad |= !isfinite(g[k]);
  }
  *off = m->offset >= 0 ? run(&m->offprog, x, stack) : 0.0;
  bad |= !isfinite(*off);
  return bad ? -1 : 0;
}

double spyC_model_eval(const spyC_model *m, const double *beta,
                       const double *x) {
  double st[4 * SPYC_MAXDEPTH + 16], g[SPYC_MAXCOEF], off;
  if (spyC_model_basis(m, x, g, &off, st) < 0) return NAN;
  double v = off;
  for (int k = 0; k < m->ncoef; k++) v += beta[k] * g[k];
  return v;
}

/* ===================================================================
** Public entry points of this component
** =================================================================== */

void spyC_model_free(spyC_model *m) {
  if (!m) return;
  free(m->text);
  free(m->node);
  for (int k = 0; k < m->ncoef; k++) {
    free(m->coef[k]);
    free(m->prog[k].ins);
  }
  free(m->offprog.ins);
  memset(m, 0, sizeof *m);
  m->root = m->offset = -1;
}

int spyC_model_coef(const spyC_model *m, const char *name) {
  for (int k = 0; k < m->ncoef; k++)
    if (strcmp(m->coef[k], name) == 0) return k;
  return -1;
}

int spyC_model_uses(const spyC_model *m, int v) {
  for (int k = 0; k < m->nnode; k++)
    if (m->node[k].op == SPYC_VAR && m->node[k].index == v) return 1;
  return 0;
}

/* Split the checked tree into offset and bases and compile them. */
static int finish(spyC_model *m) {
  termlist l = {0};
  if (linearise(m, m->root, &l) < 0) {
    free(l.t);
    return -1;
  }
  for (int k = 0; k < m->ncoef; k++) m->basis[k] = -1;
  m->offset = -1;
  int rc = 0;
  for (int k = -1; k < m->ncoef && !rc; k++) {
    int acc = -1, any = 0;
    for (int i = 0; i < l.n && !rc; i++) {
      if (l.t[i].coef != k) continue;
      int f = l.t[i].factor >= 0 ? l.t[i].factor : mk_num(m, 1, 0);
      acc = any ? mk(m, SPYC_ADD, acc, f, 0) : f;
      any = 1;
      if (acc < 0) rc = -1;
    }
    if (k < 0) m->offset = any ? acc : -1;
    else m->basis[k] = acc;
  }
  free(l.t);
  if (rc) return -1;
  m->maxdepth = 1;
  for (int k = 0; k < m->ncoef; k++) {
    if (m->basis[k] < 0 || compile(m, m->basis[k], &m->prog[k]) < 0)
      return -1;
    if (m->prog[k].depth > m->maxdepth) m->maxdepth = m->prog[k].depth;
  }
  if (m->offset >= 0) {
    if (compile(m, m->offset, &m->offprog) < 0) return -1;
    if (m->offprog.depth > m->maxdepth) m->maxdepth = m->offprog.depth;
  }
  return m->maxdepth > 4 * SPYC_MAXDEPTH + 16 ? -1 : 0;
}

int spyC_model_parse(spyC_model *m, const char *text,
                     const char *const *vars, int nvars, int *errcol,
                     char *err, size_t errlen) {
  memset(m, 0, sizeof *m);
  m->root = m->offset = -1;
  m->nvar = nvars;
  char dummy[8];
  if (!err || !errlen) err = dummy, errlen = sizeof dummy;
  parser p = {.m = m, .s = text, .vars = vars, .nvars = nvars,
              .err = err, .errlen = errlen};
  if (strlen(text) > SPYC_MAXTEXT) {
    fail(&p, SPYC_MAXTEXT, "model longer than %d characters", SPYC_MAXTEXT);
  } else {
    next(&p);
    if (!p.failed && p.tok == TK_END) fail(&p, 1, "empty model");
    if (!p.failed) m->root = parse_expr(&p);
    if (!p.failed && p.tok != TK_END)
      fail(&p, p.tcol, "expected an operator or the end of the model, "
                       "found %s", tokdesc(&p));
    if (!p.failed && m->ncoef == 0)
      fail(&p, 1, "the model has no coefficients (their names start "
                  "with 'c', e.g. c0 + c1*n)");
  }
  if (!p.failed && finish(m) < 0) fail(&p, 1, "model too large");
  if (!p.failed && !(m->text = spyC_strdup(text))) fail(&p, 1, "out of memory");
  if (p.failed) {
    if (errcol) *errcol = p.errcol;
    spyC_model_free(m);
    m->nvar = nvars;
    return SPY_EINVAL;
  }
  return 0;
}

int spyC_model_copy(spyC_model *dst, const spyC_model *src) {
  memset(dst, 0, sizeof *dst);
  dst->root = dst->offset = -1;
  dst->node = malloc((size_t)(src->cap ? src->cap : 1) * sizeof *dst->node);
  dst->text = spyC_strdup(src->text ? src->text : "");
  if (!dst->node || !dst->text) goto oom;
  memcpy(dst->node, src->node, (size_t)src->nnode * sizeof *dst->node);
  dst->nnode = src->nnode;
  dst->cap = src->cap ? src->cap : 1;
  dst->root = src->root;
  dst->nvar = src->nvar;
  dst->offset = src->offset;
  dst->maxdepth = src->maxdepth;
  for (int k = 0; k < src->ncoef; k++) {
    dst->basis[k] = src->basis[k];
    dst->coef[k] = spyC_strdup(src->coef[k]);
    dst->ncoef = k + 1;
    if (!dst->coef[k] || compile(dst, dst->basis[k], &dst->prog[k]) < 0)
      goto oom;
  }
  if (dst->offset >= 0 && compile(dst, dst->offset, &dst->offprog) < 0)
    goto oom;
  return 0;
oom:
  spyC_model_free(dst);
  return SPY_ENOMEM;
}

/* ===================================================================
** Printing
** =================================================================== */

static int prec(int op) {
  switch (op) {
  case SPYC_ADD: case SPYC_SUB: return 1;
  case SPYC_MUL: case SPYC_DIV: return 2;
  case SPYC_NEG: return 3;
  case SPYC_POW: return 4;
  default: return 5;
  }
}

typedef struct printer {
  const spyC_model *m;
  const double *beta;
  int sig;
  const char *const *vars;
} printer;

static void pr_node(const printer *pp, spyC_buf *b, int k, int minprec) {
  const spyC_node *n = &pp->m->node[k];
  char num[40];
  int p = prec(n->op);
  /* A negative literal or substituted value behaves like a unary minus. */
  int neglit = (n->op == SPYC_NUM && n->num < 0) ||
               (n->op == SPYC_COEF && pp->beta && pp->beta[n->index] < 0);
  if (neglit) p = 3;
  int paren = p < minprec;
  if (paren) spyC_bprintf(b, "(");
  switch (n->op) {
  case SPYC_NUM: spyC_bprintf(b, "%s", spyC_fmt_num(num, n->num)); break;
  case SPYC_VAR:
    spyC_bprintf(b, "%s",
                 pp->vars && pp->vars[n->index] ? pp->vars[n->index] : "?");
    break;
  case SPYC_COEF:
    if (pp->beta)
      spyC_bprintf(b, "%.*g", pp->sig,
                   pp->beta[n->index] == 0 ? 0.0 : pp->beta[n->index]);
    else spyC_bprintf(b, "%s", pp->m->coef[n->index]);
    break;
  case SPYC_ADD: case SPYC_SUB:
    pr_node(pp, b, n->a, 1);
    spyC_bprintf(b, n->op == SPYC_ADD ? " + " : " - ");
    pr_node(pp, b, n->b, n->op == SPYC_ADD ? 1 : 2);
    break;
  case SPYC_MUL: case SPYC_DIV:
    pr_node(pp, b, n->a, 2);
    spyC_bprintf(b, n->op == SPYC_MUL ? "*" : "/");
    pr_node(pp, b, n->b, n->op == SPYC_MUL ? 2 : 3);
    break;
  case SPYC_NEG:
    /* "--a", not "-(-a)": printing must not nest deeper than parsing. */
    spyC_bprintf(b, "-");
    pr_node(pp, b, n->a, 3);
    break;
  case SPYC_POW:
    pr_node(pp, b, n->a, 5);
    if (n->num < 0) spyC_bprintf(b, "^(%s)", spyC_fmt_num(num, n->num));
    else spyC_bprintf(b, "^%s", spyC_fmt_num(num, n->num));
    break;
  case SPYC_LOG2: case SPYC_SQRT:
    spyC_bprintf(b, n->op == SPYC_LOG2 ? "log2(" : "sqrt(");
    pr_node(pp, b, n->a, 0);
    spyC_bprintf(b, ")");
    break;
  case SPYC_MAX: case SPYC_MIN:
    spyC_bprintf(b, n->op == SPYC_MAX ? "max(" : "min(");
    pr_node(pp, b, n->a, 0);
    spyC_bprintf(b, ", ");
    pr_node(pp, b, n->b, 0);
    spyC_bprintf(b, ")");
    break;
  default: break;
  }
  if (paren) spyC_bprintf(b, ")");
}

char *spyC_model_print(const spyC_model *m, const double *beta, int sig,
                       const char *const *vars) {
  if (m->root < 0) return NULL;
  spyC_buf b = {0};
  printer pp = {m, beta, sig > 0 ? sig : 4, vars};
  pr_node(&pp, &b, m->root, 0);
  return spyC_btake(&b);
}

char *spyC_tree_print(const spyC_model *m, int node, const char *const *vars) {
  if (node < 0) return NULL;
  spyC_buf b = {0};
  printer pp = {m, NULL, 4, vars};
  pr_node(&pp, &b, node, 0);
  return spyC_btake(&b);
}
