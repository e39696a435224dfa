/*
** hosts/st/call.h: the call protocol (as Lua keeps luaD_precall in ldo.c
** apart from the dispatch loop in lvm.c).
**
** A send finds its method (inline cache, then lookup), runs it as a
** primitive or activates a frame for it; a block's value activates a frame
** for the block's method with the closure's copied values; a return pops a
** frame. The frame pushes are small and run at every send, so they are
** inline functions here, used by the loop in interp.c, which keeps the
** interpreter state (ip, sp, frame, method) in its locals. Everything else
** (doesNotUnderstand:, mustBeBoolean, perform:, non-local returns, the
** control primitives, sort:'s driver frame, a process's bottom) is out of
** line in call.c and works on the state the loop has saved in the running
** Proc; it answers what the loop does next (StGo).
**
** Invariants (checked by st_assert in debug builds):
**   - frames of a process lie in [frames, frames_end), frames[0] is the
**     bottom sentinel (m == NULL), and every other live frame has a method;
**   - a frame's values start at its base, inside [stack, stack_end), at or
**     above its caller's base;
**   - a frame is pushed only after the room check (st_frame_room), which
**     is also the send's poll point; the bottom check (st_frame_last) is
**     the return's.
*/
#ifndef ST_CALL_H
#define ST_CALL_H

#include "hosts/st/st.h"


/* What the loop does after an out-of-line part of the protocol. */
typedef enum StGo {
  ST_GO_CALL,     /* send c->t to c->rcv (primitive or activation) */
  ST_GO_ACTIVATE, /* activate c->t (a method, never its primitive) */
  ST_GO_BLOCK,    /* c->rcv (a BlockClosure) value with c->na arguments;
                     c->t: the value method to fall back on, or NULL */
  ST_GO_RETURN,   /* return c->res from frame c->to */
  ST_GO_RELOAD,   /* reload the (possibly other) process's state */
  ST_GO_RESTART,  /* reload: a frame restarted (poll and interrupt check) */
  ST_GO_DONE,     /* the script's main process returned from its bottom */
  ST_GO_STOP      /* the run must stop */
} StGo;

/* ---- the inline parts: frame pushes ------------------------------------ */

/* The room check at every activation and the bottom check at every
** return are also the poll points of the profiler, at no cost of their
** own: they compare against vm->flimit (the running process's frames_end)
** and vm->fstop (its first frame), which are trip words (spy_trip_word in
** <spyon/hooks.h>). When a sample falls due the marking side sets flimit
** to 0 and fstop to the highest address, the check fails, and its slow
** path (st_call_room, st_call_last) restores them and takes the sample:
** at a send before the callee's frame exists, at a return before the
** frame is popped, so that a sample is charged to the method that ran
** when it fell due. */
#define ST_TRIP_FLIMIT ((uintptr_t)0)
#define ST_TRIP_FSTOP (~(uintptr_t)0)
_Static_assert(sizeof(uintptr_t) == sizeof(Frame *),
               "frame addresses are compared as uintptr_t");

/* The words are read with a plain load, folded into the compare (an
** atomic or volatile load is not, and costs an instruction per send and
** return). The marking side stores them atomically from another thread;
** an aligned word cannot tear, and the loop's stores through Value
** pointers (uintptr_t, as the words) keep the compiler from caching them
** in a register. Under ThreadSanitizer they are read as spyon/hooks.h
** says, with spy_trip_load. */
#if defined(__SANITIZE_THREAD__)
#define ST_WORD(w) spy_trip_load(&(w))
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define ST_WORD(w) spy_trip_load(&(w))
#endif
#endif
#ifndef ST_WORD
#define ST_WORD(w) (w)
#endif

/* Is there room for frame nf whose values reach up to top? */
static inline int st_frame_room(const VM *vm, const Proc *P,
                                const Frame *nf, const Value *top) {
  return (uintptr_t)nf < ST_WORD(vm->flimit) && top < P->stack_end;
}

/* Is f (about to return) perhaps the process's first frame? */
static inline int st_frame_last(const VM *vm, const Frame *f) {
  return (uintptr_t)f <= ST_WORD(vm->fstop);
}

/* Activate method t above frame f (which resumes at ip): the receiver and
** na arguments are the top values of *spp; the temporaries are pushed as
** nil. The room has been checked. Returns the new frame. */
static inline Frame *st_push_method(VM *vm, Frame *f, const Instr *ip,
                                    Value **spp, Method *t, int na) {
  Value *sp = *spp;
  Frame *nf = f + 1;
  st_assert(t->nargs == na && t->code != NULL);
  st_assert(sp - na - 1 >= f->base && f->m != NULL);
  f->ip = ip;
  nf->base = sp - na - 1;
  nf->m = t;
  nf->closure = 0;
  nf->serial = ++vm->serial;
  for (int k = t->ntemps; k > 0; k--) *sp++ = vm->nil;
  *spp = sp;
  return nf;
}

/* Activate block method bm of closure cl above frame f, with the closure
** and na arguments the top values of *spp: the closure's slot becomes the
** home receiver, the copied values and the temporaries follow the
** arguments. The room has been checked. Returns the new frame. */
static inline Frame *st_push_block(VM *vm, Frame *f, const Instr *ip,
                                   Value **spp, Value cl, Method *bm,
                                   int na) {
  Value *sp = *spp;
  Frame *nf = f + 1;
  st_assert(bm->nargs == na && sp - na - 1 >= f->base);
  st_assert(IS_PTR(cl) && OBJ(cl)->cls == CID_BLOCK);
  f->ip = ip;
  nf->base = sp - na - 1;
  nf->base[0] = SLOTS(cl)[BLK_RECEIVER];
  nf->m = bm;
  nf->closure = cl;
  nf->serial = ++vm->serial;
  for (int k = 0; k < bm->ncopied; k++) *sp++ = SLOTS(cl)[BLK_NSLOTS + k];
  for (int k = bm->ntemps; k > 0; k--) *sp++ = vm->nil;
  *spp = sp;
  return nf;
}

/* ---- the out-of-line parts (call.c) ------------------------------------ */

/* Set vm->flimit and vm->fstop for the running process (after a process
** switch, and at the loop's start), tripped again if a sample is due. */
void st_call_words(VM *vm);

/* A poll point without a check of its own (a loop's interrupt check),
** state saved: take a due sample and restore the words. */
void st_call_poll(VM *vm);

/* The slow path of st_frame_room, state saved: take a sample that fell
** due, then check the room for real for a frame above the top one whose
** values reach n above the saved stack top. Returns 1 if the frame fits;
** else reports the stack overflow and stops the run (0). */
int st_call_room(VM *vm, size_t n);

/* The slow path of st_frame_last, state saved (P->f returns): take a
** sample that fell due; returns whether P->f is the process's first
** frame. */
int st_call_last(VM *vm);

/* c->rcv (of class cid) does not understand sel with the c->na arguments
** on the stack: replace them by a Message and send doesNotUnderstand:.
** Sets c->sp, c->na and c->t. */
void st_call_dnu(VM *vm, Value sel, uint32_t cid, StCall *c);

/* The jump's condition *c->sp is not a Boolean: send it mustBeBoolean. */
void st_call_not_boolean(VM *vm, StCall *c);

/* The global binding b is unbound: send nil undeclaredVariable: #Name. */
void st_call_undeclared(VM *vm, Value b, StCall *c);

/* A block's non-local return (^) of c->res from frame f, which is on top
** (state saved): either the home frame (ST_GO_RETURN, c->to) or a method
** the loop sends (ST_GO_CALL: cannotReturn:, or nonLocalReturn:to: when
** unwind blocks lie in between). */
StGo st_call_nlr(VM *vm, Frame *f, StCall *c);

/* A control primitive other than a block's plain value (st_prim(t->prim)
** ->ctl), sent to c->rcv with c->na arguments; the loop's state is saved
** (c->sp is the stack top). */
StGo st_call_control(VM *vm, int ctl, StCall *c);

/* The driver frame of sort: with a block (OP_PRIMSTEP), on top, state
** saved, base its values: run the merge until it needs the block (then
** ST_GO_BLOCK, the block and the pair pushed) or the receiver is sorted
** (ST_GO_RETURN of the receiver from this frame). */
StGo st_call_sort_step(VM *vm, Frame *f, StCall *c);

/* The running process returned from its bottom frame (state saved):
** ST_GO_DONE when it is the script's main process, ST_GO_STOP when the
** run stops, else ST_GO_RELOAD (another process runs now). */
StGo st_call_bottom(VM *vm);

/* Check the invariants above for process p (debug builds; st_assert). */
void st_call_check(const VM *vm, const Proc *p);

#endif
