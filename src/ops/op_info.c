/*
 * The run-time descriptors of include/smx/smx_ops.h, expanded from the op table (op_table.def): one
 * parameter array and one smx_op_info per line, so that nothing here names an operation.
 */
#include <float.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "ops/op_table.h"
#include "smx/smx.h"

#define SMX_DT(f64, f32, f16, bf16)                                                                        \
  ((f64) * SMX_OP_BIT(SMX_OP_F64) | (f32) * SMX_OP_BIT(SMX_OP_F32) | (f16) * SMX_OP_BIT(SMX_OP_F16) |      \
   (bf16) * SMX_OP_BIT(SMX_OP_BF16))

/* Each op's parameters, closed by an entry of name NULL (so that no array is empty, which C forbids). */
#define P(type, pname, def, lo, hi, doc) { SMX_PARAM_##type, #pname, def, lo, hi, doc },
#define SMX_OP(id, name, family, sig, dtypes, bwd_dtypes, params, ...)                                      \
  static const smx_op_param params_##name[] = { params(P){ SMX_PARAM_DOUBLE, NULL, 0.0, 0.0, 0.0, NULL } };
#include "ops/op_table.def"
#undef SMX_OP
#undef P

/* The doubles a parameter list takes in smx_op_rows: a DOUBLE4 is four. */
#define NV(type, ...) +(SMX_PARAM_##type == SMX_PARAM_DOUBLE4 ? 4 : 1)
#define SMX_OP(id, name, family, sig, dtypes, bwd_dtypes, params, bound, special, paper, cli, py)           \
  { SMX_OPID_##id, #name, SMX_FAMILY_##family, SMX_SIG_##sig, dtypes, bwd_dtypes,                        \
    sizeof params_##name / sizeof params_##name[0] - 1, params_##name, (size_t)(0 params(NV)), bound, special, \
    paper, cli, py },
static const smx_op_info ops[SMX_OPID_COUNT] = {
#include "ops/op_table.def"
};
#undef SMX_OP
#undef NV

const char *smx_op_family_name(smx_op_family f) {
  static const char *const n[] = { "NORM", "ELEM", "SPARSE", "LM", "LOSS", "SCORE", "ATTENTION" };
  return (unsigned)f < sizeof n / sizeof n[0] ? n[f] : "?";
}

const char *smx_op_sig_name(smx_op_sig s) {
  static const char *const n[] = { "ROWS", "ROWS_YBWD", "ROWS_LENS", "ROWS_PGRAD", "LSE", "MIXTURE",
                                   "RNG_ROWS", "HARD", "TOPK", "SAMPLE", "XENT", "LOSS", "KD", "SCORE",
                                   "TEMPLATES", "CALIB", "FIT", "METRICS", "ATTENTION", "MERGE", "TLOSS" };
  return (unsigned)s < sizeof n / sizeof n[0] ? n[s] : "?";
}

const char *smx_param_type_name(smx_param_type t) {
  static const char *const n[] = { "double", "double[4]", "int", "bool", "size_t", "uint64" };
  return (unsigned)t < sizeof n / sizeof n[0] ? n[t] : "?";
}

const char *smx_op_dtype_name(smx_op_dtype dt) {
  static const char *const n[] = { "f64", "f32", "f16", "bf16" };
  return (unsigned)dt < sizeof n / sizeof n[0] ? n[dt] : "?";
}

smx_status smx_op_count(size_t *count) {
  if (!count) return SMX_E_INVALID_ARG;
  *count = SMX_OPID_COUNT;
  return SMX_OK;
}

smx_status smx_op_at(size_t i, const smx_op_info **op) {
  if (!op) return SMX_E_INVALID_ARG;
  *op = i < SMX_OPID_COUNT ? &ops[i] : NULL;
  return *op ? SMX_OK : SMX_E_INVALID_ARG;
}

smx_status smx_op_find(const char *name, const smx_op_info **op) {
  if (!op) return SMX_E_INVALID_ARG;
  *op = NULL;
  if (!name) return SMX_E_INVALID_ARG;
  /* a linear scan: a few dozen short names, and callers look an op up once per call site */
  for (size_t i = 0; i < SMX_OPID_COUNT; i++)
    if (!strcmp(ops[i].name, name)) {
      *op = &ops[i];
      return SMX_OK;
    }
  return SMX_E_INVALID_ARG;
}

smx_status smx_op_symbol(const smx_op_info *op, smx_op_dtype dtype, int backward, char *buf, size_t size) {
  if (!buf || !size) return SMX_E_INVALID_ARG;
  buf[0] = '\0';
  if (!op || (unsigned)dtype > SMX_OP_BF16) return SMX_E_INVALID_ARG;
  if (!((backward ? op->bwd_dtypes : op->dtypes) & SMX_OP_BIT(dtype))) return SMX_E_INVALID_ARG;
  /* the classes whose entry points are smx_<name>_rows_<dt>; the others are smx_<name>_<dt>, except
     attention's plan API (the storage type in the descriptor) */
  static const unsigned char rows_form[] = {
    [SMX_SIG_ROWS] = 1, [SMX_SIG_ROWS_YBWD] = 1, [SMX_SIG_ROWS_LENS] = 1, [SMX_SIG_ROWS_PGRAD] = 1,
    [SMX_SIG_LSE] = 1, [SMX_SIG_MIXTURE] = 1, [SMX_SIG_RNG_ROWS] = 1, [SMX_SIG_HARD] = 1, [SMX_SIG_TOPK] = 1,
    [SMX_SIG_SAMPLE] = 1, [SMX_SIG_SCORE] = 1, [SMX_SIG_CALIB] = 1, [SMX_SIG_MERGE] = 0,
  };
  int n;
  if (op->sig == SMX_SIG_ATTENTION || op->sig == SMX_SIG_MERGE)
    n = snprintf(buf, size, "smx_%s", op->sig == SMX_SIG_ATTENTION ? "attention_run" : op->name);
  else
    n = snprintf(buf, size, "smx_%s%s%s_%s", op->name, backward ? "_backward" : "",
                 (unsigned)op->sig < sizeof rows_form && rows_form[op->sig] ? "_rows" : "",
                 smx_op_dtype_name(dtype));
  if (n < 0 || (size_t)n >= size) {
    buf[0] = '\0';
    return SMX_E_INVALID_ARG;
  }
  return SMX_OK;
}
