/*
 * Softmax of a rescaled row, softmax(a x) with a per-row a >= 0, through the
 * softmax engine's row drivers (softmax_row_f32.c / _f64.c: the same
 * kernels, algorithms and special-value policy as smx_softmax), and its VJP
 * through the backward kernels: the shared step of SSMax, adaptive
 * temperature and the standardised softmax (include/smx/smx_norm.h).
 */
#ifndef SMX_OPS_VNORM_SOFTMAX_H
#define SMX_OPS_VNORM_SOFTMAX_H

#include <stddef.h>

#include "registry/registry.h"

typedef struct smx_vn_sm {
  const smx_registry *reg;
  smx_algo algo;      /* for rows of this length (never AUTO) */
  smx_algo algo64;
  int stream;         /* non-temporal stores for outputs far larger than the caches */
} smx_vn_sm;

void smx_vn_sm_init(smx_vn_sm *s, size_t rows, size_t cols);

/* y = softmax(a x), a >= 0 (NaN a: a NaN row). a = 0 is the limit
 * a -> 0+: uniform over the entries above -inf (NaN rows stay NaN; a row
 * with a +inf entry: 1/k on them). The policy of smx_softmax otherwise:
 * NaN: NaN row; +inf entries: 1/k on them; no entry above -inf: 0. */
void smx_vn_softmax_f32(const smx_vn_sm *s, const float *x, float *y, size_t n, double a);
void smx_vn_softmax_f64(const smx_vn_sm *s, const double *x, double *y, size_t n, double a);

/* dx = a y (dy - <dy, y>); returns <dy, y> (dx may equal y or dy). */
double smx_vn_softmax_bwd_f32(const smx_vn_sm *s, const float *y, const float *dy, float *dx, size_t n, double a);
double smx_vn_softmax_bwd_f64(const double *y, const double *dy, double *dx, size_t n, double a);

#endif
