/*
 * Adapters of the losses for the op test driver: each loss with reduction
 * NONE, so that every row's loss is checked, and its gradient with the loss
 * kept aside. The fixed parameters are op.h's (OPS_FOCAL_GAMMA, ...); the
 * driver's options carry threads (and the masked-row flag where the loss
 * takes it). The references are ref_losses.c.
 */
#include <stdlib.h>

#include "op.h"

/* the loss of a gradient call: a scratch for the driver's few rows, else the heap */
static void *loss_buf(size_t rows, size_t es, unsigned char *scratch, size_t scratch_bytes) {
  if (rows * es <= scratch_bytes) return scratch;
  if (rows > ((size_t)1 << 24)) return scratch;   /* a refused huge count never writes it */
  return malloc(rows * es);
}

/* the driver's options with reduction NONE; flags: those the loss takes (the masked-row flag: the
 * Fenchel-Young losses), the others are refused by the library */
static smx_options loss_opts(const op_call *c, smx_loss_ext *ext, uint32_t flags) {
  smx_options o = { SMX_ALGO_AUTO, 0.0, 0, 1, NULL };
  smx_loss_ext e = SMX_LOSS_EXT_INIT;
  e.reduction = SMX_REDUCTION_NONE;
  *ext = e;
  if (c->opt) {
    o.temperature = c->opt->temperature;   /* the library refuses any but 0 and 1 */
    o.flags = c->opt->flags & flags;
    o.threads = c->opt->threads;
  }
  o.loss = ext;
  return o;
}

/* a_<name>_loss (out = the row losses) and a_<name>_grad (out = the gradient) over
 * call_<name>(c, loss, grad, ldg), the public call */
#define LOSS_ADAPTER(name, T)                                                                        \
  static smx_status run_##name(const op_call *c, int want_grad) {                                     \
    unsigned char scratch[64 * sizeof(double)];                                                       \
    T *loss = want_grad ? loss_buf(c->rows, sizeof(T), scratch, sizeof scratch) : (T *)c->out;        \
    if (want_grad && !loss) return SMX_E_NOMEM;   /* (a NULL output of the loss form: the library's) */ \
    smx_status s = call_##name(c, loss, want_grad ? (T *)c->out : NULL, want_grad ? c->ld_out : 0);   \
    if (want_grad && (void *)loss != (void *)scratch) free(loss);                                     \
    return s;                                                                                         \
  }                                                                                                   \
  smx_status a_##name##_loss(const op_call *c) { return run_##name(c, 0); }                           \
  smx_status a_##name##_grad(const op_call *c) { return run_##name(c, 1); }

#define FOCAL(sfx, T)                                                                                 \
  static smx_status call_focal_##sfx(const op_call *c, T *loss, T *grad, size_t ldg) {                \
    smx_loss_ext e;                                                                                   \
    smx_options o = loss_opts(c, &e, 0);                                                              \
    return smx_focal_loss_##sfx((const T *)c->in[0], c->ld_in[0], c->targets, NULL, loss, grad, ldg,  \
                                c->rows, c->cols, (double)OPS_FOCAL_GAMMA, &o);                       \
  }                                                                                                   \
  LOSS_ADAPTER(focal_##sfx, T)
FOCAL(f32, float)
FOCAL(f64, double)

#define SPHERICAL(sfx, T)                                                                             \
  static smx_status call_zloss_##sfx(const op_call *c, T *loss, T *grad, size_t ldg) {                \
    smx_loss_ext e;                                                                                   \
    smx_options o = loss_opts(c, &e, 0);                                                              \
    return smx_spherical_z_loss_##sfx((const T *)c->in[0], c->ld_in[0], c->targets, loss, grad, ldg,  \
                                      c->rows, c->cols, (double)OPS_ZLOSS_A, (double)OPS_ZLOSS_B, &o); \
  }                                                                                                   \
  LOSS_ADAPTER(zloss_##sfx, T)
SPHERICAL(f32, float)
SPHERICAL(f64, double)

/* KD: in[1] is the teacher (prep_kd) */
#define KD(sfx, T)                                                                                    \
  static smx_status call_kd_##sfx(const op_call *c, T *loss, T *grad, size_t ldg) {                   \
    smx_loss_ext e;                                                                                   \
    smx_options o = loss_opts(c, &e, 0);                                                              \
    o.temperature = (double)OPS_KD_T;   /* KD's own T (the row is OP_NO_TEMP) */                      \
    return smx_kd_loss_##sfx((const T *)c->in[0], c->ld_in[0], (const T *)c->in[1], c->ld_in[1],      \
                             loss, grad, ldg, c->rows, c->cols, 0, &o);                               \
  }                                                                                                   \
  LOSS_ADAPTER(kd_##sfx, T)
KD(f32, float)
KD(f64, double)

/* the Fenchel-Young losses of sparsemax, entmax-1.5 and bisection entmax at OPS_FY_ALPHA; tail: the
 * arguments after cols (FY_TAIL, or FY_TAIL_ALPHA for bisection entmax) */
#define FY_TAIL &o
#define FY_TAIL_ALPHA (double)OPS_FY_ALPHA, &o
#define FY(map, sfx, T, tail)                                                                         \
  static smx_status call_##map##_##sfx(const op_call *c, T *loss, T *grad, size_t ldg) {              \
    smx_loss_ext e;                                                                                   \
    smx_options o = loss_opts(c, &e, SMX_FLAG_MASKED_ROW_NAN);                                        \
    return smx_##map##_loss_##sfx((const T *)c->in[0], c->ld_in[0], c->targets, loss, grad, ldg,      \
                                  c->rows, c->cols, tail);                                            \
  }                                                                                                   \
  LOSS_ADAPTER(map##_##sfx, T)
FY(sparsemax, f32, float, FY_TAIL)
FY(sparsemax, f64, double, FY_TAIL)
FY(entmax15, f32, float, FY_TAIL)
FY(entmax15, f64, double, FY_TAIL)
FY(entmax, f32, float, FY_TAIL_ALPHA)
FY(entmax, f64, double, FY_TAIL_ALPHA)

/* the sort-based sparsemax (the oracle), checked as sparsemax */
smx_status a_sparsemax_sort_f32(const op_call *c) {
  return smx_sparsemax_sort_rows_f32((const float *)c->in[0], c->ld_in[0], (float *)c->out, c->ld_out, c->rows,
                                     c->cols, c->opt);
}
smx_status a_sparsemax_sort_f64(const op_call *c) {
  return smx_sparsemax_sort_rows_f64((const double *)c->in[0], c->ld_in[0], (double *)c->out, c->ld_out, c->rows,
                                     c->cols, c->opt);
}

/* S-DPO (a TLOSS op) through the generic entry smx_op_rows, as the front ends call it: beta = 1 / the
 * driver's temperature (0: 1), the library's temperature left at 0, so that every family's temperature
 * becomes a beta (a bad temperature a bad beta: refused all the same). The loss is double for f64 rows,
 * float otherwise. */
static smx_status sdpo(const op_call *c, smx_op_dtype dt, int want_grad) {
  const smx_op_info *op;
  if (smx_op_find("sdpo_loss", &op) != SMX_OK) return SMX_E_INTERNAL;
  smx_loss_ext e;
  smx_options o = loss_opts(c, &e, SMX_FLAG_MASKED_ROW_NAN);
  double beta = 1.0 / (o.temperature == 0.0 ? 1.0 : o.temperature);
  o.temperature = 0.0;
  unsigned char scratch[64 * sizeof(double)];
  size_t ls = dt == SMX_OP_F64 ? sizeof(double) : sizeof(float);
  void *loss = want_grad ? loss_buf(c->rows, ls, scratch, sizeof scratch) : c->out;
  if (want_grad && !loss) return SMX_E_NOMEM;
  smx_op_call a = { dt, 0, c->rows, c->cols, c->in[0], c->ld_in[0], NULL, 0, NULL, 0, loss, 0, &beta, 1, NULL, NULL,
                    c->targets, want_grad ? c->out : NULL, want_grad ? c->ld_out : 0, NULL };
  smx_status s = smx_op_rows(op, &a, &o);
  if (want_grad && loss != (void *)scratch) free(loss);
  return s;
}
#define SDPO(sfx, DT)                                                                                   \
  smx_status a_sdpo_loss_##sfx(const op_call *c) { return sdpo(c, DT, 0); }                             \
  smx_status a_sdpo_grad_##sfx(const op_call *c) { return sdpo(c, DT, 1); }
SDPO(f64, SMX_OP_F64)
SDPO(f32, SMX_OP_F32)
SDPO(f16, SMX_OP_F16)
SDPO(bf16, SMX_OP_BF16)

/* InfoNCE, one-sided (symmetric = 0: each row the cross-entropy of sim / T at its positive), at the driver's
 * temperature */
#define INFO_NCE(sfx, T)                                                                              \
  static smx_status call_info_nce_##sfx(const op_call *c, T *loss, T *grad, size_t ldg) {             \
    smx_loss_ext e;                                                                                   \
    smx_options o = loss_opts(c, &e, 0);                                                              \
    return smx_info_nce_##sfx((const T *)c->in[0], c->ld_in[0], c->targets, loss, grad, ldg, c->rows, \
                              c->cols, 0, &o);                                                        \
  }                                                                                                   \
  LOSS_ADAPTER(info_nce_##sfx, T)
INFO_NCE(f32, float)
INFO_NCE(f64, double)
