/*
** sampler/modules.c: the loaded object of each native frame, from the
** dynamic loader's list (dl_iterate_phdr).
**
** One pass over the loader's list copies what is needed (each object's
** path, load bias, build-id and loadable segments); then each native
** frame's address is looked up in the copied segments. Only the objects
** some frame points into become modules of the profile.
*/
#define _GNU_SOURCE
#include "config.h"

#include "sampler/modules.h"

#include "profile/profile.h"

#include <elf.h>
#include <link.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct object {
  char *path;
  char build_id[2 * 64 + 1]; /* hex; GNU build-ids are 20 bytes */
  uint64_t bias;
  uint32_t module; /* index in the profile, SPY_NONE until used */
} object;

typedef struct segment {
  uint64_t lo, hi; /* [lo, hi) at run time */
  size_t obj;
} segment;

typedef struct scan {
  object *objs;
  size_t nobj, capobj;
  segment *segs;
  size_t nseg, capseg;
  int oom;
} scan;

static int grow(void **p, size_t *cap, size_t n, size_t size) {
  if (n < *cap) return 0;
  size_t c = *cap ? *cap * 2 : 32;
  void *np = realloc(*p, c * size);
  if (!np) return -1;
  *p = np;
  *cap = c;
  return 0;
}

/* The GNU build-id note among the object's PT_NOTE segments, in hex. */
static void build_id_of(const struct dl_phdr_info *info, char *out,
                        size_t outlen) {
  out[0] = '\0';
  for (int i = 0; i < info->dlpi_phnum; i++) {
    const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
    if (ph->p_type != PT_NOTE) continue;
    const unsigned char *b =
        (const unsigned char *)(info->dlpi_addr + ph->p_vaddr);
    size_t off = 0, len = ph->p_memsz;
    while (len - off >= sizeof(ElfW(Nhdr))) {
      const ElfW(Nhdr) *n = (const ElfW(Nhdr) *)(b + off);
      size_t name = (n->n_namesz + 3) & ~(size_t)3;
      size_t desc = (n->n_descsz + 3) & ~(size_t)3;
      size_t body = off + sizeof *n;
      if (name > len - body || desc > len - body - name) break;
      if (n->n_type == NT_GNU_BUILD_ID && n->n_namesz == 4 &&
          memcmp(b + body, "GNU", 4) == 0 && 2 * n->n_descsz < outlen) {
        static const char hex[] = "0123456789abcdef";
        const unsigned char *d = b + body + name;
        for (size_t k = 0; k < n->n_descsz; k++) {
          out[2 * k] = hex[d[k] >> 4];
          out[2 * k + 1] = hex[d[k] & 15];
        }
        out[2 * n->n_descsz] = '\0';
        return;
      }
      off = body + name + desc;
    }
  }
}

static int add_object(struct dl_phdr_info *info, size_t size, void *ud) {
  (void)size;
  scan *s = ud;
  if (grow((void **)&s->objs, &s->capobj, s->nobj, sizeof *s->objs)) {
    s->oom = 1;
    return 1;
  }
  /* The main program is the one object the loader names "". */
  char exe[PATH_MAX];
  const char *path = info->dlpi_name;
  if (!path || !path[0]) {
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    exe[n > 0 ? n : 0] = '\0';
    path = exe;
  }
  object *o = &s->objs[s->nobj];
  if (!(o->path = strdup(path))) {
    s->oom = 1;
    return 1;
  }
  o->bias = (uint64_t)info->dlpi_addr;
  o->module = SPY_NONE;
  build_id_of(info, o->build_id, sizeof o->build_id);
  for (int i = 0; i < info->dlpi_phnum; i++) {
    const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
    if (ph->p_type != PT_LOAD) continue;
    if (grow((void **)&s->segs, &s->capseg, s->nseg, sizeof *s->segs)) {
      s->oom = 1;
      break;
    }
    uint64_t lo = o->bias + ph->p_vaddr;
    s->segs[s->nseg++] = (segment){lo, lo + ph->p_memsz, s->nobj};
  }
  s->nobj++;
  return s->oom;
}

static const segment *segment_of(const scan *s, uint64_t addr) {
  for (size_t i = 0; i < s->nseg; i++)
    if (addr >= s->segs[i].lo && addr < s->segs[i].hi) return &s->segs[i];
  return NULL;
}

int spyS_modules_resolve(spy_profile *p) {
  scan s = {0};
  dl_iterate_phdr(add_object, &s);
  int rc = s.oom ? SPY_ENOMEM : 0;
  /* Number the objects in use in order of first use, then copy them. */
  size_t used = 0;
  for (size_t i = 0; rc == 0 && i < p->nlocations; i++) {
    spy_location *l = &p->locations[i];
    const segment *g = segment_of(&s, l->addr);
    if (!g) continue;
    object *o = &s.objs[g->obj];
    if (o->module == SPY_NONE) o->module = (uint32_t)used++;
    l->module = o->module;
  }
  if (rc == 0 && used) {
    p->modules = spyP_calloc(p, used, sizeof *p->modules);
    if (!p->modules) rc = SPY_ENOMEM;
    for (size_t i = 0; rc == 0 && i < s.nobj; i++) {
      object *o = &s.objs[i];
      if (o->module == SPY_NONE) continue;
      spy_module *m = &p->modules[o->module];
      m->path = spyP_strdup(p, o->path);
      m->build_id = spyP_strdup(p, o->build_id);
      m->bias = o->bias;
      if (!m->path || !m->build_id) rc = SPY_ENOMEM;
    }
    if (rc == 0) p->nmodules = used;
  }
  for (size_t i = 0; i < s.nobj; i++) free(s.objs[i].path);
  free(s.objs);
  free(s.segs);
  return rc;
}
