/*
** tests/test_report.c: the "report" suite: number formatting and the text
** report, and the helpers its other files share (tests/test_report.h);
** the tree walker is in tests/test_report_walk.c, the folded and
** speedscope exports and the diff in tests/test_report_export.c.
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

#include <spyon.h>
#include <spyon/report.h>

#include "profile/profile.h"
#include "report/format.h"
#include "tests/test_report.h"

/* ------------------------------------------------------------------------
** Building profiles
** --------------------------------------------------------------------- */

spy_profile *tr_new_profile(uint64_t wall_ns) {
  spy_profile *p = spyP_new();
  T_ASSERT(p);
  p->frames = spyP_calloc(p, TR_CAP, sizeof *p->frames);
  p->nodes = spyP_calloc(p, TR_CAP, sizeof *p->nodes);
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
uint32_t tr_frame(spy_profile *p, spy_frame_kind kind, uint64_t key,
                  const char *name) {
  for (size_t i = 0; i < p->nframes; i++)
    if (p->frames[i].kind == kind && strcmp(p->frames[i].name, name) == 0 &&
        (kind != SPY_FRAME_PRIM || p->frames[i].key == key))
      return (uint32_t)i;
  T_ASSERT(p->nframes < TR_CAP);
  spy_frame *f = &p->frames[p->nframes];
  f->kind = kind;
  f->key = kind == SPY_FRAME_PRIM || kind == SPY_FRAME_CUT ? key : p->nframes;
  f->name = spyP_strdup(p, name);
  return (uint32_t)p->nframes++;
}

/* A node under parent (appended last among its siblings, so tests also see
** children that arrive out of weight order). Tallies: one per 100 us. */
uint32_t tr_node(spy_profile *p, uint32_t parent, uint32_t fr,
                 uint64_t total, uint64_t self) {
  T_ASSERT(p->nnodes < TR_CAP);
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

uint32_t tr_method(spy_profile *p, uint32_t parent, const char *name,
                   uint64_t total, uint64_t self) {
  return tr_node(p, parent, tr_frame(p, SPY_FRAME_METHOD, 0, name), total,
                 self);
}

/* A process and its root node; returns the root. */
uint32_t tr_process(spy_profile *p, uint64_t pid, const char *name,
                    uint64_t total) {
  uint32_t r =
      tr_node(p, SPY_NONE, tr_frame(p, SPY_FRAME_ROOT, 0, name), total, 0);
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
  spy_profile *p = tr_new_profile(5000000000u);
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
  uint32_t mul = tr_frame(p, SPY_FRAME_PRIM, 0, pn[0]);
  uint32_t add = tr_frame(p, SPY_FRAME_PRIM, 1, pn[1]);

  uint32_t r = tr_process(p, 1, "main", 4000000000u);
  tr_method(p, r, "Processor idle", 100000000, 100000000);
  uint32_t doit = tr_method(p, r, "UndefinedObject DoIt", 3900000000u, 0);
  uint32_t run = tr_method(p, doit, "Bench run", 3900000000u, 0);
  tr_method(p, run, "Sort", 400000000, 400000000);
  uint32_t load = tr_node(
      p, run, tr_frame(p, SPY_FRAME_REGION, 0, "Load data"), 1000000000, 0);
  tr_method(p, load, "Reader read", 600000000, 600000000);
  uint32_t cut =
      tr_node(p, load, tr_frame(p, SPY_FRAME_CUT, 5, "cut"), 400000000, 0);
  tr_method(p, cut, "Parser parse", 400000000, 400000000);
  uint32_t sq = tr_method(p, run, "LargePositiveInteger squared",
                          2500000000u, 100000000);
  uint32_t half = tr_method(p, sq, "LargePositiveInteger squaredByHalf",
                            900000000, 0);
  uint32_t mbi = tr_method(p, half, "LargePositiveInteger multiplyByInteger:",
                           900000000, 0);
  tr_method(p, mbi, "Tiny method", 20000000, 20000000); /* 0.40 %: hidden */
  tr_node(p, mbi, mul, 880000000, 880000000);
  uint32_t four = tr_method(p, sq, "LargePositiveInteger squaredByFourth",
                            1234567890, 34567890);
  uint32_t m2 = tr_node(p, four, mul, 1000000000, 400000000);
  tr_node(p, m2, tr_frame(p, SPY_FRAME_NATIVE, 0, "__gmpn_mul_basecase"),
          600000000, 600000000);
  uint32_t plus = tr_method(p, four, "LargePositiveInteger +", 200000000,
                            150000000);
  tr_node(p, plus, add, 50000000, 50000000);
  uint32_t gcf = tr_frame(p, SPY_FRAME_GC, 0, "GC");
  tr_node(p, sq, gcf, 265432110, 265432110);

  r = tr_process(p, 2, "worker", 995000000);
  uint32_t loop = tr_method(p, r, "Worker loop", 995000000, 0);
  tr_method(p, loop, "Worker step", 985000000, 985000000);
  tr_method(p, loop, "Worker tiny", 10000000, 10000000); /* 0.20 %: hidden */

  r = tr_process(p, 3, "sleeper", 5000000);
  tr_method(p, r, "Sleeper wait", 5000000, 5000000);

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
  f2[0] = tr_frame(p, SPY_FRAME_METHOD, 0, "Worker loop");
  for (int i = 1; i < 9; i++)
    f2[i] = tr_frame(p, SPY_FRAME_METHOD, 0, "Fib fib:");
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

FILE *tr_mem_open(tr_mem *m) {
  m->s = NULL;
  m->n = 0;
  m->f = open_memstream(&m->s, &m->n);
  T_ASSERT(m->f);
  return m->f;
}

/* Close and return the text (owned by m). */
const char *tr_mem_text(tr_mem *m) {
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
void tr_check_golden(const char *got, const char *name) {
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

const char *tr_report(const spy_profile *p, const spy_report_options *o) {
  static tr_mem m;
  int rc = spy_report_text(p, tr_mem_open(&m), o);
  const char *s = tr_mem_text(&m);
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
  spy_profile *p = tr_new_profile(1);
  uint32_t f[6] = {
      tr_frame(p, SPY_FRAME_METHOD, 0, "Foo bar:"),
      tr_frame(p, SPY_FRAME_PRIM, 3, "Integer digitAdd:"),
      tr_frame(p, SPY_FRAME_GC, 0, "scavenge"),
      tr_frame(p, SPY_FRAME_REGION, 0, "Hash"),
      tr_frame(p, SPY_FRAME_NATIVE, 0, "memcpy"),
      tr_frame(p, SPY_FRAME_CUT, 1234, ""),
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
** The text report
** --------------------------------------------------------------------- */

static void t_text_golden(void) {
  spy_profile *p = t_report_synthetic();
  tr_check_golden(tr_report(p, NULL), "synthetic.txt");
  spy_profile_free(p);
}

/* Known numbers, independent of the expected file. */
static void t_text_numbers(void) {
  spy_profile *p = t_report_synthetic();
  const char *t = tr_report(p, NULL);
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
  t = tr_report(p, NULL);
  T_ASSERT(strstr(t, "dropped:   0 samples, 0 cost observations\n"));
  /* Threshold 0 shows everything with time. */
  spy_report_options o;
  spy_report_options_init(&o);
  o.threshold_pct = 0;
  t = tr_report(p, &o);
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
  tr_check_golden(tr_report(p, &o), "synthetic-options.txt");
  o.threshold_pct = -1;
  tr_mem m;
  T_EQ_INT(spy_report_text(p, tr_mem_open(&m), &o), SPY_EINVAL);
  tr_mem_text(&m);
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
  spy_profile *p = tr_new_profile(50000000); /* 50 ms, 500 tallies */
  p->hook_ns = 150000000;                    /* "300 %" */
  p->tallies = 400;
  const char *t = tr_report(p, NULL);
  T_ASSERT(strstr(t, "overhead:  not measured (run under 100 ms)\n"));
  T_ASSERT(strstr(t, "rate:      10,000 samples/s asked, 8,000/s taken\n"));
  spy_profile_free(p);
  p = tr_new_profile(1000000000);
  p->hook_ns = 600000000;
  t = tr_report(p, NULL);
  T_ASSERT(strstr(t, "overhead:  not measured (hook timings disturbed)\n"));
  spy_profile_free(p);
  p = tr_new_profile(1000000000);
  p->hook_ns = 12500000;
  t = tr_report(p, NULL);
  T_ASSERT(strstr(t, "overhead:  1.25 % of wall time in hooks (13 ms; "
                     "interpreter threads, estimated)\n"));
  spy_profile_free(p);
}

static void t_text_empty(void) {
  spy_profile *p = spyP_new();
  T_ASSERT(p);
  tr_check_golden(tr_report(p, NULL), "empty.txt");
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
  tr_mem m;
  T_EQ_INT(spy_report_text(p, tr_mem_open(&m), NULL), 0);
  const char *t = tr_mem_text(&m);
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
  tr_mem m;
  spy_report_options o;
  spy_report_options_init(&o);
  T_EQ_INT(spy_report_text(p, tr_mem_open(&m), &o), 0);
  const char *t = tr_mem_text(&m);
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
    {"text_golden", t_text_golden, 0},
    {"text_numbers", t_text_numbers, 0},
    {"text_options", t_text_options, 0},
    {"text_empty", t_text_empty, 0},
    {"text_overhead", t_text_overhead, 0},
    {"text_eio", t_text_eio, 0},
    {0},
};
