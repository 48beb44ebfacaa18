#define _POSIX_C_SOURCE 200809L
#define _FILE_OFFSET_BITS 64
#include "io/fileio.h"

#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

/* Per call: well under what read/write may transfer at once (0x7ffff000 on Linux). */
#define MAX_CALL ((size_t)1 << 30)

int smx_io_read_full(int fd, void *buf, size_t n, size_t *got) {
  size_t done = 0;
  while (done < n) {
    size_t want = n - done < MAX_CALL ? n - done : MAX_CALL;
    ssize_t k = read(fd, (char *)buf + done, want);
    if (k < 0 && errno == EINTR) continue;
    if (k < 0) { *got = done; return errno; }
    if (k == 0) break;
    done += (size_t)k;
  }
  *got = done;
  return 0;
}

int smx_io_pread_full(int fd, void *buf, size_t n, uint64_t off, size_t *got) {
  size_t done = 0;
  while (done < n) {
    if (off + done > (uint64_t)INT64_MAX) { *got = done; return EOVERFLOW; }
    size_t want = n - done < MAX_CALL ? n - done : MAX_CALL;
    ssize_t k = pread(fd, (char *)buf + done, want, (off_t)(off + done));
    if (k < 0 && errno == EINTR) continue;
    if (k < 0) { *got = done; return errno; }
    if (k == 0) break;
    done += (size_t)k;
  }
  *got = done;
  return 0;
}

int smx_io_write_full(int fd, const void *buf, size_t n) {
  size_t done = 0;
  while (done < n) {
    size_t want = n - done < MAX_CALL ? n - done : MAX_CALL;
    ssize_t k = write(fd, (const char *)buf + done, want);
    if (k < 0 && errno == EINTR) continue;
    if (k < 0) return errno;
    if (k == 0) return EIO;  /* no progress and no error: do not spin */
    done += (size_t)k;
  }
  return 0;
}

int smx_io_pwrite_full(int fd, const void *buf, size_t n, uint64_t off) {
  size_t done = 0;
  while (done < n) {
    if (off + done > (uint64_t)INT64_MAX) return EOVERFLOW;
    size_t want = n - done < MAX_CALL ? n - done : MAX_CALL;
    ssize_t k = pwrite(fd, (const char *)buf + done, want, (off_t)(off + done));
    if (k < 0 && errno == EINTR) continue;
    if (k < 0) return errno;
    if (k == 0) return EIO;
    done += (size_t)k;
  }
  return 0;
}

/* splitmix64 step: mixes the seed into well-spread name characters */
static uint64_t mix(uint64_t *s) {
  uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

int smx_io_create_temp(const char *path, char **tmp, int *fd) {
  /* Not mkstemp: it creates mode 0600, and the output should get the usual
   * 0666 & ~umask; reading the umask is not thread-safe, so this opens with
   * O_EXCL itself and retries on a name clash. */
  static const char alphabet[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
  const char *slash = strrchr(path, '/');
  size_t dirlen = slash ? (size_t)(slash - path) + 1 : 0;
  const char *base = path + dirlen;
  size_t baselen = strlen(base);
  if (baselen == 0) return EISDIR;  /* "dir/" names no file */
  size_t len = dirlen + 1 + baselen + 5 + 6;  /* DIR/ . BASE .tmp. XXXXXX */
  char *name = malloc(len + 1);
  if (name == NULL) return ENOMEM;
  memcpy(name, path, dirlen);
  name[dirlen] = '.';
  memcpy(name + dirlen + 1, base, baselen);
  memcpy(name + dirlen + 1 + baselen, ".tmp.", 5);
  char *x = name + len - 6;
  name[len] = '\0';

  static atomic_uint_fast64_t counter;  /* distinct names for threads started in the same nanosecond */
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  uint64_t seed = (uint64_t)ts.tv_nsec ^ (uint64_t)ts.tv_sec << 30 ^ (uint64_t)getpid() << 20 ^ (uintptr_t)name;
  seed += atomic_fetch_add(&counter, 1) * 0x632be59bd9b4e019ull;
  for (int attempt = 0; attempt < 100; attempt++) {
    uint64_t r = mix(&seed);
    for (int k = 0; k < 6; k++, r /= 62) x[k] = alphabet[r % 62];
    int f = open(name, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (f >= 0) {
      *tmp = name;
      *fd = f;
      return 0;
    }
    if (errno == EINTR) continue;
    if (errno != EEXIST) {
      int e = errno;
      free(name);
      return e;
    }
  }
  free(name);
  return EEXIST;
}

int smx_io_is_stream_path(const char *path) {
  struct stat st;
  return strcmp(path, "-") != 0 && stat(path, &st) == 0 && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode);
}

int smx_io_open_stream(const char *path, int *fd) {
  for (;;) {
    /* no O_CREAT or O_TRUNC: the file exists and is not ours to replace */
    int f = open(path, O_WRONLY | O_CLOEXEC | O_NOCTTY);
    if (f >= 0) {
      *fd = f;
      return 0;
    }
    if (errno != EINTR) return errno;
  }
}

int smx_io_out_open(smx_io_out *o, const char *path) {
  memset(o, 0, sizeof *o);
  o->fd = -1;
  if (!strcmp(path, "-")) {
    o->fd = STDOUT_FILENO;
    o->stream = 1;
    return 0;
  }
  struct stat st;
  if (stat(path, &st) == 0) {
    if (S_ISDIR(st.st_mode)) return EISDIR;
    if (!S_ISREG(st.st_mode)) {
      o->stream = o->own_fd = 1;
      return smx_io_open_stream(path, &o->fd);
    }
    o->keep_mode = 1;
    o->mode = st.st_mode & 0777;
  }
  o->own_fd = 1;
  o->path = path;
  return smx_io_create_temp(path, &o->tmp, &o->fd);
}

int smx_io_out_commit(smx_io_out *o, const char **what) {
  int e = 0;
  *what = "write failed";
  if (o->own_fd && !o->stream) {
    /* data on disk before the name points at it: a crash never shows a torn file */
    if (o->keep_mode && fchmod(o->fd, o->mode) != 0) e = errno, *what = "cannot set the file mode";
    else if (fsync(o->fd) != 0 && errno != EINVAL) e = errno, *what = "fsync failed";
  }
  if (o->own_fd && o->fd >= 0 && close(o->fd) != 0 && e == 0) e = errno, *what = "close failed";
  o->fd = -1;
  if (e == 0 && o->tmp && rename(o->tmp, o->path) != 0) e = errno, *what = "cannot rename the temporary file over it";
  if (e != 0 && o->tmp) unlink(o->tmp);
  free(o->tmp);
  o->tmp = NULL;
  return e;
}

void smx_io_out_abort(smx_io_out *o) {
  if (o->own_fd && o->fd >= 0) close(o->fd);
  o->fd = -1;
  if (o->tmp) unlink(o->tmp);
  free(o->tmp);
  o->tmp = NULL;
}
