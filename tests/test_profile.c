/*
** tests/test_profile.c: the "profile" suite: the file format round trip,
** the loader under hostile input (every truncation, flipped bytes, forged
** counts, broken trees), and the JSON export read back with jansson.
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

#include "tests/test.h"

#include "profile/file.h"
#include "profile/profile.h"

#include <spyon/hooks.h>

#include <errno.h>
#include <jansson.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

/* T_ASAN: a sanitizer that reserves a large shadow address space (ASan,
** TSan), so no address-space limit can be set. */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define T_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define T_ASAN 1
#endif
#endif

/* ------------------------------------------------------------------------
** The synthetic profile
** --------------------------------------------------------------------- */

#define NATIVE_NAME                                                     \
  "bad\xff\xfe utf8 \x01" "ctl Gr\xc3\xb6\xc3\x9f" "e \xe2\x82\xac"
/* NATIVE_NAME as JSON decodes it: each invalid byte is U+FFFD. */
#define NATIVE_JSON                                                     \
  "bad\xef\xbf\xbd\xef\xbf\xbd utf8 \x01"                              \
  "ctl Gr\xc3\xb6\xc3\x9f" "e \xe2\x82\xac"
#define COMMAND "spyon run \"bench.st\"\t--fast \\ x\n"

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
static spy_profile *synth(void) {
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
                           4, spyP_calloc(p, 4, sizeof(uint32_t))};
  for (uint32_t i = 0; i < 4; i++) p->steps[0].frames[i] = i;
  p->steps[1] = (spy_step){SPY_STEP_GC, N, 0, {0}, 90000, 1, 0,
                           spyP_calloc(p, 0, sizeof(uint32_t))};

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
static void same(const spy_profile *a, const spy_profile *b) {
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
static void valid(const spy_profile *p) {
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
static size_t check_msg(const char *err, const char *name, size_t maxoff) {
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

static void encode(const spy_profile *p, unsigned char **buf, size_t *len) {
  char err[256];
  int rc = spyP_encode(p, buf, len, err, sizeof err);
  if (rc) T_FAIL("encode: %d %s", rc, err);
}

/* Load bytes expecting failure `want`, with the message containing `sub`
** (if not NULL); returns the offset named. */
static size_t load_fails(const unsigned char *b, size_t len, unsigned flags,
                         int want, const char *sub) {
  spy_profile *q = (spy_profile *)1;
  char err[512];
  int rc = spyP_load_mem(b, len, "t.spy", flags, &q, err, sizeof err);
  if (rc != want) T_FAIL("load gave %d, wanted %d (%s)", rc, want, err);
  if (getenv("SPY_TEST_VERBOSE")) fprintf(stderr, "%s\n", err);
  T_ASSERT(q == NULL);
  size_t off = check_msg(err, "t.spy", len);
  if (sub && !strstr(err, sub))
    T_FAIL("message \"%s\" lacks \"%s\"", err, sub);
  return off;
}

/* A growable byte string for crafting files. */
typedef struct tb {
  unsigned char *p;
  size_t n;
} tb;

static void tb_put(tb *t, const void *s, size_t n) {
  t->p = realloc(t->p, t->n + n + 1);
  T_ASSERT(t->p);
  if (n) memcpy(t->p + t->n, s, n);
  t->n += n;
}

static void tb_var(tb *t, uint64_t v) {
  do {
    unsigned char c = v & 0x7f;
    v >>= 7;
    c |= v ? 0x80 : 0;
    tb_put(t, &c, 1);
  } while (v);
}

static uint64_t get_var(const unsigned char *b, size_t *pos) {
  uint64_t v = 0;
  for (int sh = 0;; sh += 7) {
    unsigned c = b[(*pos)++];
    v |= (uint64_t)(c & 0x7f) << sh;
    if (!(c & 0x80)) return v;
  }
}

/* The sections of a valid file: tag, where the section starts (its tag),
** where its payload starts, and its length. */
typedef struct tsec {
  uint64_t tag;
  size_t at, off, len;
} tsec;

static int split(const unsigned char *b, size_t len, tsec *s, int max) {
  size_t pos = SPYP_PRE_SIZE;
  int n = 0;
  while (pos < len && n < max) {
    s[n].at = pos;
    s[n].tag = get_var(b, &pos);
    s[n].len = (size_t)get_var(b, &pos);
    s[n].off = pos;
    pos += s[n].len;
    n++;
  }
  return n;
}

/* Rebuild a file from b's sections, replacing section tag `tag`'s payload
** by `pay` (NULL: keep all), optionally inserting an extra section before
** it; with the preamble fixed so only the structure is judged. */
static tb rebuild(const unsigned char *b, size_t len, uint64_t tag,
                  const tb *pay, const tb *extra, uint64_t extra_tag) {
  tsec s[32];
  int n = split(b, len, s, 32);
  tb t = {0};
  tb_put(&t, b, SPYP_PRE_SIZE);
  for (int i = 0; i < n; i++) {
    if (s[i].tag == tag && extra) {
      tb_var(&t, extra_tag);
      tb_var(&t, extra->n);
      tb_put(&t, extra->p, extra->n);
    }
    tb_var(&t, s[i].tag);
    if (s[i].tag == tag && pay) {
      tb_var(&t, pay->n);
      tb_put(&t, pay->p, pay->n);
    } else {
      tb_var(&t, s[i].len);
      tb_put(&t, b + s[i].off, s[i].len);
    }
  }
  spyP_fix_preamble(t.p, t.n);
  return t;
}

/* ------------------------------------------------------------------------
** Round trips and the fixture
** --------------------------------------------------------------------- */

/* Native stacks for synth()'s profile: two paths under prim 0, one under
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
  spy_profile *p = synth(), *q = NULL;
  add_natives(p);
  char path[4200], err[512];
  snprintf(path, sizeof path, "%s/run.spy", t_tmpdir());
  int rc = spy_profile_save(p, path, err, sizeof err);
  if (rc) T_FAIL("save: %s", err);
  rc = spy_profile_load(path, &q, err, sizeof err);
  if (rc) T_FAIL("load: %s", err);
  T_EQ_INT(q->version, SPY_FORMAT_VERSION);
  same(p, q);
  valid(q);
  spy_profile_free(p);
  spy_profile_free(q);
}

static void roundtrip_empty(void) {
  spy_profile *p = spyP_new(), *q = NULL;
  unsigned char *b;
  size_t len;
  char err[256];
  encode(p, &b, &len);
  int rc = spy_profile_load_mem(b, len, "empty.spy", &q, err, sizeof err);
  if (rc) T_FAIL("load: %s", err);
  same(p, q);
  T_EQ_STR(q->clock, "");
  spy_profile_free(p);
  spy_profile_free(q);
  free(b);
}

static void fixture(void) {
  char path[4200], err[512];
  snprintf(path, sizeof path, "%s/tests/data/profile/small.spy", t_srcdir);
  spy_profile *p = synth(), *q = NULL;
  unsigned char *b;
  size_t len;
  encode(p, &b, &len);
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
  same(p, q);
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
             i + 1 < DEPTH ? i + 1 : SPY_NONE, SPY_NONE, DEPTH - i,
             i + 1 < DEPTH ? 0 : 1, DEPTH - i, i + 1 < DEPTH ? 0 : 1);
  p->nprocesses = 1;
  p->processes = spyP_calloc(p, 1, sizeof *p->processes);
  p->processes[0] = (spy_process){1, "main", 0, DEPTH, DEPTH};
  unsigned char *b;
  size_t len;
  char err[256];
  encode(p, &b, &len);
  int rc = spy_profile_load_mem(b, len, "deep.spy", &q, err, sizeof err);
  if (rc) T_FAIL("load: %s", err);
  same(p, q);
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
  encode(p, &a, &al);
  encode(q, &b, &bl);
  T_EQ_INT(al, bl);
  T_ASSERT(memcmp(a, b, al) == 0);
  valid(q);
  free(a);
  free(b);
  spy_profile_free(p);
  spy_profile_free(q);
  T_EQ_INT(spy_detach(v), 0);
  T_EQ_INT(spy_profiler_free(pr), 0);
}

/* ------------------------------------------------------------------------
** Hostile input
** --------------------------------------------------------------------- */

/* Every prefix of a valid file is an error naming an offset inside it:
** first as it is (the length check), then with the preamble rewritten to
** match, so that each cut reaches the section parsers. */
static void truncated(void) {
  spy_profile *p = synth();
  unsigned char *b;
  size_t len;
  encode(p, &b, &len);
  unsigned char *c = malloc(len);
  for (size_t n = 0; n < len; n++) {
    load_fails(b, n, 0, SPY_EFORMAT, NULL);
    memcpy(c, b, n);
    if (n >= SPYP_PRE_SIZE) {
      spyP_fix_preamble(c, n);
      load_fails(c, n, 0, SPY_EFORMAT, NULL);
    }
  }
  /* Exact messages for a few cuts. */
  load_fails(b, 0, 0, SPY_EFORMAT, "offset 0: empty file");
  load_fails(b, 5, 0, SPY_EFORMAT, "offset 5: truncated in the preamble");
  load_fails(b, 100, 0, SPY_EFORMAT,
             "offset 100: truncated: the file ends after 76 bytes of body");
  memcpy(c, b, SPYP_PRE_SIZE);
  spyP_fix_preamble(c, SPYP_PRE_SIZE);
  load_fails(c, SPYP_PRE_SIZE, 0, SPY_EFORMAT,
             "offset 24: section 1 (header) missing");
  free(c);
  free(b);
  spy_profile_free(p);
}

/* Any flipped byte is caught by the checksum (or the magic, version or
** length checks in the preamble), and never crashes. */
static void flipped(void) {
  spy_profile *p = synth();
  unsigned char *b;
  size_t len;
  encode(p, &b, &len);
  static const unsigned char masks[] = {0x01, 0x80, 0xff, 0x10};
  for (size_t i = 0; i < len; i++)
    for (size_t m = 0; m < sizeof masks; m++) {
      b[i] ^= masks[m];
      spy_profile *q = NULL;
      char err[512];
      int rc = spyP_load_mem(b, len, "t.spy", 0, &q, err, sizeof err);
      T_ASSERT(rc < 0 && q == NULL);
      check_msg(err, "t.spy", len);
      if (i >= SPYP_PRE_LEN + 8 || (i >= SPYP_PRE_CRC && i < SPYP_PRE_LEN)) {
        if (rc != SPY_EFORMAT || !strstr(err, "checksum mismatch"))
          T_FAIL("byte %zu ^ 0x%02x: %d %s", i, masks[m], rc, err);
      } else if (i >= SPYP_PRE_VERSION && i < SPYP_PRE_CRC) {
        T_EQ_INT(rc, SPY_EVERSION);
      } else {
        T_EQ_INT(rc, SPY_EFORMAT);
      }
      b[i] ^= masks[m];
    }
  free(b);
  spy_profile_free(p);
}

/* With the checksum out of the way (as a fuzzer would get it), every flip
** of every body byte still gives either an error with a proper message or
** a profile whose every index is in range. */
static void flipped_nocrc(void) {
  spy_profile *p = synth();
  unsigned char *b;
  size_t len;
  encode(p, &b, &len);
  size_t loaded = 0, failed = 0;
  for (size_t i = SPYP_PRE_SIZE; i < len; i++)
    for (unsigned m = 1; m < 256; m <<= 1) {
      b[i] ^= (unsigned char)m;
      spy_profile *q = NULL;
      char err[512];
      int rc = spyP_load_mem(b, len, "t.spy", SPYP_LOAD_NOCRC, &q, err,
                             sizeof err);
      if (rc == 0) {
        valid(q);
        spy_profile_free(q);
        loaded++;
      } else {
        T_EQ_INT(rc, SPY_EFORMAT);
        check_msg(err, "t.spy", len);
        failed++;
      }
      b[i] ^= (unsigned char)m;
    }
  /* Both outcomes occur: changed counts (mostly errors) and changed
  ** values (loads). */
  T_ASSERT(loaded > 0 && failed > 0);
  free(b);
  spy_profile_free(p);
}

/* Forged counts are rejected before anything is allocated for them. An
** address-space limit proves it where no sanitizer needs the space. */
static void forged_counts(void) {
#ifndef T_ASAN
  struct rlimit rl = {512u << 20, 512u << 20};
  T_EQ_INT(setrlimit(RLIMIT_AS, &rl), 0);
#endif
  spy_profile *p = synth();
  unsigned char *b;
  size_t len;
  encode(p, &b, &len);
  tsec s[32];
  int ns = split(b, len, s, 32);
  static const char *const what[] = {
      NULL, NULL, "string count", "prim count", "frame count", "node count",
      "process count", "step count", "region count", NULL};
  static const uint64_t huge[] = {UINT32_MAX - 1, 1ull << 40, UINT64_MAX};
  int tried = 0;
  for (int i = 0; i < ns; i++) {
    if (!what[s[i].tag]) continue;
    for (size_t h = 0; h < 3; h++) {
      size_t pos = s[i].off;
      get_var(b, &pos); /* skip the real count */
      tb pay = {0};
      tb_var(&pay, huge[h]);
      tb_put(&pay, b + pos, s[i].off + s[i].len - pos);
      tb t = rebuild(b, len, s[i].tag, &pay, NULL, 0);
      char want[96];
      snprintf(want, sizeof want, "%s %llu is more than the",
               what[s[i].tag], (unsigned long long)huge[h]);
      size_t off = load_fails(t.p, t.n, 0, SPY_EFORMAT, want);
      T_ASSERT(off >= s[i].at && off < s[i].at + 24);
      free(pay.p);
      free(t.p);
      tried++;
    }
  }
  T_EQ_INT(tried, 21);
  /* A string length, an observation count and a step's frame count. */
  tb pay = {0};
  tb_var(&pay, 1);
  tb_var(&pay, 1ull << 40);
  tb_put(&pay, "abc", 3);
  tb t = rebuild(b, len, 2, &pay, NULL, 0);
  load_fails(t.p, t.n, 0, SPY_EFORMAT, "string 0: length 1099511627776 runs");
  free(t.p);
  free(pay.p);
  pay = (tb){0};
  tb_var(&pay, 1); /* one prim */
  tb_var(&pay, 0); /* name: string 0 */
  tb_var(&pay, 0); /* nsizes */
  for (int k = 0; k < 5; k++) tb_var(&pay, 0); /* flags .. obs_offered */
  tb_var(&pay, 0); /* no model */
  tb_var(&pay, 1ull << 50);
  t = rebuild(b, len, 3, &pay, NULL, 0);
  load_fails(t.p, t.n, 0, SPY_EFORMAT, "prim 0: observation count");
  free(t.p);
  free(pay.p);
  pay = (tb){0};
  tb_var(&pay, 1); /* one step */
  tb_var(&pay, 1); /* gc */
  tb_var(&pay, 0); /* no prim */
  tb_var(&pay, 0); /* nsizes */
  tb_var(&pay, 5); /* ns */
  tb_var(&pay, 0); /* process 0 */
  tb_var(&pay, 1ull << 40);
  t = rebuild(b, len, 7, &pay, NULL, 0);
  load_fails(t.p, t.n, 0, SPY_EFORMAT, "step 0: frame count 1099511627776");
  free(t.p);
  free(pay.p);
  free(b);
  spy_profile_free(p);
}

static void bad_preamble(void) {
  spy_profile *p = synth();
  unsigned char *b;
  size_t len;
  encode(p, &b, &len);
  static const uint32_t vers[] = {0, 2, 0xffffffffu};
  for (int i = 0; i < 3; i++) {
    unsigned char v[4] = {(unsigned char)vers[i],
                          (unsigned char)(vers[i] >> 8),
                          (unsigned char)(vers[i] >> 16),
                          (unsigned char)(vers[i] >> 24)};
    memcpy(b + SPYP_PRE_VERSION, v, 4);
    T_EQ_INT(load_fails(b, len, 0, SPY_EVERSION, "is not supported"), 8);
  }
  b[SPYP_PRE_VERSION] = 1;
  memset(b + SPYP_PRE_VERSION + 1, 0, 3);
  b[3] = 'X';
  load_fails(b, len, 0, SPY_EFORMAT, "offset 0: not a spyon profile");
  b[3] = 'O';
  /* Trailing data after the announced body. */
  unsigned char *c = malloc(len + 3);
  memcpy(c, b, len);
  memcpy(c + len, "xyz", 3);
  char want[128];
  snprintf(want, sizeof want,
           "offset %zu: unexpected data after the end of the profile (3 more "
           "bytes)", len);
  load_fails(c, len + 3, 0, SPY_EFORMAT, want);
  /* Text-mode damage (\r\n -> \n) is a bad magic, not a checksum. */
  memmove(c + 5, c + 6, len - 6);
  load_fails(c, len - 1, 0, SPY_EFORMAT, "bad magic");
  free(c);
  free(b);
  spy_profile_free(p);
}

static void io_errors(void) {
  spy_profile *q = (spy_profile *)1;
  char err[512], path[4200];
  snprintf(path, sizeof path, "%s/no/such.spy", t_tmpdir());
  T_EQ_INT(spy_profile_load(path, &q, err, sizeof err), SPY_EIO);
  T_ASSERT(q == NULL);
  T_ASSERT(strncmp(err, path, strlen(path)) == 0);
  T_ASSERT(strstr(err, "No such file"));
  T_EQ_INT(spy_profile_load(t_tmpdir(), &q, err, sizeof err), SPY_EIO);
  T_ASSERT(strstr(err, t_tmpdir()) == err);
  spy_profile *p = synth();
  T_EQ_INT(spy_profile_save(p, path, err, sizeof err), SPY_EIO);
  T_ASSERT(strncmp(err, path, strlen(path)) == 0);
  T_ASSERT(strstr(err, "cannot open for writing"));
  /* An empty file is a format error naming the file. */
  snprintf(path, sizeof path, "%s/empty.spy", t_tmpdir());
  FILE *f = fopen(path, "w");
  fclose(f);
  T_EQ_INT(spy_profile_load(path, &q, err, sizeof err), SPY_EFORMAT);
  check_msg(err, path, 0);
  /* A device is read only as far as a preamble allows: /dev/zero is a bad
  ** magic at once, not an endless read. */
  T_EQ_INT(spy_profile_load("/dev/zero", &q, err, sizeof err), SPY_EFORMAT);
  check_msg(err, "/dev/zero", 0);
  /* Through pipes (each its own FIFO, since a writer may outlive the
  ** read): a short stream is a truncation, a long one is read only one
  ** byte past the announced end, an exact one loads. */
  unsigned char *b;
  size_t len;
  encode(p, &b, &len);
  snprintf(path, sizeof path, "%s/full.spy", t_tmpdir());
  f = fopen(path, "wb");
  T_ASSERT(f && fwrite(b, 1, len, f) == len && fclose(f) == 0);
  static const struct {
    const char *cmd;
    int rc;
    const char *msg;
  } pipes[] = {
      {"head -c 100 '%s'", SPY_EFORMAT, "offset 100: truncated"},
      {"cat '%s' '%s'", SPY_EFORMAT,
       "unexpected data after the end of the profile (1 more byte)"},
      {"cat '%s'", 0, ""},
  };
  for (int i = 0; i < 3; i++) {
    char fifo[4200], cmd[12800], src[8500];
    snprintf(fifo, sizeof fifo, "%s/fifo%d", t_tmpdir(), i);
    T_EQ_INT(mkfifo(fifo, 0600), 0);
    snprintf(src, sizeof src, pipes[i].cmd, path, path);
    snprintf(cmd, sizeof cmd, "%s > '%s' 2>/dev/null &", src, fifo);
    T_EQ_INT(system(cmd), 0);
    T_EQ_INT(spy_profile_load(fifo, &q, err, sizeof err), pipes[i].rc);
    if (!strstr(err, pipes[i].msg)) T_FAIL("%s: %s", src, err);
  }
  same(p, q);
  spy_profile_free(q);
  free(b);
  /* nsizes beyond 4 cannot be encoded. */
  p->prims[1].nsizes = 5;
  T_EQ_INT(spy_profile_save(p, path, err, sizeof err), SPY_EINVAL);
  T_ASSERT(strstr(err, "prim 1: nsizes 5 > 4"));
  /* Arguments. */
  T_EQ_INT(spy_profile_load_mem(NULL, 3, "x", &q, err, sizeof err),
           SPY_EINVAL);
  T_EQ_INT(spy_profile_load_mem("x", 1, "x", NULL, err, sizeof err),
           SPY_EINVAL);
  T_EQ_INT(spy_profile_load_mem("SPYON", 5, NULL, &q, NULL, 0),
           SPY_EFORMAT);
  spy_profile_free(p);
}

/* Later versions may add sections and append fields to sections; this
** reader skips both. */
static void forward_compat(void) {
  spy_profile *p = synth(), *q = NULL;
  unsigned char *b;
  size_t len;
  char err[512];
  encode(p, &b, &len);
  tsec s[32];
  int ns = split(b, len, s, 32);
  tb extra = {0};
  tb_put(&extra, "future data", 11);
  tb t = rebuild(b, len, 5, NULL, &extra, 42);
  int rc = spy_profile_load_mem(t.p, t.n, "t.spy", &q, err, sizeof err);
  if (rc) T_FAIL("unknown section: %s", err);
  same(p, q);
  spy_profile_free(q);
  free(t.p);
  for (int i = 0; i < ns; i++) { /* a trailing field in every section */
    tb pay = {0};
    tb_put(&pay, b + s[i].off, s[i].len);
    tb_put(&pay, "\x05\x06", 2);
    t = rebuild(b, len, s[i].tag, &pay, NULL, 0);
    rc = spy_profile_load_mem(t.p, t.n, "t.spy", &q, err, sizeof err);
    if (rc) T_FAIL("section %d with a trailing field: %s", (int)s[i].tag,
                   err);
    same(p, q);
    spy_profile_free(q);
    free(t.p);
    free(pay.p);
  }
  /* Known sections out of order or repeated are errors. */
  t = rebuild(b, len, 5, NULL, &extra, 4);
  load_fails(t.p, t.n, 0, SPY_EFORMAT, "section 4 (frames) repeated or out");
  free(t.p);
  t = rebuild(b, len, 3, NULL, &extra, 5);
  load_fails(t.p, t.n, 0, SPY_EFORMAT,
             "section 3 (prims) missing before section 5 (nodes)");
  free(t.p);
  free(extra.p);
  tb pay = {0};
  tb_var(&pay, 2);
  tb_var(&pay, 3);
  tb_put(&pay, "a\0b", 3);
  tb_var(&pay, 0);
  t = rebuild(b, len, 2, &pay, NULL, 0);
  load_fails(t.p, t.n, 0, SPY_EFORMAT, "string 0: contains a NUL byte");
  free(t.p);
  free(pay.p);
  free(b);
  spy_profile_free(p);
}

/* One broken invariant at a time, each with its exact message; the offset
** must fall inside the section that holds the culprit. */
static void broken(void (*edit)(spy_profile *), uint64_t tag,
                   const char *msg) {
  spy_profile *p = synth();
  edit(p);
  unsigned char *b;
  size_t len;
  encode(p, &b, &len);
  size_t off = load_fails(b, len, 0, SPY_EFORMAT, msg);
  tsec s[32];
  int ns = split(b, len, s, 32);
  int in = 0;
  for (int i = 0; i < ns; i++)
    if (s[i].tag == tag && off >= s[i].off && off < s[i].off + s[i].len)
      in = 1;
  if (!in) T_FAIL("offset %zu of \"%s\" not in section %d", off, msg,
                  (int)tag);
  free(b);
  spy_profile_free(p);
}

#define EDIT(name, stmt)                                                  \
  static void name(spy_profile *p) { stmt; }
EDIT(e_parent_range, p->nodes[3].parent = 99)
EDIT(e_sib_cycle, p->nodes[4].next_sibling = 1)
EDIT(e_root_parent, p->processes[1].root = 7)
EDIT(e_root_kind, p->nodes[0].frame = 1)
EDIT(e_unreached, p->nodes[1].next_sibling = SPY_NONE)
EDIT(e_parent_wrong, p->nodes[4].parent = 2)
EDIT(e_shared_root, p->processes[1].root = 0)
EDIT(e_node_frame, p->nodes[2].frame = 10)
EDIT(e_region_cycle, p->regions[2].parent = 0)
EDIT(e_region_self, p->regions[1].parent = 1)
EDIT(e_prim_key, p->frames[4].key = 7)
EDIT(e_step_gc, p->steps[1].prim = 0)
EDIT(e_step_prim, p->steps[0].prim = SPY_NONE)
EDIT(e_step_frame, p->steps[0].frames[1] = 50)
EDIT(e_step_proc, p->steps[1].process = 2)
EDIT(e_mode, p->mode = (spy_mode)7)
EDIT(e_kind, p->frames[2].kind = (spy_frame_kind)9)
EDIT(e_step_kind, p->steps[0].kind = (spy_step_kind)2)
EDIT(e_obs_gc, p->prims[0].obs[1].gc = 0; p->prims[0].obs[1].ns = 0)

static void broken_trees(void) {
  broken(e_parent_range, 5, "node 3: parent 99 out of range (12 nodes)");
  broken(e_sib_cycle, 5, "node 4: next_sibling 1 is already in a tree");
  broken(e_root_parent, 6, "process 1: root node 7 has a parent (node 10)");
  broken(e_root_kind, 6,
         "process 0: root node 0 is a method frame, not a root frame");
  broken(e_unreached, 5, "node 5: not in the tree of any process");
  broken(e_parent_wrong, 5, "node 4: parent is 2 but it is a child of node 1");
  broken(e_shared_root, 6, "process 1: root node 0 already belongs to a tree");
  broken(e_node_frame, 5, "node 2: frame 10 out of range (10 frames)");
  broken(e_region_cycle, 8, "region 0: its chain of parents is a cycle");
  broken(e_region_self, 8, "region 1: its chain of parents is a cycle");
  broken(e_prim_key, 4, "frame 4: primitive key 7 out of range (3 prims)");
  broken(e_step_gc, 7, "step 1: a gc step names primitive 0");
  broken(e_step_frame, 7, "step 0: frame 1: index 50 out of range (10 frames)");
  broken(e_step_proc, 7, "step 1: process 2 out of range (2 processes)");
  broken(e_mode, 1, "mode 7 unknown");
  broken(e_kind, 4, "frame 2: kind 9 unknown");
  broken(e_step_kind, 7, "step 0: kind 2 unknown");
  /* Not errors: changed values, and a primitive step whose primitive was
  ** never registered. */
  void (*fine[])(spy_profile *) = {e_obs_gc, e_step_prim};
  for (int i = 0; i < 2; i++) {
    spy_profile *p = synth(), *q = NULL;
    fine[i](p);
    unsigned char *b;
    size_t len;
    char err[256];
    encode(p, &b, &len);
    T_EQ_INT(spy_profile_load_mem(b, len, "t", &q, err, sizeof err), 0);
    same(p, q);
    valid(q);
    free(b);
    spy_profile_free(p);
    spy_profile_free(q);
  }
}

/* ------------------------------------------------------------------------
** JSON
** --------------------------------------------------------------------- */

static json_t *jget(json_t *o, const char *key) {
  json_t *v = json_object_get(o, key);
  if (!v) T_FAIL("JSON: no \"%s\"", key);
  return v;
}

#define J_INT(o, k) json_integer_value(jget((o), (k)))
#define J_STR(o, k) json_string_value(jget((o), (k)))

static const char *const KINDS[] = {"root",   "method", "prim", "gc",
                                    "region", "native", "cut"};

/* A JSON tree node against node i of p, recursively (small trees). */
static void json_tree(json_t *j, const spy_profile *p, uint32_t i) {
  const spy_node *n = &p->nodes[i];
  T_EQ_INT(J_INT(j, "frame"), n->frame);
  T_EQ_STR(J_STR(j, "kind"), KINDS[p->frames[n->frame].kind]);
  T_EQ_INT(J_INT(j, "total_ns"), n->total_ns);
  T_EQ_INT(J_INT(j, "self_ns"), n->self_ns);
  T_EQ_INT(J_INT(j, "tallies"), n->tallies);
  T_EQ_INT(J_INT(j, "self_tallies"), n->self_tallies);
  json_t *ch = jget(j, "children");
  size_t k = 0;
  for (uint32_t c = n->first_child; c != SPY_NONE;
       c = p->nodes[c].next_sibling, k++) {
    T_ASSERT(k < json_array_size(ch));
    json_tree(json_array_get(ch, k), p, c);
  }
  T_EQ_INT(json_array_size(ch), k);
}

static void json_values(void) {
  spy_profile *p = synth();
  char path[4200];
  snprintf(path, sizeof path, "%s/p.json", t_tmpdir());
  FILE *f = fopen(path, "w");
  T_EQ_INT(spy_profile_write_json(p, f), 0);
  fclose(f);
  json_error_t je;
  json_t *j = json_load_file(path, 0, &je);
  if (!j) T_FAIL("JSON parse: %s at line %d col %d", je.text, je.line,
                 je.column);
  T_EQ_STR(J_STR(j, "format"), "spyon-profile");
  T_EQ_INT(J_INT(j, "version"), 1);
  json_t *h = jget(j, "header");
  T_EQ_STR(J_STR(h, "mode"), "timer");
  static const struct {
    const char *k;
    json_int_t v;
  } hv[] = {{"interval_ns", 100000}, {"wall_ns", 123456789},
            {"tallies", 150},        {"dropped", 3},
            {"obs_dropped", 7},      {"hook_ns", 4242},
            {"start_unix_ns", 1700000000123456789ll}};
  for (size_t i = 0; i < sizeof hv / sizeof hv[0]; i++)
    if (J_INT(h, hv[i].k) != hv[i].v)
      T_FAIL("header %s: %lld != %lld", hv[i].k, (long long)J_INT(h, hv[i].k),
             (long long)hv[i].v);
  T_EQ_STR(J_STR(h, "clock"), "tsc");
  T_EQ_STR(J_STR(h, "command"), COMMAND);

  json_t *fr = jget(j, "frames");
  T_EQ_INT(json_array_size(fr), 10);
  T_EQ_STR(J_STR(json_array_get(fr, 2), "name"),
           "Bench>>go: \"quoted\" \\back");
  T_EQ_STR(J_STR(json_array_get(fr, 7), "name"), NATIVE_JSON);
  T_EQ_STR(J_STR(json_array_get(fr, 7), "kind"), "native");
  T_EQ_STR(J_STR(json_array_get(fr, 7), "key"), "0xfffffffffffffff0");
  T_EQ_STR(J_STR(json_array_get(fr, 9), "key"), "0x2");
  T_EQ_STR(J_STR(json_array_get(fr, 9), "kind"), "prim");

  json_t *ps = jget(j, "processes");
  T_EQ_INT(json_array_size(ps), 2);
  for (size_t i = 0; i < 2; i++) {
    json_t *pc = json_array_get(ps, i);
    T_EQ_INT(J_INT(pc, "pid"), p->processes[i].pid);
    T_EQ_STR(J_STR(pc, "name"), p->processes[i].name);
    T_EQ_INT(J_INT(pc, "total_ns"), p->processes[i].total_ns);
    T_EQ_INT(J_INT(pc, "root"), p->processes[i].root);
    json_tree(jget(pc, "tree"), p, p->processes[i].root);
  }
  /* Worked out by hand from the trees: self time per frame, heaviest
  ** first, ties by frame index. */
  static const uint64_t lv[][3] = {{3, 550, 55}, {7, 280, 28}, {4, 200, 20},
                                   {9, 170, 17}, {1, 110, 11}, {5, 100, 10},
                                   {2, 50, 5},   {6, 20, 2},   {8, 20, 2}};
  json_t *le = jget(j, "leaves");
  T_EQ_INT(json_array_size(le), 9);
  for (size_t i = 0; i < 9; i++) {
    json_t *l = json_array_get(le, i);
    T_EQ_INT(J_INT(l, "frame"), lv[i][0]);
    T_EQ_INT(J_INT(l, "self_ns"), lv[i][1]);
    T_EQ_INT(J_INT(l, "self_tallies"), lv[i][2]);
  }
  T_EQ_STR(J_STR(json_array_get(le, 1), "name"), NATIVE_JSON);

  json_t *pr = jget(j, "prims");
  T_EQ_INT(json_array_size(pr), 3);
  json_t *p0 = json_array_get(pr, 0);
  T_EQ_STR(J_STR(p0, "name"), "LargePositiveInteger>>digitMultiply:neg:");
  T_EQ_INT(json_array_size(jget(p0, "sizes")), 2);
  T_EQ_STR(json_string_value(json_array_get(jget(p0, "sizes"), 1)), "b");
  T_EQ_INT(J_INT(p0, "flags"), 1);
  T_EQ_INT(J_INT(p0, "calls"), 50);
  T_EQ_INT(J_INT(p0, "total_ns"), 5000000);
  T_EQ_INT(J_INT(p0, "max_ns"), 400000);
  T_EQ_INT(J_INT(p0, "obs_offered"), 50);
  T_EQ_STR(J_STR(p0, "model"), "3.1e-09*a*b + 120");
  json_t *ob = jget(p0, "obs");
  T_EQ_INT(json_array_size(ob), 3);
  json_t *o2 = json_array_get(ob, 2);
  T_ASSERT(json_integer_value(json_array_get(jget(o2, "size"), 0)) ==
           (json_int_t)(1ull << 62));
  T_EQ_INT(json_integer_value(json_array_get(jget(o2, "size"), 1)),
           1ll << 40);
  T_EQ_INT(json_array_size(jget(o2, "size")), 2);
  T_EQ_INT(J_INT(o2, "ns"), 400000);
  T_EQ_INT(J_INT(o2, "gc"), 2);
  json_t *p1 = json_array_get(pr, 1);
  T_ASSERT(json_is_null(jget(p1, "model")));
  T_EQ_INT(json_array_size(jget(p1, "obs")), 0);
  json_t *p2 = json_array_get(pr, 2);
  json_t *o = json_array_get(jget(p2, "obs"), 0);
  T_EQ_INT(json_array_size(jget(o, "size")), 4);
  T_EQ_INT(json_integer_value(json_array_get(jget(o, "size"), 3)), 4);
  T_EQ_INT(J_INT(o, "gc"), UINT32_MAX);

  json_t *st = jget(j, "steps");
  T_EQ_INT(json_array_size(st), 2);
  json_t *s0 = json_array_get(st, 0), *s1 = json_array_get(st, 1);
  T_EQ_STR(J_STR(s0, "kind"), "prim");
  T_EQ_INT(J_INT(s0, "prim"), 0);
  T_EQ_INT(json_integer_value(json_array_get(jget(s0, "size"), 1)), 400);
  T_EQ_INT(J_INT(s0, "ns"), 120000);
  T_EQ_INT(J_INT(s0, "process"), 0);
  T_EQ_INT(json_array_size(jget(s0, "frames")), 4);
  T_EQ_INT(json_integer_value(json_array_get(jget(s0, "frames"), 3)), 3);
  T_EQ_STR(J_STR(s1, "kind"), "gc");
  T_ASSERT(json_is_null(jget(s1, "prim")));
  T_EQ_INT(json_array_size(jget(s1, "frames")), 0);
  T_EQ_INT(J_INT(s1, "process"), 1);

  json_t *rg = jget(j, "regions");
  T_EQ_INT(json_array_size(rg), 3);
  T_EQ_STR(J_STR(json_array_get(rg, 0), "name"), "inner");
  T_EQ_INT(J_INT(json_array_get(rg, 0), "parent"), 2);
  T_ASSERT(json_is_null(jget(json_array_get(rg, 2), "parent")));
  T_EQ_INT(J_INT(json_array_get(rg, 0), "calls"), 5);
  T_EQ_INT(J_INT(json_array_get(rg, 0), "total_ns"), 250);
  T_EQ_INT(J_INT(json_array_get(rg, 0), "max_ns"), 80);

  json_t *gc = jget(j, "gc");
  T_EQ_INT(J_INT(gc, "count"), 4);
  T_EQ_INT(J_INT(gc, "total_ns"), 100);
  T_EQ_INT(J_INT(gc, "max_ns"), 60);
  json_decref(j);

  /* A hand-built profile with a bad index is refused, not followed. */
  p->nodes[2].first_child = 77;
  f = fopen(path, "w");
  T_EQ_INT(spy_profile_write_json(p, f), SPY_EINVAL);
  fclose(f);
  spy_profile_free(p);
}

/* Every byte value in a name gives valid JSON that decodes to the name,
** with U+FFFD for each byte of malformed UTF-8. */
static void json_escapes(void) {
  static const struct {
    const char *in, *out;
  } cases[] = {
      {"\x01\x1f\x7f", "\x01\x1f\x7f"},
      {"tab\there\r\n\b\f", "tab\there\r\n\b\f"},
      {"\xc0\xaf", "\xef\xbf\xbd\xef\xbf\xbd"},             /* overlong */
      {"\xed\xa0\x80", "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd"}, /* surrogate */
      {"\xf4\x90\x80\x80x", /* above U+10FFFF */
       "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbdx"},
      {"\xe2\x82", "\xef\xbf\xbd\xef\xbf\xbd"},             /* cut short */
      {"\xf0\x9d\x84\x9e", "\xf0\x9d\x84\x9e"},             /* U+1D11E */
      {"end\xc3", "end\xef\xbf\xbd"},
  };
  enum { NC = sizeof cases / sizeof cases[0] };
  spy_profile *p = spyP_new();
  p->nframes = NC;
  p->frames = spyP_calloc(p, NC, sizeof *p->frames);
  for (size_t i = 0; i < NC; i++)
    p->frames[i] = (spy_frame){SPY_FRAME_METHOD, i, cases[i].in};
  char path[4200];
  snprintf(path, sizeof path, "%s/e.json", t_tmpdir());
  FILE *f = fopen(path, "w");
  T_EQ_INT(spy_profile_write_json(p, f), 0);
  fclose(f);
  json_error_t je;
  json_t *j = json_load_file(path, 0, &je);
  if (!j) T_FAIL("JSON parse: %s", je.text);
  json_t *fr = jget(j, "frames");
  for (size_t i = 0; i < NC; i++)
    T_EQ_STR(J_STR(json_array_get(fr, i), "name"), cases[i].out);
  json_decref(j);
  spy_profile_free(p);
}

const struct spy_test t_profile[] = {
    {"roundtrip_file", roundtrip_file, 0},
    {"roundtrip_empty", roundtrip_empty, 0},
    {"fixture", fixture, 0},
    {"deep_tree", deep_tree, 0},
    {"from_profiler", from_profiler, 0},
    {"truncated", truncated, 0},
    {"flipped", flipped, 0},
    {"flipped_nocrc", flipped_nocrc, 120},
    {"forged_counts", forged_counts, 0},
    {"bad_preamble", bad_preamble, 0},
    {"io_errors", io_errors, 0},
    {"forward_compat", forward_compat, 0},
    {"broken_trees", broken_trees, 0},
    {"json_values", json_values, 0},
    {"json_escapes", json_escapes, 0},
    {0},
};
