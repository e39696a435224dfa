/*
** report/json.c: the whole profile as one JSON document, for scripts and
** tests. The schema is in docs/format.md. Numbers are written exactly (all
** are unsigned integers); frame keys, which may use all 64 bits, are hex
** strings so that no JSON reader rounds them.
*/
#include "config.h"

#include "profile/profile.h"
#include "profile/jsonw.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const frame_kind[] = {"root",   "method", "prim", "gc",
                                         "region", "native", "cut"};

static const char *kind_str(spy_frame_kind k) {
  return (unsigned)k <= SPY_FRAME_CUT ? frame_kind[k] : "unknown";
}

/* ------------------------------------------------------------------------
** Values (strings are written by profile/jsonw.c)
** --------------------------------------------------------------------- */

static void j_opt(FILE *f, uint32_t idx) {
  if (idx == SPY_NONE) fputs("null", f);
  else fprintf(f, "%" PRIu32, idx);
}

static void j_u64s(FILE *f, const uint64_t *v, unsigned n) {
  putc('[', f);
  for (unsigned i = 0; i < n; i++)
    fprintf(f, "%s%" PRIu64, i ? "," : "", v[i]);
  putc(']', f);
}

/* ------------------------------------------------------------------------
** Checks and trees
** --------------------------------------------------------------------- */

/* Profiles from this library have every index in range, but a caller may
** have built one by hand: check what the writer follows, before writing
** anything, rather than read out of bounds. */
static int check_ranges(const spy_profile *p) {
#define IDX_(i, n) ((i) < (n))
#define OPT_(i, n) ((i) == SPY_NONE || (i) < (n))
  if ((p->nframes && !p->frames) || (p->nnodes && !p->nodes) ||
      (p->nprocesses && !p->processes) || (p->nprims && !p->prims) ||
      (p->nsteps && !p->steps) || (p->nregions && !p->regions))
    return SPY_EINVAL;
  for (size_t i = 0; i < p->nnodes; i++) {
    const spy_node *n = &p->nodes[i];
    if (!IDX_(n->frame, p->nframes) || !OPT_(n->parent, p->nnodes) ||
        !OPT_(n->first_child, p->nnodes) || !OPT_(n->next_sibling, p->nnodes))
      return SPY_EINVAL;
  }
  for (size_t i = 0; i < p->nprocesses; i++)
    if (!IDX_(p->processes[i].root, p->nnodes)) return SPY_EINVAL;
  for (size_t i = 0; i < p->nprims; i++)
    if (p->prims[i].nsizes > 4 || (p->prims[i].nobs && !p->prims[i].obs))
      return SPY_EINVAL;
  for (size_t i = 0; i < p->nsteps; i++) {
    const spy_step *s = &p->steps[i];
    if (s->nsizes > 4 || !OPT_(s->prim, p->nprims) ||
        (s->nframes && !s->frames))
      return SPY_EINVAL;
    for (uint32_t k = 0; k < s->nframes; k++)
      if (!IDX_(s->frames[k], p->nframes)) return SPY_EINVAL;
  }
  for (size_t i = 0; i < p->nregions; i++)
    if (!OPT_(p->regions[i].parent, p->nregions)) return SPY_EINVAL;
  if (p->nnatives && !p->natives) return SPY_EINVAL;
  if ((p->nmodules && !p->modules) || (p->nlocations && !p->locations))
    return SPY_EINVAL;
  for (size_t i = 0; i < p->nmodules; i++)
    if (!p->modules[i].path || !p->modules[i].build_id) return SPY_EINVAL;
  for (size_t i = 0; i < p->nlocations; i++)
    if (!IDX_(p->locations[i].frame, p->nframes) ||
        !OPT_(p->locations[i].module, p->nmodules))
      return SPY_EINVAL;
  for (size_t i = 0; i < p->nnatives; i++) {
    const spy_native *nt = &p->natives[i];
    if (!IDX_(nt->prim, p->nprims) || (nt->nframes && !nt->frames))
      return SPY_EINVAL;
    for (uint32_t k = 0; k < nt->nframes; k++)
      if (!IDX_(nt->frames[k], p->nframes)) return SPY_EINVAL;
  }
  return 0;
#undef IDX_
#undef OPT_
}

/* Open a node's object, up to and including its children's '['. */
static void j_node_open(FILE *f, const spy_profile *p, uint32_t i) {
  const spy_node *n = &p->nodes[i];
  const spy_frame *fr = &p->frames[n->frame];
  fprintf(f, "{\"frame\":%" PRIu32 ",\"name\":", n->frame);
  spyP_json_fstr(f, fr->name);
  fprintf(f, ",\"kind\":\"%s\",\"total_ns\":%" PRIu64 ",\"self_ns\":%" PRIu64
          ",\"tallies\":%" PRIu64 ",\"self_tallies\":%" PRIu64
          ",\"children\":[",
          kind_str(fr->kind), n->total_ns, n->self_ns, n->tallies,
          n->self_tallies);
}

/* The tree under `root` as nested objects. Trees can be deep (recursive
** code), so walk it with the links instead of recursion; the walk opens
** each node at most once and tracks its depth, so even a malformed
** hand-built tree ends, with balanced brackets. */
static int j_tree(FILE *f, const spy_profile *p, uint32_t root) {
  size_t budget = p->nnodes, depth = 0;
  uint32_t n = root;
  int rc = 0;
  j_node_open(f, p, n);
  budget--;
  for (;;) {
    uint32_t c = p->nodes[n].first_child;
    if (c != SPY_NONE && budget) {
      budget--;
      depth++;
      j_node_open(f, p, c);
      n = c;
      continue;
    }
    if (c != SPY_NONE) rc = SPY_EINVAL;
    fputs("]}", f);
    for (;;) {
      if (depth == 0) return rc;
      uint32_t s = p->nodes[n].next_sibling;
      if (s != SPY_NONE && budget) {
        budget--;
        putc(',', f);
        j_node_open(f, p, s);
        n = s;
        break;
      }
      if (s != SPY_NONE) rc = SPY_EINVAL;
      n = p->nodes[n].parent;
      depth--;
      fputs("]}", f);
      if (n == SPY_NONE) { /* a parent link that disagrees: stop here */
        while (depth--) fputs("]}", f);
        return SPY_EINVAL;
      }
    }
  }
}

/* ------------------------------------------------------------------------
** The document
** --------------------------------------------------------------------- */

static int j_leaves(FILE *f, const spy_profile *p) {
  spy_leaf *lv = calloc(p->nframes ? p->nframes : 1, sizeof *lv);
  if (!lv) return SPY_ENOMEM;
  int n = spy_profile_leaves(p, lv, p->nframes);
  if (n < 0) {
    free(lv);
    return n;
  }
  fputs("\"leaves\":[", f);
  for (int i = 0; i < n; i++) {
    const spy_frame *fr = &p->frames[lv[i].frame];
    fprintf(f, "%s\n{\"frame\":%" PRIu32 ",\"name\":", i ? "," : "",
            lv[i].frame);
    spyP_json_fstr(f, fr->name);
    fprintf(f, ",\"kind\":\"%s\",\"self_ns\":%" PRIu64
            ",\"self_tallies\":%" PRIu64 "}",
            kind_str(fr->kind), lv[i].self_ns, lv[i].self_tallies);
  }
  fputs("],\n", f);
  free(lv);
  return 0;
}

static void j_prims(FILE *f, const spy_profile *p) {
  fputs("\"prims\":[", f);
  for (size_t i = 0; i < p->nprims; i++) {
    const spy_profile_prim *pr = &p->prims[i];
    fputs(i ? ",\n{\"name\":" : "\n{\"name\":", f);
    spyP_json_fstr(f, pr->name);
    fputs(",\"sizes\":[", f);
    for (unsigned k = 0; k < pr->nsizes; k++) {
      if (k) putc(',', f);
      spyP_json_fstr(f, pr->size_names[k]);
    }
    fprintf(f, "],\"flags\":%u,\"calls\":%" PRIu64 ",\"total_ns\":%" PRIu64
            ",\"max_ns\":%" PRIu64 ",\"obs_offered\":%" PRIu64 ",\"model\":",
            pr->flags, pr->calls, pr->total_ns, pr->max_ns, pr->obs_offered);
    if (pr->model) spyP_json_fstr(f, pr->model);
    else fputs("null", f);
    fputs(",\"obs\":[", f);
    for (size_t j = 0; j < pr->nobs; j++) {
      fputs(j ? ",{\"size\":" : "{\"size\":", f);
      j_u64s(f, pr->obs[j].size, pr->nsizes);
      fprintf(f, ",\"ns\":%" PRIu64 ",\"gc\":%" PRIu32 "}", pr->obs[j].ns,
              pr->obs[j].gc);
    }
    fputs("]}", f);
  }
  fputs("],\n", f);
}

static void j_steps(FILE *f, const spy_profile *p) {
  fputs("\"steps\":[", f);
  for (size_t i = 0; i < p->nsteps; i++) {
    const spy_step *s = &p->steps[i];
    fprintf(f, "%s\n{\"kind\":\"%s\",\"prim\":", i ? "," : "",
            s->kind == SPY_STEP_GC ? "gc" : "prim");
    j_opt(f, s->prim);
    fputs(",\"size\":", f);
    j_u64s(f, s->size, s->nsizes);
    fprintf(f, ",\"ns\":%" PRIu64 ",\"off_cpu_pct\":%u,\"process\":%" PRIu32
            ",\"frames\":[",
            s->ns, s->off_cpu_pct, s->process);
    for (uint32_t k = 0; k < s->nframes; k++)
      fprintf(f, "%s%" PRIu32, k ? "," : "", s->frames[k]);
    fputs("]}", f);
  }
  fputs("],\n", f);
}

static void j_regions(FILE *f, const spy_profile *p) {
  fputs("\"regions\":[", f);
  for (size_t i = 0; i < p->nregions; i++) {
    const spy_profile_region *r = &p->regions[i];
    fputs(i ? ",\n{\"name\":" : "\n{\"name\":", f);
    spyP_json_fstr(f, r->name);
    fputs(",\"parent\":", f);
    j_opt(f, r->parent);
    fprintf(f, ",\"calls\":%" PRIu64 ",\"total_ns\":%" PRIu64
            ",\"max_ns\":%" PRIu64 "}", r->calls, r->total_ns, r->max_ns);
  }
  fputs("],\n", f);
}

/* Native stacks inside primitives: one object per distinct path. */
/* Where native frames point: modules and locations (addresses as hex
** strings, as frame keys are: JSON numbers lose 64-bit precision). */
static void j_modules(FILE *f, const spy_profile *p) {
  fputs("\"modules\":[", f);
  for (size_t i = 0; i < p->nmodules; i++) {
    const spy_module *m = &p->modules[i];
    fprintf(f, "%s\n{\"path\":", i ? "," : "");
    spyP_json_fstr(f, m->path);
    fputs(",\"build_id\":", f);
    spyP_json_fstr(f, m->build_id);
    fprintf(f, ",\"bias\":\"0x%" PRIx64 "\"}", m->bias);
  }
  fputs("],\n\"locations\":[", f);
  for (size_t i = 0; i < p->nlocations; i++) {
    const spy_location *l = &p->locations[i];
    fprintf(f, "%s\n{\"frame\":%" PRIu32 ",\"module\":", i ? "," : "",
            l->frame);
    if (l->module == SPY_NONE) fputs("null", f);
    else fprintf(f, "%" PRIu32, l->module);
    fprintf(f, ",\"addr\":\"0x%" PRIx64 "\"}", l->addr);
  }
  fputs("],\n", f);
}

static void j_natives(FILE *f, const spy_profile *p) {
  fputs("\"natives\":[", f);
  for (size_t i = 0; i < p->nnatives; i++) {
    const spy_native *nt = &p->natives[i];
    fprintf(f, "%s\n{\"prim\":%" PRIu32 ",\"count\":%" PRIu64
            ",\"frames\":[", i ? "," : "", nt->prim, nt->count);
    for (uint32_t k = 0; k < nt->nframes; k++)
      fprintf(f, "%s%" PRIu32, k ? "," : "", nt->frames[k]);
    fputs("]}", f);
  }
  fputs("],\n", f);
}

int spy_profile_write_json(const spy_profile *p, FILE *f) {
  if (!p || !f) return SPY_EINVAL;
  int rc = check_ranges(p);
  if (rc) return rc;
  fprintf(f, "{\"format\":\"spyon-profile\",\"version\":%" PRIu32 ",\n",
          p->version);
  fprintf(f, "\"header\":{\"mode\":\"%s\",\"interval_ns\":%" PRIu64
          ",\"wall_ns\":%" PRIu64 ",\"tallies\":%" PRIu64
          ",\"dropped\":%" PRIu64 ",\"obs_dropped\":%" PRIu64
          ",\"hook_ns\":%" PRIu64 ",\"start_unix_ns\":%" PRIu64
          ",\"clock\":",
          p->mode == SPY_MODE_TIMER ? "timer" : "poll", p->interval_ns,
          p->wall_ns, p->tallies, p->dropped, p->obs_dropped, p->hook_ns,
          p->start_unix_ns);
  spyP_json_fstr(f, p->clock);
  fputs(",\"command\":", f);
  spyP_json_fstr(f, p->command);
  fputs("},\n\"frames\":[", f);
  for (size_t i = 0; i < p->nframes; i++) {
    const spy_frame *fr = &p->frames[i];
    fprintf(f, "%s\n{\"kind\":\"%s\",\"key\":\"0x%" PRIx64 "\",\"name\":",
            i ? "," : "", kind_str(fr->kind), fr->key);
    spyP_json_fstr(f, fr->name);
    putc('}', f);
  }
  fputs("],\n\"processes\":[", f);
  for (size_t i = 0; i < p->nprocesses && rc == 0; i++) {
    const spy_process *pc = &p->processes[i];
    fprintf(f, "%s\n{\"pid\":%" PRIu64 ",\"name\":", i ? "," : "", pc->pid);
    spyP_json_fstr(f, pc->name);
    fprintf(f, ",\"total_ns\":%" PRIu64 ",\"tallies\":%" PRIu64
            ",\"root\":%" PRIu32 ",\"tree\":",
            pc->total_ns, pc->tallies, pc->root);
    rc = j_tree(f, p, pc->root);
    putc('}', f);
  }
  fputs("],\n", f);
  if (rc == 0) rc = j_leaves(f, p);
  if (rc == 0) {
    j_prims(f, p);
    j_steps(f, p);
    j_regions(f, p);
    j_natives(f, p);
    j_modules(f, p);
    fprintf(f, "\"gc\":{\"count\":%" PRIu64 ",\"total_ns\":%" PRIu64
            ",\"max_ns\":%" PRIu64 "}}\n",
            p->gc.count, p->gc.total_ns, p->gc.max_ns);
  }
  if (fflush(f) != 0 || ferror(f)) return rc ? rc : SPY_EIO;
  return rc;
}
