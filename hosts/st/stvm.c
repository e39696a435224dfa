/*
** hosts/st/stvm.c: creating a VM, finding and loading the kernel, running
** a script, and the profiling entry points of libstvm.
*/
#include "config.h"

#include "hosts/st/stvm.h"

#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "hosts/st/heap.h"
#include "hosts/st/symbols.h"
#include "hosts/st/classes.h"
#include "hosts/st/loader.h"
#include "hosts/st/proc.h"

/* Kernel files, in load order. */
static const char *const kernel_files[] = {
  "Object.st", "Boolean.st", "Magnitude.st", "Number.st", "Integer.st",
  "LargeInt.st", "Float.st", "Character.st", "Collection.st",
  "ArrayedCollection.st", "String.st", "OrderedCollection.st",
  "HashedCollection.st", "Interval.st", "Stream.st", "BlockClosure.st",
  "Exception.st", "Process.st", "Transcript.st", "Profiler.st", NULL,
};

static int is_dir(const char *p) {
  struct stat st;
  return p && *p && stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

static char *find_kernel(void) {
  const char *env = getenv("SPYON_KERNEL");
  if (env && *env) return is_dir(env) ? strdup(env) : NULL;
#ifdef ST_KERNEL_SRCDIR
  if (is_dir(ST_KERNEL_SRCDIR)) return strdup(ST_KERNEL_SRCDIR);
#endif
#ifdef ST_KERNEL_DATADIR
  if (is_dir(ST_KERNEL_DATADIR)) return strdup(ST_KERNEL_DATADIR);
#endif
  return NULL;
}

stvm *stvm_new(int argc, char **argv) {
  /* Page-aligned, so the hot fields sit at the same addresses modulo the
  ** page size in every program that links the VM (loads and stores whose
  ** addresses agree in their low 12 bits can stall each other). */
  VM *vm = NULL;
  if (posix_memalign((void **)&vm, 4096, sizeof(VM)) != 0) return NULL;
  memset(vm, 0, sizeof(VM));
  vm->exit_code = -1;
  vm->icount = vm->iperiod = ST_ICOUNT;
  vm->next_pid = 1;
  st_prof_init(vm);
  if (st_heap_init(vm) || st_syms_init(vm) || st_boot(vm)) {
    fprintf(stderr, "st: cannot initialize the VM\n");
    stvm_free(vm);
    return NULL;
  }
  Value pobj = st_new_slots(vm, CID_PROCESS, PROC_NSLOTS);
  vm->main = st_proc_new(vm, pobj, 40, 1);
  SLOTS(pobj)[PROC_NAME] = st_new_string(vm, "main", 4);
  vm->cur = vm->main;
  vm->main->state = PS_RUNNING;
  vm->argv = st_new_array(vm, (uint64_t)(argc > 0 ? argc : 0));
  for (int i = 0; i < argc; i++)
    SLOTS(vm->argv)[i] = st_new_string(vm, argv[i], strlen(argv[i]));
  vm->kernel_dir = find_kernel();
  if (!vm->kernel_dir) {
    fprintf(stderr, "st: kernel not found (set SPYON_KERNEL to the "
                    "directory holding Object.st)\n");
    stvm_free(vm);
    return NULL;
  }
  for (int i = 0; kernel_files[i]; i++) {
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", vm->kernel_dir, kernel_files[i]);
    if (st_load_file(vm, path) != 0) {
      fprintf(stderr, "st: the kernel did not load (%s)\n", path);
      stvm_free(vm);
      return NULL;
    }
  }
  vm->exit_code = -1;
  st_gc(vm);
  return vm;
}

void stvm_free(stvm *vm) {
  if (!vm) return;
  st_prof_free(vm);
  while (vm->nprocs) st_proc_free(vm, vm->procs[vm->nprocs - 1]);
  free(vm->procs);
  for (uint32_t i = 0; i < vm->nmethods; i++) {
    Method *m = vm->methods[i];
    free(m->code);
    free(m->lines);
    free(m->lits);
    free(m->sites);
    free(m->blocks);
    free(m);
  }
  free(vm->methods);
  for (uint32_t i = 0; i < vm->nclasses; i++) {
    free(vm->classes[i].md.keys);
    free(vm->classes[i].md.vals);
  }
  free(vm->classes);
  for (uint32_t i = 0; i < vm->nfiles; i++) free(vm->files[i]);
  free(vm->files);
  free(vm->timers);
  free(vm->mcache);
  free(vm->kernel_dir);
  st_syms_free(vm);
  st_heap_free(vm);
  free(vm);
}

const char *stvm_kernel_dir(const stvm *vm) {
  return vm->kernel_dir;
}

/* Memory held back while the script runs: when an allocation fails where
** the run cannot go on, st_out_of_memory frees it and unwinds here, and
** the caller then has room to save the profile and print the report. */
#define OOM_RESERVE_BYTES ((size_t)16 << 20)

int stvm_run_file(stvm *vm, const char *path) {
  jmp_buf jb;
  vm->script = path;
  vm->oom_reserve = malloc(OOM_RESERVE_BYTES);
  vm->oom_jmp = &jb;
  st_running_vm = vm;
  int r;
  if (setjmp(jb) == 0) {
    r = st_load_file(vm, path);
  } else {
    /* The stacks are left as they were: only stvm_free may follow. */
    r = vm->exit_code;
  }
  vm->oom_jmp = NULL;
  st_running_vm = NULL;
  free(vm->oom_reserve);
  vm->oom_reserve = NULL;
  fflush(stdout);
  if (vm->stopping || r) return vm->exit_code >= 0 ? vm->exit_code : r;
  return 0;
}

void stvm_interrupt(stvm *vm) {
  vm->sigint = 1;
}

int stvm_profile_start(stvm *vm, const spy_options *o) {
  return st_prof_start(vm, o);
}

int stvm_profile_stop(stvm *vm, spy_profile **out) {
  return st_prof_stop(vm, out);
}

spy_profiler *stvm_profiler(stvm *vm) {
  return vm->prof.attached ? vm->prof.P : NULL;
}

const char *stvm_error(const stvm *vm) {
  return vm->errbuf;
}
