/*
** tests/test_report.c: the "report" suite.
**
** Profiles are built by hand with the arena helpers, with known times, so
** every number in a report is known in advance. Whole reports are compared
** with expected files in tests/data/report/ (they double as documentation
** of the layout); on a mismatch the test prints `diff -u expected actual`.
** Run with SPY_BLESS=1 to rewrite the expected files after a deliberate
** layout change, then read the diff before committing it.
*/
#include "config.h"

#include "tests/test.h"

#if HAVE_JANSSON
#include <jansson.h>
#endif
#include <spyon.h>
#include <spyon/report.h>

#include "profile/profile.h"
#include "report/format.h"
#include <spyon/report.h>
#include "report/walk.h"
#include "tests/test_report.h"

/* ------------------------------------------------------------------------
** Building profiles
** --------------------------------------------------------------------- */

enum { CAP = 256 };

static spy_profile *new_profile(uint64_t wall_ns) {
  spy_profile *p = spyP_new();
  T_ASSERT(p);
  p->frames = spyP_calloc(p, CAP, sizeof *p->frames);
  p->nodes = spyP_calloc(p, CAP, sizeof *p->nodes);
  p->processes = spyP_calloc(p, 16, sizeof *p->processes);
  T_ASSERT(p->frames && p->nodes && p->processes);
  p->wall_ns = wall_ns;
  p->interval_ns = 100000;
  p->tallies = wall_ns / 100000;
  p->clock = "tsc";
  return p;
}

/* The frame (kind, name), added on first use. Keys: a primitive's is its
** index (passed in key), others get their index. */
static uint32_t frame(spy_profile *p, spy_frame_kind kind, uint64_t key,
                      const char *name) {
  for (size_t i = 0; i < p->nframes; i++)
    if (p->frames[i].kind == kind && strcmp(p->frames[i].name, name) == 0 &&
        (kind != SPY_FRAME_PRIM || p->frames[i].key == key))
      return (uint32_t)i;
  T_ASSERT(p->nframes < CAP);
  spy_frame *f = &p->frames[p->nframes];
  f->kind = kind;
  f->key = kind == SPY_FRAME_PRIM || kind == SPY_FRAME_CUT ? key : p->nframes;
  f->name = spyP_strdup(p, name);
  return (uint32_t)p->nframes++;
}

/* A node under parent (appended last among its siblings, so tests also see
** children that arrive out of weight order). Tallies: one per 100 us. */
static uint32_t node(spy_profile *p, uint32_t parent, uint32_t fr,
                     uint64_t total, uint64_t self) {
  T_ASSERT(p->nnodes < CAP);
  uint32_t n = (uint32_t)p->nnodes++;
  spy_node *nd = &p->nodes[n];
  *nd = (spy_node){fr, parent, SPY_NONE, SPY_NONE, total, self,
                   total / 100000, self / 100000};
  if (parent != SPY_NONE) {
    uint32_t *link = &p->nodes[parent].first_child;
    while (*link != SPY_NONE) link = &p->nodes[*link].next_sibling;
    *link = n;
  }
  return n;
}

static uint32_t method(spy_profile *p, uint32_t parent, const char *name,
                       uint64_t total, uint64_t self) {
  return node(p, parent, frame(p, SPY_FRAME_METHOD, 0, name), total, self);
}

/* A process and its root node; returns the root. */
static uint32_t process(spy_profile *p, uint64_t pid, const char *name,
                        uint64_t total) {
  uint32_t r = node(p, SPY_NONE, frame(p, SPY_FRAME_ROOT, 0, name), total, 0);
  spy_process *pr = &p->processes[p->nprocesses++];
  pr->pid = pid;
  pr->name = spyP_strdup(p, name);
  pr->root = r;
  pr->total_ns = total;
  pr->tallies = total / 100000;
  return r;
}

/* The synthetic profile of tests/data/report/synthetic.txt: 5 s of wall
** time; "main" 4 s, "worker" 0.995 s, "sleeper" 5 ms (0.1 %: hidden).
** Shared with the export suite (tests/test_report.h). */
spy_profile *t_report_synthetic(void) {
  spy_profile *p = new_profile(5000000000u);
  p->dropped = 12;
  p->obs_dropped = 3;
  p->hook_ns = 21000000;
  p->start_unix_ns = UINT64_C(1557057600) * 1000000000u;
  p->command = "st bench.st";

  p->prims = spyP_calloc(p, 3, sizeof *p->prims);
  p->nprims = 3;
  const char *pn[3] = {"Integer digitMultiply:neg:", "Integer digitAdd:",
                       "Integer bitShift:"};
  for (int i = 0; i < 3; i++) {
    p->prims[i].name = pn[i];
    p->prims[i].nsizes = 2;
    p->prims[i].size_names[0] = "a";
    p->prims[i].size_names[1] = "b";
    p->prims[i].flags = SPY_PRIM_COST;
  }
  p->prims[0].calls = 12000;
  p->prims[0].total_ns = 1880000000;
  p->prims[0].max_ns = 1204900;
  p->prims[0].model = strdup("t = 120 ns + 0.031 ns * a*b");
  p->prims[1].calls = 5000;
  p->prims[1].total_ns = 50000000;
  p->prims[1].max_ns = 30000;
  uint32_t mul = frame(p, SPY_FRAME_PRIM, 0, pn[0]);
  uint32_t add = frame(p, SPY_FRAME_PRIM, 1, pn[1]);

  uint32_t r = process(p, 1, "main", 4000000000u);
  method(p, r, "Processor idle", 100000000, 100000000);
  uint32_t doit = method(p, r, "UndefinedObject DoIt", 3900000000u, 0);
  uint32_t run = method(p, doit, "Bench run", 3900000000u, 0);
  method(p, run, "Sort", 400000000, 400000000);
  uint32_t load = node(p, run, frame(p, SPY_FRAME_REGION, 0, "Load data"),
                       1000000000, 0);
  method(p, load, "Reader read", 600000000, 600000000);
  uint32_t cut = node(p, load, frame(p, SPY_FRAME_CUT, 5, "cut"), 400000000,
                      0);
  method(p, cut, "Parser parse", 400000000, 400000000);
  uint32_t sq = method(p, run, "LargePositiveInteger squared", 2500000000u,
                       100000000);
  uint32_t half = method(p, sq, "LargePositiveInteger squaredByHalf",
                         900000000, 0);
  uint32_t mbi = method(p, half, "LargePositiveInteger multiplyByInteger:",
                        900000000, 0);
  method(p, mbi, "Tiny method", 20000000, 20000000); /* 0.40 %: hidden */
  node(p, mbi, mul, 880000000, 880000000);
  uint32_t four = method(p, sq, "LargePositiveInteger squaredByFourth",
                         1234567890, 34567890);
  uint32_t m2 = node(p, four, mul, 1000000000, 400000000);
  node(p, m2, frame(p, SPY_FRAME_NATIVE, 0, "__gmpn_mul_basecase"), 600000000,
       600000000);
  uint32_t plus = method(p, four, "LargePositiveInteger +", 200000000,
                         150000000);
  node(p, plus, add, 50000000, 50000000);
  uint32_t gcf = frame(p, SPY_FRAME_GC, 0, "GC");
  node(p, sq, gcf, 265432110, 265432110);

  r = process(p, 2, "worker", 995000000);
  uint32_t loop = method(p, r, "Worker loop", 995000000, 0);
  method(p, loop, "Worker step", 985000000, 985000000);
  method(p, loop, "Worker tiny", 10000000, 10000000); /* 0.20 %: hidden */

  r = process(p, 3, "sleeper", 5000000);
  method(p, r, "Sleeper wait", 5000000, 5000000);

  /* Steps, deliberately not longest first. */
  p->steps = spyP_calloc(p, 3, sizeof *p->steps);
  p->nsteps = 3;
  uint32_t *f0 = spyP_calloc(p, 5, sizeof *f0);
  f0[0] = p->nodes[doit].frame;
  f0[1] = p->nodes[run].frame;
  f0[2] = p->nodes[sq].frame;
  f0[3] = p->nodes[four].frame;
  f0[4] = mul; /* the primitive itself: not repeated in the report */
  p->steps[0] = (spy_step){SPY_STEP_PRIM, 0, 2, {1234, 567}, 1204900, 0, 5, f0,
                           0};
  uint32_t *f2 = spyP_calloc(p, 10, sizeof *f2);
  f2[0] = frame(p, SPY_FRAME_METHOD, 0, "Worker loop");
  for (int i = 1; i < 9; i++) f2[i] = frame(p, SPY_FRAME_METHOD, 0, "Fib fib:");
  f2[9] = add;
  p->steps[1] = (spy_step){SPY_STEP_PRIM, 1, 2, {4000, 12}, 30000, 1, 10, f2,
                           0};
  uint32_t *f1 = spyP_calloc(p, 4, sizeof *f1);
  memcpy(f1, f0, 3 * sizeof *f1);
  f1[3] = gcf;
  p->steps[2] = (spy_step){SPY_STEP_GC, SPY_NONE, 0, {0}, 800000, 0, 4, f1,
                           0};

  p->gc.count = 40;
  p->gc.total_ns = 265432110;
  p->gc.max_ns = 800000;

  p->regions = spyP_calloc(p, 5, sizeof *p->regions);
  p->nregions = 5;
  p->regions[0] = (spy_profile_region){"Load data", SPY_NONE, 1, 1000000000,
                                       1000000000};
  p->regions[1] = (spy_profile_region){"Read from the host", 0, 3, 600000000,
                                       250000000};
  p->regions[2] = (spy_profile_region){"Hash", 0, 3, 300000000, 120000000};
  p->regions[3] = (spy_profile_region){"Check the length", 1, 3, 30000000,
                                       12000000};
  p->regions[4] = (spy_profile_region){"Report", SPY_NONE, 2, 20000000,
                                       15000000};
  return p;
}

/* ------------------------------------------------------------------------
** Output helpers
** --------------------------------------------------------------------- */

typedef struct mem {
  char *s;
  size_t n;
  FILE *f;
} mem;

static FILE *mem_open(mem *m) {
  m->s = NULL;
  m->n = 0;
  m->f = open_memstream(&m->s, &m->n);
  T_ASSERT(m->f);
  return m->f;
}

/* Close and return the text (owned by m). */
static const char *mem_text(mem *m) {
  fclose(m->f);
  return m->s;
}

static void write_file(const char *path, const char *s) {
  FILE *f = fopen(path, "w");
  if (!f) T_FAIL("cannot write %s", path);
  fputs(s, f);
  fclose(f);
}

/* Compare got with tests/data/report/NAME; print `diff -u` on mismatch. */
static void check_golden(const char *got, const char *name) {
  char want_path[4096], got_path[4096];
  snprintf(want_path, sizeof want_path, "%s/tests/data/report/%s", t_srcdir,
           name);
  if (getenv("SPY_BLESS")) {
    write_file(want_path, got);
    T_SKIP("SPY_BLESS: wrote %s instead of comparing", want_path);
  }
  char *want = t_slurp(want_path, NULL);
  if (!want) T_FAIL("cannot read %s", want_path);
  if (strcmp(want, got) != 0) {
    snprintf(got_path, sizeof got_path, "%s/%s", t_tmpdir(), name);
    write_file(got_path, got);
    char cmd[8400], *out = NULL;
    snprintf(cmd, sizeof cmd, "diff -u '%s' '%s'", want_path, got_path);
    t_run(cmd, &out);
    fprintf(stderr, "%s", out ? out : "");
    T_FAIL("%s: output differs from the expected file (diff above)", name);
  }
  free(want);
}

static const char *report(const spy_profile *p, const spy_report_options *o) {
  static mem m;
  int rc = spy_report_text(p, mem_open(&m), o);
  const char *s = mem_text(&m);
  T_EQ_INT(rc, 0);
  return s;
}

/* ------------------------------------------------------------------------
** Formatting
** --------------------------------------------------------------------- */

static void t_numbers(void) {
  char b[48];
  T_EQ_STR(spyR_fmt_group(b, 0), "0");
  T_EQ_STR(spyR_fmt_group(b, 999), "999");
  T_EQ_STR(spyR_fmt_group(b, 1000), "1,000");
  T_EQ_STR(spyR_fmt_group(b, 45077), "45,077");
  T_EQ_STR(spyR_fmt_group(b, 1234567), "1,234,567");
  T_EQ_STR(spyR_fmt_group(b, UINT64_MAX), "18,446,744,073,709,551,615");
  T_EQ_STR(spyR_fmt_fixed(b, 1234.56, 1), "1,234.6");
  T_EQ_STR(spyR_fmt_fixed(b, 999.96, 1), "1,000.0");
  T_EQ_STR(spyR_fmt_fixed(b, -0.5, 2), "-0.50");
  T_EQ_STR(spyR_fmt_fixed(b, -0.001, 2), "0.00");
  T_EQ_STR(spyR_fmt_fixed(b, 1204.9, 3), "1,204.900");
  T_EQ_INT(spyR_ms(499999), 0);
  T_EQ_INT(spyR_ms(500000), 1);
  T_EQ_INT(spyR_ms(1234567890), 1235);
  T_NEAR(spyR_pct(1234567890, 5000000000u), 24.6913578, 1e-6);
}

static void t_labels(void) {
  spy_profile *p = new_profile(1);
  uint32_t f[6] = {
      frame(p, SPY_FRAME_METHOD, 0, "Foo bar:"),
      frame(p, SPY_FRAME_PRIM, 3, "Integer digitAdd:"),
      frame(p, SPY_FRAME_GC, 0, "scavenge"),
      frame(p, SPY_FRAME_REGION, 0, "Hash"),
      frame(p, SPY_FRAME_NATIVE, 0, "memcpy"),
      frame(p, SPY_FRAME_CUT, 1234, ""),
  };
  const char *want[6] = {"Foo bar:", "Integer digitAdd:", "GC",
                         "[region] Hash", "[native] memcpy",
                         "... 1,234 frames cut ..."};
  spyR_buf b = {0};
  for (int i = 0; i < 6; i++) {
    spyR_buf_clear(&b);
    spyR_label(&b, p, f[i]);
    T_EQ_STR(spyR_buf_str(&b), want[i]);
  }
  spyR_buf_clear(&b);
  spyR_label(&b, p, 99);
  T_EQ_STR(spyR_buf_str(&b), "?");
  /* Truncation counts code points, not bytes. */
  spyR_buf_clear(&b);
  spyR_buf_puts(&b, "\xC3\xA9t\xC3\xA9 longtemps");
  spyR_truncate(&b, 7);
  T_EQ_STR(spyR_buf_str(&b), "\xC3\xA9t\xC3\xA9 ...");
  spyR_buf_clear(&b);
  spyR_json_str(&b, "a\"b\\c\n\x01\xff\xC3\xA9");
  T_EQ_STR(spyR_buf_str(&b), "\"a\\\"b\\\\c\\n\\u0001\xEF\xBF\xBD\xC3\xA9\"");
  spyR_buf_free(&b);
  spy_profile_free(p);
}

/* ------------------------------------------------------------------------
** The walker
** --------------------------------------------------------------------- */

/* A sink that records "depth last nkids |guides|" per row, and collapses
** the node named in ud's skip. */
typedef struct rec {
  spyR_buf out;
  uint32_t skip;
} rec;

static int rec_row(void *ud, const spy_profile *p, const spyR_row *row) {
  rec *r = ud;
  spyR_buf_printf(&r->out, "%u %d %zu |%s| %s\n", row->depth, row->last,
                  row->nkids, row->guides,
                  p->frames[p->nodes[row->node].frame].name);
  return row->node == r->skip ? SPYR_SKIP : 0;
}

static void t_walk_rows(void) {
  spy_profile *p = new_profile(1000000000);
  uint32_t r = process(p, 1, "p", 1000000000);
  uint32_t a = method(p, r, "a", 300000000, 0);
  method(p, r, "b", 700000000, 0); /* heavier: listed first */
  uint32_t a1 = method(p, a, "a1", 200000000, 0);
  method(p, a, "a2", 100000000, 0);
  method(p, a1, "a11", 200000000, 200000000);
  method(p, a, "a3", 4000000, 4000000); /* 0.4 %: hidden at 0.5 */
  rec rc = {{0}, SPY_NONE};
  T_EQ_INT(spyR_walk(p, 0, 0.5, 0, rec_row, &rc), 0);
  T_EQ_STR(spyR_buf_str(&rc.out), "0 0 0 || b\n"
                                  "0 1 2 || a\n"
                                  "1 0 1 |  | a1\n"
                                  "2 1 0 |    || a11\n"
                                  "1 1 0 |  | a2\n");
  /* Threshold 0 shows a3; SPYR_SKIP collapses a1. */
  spyR_buf_clear(&rc.out);
  rc.skip = a1;
  T_EQ_INT(spyR_walk(p, 0, 0, 0, rec_row, &rc), 0);
  T_EQ_STR(spyR_buf_str(&rc.out), "0 0 0 || b\n"
                                  "0 1 3 || a\n"
                                  "1 0 1 |  | a1\n"
                                  "1 0 0 |  | a2\n"
                                  "1 1 0 |  | a3\n");
  T_EQ_INT(spyR_walk(p, 5, 0, 0, rec_row, &rc), SPY_EINVAL);
  spyR_buf_free(&rc.out);
  spy_profile_free(p);
}

/* The guides must be exactly the seed's. tests/data/report/seed004-tree.txt
** is the seed-004 tree from "LargePositiveInteger squared" down, verbatim
** (left margin removed). The same tree is rebuilt here with the seed's
** milliseconds; every line must match in guides, ms and name. (The seed's
** percentages come from tallies and print without trailing zeros, so they
** are not compared.) A 40 ms node, under the 1 % threshold, must not
** show. */
static const char *const seed_spec[] = {
    "4944 LargePositiveInteger squared",
    " 4807 LargePositiveInteger squaredByFourth",
    "  2063 LargePositiveInteger *",
    "   1927 LargePositiveInteger(Integer) *",
    "    1927 LargePositiveInteger multiplyByInteger:",
    "     1493 LargePositiveInteger digitMul22:",
    "      789 LargePositiveInteger +",
    "       695 !Integer digitMultiply:neg:",
    "      548 LargePositiveInteger multiplyByInteger:",
    "       465 !Integer digitMultiply:neg:",
    "      40 Hidden below one percent",
    "      57 LargePositiveInteger inplaceAddNonOverlapping:digitShiftBy:",
    "     434 LargeNegativeInteger(LargePositiveInteger) multiplyByInteger:",
    "      434 LargeNegativeInteger(LargePositiveInteger) digitMul22:",
    "       212 LargeNegativeInteger(LargePositiveInteger) multiplyByInteger:",
    "        210 !Integer digitMultiply:neg:",
    "       208 LargeNegativeInteger(LargePositiveInteger) +",
    "        199 !Integer digitMultiply:neg:",
    "   57 !Integer digitMultiply:neg:",
    "  1364 LargePositiveInteger squared",
    "   987 LargePositiveInteger squaredByFourth",
    "    354 LargePositiveInteger +",
    "     142 !Integer digitMultiply:neg:",
    "     72 !Integer digitAdd:",
    "    244 LargeNegativeInteger(LargePositiveInteger) *",
    "     205 !Integer digitMultiply:neg:",
    "    243 LargePositiveInteger(Integer) bitShift:",
    "     125 !Integer digitMultiply:neg:",
    "     68 !Integer digitSubtract:",
    "    65 LargePositiveInteger -",
    "    64 LargePositiveInteger squared",
    "   357 LargePositiveInteger squaredByHalf",
    "    188 LargePositiveInteger inplaceAddNonOverlapping:digitShiftBy:",
    "     175 !Integer digitMultiply:neg:",
    "    93 LargePositiveInteger squared",
    "     81 !Integer digitMultiply:neg:",
    "    61 LargePositiveInteger multiplyByInteger:",
    "     58 !Integer digitMultiply:neg:",
    "  736 LargePositiveInteger(Integer) bitShift:",
    "   545 !Integer digitMultiply:neg:",
    "   121 !Integer digitAdd:",
    "  377 LargePositiveInteger +",
    "   128 !Integer digitMultiply:neg:",
    "   109 !Integer bitShiftMagnitude:",
    "  199 LargePositiveInteger -",
    "   85 !Integer digitSubtract:",
    " 136 LargePositiveInteger squaredByHalf",
    "  112 LargePositiveInteger multiplyByInteger:",
    "   111 !Integer digitMultiply:neg:",
    "124 !Integer digitAdd:",
    NULL};

/* Split a report line into guides, the ms in parentheses, and the name. */
static void split_line(const char *l, char *guides, char *ms, char *name) {
  size_t g = strspn(l, " |");
  memcpy(guides, l, g);
  guides[g] = '\0';
  const char *o = strchr(l + g, '('), *c = o ? strchr(o, ')') : NULL;
  if (!o || !c || c[1] != ' ' || c[2] != ' ') T_FAIL("bad line: %s", l);
  memcpy(ms, o + 1, (size_t)(c - o - 1));
  ms[c - o - 1] = '\0';
  strcpy(name, c + 3);
}

static void t_seed_guides(void) {
  spy_profile *p = new_profile(5101000000u);
  uint32_t root = process(p, 1, "seed", 5068000000u);
  uint32_t stack[32];
  for (int i = 0; seed_spec[i]; i++) {
    const char *s = seed_spec[i];
    size_t d = strspn(s, " ");
    char *end;
    uint64_t ms = strtoull(s + d, &end, 10);
    const char *name = end + 1;
    int prim = *name == '!';
    uint32_t parent = d ? stack[d - 1] : root;
    uint32_t fr = prim ? frame(p, SPY_FRAME_PRIM, 0, name + 1)
                       : frame(p, SPY_FRAME_METHOD, 0, name);
    stack[d] = node(p, parent, fr, ms * 1000000, 0);
  }
  spy_report_options o;
  spy_report_options_init(&o);
  o.threshold_pct = 1.0;
  o.sections = SPY_REPORT_TREE;
  const char *txt = report(p, &o);
  const char *t = strstr(txt, "Process: seed");
  T_ASSERT(t);
  t = strchr(strchr(strchr(t, '\n') + 1, '\n'), '\n'); /* past the rule */
  T_ASSERT(t);
  char path[4096];
  snprintf(path, sizeof path, "%s/tests/data/report/seed004-tree.txt",
           t_srcdir);
  char *seed = t_slurp(path, NULL);
  T_ASSERT(seed);
  const char *s = seed;
  int lines = 0;
  t++;
  while (*s) {
    char g1[256], g2[256], m1[32], m2[32], n1[256], n2[256], l1[512], l2[512];
    size_t a = strcspn(s, "\n"), b = strcspn(t, "\n");
    if (!*t) T_FAIL("report ends before seed line %d: %.*s", lines + 1,
                    (int)a, s);
    snprintf(l1, sizeof l1, "%.*s", (int)a, s);
    snprintf(l2, sizeof l2, "%.*s", (int)b, t);
    split_line(l1, g1, m1, n1);
    split_line(l2, g2, m2, n2);
    if (strcmp(g1, g2) || strcmp(m1, m2) || strcmp(n1, n2))
      T_FAIL("line %d:\n  seed:   %s\n  report: %s", lines + 1, l1, l2);
    lines++;
    s += a + (s[a] == '\n');
    t += b + (t[b] == '\n');
  }
  T_EQ_INT(lines, 49);
  T_ASSERT(strstr(txt, "Hidden below") == NULL);
  free(seed);
  spy_profile_free(p);
}

/* A chain deeper than the wrap restarts its prefix as "[" like
** MessageTally's maxTabs; the walk of a 60-deep chain ends at depth 59. */
static void t_deep_wrap(void) {
  spy_profile *p = new_profile(1000000000);
  uint32_t n = process(p, 1, "deep", 1000000000);
  char name[32];
  for (int i = 0; i < 60; i++) {
    snprintf(name, sizeof name, "f%d", i);
    n = method(p, n, name, 1000000000, i == 59 ? 1000000000 : 0);
  }
  spy_report_options o;
  spy_report_options_init(&o);
  o.sections = SPY_REPORT_TREE;
  const char *txt = report(p, &o);
  char want[256];
  /* Rows at depth 0..24 get 2 spaces per level. */
  snprintf(want, sizeof want, "\n%48s100.00 (1,000)  f24\n", "");
  T_ASSERT(strstr(txt, want));
  T_ASSERT(strstr(txt, "\n[100.00 (1,000)  f25\n"));
  T_ASSERT(strstr(txt, "\n[  100.00 (1,000)  f26\n"));
  snprintf(want, sizeof want, "\n[%46s100.00 (1,000)  f48\n", "");
  T_ASSERT(strstr(txt, want));
  T_ASSERT(strstr(txt, "\n[[100.00 (1,000)  f49\n"));
  T_ASSERT(strstr(txt, "\n[[  100.00 (1,000)  f50\n"));
  spy_profile_free(p);
}

/* Links that loop give SPY_EFORMAT, not a hang. */
static void t_cycle(void) {
  spy_profile *p = new_profile(1000000000);
  uint32_t r = process(p, 1, "p", 1000000000);
  uint32_t a = method(p, r, "a", 1000000000, 0);
  uint32_t b = method(p, a, "b", 1000000000, 0);
  p->nodes[b].first_child = a;
  rec rc = {{0}, SPY_NONE};
  T_EQ_INT(spyR_walk(p, 0, 0.5, 0, rec_row, &rc), SPY_EFORMAT);
  spyR_buf_free(&rc.out);
  mem m;
  T_EQ_INT(spy_report_text(p, mem_open(&m), NULL), SPY_EFORMAT);
  mem_text(&m);
  free(m.s);
  T_EQ_INT(spy_report_folded(p, mem_open(&m), 0), SPY_EFORMAT);
  mem_text(&m);
  free(m.s);
  /* A sibling list that loops. */
  p->nodes[b].first_child = SPY_NONE;
  p->nodes[a].next_sibling = a;
  T_EQ_INT(spyR_walk(p, 0, 0.5, 0, rec_row, &rc), SPY_EFORMAT);
  spyR_buf_free(&rc.out);
  spy_profile_free(p);
}

/* ------------------------------------------------------------------------
** The text report
** --------------------------------------------------------------------- */

static void t_text_golden(void) {
  spy_profile *p = t_report_synthetic();
  check_golden(report(p, NULL), "synthetic.txt");
  spy_profile_free(p);
}

/* Known numbers, independent of the expected file. */
static void t_text_numbers(void) {
  spy_profile *p = t_report_synthetic();
  const char *t = report(p, NULL);
  /* 1,234,567,890 ns of 5 s: 24.69 %, 1,235 ms. */
  T_ASSERT(strstr(t, "24.69 (1,235)  LargePositiveInteger squaredByFourth\n"));
  T_ASSERT(strncmp(t, "Reporting - 50,000 tallies, 5,000 msec.\n", 40) == 0);
  T_ASSERT(strstr(t, "dropped:   12 samples, 3 cost observations\n"));
  T_ASSERT(strstr(t, "rate:      10,000 samples/s asked, 10,000/s taken\n"));
  T_ASSERT(strstr(t, "overhead:  0.42 % of wall time in hooks (21 ms; "
                     "interpreter threads, estimated)\n"));
  T_ASSERT(strstr(t, "started:   2019-05-05 12:00:00 UTC\n"));
  /* Leaves: the multiply primitive is a leaf in two places: 1.28 s. */
  T_ASSERT(strstr(t, "**Leaves**\n"
                     "25.60 (1,280)  Integer digitMultiply:neg:\n"));
  /* Hidden: nodes under 0.5 %, and the 0.1 % process. */
  T_ASSERT(!strstr(t, "Tiny method"));
  T_ASSERT(!strstr(t, "Worker tiny"));
  T_ASSERT(!strstr(t, "Process: sleeper"));
  T_ASSERT(strstr(t, "(1 process under 0.50 % not shown)\n"));
  /* The primitive row: 12,000 calls, 1,880 ms, mean 156.7 us. */
  T_ASSERT(strstr(t, "   12,000    1,880.0       156.7     1,204.9   37.60"
                     "  Integer digitMultiply:neg:\n"));
  T_ASSERT(!strstr(t, "Integer bitShift:")); /* no calls */
  /* The dropped count is shown also when 0. */
  p->dropped = 0;
  p->obs_dropped = 0;
  t = report(p, NULL);
  T_ASSERT(strstr(t, "dropped:   0 samples, 0 cost observations\n"));
  /* Threshold 0 shows everything with time. */
  spy_report_options o;
  spy_report_options_init(&o);
  o.threshold_pct = 0;
  t = report(p, &o);
  T_ASSERT(strstr(t, "0.40 (20)  Tiny method\n"));
  T_ASSERT(strstr(t, "Process: sleeper (pid 3) - 0.10 (5)\n"));
  spy_profile_free(p);
}

/* Options: sections, name width, leaves and steps limits. */
static void t_text_options(void) {
  spy_profile *p = t_report_synthetic();
  spy_report_options o;
  spy_report_options_init(&o);
  T_EQ_INT(o.sections, SPY_REPORT_ALL);
  T_NEAR(o.threshold_pct, 0.5, 0);
  T_EQ_INT(o.leaves, 40);
  T_EQ_INT(o.longest, 10);
  o.sections = SPY_REPORT_LEAVES | SPY_REPORT_LONGEST;
  o.width = 20;
  o.leaves = 3;
  o.longest = 1;
  o.threshold_pct = 2.0;
  check_golden(report(p, &o), "synthetic-options.txt");
  o.threshold_pct = -1;
  mem m;
  T_EQ_INT(spy_report_text(p, mem_open(&m), &o), SPY_EINVAL);
  mem_text(&m);
  free(m.s);
  T_EQ_INT(spy_report_text(NULL, stdout, NULL), SPY_EINVAL);
  T_EQ_INT(spy_report_text(p, NULL, NULL), SPY_EINVAL);
  spy_profile_free(p);
}

/* An empty profile still gives every section, with "(none)". */
/* The header's overhead line prints a number only where it means one: a
** run under 100 ms rests on too few timed hook calls, and an estimate over
** half the run is preempted timings, not hooks. The rate line is the
** asked rate and tallies over profiled wall time. */
static void t_text_overhead(void) {
  spy_profile *p = new_profile(50000000); /* 50 ms, 500 tallies */
  p->hook_ns = 150000000;                 /* "300 %" */
  p->tallies = 400;
  const char *t = report(p, NULL);
  T_ASSERT(strstr(t, "overhead:  not measured (run under 100 ms)\n"));
  T_ASSERT(strstr(t, "rate:      10,000 samples/s asked, 8,000/s taken\n"));
  spy_profile_free(p);
  p = new_profile(1000000000);
  p->hook_ns = 600000000;
  t = report(p, NULL);
  T_ASSERT(strstr(t, "overhead:  not measured (hook timings disturbed)\n"));
  spy_profile_free(p);
  p = new_profile(1000000000);
  p->hook_ns = 12500000;
  t = report(p, NULL);
  T_ASSERT(strstr(t, "overhead:  1.25 % of wall time in hooks (13 ms; "
                     "interpreter threads, estimated)\n"));
  spy_profile_free(p);
}

static void t_text_empty(void) {
  spy_profile *p = spyP_new();
  T_ASSERT(p);
  check_golden(report(p, NULL), "empty.txt");
  spy_profile_free(p);
}

/* A write error is SPY_EIO, not silence. */
static void t_text_eio(void) {
  spy_profile *p = t_report_synthetic();
  FILE *f = fopen("/dev/full", "w");
  T_ASSERT(f);
  T_EQ_INT(spy_report_text(p, f, NULL), SPY_EIO);
  T_EQ_INT(spy_report_folded(p, f, 0), SPY_EIO);
  T_EQ_INT(spy_report_speedscope(p, f, NULL), SPY_EIO);
  fclose(f);
  spy_profile_free(p);
}

/* ------------------------------------------------------------------------
** Exports
** --------------------------------------------------------------------- */

static void t_folded(void) {
  spy_profile *p = t_report_synthetic();
  mem m;
  T_EQ_INT(spy_report_folded(p, mem_open(&m), 0), 0);
  const char *t = mem_text(&m);
  check_golden(t, "synthetic.folded");
  /* Every nanosecond of the 5 s is some node's self time; the rounded
  ** microseconds add up to 5,000,000 here (the two odd values round to
  ** 34,568 and 265,432). */
  uint64_t sum = 0;
  for (const char *l = t; *l;) {
    const char *e = strchr(l, '\n'), *sp = e;
    T_ASSERT(e);
    while (sp > l && sp[-1] != ' ') sp--;
    T_ASSERT(sp > l);
    sum += strtoull(sp, NULL, 10);
    l = e + 1;
  }
  T_EQ_INT(sum, 5000000);
  T_ASSERT(strstr(t, "main;UndefinedObject DoIt;Bench run;[region] Load data;"
                     "... 5 frames cut ...;Parser parse 400000\n"));
  free(m.s);
  T_EQ_INT(spy_report_folded(p, mem_open(&m), 1), 0);
  t = mem_text(&m);
  T_ASSERT(strstr(t, "worker;Worker loop;Worker step 9850\n"));
  T_ASSERT(strstr(t, "main;Processor idle 1000\n"));
  free(m.s);
  spy_profile_free(p);
}

/* Names with ';' or a line break cannot break the format. */
static void t_folded_escape(void) {
  spy_profile *p = new_profile(1000000);
  uint32_t r = process(p, 1, "p;q", 1000000);
  method(p, r, "a;b\nc", 1000000, 1000000);
  mem m;
  T_EQ_INT(spy_report_folded(p, mem_open(&m), 0), 0);
  T_EQ_STR(mem_text(&m), "p_q;a_b_c 1000\n");
  free(m.s);
  spy_profile_free(p);
}

#if HAVE_JANSSON
/* Labels of a speedscope sample's stack, joined with ";". */
static void stack_names(json_t *frames, json_t *stack, char *out, size_t len) {
  out[0] = '\0';
  size_t i;
  json_t *v;
  json_array_foreach(stack, i, v) {
    json_t *fr = json_array_get(frames, (size_t)json_integer_value(v));
    T_ASSERT(fr);
    if (i) strncat(out, ";", len - strlen(out) - 1);
    strncat(out, json_string_value(json_object_get(fr, "name")),
            len - strlen(out) - 1);
  }
}

static void t_speedscope(void) {
  spy_profile *p = t_report_synthetic();
  mem m;
  T_EQ_INT(spy_report_speedscope(p, mem_open(&m), NULL), 0);
  const char *t = mem_text(&m);
  json_error_t err;
  json_t *doc = json_loads(t, 0, &err);
  if (!doc) T_FAIL("speedscope JSON: line %d: %s", err.line, err.text);
  T_EQ_STR(json_string_value(json_object_get(doc, "$schema")),
           "https://www.speedscope.app/file-format-schema.json");
  T_EQ_STR(json_string_value(json_object_get(doc, "name")), "st bench.st");
  json_t *frames = json_object_get(json_object_get(doc, "shared"), "frames");
  T_EQ_INT(json_array_size(frames), p->nframes);
  json_t *profiles = json_object_get(doc, "profiles");
  T_EQ_INT(json_array_size(profiles), 3);
  const char *names[3] = {"main (pid 1)", "worker (pid 2)", "sleeper (pid 3)"};
  uint64_t totals[3] = {4000000000u, 995000000, 5000000};
  int found = 0;
  for (size_t k = 0; k < 3; k++) {
    json_t *pr = json_array_get(profiles, k);
    T_EQ_STR(json_string_value(json_object_get(pr, "type")), "sampled");
    T_EQ_STR(json_string_value(json_object_get(pr, "unit")), "nanoseconds");
    T_EQ_STR(json_string_value(json_object_get(pr, "name")), names[k]);
    json_t *samples = json_object_get(pr, "samples");
    json_t *weights = json_object_get(pr, "weights");
    T_EQ_INT(json_array_size(samples), json_array_size(weights));
    uint64_t sum = 0;
    for (size_t i = 0; i < json_array_size(weights); i++) {
      uint64_t w = (uint64_t)json_integer_value(json_array_get(weights, i));
      sum += w;
      char st[1024];
      stack_names(frames, json_array_get(samples, i), st, sizeof st);
      if (k == 0 && w == 600000000 && strstr(st, "[native]")) {
        T_EQ_STR(st, "UndefinedObject DoIt;Bench run;"
                     "LargePositiveInteger squared;"
                     "LargePositiveInteger squaredByFourth;"
                     "Integer digitMultiply:neg:;[native] __gmpn_mul_basecase");
        found++;
      }
      if (k == 1 && w == 10000000) {
        T_EQ_STR(st, "Worker loop;Worker tiny"); /* no threshold here */
        found++;
      }
    }
    T_EQ_INT(sum, totals[k]);
    T_EQ_INT(json_integer_value(json_object_get(pr, "endValue")), totals[k]);
  }
  T_EQ_INT(found, 2);
  json_decref(doc);
  free(m.s);
  spy_profile_free(p);
}

/* Hostile names still give valid JSON; time on a root is its own sample. */
static void t_speedscope_escape(void) {
  spy_profile *p = new_profile(3000);
  uint32_t r = process(p, 7, "q\"\xff", 3000);
  p->nodes[r].self_ns = 1000;
  method(p, r, "a\\b\x01", 2000, 2000);
  mem m;
  T_EQ_INT(spy_report_speedscope(p, mem_open(&m), "n"), 0);
  const char *t = mem_text(&m);
  json_error_t err;
  json_t *doc = json_loads(t, 0, &err);
  if (!doc) T_FAIL("speedscope JSON: line %d: %s\n%s", err.line, err.text, t);
  json_t *frames = json_object_get(json_object_get(doc, "shared"), "frames");
  json_t *pr = json_array_get(json_object_get(doc, "profiles"), 0);
  T_EQ_STR(json_string_value(json_object_get(pr, "name")),
           "q\"\xEF\xBF\xBD (pid 7)");
  char st[256];
  stack_names(frames, json_array_get(json_object_get(pr, "samples"), 0), st,
              sizeof st);
  T_EQ_STR(st, "q\"\xEF\xBF\xBD");
  stack_names(frames, json_array_get(json_object_get(pr, "samples"), 1), st,
              sizeof st);
  T_EQ_STR(st, "a\\b\x01");
  json_decref(doc);
  free(m.s);
  spy_profile_free(p);
}
#else
static void t_speedscope(void) {
  T_SKIP("jansson not found by configure: JSON read-back not checked");
}

static void t_speedscope_escape(void) {
  T_SKIP("jansson not found by configure: JSON read-back not checked");
}
#endif

/* ------------------------------------------------------------------------
** Diff
** --------------------------------------------------------------------- */

/* A frame always added anew (frame() reuses one of the same name). */
static uint32_t new_frame(spy_profile *p, spy_frame_kind kind, uint64_t key,
                          const char *name) {
  T_ASSERT(p->nframes < CAP);
  p->frames[p->nframes] = (spy_frame){kind, key, spyP_strdup(p, name)};
  return (uint32_t)p->nframes++;
}

/* A: 1 s; X 500 ms, Y 300, Z 200. B: 2 s; X 500 ms, Y 1,300 (two method
** frames with the same name and different keys: merged), a primitive also
** named Y (4 ms, 0.2 %: kept apart from the method), W 196 ms. */
static void t_diff(void) {
  spy_profile *a = new_profile(1000000000);
  uint32_t r = process(a, 1, "main", 1000000000);
  method(a, r, "X", 500000000, 500000000);
  method(a, r, "Y", 300000000, 300000000);
  method(a, r, "Z", 200000000, 200000000);
  spy_profile *b = new_profile(2000000000);
  r = process(b, 1, "main", 2000000000);
  method(b, r, "X", 500000000, 500000000);
  node(b, r, new_frame(b, SPY_FRAME_METHOD, 1, "Y"), 800000000, 800000000);
  node(b, r, new_frame(b, SPY_FRAME_METHOD, 2, "Y"), 500000000, 500000000);
  node(b, r, new_frame(b, SPY_FRAME_PRIM, 0, "Y"), 4000000, 4000000);
  method(b, r, "W", 196000000, 196000000);
  mem m;
  T_EQ_INT(spy_report_diff(a, b, mem_open(&m), NULL), 0);
  const char *t = mem_text(&m);
  check_golden(t, "diff.txt");
  /* Largest absolute change first: Y +1,000 ms, Z -200, W +196, X 0 (its
  ** share halved, its time did not change); the 4 ms Y primitive is under
  ** the threshold on both sides. Noise (tallies = ns / 100 us, 5 frames:
  ** z = 2.58): Y's sd is sqrt(3001 + 13001) * 0.1 ms = 12.65 ms, so
  ** +-32.6; X's change of 0 is not flagged. */
  const char *y = strstr(t, "+1,000.0 *      +-32.6  method  Y\n");
  const char *z = strstr(t, "-200.0 *      +-11.5  method  Z\n");
  const char *w = strstr(t, "+196.0 *      +-11.4  method  W\n");
  const char *x = strstr(t, "0.0        +-25.8  method  X\n");
  T_ASSERT(y && x && z && w && y < z && z < w && w < x);
  T_ASSERT(!strstr(t, "prim    Y"));
  free(m.s);
  /* JSON: every frame, the primitive too. */
  T_EQ_INT(spy_report_diff_json(a, b, mem_open(&m)), 0);
  json_error_t e;
  json_t *j = json_loads(mem_text(&m), 0, &e);
  if (!j) T_FAIL("diff JSON: %s", e.text);
  json_t *fr = json_object_get(json_object_get(j, "self"), "frames");
  T_EQ_INT(json_array_size(fr), 5);
  json_t *last = json_array_get(fr, 4);
  T_EQ_STR(json_string_value(json_object_get(last, "kind")), "method");
  T_EQ_STR(json_string_value(json_object_get(last, "name")), "X");
  json_t *prim = json_array_get(fr, 3);
  T_EQ_STR(json_string_value(json_object_get(prim, "kind")), "prim");
  T_EQ_INT(json_integer_value(json_object_get(prim, "change_ns")), 4000000);
  T_ASSERT(json_is_true(json_object_get(prim, "significant")));
  json_decref(j);
  T_EQ_INT(spy_report_diff(a, NULL, stdout, NULL), SPY_EINVAL);
  spy_profile_free(a);
  spy_profile_free(b);
}

/* Hostile names: a newline, escape sequences (C0, DEL, C1 in UTF-8, a
** raw 0x9B) in frame, primitive, process, region, size and clock names
** come out escaped as JSON escapes them, so every line of the report is
** one line and nothing reaches the terminal as a control. Also: a 10 s
** interval reads "10 s", and steps under 0.0005 ms are not listed. */
static void t_text_escape(void) {
  spy_profile *p = t_report_synthetic();
  p->interval_ns = 10000000000u;
  p->clock = "ts\ac";
  p->command = "st \xc2\x9b" "2J evil.st";
  p->prims[0].name = "Evil>>a\nb";
  p->prims[0].size_names[0] = "s\x1b[31m";
  p->processes[0].name = "main\r";
  p->frames[p->nodes[p->processes[0].root].frame].name = "main\r";
  p->frames[1].name = "Bench\tDEL\x7f \x9b";
  p->regions[0].name = "Load\ndata";
  for (size_t i = 0; i < p->nsteps; i++) p->steps[i].ns = 499;
  p->steps[0].ns = 2000000;
  mem m;
  T_EQ_INT(spy_report_text(p, mem_open(&m), NULL), 0);
  const char *t = mem_text(&m);
  for (const unsigned char *u = (const unsigned char *)t; *u; u++)
    if ((*u < 0x20 && *u != '\n') || *u == 0x7f ||
        (u[0] == 0xc2 && u[1] >= 0x80 && u[1] < 0xa0))
      T_FAIL("control byte 0x%02x at %td:\n%s", *u,
             (const char *)u - t, t);
  static const char *const want[] = {
    "interval:  10 s, poll mode, clock ts\\u0007c\n",
    "command:   st \\u009B2J evil.st\n",
    "  Evil>>a\\nb\n",
    "Bench\\tDEL\\u007F \\x9B",
    "main\\r",
    "Load\\ndata",
    "Evil>>a\\nb  s\\u001B[31m=",
    "(process main\\r)\n",
  };
  for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
    if (!strstr(t, want[i])) T_FAIL("no \"%s\" in\n%s", want[i], t);
  const char *longest = strstr(t, "**Longest single steps**\n");
  T_ASSERT(longest);
  T_ASSERT(strstr(longest, " 1. ") && !strstr(longest, " 2. "));
  T_ASSERT(!strstr(t, "0.000 ms"));
  spy_profile_free(p);
}

/* A hostile profile with 300,000 primitives, steps and native stacks is
** reported in O(n log n): quadratic sorting (as before) took minutes,
** past this test's timeout. The order is still exact. */
static void t_text_many(void) {
  enum { N = 300000 };
  spy_profile *p = spyP_new();
  T_ASSERT(p);
  p->prims = spyP_calloc(p, N, sizeof *p->prims);
  p->steps = spyP_calloc(p, N, sizeof *p->steps);
  p->natives = spyP_calloc(p, N, sizeof *p->natives);
  p->frames = spyP_calloc(p, 2, sizeof *p->frames);
  static uint32_t nf[2] = {0, 1};
  T_ASSERT(p->prims && p->steps && p->natives && p->frames);
  p->nprims = p->nsteps = p->nnatives = N;
  p->nframes = 2;
  p->frames[0] = (spy_frame){SPY_FRAME_NATIVE, 1, "f (m)"};
  p->frames[1] = (spy_frame){SPY_FRAME_NATIVE, 2, "g (m)"};
  for (uint32_t i = 0; i < N; i++) {
    p->prims[i].name = i % 2 ? "odd" : "even";
    p->prims[i].calls = 1;
    p->prims[i].total_ns = (uint64_t)(i * 7919u % N) * 1000;
    p->steps[i] = (spy_step){SPY_STEP_PRIM, i, 0, {0}, 1000 + i % 1000, 0,
                             0, NULL, 0};
    p->natives[i] = (spy_native){i % 1000, 1 + i % 2, nf, 1 + i % 3};
  }
  p->steps[12345].ns = 5000000;
  mem m;
  spy_report_options o;
  spy_report_options_init(&o);
  T_EQ_INT(spy_report_text(p, mem_open(&m), &o), 0);
  const char *t = mem_text(&m);
  /* The heaviest primitive first: total (N-1)*1000 ns at i with
  ** i*7919 % N == N-1. */
  const char *pr = strstr(t, "**Primitives**\n");
  T_ASSERT(pr);
  T_ASSERT(strstr(pr, "        1      300.0   299,999.0 "));
  const char *st = strstr(t, " 1.     5.000 ms  odd");
  T_ASSERT(st);
  T_ASSERT(strstr(st, " 2.     0.002 ms  "));
  spy_profile_free(p);
}

const struct spy_test t_report[] = {
    {"text_escape", t_text_escape, 0},
    {"text_many", t_text_many, 60},
    {"numbers", t_numbers, 0},
    {"labels", t_labels, 0},
    {"walk_rows", t_walk_rows, 0},
    {"seed_guides", t_seed_guides, 0},
    {"deep_wrap", t_deep_wrap, 0},
    {"cycle", t_cycle, 10},
    {"text_golden", t_text_golden, 0},
    {"text_numbers", t_text_numbers, 0},
    {"text_options", t_text_options, 0},
    {"text_empty", t_text_empty, 0},
    {"text_overhead", t_text_overhead, 0},
    {"text_eio", t_text_eio, 0},
    {"folded", t_folded, 0},
    {"folded_escape", t_folded_escape, 0},
    {"speedscope", t_speedscope, 0},
    {"speedscope_escape", t_speedscope_escape, 0},
    {"diff", t_diff, 0},
    {0},
};
