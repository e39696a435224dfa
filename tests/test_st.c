/*
** tests/test_st.c: the "st" suite: the Smalltalk interpreter (hosts/st)
** and "spyon SCRIPT.st".
**
** Language tests run the scripts in tests/st with the standalone
** interpreter and compare the output with the expected .out files next to
** them. Large integers are checked against GMP's mpz functions (an
** independent computation: the kernel builds its algorithms from mpn
** digit primitives). The end-to-end tests run spyon on the examples and
** assert on the JSON export: tree shape, leaf shares, process split.
*/
#include "config.h"

#include "tests/test_st.h"

#include <errno.h>
#include <gmp.h>
#include <math.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <spyon/profile.h>


/* ===================================================================== */
/* Running scripts                                                       */
/* ===================================================================== */

char cmd[16384];

/* Copy tests/st/NAME (or examples/NAME) into the scratch directory, so
** that messages name the file as the test expects. */
void stage(const char *dir, const char *name) {
  snprintf(cmd, sizeof cmd, "cp '%s/%s/%s' '%s/'", t_srcdir, dir, name,
           t_tmpdir());
  T_EQ_INT(system(cmd), 0);
}

/* Run a command line in the scratch directory with the source kernel;
** stdout to *out, stderr to *err (both may be NULL). Returns the status. */
int run_in_tmp(const char *line, char **out, char **err) {
  char full[17000];
  snprintf(full, sizeof full,
           "cd '%s' && SPYON_KERNEL='%s/hosts/st/kernel' %s 2> stderr.txt",
           t_tmpdir(), t_srcdir, line);
  int rc = t_run(full, out);
  if (err) {
    char path[4200];
    snprintf(path, sizeof path, "%s/stderr.txt", t_tmpdir());
    *err = t_slurp(path, NULL);
    T_ASSERT(*err);
  }
  return rc;
}

int run_st(const char *script, char **out, char **err) {
  char line[4300];
  snprintf(line, sizeof line, "'%s/hosts/st/st' %s", t_builddir, script);
  return run_in_tmp(line, out, err);
}

void write_bytes(const char *name, const char *data, size_t len) {
  char path[4200];
  snprintf(path, sizeof path, "%s/%s", t_tmpdir(), name);
  FILE *f = fopen(path, "wb");
  T_ASSERT(f);
  T_ASSERT(fwrite(data, 1, len, f) == len);
  fclose(f);
}

void write_file(const char *name, const char *text) {
  write_bytes(name, text, strlen(text));
}

/* Run tests/st/NAME.st and compare stdout with NAME.out. */
void expect_output(const char *name) {
  char script[256], want_path[4300];
  snprintf(script, sizeof script, "%s.st", name);
  stage("tests/st", script);
  snprintf(want_path, sizeof want_path, "%s/tests/st/%s.out", t_srcdir, name);
  char *want = t_slurp(want_path, NULL), *out = NULL;
  T_ASSERT(want);
  T_EQ_INT(run_st(script, &out, NULL), 0);
  if (strcmp(out, want) != 0) {
    /* Show the first differing line. */
    const char *a = out, *b = want;
    int line = 1;
    while (*a && *a == *b) {
      if (*a == '\n') line++;
      a++;
      b++;
    }
    T_FAIL("%s.out differs at line %d:\n got: %.80s\nwant: %.80s", name, line,
           a, b);
  }
  free(want);
  free(out);
}

/* Saved profiles */

spy_profile *load(const char *name) {
  char path[4200], err[512];
  spy_profile *p = NULL;
  snprintf(path, sizeof path, "%s/%s", t_tmpdir(), name);
  if (spy_profile_load(path, &p, err, sizeof err) < 0) T_FAIL("%s", err);
  return p;
}

int has_frame(const spy_profile *p, const char *name) {
  for (size_t i = 0; i < p->nframes; i++)
    if (!strcmp(p->frames[i].name, name)) return 1;
  return 0;
}

/* ===================================================================== */
/* A small JSON reader for the export                                    */
/* ===================================================================== */



static void jspace(const char **p) {
  while (**p == ' ' || **p == '\n' || **p == '\t' || **p == '\r') (*p)++;
}

static char *jstring(const char **p) {
  size_t cap = 64, n = 0;
  char *s = malloc(cap);
  (*p)++;
  while (**p && **p != '"') {
    char c = *(*p)++;
    if (c == '\\') {
      c = *(*p)++;
      if (c == 'n') c = '\n';
      else if (c == 't') c = '\t';
      else if (c == 'u') {
        *p += 4;
        c = '?';
      }
    }
    if (n + 2 > cap) s = realloc(s, cap *= 2);
    s[n++] = c;
  }
  (*p)++;
  s[n] = '\0';
  return s;
}

J *jparse(const char **p) {
  J *j = calloc(1, sizeof(J));
  jspace(p);
  char c = **p;
  if (c == '{' || c == '[') {
    j->t = c == '{' ? 'o' : 'a';
    (*p)++;
    int cap = 0;
    for (;;) {
      jspace(p);
      if (**p == '}' || **p == ']') {
        (*p)++;
        break;
      }
      if (**p == ',') {
        (*p)++;
        continue;
      }
      if (j->len == cap) {
        cap = cap ? cap * 2 : 8;
        j->v = realloc(j->v, (size_t)cap * sizeof(J *));
        j->keys = realloc(j->keys, (size_t)cap * sizeof(char *));
      }
      j->keys[j->len] = NULL;
      if (j->t == 'o') {
        j->keys[j->len] = jstring(p);
        jspace(p);
        (*p)++; /* : */
      }
      j->v[j->len++] = jparse(p);
    }
  } else if (c == '"') {
    j->t = 's';
    j->s = jstring(p);
  } else if (c == 't' || c == 'f' || c == 'n') {
    j->t = c == 'n' ? 'z' : c;
    *p += c == 'f' ? 5 : 4;
  } else {
    j->t = 'n';
    char *end;
    j->n = strtod(*p, &end);
    T_ASSERT(end != *p);
    *p = end;
  }
  return j;
}

J *jget(const J *o, const char *key) {
  for (int i = 0; o && o->t == 'o' && i < o->len; i++)
    if (!strcmp(o->keys[i], key)) return o->v[i];
  return NULL;
}

double jnum(const J *o, const char *key) {
  J *v = jget(o, key);
  T_ASSERT(v && v->t == 'n');
  return v->n;
}

const char *jstr(const J *o, const char *key) {
  J *v = jget(o, key);
  T_ASSERT(v && v->t == 's');
  return v->s;
}

/* Run spyon with options on a script in the scratch directory; parse the
** JSON that follows the script's own output. */
J *spyon_json(const char *opts, const char *script, int want_rc,
                     char **script_out) {
  char line[4300], *out;
  snprintf(line, sizeof line, "'%s/spyon' --json %s %s", t_builddir, opts,
           script);
  T_EQ_INT(run_in_tmp(line, &out, NULL), want_rc);
  char *doc = strstr(out, "{\"format\":\"spyon-profile\"");
  T_ASSERT(doc);
  const char *p = doc;
  J *j = jparse(&p);
  T_ASSERT(j->t == 'o');
  if (script_out) {
    *doc = '\0';
    *script_out = out;
  }
  return j;
}

/* The self time share (of wall time) of the leaf named name, or 0. */
double leaf_share(const J *doc, const char *name) {
  J *leaves = jget(doc, "leaves");
  double wall = jnum(jget(doc, "header"), "wall_ns");
  T_ASSERT(leaves && wall > 0);
  for (int i = 0; i < leaves->len; i++)
    if (!strcmp(jstr(leaves->v[i], "name"), name))
      return jnum(leaves->v[i], "self_ns") / wall;
  return 0;
}

/* Does some node named `leaf` have all of `anc` (NULL-terminated) among
** its ancestors? Walks the nested "tree" of every process. */
static int path_has(const J *node, const char **anc, const char **stack,
                    int depth, const char *leaf) {
  const char *name = jstr(node, "name");
  if (!strcmp(name, leaf)) {
    int all = 1;
    for (int k = 0; anc[k]; k++) {
      int found = 0;
      for (int d = 0; d < depth; d++) found |= !strcmp(stack[d], anc[k]);
      all &= found;
    }
    if (all) return 1;
  }
  J *kids = jget(node, "children");
  if (depth >= 255 || !kids) return 0;
  stack[depth] = name;
  for (int i = 0; i < kids->len; i++)
    if (path_has(kids->v[i], anc, stack, depth + 1, leaf)) return 1;
  return 0;
}

int tree_has(const J *doc, const char *leaf, const char **anc) {
  const char *stack[256];
  J *procs = jget(doc, "processes");
  T_ASSERT(procs);
  for (int i = 0; i < procs->len; i++)
    if (path_has(jget(procs->v[i], "tree"), anc, stack, 0, leaf)) return 1;
  return 0;
}

/* The first node named name in a depth-first walk of node's subtree. */
const J *find_node(const J *node, const char *name) {
  if (!strcmp(jstr(node, "name"), name)) return node;
  J *kids = jget(node, "children");
  for (int i = 0; kids && i < kids->len; i++) {
    const J *r = find_node(kids->v[i], name);
    if (r) return r;
  }
  return NULL;
}

/* Self time of node's child named name, or 0. */
double child_self(const J *node, const char *name) {
  J *kids = jget(node, "children");
  for (int i = 0; kids && i < kids->len; i++)
    if (!strcmp(jstr(kids->v[i], "name"), name))
      return jnum(kids->v[i], "self_ns");
  return 0;
}


/* ===================================================================== */
/* Language                                                              */
/* ===================================================================== */

static void t_lang(void) { expect_output("lang"); }
static void t_exceptions(void) { expect_output("exceptions"); }
static void t_processes(void) { expect_output("processes"); }

static void t_syntax_error(void) {
  char *out, *err;
  stage("tests/st", "err_syntax.st");
  T_EQ_INT(run_st("err_syntax.st", &out, &err), 2);
  T_EQ_STR(out, "before\n");
  T_EQ_STR(err, "err_syntax.st:4:37: expression expected, found ']'\n");
  free(out);
  free(err);
}

static void t_runtime_error(void) {
  char *out, *err;
  stage("tests/st", "err_runtime.st");
  T_EQ_INT(run_st("err_runtime.st", &out, &err), 1);
  T_EQ_STR(out, "start\ncleanup\n");
  T_ASSERT(strncmp(err, "ZeroDivide: division by zero\n", 29) == 0);
  T_ASSERT(strstr(err, "\n  Calc>>ratio:to: (err_runtime.st:4)\n"));
  T_ASSERT(strstr(err, "\n  [] in Calc>>run (err_runtime.st:5)\n"));
  T_ASSERT(strstr(err, "\n  UndefinedObject>>DoIt (err_runtime.st:8)\n"));
  free(out);
  free(err);
}

static void t_quit_status(void) {
  char *out;
  stage("tests/st", "err_quit.st");
  T_EQ_INT(run_st("err_quit.st", &out, NULL), 3);
  T_EQ_STR(out, "quitting\n");
  free(out);
}

static void t_more_errors(void) {
  static const struct { const char *src, *err; int rc; } cases[] = {
    {"x := 'open.\n", "e.st:1:6: unterminated string\n", 2},
    {"Object subclass: Foo [ bar [ ^zork ] ]\n",
     "e.st:1:31: undeclared variable 'zork'\n", 2},
    {"x := 1.\nArray extend [ |foo| ].\n",
     "e.st:2:1: class 'Array' must have 0 instance variables (has 1)\n", 2},
    {"Nope new.\n", "Error: undeclared variable Nope\n"
                    "  UndefinedObject>>DoIt (e.st:1)\n", 1},
    {"3 zork: 4.\n", "MessageNotUnderstood: 3 does not understand #zork:\n"
                     "  UndefinedObject>>DoIt (e.st:1)\n", 1},
    {"[:a | a] value.\n",
     "Error: wrong number of arguments: the block takes 1, not 0\n"
     "  UndefinedObject>>DoIt (e.st:1)\n", 1},
    {"3 ifTrue: [4].\n", "Error: NonBoolean receiver: 3 used as a condition\n"
                         "  UndefinedObject>>DoIt (e.st:1)\n", 1},
    {"Object subclass: A [ b [ ^[:x | ^x] ] ]\n(A new b) value: 3.\n",
     "BlockCannotReturn: block cannot return: its home method has already "
     "returned\n  [] in A>>b (e.st:1)\n  UndefinedObject>>DoIt (e.st:2)\n", 1},
    {"| s | s := Semaphore new. s wait.\n",
     "Error: deadlock: every process is waiting and no Delay is pending\n"
     "  UndefinedObject>>DoIt (e.st:1)\n", 1},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    char *out, *err;
    write_file("e.st", cases[i].src);
    T_EQ_INT(run_st("e.st", &out, &err), cases[i].rc);
    T_EQ_STR(err, cases[i].err);
    free(out);
    free(err);
  }
}

/* Slots that hold the VM's own pointers cannot be overwritten or copied
** from Smalltalk: each of these crashed the interpreter once (found by a
** review); now each is a Smalltalk error (1) or harmless (0). */
static void t_vm_slots(void) {
  static const struct { const char *src; int rc; } cases[] = {
    {"b := [1]. b instVarAt: 1 put: 7. b value.\n", 1},
    {"s := Semaphore new. s instVarAt: 2 put: 4242. s signal.\n", 1},
    {"Object instVarAt: 1 put: 100000. Object new.\n", 1},
    {"(BlockClosure new: 0) value.\n", 1},
    {"p := [] newProcess. q := p copy. p resume. Processor yield.\n"
     "q resume.\n", 1},
    {"| s | s := Semaphore new. [s wait] fork. Processor yield.\n"
     "s copy signal. Processor yield. s signal.\n", 0},
    {"BlockClosure subclass: B2 [].\nB2 new valueWithArguments: #().\n", 1},
    {"Semaphore subclass: S2 [].\n"
     "s := S2 new. s instVarAt: 2 put: 4242. s signal.\n", 1},
    /* Copying still works where it is safe. */
    {"(([:x | x + 1] deepCopy value: 3) = 4) ifFalse: [1/0].\n"
     "((#(3 1 2) asSortedCollection: [:a :b | a > b]) deepCopy asArray\n"
     "  = #(3 2 1)) ifFalse: [1/0].\n", 0},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    char *out, *err;
    write_file("e.st", cases[i].src);
    T_EQ_INT(run_st("e.st", &out, &err), cases[i].rc);
    free(out);
    free(err);
  }
}

/* Bytes that are no part of Smalltalk's syntax are named by their value.
** A NUL was once taken for a binary selector character (strchr finds the
** terminator), which gave "bad selector ''" (found by hosts/st/fuzz_load). */
static void t_bad_bytes(void) {
  static const struct { const char *src; size_t len; const char *err; } cases[] = {
#define SRC(text) text, sizeof text - 1
    {SRC("x := 3 \0 4.\n"), "e.st:1:8: unexpected byte 0x00\n"},
    {SRC("x := 3 \001 4.\n"), "e.st:1:8: unexpected byte 0x01\n"},
    {SRC("x := 3.\ny := x \377.\n"), "e.st:2:8: unexpected byte 0xff\n"},
    {SRC("x := 3 ` 4.\n"), "e.st:1:8: unexpected character '`'\n"},
#undef SRC
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    char *out, *err;
    write_bytes("e.st", cases[i].src, cases[i].len);
    T_EQ_INT(run_st("e.st", &out, &err), 2);
    T_EQ_STR(err, cases[i].err);
    free(out);
    free(err);
  }
}

/* Infinite recursion is a clean error, not a crash. */
static void t_stack_overflow(void) {
  char *out, *err;
  write_file("e.st", "Object subclass: R [ r: n [ ^(self r: n + 1) + 1 ] ]\n"
                     "R new r: 0.\n");
  T_EQ_INT(run_st("e.st", &out, &err), 1);
  T_ASSERT(strncmp(err, "Error: stack overflow", 21) == 0);
  T_ASSERT(strstr(err, "  R>>r: (e.st:1)\n"));
  free(out);
  free(err);
}

/* The collector reclaims garbage: a loop that allocates far more than the
** memory limit given to the process completes. */
static void t_gc_reclaims(void) {
  char *out;
  write_file("g.st", "| keep |\n"
                     "keep := OrderedCollection new.\n"
                     "1 to: 10000 do: [:i | | a |\n"
                     "  a := Array new: 10000.\n"
                     "  i \\\\ 1000 = 0 ifTrue: [keep add: a]].\n"
                     "keep size printNl.\n");
  /* 10000 arrays of 80 KB are 800 MB; the address space limit is 400 MB
  ** (not under AddressSanitizer, whose shadow memory needs more). */
#if T_ASAN || T_TSAN
  snprintf(cmd, sizeof cmd, "'%s/hosts/st/st' g.st", t_builddir);
#else
  snprintf(cmd, sizeof cmd, "ulimit -v 400000 && '%s/hosts/st/st' g.st",
           t_builddir);
#endif
  T_EQ_INT(run_in_tmp(cmd, &out, NULL), 0);
  T_EQ_STR(out, "10\n");
  free(out);
}

/* ===================================================================== */
/* Large integers against GMP                                            */
/* ===================================================================== */

/* Each case: a Smalltalk expression and the same value computed with mpz;
** base is the radix the expression prints in. */
static void mpz_pow(mpz_t r, long b, unsigned long e) {
  mpz_set_si(r, b);
  mpz_pow_ui(r, r, e);
}

static void t_largeint_exact(void) {
  mpz_t a, b, c, r;
  mpz_inits(a, b, c, r, NULL);
  char *want[16];
  int n = 0;
  const char *exprs[16];
#define WANT(expr, base)                                                  \
  do {                                                                    \
    exprs[n] = expr;                                                      \
    want[n] = mpz_get_str(NULL, base, r);                                 \
    for (char *q = want[n]; *q; q++)                                      \
      if (*q >= 'a' && *q <= 'z') *q -= 32;                               \
    n++;                                                                  \
  } while (0)
  mpz_pow(r, 103, 8000);
  WANT("(103 raisedToInteger: 8000) printString", 10);
  mpz_pow(r, 3, 20000);
  WANT("((3 raisedToInteger: 20000) printString: 16)", 16);
  mpz_fac_ui(r, 1000);
  WANT("1000 factorial printString", 10);
  /* Karatsuba with a negative operand. */
  mpz_pow(a, 7, 5000);
  mpz_pow(b, 11, 4000);
  mpz_neg(b, b);
  mpz_mul(r, a, b);
  WANT("((7 raisedToInteger: 5000) * (11 raisedToInteger: 4000) negated) "
       "printString", 10);
  /* Toom-4 squaring of a 15 KB number. */
  mpz_pow(a, 12345, 3000);
  mpz_mul(r, a, a);
  WANT("(12345 raisedToInteger: 3000) squared printString", 10);
  /* Floor division and modulo with negative operands. */
  mpz_pow(a, 7, 3000);
  mpz_neg(a, a);
  mpz_pow(b, 13, 200);
  mpz_fdiv_q(r, a, b);
  WANT("((7 raisedToInteger: 3000) negated // (13 raisedToInteger: 200)) "
       "printString", 10);
  mpz_fdiv_r(r, a, b);
  WANT("((7 raisedToInteger: 3000) negated \\\\ (13 raisedToInteger: 200)) "
       "printString", 10);
  mpz_tdiv_q(r, a, b);
  WANT("((7 raisedToInteger: 3000) negated quo: (13 raisedToInteger: 200)) "
       "printString", 10);
  /* gcd, two's complement logic, shifts, subtraction across signs. */
  mpz_pow(a, 2, 300);
  mpz_pow(c, 3, 100);
  mpz_mul(a, a, c);
  mpz_pow(b, 2, 100);
  mpz_pow(c, 3, 300);
  mpz_mul(b, b, c);
  mpz_gcd(r, a, b);
  WANT("(((2 raisedToInteger: 300) * (3 raisedToInteger: 100)) gcd: "
       "((2 raisedToInteger: 100) * (3 raisedToInteger: 300))) printString",
       10);
  mpz_pow(a, 2, 200);
  mpz_neg(a, a);
  mpz_pow(b, 2, 150);
  mpz_sub_ui(b, b, 12345);
  mpz_and(r, a, b);
  WANT("((2 raisedToInteger: 200) negated bitAnd: "
       "(2 raisedToInteger: 150) - 12345) printString",
       10);
  mpz_pow(a, 5, 700);
  mpz_neg(a, a);
  mpz_fdiv_q_2exp(r, a, 333);
  WANT("((5 raisedToInteger: 700) negated bitShift: -333) printString", 10);
  mpz_pow(a, 10, 40);
  mpz_pow(b, 10, 60);
  mpz_sub(r, a, b);
  WANT("((10 raisedToInteger: 40) - (10 raisedToInteger: 60)) printString",
       10);
  mpz_set_si(r, 1);
  mpz_mul_2exp(r, r, 62);
  mpz_neg(r, r);
  WANT("(4611686018427387903 negated - 1) printString", 10);
  mpz_set_ui(r, 2);
  WANT("(((2 raisedToInteger: 64) + 2) - (2 raisedToInteger: 64)) "
       "printString", 10);
  /* The script prints one line per case. */
  size_t len = 0;
  for (int i = 0; i < n; i++) len += strlen(exprs[i]) + 32;
  char *src = malloc(len + 1), *p = src;
  for (int i = 0; i < n; i++)
    p += sprintf(p, "Transcript showCr: %s.\n", exprs[i]);
  write_file("big.st", src);
  char *out;
  T_EQ_INT(run_st("big.st", &out, NULL), 0);
  char *line = out;
  for (int i = 0; i < n; i++) {
    char *nl = strchr(line, '\n');
    T_ASSERT(nl);
    *nl = '\0';
    if (strcmp(line, want[i]) != 0)
      T_FAIL("case %d (%s): got %.60s... (%zu digits), want %.60s... "
             "(%zu digits)", i, exprs[i], line, strlen(line), want[i],
             strlen(want[i]));
    line = nl + 1;
    free(want[i]);
  }
  free(src);
  free(out);
  mpz_clears(a, b, c, r, NULL);
#undef WANT
}


const struct spy_test t_st[] = {
  {"lang", t_lang, 0},
  {"exceptions", t_exceptions, 0},
  {"processes", t_processes, 0},
  {"syntax_error", t_syntax_error, 0},
  {"bad_bytes", t_bad_bytes, 0},
  {"vm_slots", t_vm_slots, 0},
  {"runtime_error", t_runtime_error, 0},
  {"quit_status", t_quit_status, 0},
  {"more_errors", t_more_errors, 0},
  {"stack_overflow", t_stack_overflow, 0},
  {"gc_reclaims", t_gc_reclaims, 0},
  {"largeint_exact", t_largeint_exact, 0},
  {0},
};
