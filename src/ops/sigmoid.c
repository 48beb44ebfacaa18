/*
 * Sigmoid, sigma(x / T) elementwise (include/smx/smx_elem.h): the
 * smallest row operation of the engine, and the worked example of
 * docs/adding-an-op.md. The engine checks the options and arguments and runs
 * the rows; each row is one call of the registry's sigmoid kernel (f16 and
 * bf16 rows go through the half-precision adaptor, block by block). The
 * special values are the kernel's, element by element: no row policy.
 */
#include <math.h>

#include "core/elem.h"
#include "core/grid.h"
#include "core/operands.h"
#include "core/options.h"
#include "core/temperature.h"
#include "registry/registry.h"
#include "smx/smx.h"

typedef struct sigmoid_job {
  const smx_sigmoid_ukernels *k;
  smx_expc c;
  smx_expcd cd;   /* f64 rows */
  smx_elem_io io;
  const char *x;
  char *y;
  size_t ldx, ldy, cols, es;
  double shift;   /* b T for sigma(x/T + b); 0: the plain kernels */
  double t, bias; /* wide: b T too large for x + b T in the arithmetic's type */
  int wide;
} sigmoid_job;

/* sigma(x/T + b) formed in double, for a b T that x + b T could overflow
 * or that would lose bits near the arithmetic's subnormals */
static double sigmoid_wide(double x, double t, double b) {
  double z = x / t + b, e = exp(-fabs(z));
  return z != z ? z : (z > 0.0 ? 1.0 : e) / (1.0 + e);
}

static void sigmoid_rows(void *ctx, size_t r0, size_t r1, void *scratch) {
  const sigmoid_job *j = ctx;
  (void)scratch;
  float a[SMX_HALF_BLOCK];
  for (size_t r = r0; r < r1; r++) {
    const char *x = j->x + r * j->ldx * j->es;
    char *y = j->y + r * j->ldy * j->es;
    if (j->wide) {
      for (size_t i = 0; i < j->cols; i++) {
        if (j->io.elem == SMX_ELEM_F64) {
          ((double *)(void *)y)[i] = sigmoid_wide(((const double *)(const void *)x)[i], j->t, j->bias);
        } else {
          float v = smx_elem_get(&j->io, x, i);
          smx_elem_set(&j->io, y, i, (float)sigmoid_wide(v, j->t, j->bias));
        }
      }
      continue;
    }
    if (j->io.elem == SMX_ELEM_F64) {
      if (j->shift != 0.0)
        j->k->vsigmoid_shift_f64(j->cols, (const double *)(const void *)x, (double *)(void *)y, &j->cd, j->shift);
      else
        j->k->vsigmoid_f64(j->cols, (const double *)(const void *)x, (double *)(void *)y, &j->cd);
      continue;
    }
    if (j->io.elem == SMX_ELEM_F32) {
      if (j->shift != 0.0)
        j->k->vsigmoid_shift(j->cols, (const float *)(const void *)x, (float *)(void *)y, &j->c, (float)j->shift);
      else
        j->k->vsigmoid(j->cols, (const float *)(const void *)x, (float *)(void *)y, &j->c);
      continue;
    }
    for (size_t i = 0; i < j->cols; i += SMX_HALF_BLOCK) {
      size_t len = j->cols - i < SMX_HALF_BLOCK ? j->cols - i : SMX_HALF_BLOCK;
      j->io.load(len, x + i * j->es, a);
      if (j->shift != 0.0) j->k->vsigmoid_shift(len, a, a, &j->c, (float)j->shift);
      else j->k->vsigmoid(len, a, a, &j->c);
      j->io.store(len, a, y + i * j->es);
    }
  }
}

/* bias: sigma(x/T + b), b finite (0: the plain sigmoid, bitwise as before) */
static smx_status run_sigmoid(smx_elem elem, const void *x, size_t ldx, void *y, size_t ldy, size_t rows,
                              size_t cols, double bias, const smx_options *opt) {
  smx_resolved_options o;
  smx_status st = smx_resolve_options(opt, &o);
  if (st != SMX_OK) return st;
  if (!isfinite(bias)) return SMX_E_INVALID_ARG;
  size_t es = smx_elem_size(elem);
  int empty;
  if ((st = smx_check_x_y(x, ldx, y, ldy, rows, cols, es, &empty)) != SMX_OK || empty) return st;

  sigmoid_job j = { .io = smx_elem_io_for(elem), .x = x, .y = y, .ldx = ldx, .ldy = ldy, .cols = cols, .es = es };
  if (elem == SMX_ELEM_F64) {
    /* an extreme T needs the scalar kernel's division mode */
    smx_f64_expc(&j.cd, o.temperature);
    j.k = j.cd.div ? &smx_sigmoid_ukernels_scalar : smx_registry_current()->sigmoid;
    j.shift = bias * o.temperature;
    j.wide = fabs(j.shift) > 0x1p900 || (j.shift != 0.0 && fabs(j.shift) < 0x1p-900);
  } else {
    double t = smx_f32_temperature(o.temperature);
    j.k = smx_f32_registry_for(t)->sigmoid;
    smx_f32_expc(&j.c, t);
    j.shift = bias * t;
    j.wide = fabs(j.shift) > 0x1p100 || (j.shift != 0.0 && fabs(j.shift) < 0x1p-100);
  }
  j.t = o.temperature;
  j.bias = bias;
  smx_plan plan = smx_plan_rows(o.threads, rows, cols, 0);
  return smx_grid_rows(plan.row_threads, rows, 0, sigmoid_rows, &j);
}

smx_status smx_sigmoid_f32(const float *x, float *y, size_t n, const smx_options *opt) {
  return run_sigmoid(SMX_ELEM_F32, x, n, y, n, 1, n, 0.0, opt);
}

smx_status smx_sigmoid_rows_f32(const float *x, size_t ldx, float *y, size_t ldy, size_t rows, size_t cols,
                                const smx_options *opt) {
  return run_sigmoid(SMX_ELEM_F32, x, ldx, y, ldy, rows, cols, 0.0, opt);
}

smx_status smx_sigmoid_f64(const double *x, double *y, size_t n, const smx_options *opt) {
  return run_sigmoid(SMX_ELEM_F64, x, n, y, n, 1, n, 0.0, opt);
}

smx_status smx_sigmoid_rows_f64(const double *x, size_t ldx, double *y, size_t ldy, size_t rows, size_t cols,
                                const smx_options *opt) {
  return run_sigmoid(SMX_ELEM_F64, x, ldx, y, ldy, rows, cols, 0.0, opt);
}

smx_status smx_sigmoid_rows_f16(const uint16_t *x, size_t ldx, uint16_t *y, size_t ldy, size_t rows, size_t cols,
                                const smx_options *opt) {
  return run_sigmoid(SMX_ELEM_F16, x, ldx, y, ldy, rows, cols, 0.0, opt);
}

smx_status smx_sigmoid_rows_bf16(const uint16_t *x, size_t ldx, uint16_t *y, size_t ldy, size_t rows, size_t cols,
                                 const smx_options *opt) {
  return run_sigmoid(SMX_ELEM_BF16, x, ldx, y, ldy, rows, cols, 0.0, opt);
}

/* sigma(x/T + b): the same entry points with a bias */
smx_status smx_sigmoid_bias_f32(const float *x, float *y, size_t n, double bias, const smx_options *opt) {
  return run_sigmoid(SMX_ELEM_F32, x, n, y, n, 1, n, bias, opt);
}
smx_status smx_sigmoid_bias_f64(const double *x, double *y, size_t n, double bias, const smx_options *opt) {
  return run_sigmoid(SMX_ELEM_F64, x, n, y, n, 1, n, bias, opt);
}
smx_status smx_sigmoid_bias_rows_f32(const float *x, size_t ldx, float *y, size_t ldy, size_t rows, size_t cols,
                                     double bias, const smx_options *opt) {
  return run_sigmoid(SMX_ELEM_F32, x, ldx, y, ldy, rows, cols, bias, opt);
}
smx_status smx_sigmoid_bias_rows_f64(const double *x, size_t ldx, double *y, size_t ldy, size_t rows, size_t cols,
                                     double bias, const smx_options *opt) {
  return run_sigmoid(SMX_ELEM_F64, x, ldx, y, ldy, rows, cols, bias, opt);
}
smx_status smx_sigmoid_bias_rows_f16(const uint16_t *x, size_t ldx, uint16_t *y, size_t ldy, size_t rows,
                                     size_t cols, double bias, const smx_options *opt) {
  return run_sigmoid(SMX_ELEM_F16, x, ldx, y, ldy, rows, cols, bias, opt);
}
smx_status smx_sigmoid_bias_rows_bf16(const uint16_t *x, size_t ldx, uint16_t *y, size_t ldy, size_t rows,
                                      size_t cols, double bias, const smx_options *opt) {
  return run_sigmoid(SMX_ELEM_BF16, x, ldx, y, ldy, rows, cols, bias, opt);
}
