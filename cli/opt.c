/*
** cli/opt.c: one option parser and one --help printer for every command
** of spyon (see cli/opt.h). The rules, the same everywhere:
**
**   --name VALUE, --name=VALUE, -x VALUE, -xVALUE, -x=VALUE
**   a flag given a value, a missing value, an unknown option, two options
**   that conflict, a missing or extra operand: one line, exit status 2
**   -h and --help print the help made from the same table, exit status 0
**   "--" ends the options; for a command with `rest` (running a script),
**   so does the first operand: it and what follows are the script's
**
** Options are not abbreviated: a prefix that happens to be unique today
** would change meaning when an option is added.
*/
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "cli/opt.h"

const char *cli_prog = "spyon";

int cli_bad(const char *prog, const char *opt, const char *fmt, ...) {
  va_list ap;
  fprintf(stderr, "%s: ", prog);
  if (opt) fprintf(stderr, "%s: ", opt);
  va_start(ap, fmt);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fputc('\n', stderr);
  return 2;
}

int cli_choice(const char *choices, const char *word) {
  size_t n = strlen(word);
  int i = 0;
  for (const char *s = choices; *s; i++) {
    const char *e = strchr(s, '|');
    size_t l = e ? (size_t)(e - s) : strlen(s);
    if (l == n && !strncmp(s, word, n)) return i;
    if (!e) break;
    s = e + 1;
  }
  return -1;
}

int cli_set_on(void *o, const cli_opt *opt, const char *name, const char *v) {
  (void)name, (void)v;
  *(int *)((char *)o + opt->off) = 1;
  return 0;
}

int cli_set_off(void *o, const cli_opt *opt, const char *name,
                const char *v) {
  (void)name, (void)v;
  *(int *)((char *)o + opt->off) = 0;
  return 0;
}

int cli_set_str(void *o, const cli_opt *opt, const char *name,
                const char *v) {
  if (!*v) return cli_bad(cli_prog, name, "the value is empty");
  *(const char **)((char *)o + opt->off) = v;
  return 0;
}

/* A plain decimal number in [lo, hi]; "inf", "nan", hex floats and
** trailing junk are refused. The range goes into the message so that the
** user need not look it up. */
int cli_set_num(void *o, const cli_opt *opt, const char *name,
                const char *v) {
  char *end;
  errno = 0;
  double d = strtod(v, &end);
  int hex = strchr(v, 'x') || strchr(v, 'X');
  if (!*v || *end || errno || hex || !isfinite(d) || d < opt->lo ||
      d > opt->hi)
    return cli_bad(cli_prog, name,
                   "'%s' is not a number from %.15g to %.15g", v,
                   opt->lo, opt->hi);
  *(double *)((char *)o + opt->off) = d;
  return 0;
}

int cli_set_choice(void *o, const cli_opt *opt, const char *name,
                   const char *v) {
  int k = cli_choice(opt->choices, v);
  if (k < 0) {
    char list[256];
    snprintf(list, sizeof list, "%s", opt->choices);
    char *bar = strrchr(list, '|');
    /* "a|b|c" reads "a, b or c" */
    for (char *s = list; (s = strchr(s, '|')) != NULL;) {
      if (s == bar) break;
      *s = ',';
    }
    if (bar) {
      *bar = '\0';
      fprintf(stderr, "%s: %s: expected ", cli_prog, name);
      for (const char *s = list; *s; s++) {
        if (*s == ',') fputs(", ", stderr);
        else fputc(*s, stderr);
      }
      fprintf(stderr, " or %s, not '%s'\n", bar + 1, v);
    } else {
      fprintf(stderr, "%s: %s: expected %s, not '%s'\n", cli_prog, name,
              list, v);
    }
    return 2;
  }
  *(int *)((char *)o + opt->off) = k;
  return 0;
}

/* The entry whose long name is name[0..n) or whose alias is name. */
static const cli_opt *find(const cli_opt *t, const char *name, size_t n) {
  for (; t && t->name; t++) {
    if (strlen(t->name) == n && !strncmp(t->name, name, n)) return t;
    if (t->alias && strlen(t->alias) == n && !strncmp(t->alias, name, n))
      return t;
  }
  return NULL;
}

static int usage_error(const cli_cmd *c) {
  fprintf(stderr, "usage: %s %s (see %s --help)\n", c->prog, c->operands,
          c->prog);
  return 2;
}

int cli_parse(const cli_cmd *c, int argc, char **argv, void *o,
              cli_args *a) {
  memset(a, 0, sizeof *a);
  a->rest = argc;
  cli_prog = c->prog;
  const cli_opt *seen[64];
  char seen_as[64][64];
  int nseen = 0, dashdash = 0;
  for (int i = 1; i < argc; i++) {
    const char *s = argv[i];
    if (!dashdash && !strcmp(s, "--")) {
      dashdash = 1;
      continue;
    }
    if (dashdash || s[0] != '-' || !s[1]) { /* an operand ("-" is one) */
      if (c->rest) {
        a->rest = i;
        break;
      }
      if (a->npos >= c->max_pos || a->npos >= CLI_MAXPOS) {
        fprintf(stderr, "%s: unexpected operand '%s' (see %s --help)\n",
                c->prog, s, c->prog);
        return 2;
      }
      a->pos[a->npos++] = s;
      continue;
    }
    if (!strcmp(s, "-h") || !strcmp(s, "--help")) {
      cli_help(c, stdout);
      return 0;
    }
    /* Split "--name=value", "-xvalue" and "-x=value". */
    const char *val = NULL;
    size_t n;
    if (s[1] == '-') {
      const char *eq = strchr(s, '=');
      n = eq ? (size_t)(eq - s) : strlen(s);
      if (eq) val = eq + 1;
    } else {
      n = 2;
      if (s[2]) val = s[2] == '=' ? s + 3 : s + 2;
    }
    const cli_opt *opt = find(c->opts, s, n);
    if (!opt) {
      fprintf(stderr, "%s: unknown option '%.*s' (see %s --help)\n",
              c->prog, (int)n, s, c->prog);
      return 2;
    }
    char name[64];
    snprintf(name, sizeof name, "%.*s", (int)(n < 63 ? n : 63), s);
    if (!opt->arg && val) {
      fprintf(stderr, "%s: option %s takes no value\n", c->prog, name);
      return 2;
    }
    if (opt->arg && !val) {
      if (i + 1 >= argc) {
        fprintf(stderr, "%s: option %s needs a value\n", c->prog, name);
        return 2;
      }
      val = argv[++i];
    }
    for (int k = 0; k < nseen; k++)
      if (seen[k] != opt && ((seen[k]->excl & opt->excl) ||
                             (seen[k]->excl & opt->conflicts) ||
                             (seen[k]->conflicts & opt->excl))) {
        fprintf(stderr, "%s: %s and %s cannot be used together\n", c->prog,
                seen_as[k], name);
        return 2;
      }
    if ((opt->excl || opt->conflicts) && nseen < 64) {
      seen[nseen] = opt;
      memcpy(seen_as[nseen++], name, sizeof name);
    }
    int rc = opt->set(o, opt, name, val);
    if (rc) return rc;
  }
  if (a->npos < c->min_pos || (c->rest && a->rest >= argc))
    return usage_error(c);
  return -1;
}

/* One option line: "  -o, --output FILE" padded to a column, then the
** help, its further lines indented to the same column. */
static void help_line(FILE *f, const char *alias, const char *name,
                      const char *arg, const char *help) {
  enum { COL = 28 };
  char left[128];
  snprintf(left, sizeof left, "  %s%s%s%s%s", alias ? alias : "",
           alias ? ", " : "    ", name, arg ? " " : "", arg ? arg : "");
  fputs(left, f);
  int w = (int)strlen(left);
  if (w >= COL - 1) {
    fputc('\n', f);
    w = 0;
  }
  fprintf(f, "%*s", COL - w, "");
  for (const char *h = help; *h; h++) {
    fputc(*h, f);
    if (*h == '\n') fprintf(f, "%*s", COL, "");
  }
  fputc('\n', f);
}

void cli_help(const cli_cmd *c, FILE *f) {
  fprintf(f, "usage: %s %s\n", c->prog, c->operands);
  if (c->about) fprintf(f, "%s\n", c->about);
  fputs("options:\n", f);
  for (const cli_opt *t = c->opts; t && t->name; t++)
    help_line(f, t->alias, t->name, t->arg, t->help);
  help_line(f, "-h", "--help", NULL, "this help");
  if (c->footer) fprintf(f, "%s\n", c->footer);
}
