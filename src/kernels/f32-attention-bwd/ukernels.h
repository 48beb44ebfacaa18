/*
 * The attention backward micro-kernels (f32): the tile products and the
 * softmax-gradient steps of a FlashAttention-2 backward pass
 * (src/attention/backward*.c). One body over the vector layer (body.h,
 * instantiated by avx2.c, avx512.c and neon.c) and a portable scalar form
 * (scalar.c).
 *
 * Tiles are row-major: the scores of a block of query rows against a tile of
 * keys are S[r][c] (row stride lds), r a query row, c a key.
 *  - gemm: C[i][j] (+)= sum_t A[i ars + t acs] B[t ldb + j] for i < m,
 *    j < n, t < k; acc = 0 overwrites C, 1 adds to it. The vectors run over
 *    j (the columns of B and C, any n: a masked tail), the broadcasts over
 *    the elements of A, read through its two strides, so that A may be a
 *    tile or its transpose (P^T dO, dS^T Q) without a copy. The sum over t
 *    runs in order, one fused multiply-add a step.
 *  - probs: P[r][c] = e^{S[r][c] - lse_r} for r < nr, c < nk; a masked
 *    score (-inf) gives exactly 0 whatever lse_r is (a row that sees no
 *    key, lse -inf, gives 0, never NaN); a NaN score or lse gives NaN.
 *  - dscores: dP[r][c] = P[r][c] (dP[r][c] - D_r) in place, and exactly 0
 *    where S[r][c] is -inf (a masked key takes no part in the row's
 *    gradients, even where dP is NaN through a NaN in V).
 *  - softpick: the softpick kind (w = relu(e^z - 1) e^{-lse}): with
 *    E = e^{S - lse_r} (S - lse_r may be up to about 19 above 0: the
 *    epsilon bounds e^{lse} below), P[r][c] = E - e^{-lse_r} where S > 0,
 *    else 0 (times e^{-lse_r}, so that a NaN lse stays NaN), and in place
 *    dP[r][c] = E (dP - D_r) where S > 0, E D_r where S < 0, 0 where S = 0;
 *    both exactly 0 where S is -inf; a NaN score or lse gives NaN.
 * Kernels never allocate and touch exactly the ranges above.
 */
#ifndef SMX_KERNELS_F32_ATTENTION_BWD_UKERNELS_H
#define SMX_KERNELS_F32_ATTENTION_BWD_UKERNELS_H

#include <stddef.h>

typedef struct smx_attn_bwd_ukernels {
  const char *isa;
  void (*gemm)(size_t m, size_t n, size_t k, const float *a, size_t ars, size_t acs, const float *b, size_t ldb,
               float *c, size_t ldc, int acc);
  void (*probs)(size_t nr, size_t nk, const float *s, size_t lds, const float *lse, float *p, size_t ldp);
  void (*dscores)(size_t nr, size_t nk, const float *s, size_t lds, const float *p, size_t ldp, float *dp,
                  size_t lddp, const float *dvec);
  void (*softpick)(size_t nr, size_t nk, const float *s, size_t lds, const float *lse, const float *dvec, float *p,
                   size_t ldp, float *dp, size_t lddp);
} smx_attn_bwd_ukernels;

extern const smx_attn_bwd_ukernels smx_attn_bwd_ukernels_scalar;
extern const smx_attn_bwd_ukernels smx_attn_bwd_ukernels_avx2;
extern const smx_attn_bwd_ukernels smx_attn_bwd_ukernels_avx512;
extern const smx_attn_bwd_ukernels smx_attn_bwd_ukernels_neon;

#endif
