/*
 * The attention tile products in bf16 (vdpbf16ps), for the fused attention's
 * general path (src/attention/tile.c) where the CPU has AVX512_BF16: the
 * storage is bf16 (or f32 that opted in, SMX_ATTN_MATH_BF16), the products
 * are on bf16 pairs with f32 accumulation, the online softmax stays f32
 * (kernels/f32-attention's `online`), and P is rounded to bf16 for P V, as
 * FlashAttention does. One body (body.h) over src/simd/avx512bf16.h.
 *
 * Layouts (a pair is two bf16 in a uint32, the first in the low half):
 *  - Qp: the task's rows packed transposed by pairs of dimensions,
 *    qp[(t / 2) ldqp + r] = (Q[r][t], Q[r][t + 1]) (the missing half of an odd
 *    last pair and padding rows 0), ldqp >= nr;
 *  - K rows bf16 in place (row stride ldk elements): a pair of dimensions is
 *    one 32-bit broadcast, so K is never repacked;
 *  - Vp: a V tile packed by pairs of keys, vp[(c / 2) ldvp + x] =
 *    (V[c][x], V[c + 1][x]) (a missing key of an odd tile: 0; columns dv up
 *    to ldvp, a multiple of 16: 0);
 *  - Pp: P rounded to bf16 by pairs of keys, pp[(c / 2) nr16 + r].
 *
 * Decoding (tasks of the f32 kernels' dec_qk / dec_pv, bf16 storage): dec_qk is
 * that dec_qk on bf16 Q and K rows as stored, S[r][c] = scale sum_t Q[r][t]
 * K[c][t] (row-major S, row stride lds), the vectors along d by pairs of
 * dimensions, one accumulator per (row, key) reduced by one transpose-add,
 * the K rows of pf asked for into L2 as there. dec_pv is P V after the f32
 * kernels' dec_online: O[r][:] = alpha_r O[r][:] + sum_c bf16(P[r][c]) V[c][:]
 * on the bf16 V rows as stored, paired by keys in registers (an odd last key
 * pairs with 0), as pv does it, asking for the V rows of pf as it goes.
 * Kernels never allocate and touch exactly the ranges above.
 */
#ifndef SMX_KERNELS_BF16_ATTENTION_UKERNELS_H
#define SMX_KERNELS_BF16_ATTENTION_UKERNELS_H

#include <stddef.h>
#include <stdint.h>

#include "kernels/f32-attention/ukernels.h"

typedef struct smx_attn_bf16_ukernels {
  const char *isa;
  /* y[i] = x[i] rounded to bf16 (nearest even; subnormals 0) */
  void (*to_bf16)(size_t n, const float *x, uint16_t *y);
  /* St[c][r] = scale sum_t Q[r][t] K[c][t] for c < nk, r < nr (a multiple of 16) */
  void (*qk)(size_t nk, size_t nr, size_t d, const uint32_t *qp, size_t ldqp, const uint16_t *k, size_t ldk,
             float *st, size_t ldst, float scale);
  /* Vp of V rows [0, nk) (nk <= 64), f32 (f32 != 0) or bf16, ldv elements apart */
  void (*pack_v)(size_t nk, size_t dv, const void *v, size_t ldv, int f32, uint32_t *vp, size_t ldvp);
  /* O[r][:] = alpha_r O[r][:] + sum_c bf16(Pt[c][r]) V[c][:] for r < nr, Pp built in pp ((nk + 1) / 2 x
   * nr16 pairs, nr16 = nr rounded up to 16; Pt is read over nr16 columns); a row with alpha_r < 0 (BLASST
   * skipped it, its P is 0) is left as it is */
  void (*pv)(size_t nk, size_t nr, size_t dv, const float *pt, size_t ldpt, uint32_t *pp, const uint32_t *vp,
             size_t ldvp, float *o, size_t ldo, const float *alpha);
  void (*dec_qk)(size_t nk, size_t nr, size_t d, const uint16_t *q, size_t ldq, const uint16_t *k, size_t ldk,
                 float *s, size_t lds, float scale, const smx_attn_pf *pf);
  void (*dec_pv)(size_t nk, size_t nr, size_t dv, const float *s, size_t lds, const uint16_t *v, size_t ldv, float *o,
                 size_t ldo, const float *alpha, const smx_attn_pf *pf);
} smx_attn_bf16_ukernels;

extern const smx_attn_bf16_ukernels smx_attn_bf16_ukernels_avx512bf16;

#endif
