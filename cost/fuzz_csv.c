/*
** cost/fuzz_csv.c: libFuzzer target for the CSV loader
** (spy_cost_data_parse_csv). Built by `make fuzz` with clang:
**   cost/fuzz_csv -max_total_time=60 corpus/ tests/data/cost
** Every input must either load or fail with a message; never crash, leak
** or read out of bounds.
*/
#include "config.h"

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <spyon/cost.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  spy_cost_data *d = NULL;
  char err[256];
  err[0] = '\0';
  int rc = spy_cost_data_parse_csv((const char *)data, size, "fuzz.csv", &d,
                                   err, sizeof err);
  if (rc == 0) {
    /* Walk what was loaded. */
    size_t n = spy_cost_data_nprims(d), total = 0;
    for (size_t i = 0; i < n; i++) {
      total += spy_cost_data_prim_nobs(d, i);
      if (!spy_cost_data_prim_name(d, i)) __builtin_trap();
    }
    if (n == 0 || total == 0) __builtin_trap();
    spy_cost_data_free(d);
  } else if (d != NULL || err[0] == '\0' || !memchr(err, ':', strlen(err))) {
    __builtin_trap(); /* failures leave nothing behind and say where */
  }
  return 0;
}
