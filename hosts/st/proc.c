/*
** hosts/st/proc.c: processes, the scheduler, semaphores, delays and run
** control.
**
** Smalltalk-80 scheduling: the highest-priority ready process runs; a
** process that becomes ready at a higher priority than the running one
** preempts it at once (the preempted one goes back to the front of its
** queue). On top of that, at interrupt checks, a process that has used up
** its time slice yields to ready processes of its own priority. Delays
** are timers that signal a semaphore; when nothing is ready the VM sleeps
** until the next timer (charged to an "idle" process in profiles).
** Every switch calls the profiler's process-switch hook before the new
** process runs.
*/
#include "config.h"

#include "hosts/st/heap.h"
#include "hosts/st/symbols.h"
#include "hosts/st/classes.h"
#include "hosts/st/proc.h"
#include "hosts/st/primtab.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#define MAIN_STACK_SLOTS ((size_t)1 << 21)
#define MAIN_FRAMES ((size_t)1 << 17)
#define PROC_STACK_SLOTS ((size_t)1 << 18)
#define PROC_FRAMES ((size_t)1 << 15)
#define SLICE_NS 10000000ull

void st_panic(const char *fmt, ...) {
  va_list ap;
  fflush(stdout);
  fprintf(stderr, "st: internal error: ");
  va_start(ap, fmt);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fputc('\n', stderr);
  abort();
}

_Thread_local VM *st_running_vm;

/* The reserve is freed first, so that printing, saving the profile and
** writing the report have memory to work with. */
void st_out_of_memory(size_t bytes) {
  VM *vm = st_running_vm;
  if (!vm || !vm->oom_jmp) {
    if (bytes == SIZE_MAX) st_panic("out of memory (object too large)");
    st_panic("out of memory (%zu bytes)", bytes);
  }
  free(vm->oom_reserve);
  vm->oom_reserve = NULL;
  fflush(stdout);
  if (bytes == SIZE_MAX)
    fprintf(stderr, "Error: out of memory: an object of more than 2^40 "
                    "slots was asked for; the run stops\n");
  else
    fprintf(stderr, "Error: out of memory: %zu bytes could not be "
                    "allocated; the run stops\n", bytes);
  st_backtrace(vm, vm->cur, stderr);
  vm->stopping = 1;
  vm->exit_code = 1;
  longjmp(*vm->oom_jmp, 1);
}

uint64_t st_now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* ===================================================================== */
/* Process records                                                       */
/* ===================================================================== */

static void *map(size_t bytes) {
  void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED) st_out_of_memory(bytes);
  return p;
}

Proc *st_proc_new(VM *vm, Value pobj, int priority, int is_main) {
  Proc *p = calloc(1, sizeof(Proc));
  if (!p) st_out_of_memory(sizeof(Proc));
  size_t slots = is_main ? MAIN_STACK_SLOTS : PROC_STACK_SLOTS;
  size_t frames = is_main ? MAIN_FRAMES : PROC_FRAMES;
  p->stack_bytes = slots * sizeof(Value);
  p->frames_bytes = frames * sizeof(Frame);
  p->stack = map(p->stack_bytes);
  p->frames = map(p->frames_bytes);
  p->stack_end = p->stack + slots - 64;
  p->frames_end = p->frames + frames - 1;
  p->sp = p->stack;
  p->f = p->frames;
  p->frames[0].base = p->stack; /* the bottom sentinel: m == NULL */
  p->obj = pobj;
  p->priority = priority;
  p->is_main = is_main;
  p->state = PS_SUSPENDED;
  p->pid = vm->next_pid++;
  SLOTS(pobj)[PROC_HANDLE] = MK_RAW(p);
  SLOTS(pobj)[PROC_PRIORITY] = MK_INT(priority);
  if (vm->nprocs == vm->capprocs) {
    vm->capprocs = vm->capprocs ? vm->capprocs * 2 : 16;
    vm->procs = realloc(vm->procs, vm->capprocs * sizeof(Proc *));
    if (!vm->procs) st_out_of_memory(vm->capprocs * sizeof(Proc *));
  }
  vm->procs[vm->nprocs++] = p;
  return p;
}

void st_proc_free(VM *vm, Proc *p) {
  st_prof_process_end(vm, p->pid);
  for (uint32_t i = 0; i < vm->nprocs; i++)
    if (vm->procs[i] == p) {
      vm->procs[i] = vm->procs[--vm->nprocs];
      break;
    }
  SLOTS(p->obj)[PROC_HANDLE] = vm->nil;
  munmap(p->stack, p->stack_bytes);
  munmap(p->frames, p->frames_bytes);
  free(p);
}

Proc *st_proc_of(VM *vm, Value pobj) {
  if (!IS_PTR(pobj) || pobj == vm->nil || OBJ(pobj)->cls != CID_PROCESS)
    return NULL;
  Value h = SLOTS(pobj)[PROC_HANDLE];
  return IS_INT(h) ? RAW_PTR(h) : NULL;
}

/* A process that runs a block with no arguments. */
Value st_fork_block(VM *vm, Value block, int priority) {
  Method *bm = RAW_PTR(SLOTS(block)[BLK_METHOD]);
  if (bm->nargs != 0) return 0;
  Value pobj = st_new_slots(vm, CID_PROCESS, vm->classes[CID_PROCESS].ninst);
  Proc *p = st_proc_new(vm, pobj, priority, 0);
  Frame *f = p->frames + 1;
  f->base = p->sp;
  *p->sp++ = SLOTS(block)[BLK_RECEIVER];
  for (int k = 0; k < bm->ncopied; k++)
    *p->sp++ = SLOTS(block)[BLK_NSLOTS + k];
  for (int k = 0; k < bm->ntemps; k++) *p->sp++ = vm->nil;
  f->m = bm;
  f->ip = bm->code;
  f->closure = block;
  f->serial = ++vm->serial;
  p->f = f;
  return pobj;
}

/* ===================================================================== */
/* Ready queues                                                          */
/* ===================================================================== */

void st_ready(VM *vm, Proc *p) {
  int pr = p->priority;
  p->state = PS_READY;
  p->next = NULL;
  if (vm->ready_tail[pr]) vm->ready_tail[pr]->next = p;
  else vm->ready[pr] = p;
  vm->ready_tail[pr] = p;
}

static void ready_front(VM *vm, Proc *p) {
  int pr = p->priority;
  p->state = PS_READY;
  p->next = vm->ready[pr];
  vm->ready[pr] = p;
  if (!vm->ready_tail[pr]) vm->ready_tail[pr] = p;
}

static void unready(VM *vm, Proc *p) {
  int pr = p->priority;
  Proc **pp = &vm->ready[pr], *prev = NULL;
  while (*pp && *pp != p) {
    prev = *pp;
    pp = &(*pp)->next;
  }
  if (!*pp) return;
  *pp = p->next;
  if (vm->ready_tail[pr] == p) vm->ready_tail[pr] = prev;
  p->next = NULL;
}

static int highest_ready(VM *vm) {
  for (int pr = ST_MAX_PRIORITY; pr > 0; pr--)
    if (vm->ready[pr]) return pr;
  return 0;
}

Proc *st_next_ready(VM *vm) {
  int pr = highest_ready(vm);
  if (!pr) return NULL;
  Proc *p = vm->ready[pr];
  vm->ready[pr] = p->next;
  if (!vm->ready[pr]) vm->ready_tail[pr] = NULL;
  p->next = NULL;
  return p;
}

/* The profiler hears of the switch first: a sample that falls due then is
** charged to the process switched from, with that process's stack. */
void st_switch_to(VM *vm, Proc *p, int rename) {
  char name[160], tmp[120];
  Value nm = SLOTS(p->obj)[PROC_NAME];
  if (p->is_main) snprintf(tmp, sizeof tmp, "main");
  else if (IS_PTR(nm) && nm != vm->nil &&
           (OBJ(nm)->cls == CID_STRING || OBJ(nm)->cls == CID_SYMBOL))
    st_cstr(nm, tmp, sizeof tmp);
  else snprintf(tmp, sizeof tmp, "Process %u", p->pid);
  snprintf(name, sizeof name, "%s (%d)", tmp, p->priority);
  st_prof_switch(vm, p->pid, name, rename);
  vm->idle = 0;
  vm->cur = p;
  p->state = PS_RUNNING;
  vm->slice_end = st_now_ns() + (p->slice_left ? p->slice_left : SLICE_NS);
  p->slice_left = 0;
}

/* ===================================================================== */
/* Timers                                                                */
/* ===================================================================== */

void st_add_timer(VM *vm, uint64_t due, Value sem) {
  if (vm->ntimers == vm->captimers) {
    vm->captimers = vm->captimers ? vm->captimers * 2 : 16;
    vm->timers = realloc(vm->timers, vm->captimers * sizeof(Timer));
    if (!vm->timers) st_out_of_memory(vm->captimers * sizeof(Timer));
  }
  uint32_t k = vm->ntimers++;
  while (k > 0 && vm->timers[k - 1].due_ns > due) {
    vm->timers[k] = vm->timers[k - 1];
    k--;
  }
  vm->timers[k].due_ns = due;
  vm->timers[k].sem = sem;
}

static void wake(VM *vm, Proc *p);

/* Signal the semaphores of timers due by now; returns how many fired. */
int st_timers_due(VM *vm, uint64_t now) {
  uint32_t n = 0;
  while (n < vm->ntimers && vm->timers[n].due_ns <= now) n++;
  if (!n) return 0;
  Value sems[64];
  uint32_t k = n < 64 ? n : 64;
  for (uint32_t i = 0; i < k; i++) sems[i] = vm->timers[i].sem;
  memmove(vm->timers, vm->timers + k, (vm->ntimers - k) * sizeof(Timer));
  vm->ntimers -= k;
  for (uint32_t i = 0; i < k; i++) st_sem_signal(vm, sems[i]);
  return (int)k;
}

/* ===================================================================== */
/* Semaphores                                                            */
/* ===================================================================== */

/* Waiters are a list of Procs through ->next, head kept as a raw pointer
** in the semaphore's waiters slot. */
static Proc *sem_head(VM *vm, Value sem) {
  Value h = SLOTS(sem)[SEM_WAITERS];
  return h == vm->nil ? NULL : RAW_PTR(h);
}

static void sem_set_head(VM *vm, Value sem, Proc *p) {
  SLOTS(sem)[SEM_WAITERS] = p ? MK_RAW(p) : vm->nil;
}

static void sem_unlink(VM *vm, Proc *p) {
  Value sem = p->waiting_on;
  if (!sem) return;
  Proc *h = sem_head(vm, sem), *prev = NULL;
  while (h && h != p) {
    prev = h;
    h = h->next;
  }
  if (h) {
    if (prev) prev->next = p->next;
    else sem_set_head(vm, sem, p->next);
  }
  p->next = NULL;
  p->waiting_on = 0;
}

/* Make a waiting or suspended process ready; it runs at the next
** preemption check if it outranks the running one. */
static void wake(VM *vm, Proc *p) {
  st_ready(vm, p);
}

void st_sem_signal(VM *vm, Value sem) {
  Proc *p = sem_head(vm, sem);
  if (!p) {
    Value x = SLOTS(sem)[SEM_SIGNALS];
    SLOTS(sem)[SEM_SIGNALS] = MK_INT((IS_INT(x) ? INT_VAL(x) : 0) + 1);
    return;
  }
  sem_set_head(vm, sem, p->next);
  p->next = NULL;
  p->waiting_on = 0;
  wake(vm, p);
}

/* ===================================================================== */
/* Scheduling                                                            */
/* ===================================================================== */

static void stop(VM *vm, int code) {
  vm->stopping = 1;
  if (vm->exit_code < 0 || code != 0) vm->exit_code = code;
}

static void deadlock(VM *vm) {
  fflush(stdout);
  fprintf(stderr, "Error: deadlock: every process is waiting and no "
                  "Delay is pending\n");
  st_backtrace(vm, vm->main, stderr);
  stop(vm, 1);
}

void st_schedule(VM *vm) {
  int idle = 0;
  for (;;) {
    Proc *n = st_next_ready(vm);
    if (n) {
      st_switch_to(vm, n, 0);
      return;
    }
    if (vm->ntimers == 0) {
      vm->idle = 0;
      deadlock(vm);
      return;
    }
    if (!idle) {
      idle = 1;
      st_prof_switch(vm, ST_IDLE_PID, "idle", 0);
      vm->idle = 1;
    }
    uint64_t now = st_now_ns(), due = vm->timers[0].due_ns;
    if (due > now) {
      struct timespec ts = {(time_t)((due - now) / 1000000000ull),
                            (long)((due - now) % 1000000000ull)};
      nanosleep(&ts, NULL);
    }
    if (vm->sigint) {
      vm->idle = 0;
      stop(vm, 130);
      return;
    }
    st_timers_due(vm, st_now_ns());
  }
}

/* Switch away from the running process if a ready one outranks it, or,
** when its slice is used up, if one of equal priority is waiting. */
static void preempt(VM *vm, int slice_over) {
  Proc *c = vm->cur;
  int pr = highest_ready(vm);
  if (pr > c->priority) {
    /* Preempted: it keeps the rest of its slice for when it resumes. */
    uint64_t now = st_now_ns();
    c->slice_left = vm->slice_end > now ? vm->slice_end - now : 1;
    ready_front(vm, c);
    st_schedule(vm);
  } else if (slice_over && pr == c->priority) {
    st_ready(vm, c);
    st_schedule(vm);
  }
}

/* The interrupt check's slow path: collection, timers, time slices and
** SIGINT every ST_ICOUNT checks. It takes no samples (the dispatch loop's
** poll points do), except in timer mode, which polls at every check as
** MessageTally's VM does. It is the profiler's tick (SPY_MARKER_TICK, the
** default): spy_tick_next shortens the countdown so that a tick comes
** just before each sample falls due, and the sends and returns after it
** read the clock until one takes the sample (docs/embedding.md). */
void st_interrupt(VM *vm) {
  int counted = vm->iperiod + 1; /* the check that runs out counts too */
  if (vm->prof.timer) {
    spy_tick(vm->prof.v);
    spy_poll(vm->prof.v);
    vm->icount = vm->iperiod = 0;
  } else {
    vm->icount = vm->iperiod = spy_tick_next(vm->prof.v, counted, ST_ICOUNT);
  }
  vm->ticks += counted;
  if (vm->ticks < ST_ICOUNT && !vm->gc_pending && !vm->sigint) return;
  vm->ticks = 0;
  if (vm->sigint) {
    stop(vm, 130);
    return;
  }
  if (vm->gc_pending) st_gc(vm);
  if (vm->nprocs > 1 || vm->ntimers) {
    uint64_t now = st_now_ns();
    if (vm->ntimers && vm->timers[0].due_ns <= now) st_timers_due(vm, now);
    preempt(vm, now >= vm->slice_end);
  }
}

/* Retire p (the running process) after switching away from it: the
** profiler's switch hook may still look at its (empty) stack. */
void st_proc_finished(VM *vm, Proc *p) {
  p->state = PS_DEAD;
  p->f = p->frames;
  p->sp = p->stack;
  st_schedule(vm);
  if (vm->cur == p) vm->cur = vm->main; /* deadlock: nothing else runs */
  st_proc_free(vm, p);
}

/* ===================================================================== */
/* Control primitives                                                    */
/* ===================================================================== */

static void answer(VM *vm, Value *args, int na, Value v) {
  args[0] = v;
  vm->cur->sp -= na;
}

/* Terminating another process runs its ensure: and ifCurtailed: blocks
** in that process, before terminate returns: a frame of
** Process>>unwindAndTerminate is pushed on p's stack, p runs at once (at
** least at the terminator's priority, so that it is not preempted back),
** and the terminator c waits at the front of its ready queue. Returns 0
** when p has no room for the frame (then it is just freed). */
static int unwind_other(VM *vm, Proc *c, Proc *p) {
  Method *t = st_lookup(vm, st_cid(vm, p->obj),
                        st_sym(vm, "unwindAndTerminate"));
  Frame *nf = p->f + 1;
  if (!t || nf >= p->frames_end ||
      p->sp + 1 + t->ntemps + t->maxstack >= p->stack_end)
    return 0;
  nf->base = p->sp;
  *p->sp++ = p->obj;
  for (int k = t->ntemps; k > 0; k--) *p->sp++ = vm->nil;
  nf->m = t;
  nf->ip = t->code;
  nf->closure = 0;
  nf->serial = ++vm->serial;
  p->f = nf;
  if (p->priority < c->priority) p->priority = c->priority;
  ready_front(vm, c);
  st_switch_to(vm, p, 1);
  return 1;
}

int st_control(VM *vm, int ctl, Value *args, int na) {
  Proc *c = vm->cur, *p;
  switch (ctl) {
  case CTL_WAIT: {
    Value sem = args[0];
    answer(vm, args, na, sem);
    Value x = SLOTS(sem)[SEM_SIGNALS];
    if (IS_INT(x) && INT_VAL(x) > 0) {
      SLOTS(sem)[SEM_SIGNALS] = MK_INT(INT_VAL(x) - 1);
      return 0;
    }
    c->state = PS_WAITING;
    c->waiting_on = sem;
    c->next = NULL;
    Proc *h = sem_head(vm, sem);
    if (!h) sem_set_head(vm, sem, c);
    else {
      while (h->next) h = h->next;
      h->next = c;
    }
    st_schedule(vm);
    return 0;
  }
  case CTL_SIGNAL:
    answer(vm, args, na, args[0]);
    st_sem_signal(vm, args[0]);
    preempt(vm, 0);
    return 0;
  case CTL_YIELD:
    answer(vm, args, na, args[0]);
    if (highest_ready(vm) >= c->priority) {
      st_ready(vm, c);
      st_schedule(vm);
    }
    return 0;
  case CTL_RESUME:
    p = st_proc_of(vm, args[0]);
    if (!p) return -1;
    answer(vm, args, na, args[0]);
    if (p->state == PS_SUSPENDED) {
      wake(vm, p);
      preempt(vm, 0);
    }
    return 0;
  case CTL_SUSPEND:
    p = st_proc_of(vm, args[0]);
    if (!p || p->is_main) return -1;
    answer(vm, args, na, args[0]);
    if (p == c) {
      c->state = PS_SUSPENDED;
      st_schedule(vm);
    } else if (p->state == PS_READY) {
      unready(vm, p);
      p->state = PS_SUSPENDED;
    } else if (p->state == PS_WAITING) {
      sem_unlink(vm, p);
      p->state = PS_SUSPENDED;
    }
    return 0;
  case CTL_TERMINATE:
    p = st_proc_of(vm, args[0]);
    answer(vm, args, na, args[0]);
    if (!p) return 0; /* already dead */
    if (p->is_main) {
      stop(vm, 0);
      return 0;
    }
    if (p->state == PS_READY) unready(vm, p);
    if (p->state == PS_WAITING) sem_unlink(vm, p);
    if (p == c) {
      st_proc_finished(vm, p);
    } else if (!unwind_other(vm, c, p)) {
      st_proc_free(vm, p);
    }
    return 0;
  case CTL_PRIORITY: {
    p = st_proc_of(vm, args[0]);
    Value x = args[1];
    if (!IS_INT(x) || INT_VAL(x) < 1 || INT_VAL(x) > ST_MAX_PRIORITY)
      return -1;
    answer(vm, args, na, args[0]);
    SLOTS(args[0])[PROC_PRIORITY] = x;
    if (!p) return 0;
    if (p->state == PS_READY) {
      unready(vm, p);
      p->priority = (int)INT_VAL(x);
      st_ready(vm, p);
    } else {
      p->priority = (int)INT_VAL(x);
    }
    if (p == c) st_switch_to(vm, c, 1); /* renames "(prio)" for the profiler */
    else if (vm->prof.named && p->pid / 8 < vm->prof.named_bytes)
      vm->prof.named[p->pid / 8] &= (uint8_t)~(1u << (p->pid % 8));
    preempt(vm, 0);
    return 0;
  }
  case CTL_QUIT:
    if (na == 1 && !IS_INT(args[1])) return -1;
    answer(vm, args, na, args[0]);
    stop(vm, na == 1 ? (int)(INT_VAL(args[1]) & 255) : 0);
    return 0;
  case CTL_UNHANDLED:
    answer(vm, args, na, args[0]);
    stop(vm, 1);
    return 0;
  case CTL_SPY:
    return st_prof_control(vm, args, na);
  }
  return -1;
}

/* ===================================================================== */
/* Backtraces                                                            */
/* ===================================================================== */

int st_frame_line(Frame *f, const Instr *ip) {
  Method *m = f->m;
  if (!m || !m->ncode) return 0;
  long k = (long)(ip - m->code) - 1;
  if (k < 0) k = 0;
  if (k >= (long)m->ncode) k = (long)m->ncode - 1;
  return (int)m->lines[k];
}

/* Kernel files show as kernel/NAME.st. */
static const char *short_file(VM *vm, const char *file) {
  if (!file) return "?";
  size_t k = vm->kernel_dir ? strlen(vm->kernel_dir) : 0;
  if (k && strncmp(file, vm->kernel_dir, k) == 0 && file[k] == '/') {
    const char *slash = strrchr(file, '/');
    static char buf[256];
    snprintf(buf, sizeof buf, "kernel%s", slash);
    return buf;
  }
  return file;
}

static void print_frame(VM *vm, Frame *f, FILE *out) {
  char name[512];
  st_method_name(vm, f->m, st_cid(vm, f->base[0]), name, sizeof name);
  fprintf(out, "  %s (%s:%d)\n", name, short_file(vm, f->m->file),
          st_frame_line(f, f->ip));
}

/* Print p's stack, innermost first, skipping the exception machinery;
** very deep stacks show their top and bottom. */
void st_backtrace(VM *vm, Proc *p, FILE *out) {
  long n = (long)(p->f - p->frames), shown = 0;
  for (long k = n; k >= 1; k--) {
    Frame *f = p->frames + k;
    if (f->m->flags & MF_HIDDEN) continue;
    if (shown == 40 && k > 10) {
      fprintf(out, "  ... (%ld more frames)\n", k - 10);
      k = 11;
      shown++;
      continue;
    }
    print_frame(vm, f, out);
    shown++;
  }
}
