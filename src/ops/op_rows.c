/*
 * smx_op_rows (include/smx/smx_ops.h): the generic entry of the row operations, cross-entropy and the target losses. The parameters are
 * checked against the table's ranges and defaults here; then one call of the op's own entry point, whose
 * dispatch (one function per op, one case per dtype the table lists) is expanded from op_table.def by
 * token pasting, never written per op. An SMX_DT flag of 1 for an entry point that does not exist fails
 * the build (an undeclared function), so the table cannot claim a dtype the headers lack.
 */
#include <float.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>

#include "ops/op_table.h"
#include "smx/smx.h"

/* The most doubles an op's parameters take (checked against the table below). */
#define MAX_VALUES 16

/* Per dtype: the element type of the rows, and the type of LSE's one value per row. */
#define T_f64 double
#define T_f32 float
#define T_f16 uint16_t
#define T_bf16 uint16_t
#define OT_f64 double
#define OT_f32 float
#define OT_f16 float
#define OT_bf16 float
#define LT_f64 double
#define LT_f32 float
#define LT_f16 float
#define LT_bf16 float
#define DT_f64 SMX_OP_F64
#define DT_f32 SMX_OP_F32
#define DT_f16 SMX_OP_F16
#define DT_bf16 SMX_OP_BF16

/* The parameters as C arguments, read in order from the checked values v[]. */
#define PDECL(type, pname, ...) PDECL_##type(pname)
#define PDECL_DOUBLE(n) const double n = v[i_]; i_ += 1;
#define PDECL_DOUBLE4(n) const double *n = v + i_; i_ += 4;
#define PDECL_INT(n) const int n = (int)v[i_]; i_ += 1;
#define PDECL_BOOL(n) const int n = (int)v[i_]; i_ += 1;
#define PDECL_SIZE(n) const size_t n = (size_t)v[i_]; i_ += 1;
#define PDECL_U64(n) const uint64_t n = (uint64_t)v[i_]; i_ += 1;
#define PARG(type, pname, ...) , pname

/* The argument lists of the signature classes (smx_op_sig), before and after the parameters. */
#define FWD_HEAD_ROWS(sfx) (const T_##sfx *)c->x, c->ldx, (T_##sfx *)c->out, c->ldo, c->rows, c->cols
#define FWD_HEAD_LSE(sfx) (const T_##sfx *)c->x, c->ldx, (OT_##sfx *)c->out, c->rows, c->cols
#define FWD_HEAD_TLOSS(sfx)                                                                                \
  (const T_##sfx *)c->x, c->ldx, c->targets, (LT_##sfx *)c->out, (T_##sfx *)c->grad, c->ldg, c->rows, c->cols
/* XENT: TLOSS's list with the log-sum-exp per row after ldg */
#define FWD_HEAD_XENT(sfx)                                                                                 \
  (const T_##sfx *)c->x, c->ldx, c->targets, (LT_##sfx *)c->out, (T_##sfx *)c->grad, c->ldg,              \
      (LT_##sfx *)c->lse, c->rows, c->cols
#define BWD_HEAD_ROWS(sfx)                                                                                 \
  (const T_##sfx *)c->x, c->ldx, (const T_##sfx *)c->y, c->ldy, (const T_##sfx *)c->dy, c->lddy,            \
      (T_##sfx *)c->out, c->ldo, c->rows, c->cols
#define BWD_HEAD_YBWD(sfx)                                                                                 \
  (const T_##sfx *)c->y, c->ldy, (const T_##sfx *)c->dy, c->lddy, (T_##sfx *)c->out, c->ldo, c->rows, c->cols
#define TAIL_NONE
#define TAIL_LENS , c->lens
#define TAIL_PGRAD , c->dparams
/* class -> (forward head, forward tail, backward head, backward tail) */
#define SIG_ROWS ROWS, NONE, ROWS, NONE
#define SIG_ROWS_YBWD ROWS, NONE, YBWD, NONE
#define SIG_ROWS_LENS ROWS, LENS, ROWS, LENS
#define SIG_ROWS_PGRAD ROWS, NONE, ROWS, PGRAD
#define SIG_LSE LSE, NONE, NONE, NONE
#define SIG_TLOSS TLOSS, NONE, NONE, NONE
#define SIG_XENT XENT, NONE, NONE, NONE
/* the forward entry's name: smx_<name>_rows_<dt>, or smx_<name>_<dt> for the losses */
#define FWD_NAME_ROWS(name, sfx) smx_##name##_rows_##sfx
#define FWD_NAME_LSE(name, sfx) smx_##name##_rows_##sfx
#define FWD_NAME_TLOSS(name, sfx) smx_##name##_##sfx
#define FWD_NAME_XENT(name, sfx) smx_##name##_##sfx

#define FWD_CASE(flag, name, sfx, fh, ft, params)                                                          \
  SMX_OPT_IF(flag, case DT_##sfx: return FWD_NAME_##fh(name, sfx)(FWD_HEAD_##fh(sfx) params(PARG) TAIL_##ft, o);)
#define BWD_CASE(flag, name, sfx, bh, bt, params)                                                          \
  SMX_OPT_IF(flag, case DT_##sfx:                                                                          \
             return smx_##name##_backward_rows_##sfx(BWD_HEAD_##bh(sfx) params(PARG) TAIL_##bt, o);)
/* The YBWD backward takes no parameters (softmax, log-softmax): PNONE stands in for the op's list. */
#define PNONE_(P)
#define BWD_PARAMS_ROWS(params) params
#define BWD_PARAMS_YBWD(params) PNONE_
#define BWD_PARAMS_NONE(params) PNONE_

#define GEN_FN(...) GEN_FN_(__VA_ARGS__)
#define GEN_FN_(name, fh, ft, bh, bt, dt, bdt, params)                                                      \
  static smx_status call_##name(const smx_op_call *c, const double *v, const smx_options *o) {             \
    size_t i_ = 0;                                                                                         \
    params(PDECL)(void)i_;                                                                                 \
    (void)v;                                                                                               \
    if (!c->backward) {                                                                                    \
      switch (c->dtype) {                                                                                  \
        GEN_CASES(FWD_CASE, name, fh, ft, params, SMX_OPT_UNPACK dt)                                       \
      default: break;                                                                                      \
      }                                                                                                    \
    } else {                                                                                               \
      switch (c->dtype) {                                                                                  \
        GEN_CASES(BWD_CASE, name, bh, bt, BWD_PARAMS_##bh(params), SMX_OPT_UNPACK bdt)                     \
      default: break;                                                                                      \
      }                                                                                                    \
    }                                                                                                      \
    return SMX_E_UNSUPPORTED;                                                                              \
  }
#define SMX_OPT_UNPACK(a, b, c, d) a, b, c, d
#define GEN_CASES(C, name, h, t, params, ...) GEN_CASES_(C, name, h, t, params, __VA_ARGS__)
#define GEN_CASES_(C, name, h, t, params, fa, fb, fc, fd)                                                  \
  C(fa, name, f64, h, t, params) C(fb, name, f32, h, t, params) C(fc, name, f16, h, t, params)               \
  C(fd, name, bf16, h, t, params)

/* SMX_DT as a tuple (f64, f32, f16, bf16), the flags each case is kept by. */
#define SMX_DT(a, b, c, d) (a, b, c, d)
/* Only the row classes get a function: GENSIG_0 drops its arguments unexpanded (SIG_<class> exists only
   for the row classes). */
#define SMX_OP(id, name, family, sig, dtypes, bwd_dtypes, params, ...)                                      \
  SMX_OPT_CAT(GENSIG_, ROWS_CLASS(sig))(name, sig, dtypes, bwd_dtypes, params)
#define GENSIG_0(...)
#define GENSIG_1(name, sig, dtypes, bwd_dtypes, params) GEN_SIG(name, SIG_##sig, dtypes, bwd_dtypes, params)
#define GEN_SIG(name, ...) GEN_FN(name, __VA_ARGS__)
/* ROWS_CLASS(sig): 1 for the row classes, 0 for the others; every class of smx_op_sig is listed. */
#define ROWS_CLASS(sig) SMX_OPT_CAT(ROWCLASS_, sig)
#define ROWCLASS_ROWS 1
#define ROWCLASS_ROWS_YBWD 1
#define ROWCLASS_ROWS_LENS 1
#define ROWCLASS_ROWS_PGRAD 1
#define ROWCLASS_LSE 1
#define ROWCLASS_MIXTURE 0
#define ROWCLASS_RNG_ROWS 0
#define ROWCLASS_HARD 0
#define ROWCLASS_TOPK 0
#define ROWCLASS_SAMPLE 0
#define ROWCLASS_XENT 1
#define ROWCLASS_LOSS 0
#define ROWCLASS_KD 0
#define ROWCLASS_SCORE 0
#define ROWCLASS_TEMPLATES 0
#define ROWCLASS_CALIB 0
#define ROWCLASS_FIT 0
#define ROWCLASS_METRICS 0
#define ROWCLASS_ATTENTION 0
#define ROWCLASS_MERGE 0
#define ROWCLASS_TLOSS 1
#include "ops/op_table.def"
#undef SMX_OP

/* The dispatch table: the generated function of each row op, NULL for the others. */
typedef smx_status (*op_call_fn)(const smx_op_call *c, const double *v, const smx_options *o);
#define SMX_OP(id, name, family, sig, ...) SMX_OPT_IF(ROWS_CLASS(sig), [SMX_OPID_##id] = call_##name,)
static const op_call_fn calls[SMX_OPID_COUNT] = {
#include "ops/op_table.def"
};
#undef SMX_OP

/* The most doubles any op takes, at compile time: MAX_VALUES must hold them. */
#define NV(type, ...) +(SMX_PARAM_##type == SMX_PARAM_DOUBLE4 ? 4 : 1)
#define SMX_OP(id, name, family, sig, dtypes, bwd_dtypes, params, ...)                                      \
  _Static_assert(0 params(NV) <= MAX_VALUES, "op_rows.c: MAX_VALUES is too small for " #name);
#include "ops/op_table.def"
#undef SMX_OP
#undef NV

/* v = value, checked against the parameter's type and range. */
static int param_ok(const smx_op_param *p, double v) {
  if (!(v >= p->min && v <= p->max)) return 0; /* NaN fails too */
  switch (p->type) {
  case SMX_PARAM_INT:
  case SMX_PARAM_BOOL:
  case SMX_PARAM_SIZE:
  case SMX_PARAM_U64:
    /* whole numbers only; the range keeps the conversion defined (the table's INT ranges fit an int,
       and SIZE / U64 values above 2^53 are not exact as doubles: refused) */
    return v == floor(v) && v <= 0x1p53;
  default:
    return 1;
  }
}

smx_status smx_op_rows(const smx_op_info *op, const smx_op_call *call, const smx_options *opt) {
  if (!op || !call || op->id >= SMX_OPID_COUNT || !calls[op->id]) return SMX_E_INVALID_ARG;
  const smx_op_info *self;
  /* op must be one of ours (its id's entry), not a copy with other fields */
  if (smx_op_at(op->id, &self) != SMX_OK || self != op) return SMX_E_INVALID_ARG;
  if (call->nparams > op->nvalues || (call->nparams && !call->params)) return SMX_E_INVALID_ARG;
  if (call->lens && op->sig != SMX_SIG_ROWS_LENS) return SMX_E_INVALID_ARG;
  if (call->dparams && !(op->sig == SMX_SIG_ROWS_PGRAD && call->backward)) return SMX_E_INVALID_ARG;
  if ((call->targets || call->grad) && op->sig != SMX_SIG_TLOSS && op->sig != SMX_SIG_XENT) return SMX_E_INVALID_ARG;
  if (call->lse && op->sig != SMX_SIG_XENT) return SMX_E_INVALID_ARG;
  if ((unsigned)call->dtype > SMX_OP_BF16) return SMX_E_INVALID_ARG;
  unsigned have = call->backward ? op->bwd_dtypes : op->dtypes;
  if (!(have & SMX_OP_BIT(call->dtype))) return SMX_E_UNSUPPORTED;
  double v[MAX_VALUES];
  size_t k = 0;
  for (size_t i = 0; i < op->nparams; i++) {
    const smx_op_param *p = &op->params[i];
    size_t n = p->type == SMX_PARAM_DOUBLE4 ? 4 : 1;
    for (size_t j = 0; j < n; j++, k++) {
      double x = k < call->nparams ? call->params[k] : p->def;
      if (!param_ok(p, x)) return SMX_E_INVALID_ARG; /* also a missing one without default (NaN) */
      v[k] = x;
    }
  }
  return calls[op->id](call, v, opt);
}
