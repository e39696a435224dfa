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

int spy_cost_data_parse_csv(const char *buf, size_t len, const char *name,
                            spy_cost_data **out, char *err, size_t errlen) {
  if (!out) return SPY_EINVAL;
  *out = NULL;
  if (!buf && len) return SPY_EINVAL;
  reader r = {.buf = buf, .end = buf + len, .p = buf,
              .name = name ? name : "<csv>", .err = err, .errlen = errlen};
  if (len >= 3 && memcmp(buf, "\xef\xbb\xbf", 3) == 0) r.p += 3;
  field f[MAXCOLS + 1];
  spy_cost_data *d = NULL;
  seen *sn = NULL;
  int rc, ncols = 0, cprim = -1, ctime = -1;
  char *hdr[MAXCOLS];
  int role[MAXCOLS]; /* 0 primitive, 1 size, 2 time, 3 extra */
  memset(hdr, 0, sizeof hdr);

  /* The header row. */
  rc = next_row(&r, f, MAXCOLS);
  if (rc == 0) {
    rc = errf(&r, 1, 0, "empty file: expected a header row naming the "
                        "columns (primitive, sizes..., time_ns)");
    goto done;
  }
  if (rc < 0) goto done;
  ncols = rc;
  unsigned long hline = r.line;
  for (int i = 0; i < ncols; i++) {
    char tmp[48];
    if (!spyC_is_ident(f[i].s, f[i].len)) {
      rc = errf(&r, hline, f[i].col,
                f[i].len ? "column name '%s' is not an identifier "
                           "(letters, digits and '_')"
                         : "empty column name%s",
                show(&f[i], tmp, sizeof tmp));
      goto done;
    }
    if (!(hdr[i] = malloc(f[i].len + 1))) {
      rc = SPY_ENOMEM;
      goto done;
    }
    memcpy(hdr[i], f[i].s, f[i].len);
    hdr[i][f[i].len] = '\0';
    for (int j = 0; j < i; j++)
      if (strcmp(hdr[j], hdr[i]) == 0) {
        rc = errf(&r, hline, f[i].col, "duplicate column '%s'", hdr[i]);
        goto done;
      }
    if (strcmp(hdr[i], "primitive") == 0) cprim = i;
    if (strcmp(hdr[i], "time_ns") == 0) ctime = i;
  }
  if (cprim < 0 || ctime < 0) {
    rc = errf(&r, hline, 0, "missing column '%s' (the header must name "
                            "primitive, the sizes, time_ns)",
              cprim < 0 ? "primitive" : "time_ns");
    goto done;
  }
  if (ncols - 2 > SPY_COST_MAXVARS) {
    rc = errf(&r, hline, 0, "%d size and predictor columns; at most %d",
              ncols - 2, SPY_COST_MAXVARS);
    goto done;
  }
  for (int i = 0; i < ncols; i++)
    role[i] = i == cprim ? 0 : i == ctime ? 2 : i < ctime ? 1 : 3;

  if (!(d = spy_cost_data_new())) {
    rc = SPY_ENOMEM;
    goto done;
  }
  d->source = spyC_strdup(r.name);
  size_t scap = 0;
  long last = -1;
  size_t rows = 0;

  /* The data rows. */
  while ((rc = next_row(&r, f, MAXCOLS + 1)) > 0) {
    if (rc != ncols) {
      rc = errf(&r, r.line, 0, "expected %d fields as in the header, "
                               "found %d", ncols, rc);
      goto done;
    }
    const field *pf = &f[cprim];
    if (pf->len == 0) {
      rc = errf(&r, r.line, pf->col, "empty primitive name");
      goto done;
    }
    if (memchr(pf->s, '\0', pf->len)) {
      rc = errf(&r, r.line, pf->col, "NUL byte in primitive name");
      goto done;
    }
    double vals[MAXCOLS], ns = 0;
    unsigned long long present = 0;
    for (int i = 0; i < ncols; i++) {
      if (role[i] == 0) continue;
      char tmp[48];
      if (f[i].len == 0) {
        if (role[i] == 2) {
          rc = errf(&r, r.line, f[i].col, "missing value in column "
                                          "'time_ns'");
          goto done;
        }
        continue;
      }
      double v;
      if (parse_num(&f[i], &v) < 0) {
        rc = errf(&r, r.line, f[i].col, "'%s' is not a number (column "
                                        "'%s')",
                  show(&f[i], tmp, sizeof tmp), hdr[i]);
        goto done;
      }
      if (role[i] == 2) {
        if (v < 0) {
          rc = errf(&r, r.line, f[i].col, "negative time_ns '%s'",
                    show(&f[i], tmp, sizeof tmp));
          goto done;
        }
        ns = v;
      } else {
        vals[i] = v;
        present |= 1ull << i;
      }
    }
    long k = last >= 0 && strlen(d->prim[last].name) == pf->len &&
                     memcmp(d->prim[last].name, pf->s, pf->len) == 0
                 ? last
                 : spyC_data_find(d, pf->s, pf->len);
    if (k < 0) {
      /* A new primitive: its variables are the columns this row fills. */
      const char *sz[SPY_COST_MAXVARS], *ex[SPY_COST_MAXVARS];
      unsigned ns_ = 0, ne = 0;
      for (int i = 0; i < ncols; i++)
        if (present >> i & 1) {
          if (role[i] == 1) sz[ns_++] = hdr[i];
          else ex[ne++] = hdr[i];
        }
      char *pname = malloc(pf->len + 1);
      if (!pname) {
        rc = SPY_ENOMEM;
        goto done;
      }
      memcpy(pname, pf->s, pf->len);
      pname[pf->len] = '\0';
      int id = spy_cost_data_add_prim(d, pname, ns_, sz, ne, ex);
      free(pname);
      if (id < 0) {
        rc = id;
        goto done;
      }
      k = id;
      if ((size_t)k >= scap) {
        size_t cap = scap ? 2 * scap : 16;
        seen *nsn = realloc(sn, cap * sizeof *nsn);
        if (!nsn) {
          rc = SPY_ENOMEM;
          goto done;
        }
        sn = nsn;
        scap = cap;
      }
      sn[k].first_line = r.line;
      sn[k].present = present;
    } else if (sn[k].present != present) {
      int i = 0;
      while (!(((sn[k].present ^ present) >> i) & 1)) i++;
      rc = errf(&r, r.line, f[i].col,
                (present >> i & 1)
                    ? "column '%s' has a value here but is empty for '%s' "
                      "at line %lu"
                    : "column '%s' is empty here but has a value for '%s' "
                      "at line %lu",
                hdr[i], d->prim[k].name, sn[k].first_line);
      goto done;
    }
    last = k;
    double row[SPY_COST_MAXVARS];
    unsigned nv = 0;
    for (int i = 0; i < ncols; i++)
      if ((present >> i & 1) && role[i] == 1) row[nv++] = vals[i];
    for (int i = 0; i < ncols; i++)
      if ((present >> i & 1) && role[i] == 3) row[nv++] = vals[i];
    if ((rc = spyC_data_push(d, (size_t)k, row, ns,
                             r.line > UINT32_MAX ? UINT32_MAX
                                                 : (uint32_t)r.line)) < 0)
      goto done;
    rows++;
  }
  if (rc < 0) goto done;
  if (rows == 0) {
    rc = errf(&r, hline, 0, "no data rows after the header");
    goto done;
  }
  rc = 0;
done:
  for (int i = 0; i < ncols && i < MAXCOLS; i++) free(hdr[i]);
  free(r.scratch);
  free(sn);
  if (rc < 0) {
    spy_cost_data_free(d);
    if (rc == SPY_ENOMEM && err && errlen)
      snprintf(err, errlen, "%s: out of memory", r.name);
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

/* The shortest of %.15g and %.17g that reads back as the same double. */
static void put_num(FILE *f, double v) {
  char buf[40];
  snprintf(buf, sizeof buf, "%.15g", v);
  if (strtod(buf, NULL) != v) snprintf(buf, sizeof buf, "%.17g", v);
  fputs(buf, f);
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
          put_num(f, p->t[r]);
        }
        fputc(',', f);
        if (at[c] >= 0) put_num(f, p->x[r * p->nvars + (size_t)at[c]]);
      }
      if (nsize == ncols) {
        fputc(',', f);
        put_num(f, p->t[r]);
      }
      fputc('\n', f);
    }
  }
  return ferror(f) ? SPY_EIO : 0;
}
