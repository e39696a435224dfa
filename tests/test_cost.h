/*
** tests/test_cost.h: what the two files of the "cost" suite share: the
** planted-truth data (defined in tests/test_cost.c, see its comment) and
** the pipeline tests of tests/test_cost_fit.c. Those are weak so that the
** suite still links, and says what is missing, if test_cost_fit.c is not
** in tests_runner_SOURCES.
*/
#ifndef SPY_TEST_COST_H
#define SPY_TEST_COST_H

#include <math.h>

#include <gsl/gsl_rng.h>

#include <spyon.h>
#include <spyon/cost.h>

#include "tests/test.h"

enum { F_PRODUCT, F_NLOGN, F_LINEAR, F_QUADRATIC, F_SUM, F_MAX, F_NEGICPT };

typedef struct plant {
  int family;
  double c0, c1;   /* truth */
  double s;        /* noise scale */
  double q, K;     /* spike probability and size (times f) */
  double gc_rate, gc_ns; /* GC events per call and their cost, 0: none */
} plant;

extern const double PARETO_A;
extern const plant PRODUCT, NLOGN;

/* The noise centre c that gives e median 0. */
double centre(double q);
/* The planted cost of sizes V. */
double truth(const plant *pl, const double *v);
/* Whether the family has two sizes. */
int twosizes(int family);
/* A size log-uniform in [1, hi]. */
double size(gsl_rng *r, double hi);
/* One call: sizes (and gc) into V, its time into *Y. */
void draw(const plant *pl, gsl_rng *r, double *v, double *y);
/* N planted calls of one primitive. */
spy_cost_data *planted(const plant *pl, const char *name, size_t n,
                       unsigned long seed);
/* Fit, failing the test on error. */
spy_cost_result *fit(const spy_cost_data *d, const spy_cost_options *o);
/* A coefficient by name, failing the test when absent. */
const spy_cost_coef *coef(const spy_cost_fit *f, const char *name);

/* |got - want| <= rel * |want| */
#define T_REL(got, want, rel) T_NEAR(got, want, (rel) * fabs((double)(want)))

#define SPY_COST_FIT_TESTS(X)                                           \
  X(planted_product) X(planted_nlogn) X(planted_families)               \
  X(dconf_coverage) X(nonneg) X(bootstrap_coverage) X(gc_decomposition) \
  X(outliers_cull) X(user_models) X(threads_deterministic) X(outputs)   \
  X(codegen)

#define SPY_COST_DECL(name) void t_cost_##name(void) __attribute__((weak));
SPY_COST_FIT_TESTS(SPY_COST_DECL)
#undef SPY_COST_DECL

#endif
