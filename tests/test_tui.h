/*
** tests/test_tui.h: what the "tui" suite's files share: the random
** profile generator and the tree checks (tests/test_tui.c).
*/
#ifndef SPY_TEST_TUI_H
#define SPY_TEST_TUI_H

#include <spyon/profile.h>

#include "report/tree.h"

/* A small deterministic generator (xorshift), so failures reproduce. */
extern uint64_t rng;
uint64_t rnd(void);

/* A random profile: nproc processes, about nnodes nodes, frames from a
** pool of nframes methods and a few primitives; siblings have distinct
** frames when unique. */
spy_profile *random_profile(unsigned nproc, unsigned nnodes,
                            unsigned nframes, int unique);

/* The total of the process (or all processes) the tree shows. */
uint64_t selected_total(const spy_profile *p, uint32_t process);

/* The tree's totals and links are consistent; its rows likewise. */
void check_tree(const spyR_tree *t);
void check_rows(spyR_tree *t);

#endif
