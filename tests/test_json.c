/*
** tests/test_json.c: the "json" suite. Every JSON document spyon writes
** goes through profile/jsonw.c; here each one is read back by a strict
** parser (jansson rejects raw control characters and bytes that are not
** UTF-8) with names that are neither printable nor UTF-8:
**   escaper   the escaper itself over every one- and two-byte string and
**             the three- and four-byte lead bytes, against jansson's own
**             UTF-8 check as the truth;
**   report    `spyon report --format json` and `--format speedscope`;
**   costs     `spyon costs --format json` on a CSV and on a profile.
** The expected decodings are written out by hand: control characters
** come back as they were, each byte that is not part of well-formed UTF-8
** as U+FFFD.
*/
#include "config.h"

#include "tests/test.h"

#include "profile/jsonw.h"
#include "tests/test_profile.h"

#if HAVE_JANSSON
#include <jansson.h>

/* Printable nowhere, but valid UTF-8: must come back byte for byte. */
#define CTL_NAME "ctl\x01\x02\x1f tab\t quote\" bs\\ del\x7f nl\n end"
/* Not UTF-8: stray bytes, a lone continuation, a cut sequence, an
** overlong form, a surrogate, a code point above U+10FFFF. */
#define BAD_NAME                                                        \
  "bad\xff\xfe lone\x80 cut\xe2\x82 over\xc0\xaf sur\xed\xa0\x80 "      \
  "hi\xf4\x90\x80\x80 ok\xc3\xa9"
#define R "\xef\xbf\xbd" /* U+FFFD */
#define BAD_JSON                                                        \
  "bad" R R " lone" R " cut" R R " over" R R " sur" R R R " hi" R R R R \
  " ok\xc3\xa9"

static void sink(void *ctx, const char *s, size_t n) {
  struct {
    char *s;
    size_t n;
  } *b = ctx;
  T_ASSERT(b->n + n < 256);
  memcpy(b->s + b->n, s, n);
  b->n += n;
  b->s[b->n] = '\0';
}

/* Escape IN (n bytes), parse the literal strictly, return the decoded
** string in OUT (its length). */
static size_t roundtrip(const char *in, char *out, size_t outlen) {
  char lit[256];
  struct {
    char *s;
    size_t n;
  } b = {lit, 0};
  spyP_json_str(sink, &b, in);
  json_error_t e;
  json_t *j = json_loadb(lit, b.n, JSON_DECODE_ANY, &e);
  if (!j) T_FAIL("escaped %s: %s", lit, e.text);
  T_ASSERT(json_is_string(j));
  size_t n = json_string_length(j);
  T_ASSERT(n < outlen);
  memcpy(out, json_string_value(j), n + 1);
  json_decref(j);
  return n;
}

/* IN through the escaper and back: unchanged when jansson takes it for
** valid UTF-8, else with U+FFFD in it. */
static void check_escaped(const char *in) {
  char out[64];
  size_t n = strlen(in);
  size_t m = roundtrip(in, out, sizeof out);
  json_t *v = json_stringn(in, n);
  if (v) {
    T_ASSERT(m == n && memcmp(in, out, n) == 0);
    json_decref(v);
  } else {
    T_ASSERT(strstr(out, R));
  }
}

/* Every string of one or two bytes (1..255 each), and every lead byte of
** three and four with continuation bytes around the ranges' edges: the
** literal parses, a valid string comes back unchanged, and an invalid
** one comes back with U+FFFD instead of at least one byte and no other
** change of its ASCII. jansson's json_stringn decides validity. */
static void t_escaper(void) {
  char in[8], out[64];
  for (unsigned a = 1; a < 256; a++)
    for (unsigned b = 0; b < 256; b++) {
      in[0] = (char)a, in[1] = (char)b, in[2] = '\0';
      check_escaped(in);
    }
  static const unsigned char edge[] = {0x00, 0x7f, 0x80, 0x8f, 0x90,
                                       0x9f, 0xa0, 0xbf, 0xc0, 0xff};
  for (unsigned a = 0xe0; a < 0x100; a++)
    for (size_t i = 0; i < sizeof edge; i++)
      for (size_t k = 0; k < sizeof edge; k++)
        for (size_t l = 0; l < sizeof edge; l++) {
          in[0] = (char)a, in[1] = (char)edge[i], in[2] = (char)edge[k];
          in[3] = (char)edge[l], in[4] = '\0';
          check_escaped(in);
        }
  T_ASSERT(roundtrip(CTL_NAME, out, sizeof out) == strlen(CTL_NAME));
  T_EQ_STR(out, CTL_NAME);
  char big[128];
  roundtrip(BAD_NAME, big, sizeof big);
  T_EQ_STR(big, BAD_JSON);
  roundtrip(NULL, out, sizeof out);
  T_EQ_STR(out, "");
}

/* Parse a whole file strictly (jansson's default flags). */
static json_t *load(const char *path) {
  json_error_t e;
  json_t *j = json_load_file(path, 0, &e);
  if (!j) T_FAIL("%s: line %d col %d: %s", path, e.line, e.column, e.text);
  return j;
}

/* The JSON that `spyon ARGS` prints, run in the test's directory (the
** command must succeed). */
static json_t *spyon_json(const char *args) {
  char path[4200];
  T_EQ_INT(t_spyon(NULL, "%s > out.json", args), 0);
  snprintf(path, sizeof path, "%s/out.json", t_tmpdir());
  return load(path);
}

/* Whether the array A holds an object whose "name" is NAME. */
static int has_name(json_t *a, const char *name) {
  size_t i;
  json_t *v;
  json_array_foreach(a, i, v) {
    const char *s = json_string_value(json_object_get(v, "name"));
    if (s && strcmp(s, name) == 0) return 1;
  }
  return 0;
}

/* The synthetic profile with hostile method, primitive and process names,
** saved where the CLI can read it. */
static void hostile_profile(const char *path) {
  spy_profile *p = tp_synth();
  p->frames[1].name = CTL_NAME;
  p->frames[2].name = BAD_NAME;
  p->prims[0].name = BAD_NAME;
  p->frames[3].name = BAD_NAME;
  p->processes[1].name = CTL_NAME;
  /* The native frame's object: a file name that is not UTF-8 either. */
  T_EQ_INT(p->frames[7].kind, SPY_FRAME_NATIVE);
  p->modules = spyP_calloc(p, 1, sizeof *p->modules);
  p->locations = spyP_calloc(p, 1, sizeof *p->locations);
  T_ASSERT(p->modules && p->locations);
  p->modules[0] = (spy_module){BAD_NAME, "00ff", 0x1000};
  p->locations[0] = (spy_location){7, 0, 0x1234};
  p->nmodules = p->nlocations = 1;
  char err[256];
  if (spy_profile_save(p, path, err, sizeof err)) T_FAIL("save: %s", err);
  spy_profile_free(p);
}

static void t_report(void) {
  char spy[4200];
  snprintf(spy, sizeof spy, "%s/h.spy", t_tmpdir());
  hostile_profile(spy);
  json_t *j = spyon_json("report h.spy --format json");
  json_t *fr = json_object_get(j, "frames");
  T_ASSERT(has_name(fr, CTL_NAME));
  T_ASSERT(has_name(fr, BAD_JSON));
  T_ASSERT(has_name(fr, NATIVE_JSON));
  T_ASSERT(has_name(json_object_get(j, "prims"), BAD_JSON));
  T_ASSERT(has_name(json_object_get(j, "processes"), CTL_NAME));
  json_t *mod = json_array_get(json_object_get(j, "modules"), 0);
  T_ASSERT(mod);
  T_EQ_STR(json_string_value(json_object_get(mod, "path")), BAD_JSON);
  json_t *loc = json_array_get(json_object_get(j, "locations"), 0);
  T_ASSERT(loc);
  T_EQ_INT(json_integer_value(json_object_get(loc, "frame")), 7);
  T_EQ_STR(json_string_value(json_object_get(loc, "addr")), "0x1234");
  json_decref(j);
  j = spyon_json("report h.spy --format speedscope");
  fr = json_object_get(json_object_get(j, "shared"), "frames");
  T_ASSERT(has_name(fr, CTL_NAME));
  T_ASSERT(has_name(fr, BAD_JSON));
  json_decref(j);
  /* The diff's JSON, the profile against itself (every frame with time,
  ** under the report's labels, which show a byte that is not UTF-8 as
  ** \xFF and a control character as \u0001): strict JSON. */
  j = spyon_json("diff h.spy h.spy --format json");
  fr = json_object_get(json_object_get(j, "total"), "frames");
  T_ASSERT(json_array_size(fr) > 0);
  int bad = 0;
  size_t i;
  json_t *v;
  json_array_foreach(fr, i, v) {
    const char *s = json_string_value(json_object_get(v, "name"));
    bad += s && strstr(s, "bad\\xFF\\xFE lone\\x80") != NULL;
  }
  T_ASSERT(bad > 0);
  json_decref(j);
}

static void t_costs(void) {
  char path[4200];
  /* A CSV whose primitive names are quoted fields with the bytes above
  ** (a quote doubled, as CSV writes it; no newline, which ends a row). */
  snprintf(path, sizeof path, "%s/h.csv", t_tmpdir());
  FILE *f = fopen(path, "w");
  T_ASSERT(f);
  fputs("primitive,n,time_ns\n", f);
  for (int i = 1; i <= 40; i++) {
    fprintf(f, "\"ctl\x01\x02\x1f tab\t quote\"\" bs\\ del\x7f\",%d,%d\n", i,
            100 + 10 * i);
    fprintf(f, "\"%s\",%d,%d\n", BAD_NAME, i, 50 + 3 * i * i);
  }
  fclose(f);
  json_t *j = spyon_json("costs h.csv --format json --bootstrap 20");
  json_t *pr = json_object_get(j, "primitives");
  T_EQ_INT(json_array_size(pr), 2);
  T_ASSERT(has_name(pr, "ctl\x01\x02\x1f tab\t quote\" bs\\ del\x7f"));
  T_ASSERT(has_name(pr, BAD_JSON));
  json_decref(j);
  /* The same writer from a profile's cost observations. */
  char spy[4200];
  snprintf(spy, sizeof spy, "%s/h.spy", t_tmpdir());
  hostile_profile(spy);
  j = spyon_json("costs h.spy --format json --min-calls 2");
  T_ASSERT(has_name(json_object_get(j, "primitives"), BAD_JSON));
  json_decref(j);
}

#else
static void t_escaper(void) {
  T_SKIP("jansson not found by configure: JSON read-back not checked");
}

static void t_report(void) {
  T_SKIP("jansson not found by configure: JSON read-back not checked");
}

static void t_costs(void) {
  T_SKIP("jansson not found by configure: JSON read-back not checked");
}
#endif

const struct spy_test t_json[] = {
    {"escaper", t_escaper, 0},
    {"report", t_report, 0},
    {"costs", t_costs, 0},
    {0},
};
