/*
 * One token from one row of logits (float), with the filters of
 * include/smx/smx_topk.h in their documented order. The kept set is found
 * without sorting the row: a top-k heap, a threshold that provably contains
 * the nucleus, then a mass-guided quickselect for the exact top-p prefix.
 */
#ifndef SMX_OPS_SAMPLE_ROW_H
#define SMX_OPS_SAMPLE_ROW_H

#include <stddef.h>
#include <stdint.h>

#include "kernels/f32-softmax/ukernels.h"
#include "kernels/f32-topk/ukernels.h"

typedef struct smx_sample_cfg {
  const smx_f32_ukernels *k;
  const smx_topk_ukernels *tk;
  smx_expc c;          /* 2^((x - m) c) = exp((x - m) / T) */
  int greedy;
  int gumbel;          /* SMX_SAMPLE_GUMBEL_MAX */
  size_t top_k;        /* 0 = off */
  double top_p;        /* 1 = off */
  double min_p;        /* 0 = off */
  uint64_t seed, step;
} smx_sample_cfg;

/* Work space for rows of up to n entries, carved from one buffer. */
typedef struct smx_sample_scratch {
  size_t n;
  double *w;           /* candidate weights     */
  int64_t *idx;        /* candidate indices     */
  double *w2;          /* a copy in index order */
  int64_t *idx2;
  float *hv;           /* top-k heap values     */
  uint32_t *pos;       /* filter positions      */
  double *bsum;        /* per-block sums        */
  float *row;          /* a converted half row  */
} smx_sample_scratch;

/* Bytes of the buffer for rows of up to n entries (0 if it cannot exist). */
size_t smx_sample_scratch_bytes(size_t n);
/* Points s into buf (smx_sample_scratch_bytes(n) bytes, from malloc). */
void smx_sample_scratch_init(smx_sample_scratch *s, void *buf, size_t n);

/* The token of row `row` (its number, for the random stream); -1 for a row
 * with NaN or with no entry above -inf. */
int64_t smx_sample_row(const smx_sample_cfg *cfg, const float *x, size_t n, uint64_t row, smx_sample_scratch *s);

/* The top-p prefix, smx_sample_prefix, is in ops/sample_prefix.h. */

#endif
