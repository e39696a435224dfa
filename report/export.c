/*
** report/export.c: folded stacks and speedscope JSON.
**
** Both are "one stack per node with self time" views of the trees. They
** reuse the tree walker with no threshold and no wrap: rows come in
** depth-first order, so keeping path[depth] = node gives each row's stack
** root first without following parent links.
*/
#include "config.h"

#include "report/format.h"
#include <spyon/report.h>
#include "report/walk.h"

#include <stdlib.h>
#include <string.h>

/* The current root-first path, grown as rows get deeper. */
typedef struct path {
  uint32_t *node;
  size_t cap;
} path;

static int path_set(path *pa, unsigned depth, uint32_t node) {
  if (depth >= pa->cap) {
    size_t cap = pa->cap ? pa->cap * 2 : 64;
    while (cap <= depth) cap *= 2;
    uint32_t *n = realloc(pa->node, cap * sizeof *n);
    if (!n) return SPY_ENOMEM;
    pa->node = n;
    pa->cap = cap;
  }
  pa->node[depth] = node;
  return 0;
}

/* ------------------------------------------------------------------------
** Folded stacks
** --------------------------------------------------------------------- */

/* The line is kept as the path's labels: off[d] is where the label of the
** row at depth d starts (off[0]: after "PROCESS"). Rows come depth first,
** so a row only cuts the line back to its depth and appends itself, and
** each label is formatted once however deep the tree. */
typedef struct folded {
  FILE *f;
  int tallies; /* weights: 1 self samples, 0 self microseconds */
  size_t *off;
  size_t cap;
  spyR_buf line, lab;
} folded;

/* ';' separates frames and the count ends the line, so neither a ';' nor
** a line break may appear inside a name. */
static void add_clean(spyR_buf *b, const char *s, size_t n) {
  size_t start = b->len;
  spyR_buf_add(b, s, n);
  if (b->oom) return;
  for (size_t i = start; i < b->len; i++) {
    unsigned char c = (unsigned char)b->s[i];
    if (c == ';' || c < 0x20 || c == 0x7f) b->s[i] = '_';
  }
}

static uint64_t weight_of(int by_tallies, uint64_t ns, uint64_t tallies) {
  return by_tallies ? tallies : (ns + 500) / 1000;
}

static int folded_row(void *ud, const spy_profile *p, const spyR_row *row) {
  folded *fo = ud;
  if (row->depth + 1 >= fo->cap) {
    size_t cap = fo->cap * 2;
    while (cap <= row->depth + 1) cap *= 2;
    size_t *n = realloc(fo->off, cap * sizeof *n);
    if (!n) return SPY_ENOMEM;
    fo->off = n;
    fo->cap = cap;
  }
  fo->line.len = fo->off[row->depth];
  spyR_buf_clear(&fo->lab);
  spyR_label(&fo->lab, p, p->nodes[row->node].frame);
  spyR_buf_add(&fo->line, ";", 1);
  add_clean(&fo->line, spyR_buf_str(&fo->lab), fo->lab.len);
  if (fo->line.oom || fo->lab.oom) return SPY_ENOMEM;
  fo->off[row->depth + 1] = fo->line.len;
  const spy_node *nd = &p->nodes[row->node];
  uint64_t n = weight_of(fo->tallies, nd->self_ns, nd->self_tallies);
  if (n) fprintf(fo->f, "%s %" PRIu64 "\n", fo->line.s, n);
  return 0;
}

int spy_report_folded(const spy_profile *p, FILE *f, int tallies) {
  if (!p || !f) return SPY_EINVAL;
  uint32_t *ix = spyR_process_order(p);
  if (!ix) return SPY_ENOMEM;
  folded fo = {f, tallies != 0, malloc(64 * sizeof(size_t)), 64, {0}, {0}};
  int rc = fo.off ? 0 : SPY_ENOMEM;
  for (size_t k = 0; k < p->nprocesses && rc == 0; k++) {
    const spy_process *pr = &p->processes[ix[k]];
    if (pr->root >= p->nnodes) {
      rc = SPY_EFORMAT;
      break;
    }
    spyR_buf_clear(&fo.line);
    add_clean(&fo.line, pr->name ? pr->name : "?",
              strlen(pr->name ? pr->name : "?"));
    fo.off[0] = fo.line.len;
    /* Time charged to the process root itself (no frame at all). */
    const spy_node *root = &p->nodes[pr->root];
    uint64_t n = weight_of(fo.tallies, root->self_ns, root->self_tallies);
    if (n && !fo.line.oom)
      fprintf(f, "%s %" PRIu64 "\n", fo.line.s, n);
    rc = spyR_walk(p, ix[k], 0, 0, folded_row, &fo);
  }
  if (rc == 0 && (fo.line.oom || fo.lab.oom)) rc = SPY_ENOMEM;
  free(ix);
  free(fo.off);
  spyR_buf_free(&fo.line);
  spyR_buf_free(&fo.lab);
  if (fflush(f) != 0 || ferror(f)) return rc ? rc : SPY_EIO;
  return rc;
}

/* ------------------------------------------------------------------------
** speedscope
** --------------------------------------------------------------------- */

/* Samples stream to f in 64 KiB pieces (they are the bulk of the file);
** weights are kept until the samples are done, and endValue, the sum, is
** written last (JSON objects are unordered). */
typedef struct scope {
  FILE *f;
  path pa;
  spyR_buf samples, weights;
  uint64_t sum;
  size_t count;
} scope;

/* Append one sample: the frames of path[from..to] and its weight. */
static void scope_sample(scope *sc, const spy_profile *p, unsigned from,
                         unsigned to, uint64_t ns) {
  spyR_buf_puts(&sc->samples, sc->count ? ",[" : "[");
  for (unsigned d = from; d <= to; d++) {
    /* Stacks dominate the file; printf per index was the bottleneck. */
    char num[12], *e = num + sizeof num, *q = e;
    uint32_t v = p->nodes[sc->pa.node[d]].frame;
    do *--q = (char)('0' + v % 10);
    while (v /= 10);
    if (d > from) *--q = ',';
    spyR_buf_add(&sc->samples, q, (size_t)(e - q));
  }
  spyR_buf_puts(&sc->samples, "]");
  spyR_buf_printf(&sc->weights, sc->count ? ",%" PRIu64 : "%" PRIu64, ns);
  sc->sum = sc->sum + ns < sc->sum ? UINT64_MAX : sc->sum + ns;
  sc->count++;
  if (sc->samples.len >= 65536 && !sc->samples.oom) {
    fwrite(sc->samples.s, 1, sc->samples.len, sc->f);
    spyR_buf_clear(&sc->samples);
  }
}

/* path[0] is the process root and rows start one below it. Stacks start
** at the root's children, as the tree does; the root's own frame appears
** only in the sample for time charged to the root alone. */
static int scope_row(void *ud, const spy_profile *p, const spyR_row *row) {
  scope *sc = ud;
  if (path_set(&sc->pa, row->depth + 1, row->node)) return SPY_ENOMEM;
  uint64_t ns = p->nodes[row->node].self_ns;
  if (ns) scope_sample(sc, p, 1, row->depth + 1, ns);
  return sc->samples.oom || sc->weights.oom ? SPY_ENOMEM : 0;
}

int spy_report_speedscope(const spy_profile *p, FILE *f, const char *name) {
  if (!p || !f) return SPY_EINVAL;
  uint32_t *ix = spyR_process_order(p);
  if (!ix) return SPY_ENOMEM;
  spyR_buf b = {0};
  scope sc = {f, {0}, {0}, {0}, 0, 0};
  int rc = 0;
  if (!name) name = p->command && *p->command ? p->command : "spyon";
  spyR_buf_puts(&b, "{\"$schema\":"
                    "\"https://www.speedscope.app/file-format-schema.json\",\n"
                    "\"exporter\":\"spyon " SPY_VERSION_STRING "\",\n"
                    "\"name\":");
  spyR_json_str(&b, name);
  spyR_buf_printf(&b, ",\n\"activeProfileIndex\":0,\n\"shared\":{\"frames\":[");
  spyR_buf lab = {0};
  for (size_t i = 0; i < p->nframes; i++) {
    spyR_buf_clear(&lab);
    spyR_label(&lab, p, (uint32_t)i);
    spyR_buf_puts(&b, i ? ",\n{\"name\":" : "\n{\"name\":");
    spyR_json_str(&b, spyR_buf_str(&lab));
    spyR_buf_puts(&b, "}");
    if (b.len > 65536 && !b.oom) {
      fwrite(b.s, 1, b.len, f);
      spyR_buf_clear(&b);
    }
  }
  spyR_buf_puts(&b, "]},\n\"profiles\":[");
  for (size_t k = 0; k < p->nprocesses && rc == 0; k++) {
    const spy_process *pr = &p->processes[ix[k]];
    if (pr->root >= p->nnodes) {
      rc = SPY_EFORMAT;
      break;
    }
    spyR_buf_clear(&sc.samples);
    spyR_buf_clear(&sc.weights);
    sc.sum = 0;
    sc.count = 0;
    spyR_buf_puts(&b, k ? ",\n{" : "\n{");
    spyR_buf_puts(&b, "\"type\":\"sampled\",\"name\":");
    spyR_buf_clear(&lab);
    spyR_buf_printf(&lab, "%s (pid %" PRIu64 ")", pr->name ? pr->name : "?",
                    pr->pid);
    spyR_json_str(&b, spyR_buf_str(&lab));
    spyR_buf_puts(&b, ",\"unit\":\"nanoseconds\",\"startValue\":0,"
                      "\n\"samples\":[");
    if (b.oom) {
      rc = SPY_ENOMEM;
      break;
    }
    fwrite(b.s, 1, b.len, f);
    spyR_buf_clear(&b);
    if ((rc = path_set(&sc.pa, 0, pr->root)) != 0) break;
    if (p->nodes[pr->root].self_ns)
      scope_sample(&sc, p, 0, 0, p->nodes[pr->root].self_ns);
    if ((rc = spyR_walk(p, ix[k], 0, 0, scope_row, &sc)) != 0) break;
    if (sc.samples.oom || sc.weights.oom) {
      rc = SPY_ENOMEM;
      break;
    }
    fwrite(spyR_buf_str(&sc.samples), 1, sc.samples.len, f);
    spyR_buf_puts(&b, "],\n\"weights\":[");
    spyR_buf_add(&b, spyR_buf_str(&sc.weights), sc.weights.len);
    spyR_buf_printf(&b, "],\n\"endValue\":%" PRIu64 "}", sc.sum);
  }
  spyR_buf_puts(&b, "]}\n");
  if (rc == 0 && (b.oom || lab.oom || sc.samples.oom || sc.weights.oom))
    rc = SPY_ENOMEM;
  if (rc == 0) fwrite(b.s, 1, b.len, f);
  free(ix);
  free(sc.pa.node);
  spyR_buf_free(&b);
  spyR_buf_free(&lab);
  spyR_buf_free(&sc.samples);
  spyR_buf_free(&sc.weights);
  if (fflush(f) != 0 || ferror(f)) return rc ? rc : SPY_EIO;
  return rc;
}
