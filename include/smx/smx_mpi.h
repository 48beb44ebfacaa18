/*
 * smx_mpi — vocabulary-sharded softmax, log-sum-exp, top-k, sampling and
 * cross-entropy over MPI (optional component, library smx_mpi; built when
 * CMake finds MPI). Built on the public API of smx.h only; every transport is
 * MPI's. docs/mpi.md: running across hosts, costs, checking an installation.
 *
 * ---------------------------------------------------------------------------
 * Layout
 * ---------------------------------------------------------------------------
 * Each rank of `comm` holds a column slice of the same rows: rows x
 * local_cols floats with leading dimension ld (>= local_cols). Slices are in
 * rank order: rank r holds the global columns [off_r, off_r + local_cols)
 * with off_r = the sum of local_cols over the ranks below r (one MPI_Exscan).
 * A slice may be empty (local_cols == 0; its pointers may then be NULL).
 * Every rank of comm must make the same call (same function, rows, options,
 * k, sampling parameters, seed and step); results that are per row (lse,
 * top-k, tokens, losses) come back on every rank, elementwise outputs
 * (softmax, log-softmax, gradient) for the rank's own slice.
 *
 * ---------------------------------------------------------------------------
 * Collectives (each call; P ranks, R rows)
 * ---------------------------------------------------------------------------
 *  - one MPI_Exscan of 6 integers: the column offset, and rank 0's row count
 *    and parameters, which every other rank compares with its own;
 *  - log-sum-exp, softmax, log-softmax: one MPI_Allreduce of R + 1 (max, sum)
 *    pairs of doubles (16 bytes a row; the extra pair carries the status),
 *    with a commutative user-defined MPI_Op that merges the pairs under the
 *    policy of smx.h: a NaN state absorbs everything, +inf maxima add up
 *    their counts (y = 1/k on the k entries equal to +inf), -inf is the
 *    empty state (sum 0);
 *  - top-k: one MPI_Allreduce of R + 2 records, each a pair and the k best
 *    (logit, global index) candidates, merged by logit, ties to the lowest
 *    global index;
 *  - cross-entropy: one MPI_Allreduce of R + 1 triples (max, sum, target
 *    logit), plus the sum of the logits with label smoothing (4 doubles);
 *  - sampling: one MPI_Allreduce of (max, first index of the max) and, with
 *    top_k, the top_k candidates; then, unless the candidates already decide
 *    the token on every rank, one MAXLOC-style MPI_Allreduce of (Gumbel key,
 *    global index) per row. Top-p without top-k: one all-reduce of the row's
 *    normaliser, then the entries that can be in the nucleus (weight above
 *    (1 - top_p) z / cols) gathered on every rank (MPI_Allgather of counts,
 *    MPI_Allgatherv of (weight, index, logit)): few for a peaked row, up to
 *    the whole row for a flat one.
 *
 * ---------------------------------------------------------------------------
 * Errors, and what cannot be checked
 * ---------------------------------------------------------------------------
 * Every argument is checked on its rank before anything is written, and the
 * worst status of all ranks travels in the collectives above: a NULL pointer,
 * a bad stride or option on one rank, or a row count, k, temperature, flag or
 * sampling parameter that differs from rank 0's, makes every rank return the
 * same error (SMX_E_INVALID_ARG, or SMX_E_NOMEM), with nothing written. Not
 * checkable, as MPI gives no way to tell: a rank that does not make the call
 * at all, or makes a different collective call at the same time (a hang, or
 * MPI's own error); an invalid communicator (MPI's error handler, by default
 * fatal); a rank whose row count is so large that it cannot allocate rank
 * 0's number of records (SMX_E_NOMEM on that rank only, the others then wait).
 * MPI errors are returned as SMX_E_INTERNAL when the communicator's error
 * handler returns them (MPI_ERRORS_RETURN), else MPI aborts as it always does.
 *
 * ---------------------------------------------------------------------------
 * Results: bitwise, or within a bound
 * ---------------------------------------------------------------------------
 * The engine reduces the parts of a row in a fixed order of fixed chunks; a
 * slice boundary elsewhere changes that order, so the normalisers are not
 * bitwise those of one process. eps = 2^-23, t_i = (x_i - max) / T.
 *  Bitwise equal to one process for every P and any slicing:
 *   - top-k indices (exact selection, ties to the lowest global index);
 *   - sampled tokens with SMX_SAMPLE_GUMBEL_MAX and greedy (the same Philox
 *     noise, keyed by the global index, and the same double arithmetic
 *     against the global max), with top-k and min-p filters; with top-p the
 *     kept set is the same except when the nucleus boundary lies within
 *     rounding: after top-k, of the double sums (the engine sums in its heap
 *     order); over a whole row, of the weights (the engine's are its f32
 *     exponentials, here exp2 in double);
 *   - every special-value outcome (NaN rows, +inf counts, all -inf rows,
 *     SMX_FLAG_MASKED_ROW_NAN, ignored rows, -1 tokens);
 *   - with P == 1 (or every column on one rank): softmax (the slice's own
 *     normaliser is the row's, and the rescale factor is exactly 1).
 *  Within a bound (checked in tests/mpi/ against long double):
 *   - log-sum-exp, loss, lse of cross-entropy:  |err| <= 6 eps max(1, |ref|)
 *   - softmax, top-k values:     |err| <= (7 + |t_i|/2) eps ref_i (ref_i >= FLT_MIN)
 *   - log-softmax:               |err| <= 6 eps max(1, |ref_i|)
 *   - cross-entropy gradient: the bound of smx_grad.h with 7 + |x_j - max|/(2T)
 *     in place of 6.
 *  The extra eps over the engine's bounds: each slice's normaliser comes from
 *  the engine's fused top-1 (its value 1/s, rounded to float), and the
 *  rescale by exp(m_r - M)/S is one more rounding; log-sum-exp merges the
 *  slices' own log-sum-exps, each within the engine's bound. Top-k values are
 *  exp(x/T - M/T) / S in double from the merged pair (no engine value).
 *  Log-softmax is (x/T - M/T) - log S in double, exact at the max.
 *
 * Not supported (SMX_E_UNSUPPORTED on every rank): SMX_SAMPLE_MULTINOMIAL
 * other than greedy (the inverse CDF walks the row in one order, which a
 * slicing cannot reproduce bit for bit; Gumbel-max draws from the same
 * distribution).
 */
#ifndef SMX_SMX_MPI_H
#define SMX_SMX_MPI_H
#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

#include "smx/smx.h"

#ifdef __cplusplus
extern "C" {
#endif

/* out[r] = log sum over all ranks' slices of exp(x / T), on every rank. */
SMX_API smx_status smx_mpi_logsumexp_rows_f32(MPI_Comm comm, const float *x, size_t ldx, float *out, size_t rows,
                                              size_t local_cols, const smx_options *opt);
/* y (the rank's slice) = softmax(x / T) of the whole row. y may equal x (ldy == ldx). */
SMX_API smx_status smx_mpi_softmax_rows_f32(MPI_Comm comm, const float *x, size_t ldx, float *y, size_t ldy,
                                            size_t rows, size_t local_cols, const smx_options *opt);
SMX_API smx_status smx_mpi_log_softmax_rows_f32(MPI_Comm comm, const float *x, size_t ldx, float *y, size_t ldy,
                                                size_t rows, size_t local_cols, const smx_options *opt);
/* The k largest probabilities of each whole row, as smx_softmax_topk_rows_f32:
 * values[r*k + j] and global indices[r*k + j], on every rank. k > the total
 * number of columns: SMX_E_INVALID_ARG. */
SMX_API smx_status smx_mpi_softmax_topk_rows_f32(MPI_Comm comm, const float *x, size_t ldx, float *values,
                                                 int64_t *indices, size_t rows, size_t local_cols, size_t k,
                                                 const smx_options *opt);
/* One token (a global index) per row, as smx_sample_rows_f32 with the same
 * parameters on the whole rows; tokens[rows] on every rank. */
SMX_API smx_status smx_mpi_sample_rows_f32(MPI_Comm comm, const float *x, size_t ldx, int64_t *tokens, size_t rows,
                                           size_t local_cols, const smx_sample_params *params, uint64_t seed,
                                           uint64_t step, const smx_options *opt);
/* Cross-entropy of the whole rows against global targets (int64, the same on
 * every rank), as smx_cross_entropy_f32 with opt (NULL: the defaults): the
 * temperature, SMX_FLAG_MASKED_ROW_NAN, threads, and opt->loss's reduction,
 * ignore_index, label smoothing, z-loss and grad_scale. loss (1 value, or rows for SMX_REDUCTION_NONE)
 * and lse (NULL or rows values) on every rank; grad (NULL for the loss only)
 * is the gradient of the rank's slice, rows x local_cols with leading
 * dimension ldg (grad == logits, ldg == ld: in place). Only the rank that owns
 * a target reads its logit. */
SMX_API smx_status smx_mpi_cross_entropy_f32(MPI_Comm comm, const float *logits, size_t ld, const int64_t *targets,
                                             float *loss, float *grad, size_t ldg, float *lse, size_t rows,
                                             size_t local_cols, const smx_options *opt);

#ifdef __cplusplus
}
#endif
#endif /* SMX_SMX_MPI_H */
