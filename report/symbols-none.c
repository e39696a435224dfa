/*
** report/symbols-none.c: native frame names left out (configured without
** libdw). Native frames keep the "0x..." names the runtime gives them.
*/
#include "config.h"

#include "report/symbols.h"

int spy_profile_symbolize(spy_profile *p) {
  return p ? SPY_ENOTSUP : SPY_EINVAL;
}
