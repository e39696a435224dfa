/*
** report/report.h: what the report module offers the CLI besides
** spy_report_text (declared in <spyon.h>). Internal (spyR_) until the lead
** moves these into a public header.
**
** Every writer only reads the profile, writes to f and returns 0, SPY_EINVAL
** (NULL argument), SPY_ENOMEM, SPY_EFORMAT (nodes that do not form a tree)
** or SPY_EIO (f reported a write error; checked after a final fflush). None
** prints anything anywhere else. Thread safety: any number of writers may
** read one profile at once.
*/
#ifndef SPY_REPORT_H
#define SPY_REPORT_H

#include <stdio.h>

#include <spyon/report.h>

/* ------------------------------------------------------------------------
** Folded stacks (Brendan Gregg's format, for flamegraph.pl, inferno,
** speedscope's importer)
** --------------------------------------------------------------------- */

typedef enum spyR_weight {
  SPYR_WEIGHT_US = 0,     /* self time in microseconds, rounded */
  SPYR_WEIGHT_TALLIES = 1 /* self samples */
} spyR_weight;

/* One line per node with self time: "PROCESS;frame;frame;...;leaf N",
** frames root first, named by their report labels (spyR_label), processes
** and their children in the text report's order (heaviest first). ';' and
** control characters inside names become '_'. Lines whose N would be 0 are
** left out. */
SPY_INTERNAL int spyR_write_folded(const spy_profile *p, FILE *f,
                                   spyR_weight weight);

/* ------------------------------------------------------------------------
** speedscope (https://www.speedscope.app/file-format-schema.json)
** --------------------------------------------------------------------- */

/* One "sampled" profile per process (every process, heaviest first), unit
** "nanoseconds": one sample per node with self time, its stack root first,
** its weight the node's self_ns. shared.frames[i] is p->frames[i] by its
** label, so frame indices match the profile's. `name` is the document name
** (NULL: the profile's command, or "spyon"). */
SPY_INTERNAL int spyR_write_speedscope(const spy_profile *p, FILE *f,
                                       const char *name);

/* ------------------------------------------------------------------------
** Flame graph (report/flame.c)
** --------------------------------------------------------------------- */

/* An interactive SVG flame graph (hover, click to zoom, search), in the
** manner of flamegraph.pl's: the root bar "all" at the bottom, processes
** above it (heaviest first), then their call trees; widths are total
** time. `title` NULL: the profile's command, or "spyon". */
SPY_INTERNAL int spyR_write_svg(const spy_profile *p, FILE *f,
                                const char *title);

/* ------------------------------------------------------------------------
** pprof (gzip-compressed profile.proto; report/pprof.c, in the tools
** library libspyon_tools: it needs protobuf-c)
** --------------------------------------------------------------------- */

/* One sample per node with self time (every process, heaviest first):
** stack leaf first without the process root, values [samples/count,
** wall/nanoseconds], labels process, pid and (under a primitive)
** primitive. Functions are named by the report's labels (native frames by
** their bare symbol, at their address in a "[native]" mapping). Written
** gzip-compressed to f. */
SPY_INTERNAL int spyR_write_pprof(const spy_profile *p, FILE *f);

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
SPY_INTERNAL int spyR_write_diff(const spy_profile *a, const spy_profile *b,
                                 FILE *f, const spy_report_options *o);

/* The same tables as one JSON document, every frame with time, nothing
** thresholded: {"a":{tallies,wall_ns},"b":{...},"self":{"z":Z,"frames":
** [{kind,name,a_ns,b_ns,a_tallies,b_tallies,change_ns,noise_ns,
** significant}...]},"total":{...}} (docs/report.md). */
SPY_INTERNAL int spyR_write_diff_json(const spy_profile *a,
                                      const spy_profile *b, FILE *f);

/* Differential folded stacks (the input of `flamegraph.pl` after
** difffolded.pl): "PROCESS;frame;...;leaf A B" per stack with self time
** in either profile, A and B its self time in microseconds. */
SPY_INTERNAL int spyR_write_diff_folded(const spy_profile *a,
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
SPY_INTERNAL int spyR_merge(const spy_profile *const *p, size_t n,
                            spy_profile **out);

#endif
