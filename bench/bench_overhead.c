/*
** bench/bench_overhead.c: what the hooks cost a real dispatch loop.
**
** The overhead VM (bench/ovm.h) runs fib(32) (call-heavy: a poll at every
** activation) and a 4M-iteration loop (a poll at every backward jump, two
** bracketed primitives every 1024 iterations), in these configurations:
**   compiled out   -DSPY_DISABLE (the baseline)
**   stopped        hooks compiled in, attached, profiler stopped
**   1/10/100 kHz   profiler running in poll mode at that rate
**   10 kHz timer   profiler running in timer mode
**   due-flag       no hooks, a relaxed atomic load + branch per poll point
**                  (what spy_poll does), to separate its cost from the
**                  library's
**   countdown      no hooks, load + store + branch per poll point (the
**                  other design DESIGN.md names)
**   rdtsc/poll     no hooks, rdtsc read at every poll point
**   clock/poll     no hooks, clock_gettime read at every poll point
** Rounds run every configuration once, in a rotating order so none always
** runs first. For each run the interpreter thread's CPU time is measured
** (CLOCK_THREAD_CPUTIME_ID: preemption by other jobs on the shared machine
** does not count) as well as wall time, and the CPU time of the process's
** other threads (the sampler). The table gives medians over the rounds,
** and the overheads are medians of the per-round ratios to the baseline
** of the same round (ratios within one round are what is robust). Two
** binaries differ by code layout as well as by the hooks, so "cpu +%"
** of the compiled-in rows mixes the two; "vs stop" compares the running
** rows with the stopped one, the same code, and is the cost of sampling.
**
**   bench/bench_overhead [-r ROUNDS] [-f FIB_N] [-l LOOP_N]
*/
#include "config.h"

#include "bench/bench.h"
#include "bench/ovm.h"

#include <spyon/hooks.h>
#include <spyon/profile.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum cfg {
  C_OFF,
  C_STOPPED,
  C_1K,
  C_10K,
  C_100K,
  C_TIMER,
  C_FLAG,
  C_CD,
  C_TSC,
  C_CLK,
  C_N
};

static const char *const cfg_name[C_N] = {
  "compiled out (-DSPY_DISABLE)", "compiled in, stopped",
  "running, poll 1 kHz",          "running, poll 10 kHz",
  "running, poll 100 kHz",        "running, timer 10 kHz",
  "sim: due-flag per poll",       "sim: countdown per poll",
  "sim: rdtsc every poll",        "sim: clock_gettime every poll",
};

static const char *const cfg_target[C_N] = {
  "", "<= 0.5 %", "", "<= 2 %", "<= 10 %", "", "", "", "", "",
};

typedef struct result {
  double t, cpu, other; /* wall, this thread's CPU, other threads' CPU */
  uint64_t tallies, dropped, hook_ns, polls;
} result;

static ovm vm;
static int fib_n = 32;
static long loop_n = 4000000;
static int64_t expect_fib, expect_loop;

/* Run both programs with variant run; fill the times of r. */
static void run_programs(int64_t (*run)(ovm *, int, int64_t), result *r) {
  double p0 = bench_clock_s(CLOCK_PROCESS_CPUTIME_ID);
  double c0 = bench_clock_s(CLOCK_THREAD_CPUTIME_ID);
  double t0 = bench_clock_s(CLOCK_MONOTONIC);
  int64_t a = run(&vm, vm.fib, fib_n);
  int64_t b = run(&vm, vm.loop, loop_n);
  r->t = bench_clock_s(CLOCK_MONOTONIC) - t0;
  r->cpu = bench_clock_s(CLOCK_THREAD_CPUTIME_ID) - c0;
  r->other = bench_clock_s(CLOCK_PROCESS_CPUTIME_ID) - p0 - r->cpu;
  if (a != expect_fib || b != expect_loop) {
    fprintf(stderr, "bench_overhead: wrong result (%lld, %lld)\n",
            (long long)a, (long long)b);
    exit(1);
  }
}

/* One configuration: set up outside the timed part, run, tear down. */
static result run_cfg(int c) {
  result r;
  memset(&r, 0, sizeof r);
  if (c == C_OFF) {
    run_programs(ovm_run_off, &r);
    return r;
  }
  if (c == C_FLAG || c == C_CD) {
    atomic_store(&vm.sim_flag, 0);
    atomic_store(&vm.sim_cd, 1000);
    run_programs(c == C_FLAG ? ovm_run_flag : ovm_run_cd, &r);
    return r;
  }
  if (c == C_CLK || c == C_TSC) {
    vm.polls = vm.due = 0;
    vm.deadline = 0;
    vm.period = c == C_CLK ? 100000 : 300000; /* ~10 kHz at ~3 GHz */
    run_programs(c == C_CLK ? ovm_run_clk : ovm_run_tsc, &r);
    r.polls = vm.polls;
    return r;
  }
  spy_options o;
  spy_options_init(&o);
  o.interval_ns = c == C_1K ? 1000000 : c == C_100K ? 10000 : 100000;
  o.mode = c == C_TIMER ? SPY_MODE_TIMER : SPY_MODE_POLL;
  spy_profiler *p;
  int rc = spy_profiler_new(&p, &o);
  if (rc == 0) rc = ovm_register(&vm, p) < 0 ? -1 : 0;
  spy_host h = {&vm, ovm_walk, ovm_name, NULL};
  if (rc == 0) rc = spy_attach(p, &h, &vm.spy);
  if (rc == 0) spy_process_switch(vm.spy, 1);
  if (rc == 0 && c != C_STOPPED) rc = spy_start(p);
  if (rc != 0) {
    fprintf(stderr, "bench_overhead: setup: %s\n", spy_strerror(rc));
    exit(1);
  }
  run_programs(ovm_run_on, &r);
  if (c != C_STOPPED) {
    spy_stop(p);
    spy_profile *pr;
    if (spy_profile_take(p, &pr) == 0) {
      r.tallies = pr->tallies;
      r.dropped = pr->dropped;
      r.hook_ns = pr->hook_ns;
      spy_profile_free(pr);
    }
  }
  spy_detach(vm.spy);
  vm.spy = NULL;
  spy_profiler_free(p);
  return r;
}

int main(int argc, char **argv) {
  int rounds = 11;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (strcmp(argv[i], "-r") == 0) rounds = atoi(argv[i + 1]);
    else if (strcmp(argv[i], "-f") == 0) fib_n = atoi(argv[i + 1]);
    else if (strcmp(argv[i], "-l") == 0) loop_n = atol(argv[i + 1]);
  }
  if (rounds < 1 || rounds > 1000) rounds = 11;
  ovm_build(&vm);
  expect_fib = ovm_run_off(&vm, vm.fib, fib_n);
  expect_loop = ovm_run_off(&vm, vm.loop, loop_n);
  run_cfg(C_10K); /* warm up: clock calibration, page faults */

  size_t cells = (size_t)rounds * C_N;
  double *t = calloc(cells, sizeof *t), *cpu = calloc(cells, sizeof *cpu);
  double *oth = calloc(cells, sizeof *oth);
  double *rw = calloc(cells, sizeof *rw), *rc = calloc(cells, sizeof *rc);
  double *rs = calloc(cells, sizeof *rs);
  if (!t || !cpu || !oth || !rw || !rc || !rs) return 1;
  result last[C_N];
  uint64_t polls = 0;
  for (int r = 0; r < rounds; r++) {
    result res[C_N];
    for (int k = 0; k < C_N; k++) {
      int c = (k + r) % C_N;
      res[c] = run_cfg(c);
      last[c] = res[c];
      if (c == C_CLK) polls = res[c].polls;
    }
    for (int c = 0; c < C_N; c++) {
      t[c * rounds + r] = res[c].t;
      cpu[c * rounds + r] = res[c].cpu;
      oth[c * rounds + r] = res[c].other;
      rw[c * rounds + r] = res[c].t / res[C_OFF].t;
      rc[c * rounds + r] = res[c].cpu / res[C_OFF].cpu;
      rs[c * rounds + r] = res[c].cpu / res[C_STOPPED].cpu;
    }
  }
  printf("bench_overhead: fib(%d) + loop(%ld), %llu poll points per run, "
         "%d rounds (medians)\n\n",
         fib_n, loop_n, (unsigned long long)polls, rounds);
  printf("%-30s %8s %8s %8s %8s %8s %8s %8s %7s %6s  %s\n", "configuration",
         "wall ms", "wall +%", "cpu ms", "cpu +%", "vs stop", "ns/poll",
         "sampler", "tallies", "drops", "target");
  double base = bench_median(&cpu[C_OFF * rounds], rounds);
  for (int c = 0; c < C_N; c++) {
    double tm = bench_median(&t[c * rounds], rounds);
    double cm = bench_median(&cpu[c * rounds], rounds);
    double om = bench_median(&oth[c * rounds], rounds);
    double ow = (bench_median(&rw[c * rounds], rounds) - 1) * 100;
    double oc = (bench_median(&rc[c * rounds], rounds) - 1) * 100;
    char vs[32] = "-";
    if (c >= C_1K && c <= C_TIMER)
      snprintf(vs, sizeof vs, "%+.2f%%",
               (bench_median(&rs[c * rounds], rounds) - 1) * 100);
    double per = polls ? (cm - base) / (double)polls * 1e9 : 0;
    char tal[32] = "-", dr[32] = "-", sm[32] = "-";
    if (c >= C_1K && c <= C_TIMER) {
      snprintf(tal, sizeof tal, "%llu", (unsigned long long)last[c].tallies);
      snprintf(dr, sizeof dr, "%llu", (unsigned long long)last[c].dropped);
      snprintf(sm, sizeof sm, "%.1f", om * 1e3);
    }
    printf("%-30s %8.1f %7.2f%% %8.1f %7.2f%% %8s %8.2f %8s %7s %6s  %s\n",
           cfg_name[c], tm * 1e3, ow, cm * 1e3, oc, vs, c == C_OFF ? 0.0 : per,
           sm, tal, dr, cfg_target[c]);
  }
  printf("\n(cpu: the interpreter thread's CPU time; sampler: CPU ms of the "
         "other threads; ns/poll: extra cpu per poll point)\n");
  free(cpu);
  free(oth);
  free(rw);
  free(rc);
  free(rs);
  free(t);
  return 0;
}
