/*
 * smx — exact, fast softmax, log-softmax and log-sum-exp.
 *
 * Public C API. Every function returns an smx_status (or documents why not),
 * never aborts on caller error, and never reads or writes outside the
 * caller's buffers. Pointers need no alignment beyond their element type's.
 *
 * ---------------------------------------------------------------------------
 * The API convention (every header follows it; docs/architecture.md)
 * ---------------------------------------------------------------------------
 *  - Argument order: the inputs, each pointer followed by its leading
 *    dimension; the outputs, the same way; the shape (n, or rows and cols);
 *    the operation's own parameters; then const smx_options *opt, last.
 *  - One options struct, smx_options (NULL: the defaults): algorithm,
 *    temperature (the only one: no function takes a second), flags, threads,
 *    and one extension per family, opt->loss for the losses (reduction,
 *    ignore_index, grad_scale, label_smoothing, z_loss).
 *  - One target type: class indices are const int64_t *.
 *  - Every storage type (f64, f32, f16 / bf16 as uint16_t bit patterns) unless
 *    the op table says why not (smx_ops.h, docs/ops.md); half precision
 *    computes in f32 and rounds each output once.
 *  - One header per family, of at most about 300 lines, all included here.
 *
 * ---------------------------------------------------------------------------
 * Special values: the written policy (the same for every algorithm, ISA and
 * thread count; enforced in one place, the operation's policy entry)
 * ---------------------------------------------------------------------------
 *  - NaN anywhere in a row makes every output of that row NaN
 *    (log-sum-exp of the row is NaN).
 *  - An entry of -inf gives y = +0 exactly (log-softmax: -inf), and the rest of
 *    the row is computed as if that entry were absent.
 *  - A row of all -inf: logsumexp = -inf, softmax = 0, log-softmax = -inf.
 *    With SMX_FLAG_MASKED_ROW_NAN all three are NaN instead (PyTorch).
 *  - +inf entries (and no NaN): the limit. The k entries equal to +inf get
 *    y = 1/k and all others +0; logsumexp = +inf; log-softmax = -log(k) on the
 *    +inf entries and -inf elsewhere.
 *  - n == 0, rows == 0 or cols == 0 return SMX_OK. Softmax and log-softmax
 *    then write nothing; log-sum-exp of an empty row is -inf and is written for
 *    each (empty) row.
 *  - SMX_E_INVALID_ARG, with nothing written, for: a NULL pointer when there is
 *    work to do; ld < cols; a temperature that is negative, NaN or infinite;
 *    a size product that overflows; input and output ranges that overlap other
 *    than exactly (x == y with ldx == ldy is in-place and allowed). For the rows
 *    form the overlap test is on the whole spans [p, p + (rows-1)*ld + cols).
 *
 * ---------------------------------------------------------------------------
 * Accuracy contract (eps = 2^-23 = FLT_EPSILON, t_i = (x_i - max(x)) / T)
 * ---------------------------------------------------------------------------
 *  Checked against a long-double reference for every algorithm x ISA x thread
 *  count (the op test driver, tests/ops/), on rows of any length up to 2^26 and on adversarial
 *  families (huge and tiny values, -inf masks, ties, spikes):
 *  - softmax:      |y_i - ref_i| <= (4 + |t_i|/2) * eps * ref_i
 *                  for every ref_i >= FLT_MIN. Outputs whose reference is below
 *                  FLT_MIN (subnormal) are only guaranteed to be in [0, FLT_MIN).
 *  - log-softmax:  |y_i - ref_i| <= 4 * eps * max(1, |ref_i|)
 *  - log-sum-exp:  |out - ref|   <= 4 * eps * max(1, |ref|)
 *  The |t_i|/2 term is the one rounding of x_i - max(x) in float; the rest is
 *  the exponential (about 1 ulp, src/math/), the reduction (double partial
 *  sums, so independent of the row length) and the final scaling. A
 *  log-softmax value beyond the float range is -inf (its correct rounding).
 *  Any positive finite temperature is accepted; when log2(e)/T leaves
 *  [2^-100, 2^100] the scalar kernels, which carry it in double, are used.
 *  Down to the smallest subnormal T the results are those of f64 rounded:
 *  softmax 1/k on the k entries equal to the max and +0 elsewhere, log-softmax
 *  -log(k) there and -inf (beyond the float range) elsewhere, log-sum-exp
 *  max/T + log(k) (+-inf once beyond the float range). The same holds for
 *  f16 / bf16 and for every other function that takes a temperature.
 *
 *  Results are bitwise identical for every thread count. They may differ in the
 *  last bits between ISAs (each ISA meets the same bound).
 */
#ifndef SMX_SMX_H
#define SMX_SMX_H

#include <stddef.h>
#include <stdint.h>

#if defined(_WIN32) && defined(SMX_SHARED_BUILD)
#  define SMX_API __declspec(dllexport)
#elif defined(_WIN32) && defined(SMX_SHARED)
#  define SMX_API __declspec(dllimport)
#elif defined(__GNUC__)
#  define SMX_API __attribute__((visibility("default")))
#else
#  define SMX_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------ version */
#define SMX_VERSION_MAJOR 0
#define SMX_VERSION_MINOR 1
#define SMX_VERSION_PATCH 0
#define SMX_VERSION_NUMBER (SMX_VERSION_MAJOR * 10000 + SMX_VERSION_MINOR * 100 + SMX_VERSION_PATCH)

/** @return SMX_VERSION_NUMBER of the library actually linked (check it against the header's). */
SMX_API unsigned smx_version_number(void);
/** @return "MAJOR.MINOR.PATCH", a static string. */
SMX_API const char *smx_version_string(void);

/* ------------------------------------------------------------------- status */
/* Stable numbers: never renumbered, gaps left for related codes. */
typedef enum smx_status {
  SMX_OK = 0,
  SMX_E_INVALID_ARG = 10,          /* bad pointer, size, stride, option or aliasing  */
  SMX_E_UNSUPPORTED = 20,          /* ISA or dtype not available on this machine     */
  SMX_E_NOT_BUILT = 21,            /* needs an optional library absent at build time */
  SMX_E_DEVICE = 22,               /* a CUDA error (smx_cuda.h: smx_cuda_last_error)  */
  SMX_E_NOMEM = 30,                /* an allocation failed                           */
  SMX_E_WORKSPACE_TOO_SMALL = 40,  /* reserved for plan-based APIs                   */
  SMX_E_PARSE = 50,                /* reserved for file readers                      */
  SMX_E_IO = 60,                   /* reserved for file readers and writers          */
  SMX_E_THREAD = 70,               /* a worker thread could not be started           */
  SMX_E_NO_OPTIMUM = 80,           /* a fit has no finite optimum (smx_metrics.h)    */
  SMX_E_SINGULAR = 81,             /* a singular covariance (smx_features.h)         */
  SMX_E_INTERNAL = 90              /* a bug in smx: please report it                 */
} smx_status;

/** @return a static, human-readable description; "unknown status" for other numbers. */
SMX_API const char *smx_status_string(smx_status s);

/* ------------------------------------------------------------------ options */
typedef enum smx_algo {
  SMX_ALGO_AUTO = 0,        /* picks by row bytes vs the CPU's caches and ISA (docs/crossovers.md); the */
                            /* algorithms differ in the last bits, so fix one for bit-reproducibility   */
  SMX_ALGO_THREE_PASS = 1,  /* max; exp + store + sum; scale (3 reads, 2 writes; n exps)                */
  SMX_ALGO_TWO_PASS = 2,    /* Dukhan & Ablavatski: (mantissa, exponent) sums (2 reads, 1 write)         */
  SMX_ALGO_ONLINE = 3       /* Milakov & Gimelshein: blocked running (max, sum) (2 reads, 1 write)       */
} smx_algo;

/* A row of all -inf gives NaN outputs (and NaN log-sum-exp) instead of 0 / -inf. */
#define SMX_FLAG_MASKED_ROW_NAN 0x1u
/* Output stores. By default smx writes outputs larger than the caches with
 * non-temporal (streaming) stores, which skip reading y into the cache first;
 * these flags force one way or the other (results are identical). */
#define SMX_FLAG_STREAM_STORES 0x2u
#define SMX_FLAG_CACHED_STORES 0x4u

/* The losses' part of the options (smx_losses.h, smx_sparse.h, smx_noisy.h, smx_grad.h's cross-entropy). */
typedef enum smx_reduction {
  SMX_REDUCTION_MEAN = 0,  /* sum of row losses / number of rows not ignored (PyTorch's default) */
  SMX_REDUCTION_SUM = 1,   /* sum of row losses                                                  */
  SMX_REDUCTION_NONE = 2   /* one loss per row                                                   */
} smx_reduction;
typedef struct smx_loss_ext {
  smx_reduction reduction;
  int64_t ignore_index;     /* rows whose target equals it: loss 0, gradient 0, left out of the mean */
  double grad_scale;        /* 0 means 1: multiplies the gradient (an upstream dL/dloss), finite        */
  double label_smoothing;   /* cross-entropy: eps in [0, 1]; the other losses refuse nonzero          */
  double z_loss;            /* cross-entropy: z >= 0 of z * lse^2 (PaLM); the other losses refuse nonzero */
} smx_loss_ext;
/* PyTorch's defaults, also what a NULL opt->loss means. An all-zero struct has ignore_index 0 (class 0
 * ignored): start from this. */
#define SMX_LOSS_EXT_INIT { SMX_REDUCTION_MEAN, -100, 0.0, 0.0, 0.0 }

typedef struct smx_options { /* all-zero, or a NULL pointer, means the defaults */
  smx_algo algo;             /* AUTO picks by row length and ISA                  */
  double temperature;        /* 0 means 1; computes softmax(x / T), T > 0, finite */
  uint32_t flags;            /* SMX_FLAG_MASKED_ROW_NAN, ...                      */
  int threads;               /* 0 or 1: the calling thread only; > 1 uses a pool  */
  const smx_loss_ext *loss;  /* the losses' extension (NULL: SMX_LOSS_EXT_INIT); other operations ignore it */
} smx_options;

/* ---------------------------------------------------------------- row ops */
/*
 * One row of n floats. y may equal x (in-place); any other overlap is rejected.
 * Threads: a long row is cut into fixed chunks whose (max, sum) states are
 * merged in a fixed order, so the result does not depend on opt->threads.
 */
SMX_API smx_status smx_softmax_f32(const float *x, float *y, size_t n, const smx_options *opt);
SMX_API smx_status smx_log_softmax_f32(const float *x, float *y, size_t n, const smx_options *opt);
/** *out = log(sum_i exp(x_i / T)), so that log_softmax = x / T - out. Empty row: -inf. */
SMX_API smx_status smx_logsumexp_f32(const float *x, float *out, size_t n, const smx_options *opt);

/*
 * rows x cols matrices, row-major with leading dimensions ldx, ldy counted in
 * elements (ld >= cols). Each row is normalised on its own.
 * logsumexp_rows writes rows values to out (which must not overlap x).
 */
SMX_API smx_status smx_softmax_rows_f32(const float *x, size_t ldx, float *y, size_t ldy,
                                        size_t rows, size_t cols, const smx_options *opt);
SMX_API smx_status smx_log_softmax_rows_f32(const float *x, size_t ldx, float *y, size_t ldy,
                                            size_t rows, size_t cols, const smx_options *opt);
SMX_API smx_status smx_logsumexp_rows_f32(const float *x, size_t ldx, float *out,
                                          size_t rows, size_t cols, const smx_options *opt);

/* ------------------------------------------------------- half precision */
/*
 * Rows stored as IEEE binary16 (f16) or bfloat16 (bf16), passed as their bit
 * patterns (uint16_t). The arithmetic is f32, through a small buffer (no
 * full-size temporary); outputs are rounded once to the storage type (nearest
 * even). Log-sum-exp is returned as float. Same special-value policy and
 * argument checks as the f32 functions; rows are never split across threads.
 * Accuracy: the f32 bound plus the storage rounding: |y - ref| <= u*|ref| +
 * (f32 bound), u = 2^-11 (f16) or 2^-8 (bf16), for outputs in the normal range
 * of the storage type; smaller outputs are within half its smallest subnormal.
 */
SMX_API smx_status smx_softmax_f16(const uint16_t *x, uint16_t *y, size_t n, const smx_options *opt);
SMX_API smx_status smx_log_softmax_f16(const uint16_t *x, uint16_t *y, size_t n, const smx_options *opt);
SMX_API smx_status smx_logsumexp_f16(const uint16_t *x, float *out, size_t n, const smx_options *opt);
SMX_API smx_status smx_softmax_rows_f16(const uint16_t *x, size_t ldx, uint16_t *y, size_t ldy, size_t rows,
                                        size_t cols, const smx_options *opt);
SMX_API smx_status smx_log_softmax_rows_f16(const uint16_t *x, size_t ldx, uint16_t *y, size_t ldy, size_t rows,
                                            size_t cols, const smx_options *opt);
SMX_API smx_status smx_logsumexp_rows_f16(const uint16_t *x, size_t ldx, float *out, size_t rows, size_t cols,
                                          const smx_options *opt);
SMX_API smx_status smx_softmax_bf16(const uint16_t *x, uint16_t *y, size_t n, const smx_options *opt);
SMX_API smx_status smx_log_softmax_bf16(const uint16_t *x, uint16_t *y, size_t n, const smx_options *opt);
SMX_API smx_status smx_logsumexp_bf16(const uint16_t *x, float *out, size_t n, const smx_options *opt);
SMX_API smx_status smx_softmax_rows_bf16(const uint16_t *x, size_t ldx, uint16_t *y, size_t ldy, size_t rows,
                                         size_t cols, const smx_options *opt);
SMX_API smx_status smx_log_softmax_rows_bf16(const uint16_t *x, size_t ldx, uint16_t *y, size_t ldy, size_t rows,
                                             size_t cols, const smx_options *opt);
SMX_API smx_status smx_logsumexp_rows_bf16(const uint16_t *x, size_t ldx, float *out, size_t rows, size_t cols,
                                           const smx_options *opt);

/* ------------------------------------------------------------------ f64 */
/*
 * Rows of doubles (NumPy's default dtype). The same three algorithms,
 * options, flags (masked-row NaN, stream / cached stores), argument checks,
 * special-value policy (above; written in the same place) and thread-count
 * independence (bitwise) as the f32 functions; log-sum-exp is returned as a
 * double. The arithmetic is double throughout: exp(a/T) = 2^(a c) with
 * c = log2(e)/T carried as a double-double and the argument reduced with an
 * FMA (so its error does not grow with |a|), about 1 ulp (src/math/README.md);
 * every sum is compensated (a double-double per lane), so no bound below
 * depends on the row length; the online algorithm's rescales are exact powers
 * of two, so they do not compound either.
 *
 * Accuracy contract (eps = 2^-52 = DBL_EPSILON, t_i = (x_i - max(x)) / T),
 * checked against an x87 long-double reference (64-bit significand) for every
 * algorithm x ISA x thread count on adversarial rows (tests/ops/, the
 * f64 rows: spans of +-1.7e308, subnormal values and outputs,
 * -inf masks, ties, spikes, temperatures from 5e-324 to DBL_MAX, chunked rows,
 * rescale chains, 2^24 entries):
 *  - softmax:      |y_i - ref_i| <= (4 + |t_i|/2) * eps * ref_i
 *                  for every ref_i >= DBL_MIN. Outputs whose reference is below
 *                  DBL_MIN (subnormal) are only guaranteed to be in [0, DBL_MIN).
 *  - log-softmax:  |y_i - ref_i| <= 4 * eps * max(1, |ref_i|)
 *  - log-sum-exp:  |out - ref|   <= 4 * eps * max(1, |ref|)
 *  The |t_i|/2 term is the one rounding of x_i - max(x); the rest is the
 *  exponential (<= 0.75 eps), the reduction, 1/sum and the final product.
 *  Measured worst over the suite: softmax 1.7 eps apart from that term,
 *  log-softmax 1.4 eps, log-sum-exp 0.5 eps. A value beyond the double range
 *  is +-inf (its correct rounding), e.g. log-softmax of a row spanning more
 *  than DBL_MAX, or log-sum-exp when max/T overflows.
 *  Any positive finite temperature is accepted; when log2(e)/T leaves
 *  [2^-900, 2^900] the scalar kernels run three-pass with (x - max)/T formed
 *  by a division (as a double-double), and the same bounds hold.
 *  Results may differ in the last bits between ISAs.
 */
SMX_API smx_status smx_softmax_f64(const double *x, double *y, size_t n, const smx_options *opt);
SMX_API smx_status smx_log_softmax_f64(const double *x, double *y, size_t n, const smx_options *opt);
SMX_API smx_status smx_logsumexp_f64(const double *x, double *out, size_t n, const smx_options *opt);
SMX_API smx_status smx_softmax_rows_f64(const double *x, size_t ldx, double *y, size_t ldy, size_t rows,
                                        size_t cols, const smx_options *opt);
SMX_API smx_status smx_log_softmax_rows_f64(const double *x, size_t ldx, double *y, size_t ldy, size_t rows,
                                            size_t cols, const smx_options *opt);
SMX_API smx_status smx_logsumexp_rows_f64(const double *x, size_t ldx, double *out, size_t rows, size_t cols,
                                          const smx_options *opt);

#ifdef __cplusplus
}
#endif
#include "smx/smx_runtime.h" /* CPU and ISA, f16 / bf16 conversion, thread pool */
#include "smx/smx_grad.h" /* backward passes and fused cross-entropy */
#include "smx/smx_topk.h" /* language-model logits: fused softmax + top-k, sampling, Gumbel-softmax */
#include "smx/smx_scores.h"  /* per-sample scores from logits, KL templates */
#include "smx/smx_metrics.h" /* OOD metrics, calibration, temperature scaling */
#include "smx/smx_elem.h"   /* sigmoid, sigmoid with a bias */
#include "smx/smx_norm.h"   /* softpick, SSMax, standardised and self-adjust softmax, softplus-l1 */
#include "smx/smx_multi.h"  /* MultiMax, mixture of softmaxes, adaptive temperature, top-k softmax */
#include "smx/smx_sparse.h" /* sparsemax, entmax and their Fenchel-Young losses */
#include "smx/smx_losses.h" /* focal, spherical Z, InfoNCE, Dice, distillation */
#include "smx/smx_noisy.h"  /* Noisy Softmax */
#include "smx/smx_attention_variants.h" /* attention kinds and variants (smx_attention.h includes it too) */
#include "smx/smx_attention.h" /* fused attention (FlashAttention-2 style) */
#include "smx/smx_ops.h" /* the op table: descriptors and the generic row entry */
#endif /* SMX_SMX_H */
