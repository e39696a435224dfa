/*
** cost/fuzz_expr.c: libFuzzer target for the model expression language:
** parse, check linearity, compile, evaluate, print and re-parse the
** printed text (which must give the same values). Built by `make fuzz`.
*/
#include "config.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cost/expr.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *const vars[] = {"a", "b", "n", "gc"};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size > SPYC_MAXTEXT + 16) return 0;
  char *text = malloc(size + 1);
  if (!text) return 0;
  memcpy(text, data, size);
  text[size] = '\0';
  spyC_model m, m2;
  char err[256];
  int col = 0;
  if (spyC_model_parse(&m, text, vars, 4, &col, err, sizeof err) == 0) {
    if (m.ncoef < 1 || m.ncoef > SPYC_MAXCOEF) __builtin_trap();
    double beta[SPYC_MAXCOEF], x[4] = {3, 7, 1000, 1};
    for (int k = 0; k < m.ncoef; k++) beta[k] = k + 0.5;
    double v = spyC_model_eval(&m, beta, x);
    char *s = spyC_model_print(&m, NULL, 6, vars);
    if (s && strlen(s) <= SPYC_MAXTEXT) {
      /* The printed model (spaces around + and -, so possibly longer than
      ** the limit for input text) means the same. */
      if (spyC_model_parse(&m2, s, vars, 4, NULL, err, sizeof err) != 0)
        __builtin_trap();
      double v2 = spyC_model_eval(&m2, beta, x);
      if (isfinite(v) && isfinite(v2) &&
          fabs(v - v2) > 1e-6 * (fabs(v) + 1))
        __builtin_trap();
      spyC_model_free(&m2);
    }
    free(s);
    if (spyC_model_copy(&m2, &m) == 0) spyC_model_free(&m2);
    spyC_model_free(&m);
  } else if (col < 1 || (size_t)col > size + 1 || err[0] == '\0') {
    __builtin_trap(); /* an error always points into the text */
  }
  free(text);
  return 0;
}
