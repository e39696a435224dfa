/*
** tests/test_st.h: what the files of the "st" suite share (tests/test_st.c
** defines it): staging scripts, running the interpreter and spyon, and a
** small JSON reader for the export.
*/
#ifndef SPY_TEST_ST_H
#define SPY_TEST_ST_H

#include "tests/test.h"

#include <spyon/profile.h>

/* A command line, built by each test. */
extern char cmd[16384];

/* Copy dir/name (under the source tree) into the test's directory. */
void stage(const char *dir, const char *name);
/* Run line in the test's directory; *out, *err (if not NULL) get stdout
** and stderr. Returns the exit status. */
int run_in_tmp(const char *line, char **out, char **err);
/* Run the standalone interpreter on script (in the test's directory). */
int run_st(const char *script, char **out, char **err);
void write_bytes(const char *name, const char *data, size_t len);
void write_file(const char *name, const char *text);
/* Run tests/st/NAME.st and compare its output with NAME.out. */
void expect_output(const char *name);
/* The profile saved in the test's directory as name (NULL if unreadable),
** and whether a frame of that name is in it. */
spy_profile *load(const char *name);
int has_frame(const spy_profile *p, const char *name);

typedef struct J {
  char t;            /* o(bject) a(rray) s(tring) n(umber) t f z(null) */
  char *s;
  double n;
  int len;
  char **keys;
  struct J **v;
} J;

J *jparse(const char **p);
J *jget(const J *o, const char *key);
double jnum(const J *o, const char *key);
const char *jstr(const J *o, const char *key);
/* Run spyon OPTS --json SCRIPT; the parsed export (*out: all output). */
J *spyon_json(const char *opts, const char *script, int want_rc, char **out);
double leaf_share(const J *doc, const char *name);
int tree_has(const J *doc, const char *leaf, const char **anc);
const J *find_node(const J *node, const char *name);
double child_self(const J *node, const char *name);

#endif
