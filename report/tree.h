/*
** report/tree.h: the browsable call tree (internal, spyR_), the model the
** ncurses browser (tui/) draws. It lives here, free of curses, so tests and
** the benchmark drive it without a terminal.
**
** A spyR_tree is a view of a profile for one process or for all processes
** merged, optionally inverted (callers view) and with recursion collapsed.
** It is its own node array (not the profile's), because merging, inversion
** and collapsing all make nodes the profile does not have:
**
**   merged     the process roots become one root; children with the same
**              frame (kind and key) under one parent are one node.
**   inverted   perf's caller view: the root's children are the frames that
**              have self time (the leaves), each weighted by that self time;
**              a node's children are the frames that called it. The root's
**              total stays the profile's total.
**   collapsed  a frame already on the path from the root is not repeated:
**              the recursive call's time is merged into the outermost
**              occurrence of that frame on the path.
**
** Nodes are made lazily (report/tview.h): building makes the root only,
** and a node's children are computed the first time something needs them
** (it is expanded, its row is drawn, a search or a focus passes through
** it). So switching view costs what is open on screen, not the size of
** the view. Totals are exact from the start: a node's totals are its
** members' (recomputed from self times), so every view keeps the
** invariant "a node's total is its self time plus its children's totals"
** and the root's total equals the selected processes' total (tested
** against an eager reference).
**
** Nodes carry stable ids: a hash of the frame path (kind and key, not
** indices) from the root, seeded by the view (process, inversion,
** collapse). Expansion, focus and the cursor are kept by id, so they
** survive a rebuild: a new snapshot of a live profile, a sort change, a
** process switch and back.
**
** The visible rows are never listed: a row is a node (the cursor and the
** first row on screen are nodes), and the row after or before one is
** found from the node's place among its parent's children, so moving,
** paging, Home, End and drawing a screen cost the rows on screen times
** the depth, however many rows there are (E, or `+` on a million-node
** subtree, is O(1)).
** Row numbers (the status line's "row/rows", tests) come from counts of
** the rows below each node, memoized per node and forgotten only along
** the path of a change; counting can stop at a budget and resume, so a
** huge view's count completes over a few keys (or idle time) instead of
** blocking one. Children are re-sorted and re-marked lazily too (s and T
** only bump an epoch): a node's list is put in order when it is touched.
*/
#ifndef SPY_REPORT_TREE_H
#define SPY_REPORT_TREE_H

#include <spyon/profile.h>

#include "report/format.h"
#include "report/tview.h"

/* How children are ordered. */
typedef enum spyR_sort {
  SPYR_SORT_TOTAL = 0, /* heaviest total first (the report's order) */
  SPYR_SORT_SELF = 1,  /* heaviest self time first */
  SPYR_SORT_NAME = 2,  /* by label */
  SPYR_SORT_N
} spyR_sort;

/* The process selection meaning "all processes merged". */
#define SPYR_ALL UINT32_MAX

typedef struct spyR_tnode {
  uint64_t id;          /* stable id (path hash) */
  uint32_t frame;       /* index into p->frames; SPY_NONE: the merged root */
  uint32_t parent;      /* SPY_NONE for the root (index 0) */
  uint32_t kids, nkids; /* children: t->kid[kids .. kids+nkids), once known */
  uint32_t depth;       /* 0 for the root */
  uint32_t pre;         /* pre-order number (set by the search) */
  uint32_t src;         /* the first profile node mapped to it (orders ties
                           as the text report does) */
  uint32_t mem, nmem;   /* members: t->mem[mem .. mem+nmem) */
  uint32_t sib;         /* its place in its parent's (sorted) children */
  uint32_t ord;         /* the t->order_epoch its children were sorted in */
  uint32_t vis, vis_at; /* rows below it when open, valid when vis_at is
                           t->epoch (0: never) and no subtree mark that
                           covers it is newer than vis_clock */
  uint64_t vis_clock;   /* t->clock when vis was counted */
  uint32_t mk, mk_at;   /* the newest subtree mark that covers it (index
                           into t->marks, SPY_NONE: none), valid when
                           mk_at is t->mk_epoch */
  unsigned char known;  /* children computed (spyR_tree_kids) */
  unsigned char last;   /* last shown child of its parent (the guides) */
  uint64_t total_ns, self_ns, tallies, self_tallies;
} spyR_tnode;

/* A member of a node (report/tview.h): a profile node `at`, and for the
** inverted views the leaf whose self time it carries. */
typedef struct spyR_tmem {
  uint32_t leaf, at;
} spyR_tmem;

/* A map from node ids to values (expansion state). */
typedef struct spyR_hmap {
  uint64_t *key; /* 0 is the empty slot; ids are never 0 */
  uint64_t *val;
  size_t cap, n;
} spyR_hmap;

/* A subtree mark (`+` / `-`): node `id` is set to `on`, and so is every
** node below it whose total is at least `min_ns` (the threshold when the
** mark was made: the nodes `+` used to walk through); `prev`: the older
** mark on the same node that still covers nodes this one does not (a
** lower min_ns), SPY_NONE when none. */
typedef struct spyR_tmark {
  uint64_t id;
  double min_ns;
  uint64_t stamp; /* t->clock when it was made */
  uint32_t prev;
  int on;
} spyR_tmark;

typedef struct spyR_tree {
  const spy_profile *p;
  /* The view: set them, then call spyR_tree_build. */
  uint32_t process;     /* index into p->processes, or SPYR_ALL */
  int inverted, collapse;
  spyR_sort sort;
  double threshold_pct; /* rows below this share of the profile are hidden */

  /* The built view: n[0] is the root, made from built_p; the nodes made
  ** so far (nn), their children lists (kid) and members (mem). */
  const spy_profile *built_p;
  uint32_t built_process;
  int built_inverted, built_collapse;
  spyR_sort built_sort;
  spyR_tnode *n;
  size_t nn, capn;
  uint32_t *kid;
  size_t nkid, capkid;
  spyR_tmem *mem;
  size_t nmem, capmem;
  spyR_tindex *ix;      /* the profile's index (report/tview.h) */
  uint32_t *rank;       /* per frame: its rank by label (sorting by name) */
  const spy_profile *rank_p;
  uint64_t base_ns;     /* what percentages are shares of (spyR_base_ns) */
  double min_ns;        /* the visibility bound from threshold_pct */

  /* Expansion: the most recent of three writes decides, by time stamp
  ** (t->clock counts the writes): the node's own state (Enter, l, h, f:
  ** `state` maps its id to stamp << 1 | on), the newest subtree mark that
  ** covers it (`+`, `-`: `marks`, the newest per node id in `mark`), and
  ** else all_expanded (E and C clear the other two). So E, C, `+` and `-`
  ** are O(1); which mark covers a node is found up its path and kept per
  ** node (mk) until the marks change (mk_epoch). */
  int all_expanded;
  uint64_t clock;
  spyR_hmap state, mark;
  spyR_tmark *marks;
  size_t nmarks, capmarks;
  uint32_t mk_epoch;
  uint32_t *mkpath; /* scratch: a path up to a node whose mk is known */
  size_t capmkpath;

  /* Focus: a stack of nested nodes, innermost last, as their depths
  ** (focus) along one path of ids from the root (fpath[d - 1]: the id at
  ** depth d); the top node is the deepest one that resolves (the root
  ** when empty). */
  uint32_t *focus;
  size_t nfocus, capfocus;
  uint64_t *fpath;
  size_t nfpath, capfpath;
  uint32_t top;

  /* Rows: the cursor's node and the first node on screen (SPY_NONE: no
  ** rows), the screen's height at the last spyR_tree_scroll; the cursor's
  ** path of ids (kept across a rebuild). epoch: row counts made in
  ** another epoch are stale (E, C, T, a rebuild bump it); order_epoch:
  ** child lists sorted in another one are re-sorted when touched. */
  uint32_t cur, anchor;
  size_t screen_h;
  uint64_t *cpath;
  size_t ncpath, capcpath;
  uint32_t epoch, order_epoch;

  /* Search: the query and the matching nodes in pre-order; match_stale:
  ** the list is out of date (n/N then step through the tree instead).
  ** search_budget: the most nodes a search goes through to list and count
  ** the matches (0: no limit; the browser sets one, so that `/` on a huge
  ** view with no threshold stays quick: past it the list is left stale). */
  char *query;
  uint32_t *match;
  size_t nmatch;
  int match_stale;
  size_t search_budget;
  unsigned char *frame_hit; /* per frame: its label matches the query */
  size_t nhit;              /* frames that match */

  /* The label test per frame is kept for this query and profile. */
  char *hit_query;
  const spy_profile *hit_p;

  spyR_buf lab; /* scratch */
  int oom;
} spyR_tree;

/* Initialize t for profile p (which must outlive t): process SPYR_ALL when
** p has several processes else 0, not inverted, sort by total, threshold
** 0; nothing built yet. */
/* The explicit stacks of the iterative walks (tree.c, tsearch.c,
** trows.c): stk (of *cap elements of `size` bytes) with room for `need`,
** grown by doubling; NULL when out of memory (stk is then unchanged, and
** still the caller's to free). */
SPY_INTERNAL void *spyR_stack_room(void *stk, size_t *cap, size_t need,
                                   size_t size);

SPY_INTERNAL void spyR_tree_init(spyR_tree *t, const spy_profile *p);
SPY_INTERNAL void spyR_tree_free(spyR_tree *t);

/* (Re)build the tree from t->p and the view fields, then restore the focus,
** the expansion and the cursor (by node id) and the search. Only the nodes
** on screen are made (the first build of a profile also indexes it, in
** O(nodes)). Returns 0, SPY_EINVAL (bad process index), SPY_ENOMEM or
** SPY_EFORMAT (the profile's nodes do not form a tree). Call it again
** after changing t->p (a new snapshot), the process, inverted or
** collapse. */
SPY_INTERNAL int spyR_tree_build(spyR_tree *t);

/* Forget the profile's index and cached label tests: call it before
** spyR_tree_build when t->p was replaced (a new snapshot), since a freed
** profile's address may come back. */
SPY_INTERNAL void spyR_tree_forget(spyR_tree *t);

/* Re-sort children (after changing t->sort) or re-filter (after changing
** t->threshold_pct) without rebuilding; keeps the cursor on its node. */
SPY_INTERNAL int spyR_tree_resort(spyR_tree *t);
SPY_INTERNAL int spyR_tree_refilter(spyR_tree *t);

/* Is node n visible under the threshold; is it expanded? */
SPY_INTERNAL int spyR_tree_shown(const spyR_tree *t, uint32_t n);
SPY_INTERNAL int spyR_tree_expanded(spyR_tree *t, uint32_t n);
/* Make node n's children known (computed, sorted, the last shown one
** marked); t->n may move. 0 or SPY_ENOMEM. */
SPY_INTERNAL int spyR_tree_kids(spyR_tree *t, uint32_t n);
/* Visible children of n (those at or above the threshold); computes them
** when not known yet (0 when out of memory). */
SPY_INTERNAL size_t spyR_tree_nshown(spyR_tree *t, uint32_t n);
/* Make every node of the view (tests, and a reference for them: the
** eager tree). 0 or SPY_ENOMEM. */
SPY_INTERNAL int spyR_tree_materialize(spyR_tree *t);

/* The node under the cursor (SPY_NONE when there are no rows). */
SPY_INTERNAL uint32_t spyR_tree_cur(const spyR_tree *t);

/* Rows. A row is a shown node below the top whose ancestors below the
** top are all open; rows are in pre-order (reading order). Each of these
** costs the depth times the children scanned, not the number of rows;
** SPY_NONE when there is no such row (or out of memory: t->oom).
**   first, last   the first / last row
**   next, prev    the row after / before row n
**   step          d rows from row n (d < 0: up), stopping at either end
**   visible       is node n a row
**   row_depth     n's indentation: 0 for a child of the top */
SPY_INTERNAL uint32_t spyR_tree_first(spyR_tree *t);
SPY_INTERNAL uint32_t spyR_tree_last(spyR_tree *t);
SPY_INTERNAL uint32_t spyR_tree_next(spyR_tree *t, uint32_t n);
SPY_INTERNAL uint32_t spyR_tree_prev(spyR_tree *t, uint32_t n);
SPY_INTERNAL uint32_t spyR_tree_step(spyR_tree *t, uint32_t n, long d);
SPY_INTERNAL int spyR_tree_visible(spyR_tree *t, uint32_t n);
SPY_INTERNAL uint32_t spyR_tree_row_depth(const spyR_tree *t, uint32_t n);

/* The cursor: d rows down (up when d < 0), to the first or the last row. */
SPY_INTERNAL void spyR_tree_move(spyR_tree *t, long d);
SPY_INTERNAL void spyR_tree_home(spyR_tree *t);
SPY_INTERNAL void spyR_tree_end(spyR_tree *t);

/* The screen: make t->anchor the first row of an h-row screen that shows
** the cursor (moving it as little as possible, and filling the screen
** when there are rows enough); then the node on screen row i (SPY_NONE
** past the last row). */
SPY_INTERNAL void spyR_tree_scroll(spyR_tree *t, size_t h);
SPY_INTERNAL uint32_t spyR_tree_screen_row(spyR_tree *t, size_t i);

/* Row numbers. position: the cursor's row number and the number of rows,
** entering at most about `budget` nodes not counted before (0: no
** limit; past it the count still completes the node it is in, so every
** call makes progress). Returns 0 when both are known, 1 when the budget
** ran out (what was counted is kept: call again to go on), or
** SPY_ENOMEM. nrows, row (the node of row r, SPY_NONE past the end) and
** row_of (the row number of row n; 0 when n is not a row) count without
** a limit. */
SPY_INTERNAL int spyR_tree_position(spyR_tree *t, size_t budget, size_t *row,
                                    size_t *rows);
SPY_INTERNAL size_t spyR_tree_nrows(spyR_tree *t);
SPY_INTERNAL uint32_t spyR_tree_row(spyR_tree *t, size_t r);
SPY_INTERNAL size_t spyR_tree_row_of(spyR_tree *t, uint32_t n);

/* Expansion. Each keeps the cursor on its node (or its nearest ancestor
** that is still a row).
**   set      expand (on != 0) or collapse node n
**   subtree  the same for n and every shown node below it (nodes under
**            the threshold stay as they were: their rows are hidden); O(1):
**            a time-stamped mark on n, which the nodes below inherit
**   all      every node (E / C)
** Return 0 or SPY_ENOMEM. */
SPY_INTERNAL int spyR_tree_set(spyR_tree *t, uint32_t n, int on);
SPY_INTERNAL int spyR_tree_subtree(spyR_tree *t, uint32_t n, int on);
SPY_INTERNAL int spyR_tree_all(spyR_tree *t, int on);
/* Expand every node whose total is at least pct of the base (the first
** screen: the heavy paths open). */
SPY_INTERNAL int spyR_tree_open_heavy(spyR_tree *t, double pct);

/* Focus on node n (it becomes the top) / go back one focus. Return 0,
** 1 when there was nothing to do, or SPY_ENOMEM. */
SPY_INTERNAL int spyR_tree_focus(spyR_tree *t, uint32_t n);
SPY_INTERNAL int spyR_tree_unfocus(spyR_tree *t);

/* Move the cursor to node n, expanding its ancestors below the top (and
** unfocusing when n is not under the top). 0, or SPY_ENOMEM. */
SPY_INTERNAL int spyR_tree_reveal(spyR_tree *t, uint32_t n);

/* Find a child of the root whose frame is `frame` (SPY_NONE if none). */
SPY_INTERNAL uint32_t spyR_tree_find_top(spyR_tree *t, uint32_t frame);

/* What spyR_tree_walk does at a node: 1 to go into its children, 0 not
** to, or a negative SPY_E* code to stop the walk. */
typedef int (*spyR_visit_fn)(spyR_tree *t, uint32_t c, void *ud);

/* The walk every pass below a node goes through (report/tree.c): the
** children of `from` whose total is at least `min` (0: all), in order,
** depth first and without recursion, each handed to visit; the children
** of a node are made known before the walk goes into them. 0 or a
** negative code. */
SPY_INTERNAL int spyR_tree_walk(spyR_tree *t, uint32_t from, double min,
                                spyR_visit_fn visit, void *ud);

/* Between the tree's parts (report/tree.c, trows.c, tsearch.c). */
/* The newest `+`/`-` mark that covers node x (SPY_NONE: none). */
SPY_INTERNAL uint32_t spyR_tree_cover(spyR_tree *t, uint32_t x);
/* The rows' memoized counts (report/trows.c): forget n's and its
** ancestors' (its expansion or a descendant's changed); forget every
** count (E, C, T, a rebuild); after the rows changed, put the cursor on
** its node, the nearest ancestor still shown, or the first row. */
SPY_INTERNAL void spyR_tree_forget_rows(spyR_tree *t, uint32_t n);
SPY_INTERNAL void spyR_tree_rows_epoch(spyR_tree *t);
SPY_INTERNAL void spyR_tree_keep_cursor(spyR_tree *t);

/* Each frame's label tested once for the query (kept for this query and
** profile; the build calls it). 0 or SPY_ENOMEM. */
SPY_INTERNAL int spyR_tree_hits(spyR_tree *t);

/* Search (report/tsearch.c): set the query (case-insensitive substring of
** the label; NULL or "" clears it) and collect every
** visible-under-threshold node below the top whose label matches, in
** pre-order (reading order with everything expanded). Returns the number
** of matches or SPY_ENOMEM; past t->search_budget nodes, 1 if there is a
** match at all (0 if not) with the list left stale. */
SPY_INTERNAL int spyR_tree_search(spyR_tree *t, const char *query);
/* The next (dir > 0) or previous match after the cursor's node in
** pre-order, wrapping; SPY_NONE when there are no matches. Makes the
** match list again first when a rebuild, resort, refilter or focus left
** it stale (those keys do not pay for a search nobody asked for yet). */
SPY_INTERNAL uint32_t spyR_tree_next_match(spyR_tree *t, int dir);
/* Does node n's frame match the query? */
SPY_INTERNAL int spyR_tree_is_match(const spyR_tree *t, uint32_t n);

/* The label of node n (the frame's label, "all processes" for the merged
** root) appended to b. */
SPY_INTERNAL void spyR_tree_label(const spyR_tree *t, uint32_t n, spyR_buf *b);

/* The `|` guides of row n, as the text report draws them (report/walk.h),
** appended to b; deeper than `wrap` tabs the prefix restarts with "[". */
SPY_INTERNAL void spyR_tree_guides(spyR_tree *t, uint32_t n, unsigned wrap,
                                   spyR_buf *b);

/* Self time per frame over the selected processes, heaviest first, into
** *out (malloc'd, *n entries; frames with no self time left out). 0 or
** SPY_ENOMEM. */
SPY_INTERNAL int spyR_tree_leaves(const spyR_tree *t, spy_leaf **out,
                                  size_t *n);

#endif
