/*
** spyon/profile.h: the profile data model every tool reads, and its file.
**
** A spy_profile is a plain, read-mostly snapshot: arrays of structs that
** refer to each other by index. It is produced by spy_profile_take() (from a
** running or stopped profiler) or spy_profile_load() (from a file), and
** freed with spy_profile_free(). Nothing in it points into a profiler, so it
** outlives the profiler that made it. Times are nanoseconds.
**
** Index fields use SPY_NONE for "none". Every index in a profile returned by
** this library is in range; loaders check that before returning one.
*/
#ifndef SPYON_PROFILE_H
#define SPYON_PROFILE_H

#include <spyon.h>

#ifdef __cplusplus
extern "C" {
#endif

#define SPY_NONE UINT32_MAX

/* The file format version written by spy_profile_save (docs/format.md). */
#define SPY_FORMAT_VERSION 1

typedef enum spy_frame_kind {
  SPY_FRAME_ROOT = 0,   /* the root of a process's tree */
  SPY_FRAME_METHOD = 1, /* an interpreter frame; key is the host's key */
  SPY_FRAME_PRIM = 2,   /* a primitive; key is the primitive's index */
  SPY_FRAME_GC = 3,     /* garbage collection */
  SPY_FRAME_REGION = 4, /* a user region; key is its registered id */
  SPY_FRAME_NATIVE = 5, /* a native frame inside a primitive; key is the IP */
  SPY_FRAME_CUT = 6     /* frames left out by the depth cap; key is how
                           many were cut (0: unknown) */
} spy_frame_kind;

/* One distinct frame (a method, a primitive, ...). */
typedef struct spy_frame {
  spy_frame_kind kind;
  uint64_t key;
  const char *name; /* never NULL; "0x1234..." when the host named nothing */
} spy_frame;

/* An executable or shared library that native frames point into, as the
** dynamic loader had it mapped when the profile was taken. */
typedef struct spy_module {
  const char *path;     /* absolute path of the file, never NULL */
  const char *build_id; /* GNU build-id in hex, "" when it has none */
  uint64_t bias;        /* load bias: run-time address - file address */
} spy_module;

/* Where one native frame points: its module (SPY_NONE when no loaded
** object covered it) and the address to name: the instruction for the
** innermost frame, the return address minus one for its callers (so that
** the call is named, not what follows it). addr - modules[module].bias is
** the address in the object's own file. */
typedef struct spy_location {
  uint32_t frame;  /* index into frames, a SPY_FRAME_NATIVE frame */
  uint32_t module; /* index into modules, or SPY_NONE */
  uint64_t addr;
} spy_location;

/* One node of a call tree: a frame reached by one path from the root. */
typedef struct spy_node {
  uint32_t frame;        /* index into frames */
  uint32_t parent;       /* node index; SPY_NONE for a process root */
  uint32_t first_child;  /* children linked by next_sibling, */
  uint32_t next_sibling; /*   heaviest (total_ns) first */
  uint64_t total_ns;     /* time in this node and below */
  uint64_t self_ns;      /* time with this node as the leaf */
  uint64_t tallies;      /* samples in this node and below */
  uint64_t self_tallies; /* samples with this node as the leaf */
} spy_node;

/* One process (green thread, coroutine, ...) of the interpreter. */
typedef struct spy_process {
  uint64_t pid;
  const char *name; /* never NULL */
  uint32_t root;    /* node index of its tree's root (a SPY_FRAME_ROOT) */
  uint64_t total_ns;
  uint64_t tallies;
} spy_process;

/* One cost observation: a primitive call's operand sizes and duration. */
typedef struct spy_obs {
  uint64_t size[4];
  uint64_t ns;
  uint32_t gc; /* garbage collections that ran inside the call */
} spy_obs;

/* One registered primitive. */
typedef struct spy_profile_prim {
  const char *name;
  unsigned nsizes;            /* 0..4 */
  const char *size_names[4];  /* never NULL for i < nsizes */
  unsigned flags;             /* SPY_PRIM_* from registration */
  uint64_t calls, total_ns, max_ns;
  size_t nobs;
  spy_obs *obs;               /* a uniform reservoir sample of the calls */
  uint64_t obs_offered;       /* calls offered to the reservoir */
  char *model;                /* fitted model for reports, or NULL; set by
                                 tools (malloc'd, freed with the profile) */
} spy_profile_prim;

typedef enum spy_step_kind { SPY_STEP_PRIM = 0, SPY_STEP_GC = 1 } spy_step_kind;

/* One of the longest single steps: a primitive call or a GC pause. */
typedef struct spy_step {
  spy_step_kind kind;
  uint32_t prim;      /* index into prims (SPY_STEP_PRIM), else SPY_NONE;
                         SPY_NONE too for an unregistered primitive */
  unsigned nsizes;
  uint64_t size[4];
  uint64_t ns;
  uint32_t process;   /* index into processes */
  uint32_t nframes;
  uint32_t *frames;   /* the calling stack, root first (indices into
                         frames); the primitive or GC itself is not in it */
  unsigned off_cpu_pct; /* how much of it the thread spent descheduled,
                           0..100 (0 also when not measured: the runtime
                           measures steps of a few milliseconds and more).
                           With the CPU clock, ns is the step's CPU time */
} spy_step;

/* Native stacks inside one primitive (spy_options.native_stacks): one
** distinct native call path, the SIGPROF signals that landed on it. frames
** are indices into spy_profile.frames, root first (the leaf is the
** function that was running), all of kind SPY_FRAME_NATIVE whose key is
** the instruction pointer. These counts are extra: they do not change the
** call tree, whose weights stay exact. */
typedef struct spy_native {
  uint32_t prim;      /* index into prims */
  uint32_t nframes;
  uint32_t *frames;   /* root first */
  uint64_t count;     /* signals that landed on this path */
} spy_native;

/* Exact timings of a user region reached by one nesting path. */
typedef struct spy_profile_region {
  const char *name;
  uint32_t parent;    /* index into regions, SPY_NONE at top level */
  uint64_t calls, total_ns, max_ns;
} spy_profile_region;

struct spy_profile {
  uint32_t version;         /* SPY_FORMAT_VERSION it was made with */
  spy_mode mode;
  uint64_t interval_ns;
  uint64_t wall_ns;         /* time profiled (sum of start..stop periods) */
  uint64_t tallies;         /* samples aggregated */
  uint64_t dropped;         /* samples dropped (ring full) */
  uint64_t obs_dropped;     /* cost observations dropped */
  uint64_t hook_ns;         /* time spent in the profiler's slow paths in
                               interpreter threads (overhead estimate) */
  uint64_t start_unix_ns;   /* when profiling started (CLOCK_REALTIME) */
  const char *clock;        /* "tsc" or "clock_gettime" */
  const char *command;      /* what was profiled, or "" */

  size_t nframes;    spy_frame *frames;
  size_t nnodes;     spy_node *nodes;
  size_t nprocesses; spy_process *processes;
  size_t nprims;     spy_profile_prim *prims;
  size_t nsteps;     spy_step *steps;      /* longest first */
  size_t nregions;   spy_profile_region *regions;
  struct {
    uint64_t count, total_ns, max_ns;
  } gc;
  /* Native breakdown of primitives (empty unless native_stacks was on),
  ** ordered by prim, then heaviest first. */
  size_t nnatives;   spy_native *natives;
  /* Where native frames point (empty without native frames): the objects,
  ** and one location per native frame, in frame order. */
  size_t nmodules;   spy_module *modules;
  size_t nlocations; spy_location *locations;

  void *priv_; /* private: the allocation arena */
};

/* Load a file written by spy_profile_save. The file is hostile input: any
** truncation or corruption gives SPY_EFORMAT (or SPY_EVERSION, SPY_EIO) and
** a message "PATH: offset N: what is wrong" in err; never a crash. */
SPY_API int spy_profile_load(const char *path, spy_profile **out, char *err,
                             size_t errlen);

/* The same from a buffer (name is used in messages). */
SPY_API int spy_profile_load_mem(const void *buf, size_t len, const char *name,
                                 spy_profile **out, char *err, size_t errlen);

/* Write the whole profile as one JSON document (docs/format.md). */
SPY_API int spy_profile_write_json(const spy_profile *p, FILE *f);

/* Name the native frames of p with their function, object and, where
** debug information exists, file:line ("memcpy (libc.so.6)", "f (app)
** app.c:12"), read with elfutils' libdw from each frame's module file.
** A module whose file is gone or whose build-id differs is left alone
** (its frames keep their names). Call it on a profile loaded or taken in
** this process; saving after it keeps the names. Returns the number of
** frames named, 0 when there is nothing to name, SPY_ENOTSUP when built
** without libdw, or SPY_EINVAL / SPY_ENOMEM. */
SPY_API int spy_profile_symbolize(spy_profile *p);

/* Self time per frame across all processes ("leaves"): fills out[i] with the
** frame index and self_ns of the n heaviest frames, heaviest first, and
** returns how many were filled (<= n), or a negative error. */
typedef struct spy_leaf {
  uint32_t frame;
  uint64_t self_ns;
  uint64_t self_tallies;
} spy_leaf;
SPY_API int spy_profile_leaves(const spy_profile *p, spy_leaf *out, size_t n);

#ifdef __cplusplus
}
#endif

#endif
