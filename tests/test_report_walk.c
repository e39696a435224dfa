/*
** tests/test_report_walk.c: the "report" suite, the tree walker: rows,
** guides, wrapping and cycles (tests/test_report.c has the helpers).
*/
#include "config.h"

#include "tests/test.h"

#include <spyon.h>

#include "profile/profile.h"
#include "report/format.h"
#include "report/walk.h"
#include "tests/test_report.h"

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
  spy_profile *p = tr_new_profile(1000000000);
  uint32_t r = tr_process(p, 1, "p", 1000000000);
  uint32_t a = tr_method(p, r, "a", 300000000, 0);
  tr_method(p, r, "b", 700000000, 0); /* heavier: listed first */
  uint32_t a1 = tr_method(p, a, "a1", 200000000, 0);
  tr_method(p, a, "a2", 100000000, 0);
  tr_method(p, a1, "a11", 200000000, 200000000);
  tr_method(p, a, "a3", 4000000, 4000000); /* 0.4 %: hidden at 0.5 */
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
  spy_profile *p = tr_new_profile(5101000000u);
  uint32_t root = tr_process(p, 1, "seed", 5068000000u);
  uint32_t stack[32];
  for (int i = 0; seed_spec[i]; i++) {
    const char *s = seed_spec[i];
    size_t d = strspn(s, " ");
    char *end;
    uint64_t ms = strtoull(s + d, &end, 10);
    const char *name = end + 1;
    int prim = *name == '!';
    uint32_t parent = d ? stack[d - 1] : root;
    uint32_t fr = prim ? tr_frame(p, SPY_FRAME_PRIM, 0, name + 1)
                       : tr_frame(p, SPY_FRAME_METHOD, 0, name);
    stack[d] = tr_node(p, parent, fr, ms * 1000000, 0);
  }
  spy_report_options o;
  spy_report_options_init(&o);
  o.threshold_pct = 1.0;
  o.sections = SPY_REPORT_TREE;
  const char *txt = tr_report(p, &o);
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
  spy_profile *p = tr_new_profile(1000000000);
  uint32_t n = tr_process(p, 1, "deep", 1000000000);
  char name[32];
  for (int i = 0; i < 60; i++) {
    snprintf(name, sizeof name, "f%d", i);
    n = tr_method(p, n, name, 1000000000, i == 59 ? 1000000000 : 0);
  }
  spy_report_options o;
  spy_report_options_init(&o);
  o.sections = SPY_REPORT_TREE;
  const char *txt = tr_report(p, &o);
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
  spy_profile *p = tr_new_profile(1000000000);
  uint32_t r = tr_process(p, 1, "p", 1000000000);
  uint32_t a = tr_method(p, r, "a", 1000000000, 0);
  uint32_t b = tr_method(p, a, "b", 1000000000, 0);
  p->nodes[b].first_child = a;
  rec rc = {{0}, SPY_NONE};
  T_EQ_INT(spyR_walk(p, 0, 0.5, 0, rec_row, &rc), SPY_EFORMAT);
  spyR_buf_free(&rc.out);
  tr_mem m;
  T_EQ_INT(spy_report_text(p, tr_mem_open(&m), NULL), SPY_EFORMAT);
  tr_mem_text(&m);
  free(m.s);
  T_EQ_INT(spy_report_folded(p, tr_mem_open(&m), 0), SPY_EFORMAT);
  tr_mem_text(&m);
  free(m.s);
  /* A sibling list that loops. */
  p->nodes[b].first_child = SPY_NONE;
  p->nodes[a].next_sibling = a;
  T_EQ_INT(spyR_walk(p, 0, 0.5, 0, rec_row, &rc), SPY_EFORMAT);
  spyR_buf_free(&rc.out);
  spy_profile_free(p);
}

const struct spy_test t_report_walk[] = {
    {"walk_rows", t_walk_rows, 0},
    {"seed_guides", t_seed_guides, 0},
    {"deep_wrap", t_deep_wrap, 0},
    {"cycle", t_cycle, 10},
    {0},
};
