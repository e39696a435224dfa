/*
** examples/embed/embed.c: the smallest interpreter that embeds libspyon,
** built only against the runtime library (pkg-config spyon):
**
**   cc embed.c $(pkg-config --cflags --libs spyon) -o embed
**   ./embed out.spy [N]    # runs its program N times (default 40)
**                          #   profiled, saves out.spy
**   ./embed - [N]          # runs it unprofiled (N = 0: start-up alone,
**                          #   bench/startup.sh)
**   spyon report out.spy   # any tool reads the profile
**
** The "interpreter" runs a fixed program of three methods: main calls
** fib(24) and then sum(N), sum calls the primitive `bytes.fill` on a
** buffer. It follows docs/embedding.md: a frame stack the walker reports,
** a poll at every call and return, the primitive bracketed with its
** operand size, a name for every method key. About 1/2 of the time is in
** fib, 1/2 in the primitive.
*/
#define _POSIX_C_SOURCE 200809L
#include <spyon.h>
#include <spyon/hooks.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { M_MAIN = 1, M_FIB, M_SUM }; /* method keys */
static const char *const method_name[] = {"", "main", "fib", "sum"};

/* The interpreter's own frame stack (what the walker reports). */
static int frames[4096];
static int depth;
static spy_vm *vm;
static int prim_fill;

static void walk(void *ud, spy_stack *st) {
  (void)ud;
  for (int i = depth - 1; i >= 0; i--) spy_stack_push(st, (uint64_t)frames[i]);
}

/* Every change of the running method is a poll point: on entry, before
** the frame exists, and on return, before it is popped. */
static void enter(int m) {
  spy_poll(vm);
  frames[depth++] = m;
}

static void leave(void) {
  spy_poll(vm);
  depth--;
}

static volatile unsigned char sink;

static long fib(int n) {
  enter(M_FIB);
  long r = n < 2 ? n : fib(n - 1) + fib(n - 2);
  leave();
  return r;
}

static void sum(size_t n) {
  enter(M_SUM);
  static unsigned char buf[1 << 16];
  for (size_t done = 0; done < n; done += sizeof buf) {
    spy_prim_begin1(vm, prim_fill, sizeof buf); /* a primitive call */
    for (size_t i = 0; i < sizeof buf; i++) buf[i] = (unsigned char)(i * 7);
    sink = buf[done % sizeof buf];
    spy_prim_end(vm);
  }
  leave();
}

static void run(int rounds) {
  enter(M_MAIN);
  for (int r = 0; r < rounds; r++) {
    fib(24);
    sum((size_t)24 << 16);
  }
  leave();
}

static int fail(const char *what, int rc) {
  fprintf(stderr, "embed: %s: %s\n", what, spy_strerror(rc));
  return 1;
}

int main(int argc, char **argv) {
  const char *out = argc > 1 ? argv[1] : "-";
  int rounds = argc > 2 ? atoi(argv[2]) : 40;
  if (!strcmp(out, "-")) { /* unprofiled: the hooks' stand-in handle */
    vm = spy_vm_stopped();
    run(rounds);
    return 0;
  }
  spy_options o;
  spy_options_init(&o);
  spy_profiler *p;
  int rc = spy_profiler_new(&p, &o);
  if (rc < 0) return fail("spy_profiler_new", rc);
  if ((prim_fill = spy_prim_register(p, "bytes.fill", "bytes", SPY_PRIM_COST)) < 0)
    return fail("spy_prim_register", prim_fill);
  spy_host h = {.walk = walk};
  if ((rc = spy_attach(p, &h, &vm)) < 0) return fail("spy_attach", rc);
  for (int m = M_MAIN; m <= M_SUM; m++) spy_name(vm, (uint64_t)m, method_name[m]);
  if ((rc = spy_start(p)) < 0) return fail("spy_start", rc);
  run(rounds);
  spy_stop(p);
  spy_profile *prof;
  if ((rc = spy_profile_take(p, &prof)) < 0) return fail("take", rc);
  char err[512];
  if (spy_profile_save(prof, out, err, sizeof err) < 0) {
    fprintf(stderr, "embed: %s\n", err);
    return 1;
  }
  spy_profile_free(prof);
  spy_detach(vm);
  spy_profiler_free(p);
  return 0;
}
