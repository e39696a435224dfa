/*
** tests/test.h: the test runner's vocabulary.
**
** Every test is a function in a table; the runner (tests/runner.c) runs each
** one in a child process with a timeout, several at a time, so a crash or a
** hang fails that one test and the rest go on. Assertions print both values
** and the place. A test that cannot run here (a library not built in, a
** sanitizer that makes its measurement meaningless) calls T_SKIP with the
** reason instead of returning early: it is counted as skipped, not passed.
** Suites: each tests/test_*.c file defines one table, terminated by {0}, and
** tests/runner.c lists the tables.
*/
#ifndef SPY_TEST_H
#define SPY_TEST_H

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Under ThreadSanitizer every memory access of our code is instrumented
** (5-15x slower) while uninstrumented libraries (GMP, libc) are not, so
** measured time shares shift: timing assertions widen or skip there. The
** suite still runs every code path for TSan's race detection. */
#if defined(__SANITIZE_THREAD__)
#define T_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define T_TSAN 1
#endif
#endif
#ifndef T_TSAN
#define T_TSAN 0
#endif

/* AddressSanitizer (gcc defines the first, clang answers the second):
** its shadow memory needs address space, so tests that limit it with
** ulimit -v cannot run under it. */
#if defined(__SANITIZE_ADDRESS__)
#define T_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define T_ASAN 1
#endif
#endif
#ifndef T_ASAN
#define T_ASAN 0
#endif

struct spy_test {
  const char *name;
  void (*fn)(void);
  unsigned timeout_s; /* 0: the default, 60 s */
};

/* Fail the current test: print where and why, and leave the child. */
#define T_FAIL(...)                                                     \
  do {                                                                  \
    fprintf(stderr, "%s:%d: ", __FILE__, __LINE__);                     \
    fprintf(stderr, __VA_ARGS__);                                       \
    fputc('\n', stderr);                                                \
    exit(1);                                                            \
  } while (0)

/* The exit status that tells the runner a test was skipped (automake's). */
#define T_SKIP_STATUS 77

/* Skip the current test: say why (one line) and leave the child. */
#define T_SKIP(...)                                                     \
  do {                                                                  \
    fflush(stdout);                                                     \
    fprintf(stderr, "skip: ");                                          \
    fprintf(stderr, __VA_ARGS__);                                       \
    fputc('\n', stderr);                                                \
    exit(T_SKIP_STATUS);                                                \
  } while (0)

#define T_ASSERT(c)                                                     \
  do { if (!(c)) T_FAIL("assertion failed: %s", #c); } while (0)

#define T_EQ_INT(a, b)                                                  \
  do {                                                                  \
    long long a_ = (long long)(a), b_ = (long long)(b);                 \
    if (a_ != b_) T_FAIL("%s == %s: %lld != %lld", #a, #b, a_, b_);     \
  } while (0)

#define T_EQ_STR(a, b)                                                  \
  do {                                                                  \
    const char *a_ = (a), *b_ = (b);                                    \
    if (!a_ || !b_ || strcmp(a_, b_) != 0)                              \
      T_FAIL("%s == %s: \"%s\" != \"%s\"", #a, #b, a_ ? a_ : "(null)",  \
             b_ ? b_ : "(null)");                                       \
  } while (0)

/* |a - b| <= tol, printing all three. */
#define T_NEAR(a, b, tol)                                               \
  do {                                                                  \
    double a_ = (double)(a), b_ = (double)(b), t_ = (double)(tol);      \
    if (!(a_ - b_ <= t_ && b_ - a_ <= t_))                              \
      T_FAIL("%s ~ %s: %g vs %g (tolerance %g, off by %g)", #a, #b, a_, \
             b_, t_, a_ > b_ ? a_ - b_ : b_ - a_);                      \
  } while (0)

/* Where the build tree and source tree are (set by the runner from
** SPY_BUILDDIR / SPY_SRCDIR, defaulting to "."). */
extern const char *t_builddir;
extern const char *t_srcdir;

/* Run a shell command line, capture stdout into *out (malloc'd, NUL
** terminated; may be NULL to discard) and return its exit status, or -1
** if it died of a signal. */
int t_run(const char *cmdline, char **out);

/* Run `spyon ARGS` (ARGS from printf-style FMT: a shell fragment, so
** redirections work) from the build tree, in the test's temporary
** directory; stdout and the result as t_run gives them. */
int t_spyon(char **out, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Read a whole file into a malloc'd NUL-terminated buffer (NULL on error). */
char *t_slurp(const char *path, size_t *len);

/* A fresh temporary directory for this test (removed by the runner). */
const char *t_tmpdir(void);

#endif
