/*
** profile/save.c: writing profiles (layout: docs/format.md), the runtime
** library's half of the file format; profile/load.c, in the tools library,
** is the other half.
**
** The writer encodes the whole profile into memory and writes it at once;
** the encoding is deterministic (strings are interned in a fixed order), so
** equal profiles give identical files. The runtime depends on libc only,
** so the CRC-32 is computed here (the loader checks it with zlib's, so
** every test that saves and loads a profile checks this one too).
*/
#include "config.h"

#include "profile/atomic.h"
#include "profile/file.h"
#include "profile/profile.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void put_le(unsigned char *d, uint64_t v, int n) {
  for (int i = 0; i < n; i++) d[i] = (unsigned char)(v >> (8 * i));
}

/* CRC-32 as zlib and PNG compute it (reflected polynomial 0xEDB88320,
** initial and final complement), a byte at a time from a table. */
static uint32_t crc32_of(const unsigned char *b, size_t n) {
  static uint32_t table[256];
  static int ready; /* idempotent: racing writers store the same values */
  if (!__atomic_load_n(&ready, __ATOMIC_ACQUIRE)) {
    for (uint32_t i = 0; i < 256; i++) {
      uint32_t c = i;
      for (int k = 0; k < 8; k++) c = c & 1 ? 0xEDB88320u ^ (c >> 1) : c >> 1;
      table[i] = c;
    }
    __atomic_store_n(&ready, 1, __ATOMIC_RELEASE);
  }
  uint32_t c = 0xFFFFFFFFu;
  for (size_t i = 0; i < n; i++) c = table[(c ^ b[i]) & 0xFF] ^ (c >> 8);
  return c ^ 0xFFFFFFFFu;
}

void spyP_fix_preamble(unsigned char *buf, size_t len) {
  if (len < SPYP_PRE_SIZE) return;
  put_le(buf + SPYP_PRE_LEN, (uint64_t)(len - SPYP_PRE_SIZE), 8);
  put_le(buf + SPYP_PRE_CRC, crc32_of(buf + SPYP_PRE_LEN, len - SPYP_PRE_LEN),
         4);
}

/* ------------------------------------------------------------------------
** Writer: growable buffers and the string table
** --------------------------------------------------------------------- */

typedef struct wbuf {
  unsigned char *p;
  size_t n, cap;
  int oom;
} wbuf;

static void w_bytes(wbuf *w, const void *s, size_t n) {
  if (w->oom) return;
  if (w->cap - w->n < n) {
    size_t cap = w->cap ? w->cap : 4096;
    while (cap - w->n < n) {
      if (cap > SIZE_MAX / 2) {
        w->oom = 1;
        return;
      }
      cap *= 2;
    }
    unsigned char *np = realloc(w->p, cap);
    if (!np) {
      w->oom = 1;
      return;
    }
    w->p = np;
    w->cap = cap;
  }
  if (n) memcpy(w->p + w->n, s, n);
  w->n += n;
}

/* Unsigned LEB128: 7 bits a byte, low bits first, high bit = more. */
static void w_var(wbuf *w, uint64_t v) {
  unsigned char b[10];
  int k = 0;
  do {
    unsigned char c = v & 0x7f;
    v >>= 7;
    b[k++] = c | (v ? 0x80 : 0);
  } while (v);
  w_bytes(w, b, (size_t)k);
}

/* An optional index: 0 for SPY_NONE, else index + 1. */
static void w_opt(wbuf *w, uint32_t idx) {
  w_var(w, idx == SPY_NONE ? 0 : (uint64_t)idx + 1);
}

/* Strings are written once and referred to by index; the table interns
** them (open addressing on an FNV-1a hash) so that repeated names such as
** operand size names cost one entry. */
typedef struct strtab {
  const char **v;
  size_t n, cap;
  uint32_t *slot; /* 0: empty, else index + 1 */
  size_t nslot;   /* a power of two */
  int oom;
} strtab;

static uint64_t str_hash(const char *s) {
  uint64_t h = 14695981039346656037u;
  for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211u;
  return h;
}

static int st_grow(strtab *t) {
  size_t nslot = t->nslot ? t->nslot * 2 : 256;
  uint32_t *slot = calloc(nslot, sizeof *slot);
  if (!slot) return -1;
  for (size_t i = 0; i < t->n; i++) {
    size_t j = str_hash(t->v[i]) & (nslot - 1);
    while (slot[j]) j = (j + 1) & (nslot - 1);
    slot[j] = (uint32_t)(i + 1);
  }
  free(t->slot);
  t->slot = slot;
  t->nslot = nslot;
  return 0;
}

/* The index of s (NULL counts as ""), added when new. */
static uint32_t st_intern(strtab *t, const char *s) {
  if (!s) s = "";
  if (t->oom) return 0;
  if ((t->n + 1) * 2 > t->nslot && st_grow(t)) {
    t->oom = 1;
    return 0;
  }
  size_t j = str_hash(s) & (t->nslot - 1);
  while (t->slot[j]) {
    if (strcmp(t->v[t->slot[j] - 1], s) == 0) return t->slot[j] - 1;
    j = (j + 1) & (t->nslot - 1);
  }
  if (t->n == t->cap) {
    size_t cap = t->cap ? t->cap * 2 : 256;
    const char **v = realloc(t->v, cap * sizeof *v);
    if (!v || cap >= UINT32_MAX) {
      if (v) t->v = v;
      t->oom = 1;
      return 0;
    }
    t->v = v;
    t->cap = cap;
  }
  t->v[t->n] = s;
  t->slot[j] = (uint32_t)(t->n + 1);
  return (uint32_t)t->n++;
}

/* ------------------------------------------------------------------------
** Writer: sections
** --------------------------------------------------------------------- */

/* Refuse what cannot be encoded faithfully (it would read out of bounds). */
static int enc_check(const spy_profile *p, char *err, size_t errlen) {
#define ARR_(n, a, what)                                                  \
  if ((n) && !(a)) {                                                      \
    if (err && errlen) snprintf(err, errlen, "%s", what " array is NULL"); \
    return SPY_EINVAL;                                                    \
  }
  ARR_(p->nframes, p->frames, "frames")
  ARR_(p->nnodes, p->nodes, "nodes")
  ARR_(p->nprocesses, p->processes, "processes")
  ARR_(p->nprims, p->prims, "prims")
  ARR_(p->nsteps, p->steps, "steps")
  ARR_(p->nregions, p->regions, "regions")
  for (size_t i = 0; i < p->nprims; i++) {
    ARR_(p->prims[i].nobs, p->prims[i].obs, "a prim's obs")
    if (p->prims[i].nsizes > 4) {
      if (err && errlen)
        snprintf(err, errlen, "prim %zu: nsizes %u > 4", i,
                 p->prims[i].nsizes);
      return SPY_EINVAL;
    }
  }
  ARR_(p->nnatives, p->natives, "natives")
  ARR_(p->nmodules, p->modules, "modules")
  ARR_(p->nlocations, p->locations, "locations")
  for (size_t i = 0; i < p->nlocations; i++) {
    const spy_location *l = &p->locations[i];
    if (l->frame >= p->nframes || p->frames[l->frame].kind != SPY_FRAME_NATIVE ||
        (l->module != SPY_NONE && l->module >= p->nmodules)) {
      if (err && errlen)
        snprintf(err, errlen, "location %zu: frame %u or module %u out of "
                 "range or not native", i, l->frame, l->module);
      return SPY_EINVAL;
    }
  }
  for (size_t i = 0; i < p->nsteps; i++) {
    ARR_(p->steps[i].nframes, p->steps[i].frames, "a step's frames")
    if (p->steps[i].off_cpu_pct > 100) {
      if (err && errlen)
        snprintf(err, errlen, "step %zu: off_cpu_pct %u > 100", i,
                 p->steps[i].off_cpu_pct);
      return SPY_EINVAL;
    }
    if (p->steps[i].nsizes > 4) {
      if (err && errlen)
        snprintf(err, errlen, "step %zu: nsizes %u > 4", i,
                 p->steps[i].nsizes);
      return SPY_EINVAL;
    }
  }
#undef ARR_
  return 0;
}

/* Every string in the order the sections use them, so that the table (and
** therefore the file) is the same for equal profiles. */
static void collect_strings(const spy_profile *p, strtab *t) {
  st_intern(t, p->clock);
  st_intern(t, p->command);
  for (size_t i = 0; i < p->nprims; i++) {
    const spy_profile_prim *pr = &p->prims[i];
    st_intern(t, pr->name);
    for (unsigned k = 0; k < pr->nsizes; k++) st_intern(t, pr->size_names[k]);
    if (pr->model) st_intern(t, pr->model);
  }
  for (size_t i = 0; i < p->nframes; i++) st_intern(t, p->frames[i].name);
  for (size_t i = 0; i < p->nprocesses; i++)
    st_intern(t, p->processes[i].name);
  for (size_t i = 0; i < p->nregions; i++) st_intern(t, p->regions[i].name);
  for (size_t i = 0; i < p->nmodules; i++) {
    st_intern(t, p->modules[i].path);
    st_intern(t, p->modules[i].build_id);
  }
}

static void put_section(wbuf *body, unsigned tag, wbuf *sec) {
  if (sec->oom) body->oom = 1;
  w_var(body, tag);
  w_var(body, sec->n);
  w_bytes(body, sec->p, sec->n);
  sec->n = 0;
}

/* One writer per section, in file order. Each appends its section's
** payload to s; the optional ones write nothing when the profile has
** nothing for them, and are then left out of the file. */

static void enc_header(const spy_profile *p, strtab *t, wbuf *s) {
  w_var(s, (uint64_t)p->mode);
  w_var(s, p->interval_ns);
  w_var(s, p->wall_ns);
  w_var(s, p->tallies);
  w_var(s, p->dropped);
  w_var(s, p->obs_dropped);
  w_var(s, p->hook_ns);
  w_var(s, p->start_unix_ns);
  w_var(s, st_intern(t, p->clock));
  w_var(s, st_intern(t, p->command));
}

static void enc_strings(const spy_profile *p, strtab *t, wbuf *s) {
  w_var(s, t->n);
  for (size_t i = 0; i < t->n; i++) {
    size_t len = strlen(t->v[i]);
    w_var(s, len);
    w_bytes(s, t->v[i], len);
  }
}

static void enc_prims(const spy_profile *p, strtab *t, wbuf *s) {
  w_var(s, p->nprims);
  for (size_t i = 0; i < p->nprims; i++) {
    const spy_profile_prim *pr = &p->prims[i];
    w_var(s, st_intern(t, pr->name));
    w_var(s, pr->nsizes);
    for (unsigned k = 0; k < pr->nsizes; k++)
      w_var(s, st_intern(t, pr->size_names[k]));
    w_var(s, pr->flags);
    w_var(s, pr->calls);
    w_var(s, pr->total_ns);
    w_var(s, pr->max_ns);
    w_var(s, pr->obs_offered);
    w_var(s, pr->model ? (uint64_t)st_intern(t, pr->model) + 1 : 0);
    w_var(s, pr->nobs);
    for (size_t j = 0; j < pr->nobs; j++) {
      for (unsigned k = 0; k < pr->nsizes; k++) w_var(s, pr->obs[j].size[k]);
      w_var(s, pr->obs[j].ns);
      w_var(s, pr->obs[j].gc);
    }
  }
}

static void enc_frames(const spy_profile *p, strtab *t, wbuf *s) {
  w_var(s, p->nframes);
  for (size_t i = 0; i < p->nframes; i++) {
    w_var(s, (uint64_t)p->frames[i].kind);
    w_var(s, p->frames[i].key);
    w_var(s, st_intern(t, p->frames[i].name));
  }
}

static void enc_nodes(const spy_profile *p, strtab *t, wbuf *s) {
  w_var(s, p->nnodes);
  for (size_t i = 0; i < p->nnodes; i++) {
    const spy_node *n = &p->nodes[i];
    w_var(s, n->frame);
    w_opt(s, n->parent);
    w_opt(s, n->first_child);
    w_opt(s, n->next_sibling);
    w_var(s, n->total_ns);
    w_var(s, n->self_ns);
    w_var(s, n->tallies);
    w_var(s, n->self_tallies);
  }
}

static void enc_processes(const spy_profile *p, strtab *t, wbuf *s) {
  w_var(s, p->nprocesses);
  for (size_t i = 0; i < p->nprocesses; i++) {
    const spy_process *pc = &p->processes[i];
    w_var(s, pc->pid);
    w_var(s, st_intern(t, pc->name));
    w_var(s, pc->root);
    w_var(s, pc->total_ns);
    w_var(s, pc->tallies);
  }
}

static void enc_steps(const spy_profile *p, strtab *t, wbuf *s) {
  w_var(s, p->nsteps);
  for (size_t i = 0; i < p->nsteps; i++) {
    const spy_step *st = &p->steps[i];
    w_var(s, (uint64_t)st->kind);
    w_opt(s, st->prim);
    w_var(s, st->nsizes);
    for (unsigned k = 0; k < st->nsizes; k++) w_var(s, st->size[k]);
    w_var(s, st->ns);
    w_var(s, st->process);
    w_var(s, st->nframes);
    for (uint32_t k = 0; k < st->nframes; k++) w_var(s, st->frames[k]);
  }
}

static void enc_regions(const spy_profile *p, strtab *t, wbuf *s) {
  w_var(s, p->nregions);
  for (size_t i = 0; i < p->nregions; i++) {
    const spy_profile_region *r = &p->regions[i];
    w_var(s, st_intern(t, r->name));
    w_opt(s, r->parent);
    w_var(s, r->calls);
    w_var(s, r->total_ns);
    w_var(s, r->max_ns);
  }
}

static void enc_gc(const spy_profile *p, strtab *t, wbuf *s) {
  w_var(s, p->gc.count);
  w_var(s, p->gc.total_ns);
  w_var(s, p->gc.max_ns);
}

/* Optional: native stacks, only when there are some, so that profiles
** without them encode exactly as before. */
static void enc_natives(const spy_profile *p, strtab *t, wbuf *s) {
  if (!p->nnatives) return;
  w_var(s, p->nnatives);
  for (size_t i = 0; i < p->nnatives; i++) {
    const spy_native *nt = &p->natives[i];
    w_var(s, nt->prim);
    w_var(s, nt->count);
    w_var(s, nt->nframes);
    for (uint32_t k = 0; k < nt->nframes; k++) w_var(s, nt->frames[k]);
  }
}

/* Optional: where native frames point, when the profile says. */
static void enc_modules(const spy_profile *p, strtab *t, wbuf *s) {
  if (!p->nmodules && !p->nlocations) return;
  w_var(s, p->nmodules);
  for (size_t i = 0; i < p->nmodules; i++) {
    w_var(s, st_intern(t, p->modules[i].path));
    w_var(s, st_intern(t, p->modules[i].build_id));
    w_var(s, p->modules[i].bias);
  }
  w_var(s, p->nlocations);
  for (size_t i = 0; i < p->nlocations; i++) {
    w_var(s, p->locations[i].frame);
    w_opt(s, p->locations[i].module);
    w_var(s, p->locations[i].addr);
  }
}

/* Optional: how much of each long step was spent descheduled, for the
** steps where it was measured and not 0. */
static void enc_step_cpu(const spy_profile *p, strtab *t, wbuf *s) {
  size_t noff = 0;
  for (size_t i = 0; i < p->nsteps; i++) noff += p->steps[i].off_cpu_pct > 0;
  if (!noff) return;
  w_var(s, noff);
  for (size_t i = 0; i < p->nsteps; i++)
    if (p->steps[i].off_cpu_pct > 0) {
      w_var(s, i);
      w_var(s, p->steps[i].off_cpu_pct);
    }
}

static const struct {
  unsigned tag;
  void (*enc)(const spy_profile *p, strtab *t, wbuf *s);
} sections[] = {
    {SPYP_SEC_HEADER, enc_header},       {SPYP_SEC_STRINGS, enc_strings},
    {SPYP_SEC_PRIMS, enc_prims},         {SPYP_SEC_FRAMES, enc_frames},
    {SPYP_SEC_NODES, enc_nodes},         {SPYP_SEC_PROCESSES, enc_processes},
    {SPYP_SEC_STEPS, enc_steps},         {SPYP_SEC_REGIONS, enc_regions},
    {SPYP_SEC_GC, enc_gc},               {SPYP_SEC_NATIVES, enc_natives},
    {SPYP_SEC_MODULES, enc_modules},     {SPYP_SEC_STEP_CPU, enc_step_cpu},
};

/* Every section into b, each encoded in s first (a section's length
** precedes it). A required section always writes at least its count. */
static void enc_sections(const spy_profile *p, strtab *t, wbuf *b, wbuf *s) {
  for (size_t i = 0; i < sizeof sections / sizeof sections[0]; i++) {
    sections[i].enc(p, t, s);
    if (s->n || s->oom) put_section(b, sections[i].tag, s);
  }
}

int spyP_encode(const spy_profile *p, unsigned char **out, size_t *len,
                char *err, size_t errlen) {
  if (err && errlen) err[0] = '\0';
  if (!p || !out || !len) return SPY_EINVAL;
  *out = NULL;
  *len = 0;
  int rc = enc_check(p, err, errlen);
  if (rc) return rc;
  strtab t = {0};
  wbuf b = {0}, s = {0};
  unsigned char pre[SPYP_PRE_SIZE] = {0};
  memcpy(pre, spyP_magic, sizeof spyP_magic);
  put_le(pre + SPYP_PRE_VERSION, SPY_FORMAT_VERSION, 4);
  w_bytes(&b, pre, sizeof pre);
  collect_strings(p, &t);
  if (!t.oom) enc_sections(p, &t, &b, &s);
  int oom = t.oom || b.oom || s.oom;
  free(t.v);
  free(t.slot);
  free(s.p);
  if (oom) {
    free(b.p);
    if (err && errlen) snprintf(err, errlen, "out of memory");
    return SPY_ENOMEM;
  }
  spyP_fix_preamble(b.p, b.n);
  *out = b.p;
  *len = b.n;
  return 0;
}

int spy_profile_save(const spy_profile *p, const char *path, char *err,
                     size_t errlen) {
  if (err && errlen) err[0] = '\0';
  if (!p || !path) return SPY_EINVAL;
  unsigned char *buf;
  size_t len;
  char why[200];
  int rc = spyP_encode(p, &buf, &len, why, sizeof why);
  if (rc) {
    if (err && errlen) snprintf(err, errlen, "%s: %s", path, why);
    return rc;
  }
  spyP_afile a;
  rc = spyP_aopen(&a, path, err, errlen);
  if (rc) {
    free(buf);
    return rc;
  }
  fwrite(buf, 1, len, a.f); /* an error shows in ferror, seen by commit */
  free(buf);
  return spyP_acommit(&a, err, errlen);
}


