/*
** tests/test_report_export.c: the "report" suite, the folded and
** speedscope exports and the diff (tests/test_report.c has the helpers).
*/
#include "config.h"

#include "tests/test.h"

#if HAVE_JANSSON
#include <jansson.h>
#endif
#include <spyon.h>
#include <spyon/report.h>

#include "profile/profile.h"
#include "tests/test_report.h"

/* ------------------------------------------------------------------------
** Exports
** --------------------------------------------------------------------- */

static void t_folded(void) {
  spy_profile *p = t_report_synthetic();
  tr_mem m;
  T_EQ_INT(spy_report_folded(p, tr_mem_open(&m), 0), 0);
  const char *t = tr_mem_text(&m);
  tr_check_golden(t, "synthetic.folded");
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
  T_EQ_INT(spy_report_folded(p, tr_mem_open(&m), 1), 0);
  t = tr_mem_text(&m);
  T_ASSERT(strstr(t, "worker;Worker loop;Worker step 9850\n"));
  T_ASSERT(strstr(t, "main;Processor idle 1000\n"));
  free(m.s);
  spy_profile_free(p);
}

/* Names with ';' or a line break cannot break the format. */
static void t_folded_escape(void) {
  spy_profile *p = tr_new_profile(1000000);
  uint32_t r = tr_process(p, 1, "p;q", 1000000);
  tr_method(p, r, "a;b\nc", 1000000, 1000000);
  tr_mem m;
  T_EQ_INT(spy_report_folded(p, tr_mem_open(&m), 0), 0);
  T_EQ_STR(tr_mem_text(&m), "p_q;a_b_c 1000\n");
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
  tr_mem m;
  T_EQ_INT(spy_report_speedscope(p, tr_mem_open(&m), NULL), 0);
  const char *t = tr_mem_text(&m);
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
  spy_profile *p = tr_new_profile(3000);
  uint32_t r = tr_process(p, 7, "q\"\xff", 3000);
  p->nodes[r].self_ns = 1000;
  tr_method(p, r, "a\\b\x01", 2000, 2000);
  tr_mem m;
  T_EQ_INT(spy_report_speedscope(p, tr_mem_open(&m), "n"), 0);
  const char *t = tr_mem_text(&m);
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

/* A frame always added anew (tr_frame() reuses one of the same name). */
static uint32_t new_frame(spy_profile *p, spy_frame_kind kind, uint64_t key,
                          const char *name) {
  T_ASSERT(p->nframes < TR_CAP);
  p->frames[p->nframes] = (spy_frame){kind, key, spyP_strdup(p, name)};
  return (uint32_t)p->nframes++;
}

/* A: 1 s; X 500 ms, Y 300, Z 200. B: 2 s; X 500 ms, Y 1,300 (two method
** frames with the same name and different keys: merged), a primitive also
** named Y (4 ms, 0.2 %: kept apart from the method), W 196 ms. */
static void t_diff(void) {
  spy_profile *a = tr_new_profile(1000000000);
  uint32_t r = tr_process(a, 1, "main", 1000000000);
  tr_method(a, r, "X", 500000000, 500000000);
  tr_method(a, r, "Y", 300000000, 300000000);
  tr_method(a, r, "Z", 200000000, 200000000);
  spy_profile *b = tr_new_profile(2000000000);
  r = tr_process(b, 1, "main", 2000000000);
  tr_method(b, r, "X", 500000000, 500000000);
  tr_node(b, r, new_frame(b, SPY_FRAME_METHOD, 1, "Y"), 800000000, 800000000);
  tr_node(b, r, new_frame(b, SPY_FRAME_METHOD, 2, "Y"), 500000000, 500000000);
  tr_node(b, r, new_frame(b, SPY_FRAME_PRIM, 0, "Y"), 4000000, 4000000);
  tr_method(b, r, "W", 196000000, 196000000);
  tr_mem m;
  T_EQ_INT(spy_report_diff(a, b, tr_mem_open(&m), NULL), 0);
  const char *t = tr_mem_text(&m);
  tr_check_golden(t, "diff.txt");
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
  T_EQ_INT(spy_report_diff_json(a, b, tr_mem_open(&m)), 0);
  json_error_t e;
  json_t *j = json_loads(tr_mem_text(&m), 0, &e);
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

const struct spy_test t_report_export[] = {
    {"folded", t_folded, 0},
    {"folded_escape", t_folded_escape, 0},
    {"speedscope", t_speedscope, 0},
    {"speedscope_escape", t_speedscope_escape, 0},
    {"diff", t_diff, 0},
    {0},
};
