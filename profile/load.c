/*
** profile/load.c: reading profiles (layout: docs/format.md), the tools
** library's half of the file format (profile/save.c writes them): read a
** file whole, then parse it in memory as hostile input.
**
** Every count is bounded by the bytes left to hold it (so no allocation
** exceeds a small multiple of the input), every index is checked against
** the table it points into as it is read, the call trees are checked to be
** trees and region chains to end, so that tools may follow any index of a
** loaded profile without checking. The first problem found is reported
** once, as "NAME: offset N: what is wrong", and nothing is returned.
*/
#include "config.h"

#include "profile/file.h"
#include "profile/profile.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <zlib.h>

static const char *const sec_name[] = {
    "?",     "header",    "strings", "prims",   "frames",
    "nodes", "processes", "steps",   "regions", "gc",
    "natives", "modules", "step cpu"};

static const char *const kind_name[] = {"root",   "method", "primitive",
                                        "gc",     "region", "native",
                                        "cut"};

static uint64_t get_le(const unsigned char *s, int n) {
  uint64_t v = 0;
  for (int i = 0; i < n; i++) v |= (uint64_t)s[i] << (8 * i);
  return v;
}

/* ------------------------------------------------------------------------
** Loader: cursor, errors and field readers
** --------------------------------------------------------------------- */

typedef struct ld {
  const unsigned char *b;
  size_t len;         /* the whole buffer */
  size_t pos, end;    /* cursor; end of the current section (or len) */
  unsigned sec;       /* current section tag, 0 between sections */
  const char *name;
  char *err;
  size_t errlen;
  const char *rec;    /* record being read ("node"), or NULL */
  uint64_t idx;
  const char *sub;    /* item inside it ("observation"), or NULL */
  uint64_t subidx;
  spy_profile *p;
  const char **str;   /* the string table */
  size_t nstr;
  uint64_t clock_i, command_i; /* header strings, until resolved */
  size_t clock_at, command_at;
  size_t *node_off;   /* where each node record starts */
  size_t *reg_off;    /* where each region record starts */
  size_t *proc_off;   /* where each process record starts */
  unsigned char *seen;
  uint32_t *stack;
} ld;

/* Report "NAME: offset OFF: [rec i: [sub j: ]]message" and fail. */
static int fail(ld *L, size_t off, const char *fmt, ...) {
  if (L->err && L->errlen) {
    char ctx[96] = "", msg[320];
    if (L->rec && L->sub)
      snprintf(ctx, sizeof ctx, "%s %llu: %s %llu: ", L->rec,
               (unsigned long long)L->idx, L->sub,
               (unsigned long long)L->subidx);
    else if (L->rec)
      snprintf(ctx, sizeof ctx, "%s %llu: ", L->rec,
               (unsigned long long)L->idx);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    snprintf(L->err, L->errlen, "%s: offset %zu: %s%s", L->name, off, ctx,
             msg);
  }
  return SPY_EFORMAT;
}

static int fail_nomem(ld *L) {
  if (L->err && L->errlen) snprintf(L->err, L->errlen, "%s: out of memory",
                                    L->name);
  return SPY_ENOMEM;
}

/* Set the record context used by fail(). */
static void ctx(ld *L, const char *rec, uint64_t idx) {
  L->rec = rec;
  L->idx = idx;
  L->sub = NULL;
}

static void subctx(ld *L, const char *sub, uint64_t idx) {
  L->sub = sub;
  L->subidx = idx;
}

#define TRY(x)                                                            \
  do {                                                                    \
    int rc_ = (x);                                                        \
    if (rc_) return rc_;                                                  \
  } while (0)

static int rd_var(ld *L, uint64_t *v, const char *field) {
  size_t at = L->pos;
  uint64_t x = 0;
  for (int shift = 0;; shift += 7) {
    if (L->pos >= L->end) {
      if (L->sec)
        return fail(L, at, "%s: truncated (the %s section ends at offset "
                    "%zu)", field, sec_name[L->sec], L->end);
      return fail(L, at, "%s: truncated (the file ends at offset %zu)",
                  field, L->end);
    }
    unsigned c = L->b[L->pos++];
    if (shift == 63 && c > 1)
      return fail(L, at, "%s: varint longer than 64 bits", field);
    x |= (uint64_t)(c & 0x7f) << shift;
    if (!(c & 0x80)) break;
  }
  *v = x;
  return 0;
}

static int rd_u32(ld *L, uint32_t *v, const char *field) {
  size_t at = L->pos;
  uint64_t x = 0;
  TRY(rd_var(L, &x, field));
  if (x > UINT32_MAX)
    return fail(L, at, "%s %llu does not fit in 32 bits", field,
                (unsigned long long)x);
  *v = (uint32_t)x;
  return 0;
}

/* An index into a table of n entries called `what`. */
static int rd_idx(ld *L, uint32_t *v, const char *field, size_t n,
                  const char *what) {
  size_t at = L->pos;
  uint64_t x = 0;
  TRY(rd_var(L, &x, field));
  if (x >= n)
    return fail(L, at, "%s %llu out of range (%zu %s)", field,
                (unsigned long long)x, n, what);
  *v = (uint32_t)x;
  return 0;
}

/* An optional index: 0 is SPY_NONE, else index + 1. */
static int rd_opt(ld *L, uint32_t *v, const char *field, size_t n,
                  const char *what) {
  size_t at = L->pos;
  uint64_t x = 0;
  TRY(rd_var(L, &x, field));
  if (x == 0) {
    *v = SPY_NONE;
    return 0;
  }
  if (x - 1 >= n)
    return fail(L, at, "%s %llu out of range (%zu %s)", field,
                (unsigned long long)(x - 1), n, what);
  *v = (uint32_t)(x - 1);
  return 0;
}

static int rd_str(ld *L, const char **s, const char *field) {
  uint32_t i = 0;
  TRY(rd_idx(L, &i, field, L->nstr, "strings"));
  *s = L->str[i];
  return 0;
}

/* A count of records of at least minrec bytes each: it cannot exceed what
** the rest of the section holds, which bounds every allocation by the size
** of the input. Tables that are indexed must also leave SPY_NONE free. */
static int rd_count(ld *L, size_t *n, const char *what, size_t minrec) {
  size_t at = L->pos;
  uint64_t x = 0;
  TRY(rd_var(L, &x, what));
  uint64_t room = (L->end - L->pos) / minrec;
  if (x > room || x >= UINT32_MAX)
    return fail(L, at, "%s %llu is more than the %zu bytes left in the "
                "section can hold (at least %zu bytes each)", what,
                (unsigned long long)x, L->end - L->pos, minrec);
  *n = (size_t)x;
  return 0;
}

/* ------------------------------------------------------------------------
** Loader: sections
** --------------------------------------------------------------------- */

static int ld_header(ld *L) {
  spy_profile *p = L->p;
  size_t at = L->pos;
  uint64_t mode;
  TRY(rd_var(L, &mode, "mode"));
  if (mode > SPY_MODE_TIMER)
    return fail(L, at, "mode %llu unknown (0 poll, 1 timer)",
                (unsigned long long)mode);
  p->mode = (spy_mode)mode;
  TRY(rd_var(L, &p->interval_ns, "interval_ns"));
  TRY(rd_var(L, &p->wall_ns, "wall_ns"));
  TRY(rd_var(L, &p->tallies, "tallies"));
  TRY(rd_var(L, &p->dropped, "dropped"));
  TRY(rd_var(L, &p->obs_dropped, "obs_dropped"));
  TRY(rd_var(L, &p->hook_ns, "hook_ns"));
  TRY(rd_var(L, &p->start_unix_ns, "start_unix_ns"));
  /* The string table comes next: keep the indices until it is read. */
  L->clock_at = L->pos;
  TRY(rd_var(L, &L->clock_i, "clock"));
  L->command_at = L->pos;
  TRY(rd_var(L, &L->command_i, "command"));
  return 0;
}

static int ld_strings(ld *L) {
  size_t n;
  TRY(rd_count(L, &n, "string count", 1));
  L->str = spyP_calloc(L->p, n ? n : 1, sizeof *L->str);
  if (!L->str) return fail_nomem(L);
  for (size_t i = 0; i < n; i++) {
    ctx(L, "string", i);
    size_t at = L->pos;
    uint64_t len;
    TRY(rd_var(L, &len, "length"));
    if (len > L->end - L->pos)
      return fail(L, at, "length %llu runs past the end of the section "
                  "(%zu bytes left)", (unsigned long long)len,
                  L->end - L->pos);
    const unsigned char *nul = memchr(L->b + L->pos, 0, (size_t)len);
    if (nul)
      return fail(L, (size_t)(nul - L->b), "contains a NUL byte");
    char *s = spyP_strndup(L->p, (const char *)L->b + L->pos, (size_t)len);
    if (!s) return fail_nomem(L);
    L->str[i] = s;
    L->pos += (size_t)len;
  }
  L->nstr = n;
  return 0;
}

/* The header's two strings, resolved once the table is known. */
static int resolve_header(ld *L) {
  ctx(L, NULL, 0);
  if (L->clock_i >= L->nstr)
    return fail(L, L->clock_at, "header: clock %llu out of range (%zu "
                "strings)", (unsigned long long)L->clock_i, L->nstr);
  if (L->command_i >= L->nstr)
    return fail(L, L->command_at, "header: command %llu out of range (%zu "
                "strings)", (unsigned long long)L->command_i, L->nstr);
  L->p->clock = L->str[L->clock_i];
  L->p->command = L->str[L->command_i];
  return 0;
}

static int ld_prims(ld *L) {
  spy_profile *p = L->p;
  size_t n;
  TRY(rd_count(L, &n, "prim count", 9));
  p->prims = spyP_calloc(p, n, sizeof *p->prims);
  if (!p->prims) return fail_nomem(L);
  p->nprims = n;
  for (size_t i = 0; i < n; i++) {
    spy_profile_prim *pr = &p->prims[i];
    ctx(L, "prim", i);
    TRY(rd_str(L, &pr->name, "name"));
    size_t at = L->pos;
    uint64_t ns;
    TRY(rd_var(L, &ns, "nsizes"));
    if (ns > 4)
      return fail(L, at, "nsizes %llu > 4", (unsigned long long)ns);
    pr->nsizes = (unsigned)ns;
    for (unsigned k = 0; k < pr->nsizes; k++)
      TRY(rd_str(L, &pr->size_names[k], "size name"));
    TRY(rd_u32(L, &pr->flags, "flags"));
    TRY(rd_var(L, &pr->calls, "calls"));
    TRY(rd_var(L, &pr->total_ns, "total_ns"));
    TRY(rd_var(L, &pr->max_ns, "max_ns"));
    TRY(rd_var(L, &pr->obs_offered, "obs_offered"));
    uint32_t model;
    TRY(rd_opt(L, &model, "model string", L->nstr, "strings"));
    if (model != SPY_NONE && !(pr->model = strdup(L->str[model])))
      return fail_nomem(L);
    size_t nobs;
    TRY(rd_count(L, &nobs, "observation count", pr->nsizes + 2));
    pr->obs = spyP_calloc(p, nobs, sizeof *pr->obs);
    if (!pr->obs) return fail_nomem(L);
    pr->nobs = nobs;
    for (size_t j = 0; j < nobs; j++) {
      subctx(L, "observation", j);
      for (unsigned k = 0; k < pr->nsizes; k++)
        TRY(rd_var(L, &pr->obs[j].size[k], "size"));
      TRY(rd_var(L, &pr->obs[j].ns, "ns"));
      TRY(rd_u32(L, &pr->obs[j].gc, "gc"));
    }
  }
  return 0;
}

static int ld_frames(ld *L) {
  spy_profile *p = L->p;
  size_t n;
  TRY(rd_count(L, &n, "frame count", 3));
  p->frames = spyP_calloc(p, n, sizeof *p->frames);
  if (!p->frames) return fail_nomem(L);
  p->nframes = n;
  for (size_t i = 0; i < n; i++) {
    spy_frame *f = &p->frames[i];
    ctx(L, "frame", i);
    size_t at = L->pos;
    uint64_t kind;
    TRY(rd_var(L, &kind, "kind"));
    if (kind > SPY_FRAME_CUT)
      return fail(L, at, "kind %llu unknown", (unsigned long long)kind);
    f->kind = (spy_frame_kind)kind;
    at = L->pos;
    TRY(rd_var(L, &f->key, "key"));
    if (f->kind == SPY_FRAME_PRIM && f->key >= p->nprims)
      return fail(L, at, "primitive key %llu out of range (%zu prims)",
                  (unsigned long long)f->key, p->nprims);
    TRY(rd_str(L, &f->name, "name"));
  }
  return 0;
}

static int ld_nodes(ld *L) {
  spy_profile *p = L->p;
  size_t n;
  TRY(rd_count(L, &n, "node count", 8));
  p->nodes = spyP_calloc(p, n, sizeof *p->nodes);
  L->node_off = malloc((n ? n : 1) * sizeof *L->node_off);
  if (!p->nodes || !L->node_off) return fail_nomem(L);
  p->nnodes = n;
  for (size_t i = 0; i < n; i++) {
    spy_node *nd = &p->nodes[i];
    ctx(L, "node", i);
    L->node_off[i] = L->pos;
    TRY(rd_idx(L, &nd->frame, "frame", p->nframes, "frames"));
    TRY(rd_opt(L, &nd->parent, "parent", n, "nodes"));
    TRY(rd_opt(L, &nd->first_child, "first_child", n, "nodes"));
    TRY(rd_opt(L, &nd->next_sibling, "next_sibling", n, "nodes"));
    TRY(rd_var(L, &nd->total_ns, "total_ns"));
    TRY(rd_var(L, &nd->self_ns, "self_ns"));
    TRY(rd_var(L, &nd->tallies, "tallies"));
    TRY(rd_var(L, &nd->self_tallies, "self_tallies"));
  }
  return 0;
}

/* Walk the tree under process `pi`'s root (its record starts at `at`),
** checking that it is a tree: the root is a root frame without a parent,
** every child names its parent back, and no node is reached twice (which
** also ends every sibling list). Iterative, so a deep tree cannot overflow
** the stack. */
static int check_tree(ld *L, size_t pi, size_t at) {
  spy_profile *p = L->p;
  uint32_t r = p->processes[pi].root;
  const spy_node *rn = &p->nodes[r];
  if (rn->parent != SPY_NONE)
    return fail(L, at, "root node %u has a parent (node %u)", r, rn->parent);
  if (p->frames[rn->frame].kind != SPY_FRAME_ROOT)
    return fail(L, at, "root node %u is a %s frame, not a root frame", r,
                kind_name[p->frames[rn->frame].kind]);
  if (L->seen[r])
    return fail(L, at, "root node %u already belongs to a tree", r);
  L->seen[r] = 1;
  size_t sp = 0;
  L->stack[sp++] = r;
  while (sp) {
    uint32_t n = L->stack[--sp], from = n;
    const char *link = "first_child";
    for (uint32_t c = p->nodes[n].first_child; c != SPY_NONE;
         from = c, c = p->nodes[c].next_sibling, link = "next_sibling") {
      if (L->seen[c]) {
        ctx(L, "node", from);
        return fail(L, L->node_off[from], "%s %u is already in a tree (a "
                    "cycle or a shared node)", link, c);
      }
      if (p->nodes[c].parent != n) {
        ctx(L, "node", c);
        if (p->nodes[c].parent == SPY_NONE)
          return fail(L, L->node_off[c], "has no parent but is a child of "
                      "node %u", n);
        return fail(L, L->node_off[c], "parent is %u but it is a child of "
                    "node %u", p->nodes[c].parent, n);
      }
      L->seen[c] = 1;
      L->stack[sp++] = c;
    }
  }
  return 0;
}

/* The sums the tools rely on: a node's self time is part of its total, its
** total is its self time plus its children's totals, a process's total is
** its root's, and the totals of all processes add up without overflowing
** 64 bits; the same for tallies. The sampler writes exactly this, so any
** other file is damaged or crafted, and a report computed from it would
** wrap (a Leaves row of 2^64 - 2 ns) or show self > total. Since every
** sum of the tools is bounded by the grand total, none of them can
** overflow once this passes. Linear in the nodes. */
static int check_sums(ld *L) {
  spy_profile *p = L->p;
  for (size_t i = 0; i < p->nnodes; i++) {
    const spy_node *nd = &p->nodes[i];
    ctx(L, "node", i);
    if (nd->self_ns > nd->total_ns)
      return fail(L, L->node_off[i], "self_ns %llu > total_ns %llu",
                  (unsigned long long)nd->self_ns,
                  (unsigned long long)nd->total_ns);
    if (nd->self_tallies > nd->tallies)
      return fail(L, L->node_off[i], "self_tallies %llu > tallies %llu",
                  (unsigned long long)nd->self_tallies,
                  (unsigned long long)nd->tallies);
    uint64_t ns = nd->self_ns, t = nd->self_tallies;
    for (uint32_t c = nd->first_child; c != SPY_NONE;
         c = p->nodes[c].next_sibling) {
      const spy_node *cn = &p->nodes[c];
      if (cn->total_ns > UINT64_MAX - ns || cn->tallies > UINT64_MAX - t)
        return fail(L, L->node_off[i], "self plus the children's totals "
                    "overflow 64 bits");
      ns += cn->total_ns;
      t += cn->tallies;
    }
    if (ns != nd->total_ns)
      return fail(L, L->node_off[i], "total_ns %llu is not self_ns plus the "
                  "children's totals (%llu)",
                  (unsigned long long)nd->total_ns, (unsigned long long)ns);
    if (t != nd->tallies)
      return fail(L, L->node_off[i], "tallies %llu is not self_tallies plus "
                  "the children's tallies (%llu)",
                  (unsigned long long)nd->tallies, (unsigned long long)t);
  }
  uint64_t ns = 0, t = 0;
  for (size_t i = 0; i < p->nprocesses; i++) {
    const spy_process *pc = &p->processes[i];
    const spy_node *rn = &p->nodes[pc->root];
    ctx(L, "process", i);
    if (pc->total_ns != rn->total_ns || pc->tallies != rn->tallies)
      return fail(L, L->proc_off[i], "total_ns %llu and tallies %llu are "
                  "not its root's (%llu, %llu)",
                  (unsigned long long)pc->total_ns,
                  (unsigned long long)pc->tallies,
                  (unsigned long long)rn->total_ns,
                  (unsigned long long)rn->tallies);
    if (pc->total_ns > UINT64_MAX - ns || pc->tallies > UINT64_MAX - t)
      return fail(L, L->proc_off[i], "the processes' totals overflow 64 "
                  "bits");
    ns += pc->total_ns;
    t += pc->tallies;
  }
  ctx(L, NULL, 0);
  return 0;
}

static int ld_processes(ld *L) {
  spy_profile *p = L->p;
  size_t n;
  TRY(rd_count(L, &n, "process count", 5));
  p->processes = spyP_calloc(p, n, sizeof *p->processes);
  L->proc_off = malloc((n ? n : 1) * sizeof *L->proc_off);
  if (!L->proc_off) return fail_nomem(L);
  L->seen = calloc(p->nnodes ? p->nnodes : 1, 1);
  L->stack = malloc((p->nnodes ? p->nnodes : 1) * sizeof *L->stack);
  if (!p->processes || !L->seen || !L->stack) return fail_nomem(L);
  p->nprocesses = n;
  for (size_t i = 0; i < n; i++) {
    spy_process *pc = &p->processes[i];
    ctx(L, "process", i);
    size_t at = L->pos;
    L->proc_off[i] = at;
    TRY(rd_var(L, &pc->pid, "pid"));
    TRY(rd_str(L, &pc->name, "name"));
    TRY(rd_idx(L, &pc->root, "root", p->nnodes, "nodes"));
    TRY(rd_var(L, &pc->total_ns, "total_ns"));
    TRY(rd_var(L, &pc->tallies, "tallies"));
    TRY(check_tree(L, i, at));
  }
  for (size_t i = 0; i < p->nnodes; i++)
    if (!L->seen[i]) {
      ctx(L, "node", i);
      return fail(L, L->node_off[i], "not in the tree of any process");
    }
  return check_sums(L);
}

static int ld_steps(ld *L) {
  spy_profile *p = L->p;
  size_t n;
  TRY(rd_count(L, &n, "step count", 6));
  p->steps = spyP_calloc(p, n, sizeof *p->steps);
  if (!p->steps) return fail_nomem(L);
  p->nsteps = n;
  for (size_t i = 0; i < n; i++) {
    spy_step *st = &p->steps[i];
    ctx(L, "step", i);
    size_t at = L->pos;
    uint64_t kind;
    TRY(rd_var(L, &kind, "kind"));
    if (kind > SPY_STEP_GC)
      return fail(L, at, "kind %llu unknown (0 prim, 1 gc)",
                  (unsigned long long)kind);
    st->kind = (spy_step_kind)kind;
    at = L->pos;
    /* A primitive step may lack a primitive (the VM passed an id it never
    ** registered); a GC step never has one. */
    TRY(rd_opt(L, &st->prim, "prim", p->nprims, "prims"));
    if (st->kind == SPY_STEP_GC && st->prim != SPY_NONE)
      return fail(L, at, "a gc step names primitive %u", st->prim);
    at = L->pos;
    uint64_t ns;
    TRY(rd_var(L, &ns, "nsizes"));
    if (ns > 4)
      return fail(L, at, "nsizes %llu > 4", (unsigned long long)ns);
    st->nsizes = (unsigned)ns;
    for (unsigned k = 0; k < st->nsizes; k++)
      TRY(rd_var(L, &st->size[k], "size"));
    TRY(rd_var(L, &st->ns, "ns"));
    TRY(rd_idx(L, &st->process, "process", p->nprocesses, "processes"));
    size_t nf;
    TRY(rd_count(L, &nf, "frame count", 1));
    st->frames = spyP_calloc(p, nf, sizeof *st->frames);
    if (!st->frames) return fail_nomem(L);
    st->nframes = (uint32_t)nf;
    for (size_t k = 0; k < nf; k++) {
      subctx(L, "frame", k);
      TRY(rd_idx(L, &st->frames[k], "index", p->nframes, "frames"));
    }
  }
  return 0;
}

static int ld_regions(ld *L) {
  spy_profile *p = L->p;
  size_t n;
  TRY(rd_count(L, &n, "region count", 5));
  p->regions = spyP_calloc(p, n, sizeof *p->regions);
  L->reg_off = malloc((n ? n : 1) * sizeof *L->reg_off);
  if (!p->regions || !L->reg_off) return fail_nomem(L);
  p->nregions = n;
  for (size_t i = 0; i < n; i++) {
    spy_profile_region *r = &p->regions[i];
    ctx(L, "region", i);
    L->reg_off[i] = L->pos;
    TRY(rd_str(L, &r->name, "name"));
    TRY(rd_opt(L, &r->parent, "parent", n, "regions"));
    TRY(rd_var(L, &r->calls, "calls"));
    TRY(rd_var(L, &r->total_ns, "total_ns"));
    TRY(rd_var(L, &r->max_ns, "max_ns"));
  }
  /* Parent chains must end. Mark each chain as it is walked (1) and as
  ** known to end (2); meeting a 1 again means a cycle. Linear time. */
  unsigned char *state = calloc(n ? n : 1, 1);
  if (!state) return fail_nomem(L);
  for (size_t i = 0; i < n; i++) {
    uint32_t j = (uint32_t)i;
    while (j != SPY_NONE && state[j] == 0) {
      state[j] = 1;
      j = p->regions[j].parent;
    }
    if (j != SPY_NONE && state[j] == 1) {
      free(state);
      ctx(L, "region", j);
      return fail(L, L->reg_off[j], "its chain of parents is a cycle");
    }
    for (j = (uint32_t)i; j != SPY_NONE && state[j] == 1;
         j = p->regions[j].parent)
      state[j] = 2;
  }
  free(state);
  return 0;
}

static int ld_gc(ld *L) {
  TRY(rd_var(L, &L->p->gc.count, "count"));
  TRY(rd_var(L, &L->p->gc.total_ns, "total_ns"));
  TRY(rd_var(L, &L->p->gc.max_ns, "max_ns"));
  return 0;
}

/* Optional section 10: native stacks inside primitives. Every frame must
** be a native frame, every prim in range. */
static int ld_natives(ld *L) {
  spy_profile *p = L->p;
  size_t n;
  TRY(rd_count(L, &n, "native count", 3));
  p->natives = spyP_calloc(p, n, sizeof *p->natives);
  if (!p->natives) return fail_nomem(L);
  p->nnatives = n;
  for (size_t i = 0; i < n; i++) {
    spy_native *nt = &p->natives[i];
    ctx(L, "native", i);
    TRY(rd_idx(L, &nt->prim, "prim", p->nprims, "prims"));
    TRY(rd_var(L, &nt->count, "count"));
    size_t nf;
    TRY(rd_count(L, &nf, "frame count", 1));
    nt->frames = spyP_calloc(p, nf, sizeof *nt->frames);
    if (!nt->frames) return fail_nomem(L);
    nt->nframes = (uint32_t)nf;
    for (size_t k = 0; k < nf; k++) {
      subctx(L, "frame", k);
      size_t at = L->pos;
      TRY(rd_idx(L, &nt->frames[k], "index", p->nframes, "frames"));
      if (p->frames[nt->frames[k]].kind != SPY_FRAME_NATIVE)
        return fail(L, at, "frame %u is a %s frame, not a native frame",
                    nt->frames[k], kind_name[p->frames[nt->frames[k]].kind]);
    }
  }
  return 0;
}

static int ld_modules(ld *L) {
  spy_profile *p = L->p;
  size_t n;
  TRY(rd_count(L, &n, "module count", 3));
  p->modules = spyP_calloc(p, n, sizeof *p->modules);
  if (!p->modules) return fail_nomem(L);
  p->nmodules = n;
  for (size_t i = 0; i < n; i++) {
    spy_module *m = &p->modules[i];
    ctx(L, "module", i);
    TRY(rd_str(L, &m->path, "path"));
    TRY(rd_str(L, &m->build_id, "build-id"));
    TRY(rd_var(L, &m->bias, "bias"));
  }
  TRY(rd_count(L, &n, "location count", 3));
  p->locations = spyP_calloc(p, n, sizeof *p->locations);
  if (!p->locations) return fail_nomem(L);
  p->nlocations = n;
  for (size_t i = 0; i < n; i++) {
    spy_location *lc = &p->locations[i];
    ctx(L, "location", i);
    size_t at = L->pos;
    TRY(rd_idx(L, &lc->frame, "frame", p->nframes, "frames"));
    if (p->frames[lc->frame].kind != SPY_FRAME_NATIVE)
      return fail(L, at, "frame %u is a %s frame, not a native frame",
                  lc->frame, kind_name[p->frames[lc->frame].kind]);
    TRY(rd_opt(L, &lc->module, "module", p->nmodules, "modules"));
    TRY(rd_var(L, &lc->addr, "address"));
  }
  return 0;
}

static int ld_step_cpu(ld *L) {
  spy_profile *p = L->p;
  size_t n;
  TRY(rd_count(L, &n, "step count", 2));
  for (size_t i = 0; i < n; i++) {
    ctx(L, "step cpu", i);
    uint32_t si = 0;
    TRY(rd_idx(L, &si, "step", p->nsteps, "steps"));
    size_t at = L->pos;
    uint64_t pct;
    TRY(rd_var(L, &pct, "off_cpu_pct"));
    if (pct > 100)
      return fail(L, at, "off_cpu_pct %llu is over 100",
                  (unsigned long long)pct);
    p->steps[si].off_cpu_pct = (unsigned)pct;
  }
  return 0;
}

/* ------------------------------------------------------------------------
** Loader: preamble and section list
** --------------------------------------------------------------------- */

static int ld_preamble(ld *L, unsigned flags, uint32_t *version) {
  const unsigned char *b = L->b;
  size_t len = L->len;
  if (len == 0) return fail(L, 0, "empty file, not a spyon profile");
  size_t m = len < sizeof spyP_magic ? len : sizeof spyP_magic;
  if (memcmp(b, spyP_magic, m) != 0)
    return fail(L, 0, "not a spyon profile (bad magic number)");
  if (len < SPYP_PRE_VERSION + 4)
    return fail(L, len, "truncated in the preamble (%d bytes needed)",
                SPYP_PRE_SIZE);
  *version = (uint32_t)get_le(b + SPYP_PRE_VERSION, 4);
  if (*version == 0 || *version > SPY_FORMAT_VERSION) {
    if (*version == 0)
      fail(L, SPYP_PRE_VERSION, "format version 0 is not supported");
    else
      fail(L, SPYP_PRE_VERSION, "format version %u is not supported (newer "
           "than this library's %d)", *version, SPY_FORMAT_VERSION);
    return SPY_EVERSION;
  }
  if (len < SPYP_PRE_SIZE)
    return fail(L, len, "truncated in the preamble (%d bytes needed)",
                SPYP_PRE_SIZE);
  uint64_t body = get_le(b + SPYP_PRE_LEN, 8);
  if (body > len - SPYP_PRE_SIZE)
    return fail(L, len, "truncated: the file ends after %zu bytes of "
                "body, the preamble announces %llu", len - SPYP_PRE_SIZE,
                (unsigned long long)body);
  if (body < len - SPYP_PRE_SIZE)
    return fail(L, SPYP_PRE_SIZE + (size_t)body, "unexpected data after "
                "the end of the profile (%zu more byte%s)",
                len - SPYP_PRE_SIZE - (size_t)body,
                len - SPYP_PRE_SIZE - (size_t)body == 1 ? "" : "s");
  uint32_t want = (uint32_t)get_le(b + SPYP_PRE_CRC, 4);
  uint32_t got = (uint32_t)crc32_z(0L, b + SPYP_PRE_LEN, len - SPYP_PRE_LEN);
  if (!(flags & SPYP_LOAD_NOCRC) && want != got)
    return fail(L, SPYP_PRE_CRC, "checksum mismatch (stored 0x%08x, "
                "computed 0x%08x): the file is corrupted", want, got);
  return 0;
}

static int ld_body(ld *L) {
  static int (*const parse[])(ld *) = {
      NULL,   ld_header,    ld_strings, ld_prims,   ld_frames,
      ld_nodes, ld_processes, ld_steps, ld_regions, ld_gc};
  unsigned expect = SPYP_SEC_HEADER;
  unsigned seen_opt = 0; /* optional sections read, a bit each */
  L->pos = SPYP_PRE_SIZE;
  while (L->pos < L->len) {
    L->sec = 0;
    L->end = L->len;
    ctx(L, NULL, 0);
    size_t at = L->pos;
    uint64_t tag, slen;
    TRY(rd_var(L, &tag, "section tag"));
    TRY(rd_var(L, &slen, "section length"));
    const char *nm = tag >= SPYP_SEC_HEADER && tag <= SPYP_SEC_OPT_LAST
                         ? sec_name[tag] : "(unknown)";
    if (slen > L->len - L->pos)
      return fail(L, at, "section %llu (%s): length %llu runs past the end "
                  "of the file (%zu bytes left)", (unsigned long long)tag,
                  nm, (unsigned long long)slen, L->len - L->pos);
    if (tag > SPYP_SEC_LAST && tag <= SPYP_SEC_OPT_LAST) {
      /* Optional, each at most once, after all the required sections (they
      ** refer to prims and frames). */
      if (expect <= SPYP_SEC_LAST)
        return fail(L, at, "section %llu (%s) before section %u (%s)",
                    (unsigned long long)tag, nm, expect, sec_name[expect]);
      unsigned bit = 1u << (tag - SPYP_SEC_LAST);
      if (seen_opt & bit)
        return fail(L, at, "section %llu (%s) repeated",
                    (unsigned long long)tag, nm);
      seen_opt |= bit;
      L->sec = (unsigned)tag;
      L->end = L->pos + (size_t)slen;
      TRY(tag == SPYP_SEC_NATIVES  ? ld_natives(L)
          : tag == SPYP_SEC_MODULES ? ld_modules(L)
                                    : ld_step_cpu(L));
      L->pos = L->end;
      continue;
    }
    if (tag < SPYP_SEC_HEADER || tag > SPYP_SEC_LAST) { /* a later version's */
      L->pos += (size_t)slen;
      continue;
    }
    if (tag < expect)
      return fail(L, at, "section %llu (%s) repeated or out of order",
                  (unsigned long long)tag, nm);
    if (tag > expect)
      return fail(L, at, "section %u (%s) missing before section %llu (%s)",
                  expect, sec_name[expect], (unsigned long long)tag, nm);
    L->sec = (unsigned)tag;
    L->end = L->pos + (size_t)slen;
    TRY(parse[tag](L));
    if (tag == SPYP_SEC_STRINGS) TRY(resolve_header(L));
    /* Bytes after the fields this version knows are a later version's
    ** additions to the section: skip them. */
    L->pos = L->end;
    expect++;
  }
  ctx(L, NULL, 0);
  L->sec = 0;
  if (expect <= SPYP_SEC_LAST)
    return fail(L, L->len, "section %u (%s) missing", expect,
                sec_name[expect]);
  return 0;
}

int spyP_load_mem(const void *buf, size_t len, const char *name,
                  unsigned flags, spy_profile **out, char *err,
                  size_t errlen) {
  if (err && errlen) err[0] = '\0';
  if (!out) return SPY_EINVAL;
  *out = NULL;
  if (!buf && len) return SPY_EINVAL;
  ld L = {0};
  L.b = buf;
  L.len = len;
  L.name = name ? name : "(memory)";
  L.err = err;
  L.errlen = errlen;
  uint32_t version = 0;
  int rc = ld_preamble(&L, flags, &version);
  if (rc) return rc;
  L.p = spyP_new();
  if (!L.p) return fail_nomem(&L);
  rc = ld_body(&L);
  free(L.node_off);
  free(L.reg_off);
  free(L.proc_off);
  free(L.seen);
  free(L.stack);
  if (rc) {
    spy_profile_free(L.p);
    return rc;
  }
  L.p->version = version;
  *out = L.p;
  return 0;
}

int spy_profile_load_mem(const void *buf, size_t len, const char *name,
                         spy_profile **out, char *err, size_t errlen) {
  return spyP_load_mem(buf, len, name, 0, out, err, errlen);
}

/* How many bytes of the stream to read at most, once its preamble is in:
** a regular file is read whole (its size is real), but a device or pipe
** (/dev/zero, a hostile producer) only as far as the preamble announces,
** plus one byte to notice trailing data. */
static size_t read_limit(const unsigned char *buf, size_t n, int regular) {
  if (regular) return SIZE_MAX;
  if (n < SPYP_PRE_SIZE || memcmp(buf, spyP_magic, sizeof spyP_magic) != 0)
    return n;
  uint64_t body = 0;
  for (int i = 0; i < 8; i++)
    body |= (uint64_t)buf[SPYP_PRE_LEN + i] << (8 * i);
  if (body > SIZE_MAX - SPYP_PRE_SIZE - 1) return SIZE_MAX;
  return SPYP_PRE_SIZE + (size_t)body + 1;
}

int spy_profile_load(const char *path, spy_profile **out, char *err,
                     size_t errlen) {
  if (err && errlen) err[0] = '\0';
  if (!out) return SPY_EINVAL;
  *out = NULL;
  if (!path) return SPY_EINVAL;
  FILE *f = fopen(path, "rb");
  if (!f) {
    if (err && errlen)
      snprintf(err, errlen, "%s: cannot open: %s", path, strerror(errno));
    return SPY_EIO;
  }
  struct stat st;
  int regular = fstat(fileno(f), &st) == 0 && S_ISREG(st.st_mode);
  size_t cap = 1 << 16, n = 0, limit = SIZE_MAX;
  int have_limit = 0;
  unsigned char *buf = malloc(cap);
  int rc = 0;
  while (buf && n < limit) {
    if (n == cap) {
      unsigned char *nb = cap <= SIZE_MAX / 2 ? realloc(buf, cap * 2) : NULL;
      if (!nb) {
        free(buf);
        buf = NULL;
        break;
      }
      buf = nb;
      cap *= 2;
    }
    /* The first read stops at the preamble, which sets the limit. */
    size_t want = cap - n;
    if (!have_limit && want > SPYP_PRE_SIZE - n) want = SPYP_PRE_SIZE - n;
    if (want > limit - n) want = limit - n;
    size_t r = fread(buf + n, 1, want, f);
    n += r;
    if (!have_limit && n == SPYP_PRE_SIZE) {
      limit = read_limit(buf, n, regular);
      have_limit = 1;
    }
    if (r < want) break;
  }
  if (!buf) {
    if (err && errlen) snprintf(err, errlen, "%s: out of memory", path);
    rc = SPY_ENOMEM;
  } else if (ferror(f)) {
    if (err && errlen)
      snprintf(err, errlen, "%s: read error: %s", path, strerror(errno));
    rc = SPY_EIO;
  }
  fclose(f);
  if (rc == 0) rc = spyP_load_mem(buf, n, path, 0, out, err, errlen);
  free(buf);
  return rc;
}
