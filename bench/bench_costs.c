/*
** bench/bench_costs.c: how long `spyon costs` takes to fit a million
** observations.
**
**   bench/bench_costs [RUNS] [OBS_PER_PRIMITIVE]
**
** Builds 10 primitives of 100000 observations each (defaults) from ten
** different cost families with heavy-tailed positive noise, spikes and,
** for two of them, GC events; then fits them RUNS times (default 5) per
** configuration with model selection (5-fold cross-validation over every
** applicable family), bootstrap intervals (200 replicates), the D = 95 %
** bound and its comparison algorithms, and prints the median, minimum and
** maximum wall time and the median CPU time per configuration. The target
** (docs/costs.md): the default configuration under one second.
*/
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>

#include <spyon.h>
#include <spyon/cost.h>

static double wall_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

static double cpu_ms(void) {
  struct rusage u;
  getrusage(RUSAGE_SELF, &u);
  return (double)(u.ru_utime.tv_sec + u.ru_stime.tv_sec) * 1e3 +
         (double)(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e3;
}

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* Ten primitives: name, sizes, the planted cost (ns) of one call. */
typedef struct prim {
  const char *name;
  int nsizes, gc;
  double (*cost)(const double *v);
} prim;

static double c_mul(const double *v) { return 40 + 0.5 * v[0] * v[1]; }
static double c_sort(const double *v) {
  return 30 + 2 * v[0] * log2(v[0] + 1);
}
static double c_copy(const double *v) { return 20 + 0.25 * v[0]; }
static double c_quad(const double *v) { return 100 + 0.02 * v[0] * v[0]; }
static double c_kara(const double *v) { return 60 + 0.1 * pow(v[0], 1.585); }
static double c_cat(const double *v) { return 25 + 0.3 * (v[0] + v[1]); }
static double c_cmp(const double *v) {
  return 15 + 0.2 * (v[0] > v[1] ? v[0] : v[1]);
}
static double c_gcd(const double *v) {
  return 50 + 3 * (v[0] < v[1] ? v[0] : v[1]);
}
static double c_log(const double *v) { return 80 + 20 * log2(v[0] + 1); }
static double c_alloc(const double *v) { return 200 + 1.5 * v[0]; }

static const prim prims[] = {
  {"LargeInt>>*", 2, 0, c_mul},       {"Array>>sort", 1, 1, c_sort},
  {"String>>copy", 1, 0, c_copy},     {"Matrix>>square", 1, 0, c_quad},
  {"LargeInt>>karatsuba", 1, 0, c_kara}, {"String>>,", 2, 0, c_cat},
  {"Array>>=", 2, 0, c_cmp},          {"Integer>>gcd:", 2, 0, c_gcd},
  {"Dictionary>>at:", 1, 0, c_log},   {"Array>>new:", 1, 1, c_alloc},
};

int main(int argc, char **argv) {
  int runs = argc > 1 ? atoi(argv[1]) : 5;
  size_t per = argc > 2 ? (size_t)atol(argv[2]) : 100000;
  if (runs < 1 || per < 100) {
    fprintf(stderr, "usage: bench_costs [RUNS] [OBS_PER_PRIMITIVE]\n");
    return 2;
  }
  size_t np = sizeof prims / sizeof prims[0];
  double t0 = wall_ms();
  gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
  gsl_rng_set(r, 1);
  spy_cost_data *d = spy_cost_data_new();
  const char *ab[] = {"a", "b"}, *nn[] = {"n"}, *gc[] = {"gc"};
  for (size_t k = 0; k < np; k++) {
    const prim *p = &prims[k];
    int id = spy_cost_data_add_prim(d, p->name, (unsigned)p->nsizes,
                                    p->nsizes == 2 ? ab : nn,
                                    p->gc ? 1u : 0u, gc);
    double hi = p->nsizes == 2 ? 3000 : 100000;
    if (p->cost == c_quad) hi = 5000;
    for (size_t i = 0; i < per; i++) {
      double v[3] = {0, 0, 0};
      v[0] = floor(exp(gsl_rng_uniform(r) * log(hi)));
      if (p->nsizes == 2) v[1] = floor(exp(gsl_rng_uniform(r) * log(hi)));
      double f = p->cost(v);
      double y = f * (1 + 0.2 * (gsl_ran_pareto(r, 2.5, 1) - 1.35));
      if (gsl_rng_uniform(r) < 0.01) y += 20 * f;
      if (p->gc) {
        double g = gsl_rng_uniform(r) < 0.03 ? 1 : 0;
        y += g * 50000;
        v[p->nsizes] = g;
      }
      if (y < 0) y = 0;
      spy_cost_data_add_obs(d, id, v, y);
    }
  }
  gsl_rng_free(r);
  double built = wall_ms() - t0;
  long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
  double load[3] = {0, 0, 0};
  FILE *la = fopen("/proc/loadavg", "r");
  if (la) {
    if (fscanf(la, "%lf %lf %lf", &load[0], &load[1], &load[2]) != 3)
      load[0] = load[1] = load[2] = 0;
    fclose(la);
  }
  printf("bench_costs: %zu primitives x %zu observations = %zu "
         "(built in %.0f ms); %ld CPUs, load %.2f %.2f %.2f\n",
         np, per, np * per, built, ncpu, load[0], load[1], load[2]);
  printf("each run: 5-fold CV over every applicable family, 200 bootstrap "
         "replicates, D=95%% bound + seed-002 comparisons\n\n");
  printf("%-34s %5s %10s %8s %8s %12s\n", "configuration", "runs",
         "median ms", "min ms", "max ms", "cpu ms (med)");

  static const struct {
    const char *name;
    unsigned threads, bootstrap;
    int compare;
  } configs[] = {
    {"default (threads = CPUs)", 0, 200, 1},
    {"default, 1 thread", 1, 200, 1},
    {"no bootstrap, no comparison", 0, 0, 0},
  };
  double target = NAN;
  for (size_t c = 0; c < sizeof configs / sizeof configs[0]; c++) {
    double *w = malloc((size_t)runs * sizeof *w);
    double *u = malloc((size_t)runs * sizeof *u);
    for (int k = 0; k < runs; k++) {
      spy_cost_options o;
      spy_cost_options_init(&o);
      o.threads = configs[c].threads;
      o.bootstrap = configs[c].bootstrap;
      o.compare = configs[c].compare;
      spy_cost_result *res;
      char err[256];
      double a = wall_ms(), b = cpu_ms();
      int rc = spy_cost_fit_data(d, &o, NULL, 0, &res, err, sizeof err);
      w[k] = wall_ms() - a;
      u[k] = cpu_ms() - b;
      if (rc) {
        fprintf(stderr, "bench_costs: %s\n", err);
        return 1;
      }
      if (c == 0 && k == 0) {
        /* Sanity: the families planted are the ones found. */
        for (size_t i = 0; i < res->nfits; i++)
          if (res->fits[i].status)
            fprintf(stderr, "bench_costs: %s not fitted: %s\n",
                    res->fits[i].name, res->fits[i].message);
      }
      spy_cost_result_free(res);
    }
    qsort(w, (size_t)runs, sizeof *w, cmp);
    qsort(u, (size_t)runs, sizeof *u, cmp);
    printf("%-34s %5d %10.0f %8.0f %8.0f %12.0f\n", configs[c].name, runs,
           w[runs / 2], w[0], w[runs - 1], u[runs / 2]);
    if (c == 0) target = w[runs / 2];
    free(w);
    free(u);
  }
  printf("\ntarget: 1M observations / 10 primitives with selection and "
         "bootstrap under 1000 ms: median %.0f ms -> %s\n",
         target, target < 1000 ? "met" : "NOT met");
  spy_cost_data_free(d);
  return 0;
}
