/*
 * smx ops: which operations the library has, as data (the op table, src/ops/op_table.def,
 * docs/architecture.md), and one generic entry for the row operations. Front ends ask here for the
 * names, dtypes, parameters (type, default, range), bounds and papers instead of listing operations
 * themselves; `smx ops` prints the table and docs/ops.md is generated from it. Included by smx/smx.h.
 */
#ifndef SMX_SMX_OPS_H
#define SMX_SMX_OPS_H

#include <stddef.h>
#include <stdint.h>

#include "smx/smx.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Storage types; an operation's dtypes are a bit set of SMX_OP_BIT(dtype). */
typedef enum smx_op_dtype { SMX_OP_F64 = 0, SMX_OP_F32 = 1, SMX_OP_F16 = 2, SMX_OP_BF16 = 3 } smx_op_dtype;
#define SMX_OP_BIT(dt) (1u << (unsigned)(dt))

typedef enum smx_op_family {
  SMX_FAMILY_NORM, SMX_FAMILY_ELEM, SMX_FAMILY_SPARSE, SMX_FAMILY_LM, SMX_FAMILY_LOSS, SMX_FAMILY_SCORE,
  SMX_FAMILY_ATTENTION
} smx_op_family;

/* The signature class: the C argument list (P... = the parameters, in the table's order) and shape rule. */
typedef enum smx_op_sig {
  SMX_SIG_ROWS,       /* (x, ldx, y, ldy, rows, cols, P..., opt): y rows x cols; backward
                         (x, ldx, y, ldy, dy, lddy, dx, lddx, rows, cols, P..., opt)                   */
  SMX_SIG_ROWS_YBWD,  /* forward as ROWS; backward (y, ldy, dy, lddy, dx, lddx, rows, cols, opt)       */
  SMX_SIG_ROWS_LENS,  /* as ROWS, with const int64_t *lens (NULL: cols) after P, both directions       */
  SMX_SIG_ROWS_PGRAD, /* as ROWS; backward adds double *dparams (NULL, or one per parameter value)     */
  SMX_SIG_LSE,        /* (x, ldx, out, rows, cols, opt): one value per row (f16 / bf16 rows: float)    */
  SMX_SIG_MIXTURE,    /* (x, ldx, w, ldw, y, ldy, rows, k, cols, opt): rows*k component rows -> rows   */
  SMX_SIG_RNG_ROWS,   /* as ROWS with seeded noise; backward (y, ldy, dy, lddy, dx, lddx, rows, cols,
                         P0, opt)                                                                      */
  SMX_SIG_HARD,       /* (x, ldx, y_hard, ldh, y_soft, lds, rows, cols, P..., opt)                     */
  SMX_SIG_TOPK,       /* (x, ldx, values, indices, rows, cols, P..., opt): k per row                   */
  SMX_SIG_SAMPLE,     /* (x, ldx, tokens, rows, cols, &params, seed, step, opt): one token per row     */
  SMX_SIG_XENT,       /* (logits, ld, targets, loss, grad, ldg, lse, rows, cols, opt)                  */
  SMX_SIG_LOSS,       /* (logits, ld, targets, [inputs], loss, grad, ldg[, outputs], rows, cols, P..., opt):
                         int64 class targets; loss per row or reduced; gradient in the same call       */
  SMX_SIG_KD,         /* (student, lds, teacher, ldt, loss, grad, ldg, rows, cols, P..., opt)           */
  SMX_SIG_SCORE,      /* (x, ldx, out, rows, cols, P0 kind, &score_params, opt): one double per row    */
  SMX_SIG_TEMPLATES,  /* (x, ldx, templates, used, rows, cols, opt): a cols x cols matrix              */
  SMX_SIG_CALIB,      /* (x, ldx, labels, results, bins_out, rows, cols, P..., opt): int64 labels;
                         figures over all rows at T = opt->temperature                                 */
  SMX_SIG_FIT,        /* (x, ldx, labels, &T, info, rows, cols, opt): int64 labels; a fitted temperature */
  SMX_SIG_METRICS,    /* (id, ood, results, n_id, n_ood, P..., opt): figures of two score arrays       */
  SMX_SIG_ATTENTION,  /* plan (smx_attention_desc, the storage type in it) + run (Q, K, V -> O, lse)     */
  SMX_SIG_MERGE,      /* (n, o[], lse[], rows, dv, ldo, out, ld_out, lse_out)                          */
  SMX_SIG_TLOSS       /* (logits, ld, targets, loss, grad, ldg, rows, cols, P..., opt): a loss with int64
                         class targets and nothing else, its gradient (NULL: none) in the same call; loss
                         double for f64 logits, float otherwise; grad of the logits' type              */
} smx_op_sig;

typedef enum smx_param_type {
  SMX_PARAM_DOUBLE, SMX_PARAM_DOUBLE4, /* four doubles (const double v[4]); min and max bound each  */
  SMX_PARAM_INT, SMX_PARAM_BOOL,       /* int; BOOL: 0 or nonzero                                   */
  SMX_PARAM_SIZE, SMX_PARAM_U64        /* size_t, uint64_t (as doubles: exact up to 2^53)           */
} smx_param_type;

typedef struct smx_op_param {
  smx_param_type type;
  const char *name;    /* the C parameter's name, also the Python keyword and the CLI's --name           */
  double def;          /* the default; NaN: none (the caller must give it)                               */
  double min, max;     /* the valid range, inclusive ("> 0" is DBL_TRUE_MIN, "> 1" is 1 + DBL_EPSILON)   */
  const char *doc;     /* one line                                                                       */
} smx_op_param;

typedef struct smx_op_info {
  unsigned id;              /* the place in the table: smx_op_at(id) is this op (not stable across versions) */
  const char *name;         /* the C stem: smx_<name>_rows_<dtype>                                     */
  smx_op_family family;
  smx_op_sig sig;
  unsigned dtypes;          /* SMX_OP_BIT(...) of the forward entry points                               */
  unsigned bwd_dtypes;      /* of smx_<name>_backward_rows_<dtype>; 0: no backward entry                 */
  size_t nparams;
  const smx_op_param *params;
  size_t nvalues;           /* doubles the parameters take in smx_op_rows (a DOUBLE4 takes 4)            */
  const char *bound;        /* the accuracy bound, as the header states it (shortened)                   */
  const char *special;      /* the special-value rule (NaN, -inf, +inf, empty rows)                      */
  const char *paper;        /* or NULL                                                                   */
  const char *cli;          /* the smx command computing it (with the option selecting it), or NULL      */
  const char *py;           /* the Python function, smx.<py>, or NULL                                    */
} smx_op_info;

/* Names of the enums above ("NORM", "ROWS", "double", "f32", ...); "?" for other values. */
SMX_API const char *smx_op_family_name(smx_op_family f);
SMX_API const char *smx_op_sig_name(smx_op_sig s);
SMX_API const char *smx_param_type_name(smx_param_type t);
SMX_API const char *smx_op_dtype_name(smx_op_dtype dt);

/*
 * The name of the op's C entry point for dtype (backward: its backward entry), e.g. "smx_softmax_rows_f16",
 * "smx_focal_loss_f64" (the class decides the form), into buf (size bytes, NUL included). Attention, whose
 * storage type is in its plan, gives "smx_attention_run" for each of its dtypes. SMX_E_INVALID_ARG for NULL
 * arguments, a dtype or direction the op has no entry for, or a buf too small (then buf holds "").
 */
SMX_API smx_status smx_op_symbol(const smx_op_info *op, smx_op_dtype dtype, int backward, char *buf, size_t size);

/** *count = the number of operations. SMX_E_INVALID_ARG if count is NULL. */
SMX_API smx_status smx_op_count(size_t *count);
/** *op = operation i (0 <= i < count), else SMX_E_INVALID_ARG (and *op = NULL when op is not NULL). */
SMX_API smx_status smx_op_at(size_t i, const smx_op_info **op);
/** *op = the operation whose C stem is name ("softmax", "sa_softmax", ...), else SMX_E_INVALID_ARG. */
SMX_API smx_status smx_op_find(const char *name, const smx_op_info **op);

/*
 * One call of a row operation (sig ROWS, ROWS_YBWD, ROWS_LENS, ROWS_PGRAD, LSE, TLOSS or XENT): exactly the
 * call of smx_<name>_rows_<dtype> (backward: smx_<name>_backward_rows_<dtype>; TLOSS and XENT:
 * smx_<name>_<dtype>, whose gradient is part of the forward call) with these arguments, so the same results,
 * bit for bit, and the same checks. The pointers are of the dtype's element type (f16 / bf16: uint16_t bit
 * patterns; LSE, TLOSS and XENT write double for f64 rows, float otherwise, into out and lse).
 */
typedef struct smx_op_call {
  smx_op_dtype dtype;
  int backward;            /* 0: forward; nonzero: the backward entry (vector-Jacobian product)          */
  size_t rows, cols;
  const void *x;  size_t ldx;   /* the input; backward: the forward's input (NULL where not read)      */
  const void *y;  size_t ldy;   /* backward: the forward's output                                      */
  const void *dy; size_t lddy;  /* backward: the upstream gradient                                     */
  void *out;      size_t ldo;   /* y, or dx (backward), or one value per row (LSE; ldo unused)         */
  const double *params;    /* nvalues doubles in the table's order, or fewer: the rest take their defaults */
  size_t nparams;          /* how many doubles params holds (0: all defaults; params may then be NULL)   */
  const int64_t *lens;     /* ROWS_LENS: one count per row, or NULL; must be NULL for the other classes */
  double *dparams;         /* ROWS_PGRAD backward: NULL, or nvalues doubles for the parameters' gradient */
  const int64_t *targets;  /* TLOSS, XENT: one class index per row (or the options' ignore_index); else NULL */
  void *grad;     size_t ldg;   /* TLOSS, XENT: the gradient (rows x cols, the logits' type) or NULL     */
  void *lse;               /* XENT: the log-sum-exp per row (out's type) or NULL; else NULL             */
} smx_op_call;

/*
 * SMX_E_INVALID_ARG, nothing written, for: a NULL op or call; an op not from smx_op_at / smx_op_find (a
 * copy); an op of another signature class; nparams
 * above op->nvalues; a missing parameter without default; a parameter outside [min, max] or NaN, or not a
 * whole number for INT, BOOL and SIZE; lens, dparams, targets, grad or lse given where the class takes none.
 * SMX_E_UNSUPPORTED for a dtype (or backward) the op has no entry for. Then the entry's own checks.
 */
SMX_API smx_status smx_op_rows(const smx_op_info *op, const smx_op_call *call, const smx_options *opt);

#ifdef __cplusplus
}
#endif
#endif /* SMX_SMX_OPS_H */
