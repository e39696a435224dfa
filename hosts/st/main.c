/*
** hosts/st/main.c: the standalone interpreter, "st SCRIPT.st [args]".
**
** Built without the profiler (-DSPY_DISABLE): the baseline the profiler's
** overhead is measured against. "spyon --no-profile" runs the same
** interpreter with the hooks compiled in but stopped.
*/
#include "config.h"

#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "hosts/st/stvm.h"

static stvm *running;

static void on_sigint(int sig) {
  (void)sig;
  if (running) stvm_interrupt(running);
}

int main(int argc, char **argv) {
  if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
    fprintf(argc < 2 ? stderr : stdout,
            "usage: st SCRIPT.st [args...]\n"
            "Runs a Smalltalk script (see docs/smalltalk.md).\n");
    return argc < 2 ? 2 : 0;
  }
  stvm *vm = stvm_new(argc - 2, argv + 2);
  if (!vm) return 2;
  running = vm;
  signal(SIGINT, on_sigint);
  int r = stvm_run_file(vm, argv[1]);
  running = NULL;
  stvm_free(vm);
  return r;
}
