/*
** tests/test_native.c: the "native" suite: native stacks inside long
** primitives (spy_options.native_stacks).
**
** Ground truth: a host whose one primitive spends about 90 % of its time in
** a known noinline C function (spyon_test_native_spin) and 10 % in another
** (spyon_test_native_other), about 300 ms in all. The native breakdown must
** name the first with 80-100 % of the primitive's signals, with names that
** come from libdw (function, module, file:line); the main tree must still
** add up to the wall time; and with the option off nothing is installed and
** nothing recorded.
*/
#include "config.h"

#include <spyon.h>
#include <spyon/hooks.h>
#include <spyon/report.h>

#include <limits.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>

#include "profile/file.h"
#include "profile/profile.h"
#include "tests/test.h"
#include "vm-hooks/native.h"

#if defined(__SANITIZE_THREAD__)
#define UNDER_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define UNDER_TSAN 1
#endif
#endif
#ifndef UNDER_TSAN
#define UNDER_TSAN 0
#endif

/* ------------------------------------------------------------------------
** The host
** --------------------------------------------------------------------- */

uint64_t spyon_test_native_spin(uint64_t n, uint64_t x);
uint64_t spyon_test_native_other(uint64_t n, uint64_t x);

/* gcc could clone a function for a constant argument, under another
** name; clang has no noclone (and does not do that). */
#if defined(__clang__)
#define NOCLONE
#else
#define NOCLONE noclone
#endif

/* A dependent chain of multiplies: no calls, nothing to hoist. Its lines
** are known: every line debug information gives a sample in it lies
** between SPIN_FIRST and SPIN_LAST. */
enum { SPIN_FIRST = __LINE__ };
__attribute__((noinline, NOCLONE)) uint64_t
spyon_test_native_spin(uint64_t n, uint64_t x) {
  for (uint64_t i = 0; i < n; i++) {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    x ^= x >> 29;
  }
  return x;
}
enum { SPIN_LAST = __LINE__ };

__attribute__((noinline, NOCLONE)) uint64_t
spyon_test_native_other(uint64_t n, uint64_t x) {
  for (uint64_t i = 0; i < n; i++) {
    x = x * 2862933555777941757ull + 3037000493ull;
    x ^= x >> 31;
  }
  return x;
}

static volatile uint64_t sink;

static uint64_t mono_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Loop iterations per millisecond (best of a few tries). */
static uint64_t per_ms(void) {
  uint64_t best = UINT64_MAX, n = 200000;
  for (int k = 0; k < 5; k++) {
    uint64_t t = mono_ns();
    sink = spyon_test_native_spin(n, sink);
    t = mono_ns() - t;
    if (t < best) best = t;
  }
  return best ? n * 1000000u / best : n;
}

static void walk(void *ud, spy_stack *st) {
  (void)ud;
  spy_stack_push(st, 2); /* Main>>work */
  spy_stack_push(st, 1); /* Main>>run */
}

/* Run `calls` primitive calls of ~10 ms: 9 in spin, 1 in other. Not
** inlined: the tests look for it as spin's caller. */
__attribute__((noinline)) static void workload(spy_vm *v, int prim, int calls) {
  uint64_t k = per_ms();
  for (int c = 0; c < calls; c++) {
    spy_poll(v);
    spy_prim_begin1(v, prim, 10);
    sink = spyon_test_native_spin(9 * k, sink);
    sink = spyon_test_native_other(k, sink);
    spy_prim_end(v);
  }
}

/* A profile of the workload, its tree checked against the wall time. */
static spy_profile *profile_run(int native, int calls) {
  spy_profiler *pr;
  spy_vm *v;
  spy_options o;
  spy_options_init(&o);
  o.native_stacks = native;
  o.native_interval_ns = 500000;
  T_EQ_INT(spy_profiler_new(&pr, &o), 0);
  int prim = spy_prim_register(pr, "Test>>nativeWork", "n", 0);
  T_EQ_INT(prim, 0);
  spy_host h = {.walk = walk};
  T_EQ_INT(spy_attach(pr, &h, &v), 0);
  spy_name(v, 1, "Main>>run");
  spy_name(v, 2, "Main>>work");
  spy_process_switch(v, 1);
  T_EQ_INT(spy_start(pr), 0);
  workload(v, prim, calls);
  T_EQ_INT(spy_stop(pr), 0);
  spy_profile *p = NULL;
  T_EQ_INT(spy_profile_take(pr, &p), 0);
  T_EQ_INT(spy_detach(v), 0);
  T_EQ_INT(spy_profiler_free(pr), 0);
  T_EQ_INT(p->prims[0].calls, calls);
  /* The main tree is unchanged by the signals: it adds up to the wall. */
  uint64_t sum = 0;
  for (size_t i = 0; i < p->nprocesses; i++) sum += p->processes[i].total_ns;
  T_NEAR((double)sum, (double)p->wall_ns, 0.01 * (double)p->wall_ns);
  return p;
}

/* The leaf frame of a native path. */
static const spy_frame *leaf(const spy_profile *p, const spy_native *nt) {
  T_ASSERT(nt->nframes > 0 && nt->frames[nt->nframes - 1] < p->nframes);
  return &p->frames[nt->frames[nt->nframes - 1]];
}

static int starts(const char *s, const char *prefix) {
  return strncmp(s, prefix, strlen(prefix)) == 0;
}

/* ------------------------------------------------------------------------
** Tests
** --------------------------------------------------------------------- */

/* The primitive's native signals land in spin about 90 % of the time. */
static void breakdown(void) {
#if !HAVE_LIBUNWIND
  T_SKIP("native stacks not built in (configure found no libunwind)");
#elif !HAVE_LIBDW
  T_SKIP("native frame names not built in (configure found no libdw)");
#endif
  spy_profile *p = profile_run(1, 30);
  T_ASSERT(p->nnatives > 0);
  /* The runtime records addresses; the tools name them. */
  T_ASSERT(spy_profile_symbolize(p) > 0);
  char exe[PATH_MAX];
  ssize_t el = readlink("/proc/self/exe", exe, sizeof exe - 1);
  T_ASSERT(el > 0);
  exe[el] = '\0';
  const char *base = strrchr(exe, '/') ? strrchr(exe, '/') + 1 : exe;
  char want_spin[PATH_MAX + 64], want_other[PATH_MAX + 64];
  snprintf(want_spin, sizeof want_spin, "spyon_test_native_spin (%s)", base);
  snprintf(want_other, sizeof want_other, "spyon_test_native_other (%s)",
           base);
  uint64_t total = 0, spin = 0, other = 0;
  int line = 0;
  for (size_t i = 0; i < p->nnatives; i++) {
    const spy_native *nt = &p->natives[i];
    T_EQ_INT(nt->prim, 0);
    for (uint32_t k = 0; k < nt->nframes; k++) {
      T_ASSERT(nt->frames[k] < p->nframes);
      T_EQ_INT(p->frames[nt->frames[k]].kind, SPY_FRAME_NATIVE);
    }
    const spy_frame *f = leaf(p, nt);
    total += nt->count;
    if (starts(f->name, want_spin)) {
      spin += nt->count;
      const char *at = strstr(f->name, "test_native.c:"); /* any path */
      if (at) {
        long ln = strtol(at + strlen("test_native.c:"), NULL, 10);
        if (!(ln > SPIN_FIRST && ln < SPIN_LAST))
          T_FAIL("%s: line %ld is not spin's (%d..%d)", f->name, ln,
                 SPIN_FIRST, SPIN_LAST);
        line++;
      }
    }
    if (starts(f->name, want_other)) other += nt->count;
  }
  double share = (double)spin / (double)total;
  fprintf(stderr, "native: %" PRIu64 " signals, spin %.1f %%, other %.1f %%\n",
          total, 100 * share, 100.0 * (double)other / (double)total);
  if (UNDER_TSAN) {
    /* TSan defers asynchronous signals to its next interceptor, so the
    ** stacks it shows the handler are not where the thread was. */
    spy_profile_free(p);
    T_SKIP("under TSan the handler sees deferred stacks: shares not "
           "checked");
  }
  T_ASSERT(total >= 100); /* ~270 ms of primitive at one per 0.5 ms */
  if (!(share >= 0.80 && share <= 1.0))
    T_FAIL("spin's share %.3f not in [0.80, 1.00]", share);
  T_ASSERT(other > 0);
#if defined(__clang__) && T_ASAN
  /* Known gap: in clang's ASan build dwfl_module_getsrc finds no line for
  ** the sampled addresses (DWARF 4 or 5 alike); the names above are still
  ** checked. gcc builds, plain and sanitized, must find it. */
  if (line == 0) fprintf(stderr, "native: no file:line under clang ASan\n");
#else
  T_ASSERT(line > 0); /* dwfl_module_getsrc found the line */
#endif
  /* The stack goes on past the primitive: spin's caller is the test's
  ** workload (GCC may name a clone of it "workload.constprop.0"). */
  int caller = 0;
  for (size_t i = 0; i < p->nnatives; i++) {
    const spy_native *nt = &p->natives[i];
    if (!starts(leaf(p, nt)->name, want_spin) || nt->nframes < 2) continue;
    caller += starts(p->frames[nt->frames[nt->nframes - 2]].name, "workload");
  }
  if (caller == 0) {
    const spy_native *nt = &p->natives[0];
    for (uint32_t k = 0; k < nt->nframes; k++)
      fprintf(stderr, "  %s\n", p->frames[nt->frames[k]].name);
    T_FAIL("no spin path has workload as spin's caller");
  }

  /* The report's section. */
  char path[4200];
  snprintf(path, sizeof path, "%s/report.txt", t_tmpdir());
  FILE *f = fopen(path, "w");
  T_ASSERT(f);
  T_EQ_INT(spy_report_text(p, f, NULL), 0);
  fclose(f);
  char *txt = t_slurp(path, NULL);
  T_ASSERT(txt);
  const char *sec = strstr(txt, "**Native** (inside primitives)\n");
  T_ASSERT(sec && strstr(txt, "**Primitives**") < sec);
  T_ASSERT(starts(strchr(sec, '\n') + 1, "Test>>nativeWork  ("));
  /* The first listed function is spin, with its share. */
  const char *row = strchr(strchr(sec, '\n') + 1, '\n') + 1;
  double pct = strtod(row, NULL);
  T_NEAR(pct, 100 * share, 0.01);
  T_ASSERT(strstr(row, "%  spyon_test_native_spin (") == strchr(row, '%'));
  free(txt);

  /* In the tree: the primitive's self time goes to its C functions, and
  ** spin leads the leaves with about its share of the signals. */
  uint64_t prim_self = 0;
  for (size_t i = 0; i < p->nnodes; i++)
    if (p->frames[p->nodes[i].frame].kind == SPY_FRAME_PRIM)
      prim_self += p->nodes[i].self_ns;
  T_ASSERT(prim_self > 0);
  T_ASSERT(spy_profile_natives_to_tree(p) > 0);
  spy_leaf lv[1];
  T_EQ_INT(spy_profile_leaves(p, lv, 1), 1);
  if (!starts(p->frames[lv[0].frame].name, "spyon_test_native_spin ("))
    T_FAIL("top leaf %s", p->frames[lv[0].frame].name);
  T_NEAR((double)lv[0].self_ns / (double)prim_self, share, 0.02);

  /* pprof, read back by go tool pprof: spin is the top function, in a
  ** mapping of this test program with its build-id. */
  snprintf(path, sizeof path, "%s/n.pb.gz", t_tmpdir());
  f = fopen(path, "wb");
  T_ASSERT(f);
  T_EQ_INT(spy_report_pprof(p, f), 0);
  T_EQ_INT(fclose(f), 0);
  const char *id = NULL;
  for (size_t i = 0; i < p->nmodules; i++)
    if (!strcmp(p->modules[i].path, exe)) id = p->modules[i].build_id;
  T_ASSERT(id && *id);
  char cmd[13000], *out = NULL;
  snprintf(cmd, sizeof cmd,
           "cd '%s' && HOME='%s' go tool pprof -symbolize=none -raw '%s' "
           "2>&1 && HOME='%s' go tool pprof -symbolize=none -top '%s' 2>&1",
           t_tmpdir(), t_tmpdir(), path, t_tmpdir(), path);
  T_EQ_INT(t_run(cmd, &out), 0);
  char want_map[PATH_MAX + 200];
  snprintf(want_map, sizeof want_map, "%s %s [FN]", exe, id);
  if (!strstr(out, want_map)) T_FAIL("no mapping \"%s\" in:\n%s", want_map, out);
  const char *top = strstr(out, "flat  flat%");
  T_ASSERT(top);
  top = strchr(top, '\n');
  T_ASSERT(top && strstr(top, "spyon_test_native_spin (") &&
           strstr(top, "spyon_test_native_spin (") < strchr(top + 1, '\n'));
  free(out);
  spy_profile_free(p);
}

/* A varint at b[*at], advancing *at. */
static uint64_t get_var(const unsigned char *b, size_t *at) {
  uint64_t v = 0;
  for (int sh = 0;; sh += 7) {
    unsigned c = b[(*at)++];
    v |= (uint64_t)(c & 0x7f) << sh;
    if (!(c & 0x80)) return v;
  }
}

/* The file's last two sections (gc, natives) swapped, or the last one
** doubled; then the error the loader gives. */
static void edit_tail(const unsigned char *b, size_t len, int swap,
                      const char *want) {
  size_t at = SPYP_PRE_SIZE, start[16];
  int n = 0;
  while (at < len && n < 16) {
    start[n++] = at;
    get_var(b, &at);
    at += get_var(b, &at);
  }
  T_ASSERT(at == len && n >= 11); /* ..., gc, natives, modules[, step cpu] */
  size_t g = start[8], nat = start[9];
  unsigned char *e = malloc(2 * len);
  T_ASSERT(e);
  memcpy(e, b, g);
  size_t m = g;
  if (swap) {
    memcpy(e + m, b + nat, len - nat), m += len - nat;
    memcpy(e + m, b + g, nat - g), m += nat - g;
  } else {
    memcpy(e + m, b + g, len - g), m += len - g;
    memcpy(e + m, b + nat, len - nat), m += len - nat;
  }
  spyP_fix_preamble(e, m);
  spy_profile *q = NULL;
  char err[512];
  T_EQ_INT(spy_profile_load_mem(e, m, "e.spy", &q, err, sizeof err),
           SPY_EFORMAT);
  if (!strstr(err, want)) T_FAIL("\"%s\" lacks \"%s\"", err, want);
  free(e);
}

/* A profile with natives saves, loads and exports them. */
static void file_and_json(void) {
#if !HAVE_LIBUNWIND
  T_SKIP("native stacks not built in (configure found no libunwind)");
#endif
  spy_profile *p = profile_run(1, 10), *q = NULL;
  T_ASSERT(p->nnatives > 0);
  char path[4200], err[512];
  snprintf(path, sizeof path, "%s/n.spy", t_tmpdir());
  if (spy_profile_save(p, path, err, sizeof err)) T_FAIL("save: %s", err);
  if (spy_profile_load(path, &q, err, sizeof err)) T_FAIL("load: %s", err);
  /* Where the native frames point: this test program is one of the
  ** modules, with its build-id and load bias; each native frame has a
  ** location. */
  char exe[PATH_MAX];
  ssize_t el = readlink("/proc/self/exe", exe, sizeof exe - 1);
  T_ASSERT(el > 0);
  exe[el] = '\0';
  size_t nnative = 0, self = SIZE_MAX;
  for (size_t i = 0; i < p->nframes; i++)
    nnative += p->frames[i].kind == SPY_FRAME_NATIVE;
  T_EQ_INT(p->nlocations, nnative);
  T_ASSERT(p->nmodules > 0);
  for (size_t i = 0; i < p->nmodules; i++)
    if (!strcmp(p->modules[i].path, exe)) self = i;
  T_ASSERT(self != SIZE_MAX);
  T_ASSERT(strlen(p->modules[self].build_id) >= 16); /* Debian's --build-id */
  T_EQ_INT(q->nmodules, p->nmodules);
  T_EQ_INT(q->nlocations, p->nlocations);
  for (size_t i = 0; i < p->nmodules; i++) {
    T_EQ_STR(q->modules[i].path, p->modules[i].path);
    T_EQ_STR(q->modules[i].build_id, p->modules[i].build_id);
    T_EQ_INT(q->modules[i].bias, p->modules[i].bias);
  }
  for (size_t i = 0; i < p->nlocations; i++) {
    T_EQ_INT(q->locations[i].frame, p->locations[i].frame);
    T_EQ_INT(q->locations[i].module, p->locations[i].module);
    T_EQ_INT(q->locations[i].addr, p->locations[i].addr);
  }
  /* Named from the file alone, the loaded copy gets the same names. */
#if HAVE_LIBDW
  T_ASSERT(spy_profile_symbolize(p) > 0);
  T_ASSERT(spy_profile_symbolize(q) > 0);
#endif
  T_EQ_INT(q->nnatives, p->nnatives);
  for (size_t i = 0; i < p->nnatives; i++) {
    T_EQ_INT(q->natives[i].prim, p->natives[i].prim);
    T_EQ_INT(q->natives[i].count, p->natives[i].count);
    T_EQ_INT(q->natives[i].nframes, p->natives[i].nframes);
    for (uint32_t k = 0; k < p->natives[i].nframes; k++) {
      T_EQ_INT(q->natives[i].frames[k], p->natives[i].frames[k]);
      T_EQ_STR(q->frames[q->natives[i].frames[k]].name,
               p->frames[p->natives[i].frames[k]].name);
    }
  }
  snprintf(path, sizeof path, "%s/n.json", t_tmpdir());
  FILE *f = fopen(path, "w");
  T_ASSERT(f);
  T_EQ_INT(spy_profile_write_json(q, f), 0);
  fclose(f);
  char *js = t_slurp(path, NULL);
  char want[96];
  snprintf(want, sizeof want, "\"natives\":[\n{\"prim\":0,\"count\":%" PRIu64,
           q->natives[0].count);
  T_ASSERT(js && strstr(js, want));
  free(js);

  /* The loader refuses a native path through a frame that is not native. */
  uint32_t keep = p->natives[0].frames[0];
  uint32_t root = 0;
  while (p->frames[root].kind != SPY_FRAME_ROOT) root++;
  p->natives[0].frames[0] = root;
  unsigned char *b;
  size_t len;
  T_EQ_INT(spyP_encode(p, &b, &len, err, sizeof err), 0);
  spy_profile *bad = NULL;
  T_EQ_INT(spy_profile_load_mem(b, len, "bad.spy", &bad, err, sizeof err),
           SPY_EFORMAT);
  T_ASSERT(strstr(err, "native 0: frame 0: frame ") &&
           strstr(err, "is a root frame, not a native frame"));
  free(b);
  p->natives[0].frames[0] = keep;
  /* ... and a location of a frame that is not native. */
  keep = p->locations[0].frame;
  p->locations[0].frame = root;
  T_EQ_INT(spyP_encode(p, &b, &len, err, sizeof err), SPY_EINVAL);
  p->locations[0].frame = keep;
  T_EQ_INT(spyP_encode(p, &b, &len, err, sizeof err), 0);
  size_t at = SPYP_PRE_SIZE, mod = 0;
  for (int s = 0; s < 11; s++) { /* to section 11's location 0's frame */
    mod = at;
    get_var(b, &at);
    at += get_var(b, &at);
  }
  at = mod;
  get_var(b, &at);
  get_var(b, &at);
  uint64_t nmod = get_var(b, &at);
  for (uint64_t i = 0; i < nmod; i++) get_var(b, &at), get_var(b, &at),
                                      get_var(b, &at);
  get_var(b, &at); /* location count */
  size_t fat = at;
  T_EQ_INT(get_var(b, &at), keep);
  T_ASSERT(root < 128 && at == fat + 1); /* one-byte varints */
  b[fat] = (unsigned char)root;
  spyP_fix_preamble(b, len);
  T_EQ_INT(spy_profile_load_mem(b, len, "bad.spy", &bad, err, sizeof err),
           SPY_EFORMAT);
  if (!strstr(err, "location 0: ") ||
      !strstr(err, "is a root frame, not a native frame"))
    T_FAIL("location of a root frame: %s", err);
  free(b);
  T_EQ_INT(spyP_encode(p, &b, &len, err, sizeof err), 0);
  edit_tail(b, len, 1, "section 10 (natives) before section 9 (gc)");
  edit_tail(b, len, 0, "section 10 (natives) repeated");
  free(b);
  spy_profile_free(p);
  spy_profile_free(q);
}

/* Off by default: no handler, no natives, no native frames. */
static void off_by_default(void) {
  spy_options o;
  spy_options_init(&o);
  T_EQ_INT(o.native_stacks, 0);
  T_EQ_INT(o.native_interval_ns, 1000000);
  spy_profile *p = profile_run(0, 5);
  T_EQ_INT(p->nnatives, 0);
  for (size_t i = 0; i < p->nframes; i++)
    T_ASSERT(p->frames[i].kind != SPY_FRAME_NATIVE);
  struct sigaction cur;
  T_EQ_INT(sigaction(SIGPROF, NULL, &cur), 0);
  T_ASSERT(!(cur.sa_flags & SA_SIGINFO) && cur.sa_handler == SIG_DFL);
  T_EQ_INT(spyH_native_installed(), 0);
  spy_profile_free(p);
}

static void foreign(int sig, siginfo_t *si, void *uc) {
  (void)sig, (void)si, (void)uc;
}

/* Someone else's SIGPROF handler is not clobbered; bad intervals fail. */
static void options_and_conflicts(void) {
#if !HAVE_LIBUNWIND
  T_SKIP("native stacks not built in (configure found no libunwind)");
#endif
  spy_options o;
  spy_options_init(&o);
  o.native_stacks = 1;
  o.native_interval_ns = 5000;
  spy_profiler *pr = NULL;
  T_EQ_INT(spy_profiler_new(&pr, &o), SPY_EINVAL);
  o.native_interval_ns = 1000000;
  o.native_stacks = 2;
  T_EQ_INT(spy_profiler_new(&pr, &o), SPY_EINVAL);
  o.native_stacks = 1;
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_sigaction = foreign;
  sa.sa_flags = SA_SIGINFO;
  T_EQ_INT(sigaction(SIGPROF, &sa, NULL), 0);
  T_EQ_INT(spy_profiler_new(&pr, &o), 0);
  spy_host h = {.walk = walk};
  spy_vm *v = NULL;
  T_EQ_INT(spy_attach(pr, &h, &v), SPY_EEXIST);
  struct sigaction cur;
  T_EQ_INT(sigaction(SIGPROF, NULL, &cur), 0);
  T_ASSERT(cur.sa_sigaction == foreign); /* left alone */
  /* SIG_IGN is replaced, and the handler then stays. */
  signal(SIGPROF, SIG_IGN);
  T_EQ_INT(spy_attach(pr, &h, &v), 0);
  T_EQ_INT(spyH_native_installed(), 1);
  T_EQ_INT(spy_detach(v), 0);
  T_EQ_INT(spyH_native_installed(), 1);
  /* A stray SIGPROF to a detached thread is ignored, not fatal. */
  raise(SIGPROF);
  T_EQ_INT(spy_profiler_free(pr), 0);
}

/* ------------------------------------------------------------------------
** Native frames in the tree (report/natives.c), on a profile built by hand
** so that every weight is known.
** --------------------------------------------------------------------- */

static uint32_t add_frame(spy_profile *p, spy_frame_kind kind, uint64_t key,
                          const char *name) {
  spy_frame *f = &p->frames[p->nframes];
  f->kind = kind;
  f->key = key;
  f->name = name;
  return (uint32_t)p->nframes++;
}

static uint32_t add_node(spy_profile *p, uint32_t frame, uint32_t parent,
                         uint64_t self) {
  spy_node *n = &p->nodes[p->nnodes];
  *n = (spy_node){frame, parent, SPY_NONE, SPY_NONE, self, self, self, self};
  for (uint32_t a = parent; a != SPY_NONE; a = p->nodes[a].parent) {
    p->nodes[a].total_ns += self;
    p->nodes[a].tallies += self;
  }
  if (parent != SPY_NONE) { /* appended last: lightest in these tests */
    uint32_t *c = &p->nodes[parent].first_child;
    while (*c != SPY_NONE) c = &p->nodes[*c].next_sibling;
    *c = (uint32_t)p->nnodes;
  }
  return (uint32_t)p->nnodes++;
}

static void add_native(spy_profile *p, uint32_t prim, uint64_t count,
                       uint32_t n, const uint32_t *frames) {
  spy_native *nt = &p->natives[p->nnatives++];
  nt->prim = prim;
  nt->count = count;
  nt->nframes = n;
  nt->frames = spyP_calloc(p, n, sizeof *nt->frames);
  memcpy(nt->frames, frames, n * sizeof *frames);
}

/* The child of node n named name, or SPY_NONE. */
static uint32_t child_named(const spy_profile *p, uint32_t n,
                            const char *name) {
  for (uint32_t c = p->nodes[n].first_child; c != SPY_NONE;
       c = p->nodes[c].next_sibling)
    if (!strcmp(p->frames[p->nodes[c].frame].name, name)) return c;
  return SPY_NONE;
}

/* A primitive node with 1000 ns of self time, its natives 6 : 3 : 1 over
** spin, two lines of work (one function) and a path that stopped early;
** paths start at main and the interpreter, which are cut off. */
static void to_tree(void) {
  spy_profile *p = spyP_new();
  T_ASSERT(p);
  p->frames = spyP_calloc(p, 16, sizeof *p->frames);
  p->nodes = spyP_calloc(p, 16, sizeof *p->nodes);
  p->natives = spyP_calloc(p, 8, sizeof *p->natives);
  p->prims = spyP_calloc(p, 1, sizeof *p->prims);
  p->processes = spyP_calloc(p, 1, sizeof *p->processes);
  T_ASSERT(p->frames && p->nodes && p->natives && p->prims && p->processes);
  p->nprims = 1;
  p->prims[0].name = "P";
  uint32_t froot = add_frame(p, SPY_FRAME_ROOT, 0, "(root)");
  uint32_t fm = add_frame(p, SPY_FRAME_METHOD, 1, "M");
  uint32_t fp = add_frame(p, SPY_FRAME_PRIM, 0, "P");
  uint32_t nmain = add_frame(p, SPY_FRAME_NATIVE, 10, "main (app)");
  uint32_t nint = add_frame(p, SPY_FRAME_NATIVE, 11, "interp (app) i.c:9");
  uint32_t nprim = add_frame(p, SPY_FRAME_NATIVE, 12, "p_impl (app) p.c:3");
  uint32_t nspin = add_frame(p, SPY_FRAME_NATIVE, 13, "spin (app) p.c:20");
  uint32_t nw1 = add_frame(p, SPY_FRAME_NATIVE, 14, "work (app) p.c:30");
  uint32_t nw2 = add_frame(p, SPY_FRAME_NATIVE, 15, "work (app) p.c:31");
  uint32_t nasm = add_frame(p, SPY_FRAME_NATIVE, 16, "memcpy (libc)");
  uint32_t root = add_node(p, froot, SPY_NONE, 0);
  uint32_t m = add_node(p, fm, root, 500);
  uint32_t prim = add_node(p, fp, m, 1000);
  p->nprocesses = 1;
  p->processes[0] = (spy_process){1, "main", root, 1500, 1500};
  add_native(p, 0, 6, 4, (uint32_t[]){nmain, nint, nprim, nspin});
  add_native(p, 0, 2, 4, (uint32_t[]){nmain, nint, nprim, nw1});
  add_native(p, 0, 1, 4, (uint32_t[]){nmain, nint, nprim, nw2});
  add_native(p, 0, 1, 1, (uint32_t[]){nasm});
  size_t frames_before = p->nframes;
  T_ASSERT(spy_profile_natives_to_tree(p) > 0);
  /* The primitive keeps its total; its self time went to its natives. */
  T_EQ_INT(p->nodes[prim].total_ns, 1000);
  T_EQ_INT(p->nodes[prim].self_ns, 0);
  T_EQ_INT(p->nodes[m].total_ns, 1500);
  /* Cut below the interpreter: the deepest function all paths share. */
  T_EQ_INT(child_named(p, prim, "main (app)"), SPY_NONE);
  T_EQ_INT(child_named(p, prim, "interp (app) i.c:9"), SPY_NONE);
  uint32_t impl = child_named(p, prim, "p_impl (app) p.c:3");
  T_ASSERT(impl != SPY_NONE);
  T_EQ_INT(p->nodes[impl].total_ns, 900);
  uint32_t spin = child_named(p, impl, "spin (app) p.c:20");
  T_ASSERT(spin != SPY_NONE);
  T_EQ_INT(p->nodes[spin].self_ns, 600);
  /* work's two lines are one function, named without the line. */
  uint32_t work = child_named(p, impl, "work (app) p.c");
  T_ASSERT(work != SPY_NONE);
  T_EQ_INT(p->nodes[work].self_ns, 300);
  T_EQ_INT(p->nframes, frames_before + 1);
  /* The path that stopped early shows its leaf only. */
  uint32_t mc = child_named(p, prim, "memcpy (libc)");
  T_ASSERT(mc != SPY_NONE);
  T_EQ_INT(p->nodes[mc].self_ns, 100);
  /* Heaviest first, as in every tree. */
  T_EQ_INT(p->nodes[prim].first_child, impl);
  T_EQ_INT(p->nodes[impl].first_child, spin);
  /* The leaves now name the C functions. */
  spy_leaf lv[4];
  T_EQ_INT(spy_profile_leaves(p, lv, 4), 4);
  T_EQ_STR(p->frames[lv[0].frame].name, "spin (app) p.c:20");
  T_EQ_INT(lv[0].self_ns, 600);
  /* A second call changes nothing. */
  size_t nodes = p->nnodes, frames = p->nframes;
  T_EQ_INT(spy_profile_natives_to_tree(p), 0);
  T_EQ_INT(p->nnodes, nodes);
  T_EQ_INT(p->nframes, frames);
  T_EQ_INT(p->nodes[spin].self_ns, 600);
  /* And the tree still saves and loads (every index in range). */
  char path[4200], err[512];
  snprintf(path, sizeof path, "%s/t.spy", t_tmpdir());
  if (spy_profile_save(p, path, err, sizeof err)) T_FAIL("save: %s", err);
  spy_profile *q = NULL;
  if (spy_profile_load(path, &q, err, sizeof err)) T_FAIL("load: %s", err);
  spy_profile_free(q);
  spy_profile_free(p);
}

/* A hostile profile: 200,000 native paths of 200,000 distinct frames
** under one primitive called from 200 places. Quadratic work (a linear
** search of a node's children, every path scanned per node) took hours;
** this must finish within the test's timeout, with the totals kept. */
static void to_tree_many(void) {
  enum { NPATH = 200000, NSITE = 200 };
  spy_profile *p = spyP_new();
  T_ASSERT(p);
  p->frames = spyP_calloc(p, NPATH + NSITE + 3, sizeof *p->frames);
  p->nodes = spyP_calloc(p, 2 * NSITE + 1, sizeof *p->nodes);
  p->natives = spyP_calloc(p, NPATH, sizeof *p->natives);
  p->prims = spyP_calloc(p, 1, sizeof *p->prims);
  p->processes = spyP_calloc(p, 1, sizeof *p->processes);
  uint32_t *fr = spyP_calloc(p, 2 * NPATH, sizeof *fr);
  T_ASSERT(p->frames && p->nodes && p->natives && p->prims && p->processes &&
           fr);
  p->nprims = 1;
  p->prims[0].name = "P";
  uint32_t froot = add_frame(p, SPY_FRAME_ROOT, 0, "(root)");
  uint32_t fp = add_frame(p, SPY_FRAME_PRIM, 0, "P");
  uint32_t fimpl = add_frame(p, SPY_FRAME_NATIVE, 1, "impl (app)");
  uint32_t root = add_node(p, froot, SPY_NONE, 0);
  for (uint32_t s = 0; s < NSITE; s++) {
    uint32_t m = add_node(p, add_frame(p, SPY_FRAME_METHOD, s, "M"), root, 0);
    add_node(p, fp, m, 1000);
  }
  for (uint32_t i = 0; i < NPATH; i++) {
    fr[2 * i] = fimpl;
    fr[2 * i + 1] = add_frame(p, SPY_FRAME_NATIVE, 100 + i, "f (app)");
    p->natives[p->nnatives++] = (spy_native){0, 2, fr + 2 * i, 1 + i % 7};
  }
  p->nprocesses = 1;
  p->processes[0] = (spy_process){1, "main", root, p->nodes[root].total_ns,
                                  p->nodes[root].tallies};
  T_ASSERT(spy_profile_natives_to_tree(p) > 0);
  T_EQ_INT(p->nodes[root].total_ns, 1000u * NSITE);
  uint64_t self = 0;
  for (size_t i = 0; i < p->nnodes; i++) self += p->nodes[i].self_ns;
  T_EQ_INT(self, 1000u * NSITE);
  spy_profile_free(p);
}

/* End to end: `spyon --native -o` saves addresses and their objects;
** `spyon report` names them (here GMP's and the interpreter's functions)
** and shows them under the primitive. */
static void cli_report_names(void) {
#if !HAVE_LIBUNWIND || !HAVE_LIBDW
  T_SKIP("native stacks or their names not built in");
#endif
  if (UNDER_TSAN) T_SKIP("under TSan the handler sees deferred stacks");
  char cmd[16384], *out = NULL;
  snprintf(cmd, sizeof cmd,
           "cd '%s' && printf '| n |\n3000 timesRepeat: [n := 103 "
           "raisedToInteger: 8000].\n' > big.st && "
           "SPYON_KERNEL='%s/hosts/st/kernel' '%s/spyon' --native "
           "--native-interval 200 -o n.spy big.st >/dev/null && "
           "'%s/spyon' report n.spy",
           t_tmpdir(), t_srcdir, t_builddir, t_builddir);
  T_EQ_INT(t_run(cmd, &out), 0);
  const char *mul = strstr(out, "  Integer>>digitMultiply:neg:\n");
  T_ASSERT(mul);
  /* The line after the primitive: one of its native frames, named. */
  const char *next = strchr(mul + 1, '\n') + 1;
  char line[512];
  snprintf(line, sizeof line, "%.*s", (int)strcspn(next, "\n"), next);
  if (!strstr(line, "[native] ") || strstr(line, "[native] 0x"))
    T_FAIL("under the multiply: \"%s\"", line);
  const char *leaves = strstr(out, "**Leaves**\n");
  T_ASSERT(leaves && strstr(leaves, "[native] __gmpn_"));
  free(out);
}

const struct spy_test t_native[] = {
    {"cli_report_names", cli_report_names, 60},
    {"to_tree", to_tree, 0},
    {"to_tree_many", to_tree_many, 60},
    {"breakdown", breakdown, 0},
    {"file_and_json", file_and_json, 0},
    {"off_by_default", off_by_default, 0},
    {"options_and_conflicts", options_and_conflicts, 0},
    {0},
};
