/*
** hosts/st/lint.h: large integers as GMP sees them (primlint.c).
**
** A LargePositiveInteger or LargeNegativeInteger holds its magnitude as
** little-endian bytes (Squeak's digits), normalized (no leading zero byte)
** and zero-padded to whole 64-bit limbs, so the mpn_* functions can read
** and write the bytes in place. SmallIntegers take part in every digit
** primitive as one-limb magnitudes.
*/
#ifndef ST_LINT_H
#define ST_LINT_H

#include <gmp.h>

#include "hosts/st/st.h"

/* Build a normalized Integer (SmallInteger when it fits) from z. */
Value st_int_from_mpz(VM *vm, const mpz_t z);
/* Read any Integer into z (initialized by the caller). */
void st_int_to_mpz(Value v, mpz_t z);

#endif
