/*
** vm-hooks/resched.c: the rseq word of vm-hooks/resched.h.
*/
#include "config.h"

#include "vm-hooks/resched.h"

#include <pthread.h>
#include <stdint.h>

#if HAVE_SYS_RSEQ_H
#include <sys/rseq.h>
#endif

#if HAVE_SYS_RSEQ_H && defined(RSEQ_SIG) && HAVE_DECL___RSEQ_OFFSET && \
    HAVE_DECL___RSEQ_SIZE && HAVE_BUILTIN_THREAD_POINTER

/* The empty section: it starts and aborts just after the signature. */
static const uint32_t signature[2] = {RSEQ_SIG, 0};
static struct rseq_cs empty; /* aligned(32) by <sys/rseq.h> */
static pthread_once_t empty_once = PTHREAD_ONCE_INIT;

static void empty_init(void) {
  uintptr_t after = (uintptr_t)&signature[1];
  empty.version = 0;
  empty.flags = 0;
  empty.start_ip = after;
  empty.post_commit_offset = 0;
  empty.abort_ip = after;
}

void spyH_resched_bind(spy_vm *v) {
  v->hot.sched_ = NULL;
  if (__rseq_size == 0) return; /* not registered (a tunable, or refused) */
  struct rseq *r =
      (struct rseq *)(void *)((char *)__builtin_thread_pointer() +
                              __rseq_offset);
  if ((int32_t)r->cpu_id < 0) return; /* not for this thread */
  pthread_once(&empty_once, empty_init);
  v->hot.armed_ = (uint64_t)(uintptr_t)&empty;
  v->hot.sched_ = (uint64_t *)(void *)&r->rseq_cs;
}

#else

void spyH_resched_bind(spy_vm *v) { v->hot.sched_ = NULL; }

#endif

void spyH_resched_unbind(spy_vm *v) {
  uint64_t armed = v->hot.armed_;
  if (v->hot.sched_)
    __atomic_compare_exchange_n(v->hot.sched_, &armed, 0, 0,
                                __ATOMIC_RELAXED, __ATOMIC_RELAXED);
  v->hot.sched_ = NULL;
}
