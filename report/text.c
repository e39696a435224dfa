/*
** report/text.c: the text report (spy_report_text), laid out like the
** AndreasSystemProfiler report of seed 004: a header line with tallies and
** msec, the tree per process with `|` guides, the leaves, then the sections
** seed 004 lacked and seed 003 asked for: primitives, the longest single
** steps, GC and the exact region timers. docs/report.md explains how to read
** it; tests/data/report/ holds examples that the tests compare exactly.
*/
#include "config.h"

#include <spyon.h>
#include <spyon/report.h>

#include "report/format.h"
#include "report/walk.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* How many innermost frames of a step's stack are listed. */
enum { STEP_FRAMES = 6 };

void spy_report_options_init(spy_report_options *o) {
  if (!o) return;
  o->threshold_pct = 0.5;
  o->leaves = 40;
  o->longest = 10;
  o->sections = SPY_REPORT_ALL;
  o->width = 0;
}

/* Everything a section writer needs. */
typedef struct ctx {
  const spy_profile *p;
  const spy_report_options *o;
  FILE *f;
  uint64_t base;  /* what percentages are shares of */
  spyR_buf lab;   /* scratch for labels */
  size_t rows;    /* tree rows written for the current process */
} ctx;

/* The label of a frame cut to the report's name width, in c->lab. */
static const char *label(ctx *c, uint32_t frame) {
  spyR_buf_clear(&c->lab);
  spyR_label_text(&c->lab, c->p, frame);
  spyR_truncate(&c->lab, c->o->width > 0 ? (size_t)c->o->width : 0);
  return spyR_buf_str(&c->lab);
}

/* "24.69 (1,235)": a share of the profile and whole milliseconds, the
** seed's number pair, used by the tree, the process lines and the leaves. */
static void pct_ms(char *out, size_t len, uint64_t ns, uint64_t base) {
  char ms[32];
  snprintf(out, len, "%.2f (%s)", spyR_pct(ns, base),
           spyR_fmt_group(ms, spyR_ms(ns)));
}

/* ------------------------------------------------------------------------
** Header
** --------------------------------------------------------------------- */

/* Below this much profiled time the hooks' own-time estimate rests on too
** few timed calls to print. */
#define OVERHEAD_MIN_NS 100000000u

static void header(ctx *c) {
  const spy_profile *p = c->p;
  char a[32], b[32];
  fprintf(c->f, "Reporting - %s tallies, %s msec.\n",
          spyR_fmt_group(a, p->tallies),
          spyR_fmt_group(b, spyR_ms(p->wall_ns)));
  const char *mode = p->mode == SPY_MODE_POLL    ? "poll"
                     : p->mode == SPY_MODE_TIMER ? "timer"
                                                 : "unknown";
  char iv[48];
  spyR_buf_clear(&c->lab);
  spyR_buf_puts_esc(&c->lab, p->clock && *p->clock ? p->clock : "unknown");
  fprintf(c->f, "interval:  %s, %s mode, clock %s\n",
          spyR_fmt_duration(iv, p->interval_ns), mode, spyR_buf_str(&c->lab));
  fprintf(c->f, "processes: %zu\n", p->nprocesses);
  fprintf(c->f, "dropped:   %s samples, %s cost observations\n",
          spyR_fmt_group(a, p->dropped), spyR_fmt_group(b, p->obs_dropped));
  if (p->interval_ns && p->wall_ns) {
    /* A hostile profile can claim more tallies than a uint64_t of rate:
    ** clamp before converting (a double out of range is undefined). */
    double taken = (double)p->tallies * 1e9 / (double)p->wall_ns + 0.5;
    if (taken > 1.8e19) taken = 1.8e19;
    fprintf(c->f, "rate:      %s samples/s asked, %s/s taken\n",
            spyR_fmt_group(a, (uint64_t)(1e9 / (double)p->interval_ns + 0.5)),
            spyR_fmt_group(b, (uint64_t)taken));
  }
  /* The hooks time a sample of their calls (vm-hooks/hooks.c), so the
  ** figure is an estimate for the interpreter threads alone; a short run
  ** rests on a few timings, and one preempted timing can make it exceed
  ** the run: then say so instead of printing a number. */
  if (p->wall_ns < OVERHEAD_MIN_NS)
    fprintf(c->f, "overhead:  not measured (run under %d ms)\n",
            (int)(OVERHEAD_MIN_NS / 1000000));
  else if (p->hook_ns > p->wall_ns / 2)
    fputs("overhead:  not measured (hook timings disturbed)\n", c->f);
  else
    fprintf(c->f, "overhead:  %.2f %% of wall time in hooks (%s ms; "
            "interpreter threads, estimated)\n",
            spyR_pct(p->hook_ns, p->wall_ns),
            spyR_fmt_group(a, spyR_ms(p->hook_ns)));
  if (p->start_unix_ns) {
    time_t t = (time_t)(p->start_unix_ns / 1000000000u);
    struct tm tm;
    char when[64];
    if (gmtime_r(&t, &tm) && strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S",
                                      &tm))
      fprintf(c->f, "started:   %s UTC\n", when);
  }
  spyR_buf_clear(&c->lab);
  spyR_buf_puts_esc(&c->lab, p->command && *p->command ? p->command
                                                        : "(not recorded)");
  fprintf(c->f, "command:   %s\n", spyR_buf_str(&c->lab));
}

/* ------------------------------------------------------------------------
** Tree
** --------------------------------------------------------------------- */

/* The text sink: one line per row, "GUIDES PCT (MS)  LABEL". */
static int tree_row(void *ud, const spy_profile *p, const spyR_row *row) {
  ctx *c = ud;
  char num[64];
  c->rows++;
  pct_ms(num, sizeof num, p->nodes[row->node].total_ns, c->base);
  fprintf(c->f, "%s%s  %s\n", row->guides, num,
          label(c, p->nodes[row->node].frame));
  return 0;
}

static int tree(ctx *c) {
  const spy_profile *p = c->p;
  double min_ns = c->o->threshold_pct / 100.0 * (double)c->base;
  fputs("**Tree**\n", c->f);
  uint32_t *ix = spyR_process_order(p);
  if (!ix) return SPY_ENOMEM;
  size_t hidden = 0;
  int rc = 0;
  for (size_t k = 0; k < p->nprocesses && rc == 0; k++) {
    const spy_process *pr = &p->processes[ix[k]];
    if ((double)pr->total_ns < min_ns || (min_ns <= 0 && !pr->total_ns)) {
      hidden++;
      continue;
    }
    char num[64];
    pct_ms(num, sizeof num, pr->total_ns, c->base);
    spyR_buf_clear(&c->lab);
    spyR_buf_puts_esc(&c->lab, pr->name ? pr->name : "?");
    fprintf(c->f, "--------------------------------\n"
                  "Process: %s (pid %" PRIu64 ") - %s\n"
                  "--------------------------------\n",
            spyR_buf_str(&c->lab), pr->pid, num);
    c->rows = 0;
    rc = spyR_walk(p, ix[k], c->o->threshold_pct, SPYR_WRAP_DEFAULT, tree_row,
                   c);
    if (rc == 0 && c->rows == 0)
      fprintf(c->f, "(nothing at or above %.2f %%)\n", c->o->threshold_pct);
  }
  if (rc == 0 && p->nprocesses == 0) fputs("(none)\n", c->f);
  if (rc == 0 && hidden)
    fprintf(c->f, "(%zu process%s under %.2f %% not shown)\n", hidden,
            hidden == 1 ? "" : "es", c->o->threshold_pct);
  free(ix);
  return rc;
}

/* ------------------------------------------------------------------------
** Leaves
** --------------------------------------------------------------------- */

static int leaves(ctx *c) {
  const spy_profile *p = c->p;
  fputs("**Leaves**\n", c->f);
  size_t n = p->nframes, shown = 0;
  spy_leaf *lv = n ? malloc(n * sizeof *lv) : NULL;
  if (n && !lv) return SPY_ENOMEM;
  int k = n ? spy_profile_leaves(p, lv, n) : 0;
  if (k < 0) {
    free(lv);
    return k;
  }
  /* The same visibility test as the tree's (spyR_walk). */
  double min_ns = c->o->threshold_pct / 100.0 * (double)c->base;
  for (int i = 0; i < k && shown < c->o->leaves; i++) {
    if ((double)lv[i].self_ns < min_ns) break;
    char num[64];
    pct_ms(num, sizeof num, lv[i].self_ns, c->base);
    fprintf(c->f, "%s  %s\n", num, label(c, lv[i].frame));
    shown++;
  }
  if (!shown) fputs("(none)\n", c->f);
  free(lv);
  return 0;
}

/* ------------------------------------------------------------------------
** Tables: primitives, GC, regions share one row layout
** --------------------------------------------------------------------- */

#define TABLE_HEAD "    calls   total ms     mean us      max us  wall %"
#define TABLE_INDENT 56 /* columns before the name */
#define TABLE_HEAD_PM "    calls   total ms     +- ms     mean us      max us  wall %"
#define TABLE_INDENT_PM 66

/* "calls total-ms mean-us max-us wall%" in fixed columns; with pm_ns >= 0,
** "+- ms" after the total (TABLE_HEAD_PM). */
static void table_row(ctx *c, uint64_t calls, uint64_t total_ns,
                      double pm_ns, uint64_t max_ns) {
  char n1[32], n2[48], n3[48], n4[48], n5[48];
  double mean_us = calls ? (double)total_ns / (double)calls / 1000.0 : 0;
  fprintf(c->f, "%9s %10s", spyR_fmt_group(n1, calls),
          spyR_fmt_fixed(n2, (double)total_ns / 1e6, 1));
  if (pm_ns >= 0) fprintf(c->f, " %9s", spyR_fmt_fixed(n5, pm_ns / 1e6, 1));
  fprintf(c->f, " %11s %11s %7.2f", spyR_fmt_fixed(n3, mean_us, 1),
          spyR_fmt_fixed(n4, (double)max_ns / 1000.0, 1),
          spyR_pct(total_ns, c->p->wall_ns));
}

/* qsort has no context argument: the profile being sorted. Reports are
** written from one thread at a time per profile... but not necessarily one
** profile at a time, hence thread-local. */
static _Thread_local const spy_profile *sorting;

/* Primitives by total time, heaviest first, then by name, then by index:
** a total order, so the report is the same whatever qsort does. */
static int prim_order(const void *x, const void *y) {
  uint32_t i = *(const uint32_t *)x, j = *(const uint32_t *)y;
  const spy_profile_prim *a = &sorting->prims[i], *b = &sorting->prims[j];
  if (a->total_ns != b->total_ns) return a->total_ns > b->total_ns ? -1 : 1;
  int d = strcmp(a->name ? a->name : "", b->name ? b->name : "");
  if (d) return d;
  return (i > j) - (i < j);
}

/* Steps longest first, then in the profile's order. */
static int step_order(const void *x, const void *y) {
  uint32_t i = *(const uint32_t *)x, j = *(const uint32_t *)y;
  uint64_t a = sorting->steps[i].ns, b = sorting->steps[j].ns;
  if (a != b) return a > b ? -1 : 1;
  return (i > j) - (i < j);
}

static int prims(ctx *c) {
  const spy_profile *p = c->p;
  fputs("**Primitives**\n", c->f);
  uint32_t *ix = malloc((p->nprims + 1) * sizeof *ix);
  if (!ix) return SPY_ENOMEM;
  size_t n = 0;
  for (size_t i = 0; i < p->nprims; i++)
    if (p->prims[i].calls) ix[n++] = (uint32_t)i;
  sorting = p;
  qsort(ix, n, sizeof *ix, prim_order);
  if (!n) {
    fputs("(none)\n", c->f);
    free(ix);
    return 0;
  }
  /* Cheap accounting (SPY_PRIM_ESTIMATED): totals come from the samples
  ** that fell in each primitive, about total / interval of them; the
  ** column after the total is the half-width of its 95 % interval, and
  ** the maxima are lower bounds (include/spyon.h, exact_prims). */
  int est = 0;
  for (size_t k = 0; k < n; k++) est |= !!(p->prims[ix[k]].flags & SPY_PRIM_ESTIMATED);
  double w = (double)p->interval_ns;
  fputs(est ? TABLE_HEAD_PM "  name\n" : TABLE_HEAD "  name\n", c->f);
  for (size_t k = 0; k < n; k++) {
    const spy_profile_prim *pr = &p->prims[ix[k]];
    double pm = -1, t = (double)pr->total_ns;
    if (est)
      pm = pr->flags & SPY_PRIM_ESTIMATED && w > 0
               ? 1.96 * sqrt(spyR_time_var(t, t / w, w))
               : 0;
    table_row(c, pr->calls, pr->total_ns, pm, pr->max_ns);
    spyR_buf_clear(&c->lab);
    spyR_buf_puts_esc(&c->lab, pr->name ? pr->name : "?");
    spyR_truncate(&c->lab, c->o->width > 0 ? (size_t)c->o->width : 0);
    fprintf(c->f, "  %s\n", spyR_buf_str(&c->lab));
    if (pr->model && *pr->model) {
      spyR_buf_clear(&c->lab);
      spyR_buf_puts_esc(&c->lab, pr->model);
      fprintf(c->f, "%*smodel: %s\n", est ? TABLE_INDENT_PM : TABLE_INDENT,
              "", spyR_buf_str(&c->lab));
    }
  }
  if (est)
    fputs("(totals estimated from the samples, +- their 95 % interval; "
          "max: a lower bound;\n --exact-prims times every call)\n", c->f);
  free(ix);
  return 0;
}

/* ------------------------------------------------------------------------
** Native stacks inside primitives (only when the profile has some)
** --------------------------------------------------------------------- */

enum { NATIVE_TOP = 8 }; /* native functions listed per primitive */

/* The function part of a native frame's name: "fn (module)" without the
** " file:line" that follows, so that all the addresses inside one function
** add up. The module is the last " (...)" group. */
static size_t fn_len(const char *name) {
  const char *open = NULL;
  for (const char *s = strstr(name, " ("); s; s = strstr(s + 1, " ("))
    open = s;
  const char *close = open ? strchr(open, ')') : NULL;
  return close ? (size_t)(close - name) + 1 : strlen(name);
}

typedef struct nfn {
  uint32_t prim;
  const char *name;
  size_t len;
  uint64_t count;
} nfn;

static int by_name(const nfn *a, const nfn *b) {
  size_t n = a->len < b->len ? a->len : b->len;
  int d = memcmp(a->name, b->name, n);
  return d ? d : (a->len > b->len) - (a->len < b->len);
}

/* By primitive, then function name: equal functions become neighbours. */
static int by_prim_name(const void *x, const void *y) {
  const nfn *a = x, *b = y;
  if (a->prim != b->prim) return a->prim < b->prim ? -1 : 1;
  return by_name(a, b);
}

/* Within one primitive: most signals first, then by name. */
static int by_count(const void *x, const void *y) {
  const nfn *a = x, *b = y;
  if (a->count != b->count) return a->count > b->count ? -1 : 1;
  return by_name(a, b);
}

/* Per primitive with native samples: the leaf functions of its native
** paths, summed, with their share of that primitive's samples. Sorting
** brings each primitive's functions together, so a hostile file with many
** natives costs O(n log n), not a pass over all of them per primitive. */
static int natives(ctx *c) {
  const spy_profile *p = c->p;
  fputs("**Native** (inside primitives)\n", c->f);
  nfn *fn = malloc((p->nnatives + 1) * sizeof *fn);
  if (!fn) return SPY_ENOMEM;
  size_t n = 0;
  for (size_t i = 0; i < p->nnatives; i++) {
    const spy_native *nt = &p->natives[i];
    if (nt->prim >= p->nprims || !nt->nframes || !nt->frames ||
        nt->frames[nt->nframes - 1] >= p->nframes)
      continue;
    const char *nm = p->frames[nt->frames[nt->nframes - 1]].name;
    if (!nm) nm = "?";
    fn[n++] = (nfn){nt->prim, nm, fn_len(nm), nt->count};
  }
  qsort(fn, n, sizeof *fn, by_prim_name);
  size_t m = 0; /* merge neighbours naming the same function */
  for (size_t i = 0; i < n; i++) {
    if (m && fn[m - 1].prim == fn[i].prim && !by_name(&fn[m - 1], &fn[i])) {
      uint64_t s = fn[m - 1].count + fn[i].count;
      fn[m - 1].count = s < fn[i].count ? UINT64_MAX : s; /* saturate */
    } else {
      fn[m++] = fn[i];
    }
  }
  for (size_t g = 0; g < m;) {
    size_t e = g;
    uint64_t total = 0;
    for (; e < m && fn[e].prim == fn[g].prim; e++)
      total = total + fn[e].count < total ? UINT64_MAX : total + fn[e].count;
    size_t cnt = e - g;
    uint32_t prim = fn[g].prim;
    qsort(fn + g, cnt, sizeof *fn, by_count);
    if (total) {
      char num[32];
      spyR_buf_clear(&c->lab);
      spyR_buf_puts_esc(&c->lab, p->prims[prim].name ? p->prims[prim].name
                                                     : "?");
      fprintf(c->f, "%s  (%s signals)\n", spyR_buf_str(&c->lab),
              spyR_fmt_group(num, total));
      for (size_t k = 0; k < cnt && k < NATIVE_TOP; k++) {
        spyR_buf_clear(&c->lab);
        spyR_buf_add_esc(&c->lab, fn[g + k].name, fn[g + k].len);
        spyR_truncate(&c->lab, c->o->width > 0 ? (size_t)c->o->width : 0);
        fprintf(c->f, "  %6.2f %%  %s\n", spyR_pct(fn[g + k].count, total),
                spyR_buf_str(&c->lab));
      }
      if (cnt > NATIVE_TOP)
        fprintf(c->f, "  (%zu more function%s)\n", cnt - NATIVE_TOP,
                cnt - NATIVE_TOP == 1 ? "" : "s");
    }
    g = e;
  }
  free(fn);
  return 0;
}

static void gc(ctx *c) {
  fputs("**GC**\n", c->f);
  if (!c->p->gc.count) {
    fputs("(none)\n", c->f);
    return;
  }
  fputs("    count   total ms     mean us      max us  wall %\n", c->f);
  table_row(c, c->p->gc.count, c->p->gc.total_ns, -1, c->p->gc.max_ns);
  fputc('\n', c->f);
}

/* Regions as a tree in first-seen (index) order, which is program order
** for seed-003 style timers; children indented two spaces. Iterative with
** a visited mark, so a loaded file whose parents loop cannot hang it (such
** regions are simply not reached from the top level). */
static int regions(ctx *c) {
  const spy_profile *p = c->p;
  size_t n = p->nregions;
  fputs("**Regions**\n", c->f);
  if (!n) {
    fputs("(none)\n", c->f);
    return 0;
  }
  uint32_t *head = malloc((n + 1) * sizeof *head); /* head[n]: top level */
  uint32_t *next = malloc(n * sizeof *next);
  uint32_t *stack = malloc(n * sizeof *stack);
  unsigned *depth = malloc(n * sizeof *depth);
  unsigned char *seen = calloc(n, 1);
  int rc = 0;
  if (!head || !next || !stack || !depth || !seen) {
    rc = SPY_ENOMEM;
    goto out;
  }
  /* Build the child lists backwards so each lists in index order. */
  for (size_t i = 0; i <= n; i++) head[i] = SPY_NONE;
  for (size_t i = n; i-- > 0;) {
    uint32_t par = p->regions[i].parent;
    if (par >= n || par == i) par = (uint32_t)n;
    next[i] = head[par];
    head[par] = (uint32_t)i;
  }
  fputs(TABLE_HEAD "  name\n", c->f);
  /* Push children in reverse so the first pops first. A region is pushed
  ** only as a child of its one parent, popped once, so sp <= n. */
  size_t sp = 0;
  uint32_t parent = (uint32_t)n;
  unsigned d = 0;
  for (;;) {
    size_t kids = 0;
    for (uint32_t ch = head[parent]; ch != SPY_NONE; ch = next[ch])
      if (!seen[ch]) kids++;
    size_t k = sp + kids;
    for (uint32_t ch = head[parent]; ch != SPY_NONE; ch = next[ch])
      if (!seen[ch]) {
        depth[ch] = d;
        stack[--k] = ch;
      }
    sp += kids;
    uint32_t r = SPY_NONE;
    while (sp > 0 && seen[r = stack[--sp]]) r = SPY_NONE;
    if (r == SPY_NONE) break;
    seen[r] = 1;
    const spy_profile_region *rg = &p->regions[r];
    table_row(c, rg->calls, rg->total_ns, -1, rg->max_ns);
    spyR_buf_clear(&c->lab);
    spyR_buf_puts_esc(&c->lab, rg->name ? rg->name : "?");
    spyR_truncate(&c->lab, c->o->width > 0 ? (size_t)c->o->width : 0);
    fprintf(c->f, "  %*s%s\n", (int)(2 * (depth[r] > 40 ? 40 : depth[r])), "",
            spyR_buf_str(&c->lab));
    parent = r;
    d = depth[r] + 1;
  }
out:
  free(head), free(next), free(stack), free(depth), free(seen);
  return rc;
}

/* ------------------------------------------------------------------------
** Longest single steps
** --------------------------------------------------------------------- */

static void step_line(ctx *c, unsigned rank, const spy_step *s) {
  const spy_profile *p = c->p;
  char ms[48];
  const spy_profile_prim *pr = NULL;
  if (s->kind == SPY_STEP_PRIM && s->prim < p->nprims) pr = &p->prims[s->prim];
  spyR_buf_clear(&c->lab);
  if (s->kind == SPY_STEP_GC) spyR_buf_puts(&c->lab, "GC");
  else spyR_buf_puts_esc(&c->lab, pr && pr->name ? pr->name : "?");
  spyR_truncate(&c->lab, c->o->width > 0 ? (size_t)c->o->width : 0);
  unsigned ns = s->nsizes > 4 ? 4 : s->nsizes;
  for (unsigned i = 0; i < ns; i++) {
    const char *nm =
        pr && i < pr->nsizes && pr->size_names[i] ? pr->size_names[i] : NULL;
    if (nm && *nm) {
      spyR_buf_puts(&c->lab, i ? " " : "  ");
      spyR_buf_puts_esc(&c->lab, nm);
      spyR_buf_printf(&c->lab, "=%" PRIu64, s->size[i]);
    } else
      spyR_buf_printf(&c->lab, "%ss%u=%" PRIu64, i ? " " : "  ", i, s->size[i]);
  }
  const char *proc = s->process < p->nprocesses && p->processes[s->process].name
                         ? p->processes[s->process].name
                         : "?";
  /* A step mostly spent descheduled is the machine's doing, not the
  ** primitive's: say so. */
  if (s->off_cpu_pct >= 50)
    spyR_buf_printf(&c->lab, "  [descheduled %u %%]", s->off_cpu_pct);
  spyR_buf_puts(&c->lab, "  (process ");
  spyR_buf_puts_esc(&c->lab, proc);
  fprintf(c->f, "%2u. %9s ms  %s)\n", rank,
          spyR_fmt_fixed(ms, (double)s->ns / 1e6, 3), spyR_buf_str(&c->lab));
  /* The stack, root first, innermost STEP_FRAMES frames; a trailing frame
  ** that is the step itself (the primitive, or GC) is not repeated. */
  uint32_t nf = s->frames ? s->nframes : 0;
  if (nf > 0 && s->frames[nf - 1] < p->nframes) {
    const spy_frame *last = &p->frames[s->frames[nf - 1]];
    if ((s->kind == SPY_STEP_PRIM && last->kind == SPY_FRAME_PRIM &&
         last->key == s->prim) ||
        (s->kind == SPY_STEP_GC && last->kind == SPY_FRAME_GC))
      nf--;
  }
  uint32_t from = nf > STEP_FRAMES ? nf - STEP_FRAMES : 0;
  if (from)
    fprintf(c->f, "      ... %u outer frame%s\n", from, from == 1 ? "" : "s");
  for (uint32_t i = from; i < nf; i++)
    fprintf(c->f, "      %s\n", label(c, s->frames[i]));
}

static int longest(ctx *c) {
  const spy_profile *p = c->p;
  fputs("**Longest single steps**\n", c->f);
  /* Longest first, stably (the model keeps that order, a hand-built or
  ** merged profile may not), in O(n log n); steps that would read 0.000 ms
  ** are not worth a line. */
  uint32_t *ix = malloc((p->nsteps + 1) * sizeof *ix);
  if (!ix) return SPY_ENOMEM;
  for (size_t i = 0; i < p->nsteps; i++) ix[i] = (uint32_t)i;
  sorting = p;
  qsort(ix, p->nsteps, sizeof *ix, step_order);
  size_t n = 0;
  while (n < p->nsteps && n < c->o->longest && p->steps[ix[n]].ns >= 500) n++;
  if (!n) fputs("(none)\n", c->f);
  for (size_t k = 0; k < n; k++)
    step_line(c, (unsigned)k + 1, &p->steps[ix[k]]);
  free(ix);
  return 0;
}

/* ------------------------------------------------------------------------
** The report
** --------------------------------------------------------------------- */

int spy_report_text(const spy_profile *p, FILE *f,
                    const spy_report_options *o) {
  spy_report_options def;
  if (!p || !f) return SPY_EINVAL;
  if (!o) {
    spy_report_options_init(&def);
    o = &def;
  }
  if (!(o->threshold_pct >= 0) || o->width < 0) return SPY_EINVAL;
  ctx c = {p, o, f, spyR_base_ns(p), {0}, 0};
  int rc = 0;
  header(&c);
  struct {
    int bit;
    int (*fn)(ctx *);
  } sec[] = {{SPY_REPORT_TREE, tree},       {SPY_REPORT_LEAVES, leaves},
             {SPY_REPORT_PRIMS, prims},     {SPY_REPORT_LONGEST, longest},
             {SPY_REPORT_GC, NULL},         {SPY_REPORT_REGIONS, regions}};
  for (size_t i = 0; i < sizeof sec / sizeof sec[0] && rc == 0; i++) {
    if (!(o->sections & sec[i].bit)) continue;
    fputc('\n', f);
    if (sec[i].fn) rc = sec[i].fn(&c);
    else gc(&c);
    /* Native stacks follow the primitives, only when there are some. */
    if (rc == 0 && sec[i].bit == SPY_REPORT_PRIMS && p->nnatives &&
        p->natives) {
      fputc('\n', f);
      rc = natives(&c);
    }
  }
  if (rc == 0 && c.lab.oom) rc = SPY_ENOMEM;
  spyR_buf_free(&c.lab);
  if (fflush(f) != 0 || ferror(f)) return rc ? rc : SPY_EIO;
  return rc;
}
