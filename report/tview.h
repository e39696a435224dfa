/*
** report/tview.h: the views of the browsable tree, built lazily (internal,
** spyR_). report/tree.h is the model the browser drives; this is how its
** nodes come to exist.
**
** Once per profile an index is built in O(nodes) without hashing: every
** process's tree is walked (iteratively, with a visited bitmap: a profile
** whose links loop gives SPY_EFORMAT, never a hang), giving each node its
** parent, its children as an array, its subtree totals (recomputed from
** self times), the leaves (nodes with self time) in walk order, and the
** collapsed forest: a frame already on the path folds into its outermost
** occurrence, which is a reparenting (each outermost occurrence y hangs
** below the outermost occurrence of its parent's frame) plus self times
** summed, so the collapsed view is the plain view of another forest.
**
** A model node stands for a set of members, kept in t->mem:
**
**   plain and collapsed   profile nodes (of the tree or of the collapsed
**                         forest) on the node's path; the node's totals
**                         are the sum of theirs. Children: the members'
**                         children grouped by frame.
**   inverted              (leaf, at) pairs: a leaf with self time and the
**                         profile node on its path at the model node's
**                         depth. Totals: the leaves' self times. Children:
**                         the next caller of each `at` (skipping, when
**                         collapsed, frames already on the model path),
**                         grouped by frame; a member with no caller left
**                         is the node's self time.
**
** spyR_tview_expand computes one node's children, with their members and
** exact totals, when the browser first needs them (an expanded node, a row
** on screen, a search): the cost is the members of that node, not the
** size of the view, so switching to the callers view, another process,
** all merged or collapsed recursion costs the root's members and the rows
** that are open, not the whole tree.
*/
#ifndef SPY_REPORT_TVIEW_H
#define SPY_REPORT_TVIEW_H

#include <spyon/profile.h>

struct spyR_tree;

/* splitmix64's finalizer, shared by the ids and the id set. */
static inline uint64_t spyR_mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15u;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9u;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebu;
  return x ^ (x >> 31);
}

/* One group of an expansion: a child to be. */
typedef struct spyR_tgroup {
  uint32_t frame, src, count, node;
  uint64_t total, self, tallies, stal;
} spyR_tgroup;

/* The per-profile index (see above). Arrays are per profile node unless
** said otherwise. */
typedef struct spyR_tindex {
  const spy_profile *p;
  uint32_t *par;          /* parent by the walk; SPY_NONE: a process root */
  uint32_t *kofs, *kid;   /* children kid[kofs[x] .. kofs[x+1]) in order */
  uint64_t *tot, *ttal;   /* subtree total_ns and tallies from self */
  uint32_t *order;        /* every reached node in pre-order */
  uint32_t *oofs;         /* per process k: order[oofs[k] .. oofs[k+1]) */
  uint32_t *leaf, *lofs;  /* per process: leaves (self time) in pre-order */
  /* The collapsed forest (see above). */
  int collapsed;
  uint32_t *cofs, *ckid;
  uint64_t *cself, *cstal, *ctot, *cttal;
  /* Per-frame scratch of one expansion (stamped, so never cleared). */
  uint32_t *gmark, *gidx, *pmark;
  uint32_t stamp;
  /* Per-member and per-group scratch of one expansion. */
  uint32_t *scr;
  size_t capscr;
  spyR_tgroup *grp;
  size_t capgrp;
} spyR_tindex;

/* Make t->ix the index of t->p (building it when missing or made for
** another profile). 0, SPY_ENOMEM or SPY_EFORMAT. */
SPY_INTERNAL int spyR_tview_index(struct spyR_tree *t);
SPY_INTERNAL void spyR_tview_free(spyR_tindex *ix);

/* Start the view t->process / inverted / collapse: node 0, its members
** and totals, no children yet. 0 or SPY_ENOMEM. */
SPY_INTERNAL int spyR_tview_root(struct spyR_tree *t);

/* Compute node n's children (appended to t->n and t->kid, unsorted) with
** their members and totals; nothing to do when they are known. 0 or
** SPY_ENOMEM. */
SPY_INTERNAL int spyR_tview_expand(struct spyR_tree *t, uint32_t n);

/* Self time per frame over the selected processes, into lv[frame] (nframes
** entries, zeroed by the caller), as the view's nodes would sum it. */
SPY_INTERNAL void spyR_tview_leaves(const struct spyR_tree *t, spy_leaf *lv);

#endif
