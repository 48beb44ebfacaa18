/*
 * Replays fuzz inputs without libFuzzer, so CI checks that every corpus
 * entry and every crash ever found still passes (link it with a fuzz target
 * built without -fsanitize=fuzzer; sanitizers are welcome).
 *
 * Usage: regression_driver DIR_OR_FILE...
 * Every regular file in each directory (not recursive; names starting with
 * '.' and README* are skipped) goes through LLVMFuzzerTestOneInput once, in
 * name order. Exit status 0 when all ran, 1 when a path could not be read
 * (an invariant failure inside the target aborts instead).
 */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define REPLAY_MAX_BYTES ((size_t)16 << 20)  /* libFuzzer's inputs are far smaller; this is a sanity cap */

static int run_file(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) {
    perror(path);
    return -1;
  }
  size_t cap = 4096, len = 0;
  unsigned char *buf = malloc(cap);
  for (;;) {
    if (buf == NULL) break;
    len += fread(buf + len, 1, cap - len, f);
    if (len < cap || cap >= REPLAY_MAX_BYTES) break;
    unsigned char *nb = realloc(buf, cap * 2);
    if (nb == NULL) {
      free(buf);
      buf = NULL;
      break;
    }
    buf = nb;
    cap *= 2;
  }
  int bad = ferror(f) || buf == NULL || len >= REPLAY_MAX_BYTES;
  fclose(f);
  if (bad) {
    fprintf(stderr, "%s: unreadable or larger than %zu bytes\n", path, REPLAY_MAX_BYTES);
    free(buf);
    return -1;
  }
  /* an exact-size copy, so ASan catches reads one past the input */
  unsigned char *exact = malloc(len ? len : 1);
  if (exact == NULL) {
    free(buf);
    return -1;
  }
  if (len) memcpy(exact, buf, len);
  free(buf);
  LLVMFuzzerTestOneInput(exact, len);
  free(exact);
  return 0;
}

static int by_name(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static int run_dir(const char *dir, long *count) {
  DIR *d = opendir(dir);
  if (!d) {
    perror(dir);
    return -1;
  }
  char **names = NULL;
  size_t n = 0, cap = 0;
  struct dirent *e;
  int rc = 0;
  while ((e = readdir(d)) != NULL) {
    if (e->d_name[0] == '.' || strncmp(e->d_name, "README", 6) == 0) continue;
    if (n == cap) {
      char **nn = realloc(names, (cap = cap ? cap * 2 : 64) * sizeof *names);
      if (nn == NULL) { rc = -1; break; }
      names = nn;
    }
    size_t len = strlen(dir) + strlen(e->d_name) + 2;
    if ((names[n] = malloc(len)) == NULL) { rc = -1; break; }
    snprintf(names[n++], len, "%s/%s", dir, e->d_name);
  }
  closedir(d);
  if (n) qsort(names, n, sizeof *names, by_name);
  for (size_t i = 0; i < n; i++) {
    struct stat st;
    if (rc == 0 && stat(names[i], &st) == 0 && S_ISREG(st.st_mode)) {
      if (run_file(names[i]) != 0) rc = -1;
      else (*count)++;
    }
    free(names[i]);
  }
  free(names);
  return rc;
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s DIR_OR_FILE...\n", argv[0]);
    return 2;
  }
  long count = 0;
  int rc = 0;
  for (int i = 1; i < argc; i++) {
    struct stat st;
    if (stat(argv[i], &st) != 0) {
      perror(argv[i]);
      rc = 1;
    } else if (S_ISDIR(st.st_mode)) {
      if (run_dir(argv[i], &count) != 0) rc = 1;
    } else if (run_file(argv[i]) != 0) {
      rc = 1;
    } else {
      count++;
    }
  }
  printf("regression_driver: %ld inputs replayed%s\n", count, rc ? ", some paths failed" : "");
  return rc;
}
