/* One row of softmax / log-softmax / log-sum-exp, by a chosen algorithm. */
#ifndef SMX_OPS_SOFTMAX_ROW_H
#define SMX_OPS_SOFTMAX_ROW_H

#include "core/grid.h"
#include "ops/softmax_policy.h"
#include "kernels/f32-softmax/ukernels.h"
#include "smx/smx.h"

typedef struct smx_row_params {
  const smx_f32_ukernels *k;
  smx_op op;
  const smx_policy *pol;   /* op's special-value policy */
  smx_algo algo;       /* resolved: never SMX_ALGO_AUTO */
  smx_expc c;          /* exp(a/T) = 2^(a c)             */
  double inv_t_d;      /* 1/T in double                  */
  uint32_t flags;
  int threads;         /* threads for the chunks of one long row; 1 = this thread only */
  int stream;          /* non-temporal output stores (output far larger than the caches) */
} smx_row_params;

void smx_row_params_init(smx_row_params *p, const smx_f32_ukernels *k, smx_op op, smx_algo algo,
                         double temperature, uint32_t flags, int threads);

/* y: n outputs for softmax/log-softmax; lse: one output for logsumexp. n >= 1. */
void smx_row_f32(const smx_row_params *p, const float *x, float *y, size_t n, float *lse);

#endif
