/*
** report/symbols.c: naming a profile's native frames with libdwfl.
**
** The runtime recorded, for each native frame, its module (file, build-id,
** load bias) and the address to name. Here every module that frames point
** into is reported to one Dwfl at its bias (dwfl_report_elf), so that the
** run-time addresses can be looked up as they are: dwfl_module_addrinfo for
** the function, dwfl_module_getsrc for file:line. Debug information is
** found the way eu-addr2line finds it (the file itself, .gnu_debuglink,
** build-id under /usr/lib/debug). A module whose file cannot be read (the
** vDSO, a file deleted since) or whose build-id differs from the recorded
** one is skipped: its frames keep their names.
*/
#include "config.h"

#include "report/symbols.h"

#include <elfutils/libdwfl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profile/profile.h"

/* The module's build-id in hex, as the runtime recorded it ("" if none). */
static void build_id_hex(Dwfl_Module *mod, char *out, size_t outlen) {
  const unsigned char *bits;
  GElf_Addr vaddr;
  int n = dwfl_module_build_id(mod, &bits, &vaddr);
  out[0] = '\0';
  for (int i = 0; n > 0 && i < n && (size_t)(2 * i + 2) < outlen; i++)
    snprintf(out + 2 * i, 3, "%02x", bits[i]);
}

/* "fn (module) file:line" for addr in mod, in the profile's arena. */
static const char *name_of(spy_profile *p, Dwfl_Module *mod,
                           const spy_module *m, uint64_t addr) {
  const char *base = strrchr(m->path, '/');
  base = base ? base + 1 : m->path;
  GElf_Off off = 0;
  GElf_Sym sym;
  const char *fn = dwfl_module_addrinfo(mod, (GElf_Addr)addr, &off, &sym,
                                        NULL, NULL, NULL);
  char fnbuf[40];
  if (!fn) {
    snprintf(fnbuf, sizeof fnbuf, "+0x%" PRIx64, addr - m->bias);
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
  char *out = spyP_alloc(p, len);
  if (out) snprintf(out, len, "%s (%s)%s", fn, base, line);
  return out;
}

int spy_profile_symbolize(spy_profile *p) {
  if (!p) return SPY_EINVAL;
  if (p->nmodules == 0) return 0;
  char *debuginfo_path = NULL;
  Dwfl_Callbacks cb = {
      .find_elf = dwfl_build_id_find_elf,
      .find_debuginfo = dwfl_standard_find_debuginfo,
      .debuginfo_path = &debuginfo_path,
  };
  Dwfl *dwfl = dwfl_begin(&cb);
  Dwfl_Module **mods = calloc(p->nmodules, sizeof *mods);
  if (!dwfl || !mods) {
    if (dwfl) dwfl_end(dwfl);
    free(mods);
    return SPY_ENOMEM;
  }
  dwfl_report_begin(dwfl);
  for (size_t i = 0; i < p->nmodules; i++) {
    const spy_module *m = &p->modules[i];
    const char *base = strrchr(m->path, '/');
    Dwfl_Module *mod = dwfl_report_elf(dwfl, base ? base + 1 : m->path,
                                       m->path, -1, (GElf_Addr)m->bias,
                                       false);
    char id[130];
    if (mod) build_id_hex(mod, id, sizeof id);
    /* A file rebuilt since the profile was taken would name the wrong
    ** code: keep what the profile has. */
    if (mod && m->build_id[0] && strcmp(id, m->build_id) != 0) mod = NULL;
    mods[i] = mod;
  }
  dwfl_report_end(dwfl, NULL, NULL);
  int named = 0, rc = 0;
  for (size_t i = 0; i < p->nlocations && rc == 0; i++) {
    const spy_location *l = &p->locations[i];
    if (l->frame >= p->nframes || l->module >= p->nmodules ||
        !mods[l->module])
      continue;
    const char *name = name_of(p, mods[l->module], &p->modules[l->module],
                               l->addr);
    if (!name) rc = SPY_ENOMEM;
    else {
      p->frames[l->frame].name = name;
      named++;
    }
  }
  dwfl_end(dwfl);
  free(mods);
  free(debuginfo_path);
  return rc ? rc : named;
}
