/*
** spyon/cost.h: per-primitive cost regression, the reference manual.
**
** For each primitive, fit a model of its duration against its operand sizes
** (octez-snoop style: linear in unknown coefficients, possibly non-linear in
** the sizes), choose among built-in model families by k-fold
** cross-validation, give every coefficient a pairs-bootstrap interval
** (core_bench style), fit an upper bound that D % of calls stay under (the
** "D-confidence" fits) and check its coverage on held-out calls, and emit
** the result as a table, CSV, JSON or a C header of integer cost functions.
**
** The input is a spy_cost_data: observations grouped by primitive, each
** with its operand sizes, optional extra predictors (such as the number of
** garbage collections inside the call) and a duration in nanoseconds. It is
** read from a CSV file (docs/costs.md), made from a profile's reservoir of
** cost observations, or filled by hand.
**
** Threads: functions are reentrant; distinct objects may be used from
** distinct threads. A spy_cost_data may be read (fitted) by several threads
** at once once nobody adds to it. Fitting switches GSL's global error
** handler off (GSL would otherwise abort the process) and restores it when
** the last concurrent fit ends.
**
** Errors: functions return 0 (or an index >= 0) on success and a negative
** SPY_E* code on failure, with a one-line message in the caller's err
** buffer where there is one. Nothing here prints (except to the FILE the
** caller passes), exits or aborts.
*/
#ifndef SPYON_COST_H
#define SPYON_COST_H

#include <spyon.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------
** Observations
** --------------------------------------------------------------------- */

typedef struct spy_cost_data spy_cost_data;

/* Most operand sizes plus extra predictors a primitive may have. */
#define SPY_COST_MAXVARS 8

/* An empty data set, or NULL when out of memory. */
SPY_API spy_cost_data *spy_cost_data_new(void);

/* Free a data set. NULL is a no-op. */
SPY_API void spy_cost_data_free(spy_cost_data *d);

/* Declare a primitive: its name (copied), the names of its NSIZES operand
** sizes and of its NEXTRA extra predictors (copied; identifiers, as they
** are used in model expressions; nsizes + nextra <= SPY_COST_MAXVARS).
** Returns the primitive's index (>= 0), or SPY_EINVAL (bad name, too many
** variables), SPY_EEXIST (name already declared), SPY_ENOMEM. */
SPY_API int spy_cost_data_add_prim(spy_cost_data *d, const char *name,
                                   unsigned nsizes,
                                   const char *const *size_names,
                                   unsigned nextra,
                                   const char *const *extra_names);

/* Add one observation to primitive PRIM: VARS holds its nsizes sizes then
** its nextra extra predictors (may be NULL when there are none), NS the
** duration in nanoseconds. Returns 0, SPY_EINVAL (bad index, a value that
** is not finite, negative duration) or SPY_ENOMEM. */
SPY_API int spy_cost_data_add_obs(spy_cost_data *d, int prim,
                                  const double *vars, double ns);

/* Read a CSV file (docs/costs.md): a header row naming the columns
** `primitive`, the size columns, `time_ns` and then any extra predictor
** columns. PATH "-" reads standard input. On success returns 0 and sets
** *out (free with spy_cost_data_free). Malformed input gives SPY_EFORMAT
** and the message "PATH:LINE: what" or "PATH:LINE:COL: what" in err (which
** may be NULL); an unreadable file gives SPY_EIO. */
SPY_API int spy_cost_data_load_csv(const char *path, spy_cost_data **out,
                                   char *err, size_t errlen);

/* The same from a buffer of LEN bytes (need not be NUL-terminated); NAME
** is used as the file name in messages. */
SPY_API int spy_cost_data_parse_csv(const char *buf, size_t len,
                                    const char *name, spy_cost_data **out,
                                    char *err, size_t errlen);

/* Write every observation of D as CSV in the format the loader reads
** (a size or predictor column a primitive does not have is left empty), so
** that a profile's observations can be inspected or fitted elsewhere.
** Returns 0, SPY_EINVAL or SPY_EIO. */
SPY_API int spy_cost_data_write_csv(const spy_cost_data *d, FILE *f);

/* The cost observations of a profile: one primitive per profile primitive
** that has observations, with its size names, and an extra predictor `gc`
** when any observation saw a garbage collection. Returns 0 and sets *out,
** or SPY_EINVAL, SPY_ENOMEM. */
SPY_API int spy_cost_data_from_profile(const spy_profile *p,
                                       spy_cost_data **out, char *err,
                                       size_t errlen);

/* How many primitives, and the name / observation count of the I-th. */
SPY_API size_t spy_cost_data_nprims(const spy_cost_data *d);
SPY_API const char *spy_cost_data_prim_name(const spy_cost_data *d,
                                            size_t i);
SPY_API size_t spy_cost_data_prim_nobs(const spy_cost_data *d, size_t i);

/* ------------------------------------------------------------------------
** Options
** --------------------------------------------------------------------- */

typedef enum spy_cost_solver {
  SPY_COST_MEDIAN = 0,   /* quantile regression at 0.5: the typical call,
                            immune to the slow tail (default) */
  SPY_COST_OLS = 1,      /* ordinary least squares: the mean call */
  SPY_COST_WLS = 2,      /* weighted least squares with weights 1/fit^2
                            (relative error), iterated */
  SPY_COST_RIDGE = 3,    /* least squares with an L2 penalty (ridge) */
  SPY_COST_HUBER = 4,    /* robust M-estimate by iterated reweighting with
                            GSL's Huber weight function and tuning */
  SPY_COST_BISQUARE = 5, /* the same with GSL's bisquare weights */
  SPY_COST_NNLS = 6,     /* least squares, all coefficients >= 0
                            (Lawson-Hanson), whatever `nonneg` says */
  SPY_COST_QUANTILE = 7  /* quantile regression at level `tau` */
} spy_cost_solver;

/* A model for one primitive (or for all when prim is NULL). */
typedef struct spy_cost_model_spec {
  const char *prim; /* primitive name, or NULL for every primitive */
  const char *expr; /* model expression, or a family name prefixed with
                       "family:" (e.g. "family:nlogn") */
} spy_cost_model_spec;

typedef struct spy_cost_options {
  spy_cost_solver solver; /* default SPY_COST_MEDIAN */
  double tau;             /* level for SPY_COST_QUANTILE; default 0.5 */
  double ridge;           /* ridge penalty on standardised columns, as a
                             fraction of the data weight; default 1e-3 */
  int nonneg;             /* 1: constrain every coefficient >= 0 (costs are
                             not negative); the ones that wanted to go
                             negative are flagged. Default 1. */
  const spy_cost_model_spec *models; /* user models; default none */
  size_t nmodels;
  const char *families;   /* comma-separated family names to choose from
                             (spy_cost_families()); NULL: all that fit */
  const double *breaks;   /* breakpoints of the piecewise-linear family on
                             the first size; NULL: no such family */
  size_t nbreaks;
  int extras;             /* 1: add c_NAME*NAME to every model for each
                             extra predictor (e.g. gc); default 1 */
  unsigned folds;         /* k of the k-fold cross-validation; default 5 */
  size_t select_rows;     /* rows used for cross-validation (a random
                             subsample above this); default 2048 */
  unsigned bootstrap;     /* bootstrap replicates; 0: no intervals;
                             default 200 */
  size_t boot_rows;       /* above this many rows, the bootstrap resamples
                             a random boot_rows of them and rescales
                             (m-out-of-n bootstrap); default 2000 */
  double level;           /* interval level; default 0.95 */
  double confidence;      /* D of the upper bound, in (0, 1); default 0.95 */
  int compare;            /* 1: also fit seed 002's algorithms 1 (shift)
                             and 2 (asymmetric weight) and report their
                             held-out coverage; default 1 */
  double holdout;         /* fraction of calls held out to check bounds;
                             default 0.2 */
  size_t bound_rows;      /* most training rows for bound fits; default
                             20000 */
  double cull;            /* cull calls whose residual is beyond this many
                             robust sigmas from the typical fit (0: keep
                             all; the bound always sees every call);
                             default 0 */
  size_t min_obs;         /* fewer observations: listed, not fitted;
                             default 8 */
  uint64_t seed;          /* random seed (selection folds, bootstrap,
                             hold-out); default 1 */
  unsigned threads;       /* primitives fitted in parallel; 0: one per
                             online CPU. Results do not depend on it: every
                             primitive has its own random stream. Default 0 */
} spy_cost_options;

/* Fill *o with the defaults above. */
SPY_API void spy_cost_options_init(spy_cost_options *o);

/* The built-in family names, comma-separated: "const,linear,log,...". */
SPY_API const char *spy_cost_families(void);

/* Check a model expression against variable names. Returns 0, or
** SPY_EINVAL with "COL: message" in err and the 1-based column in *col. */
SPY_API int spy_cost_check_model(const char *expr,
                                 const char *const *vars, unsigned nvars,
                                 int *col, char *err, size_t errlen);

/* ------------------------------------------------------------------------
** Results
** --------------------------------------------------------------------- */

/* Flags of a fit (spy_cost_fit.flags). */
#define SPY_COST_F_NEGATIVE 0x01u /* a coefficient wanted to go negative */
#define SPY_COST_F_ILLCOND 0x02u  /* design (nearly) singular: terms that
                                     the data cannot tell apart */
#define SPY_COST_F_FEW 0x04u      /* under 30 calls: intervals are rough */
#define SPY_COST_F_NOCONV 0x08u   /* an iterative solver did not converge */
#define SPY_COST_F_COVERAGE 0x10u /* held-out coverage of the bound is off
                                     D by more than 3 standard errors */
#define SPY_COST_F_CULLED 0x20u   /* calls were culled (--cull) */
#define SPY_COST_F_UNDEF 0x40u    /* some families are undefined on this
                                     data (e.g. log2 of a negative size) */

typedef struct spy_cost_coef {
  const char *name;   /* "c0", "c1", "c_gc", ... */
  double value;
  double lo, hi;      /* bootstrap percentile interval; NaN when none */
  int clamped;        /* 1: the unconstrained fit wanted it negative */
} spy_cost_coef;

typedef struct spy_cost_candidate {
  const char *family; /* family name, or "user" */
  const char *expr;   /* with coefficient names */
  unsigned ncoef;
  double cv_loss;     /* mean held-out loss per call (see loss_name) */
  double cv_se;       /* its standard error across folds */
  int ok;             /* 0: undefined on the data or singular (skipped) */
} spy_cost_candidate;

typedef struct spy_cost_bound {
  const char *method;   /* "quantile", "shift" (alg. 1), "asymmetric"
                           (alg. 2) */
  int ok;
  double coverage;      /* fraction of held-out calls at or under it */
  double train_coverage;
  size_t ntrain, ntest;
  double param;         /* shift: the shift (ns); asymmetric: alpha */
  size_t ncoef;
  spy_cost_coef *coef;  /* fitted on the training part (lo/hi NaN) */
  const char *fitted;   /* the bound with values substituted */
} spy_cost_bound;

typedef struct spy_cost_fit {
  const char *name;      /* the primitive */
  size_t prim;           /* its index in the data set */
  unsigned nsizes, nvars;
  const char *const *vars; /* the sizes, then the extra predictors */
  size_t nobs;           /* observations given */
  size_t used;           /* observations the typical fit used */
  size_t culled;
  int status;            /* 0: fitted; else SPY_E* and `message` says why */
  const char *message;   /* NULL when there is nothing to say */
  unsigned flags;        /* SPY_COST_F_* */
  double mean_ns, median_ns, max_ns;

  /* The typical-cost model (the solver's fit). */
  const char *family;    /* family name or "user" */
  const char *model;     /* with coefficient names */
  const char *fitted;    /* with values, e.g. "12.3 + 0.81*a*b" */
  size_t ncoef;
  spy_cost_coef *coef;
  double r2, adj_r2, rmse; /* R^2 and RMSE weigh the slow tail heavily */
  double mre;            /* median |time/fit - 1| over the calls used */
  const char *loss_name; /* loss used by cross-validation */

  size_t ncand;          /* candidates, best cross-validated loss first */
  spy_cost_candidate *cand;

  struct {               /* Tukey fences on relative residuals y/fit - 1 */
    size_t low_mild, low_severe, high_mild, high_severe;
  } outliers;

  /* The D bound: bound[0] is the quantile-regression bound used by codegen
  ** and plots; bound[1] and bound[2] are seed 002's algorithms 1 and 2,
  ** present when options.compare is set. Bounds are fitted on sizes only
  ** (no extra predictors): they bound the whole call, GC included. */
  double confidence;
  unsigned nbounds;
  spy_cost_bound bound[3];

  /* Decomposition by the extra predictor `gc` (core_bench), when present:
  ** time = nominal + ns_per_gc * gc. */
  int has_gc;
  double ns_per_gc, gc_per_call, nominal_ns, gc_share;

  void *priv_;           /* private */
} spy_cost_fit;

typedef struct spy_cost_result {
  size_t nfits;
  spy_cost_fit *fits;    /* one per primitive, in data-set order */
  spy_cost_options opts; /* a copy (user strings are not copied: the
                            pointers in models/families/breaks are cleared) */
  const char *source;    /* the data set's file name, or "" */
} spy_cost_result;

/* Fit every primitive of D (or only those named in ONLY[0..NONLY) when
** NONLY > 0). On success returns 0 and sets *out (free with
** spy_cost_result_free); primitives that could not be fitted have a
** nonzero status and a message. Fails as a whole only for bad options or a
** user model that does not parse (SPY_EINVAL, message "model:1:COL: what"
** or "PRIM: model:1:COL: what"), an unknown primitive in ONLY (SPY_ENOENT),
** or SPY_ENOMEM. The result does not refer to D. */
SPY_API int spy_cost_fit_data(const spy_cost_data *d,
                              const spy_cost_options *o,
                              const char *const *only, size_t nonly,
                              spy_cost_result **out, char *err,
                              size_t errlen);

SPY_API void spy_cost_result_free(spy_cost_result *r);

/* Evaluate a fitted model at VARS (fit->nvars values: sizes, then extra
** predictors). WHICH: 0 the typical model, 1 the D bound (bound[0]; extra
** predictors ignored). Returns ns, or NaN if there is no such fit or the
** model is undefined there. */
SPY_API double spy_cost_eval(const spy_cost_fit *fit, int which,
                             const double *vars);

/* ------------------------------------------------------------------------
** Output
** --------------------------------------------------------------------- */

/* A human-readable table per primitive: calls, model, coefficients with
** intervals, R^2, RMSE, held-out coverage, flags, runners-up. */
SPY_API int spy_cost_write_table(const spy_cost_result *r, FILE *f);

/* One CSV row per coefficient (primitive, model, coefficient, value,
** interval, R^2, RMSE, coverage, flags). */
SPY_API int spy_cost_write_csv(const spy_cost_result *r, FILE *f);

/* One JSON document (docs/costs.md has the schema). */
SPY_API int spy_cost_write_json(const spy_cost_result *r, FILE *f);

typedef struct spy_cost_codegen {
  const char *unit;      /* name of the unit, e.g. "ns", "gas"; default
                            "ns" */
  double ns_per_unit;    /* default 1 */
  int typical;           /* 1: the typical model; 0: the D bound
                            (default) */
  const char *prefix;    /* function name prefix; default "spy_cost_" */
  const char *guard;     /* include guard; default "SPY_COSTS_H" */
} spy_cost_codegen;

SPY_API void spy_cost_codegen_init(spy_cost_codegen *cg);

/* A C header with one function per fitted primitive,
**   static inline uint64_t PREFIX<name>(uint64_t size...)
** returning the cost in the chosen unit, rounded up, computed in integer
** fixed-point arithmetic (deterministic across machines) that saturates
** at UINT64_MAX instead of wrapping and never goes below 0. Names are the
** primitive's name with every non-alphanumeric run turned into '_'.
** Returns 0, SPY_EINVAL, SPY_EIO. */
SPY_API int spy_cost_write_c(const spy_cost_result *r, FILE *f,
                             const spy_cost_codegen *cg);

/* The C identifier codegen uses for a primitive name (malloc'd). */
SPY_API char *spy_cost_c_name(const char *prefix, const char *name);

/* ------------------------------------------------------------------------
** Profiles
** --------------------------------------------------------------------- */

/* Fit every primitive of P that has cost observations and set
** prims[i].model to a short text such as "12.3 + 0.81*a*b ns" (replacing
** any previous text). O NULL means the defaults with the bootstrap and the
** bound comparisons off, since a report shows only the model. Returns the
** number of primitives annotated (>= 0) or a negative error. */
SPY_API int spy_cost_annotate_profile(spy_profile *p,
                                      const spy_cost_options *o);

#ifdef __cplusplus
}
#endif

#endif
