/*
** vm-hooks/native.c: the per-thread SIGPROF timer and the handler that
** records native stacks inside primitives (see vm-hooks/native.h).
**
** Signal safety. The handler reads only its thread's own slot pointer (a
** thread-local with the initial-exec model, so reading it never calls into
** the dynamic loader), the slot's atomics, and writes only the slot's
** native ring, whose single producer it is. A recursion guard makes a
** nested SIGPROF (another library raising one from inside libunwind, say)
** a no-op. libunwind unwinds from the ucontext the kernel handed to the
** handler (UNW_INIT_SIGNAL_FRAME: the first frame is the interrupted pc,
** not a return address), with UNW_LOCAL_ONLY and a per-thread cache.
*/
#include "config.h"

#define UNW_LOCAL_ONLY
#include <libunwind.h>

#include "vm-hooks/native.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define RELAXED memory_order_relaxed

static __thread spy_vm *tl_vm __attribute__((tls_model("initial-exec")));
static __thread volatile sig_atomic_t tl_busy
    __attribute__((tls_model("initial-exec")));

static pthread_mutex_t install_lock = PTHREAD_MUTEX_INITIALIZER;
static int installed; /* under install_lock */

/* Unwind the interrupted stack into ips (innermost first); returns how many
** frames were found. Only libunwind's local, signal-safe calls. */
static unsigned unwind(void *uc, uint64_t *ips, unsigned max) {
  unw_cursor_t cur;
  unsigned n = 0;
  if (unw_init_local2(&cur, (unw_context_t *)uc, UNW_INIT_SIGNAL_FRAME) < 0)
    return 0;
  do {
    unw_word_t ip = 0;
    if (unw_get_reg(&cur, UNW_REG_IP, &ip) < 0 || ip == 0) break;
    ips[n++] = (uint64_t)ip;
  } while (n < max && unw_step(&cur) > 0);
  return n;
}

/* The handler: one NATIVE record for the primitive the thread is in, or
** nothing (not an attached thread, not in a primitive, nested). */
static void on_sigprof(int sig, siginfo_t *si, void *uc) {
  (void)sig;
  (void)si;
  int saved = errno;
  spy_vm *v = tl_vm;
  if (!v || tl_busy) goto out;
  tl_busy = 1;
  atomic_signal_fence(memory_order_seq_cst);
  uint64_t prim = atomic_load_explicit(&v->native_prim, RELAXED);
  if (prim != 0 && __atomic_load_n(&v->hot.active_, __ATOMIC_RELAXED)) {
    uint64_t ips[SPYH_NATIVE_MAX];
    unsigned n = unwind(uc, ips, SPYH_NATIVE_MAX);
    spyH_native_rec *r =
        n ? spyH_ring_reserve(&v->native_ring,
                              (uint32_t)(sizeof *r + n * sizeof(uint64_t)))
          : NULL;
    if (r) {
      r->h.type = SPYH_REC_NATIVE;
      r->pid = atomic_load_explicit(&v->pid_pub, RELAXED);
      r->prim = (uint32_t)(prim - 1);
      r->n = n;
      memcpy(r + 1, ips, n * sizeof(uint64_t));
      spyH_ring_commit(&v->native_ring, r);
    } else {
      /* Single writer (this thread, signals blocked while here). */
      atomic_store_explicit(
          &v->native_dropped,
          atomic_load_explicit(&v->native_dropped, RELAXED) + 1, RELAXED);
    }
  }
  atomic_signal_fence(memory_order_seq_cst);
  tl_busy = 0;
out:
  errno = saved;
}

int spyH_native_install(void) {
  int rc = 0;
  pthread_mutex_lock(&install_lock);
  if (!installed) {
    struct sigaction old, sa;
    memset(&sa, 0, sizeof sa);
    if (sigaction(SIGPROF, NULL, &old) != 0) {
      rc = SPY_ENOTSUP;
    } else if ((old.sa_flags & SA_SIGINFO) ||
               (old.sa_handler != SIG_DFL && old.sa_handler != SIG_IGN)) {
      rc = SPY_EEXIST; /* someone else's profiler: do not clobber it */
    } else {
      /* Cache unwind info per thread, so that a handler interrupting
      ** another unwind in the same thread never shares its state. */
      unw_set_caching_policy(unw_local_addr_space, UNW_CACHE_PER_THREAD);
      sa.sa_sigaction = on_sigprof;
      sa.sa_flags = SA_SIGINFO | SA_RESTART;
      sigemptyset(&sa.sa_mask);
      if (sigaction(SIGPROF, &sa, NULL) != 0) rc = SPY_ENOTSUP;
      else installed = 1;
    }
  }
  pthread_mutex_unlock(&install_lock);
  return rc;
}

int spyH_native_installed(void) {
  struct sigaction cur;
  if (sigaction(SIGPROF, NULL, &cur) != 0) return 0;
  return (cur.sa_flags & SA_SIGINFO) && cur.sa_sigaction == on_sigprof;
}

/* libunwind sets itself up (its per-thread cache, the first lookups of
** the unwind tables, dl_iterate_phdr) the first time it unwinds in a
** thread. That must not happen inside the handler, which may interrupt
** malloc or the dynamic loader: unwind this thread once here, outside. */
static void prime_unwinder(void) {
  unw_context_t ctx;
  unw_cursor_t cur;
  if (unw_getcontext(&ctx) != 0) return;
  if (unw_init_local(&cur, &ctx) < 0) return;
  for (int i = 0; i < 4 && unw_step(&cur) > 0; i++) {
  }
}

int spyH_native_bind(spy_vm *v) {
  struct sigevent ev;
  memset(&ev, 0, sizeof ev);
  ev.sigev_notify = SIGEV_THREAD_ID;
  ev.sigev_signo = SIGPROF;
  ev._sigev_un._tid = (pid_t)syscall(SYS_gettid);
  if (timer_create(CLOCK_MONOTONIC, &ev, &v->native_timer) != 0)
    return SPY_ENOTSUP;
  v->native_timer_ok = 1;
  prime_unwinder();
  atomic_signal_fence(memory_order_seq_cst);
  tl_vm = v;
  atomic_signal_fence(memory_order_seq_cst);
  return 0;
}

void spyH_native_unbind(spy_vm *v) {
  if (v->native_timer_ok) {
    timer_delete(v->native_timer); /* no new signals; a pending one finds */
    v->native_timer_ok = 0;        /* tl_vm NULL or its slot still here */
  }
  atomic_signal_fence(memory_order_seq_cst);
  if (tl_vm == v) tl_vm = NULL;
  atomic_signal_fence(memory_order_seq_cst);
}

static void set_timer(spy_vm *v, uint64_t ns) {
  if (!v->native_timer_ok) return;
  struct itimerspec its;
  its.it_value.tv_sec = its.it_interval.tv_sec = (time_t)(ns / 1000000000u);
  its.it_value.tv_nsec = its.it_interval.tv_nsec = (long)(ns % 1000000000u);
  timer_settime(v->native_timer, 0, &its, NULL);
}

void spyH_native_arm(spy_vm *v, uint64_t interval_ns) {
  set_timer(v, interval_ns);
}

void spyH_native_disarm(spy_vm *v) {
  set_timer(v, 0);
}
