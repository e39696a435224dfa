/*
** profile/profile.h: building spy_profile values (internal, spyP_).
**
** A profile owns one arena; everything hanging off it (arrays, strings) is
** allocated there and freed at once by spy_profile_free. Only the per-prim
** `model` strings are separate mallocs, since tools set them later.
*/
#ifndef SPY_PROFILE_INTERNAL_H
#define SPY_PROFILE_INTERNAL_H

#include <spyon/profile.h>

/* A new, zeroed profile with an empty arena, version SPY_FORMAT_VERSION,
** clock and command "" ; NULL when out of memory. */
SPY_INTERNAL spy_profile *spyP_new(void);

/* n zeroed bytes owned by p (8-byte aligned); NULL when out of memory or
** when n overflows. n == 0 returns a valid unique pointer. */
SPY_INTERNAL void *spyP_alloc(spy_profile *p, size_t n);

/* count * size zeroed bytes, checking the multiplication. */
SPY_INTERNAL void *spyP_calloc(spy_profile *p, size_t count, size_t size);

/* A copy of s (NULL gives "") owned by p; NULL when out of memory. */
SPY_INTERNAL char *spyP_strdup(spy_profile *p, const char *s);

/* The same for the first n bytes of s. */
SPY_INTERNAL char *spyP_strndup(spy_profile *p, const char *s, size_t n);

#endif
