/*
 * smx — exact, fast softmax, log-softmax and log-sum-exp.
 *
 * Public C API. Every function returns an smx_status (or documents why not),
 * never aborts on caller error, and never reads or writes outside the
 * caller's buffers. Pointers need no alignment beyond their element type's.
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
  SMX_E_NOMEM = 30,                /* an allocation failed                           */
  SMX_E_WORKSPACE_TOO_SMALL = 40,  /* reserved for plan-based APIs                   */
  SMX_E_PARSE = 50,                /* reserved for file readers                      */
  SMX_E_IO = 60,                   /* reserved for file readers and writers          */
  SMX_E_THREAD = 70,               /* a worker thread could not be started           */
  SMX_E_NO_OPTIMUM = 80,           /* a fit has no finite optimum (smx_scores.h)     */
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

typedef struct smx_options { /* all-zero, or a NULL pointer, means the defaults */
  smx_algo algo;             /* AUTO picks by row length and ISA                  */
  double temperature;        /* 0 means 1; computes softmax(x / T), T > 0, finite */
  uint32_t flags;            /* SMX_FLAG_MASKED_ROW_NAN, ...                      */
  int threads;               /* 0 or 1: the calling thread only; > 1 uses a pool  */
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
SMX_API smx_status smx_logsumexp_f32(const float *x, size_t n, float *out, const smx_options *opt);

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
SMX_API smx_status smx_logsumexp_f16(const uint16_t *x, size_t n, float *out, const smx_options *opt);
SMX_API smx_status smx_softmax_rows_f16(const uint16_t *x, size_t ldx, uint16_t *y, size_t ldy, size_t rows,
                                        size_t cols, const smx_options *opt);
SMX_API smx_status smx_log_softmax_rows_f16(const uint16_t *x, size_t ldx, uint16_t *y, size_t ldy, size_t rows,
                                            size_t cols, const smx_options *opt);
SMX_API smx_status smx_logsumexp_rows_f16(const uint16_t *x, size_t ldx, float *out, size_t rows, size_t cols,
                                          const smx_options *opt);
SMX_API smx_status smx_softmax_bf16(const uint16_t *x, uint16_t *y, size_t n, const smx_options *opt);
SMX_API smx_status smx_log_softmax_bf16(const uint16_t *x, uint16_t *y, size_t n, const smx_options *opt);
SMX_API smx_status smx_logsumexp_bf16(const uint16_t *x, size_t n, float *out, const smx_options *opt);
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
SMX_API smx_status smx_logsumexp_f64(const double *x, size_t n, double *out, const smx_options *opt);
SMX_API smx_status smx_softmax_rows_f64(const double *x, size_t ldx, double *y, size_t ldy, size_t rows,
                                        size_t cols, const smx_options *opt);
SMX_API smx_status smx_log_softmax_rows_f64(const double *x, size_t ldx, double *y, size_t ldy, size_t rows,
                                            size_t cols, const smx_options *opt);
SMX_API smx_status smx_logsumexp_rows_f64(const double *x, size_t ldx, double *out, size_t rows, size_t cols,
                                          const smx_options *opt);

/* ------------------------------------------------------------ CPU and ISA */
typedef enum smx_isa_level {
  SMX_ISA_SCALAR = 0,
  SMX_ISA_AVX2 = 1,     /* AVX2 + FMA                    */
  SMX_ISA_AVX512 = 2,   /* AVX-512F (+DQ, VL, BW)        */
  SMX_ISA_NEON = 3,     /* AArch64 Advanced SIMD + FMA   */
  SMX_ISA_AVX512BF16 = 4 /* AVX-512 + AVX512_BF16 (vdpbf16ps): above AVX512 */
} smx_isa_level;

/*
 * The x86 levels in order: scalar < avx2 < avx512 < avx512bf16 (the numbers
 * are stable, not an order: NEON sits between). avx512bf16 runs the avx512
 * kernels except where a family has bf16 ones (attention's tile products).
 */
/** @return the kernel set in use: "scalar", "avx2", "avx512", "avx512bf16" or "neon". */
SMX_API const char *smx_isa(void);
/** @return the best level this CPU supports (ignoring caps). */
SMX_API smx_isa_level smx_cpu_isa(void);
/*
 * Caps the kernel set at `level` (never above what the CPU has), like the
 * environment variable SMX_MAX_ISA=scalar|avx2|avx512|avx512bf16|neon, which
 * is read once at first use; on AArch64 every level above scalar is NEON, on
 * x86 a cap of NEON is no cap.
 * SMX_E_INVALID_ARG for an unknown level. Safe to call at any time;
 * calls already running finish with the kernels they started with.
 */
SMX_API smx_status smx_set_max_isa(smx_isa_level level);
/*
 * What SMX_ALGO_AUTO uses here, for the kernel set in use: the CPU's caches, the
 * wisdom setting and file, and the crossovers, as a few lines of text (what
 * `smx info` prints). snprintf-style: writes at most size bytes, NUL included,
 * and returns the length of the whole text. buf may be NULL when size is 0.
 */
SMX_API size_t smx_auto_describe(char *buf, size_t size);

/* ------------------------------------------------------ f16 / bf16 conversion */
/*
 * n IEEE binary16 (f16) or bfloat16 (bf16) bit patterns to and from float, by the
 * kernels of the f16 / bf16 entry points: widening is exact; narrowing rounds to
 * nearest even, overflows to infinity and keeps NaN a NaN (quieted); the same bits
 * on every ISA. smx_f64_to_f16_n rounds once (not twice through float).
 * SMX_E_INVALID_ARG, nothing written, for a NULL pointer when n > 0 or for x and y
 * overlapping.
 */
SMX_API smx_status smx_f16_to_f32_n(const uint16_t *x, float *y, size_t n);
SMX_API smx_status smx_f32_to_f16_n(const float *x, uint16_t *y, size_t n);
SMX_API smx_status smx_bf16_to_f32_n(const uint16_t *x, float *y, size_t n);
SMX_API smx_status smx_f32_to_bf16_n(const float *x, uint16_t *y, size_t n);
SMX_API smx_status smx_f64_to_f16_n(const double *x, uint16_t *y, size_t n);

/* -------------------------------------------------------------- thread pool */
/*
 * Runs fn(ctx, i) for every i in [0, ntasks) on up to `threads` threads of the
 * library's reused pool (the caller is one of them; 0 or 1: the calling thread
 * only; above 256: 256) and returns when all are done. When the pool is busy
 * with another caller's tasks or cannot grow, the tasks run on the calling
 * thread, so a result must not depend on which thread ran a task. For callers
 * with per-row work of their own around the library's (the Python module's
 * strided gathers). SMX_E_INVALID_ARG for a NULL fn when ntasks > 0.
 */
typedef void (*smx_task_fn)(void *ctx, size_t task);
SMX_API smx_status smx_parallel_for(int threads, size_t ntasks, smx_task_fn fn, void *ctx);

#ifdef __cplusplus
}
#endif
#include "smx/smx_grad.h" /* backward passes and fused cross-entropy */
#include "smx/smx_topk.h" /* language-model logits: fused softmax + top-k, sampling, Gumbel-softmax */
#include "smx/smx_scores.h"  /* scores, OOD metrics, calibration */
#include "smx/smx_variants.h" /* sigmoid and the softmax variants */
#include "smx/smx_attention.h" /* fused attention (FlashAttention-2 style) */
#include "smx/smx_ops.h" /* the op table: descriptors and the generic row entry */
#endif /* SMX_SMX_H */
