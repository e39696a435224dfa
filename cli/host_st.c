/*
** cli/host_st.c: the Smalltalk host of "spyon SCRIPT.st" (cli/run.c picks
** it by the script's name; it is the default). Built with hosts/st.
*/
#include "config.h"

#include <stdio.h>

#include "cli/cli.h"
#include "hosts/st/stvm.h"

static stvm *volatile current;

/* Called from cli/run.c's signal handler: only sets the VM's flag. */
static void st_interrupt(void) {
  stvm *vm = current;
  if (vm) stvm_interrupt(vm);
}

/* Make the VM, start the profiler, run the script, stop the profiler. The
** profile of what ran is handed back whatever the script did. */
static int st_run(const char *script, int argc, char **argv,
                  const spy_options *so, spy_profile **out) {
  *out = NULL;
  stvm *vm = stvm_new(argc, argv);
  if (!vm) return 2;
  current = vm;
  if (cli_stop_requested()) stvm_interrupt(vm); /* a signal came early */
  cli_block_stop_signals(1); /* the sampler thread inherits the mask */
  int started = so ? stvm_profile_start(vm, so) : 0;
  cli_block_stop_signals(0);
  if (started < 0) {
    fprintf(stderr, "spyon: %s\n", stvm_error(vm));
    current = NULL;
    stvm_free(vm);
    return 2;
  }
  if (so) cli_live_publish(stvm_profiler(vm)); /* for --live */
  int status = stvm_run_file(vm, script);
  fflush(stdout);
  if (so) cli_live_publish(NULL);
  if (so && stvm_profile_stop(vm, out) < 0) *out = NULL;
  current = NULL;
  stvm_free(vm);
  return status;
}

/* The VM ticks with spy_tick_next in its interrupt check, which then comes
** just before each sample falls due: the tick marker by default, with no
** wake-ups at the sampling rate (bench/cost.sh) and skid-free samples
** (tests/st/skid.sh). */
const cli_host cli_host_st = {".st", "Smalltalk", st_run, st_interrupt, 1,
                              100}; /* spy_options_init's */
