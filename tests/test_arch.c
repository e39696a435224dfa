/*
** tests/test_arch.c: the "arch" suite: the two libraries (docs/
** architecture.md). What an interpreter links, libspyon, needs only libc
** and pthreads (and libunwind with native stacks); everything that reads
** profiles is in libspyon-tools; each installs with its own pkg-config
** file and works from the installed headers alone.
*/
#include "config.h"

#include "tests/test.h"

#include <stdlib.h>
#include <string.h>

/* What an interpreter must never load because of us. */
static const char *const heavy[] = {"libdw", "libelf", "libgsl", "libz.",
                                    "libprotobuf-c", "libncurses",
                                    "libcairo", "liblua", "libspyon-tools",
                                    NULL};

/* The NEEDED entries of a shared library of the build, space-separated. */
static char *needed(const char *lib) {
  char cmd[8192], *out = NULL;
  snprintf(cmd, sizeof cmd,
           "readelf -d '%s/.libs/%s' | sed -n 's/.*(NEEDED).*\\[\\(.*\\)\\]/"
           "\\1/p' | tr '\\n' ' '",
           t_builddir, lib);
  if (t_run(cmd, &out) != 0 || !out || !out[0])
    T_FAIL("readelf -d %s failed: %s", lib, out ? out : "");
  return out;
}

static void no_heavy(const char *what, const char *list) {
  for (size_t i = 0; heavy[i]; i++)
    if (strstr(list, heavy[i]))
      T_FAIL("%s links %s: %s", what, heavy[i], list);
}

/* libspyon's direct dependencies: libc, pthreads, libunwind; nothing of
** the tools. */
static void runtime_needs(void) {
  char *n = needed("libspyon.so");
  fprintf(stderr, "libspyon.so needs: %s\n", n);
  no_heavy("libspyon.so", n);
  if (!T_ASAN && !T_TSAN) { /* sanitizers add their runtimes */
    char *save = NULL;
    for (char *w = strtok_r(n, " ", &save); w; w = strtok_r(NULL, " ", &save))
      if (strncmp(w, "libc.so", 7) && strncmp(w, "libpthread.so", 13) &&
          strncmp(w, "ld-linux", 8) &&
          !(HAVE_LIBUNWIND && !strncmp(w, "libunwind.so", 12)))
        T_FAIL("libspyon.so needs %s (only libc, pthreads%s allowed)", w,
               HAVE_LIBUNWIND ? ", libunwind" : "");
  }
  free(n);
}

/* libspyon-tools builds on libspyon (one copy of the runtime). */
static void tools_need_runtime(void) {
  char *n = needed("libspyon-tools.so");
  fprintf(stderr, "libspyon-tools.so needs: %s\n", n);
  T_ASSERT(strstr(n, "libspyon.so."));
  free(n);
}

/* Installed: an interpreter built with `pkg-config spyon` profiles itself
** and loads none of the tools' libraries; a tool built with `pkg-config
** spyon-tools` reads what it saved. */
static void installed(void) {
  if (T_ASAN || T_TSAN)
    T_SKIP("the examples are built without the sanitizer runtime the "
           "installed libraries need");
  char cmd[8192], *out = NULL;
  snprintf(cmd, sizeof cmd, "sh '%s/tests/arch/install.sh' '%s' '%s' '%s'",
           t_srcdir, t_builddir, t_srcdir, t_tmpdir());
  int rc = t_run(cmd, &out);
  if (rc != 0)
    T_FAIL("install.sh: exit %d (90 install, 91 no spyon.pc, 92/93 build, "
           "94/95 run): %s", rc, out ? out : "");
  const char *embed = strstr(out, "embed links: ");
  T_ASSERT(embed);
  char line[4096];
  snprintf(line, sizeof line, "%.*s", (int)strcspn(embed, "\n"), embed);
  fprintf(stderr, "%s\n", line);
  T_ASSERT(strstr(line, "libspyon.so."));
  no_heavy("the embedding example", line);
  /* The report of what the example ran: main, fib, sum, bytes.fill. */
  T_ASSERT(strstr(out, "Reporting - "));
  T_ASSERT(strstr(out, "  main\n") && strstr(out, "  fib\n") &&
           strstr(out, "  sum\n") && strstr(out, "  bytes.fill\n"));
  free(out);
}

const struct spy_test t_arch[] = {
    {"runtime_needs", runtime_needs, 0},
    {"tools_need_runtime", tools_need_runtime, 0},
    {"installed", installed, 0},
    {0},
};
