/*
** tests/test_export.c: the "export" suite: every export read back by its
** real reader.
**
**   pprof        `go tool pprof -top` and `-traces` (Debian's golang-go)
**   svg          xmllint (libxml2) parses it; its frames are the folded
**                stacks
**   speedscope   validated against speedscope's own file-format schema
**                (from the speedscope npm package) with python3-jsonschema
**   diff/merge   two runs of a ground-truth host with a planted slowdown
**
** The readers are installed by ./build.sh (the test set-up); a missing
** reader fails the test, it never skips it.
*/
#include "config.h"

#include "tests/test.h"

#include <math.h>
#include <spyon.h>
#include <unistd.h>

#include "report/format.h"
#include "report/report.h"
#include "tests/test_report.h"

/* ------------------------------------------------------------------------
** Helpers
** --------------------------------------------------------------------- */

/* Write a profile with writer(p, f) into TMP/name; returns the path. */
static char *export_to(const spy_profile *p, const char *name,
                       int (*writer)(const spy_profile *, FILE *)) {
  static char path[4][4200];
  static int k;
  char *out = path[k++ & 3];
  snprintf(out, 4200, "%s/%s", t_tmpdir(), name);
  FILE *f = fopen(out, "wb");
  T_ASSERT(f);
  T_EQ_INT(writer(p, f), 0);
  T_EQ_INT(fclose(f), 0);
  return out;
}

/* Run `go tool pprof -symbolize=none ARGS FILE` and return its stdout.
** -symbolize=none: the names are already there, and pprof's default
** display would shorten "Foo(Bar)>>baz" as if it were a C++ signature. */
static char *pprof(const char *args, const char *file) {
  char cmd[9000];
  snprintf(cmd, sizeof cmd,
           "HOME='%s' go tool pprof -symbolize=none %s '%s' 2>'%s/pprof.err'",
           t_tmpdir(), args, file, t_tmpdir());
  char *out = NULL;
  int st = t_run(cmd, &out);
  if (st != 0) {
    char e[4200];
    snprintf(e, sizeof e, "%s/pprof.err", t_tmpdir());
    char *err = t_slurp(e, NULL);
    T_FAIL("go tool pprof %s failed (%d): %s", args, st, err ? err : "");
  }
  T_ASSERT(out);
  return out;
}

/* One row of `pprof -top -unit=ns`: flat nanoseconds and the name. */
typedef struct toprow {
  double flat;
  char name[256];
} toprow;

/* Parse the rows after the "flat  flat%" header, leaving out those with
** no self time. */
static size_t parse_top(const char *t, toprow *rows, size_t max) {
  const char *l = strstr(t, "flat%");
  T_ASSERT(l);
  l = strchr(l, '\n');
  size_t n = 0;
  while (l && l[1] && n < max) {
    l++;
    const char *e = strchr(l, '\n');
    size_t len = e ? (size_t)(e - l) : strlen(l);
    char line[512];
    if (len >= sizeof line) len = sizeof line - 1;
    memcpy(line, l, len);
    line[len] = '\0';
    /* flat flat% sum% cum cum% name (the name may contain spaces) */
    char *q = line;
    double v = strtod(q, &q);
    if (v == 0 && *q == ' ') {
      l = e; /* no self time: a frame only on the way to others */
      continue;
    }
    if (strncmp(q, "ns ", 3) != 0) T_FAIL("not a -unit=ns row: '%s'", line);
    q += 2;
    for (int field = 0; field < 4; field++) {
      while (*q == ' ') q++;
      while (*q && *q != ' ') q++;
    }
    while (*q == ' ') q++;
    rows[n].flat = v;
    snprintf(rows[n].name, sizeof rows[n].name, "%s", q);
    n++;
    l = e;
  }
  return n;
}

/* Self time by report label, summed over frames of one label (pprof sums
** functions of one name too); native frames by their bare symbol, which is
** how the pprof export names them. */
typedef struct byname {
  char name[256];
  double ns;
} byname;

static size_t leaves_by_name(const spy_profile *p, byname *out, size_t max) {
  spy_leaf *lv = calloc(p->nframes + 1, sizeof *lv);
  T_ASSERT(lv);
  int k = spy_profile_leaves(p, lv, p->nframes);
  T_ASSERT(k >= 0);
  size_t n = 0;
  for (int i = 0; i < k; i++) {
    if (!lv[i].self_ns) continue;
    const spy_frame *fr = &p->frames[lv[i].frame];
    spyR_buf b = {0};
    if (fr->kind == SPY_FRAME_NATIVE) spyR_buf_puts(&b, fr->name);
    else spyR_label(&b, p, lv[i].frame);
    size_t j = 0;
    while (j < n && strcmp(out[j].name, spyR_buf_str(&b))) j++;
    if (j == n) {
      T_ASSERT(n < max);
      snprintf(out[n].name, sizeof out[n].name, "%s", spyR_buf_str(&b));
      out[n++].ns = 0;
    }
    out[j].ns += (double)lv[i].self_ns;
    spyR_buf_free(&b);
  }
  free(lv);
  return n;
}

/* ------------------------------------------------------------------------
** pprof
** --------------------------------------------------------------------- */

/* Every frame with self time in the hand-built profile is a row of
** `pprof -top` with exactly its self time (pprof prints nanoseconds from
** a float: 1e-9 relative), heaviest first, and nothing else is. */
static void t_pprof_top(void) {
  spy_profile *p = t_report_synthetic();
  char *file = export_to(p, "syn.pb.gz", spyR_write_pprof);
  char *t = pprof("-top -unit=ns -nodecount=1000 -nodefraction=0", file);
  toprow rows[64];
  size_t n = parse_top(t, rows, 64);
  byname want[64];
  size_t m = leaves_by_name(p, want, 64);
  T_EQ_INT(n, m);
  T_EQ_INT(m, 15); /* 16 nodes, the multiply primitive in two */
  for (size_t i = 0; i < n; i++) {
    size_t j = 0;
    while (j < m && strcmp(want[j].name, rows[i].name)) j++;
    if (j == m) T_FAIL("pprof row '%s' is no frame of the profile",
                       rows[i].name);
    T_NEAR(rows[i].flat, want[j].ns, want[j].ns * 1e-9 + 1);
    if (i) T_ASSERT(rows[i - 1].flat >= rows[i].flat);
  }
  T_EQ_STR(rows[0].name, "Integer digitMultiply:neg:");   /* 400 + 880 */
  T_EQ_STR(rows[1].name, "Worker step");                  /* 985 ms */
  T_ASSERT(strstr(t, "Type: wall\n"));
  T_ASSERT(strstr(t, "st bench.st\n")); /* the command, as a comment */
  free(t);
  spy_profile_free(p);
}

/* `pprof -traces`: one trace per node with self time, its stack leaf
** first without the process root, with the process, pid and primitive
** labels. */
static void t_pprof_traces(void) {
  spy_profile *p = t_report_synthetic();
  char *file = export_to(p, "syn.pb.gz", spyR_write_pprof);
  char *t = pprof("-traces", file);
  size_t blocks = 0;
  for (const char *q = t; (q = strstr(q, "-----------+")); q++) blocks++;
  /* 16 nodes with self time; the dashes close each trace and the header. */
  T_EQ_INT(blocks, 17);
  /* The native frame under the primitive, with its stack. */
  const char *want =
      "   process:  main\n"
      " primitive:  Integer digitMultiply:neg:\n"
      "       pid:  1\n"
      "     600ms   __gmpn_mul_basecase\n"
      "             Integer digitMultiply:neg:\n"
      "             LargePositiveInteger squaredByFourth\n"
      "             LargePositiveInteger squared\n"
      "             Bench run\n"
      "             UndefinedObject DoIt\n"
      "-----------+";
  if (!strstr(t, want)) T_FAIL("no trace\n%s\nin\n%s", want, t);
  /* GC inside squared: no primitive label; a region and a cut are
  ** frames like the others. */
  T_ASSERT(strstr(t, "   process:  main\n"
                     "       pid:  1\n"
                     "  265.43ms   GC\n"
                     "             LargePositiveInteger squared\n"));
  T_ASSERT(strstr(t, "   400ms   Parser parse\n"
                     "             ... 5 frames cut ...\n"
                     "             [region] Load data\n"));
  T_ASSERT(strstr(t, "   process:  worker\n"
                     "       pid:  2\n"
                     "     985ms   Worker step\n"
                     "             Worker loop\n-----------+"));
  free(t);
  spy_profile_free(p);
}

/* A real run: examples/largeint.st (seed 004's workload, whose truth is
** that the digit multiplication primitive dominates) saved by the spyon
** command; the top of `pprof -top` on `spyon report --format pprof` is
** the text report's leaves, names and milliseconds. */
static void t_pprof_run(void) {
  char cmd[9000], *out;
  const char *d = t_tmpdir();
  snprintf(cmd, sizeof cmd,
           "'%s/spyon' -o '%s/li.spy' '%s/examples/largeint.st' "
           ">/dev/null 2>&1 && '%s/spyon' report '%s/li.spy' --format pprof "
           "> '%s/li.pb.gz'",
           t_builddir, d, t_srcdir, t_builddir, d, d);
  T_EQ_INT(t_run(cmd, NULL), 0);
  snprintf(cmd, sizeof cmd, "'%s/spyon' report '%s/li.spy'", t_builddir, d);
  char *text = NULL;
  T_EQ_INT(t_run(cmd, &text), 0);
  char file[4200];
  snprintf(file, sizeof file, "%s/li.pb.gz", d);
  out = pprof("-top -unit=ns -nodecount=8", file);
  toprow rows[8];
  size_t n = parse_top(out, rows, 8);
  T_EQ_INT(n, 8);
  T_EQ_STR(rows[0].name, "Integer>>digitMultiply:neg:");
  /* The leaves section: "PCT (MS)  NAME" lines, heaviest first. */
  const char *l = strstr(text, "**Leaves**\n");
  T_ASSERT(l);
  l += strlen("**Leaves**\n");
  for (size_t i = 0; i < n; i++) {
    const char *e = strchr(l, '\n');
    T_ASSERT(e);
    char line[512];
    size_t len = (size_t)(e - l) < sizeof line - 1 ? (size_t)(e - l)
                                                   : sizeof line - 1;
    memcpy(line, l, len);
    line[len] = '\0';
    const char *open = strchr(line, '('), *name = strstr(line, ")  ");
    T_ASSERT(open && name);
    char digits[32];
    size_t k = 0;
    for (const char *c = open + 1; *c != ')' && k < 31; c++)
      if (*c != ',') digits[k++] = *c;
    digits[k] = '\0';
    double ms = strtod(digits, NULL);
    if (strcmp(name + 3, rows[i].name))
      T_FAIL("leaf %zu: report '%s', pprof '%s'", i, name + 3, rows[i].name);
    T_NEAR(rows[i].flat / 1e6, ms, 0.5 + 1e-6); /* the report rounds */
    l = e + 1;
  }
  free(text);
  free(out);
}

/* ------------------------------------------------------------------------
** The suite
** --------------------------------------------------------------------- */

const struct spy_test t_export[] = {
    {"pprof_top", t_pprof_top, 0},
    {"pprof_traces", t_pprof_traces, 0},
    {"pprof_run", t_pprof_run, 120},
    {0},
};
