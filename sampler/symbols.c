/*
** sampler/symbols.c: naming native instruction pointers with libdwfl.
**
** elfutils' standard recipe for the running process: dwfl_begin with the
** linux-proc callbacks, dwfl_linux_proc_report(getpid()), dwfl_report_end;
** then dwfl_addrmodule, dwfl_module_addrinfo for the function and
** dwfl_module_getsrc for the line. Debug information is found the way
** eu-addr2line finds it (the binary itself, .gnu_debuglink, build-id under
** /usr/lib/debug). Every answer, unknown ones included, is cached.
*/
#include "config.h"

#include "sampler/symbols.h"

#include <elfutils/libdwfl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sampler/map.h"

struct spyS_symbols {
  Dwfl *dwfl;
  Dwfl_Callbacks cb;
  char *debuginfo_path;
  spyS_map cache;  /* (addr, 0) -> index into names */
  char **names;    /* NULL: unknown */
  size_t n, cap;
  int refreshed;   /* modules re-read since spyS_symbols_begin */
};

/* (Re)read the process's modules from /proc/self/maps. Modules already
** known keep their loaded data. 0 or -1. */
static int report(spyS_symbols *s) {
  dwfl_report_begin(s->dwfl);
  int rc = dwfl_linux_proc_report(s->dwfl, getpid());
  if (dwfl_report_end(s->dwfl, NULL, NULL) != 0) rc = -1;
  return rc == 0 ? 0 : -1;
}

spyS_symbols *spyS_symbols_new(void) {
  spyS_symbols *s = calloc(1, sizeof *s);
  if (!s) return NULL;
  s->cb.find_elf = dwfl_linux_proc_find_elf;
  s->cb.find_debuginfo = dwfl_standard_find_debuginfo;
  s->cb.debuginfo_path = &s->debuginfo_path;
  spyS_map_init(&s->cache);
  s->dwfl = dwfl_begin(&s->cb);
  if (!s->dwfl || report(s) != 0) {
    spyS_symbols_free(s);
    return NULL;
  }
  s->refreshed = 1;
  return s;
}

void spyS_symbols_free(spyS_symbols *s) {
  if (!s) return;
  if (s->dwfl) dwfl_end(s->dwfl);
  for (size_t i = 0; i < s->n; i++) free(s->names[i]);
  free(s->names);
  spyS_map_free(&s->cache);
  free(s);
}

void spyS_symbols_begin(spyS_symbols *s) {
  if (s) s->refreshed = 0;
}

/* Look addr up (uncached): NULL when no module covers it. */
static char *lookup(spyS_symbols *s, uint64_t addr) {
  Dwfl_Module *mod = dwfl_addrmodule(s->dwfl, (Dwarf_Addr)addr);
  if (!mod && !s->refreshed) {
    s->refreshed = 1; /* code loaded since the last snapshot */
    if (report(s) == 0) mod = dwfl_addrmodule(s->dwfl, (Dwarf_Addr)addr);
  }
  if (!mod) return NULL;
  const char *mname = dwfl_module_info(mod, NULL, NULL, NULL, NULL, NULL,
                                       NULL, NULL);
  const char *base = mname ? strrchr(mname, '/') : NULL;
  base = base ? base + 1 : mname ? mname : "?";
  GElf_Off off = 0;
  GElf_Sym sym;
  const char *fn = dwfl_module_addrinfo(mod, (GElf_Addr)addr, &off, &sym,
                                        NULL, NULL, NULL);
  char fnbuf[40];
  if (!fn) {
    Dwarf_Addr start = 0;
    dwfl_module_info(mod, NULL, &start, NULL, NULL, NULL, NULL, NULL);
    snprintf(fnbuf, sizeof fnbuf, "+0x%" PRIx64, addr - (uint64_t)start);
    fn = fnbuf;
  }
  char line[300] = "";
  Dwfl_Line *ln = dwfl_module_getsrc(mod, (Dwarf_Addr)addr);
  if (ln) {
    int lineno = 0;
    const char *file = dwfl_lineinfo(ln, NULL, &lineno, NULL, NULL, NULL);
    if (file && lineno > 0) {
      const char *fb = strrchr(file, '/');
      snprintf(line, sizeof line, " %s:%d", fb ? fb + 1 : file, lineno);
    }
  }
  size_t len = strlen(fn) + strlen(base) + strlen(line) + 4;
  char *out = malloc(len);
  if (out) snprintf(out, len, "%s (%s)%s", fn, base, line);
  return out;
}

const char *spyS_symbols_name(spyS_symbols *s, uint64_t addr) {
  uint32_t i = spyS_map_get(&s->cache, addr, 0);
  if (i != UINT32_MAX) return s->names[i];
  if (s->n == s->cap) {
    size_t cap = s->cap ? s->cap * 2 : 256;
    char **nn = realloc(s->names, cap * sizeof *nn);
    if (!nn) return NULL;
    s->names = nn;
    s->cap = cap;
  }
  char *name = lookup(s, addr);
  if (spyS_map_put(&s->cache, addr, 0, (uint32_t)s->n) != 0) {
    free(name);
    return NULL;
  }
  s->names[s->n++] = name;
  return name;
}
