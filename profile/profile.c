/*
** profile/profile.c: the profile arena and free. In both libraries: the
** runtime builds profiles, the tools load and merge them (each library has
** its own hidden copy; the tools export none of it).
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
