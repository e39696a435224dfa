/*
** profile/jsonw.h: the project's one JSON string writer and UTF-8 check
** (internal, spyP_).
**
** Every JSON document spyon writes (the profile as JSON, the speedscope
** export, the cost tables) quotes its strings here, so all of them agree
** on the rules: '"' and '\' are escaped, control characters become \b \f
** \n \r \t or \u00XX, well-formed UTF-8 passes through, and every byte
** that is not part of well-formed UTF-8 becomes U+FFFD. The result is
** valid JSON, and valid UTF-8, whatever bytes a host or a CSV file used
** for a name.
*/
#ifndef SPY_PROFILE_JSONW_H
#define SPY_PROFILE_JSONW_H

#include <stddef.h>
#include <stdio.h>

#include <spyon.h>

/* The length (1..4) of the well-formed UTF-8 sequence at the start of the
** NUL-terminated S (RFC 3629: no overlong forms, no surrogates, nothing
** above U+10FFFF), or 0 if the bytes there are not one. Never reads past
** the terminator. */
SPY_INTERNAL int spyP_utf8_len(const unsigned char *s);

/* Where escaped text goes: N bytes at S (not NUL-terminated). */
typedef void (*spyP_sink)(void *ctx, const char *s, size_t n);

/* Write S (NULL: "") as a quoted JSON string literal to PUT, in runs of
** bytes rather than one call per character. */
SPY_INTERNAL void spyP_json_str(spyP_sink put, void *ctx, const char *s);

/* The same written to a stdio stream (errors show in ferror(F)). */
SPY_INTERNAL void spyP_json_fstr(FILE *f, const char *s);

#endif
