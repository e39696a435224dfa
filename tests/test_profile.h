/*
** tests/test_profile.h: what the two files of the "profile" suite share:
** the synthetic profile with every section populated (tp_synth), checks
** that compare profiles and validate indices, and helpers that encode a
** profile and rebuild a file section by section for hostile-input tests.
*/
#ifndef SPY_TEST_PROFILE_H
#define SPY_TEST_PROFILE_H

#include "tests/test.h"

#include "profile/file.h"
#include "profile/profile.h"

#include <spyon/hooks.h>

#include <errno.h>
#if HAVE_JANSSON
#include <jansson.h>
#endif
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

/* T_SHADOW: a sanitizer that reserves a large shadow address space (ASan,
** TSan; tests/test.h detects both), so no address-space limit can be
** set. */
#define T_SHADOW (T_ASAN || T_TSAN)


/* ------------------------------------------------------------------------
** The synthetic profile
** --------------------------------------------------------------------- */

#define NATIVE_NAME                                                     \
  "bad\xff\xfe utf8 \x01" "ctl Gr\xc3\xb6\xc3\x9f" "e \xe2\x82\xac"
/* NATIVE_NAME as JSON decodes it: each invalid byte is U+FFFD. */
#define NATIVE_JSON                                                     \
  "bad\xef\xbf\xbd\xef\xbf\xbd utf8 \x01"                              \
  "ctl Gr\xc3\xb6\xc3\x9f" "e \xe2\x82\xac"
#define COMMAND "spyon run \"bench.st\"\t--fast \\ x\n"

typedef struct tb {
  unsigned char *p;
  size_t n;
} tb;

typedef struct tsec {
  uint64_t tag;
  size_t at, off, len;
} tsec;

spy_profile *tp_synth(void);
void tp_same(const spy_profile *a, const spy_profile *b);
void tp_valid(const spy_profile *p);
size_t tp_check_msg(const char *err, const char *name, size_t maxoff);
void tp_encode(const spy_profile *p, unsigned char **buf, size_t *len);
size_t tp_load_fails(const unsigned char *b, size_t len, unsigned flags,
                     int want, const char *sub);
void tp_tb_put(tb *t, const void *s, size_t n);
void tp_tb_var(tb *t, uint64_t v);
uint64_t tp_get_var(const unsigned char *b, size_t *pos);
int tp_split(const unsigned char *b, size_t len, tsec *s, int max);
tb tp_rebuild(const unsigned char *b, size_t len, uint64_t tag,
              const tb *pay, const tb *extra, uint64_t extra_tag);

#endif
