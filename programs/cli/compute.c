/* The library call of the row commands (softmax, log-softmax, logsumexp, sigmoid, sparsemax, entmax and
 * the row variants) for a block of rows, by the type computed in: smx_op_rows on the command's row of the op
 * table (include/smx/smx_ops.h), so no operation is named here; see stream.h. */
#include <string.h>

#include "cli/stream.h"

static const smx_op_dtype op_dtype[] = { [CLI_F32] = SMX_OP_F32, [CLI_F64] = SMX_OP_F64, [CLI_F16] = SMX_OP_F16 };

static smx_status op_rows(void *ctx, const void *x, void *const *yv, size_t rows, size_t n, uint64_t row0) {
  const cli_op_ctx *c = ctx;
  (void)row0;
  smx_op_call a = { op_dtype[c->t], 0, rows, n, x, n, NULL, 0, NULL, 0, yv[0], n, c->params, c->nparams, NULL, NULL };
  return smx_op_rows(c->row, &a, &c->opt);
}

/* The command's row: the table's row of that CLI name. sigmoid names two, the plain one and the biased one
 * (a later row with a parameter), which computes a nonzero --bias, as the command always did. The
 * parameters: a double one takes p, a whole-number one k (above 2^53, not exact as a double: 2^53, the same
 * top-k softmax for every row length). No command of this engine has more than one. */
static void find_row(cli_op_ctx *c) {
  size_t count = 0;
  c->row = NULL;
  c->nparams = 0;
  smx_op_count(&count);
  for (size_t i = 0; i < count; i++) {
    const smx_op_info *r;
    if (smx_op_at(i, &r) != SMX_OK || !r->cli || !c->cmd || strcmp(r->cli, c->cmd)) continue;
    if (!c->row || (c->row->nparams == 0 && r->nparams > 0 && c->p != 0.0)) c->row = r;
  }
  if (!c->row || c->row->nparams > 2) return; /* smx_op_rows refuses a NULL row: the run fails, never guesses */
  for (size_t i = 0; i < c->row->nparams; i++)
    c->params[i] = c->row->params[i].type == SMX_PARAM_DOUBLE ? c->p : (double)c->k > 0x1p53 ? 0x1p53 : (double)c->k;
  c->nparams = c->row->nparams;
}

cli_kernel cli_op_kernel(cli_op_ctx *ctx, uint64_t n) {
  find_row(ctx);
  int lse = ctx->row && ctx->row->sig == SMX_SIG_LSE;
  cli_kernel k = { ctx->t, 1, { lse ? 1 : n, 0 }, { CLI_F32, CLI_F32 }, !lse, lse, op_rows, ctx };
  /* float16 logsumexp comes out in float32: the library keeps its range */
  k.vt[0] = lse && ctx->t == CLI_F16 ? CLI_F32 : ctx->t;
  return k;
}
