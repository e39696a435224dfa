/*
** profile/profile.c: the profile arena, free, and derived views (leaves).
*/
#include "config.h"

#include "profile/profile.h"

#include <stdlib.h>
#include <string.h>

/* The arena is a list of blocks; allocations are bumped from the newest. A
** large request gets a block of its own. Profiles are built once and freed
** at once, so nothing is ever freed individually. */
typedef struct block {
  struct block *next;
  size_t used, cap;
  max_align_t data[];
} block;

typedef struct arena {
  block *head;
} arena;

enum { BLOCK_MIN = 64 * 1024 };

spy_profile *spyP_new(void) {
  spy_profile *p = calloc(1, sizeof *p);
  arena *a = calloc(1, sizeof *a);
  if (!p || !a) {
    free(p);
    free(a);
    return NULL;
  }
  p->priv_ = a;
  p->version = SPY_FORMAT_VERSION;
  p->clock = "";
  p->command = "";
  return p;
}

void *spyP_alloc(spy_profile *p, size_t n) {
  arena *a = p->priv_;
  /* A zero-byte request still takes 16 bytes, so that the pointer returned
  ** is unique as promised. */
  size_t need = n ? (n + 15) & ~(size_t)15 : 16;
  if (need < n) return NULL;
  block *b = a->head;
  if (!b || b->cap - b->used < need) {
    size_t cap = need > BLOCK_MIN ? need : BLOCK_MIN;
    if (cap > SIZE_MAX - sizeof(block)) return NULL;
    block *nb = malloc(sizeof(block) + cap);
    if (!nb) return NULL;
    nb->used = 0;
    nb->cap = cap;
    /* Keep filling the current block when the new one is a one-off. */
    if (b && need > BLOCK_MIN) {
      nb->next = b->next;
      b->next = nb;
    } else {
      nb->next = b;
      a->head = nb;
    }
    b = nb;
  }
  void *r = (char *)b->data + b->used;
  b->used += need;
  memset(r, 0, n);
  return r;
}

void *spyP_calloc(spy_profile *p, size_t count, size_t size) {
  if (size && count > SIZE_MAX / size) return NULL;
  return spyP_alloc(p, count * size);
}

char *spyP_strndup(spy_profile *p, const char *s, size_t n) {
  char *r = spyP_alloc(p, n + 1);
  if (r && n) memcpy(r, s, n);
  return r;
}

char *spyP_strdup(spy_profile *p, const char *s) {
  if (!s) s = "";
  return spyP_strndup(p, s, strlen(s));
}

void spy_profile_free(spy_profile *p) {
  if (!p) return;
  for (size_t i = 0; i < p->nprims; i++) free(p->prims[i].model);
  arena *a = p->priv_;
  if (a) {
    block *b = a->head;
    while (b) {
      block *n = b->next;
      free(b);
      b = n;
    }
    free(a);
  }
  free(p);
}

int spy_profile_set_command(spy_profile *p, const char *command) {
  if (!p || !command) return SPY_EINVAL;
  char *c = spyP_strdup(p, command);
  if (!c) return SPY_ENOMEM;
  p->command = c;
  return 0;
}

/* Leaves: self time summed per frame over every process tree. A frame that
** is a leaf in many places (a primitive called from everywhere) is one line,
** as in MessageTally's leaves. */
static int leaf_cmp(const void *a, const void *b) {
  const spy_leaf *x = a, *y = b;
  if (x->self_ns != y->self_ns) return x->self_ns < y->self_ns ? 1 : -1;
  return x->frame < y->frame ? -1 : x->frame > y->frame;
}

int spy_profile_leaves(const spy_profile *p, spy_leaf *out, size_t n) {
  if (!p || (!out && n)) return SPY_EINVAL;
  if (p->nframes == 0 || n == 0) return 0;
  spy_leaf *all = calloc(p->nframes, sizeof *all);
  if (!all) return SPY_ENOMEM;
  for (size_t i = 0; i < p->nframes; i++) all[i].frame = (uint32_t)i;
  for (size_t i = 0; i < p->nnodes; i++) {
    const spy_node *nd = &p->nodes[i];
    if (nd->frame >= p->nframes || nd->self_ns == 0) continue;
    /* A loaded profile's sums cannot overflow (the loader checks that the
    ** grand total fits); one built in memory saturates instead of wrapping. */
    spy_leaf *l = &all[nd->frame];
    l->self_ns = l->self_ns + nd->self_ns < l->self_ns
                     ? UINT64_MAX : l->self_ns + nd->self_ns;
    l->self_tallies = l->self_tallies + nd->self_tallies < l->self_tallies
                          ? UINT64_MAX : l->self_tallies + nd->self_tallies;
  }
  qsort(all, p->nframes, sizeof *all, leaf_cmp);
  size_t k = 0;
  while (k < n && k < p->nframes && all[k].self_ns > 0) {
    out[k] = all[k];
    k++;
  }
  free(all);
  return (int)k;
}
