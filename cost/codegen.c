/*
** cost/codegen.c: a C header of integer cost functions (spy_cost_write_c).
**
** Gas schedules and admission checks must give the same answer on every
** machine, so the generated functions use no floating point: every value
** is a signed 128-bit fixed-point number with 32 fractional bits (Q95.32),
** operations saturate instead of wrapping, log2/sqrt/exp2 are computed
** bit by bit, and the result is rounded up to a whole unit and clamped to
** [0, UINT64_MAX]. Coefficients are converted to the unit and rounded up
** when the header is written. Extra predictors (gc) are replaced by their
** mean over the observations, since a caller only knows the sizes.
** The header needs a compiler with __int128 (GCC, Clang).
*/
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cost/fit.h"
#include "cost/util.h"

void spy_cost_codegen_init(spy_cost_codegen *cg) {
  memset(cg, 0, sizeof *cg);
  cg->unit = "ns";
  cg->ns_per_unit = 1;
  cg->typical = 0;
  cg->prefix = "spy_cost_";
  cg->guard = "SPY_COSTS_H";
}

char *spy_cost_c_name(const char *prefix, const char *name) {
  spyC_buf b = {0};
  spyC_bprintf(&b, "%s", prefix ? prefix : "");
  int under = b.n > 0 && b.s[b.n - 1] == '_';
  if (b.n == 0 && name[0] >= '0' && name[0] <= '9') spyC_bprintf(&b, "_");
  for (const char *p = name; *p; p++) {
    unsigned char c = (unsigned char)*p;
    int al = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
             (c >= '0' && c <= '9');
    if (al) {
      spyC_bprintf(&b, "%c", c);
      under = 0;
    } else if (!under) {
      spyC_bprintf(&b, "_");
      under = 1;
    }
  }
  if (b.n == 0) spyC_bprintf(&b, "_");
  return spyC_btake(&b);
}

/* The helpers, emitted once per translation unit. */
static const char helpers[] =
    "#ifndef SPY_FX_DEFINED\n"
    "#define SPY_FX_DEFINED\n"
    "/* Q95.32 fixed point in a signed 128-bit integer; every operation\n"
    "** saturates at +-SPY_FX_SAT. */\n"
    "__extension__ typedef __int128 spy_fx;\n"
    "__extension__ typedef unsigned __int128 spy_ufx;\n"
    "#define SPY_FX_ONE ((spy_fx)1 << 32)\n"
    "#define SPY_FX_SAT ((spy_fx)1 << 124)\n"
    "#define SPY_FX_K(hi, lo) ((spy_fx)(hi) * ((spy_fx)1 << 64) + "
    "(spy_fx)(uint64_t)(lo))\n"
    "static inline spy_fx spy_fx_clamp(spy_fx a) {\n"
    "  return a > SPY_FX_SAT ? SPY_FX_SAT : a < -SPY_FX_SAT ? -SPY_FX_SAT : "
    "a;\n}\n"
    "static inline spy_fx spy_fx_from(uint64_t v) {\n"
    "  return (spy_fx)v << 32;\n}\n"
    "static inline spy_fx spy_fx_add(spy_fx a, spy_fx b) {\n"
    "  return spy_fx_clamp(a + b);\n}\n"
    "static inline spy_fx spy_fx_sub(spy_fx a, spy_fx b) {\n"
    "  return spy_fx_clamp(a - b);\n}\n"
    "static inline spy_fx spy_fx_neg(spy_fx a) { return -a; }\n"
    "static inline spy_fx spy_fx_max(spy_fx a, spy_fx b) {\n"
    "  return a > b ? a : b;\n}\n"
    "static inline spy_fx spy_fx_min(spy_fx a, spy_fx b) {\n"
    "  return a < b ? a : b;\n}\n"
    "static inline spy_ufx spy_fx_abs(spy_fx a) {\n"
    "  return a < 0 ? -(spy_ufx)a : (spy_ufx)a;\n}\n"
    "static inline spy_fx spy_fx_signed(spy_ufx m, int neg) {\n"
    "  spy_fx r = m > (spy_ufx)SPY_FX_SAT ? SPY_FX_SAT : (spy_fx)m;\n"
    "  return neg ? -r : r;\n}\n"
    "static inline spy_fx spy_fx_mul(spy_fx a, spy_fx b) {\n"
    "  spy_ufx x = spy_fx_abs(a), y = spy_fx_abs(b), p;\n"
    "  int neg = (a < 0) != (b < 0);\n"
    "  if (!__builtin_mul_overflow(x, y, &p)) return spy_fx_signed(p >> 32, "
    "neg);\n"
    "  if (!__builtin_mul_overflow(x >> 16, y >> 16, &p))\n"
    "    return spy_fx_signed(p, neg);\n"
    "  return spy_fx_signed((spy_ufx)SPY_FX_SAT, neg);\n}\n"
    "static inline spy_fx spy_fx_div(spy_fx a, spy_fx b) {\n"
    "  spy_ufx x = spy_fx_abs(a), y = spy_fx_abs(b);\n"
    "  int neg = (a < 0) != (b < 0);\n"
    "  if (y == 0) return x == 0 ? 0 : spy_fx_signed((spy_ufx)SPY_FX_SAT, "
    "neg);\n"
    "  if (x < ((spy_ufx)1 << 94)) return spy_fx_signed((x << 32) / y, "
    "neg);\n"
    "  if (y >> 32 == 0) return spy_fx_signed((spy_ufx)SPY_FX_SAT, neg);\n"
    "  return spy_fx_signed(x / (y >> 32), neg);\n}\n"
    "/* log2 for a > 0: the integer part from the top bit, then 32\n"
    "** fraction bits by repeated squaring of the mantissa (Q2.62). */\n"
    "static inline spy_fx spy_fx_log2(spy_fx a) {\n"
    "  if (a <= 0) return -SPY_FX_SAT;\n"
    "  spy_ufx x = (spy_ufx)a;\n"
    "  int top = 127;\n"
    "  while (!(x >> top)) top--;\n"
    "  spy_fx r = (spy_fx)(top - 32) * SPY_FX_ONE;\n"
    "  uint64_t m = top >= 62 ? (uint64_t)(x >> (top - 62))\n"
    "                         : (uint64_t)(x << (62 - top));\n"
    "  for (int i = 31; i >= 0; i--) {\n"
    "    m = (uint64_t)(((spy_ufx)m * m) >> 62);\n"
    "    if (m >= ((uint64_t)2 << 62)) {\n"
    "      m >>= 1;\n"
    "      r += (spy_fx)1 << i;\n"
    "    }\n"
    "  }\n"
    "  return r;\n}\n"
    "static inline spy_ufx spy_fx_isqrt(spy_ufx v) {\n"
    "  spy_ufx r = 0, bit = (spy_ufx)1 << 126;\n"
    "  while (bit > v) bit >>= 2;\n"
    "  while (bit) {\n"
    "    if (v >= r + bit) {\n"
    "      v -= r + bit;\n"
    "      r = (r >> 1) + bit;\n"
    "    } else {\n"
    "      r >>= 1;\n"
    "    }\n"
    "    bit >>= 2;\n"
    "  }\n"
    "  return r;\n}\n"
    "static inline spy_fx spy_fx_sqrt(spy_fx a) {\n"
    "  if (a <= 0) return 0;\n"
    "  spy_ufx x = (spy_ufx)a;\n"
    "  if (x < ((spy_ufx)1 << 94)) return (spy_fx)spy_fx_isqrt(x << 32);\n"
    "  return (spy_fx)(spy_fx_isqrt(x) << 16);\n}\n"
    "/* 2^(2^-i) in Q2.62 for i = 1..32. */\n"
    "static const uint64_t spy_fx_exp2tab[32] = {\n"
    "%s};\n"
    "static inline spy_fx spy_fx_exp2(spy_fx y) {\n"
    "  if (y >= (spy_fx)94 * SPY_FX_ONE) return SPY_FX_SAT;\n"
    "  if (y <= (spy_fx)-33 * SPY_FX_ONE) return 0;\n"
    "  spy_fx k = y >= 0 ? y >> 32 : -((-y + SPY_FX_ONE - 1) >> 32);\n"
    "  uint64_t f = (uint64_t)(y - k * SPY_FX_ONE);\n"
    "  uint64_t m = (uint64_t)1 << 62;\n"
    "  for (int i = 0; i < 32; i++)\n"
    "    if (f >> (31 - i) & 1)\n"
    "      m = (uint64_t)(((spy_ufx)m * spy_fx_exp2tab[i]) >> 62);\n"
    "  spy_fx r = (spy_fx)m;\n"
    "  int s = (int)k - 30;\n"
    "  return s >= 0 ? spy_fx_clamp(r << s) : r >> -s;\n}\n"
    "static inline spy_fx spy_fx_pow(spy_fx a, spy_fx e) {\n"
    "  if (a <= 0) return 0;\n"
    "  return spy_fx_exp2(spy_fx_mul(e, spy_fx_log2(a)));\n}\n"
    "/* Round up to a whole unit, clamped to [0, UINT64_MAX]. */\n"
    "static inline uint64_t spy_fx_ceil_u64(spy_fx a) {\n"
    "  if (a <= 0) return 0;\n"
    "  spy_ufx r = ((spy_ufx)a + (SPY_FX_ONE - 1)) >> 32;\n"
    "  return r > UINT64_MAX ? UINT64_MAX : (uint64_t)r;\n}\n"
    "#endif\n";

/* A constant as SPY_FX_K(hi, lo), rounded up (toward +infinity) and
** saturated. A NaN (a coefficient of a degenerate fit, found by
** cost/fuzz_fit) is unknown: the bound that holds is the largest. */
static void konst(spyC_buf *b, double v) {
  if (isnan(v)) v = HUGE_VAL;
  long double s = ceill((long double)v * 4294967296.0L);
  if (s > 2.1e37L) s = 2.1e37L;
  if (s < -2.1e37L) s = -2.1e37L;
  long double hi = floorl(s / 18446744073709551616.0L);
  long double lo = s - hi * 18446744073709551616.0L;
  spyC_bprintf(b, "SPY_FX_K(%lldLL, %lluULL)", (long long)hi,
               (unsigned long long)lo);
}

static const char *const keywords[] = {
  "auto", "break", "case", "char", "const", "continue", "default", "do",
  "double", "else", "enum", "extern", "float", "for", "goto", "if",
  "inline", "int", "long", "register", "restrict", "return", "short",
  "signed", "sizeof", "static", "struct", "switch", "typedef", "union",
  "unsigned", "void", "volatile", "while", "bool", "true", "false", NULL};

/* A parameter name for variable V that is a valid, non-reserved C
** identifier (the variable names are already identifiers). */
static void param(spyC_buf *b, const char *v) {
  int clash = strncmp(v, "spy_", 4) == 0 || v[0] == '_';
  for (int i = 0; keywords[i] && !clash; i++)
    clash = strcmp(keywords[i], v) == 0;
  spyC_bprintf(b, "%s%s", v, clash ? "_v" : "");
}

typedef struct emitter {
  spyC_buf *b;
  const spyC_model *m;
  const spyC_fitpriv *pv;
  unsigned nsizes;
  const char *const *vars;
} emitter;

/* A coefficient-free tree as nested spy_fx_* calls. */
static void emit(const emitter *e, int k) {
  const spyC_node *n = &e->m->node[k];
  spyC_buf *b = e->b;
  switch (n->op) {
  case SPYC_NUM:
    konst(b, n->num);
    return;
  case SPYC_VAR:
    if ((unsigned)n->index < e->nsizes) {
      spyC_bprintf(b, "spy_fx_from(");
      param(b, e->vars[n->index]);
      spyC_bprintf(b, ")");
    } else {
      konst(b, e->pv->mean[n->index]);
    }
    return;
  case SPYC_NEG:
    spyC_bprintf(b, "spy_fx_neg(");
    emit(e, n->a);
    spyC_bprintf(b, ")");
    return;
  case SPYC_LOG2: case SPYC_SQRT:
    spyC_bprintf(b, n->op == SPYC_LOG2 ? "spy_fx_log2(" : "spy_fx_sqrt(");
    emit(e, n->a);
    spyC_bprintf(b, ")");
    return;
  case SPYC_POW: {
    double x = n->num;
    if (x == floor(x) && x >= 0 && x <= 8) {
      /* Small whole powers by multiplication: exact. */
      int times = (int)x;
      if (times == 0) {
        spyC_bprintf(b, "SPY_FX_ONE");
        return;
      }
      for (int i = 1; i < times; i++) spyC_bprintf(b, "spy_fx_mul(");
      emit(e, n->a);
      for (int i = 1; i < times; i++) {
        spyC_bprintf(b, ", ");
        emit(e, n->a);
        spyC_bprintf(b, ")");
      }
      return;
    }
    spyC_bprintf(b, "spy_fx_pow(");
    emit(e, n->a);
    spyC_bprintf(b, ", ");
    konst(b, x);
    spyC_bprintf(b, ")");
    return;
  }
  default: {
    const char *fn = n->op == SPYC_ADD ? "add" : n->op == SPYC_SUB ? "sub"
                     : n->op == SPYC_MUL ? "mul" : n->op == SPYC_DIV ? "div"
                     : n->op == SPYC_MAX ? "max" : "min";
    spyC_bprintf(b, "spy_fx_%s(", fn);
    emit(e, n->a);
    spyC_bprintf(b, ", ");
    emit(e, n->b);
    spyC_bprintf(b, ")");
    return;
  }
  }
}

/* SRC made safe inside a C comment: no line breaks, no comment end. */
static const char *safe(char *dst, size_t len, const char *src) {
  snprintf(dst, len, "%s", src ? src : "");
  for (char *c = dst; *c; c++)
    if ((unsigned char)*c < 0x20 || (*c == '*' && c[1] == '/')) *c = ' ';
  return dst;
}

/* One function. */
static void function(spyC_buf *b, const spy_cost_fit *f, const char *fname,
                     const spy_cost_codegen *cg) {
  const spyC_fitpriv *pv = SPYC_PRIV(f);
  int bound = !cg->typical && pv->has_bound && pv->bound[0].ok;
  const spyC_model *m = bound ? &pv->bm : &pv->m;
  const double *beta = bound ? pv->bound[0].beta : pv->beta;
  double shift = bound ? pv->bound[0].shift : 0;
  const char *text = bound ? f->bound[0].fitted : f->fitted;
  char nm[256];
  spyC_bprintf(b, "\n/* %s\n**   %s ns", safe(nm, sizeof nm, f->name),
               text ? text : "");
  if (bound)
    spyC_bprintf(b, "\n**   bound at D = %g: %.1f%% of %zu held-out calls at "
                    "or under it",
                 f->confidence, 100 * f->bound[0].coverage,
                 f->bound[0].ntest);
  else
    spyC_bprintf(b, "\n**   typical cost (R^2 %.4f)", f->r2);
  spyC_bprintf(b, "\n*/\nstatic inline uint64_t %s(", fname);
  for (unsigned v = 0; v < f->nsizes; v++) {
    spyC_bprintf(b, "%suint64_t ", v ? ", " : "");
    param(b, f->vars[v]);
  }
  if (f->nsizes == 0) spyC_bprintf(b, "void");
  spyC_bprintf(b, ") {\n  spy_fx c = ");
  double scale = 1 / cg->ns_per_unit;
  emitter e = {b, m, pv, f->nsizes, f->vars};
  konst(b, shift * scale);
  spyC_bprintf(b, ";\n");
  for (int k = 0; k < m->ncoef; k++) {
    spyC_bprintf(b, "  c = spy_fx_add(c, spy_fx_mul(");
    konst(b, beta[k] * scale);
    spyC_bprintf(b, ", ");
    emit(&e, m->basis[k]);
    spyC_bprintf(b, "));\n");
  }
  if (m->offset >= 0) {
    spyC_bprintf(b, "  c = spy_fx_add(c, spy_fx_mul(");
    konst(b, scale);
    spyC_bprintf(b, ", ");
    emit(&e, m->offset);
    spyC_bprintf(b, "));\n");
  }
  for (unsigned v = 0; v < f->nsizes; v++) {
    int used = 0;
    for (int k = 0; k < m->nnode; k++)
      used |= m->node[k].op == SPYC_VAR && (unsigned)m->node[k].index == v;
    if (!used) {
      spyC_bprintf(b, "  (void)");
      param(b, f->vars[v]);
      spyC_bprintf(b, ";\n");
    }
  }
  spyC_bprintf(b, "  return spy_fx_ceil_u64(c);\n}\n");
}

int spy_cost_write_c(const spy_cost_result *r, FILE *fp,
                     const spy_cost_codegen *cg0) {
  spy_cost_codegen cg;
  if (cg0) cg = *cg0;
  else spy_cost_codegen_init(&cg);
  if (!cg.unit) cg.unit = "ns";
  if (!cg.prefix) cg.prefix = "spy_cost_";
  if (!cg.guard) cg.guard = "SPY_COSTS_H";
  if (!r || !fp || !(cg.ns_per_unit > 0) || !isfinite(cg.ns_per_unit))
    return SPY_EINVAL;
  spyC_buf b = {0};
  spyC_buf tab = {0};
  for (int i = 1; i <= 32; i++) {
    long double v = exp2l(ldexpl(1.0L, -i)) * 4611686018427387904.0L;
    spyC_bprintf(&tab, "  %lluULL,\n", (unsigned long long)ceill(v));
  }
  if (tab.oom) return SPY_ENOMEM;
  char src[512];
  safe(src, sizeof src, r->source && *r->source ? r->source : "measurements");
  spyC_bprintf(&b,
               "/* Generated by spyon costs from %s.\n"
               "** One function per primitive: its cost in %s (1 %s = %g "
               "ns), rounded\n"
               "** up, from the %s, in integer fixed-point arithmetic "
               "that\n** saturates. Needs a compiler with __int128. */\n"
               "#ifndef %s\n#define %s\n\n#include <stdint.h>\n\n",
               src, cg.unit, cg.unit, cg.ns_per_unit,
               cg.typical ? "typical-cost model"
                          : "upper bound fitted by quantile regression",
               cg.guard, cg.guard);
  spyC_bprintf(&b, helpers, tab.s);
  free(tab.s);
  char **names = calloc(r->nfits ? r->nfits : 1, sizeof *names);
  if (!names) {
    free(b.s);
    return SPY_ENOMEM;
  }
  for (size_t i = 0; i < r->nfits; i++) {
    const spy_cost_fit *f = &r->fits[i];
    if (f->status) {
      char nm[256], msg[256];
      spyC_bprintf(&b, "\n/* %s: not fitted (%s) */\n",
                   safe(nm, sizeof nm, f->name),
                   safe(msg, sizeof msg, f->message));
      continue;
    }
    char *base = spy_cost_c_name(cg.prefix, f->name);
    if (!base) break;
    /* Disambiguate names that sanitise alike. */
    char *name = spyC_strdup(base);
    for (int k = 2; name; k++) {
      int clash = 0;
      for (size_t j = 0; j < i && !clash; j++)
        clash = names[j] && strcmp(names[j], name) == 0;
      if (!clash) break;
      free(name);
      spyC_buf nb = {0};
      spyC_bprintf(&nb, "%s_%d", base, k);
      name = spyC_btake(&nb);
    }
    free(base);
    if (!name) break;
    names[i] = name;
    function(&b, f, name, &cg);
  }
  spyC_bprintf(&b, "\n#endif\n");
  for (size_t i = 0; i < r->nfits; i++) free(names[i]);
  free(names);
  if (b.oom) {
    free(b.s);
    return SPY_ENOMEM;
  }
  int rc = fwrite(b.s, 1, b.n, fp) == b.n ? 0 : SPY_EIO;
  free(b.s);
  return rc;
}
