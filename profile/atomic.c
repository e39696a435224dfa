/*
** profile/atomic.c: write to a temporary, fsync, rename (see atomic.h).
**
** Why not write in place: opening the target with "w" truncates it first,
** so a full disk, a crash or a kill in the middle of the write destroys a
** good profile and leaves a short one. rename(2) within one directory
** replaces the name in one step; the fsync before it makes sure the data
** is on disk before the name points at it, and the fsync of the directory
** after it that the new name survives a crash.
*/
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "profile/atomic.h"

static void say(char *err, size_t errlen, const char *path, const char *what,
                int e) {
  if (err && errlen)
    snprintf(err, errlen, "%s: %s: %s", path, what, strerror(e));
}

/* The directory part of path ("." when there is none). */
static char *dir_of(const char *path) {
  const char *slash = strrchr(path, '/');
  if (!slash) return strdup(".");
  if (slash == path) return strdup("/");
  size_t n = (size_t)(slash - path);
  char *d = malloc(n + 1);
  if (d) {
    memcpy(d, path, n);
    d[n] = '\0';
  }
  return d;
}

int spyP_aopen(spyP_afile *a, const char *path, char *err, size_t errlen) {
  memset(a, 0, sizeof *a);
  if (err && errlen) err[0] = '\0';
  if (!path || !*path) {
    if (err && errlen) snprintf(err, errlen, "empty file name");
    return SPY_EINVAL;
  }
  struct stat st;
  /* A symlink is replaced through: the file it names gets the data. */
  char *target = NULL;
  if (lstat(path, &st) == 0 && S_ISLNK(st.st_mode))
    target = realpath(path, NULL);
  if (!target) target = strdup(path);
  if (!target) goto oom;
  a->target = target;
  a->mode = 0666;
  if (stat(target, &st) == 0) {
    if (S_ISDIR(st.st_mode)) {
      say(err, errlen, path, "cannot open for writing", EISDIR);
      free(target);
      a->target = NULL;
      return SPY_EIO;
    }
    if (!S_ISREG(st.st_mode)) { /* a device or a FIFO: write in place */
      a->f = fopen(target, "wb");
      if (!a->f) {
        say(err, errlen, path, "cannot open for writing", errno);
        free(target);
        a->target = NULL;
        return SPY_EIO;
      }
      return 0;
    }
    a->mode = (int)(st.st_mode & 07777);
  }
  char *dir = dir_of(target);
  if (!dir) goto oom;
  const char *base = strrchr(target, '/');
  base = base ? base + 1 : target;
  size_t cap = strlen(dir) + strlen(base) + 64;
  a->tmp = malloc(cap);
  if (!a->tmp) {
    free(dir);
    goto oom;
  }
  static unsigned counter; /* names differ within one process too */
  int fd = -1, e = 0;
  for (int tries = 0; fd < 0 && tries < 100; tries++) {
    snprintf(a->tmp, cap, "%s/.%s.tmp-%ld-%u", dir, base, (long)getpid(),
             counter++);
    fd = open(a->tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    e = errno;
    if (fd < 0 && e != EEXIST) break;
  }
  free(dir);
  if (fd < 0) {
    say(err, errlen, path, "cannot open for writing", e);
    free(a->tmp);
    free(a->target);
    memset(a, 0, sizeof *a);
    return SPY_EIO;
  }
  a->f = fdopen(fd, "wb");
  if (!a->f) {
    e = errno;
    close(fd);
    unlink(a->tmp);
    say(err, errlen, path, "cannot open for writing", e);
    free(a->tmp);
    free(a->target);
    memset(a, 0, sizeof *a);
    return SPY_EIO;
  }
  return 0;
oom:
  free(a->target);
  memset(a, 0, sizeof *a);
  if (err && errlen) snprintf(err, errlen, "%s: out of memory", path);
  return SPY_ENOMEM;
}

static void release(spyP_afile *a) {
  free(a->tmp);
  free(a->target);
  memset(a, 0, sizeof *a);
}

void spyP_aabort(spyP_afile *a) {
  if (!a || !a->f) return;
  fclose(a->f);
  if (a->tmp) unlink(a->tmp);
  release(a);
}

int spyP_acommit(spyP_afile *a, char *err, size_t errlen) {
  if (err && errlen) err[0] = '\0';
  if (!a || !a->f) return SPY_EINVAL;
  int e = 0;
  errno = 0;
  if (fflush(a->f) != 0 || ferror(a->f)) e = errno ? errno : EIO;
  if (!e && a->tmp) {
    if (fchmod(fileno(a->f), (mode_t)a->mode) != 0 && a->mode != 0666)
      e = errno;
    else if (fsync(fileno(a->f)) != 0 && errno != EINVAL) /* EINVAL: no
                                                  sync on this file system */
      e = errno;
  }
  if (fclose(a->f) != 0 && !e) e = errno ? errno : EIO;
  a->f = NULL;
  if (!e && a->tmp && rename(a->tmp, a->target) != 0) e = errno;
  if (e) {
    say(err, errlen, a->target, "write error", e);
    if (a->tmp) unlink(a->tmp);
    release(a);
    return SPY_EIO;
  }
  if (a->tmp) { /* make the new name durable; a failure here loses nothing */
    char *dir = dir_of(a->target);
    int dfd = dir ? open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;
    if (dfd >= 0) {
      (void)fsync(dfd);
      close(dfd);
    }
    free(dir);
  }
  release(a);
  return 0;
}

int spyP_acheck(const char *path, char *err, size_t errlen) {
  struct stat st;
  if (path && stat(path, &st) == 0 && !S_ISREG(st.st_mode) &&
      !S_ISDIR(st.st_mode)) { /* opening a FIFO would wait for a reader */
    if (access(path, W_OK) == 0) return 0;
    say(err, errlen, path, "cannot open for writing", errno);
    return SPY_EIO;
  }
  spyP_afile a;
  int rc = spyP_aopen(&a, path, err, errlen);
  if (rc == 0) spyP_aabort(&a);
  return rc;
}

int spyP_same_file(const char *a, const char *b) {
  struct stat sa, sb;
  if (!a || !b || stat(a, &sa) != 0 || stat(b, &sb) != 0) return 0;
  return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}
