/*
 * libFuzzer target for the whole smx command, argument to output, run
 * in-process through smx_cli_main (also replayed without libFuzzer by
 * regression_driver.c). The input is
 *   byte 0     the command (table `commands`)
 *   byte 1     how it runs: standard input a pipe or a regular file, and the
 *              engine's environment knobs (block size, synchronous writes,
 *              mapped input and output)
 *   bytes 2..  up to MAX_ARGS arguments, one byte each, from the table
 *              `words` (options, values, file names), ended by 0xff
 *   the rest   file A, then, after the first 0xfe, file B
 * Arguments come only from the table, so every file name is one of a
 * scratch directory (absolute); no argument can name a file elsewhere.
 * The directory holds A as in.csv, in.tsv, in.npy and in (no extension),
 * B as aux.npy (when present), old.npy (an existing output) and a
 * subdirectory; standard input is A too. After each run:
 *  1. the exit status is one of cli.h's 0..4 (130 needs a signal; none is sent);
 *  2. the temporary directory ($TMPDIR) is empty, and the handlers of
 *     SIGINT, SIGTERM and SIGBUS are the ones before the run;
 *  3. after a failure the scratch directory is exactly as before (no output,
 *     no .NAME.tmp.* file, old.npy untouched); after a success it holds no
 *     .NAME.tmp.* file, and only files named on the command line changed;
 *  4. the cleanup list (for a sudden death) holds no stale entry: it is
 *     run, and ASan reports a freed path.
 * smx_cli_main must not exit(): libFuzzer would report the exit.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "commands.h"
#include "cli/message.h"
#include "cli/signals.h"
#include "cli/stream.h"
#include "io/npy_io.h"

#define FUZZ_TARGET "fuzz_cli"
#include "fuzz_require.h"

#define MAX_ARGS 14
#define MAX_FILES 16
#define MAX_BODY ((size_t)60000)  /* fits a pipe's default buffer: written before the run */

static const char *const commands[] = {
  "softmax", "log-softmax", "logsumexp", "topk", "sample", "xent", "score", "eval",
  "softmax", "log-softmax", "logsumexp", "topk", "info", "--version", "--help", "nonsense",
};

/* Names starting with '@' are files of the scratch directory. */
static const char *const words[] = {
  /* files */
  "@in.csv", "@in.tsv", "@in.npy", "@in", "-", "@aux.npy", "@out.npy", "@out.csv", "@out.tsv", "@out",
  "@old.npy", "@out2.npy", "@missing.npy", "@dir", "@in.CSV", "@dir/",
  /* options of softmax / log-softmax / logsumexp */
  "-o", "--output", "-a", "--axis", "-t", "--temperature", "--dtype", "--format", "--in-format", "--algo",
  "--threads", "--masked-row", "-q", "--quiet",
  /* topk, sample */
  "-k", "--indices", "--log", "--raw", "--seed", "--step", "--top-k", "--top-p", "--min-p", "--greedy", "--gumbel",
  /* xent */
  "--targets", "--grad", "--reduction", "--ignore-index", "--label-smoothing", "--z-loss",
  /* score, eval */
  "--odin-temperature", "--gen-gamma", "--gen-m", "--templates-from", "--double", "--id", "--ood", "--labels",
  "--val", "--val-labels", "--scores", "--bins", "--tpr", "--json", "--report", "--perturbed-id",
  "--perturbed-ood", "--bogus",
  /* values */
  "0", "1", "2", "3", "-1", "-2", "-3", "5", "last", "f32", "f64", "f16", "float16", "i32", "npy", "csv", "tsv",
  "auto", "three-pass", "two-pass", "online", "zero", "nan", "inf", "-inf", "0.5", "1e-310", "4.9e-324", "1e308",
  "2e308", "none", "mean", "sum", "-100", "256", "257", "0.1", "0.95", "1.5", "", "x", "18446744073709551615",
  "18446744073709551616", "msp", "energy", "odin", "gen", "kl_matching", "max_logit", "neg_entropy",
  "margin_prob", "margin_logit", "nonuniformity", "msp,energy", "msp,,energy", "100000", "100001",
};
#define NWORDS (sizeof words / sizeof words[0])

static char base[256], work[300], tmpdir[300];
static int devnull_r = -1, devnull_w = -1;

/* ------------------------------------------------ the scratch directory */
static void remove_tree(const char *path, int keep_top) {
  DIR *d = opendir(path);
  if (d) {
    struct dirent *e;
    char p[1024];
    while ((e = readdir(d)) != NULL) {
      if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
      snprintf(p, sizeof p, "%s/%s", path, e->d_name);
      if (unlink(p) != 0) remove_tree(p, 0);
    }
    closedir(d);
  }
  if (!keep_top) rmdir(path);
}

static void cleanup(void) { remove_tree(base, 0); }

static void setup(void) {
  const char *b = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : getenv("TMPDIR");
  snprintf(base, sizeof base, "%s/smx_fuzz_cli.XXXXXX", b && *b ? b : "/tmp");
  REQUIRE(mkdtemp(base) != NULL);
  snprintf(work, sizeof work, "%s/work", base);
  snprintf(tmpdir, sizeof tmpdir, "%s/tmp", base);
  REQUIRE(mkdir(work, 0700) == 0 && mkdir(tmpdir, 0700) == 0);
  /* any word of the table can end up as a file name ("-o --bogus"): relative
   * names must land in the scratch directory, where the checks see them */
  REQUIRE(chdir(work) == 0);
  atexit(cleanup);
  setenv("TMPDIR", tmpdir, 1);
  devnull_r = open("/dev/null", O_RDONLY | O_CLOEXEC);
  devnull_w = open("/dev/null", O_WRONLY | O_CLOEXEC);
  REQUIRE(devnull_r >= 0 && devnull_w >= 0);
  signal(SIGPIPE, SIG_IGN);
}

static void put_file(const char *name, const void *p, size_t n) {
  char path[400];
  snprintf(path, sizeof path, "%s/%s", work, name);
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  REQUIRE(fd >= 0);
  REQUIRE(n == 0 || write(fd, p, n) == (ssize_t)n);
  close(fd);
}

/* What the directory holds: names with their sizes and contents. */
typedef struct entry {
  char name[64];
  int is_dir;
  size_t len;
  unsigned char *bytes;
} entry;
typedef struct snapshot {
  int n;
  entry e[MAX_FILES];
} snapshot;

static void take(snapshot *s) {
  s->n = 0;
  DIR *d = opendir(work);
  REQUIRE(d != NULL);
  struct dirent *de;
  while ((de = readdir(d)) != NULL) {
    if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, "..")) continue;
    REQUIRE(s->n < MAX_FILES);  /* more would be files the command must not make */
    entry *e = &s->e[s->n++];
    REQUIRE(strlen(de->d_name) < sizeof e->name);
    strcpy(e->name, de->d_name);
    char path[400];
    snprintf(path, sizeof path, "%s/%s", work, de->d_name);
    struct stat st;
    REQUIRE(lstat(path, &st) == 0);
    e->is_dir = S_ISDIR(st.st_mode);
    e->len = e->is_dir ? 0 : (size_t)st.st_size;
    e->bytes = malloc(e->len + 1);
    REQUIRE(e->bytes != NULL);
    if (!e->is_dir) {
      int fd = open(path, O_RDONLY | O_CLOEXEC);
      REQUIRE(fd >= 0 && read(fd, e->bytes, e->len) == (ssize_t)e->len);
      close(fd);
    }
  }
  closedir(d);
}

static void drop(snapshot *s) {
  for (int i = 0; i < s->n; i++) free(s->e[i].bytes);
}

static const entry *find(const snapshot *s, const char *name) {
  for (int i = 0; i < s->n; i++)
    if (!strcmp(s->e[i].name, name)) return &s->e[i];
  return NULL;
}

static int same_entry(const entry *a, const entry *b) {
  return a->is_dir == b->is_dir && a->len == b->len && memcmp(a->bytes, b->bytes, a->len) == 0;
}

static int is_temp_name(const char *name) { return name[0] == '.' && strstr(name, ".tmp.") != NULL; }

static int named(char **argv, int argc, const char *name) {
  for (int i = 0; i < argc; i++) {
    const char *slash = strrchr(argv[i], '/');
    if (slash && !strcmp(slash + 1, name) && !strncmp(argv[i], work, strlen(work))) return 1;
    if (!slash && !strcmp(argv[i], name)) return 1;  /* a bare word used as a file name, relative to work */
  }
  return 0;
}

static int dir_is_empty(const char *path) {
  DIR *d = opendir(path);
  REQUIRE(d != NULL);
  struct dirent *e;
  int empty = 1;
  while ((e = readdir(d)) != NULL)
    if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) empty = 0;
  closedir(d);
  return empty;
}

/* ------------------------------------------------ one run */
static void set_knobs(unsigned k) {
  static const char *const block[] = { NULL, "16", "64", "4096" };
  if (block[k & 3]) setenv("SMX_CLI_BLOCK_BYTES", block[k & 3], 1);
  else unsetenv("SMX_CLI_BLOCK_BYTES");
  if (k & 4) setenv("SMX_CLI_SYNC_WRITES", "1", 1);
  else unsetenv("SMX_CLI_SYNC_WRITES");
  if (k & 8) setenv("SMX_CLI_MMAP_IN", "1", 1);
  else unsetenv("SMX_CLI_MMAP_IN");
  if (k & 16) setenv("SMX_CLI_MMAP_OUT", "1", 1);
  else unsetenv("SMX_CLI_MMAP_OUT");
}

/* Standard input: A on a pipe (written whole beforehand) or as a regular file. */
static void set_stdin(int use_pipe, const uint8_t *a, size_t alen) {
  int fd;
  if (use_pipe) {
    int p[2];
    REQUIRE(pipe(p) == 0);
    REQUIRE(alen == 0 || write(p[1], a, alen) == (ssize_t)alen);
    close(p[1]);
    fd = p[0];
  } else {
    char path[400];
    snprintf(path, sizeof path, "%s/in", work);
    fd = open(path, O_RDONLY | O_CLOEXEC);
    REQUIRE(fd >= 0);
  }
  REQUIRE(dup2(fd, STDIN_FILENO) == STDIN_FILENO);
  close(fd);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (devnull_r < 0) setup();
  if (size < 2) return 0;
  const char *cmd = commands[data[0] % (sizeof commands / sizeof commands[0])];
  unsigned how = data[1];
  size_t at = 2;
  char *argv[MAX_ARGS + 3];
  char paths[MAX_ARGS][400];
  int argc = 0;
  argv[argc++] = "smx";
  argv[argc++] = (char *)cmd;
  while (at < size && data[at] != 0xff && argc < MAX_ARGS + 2) {
    const char *w = words[data[at++] % NWORDS];
    if (w[0] == '@') {
      char *p = paths[argc - 2];
      snprintf(p, sizeof paths[0], "%s/%s", work, w + 1);
      argv[argc++] = p;
    } else {
      argv[argc++] = (char *)w;
    }
  }
  argv[argc] = NULL;
  if (at < size && data[at] == 0xff) at++;
  const uint8_t *a = data + at, *sep = memchr(a, 0xfe, size - at), *b = NULL;
  size_t alen = sep ? (size_t)(sep - a) : size - at, blen = 0;
  if (sep) {
    b = sep + 1;
    blen = size - (size_t)(b - data);
  }
  if (alen > MAX_BODY) return 0;

  put_file("in.csv", a, alen);
  put_file("in.tsv", a, alen);
  put_file("in.npy", a, alen);
  put_file("in", a, alen);
  if (b) put_file("aux.npy", b, blen);
  put_file("old.npy", "an existing output\n", 19);
  char dpath[400];
  snprintf(dpath, sizeof dpath, "%s/dir", work);
  REQUIRE(mkdir(dpath, 0700) == 0);
  snapshot before, after;
  take(&before);

  set_knobs(how >> 1);
  set_stdin(how & 1, a, alen);
  int saved_out = dup(STDOUT_FILENO);
  REQUIRE(saved_out >= 0 && dup2(devnull_w, STDOUT_FILENO) == STDOUT_FILENO);
  struct sigaction h0[3], h1[3];
  static const int sigs[3] = { SIGINT, SIGTERM, SIGBUS };
  for (int i = 0; i < 3; i++) sigaction(sigs[i], NULL, &h0[i]);

  int rc = smx_cli_main(argc, argv);

  fflush(stdout);
  REQUIRE(dup2(saved_out, STDOUT_FILENO) == STDOUT_FILENO);
  close(saved_out);
  REQUIRE(dup2(devnull_r, STDIN_FILENO) == STDIN_FILENO);
  for (int i = 0; i < 3; i++) {
    sigaction(sigs[i], NULL, &h1[i]);
    REQUIRE(h1[i].sa_handler == h0[i].sa_handler);
  }
  if (getenv("SMX_FUZZ_CLI_VERBOSE")) {  /* for triage: what ran and how it ended */
    fprintf(stderr, "fuzz_cli: exit %d:", rc);
    for (int i = 1; i < argc; i++) fprintf(stderr, " '%s'", argv[i]);
    fprintf(stderr, " (stdin %s, knobs %u)\n", how & 1 ? "pipe" : "file", how >> 1);
  }
  REQUIRE(cli_cleanup_pending() == 0);  /* every temporary registered during the run was unregistered */

  REQUIRE(rc >= SMX_CLI_EXIT_OK && rc <= SMX_CLI_EXIT_COMPUTE);
  REQUIRE(dir_is_empty(tmpdir));
  take(&after);
  if (rc != 0) {
    REQUIRE(after.n == before.n);
    for (int i = 0; i < after.n; i++) {
      const entry *e = find(&before, after.e[i].name);
      if (!e || !same_entry(e, &after.e[i]))
        fprintf(stderr, "fuzz_cli: exit %d, but %s was made or changed\n", rc, after.e[i].name);
      REQUIRE(e && same_entry(e, &after.e[i]));
    }
  } else {
    for (int i = 0; i < after.n; i++) {
      const entry *e = find(&before, after.e[i].name);
      REQUIRE(!is_temp_name(after.e[i].name));
      if (!named(argv, argc, after.e[i].name)) REQUIRE(e && same_entry(e, &after.e[i]));
    }
  }
  drop(&before);
  drop(&after);
  remove_tree(work, 1);
  return 0;
}
