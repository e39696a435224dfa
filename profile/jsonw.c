/*
** profile/jsonw.c: the one JSON string escaper and UTF-8 check (see
** jsonw.h for the rules). Before it there were three escapers that
** disagreed: the cost tables passed bytes that are not UTF-8 straight
** through, which no strict JSON reader accepts.
*/
#include "config.h"

#include "profile/jsonw.h"

int spyP_utf8_len(const unsigned char *s) {
  unsigned c = s[0];
#define CONT_(x) ((x) >= 0x80 && (x) <= 0xbf)
  if (c < 0x80) return 1;
  if (c >= 0xc2 && c <= 0xdf) return CONT_(s[1]) ? 2 : 0;
  /* The second byte's range excludes overlong forms (after 0xe0, 0xf0),
  ** surrogates (after 0xed) and code points above U+10FFFF (after 0xf4);
  ** a NUL is no continuation byte, so a cut sequence stops there. */
  if (c >= 0xe0 && c <= 0xef) {
    unsigned lo = c == 0xe0 ? 0xa0 : 0x80, hi = c == 0xed ? 0x9f : 0xbf;
    return s[1] >= lo && s[1] <= hi && CONT_(s[2]) ? 3 : 0;
  }
  if (c >= 0xf0 && c <= 0xf4) {
    unsigned lo = c == 0xf0 ? 0x90 : 0x80, hi = c == 0xf4 ? 0x8f : 0xbf;
    return s[1] >= lo && s[1] <= hi && CONT_(s[2]) && CONT_(s[3]) ? 4 : 0;
  }
  return 0;
#undef CONT_
}

/* Bytes that pass through unchanged are gathered into runs, so that a
** name costs one or two sink calls, not one per character. */
void spyP_json_str(spyP_sink put, void *ctx, const char *str) {
  const unsigned char *s = (const unsigned char *)(str ? str : "");
  const unsigned char *run = s;
  put(ctx, "\"", 1);
  while (*s) {
    unsigned c = *s;
    int n = c >= 0x20 && c != '"' && c != '\\' ? spyP_utf8_len(s) : 0;
    if (n > 0) {
      s += n;
      continue;
    }
    if (s > run) put(ctx, (const char *)run, (size_t)(s - run));
    char esc[8];
    const char *out = esc;
    size_t len = 2;
    esc[0] = '\\';
    switch (c) {
    case '"': esc[1] = '"'; break;
    case '\\': esc[1] = '\\'; break;
    case '\b': esc[1] = 'b'; break;
    case '\f': esc[1] = 'f'; break;
    case '\n': esc[1] = 'n'; break;
    case '\r': esc[1] = 'r'; break;
    case '\t': esc[1] = 't'; break;
    default:
      if (c < 0x20) {
        static const char hex[] = "0123456789abcdef";
        esc[1] = 'u', esc[2] = '0', esc[3] = '0';
        esc[4] = hex[c >> 4], esc[5] = hex[c & 15];
        len = 6;
      } else {
        out = "\xef\xbf\xbd"; /* U+FFFD for a byte that is not UTF-8 */
        len = 3;
      }
    }
    put(ctx, out, len);
    run = ++s;
  }
  if (s > run) put(ctx, (const char *)run, (size_t)(s - run));
  put(ctx, "\"", 1);
}

static void put_file(void *ctx, const char *s, size_t n) {
  fwrite(s, 1, n, (FILE *)ctx);
}

void spyP_json_fstr(FILE *f, const char *s) {
  spyP_json_str(put_file, f, s);
}
