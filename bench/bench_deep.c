/*
** bench/bench_deep.c: what a sample costs on a deep stack.
**
** The ground-truth host recurses to depth D (a little work at each level,
** every frame a new key push), works 20 ms at the bottom with polls, and
** returns all the way. The same fixed work runs with the profiler stopped
** (attached, hooks compiled in), running at 10 kHz with the host's
** incremental walker (the contract's spy_stack_unchanged), and running
** with a walker that pushes every frame. Rounds interleave the three; the
** table gives medians over rounds of:
**   cpu x     the interpreter thread's CPU time over the stopped run's
**   proc x    the same for the whole process (all threads: the sampler too)
**   us/sample extra interpreter-thread CPU per sample taken
**   frames/s  frames the walker pushed per sample (counters)
** Target (issue 9): a 100 000-deep recursion profiled at the default
** interval costs at most 1.5x the unprofiled CPU time.
**
**   bench/bench_deep [-r ROUNDS]
*/
#include "config.h"

#include "bench/bench.h"
#include "tests/gt/gthost.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

enum { K_MAIN = 1, K_DEEP = 2 };
enum { OFF, INC, FULL, NMODES };
static const char *mode_name[NMODES] = {"stopped", "incremental", "full"};

typedef struct result {
  double cpu_s, proc_s;
  uint64_t samples, frames;
} result;

static double proc_cpu(void) {
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return (double)ru.ru_utime.tv_sec + 1e-6 * (double)ru.ru_utime.tv_usec +
         (double)ru.ru_stime.tv_sec + 1e-6 * (double)ru.ru_stime.tv_usec;
}

/* The fixed program: down to depth d, 20 ms of polled work, back up. */
static void program(gt_host *h, int d) {
  gt_enter(h, K_MAIN);
  for (int i = 0; i < d; i++) {
    gt_enter(h, K_DEEP);
    gt_work(h, 20);
  }
  gt_work(h, 20 * 1000 * 1000);
  for (int i = 0; i < d; i++) gt_leave(h);
  gt_leave(h);
}

static int run(int depth, int mode, result *r) {
  spy_options o;
  spy_options_init(&o);
  spy_profiler *p;
  if (spy_profiler_new(&p, &o) != 0) return -1;
  gt_host *h = gt_new(p);
  if (!h) return -1;
  gt_method(h, K_MAIN, "Main>>run");
  gt_method(h, K_DEEP, "Deep>>recurse");
  h->incremental = mode != FULL;
  if (gt_attach(h) != 0) return -1;
  program(h, 100); /* warm up: the stack arrays, the clock */
  if (mode != OFF && spy_start(p) != 0) return -1;
  double c0 = bench_clock_s(CLOCK_THREAD_CPUTIME_ID), p0 = proc_cpu();
  program(h, depth);
  r->cpu_s = bench_clock_s(CLOCK_THREAD_CPUTIME_ID) - c0;
  r->proc_s = proc_cpu() - p0;
  if (mode != OFF) spy_stop(p);
  spy_counters c;
  spy_counters_get(p, &c);
  r->samples = c.samples;
  r->frames = c.frames_walked;
  gt_free(h);
  spy_profiler_free(p);
  return 0;
}

int main(int argc, char **argv) {
  int rounds = 5;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "-r") == 0 && i + 1 < argc) {
      rounds = atoi(argv[++i]);
    } else {
      fprintf(stderr, "usage: bench_deep [-r ROUNDS]\n");
      return 2;
    }
  }
  if (rounds < 1 || rounds > 101) {
    fprintf(stderr, "bench_deep: -r takes 1..101\n");
    return 2;
  }
  static const int depths[] = {10, 1000, 100000, 1000000};
  printf("deep stacks: fixed work (recurse to D, 20 ms at the bottom, "
         "return), 10 kHz, medians of %d rounds\n", rounds);
  printf("%9s %-12s %8s %8s %9s %9s %12s\n", "depth", "walker", "cpu x",
         "proc x", "samples", "us/sample", "frames/smp");
  for (size_t di = 0; di < sizeof depths / sizeof *depths; di++) {
    int d = depths[di];
    double cpu[NMODES][101], proc[NMODES][101], smp[NMODES][101],
        frm[NMODES][101];
    for (int r = 0; r < rounds; r++)
      for (int m = 0; m < NMODES; m++) {
        result res;
        if (run(d, m, &res) != 0) {
          fprintf(stderr, "bench_deep: run failed\n");
          return 1;
        }
        cpu[m][r] = res.cpu_s;
        proc[m][r] = res.proc_s;
        smp[m][r] = (double)res.samples;
        frm[m][r] = res.samples ? (double)res.frames / (double)res.samples
                                : 0;
      }
    double c_off = bench_median(cpu[OFF], rounds), p_off = bench_median(proc[OFF], rounds);
    for (int m = 0; m < NMODES; m++) {
      double c = bench_median(cpu[m], rounds), pc = bench_median(proc[m], rounds);
      double s = bench_median(smp[m], rounds), f = bench_median(frm[m], rounds);
      if (m == OFF)
        printf("%9d %-12s %8s %8s %9s %9s %12s   (%.1f ms cpu)\n", d,
               mode_name[m], "1.00", "1.00", "-", "-", "-", 1e3 * c_off);
      else
        printf("%9d %-12s %8.2f %8.2f %9.0f %9.2f %12.0f\n", d, mode_name[m],
               c / c_off, pc / p_off, s, s > 0 ? 1e6 * (c - c_off) / s : 0,
               f);
    }
  }
  return 0;
}
