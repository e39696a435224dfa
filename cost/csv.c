/*
** cost/csv.c: reading cost observations from CSV.
**
** The file is hostile input: every way it can be malformed ends in one
** message "FILE:LINE: what" (or "FILE:LINE:COL: what" when a field is at
** fault) and SPY_EFORMAT, never a crash. Columns (docs/costs.md):
**
**   primitive, SIZE..., time_ns, EXTRA...
**
** `primitive` and `time_ns` are required; the columns before `time_ns`
** (other than `primitive`) are operand sizes, those after it are extra
** predictors such as `gc`. A size or extra field may be left empty for a
** primitive that does not have that operand, but then consistently for
** every row of that primitive. Blank lines and lines starting with '#' are
** skipped; fields may be quoted with '"' ("" inside quotes is a quote).
*/
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cost/data.h"
#include "cost/util.h"

#define MAXCOLS 64

typedef struct field {
  const char *s; /* start (for quoted fields, the unescaped copy) */
  size_t len;
  size_t off;    /* quoted fields: offset of the copy in the scratch */
  int col;       /* 1-based byte column of the field's first character */
  int quoted;
} field;

typedef struct reader {
  const char *buf, *end, *p;
  const char *name;
  unsigned long line;
  const char *linestart;
  char *err;
  size_t errlen;
  char *scratch; /* unescaped quoted fields of the current row */
  size_t scap;
} reader;

static int errf(reader *r, unsigned long line, int col, const char *fmt,
                ...) {
  char msg[256];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  if (r->err && r->errlen) {
    if (col > 0)
      snprintf(r->err, r->errlen, "%s:%lu:%d: %s", r->name, line, col, msg);
    else
      snprintf(r->err, r->errlen, "%s:%lu: %s", r->name, line, msg);
  }
  return SPY_EFORMAT;
}

/* Show a field in a message: at most 32 bytes, non-printing bytes as '?'. */
static const char *show(const field *f, char *out, size_t outlen) {
  size_t n = f->len < 32 ? f->len : 32, k = 0;
  for (size_t i = 0; i < n && k + 1 < outlen; i++) {
    unsigned char c = (unsigned char)f->s[i];
    out[k++] = (c >= 32 && c < 127) ? (char)c : '?';
  }
  if (f->len > n && k + 4 < outlen) {
    memcpy(out + k, "...", 3);
    k += 3;
  }
  out[k] = '\0';
  return out;
}

/* Split the next non-blank, non-comment line into fields. Returns the
** number of fields, 0 at end of input, or a negative error. */
static int next_row(reader *r, field *f, int maxf) {
  for (;;) {
    if (r->p >= r->end) return 0;
    r->line++;
    r->linestart = r->p;
    const char *q = r->p;
    while (q < r->end && (*q == ' ' || *q == '\t')) q++;
    const char *eol = NULL;
    if (q < r->end) eol = memchr(q, '\n', (size_t)(r->end - q));
    if (!eol) eol = r->end;
    const char *e = eol;
    if (e > q && e[-1] == '\r') e--;
    if (q == e || *q == '#') {
      r->p = eol < r->end ? eol + 1 : r->end;
      continue;
    }
    break;
  }
  int nf = 0;
  size_t used = 0;
  const char *p = r->p;
  for (;;) {
    while (p < r->end && (*p == ' ' || *p == '\t')) p++;
    if (nf == maxf)
      return errf(r, r->line, (int)(p - r->linestart) + 1,
                  "more than %d fields", maxf);
    field *fl = &f[nf++];
    fl->col = (int)(p - r->linestart) + 1;
    fl->quoted = 0;
    if (p < r->end && *p == '"') {
      fl->quoted = 1;
      p++;
      size_t start = used;
      for (;;) {
        if (p >= r->end || *p == '\n' || *p == '\r')
          return errf(r, r->line, fl->col, "unterminated quoted field");
        if (*p == '"') {
          if (p + 1 < r->end && p[1] == '"') p++;
          else break;
        }
        if (used + 1 >= r->scap) {
          size_t cap = r->scap ? 2 * r->scap : 256;
          char *ns = realloc(r->scratch, cap);
          if (!ns) return SPY_ENOMEM;
          r->scratch = ns;
          r->scap = cap;
        }
        r->scratch[used++] = *p++;
      }
      p++; /* the closing quote */
      fl->s = NULL; /* set below, once the scratch stops moving */
      fl->off = start;
      fl->len = used - start;
      while (p < r->end && (*p == ' ' || *p == '\t')) p++;
      if (p < r->end && *p != ',' && *p != '\n' && *p != '\r')
        return errf(r, r->line, (int)(p - r->linestart) + 1,
                    "unexpected character after a quoted field");
    } else {
      const char *s = p;
      while (p < r->end && *p != ',' && *p != '\n' && *p != '"') p++;
      if (p < r->end && *p == '"')
        return errf(r, r->line, (int)(p - r->linestart) + 1,
                    "quote inside an unquoted field");
      const char *e = p;
      while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r')) e--;
      fl->s = s;
      fl->len = (size_t)(e - s);
    }
    if (p < r->end && *p == ',') {
      p++;
      continue;
    }
    if (p < r->end && *p == '\r') p++;
    if (p < r->end && *p == '\n') p++;
    break;
  }
  for (int i = 0; i < nf; i++)
    if (f[i].quoted) f[i].s = r->scratch ? r->scratch + f[i].off : "";
  r->p = p;
  return nf;
}

/* Parse a decimal number strictly: [+-]digits[.digits][(e|E)[+-]digits],
** at least one digit in the mantissa; nothing else (no hex, inf or nan).
** Returns 0 and sets *v, or -1. */
static int parse_num(const field *f, double *v) {
  const char *s = f->s;
  size_t n = f->len, i = 0, digits = 0;
  char buf[128];
  if (n == 0 || n >= sizeof buf) return -1;
  if (s[i] == '+' || s[i] == '-') i++;
  while (i < n && s[i] >= '0' && s[i] <= '9') i++, digits++;
  if (i < n && s[i] == '.') {
    i++;
    while (i < n && s[i] >= '0' && s[i] <= '9') i++, digits++;
  }
  if (!digits) return -1;
  if (i < n && (s[i] == 'e' || s[i] == 'E')) {
    i++;
    if (i < n && (s[i] == '+' || s[i] == '-')) i++;
    size_t ed = 0;
    while (i < n && s[i] >= '0' && s[i] <= '9') i++, ed++;
    if (!ed) return -1;
  }
  if (i != n) return -1;
  memcpy(buf, s, n);
  buf[n] = '\0';
  errno = 0;
  *v = strtod(buf, NULL);
  if (errno == ERANGE && (*v > 1 || *v < -1)) return -1;
  return 0;
}

/* Per-primitive bookkeeping while reading: which optional columns it has
** and the first line that said so. */
typedef struct seen {
  unsigned long first_line;
  unsigned long long present; /* bit per header column */
} seen;

/* The roles of the columns, from the header. */
enum { ROLE_PRIM, ROLE_SIZE, ROLE_TIME, ROLE_EXTRA };

/* A CSV being parsed: the reader, the header, and the data so far. */
typedef struct csvin {
  reader r;
  field f[MAXCOLS + 1]; /* the current row's fields */
  int ncols, cprim, ctime;
  unsigned long hline; /* the header's line */
  char *hdr[MAXCOLS];
  int role[MAXCOLS];
  spy_cost_data *d;
  seen *sn; /* per primitive of d */
  size_t scap;
  long last; /* the previous row's primitive, or -1 */
} csvin;

/* The header row: identifiers, none twice, naming primitive and time_ns;
** the columns before time_ns are sizes, those after it extras. */
static int read_header(csvin *c) {
  reader *r = &c->r;
  field *f = c->f;
  int rc = next_row(r, f, MAXCOLS);
  if (rc == 0)
    return errf(r, 1, 0, "empty file: expected a header row naming the "
                         "columns (primitive, sizes..., time_ns)");
  if (rc < 0) return rc;
  c->ncols = rc;
  c->hline = r->line;
  for (int i = 0; i < c->ncols; i++) {
    char tmp[48];
    if (!spyC_is_ident(f[i].s, f[i].len))
      return errf(r, c->hline, f[i].col,
                  f[i].len ? "column name '%s' is not an identifier "
                             "(letters, digits and '_')"
                           : "empty column name%s",
                  show(&f[i], tmp, sizeof tmp));
    if (!(c->hdr[i] = malloc(f[i].len + 1))) return SPY_ENOMEM;
    memcpy(c->hdr[i], f[i].s, f[i].len);
    c->hdr[i][f[i].len] = '\0';
    for (int j = 0; j < i; j++)
      if (strcmp(c->hdr[j], c->hdr[i]) == 0)
        return errf(r, c->hline, f[i].col, "duplicate column '%s'",
                    c->hdr[i]);
    if (strcmp(c->hdr[i], "primitive") == 0) c->cprim = i;
    if (strcmp(c->hdr[i], "time_ns") == 0) c->ctime = i;
  }
  if (c->cprim < 0 || c->ctime < 0)
    return errf(r, c->hline, 0, "missing column '%s' (the header must name "
                                "primitive, the sizes, time_ns)",
                c->cprim < 0 ? "primitive" : "time_ns");
  if (c->ncols - 2 > SPY_COST_MAXVARS)
    return errf(r, c->hline, 0, "%d size and predictor columns; at most %d",
                c->ncols - 2, SPY_COST_MAXVARS);
  for (int i = 0; i < c->ncols; i++)
    c->role[i] = i == c->cprim   ? ROLE_PRIM
                 : i == c->ctime ? ROLE_TIME
                 : i < c->ctime  ? ROLE_SIZE
                                 : ROLE_EXTRA;
  return 0;
}

/* The numbers of the current row: the time into *NS, sizes and extras
** into VALS (by column) with a bit in *PRESENT for each non-empty one. */
static int row_values(csvin *c, double *vals, double *ns,
                      unsigned long long *present) {
  reader *r = &c->r;
  const field *f = c->f;
  *present = 0;
  for (int i = 0; i < c->ncols; i++) {
    if (c->role[i] == ROLE_PRIM) continue;
    char tmp[48];
    if (f[i].len == 0) {
      if (c->role[i] == ROLE_TIME)
        return errf(r, r->line, f[i].col, "missing value in column "
                                          "'time_ns'");
      continue;
    }
    double v;
    if (parse_num(&f[i], &v) < 0)
      return errf(r, r->line, f[i].col, "'%s' is not a number (column "
                                        "'%s')",
                  show(&f[i], tmp, sizeof tmp), c->hdr[i]);
    if (c->role[i] == ROLE_TIME) {
      if (v < 0)
        return errf(r, r->line, f[i].col, "negative time_ns '%s'",
                    show(&f[i], tmp, sizeof tmp));
      *ns = v;
    } else {
      vals[i] = v;
      *present |= 1ull << i;
    }
  }
  return 0;
}

/* A primitive first seen in this row: its variables are the columns the
** row fills. Returns its index or a negative SPY_E* code. */
static long add_prim(csvin *c, const field *pf, unsigned long long present) {
  const char *sz[SPY_COST_MAXVARS], *ex[SPY_COST_MAXVARS];
  unsigned nsz = 0, nex = 0;
  for (int i = 0; i < c->ncols; i++)
    if (present >> i & 1) {
      if (c->role[i] == ROLE_SIZE) sz[nsz++] = c->hdr[i];
      else ex[nex++] = c->hdr[i];
    }
  char *pname = malloc(pf->len + 1);
  if (!pname) return SPY_ENOMEM;
  memcpy(pname, pf->s, pf->len);
  pname[pf->len] = '\0';
  int k = spy_cost_data_add_prim(c->d, pname, nsz, sz, nex, ex);
  free(pname);
  if (k < 0) return k;
  if ((size_t)k >= c->scap) {
    size_t cap = c->scap ? 2 * c->scap : 16;
    seen *nsn = realloc(c->sn, cap * sizeof *nsn);
    if (!nsn) return SPY_ENOMEM;
    c->sn = nsn;
    c->scap = cap;
  }
  c->sn[k].first_line = c->r.line;
  c->sn[k].present = present;
  return k;
}

/* The current row's primitive (the last row's, found, or new), checking
** that it fills the same columns as its first row did. */
static long row_prim(csvin *c, unsigned long long present) {
  reader *r = &c->r;
  const field *pf = &c->f[c->cprim];
  const spy_cost_data *d = c->d;
  long k = c->last >= 0 && strlen(d->prim[c->last].name) == pf->len &&
                   memcmp(d->prim[c->last].name, pf->s, pf->len) == 0
               ? c->last
               : spyC_data_find(d, pf->s, pf->len);
  if (k < 0) return add_prim(c, pf, present);
  const seen *sk = &c->sn[k];
  if (sk->present != present) {
    int i = 0;
    while (!(((sk->present ^ present) >> i) & 1)) i++;
    return errf(r, r->line, c->f[i].col,
                (present >> i & 1)
                    ? "column '%s' has a value here but is empty for '%s' "
                      "at line %lu"
                    : "column '%s' is empty here but has a value for '%s' "
                      "at line %lu",
                c->hdr[i], d->prim[k].name, sk->first_line);
  }
  return k;
}

/* One data row (its fields in c->f) added to the data: sizes first, then
** extras, in header order. */
static int read_row(csvin *c, int nfields) {
  reader *r = &c->r;
  if (nfields != c->ncols)
    return errf(r, r->line, 0, "expected %d fields as in the header, "
                               "found %d", c->ncols, nfields);
  const field *pf = &c->f[c->cprim];
  if (pf->len == 0) return errf(r, r->line, pf->col, "empty primitive name");
  if (memchr(pf->s, '\0', pf->len))
    return errf(r, r->line, pf->col, "NUL byte in primitive name");
  double vals[MAXCOLS], ns = 0;
  unsigned long long present;
  int rc = row_values(c, vals, &ns, &present);
  if (rc < 0) return rc;
  long k = row_prim(c, present);
  if (k < 0) return (int)k;
  c->last = k;
  double row[SPY_COST_MAXVARS];
  unsigned nv = 0;
  for (int i = 0; i < c->ncols; i++)
    if ((present >> i & 1) && c->role[i] == ROLE_SIZE) row[nv++] = vals[i];
  for (int i = 0; i < c->ncols; i++)
    if ((present >> i & 1) && c->role[i] == ROLE_EXTRA) row[nv++] = vals[i];
  rc = spyC_data_push(c->d, (size_t)k, row, ns,
                      r->line > UINT32_MAX ? UINT32_MAX : (uint32_t)r->line);
  return rc < 0 ? rc : 0;
}

int spy_cost_data_parse_csv(const char *buf, size_t len, const char *name,
                            spy_cost_data **out, char *err, size_t errlen) {
  if (!out) return SPY_EINVAL;
  *out = NULL;
  if (!buf && len) return SPY_EINVAL;
  csvin *c = calloc(1, sizeof *c);
  if (!c) return SPY_ENOMEM;
  c->r = (reader){.buf = buf, .end = buf + len, .p = buf,
                  .name = name ? name : "<csv>", .err = err,
                  .errlen = errlen};
  c->cprim = c->ctime = -1;
  c->last = -1;
  if (len >= 3 && memcmp(buf, "\xef\xbb\xbf", 3) == 0) c->r.p += 3;
  int rc = read_header(c);
  if (rc == 0 && !(c->d = spy_cost_data_new())) rc = SPY_ENOMEM;
  if (rc == 0 && !(c->d->source = spyC_strdup(c->r.name))) rc = SPY_ENOMEM;
  size_t rows = 0;
  while (rc == 0) {
    int nf = next_row(&c->r, c->f, MAXCOLS + 1);
    if (nf <= 0) {
      rc = nf;
      break;
    }
    if ((rc = read_row(c, nf)) == 0) rows++;
  }
  if (rc == 0 && rows == 0)
    rc = errf(&c->r, c->hline, 0, "no data rows after the header");
  for (int i = 0; i < c->ncols && i < MAXCOLS; i++) free(c->hdr[i]);
  free(c->r.scratch);
  free(c->sn);
  spy_cost_data *d = c->d;
  const char *rname = c->r.name;
  free(c);
  if (rc < 0) {
    spy_cost_data_free(d);
    if (rc == SPY_ENOMEM && err && errlen)
      snprintf(err, errlen, "%s: out of memory", rname);
    return rc;
  }
  *out = d;
  return 0;
}

int spy_cost_data_load_csv(const char *path, spy_cost_data **out, char *err,
                           size_t errlen) {
  if (!path || !out) return SPY_EINVAL;
  *out = NULL;
  int std = strcmp(path, "-") == 0;
  FILE *fp = std ? stdin : fopen(path, "rb");
  if (!fp) {
    if (err && errlen)
      snprintf(err, errlen, "%s: %s", path, strerror(errno));
    return SPY_EIO;
  }
  size_t cap = 1 << 16, n = 0;
  char *buf = malloc(cap);
  int rc = 0;
  while (buf) {
    size_t got = fread(buf + n, 1, cap - n, fp);
    n += got;
    if (n < cap) break;
    char *nb = realloc(buf, cap *= 2);
    if (!nb) {
      free(buf);
      buf = NULL;
    } else {
      buf = nb;
    }
  }
  if (!buf) {
    rc = SPY_ENOMEM;
    if (err && errlen) snprintf(err, errlen, "%s: out of memory", path);
  } else if (ferror(fp)) {
    rc = SPY_EIO;
    if (err && errlen) snprintf(err, errlen, "%s: read error", path);
  }
  if (!std) fclose(fp);
  if (rc == 0)
    rc = spy_cost_data_parse_csv(buf, n, std ? "<stdin>" : path, out, err,
                                 errlen);
  free(buf);
  return rc;
}

/* ===================================================================
** Writing
** =================================================================== */

static void put_field(FILE *f, const char *s) {
  if (!strpbrk(s, ",\"\n\r") && s[0] != ' ' && s[0] != '#') {
    fputs(s, f);
    return;
  }
  fputc('"', f);
  for (; *s; s++) {
    if (*s == '"') fputc('"', f);
    fputc(*s, f);
  }
  fputc('"', f);
}

int spy_cost_data_write_csv(const spy_cost_data *d, FILE *f) {
  if (!d || !f) return SPY_EINVAL;
  /* The union of the size names, then of the extra names, in order of
  ** first appearance. */
  const char *cols[64];
  int ncols = 0, nsize = 0;
  for (int pass = 0; pass < 2; pass++) {
    for (size_t i = 0; i < d->n; i++) {
      const spyC_prim *p = &d->prim[i];
      unsigned lo = pass ? p->nsizes : 0, hi = pass ? p->nvars : p->nsizes;
      for (unsigned v = lo; v < hi; v++) {
        int known = 0;
        for (int c = 0; c < ncols && !known; c++)
          known = strcmp(cols[c], p->var[v]) == 0;
        if (!known && ncols < 64) cols[ncols++] = p->var[v];
      }
    }
    if (pass == 0) nsize = ncols;
  }
  fputs("primitive", f);
  for (int c = 0; c < nsize; c++) fprintf(f, ",%s", cols[c]);
  fputs(",time_ns", f);
  for (int c = nsize; c < ncols; c++) fprintf(f, ",%s", cols[c]);
  fputc('\n', f);
  for (size_t i = 0; i < d->n; i++) {
    const spyC_prim *p = &d->prim[i];
    int at[64];
    for (int c = 0; c < ncols; c++) {
      at[c] = -1;
      for (unsigned v = 0; v < p->nvars; v++)
        if (strcmp(cols[c], p->var[v]) == 0) at[c] = (int)v;
    }
    for (size_t r = 0; r < p->n; r++) {
      put_field(f, p->name);
      for (int c = 0; c < ncols; c++) {
        if (c == nsize) {
          fputc(',', f);
          spyC_fput_num(f, p->t[r]);
        }
        fputc(',', f);
        if (at[c] >= 0) spyC_fput_num(f, p->x[r * p->nvars + (size_t)at[c]]);
      }
      if (nsize == ncols) {
        fputc(',', f);
        spyC_fput_num(f, p->t[r]);
      }
      fputc('\n', f);
    }
  }
  return ferror(f) ? SPY_EIO : 0;
}
