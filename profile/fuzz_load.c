/*
** profile/fuzz_load.c: libFuzzer target for the profile loader.
**
** Build: `make fuzz` (clang -fsanitize=fuzzer,address,undefined), then
**   profile/fuzz_load -max_total_time=300 CORPUS_DIR tests/data/profile
**
** Each input is loaded twice: as it is, and with its preamble's length and
** checksum rewritten to match, so that mutations get past the CRC and the
** length check and reach the section parsers and the tree checks. The CRC
** comparison itself is skipped (SPYP_LOAD_NOCRC) for the same reason.
** Whatever loads must also survive the JSON export and leaves, the text
** report, the folded and speedscope exports and a diff with itself (the
** tools read any profile that loads without checking further), and must
** save and load again to the same bytes (the writer and the reader agree).
*/
#include "config.h"

#include "profile/file.h"

#include <spyon.h>
#include <spyon/report.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static FILE *devnull;

/* Exercise a loaded profile the way tools would. */
static void use(const spy_profile *p) {
  if (!devnull) devnull = fopen("/dev/null", "w");
  if (devnull && spy_profile_write_json(p, devnull) != 0) __builtin_trap();
  if (devnull) { /* out of memory is an answer; a crash is not */
    spy_report_options ro;
    spy_report_options_init(&ro);
    ro.threshold_pct = 0;
    spy_report_text(p, devnull, &ro);
    spy_report_folded(p, devnull, 0);
    spy_report_speedscope(p, devnull, NULL);
    spy_report_diff(p, p, devnull, &ro);
  }
  spy_leaf lv[8];
  if (spy_profile_leaves(p, lv, 8) < 0) __builtin_trap();
  unsigned char *a, *b;
  size_t alen, blen;
  if (spyP_encode(p, &a, &alen, NULL, 0) != 0) return; /* out of memory */
  spy_profile *q;
  char err[256];
  if (spyP_load_mem(a, alen, "re-encoded", 0, &q, err, sizeof err) != 0) {
    fprintf(stderr, "re-encoded profile does not load: %s\n", err);
    __builtin_trap();
  }
  if (spyP_encode(q, &b, &blen, NULL, 0) == 0) {
    if (alen != blen || memcmp(a, b, alen) != 0) __builtin_trap();
    free(b);
  }
  spy_profile_free(q);
  free(a);
}

static void one(const uint8_t *data, size_t size) {
  spy_profile *p = NULL;
  char err[256];
  int rc = spyP_load_mem(data, size, "fuzz", SPYP_LOAD_NOCRC, &p, err,
                         sizeof err);
  if (rc == 0) {
    use(p);
    spy_profile_free(p);
  } else if (p != NULL || err[0] == '\0') {
    __builtin_trap(); /* a failure must leave no profile and a message */
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  one(data, size);
  if (size >= SPYP_PRE_SIZE) {
    unsigned char *copy = malloc(size);
    if (!copy) return 0;
    memcpy(copy, data, size);
    spyP_fix_preamble(copy, size);
    one(copy, size);
    free(copy);
  }
  return 0;
}
