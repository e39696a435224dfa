/*
** report/diff.c: which frames' self time changed between two profiles.
**
** Frames are matched by kind and label, not by key: keys are the host's
** (method ids, addresses) and need not be stable between two runs, names
** are. Shares are of each profile's own time (spyR_base_ns), so a run that
** is faster overall still shows where the remaining time went.
*/
#include "config.h"

#include <spyon.h>

#include "report/format.h"
#include "report/report.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct entry {
  int kind;
  char *label;      /* malloc'd */
  uint64_t ns[2];   /* self time in a, in b */
  double pct[2];
} entry;

typedef struct table {
  entry *e;
  size_t n, cap;
} table;

static int entry_cmp_key(const void *a, const void *b) {
  const entry *x = a, *y = b;
  if (x->kind != y->kind) return x->kind < y->kind ? -1 : 1;
  return strcmp(x->label, y->label);
}

/* Largest change first; ties by the larger share, then by name. */
static int entry_cmp_change(const void *a, const void *b) {
  const entry *x = a, *y = b;
  double dx = fabs(x->pct[1] - x->pct[0]), dy = fabs(y->pct[1] - y->pct[0]);
  if (dx != dy) return dx < dy ? 1 : -1;
  double mx = fmax(x->pct[0], x->pct[1]), my = fmax(y->pct[0], y->pct[1]);
  if (mx != my) return mx < my ? 1 : -1;
  return entry_cmp_key(a, b);
}

/* Add every frame of p with self time to t under side `side`. */
static int collect(table *t, const spy_profile *p, int side) {
  if (!p->nframes) return 0;
  spy_leaf *lv = malloc(p->nframes * sizeof *lv);
  if (!lv) return SPY_ENOMEM;
  int k = spy_profile_leaves(p, lv, p->nframes);
  spyR_buf lab = {0};
  int rc = k < 0 ? k : 0;
  for (int i = 0; i < k && rc == 0; i++) {
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
    spyR_label_text(&lab, p, lv[i].frame);
    char *s = lab.oom ? NULL : strdup(spyR_buf_str(&lab));
    if (!s) {
      rc = SPY_ENOMEM;
      break;
    }
    entry *e = &t->e[t->n++];
    memset(e, 0, sizeof *e);
    e->kind = (int)p->frames[lv[i].frame].kind;
    e->label = s;
    e->ns[side] = lv[i].self_ns;
  }
  spyR_buf_free(&lab);
  free(lv);
  return rc;
}

/* Sort by key and fold equal keys into one entry (summing both sides). */
static void merge(table *t) {
  if (!t->n) return;
  qsort(t->e, t->n, sizeof *t->e, entry_cmp_key);
  size_t w = 0;
  for (size_t r = 1; r < t->n; r++) {
    if (entry_cmp_key(&t->e[w], &t->e[r]) == 0) {
      for (int k = 0; k < 2; k++) /* saturating */
        t->e[w].ns[k] = t->e[w].ns[k] + t->e[r].ns[k] < t->e[w].ns[k]
                            ? UINT64_MAX : t->e[w].ns[k] + t->e[r].ns[k];
      free(t->e[r].label);
    } else {
      t->e[++w] = t->e[r];
    }
  }
  t->n = w + 1;
}

int spyR_write_diff(const spy_profile *a, const spy_profile *b, FILE *f,
                    const spy_report_options *o) {
  spy_report_options def;
  if (!a || !b || !f) return SPY_EINVAL;
  if (!o) {
    spy_report_options_init(&def);
    o = &def;
  }
  if (!(o->threshold_pct >= 0)) return SPY_EINVAL;
  table t = {0};
  int rc = collect(&t, a, 0);
  if (rc == 0) rc = collect(&t, b, 1);
  if (rc == 0) {
    merge(&t);
    uint64_t base[2] = {spyR_base_ns(a), spyR_base_ns(b)};
    for (size_t i = 0; i < t.n; i++)
      for (int s = 0; s < 2; s++)
        t.e[i].pct[s] = spyR_pct(t.e[i].ns[s], base[s]);
    if (t.n) qsort(t.e, t.n, sizeof *t.e, entry_cmp_change);
    char x[32], y[32], u[32], v[32];
    fprintf(f, "**Diff** self time by frame, A -> B\n");
    fprintf(f, "A: %s tallies, %s msec.\n", spyR_fmt_group(x, a->tallies),
            spyR_fmt_group(y, spyR_ms(a->wall_ns)));
    fprintf(f, "B: %s tallies, %s msec.\n", spyR_fmt_group(u, b->tallies),
            spyR_fmt_group(v, spyR_ms(b->wall_ns)));
    fprintf(f, "%14s  %14s  %8s  %s\n", "A % (ms)", "B % (ms)", "change",
            "name");
    size_t shown = 0;
    for (size_t i = 0; i < t.n && shown < o->leaves; i++) {
      const entry *e = &t.e[i];
      if (fmax(e->pct[0], e->pct[1]) < o->threshold_pct) continue;
      char ca[64], cb[64];
      snprintf(ca, sizeof ca, "%.2f (%s)", e->pct[0],
               spyR_fmt_group(x, spyR_ms(e->ns[0])));
      snprintf(cb, sizeof cb, "%.2f (%s)", e->pct[1],
               spyR_fmt_group(y, spyR_ms(e->ns[1])));
      /* Signed change in percentage points; no sign when it rounds to 0. */
      char dd[48], sd[56];
      spyR_fmt_fixed(dd, e->pct[1] - e->pct[0], 2);
      snprintf(sd, sizeof sd, "%s%s",
               dd[0] != '-' && strcmp(dd, "0.00") != 0 ? "+" : "", dd);
      fprintf(f, "%14s  %14s  %8s  %s\n", ca, cb, sd, e->label);
      shown++;
    }
    if (!shown) fputs("(no frame at or above the threshold)\n", f);
  }
  for (size_t i = 0; i < t.n; i++) free(t.e[i].label);
  free(t.e);
  if (fflush(f) != 0 || ferror(f)) return rc ? rc : SPY_EIO;
  return rc;
}

/* The public name (include/spyon.h). */
int spy_report_diff(const spy_profile *before, const spy_profile *after,
                    FILE *f, const spy_report_options *o) {
  return spyR_write_diff(before, after, f, o);
}
