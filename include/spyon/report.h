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
** Reports (the text layout of Squeak's AndreasSystemProfiler)
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

/* Native frames in the call tree: each primitive node's self time and self
** tallies are split over its primitive's native paths (natives[]) in
** proportion to their counts, and the paths become its children, from the
** deepest frame all of its paths share; so the tree, the leaves and every
** export show the C functions the primitive spent its time in. An
** estimate (the counts are per primitive, not per call site); totals do not
** change. Doing it twice changes nothing. Returns the number of nodes
** added (0 when the profile has no native stacks), or SPY_EINVAL /
** SPY_ENOMEM (p unchanged). */
SPY_API int spy_profile_natives_to_tree(spy_profile *p);

/* Exports and diffs. Each only reads its profiles, writes to f and returns
** 0, SPY_EINVAL (NULL argument, or an index out of range in a hand-built
** profile), SPY_ENOMEM, SPY_EFORMAT (nodes that do not form a tree) or
** SPY_EIO (f reported a write error; checked after a final fflush). None
** prints anything anywhere else; any number may read one profile at once.
** docs/report.md describes each format. */

/* ------------------------------------------------------------------------
** Folded stacks (Brendan Gregg's format, for flamegraph.pl, inferno,
** speedscope's importer)
** --------------------------------------------------------------------- */

/* One line per node with self time: "PROCESS;frame;frame;...;leaf N",
** frames root first, named by their report labels, processes and their
** children in the text report's order (heaviest first); N is the self time
** in microseconds, rounded (tallies 0) or the self samples (tallies 1).
** ';' and control characters inside names become '_'. Lines whose N would
** be 0 are left out. */
SPY_API int spy_report_folded(const spy_profile *p, FILE *f, int tallies);

/* ------------------------------------------------------------------------
** speedscope (https://www.speedscope.app/file-format-schema.json)
** --------------------------------------------------------------------- */

/* One "sampled" profile per process (every process, heaviest first), unit
** "nanoseconds": one sample per node with self time, its stack root first,
** its weight the node's self_ns. shared.frames[i] is p->frames[i] by its
** label, so frame indices match the profile's. `name` is the document name
** (NULL: the profile's command, or "spyon"). */
SPY_API int spy_report_speedscope(const spy_profile *p, FILE *f,
                                  const char *name);

/* ------------------------------------------------------------------------
** Flame graph (report/flame.c)
** --------------------------------------------------------------------- */

/* An interactive SVG flame graph (hover, click to zoom, search), in the
** manner of flamegraph.pl's: the root bar "all" at the bottom, processes
** above it (heaviest first), then their call trees; widths are total
** time. `title` NULL: the profile's command, or "spyon". */
SPY_API int spy_report_svg(const spy_profile *p, FILE *f, const char *title);

/* ------------------------------------------------------------------------
** pprof (gzip-compressed profile.proto; report/pprof.c: protobuf-c, zlib)
** --------------------------------------------------------------------- */

/* One sample per node with self time (every process, heaviest first):
** stack leaf first without the process root, values [samples/count,
** wall/nanoseconds], labels process, pid and (under a primitive)
** primitive. Functions are named by the report's labels (native frames by
** their bare symbol, at their address in a "[native]" mapping). Written
** gzip-compressed to f. */
SPY_API int spy_report_pprof(const spy_profile *p, FILE *f);

/* ------------------------------------------------------------------------
** Profile diff
** --------------------------------------------------------------------- */

/* Where the time changed from a (before) to b (after): frames matched by
** kind and label (summed over processes and over frames of one label),
** ranked by the absolute change of their self time and, in a second
** table, of their total time (recursion counted once), each change with
** its sampling-noise interval (report/diff.c says how it is computed) and
** a '*' when it is beyond it. Frames under o->threshold_pct of their
** profile's time on both sides are left out, at most o->leaves lines per
** table (o NULL: defaults). */
SPY_API int spy_report_diff(const spy_profile *a, const spy_profile *b,
                            FILE *f, const spy_report_options *o);

/* The same tables as one JSON document, every frame with time, nothing
** thresholded: {"a":{tallies,wall_ns},"b":{...},"self":{"z":Z,"frames":
** [{kind,name,a_ns,b_ns,a_tallies,b_tallies,change_ns,noise_ns,
** significant}...]},"total":{...}} (docs/report.md). */
SPY_API int spy_report_diff_json(const spy_profile *a, const spy_profile *b,
                                 FILE *f);

/* Differential folded stacks (the input of `flamegraph.pl` after
** difffolded.pl): "PROCESS;frame;...;leaf A B" per stack with self time
** in either profile, A and B its self time in microseconds. */
SPY_API int spy_report_diff_folded(const spy_profile *a,
                                   const spy_profile *b, FILE *f);

/* ------------------------------------------------------------------------
** Merge
** --------------------------------------------------------------------- */

/* One profile that sums the runs p[0..n) of one program (report/merge.c):
** processes matched by name, frames by kind and label, call trees merged
** node by node, primitives (calls, times, cost observations), GC, regions
** and native stacks summed, the longest steps of all runs kept. Returns 0
** and *out, SPY_EINVAL (n == 0, or profiles of different modes),
** SPY_ENOMEM or SPY_EFORMAT. */
SPY_API int spy_profile_merge(const spy_profile *const *p, size_t n,
                              spy_profile **out);

#ifdef __cplusplus
}
#endif

#endif
