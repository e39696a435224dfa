/*
** report/pprof.c: the pprof export (gzip-compressed profile.proto).
**
** pprof is what `go tool pprof`, Pyroscope, Parca and Grafana read. The
** message types come from report/profile.proto through protobuf-c (the
** code is generated at build time) and zlib compresses the packed bytes;
** nothing here encodes protobuf by hand.
**
** The mapping from a spyon profile:
**   - one Sample per call-tree node with self time (as the speedscope
**     export): its stack leaf first, up to but not including the process
**     root, values [self tallies, self ns]; time charged to a process root
**     alone is a sample whose stack is the root frame (named after the
**     process);
**   - labels: "process" (name), "pid" (number) and, under a primitive,
**     "primitive" (the innermost primitive on the stack), so
**     `pprof -tagfocus primitive=...` selects one primitive's time;
**   - one Function and one Location per profile frame (ids frame + 1),
**     the Function named by the report's label, so `pprof -top` lists what
**     the report's leaves list; native frames keep their address and fall
**     in a Mapping that says the symbols are already there (has_functions),
**     so readers do not try to symbolize them again.
** This file is part of the tools library (libspyon_tools), never of
** libspyon: an interpreter that embeds spyon does not link protobuf-c.
*/
#include "config.h"

#include "report/format.h"
#include "report/profile.pb-c.h"
#include <spyon/report.h>
#include "report/walk.h"

#include <stdlib.h>
#include <string.h>
#include <zlib.h>

typedef Perftools__Profiles__Profile PbProfile;
typedef Perftools__Profiles__Sample PbSample;
typedef Perftools__Profiles__Label PbLabel;
typedef Perftools__Profiles__Location PbLocation;
typedef Perftools__Profiles__Line PbLine;
typedef Perftools__Profiles__Function PbFunction;
typedef Perftools__Profiles__Mapping PbMapping;
typedef Perftools__Profiles__ValueType PbValueType;

/* ------------------------------------------------------------------------
** The string table
** --------------------------------------------------------------------- */

/* pprof refers to every string by its index in one table; names repeat
** (a process name on every sample), so strings are interned through an
** open-addressing hash of indices. */
typedef struct strtab {
  char **s;       /* s[0] is "" */
  size_t n, cap;
  uint32_t *slot; /* index + 1, 0 empty; size hcap (a power of two) */
  size_t hcap;
  int oom;
} strtab;

static uint64_t hash_str(const char *s) {
  uint64_t h = 1469598103934665603ull; /* FNV-1a */
  for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
  return h;
}

/* Grow the hash so it stays at most half full. */
static int strtab_rehash(strtab *t) {
  size_t hcap = t->hcap ? t->hcap * 2 : 256;
  uint32_t *slot = calloc(hcap, sizeof *slot);
  if (!slot) return -1;
  for (size_t i = 0; i < t->n; i++) {
    size_t h = (size_t)hash_str(t->s[i]) & (hcap - 1);
    while (slot[h]) h = (h + 1) & (hcap - 1);
    slot[h] = (uint32_t)i + 1;
  }
  free(t->slot);
  t->slot = slot;
  t->hcap = hcap;
  return 0;
}

/* The index of s, adding a copy when new; 0 (the empty string) after an
** allocation failure, which sets t->oom. */
static int64_t strtab_id(strtab *t, const char *s) {
  if (t->oom) return 0;
  if (2 * (t->n + 1) > t->hcap && strtab_rehash(t)) goto oom;
  size_t h = (size_t)hash_str(s) & (t->hcap - 1);
  while (t->slot[h]) {
    uint32_t i = t->slot[h] - 1;
    if (!strcmp(t->s[i], s)) return i;
    h = (h + 1) & (t->hcap - 1);
  }
  if (t->n == t->cap) {
    size_t cap = t->cap ? t->cap * 2 : 256;
    char **n = realloc(t->s, cap * sizeof *n);
    if (!n) goto oom;
    t->s = n;
    t->cap = cap;
  }
  if (!(t->s[t->n] = strdup(s))) goto oom;
  t->slot[h] = (uint32_t)t->n + 1;
  return (int64_t)t->n++;
oom:
  t->oom = 1;
  return 0;
}

static void strtab_free(strtab *t) {
  for (size_t i = 0; i < t->n; i++) free(t->s[i]);
  free(t->s);
  free(t->slot);
}

/* ------------------------------------------------------------------------
** Samples
** --------------------------------------------------------------------- */

/* One sample with its own storage: the stack and up to three labels. */
typedef struct psample {
  PbSample msg;
  int64_t value[2];
  PbLabel lab[3];
  PbLabel *labp[3];
} psample;

typedef struct builder {
  const spy_profile *p;
  strtab st;
  uint32_t *path;        /* path[d]: the node at depth d (0: the root) */
  size_t pathcap;
  psample **smp;
  size_t nsmp, smpcap;
  int64_t k_process, k_pid, k_primitive, s_process, pid;
  int64_t *prim_name;    /* string index per frame, for primitives */
} builder;

/* Add a sample for the stack path[0..depth] (path[depth] the leaf). The
** root frame path[0] is left out unless it is the leaf itself. */
static int add_sample(builder *b, unsigned depth) {
  const spy_profile *p = b->p;
  const spy_node *leaf = &p->nodes[b->path[depth]];
  if (b->nsmp == b->smpcap) {
    size_t cap = b->smpcap ? b->smpcap * 2 : 256;
    psample **n = realloc(b->smp, cap * sizeof *n);
    if (!n) return SPY_ENOMEM;
    b->smp = n;
    b->smpcap = cap;
  }
  psample *s = calloc(1, sizeof *s);
  if (!s) return SPY_ENOMEM;
  b->smp[b->nsmp++] = s;
  perftools__profiles__sample__init(&s->msg);
  unsigned from = depth ? 1 : 0;
  size_t n = depth - from + 1;
  uint64_t *loc = malloc(n * sizeof *loc);
  if (!loc) return SPY_ENOMEM;
  s->msg.location_id = loc;
  s->msg.n_location_id = n;
  int64_t prim = 0;
  for (size_t i = 0; i < n; i++) {
    uint32_t fr = p->nodes[b->path[depth - i]].frame;
    loc[i] = (uint64_t)fr + 1;
    if (!prim && p->frames[fr].kind == SPY_FRAME_PRIM)
      prim = b->prim_name[fr];
  }
  s->value[0] = (int64_t)leaf->self_tallies;
  s->value[1] = (int64_t)leaf->self_ns;
  s->msg.value = s->value;
  s->msg.n_value = 2;
  for (int i = 0; i < 3; i++) {
    perftools__profiles__label__init(&s->lab[i]);
    s->labp[i] = &s->lab[i];
  }
  s->lab[0].key = b->k_process;
  s->lab[0].str = b->s_process;
  s->lab[1].key = b->k_pid;
  s->lab[1].num = b->pid;
  s->lab[2].key = b->k_primitive;
  s->lab[2].str = prim;
  s->msg.label = s->labp;
  s->msg.n_label = prim ? 3 : 2;
  return 0;
}

static int pprof_row(void *ud, const spy_profile *p, const spyR_row *row) {
  builder *b = ud;
  unsigned d = row->depth + 1;
  if (d >= b->pathcap) {
    size_t cap = b->pathcap * 2;
    while (cap <= d) cap *= 2;
    uint32_t *n = realloc(b->path, cap * sizeof *n);
    if (!n) return SPY_ENOMEM;
    b->path = n;
    b->pathcap = cap;
  }
  b->path[d] = row->node;
  const spy_node *nd = &p->nodes[row->node];
  if (nd->self_ns || nd->self_tallies) return add_sample(b, d);
  return 0;
}

/* ------------------------------------------------------------------------
** The profile
** --------------------------------------------------------------------- */

/* gzip the packed message onto f in pieces. */
static int write_gzip(const uint8_t *buf, size_t len, FILE *f) {
  z_stream z;
  memset(&z, 0, sizeof z);
  /* 15 + 16: a gzip header and trailer around deflate, as pprof expects. */
  if (deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8,
                   Z_DEFAULT_STRATEGY) != Z_OK)
    return SPY_ENOMEM;
  unsigned char out[65536];
  int rc = 0, zr;
  z.next_in = (Bytef *)buf;
  size_t left = len;
  do {
    uInt chunk = left > (1u << 30) ? (1u << 30) : (uInt)left;
    z.avail_in = chunk;
    left -= chunk;
    int flush = left ? Z_NO_FLUSH : Z_FINISH;
    do {
      z.next_out = out;
      z.avail_out = sizeof out;
      zr = deflate(&z, flush);
      if (zr == Z_STREAM_ERROR) {
        rc = SPY_ENOMEM;
        break;
      }
      size_t have = sizeof out - z.avail_out;
      if (have && fwrite(out, 1, have, f) != have) rc = SPY_EIO;
    } while (z.avail_out == 0 && rc == 0);
  } while (left && rc == 0);
  deflateEnd(&z);
  return rc;
}

/* Widen [*lo, *hi) to hold addr. */
static void span(uint64_t *lo, uint64_t *hi, uint64_t addr) {
  if (addr < *lo) *lo = addr;
  if (addr >= *hi) *hi = addr == UINT64_MAX ? addr : addr + 1;
}

/* The per-frame messages: one Function, Line and Location per frame (ids
** frame + 1), with the arrays of pointers the Profile message takes. */
typedef struct frametab {
  PbFunction *fn, **fnp;
  PbLocation *lo, **lop;
  PbLine *li, **lip;
} frametab;

static int frametab_alloc(frametab *t, size_t n) {
  if (!n) n = 1;
  t->fn = calloc(n, sizeof *t->fn);
  t->lo = calloc(n, sizeof *t->lo);
  t->li = calloc(n, sizeof *t->li);
  t->lip = calloc(n, sizeof *t->lip);
  t->fnp = calloc(n, sizeof *t->fnp);
  t->lop = calloc(n, sizeof *t->lop);
  return t->fn && t->lo && t->li && t->lip && t->fnp && t->lop ? 0
                                                               : SPY_ENOMEM;
}

static void frametab_free(frametab *t) {
  free(t->fn);
  free(t->lo);
  free(t->li);
  free(t->lip);
  free(t->fnp);
  free(t->lop);
}

/* The mappings: 1 the interpreter, 2 "[native]" (native frames of no
** known object), 3 + m module m; and the span of the addresses of the
** native frames that fall in each. */
typedef struct maptab {
  size_t nm;                 /* modules */
  uint32_t *fmod;            /* per frame: its module, SPY_NONE unknown */
  uint64_t *mlo, *mhi;       /* per module: its frames' span [lo, hi) */
  int natives;               /* a frame falls in mapping 2 */
  uint64_t lo_addr, hi_addr; /* and mapping 2's span */
  PbMapping *map, **mapp;    /* nm + 2 of them */
} maptab;

/* Each native frame's object from p's locations. */
static int maptab_alloc(maptab *mt, const spy_profile *p) {
  size_t nm = mt->nm = p->nmodules;
  mt->fmod = malloc((p->nframes + 1) * sizeof *mt->fmod);
  mt->mlo = malloc((nm + 1) * sizeof *mt->mlo);
  mt->mhi = calloc(nm + 1, sizeof *mt->mhi);
  mt->map = calloc(nm + 2, sizeof *mt->map);
  mt->mapp = calloc(nm + 2, sizeof *mt->mapp);
  mt->lo_addr = UINT64_MAX;
  if (!mt->fmod || !mt->mlo || !mt->mhi || !mt->map || !mt->mapp)
    return SPY_ENOMEM;
  for (size_t i = 0; i < p->nframes; i++) mt->fmod[i] = SPY_NONE;
  for (size_t i = 0; i < nm; i++) mt->mlo[i] = UINT64_MAX;
  for (size_t i = 0; i < p->nlocations; i++)
    if (p->locations[i].frame < p->nframes && p->locations[i].module < nm)
      mt->fmod[p->locations[i].frame] = p->locations[i].module;
  return 0;
}

static void maptab_free(maptab *mt) {
  free(mt->fmod);
  free(mt->mlo);
  free(mt->mhi);
  free(mt->map);
  free(mt->mapp);
}

/* Fill T from b's profile: each Function named by the report's label (a
** native frame by its bare symbol); a native frame's Location at its
** address, in its object's mapping or mapping 2, whose span in MT it
** widens. LAB is scratch. */
static int frametab_fill(frametab *t, maptab *mt, builder *b, spyR_buf *lab) {
  const spy_profile *p = b->p;
  for (size_t i = 0; i < p->nframes; i++) {
    const spy_frame *fr = &p->frames[i];
    spyR_buf_clear(lab);
    if (fr->kind == SPY_FRAME_NATIVE)
      spyR_buf_puts(lab, fr->name ? fr->name : "?"); /* the bare symbol */
    else
      spyR_label(lab, p, (uint32_t)i);
    if (lab->oom) return SPY_ENOMEM;
    PbFunction *fn = &t->fn[i];
    perftools__profiles__function__init(fn);
    fn->id = (uint64_t)i + 1;
    fn->name = fn->system_name = strtab_id(&b->st, spyR_buf_str(lab));
    if (fr->kind == SPY_FRAME_PRIM) b->prim_name[i] = fn->name;
    t->fnp[i] = fn;
    perftools__profiles__line__init(&t->li[i]);
    t->li[i].function_id = fn->id;
    t->lip[i] = &t->li[i];
    PbLocation *lo = &t->lo[i];
    perftools__profiles__location__init(lo);
    lo->id = (uint64_t)i + 1;
    lo->line = &t->lip[i];
    lo->n_line = 1;
    if (fr->kind == SPY_FRAME_NATIVE) {
      uint32_t m = mt->fmod[i];
      lo->address = fr->key;
      if (m == SPY_NONE) { /* no object known: mapping 2, "[native]" */
        lo->mapping_id = 2;
        mt->natives = 1;
        span(&mt->lo_addr, &mt->hi_addr, fr->key);
      } else { /* the object's mapping, 3 + its module index */
        lo->mapping_id = 3 + (uint64_t)m;
        span(&mt->mlo[m], &mt->mhi[m], fr->key);
      }
    }
    t->lop[i] = lo;
  }
  return 0;
}

/* The samples of every process, in the report's process order IX. */
static int add_processes(builder *b, const uint32_t *ix) {
  const spy_profile *p = b->p;
  b->k_process = strtab_id(&b->st, "process");
  b->k_pid = strtab_id(&b->st, "pid");
  b->k_primitive = strtab_id(&b->st, "primitive");
  int rc = 0;
  for (size_t k = 0; k < p->nprocesses && rc == 0; k++) {
    const spy_process *pr = &p->processes[ix[k]];
    if (pr->root >= p->nnodes) return SPY_EFORMAT;
    b->s_process = strtab_id(&b->st, pr->name ? pr->name : "?");
    b->pid = (int64_t)pr->pid;
    b->path[0] = pr->root;
    const spy_node *root = &p->nodes[pr->root];
    if (root->self_ns || root->self_tallies) rc = add_sample(b, 0);
    if (rc == 0) rc = spyR_walk(p, ix[k], 0, 0, pprof_row, b);
  }
  return rc;
}

/* The sample and period types of PF and their storage VT (3) and VTP (2). */
static void sample_types(PbProfile *pf, PbValueType *vt, PbValueType **vtp,
                         builder *b) {
  const spy_profile *p = b->p;
  for (int i = 0; i < 3; i++) perftools__profiles__value_type__init(&vt[i]);
  vtp[0] = &vt[0];
  vtp[1] = &vt[1];
  vt[0].type = strtab_id(&b->st, "samples");
  vt[0].unit = strtab_id(&b->st, "count");
  /* A profile records wall time (its clock is a wall clock: "tsc" or
  ** "clock_gettime"); the type becomes "cpu" only if it ever records a
  ** thread CPU-time clock. */
  int cpu = p->clock && strstr(p->clock, "cpu") != NULL;
  vt[1].type = strtab_id(&b->st, cpu ? "cpu" : "wall");
  vt[1].unit = strtab_id(&b->st, "nanoseconds");
  vt[2] = vt[1];
  pf->sample_type = vtp;
  pf->n_sample_type = 2;
  pf->period_type = &vt[2];
  pf->period = (int64_t)p->interval_ns;
  pf->default_sample_type = vt[1].type;
}

/* The comments of PF (the command, then spyon's version, mode and clock)
** in COMMENTS (2). LAB is scratch. */
static void comments(PbProfile *pf, int64_t *comments, builder *b,
                     spyR_buf *lab) {
  const spy_profile *p = b->p;
  size_t n = 0;
  if (p->command && *p->command)
    comments[n++] = strtab_id(&b->st, p->command);
  spyR_buf_clear(lab);
  spyR_buf_printf(lab, "spyon %s, %s mode, clock %s", SPY_VERSION_STRING,
                  p->mode == SPY_MODE_TIMER ? "timer" : "poll",
                  p->clock && *p->clock ? p->clock : "?");
  comments[n++] = strtab_id(&b->st, spyR_buf_str(lab));
  pf->comment = comments;
  pf->n_comment = n;
}

/* mapping[0] is "the main binary" to pprof: the interpreter, named by
** the command, its symbols present (has_functions), so readers neither
** warn that it is missing nor look for a binary. Native frames fall in
** their object's mapping (3 + its module index: file, build-id, the
** span of the frames' addresses, file offset from the load bias), or in
** mapping 2, "[native]", when no object was known; all are marked as
** already symbolized (the frames carry their names). */
static void mappings(PbProfile *pf, maptab *mt, builder *b) {
  const spy_profile *p = b->p;
  PbMapping *map = mt->map;
  for (size_t i = 0; i < mt->nm + 2; i++) {
    perftools__profiles__mapping__init(&map[i]);
    map[i].id = (uint64_t)i + 1;
    map[i].has_functions = 1;
    mt->mapp[i] = &map[i];
  }
  map[0].filename = strtab_id(&b->st, p->command && *p->command ? p->command
                                                                 : "spyon");
  map[1].memory_start = mt->natives ? mt->lo_addr : 0;
  map[1].memory_limit = mt->natives ? mt->hi_addr : 0;
  map[1].filename = strtab_id(&b->st, "[native]");
  for (size_t m = 0; m < mt->nm; m++) {
    const spy_module *md = &p->modules[m];
    PbMapping *mp = &map[2 + m];
    if (mt->mhi[m]) {
      mp->memory_start = mt->mlo[m];
      mp->memory_limit = mt->mhi[m];
      mp->file_offset = mt->mlo[m] >= md->bias ? mt->mlo[m] - md->bias : 0;
    }
    mp->filename = strtab_id(&b->st, md->path ? md->path : "");
    mp->build_id = strtab_id(&b->st, md->build_id ? md->build_id : "");
  }
  pf->mapping = mt->mapp;
  pf->n_mapping = mt->nm + 2;
}

/* Pack PF and write it gzipped to F. */
static int pack_write(const PbProfile *pf, FILE *f) {
  size_t len = perftools__profiles__profile__get_packed_size(pf);
  uint8_t *packed = malloc(len ? len : 1);
  if (!packed) return SPY_ENOMEM;
  perftools__profiles__profile__pack(pf, packed);
  int rc = write_gzip(packed, len, f);
  free(packed);
  return rc;
}

/* The message refers to strings by their index in the table, so the
** order of the steps below is the order of the table: frames, samples'
** labels, types, comments, mappings. */
int spy_report_pprof(const spy_profile *p, FILE *f) {
  if (!p || !f) return SPY_EINVAL;
  builder b;
  memset(&b, 0, sizeof b);
  b.p = p;
  strtab_id(&b.st, ""); /* string_table[0] must be "" */
  uint32_t *ix = spyR_process_order(p);
  frametab t = {0};
  maptab mt = {0};
  int rc = frametab_alloc(&t, p->nframes);
  if (maptab_alloc(&mt, p)) rc = SPY_ENOMEM;
  b.prim_name = calloc(p->nframes ? p->nframes : 1, sizeof *b.prim_name);
  b.path = malloc(64 * sizeof *b.path);
  b.pathcap = 64;
  PbSample **smsg = NULL;
  spyR_buf lab = {0};
  if (!ix || !b.prim_name || !b.path) rc = SPY_ENOMEM;
  if (rc == 0) rc = frametab_fill(&t, &mt, &b, &lab);
  if (rc == 0) rc = add_processes(&b, ix);
  if (rc == 0) {
    PbProfile pf;
    PbValueType vt[3], *vtp[2];
    int64_t cm[2];
    perftools__profiles__profile__init(&pf);
    sample_types(&pf, vt, vtp, &b);
    pf.time_nanos = (int64_t)p->start_unix_ns;
    pf.duration_nanos = (int64_t)p->wall_ns;
    comments(&pf, cm, &b, &lab);
    mappings(&pf, &mt, &b);
    pf.function = t.fnp;
    pf.n_function = p->nframes;
    pf.location = t.lop;
    pf.n_location = p->nframes;
    smsg = malloc((b.nsmp ? b.nsmp : 1) * sizeof *smsg);
    if (!smsg || b.st.oom || lab.oom) rc = SPY_ENOMEM;
    for (size_t i = 0; rc == 0 && i < b.nsmp; i++) smsg[i] = &b.smp[i]->msg;
    pf.sample = smsg;
    pf.n_sample = b.nsmp;
    pf.string_table = b.st.s;
    pf.n_string_table = b.st.n;
    if (rc == 0) rc = pack_write(&pf, f);
  }

  for (size_t i = 0; i < b.nsmp; i++) {
    free(b.smp[i]->msg.location_id);
    free(b.smp[i]);
  }
  free(b.smp);
  free(b.path);
  free(b.prim_name);
  frametab_free(&t);
  maptab_free(&mt);
  free(ix);
  free(smsg);
  spyR_buf_free(&lab);
  strtab_free(&b.st);
  if (fflush(f) != 0 || ferror(f)) return rc ? rc : SPY_EIO;
  return rc;
}
