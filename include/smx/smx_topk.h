/*
 * smx — language-model logits: fused softmax + top-k, sampling, Gumbel-softmax.
 *
 * Included from the end of smx/smx.h; needs nothing else. Same conventions as
 * smx.h: every function returns an smx_status, checks all of its arguments
 * before writing anything, and never touches memory outside the caller's
 * buffers. Half-precision forms take f16 / bf16 bit patterns (uint16_t) and
 * compute in f32 (outputs are float / int64 as in the f32 forms).
 *
 * ---------------------------------------------------------------------------
 * Top-k (fused softmax + top-k, Milakov & Gimelshein 2018, Algorithm 4)
 * ---------------------------------------------------------------------------
 * One read of the row: a running online normaliser (max, sum) and a running
 * top-k; no probability row is written. Most elements are rejected by one
 * vector compare against the current k-th value.
 *
 *  - Selection and order are by the logit x (softmax is increasing in x, so
 *    these are the k largest probabilities): values descending; equal logits
 *    in increasing index order ("ties go to the lowest index"). The selected
 *    set and its order are exact (no rounding is involved) and the same for
 *    every ISA and thread count.
 *  - values[j] = softmax(x / T)[indices[j]] (log-softmax for the _log_ forms,
 *    x itself for smx_topk_*: no normalisation, temperature ignored). T is
 *    opt->temperature (0 = 1), as in smx.h.
 *  - Special values, as smx.h's policy:
 *    * NaN anywhere in the row: every value of the row is NaN and every index
 *      is -1 (also for smx_topk_*).
 *    * -inf entries have probability +0 (log: -inf). They are selected only
 *      when fewer than k entries are above -inf, lowest index first.
 *    * +inf entries (no NaN): the c of them come first (lowest index first),
 *      each with probability 1/c (log: -log c); then the other entries by x,
 *      each with probability +0 (log: -inf).
 *    * A row of all -inf: indices 0..k-1 with values 0 (log: -inf), or NaN
 *      with SMX_FLAG_MASKED_ROW_NAN.
 *  - k == 0, rows == 0: SMX_OK, nothing written. k > n (cols): SMX_E_INVALID_ARG.
 *    NULL x, values or indices when there is work to do, ldx < cols, bad
 *    options, a size that overflows, or outputs that overlap the input or
 *    each other: SMX_E_INVALID_ARG, nothing written. SMX_E_NOMEM if a k-sized
 *    work buffer cannot be allocated (rows finished by other threads may have
 *    been written).
 *  - Accuracy: the softmax bound of smx.h, |v - ref| <= (4 + |t|/2) eps ref
 *    (t = (x - max)/T) for ref >= FLT_MIN; log values within
 *    4 eps max(1, |ref|). Indices are exact.
 *  - Threads (opt->threads): rows are spread over threads; a long row is cut
 *    into fixed chunks of 65536 whose states are merged in a fixed order, so
 *    results are bitwise the same for every thread count.
 *
 * Rows forms: x is rows x cols with leading dimension ldx; row r's k results
 * go to values[r*k .. r*k+k) and indices[r*k .. r*k+k).
 */
#ifndef SMX_SMX_TOPK_H
#define SMX_SMX_TOPK_H

#include <stddef.h>
#include <stdint.h>

#include "smx/smx.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------- top-k f32 */
SMX_API smx_status smx_softmax_topk_f32(const float *x, float *values, int64_t *indices, size_t n, size_t k,
                                   const smx_options *opt);
SMX_API smx_status smx_softmax_topk_rows_f32(const float *x, size_t ldx, float *values, int64_t *indices,
                                        size_t rows, size_t cols, size_t k, const smx_options *opt);
SMX_API smx_status smx_log_softmax_topk_f32(const float *x, float *values, int64_t *indices, size_t n, size_t k,
                                       const smx_options *opt);
SMX_API smx_status smx_log_softmax_topk_rows_f32(const float *x, size_t ldx, float *values, int64_t *indices,
                                            size_t rows, size_t cols, size_t k, const smx_options *opt);
/* The k largest x themselves (no normalisation; the temperature is ignored). */
SMX_API smx_status smx_topk_f32(const float *x, float *values, int64_t *indices, size_t n, size_t k,
                           const smx_options *opt);
SMX_API smx_status smx_topk_rows_f32(const float *x, size_t ldx, float *values, int64_t *indices,
                                size_t rows, size_t cols, size_t k, const smx_options *opt);

/* ------------------------------------------------------- top-k f16 / bf16 */
SMX_API smx_status smx_softmax_topk_f16(const uint16_t *x, float *values, int64_t *indices, size_t n, size_t k,
                                   const smx_options *opt);
SMX_API smx_status smx_softmax_topk_rows_f16(const uint16_t *x, size_t ldx, float *values, int64_t *indices,
                                        size_t rows, size_t cols, size_t k, const smx_options *opt);
SMX_API smx_status smx_log_softmax_topk_f16(const uint16_t *x, float *values, int64_t *indices, size_t n, size_t k,
                                       const smx_options *opt);
SMX_API smx_status smx_log_softmax_topk_rows_f16(const uint16_t *x, size_t ldx, float *values, int64_t *indices,
                                            size_t rows, size_t cols, size_t k, const smx_options *opt);
SMX_API smx_status smx_topk_f16(const uint16_t *x, float *values, int64_t *indices, size_t n, size_t k,
                           const smx_options *opt);
SMX_API smx_status smx_topk_rows_f16(const uint16_t *x, size_t ldx, float *values, int64_t *indices,
                                size_t rows, size_t cols, size_t k, const smx_options *opt);
SMX_API smx_status smx_softmax_topk_bf16(const uint16_t *x, float *values, int64_t *indices, size_t n, size_t k,
                                    const smx_options *opt);
SMX_API smx_status smx_softmax_topk_rows_bf16(const uint16_t *x, size_t ldx, float *values, int64_t *indices,
                                         size_t rows, size_t cols, size_t k, const smx_options *opt);
SMX_API smx_status smx_log_softmax_topk_bf16(const uint16_t *x, float *values, int64_t *indices, size_t n, size_t k,
                                        const smx_options *opt);
SMX_API smx_status smx_log_softmax_topk_rows_bf16(const uint16_t *x, size_t ldx, float *values, int64_t *indices,
                                             size_t rows, size_t cols, size_t k, const smx_options *opt);
SMX_API smx_status smx_topk_bf16(const uint16_t *x, float *values, int64_t *indices, size_t n, size_t k,
                            const smx_options *opt);
SMX_API smx_status smx_topk_rows_bf16(const uint16_t *x, size_t ldx, float *values, int64_t *indices,
                                 size_t rows, size_t cols, size_t k, const smx_options *opt);

/* --------------------------------------------------------------- top-k f64 */
/* double rows, double values: the same selection, order and special values;
 * the values are read from smx_softmax_f64 / smx_log_softmax_f64 of the row
 * (their bounds, eps = 2^-52) in a per-thread scratch row of cols doubles
 * (SMX_E_NOMEM if it cannot be had): not fused, the f64 form is for
 * accuracy. Rows are spread over threads, never split. */
SMX_API smx_status smx_softmax_topk_f64(const double *x, double *values, int64_t *indices, size_t n, size_t k,
                                        const smx_options *opt);
SMX_API smx_status smx_softmax_topk_rows_f64(const double *x, size_t ldx, double *values, int64_t *indices,
                                             size_t rows, size_t cols, size_t k, const smx_options *opt);
SMX_API smx_status smx_log_softmax_topk_f64(const double *x, double *values, int64_t *indices, size_t n, size_t k,
                                            const smx_options *opt);
SMX_API smx_status smx_log_softmax_topk_rows_f64(const double *x, size_t ldx, double *values, int64_t *indices,
                                                 size_t rows, size_t cols, size_t k, const smx_options *opt);
SMX_API smx_status smx_topk_f64(const double *x, double *values, int64_t *indices, size_t n, size_t k,
                                const smx_options *opt);
SMX_API smx_status smx_topk_rows_f64(const double *x, size_t ldx, double *values, int64_t *indices, size_t rows,
                                     size_t cols, size_t k, const smx_options *opt);

/* ---------------------------------------------------------------- sampling */
/*
 * One token per row from softmax(x / T), reproducibly: every random number is
 * Philox4x32-10 (Salmon et al. 2011) keyed by the 64-bit seed, with the
 * counter (draw, row, step), so a row's token depends only on (x row, params,
 * seed, row number, step): never on the thread count or the run. (Row number
 * = params.row_offset + the row's place in the call.) The ISA can change a
 * token only when u falls within rounding of a boundary of the inverse CDF
 * (the f32 exponentials differ in the last bits between ISAs).
 *
 * The filters, in this order (each on what the previous one kept):
 *   1. temperature T (params.temperature; 0 = greedy),
 *   2. top-k: the top_k largest logits (ties: lowest index), 0 = off,
 *   3. top-p (nucleus): in order of decreasing probability (ties: lowest
 *      index), the smallest prefix whose probability, renormalised over what
 *      step 2 kept, reaches top_p (cumulative >= top_p); 1 (or 0) = off,
 *   4. min-p: keeps the tokens with probability >= min_p * (largest
 *      probability); 0 = off.
 * Then one token is drawn from the kept set, with probabilities proportional
 * to exp(x / T):
 *   - SMX_SAMPLE_MULTINOMIAL: one uniform u (draw 0) and the inverse CDF over
 *     the kept set in increasing index order (no sort of the kept set);
 *   - SMX_SAMPLE_GUMBEL_MAX: argmax over the kept set of x_i / T + g_i with
 *     g_i = -log(-log U_i), U_i uniform in (0, 1) from draw i (the token
 *     index), ties to the lowest index.
 * Greedy (params.greedy, or temperature 0): the lowest index of the largest x.
 * top_k >= cols is off. The weights w_i = exp((x_i - max) / T) that the
 * filters compare are the f32 exp kernel's (a few float ulp; the same numbers
 * as the normaliser) for top-p over a whole row, and exp2 in double otherwise;
 * the kept set is exact for those numbers: no sort, but a threshold that
 * provably contains the nucleus (entries lighter than (1 - p) sum / cols are
 * left out) and a mass-guided quickselect for its exact prefix.
 *
 * Special rows: a row with NaN, or with no entry above -inf, gives token -1.
 * A row with +inf entries draws uniformly among them (the softmax limit).
 *
 * Arguments: SMX_E_INVALID_ARG, nothing written, for NULL pointers with work
 * to do, ldx < cols, temperature negative/NaN/inf, top_p outside [0, 1] or
 * NaN, min_p outside [0, 1] or NaN, an unknown method, opt->temperature other
 * than 0 or 1 (the temperature is params.temperature), bad options, cols
 * above 2^32 - 1 (the draw counter is 32 bits), or tokens overlapping x.
 * cols == 0 with rows > 0 is SMX_E_INVALID_ARG (no token to draw).
 * SMX_E_NOMEM if the per-thread work space (about 40 bytes per column)
 * cannot be allocated. Rows beyond 2^32 share random streams with rows 2^32
 * lower.
 */
typedef enum smx_sample_method {
  SMX_SAMPLE_MULTINOMIAL = 0,
  SMX_SAMPLE_GUMBEL_MAX = 1
} smx_sample_method;

typedef struct smx_sample_params { /* all-zero: greedy; {1.0} is plain sampling at T = 1 */
  double temperature;        /* > 0; 0 means greedy                         */
  size_t top_k;              /* 0 = off                                     */
  double top_p;              /* in (0, 1]; 0 or 1 = off                     */
  double min_p;              /* in [0, 1]; 0 = off                          */
  int greedy;                /* nonzero: argmax, the filters do not matter */
  smx_sample_method method;
  uint64_t row_offset;       /* number of the first row, for its random stream: a
                                batch processed in pieces draws as if whole      */
} smx_sample_params;

SMX_API smx_status smx_sample_rows_f32(const float *x, size_t ldx, int64_t *tokens, size_t rows, size_t cols,
                                  const smx_sample_params *params, uint64_t seed, uint64_t step,
                                  const smx_options *opt);
/* f64 rows: (x - max) / T is formed in double (max: the largest finite entry)
 * and rounded to float once, then drawn as an f32 row at T = 1 (the same
 * noise, filters and rules; a tie that this rounding creates goes to the
 * lowest index, as every tie). Greedy is the exact argmax in double. */
SMX_API smx_status smx_sample_rows_f64(const double *x, size_t ldx, int64_t *tokens, size_t rows, size_t cols,
                                       const smx_sample_params *params, uint64_t seed, uint64_t step,
                                       const smx_options *opt);
SMX_API smx_status smx_sample_rows_f16(const uint16_t *x, size_t ldx, int64_t *tokens, size_t rows, size_t cols,
                                  const smx_sample_params *params, uint64_t seed, uint64_t step,
                                  const smx_options *opt);
SMX_API smx_status smx_sample_rows_bf16(const uint16_t *x, size_t ldx, int64_t *tokens, size_t rows, size_t cols,
                                   const smx_sample_params *params, uint64_t seed, uint64_t step,
                                   const smx_options *opt);

/* ----------------------------------------------------------- Gumbel-softmax */
/*
 * Jang et al. / Maddison et al. 2016: y = softmax((x + g) / tau), g_i =
 * -log(-log U_i) with U_i in (0, 1) from Philox keyed by (seed, row, step, i)
 * (the same noise as SMX_SAMPLE_GUMBEL_MAX). tau > 0 and finite (else
 * SMX_E_INVALID_ARG, as are opt->temperature other than 0 or 1, cols above
 * 2^32 - 1, NULL outputs and bad strides; nothing is written then). z = x + g
 * is summed in double (g in double, as -log(-log U) with the C library's log)
 * and rounded to float once (beyond the float range: +-inf); then the softmax
 * of smx.h at temperature tau on z (its policy and bound) applies. The row of
 * the noise is the row's place in the call. y may equal x (ldy == ldx); other
 * overlaps are rejected.
 *
 * Hard (straight-through) form: y_hard is the one-hot of argmax(x + g) (ties:
 * lowest index; a NaN row is all NaN; a row of all -inf is all 0, or NaN with
 * SMX_FLAG_MASKED_ROW_NAN); y_soft, if not NULL, receives the soft sample that
 * the backward pass needs (the gradient of the straight-through estimator is
 * the soft sample's).
 *
 * Backward (vector-Jacobian product of the soft sample):
 *   dx = y ⊙ (dy − ⟨dy, y⟩) / tau, with the dot product in double.
 * dx may equal dy (ld equal); it must not overlap y otherwise. Accuracy: the
 * softmax backward's bound (smx_grad.h) at T = tau, 4 eps |y_i| (|dy_i| +
 * |<dy, y>|) / tau, plus u |dx_i| for f16 / bf16 storage.
 * (tests/ops checks the three forms against long double on the noise rebuilt
 * from smx_philox4x32.)
 */
SMX_API smx_status smx_gumbel_softmax_rows_f32(const float *x, size_t ldx, float *y, size_t ldy, size_t rows,
                                               size_t cols, double tau, uint64_t seed, uint64_t step,
                                               const smx_options *opt);
SMX_API smx_status smx_gumbel_softmax_hard_rows_f32(const float *x, size_t ldx, float *y_hard, size_t ldh,
                                                    float *y_soft, size_t lds, size_t rows, size_t cols,
                                                    double tau, uint64_t seed, uint64_t step,
                                                    const smx_options *opt);
/* f16 / bf16 storage (x and outputs): computed in f32, outputs rounded once
 * to the storage type; the noise and the rules are those of the f32 forms. */
SMX_API smx_status smx_gumbel_softmax_rows_f16(const uint16_t *x, size_t ldx, uint16_t *y, size_t ldy, size_t rows,
                                               size_t cols, double tau, uint64_t seed, uint64_t step,
                                               const smx_options *opt);
SMX_API smx_status smx_gumbel_softmax_hard_rows_f16(const uint16_t *x, size_t ldx, uint16_t *y_hard, size_t ldh,
                                                    uint16_t *y_soft, size_t lds, size_t rows, size_t cols,
                                                    double tau, uint64_t seed, uint64_t step,
                                                    const smx_options *opt);
SMX_API smx_status smx_gumbel_softmax_rows_bf16(const uint16_t *x, size_t ldx, uint16_t *y, size_t ldy, size_t rows,
                                                size_t cols, double tau, uint64_t seed, uint64_t step,
                                                const smx_options *opt);
SMX_API smx_status smx_gumbel_softmax_hard_rows_bf16(const uint16_t *x, size_t ldx, uint16_t *y_hard, size_t ldh,
                                                     uint16_t *y_soft, size_t lds, size_t rows, size_t cols,
                                                     double tau, uint64_t seed, uint64_t step,
                                                     const smx_options *opt);
SMX_API smx_status smx_gumbel_softmax_backward_rows_f32(const float *y, size_t ldy, const float *dy, size_t lddy,
                                                        float *dx, size_t lddx, size_t rows, size_t cols,
                                                        double tau, const smx_options *opt);
/* f16 / bf16 y, dy and dx: f32 arithmetic on the widened rows, dx rounded once (one row of buffers). */
SMX_API smx_status smx_gumbel_softmax_backward_rows_f16(const uint16_t *y, size_t ldy, const uint16_t *dy,
                                                        size_t lddy, uint16_t *dx, size_t lddx, size_t rows,
                                                        size_t cols, double tau, const smx_options *opt);
SMX_API smx_status smx_gumbel_softmax_backward_rows_bf16(const uint16_t *y, size_t ldy, const uint16_t *dy,
                                                         size_t lddy, uint16_t *dx, size_t lddx, size_t rows,
                                                         size_t cols, double tau, const smx_options *opt);

/* ------------------------------------------------------------- Philox */
/*
 * The generator itself, for callers that need the same numbers: the four
 * 32-bit words of Philox4x32-10 with key (seed) and counter (c0, c1, c2, c3).
 * smx uses counter = (draw, row, step low, step high) and the uniform
 * u = ((w0 | (w1 & 0x1fffff) << 32) + 0.5) * 2^-53, in (0, 1).
 * @return SMX_E_INVALID_ARG if out is NULL.
 */
SMX_API smx_status smx_philox4x32(uint64_t seed, const uint32_t counter[4], uint32_t out[4]);

#ifdef __cplusplus
}
#endif
#endif /* SMX_SMX_TOPK_H */
