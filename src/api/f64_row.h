/* One row of f64 softmax / log-softmax / log-sum-exp, by a chosen algorithm. */
#ifndef SMX_API_F64_ROW_H
#define SMX_API_F64_ROW_H

#include "api/row_policy.h"
#include "api/softmax_row.h"
#include "kernels/f64-softmax/ukernels.h"
#include "smx/smx.h"

typedef struct smx_row_params_f64 {
  const smx_f64_ukernels *k;
  smx_op op;
  smx_algo algo;       /* resolved: never SMX_ALGO_AUTO */
  smx_expcd c;
  uint32_t flags;
  int threads;         /* threads for the chunks of one long row; 1 = this thread only */
  int stream;          /* non-temporal output stores */
} smx_row_params_f64;

/* 1 when log2(e)/T is outside [2^-900, 2^900]: the scalar kernels, in their
 * division mode, and the three-pass algorithm are then the only ones used. */
int smx_f64_temperature_extreme(double temperature);

void smx_row_params_f64_init(smx_row_params_f64 *p, const smx_f64_ukernels *k, smx_op op, smx_algo algo,
                             double temperature, uint32_t flags, int threads);

/* y: n outputs for softmax/log-softmax; lse: one output for logsumexp. n >= 1. */
void smx_row_f64(const smx_row_params_f64 *p, const double *x, double *y, size_t n, double *lse);

#endif
