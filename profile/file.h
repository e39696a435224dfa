/*
** profile/file.h: the binary profile file, internals (spyP_).
**
** The writer (profile/save.c, runtime library: spy_profile_save, declared
** in <spyon.h>) and the reader (profile/load.c, tools library:
** spy_profile_load, spy_profile_load_mem in <spyon/profile.h>) share these
** definitions; the layout is
** specified in docs/format.md. These internals let the tests and the fuzz
** target reach the encoder and the loader without going through a file.
*/
#ifndef SPY_PROFILE_FILE_H
#define SPY_PROFILE_FILE_H

#include <spyon/profile.h>

/* "SPYON\r\n\x1a": as in PNG, the CR LF and ^Z make a file damaged by a
** text-mode transfer fail at the magic rather than somewhere later. */
static const unsigned char spyP_magic[8] = {'S', 'P', 'Y', 'O',
                                            'N', '\r', '\n', 0x1a};

/* The fixed preamble: magic (8 bytes), version (u32), CRC-32 (u32), body
** length (u64), then the body. The CRC covers everything from SPYP_PRE_LEN
** to the end of the file. */
enum {
  SPYP_PRE_VERSION = 8,
  SPYP_PRE_CRC = 12,
  SPYP_PRE_LEN = 16,
  SPYP_PRE_SIZE = 24
};

/* Section tags of format version 1, in the order they must appear. Each
** section refers only to sections before it, so the loader checks every
** index as soon as it reads it. */
enum {
  SPYP_SEC_HEADER = 1,
  SPYP_SEC_STRINGS,
  SPYP_SEC_PRIMS,
  SPYP_SEC_FRAMES,
  SPYP_SEC_NODES,
  SPYP_SEC_PROCESSES,
  SPYP_SEC_STEPS,
  SPYP_SEC_REGIONS,
  SPYP_SEC_GC,
  SPYP_SEC_LAST = SPYP_SEC_GC,
  /* Optional sections, after the required ones (older readers skip them). */
  SPYP_SEC_NATIVES = 10, /* native stacks inside primitives */
  SPYP_SEC_MODULES = 11, /* native frames' modules and addresses */
  SPYP_SEC_STEP_CPU = 12, /* long steps' time off the CPU */
  SPYP_SEC_OPT_LAST = SPYP_SEC_STEP_CPU
};

/* Loader flags. SPYP_LOAD_NOCRC skips the checksum comparison so that a
** fuzzer's mutations reach the structural checks behind it; everything else
** is still validated. */
#define SPYP_LOAD_NOCRC 1u

/* spy_profile_load_mem with flags. */
SPY_INTERNAL int spyP_load_mem(const void *buf, size_t len, const char *name,
                               unsigned flags, spy_profile **out, char *err,
                               size_t errlen);

/* Encode p in the file format into a new malloc'd buffer (*out, *len).
** Returns 0, SPY_EINVAL (NULL argument, or a prim or step with nsizes > 4,
** message in err) or SPY_ENOMEM. The encoding is deterministic: equal
** profiles give identical bytes. */
SPY_INTERNAL int spyP_encode(const spy_profile *p, unsigned char **out,
                             size_t *len, char *err, size_t errlen);

/* Rewrite the body length and CRC fields of a buffer that starts with a
** preamble (len >= SPYP_PRE_SIZE), so that edited bytes load again; for
** tests and the fuzz target. */
SPY_INTERNAL void spyP_fix_preamble(unsigned char *buf, size_t len);

#endif
