/*
** spyon/report.h: the text report and the exports (tools library,
** libspyon-tools; pkg-config spyon-tools). They only read a spy_profile
** (<spyon/profile.h>), taken in this process or loaded from a file.
*/
#ifndef SPYON_REPORT_H
#define SPYON_REPORT_H

#include <spyon/profile.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------
** Reports (the text layout of seed 004's second report)
** --------------------------------------------------------------------- */

typedef struct spy_report_options {
  double threshold_pct; /* hide tree nodes below this share; default 0.5 */
  unsigned leaves;      /* leaves listed at most; default 40 */
  unsigned longest;     /* longest single steps listed; default 10 */
  int sections;         /* SPY_REPORT_* bits; default all */
  int width;            /* columns for names; 0: no limit */
} spy_report_options;

#define SPY_REPORT_TREE 1
#define SPY_REPORT_LEAVES 2
#define SPY_REPORT_PRIMS 4
#define SPY_REPORT_LONGEST 8
#define SPY_REPORT_GC 16
#define SPY_REPORT_REGIONS 32
#define SPY_REPORT_ALL 63

SPY_API void spy_report_options_init(spy_report_options *o);

/* Write the text report of *p to f. Returns 0, SPY_EINVAL or SPY_EIO. */
SPY_API int spy_report_text(const spy_profile *p, FILE *f,
                            const spy_report_options *o);

/* Exports. Each only reads p and returns 0, SPY_EINVAL, SPY_ENOMEM or
** SPY_EIO (a write error on f). See docs/report.md.
** Folded stacks (flamegraph.pl's input): "process;root;...;leaf N" per
** node with self time, N in microseconds (tallies: 0) or samples (1). */
SPY_API int spy_report_folded(const spy_profile *p, FILE *f, int tallies);
/* speedscope's file format: one sampled profile per process, weights in
** nanoseconds; name is the document's name (NULL: the profile's command). */
SPY_API int spy_report_speedscope(const spy_profile *p, FILE *f,
                                  const char *name);
/* Where the time changed from before to after: self and total time per
** frame, ranked by absolute change, each with its sampling-noise interval
** (docs/report.md, "Profile diff"). */
SPY_API int spy_report_diff(const spy_profile *before,
                            const spy_profile *after, FILE *f,
                            const spy_report_options *o);

#ifdef __cplusplus
}
#endif

#endif
