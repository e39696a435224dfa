/*
** examples/embed/readprof.c: a tool built against the tools library
** (pkg-config spyon-tools): load a profile, name its native frames, print
** the text report.
**
**   cc readprof.c $(pkg-config --cflags --libs spyon-tools) -o readprof
**   ./readprof out.spy
*/
#include <spyon/profile.h>
#include <spyon/report.h>

#include <stdio.h>

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: readprof FILE.spy\n");
    return 2;
  }
  spy_profile *p;
  char err[512];
  if (spy_profile_load(argv[1], &p, err, sizeof err) < 0) {
    fprintf(stderr, "readprof: %s\n", err);
    return 1;
  }
  spy_profile_symbolize(p); /* what cannot be named keeps its name */
  int rc = spy_report_text(p, stdout, NULL);
  spy_profile_free(p);
  return rc < 0;
}
