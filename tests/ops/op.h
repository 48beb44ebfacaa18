/*
 * The operation table of the op test driver: one row per (operation, storage
 * type), each a call adapter over the public API, a long-double reference and
 * the documented bound. The driver (ops_driver.c) runs every row through the
 * same families, lengths, guard pages, thread counts, algorithms and bad
 * arguments, so adding an operation is one row here plus its reference.
 */
#ifndef SMX_TESTS_OPS_OP_H
#define SMX_TESTS_OPS_OP_H

#include <float.h>
#include <stddef.h>
#include <stdint.h>

#include "smx/smx.h"

/* ------------------------------------------------------------ storage types */
typedef enum dtype { DT_F32, DT_F64, DT_F16, DT_BF16 } dtype;

size_t dt_size(dtype d);
const char *dt_name(dtype d);
long double dt_get(dtype d, const void *p, size_t i);       /* exact */
void dt_put(dtype d, void *p, size_t i, long double v);     /* nearest, ties to even */
long double dt_round(dtype d, long double v);               /* v as stored in d */
/* unit roundoff of the arithmetic: f32 for f32/f16/bf16 */
static inline double dt_eps(dtype d) { return d == DT_F64 ? 0x1p-52 : 0x1p-23; }
/* the extra storage rounding: 0 (f32, f64), 2^-11 (f16), 2^-8 (bf16) */
static inline double dt_unit(dtype d) { return d == DT_F16 ? 0x1p-11 : d == DT_BF16 ? 0x1p-8 : 0.0; }
/* smallest normal of the storage type */
static inline double dt_tiny(dtype d) { return d == DT_F64 ? DBL_MIN : d == DT_F16 ? 0x1p-14 : FLT_MIN; }
/* half the smallest subnormal of the storage type */
static inline double dt_half_sub(dtype d) {
  return d == DT_F64 ? 0.0 : d == DT_F16 ? 0x1p-25 : d == DT_BF16 ? 0x1p-134 : 0x1p-150;
}
/* smallest normal of the arithmetic type */
static inline double dt_arith_tiny(dtype d) { return d == DT_F64 ? DBL_MIN : FLT_MIN; }
/* largest finite value of the storage type */
static inline long double dt_max(dtype d) {
  return d == DT_F64 ? DBL_MAX : d == DT_F16 ? 65504.0L : d == DT_BF16 ? 0x1.fep127L : FLT_MAX;
}

/* ------------------------------------------------------------- one call */
typedef enum out_shape {
  OUT_ELEM,    /* one output per input element: rows x cols, leading dimension ld_out */
  OUT_SCALAR,  /* one output per row */
  OUT_TOPK     /* k float values and k int64 indices per row */
} out_shape;

typedef struct op_call {
  const void *in[2];     /* in[0]: logits (or y for a backward pass); in[1]: dy, or NULL */
  size_t ld_in[2];
  void *out;             /* OUT_ELEM: rows x cols; OUT_SCALAR: rows; OUT_TOPK: rows x k floats */
  size_t ld_out;
  int64_t *idx;          /* OUT_TOPK: rows x k */
  const int64_t *targets;/* cross-entropy: rows class indices */
  size_t rows, cols, k;
  const smx_options *opt;
} op_call;

/* ----------------------------------------------------------- references */
#define OPS_KMAX 4

/* One row as the reference sees it: the stored inputs and the row-level state
 * that ref_row computes once (in long double) for ref_at to use per element. */
typedef struct ref_ctx {
  dtype dt;
  const void *in[2];
  size_t n, k;
  int64_t target;
  long double T;         /* the temperature, 1 for 0 */
  uint32_t flags;
  int nan;               /* some input is NaN */
  size_t kinf;           /* entries equal to +inf */
  int masked;            /* no entry above -inf (or n == 0) */
  long double m, logd;   /* max and log sum exp((x - m)/T) */
  long double d, s;      /* backward: <dy, y> and sum(dy) */
  size_t top[OPS_KMAX];  /* top-k: the selected indices, in order */
  long double ex[12];    /* further row state of an op's reference (MultiMax, SA-softmax backward, losses) */
  int any;               /* the documented bound is silent on this row: any output passes */
  size_t row;            /* the row's place in the call: the random stream of the RNG ops (OP_ROW_NOISE) */
} ref_ctx;

long double ref_in(const ref_ctx *c, int which, size_t i);
/* The row facts every reference starts from, of in[0]: a NaN (nan), the count of +inf entries (kinf), the largest
 * finite entry (m, -inf if none) and whether nothing is above -inf (masked) */
void ref_row_facts(ref_ctx *c);
/* max, +inf count, NaN and log-sum-exp state of in[0] over the row */
void ref_softmax_state(ref_ctx *c);

/* ---------------------------------------------------------- the table */
#define OP_ALGOS 0x1u          /* opt->algo selects an algorithm: run all four */
#define OP_SIGNED_ZERO 0x2u    /* an exact zero reference must come out as the same zero */
#define OP_EMPTY_INVALID 0x4u  /* cols == 0 is refused (cross-entropy) */
#define OP_OPTIONAL_OUT 0x8u   /* a NULL output is a documented mode (the loss-only cross-entropy) */
#define OP_SATURATES 0x10u     /* results beyond the range come out as +-the largest finite value */
#define OP_NONNEG 0x20u        /* every output (value) is >= 0 or NaN: probabilities */
#define OP_UNIT_TEMP 0x40u     /* only temperature 1 (0): the families with another one are skipped */
#define OP_NO_TEMP 0x80u       /* the call takes no temperature: the bad-temperature checks do not apply */
#define OP_INV_TEMP 0x100u     /* the adapter passes 1/T as the op's parameter (S-DPO's beta): families whose
                                  1/T is not a finite normal double are skipped */
#define OP_SHORT_ROWS 0x400u   /* an op without chunks or blocks (a row is one task whatever its length, one pass
                                  after another): the families beyond 2^14 (the chunk and window edges of the others)
                                  add nothing but time, and are skipped */
#define OP_ROW_NOISE 0x200u    /* the op draws noise keyed by the row number (Gumbel, noisy softmax): each row of
                                  a rows call has its own reference (ref_ctx.row) */

typedef struct op_row {
  const char *name;
  dtype in_dt, out_dt;   /* out_dt: of the OUT_ELEM / OUT_SCALAR values (top-k values are f32) */
  out_shape shape;
  int n_in;              /* 1, or 2 (y and dy of a backward pass) */
  int inplace;           /* the input the output may be (same leading dimension), -1: none */
  unsigned caps;
  smx_status (*row)(const op_call *c);   /* the one-row form (rows == 1) */
  smx_status (*rows)(const op_call *c);  /* the rows form */
  /* the inputs from a family's row x; NULL: in[0] = x */
  void (*prepare)(const double *x, size_t n, const smx_options *o, dtype dt, void *in0, void *in1);
  void (*ref_row)(ref_ctx *c);
  /* the reference of output i; *aux gets what the bound needs (e.g. t_i) */
  long double (*ref_at)(const ref_ctx *c, size_t i, long double *aux);
  /* the documented bound on |out_i - ref_i|; negative: exact */
  double (*bound)(const ref_ctx *c, dtype out_dt, size_t i, long double ref, long double aux);
} op_row;

extern const op_row op_table[];
extern const size_t op_table_len;

/* k and the cross-entropy target the driver uses for a row of n */
size_t op_k(size_t n);
int64_t op_target(size_t n);

/* references and bounds, one file per family of operations */
void ref_sm_row(ref_ctx *c);
long double ref_softmax_at(const ref_ctx *c, size_t i, long double *aux);
long double ref_log_softmax_at(const ref_ctx *c, size_t i, long double *aux);
long double ref_lse_at(const ref_ctx *c, size_t i, long double *aux);
double bound_softmax(const ref_ctx *c, dtype od, size_t i, long double ref, long double aux);
double bound_log(const ref_ctx *c, dtype od, size_t i, long double ref, long double aux);

void prep_softmax_backward(const double *x, size_t n, const smx_options *o, dtype dt, void *in0, void *in1);
void prep_log_softmax_backward(const double *x, size_t n, const smx_options *o, dtype dt, void *in0, void *in1);
void ref_backward_row(ref_ctx *c);
long double ref_softmax_backward_at(const ref_ctx *c, size_t i, long double *aux);
long double ref_log_softmax_backward_at(const ref_ctx *c, size_t i, long double *aux);
double bound_backward(const ref_ctx *c, dtype od, size_t i, long double ref, long double aux);
double bound_log_backward(const ref_ctx *c, dtype od, size_t i, long double ref, long double aux);

long double ref_xent_loss_at(const ref_ctx *c, size_t i, long double *aux);
double bound_xent_loss(const ref_ctx *c, dtype od, size_t i, long double ref, long double aux);
long double ref_xent_grad_at(const ref_ctx *c, size_t i, long double *aux);
long double ref_xent_ls_loss_at(const ref_ctx *c, size_t i, long double *aux);
long double ref_xent_ls_grad_at(const ref_ctx *c, size_t i, long double *aux);
double bound_xent_ls_grad(const ref_ctx *c, dtype od, size_t i, long double ref, long double aux);
#define OPS_SMOOTHING 0.125L   /* the label smoothing of the xent_ls rows (exact in binary) */
double bound_xent_grad(const ref_ctx *c, dtype od, size_t i, long double ref, long double aux);

void ref_topk_row(ref_ctx *c);
long double ref_softmax_topk_at(const ref_ctx *c, size_t i, long double *aux);
long double ref_log_softmax_topk_at(const ref_ctx *c, size_t i, long double *aux);
double bound_topk(const ref_ctx *c, dtype od, size_t i, long double ref, long double aux);
long double ref_topk_at(const ref_ctx *c, size_t i, long double *aux);
double bound_exact(const ref_ctx *c, dtype od, size_t i, long double ref, long double aux);
double bound_log_topk(const ref_ctx *c, dtype od, size_t i, long double ref, long double aux);

void ref_sigmoid_row(ref_ctx *c);
long double ref_sigmoid_at(const ref_ctx *c, size_t i, long double *aux);
double bound_sigmoid(const ref_ctx *c, dtype od, size_t i, long double ref, long double aux);

/* sparsemax, entmax15, bisection entmax (ref_sparsemax.c, ref_entmax.c) */
long double ref_sparse_rho(const ref_ctx *c, long double x);
void ref_sparse_state(ref_ctx *c, double alpha);
long double ref_sparse_at(const ref_ctx *c, size_t i, long double *aux, double alpha);
void prep_sparse_backward(const double *x, size_t n, dtype dt, void *in0, void *in1, double alpha);
void ref_sparse_backward_row(ref_ctx *c, double alpha);
long double ref_sparse_backward_at(const ref_ctx *c, size_t i, long double *aux, double alpha);
double bound_sparse_backward(const ref_ctx *c, dtype od, size_t i, long double ref, long double aux);
void ref_sparsemax_row(ref_ctx *c);
long double ref_sparsemax_at(const ref_ctx *c, size_t i, long double *aux);
double bound_sparsemax(const ref_ctx *c, dtype od, size_t i, long double ref, long double aux);
void ref_entmax15_row(ref_ctx *c);
long double ref_entmax15_at(const ref_ctx *c, size_t i, long double *aux);
double bound_entmax15(const ref_ctx *c, dtype od, size_t i, long double ref, long double aux);
void prep_sparsemax_backward(const double *x, size_t n, const smx_options *o, dtype dt, void *in0, void *in1);
void ref_sparsemax_backward_row(ref_ctx *c);
long double ref_sparsemax_backward_at(const ref_ctx *c, size_t i, long double *aux);
void prep_entmax15_backward(const double *x, size_t n, const smx_options *o, dtype dt, void *in0, void *in1);
void ref_entmax15_backward_row(ref_ctx *c);
long double ref_entmax15_backward_at(const ref_ctx *c, size_t i, long double *aux);
#define ENTMAX_ALPHA_DECL(tag)                                                                                   \
  void ref_entmax##tag##_row(ref_ctx *c);                                                                        \
  long double ref_entmax##tag##_at(const ref_ctx *c, size_t i, long double *aux);                               \
  double bound_entmax##tag(const ref_ctx *c, dtype od, size_t i, long double ref, long double aux);             \
  void prep_entmax##tag##_backward(const double *x, size_t n, const smx_options *o, dtype dt, void *in0, void *in1); \
  void ref_entmax##tag##_backward_row(ref_ctx *c);                                                               \
  long double ref_entmax##tag##_backward_at(const ref_ctx *c, size_t i, long double *aux);
ENTMAX_ALPHA_DECL(_a15)
ENTMAX_ALPHA_DECL(_a17)
/* the losses (ref_losses.c, adapt_losses.c): reduction NONE, one loss per row, at these parameters */
#define OPS_FOCAL_GAMMA 2.0L
#define OPS_ZLOSS_A 2.0L
#define OPS_ZLOSS_B 0.5L
#define OPS_KD_T 2.0L
#define OPS_FY_ALPHA 1.7L   /* bisection entmax's loss (its bound is entmax_a17's) */
long double ref_loss_at(const ref_ctx *c, size_t i, long double *aux);
double bound_loss(const ref_ctx *c, dtype od, size_t i, long double ref, long double aux);
double bound_loss_grad(const ref_ctx *c, dtype od, size_t i, long double ref, long double aux);
void ref_focal_row(ref_ctx *c);
long double ref_focal_grad_at(const ref_ctx *c, size_t i, long double *aux);
void ref_zloss_row(ref_ctx *c);
long double ref_zloss_grad_at(const ref_ctx *c, size_t i, long double *aux);
double bound_zloss(const ref_ctx *c, dtype od, size_t i, long double ref, long double aux);
void prep_kd(const double *x, size_t n, const smx_options *o, dtype dt, void *in0, void *in1);
void ref_kd_row(ref_ctx *c);
long double ref_kd_grad_at(const ref_ctx *c, size_t i, long double *aux);
double bound_fy_loss(const ref_ctx *c, dtype od, size_t i, long double ref, long double aux);
#define FY_DECL(tag)                                                                                             \
  void ref_fy##tag##_row(ref_ctx *c);                                                                            \
  long double ref_fy##tag##_grad_at(const ref_ctx *c, size_t i, long double *aux);                              \
  double bound_fy##tag##_grad(const ref_ctx *c, dtype od, size_t i, long double ref, long double aux);
FY_DECL(_sparsemax)
FY_DECL(_entmax15)
FY_DECL(_entmax)
#define LOSS_ADAPTER_DECL(name) smx_status a_##name##_loss(const op_call *c); smx_status a_##name##_grad(const op_call *c);
LOSS_ADAPTER_DECL(focal_f32) LOSS_ADAPTER_DECL(focal_f64) LOSS_ADAPTER_DECL(zloss_f32) LOSS_ADAPTER_DECL(zloss_f64)
LOSS_ADAPTER_DECL(kd_f32) LOSS_ADAPTER_DECL(kd_f64) LOSS_ADAPTER_DECL(sparsemax_f32) LOSS_ADAPTER_DECL(sparsemax_f64)
LOSS_ADAPTER_DECL(entmax15_f32) LOSS_ADAPTER_DECL(entmax15_f64) LOSS_ADAPTER_DECL(entmax_f32)
LOSS_ADAPTER_DECL(entmax_f64)
/* InfoNCE, one-sided, at the family's temperature (ref_losses.c) */
void ref_info_nce_row(ref_ctx *c);
long double ref_info_nce_grad_at(const ref_ctx *c, size_t i, long double *aux);
LOSS_ADAPTER_DECL(info_nce_f32) LOSS_ADAPTER_DECL(info_nce_f64)
/* S-DPO through the generic entry smx_op_rows (TLOSS), beta = 1 / the family's T: the cross-entropy's
 * special rows and bounds (ref_grad.c) at that T, ordinary rows against -log sigmoid(-log sum) */
void ref_sdpo_row(ref_ctx *c);
long double ref_sdpo_loss_at(const ref_ctx *c, size_t i, long double *aux);
long double ref_sdpo_grad_at(const ref_ctx *c, size_t i, long double *aux);
#define SDPO_DECL(sfx) smx_status a_sdpo_loss_##sfx(const op_call *c); smx_status a_sdpo_grad_##sfx(const op_call *c);
SDPO_DECL(f64) SDPO_DECL(f32) SDPO_DECL(f16) SDPO_DECL(bf16)
smx_status a_sparsemax_sort_f32(const op_call *c);
smx_status a_sparsemax_sort_f64(const op_call *c);

/* the row variants (ref_vnorm.c) */
#define VN_SOFTPICK_EPS 1e-6L
void prep_vn_backward(const double *x, size_t n, const smx_options *o, dtype dt, void *in0, void *in1);
double bound_vn_8(const ref_ctx *c, dtype od, size_t i, long double ref, long double aux);
void ref_softpick_row(ref_ctx *c);
long double ref_softpick_at(const ref_ctx *c, size_t i, long double *aux);
long double ref_softpick_backward_at(const ref_ctx *c, size_t i, long double *aux);
#define VN_SSMAX_S 0.7L
#define VN_STD_T 2.0L
#define VN_TOPK_K 3
#define VN_SIGMOID_BIAS (-2.5L)
double bound_vn_beta(const ref_ctx *c, dtype od, size_t i, long double ref, long double aux);
double bound_vn_sa(const ref_ctx *c, dtype od, size_t i, long double ref, long double aux);
void ref_sa_backward_row(ref_ctx *c);
void ref_sa_norm_backward_row(ref_ctx *c);
long double ref_sa_backward_at(const ref_ctx *c, size_t i, long double *aux);
double bound_vn_sa_backward(const ref_ctx *c, dtype od, size_t i, long double ref, long double aux);
double bound_vn_4(const ref_ctx *c, dtype od, size_t i, long double ref, long double aux);
double bound_vn_topk(const ref_ctx *c, dtype od, size_t i, long double ref, long double aux);
double bound_vn_sigmoid(const ref_ctx *c, dtype od, size_t i, long double ref, long double aux);
double bound_vn_abs4(const ref_ctx *c, dtype od, size_t i, long double ref, long double aux);
void ref_ssmax_row(ref_ctx *c);
long double ref_ssmax_at(const ref_ctx *c, size_t i, long double *aux);
void ref_ssmax_backward_row(ref_ctx *c);
void ref_unit_backward_row(ref_ctx *c);
void prep_sm_backward(const double *x, size_t n, const smx_options *o, dtype dt, void *in0, void *in1);
void ref_adaptive_row(ref_ctx *c);
void ref_std_row(ref_ctx *c);
void ref_sa_row(ref_ctx *c);
void ref_sa_norm_row(ref_ctx *c);
long double ref_sa_at(const ref_ctx *c, size_t i, long double *aux);
void ref_topk_softmax_row(ref_ctx *c);
long double ref_topk_softmax_at(const ref_ctx *c, size_t i, long double *aux);
void ref_vn_none_row(ref_ctx *c);
long double ref_sigmoid_bias_at(const ref_ctx *c, size_t i, long double *aux);
void prep_sigmoid_backward(const double *x, size_t n, const smx_options *o, dtype dt, void *in0, void *in1);
long double ref_sigmoid_backward_at(const ref_ctx *c, size_t i, long double *aux);
void ref_softplus_l1_row(ref_ctx *c);
long double ref_softplus_l1_at(const ref_ctx *c, size_t i, long double *aux);
long double ref_softplus_l1_backward_at(const ref_ctx *c, size_t i, long double *aux);

/* the RNG ops (ref_rng.c, adapt_rng.c): Gumbel-softmax (soft, hard, backward) at tau = the family's
 * temperature, and Noisy Softmax (ANNEALED, norms |x_t| + 1), each keyed by these */
#define OPS_RNG_SEED 0x5eedf00dcafe1234ull
#define OPS_RNG_STEP 7u
#define OPS_NOISY_ALPHA 0.5
void ref_gumbel_row(ref_ctx *c);
long double ref_gumbel_at(const ref_ctx *c, size_t i, long double *aux);
void ref_gumbel_hard_row(ref_ctx *c);
long double ref_gumbel_hard_at(const ref_ctx *c, size_t i, long double *aux);
void ref_noisy_row(ref_ctx *c);
long double ref_noisy_grad_at(const ref_ctx *c, size_t i, long double *aux);
#define RNG_ADAPTER_DECL(sfx)                                                                                    \
  smx_status a_gumbel_##sfx(const op_call *c); smx_status a_gumbel_hard_##sfx(const op_call *c);                 \
  smx_status a_gumbel_backward_##sfx(const op_call *c);
RNG_ADAPTER_DECL(f32) RNG_ADAPTER_DECL(f16) RNG_ADAPTER_DECL(bf16)
LOSS_ADAPTER_DECL(noisy_f32) LOSS_ADAPTER_DECL(noisy_f64)
/* the mixture of softmaxes at K = 2 (ref_rng.c, adapt_rng.c): components x and x reversed, log-weights */
#define OPS_MIX_W0 0.25
#define OPS_MIX_W1 (-1.5)
void prep_mixture(const double *x, size_t n, const smx_options *o, dtype dt, void *in0, void *in1);
void ref_mixture_row(ref_ctx *c);
long double ref_mixture_at(const ref_ctx *c, size_t i, long double *aux);
double bound_mixture(const ref_ctx *c, dtype od, size_t i, long double ref, long double aux);
smx_status a_mixture_f32(const op_call *c);
smx_status a_mixture_f64(const op_call *c);
/* its backward at K = 2 (in[0]: component 0, component 1 reversed; in[1]: dy): dx of each component and dw */
void ref_mixture_backward_row(ref_ctx *c);
long double ref_mixture_dx0_at(const ref_ctx *c, size_t i, long double *aux);
long double ref_mixture_dw1_at(const ref_ctx *c, size_t i, long double *aux);
double bound_mixture_backward(const ref_ctx *c, dtype od, size_t i, long double ref, long double aux);
#define MIX_BWD_DECL(sfx) smx_status a_mixture_dx0_##sfx(const op_call *c); smx_status a_mixture_dw1_##sfx(const op_call *c);
MIX_BWD_DECL(f32) MIX_BWD_DECL(f64)

/* sampling (ref_sample.c, adapt_sample.c), keyed as the RNG ops, T = the family's temperature: plain
 * multinomial, nucleus (top-p then min-p, multinomial), top-k then top-p with Gumbel-max, Gumbel-max, greedy.
 * The token comes out as a double (out_dt DT_F64). */
#define OPS_SAMPLE_TOP_K 7
#define OPS_SAMPLE_TOP_P 0.9
#define OPS_SAMPLE_MIN_P 0.05
long double ref_sample_at(const ref_ctx *c, size_t i, long double *aux);
double bound_sample(const ref_ctx *c, dtype od, size_t i, long double ref, long double aux);
#define SAMPLE_DECL(cfg)                                                                                         \
  void ref_sample##cfg##_row(ref_ctx *c);                                                                        \
  smx_status a_sample##cfg##_f32(const op_call *c); smx_status a_sample##cfg##_f64(const op_call *c);
#define SAMPLE_DECL_HALF(cfg) smx_status a_sample##cfg##_f16(const op_call *c); smx_status a_sample##cfg##_bf16(const op_call *c);
SAMPLE_DECL() SAMPLE_DECL(_topk_gumbel) SAMPLE_DECL(_gumbel) SAMPLE_DECL(_greedy)
SAMPLE_DECL_HALF() SAMPLE_DECL_HALF(_topk_gumbel) smx_status a_sample_greedy_f16(const op_call *c);
void ref_sample_nucleus_row(ref_ctx *c); smx_status a_sample_nucleus_f32(const op_call *c);

/* MultiMax at fixed parameters (ref_multimax.c) */
#define MM_R0 (-1.0L)
#define MM_R1 2.0L
#define MM_R2 0.5L
#define MM_R3 1.0L
#define MM_T0 0.5L
#define MM_T1 (-0.25L)
#define MM_T2 0.0L
#define MM_T3 0.0L
void ref_multimax_row(ref_ctx *c);
long double ref_multimax_at(const ref_ctx *c, size_t i, long double *aux);
double bound_multimax(const ref_ctx *c, dtype od, size_t i, long double ref, long double aux);
long double ref_multimax_backward_at(const ref_ctx *c, size_t i, long double *aux);
double bound_multimax_backward(const ref_ctx *c, dtype od, size_t i, long double ref, long double aux);

#endif
