/*
 * smx demo, smx bench and smx info: a look at the library without any data
 * file. demo prints softmax of sample rows and a quick speed table; bench
 * runs the full comparison (bench/smx_bench) when it was built, else the
 * quick table; info prints the version and the kernels in use.
 */
#define _DEFAULT_SOURCE 1  /* as the tests directory defines it: the fuzz target compiles this file there */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli/message.h"
#include "cli/options.h"
#include "commands.h"
#include "smx/smx.h"

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static void print_row(const char *label, const float *v, size_t n) {
  printf("  %-12s [", label);
  for (size_t i = 0; i < n; i++) printf("%s%.6g", i ? ", " : "", v[i]);
  printf("]\n");
}

static int demo_rows(void) {
  static const struct { const char *what; float x[5]; size_t n; } rows[] = {
    { "plain", { 1.0f, 2.0f, 3.0f, 4.0f, 1.0f }, 5 },
    { "huge", { 1000.0f, 1001.0f, 999.0f, 1002.0f, 0.0f }, 5 },
    { "masked", { 2.0f, -INFINITY, 0.5f, -INFINITY, 1.0f }, 5 },
    { "+inf", { 3.0f, INFINITY, 1.0f, INFINITY, 2.0f }, 5 },
    { "all -inf", { -INFINITY, -INFINITY, -INFINITY, -INFINITY, -INFINITY }, 5 },
  };
  for (size_t r = 0; r < sizeof rows / sizeof rows[0]; r++) {
    float y[5], z[5], lse;
    smx_status s1 = smx_softmax_f32(rows[r].x, y, rows[r].n, NULL);
    smx_status s2 = smx_log_softmax_f32(rows[r].x, z, rows[r].n, NULL);
    smx_status s3 = smx_logsumexp_f32(rows[r].x, &lse, rows[r].n, NULL);
    if (s1 || s2 || s3) {
      fprintf(stderr, "smx: %s\n", smx_status_string(s1 ? s1 : s2 ? s2 : s3));
      return 2;
    }
    printf("%s row:\n", rows[r].what);
    print_row("x", rows[r].x, rows[r].n);
    print_row("softmax", y, rows[r].n);
    print_row("log-softmax", z, rows[r].n);
    printf("  %-12s %.9g\n", "logsumexp", lse);
  }
  float t[3] = { 1.0f, 2.0f, 3.0f }, y[3];
  smx_options o = { SMX_ALGO_AUTO, 0.5f, 0, 0, NULL };
  smx_softmax_f32(t, y, 3, &o);
  printf("temperature 0.5:\n");
  print_row("x", t, 3);
  print_row("softmax", y, 3);
  return 0;
}

/* median of reps timings (sorted in place), in ns per element of n */
static double median_ns(double *ts, int reps, size_t n) {
  for (int i = 0; i < reps; i++)
    for (int j = i + 1; j < reps; j++)
      if (ts[j] < ts[i]) { double t = ts[i]; ts[i] = ts[j]; ts[j] = t; }
  return ts[reps / 2] * 1e9 / (double)n;
}

/* median of `reps` timings of one call, in ns per element */
static double time_call(int op, const float *x, float *y, size_t rows, size_t cols, const smx_options *o, int reps) {
  double ts[16];
  /* short calls are repeated so that one timing spans at least ~64Ki elements */
  size_t inner = rows * cols >= ((size_t)1 << 16) ? 1 : ((size_t)1 << 16) / (rows * cols);
  for (int r = 0; r < reps; r++) {
    double t0 = now();
    for (size_t k = 0; k < inner; k++) {
      if (op == 0) smx_softmax_rows_f32(x, cols, y, cols, rows, cols, o);
      else if (op == 1) smx_log_softmax_rows_f32(x, cols, y, cols, rows, cols, o);
      else smx_logsumexp_rows_f32(x, cols, y, rows, cols, o);
    }
    ts[r] = (now() - t0) / (double)inner;
  }
  return median_ns(ts, reps, rows * cols);
}

/* the textbook loop, as a yardstick: max, expf and sum, scale */
static double time_plain(const float *x, float *y, size_t rows, size_t cols, int reps) {
  double ts[16];
  for (int r = 0; r < reps; r++) {
    double t0 = now();
    for (size_t i = 0; i < rows; i++) {
      const float *xr = x + i * cols;
      float *yr = y + i * cols;
      float m = -INFINITY, s = 0.0f;
      for (size_t j = 0; j < cols; j++) m = xr[j] > m ? xr[j] : m;
      for (size_t j = 0; j < cols; j++) s += (yr[j] = expf(xr[j] - m));
      for (size_t j = 0; j < cols; j++) yr[j] /= s;
    }
    ts[r] = now() - t0;
  }
  return median_ns(ts, reps, rows * cols);
}

static int demo_speed(void) {
  static const struct { size_t rows, cols; } cases[] = { { 1, 1024 }, { 1, 16384 }, { 1, 262144 }, { 1024, 1000 }, { 64, 32000 } };
  printf("\nquick speed table (ns per element, median of 9; ISA %s; `smx_bench` compares with oneDNN and XNNPACK)\n",
         smx_isa());
  printf("%-12s %10s %10s %10s %10s %10s %10s %10s\n", "rows x cols", "auto", "3-pass", "2-pass", "online", "log-sm", "lse",
         "plain C");
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    size_t rows = cases[c].rows, cols = cases[c].cols, n = rows * cols;
    float *x = malloc(n * sizeof(float)), *y = malloc(n * sizeof(float));
    if (!x || !y) { fprintf(stderr, "smx: out of memory\n"); free(x); free(y); return 2; }
    unsigned long long st = 12345;
    for (size_t i = 0; i < n; i++) {
      st = st * 6364136223846793005ull + 1442695040888963407ull;
      x[i] = (float)((st >> 40) & 0xffff) / 3276.8f - 10.0f;
    }
    int reps = 9;
    double t[7];
    for (int a = 0; a < 4; a++) {
      smx_options o = { (smx_algo)a, 0, 0, 1, NULL };
      time_call(0, x, y, rows, cols, &o, 1);
      t[a] = time_call(0, x, y, rows, cols, &o, reps);
    }
    t[4] = time_call(1, x, y, rows, cols, NULL, reps);
    t[5] = time_call(2, x, y, rows, cols, NULL, reps);
    t[6] = time_plain(x, y, rows, cols, reps);
    char label[32];
    snprintf(label, sizeof label, "%zux%zu", rows, cols);
    printf("%-12s %10.3f %10.3f %10.3f %10.3f %10.3f %10.3f %10.3f\n", label, t[0], t[1], t[2], t[3], t[4], t[5], t[6]);
    free(x);
    free(y);
  }
  return 0;
}

/* smx bench: runs the full benchmark (bench/smx_bench: smx against oneDNN,
 * XNNPACK and the memory roof) when it was built, from next to this program
 * (installed) or from the build tree; otherwise the quick table of smx demo. */
static int cmd_bench(const cli_spec *s, int argc, char **argv) {
  (void)s;
  char self[4096], path[4200];
  ssize_t len = readlink("/proc/self/exe", self, sizeof self - 1);
  if (len > 0) {
    self[len] = '\0';
    char *slash = strrchr(self, '/');
    if (slash) *slash = '\0';
    const char *rel[] = { "/smx_bench", "/../bench/smx_bench" };
    for (int i = 0; i < 2; i++) {
      snprintf(path, sizeof path, "%s%s", self, rel[i]);
      if (access(path, X_OK) == 0) {
        char **args = calloc((size_t)argc + 2, sizeof *args);
        if (!args) break;
        args[0] = path;
        for (int a = 0; a < argc; a++) args[a + 1] = argv[a];
        fflush(stdout);
        execv(path, args);
        free(args);   /* execv returned: fall through to the quick table */
      }
    }
  }
  fprintf(stderr, "smx: smx_bench (the comparison with oneDNN and XNNPACK) is not installed here; "
                  "showing the quick table\n");
  return demo_speed();
}

static int cmd_demo(const cli_spec *s, int argc, char **argv) {
  int rc = cli_parse(s, argc, argv, NULL, NULL);
  if (rc) return rc;
  rc = demo_rows();
  return rc ? rc : demo_speed();
}

static int cmd_info(const cli_spec *s, int argc, char **argv) {
  static const char *lv[] = { "scalar", "avx2", "avx512", "neon", "avx512bf16" };   /* by smx_isa_level */
  int rc = cli_parse(s, argc, argv, NULL, NULL);
  if (rc) return rc;
  printf("smx %s\nkernels in use: %s\ncpu supports: %s\n", smx_version_string(), smx_isa(), lv[smx_cpu_isa()]);
  char text[8192];
  smx_auto_describe(text, sizeof text);
  fputs(text, stdout);
  return 0;
}

const cli_spec smx_demo_spec = {
  .name = "demo", .run = cmd_demo, .summary = "softmax of sample rows and a quick speed table", .usage = "",
  .pos_what = "no arguments",
  .about = "Prints softmax, log-softmax and logsumexp of a few sample rows (plain, huge,\n"
  "masked, +inf, all -inf, temperature 0.5) and a quick speed table of the kernels.\n" };
const cli_spec smx_bench_spec = {   /* its arguments go to smx_bench unread (maxpos -1) */
  .name = "bench", .run = cmd_bench, .summary = "smx against oneDNN, XNNPACK and the memory roof",
  .usage = "[--quick] [--csv FILE]", .maxpos = -1,
  .about = "Runs smx_bench, which compares smx with oneDNN, XNNPACK and the memory roof,\n"
  "when it was built (installed next to smx, or in the build tree); otherwise\n"
  "prints the quick speed table of smx demo. The options go to smx_bench.\n" };
const cli_spec smx_info_spec = {
  .name = "info", .run = cmd_info, .summary = "version, kernel set in use, CPU support", .usage = "",
  .pos_what = "no arguments",
  .about = "Prints the version, the kernel set in use, what the CPU supports, its cache\n"
  "sizes and where SMX_ALGO_AUTO switches to the two-pass algorithm (from the\n"
  "cache sizes, or from wisdom: SMX_WISDOM=1 or a file, SMX_NO_WISDOM=1).\n" };
