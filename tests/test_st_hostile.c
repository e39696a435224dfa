/*
** tests/test_st_hostile.c: hostile scripts: run-time oddities, what the loader
** refuses, memory running out, a very large script
** (part of the "st" suite; helpers in tests/test_st.c).
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
/* Hostile scripts (issue 15)                                            */
/* ===================================================================== */

/* What the interpreter got wrong at run time: mustBeBoolean, to:by:do:
** steps, handlers signalling, outer, stale exceptions, terminate and
** unwinding, OutOfMemory, float literals (tests/st/hostile.st). */
static void t_hostile(void) { expect_output("hostile"); }

/* What the loader must refuse, each with its place. Superclass cycles
** hung method lookup or overflowed the C stack; `true := false` was a new
** variable; long float literals were cut at 511 characters and 1e1000000
** was silently 10^100000. */
static void t_hostile_syntax(void) {
  static char longfloat[1200];
  static const struct { const char *src, *err; } cases[] = {
    {"Object subclass: Object [ ]\n",
     "e.st:1:18: class 'Object' cannot be its own superclass\n"},
    {"Object subclass: Foo [ ]\nFoo subclass: Object [ ]\n",
     "e.st:2:15: class 'Object' cannot be a subclass of its subclass 'Foo'\n"},
    {"Object subclass: A [ ]. A subclass: B [ ]. B subclass: C [ ].\n"
     "C subclass: A [ ]\n",
     "e.st:2:13: class 'A' cannot be a subclass of its subclass 'C'\n"},
    {"x := 1.\ntrue := false.\n",
     "e.st:2:1: cannot assign to pseudo-variable 'true'\n"},
    {"nil := 3.\n", "e.st:1:1: cannot assign to pseudo-variable 'nil'\n"},
    {"Object subclass: P [ f [ self := 3 ] ]\n",
     "e.st:1:26: cannot assign to pseudo-variable 'self'\n"},
    {"Object subclass: P [ f [ [super := 3] value ] ]\n",
     "e.st:1:27: cannot assign to pseudo-variable 'super'\n"},
    {"thisContext := 1.\n",
     "e.st:1:1: cannot assign to pseudo-variable 'thisContext'\n"},
    {"| a false |\n", "e.st:1:5: cannot declare pseudo-variable 'false'\n"},
    {"[:self | self] value: 3.\n",
     "e.st:1:3: cannot declare pseudo-variable 'self'\n"},
    {"Object subclass: P [ at: nil [ ^nil ] ]\n",
     "e.st:1:26: cannot declare pseudo-variable 'nil'\n"},
    {"Object subclass: Foo [ ]\nFoo new.\nFoo extend [ | a | ]\n",
     "e.st:3:14: cannot add instance variables to 'Foo': it has instances\n"},
    {"Object subclass: Foo [ ]\nFoo subclass: Bar [ ]\n"
     "Foo extend [ | a | ]\n",
     "e.st:3:14: cannot add instance variables to 'Foo': it has subclasses\n"},
    {"Object subclass: Foo [ ]\nFoo subclass: Bar [ ]\n"
     "Foo class extend [ | a | ]\n",
     "e.st:3:20: cannot add instance variables to 'Foo class': it has "
     "subclasses\n"},
    {"x := 1e1000000.\n",
     "e.st:1:6: integer literal too large (more than 1000000 digits)\n"},
    {"x := 1e99999999999999999999.\n",
     "e.st:1:6: integer literal too large (more than 1000000 digits)\n"},
    {"x := 1.0e309.\n",
     "e.st:1:6: float literal too large (beyond 1.79769e+308)\n"},
    {"x := #(1 2.5e999999).\n",
     "e.st:1:10: float literal too large (beyond 1.79769e+308)\n"},
    {"x := 1.0e-400.\n",
     "e.st:1:6: float literal too small (below 4.94066e-324)\n"},
    {longfloat, "e.st:1:6: float literal too large (beyond 1.79769e+308)\n"},
    {"x := 2r1e-3.\n",
     "e.st:1:6: a radix 2 integer cannot have a negative exponent\n"},
  };
  /* 700 digits: cut at 511 this was a smaller number, now it is too big. */
  memcpy(longfloat, "x := ", 5);
  memset(longfloat + 5, '9', 700);
  memcpy(longfloat + 705, ".0e-391.\n", 10);
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    char *out, *err;
    write_file("e.st", cases[i].src);
    T_EQ_INT(run_st("e.st", &out, &err), 2);
    T_EQ_STR(err, cases[i].err);
    free(out);
    free(err);
  }
  /* What is still allowed: ivars on a class with neither, a 0.0 literal
  ** (no nonzero digit: not an underflow), exact big integer literals. */
  char *out;
  write_file("e.st", "Object subclass: Foo [ ]\nFoo extend [ | a | ]\n"
                     "Foo extend [ a [ ^a ] ]\nFoo new a printNl.\n"
                     "0.0e-400 printNl.\n"
                     "(1e999 = (10 raisedTo: 999)) printNl.\n");
  T_EQ_INT(run_st("e.st", &out, NULL), 0);
  T_EQ_STR(out, "nil\n0.0\ntrue\n");
  free(out);
}

/* Out of memory: an allocation the script asked for is an OutOfMemory
** error it can handle; one it cannot go on from (a small object, with the
** heap full) stops the run with a message and status 1, and the profile
** taken so far is saved (-o) or reported. The address-space limit makes
** it happen (not under the sanitizers, whose shadow memory needs more). */
static void t_out_of_memory(void) {
#if T_ASAN || T_TSAN
  T_SKIP("the sanitizers' shadow memory needs more address space than "
         "the limit that makes memory run out");
#else
  char line[4300], *out, *err;
  write_file("oom.st",
             "| r |\n"
             "r := [Array new: 1000000000] on: OutOfMemory do: [:e |\n"
             "  e messageText].\n"
             "r displayNl.\n"
             "(Array new: 1000) size printNl.\n"
             "Object subclass: Hog [ grow [ | h | h := nil.\n"
             "  [h := {h. 1. 2. 3}] repeat ] ]\n"
             "Hog new grow.\n"
             "'not reached' displayNl.\n");
  snprintf(line, sizeof line,
           "ulimit -v 400000 && '%s/spyon' -o oom.spy oom.st", t_builddir);
  T_EQ_INT(run_in_tmp(line, &out, &err), 1);
  T_EQ_STR(out, "not enough memory for Array new: 1000000000\n1000\n");
  T_ASSERT(strncmp(err, "Error: out of memory: ", 22) == 0);
  T_ASSERT(strstr(err, "could not be allocated; the run stops\n"
                       "  Hog>>grow (oom.st:"));
  T_ASSERT(strstr(err, ")\n  UndefinedObject>>DoIt (oom.st:8)\n"));
  T_ASSERT(strstr(err, "saved to oom.spy"));
  spy_profile *p = load("oom.spy");
  T_ASSERT(p->tallies > 0);
  T_ASSERT(has_frame(p, "Hog>>grow"));
  spy_profile_free(p);
  free(out);
  free(err);
  /* Without -o the report follows the script's output. */
  snprintf(line, sizeof line, "ulimit -v 400000 && '%s/spyon' oom.st",
           t_builddir);
  T_EQ_INT(run_in_tmp(line, &out, &err), 1);
  T_ASSERT(strstr(out, "**Tree**"));
  T_ASSERT(strstr(out, "Hog>>grow"));
  free(out);
  free(err);
#endif
}

/* Many top-level statements: each one's tree and code are freed once it
** has run (200,000 statements took 720 MB), and declaring many top-level
** variables is linear (100,000 took 5 minutes and 22 GB). */
static void t_big_script(void) {
  char path[4200];
  snprintf(path, sizeof path, "%s/big.st", t_tmpdir());
  FILE *f = fopen(path, "w");
  T_ASSERT(f);
  fprintf(f, "| v w |\nv := 0. w := 0.\n");
  int v = 0, w = 0; /* the same sums in C */
  for (int i = 0; i < 200000; i++) {
    if (i % 2) {
      fprintf(f, "v := (v + %d) \\\\ 1000.\n", i % 97);
      v = (v + i % 97) % 1000;
    } else {
      fprintf(f, "w := (Array with: v with: %d) size + (v max: %d.5) "
                 "truncated.\n", i, i % 50);
      w = 2 + (v > i % 50 ? v : i % 50);
    }
  }
  for (int i = 0; i < 100000; i++) fprintf(f, "x%d := %d.\n", i, i);
  fprintf(f, "v printNl. w printNl. x99999 printNl.\n");
  T_ASSERT(fclose(f) == 0);
  char *out;
#if T_ASAN || T_TSAN
  snprintf(cmd, sizeof cmd, "'%s/hosts/st/st' big.st", t_builddir);
#else
  snprintf(cmd, sizeof cmd, "ulimit -v 300000 && '%s/hosts/st/st' big.st",
           t_builddir);
#endif
  T_EQ_INT(run_in_tmp(cmd, &out, NULL), 0);
  char want[64];
  snprintf(want, sizeof want, "%d\n%d\n99999\n", v, w);
  T_EQ_STR(out, want);
  free(out);
}

const struct spy_test t_st_hostile[] = {
  {"hostile", t_hostile, 0},
  {"hostile_syntax", t_hostile_syntax, 0},
  {"out_of_memory", t_out_of_memory, 0},
  {"big_script", t_big_script, 120},
  {0},
};
