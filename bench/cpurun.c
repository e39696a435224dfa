/*
** bench/cpurun.c: run a command and say what CPU it took, all threads.
**
**   bench/cpurun STATSFILE COMMAND [ARGS...]
**
** The command's stdout and stderr pass through. When it exits, one line
** goes to STATSFILE: "user_us sys_us main_us wall_us status": user and
** system CPU of every thread of the process (wait4's rusage), the CPU of
** its main thread alone (the interpreter thread of spyon: the exited
** process is kept as a zombie with waitid(WNOWAIT) so that
** /proc/PID/task/PID/schedstat can still be read, in nanoseconds), the
** wall time from fork to exit, and the exit status. It exists because
** the shell's time(1) rounds to 10 ms and cannot tell the threads apart.
*/
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static uint64_t mono_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The main thread's CPU ns from schedstat's first field, or -1. */
static long long main_thread_ns(pid_t pid) {
  char path[64];
  snprintf(path, sizeof path, "/proc/%d/task/%d/schedstat", (int)pid,
           (int)pid);
  FILE *f = fopen(path, "r");
  if (!f) return -1;
  long long ns = -1;
  if (fscanf(f, "%lld", &ns) != 1) ns = -1;
  fclose(f);
  return ns;
}

int main(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: cpurun STATSFILE COMMAND [ARGS...]\n");
    return 2;
  }
  FILE *out = fopen(argv[1], "w");
  if (!out) {
    perror(argv[1]);
    return 2;
  }
  uint64_t t0 = mono_ns();
  pid_t pid = fork();
  if (pid < 0) {
    perror("cpurun: fork");
    return 2;
  }
  if (pid == 0) {
    execvp(argv[2], argv + 2);
    perror(argv[2]);
    _exit(127);
  }
  siginfo_t si;
  memset(&si, 0, sizeof si);
  if (waitid(P_PID, (id_t)pid, &si, WEXITED | WNOWAIT) != 0) {
    perror("cpurun: waitid");
    return 2;
  }
  uint64_t wall = mono_ns() - t0;
  long long main_ns = main_thread_ns(pid);
  struct rusage ru;
  int status = 0;
  if (wait4(pid, &status, 0, &ru) != pid) {
    perror("cpurun: wait4");
    return 2;
  }
  long long user = (long long)ru.ru_utime.tv_sec * 1000000 + ru.ru_utime.tv_usec;
  long long sys = (long long)ru.ru_stime.tv_sec * 1000000 + ru.ru_stime.tv_usec;
  int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  fprintf(out, "%lld %lld %lld %llu %d\n", user, sys,
          main_ns < 0 ? -1 : main_ns / 1000, (unsigned long long)(wall / 1000),
          code);
  fclose(out);
  return code;
}
