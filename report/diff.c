/*
** report/diff.c: what got slower (or faster) between two profiles.
**
** The question a diff answers is "where did the time go", so it ranks
** frames by the *absolute* change of their time (ms), self and total, not
** by the change of their share: a uniform slowdown moves every frame's time
** and no frame's share. Frames are matched by kind and label, not by key:
** keys are the host's (method ids, addresses) and need not be stable
** between two runs, names are.
**
** Sampling noise. A frame's time is the sum of the weights of the k
** samples charged to it. Which frame a sample is charged to is the
** sampling part: samples fall into a frame like a Poisson process, so the
** count has variance about k, and the time, variance about k * w^2 with w
** the weight of one sample. Only about one interval of a sample's weight
** is guessed, though: a long primitive that ends one sample in poll mode
** is charged its measured duration, exact but for the interval at its
** start. So w = min(ns / k, interval), and we use (k + 1) * w^2, so that
** a frame with no sample on one side still has the uncertainty of one (w
** then the interval). The change B - A has standard deviation sd =
** sqrt(varA + varB). A change is flagged as larger than sampling noise
** when |B - A| > z * sd, z being the two-sided normal
** quantile for a 5 % chance that *any* frame of the table is flagged by
** noise alone (Bonferroni over the m frames compared: z = Phi^-1(1 -
** 0.025 / m); 1.96 for one frame, 3.48 for 100). The interval says nothing
** about run-to-run variation (load, frequency scaling, caches): that is a
** real change of the time measured, and a diff of two runs on a busy
** machine will flag it.
*/
#include "config.h"

#include <spyon.h>
#include <spyon/report.h>

#include "report/format.h"
#include "report/walk.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The two sides' figures of one frame. */
typedef struct side {
  uint64_t self_ns, self_k, total_ns, total_k;
} side;

typedef struct entry {
  int kind;
  char *label;      /* malloc'd */
  side s[2];        /* in a, in b */
} entry;

typedef struct table {
  entry *e;
  size_t n, cap;
} table;

/* One ranked line of a table: an entry and its self or total figures. */
typedef struct line {
  const entry *e;
  double a, b, ka, kb; /* ns and tallies on each side */
  double delta, noise;
  int significant;
} line;

static int entry_cmp_key(const void *a, const void *b) {
  const entry *x = a, *y = b;
  if (x->kind != y->kind) return x->kind < y->kind ? -1 : 1;
  return strcmp(x->label, y->label);
}

/* Largest absolute change first; ties by the larger time, then by name. */
static int line_cmp(const void *a, const void *b) {
  const line *x = a, *y = b;
  double dx = fabs(x->delta), dy = fabs(y->delta);
  if (dx != dy) return dx < dy ? 1 : -1;
  double mx = fmax(x->a, x->b), my = fmax(y->a, y->b);
  if (mx != my) return mx < my ? 1 : -1;
  return entry_cmp_key(x->e, y->e);
}

/* ------------------------------------------------------------------------
** Collecting self and total time per frame
** --------------------------------------------------------------------- */

/* Self time of each frame is the sum over its nodes; total time is the
** sum over the nodes that have no ancestor on the same frame, so that
** recursion does not count twice (the walk keeps how often each frame is
** on the current path). Process roots are left out: their total is the
** process, shown in the header. */
static int per_frame(const spy_profile *p, side *out) {
  uint32_t *on = calloc(p->nframes + 1, sizeof *on);
  uint32_t *stack = malloc((p->nnodes + 1) * sizeof *stack);
  int rc = on && stack ? 0 : SPY_ENOMEM;
  for (size_t k = 0; k < p->nprocesses && rc == 0; k++) {
    uint32_t root = p->processes[k].root;
    if (root >= p->nnodes) {
      rc = SPY_EFORMAT;
      break;
    }
    /* Iterative preorder; a node is "left" when its subtree is done, which
    ** is when we move to its next sibling or back up to its parent. */
    size_t depth = 0, visited = 0;
    stack[depth++] = root;
    uint32_t n = root;
    for (;;) {
      const spy_node *nd = &p->nodes[n];
      if (nd->frame >= p->nframes || ++visited > p->nnodes) {
        rc = SPY_EFORMAT;
        break;
      }
      if (p->frames[nd->frame].kind != SPY_FRAME_ROOT) {
        side *s = &out[nd->frame];
        s->self_ns += nd->self_ns;
        s->self_k += nd->self_tallies;
        if (!on[nd->frame]) {
          s->total_ns += nd->total_ns;
          s->total_k += nd->tallies;
        }
      }
      on[nd->frame]++;
      if (nd->first_child != SPY_NONE) {
        if (nd->first_child >= p->nnodes || depth > p->nnodes) {
          rc = SPY_EFORMAT;
          break;
        }
        stack[depth++] = n = nd->first_child;
        continue;
      }
      /* Leave n and every ancestor with no next sibling. */
      while (depth) {
        uint32_t d = stack[--depth];
        on[p->nodes[d].frame]--;
        if (depth == 0) break; /* the root: its siblings are not ours */
        uint32_t sib = p->nodes[d].next_sibling;
        if (sib != SPY_NONE) {
          if (sib >= p->nnodes) {
            rc = SPY_EFORMAT;
            break;
          }
          stack[depth++] = n = sib;
          break;
        }
      }
      if (rc || depth == 0) break;
    }
  }
  free(on);
  free(stack);
  return rc;
}

/* Add every frame of p with time to t under side `which`. */
static int collect(table *t, const spy_profile *p, int which) {
  if (!p->nframes) return 0;
  side *fs = calloc(p->nframes, sizeof *fs);
  if (!fs) return SPY_ENOMEM;
  int rc = per_frame(p, fs);
  spyR_buf lab = {0};
  for (size_t i = 0; i < p->nframes && rc == 0; i++) {
    if (!fs[i].self_ns && !fs[i].total_ns && !fs[i].self_k && !fs[i].total_k)
      continue;
    if (t->n == t->cap) {
      size_t cap = t->cap ? 2 * t->cap : 64;
      entry *e = realloc(t->e, cap * sizeof *e);
      if (!e) {
        rc = SPY_ENOMEM;
        break;
      }
      t->e = e;
      t->cap = cap;
    }
    spyR_buf_clear(&lab);
    spyR_label_text(&lab, p, (uint32_t)i);
    char *s = lab.oom ? NULL : strdup(spyR_buf_str(&lab));
    if (!s) {
      rc = SPY_ENOMEM;
      break;
    }
    entry *e = &t->e[t->n++];
    memset(e, 0, sizeof *e);
    e->kind = (int)p->frames[i].kind;
    e->label = s;
    e->s[which] = fs[i];
  }
  spyR_buf_free(&lab);
  free(fs);
  return rc;
}

/* Sort by key and fold equal keys into one entry (summing both sides). */
static void fold(table *t) {
  if (!t->n) return;
  qsort(t->e, t->n, sizeof *t->e, entry_cmp_key);
  size_t w = 0;
  for (size_t r = 1; r < t->n; r++) {
    if (entry_cmp_key(&t->e[w], &t->e[r]) == 0) {
      for (int s = 0; s < 2; s++) { /* saturating */
        side *a = &t->e[w].s[s];
        const side *b = &t->e[r].s[s];
        a->self_ns = a->self_ns + b->self_ns < a->self_ns
                         ? UINT64_MAX : a->self_ns + b->self_ns;
        a->total_ns = a->total_ns + b->total_ns < a->total_ns
                          ? UINT64_MAX : a->total_ns + b->total_ns;
        a->self_k += b->self_k;
        a->total_k += b->total_k;
      }
      free(t->e[r].label);
    } else {
      t->e[++w] = t->e[r];
    }
  }
  t->n = w + 1;
}

/* ------------------------------------------------------------------------
** Noise
** --------------------------------------------------------------------- */

/* The z with P(|N(0,1)| > z) = alpha, by bisection on erfc (monotone;
** 100 halvings of [0, 40] are far below double precision). */
static double z_two_sided(double alpha) {
  double lo = 0, hi = 40;
  for (int i = 0; i < 100; i++) {
    double mid = (lo + hi) / 2;
    if (erfc(mid / M_SQRT2) > alpha) lo = mid;
    else hi = mid;
  }
  return (lo + hi) / 2;
}

/* The part of one sample's weight whose attribution is guessed: the
** sampling interval (the mean weight when the profile has none). */
static double mean_weight(const spy_profile *p) {
  if (p->interval_ns) return (double)p->interval_ns;
  if (p->tallies) return (double)spyR_base_ns(p) / (double)p->tallies;
  return 0;
}

/* The lines of one table (self: 1, total: 0), ranked, with their noise. */
static line *rank(const table *t, int self, const double w0[2], double *z) {
  line *l = calloc(t->n ? t->n : 1, sizeof *l);
  if (!l) return NULL;
  size_t m = 0;
  for (size_t i = 0; i < t->n; i++) {
    const side *a = &t->e[i].s[0], *b = &t->e[i].s[1];
    l[i].e = &t->e[i];
    l[i].a = (double)(self ? a->self_ns : a->total_ns);
    l[i].b = (double)(self ? b->self_ns : b->total_ns);
    l[i].ka = (double)(self ? a->self_k : a->total_k);
    l[i].kb = (double)(self ? b->self_k : b->total_k);
    l[i].delta = l[i].b - l[i].a;
    if (l[i].a || l[i].b) m++;
  }
  *z = z_two_sided(0.05 / (double)(m ? m : 1));
  for (size_t i = 0; i < t->n; i++) {
    double sd = sqrt(spyR_time_var(l[i].a, l[i].ka, w0[0]) +
                     spyR_time_var(l[i].b, l[i].kb, w0[1]));
    l[i].noise = *z * sd;
    l[i].significant = fabs(l[i].delta) > l[i].noise;
  }
  if (t->n) qsort(l, t->n, sizeof *l, line_cmp);
  return l;
}

static const char *kind_name(int kind) {
  switch (kind) {
  case SPY_FRAME_METHOD: return "method";
  case SPY_FRAME_PRIM: return "prim";
  case SPY_FRAME_GC: return "gc";
  case SPY_FRAME_REGION: return "region";
  case SPY_FRAME_NATIVE: return "native";
  case SPY_FRAME_CUT: return "cut";
  default: return "root";
  }
}

/* Both profiles' frames, folded and ready to rank. */
static int build(table *t, const spy_profile *a, const spy_profile *b) {
  int rc = collect(t, a, 0);
  if (rc == 0) rc = collect(t, b, 1);
  if (rc == 0) fold(t);
  return rc;
}

static void table_free(table *t) {
  for (size_t i = 0; i < t->n; i++) free(t->e[i].label);
  free(t->e);
}

/* ------------------------------------------------------------------------
** Text
** --------------------------------------------------------------------- */

/* ms with one decimal and thousands separators; signed when `sign`. */
static char *fmt_ms(char *out, double ns, int sign) {
  char v[48];
  spyR_fmt_fixed(v, ns / 1e6, 1);
  if (sign && v[0] != '-' && strcmp(v, "0.0") != 0)
    snprintf(out, 56, "+%s", v);
  else
    snprintf(out, 56, "%s", v);
  return out;
}

static void text_table(FILE *f, const char *title, const line *l, size_t n,
                       double z, const spy_report_options *o, double base[2]) {
  fprintf(f, "\n**%s time** by frame, largest change first "
             "(* beyond sampling noise, z = %.2f)\n", title, z);
  fprintf(f, "%12s  %12s  %13s  %10s  %-6s  %s\n", "A ms", "B ms",
          "change ms", "noise ms", "kind", "name");
  size_t shown = 0;
  for (size_t i = 0; i < n && shown < o->leaves; i++) {
    if (!l[i].a && !l[i].b) continue;
    if (fmax(spyR_pct((uint64_t)l[i].a, (uint64_t)base[0]),
             spyR_pct((uint64_t)l[i].b, (uint64_t)base[1])) < o->threshold_pct)
      continue;
    char a[56], b[56], d[56], e[56], nz[64];
    fmt_ms(a, l[i].a, 0);
    fmt_ms(b, l[i].b, 0);
    snprintf(d, sizeof d, "%s %s", fmt_ms(e, l[i].delta, 1),
             l[i].significant ? "*" : " ");
    snprintf(nz, sizeof nz, "+-%s", fmt_ms(e, l[i].noise, 0));
    fprintf(f, "%12s  %12s  %13s  %10s  %-6s  %s\n", a, b, d, nz,
            kind_name(l[i].e->kind), l[i].e->label);
    shown++;
  }
  if (!shown) fputs("(no frame at or above the threshold)\n", f);
}

int spy_report_diff(const spy_profile *a, const spy_profile *b, FILE *f,
                    const spy_report_options *o) {
  spy_report_options def;
  if (!a || !b || !f) return SPY_EINVAL;
  if (!o) {
    spy_report_options_init(&def);
    o = &def;
  }
  if (!(o->threshold_pct >= 0)) return SPY_EINVAL;
  table t = {0};
  line *ls = NULL, *lt = NULL;
  double zs = 0, zt = 0, w0[2] = {mean_weight(a), mean_weight(b)};
  int rc = build(&t, a, b);
  if (rc == 0 && (!(ls = rank(&t, 1, w0, &zs)) || !(lt = rank(&t, 0, w0, &zt))))
    rc = SPY_ENOMEM;
  if (rc == 0) {
    double base[2] = {(double)spyR_base_ns(a), (double)spyR_base_ns(b)};
    char x[32], y[32], u[32], v[32], d[56];
    fprintf(f, "**Diff** A -> B: where the time changed\n");
    fprintf(f, "A: %s tallies, %s msec.\n", spyR_fmt_group(x, a->tallies),
            spyR_fmt_group(y, spyR_ms(a->wall_ns)));
    fprintf(f, "B: %s tallies, %s msec (%s msec", spyR_fmt_group(u, b->tallies),
            spyR_fmt_group(v, spyR_ms(b->wall_ns)),
            fmt_ms(d, (double)b->wall_ns - (double)a->wall_ns, 1));
    double dw = (double)b->wall_ns - (double)a->wall_ns;
    if (a->wall_ns) fprintf(f, ", %+.1f %%", 100.0 * dw / (double)a->wall_ns);
    fputs(").\n", f);
    fputs("noise: +- z standard deviations of the time estimated from the "
          "tally counts\n(Poisson); z holds the chance that any line is "
          "flagged by noise alone to 5 %.\n", f);
    text_table(f, "Self", ls, t.n, zs, o, base);
    text_table(f, "Total", lt, t.n, zt, o, base);
  }
  free(ls);
  free(lt);
  table_free(&t);
  if (fflush(f) != 0 || ferror(f)) return rc ? rc : SPY_EIO;
  return rc;
}

/* ------------------------------------------------------------------------
** JSON
** --------------------------------------------------------------------- */

static void json_lines(spyR_buf *j, const line *l, size_t n, double z) {
  spyR_buf_printf(j, "{\"z\":%.6g,\"frames\":[", z);
  size_t k = 0;
  for (size_t i = 0; i < n; i++) {
    if (!l[i].a && !l[i].b) continue;
    spyR_buf_puts(j, k++ ? ",\n{\"kind\":\"" : "\n{\"kind\":\"");
    spyR_buf_puts(j, kind_name(l[i].e->kind));
    spyR_buf_puts(j, "\",\"name\":");
    spyR_json_str(j, l[i].e->label);
    spyR_buf_printf(j, ",\"a_ns\":%.0f,\"b_ns\":%.0f,\"a_tallies\":%.0f,"
                       "\"b_tallies\":%.0f,\"change_ns\":%.0f,"
                       "\"noise_ns\":%.0f,\"significant\":%s}",
                    l[i].a, l[i].b, l[i].ka, l[i].kb, l[i].delta, l[i].noise,
                    l[i].significant ? "true" : "false");
  }
  spyR_buf_puts(j, "]}");
}

int spy_report_diff_json(const spy_profile *a, const spy_profile *b,
                         FILE *f) {
  if (!a || !b || !f) return SPY_EINVAL;
  table t = {0};
  line *ls = NULL, *lt = NULL;
  double zs = 0, zt = 0, w0[2] = {mean_weight(a), mean_weight(b)};
  spyR_buf j = {0};
  int rc = build(&t, a, b);
  if (rc == 0 && (!(ls = rank(&t, 1, w0, &zs)) || !(lt = rank(&t, 0, w0, &zt))))
    rc = SPY_ENOMEM;
  if (rc == 0) {
    const spy_profile *pp[2] = {a, b};
    spyR_buf_puts(&j, "{");
    for (int s = 0; s < 2; s++)
      spyR_buf_printf(&j, "\"%s\":{\"tallies\":%" PRIu64 ",\"wall_ns\":%" PRIu64
                          "},\n", s ? "b" : "a", pp[s]->tallies,
                      pp[s]->wall_ns);
    spyR_buf_puts(&j, "\"self\":");
    json_lines(&j, ls, t.n, zs);
    spyR_buf_puts(&j, ",\n\"total\":");
    json_lines(&j, lt, t.n, zt);
    spyR_buf_puts(&j, "}\n");
    if (j.oom) rc = SPY_ENOMEM;
    else fwrite(j.s, 1, j.len, f);
  }
  free(ls);
  free(lt);
  table_free(&t);
  spyR_buf_free(&j);
  if (fflush(f) != 0 || ferror(f)) return rc ? rc : SPY_EIO;
  return rc;
}

/* ------------------------------------------------------------------------
** Differential folded stacks
** --------------------------------------------------------------------- */

/* One folded stack with its weight on each side. */
typedef struct fline {
  char *stack; /* points into a folded text */
  uint64_t n[2];
} fline;

static int fline_cmp(const void *a, const void *b) {
  return strcmp(((const fline *)a)->stack, ((const fline *)b)->stack);
}

/* Split folded text (modified in place) into lines of side `which`. */
static int split_folded(char *text, int which, fline **v, size_t *n,
                        size_t *cap) {
  for (char *l = text; *l;) {
    char *e = strchr(l, '\n');
    if (!e) break;
    *e = '\0';
    char *sp = strrchr(l, ' ');
    if (sp) {
      *sp = '\0';
      if (*n == *cap) {
        size_t c = *cap ? *cap * 2 : 256;
        fline *nv = realloc(*v, c * sizeof *nv);
        if (!nv) return SPY_ENOMEM;
        *v = nv;
        *cap = c;
      }
      fline *fl = &(*v)[(*n)++];
      fl->stack = l;
      fl->n[which] = strtoull(sp + 1, NULL, 10);
      fl->n[!which] = 0;
    }
    l = e + 1;
  }
  return 0;
}

int spy_report_diff_folded(const spy_profile *a, const spy_profile *b,
                           FILE *f) {
  if (!a || !b || !f) return SPY_EINVAL;
  char *text[2] = {NULL, NULL};
  size_t len[2];
  fline *v = NULL;
  size_t n = 0, cap = 0;
  int rc = 0;
  for (int s = 0; s < 2 && rc == 0; s++) {
    FILE *m = open_memstream(&text[s], &len[s]);
    if (!m) {
      rc = SPY_ENOMEM;
      break;
    }
    rc = spy_report_folded(s ? b : a, m, 0);
    if (fclose(m) != 0 && rc == 0) rc = SPY_ENOMEM;
    if (rc == 0) rc = split_folded(text[s], s, &v, &n, &cap);
  }
  if (rc == 0 && n) {
    /* Equal stacks side by side, then summed into one line. */
    qsort(v, n, sizeof *v, fline_cmp);
    size_t w = 0;
    for (size_t r = 1; r < n; r++) {
      if (!strcmp(v[w].stack, v[r].stack)) {
        v[w].n[0] += v[r].n[0];
        v[w].n[1] += v[r].n[1];
      } else {
        v[++w] = v[r];
      }
    }
    n = w + 1;
    for (size_t i = 0; i < n; i++)
      fprintf(f, "%s %" PRIu64 " %" PRIu64 "\n", v[i].stack, v[i].n[0],
              v[i].n[1]);
  }
  free(v);
  free(text[0]);
  free(text[1]);
  if (fflush(f) != 0 || ferror(f)) return rc ? rc : SPY_EIO;
  return rc;
}
