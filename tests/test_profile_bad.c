/*
** tests/test_profile_bad.c: the "profile" suite, part two: the loader under
** hostile input and the JSON export. The synthetic profile and the helpers
** are in tests/test_profile.c (see tests/test_profile.h).
*/
#include "config.h"

#include "tests/test_profile.h"

/* ------------------------------------------------------------------------
** Hostile input
** --------------------------------------------------------------------- */

/* tp_synth(), returned, and its encoding in *B (*LEN bytes, malloc'd). */
static spy_profile *synth_encoded(unsigned char **b, size_t *len) {
  spy_profile *p = tp_synth();
  tp_encode(p, b, len);
  return p;
}

/* Every prefix of a valid file is an error naming an offset inside it:
** first as it is (the length check), then with the preamble rewritten to
** match, so that each cut reaches the section parsers. */
static void truncated(void) {
  unsigned char *b;
  size_t len;
  spy_profile *p = synth_encoded(&b, &len);
  unsigned char *c = malloc(len);
  for (size_t n = 0; n < len; n++) {
    tp_load_fails(b, n, 0, SPY_EFORMAT, NULL);
    memcpy(c, b, n);
    if (n >= SPYP_PRE_SIZE) {
      spyP_fix_preamble(c, n);
      tp_load_fails(c, n, 0, SPY_EFORMAT, NULL);
    }
  }
  /* Exact messages for a few cuts. */
  tp_load_fails(b, 0, 0, SPY_EFORMAT, "offset 0: empty file");
  tp_load_fails(b, 5, 0, SPY_EFORMAT, "offset 5: truncated in the preamble");
  tp_load_fails(b, 100, 0, SPY_EFORMAT,
             "offset 100: truncated: the file ends after 76 bytes of body");
  memcpy(c, b, SPYP_PRE_SIZE);
  spyP_fix_preamble(c, SPYP_PRE_SIZE);
  tp_load_fails(c, SPYP_PRE_SIZE, 0, SPY_EFORMAT,
             "offset 24: section 1 (header) missing");
  free(c);
  free(b);
  spy_profile_free(p);
}

/* Any flipped byte is caught by the checksum (or the magic, version or
** length checks in the preamble), and never crashes. */
static void flipped(void) {
  unsigned char *b;
  size_t len;
  spy_profile *p = synth_encoded(&b, &len);
  static const unsigned char masks[] = {0x01, 0x80, 0xff, 0x10};
  for (size_t i = 0; i < len; i++)
    for (size_t m = 0; m < sizeof masks; m++) {
      b[i] ^= masks[m];
      spy_profile *q = NULL;
      char err[512];
      int rc = spyP_load_mem(b, len, "t.spy", 0, &q, err, sizeof err);
      T_ASSERT(rc < 0 && q == NULL);
      tp_check_msg(err, "t.spy", len);
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
  unsigned char *b;
  size_t len;
  spy_profile *p = synth_encoded(&b, &len);
  size_t loaded = 0, failed = 0;
  for (size_t i = SPYP_PRE_SIZE; i < len; i++)
    for (unsigned m = 1; m < 256; m <<= 1) {
      b[i] ^= (unsigned char)m;
      spy_profile *q = NULL;
      char err[512];
      int rc = spyP_load_mem(b, len, "t.spy", SPYP_LOAD_NOCRC, &q, err,
                             sizeof err);
      if (rc == 0) {
        tp_valid(q);
        spy_profile_free(q);
        loaded++;
      } else {
        T_EQ_INT(rc, SPY_EFORMAT);
        tp_check_msg(err, "t.spy", len);
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

/* The file B (LEN bytes) rebuilt as tp_rebuild does (section TAG's
** payload replaced by PAY, EXTRA inserted) must fail to load with
** SPY_EFORMAT and WANT in the message; returns the offset it names. */
static size_t rebuilt_fails(const unsigned char *b, size_t len, uint64_t tag,
                            const tb *pay, const tb *extra,
                            uint64_t extra_tag, const char *want) {
  tb t = tp_rebuild(b, len, tag, pay, extra, extra_tag);
  size_t off = tp_load_fails(t.p, t.n, 0, SPY_EFORMAT, want);
  free(t.p);
  return off;
}

/* Forged counts are rejected before anything is allocated for them. An
** address-space limit proves it where no sanitizer needs the space. */
static void forged_counts(void) {
#if !T_SHADOW
  struct rlimit rl = {512u << 20, 512u << 20};
  T_EQ_INT(setrlimit(RLIMIT_AS, &rl), 0);
#endif
  unsigned char *b;
  size_t len;
  spy_profile *p = synth_encoded(&b, &len);
  tsec s[32];
  int ns = tp_split(b, len, s, 32);
  static const char *const what[] = {
      NULL, NULL, "string count", "prim count", "frame count", "node count",
      "process count", "step count", "region count", NULL};
  static const uint64_t huge[] = {UINT32_MAX - 1, 1ull << 40, UINT64_MAX};
  int tried = 0;
  for (int i = 0; i < ns; i++) {
    if (!what[s[i].tag]) continue;
    for (size_t h = 0; h < 3; h++) {
      size_t pos = s[i].off;
      tp_get_var(b, &pos); /* skip the real count */
      tb pay = {0};
      tp_tb_var(&pay, huge[h]);
      tp_tb_put(&pay, b + pos, s[i].off + s[i].len - pos);
      char want[96];
      snprintf(want, sizeof want, "%s %llu is more than the",
               what[s[i].tag], (unsigned long long)huge[h]);
      size_t off = rebuilt_fails(b, len, s[i].tag, &pay, NULL, 0, want);
      T_ASSERT(off >= s[i].at && off < s[i].at + 24);
      free(pay.p);
      tried++;
    }
  }
  T_EQ_INT(tried, 21);
  /* A string length, an observation count and a step's frame count. */
  tb pay = {0};
  tp_tb_var(&pay, 1);
  tp_tb_var(&pay, 1ull << 40);
  tp_tb_put(&pay, "abc", 3);
  rebuilt_fails(b, len, 2, &pay, NULL, 0,
                "string 0: length 1099511627776 runs");
  free(pay.p);
  pay = (tb){0};
  tp_tb_var(&pay, 1); /* one prim */
  tp_tb_var(&pay, 0); /* name: string 0 */
  tp_tb_var(&pay, 0); /* nsizes */
  for (int k = 0; k < 5; k++) tp_tb_var(&pay, 0); /* flags .. obs_offered */
  tp_tb_var(&pay, 0); /* no model */
  tp_tb_var(&pay, 1ull << 50);
  rebuilt_fails(b, len, 3, &pay, NULL, 0, "prim 0: observation count");
  free(pay.p);
  pay = (tb){0};
  tp_tb_var(&pay, 1); /* one step */
  tp_tb_var(&pay, 1); /* gc */
  tp_tb_var(&pay, 0); /* no prim */
  tp_tb_var(&pay, 0); /* nsizes */
  tp_tb_var(&pay, 5); /* ns */
  tp_tb_var(&pay, 0); /* process 0 */
  tp_tb_var(&pay, 1ull << 40);
  rebuilt_fails(b, len, 7, &pay, NULL, 0, "step 0: frame count 1099511627776");
  free(pay.p);
  free(b);
  spy_profile_free(p);
}

static void bad_preamble(void) {
  unsigned char *b;
  size_t len;
  spy_profile *p = synth_encoded(&b, &len);
  static const uint32_t vers[] = {0, 2, 0xffffffffu};
  for (int i = 0; i < 3; i++) {
    unsigned char v[4] = {(unsigned char)vers[i],
                          (unsigned char)(vers[i] >> 8),
                          (unsigned char)(vers[i] >> 16),
                          (unsigned char)(vers[i] >> 24)};
    memcpy(b + SPYP_PRE_VERSION, v, 4);
    T_EQ_INT(tp_load_fails(b, len, 0, SPY_EVERSION, "is not supported"), 8);
  }
  b[SPYP_PRE_VERSION] = 1;
  memset(b + SPYP_PRE_VERSION + 1, 0, 3);
  b[3] = 'X';
  tp_load_fails(b, len, 0, SPY_EFORMAT, "offset 0: not a spyon profile");
  b[3] = 'O';
  /* Trailing data after the announced body. */
  unsigned char *c = malloc(len + 3);
  memcpy(c, b, len);
  memcpy(c + len, "xyz", 3);
  char want[128];
  snprintf(want, sizeof want,
           "offset %zu: unexpected data after the end of the profile (3 more "
           "bytes)", len);
  tp_load_fails(c, len + 3, 0, SPY_EFORMAT, want);
  /* Text-mode damage (\r\n -> \n) is a bad magic, not a checksum. */
  memmove(c + 5, c + 6, len - 6);
  tp_load_fails(c, len - 1, 0, SPY_EFORMAT, "bad magic");
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
  spy_profile *p = tp_synth();
  T_EQ_INT(spy_profile_save(p, path, err, sizeof err), SPY_EIO);
  T_ASSERT(strncmp(err, path, strlen(path)) == 0);
  T_ASSERT(strstr(err, "cannot open for writing"));
  /* An empty file is a format error naming the file. */
  snprintf(path, sizeof path, "%s/empty.spy", t_tmpdir());
  FILE *f = fopen(path, "w");
  fclose(f);
  T_EQ_INT(spy_profile_load(path, &q, err, sizeof err), SPY_EFORMAT);
  tp_check_msg(err, path, 0);
  /* A device is read only as far as a preamble allows: /dev/zero is a bad
  ** magic at once, not an endless read. */
  T_EQ_INT(spy_profile_load("/dev/zero", &q, err, sizeof err), SPY_EFORMAT);
  tp_check_msg(err, "/dev/zero", 0);
  /* Through pipes (each its own FIFO, since a writer may outlive the
  ** read): a short stream is a truncation, a long one is read only one
  ** byte past the announced end, an exact one loads. */
  unsigned char *b;
  size_t len;
  tp_encode(p, &b, &len);
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
  tp_same(p, q);
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
  unsigned char *b;
  size_t len;
  spy_profile *p = synth_encoded(&b, &len), *q = NULL;
  char err[512];
  tsec s[32];
  int ns = tp_split(b, len, s, 32);
  tb extra = {0};
  tp_tb_put(&extra, "future data", 11);
  tb t = tp_rebuild(b, len, 5, NULL, &extra, 42);
  int rc = spy_profile_load_mem(t.p, t.n, "t.spy", &q, err, sizeof err);
  if (rc) T_FAIL("unknown section: %s", err);
  tp_same(p, q);
  spy_profile_free(q);
  free(t.p);
  for (int i = 0; i < ns; i++) { /* a trailing field in every section */
    tb pay = {0};
    tp_tb_put(&pay, b + s[i].off, s[i].len);
    tp_tb_put(&pay, "\x05\x06", 2);
    t = tp_rebuild(b, len, s[i].tag, &pay, NULL, 0);
    rc = spy_profile_load_mem(t.p, t.n, "t.spy", &q, err, sizeof err);
    if (rc) T_FAIL("section %d with a trailing field: %s", (int)s[i].tag,
                   err);
    tp_same(p, q);
    spy_profile_free(q);
    free(t.p);
    free(pay.p);
  }
  /* Known sections out of order or repeated are errors. */
  rebuilt_fails(b, len, 5, NULL, &extra, 4,
                "section 4 (frames) repeated or out");
  rebuilt_fails(b, len, 3, NULL, &extra, 5,
                "section 3 (prims) missing before section 5 (nodes)");
  free(extra.p);
  tb pay = {0};
  tp_tb_var(&pay, 2);
  tp_tb_var(&pay, 3);
  tp_tb_put(&pay, "a\0b", 3);
  tp_tb_var(&pay, 0);
  rebuilt_fails(b, len, 2, &pay, NULL, 0, "string 0: contains a NUL byte");
  free(pay.p);
  free(b);
  spy_profile_free(p);
}

/* One broken invariant at a time, each with its exact message; the offset
** must fall inside the section that holds the culprit. */
static void broken(void (*edit)(spy_profile *), uint64_t tag,
                   const char *msg) {
  spy_profile *p = tp_synth();
  edit(p);
  unsigned char *b;
  size_t len;
  tp_encode(p, &b, &len);
  size_t off = tp_load_fails(b, len, 0, SPY_EFORMAT, msg);
  tsec s[32];
  int ns = tp_split(b, len, s, 32);
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
/* Sums (profile/load.c check_sums): what a crafted file near 2^64
** would make wrap in the tools. */
EDIT(e_self_total, p->nodes[3].self_ns = 551)
EDIT(e_self_tallies, p->nodes[4].self_tallies = 21)
EDIT(e_sum, p->nodes[1].total_ns = 901)
EDIT(e_sum_tallies, p->nodes[8].self_tallies = 16)
EDIT(e_child_overflow,
     p->nodes[5].self_ns = p->nodes[5].total_ns = UINT64_MAX - 50)
EDIT(e_proc_root, p->processes[1].tallies = 49)
EDIT(e_proc_overflow, p->nodes[7].self_ns = UINT64_MAX - 990;
     p->nodes[7].total_ns = p->nodes[10].total_ns =
         p->processes[1].total_ns = UINT64_MAX - 500)
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
  broken(e_self_total, 5, "node 3: self_ns 551 > total_ns 550");
  broken(e_self_tallies, 5, "node 4: self_tallies 21 > tallies 20");
  broken(e_sum, 5, "node 0: total_ns 1000 is not self_ns plus the "
                   "children's totals (1001)");
  broken(e_sum_tallies, 5, "node 8: tallies 19 is not self_tallies plus "
                           "the children's tallies (18)");
  broken(e_child_overflow, 5,
         "node 0: self plus the children's totals overflow 64 bits");
  broken(e_proc_root, 6, "process 1: total_ns 500 and tallies 49 are not "
                         "its root's (500, 50)");
  broken(e_proc_overflow, 6,
         "process 1: the processes' totals overflow 64 bits");
  /* Not errors: changed values, and a primitive step whose primitive was
  ** never registered. */
  void (*fine[])(spy_profile *) = {e_obs_gc, e_step_prim};
  for (int i = 0; i < 2; i++) {
    spy_profile *p = tp_synth(), *q = NULL;
    fine[i](p);
    unsigned char *b;
    size_t len;
    char err[256];
    tp_encode(p, &b, &len);
    T_EQ_INT(spy_profile_load_mem(b, len, "t", &q, err, sizeof err), 0);
    tp_same(p, q);
    tp_valid(q);
    free(b);
    spy_profile_free(p);
    spy_profile_free(q);
  }
}

/* ------------------------------------------------------------------------
** JSON
** --------------------------------------------------------------------- */

#if HAVE_JANSSON
static json_t *jget(json_t *o, const char *key) {
  json_t *v = json_object_get(o, key);
  if (!v) T_FAIL("JSON: no \"%s\"", key);
  return v;
}

#define J_INT(o, k) json_integer_value(jget((o), (k)))
#define J_STR(o, k) json_string_value(jget((o), (k)))

/* P written by spy_profile_write_json to NAME in the test's directory,
** read back by jansson (a parse error fails the test). */
static json_t *written_json(const spy_profile *p, const char *name) {
  char path[4200];
  snprintf(path, sizeof path, "%s/%s", t_tmpdir(), name);
  FILE *f = fopen(path, "w");
  T_ASSERT(f);
  T_EQ_INT(spy_profile_write_json(p, f), 0);
  fclose(f);
  json_error_t je;
  json_t *j = json_load_file(path, 0, &je);
  if (!j)
    T_FAIL("JSON parse: %s at line %d col %d", je.text, je.line, je.column);
  return j;
}

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
  spy_profile *p = tp_synth();
  json_t *j = written_json(p, "p.json");
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
  FILE *f = fopen("/dev/null", "w");
  T_ASSERT(f);
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
  json_t *j = written_json(p, "e.json");
  json_t *fr = jget(j, "frames");
  for (size_t i = 0; i < NC; i++)
    T_EQ_STR(J_STR(json_array_get(fr, i), "name"), cases[i].out);
  json_decref(j);
  spy_profile_free(p);
}

#else
static void json_values(void) {
  T_SKIP("jansson not found by configure: JSON read-back not checked");
}

static void json_escapes(void) {
  T_SKIP("jansson not found by configure: JSON read-back not checked");
}
#endif

const struct spy_test t_profile_bad[] = {
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
