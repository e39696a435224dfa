/*
** vm-hooks/mark.c: the markers (see vm-hooks/mark.h), spy_tick and
** spy_tick_next, and the host's side of the trip words.
**
** Signal safety. The handler reads only its thread's bound slot (a
** thread-local with the initial-exec model, as in native.c, so a stale
** timer signal after unbind finds NULL rather than a freed slot), the
** slot's atomics and the clock, and stores the mark (spyH_mark: two
** atomic stores).
** errno is saved. SPYH_MARK_SIG is never blocked by the library; a host
** that blocks it gets its samples from the sampler's backup marks.
*/
#include "config.h"

#include "vm-hooks/mark.h"

#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "vm-hooks/clock.h"
#include "vm-hooks/due.h"

#define RELAXED memory_order_relaxed

static __thread spy_vm *tl_vm __attribute__((tls_model("initial-exec")));

static pthread_mutex_t install_lock = PTHREAD_MUTEX_INITIALIZER;
static int installed; /* under install_lock */
static atomic_uint_least64_t nsignals;

/* Mark v if its deadline has passed and it has no mark pending. */
static inline void mark_if_due(spy_vm *v) {
  if (!spyH_active(v)) return;
  uint64_t now = spyH_now();
  if (atomic_load_explicit(&v->deadline_pub, RELAXED) <= now) spyH_mark(v, now);
}

/* The timer's signal: mark the thread it interrupted. A signal from
** anywhere else (kill, sigqueue) is ignored. */
static void on_mark(int sig, siginfo_t *si, void *uc) {
  (void)sig;
  (void)uc;
  int saved = errno;
  spy_vm *v = tl_vm;
  if (v && si && si->si_code == SI_TIMER) {
    atomic_fetch_add_explicit(&nsignals, 1, RELAXED);
    mark_if_due(v);
  }
  errno = saved;
}

uint64_t spyH_mark_signals(void) {
  return atomic_load_explicit(&nsignals, RELAXED);
}

/* Installed once and left installed, like native.c's handler: a timer
** signal still pending after the last unbind must find a handler that
** ignores it, not the default action (which ends the process). */
int spyH_mark_install(void) {
  int rc = 0;
  pthread_mutex_lock(&install_lock);
  if (!installed) {
    struct sigaction old, sa;
    memset(&sa, 0, sizeof sa);
    if (sigaction(SPYH_MARK_SIG, NULL, &old) != 0) {
      rc = SPY_ENOTSUP;
    } else if ((old.sa_flags & SA_SIGINFO) ||
               (old.sa_handler != SIG_DFL && old.sa_handler != SIG_IGN)) {
      rc = SPY_EEXIST; /* the host's own use of this signal */
    } else {
      sa.sa_sigaction = on_mark;
      sa.sa_flags = SA_SIGINFO | SA_RESTART;
      sigemptyset(&sa.sa_mask);
      if (sigaction(SPYH_MARK_SIG, &sa, NULL) != 0) rc = SPY_ENOTSUP;
      else installed = 1;
    }
  }
  pthread_mutex_unlock(&install_lock);
  return rc;
}

int spyH_marker_bind(spyH_marker *m, spy_vm *v, spy_marker kind) {
  memset(m, 0, sizeof *m);
  m->kind = kind;
  m->v = v;
  if (kind != SPY_MARKER_SIGNAL) return 0;
  int rc = spyH_mark_install();
  if (rc) return rc;
  struct sigevent ev;
  memset(&ev, 0, sizeof ev);
  ev.sigev_notify = SIGEV_THREAD_ID;
  ev.sigev_signo = SPYH_MARK_SIG;
  ev._sigev_un._tid = (pid_t)syscall(SYS_gettid);
  if (timer_create(CLOCK_MONOTONIC, &ev, &m->timer) != 0) return SPY_ENOTSUP;
  m->have_timer = 1;
  atomic_signal_fence(memory_order_seq_cst);
  tl_vm = v;
  atomic_signal_fence(memory_order_seq_cst);
  return 0;
}

void spyH_marker_arm(spyH_marker *m, uint64_t origin, uint64_t interval) {
  if (!m->have_timer) return;
  uint64_t now = spyH_now(), mono = spyH_mono_ns();
  uint64_t next = origin + ((now - origin) / interval + 1) * interval;
  uint64_t iv_ns = spyH_ticks_to_ns(interval);
  if (iv_ns == 0) iv_ns = 1;
  uint64_t at = mono + spyH_ticks_to_ns(next - now) + iv_ns / 4;
  struct itimerspec its = {
      {(time_t)(iv_ns / 1000000000u), (long)(iv_ns % 1000000000u)},
      {(time_t)(at / 1000000000u), (long)(at % 1000000000u)}};
  timer_settime(m->timer, TIMER_ABSTIME, &its, NULL);
}

void spyH_marker_disarm(spyH_marker *m) {
  if (!m->have_timer) return;
  struct itimerspec its;
  memset(&its, 0, sizeof its);
  timer_settime(m->timer, 0, &its, NULL);
}

void spyH_marker_unbind(spyH_marker *m) {
  atomic_signal_fence(memory_order_seq_cst);
  if (tl_vm == m->v) tl_vm = NULL;
  atomic_signal_fence(memory_order_seq_cst);
  if (m->have_timer) timer_delete(m->timer);
  m->have_timer = 0;
}

/* The host's periodic slow path: one clock read against the deadline.
** Out of line: hosts call it every few microseconds, where a call costs
** nothing, and the deadline stays private. A pending mark is renewed, so
** that its marked_upto covers the grid points passed since (a tick just
** before a primitive's end charges the primitive with all of them). */
void spy_tick_slow_(spy_vm *v) {
  /* Only the tick marker's: a tick mark mixed with another marker's would
  ** come at the host's checks, a lag that depends on what runs there. */
  if (v->cfg && v->cfg->tick_marker) mark_if_due(v);
}

/* spy_tick_next: the countdown that brings the host's next tick just
** before the deadline, in the program's time (vm-hooks/due.h,
** spyH_debt_add: the clock less the library's visits).
**
** The host's checks come at a pace (program time per check, over the
** last 64 ticks' windows, weighted by their length) that predicts where
** the next tick lands; each tick aims half way to `lead` before the
** deadline, so that the last ticks count few checks and land where aimed
** even if the pace is off by half. Within lead of the deadline (or when
** the next check might come after it) the thread goes near: every hook
** reads the clock until the deadline passes, and the first hook after it
** takes the sample -- at a poll point, whatever the host's checks are
** doing, so the sample is charged to the code that ran when it fell due.
**
** lead is at least SPYH_LEAD_CHECKS checks at the pace: every hook in
** those last checks is a visit (fib: 21 a sample with 8 checks, 1.10x at
** 100 kHz; 1.07x with 4, the rate taken 98.5 % either way; with 2 the
** rate fell to 96 %, more deadlines skipped). A tick aimed at a
** few checks that still came after the deadline found checks farther
** apart than lead (a method or primitive that runs long without a
** check): lead grows by how late the tick was, up to an interval,
** and each near state started wears 1/16 of it off again. A deadline that
** passes before the thread went near (the pace misjudged, a long gap, the
** virtual machine's 10-50 us stalls, which come ~900 times a second on
** this project's KVM guests) is skipped rather than taken at the next
** poll: that poll follows a check, a place the profile must not favour.
** No time is lost: the skipped grid time goes to a backlog that the next
** samples of the interpreter's own code take one interval each (hooks.c,
** due), charged where unbiased samples fall -- spread, so that a stall of
** 40 intervals is not one sample's lottery, and not to primitives and
** GCs, in which no deadline is skipped (their ends watch it). */
#define SPYH_LEAD_CHECKS 4
static uint64_t checks_for(uint64_t pace, uint64_t ticks) {
  return pace ? (ticks << 8) / pace : (uint64_t)-1;
}

static int tick_next(spy_vm *v, int counted, int most, uint64_t now) {
  uint64_t prog = now - v->tick_spent; /* monotonic program time */
  if (v->tick_uncounted) { /* the countdown was run out early */
    counted = (uint64_t)counted > v->tick_uncounted
                  ? counted - (int)v->tick_uncounted
                  : 1;
    v->tick_uncounted = 0;
  }
  uint64_t window = 0; /* the last window's pace */
  if (v->tick_at && counted > 0 && prog > v->tick_at) {
    v->tick_time += (prog - v->tick_at) - v->tick_time / 64;
    v->tick_checks += (uint64_t)counted - v->tick_checks / 64;
    window = ((prog - v->tick_at) << 8) / (uint64_t)counted;
  }
  v->tick_at = prog;
  uint64_t iv = v->cfg->interval;
  v->tick_pace = v->tick_checks ? (v->tick_time << 8) / v->tick_checks : 0;
  /* Aim with the slower of the two: a pace that lags a change (or a
  ** window with a long gap) would aim past the deadline; a slow one only
  ** brings the next tick early. */
  uint64_t aim = window > v->tick_pace ? window : v->tick_pace;
  uint64_t least = (v->tick_pace * SPYH_LEAD_CHECKS) >> 8;
  if (v->tick_lead < least) v->tick_lead = least;
  if (v->tick_lead > iv) v->tick_lead = iv;
  /* Against the deadline: the clock less this sample's debt. */
  uint64_t t = now - v->tick_debt;
  uint64_t d = atomic_load_explicit(&v->deadline_pub, RELAXED);
  int trap = __atomic_load_n(&v->hot.trap_, __ATOMIC_RELAXED);
  if (d && d <= t && trap == 0 && d > v->last) { /* passed unwatched */
    if (counted <= 4) {
      uint64_t lead = v->tick_lead + (t - d);
      v->tick_lead = lead < iv ? lead : iv;
    }
    uint64_t g = d + (t - d) / iv * iv; /* the last grid point passed */
    v->tick_backlog += g - v->last;
    v->last = g;
    d = g + iv;
    v->deadline = d;
    atomic_store_explicit(&v->deadline_pub, d, RELAXED);
  } else if (d <= t) { /* near or marked already, or not yet synced */
    if (trap != 1) spyH_mark(v, now);
    trap = 1;
    d = d ? d + ((t - d) / iv + 1) * iv : t + iv;
  }
  uint64_t rem = d - t;
  uint64_t n = rem > v->tick_lead
                   ? checks_for(aim, (rem - v->tick_lead) / 2)
                   : 0;
  if (n == 0 && trap == 0) { /* the next check may come after lead */
    spyH_near(v);
    v->tick_lead -= v->tick_lead / 16;
    n = checks_for(v->tick_pace, rem) + 1; /* a loop's poll is its tick */
  } else if (n == 0) {
    n = 1; /* a mark is pending: go near once its sample is taken */
  }
  v->tick_n = n < (uint64_t)most ? n : (uint64_t)most;
  return (int)v->tick_n;
}

int spy_tick_word(spy_vm *v, int *countdown) {
  if (!v || spyH_is_stopped_vm(v)) return SPY_EINVAL;
  v->tick_word = countdown;
  v->tick_uncounted = 0;
  return 0;
}

/* spy_options.self_drain: the thread drains its rings here, on the
** sampler thread's schedule (a run's first drains 1, 2, 4 ... ms apart,
** then every drain_period), and tries again at its next tick when the
** lock is busy. The drain's time is the library's, not the program's: it
** joins the debt as a visit does (vm-hooks/due.h), whole -- the deadline
** moves past it, so that the code the ticks come from is not charged
** with it. */
void spyH_drain_start(spy_vm *v) {
  v->drain_step = spyH_ns_to_ticks(SPYH_FIRST_DRAIN_NS);
  v->drain_at = v->cfg->self_drain ? v->last + v->drain_step : UINT64_MAX;
}

static void self_drain(spy_vm *v, uint64_t now) {
  int rc = v->cfg->drain(v);
  if (rc > 0) {
    v->drain_at = now + v->drain_step;
    v->drain_step = v->drain_step * 2 < v->cfg->drain_period
                        ? v->drain_step * 2
                        : v->cfg->drain_period;
  } else if (rc < 0) {
    v->drain_at = UINT64_MAX; /* the sampler thread drains */
  }
  uint64_t out = spyH_now();
  v->tick_debt += out - now;
  v->tick_spent += out - now;
  v->tick_out = out;
  atomic_fetch_add_explicit(&v->hook_ticks, out - now, RELAXED);
}

int spy_tick_next_slow_(spy_vm *v, int counted, int most) {
  if (!v->cfg || !v->cfg->tick_marker || most < 1) return most;
  uint64_t now = spyH_now();
  int n = tick_next(v, counted, most, now);
  spyH_debt_add(v, now);
  if (SPY_UNLIKELY(v->tick_out >= v->drain_at)) self_drain(v, v->tick_out);
  spyH_until(v);
  return n;
}

/* ------------------------------------------------------------------------
** Trip words (spy_trip_word in <spyon/hooks.h>; the marking side's half is
** spyH_raise in vm-hooks/due.h)
** --------------------------------------------------------------------- */

int spy_trip_word(spy_vm *v, uintptr_t *word, uintptr_t trip) {
  if (!v || !word || spyH_is_stopped_vm(v)) return SPY_EINVAL;
  unsigned n = atomic_load_explicit(&v->trip_n, memory_order_relaxed);
  if (n >= SPY_TRIP_MAX) return SPY_EFULL;
  v->trip_word[n] = word;
  v->trip_value[n] = trip;
  atomic_store_explicit(&v->trip_n, n + 1, memory_order_release);
  if (__atomic_load_n(&v->hot.trap_, __ATOMIC_SEQ_CST))
    spy_trip_store(word, trip); /* a mark is pending */
  return 0;
}

int spy_trip_state(spy_vm *v) {
  int t = __atomic_load_n(&v->hot.trap_, __ATOMIC_SEQ_CST);
  if (t == SPYH_NEAR) /* the take reads the clock again: it only advances */
    return spyH_near_due(v, spyH_now()) ? SPY_TRIP_TAKE : SPY_TRIP_WAIT;
  if (t) return SPY_TRIP_TAKE;
  if (atomic_load_explicit(&v->trip_marking, memory_order_seq_cst))
    return SPY_TRIP_WAIT;
  return SPY_TRIP_RESTORE;
}

int spy_trip_rearm(spy_vm *v) {
  if (!__atomic_load_n(&v->hot.trap_, __ATOMIC_SEQ_CST)) return 0;
  if (spyH_is_stopped_vm(v)) return 1;
  spyH_trip_words(v, atomic_load_explicit(&v->trip_n, memory_order_relaxed));
  return 1;
}
