/*
 * Noisy Softmax (Chen, Deng and Du, CVPR 2017, arXiv 1708.03769, eq. 5-6;
 * definition and policy in include/smx/smx_noisy.h): cross-entropy with the
 * target logit lowered by |xi|-scaled noise, xi from the sampler's Philox.
 *
 * A row is the fused cross-entropy's two passes with the target left out of
 * both: pass 1 is the softmax kernels' online (max, sum) over [0, t) and
 * (t, n), merged in double with f~_t; pass 2 writes p~_j over the same two
 * spans with the cross-entropy gradient kernel (f32) or the f64 scale-exp
 * kernel; the target's gradient is formed in double. Adding exp(f~_t) to a
 * sum that never held exp(f_t) avoids the cancellation of taking exp(f_t)
 * out of the full row's sum when p_t is near 1.
 */
#include <math.h>
#include <string.h>

#include "core/operands.h"
#include "math/philox.h"
#include "ops/loss_row.h"
#include "ops/loss_rows.h"
#include "smx/smx.h"

/* word 0 of the noise's Philox counter: no sampling draw uses it (header) */
#define NOISY_DRAW 0xFFFFFFFFu

typedef struct noisy_ctx {
  smx_lrow p;
  const void *norms;     /* the call's type, or NULL (FREE) */
  void *grad_norms;
  double alpha;
  uint64_t seed, step, row_offset;
  smx_noisy_mode mode;
  int f64;
} noisy_ctx;

/* (m, d) of n entries, d = sum exp(x_j - m); d = 0 and m = -inf for no mass.
 * Returns 0 when a NaN or a +inf is among them. */
static int span_stat(const noisy_ctx *c, const void *x, size_t n, double *m, double *d) {
  *m = -INFINITY;
  *d = 0.0;
  if (n == 0) return 1;
  if (c->f64) {
    smx_online_dd st = c->p.k64->ronline(n, x, &c->p.c64);
    *m = st.m;
    *d = st.d.hi + st.d.lo;
  } else {
    smx_online_state st = c->p.k32->ronline(n, x, &c->p.c32);
    *m = st.m;
    *d = st.d;
  }
  if (!(*d >= 0.0 && *d < INFINITY && *m < INFINITY)) return 0;   /* a NaN (the kernels keep it) or a +inf */
  if (*d == 0.0) *m = -INFINITY;                                   /* every entry -inf: no mass */
  return 1;
}

/* g_j = a exp(x_j - m) over n entries (m >= each x_j up to the f64 kernel's
 * lag; m = -inf: no mass, zeros) */
static void span_grad(const noisy_ctx *c, const void *x, void *g, size_t n, double m, double a) {
  if (n == 0) return;
  if (m == -INFINITY || a == 0.0) {
    memset(g, 0, n * (c->f64 ? sizeof(double) : sizeof(float)));   /* +0 in float and double */
  } else if (c->f64) {
    c->p.k64->vscaleexp(n, x, g, m, &c->p.c64, a, 0);
  } else {
    c->p.g32->vexpaffine(n, x, g, (float)m, &c->p.c32, smx_lrow_sat(a), 0.0f, 0);
  }
}

static void put(const noisy_ctx *c, void *p, size_t i, double v) {
  if (c->f64) ((double *)p)[i] = v;
  else ((float *)p)[i] = smx_lrow_sat(v);
}

static void nan_row(const noisy_ctx *c, size_t row, size_t n, double *loss, void *g) {
  *loss = NAN;
  for (size_t j = 0; g && j < n; j++) put(c, g, j, NAN);
  if (c->grad_norms) put(c, c->grad_norms, row, NAN);
}

static void noisy_row(const void *ctx, size_t row, const void *x, size_t n, size_t t, double s, double *loss,
                      void *g) {
  const noisy_ctx *c = ctx;
  size_t es = c->f64 ? sizeof(double) : sizeof(float);
  double ft = c->f64 ? ((const double *)x)[t] : (double)((const float *)x)[t];
  double r = !c->norms ? 0.0 : c->f64 ? ((const double *)c->norms)[row] : (double)((const float *)c->norms)[row];
  const char *after = (const char *)x + (t + 1) * es;
  double ma, da, mb, db;
  if (!(ft < INFINITY) || !span_stat(c, x, t, &ma, &da) || !span_stat(c, after, n - t - 1, &mb, &db)) {
    nan_row(c, row, n, loss, g);
    return;
  }
  /* the noise amplitude A and its derivatives (header) */
  double amp = 1.0, da_df = 0.0, da_dr = 0.0;
  if (c->mode == SMX_NOISY_ANNEALED) {
    amp = r - ft;
    if (amp > 0.0) da_df = -1.0, da_dr = 1.0;
    else amp = 0.0;
  } else if (c->mode == SMX_NOISY_AMPLITUDE) {
    amp = r;
    da_dr = 1.0;
  }
  double a = c->alpha * fabs(smx_philox_normal(c->seed, c->row_offset + row, c->step, NOISY_DRAW));
  double fn = a == 0.0 ? ft : ft - a * amp;   /* a = 0 with amp = +inf (f_t = -inf): no 0 * inf */
  double mo = ma > mb ? ma : mb;              /* the others' maximum (-inf: no mass) */
  double m = mo > fn ? mo : fn;
  if (m == -INFINITY) {                       /* every entry -inf */
    nan_row(c, row, n, loss, g);
    return;
  }
  double rest = (da > 0.0 ? da * exp(ma - m) : 0.0) + (db > 0.0 ? db * exp(mb - m) : 0.0);
  double d = rest + exp(fn - m);
  /* f~_t the maximum: loss = log1p(rest), to full relative precision as p~_t -> 1 */
  double l = fn == m ? log1p(rest) : log(d) + (m - fn);   /* +inf when f~_t = -inf */
  *loss = l;
  double pm1 = expm1(-l);                     /* p~_t - 1, accurate as p~_t -> 1 */
  if (c->grad_norms) put(c, c->grad_norms, row, da_dr == 0.0 ? 0.0 : s * pm1 * (-a * da_dr));
  if (!g) return;
  double gt = s * pm1 * (1.0 - a * da_df);
  /* g_j = s exp(x_j - m) / d = (s exp(mo - m) / d) exp(x_j - mo): mo is an
   * entry (f32), so the kernels see x_j - mo <= 0 */
  double scale = mo == -INFINITY ? 0.0 : s * exp(mo - m) / d;
  span_grad(c, x, g, t, mo, scale);
  span_grad(c, after, (char *)g + (t + 1) * es, n - t - 1, mo, scale);
  put(c, g, t, gt);
}

static smx_status run_noisy(smx_elem elem, const void *logits, size_t ld, const int64_t *targets, const void *norms,
                            void *loss, void *grad, size_t ldg, void *grad_norms, size_t rows, size_t cols,
                            double alpha, uint64_t seed, uint64_t step, uint64_t row_offset, smx_noisy_mode mode,
                            const smx_options *opt) {
  smx_loss_resolved ro;
  const smx_loss_resolved *o = &ro;
  smx_status st = smx_resolve_loss_options(opt, 0, &ro);
  if (st != SMX_OK) return st;
  if (!(alpha >= 0.0 && alpha <= 1.7976931348623157e308)) return SMX_E_INVALID_ARG;
  if ((unsigned)mode > (unsigned)SMX_NOISY_AMPLITUDE) return SMX_E_INVALID_ARG;
  size_t es = smx_elem_size(elem);
  int f64 = elem == SMX_ELEM_F64;
  if (rows > 0) {
    /* what smx_loss_rows checks too, needed here first: the norms are read
     * and grad_norms' overlaps checked before anything is written */
    if (cols == 0 || ld < cols || (grad && ldg < cols) || !logits || !targets || !loss) return SMX_E_INVALID_ARG;
    if (!norms && mode != SMX_NOISY_FREE) return SMX_E_INVALID_ARG;
    size_t nloss = o->reduction == SMX_REDUCTION_NONE ? rows : 1;
    smx_arg args[6] = { SMX_ARG_IN(logits, rows, cols, ld, es), SMX_ARG_IN(targets, 1, rows, rows, 8),
                        SMX_ARG_IN(norms, 1, rows, rows, es), SMX_ARG_OUT(grad, rows, cols, ldg, es, 1),
                        SMX_ARG_OUT(loss, 1, nloss, nloss, es, 0), SMX_ARG_OUT(grad_norms, 1, rows, rows, es, 0) };
    if ((st = smx_check_args(args, 6)) != SMX_OK) return st;
    for (size_t r = 0; norms && r < rows; r++) {
      if (targets[r] == o->ignore_index) continue;
      double v = f64 ? ((const double *)norms)[r] : (double)((const float *)norms)[r];
      if (!(v >= 0.0 && v <= 1.7976931348623157e308)) return SMX_E_INVALID_ARG;
    }
  }
  noisy_ctx c;
  smx_lrow_init(&c.p, 1.0);
  c.norms = mode == SMX_NOISY_FREE ? NULL : norms;
  c.grad_norms = grad_norms;
  c.alpha = alpha;
  c.seed = seed;
  c.step = step;
  c.row_offset = row_offset;
  c.mode = mode;
  c.f64 = f64;
  smx_loss_call call = { elem, logits, ld, rows, cols, targets, o, loss, grad, ldg, noisy_row, &c };
  st = smx_loss_rows(&call);
  if (st == SMX_OK && grad_norms) {
    for (size_t r = 0; r < rows; r++) {
      if (targets[r] != o->ignore_index) continue;
      if (f64) ((double *)grad_norms)[r] = 0.0;
      else ((float *)grad_norms)[r] = 0.0f;
    }
  }
  return st;
}

smx_status smx_noisy_softmax_loss_f32(const float *logits, size_t ld, const int64_t *targets, const float *norms,
                                      float *loss, float *grad, size_t ldg, float *grad_norms, size_t rows, size_t cols,
                                      double alpha, uint64_t seed, uint64_t step, uint64_t row_offset,
                                      smx_noisy_mode mode, const smx_options *opt) {
  return run_noisy(SMX_ELEM_F32, logits, ld, targets, norms, loss, grad, ldg, grad_norms, rows, cols, alpha, seed,
                   step, row_offset, mode, opt);
}

smx_status smx_noisy_softmax_loss_f64(const double *logits, size_t ld, const int64_t *targets, const double *norms,
                                      double *loss, double *grad, size_t ldg, double *grad_norms, size_t rows,
                                      size_t cols, double alpha, uint64_t seed, uint64_t step, uint64_t row_offset,
                                      smx_noisy_mode mode, const smx_options *opt) {
  return run_noisy(SMX_ELEM_F64, logits, ld, targets, norms, loss, grad, ldg, grad_norms, rows, cols, alpha, seed,
                   step, row_offset, mode, opt);
}

smx_status smx_noisy_softmax_noise(uint64_t seed, uint64_t step, size_t row0, size_t rows, double *xi) {
  if (rows > 0 && !xi) return SMX_E_INVALID_ARG;
  for (size_t i = 0; i < rows; i++) xi[i] = smx_philox_normal(seed, (uint64_t)(row0 + i), step, NOISY_DRAW);
  return SMX_OK;
}
