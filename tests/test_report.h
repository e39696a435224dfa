/*
** tests/test_report.h: what the report suite shares with the export suite.
*/
#ifndef SPY_TEST_REPORT_H
#define SPY_TEST_REPORT_H

#include <spyon/profile.h>

/* The hand-built profile of tests/data/report/synthetic.txt, every number
** known (see tests/test_report.c). Free with spy_profile_free. */
spy_profile *t_report_synthetic(void);

#endif
