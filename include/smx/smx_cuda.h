/*
 * smx on NVIDIA GPUs (libsmx_cuda, built with -DSMX_CUDA=AUTO|ON when CMake
 * finds a CUDA compiler; docs/cuda.md): softmax, log-softmax, log-sum-exp,
 * their backward passes, the fused cross-entropy, fused softmax + top-k and
 * sampling over rows that live in device memory.
 *
 * The conventions of smx.h hold: inputs (pointer + leading dimension),
 * outputs, the shape, the operation's own parameters, then the options last
 * (const smx_options *, NULL: the defaults); every function returns an
 * smx_status; f32, f16 and bf16 storage (uint16_t bit patterns) with f32
 * arithmetic; the same special-value policy (NaN rows, -inf masks, all-masked
 * rows and SMX_FLAG_MASKED_ROW_NAN, k entries at +inf get 1/k) and the same
 * argument refusals as the CPU functions of the same name, plus the device's.
 * opt->threads and opt->algo are checked as on the CPU and otherwise ignored.
 *
 * This header needs no CUDA header: the stream is a void * holding a
 * cudaStream_t (NULL: the legacy default stream), carried with the workspace
 * in an smx_cuda_exec placed just before the options.
 *
 * Asynchrony. Every call only enqueues work on the stream and returns; it
 * never synchronises, allocates or prints. Arguments are checked on the host
 * before anything is enqueued (SMX_E_INVALID_ARG, nothing written): NULL
 * pointers when there is work, a pointer that is not device memory of the
 * current device (cudaPointerGetAttributes) or not aligned to its element
 * (workspace: 16 bytes), a stream of another device (CUDA 12.8 and later), a
 * leading dimension below cols, sizes whose products overflow, cols above
 * SMX_CUDA_MAX_COLS, overlapping inputs and outputs other than exactly (in
 * place), a workspace smaller than smx_cuda_workspace_size(). A CUDA error
 * met while enqueueing is returned as SMX_E_DEVICE, its message kept for
 * smx_cuda_last_error(); an error of the kernels themselves surfaces, as
 * CUDA's do, at the caller's next synchronisation (and as SMX_E_DEVICE from
 * the next smx_cuda call that meets it).
 *
 * Temperature: any T whose log2(e)/T lies in [2^-100, 2^100] (about
 * 1.4e-30 <= T <= 1.8e30); outside it SMX_E_UNSUPPORTED (the CPU library
 * carries such T in double; the GPU kernels hold log2(e)/T in float).
 *
 * Results are bitwise the same from run to run and for any stream: every
 * reduction (within a row, across the blocks of a long row, over rows) runs in
 * a fixed order, with no atomics on floating-point values. They may differ
 * from the CPU library's in the last bits; both meet the bounds of smx.h and
 * smx_grad.h, which hold here unchanged (checked against float64 references
 * by tests/cuda/).
 */
#ifndef SMX_SMX_CUDA_H
#define SMX_SMX_CUDA_H

#include <stddef.h>
#include <stdint.h>

#include "smx/smx.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The longest row the kernels take (2^26 entries, the CPU tests' longest). */
#define SMX_CUDA_MAX_COLS ((size_t)1 << 26)

/* Where a call runs. NULL, or all zero: the default stream, no workspace. */
typedef struct smx_cuda_exec {
  void *stream;            /* a cudaStream_t of the current device, or NULL (the default stream)   */
  void *workspace;         /* device memory, 16-byte aligned, used by the call's kernels only;  */
  size_t workspace_bytes;  /* at least smx_cuda_workspace_size(), else SMX_E_WORKSPACE_TOO_SMALL */
} smx_cuda_exec;

/* The operations, for smx_cuda_workspace_size(). */
typedef enum smx_cuda_op {
  SMX_CUDA_SOFTMAX = 0,
  SMX_CUDA_LOG_SOFTMAX = 1,
  SMX_CUDA_LOGSUMEXP = 2,
  SMX_CUDA_SOFTMAX_BACKWARD = 3,
  SMX_CUDA_LOG_SOFTMAX_BACKWARD = 4,
  SMX_CUDA_CROSS_ENTROPY = 5
} smx_cuda_op;

/*
 * The workspace a call of op on rows x cols needs, in *bytes (the same for
 * every dtype and option). It is 0 for the row ops while each row fits one
 * block (cols <= 16384 forward, 8192 backward); longer rows are split across
 * blocks whose (max, sum) states wait there, 40 bytes per segment of a row
 * (16384 entries forward, 8192 backward) plus 40 per row. The cross-entropy
 * always needs one: 64 bytes of status and row count, 8 per row for the
 * reductions, and the long rows' states. A workspace may be reused by any later call on the same stream (the calls are ordered);
 * two streams running at once need two. SMX_E_INVALID_ARG for a NULL bytes, an
 * unknown op, cols above SMX_CUDA_MAX_COLS or a size that overflows.
 */
SMX_API smx_status smx_cuda_workspace_size(smx_cuda_op op, size_t rows, size_t cols, size_t *bytes);

/* The number of CUDA devices in *count (0 without a driver or a GPU: then SMX_OK too). */
SMX_API smx_status smx_cuda_device_count(int *count);

/* The message of this thread's last SMX_E_DEVICE ("" if none): CUDA's error name and string, and what smx
 * was doing. A static per-thread buffer, valid until the next smx_cuda call of the thread. */
SMX_API const char *smx_cuda_last_error(void);

/* ---------------------------------------------------------- row operations */
/*
 * As smx_softmax_rows_f32 and friends (smx.h), on device rows. y may equal x
 * (with ldy == ldx). logsumexp writes rows floats to out. rows == 0 or
 * cols == 0: SMX_OK, nothing enqueued (log-sum-exp of empty rows: -inf each).
 * Accuracy: the bounds of smx.h (f16 / bf16: plus the storage rounding).
 * Work: rows up to 16384 entries are read once (a warp per row up to 1024,
 * up to 512 lanes per row above, the row held in registers); longer rows are
 * read twice (each block's (max, sum) state, merged per row in a fixed tree,
 * then the writes), so their workspace is needed.
 */
#define SMX_CUDA_DECLARE_ROWS(T, sfx)                                                                          \
  SMX_API smx_status smx_cuda_softmax_rows_##sfx(const T *x, size_t ldx, T *y, size_t ldy, size_t rows,       \
                                                 size_t cols, const smx_cuda_exec *ex, const smx_options *opt); \
  SMX_API smx_status smx_cuda_log_softmax_rows_##sfx(const T *x, size_t ldx, T *y, size_t ldy, size_t rows,   \
                                                     size_t cols, const smx_cuda_exec *ex,                     \
                                                     const smx_options *opt);                                  \
  SMX_API smx_status smx_cuda_logsumexp_rows_##sfx(const T *x, size_t ldx, float *out, size_t rows,           \
                                                   size_t cols, const smx_cuda_exec *ex, const smx_options *opt);
SMX_CUDA_DECLARE_ROWS(float, f32)
SMX_CUDA_DECLARE_ROWS(uint16_t, f16)
SMX_CUDA_DECLARE_ROWS(uint16_t, bf16)

/* ---------------------------------------------------------- backward passes */
/*
 * As smx_softmax_backward_rows_f32 and smx_log_softmax_backward_rows_f32
 * (smx_grad.h): dx = (1/T) y (dy - <dy, y>) and dx = (1/T) (dy - exp(y) sum(dy)),
 * the reduction in double. dx may equal y or dy (same leading dimension).
 * Rows up to 8192 entries read y and dy once; longer rows twice (workspace).
 */
#define SMX_CUDA_DECLARE_BWD(T, sfx)                                                                           \
  SMX_API smx_status smx_cuda_softmax_backward_rows_##sfx(const T *y, size_t ldy, const T *dy, size_t lddy,   \
                                                          T *dx, size_t lddx, size_t rows, size_t cols,       \
                                                          const smx_cuda_exec *ex, const smx_options *opt);   \
  SMX_API smx_status smx_cuda_log_softmax_backward_rows_##sfx(const T *y, size_t ldy, const T *dy,            \
                                                              size_t lddy, T *dx, size_t lddx, size_t rows,   \
                                                              size_t cols, const smx_cuda_exec *ex,           \
                                                              const smx_options *opt);
SMX_CUDA_DECLARE_BWD(float, f32)
SMX_CUDA_DECLARE_BWD(uint16_t, f16)
SMX_CUDA_DECLARE_BWD(uint16_t, bf16)

/* ----------------------------------------------------------- cross-entropy */
/*
 * As smx_cross_entropy_f32 (smx_grad.h): the loss per row, or its SUM / MEAN
 * (opt->loss: reduction, ignore_index, label_smoothing, z_loss, grad_scale;
 * the temperature and SMX_FLAG_MASKED_ROW_NAN), the gradient (NULL: none;
 * grad == logits with ldg == ld: in place) and lse (NULL: none), in one call,
 * with no rows x cols temporary. loss, lse: device floats; targets: device
 * int64. A workspace is required (smx_cuda_workspace_size).
 *
 * Targets are checked on the device, as the first kernel of the call: if any
 * is outside [0, cols) and not ignore_index, the call's later kernels write
 * nothing at all (loss, lse and grad keep their contents) and the workspace
 * records it. smx_cuda_cross_entropy_status() reads that record back; it is
 * the one function here that synchronises (the stream of ex). A caller that
 * does not check may use garbage outputs only if its targets can be bad.
 *
 * Reductions: the row losses are summed in double in a fixed tree (bitwise
 * the same every run; not the CPU's sequential order, so the last bits may
 * differ from the CPU's); MEAN divides by the rows not ignored (counted on
 * the device) and is NaN when every row is ignored. rows == 0: SUM writes 0,
 * MEAN NaN, NONE nothing.
 */
#define SMX_CUDA_DECLARE_XENT(T, sfx)                                                                          \
  SMX_API smx_status smx_cuda_cross_entropy_##sfx(const T *logits, size_t ld, const int64_t *targets,         \
                                                  float *loss, T *grad, size_t ldg, float *lse, size_t rows,  \
                                                  size_t cols, const smx_cuda_exec *ex,                       \
                                                  const smx_options *opt);
SMX_CUDA_DECLARE_XENT(float, f32)
SMX_CUDA_DECLARE_XENT(uint16_t, f16)
SMX_CUDA_DECLARE_XENT(uint16_t, bf16)

/* Synchronises ex->stream and returns SMX_E_INVALID_ARG if the last cross-entropy call that used
 * ex->workspace refused its targets (then it wrote nothing), SMX_OK if it ran, SMX_E_DEVICE on a CUDA error. */
SMX_API smx_status smx_cuda_cross_entropy_status(const smx_cuda_exec *ex);

/* ------------------------------------------------- fused softmax + top-k */
/*
 * As smx_softmax_topk_rows_f32 and smx_log_softmax_topk_rows_f32
 * (smx_topk.h), on device rows: the k largest entries of each row, values
 * descending, equal entries by lower index, values[r*k + j] the softmax
 * (log-softmax) of x / T at indices[r*k + j] (device float and int64
 * arrays), in one read of the row; the same special rows (NaN: NaN and -1;
 * -inf entries last, +inf entries first with 1/c; all -inf: 0 or NaN with
 * SMX_FLAG_MASKED_ROW_NAN), the same bounds, the same indices as the CPU.
 * k up to SMX_CUDA_MAX_TOPK (larger: SMX_E_UNSUPPORTED); k > cols:
 * SMX_E_INVALID_ARG; k == 0 or rows == 0: SMX_OK, nothing enqueued.
 * Rows up to 16384 entries are one block's and need no workspace; longer
 * rows leave, per segment of 16384, a state and k candidates in the
 * workspace (smx_cuda_topk_workspace_size: 40 + 8 k bytes per segment).
 */
#define SMX_CUDA_MAX_TOPK 1024
SMX_API smx_status smx_cuda_topk_workspace_size(size_t rows, size_t cols, size_t k, size_t *bytes);
#define SMX_CUDA_DECLARE_TOPK(T, sfx)                                                                          \
  SMX_API smx_status smx_cuda_softmax_topk_rows_##sfx(const T *x, size_t ldx, float *values, int64_t *indices,\
                                                      size_t rows, size_t cols, size_t k,                      \
                                                      const smx_cuda_exec *ex, const smx_options *opt);        \
  SMX_API smx_status smx_cuda_log_softmax_topk_rows_##sfx(const T *x, size_t ldx, float *values,              \
                                                          int64_t *indices, size_t rows, size_t cols,          \
                                                          size_t k, const smx_cuda_exec *ex,                   \
                                                          const smx_options *opt);
SMX_CUDA_DECLARE_TOPK(float, f32)
SMX_CUDA_DECLARE_TOPK(uint16_t, f16)
SMX_CUDA_DECLARE_TOPK(uint16_t, bf16)

/* --------------------------------------------------------------- sampling */
/*
 * As smx_sample_rows_f32 (smx_topk.h): one token per row (device int64),
 * the same parameters, filters, order, special rows and refusals, and the
 * same Philox4x32-10 streams (seed; counter (draw, row_offset + row, step)).
 * What is the same token as the CPU library's (docs/cuda.md says why):
 *   - greedy, Gumbel-max, and top-k sampling (0 < top_k < cols, alone or
 *     with min-p), multinomial or Gumbel-max: the CPU's numbers in the CPU's
 *     order (the weights exp2 in double), so the token is the CPU's unless a
 *     draw falls within a double rounding of a boundary (the device's exp2
 *     and log may differ from the C library's in the last bit);
 *   - multinomial without top-k, and top-p: the weights are summed as 64-bit
 *     fixed-point integers (exact, in any order: bitwise reproducible), not
 *     in the CPU's double order, and top-p's weights are the device's f32
 *     exponentials; a token can differ from the CPU's when the draw, or the
 *     nucleus's edge, falls within about 1e-7 (relative) of a boundary.
 * top_k above SMX_CUDA_MAX_TOPK (and below cols): SMX_E_UNSUPPORTED. Top-k
 * sampling needs the workspace of smx_cuda_sample_workspace_size (as the
 * top-k's); the other forms need none. cols up to SMX_CUDA_MAX_COLS.
 */
SMX_API smx_status smx_cuda_sample_workspace_size(size_t rows, size_t cols, const smx_sample_params *params,
                                                  size_t *bytes);
#define SMX_CUDA_DECLARE_SAMPLE(T, sfx)                                                                         \
  SMX_API smx_status smx_cuda_sample_rows_##sfx(const T *x, size_t ldx, int64_t *tokens, size_t rows,          \
                                                size_t cols, const smx_sample_params *params, uint64_t seed,   \
                                                uint64_t step, const smx_cuda_exec *ex, const smx_options *opt);
SMX_CUDA_DECLARE_SAMPLE(float, f32)
SMX_CUDA_DECLARE_SAMPLE(uint16_t, f16)
SMX_CUDA_DECLARE_SAMPLE(uint16_t, bf16)

/* smx.torch reaches these functions through the Python module smx._smx_cuda (docs/cuda.md). */

#ifdef __cplusplus
}
#endif
#endif /* SMX_SMX_CUDA_H */
