/*
** profile/atomic.h: replacing a file atomically (spyP_).
**
** Every file spyon writes (a saved profile, a report or export written
** with -o, a cost table or C header, an exported CSV, a plot) goes through
** this: the bytes go to a temporary file in the target's directory, which
** is flushed, fsync'd and renamed over the target, and the directory is
** fsync'd. A full disk, an I/O error or a crash mid-write therefore leaves
** the old file as it was (a kill -9 may leave the temporary, named
** ".NAME.tmp-PID-N", never a truncated NAME); on an error the temporary is
** removed.
**
** A target that exists and is not a regular file (/dev/null, /dev/full, a
** FIFO, a terminal) cannot be replaced: it is opened and written in place.
** A symbolic link is followed, so the file it names is replaced, not the
** link.
*/
#ifndef SPY_PROFILE_ATOMIC_H
#define SPY_PROFILE_ATOMIC_H

#include <stddef.h>
#include <stdio.h>

#include <spyon.h>

typedef struct spyP_afile {
  FILE *f;      /* write here */
  char *target; /* the file replaced at commit (symlinks resolved) */
  char *tmp;    /* the temporary's path; NULL when writing in place */
  int mode;     /* permissions given to the new file */
} spyP_afile;

/* Start writing path: 0, or SPY_EIO / SPY_ENOMEM with "PATH: cannot open
** for writing: REASON" in err. A directory is refused. */
SPY_INTERNAL int spyP_aopen(spyP_afile *a, const char *path, char *err,
                            size_t errlen);

/* Flush, sync and rename into place: 0, or SPY_EIO with "PATH: write
** error: REASON" in err, the temporary removed and the old file intact.
** Either way a is closed. */
SPY_INTERNAL int spyP_acommit(spyP_afile *a, char *err, size_t errlen);

/* Give up: close and remove the temporary; the target is untouched. */
SPY_INTERNAL void spyP_aabort(spyP_afile *a);

/* Could path be written (spyP_aopen then spyP_aabort)? 0 or SPY_EIO with
** the message in err. Nothing is left behind. */
SPY_INTERNAL int spyP_acheck(const char *path, char *err, size_t errlen);

/* Do paths a and b name the same existing file (device and inode, so that
** links, "./x" and "../d/x" are seen through)? */
SPY_INTERNAL int spyP_same_file(const char *a, const char *b);

#endif
