/*
 * smx_cuda argument checks: every refusal returns its status before anything
 * is enqueued, and the outputs keep their contents. The checks that need no
 * device (options, temperatures, shapes, the workspace query) run on every
 * machine; those on pointers (NULL, host memory, misaligned, overlapping, the
 * workspace) need a GPU.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include "harness.h"

static void host_rules(void) {
  size_t b = 1;
  CHECK(smx_cuda_workspace_size(SMX_CUDA_SOFTMAX, 100, 1000, &b) == SMX_OK && b == 0, "short rows need no workspace");
  CHECK(smx_cuda_workspace_size(SMX_CUDA_SOFTMAX, 4, 1u << 26, &b) == SMX_OK && b > 0, "2^26 rows need one");
  CHECK(smx_cuda_workspace_size(SMX_CUDA_CROSS_ENTROPY, 4, 10, &b) == SMX_OK && b >= 64 + 32, "xent always needs one");
  CHECK(smx_cuda_workspace_size(SMX_CUDA_SOFTMAX, 4, ((size_t)1 << 26) + 1, &b) == SMX_E_INVALID_ARG, "cols too long");
  CHECK(smx_cuda_workspace_size((smx_cuda_op)9, 4, 10, &b) == SMX_E_INVALID_ARG, "unknown op");
  CHECK(smx_cuda_workspace_size(SMX_CUDA_SOFTMAX, 4, 10, NULL) == SMX_E_INVALID_ARG, "NULL bytes");
  CHECK(smx_cuda_workspace_size(SMX_CUDA_SOFTMAX, SIZE_MAX / 2, 1u << 26, &b) == SMX_E_INVALID_ARG, "overflow");
  CHECK(smx_cuda_device_count(NULL) == SMX_E_INVALID_ARG, "NULL count");
  /* options: refused before any pointer is looked at */
  float *p = (float *)(uintptr_t)64;   /* never dereferenced: the options are refused first */
  smx_options o;
  memset(&o, 0, sizeof o);
  o.temperature = NAN;
  CHECK(smx_cuda_softmax_rows_f32(p, 8, p, 8, 2, 8, NULL, &o) == SMX_E_INVALID_ARG, "NaN temperature");
  o.temperature = -1.0;
  CHECK(smx_cuda_log_softmax_rows_f32(p, 8, p, 8, 2, 8, NULL, &o) == SMX_E_INVALID_ARG, "negative temperature");
  o.temperature = 1e-35;
  CHECK(smx_cuda_softmax_rows_f32(p, 8, p, 8, 2, 8, NULL, &o) == SMX_E_UNSUPPORTED, "temperature beyond the float c");
  o.temperature = 0.0;
  o.flags = 0x100;
  CHECK(smx_cuda_softmax_rows_f32(p, 8, p, 8, 2, 8, NULL, &o) == SMX_E_INVALID_ARG, "unknown flag");
  o.flags = 0;
  o.threads = -1;
  CHECK(smx_cuda_softmax_rows_f32(p, 8, p, 8, 2, 8, NULL, &o) == SMX_E_INVALID_ARG, "negative threads");
  o.threads = 0;
  CHECK(smx_cuda_softmax_rows_f32(p, 7, p, 8, 2, 8, NULL, NULL) == SMX_E_INVALID_ARG, "ldx < cols");
  CHECK(smx_cuda_softmax_backward_rows_f32(p, 8, p, 7, p, 8, 2, 8, NULL, NULL) == SMX_E_INVALID_ARG, "lddy < cols");
  CHECK(smx_cuda_softmax_rows_f32(p, 1u << 27, p, 1u << 27, 2, (1u << 26) + 1, NULL, NULL) == SMX_E_INVALID_ARG,
        "cols above SMX_CUDA_MAX_COLS");
  CHECK(smx_cuda_softmax_rows_f32(NULL, 8, NULL, 8, 0, 8, NULL, NULL) == SMX_OK, "rows == 0: nothing to do");
  smx_loss_ext le = SMX_LOSS_EXT_INIT;
  le.label_smoothing = 1.5;
  o.loss = &le;
  CHECK(smx_cuda_cross_entropy_f32(p, 8, NULL, p, NULL, 8, NULL, 2, 8, NULL, &o) == SMX_E_INVALID_ARG, "smoothing 1.5");
  le.label_smoothing = 0.0;
  le.z_loss = -1.0;
  CHECK(smx_cuda_cross_entropy_f32(p, 8, NULL, p, NULL, 8, NULL, 2, 8, NULL, &o) == SMX_E_INVALID_ARG, "z-loss < 0");
  le.z_loss = 0.0;
  le.reduction = (smx_reduction)7;
  CHECK(smx_cuda_cross_entropy_f32(p, 8, NULL, p, NULL, 8, NULL, 2, 8, NULL, &o) == SMX_E_INVALID_ARG, "reduction");
  CHECK(smx_cuda_cross_entropy_status(NULL) == SMX_E_INVALID_ARG, "status without a workspace");
  CHECK(strlen(smx_cuda_last_error()) < 320, "last error is a string");
  CHECK(strcmp(smx_status_string(SMX_E_DEVICE), "unknown status") != 0 && SMX_E_DEVICE == 22, "SMX_E_DEVICE");
}

/* a device buffer's bytes are unchanged */
static int unchanged(const void *d, const unsigned char *want, size_t bytes) {
  unsigned char *h = malloc(bytes);
  dev_copy_to_host(h, d, bytes);
  int same = memcmp(h, want, bytes) == 0;
  free(h);
  return same;
}

static void device_rules(void) {
  const size_t rows = 4, cols = 64, n = rows * cols, bytes = n * 4 + 64;
  unsigned char *pattern = malloc(bytes);
  for (size_t i = 0; i < bytes; i++) pattern[i] = (unsigned char)(i * 37 + 11);
  float *x = dev_alloc(bytes), *y = dev_alloc(bytes);
  dev_copy_from_host(x, pattern, bytes);
  dev_copy_from_host(y, pattern, bytes);
  float host[64];
  int64_t *t = dev_alloc(rows * sizeof(int64_t)), th[4] = { 0, 1, 2, 3 };
  dev_copy_from_host(t, th, sizeof th);
#define REFUSED(call, want, what)                                                                     \
  do {                                                                                                \
    smx_status st_ = (call);                                                                          \
    CHECK(st_ == (want), "%s: %s, want %s", what, smx_status_string(st_), smx_status_string(want));   \
    dev_sync(what);                                                                                   \
    CHECK(unchanged(x, pattern, bytes) && unchanged(y, pattern, bytes), "%s: a buffer was written", what); \
  } while (0)
  REFUSED(smx_cuda_softmax_rows_f32(NULL, cols, y, cols, rows, cols, NULL, NULL), SMX_E_INVALID_ARG, "NULL x");
  REFUSED(smx_cuda_softmax_rows_f32(x, cols, NULL, cols, rows, cols, NULL, NULL), SMX_E_INVALID_ARG, "NULL y");
  REFUSED(smx_cuda_softmax_rows_f32(host, 16, y, 16, 4, 16, NULL, NULL), SMX_E_INVALID_ARG, "host x");
  REFUSED(smx_cuda_softmax_rows_f32(x, 16, host, 16, 4, 16, NULL, NULL), SMX_E_INVALID_ARG, "host y");
  REFUSED(smx_cuda_softmax_rows_f32((const float *)(const void *)((char *)x + 2), cols, y, cols, rows, cols, NULL,
                                    NULL),
          SMX_E_INVALID_ARG, "misaligned x");
  REFUSED(smx_cuda_softmax_rows_bf16((const uint16_t *)(const void *)((char *)x + 1), cols, (uint16_t *)(void *)y,
                                     cols, rows, cols, NULL, NULL),
          SMX_E_INVALID_ARG, "misaligned bf16 x");
  REFUSED(smx_cuda_softmax_rows_f32(y + 1, cols, y, cols, rows, cols, NULL, NULL), SMX_E_INVALID_ARG,
          "x and y overlapping, not exactly");
  REFUSED(smx_cuda_softmax_rows_f32(x, cols, y, cols - 1, rows, cols, NULL, NULL), SMX_E_INVALID_ARG, "ldy < cols");
  REFUSED(smx_cuda_logsumexp_rows_f32(x, cols, x + 3, rows, cols, NULL, NULL), SMX_E_INVALID_ARG, "lse inside x");
  REFUSED(smx_cuda_softmax_backward_rows_f32(x, cols, y, cols, x + 1, cols, rows, cols, NULL, NULL), SMX_E_INVALID_ARG,
          "dx overlapping y, not exactly");
  REFUSED(smx_cuda_cross_entropy_f32(x, cols, t, y, NULL, cols, NULL, rows, cols, NULL, NULL),
          SMX_E_WORKSPACE_TOO_SMALL, "xent without a workspace");
  smx_cuda_exec ex;
  exec_with_workspace(&ex, SMX_CUDA_CROSS_ENTROPY, rows, cols);
  REFUSED(smx_cuda_cross_entropy_f32(x, cols, (const int64_t *)th, y, NULL, cols, NULL, rows, cols, &ex, NULL),
          SMX_E_INVALID_ARG, "host targets");
  REFUSED(smx_cuda_cross_entropy_f32(x, cols, t, y, x + 1, cols, NULL, rows, cols, &ex, NULL), SMX_E_INVALID_ARG,
          "grad overlapping the logits, not exactly");
  REFUSED(smx_cuda_cross_entropy_f32(x, cols, t, x + 2, NULL, cols, NULL, rows, cols, &ex, NULL), SMX_E_INVALID_ARG,
          "loss inside the logits");
  smx_cuda_exec small = ex;
  small.workspace_bytes -= 1;
  REFUSED(smx_cuda_cross_entropy_f32(x, cols, t, y, NULL, cols, NULL, rows, cols, &small, NULL),
          SMX_E_WORKSPACE_TOO_SMALL, "workspace one byte short");
  small = ex;
  small.workspace = (char *)ex.workspace + 8;   /* the size is claimed whole: the alignment is what is refused */
  REFUSED(smx_cuda_cross_entropy_f32(x, cols, t, y, NULL, cols, NULL, rows, cols, &small, NULL), SMX_E_INVALID_ARG,
          "workspace not 16-byte aligned");
  exec_free(&ex);
  /* a long row: its workspace is required */
  size_t big = (size_t)1 << 20;
  float *bx = dev_alloc(big * 4), *by = dev_alloc(big * 4);
  smx_status st = smx_cuda_softmax_rows_f32(bx, big, by, big, 1, big, NULL, NULL);
  CHECK(st == SMX_E_WORKSPACE_TOO_SMALL, "2^20 row without a workspace: %s", smx_status_string(st));
  dev_sync("2^20 row without a workspace");
  dev_free(bx);
  dev_free(by);
  free(pattern);
  dev_free(t);
  dev_free(x);
  dev_free(y);
}

int main(void) {
  backend_init("test_cuda_args");
  host_rules();
  if (use_gpu) device_rules();
  return finish("test_cuda_args");
}
