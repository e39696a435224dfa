/*
** hosts/st/stvm.h: the Smalltalk interpreter as a library (libstvm).
**
** What cli/run.c, tests/test_st.c and hosts/st/main.c use: make a VM (its
** kernel is loaded from the first of $SPYON_KERNEL, the build tree's
** hosts/st/kernel and the installed pkgdatadir/kernel that exists), run
** one script file, optionally under the profiler, and free it. One VM per
** thread; a VM is not thread-safe.
*/
#ifndef ST_STVM_H
#define ST_STVM_H

#include <spyon.h>
#include <spyon/profile.h>

typedef struct VM stvm;

/* Create a VM with the script's arguments (argv[0..argc-1], copied) and
** load the kernel. Returns NULL and prints the reason to stderr when the
** kernel cannot be found or does not load. */
stvm *stvm_new(int argc, char **argv);
void stvm_free(stvm *vm);

/* Where the kernel was loaded from. */
const char *stvm_kernel_dir(const stvm *vm);

/* Run a script file. Returns its exit status: 0, the n of
** "Smalltalk quit: n", 1 after an unhandled error (message and backtrace
** on stderr) or when memory ran out where the run could not go on (the
** VM may then only be profile-stopped and freed), 2 for a syntax error
** ("file:line:col: message"), 130 when stopped by stvm_interrupt. */
int stvm_run_file(stvm *vm, const char *path);

/* Ask a running VM to stop at its next interrupt check (async-signal-safe:
** call it from a SIGINT handler). */
void stvm_interrupt(stvm *vm);

/* Profile everything the VM runs from now on with options o (NULL: the
** defaults). Returns 0 or a negative SPY_E* code; the message is then in
** stvm_error(vm). */
int stvm_profile_start(stvm *vm, const spy_options *o);

/* Stop profiling and hand back the profile (caller frees it). */
int stvm_profile_stop(stvm *vm, spy_profile **out);

const char *stvm_error(const stvm *vm);

/* The profiler of a VM being profiled (NULL otherwise), so that another
** thread can take snapshots of it (spy_profile_take) while the script
** runs, as `spyon --live` does. Valid until stvm_profile_stop. */
spy_profiler *stvm_profiler(stvm *vm);

#endif
