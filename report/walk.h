/*
** report/walk.h: the one tree walker (internal, spyR_).
**
** It flattens a process's call tree into the rows a reader sees, in order,
** with the `|` guides of seed 004's AndreasSystemProfiler report, and hands
** each row to a sink. The text report prints the rows; the ncurses browser
** draws them; tests dump them. Nothing about layout beyond the guides lives
** here.
**
** The guides rule (MessageTally's treePrintOn:tabs:): a row is preceded by
** one "tab" per visible ancestor below the process root, outermost first.
** An ancestor's tab is "  |" when a visible sibling of that ancestor follows
** further down (the bar runs down the left of the ancestor's subtree to that
** sibling), and "  " when the ancestor is the last visible child. The
** children of the process root (depth 0) have no prefix. Visible children
** are sorted heaviest first (total_ns, then node index); a node is visible
** when its total is at least threshold_pct of spyR_base_ns().
**
** Deep trees wrap like MessageTally's maxTabs: when a row would get more
** than `wrap` tabs, its prefix restarts as "[" (then "[[" at the next wrap,
** and so on), so a chain of 200 frames stays on the screen. The bars of the
** ancestors above a wrap are not drawn below it. wrap 0 never wraps.
*/
#ifndef SPY_REPORT_WALK_H
#define SPY_REPORT_WALK_H

#include <spyon/profile.h>

typedef struct spyR_row {
  uint32_t process;   /* index into p->processes */
  uint32_t node;      /* index into p->nodes */
  unsigned depth;     /* 0 for a child of the process root */
  const char *guides; /* the prefix to print before the row (NUL-ended,
                         valid only during the sink call) */
  size_t guides_len;
  int last;           /* no visible sibling follows this row */
  size_t nkids;       /* visible children (0: a leaf of the visible tree) */
} spyR_row;

/* A sink returns 0 to go on, SPYR_SKIP to leave out this row's children
** (a collapsed node in a browser), or a negative SPY_E* code to stop the
** walk, which then returns that code. */
#define SPYR_SKIP 1
typedef int (*spyR_sink)(void *ud, const spy_profile *p, const spyR_row *row);

/* The wrap the text report uses (tabs per "[" block). */
#define SPYR_WRAP_DEFAULT 24

/* Walk the tree of p->processes[process], calling sink for each visible
** row in reading order. Returns 0, SPY_EINVAL (bad arguments or process
** index), SPY_ENOMEM, SPY_EFORMAT (the nodes do not form a tree: a cycle or
** a node reached twice), or the sink's negative code. The profile is only
** read. */
SPY_INTERNAL int spyR_walk(const spy_profile *p, uint32_t process,
                           double threshold_pct, unsigned wrap,
                           spyR_sink sink, void *ud);

/* The visible children of node n, heaviest first, into a malloc'd array
** (*out, NULL when there are none) of *count entries. `min_ns` is the
** visibility bound (0: every child). Returns 0, SPY_ENOMEM or SPY_EFORMAT
** (a sibling list longer than the profile has nodes). Shared with the
** exports so every tool orders children alike. */
SPY_INTERNAL int spyR_children(const spy_profile *p, uint32_t n,
                               double min_ns, uint32_t **out, size_t *count);

/* Relink the sibling lists of the N nodes ND so that every node's
** children run heaviest first (total_ns, then index), the order the model
** promises: for a tree built or merged in another order. Returns 0 or
** SPY_ENOMEM (the lists unchanged). */
SPY_INTERNAL int spyR_sort_siblings(spy_node *nd, size_t n);

/* Process indices heaviest first (total_ns, then pid, then index) in a
** malloc'd array of p->nprocesses entries (never NULL for 0 processes);
** NULL when out of memory. Every tool lists processes in this order. */
SPY_INTERNAL uint32_t *spyR_process_order(const spy_profile *p);

#endif
