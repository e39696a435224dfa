/*
** bench/lua/sigfloor.c: what one timer signal costs on this machine, the
** floor under any sampler that interrupts the thread it samples (the Lua
** host's signal-armed hook does: docs/lua.md). A fixed spin loop runs with
** no timer, then with a per-thread CLOCK_MONOTONIC timer (SIGEV_THREAD_ID,
** as the host's) signalling it every interval to an empty handler; the
** difference in the thread's CPU time per signal is the cost. Built and
** run by bench_lua.sh:  sigfloor INTERVAL_US
*/
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static volatile long hits;
static void on_sig(int s) {
  (void)s;
  hits++;
}

static double cpu(void) {
  struct timespec t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static double spin(void) {
  double t0 = cpu();
  volatile unsigned long x = 0;
  for (unsigned long i = 0; i < 300000000UL; i++) x += i;
  return cpu() - t0;
}

int main(int argc, char **argv) {
  long iv = argc > 1 ? atol(argv[1]) : 100;
  if (iv <= 0) {
    fprintf(stderr, "usage: sigfloor INTERVAL_US\n");
    return 2;
  }
  double bare = spin();
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_sig;
  sa.sa_flags = SA_RESTART;
  sigaction(SIGRTMIN + 5, &sa, NULL);
  struct sigevent ev;
  memset(&ev, 0, sizeof ev);
  ev.sigev_notify = SIGEV_THREAD_ID;
  ev.sigev_signo = SIGRTMIN + 5;
  ev._sigev_un._tid = (pid_t)syscall(SYS_gettid);
  timer_t t;
  if (timer_create(CLOCK_MONOTONIC, &ev, &t) != 0) {
    perror("timer_create");
    return 1;
  }
  struct itimerspec it = {{iv / 1000000, (iv % 1000000) * 1000},
                          {iv / 1000000, (iv % 1000000) * 1000}};
  timer_settime(t, 0, &it, NULL);
  double with = spin();
  long n = hits;
  if (n < 1) n = 1;
  /* us per signal, and the CPU ratio at this interval */
  printf("%.1f %.2f\n", (with - bare) / (double)n * 1e6, with / bare);
  return 0;
}
