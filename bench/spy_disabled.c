/*
** bench/spy_disabled.c: proof that -DSPY_DISABLE compiles the hooks to
** nothing.
**
** Built with -DSPY_DISABLE and linked WITHOUT libspyon (bench/local.mk), so
** it links only if no hook refers to a library symbol. Every hook is called
** on a NULL vm, so it runs only if no hook touches its vm. A loop with the
** hooks is timed against the same loop without them; with the hooks gone
** the two must cost the same (printed, not asserted: timing is noisy).
** Prints "spy_disabled: ok" and exits 0; tests/test_core.c runs it.
*/
#ifndef SPY_DISABLE
#error "build this file with -DSPY_DISABLE"
#endif

#define _POSIX_C_SOURCE 200809L
#include <spyon/hooks.h>

#include <stdio.h>
#include <time.h>

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static volatile unsigned long sink;

/* The same loop twice; `hooks` selects whether the hooks are called. */
static double loop(spy_vm *v, int hooks, unsigned long n) {
  double t0 = now_s();
  unsigned long x = sink;
  for (unsigned long i = 0; i < n; i++) {
    x = x * 2862933555777941757ul + 3037000493ul;
    if (hooks) {
      spy_poll(v);
      spy_prim_begin1(v, 1, i);
      spy_prim_end(v);
    }
  }
  sink = x;
  return now_s() - t0;
}

int main(void) {
  spy_vm *v = NULL;
  spy_poll(v);
  spy_prim_begin(v, 0);
  spy_prim_begin1(v, 0, 1);
  spy_prim_begin2(v, 0, 1, 2);
  spy_prim_begin3(v, 0, 1, 2, 3);
  spy_prim_begin4(v, 0, 1, 2, 3, 4);
  spy_prim_end(v);
  spy_process_switch(v, 7);
  spy_gc_begin(v);
  spy_gc_end(v);
  spy_region_begin(v, 0);
  spy_region_end(v);
  const unsigned long n = 20000000ul;
  double with = loop(v, 1, n), without = loop(v, 0, n);
  printf("loop of %lu: %.2f ns/iter with hooks, %.2f ns/iter without\n", n,
         with / (double)n * 1e9, without / (double)n * 1e9);
  puts("spy_disabled: ok");
  return 0;
}
