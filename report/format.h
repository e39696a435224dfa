/*
** report/format.h: the small pieces every report writer shares (internal,
** spyR_): a growable string, number formatting (thousands separators, ms,
** percentages), frame labels and JSON strings.
**
** Labels are the one place that decides how a frame kind reads, so the text
** report, the exports, the diff and the browser all name a frame alike:
**   method / primitive  its name, as registered (the seed prints primitives
**                       by name only; they are leaves of their own)
**   GC                  "GC"
**   region              "[region] NAME"
**   native frame        "[native] NAME"
**   depth cut           "... N frames cut ..." (N is the frame's key; a key
**                       of 0 reads "... frames cut ...")
**   process root        the process's name
*/
#ifndef SPY_REPORT_FORMAT_H
#define SPY_REPORT_FORMAT_H

#include <inttypes.h>
#include <stdarg.h>

#include <spyon/profile.h>

/* A growable NUL-terminated string. Zero-initialize it ({0}); after an
** allocation failure `oom` stays set and further appends do nothing, so a
** writer can append freely and check once. */
typedef struct spyR_buf {
  char *s;
  size_t len, cap;
  int oom;
} spyR_buf;

SPY_INTERNAL void spyR_buf_free(spyR_buf *b);
/* Empty the string, keeping its storage. */
SPY_INTERNAL void spyR_buf_clear(spyR_buf *b);
SPY_INTERNAL void spyR_buf_add(spyR_buf *b, const char *s, size_t n);
SPY_INTERNAL void spyR_buf_puts(spyR_buf *b, const char *s);
SPY_INTERNAL void spyR_buf_printf(spyR_buf *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Append s[0..n) (or the string s) with control characters escaped as
** JSON does (\n, \t, \u001B, ...; C1 controls too) and bytes that are
** not UTF-8 as \xNN, so a hostile name cannot break a text layout or
** drive the terminal. Every name a text output prints goes through it. */
SPY_INTERNAL void spyR_buf_add_esc(spyR_buf *b, const char *s, size_t n);
SPY_INTERNAL void spyR_buf_puts_esc(spyR_buf *b, const char *s);

/* The string so far ("" when nothing was appended). */
SPY_INTERNAL const char *spyR_buf_str(const spyR_buf *b);

/* Decimal with thousands separators: 1234567 -> "1,234,567". out must hold
** 32 bytes; returns out. */
SPY_INTERNAL char *spyR_fmt_group(char *out, uint64_t v);

/* v with `decimals` digits after the point and a grouped integer part:
** (1234.56, 1) -> "1,234.6", (-0.5, 2) -> "-0.50". out must hold 48 bytes.
** Values beyond 1e18 fall back to plain %.*f. Returns out. */
SPY_INTERNAL char *spyR_fmt_fixed(char *out, double v, int decimals);

/* A duration in the largest unit it reaches: 100000 -> "100 us",
** 1e10 -> "10 s", 1500000 -> "1.5 ms", 0 -> "0 ns". out must hold 48
** bytes; returns out. */
SPY_INTERNAL char *spyR_fmt_duration(char *out, uint64_t ns);

/* Nanoseconds to whole milliseconds, rounded half up. */
SPY_INTERNAL uint64_t spyR_ms(uint64_t ns);

/* The time every percentage is a share of: wall_ns, or when that is 0 the
** sum of the processes' totals (0 for an empty profile). */
SPY_INTERNAL uint64_t spyR_base_ns(const spy_profile *p);

/* 100 * ns / base, 0 when base is 0. */
SPY_INTERNAL double spyR_pct(uint64_t ns, uint64_t base);

/* Variance (ns^2) of a time estimated from k samples totalling ns, w0 the
** sampling interval: samples fall into a frame like a Poisson process and
** about one interval of each one's weight is guessed, so (k + 1) * w^2
** with w = min(ns / k, w0) (report/diff.c explains it in full). */
SPY_INTERNAL double spyR_time_var(double ns, double k, double w0);

/* Append the label of frame `frame` (see the table above); "?" for an
** index out of range. */
SPY_INTERNAL void spyR_label(spyR_buf *b, const spy_profile *p,
                             uint32_t frame);

/* The same with the name escaped by spyR_buf_add_esc: for text meant for
** a terminal (the report, the diff). */
SPY_INTERNAL void spyR_label_text(spyR_buf *b, const spy_profile *p,
                                  uint32_t frame);

/* The number of UTF-8 code points in s[0..n) (bytes that do not start a
** code point are not counted), i.e. terminal columns for most names. */
SPY_INTERNAL size_t spyR_columns(const char *s, size_t n);

/* Cut b's string to at most `cols` code points, ending with "..." when
** something was cut (cols < 4: no dots). cols 0 means no limit. */
SPY_INTERNAL void spyR_truncate(spyR_buf *b, size_t cols);

/* Append s as a JSON string literal, by profile/jsonw.c's rules (the
** project's one escaper): always valid JSON and valid UTF-8. */
SPY_INTERNAL void spyR_json_str(spyR_buf *b, const char *s);

/* Append s escaped for XML text or a quoted attribute: & < > " ' as
** entities; control characters and invalid UTF-8 bytes become U+FFFD. */
SPY_INTERNAL void spyR_xml_str(spyR_buf *b, const char *s);

#endif
