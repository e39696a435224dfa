/*
** report/format.c: strings, numbers and labels shared by the report writers.
*/
#include "config.h"

#include "report/format.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profile/jsonw.h"

/* ------------------------------------------------------------------------
** Growable string
** --------------------------------------------------------------------- */

void spyR_buf_free(spyR_buf *b) {
  free(b->s);
  b->s = NULL;
  b->len = b->cap = 0;
  b->oom = 0;
}

void spyR_buf_clear(spyR_buf *b) {
  b->len = 0;
  if (b->s) b->s[0] = '\0';
}

/* Make room for n more bytes plus the NUL; doubling keeps appends linear. */
static int reserve(spyR_buf *b, size_t n) {
  if (b->oom) return 0;
  if (n > SIZE_MAX / 2 - b->len - 1) {
    b->oom = 1;
    return 0;
  }
  size_t need = b->len + n + 1;
  if (need <= b->cap) return 1;
  size_t cap = b->cap ? b->cap : 64;
  while (cap < need) cap *= 2;
  char *s = realloc(b->s, cap);
  if (!s) {
    b->oom = 1;
    return 0;
  }
  b->s = s;
  b->cap = cap;
  return 1;
}

void spyR_buf_add(spyR_buf *b, const char *s, size_t n) {
  if (!reserve(b, n)) return;
  if (n) memcpy(b->s + b->len, s, n);
  b->len += n;
  b->s[b->len] = '\0';
}

void spyR_buf_puts(spyR_buf *b, const char *s) {
  spyR_buf_add(b, s, strlen(s));
}

void spyR_buf_printf(spyR_buf *b, const char *fmt, ...) {
  char small[256];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(small, sizeof small, fmt, ap);
  va_end(ap);
  if (n < 0) {
    b->oom = 1;
    return;
  }
  if ((size_t)n < sizeof small) {
    spyR_buf_add(b, small, (size_t)n);
    return;
  }
  if (!reserve(b, (size_t)n)) return;
  va_start(ap, fmt);
  vsnprintf(b->s + b->len, (size_t)n + 1, fmt, ap);
  va_end(ap);
  b->len += (size_t)n;
}

const char *spyR_buf_str(const spyR_buf *b) {
  return b->s ? b->s : "";
}

/* ------------------------------------------------------------------------
** Numbers
** --------------------------------------------------------------------- */

char *spyR_fmt_group(char *out, uint64_t v) {
  char digits[24];
  int n = snprintf(digits, sizeof digits, "%" PRIu64, v);
  int o = 0;
  for (int i = 0; i < n; i++) {
    if (i > 0 && (n - i) % 3 == 0) out[o++] = ',';
    out[o++] = digits[i];
  }
  out[o] = '\0';
  return out;
}

/* Round to `decimals` first, then split, so that 999.96 with one decimal
** reads "1,000.0" rather than "999.10". */
char *spyR_fmt_duration(char *out, uint64_t ns) {
  static const struct { double scale; const char *unit; } u[] = {
      {1e9, "s"}, {1e6, "ms"}, {1e3, "us"}, {1, "ns"}};
  int k = 0;
  while (k < 3 && (double)ns < u[k].scale) k++;
  snprintf(out, 48, "%.6g %s", (double)ns / u[k].scale, u[k].unit);
  return out;
}

char *spyR_fmt_fixed(char *out, double v, int decimals) {
  if (decimals < 0) decimals = 0;
  if (decimals > 9) decimals = 9;
  if (!isfinite(v) || fabs(v) >= 1e18) {
    snprintf(out, 48, "%.*f", decimals, v);
    return out;
  }
  uint64_t scale = 1;
  for (int i = 0; i < decimals; i++) scale *= 10;
  int neg = v < 0;
  double r = floor(fabs(v) * (double)scale + 0.5);
  if (r >= 1.8e19) {
    snprintf(out, 48, "%.*f", decimals, v);
    return out;
  }
  uint64_t units = (uint64_t)r;
  char ip[32];
  spyR_fmt_group(ip, units / scale);
  if (neg && units == 0) neg = 0; /* no "-0.00" */
  if (decimals)
    snprintf(out, 48, "%s%s.%0*u", neg ? "-" : "", ip, decimals,
             (unsigned)(units % scale));
  else
    snprintf(out, 48, "%s%s", neg ? "-" : "", ip);
  return out;
}

uint64_t spyR_ms(uint64_t ns) {
  return ns / 1000000 + (ns % 1000000 >= 500000);
}

uint64_t spyR_base_ns(const spy_profile *p) {
  if (p->wall_ns) return p->wall_ns;
  uint64_t sum = 0;
  for (size_t i = 0; i < p->nprocesses; i++) /* saturating */
    sum = sum + p->processes[i].total_ns < sum
              ? UINT64_MAX : sum + p->processes[i].total_ns;
  return sum;
}

double spyR_pct(uint64_t ns, uint64_t base) {
  return base ? 100.0 * (double)ns / (double)base : 0.0;
}

double spyR_time_var(double ns, double k, double w0) {
  double w = k > 0 ? ns / k : w0;
  if (w0 > 0 && w > w0) w = w0;
  return (k + 1) * w * w;
}

/* ------------------------------------------------------------------------
** Labels and columns
** --------------------------------------------------------------------- */

/* The escapes of JSON for what would move the cursor or talk to the
** terminal: C0 controls and DEL, and C1 controls (U+0080..U+009F, which
** some terminals obey as escape sequences). A byte that is not part of
** well-formed UTF-8 is shown as \xNN. Backslashes stay as they are: `\\`
** is an ordinary Smalltalk selector. Length of the UTF-8 sequence that
** starts s[0..n), or 0 when it is not well formed. */
static size_t utf8_seq(const unsigned char *s, size_t n) {
  size_t k = s[0] < 0xC2 ? 0 : s[0] < 0xE0 ? 2 : s[0] < 0xF0 ? 3
             : s[0] < 0xF5 ? 4 : 0;
  if (!k || k > n) return 0;
  for (size_t i = 1; i < k; i++)
    if ((s[i] & 0xC0) != 0x80) return 0;
  if (k == 3 &&
      ((s[0] == 0xE0 && s[1] < 0xA0) || (s[0] == 0xED && s[1] > 0x9F)))
    return 0; /* overlong, or a UTF-16 surrogate */
  if (k == 4 &&
      ((s[0] == 0xF0 && s[1] < 0x90) || (s[0] == 0xF4 && s[1] > 0x8F)))
    return 0;
  return k;
}

void spyR_buf_add_esc(spyR_buf *b, const char *str, size_t n) {
  const unsigned char *s = (const unsigned char *)str;
  size_t i = 0, run = 0; /* s[i - run .. i) is copied as it is */
  while (i < n) {
    unsigned c = s[i];
    size_t k = c < 0x80 ? 1 : utf8_seq(s + i, n - i);
    int ctl = c < 0x20 || c == 0x7F || (k == 2 && c == 0xC2 && s[i + 1] < 0xA0);
    if (k && !ctl) {
      i += k;
      run += k;
      continue;
    }
    spyR_buf_add(b, str + i - run, run);
    run = 0;
    if (!k) {
      spyR_buf_printf(b, "\\x%02X", c);
      i++;
      continue;
    }
    unsigned cp = k == 2 ? s[i + 1] : c; /* C1: U+0080 + (s[i+1] - 0x80) */
    switch (cp) {
    case '\n': spyR_buf_puts(b, "\\n"); break;
    case '\r': spyR_buf_puts(b, "\\r"); break;
    case '\t': spyR_buf_puts(b, "\\t"); break;
    case '\b': spyR_buf_puts(b, "\\b"); break;
    case '\f': spyR_buf_puts(b, "\\f"); break;
    default: spyR_buf_printf(b, "\\u%04X", cp); break;
    }
    i += k;
  }
  spyR_buf_add(b, str + i - run, run);
}

void spyR_buf_puts_esc(spyR_buf *b, const char *s) {
  spyR_buf_add_esc(b, s ? s : "", s ? strlen(s) : 0);
}

/* Names appended raw (exports escape for their own format) or escaped
** (text). */
static void add_name(spyR_buf *b, const char *s, int esc) {
  if (esc) spyR_buf_puts_esc(b, s);
  else spyR_buf_puts(b, s);
}

static void label(spyR_buf *b, const spy_profile *p, uint32_t frame,
                  int esc) {
  if (frame >= p->nframes) {
    spyR_buf_puts(b, "?");
    return;
  }
  const spy_frame *fr = &p->frames[frame];
  const char *name = fr->name ? fr->name : "";
  switch (fr->kind) {
  case SPY_FRAME_GC:
    spyR_buf_puts(b, "GC");
    break;
  case SPY_FRAME_REGION:
    spyR_buf_puts(b, "[region] ");
    add_name(b, name, esc);
    break;
  case SPY_FRAME_NATIVE:
    spyR_buf_puts(b, "[native] ");
    add_name(b, name, esc);
    break;
  case SPY_FRAME_CUT:
    if (fr->key) {
      char n[32];
      spyR_buf_printf(b, "... %s frame%s cut ...", spyR_fmt_group(n, fr->key),
                      fr->key == 1 ? "" : "s");
    } else {
      spyR_buf_puts(b, "... frames cut ...");
    }
    break;
  default:
    add_name(b, name, esc);
    break;
  }
}

void spyR_label(spyR_buf *b, const spy_profile *p, uint32_t frame) {
  label(b, p, frame, 0);
}

void spyR_label_text(spyR_buf *b, const spy_profile *p, uint32_t frame) {
  label(b, p, frame, 1);
}

size_t spyR_columns(const char *s, size_t n) {
  size_t cols = 0;
  for (size_t i = 0; i < n; i++)
    if (((unsigned char)s[i] & 0xC0) != 0x80) cols++;
  return cols;
}

void spyR_truncate(spyR_buf *b, size_t cols) {
  if (!cols || b->oom || !b->s || spyR_columns(b->s, b->len) <= cols) return;
  size_t keep = cols >= 4 ? cols - 3 : cols;
  size_t i = 0, c = 0;
  while (i < b->len) {
    if (((unsigned char)b->s[i] & 0xC0) != 0x80) {
      if (c == keep) break;
      c++;
    }
    i++;
  }
  b->len = i;
  b->s[i] = '\0';
  if (cols >= 4) spyR_buf_puts(b, "...");
}

/* ------------------------------------------------------------------------
** JSON strings
** --------------------------------------------------------------------- */

static void put_buf(void *ctx, const char *s, size_t n) {
  spyR_buf_add((spyR_buf *)ctx, s, n);
}

void spyR_json_str(spyR_buf *b, const char *s) {
  spyP_json_str(put_buf, b, s);
}

/* XML text and attribute values: the five special characters as entities,
** control characters (which XML 1.0 does not allow at all) and invalid
** UTF-8 as U+FFFD, so any name gives a well-formed document. */
void spyR_xml_str(spyR_buf *b, const char *s) {
  const unsigned char *u = (const unsigned char *)(s ? s : "");
  while (*u) {
    unsigned c = *u;
    size_t n = (size_t)spyP_utf8_len(u);
    if (c == '&') spyR_buf_puts(b, "&amp;");
    else if (c == '<') spyR_buf_puts(b, "&lt;");
    else if (c == '>') spyR_buf_puts(b, "&gt;");
    else if (c == '"') spyR_buf_puts(b, "&quot;");
    else if (c == '\'') spyR_buf_puts(b, "&apos;");
    else if (c < 0x20 || c == 0x7f || n == 0) {
      spyR_buf_puts(b, "\xEF\xBF\xBD");
      n = 1;
    } else {
      spyR_buf_add(b, (const char *)u, n);
    }
    u += n ? n : 1;
  }
}
