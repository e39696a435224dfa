/*
** tests/test_report.h: what the three files of the "report" suite
** (test_report.c, test_report_walk.c, test_report_export.c) share, and
** what the export suite takes from them: profiles built by hand with
** every number known, and output captured in memory and compared with
** the expected files in tests/data/report/. Defined in test_report.c.
*/
#ifndef SPY_TEST_REPORT_H
#define SPY_TEST_REPORT_H

#include <stdint.h>
#include <stdio.h>

#include <spyon/profile.h>
#include <spyon/report.h>

/* The hand-built profile of tests/data/report/synthetic.txt, every number
** known (see tests/test_report.c). Free with spy_profile_free. */
spy_profile *t_report_synthetic(void);

/* The frames and the nodes a profile from tr_new_profile has room for. */
enum { TR_CAP = 256 };

/* A profile of WALL_NS with room for TR_CAP frames and nodes and 16
** processes; one tally per 100 us. */
spy_profile *tr_new_profile(uint64_t wall_ns);

/* The frame (kind, name), added on first use. Keys: a primitive's is its
** index (passed in key), others get their index. */
uint32_t tr_frame(spy_profile *p, spy_frame_kind kind, uint64_t key,
                  const char *name);

/* A node under parent (appended last among its siblings, so tests also see
** children that arrive out of weight order). Tallies: one per 100 us. */
uint32_t tr_node(spy_profile *p, uint32_t parent, uint32_t fr,
                 uint64_t total, uint64_t self);

/* A node of the method frame NAME. */
uint32_t tr_method(spy_profile *p, uint32_t parent, const char *name,
                   uint64_t total, uint64_t self);

/* A process and its root node; returns the root. */
uint32_t tr_process(spy_profile *p, uint64_t pid, const char *name,
                    uint64_t total);

/* Output captured in memory: tr_mem_open, write, then tr_mem_text. */
typedef struct tr_mem {
  char *s;
  size_t n;
  FILE *f;
} tr_mem;

FILE *tr_mem_open(tr_mem *m);

/* Close and return the text (owned by m). */
const char *tr_mem_text(tr_mem *m);

/* Compare got with tests/data/report/NAME; print `diff -u` on mismatch
** (with SPY_BLESS set, rewrite the file and skip). */
void tr_check_golden(const char *got, const char *name);

/* The text report of P with options O (NULL: defaults), in a static
** buffer that the next call replaces. */
const char *tr_report(const spy_profile *p, const spy_report_options *o);

#endif
