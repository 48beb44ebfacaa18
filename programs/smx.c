/*
 * smx: the command-line front end. `smx softmax|log-softmax|logsumexp` run
 * over .npy files (programs/cmd_rows.c); `smx demo` (the default) prints sample
 * rows and a quick speed table; `smx info` prints the build. Data goes to
 * files or stdout, messages to stderr prefixed "smx: "; exit codes in cli.h.
 */
#define _DEFAULT_SOURCE 1  /* as the tests directory defines it: the fuzz target compiles this file there */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
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
    smx_status s3 = smx_logsumexp_f32(rows[r].x, rows[r].n, &lse, NULL);
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
  smx_options o = { SMX_ALGO_AUTO, 0.5f, 0, 0 };
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
      smx_options o = { (smx_algo)a, 0, 0, 1 };
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

static void usage(FILE *f) {
  fprintf(f,
          "usage: smx COMMAND [options]\n"
          "  softmax IN -o OUT              softmax over an axis (default the last)\n"
          "  log-softmax IN -o OUT          log-softmax over an axis\n"
          "  logsumexp IN -o OUT            log-sum-exp over an axis (the axis is removed)\n"
          "  score KIND IN.npy -o OUT.npy   per-sample scores (higher = more in-distribution), float64\n"
          "  eval --id ID.npy --ood OOD.npy [--labels L.npy] [--val V.npy --val-labels VL.npy]\n"
          "       [--scores msp,energy,...] [--json F] [--report F.html]   OOD metrics and calibration\n"
          "  demo                           softmax of sample rows and a quick speed table\n"
          "  bench [--quick] [--csv FILE]   smx against oneDNN, XNNPACK and the memory roof\n"
          "  info                           version, kernel set in use, CPU support\n"
          "  topk IN.npy -k K -o VALUES.npy [--indices IDX.npy] [--log | --raw]\n"
          "                                 the K largest softmax probabilities of each row\n"
          "                                 (fused, ties to the lowest index); --log: log-probs,\n"
          "                                 --raw: the logits; also -t, --threads, --masked-row\n"
          "  sample IN.npy -o TOKENS.npy --seed S [--step N] [-t T] [--top-k K] [--top-p P]\n"
          "         [--min-p P] [--greedy] [--gumbel] [--threads N]\n"
          "                                 one int64 token per row; filters in the order\n"
          "                                 temperature, top-k, top-p, min-p; -t 0 is greedy;\n"
          "                                 the same tokens for any --threads\n"
          "  xent LOGITS.npy --targets T.npy [-o LOSS.npy] [--grad GRAD.npy]\n"
          "                                 cross-entropy over the last axis (integer targets)\n"
          "    --reduction none|mean|sum  (default mean; without -o the value is printed)\n"
          "    --ignore-index I  (default -100)   --label-smoothing E   --z-loss Z\n"
          "    -t T, --threads N, --masked-row zero|nan, -q as for softmax; a bad target is exit 2\n"
          "options for softmax, log-softmax and logsumexp:\n"
          "  -o, --output FILE      output file (- for stdout); a regular file is written whole\n"
          "                         or not at all (a temporary renamed over it); a device, FIFO\n"
          "                         or socket is written in place, as a stream, never replaced\n"
          "  -a, --axis A           the axis, negative counts from the end (default -1)\n"
          "  -t, --temperature T    compute softmax(x / T), T > 0 (default 1)\n"
          "  --dtype f32|f64|f16    output dtype (default: the input's float type; float32\n"
          "                         for integer input, float64 for text input)\n"
          "  --format npy|csv|tsv   output format (default: from the extension of OUT, else\n"
          "                         npy; the input's format for -o -)\n"
          "  --in-format npy|csv|tsv  input format (default: from the extension of IN, else npy)\n"
          "  --algo A               auto, three-pass, two-pass or online (default auto)\n"
          "  --threads N            threads to use (default 1)\n"
          "  --masked-row zero|nan  rows of all -inf: 0 / -inf (default) or NaN\n"
          "  -q, --quiet            no progress line on stderr\n"
          "IN may be - for stdin. .npy input of any dtype, byte order and C or Fortran order\n"
          "is streamed in bounded memory and computed in its own precision (float64 with the\n"
          "float64 kernels, float16 with the float16 ones, everything else in float32, or in\n"
          "float64 with --dtype f64); the output keeps the input's order. CSV/TSV: one row per\n"
          "line, ',' or tab between values, nan/inf/-inf accepted, blank and '#' lines skipped;\n"
          "written with round-trip digits (%%.9g float32, %%.17g float64, %%.5g float16).\n"
          "options for score and eval:\n"
          "  --temperature T        energy's T (score: also odin's), default 1\n"
          "  --odin-temperature T   ODIN's T (default 1000); ODIN here has no input perturbation:\n"
          "                         to get it, pass logits of perturbed inputs from your framework\n"
          "  --gen-gamma G --gen-m M  GEN's gamma in (0, 1] (0.1) and top-M classes (100)\n"
          "  --templates-from REF.npy  kl_matching templates from reference logits (eval: --val)\n"
          "  --double               msp and energy in double instead of the f32 kernels\n"
          "  eval: --scores LIST (default all; kl_matching needs --val), --bins N (15),\n"
          "        --perturbed-id F --perturbed-ood F (one per --ood): ODIN from perturbed-input logits,\n"
          "        --tpr R (0.95), --json FILE (- for stdout), --report FILE.html, -q\n"
          "exit codes: 0 ok, 1 usage, 2 bad input, 3 output not written, 4 computation refused;\n"
          "            a terminating signal (INT, TERM, HUP, PIPE, ...) removes the temporary files and\n"
          "            ends smx by that signal (a shell shows 128 + its number, 130 for Ctrl-C)\n");
}

/* smx bench: runs the full benchmark (bench/smx_bench: smx against oneDNN,
 * XNNPACK and the memory roof) when it was built, from next to this program
 * (installed) or from the build tree; otherwise the quick table of smx demo. */
static int run_bench(int argc, char **argv) {
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

int smx_cli_main(int argc, char **argv) {
  if (smx_version_number() != SMX_VERSION_NUMBER) {
    fprintf(stderr, "smx: library version %s does not match this program\n", smx_version_string());
    return 2;
  }
  const char *cmd = argc > 1 ? argv[1] : "demo";
  if (!strcmp(cmd, "--help") || !strcmp(cmd, "-h")) { usage(stdout); return 0; }
  if (!strcmp(cmd, "--version")) { printf("smx %s\n", smx_version_string()); return 0; }
  if (!strcmp(cmd, "info")) {
    static const char *lv[] = { "scalar", "avx2", "avx512" };
    printf("smx %s\nkernels in use: %s\ncpu supports: %s\n", smx_version_string(), smx_isa(), lv[smx_cpu_isa()]);
    return 0;
  }
  if (!strcmp(cmd, "demo")) {
    int rc = demo_rows();
    return rc ? rc : demo_speed();
  }
  if (!strcmp(cmd, "bench")) return run_bench(argc - 2, argv + 2);
  if (!strcmp(cmd, "softmax") || !strcmp(cmd, "log-softmax") || !strcmp(cmd, "logsumexp"))
    return smx_cmd_rows(cmd, argc - 2, argv + 2);
  if (!strcmp(cmd, "xent")) return smx_cmd_xent(argc - 2, argv + 2);
  if (!strcmp(cmd, "topk")) return smx_cmd_topk(argc - 2, argv + 2);
  if (!strcmp(cmd, "sample")) return smx_cmd_sample(argc - 2, argv + 2);
  if (!strcmp(cmd, "score")) return smx_cmd_score(argc - 2, argv + 2);
  if (!strcmp(cmd, "eval")) return smx_cmd_eval(argc - 2, argv + 2);
  return smx_cli_usage_error("unknown command '%s'", cmd);
}
