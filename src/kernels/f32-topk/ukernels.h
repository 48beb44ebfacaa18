/*
 * The f32 top-k filter kernels: one implementation per ISA (scalar.c,
 * avx2.c, avx512.c in this folder), all with the same contract and the same
 * results (they only compare; no arithmetic is involved).
 *
 * The running top-k of src/ops/topk_row.c keeps its k-th value as a threshold
 * and asks a kernel for the positions above it: one vector compare rejects
 * most elements of a block, so the cost of the top-k is a fraction of the
 * exponentials of the online normaliser.
 */
#ifndef SMX_KERNELS_F32_TOPK_UKERNELS_H
#define SMX_KERNELS_F32_TOPK_UKERNELS_H

#include <stddef.h>
#include <stdint.h>

typedef struct smx_topk_ukernels {
  const char *isa;
  /* Writes, in increasing order, the positions i < n with x[i] > thr to pos
   * (room for n entries) and returns their number. Sets *has_nan to 1 if some
   * x[i] is NaN (leaves it alone otherwise). n <= 2^32; any alignment. */
  size_t (*filter_gt)(size_t n, const float *x, float thr, uint32_t *pos, int *has_nan);
} smx_topk_ukernels;

extern const smx_topk_ukernels smx_topk_ukernels_scalar;
extern const smx_topk_ukernels smx_topk_ukernels_avx2;
extern const smx_topk_ukernels smx_topk_ukernels_avx512;
extern const smx_topk_ukernels smx_topk_ukernels_neon;

#endif
