/*
** hosts/st/stprof.c: the interpreter as a spyon host.
**
** Frame keys are (receiver class id << 32) | method id: method ids are
** stable for the run (methods are never freed) and the receiver class lets
** a report say "SmallInteger(Integer)>>timesRepeat:". Names are given
** lazily: the profiler asks, from the interpreter thread, for keys it saw.
** The walker reads the running process's saved frames; every hook site in
** the interpreter saves its state first.
*/
#include "config.h"

#include "hosts/st/call.h"
#include "hosts/st/symbols.h"
#include "hosts/st/classes.h"
#include "hosts/st/proc.h"

#include <spyon/report.h>

#include <stdlib.h>
#include <string.h>

/* Without an attached profiler the hooks run on the library's stopped
** stand-in, so the dispatch loop needs no NULL test. */
void st_prof_init(VM *vm) {
  memset(&vm->prof, 0, sizeof vm->prof);
#ifndef SPY_DISABLE
  vm->prof.v = spy_vm_stopped();
#endif
}

#ifdef SPY_DISABLE

void st_prof_poll(VM *vm) { (void)vm; }
void st_prof_work(VM *vm) { (void)vm; }
void st_prof_tick(VM *vm) { (void)vm; }
void st_prof_process_end(VM *vm, uint64_t pid) { (void)vm; (void)pid; }
uint32_t st_prof_load_begin(VM *vm, const char *file) {
  (void)vm; (void)file;
  return 0;
}
void st_prof_load_end(VM *vm, uint32_t prev) { (void)vm; (void)prev; }
void st_prof_load_poll(VM *vm) { (void)vm; }
void st_prof_switch(VM *vm, uint64_t pid, const char *name, int rename) {
  (void)vm; (void)pid; (void)name; (void)rename;
}
int st_prof_start(VM *vm, const spy_options *o) {
  (void)o;
  snprintf(vm->errbuf, sizeof vm->errbuf,
           "this interpreter was built without the profiler");
  return SPY_ENOTSUP;
}
int st_prof_stop(VM *vm, spy_profile **out) {
  (void)vm;
  if (out) *out = NULL;
  return SPY_ESTATE;
}
void st_prof_free(VM *vm) { (void)vm; }
int st_prof_control(VM *vm, uintptr_t *args, int na) {
  /* Without a profiler, Profiler spyOn: just runs its block. */
  args[0] = vm->vfalse;
  vm->cur->sp -= na;
  return 0;
}

#else

/* Out of line and cold: the poll points in the dispatch loop stay one
** load and one branch. Timer mode leaves the sample to the next interrupt
** check (an activation or a backward jump), where MessageTally's VM takes
** it, so that it keeps showing what such a profiler shows. */
#if defined(__GNUC__)
__attribute__((noinline, cold))
#endif
void st_prof_poll(VM *vm) {
  if (!vm->prof.timer) spy_poll(vm->prof.v);
}

void st_prof_work(VM *vm) {
  if (vm->prof.timer) return;
  spy_tick(vm->prof.v);
  spy_poll(vm->prof.v);
}

void st_prof_tick(VM *vm) {
  if (!vm->prof.timer) spy_tick(vm->prof.v);
}

/* The walk is incremental, so that a sample costs the frames made since
** the previous one, not the stack's depth (a 100 000-deep recursion). A
** frame's activation serial says whether an earlier walk reported it: a
** frame with a serial at most vm->serial at the last walk existed then
** and, still being live now, was on the stack then (frames are popped
** last in, first out), so the last walk of this process reported it. The
** library allows an incremental walk only when that walk was of the same
** process. The serials make the contract's "seen" mark, and a frame's
** index its depth from the root, so the dispatch loop stores nothing more
** per activation. A restarted frame (retry) keeps its serial and its
** key. */
static void walk(void *ud, spy_stack *st) {
  VM *vm = ud;
  uint64_t seen = vm->prof.walked;
  vm->prof.walked = vm->serial;
  if (vm->idle) {
    spy_stack_push(st, ST_IDLE_KEY);
    return;
  }
  Proc *p = vm->cur;
  uint64_t below = vm->prof.loading ? 1 : 0; /* the [load] frame */
  for (Frame *f = p->f; f > p->frames; f--) {
    if (f->serial <= seen && spy_stack_incremental(st)) {
      spy_stack_unchanged(st, (uint64_t)(f - p->frames) + below);
      return;
    }
    spy_stack_push(st, ((uint64_t)st_cid(vm, f->base[0]) << 32) | f->m->id);
  }
  if (vm->prof.loading)
    spy_stack_push(st, ST_LOAD_KEY | (vm->prof.loading - 1));
}

/* A process ended: the profiler may drop what it kept for it (brackets
** left open when it was switched out inside a primitive). */
void st_prof_process_end(VM *vm, uint64_t pid) {
  if (vm->prof.attached) spy_process_end(vm->prof.v, pid);
}

/* A source file as profiles name it: kernel files as kernel/NAME.st (as
** backtraces do), the others by their last component, which is enough
** to tell a script's lines apart and keeps tree lines short. */
static const char *file_label(VM *vm, const char *file, char *buf,
                              size_t len) {
  if (!file) return "?";
  const char *slash = strrchr(file, '/'), *base = slash ? slash + 1 : file;
  size_t k = vm->kernel_dir ? strlen(vm->kernel_dir) : 0;
  if (k && strncmp(file, vm->kernel_dir, k) == 0 && file[k] == '/') {
    snprintf(buf, len, "kernel/%s", base);
    return buf;
  }
  return base;
}

/* Profile names. Methods read as in backtraces, "Class>>sel" with the
** defining class in parentheses when inherited. Top-level statements and
** blocks are named by where they are, since their selector says nothing:
** "DoIt (strings.st:12)", "[] in DoIt (strings.st:12)" and
** "[] in Foo>>bar (foo.st:30)" (the line of the statement or of the
** block's bracket), so that the statements of a script are roots of
** their own and two blocks of one method are two leaves. */
static void frame_name(VM *vm, Method *m, uint32_t rcid, char *buf,
                       size_t len) {
  char fb[300];
  const char *file = file_label(vm, m->file, fb, sizeof fb);
  if (m->home->flags & MF_DOIT) {
    char pre[40] = "";
    if (m->depth > 0) {
      size_t d = m->depth < 8 ? m->depth : 8, k = 0;
      for (size_t i = 0; i < d; i++) pre[k++] = '[';
      for (size_t i = 0; i < d; i++) pre[k++] = ']';
      snprintf(pre + k, sizeof pre - k, " in ");
    }
    snprintf(buf, len, "%sDoIt (%s:%d)", pre, file, m->line);
    return;
  }
  st_method_name(vm, m, rcid, buf, len);
  if (m->depth > 0) {
    size_t n = strlen(buf);
    snprintf(buf + n, len - n, " (%s:%d)", file, m->line);
  }
}

static int name_key(void *ud, uint64_t key, char *buf, size_t len) {
  VM *vm = ud;
  char fb[300];
  if (key == ST_IDLE_KEY) {
    snprintf(buf, len, "ProcessorScheduler>>idle");
    return 0;
  }
  if ((key & ~(uint64_t)0xFFFFFFFF) == ST_LOAD_KEY) {
    uint32_t fi = (uint32_t)key;
    if (fi >= vm->nfiles) return 1;
    snprintf(buf, len, "[load] %s",
             file_label(vm, vm->files[fi], fb, sizeof fb));
    return 0;
  }
  uint32_t mid = (uint32_t)key, cid = (uint32_t)(key >> 32);
  if (mid >= vm->nmethods || cid >= vm->nclasses) return 1;
  frame_name(vm, vm->methods[mid], cid, buf, len);
  return 0;
}

/* Loading a file: the walker shows a "[load] FILE" frame at the root
** while the loader reads and compiles, and the loader polls after every
** method it compiles and before every statement it runs (the running
** code changes there), so that loading and compiling a script is charged
** to its own node instead of to the first statement that runs after it.
** No interrupt check runs while it compiles: these polls tick too
** (spy_tick, one clock read), or a load would be sampled only by the
** sampler's backstop, every 10 ms. */
uint32_t st_prof_load_begin(VM *vm, const char *file) {
  uint32_t prev = vm->prof.loading;
  for (uint32_t i = 0; i < vm->nfiles; i++)
    if (vm->files[i] == file) vm->prof.loading = i + 1;
  return prev;
}

void st_prof_load_end(VM *vm, uint32_t prev) {
  st_prof_load_poll(vm);
  vm->prof.loading = prev;
}

void st_prof_load_poll(VM *vm) {
  spy_tick(vm->prof.v);
  spy_poll(vm->prof.v);
}

static int name_process(void *ud, uint64_t pid, char *buf, size_t len) {
  (void)ud;
  snprintf(buf, len, pid == ST_IDLE_PID ? "idle" : "Process %llu",
           (unsigned long long)pid);
  return 0;
}

void st_prof_switch(VM *vm, uint64_t pid, const char *name, int rename) {
  StProf *pr = &vm->prof;
  if (!pr->attached) return;
  spy_process_switch(pr->v, pid);
  size_t byte = (size_t)(pid / 8);
  if (byte >= pr->named_bytes) {
    size_t n = (byte + 1) * 2;
    uint8_t *b = realloc(pr->named, n);
    if (!b) return;
    memset(b + pr->named_bytes, 0, n - pr->named_bytes);
    pr->named = b;
    pr->named_bytes = n;
  }
  uint8_t bit = (uint8_t)(1u << (pid % 8));
  if (rename || !(pr->named[byte] & bit)) {
    pr->named[byte] |= bit;
    spy_process_name(pr->v, pid, name);
  }
}

int st_prof_start(VM *vm, const spy_options *o) {
  StProf *pr = &vm->prof;
  if (pr->attached) return SPY_ESTATE;
  /* In poll mode the interrupt check ticks with spy_tick_next
  ** (st_interrupt): with the tick marker the thread drains its own rings
  ** there, and the process makes no sampler thread. */
  spy_options so;
  if (o) so = *o;
  else spy_options_init(&so);
  if (so.marker == SPY_MARKER_TICK && so.mode == SPY_MODE_POLL &&
      !so.native_stacks)
    so.self_drain = 1;
  spy_profiler *P;
  int rc = spy_profiler_new(&P, &so);
  if (rc < 0) {
    snprintf(vm->errbuf, sizeof vm->errbuf, "profiler: %s", spy_strerror(rc));
    return rc;
  }
  static const struct { const char *name, *sizes; } defs[] = {
#define ST_SPY_DEF(id, name, sizes) {name, sizes},
    ST_SPY_PRIMS(ST_SPY_DEF)
#undef ST_SPY_DEF
  };
  for (int i = 0; i < SPYP__COUNT; i++) {
    pr->prim_id[i] = spy_prim_register(P, defs[i].name, defs[i].sizes,
                                       SPY_PRIM_COST);
    if (pr->prim_id[i] < 0) {
      rc = pr->prim_id[i];
      spy_profiler_free(P);
      snprintf(vm->errbuf, sizeof vm->errbuf, "profiler: %s",
               spy_strerror(rc));
      return rc;
    }
  }
  spy_host h = {.ud = vm, .walk = walk, .name = name_key,
                .process_name = name_process};
  spy_vm *v;
  if ((rc = spy_attach(P, &h, &v)) < 0) {
    spy_profiler_free(P);
    snprintf(vm->errbuf, sizeof vm->errbuf, "profiler: %s", spy_strerror(rc));
    return rc;
  }
  pr->P = P;
  pr->v = v;
  pr->attached = 1;
  /* The send's room check and the return's bottom check are the poll
  ** points (hosts/st/call.h): the marking side trips their words. */
  /* The interrupt check's countdown is the tick's (st_interrupt): a
  ** primitive's end may run it out when a sample nears. */
  if ((rc = spy_trip_word(v, &vm->flimit, ST_TRIP_FLIMIT)) < 0 ||
      (rc = spy_trip_word(v, &vm->fstop, ST_TRIP_FSTOP)) < 0 ||
      (rc = spy_tick_word(v, &vm->icount)) < 0) {
    st_prof_stop(vm, NULL);
    snprintf(vm->errbuf, sizeof vm->errbuf, "profiler: %s", spy_strerror(rc));
    return rc;
  }
  if ((rc = spy_start(P)) < 0) {
    st_prof_stop(vm, NULL);
    snprintf(vm->errbuf, sizeof vm->errbuf, "profiler: %s", spy_strerror(rc));
    return rc;
  }
  pr->running = 1;
  /* Poll mode takes samples at the dispatch loop's poll points (every
  ** send, return and backward jump: st_prof_due), so a sample is charged
  ** to the method that ran when it fell due. Timer mode polls at every
  ** interrupt check instead, as MessageTally's VM does, so that it shows
  ** what such a profiler shows. */
  pr->timer = o && o->mode == SPY_MODE_TIMER;
  if (pr->timer) st_interrupt_soon(vm); /* interrupt checks poll from now on */
  /* Tell it which process runs now. */
  if (vm->cur) st_switch_to(vm, vm->cur, 1);
  return 0;
}

int st_prof_stop(VM *vm, spy_profile **out) {
  StProf *pr = &vm->prof;
  if (out) *out = NULL;
  if (!pr->attached) return SPY_ESTATE;
  int rc = 0;
  if (pr->running) rc = spy_stop(pr->P);
  pr->running = 0;
  if (out && rc == 0) rc = spy_profile_take(pr->P, out);
  spy_detach(pr->v);
  spy_profiler_free(pr->P);
  free(pr->named);
  st_prof_init(vm);
  return rc;
}

void st_prof_free(VM *vm) {
  st_prof_stop(vm, NULL);
}

/* Profiler class>>primSpy: #start with: usec / primSpy: #stop with: path.
** Start answers false when a profiler already runs (spyon profiles the
** whole script): the block then just runs under that profile. */
int st_prof_control(VM *vm, uintptr_t *args, int na) {
  char op[16], path[4096];
  if (na != 2 || !IS_PTR(args[1]) || OBJ(args[1])->cls != CID_SYMBOL)
    return -1;
  st_cstr(args[1], op, sizeof op);
  Value result = vm->vfalse;
  if (!strcmp(op, "start")) {
    if (!vm->prof.attached) {
      spy_options o;
      spy_options_init(&o);
      /* The interrupt check ticks (st_interrupt): the CLI's choice too
      ** (cli/run.c), with no wake-ups at the sampling rate. */
      o.marker = SPY_MARKER_TICK;
      if (IS_INT(args[2]) && INT_VAL(args[2]) > 0)
        o.interval_ns = (uint64_t)INT_VAL(args[2]) * 1000u;
      if (st_prof_start(vm, &o) == 0) {
        vm->prof.owned = 1;
        result = vm->vtrue;
      } else {
        fflush(stdout);
        fprintf(stderr, "%s\n", vm->errbuf);
      }
    }
  } else if (!strcmp(op, "stop")) {
    if (!vm->prof.owned) return -1;
    spy_profile *prof;
    vm->prof.owned = 0;
    if (st_prof_stop(vm, &prof) == 0 && prof) {
      Value pv = args[2];
      if (IS_PTR(pv) && pv != vm->nil &&
          (OBJ(pv)->cls == CID_STRING || OBJ(pv)->cls == CID_SYMBOL)) {
        char err[512];
        st_cstr(pv, path, sizeof path);
        if (spy_profile_save(prof, path, err, sizeof err) < 0) {
          fflush(stdout);
          fprintf(stderr, "Profiler: %s\n", err);
        }
      } else {
        spy_report_options ro;
        spy_report_options_init(&ro);
        fflush(stdout);
        spy_report_text(prof, stdout, &ro);
      }
      spy_profile_free(prof);
      result = vm->vtrue;
    }
  } else {
    return -1;
  }
  args[0] = result;
  vm->cur->sp -= na;
  return 0;
}

#endif
