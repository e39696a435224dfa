/*
** tests/test_profile.c: the "profile" suite, part one: the shared helpers
** (tests/test_profile.h) and the file format round trips. Part two,
** tests/test_profile_bad.c: the loader under hostile input (every
** truncation, flipped bytes, forged counts, broken trees) and the JSON
** export read back with jansson.
**
** The synthetic profile below has every section populated with known
** values; tests compare against those values, not against the code's own
** output. tests/data/profile/small.spy is that profile saved by format
** version 1: loading it checks that old files stay readable, and encoding
** the profile again must reproduce it byte for byte. To regenerate it after
** a deliberate format change, run the suite with SPY_REGEN_FIXTURES=1.
** SPY_TEST_VERBOSE=1 prints every loader error message the tests provoke.
*/
#include "config.h"

#include "tests/test_profile.h"


static void set_node(spy_node *n, uint32_t frame, uint32_t parent,
                     uint32_t child, uint32_t sib, uint64_t total,
                     uint64_t self, uint64_t tal, uint64_t stal) {
  n->frame = frame;
  n->parent = parent;
  n->first_child = child;
  n->next_sibling = sib;
  n->total_ns = total;
  n->self_ns = self;
  n->tallies = tal;
  n->self_tallies = stal;
}

/* Two processes with nested trees (node indices deliberately not in tree
** order), three primitives (with 2, 0 and 4 operand sizes, observations,
** a model), every frame kind, two steps, three regions (a parent after its
** child), GC totals and every header field. */
spy_profile *tp_synth(void) {
  spy_profile *p = spyP_new();
  T_ASSERT(p);
  const uint32_t N = SPY_NONE;
  p->mode = SPY_MODE_TIMER;
  p->interval_ns = 100000;
  p->wall_ns = 123456789;
  p->tallies = 150;
  p->dropped = 3;
  p->obs_dropped = 7;
  p->hook_ns = 4242;
  p->start_unix_ns = 1700000000123456789ull;
  p->clock = spyP_strdup(p, "tsc");
  T_EQ_INT(spy_profile_set_command(p, COMMAND), 0);

  p->nprims = 3;
  spy_profile_prim *pr = p->prims = spyP_calloc(p, 3, sizeof *p->prims);
  pr[0] = (spy_profile_prim){
      .name = "LargePositiveInteger>>digitMultiply:neg:", .nsizes = 2,
      .size_names = {"a", "b"}, .flags = SPY_PRIM_COST, .calls = 50,
      .total_ns = 5000000, .max_ns = 400000, .obs_offered = 50,
      .model = strdup("3.1e-09*a*b + 120"), .nobs = 3,
      .obs = spyP_calloc(p, 3, sizeof(spy_obs))};
  pr[0].obs[0] = (spy_obs){{10, 20, 0, 0}, 1000, 0};
  pr[0].obs[1] = (spy_obs){{300, 400, 0, 0}, 120000, 1};
  pr[0].obs[2] = (spy_obs){{1ull << 62, 1ull << 40, 0, 0}, 400000, 2};
  pr[1] = (spy_profile_prim){.name = "Float>>sqrt", .calls = 1000,
                             .total_ns = 20000, .max_ns = 100,
                             .obs = spyP_calloc(p, 0, sizeof(spy_obs))};
  pr[2] = (spy_profile_prim){
      .name = "Bitmap>>fill:", .nsizes = 4, .size_names = {"w", "h", "a", "h"},
      .flags = SPY_PRIM_COST, .calls = 2, .total_ns = 190, .max_ns = 170,
      .obs_offered = 2, .nobs = 1, .obs = spyP_calloc(p, 1, sizeof(spy_obs))};
  pr[2].obs[0] = (spy_obs){{1, 2, 3, 4}, 77, UINT32_MAX};

  static const struct {
    spy_frame_kind kind;
    uint64_t key;
    const char *name;
  } fr[] = {
      {SPY_FRAME_ROOT, 0, "root"},
      {SPY_FRAME_METHOD, 0x1000, "Main>>run"},
      {SPY_FRAME_METHOD, 0x1001, "Bench>>go: \"quoted\" \\back"},
      {SPY_FRAME_PRIM, 0, "LargePositiveInteger>>digitMultiply:neg:"},
      {SPY_FRAME_PRIM, 1, "Float>>sqrt"},
      {SPY_FRAME_GC, 0, "GC"},
      {SPY_FRAME_REGION, 2, "outer"},
      {SPY_FRAME_NATIVE, 0xfffffffffffffff0ull, NATIVE_NAME},
      {SPY_FRAME_CUT, 0, "..."},
      {SPY_FRAME_PRIM, 2, "Bitmap>>fill:"},
  };
  p->nframes = 10;
  p->frames = spyP_calloc(p, 10, sizeof *p->frames);
  for (int i = 0; i < 10; i++)
    p->frames[i] = (spy_frame){fr[i].kind, fr[i].key, fr[i].name};

  p->nnodes = 12;
  spy_node *n = p->nodes = spyP_calloc(p, 12, sizeof *p->nodes);
  set_node(&n[0], 0, N, 1, N, 1000, 0, 100, 0);
  set_node(&n[1], 1, 0, 2, 5, 900, 100, 90, 10);
  set_node(&n[2], 2, 1, 3, 4, 600, 50, 60, 5);
  set_node(&n[3], 3, 2, N, N, 550, 550, 55, 55);
  set_node(&n[4], 4, 1, N, N, 200, 200, 20, 20);
  set_node(&n[5], 5, 0, N, N, 100, 100, 10, 10);
  set_node(&n[10], 0, N, 7, N, 500, 0, 50, 0);
  set_node(&n[7], 1, 10, 6, N, 500, 10, 50, 1);
  set_node(&n[6], 6, 7, 9, 8, 300, 20, 30, 2);
  set_node(&n[9], 7, 6, N, N, 280, 280, 28, 28);
  set_node(&n[8], 9, 7, 11, N, 190, 170, 19, 17);
  set_node(&n[11], 8, 8, N, N, 20, 20, 2, 2);

  p->nprocesses = 2;
  p->processes = spyP_calloc(p, 2, sizeof *p->processes);
  p->processes[0] = (spy_process){40, "main (40)", 0, 1000, 100};
  p->processes[1] = (spy_process){41, "worker", 10, 500, 50};

  p->nsteps = 2;
  p->steps = spyP_calloc(p, 2, sizeof *p->steps);
  p->steps[0] = (spy_step){SPY_STEP_PRIM, 0, 2, {300, 400, 0, 0}, 120000, 0,
                           4, spyP_calloc(p, 4, sizeof(uint32_t)), 0};
  for (uint32_t i = 0; i < 4; i++) p->steps[0].frames[i] = i;
  p->steps[1] = (spy_step){SPY_STEP_GC, N, 0, {0}, 90000, 1, 0,
                           spyP_calloc(p, 0, sizeof(uint32_t)), 0};

  p->nregions = 3;
  p->regions = spyP_calloc(p, 3, sizeof *p->regions);
  p->regions[0] = (spy_profile_region){"inner", 2, 5, 250, 80};
  p->regions[1] = (spy_profile_region){"other", N, 1, 10, 10};
  p->regions[2] = (spy_profile_region){"outer", N, 2, 300, 200};

  p->gc.count = 4;
  p->gc.total_ns = 100;
  p->gc.max_ns = 60;
  return p;
}

/* ------------------------------------------------------------------------
** Helpers
** --------------------------------------------------------------------- */

/* Field-by-field equality of two profiles, failing at the first
** difference with both values. */
void tp_same(const spy_profile *a, const spy_profile *b) {
#define EQ_(f) T_EQ_INT(a->f, b->f)
#define EQS_(f) T_EQ_STR(a->f, b->f)
  EQ_(mode); EQ_(interval_ns); EQ_(wall_ns); EQ_(tallies); EQ_(dropped);
  EQ_(obs_dropped); EQ_(hook_ns); EQ_(start_unix_ns);
  EQS_(clock); EQS_(command);
  EQ_(nprims);
  for (size_t i = 0; i < a->nprims; i++) {
    EQS_(prims[i].name); EQ_(prims[i].nsizes); EQ_(prims[i].flags);
    for (unsigned k = 0; k < a->prims[i].nsizes; k++)
      EQS_(prims[i].size_names[k]);
    EQ_(prims[i].calls); EQ_(prims[i].total_ns); EQ_(prims[i].max_ns);
    EQ_(prims[i].obs_offered); EQ_(prims[i].nobs);
    T_EQ_INT(!a->prims[i].model, !b->prims[i].model);
    if (a->prims[i].model) EQS_(prims[i].model);
    T_ASSERT(a->prims[i].nobs == 0 ||
             memcmp(a->prims[i].obs, b->prims[i].obs,
                    a->prims[i].nobs * sizeof(spy_obs)) == 0);
  }
  EQ_(nframes);
  for (size_t i = 0; i < a->nframes; i++) {
    EQ_(frames[i].kind); EQS_(frames[i].name);
    T_ASSERT(a->frames[i].key == b->frames[i].key);
  }
  EQ_(nnodes);
  T_ASSERT(a->nnodes == 0 ||
           memcmp(a->nodes, b->nodes, a->nnodes * sizeof *a->nodes) == 0);
  EQ_(nprocesses);
  for (size_t i = 0; i < a->nprocesses; i++) {
    EQ_(processes[i].pid); EQS_(processes[i].name); EQ_(processes[i].root);
    EQ_(processes[i].total_ns); EQ_(processes[i].tallies);
  }
  EQ_(nsteps);
  for (size_t i = 0; i < a->nsteps; i++) {
    EQ_(steps[i].kind); EQ_(steps[i].prim); EQ_(steps[i].nsizes);
    EQ_(steps[i].ns); EQ_(steps[i].process); EQ_(steps[i].nframes);
    EQ_(steps[i].off_cpu_pct);
    for (int k = 0; k < 4; k++)
      T_ASSERT(a->steps[i].size[k] == b->steps[i].size[k]);
    for (uint32_t k = 0; k < a->steps[i].nframes; k++) EQ_(steps[i].frames[k]);
  }
  EQ_(nregions);
  for (size_t i = 0; i < a->nregions; i++) {
    EQS_(regions[i].name); EQ_(regions[i].parent); EQ_(regions[i].calls);
    EQ_(regions[i].total_ns); EQ_(regions[i].max_ns);
  }
  EQ_(gc.count); EQ_(gc.total_ns); EQ_(gc.max_ns);
  EQ_(nnatives); /* native stacks (optional section 10) */
  for (size_t i = 0; i < a->nnatives; i++) {
    EQ_(natives[i].prim); EQ_(natives[i].count); EQ_(natives[i].nframes);
    for (uint32_t k = 0; k < a->natives[i].nframes; k++)
      EQ_(natives[i].frames[k]);
  }
#undef EQ_
#undef EQS_
}

/* What tools rely on after a successful load, checked independently of
** the loader: every index in range, every node in exactly one tree. */
void tp_valid(const spy_profile *p) {
  T_ASSERT(p->clock && p->command);
  for (size_t i = 0; i < p->nframes; i++) {
    T_ASSERT(p->frames[i].name);
    T_ASSERT(p->frames[i].kind <= SPY_FRAME_CUT);
  }
  for (size_t i = 0; i < p->nprims; i++) {
    T_ASSERT(p->prims[i].name && p->prims[i].nsizes <= 4);
    for (unsigned k = 0; k < p->prims[i].nsizes; k++)
      T_ASSERT(p->prims[i].size_names[k]);
  }
  unsigned char *seen = calloc(p->nnodes + 1, 1);
  for (size_t i = 0; i < p->nprocesses; i++) {
    uint32_t r = p->processes[i].root;
    T_ASSERT(p->processes[i].name && r < p->nnodes && !seen[r]);
    T_ASSERT(p->nodes[r].parent == SPY_NONE);
    T_ASSERT(p->frames[p->nodes[r].frame].kind == SPY_FRAME_ROOT);
    seen[r] = 1;
  }
  for (size_t i = 0; i < p->nnodes; i++) {
    const spy_node *n = &p->nodes[i];
    T_ASSERT(n->frame < p->nframes);
    if (!seen[i]) { /* not a root: its parent lists it exactly once */
      T_ASSERT(n->parent < p->nnodes);
      size_t hits = 0, steps = 0;
      for (uint32_t c = p->nodes[n->parent].first_child; c != SPY_NONE;
           c = p->nodes[c].next_sibling) {
        T_ASSERT(c < p->nnodes && ++steps <= p->nnodes);
        hits += c == i;
      }
      T_EQ_INT(hits, 1);
    }
    /* The parent chain reaches a root. */
    size_t depth = 0;
    uint32_t j = (uint32_t)i;
    while (p->nodes[j].parent != SPY_NONE) {
      j = p->nodes[j].parent;
      T_ASSERT(j < p->nnodes && ++depth <= p->nnodes);
    }
    T_ASSERT(seen[j]);
  }
  free(seen);
  for (size_t i = 0; i < p->nsteps; i++) {
    const spy_step *s = &p->steps[i];
    T_ASSERT(s->nsizes <= 4 && s->process < p->nprocesses);
    T_ASSERT(s->prim == SPY_NONE || s->prim < p->nprims);
    T_ASSERT(s->kind == SPY_STEP_PRIM || s->prim == SPY_NONE);
    for (uint32_t k = 0; k < s->nframes; k++)
      T_ASSERT(s->frames[k] < p->nframes);
  }
  for (size_t i = 0; i < p->nregions; i++) {
    T_ASSERT(p->regions[i].name);
    size_t depth = 0;
    for (uint32_t j = p->regions[i].parent; j != SPY_NONE;
         j = p->regions[j].parent)
      T_ASSERT(j < p->nregions && ++depth <= p->nregions);
  }
}

/* An error message must read "NAME: offset N: text" with N <= maxoff;
** returns N. */
size_t tp_check_msg(const char *err, const char *name, size_t maxoff) {
  size_t nl = strlen(name);
  if (strncmp(err, name, nl) != 0 || strncmp(err + nl, ": offset ", 9) != 0)
    T_FAIL("message \"%s\" does not start with \"%s: offset \"", err, name);
  char *end;
  errno = 0;
  unsigned long long off = strtoull(err + nl + 9, &end, 10);
  if (end == err + nl + 9 || errno || strncmp(end, ": ", 2) != 0 || !end[2])
    T_FAIL("message \"%s\": no \"offset N: text\"", err);
  if (off > maxoff)
    T_FAIL("message \"%s\": offset %llu beyond %zu", err, off, maxoff);
  return (size_t)off;
}

void tp_encode(const spy_profile *p, unsigned char **buf, size_t *len) {
  char err[256];
  int rc = spyP_encode(p, buf, len, err, sizeof err);
  if (rc) T_FAIL("encode: %d %s", rc, err);
}

/* Load bytes expecting failure `want`, with the message containing `sub`
** (if not NULL); returns the offset named. */
size_t tp_load_fails(const unsigned char *b, size_t len, unsigned flags,
                         int want, const char *sub) {
  spy_profile *q = (spy_profile *)1;
  char err[512];
  int rc = spyP_load_mem(b, len, "t.spy", flags, &q, err, sizeof err);
  if (rc != want) T_FAIL("load gave %d, wanted %d (%s)", rc, want, err);
  if (getenv("SPY_TEST_VERBOSE")) fprintf(stderr, "%s\n", err);
  T_ASSERT(q == NULL);
  size_t off = tp_check_msg(err, "t.spy", len);
  if (sub && !strstr(err, sub))
    T_FAIL("message \"%s\" lacks \"%s\"", err, sub);
  return off;
}

/* A growable byte string for crafting files. */

void tp_tb_put(tb *t, const void *s, size_t n) {
  t->p = realloc(t->p, t->n + n + 1);
  T_ASSERT(t->p);
  if (n) memcpy(t->p + t->n, s, n);
  t->n += n;
}

void tp_tb_var(tb *t, uint64_t v) {
  do {
    unsigned char c = v & 0x7f;
    v >>= 7;
    c |= v ? 0x80 : 0;
    tp_tb_put(t, &c, 1);
  } while (v);
}

uint64_t tp_get_var(const unsigned char *b, size_t *pos) {
  uint64_t v = 0;
  for (int sh = 0;; sh += 7) {
    unsigned c = b[(*pos)++];
    v |= (uint64_t)(c & 0x7f) << sh;
    if (!(c & 0x80)) return v;
  }
}

/* The sections of a valid file: tag, where the section starts (its tag),
** where its payload starts, and its length. */

int tp_split(const unsigned char *b, size_t len, tsec *s, int max) {
  size_t pos = SPYP_PRE_SIZE;
  int n = 0;
  while (pos < len && n < max) {
    s[n].at = pos;
    s[n].tag = tp_get_var(b, &pos);
    s[n].len = (size_t)tp_get_var(b, &pos);
    s[n].off = pos;
    pos += s[n].len;
    n++;
  }
  return n;
}

/* Rebuild a file from b's sections, replacing section tag `tag`'s payload
** by `pay` (NULL: keep all), optionally inserting an extra section before
** it; with the preamble fixed so only the structure is judged. */
tb tp_rebuild(const unsigned char *b, size_t len, uint64_t tag,
                  const tb *pay, const tb *extra, uint64_t extra_tag) {
  tsec s[32];
  int n = tp_split(b, len, s, 32);
  tb t = {0};
  tp_tb_put(&t, b, SPYP_PRE_SIZE);
  for (int i = 0; i < n; i++) {
    if (s[i].tag == tag && extra) {
      tp_tb_var(&t, extra_tag);
      tp_tb_var(&t, extra->n);
      tp_tb_put(&t, extra->p, extra->n);
    }
    tp_tb_var(&t, s[i].tag);
    if (s[i].tag == tag && pay) {
      tp_tb_var(&t, pay->n);
      tp_tb_put(&t, pay->p, pay->n);
    } else {
      tp_tb_var(&t, s[i].len);
      tp_tb_put(&t, b + s[i].off, s[i].len);
    }
  }
  spyP_fix_preamble(t.p, t.n);
  return t;
}

/* ------------------------------------------------------------------------
** Round trips and the fixture
** --------------------------------------------------------------------- */

/* Native stacks for tp_synth()'s profile: two paths under prim 0, one under
** prim 2, through its one native frame (7). Added only in the round trip,
** so the fixture (which predates natives) keeps its bytes. */
static void add_natives(spy_profile *p) {
  p->nnatives = 3;
  p->natives = spyP_calloc(p, 3, sizeof *p->natives);
  uint32_t *fr = spyP_calloc(p, 4, sizeof *fr);
  T_ASSERT(p->natives && fr);
  fr[0] = fr[1] = fr[2] = fr[3] = 7;
  p->natives[0] = (spy_native){0, 2, fr, 40};
  p->natives[1] = (spy_native){0, 1, fr + 2, 9};
  p->natives[2] = (spy_native){2, 1, fr + 3, 1};
}

static void roundtrip_file(void) {
  spy_profile *p = tp_synth(), *q = NULL;
  add_natives(p);
  p->steps[1].off_cpu_pct = 60; /* section 12 */
  char path[4200], err[512];
  snprintf(path, sizeof path, "%s/run.spy", t_tmpdir());
  int rc = spy_profile_save(p, path, err, sizeof err);
  if (rc) T_FAIL("save: %s", err);
  rc = spy_profile_load(path, &q, err, sizeof err);
  if (rc) T_FAIL("load: %s", err);
  T_EQ_INT(q->version, SPY_FORMAT_VERSION);
  tp_same(p, q);
  tp_valid(q);
  T_EQ_INT(q->steps[1].off_cpu_pct, 60);
  /* An off_cpu_pct over 100 is refused, by the writer and the loader (the
  ** file's last byte is step 1's, written alone in section 12). */
  p->steps[1].off_cpu_pct = 101;
  unsigned char *b;
  size_t len;
  T_EQ_INT(spyP_encode(p, &b, &len, err, sizeof err), SPY_EINVAL);
  p->steps[1].off_cpu_pct = 100;
  T_EQ_INT(spyP_encode(p, &b, &len, err, sizeof err), 0);
  T_EQ_INT(b[len - 1], 100);
  b[len - 1] = 101;
  spyP_fix_preamble(b, len);
  spy_profile *bad = NULL;
  T_EQ_INT(spy_profile_load_mem(b, len, "b.spy", &bad, err, sizeof err),
           SPY_EFORMAT);
  if (!strstr(err, "step cpu 0: off_cpu_pct 101 is over 100"))
    T_FAIL("%s", err);
  free(b);
  spy_profile_free(p);
  spy_profile_free(q);
}

static void roundtrip_empty(void) {
  spy_profile *p = spyP_new(), *q = NULL;
  unsigned char *b;
  size_t len;
  char err[256];
  tp_encode(p, &b, &len);
  int rc = spy_profile_load_mem(b, len, "empty.spy", &q, err, sizeof err);
  if (rc) T_FAIL("load: %s", err);
  tp_same(p, q);
  T_EQ_STR(q->clock, "");
  spy_profile_free(p);
  spy_profile_free(q);
  free(b);
}

static void fixture(void) {
  char path[4200], err[512];
  snprintf(path, sizeof path, "%s/tests/data/profile/small.spy", t_srcdir);
  spy_profile *p = tp_synth(), *q = NULL;
  unsigned char *b;
  size_t len;
  tp_encode(p, &b, &len);
  const char *regen = getenv("SPY_REGEN_FIXTURES");
  if (regen && strcmp(regen, "1") == 0) {
    FILE *f = fopen(path, "wb");
    T_ASSERT(f && fwrite(b, 1, len, f) == len && fclose(f) == 0);
  }
  size_t flen;
  char *fb = t_slurp(path, &flen);
  if (!fb) T_FAIL("cannot read %s", path);
  T_EQ_INT(flen, len);
  T_ASSERT(memcmp(fb, b, len) == 0); /* the encoding has not drifted */
  int rc = spy_profile_load(path, &q, err, sizeof err);
  if (rc) T_FAIL("load: %s", err);
  tp_same(p, q);
  free(fb);
  free(b);
  spy_profile_free(p);
  spy_profile_free(q);
}

/* A deep chain (recursion a million calls deep is ordinary for an
** interpreter) must load and export without recursion in C. */
static void deep_tree(void) {
  enum { DEPTH = 200000 };
  spy_profile *p = spyP_new(), *q = NULL;
  p->nframes = 2;
  p->frames = spyP_calloc(p, 2, sizeof *p->frames);
  p->frames[0] = (spy_frame){SPY_FRAME_ROOT, 0, "root"};
  p->frames[1] = (spy_frame){SPY_FRAME_METHOD, 1, "Fib>>at:"};
  p->nnodes = DEPTH;
  p->nodes = spyP_calloc(p, DEPTH, sizeof *p->nodes);
  for (uint32_t i = 0; i < DEPTH; i++)
    set_node(&p->nodes[i], i ? 1 : 0, i ? i - 1 : SPY_NONE,
             i + 1 < DEPTH ? i + 1 : SPY_NONE, SPY_NONE, 1,
             i + 1 < DEPTH ? 0 : 1, 1, i + 1 < DEPTH ? 0 : 1);
  p->nprocesses = 1;
  p->processes = spyP_calloc(p, 1, sizeof *p->processes);
  p->processes[0] = (spy_process){1, "main", 0, 1, 1}; /* one sample */
  unsigned char *b;
  size_t len;
  char err[256];
  tp_encode(p, &b, &len);
  int rc = spy_profile_load_mem(b, len, "deep.spy", &q, err, sizeof err);
  if (rc) T_FAIL("load: %s", err);
  tp_same(p, q);
  char path[4200];
  snprintf(path, sizeof path, "%s/deep.json", t_tmpdir());
  FILE *f = fopen(path, "w");
  T_EQ_INT(spy_profile_write_json(q, f), 0);
  fclose(f);
  size_t jl;
  char *j = t_slurp(path, &jl);
  T_ASSERT(j);
  size_t open = 0, close = 0, maxd = 0, d = 0;
  for (size_t i = 0; i < jl; i++) {
    if (j[i] == '{') open++, d++;
    if (j[i] == '}') close++, d--;
    if (d > maxd) maxd = d;
  }
  T_EQ_INT(open, close);
  T_EQ_INT(maxd, DEPTH + 2); /* the document, a process, DEPTH nodes */
  free(j);
  free(b);
  spy_profile_free(p);
  spy_profile_free(q);
}

/* A profile made by a live profiler (every hook kind, an unregistered
** primitive id, two processes) saves and loads back unchanged: the sampler
** never makes what the loader rejects. The encoding is deterministic, so
** equal bytes mean equal profiles. */
static uint64_t live_stack[4];
static int live_depth;
static void live_walk(void *ud, spy_stack *st) {
  (void)ud;
  for (int i = live_depth; i-- > 0;) spy_stack_push(st, live_stack[i]);
}

static void from_profiler(void) {
  spy_profiler *pr;
  spy_vm *v;
  spy_options o;
  spy_options_init(&o);
  o.interval_ns = 20000;
  T_EQ_INT(spy_profiler_new(&pr, &o), 0);
  int mul = spy_prim_register(pr, "Big>>mul", "a,b", SPY_PRIM_COST);
  int reg = spy_region_register(pr, "outer");
  spy_host h = {.walk = live_walk};
  T_EQ_INT(spy_attach(pr, &h, &v), 0);
  spy_process_switch(v, 1);
  T_EQ_INT(spy_start(pr), 0);
  volatile double sink = 0;
  for (int it = 0; it < 3000; it++) {
    spy_process_switch(v, 1 + (it & 1));
    live_depth = 2;
    live_stack[0] = 100;
    live_stack[1] = 200 + it % 3;
    spy_poll(v);
    spy_region_begin(v, reg);
    for (int i = 0; i < 2000; i++) sink += i;
    spy_region_end(v);
    spy_prim_begin2(v, mul, it % 100, 7);
    for (int i = 0; i < 2000; i++) sink += i;
    spy_prim_end(v);
    spy_prim_begin(v, 999); /* never registered */
    for (int i = 0; i < 500; i++) sink += i;
    spy_prim_end(v);
    if (it % 100 == 0) {
      spy_gc_begin(v);
      for (int i = 0; i < 5000; i++) sink += i;
      spy_gc_end(v);
    }
  }
  (void)sink; /* only there to be written */
  T_EQ_INT(spy_stop(pr), 0);
  spy_profile *p, *q;
  T_EQ_INT(spy_profile_take(pr, &p), 0);
  T_ASSERT(p->nnodes > 3 && p->nprocesses == 2 && p->nprims == 1);
  char path[4200], err[512];
  snprintf(path, sizeof path, "%s/live.spy", t_tmpdir());
  int rc = spy_profile_save(p, path, err, sizeof err);
  if (rc) T_FAIL("save: %s", err);
  rc = spy_profile_load(path, &q, err, sizeof err);
  if (rc) T_FAIL("load: %s", err);
  unsigned char *a, *b;
  size_t al, bl;
  tp_encode(p, &a, &al);
  tp_encode(q, &b, &bl);
  T_EQ_INT(al, bl);
  T_ASSERT(memcmp(a, b, al) == 0);
  tp_valid(q);
  free(a);
  free(b);
  spy_profile_free(p);
  spy_profile_free(q);
  T_EQ_INT(spy_detach(v), 0);
  T_EQ_INT(spy_profiler_free(pr), 0);
}

const struct spy_test t_profile[] = {
    {"roundtrip_file", roundtrip_file, 0},
    {"roundtrip_empty", roundtrip_empty, 0},
    {"fixture", fixture, 0},
    {"deep_tree", deep_tree, 0},
    {"from_profiler", from_profiler, 0},
    {0},
};
