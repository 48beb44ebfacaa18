/* One row of f64 softmax / log-softmax / log-sum-exp, by a chosen algorithm. */
#ifndef SMX_OPS_F64_ROW_H
#define SMX_OPS_F64_ROW_H

#include "ops/softmax_policy.h"
#include "ops/softmax_row_f32.h"
#include "kernels/f64-softmax/ukernels.h"
#include "smx/smx.h"

typedef struct smx_row_params_f64 {
  const smx_f64_ukernels *k;
  smx_op op;
  const smx_policy *pol;   /* op's special-value policy */
  smx_algo algo;       /* resolved: never SMX_ALGO_AUTO */
  smx_expcd c;
  uint32_t flags;
  int threads;         /* threads for the chunks of one long row; 1 = this thread only */
  int stream;          /* non-temporal output stores */
} smx_row_params_f64;

void smx_row_params_f64_init(smx_row_params_f64 *p, const smx_f64_ukernels *k, smx_op op, smx_algo algo,
                             double temperature, uint32_t flags, int threads);

/* y: n outputs for softmax/log-softmax; lse: one output for logsumexp. n >= 1. */
void smx_row_f64(const smx_row_params_f64 *p, const double *x, double *y, size_t n, double *lse);

#endif
