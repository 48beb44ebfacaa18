/* The library call of the row commands (softmax, log-softmax, logsumexp, sigmoid, sparsemax, entmax, multimax
 * and the row variants) for a block of rows, by the type computed in: smx_op_rows on the command's row of the
 * op table (include/smx/smx_ops.h), so no operation is named here; see stream.h. */
#include <string.h>

#include "cli/stream.h"

static const smx_op_dtype op_dtype[] = { [CLI_F32] = SMX_OP_F32, [CLI_F64] = SMX_OP_F64, [CLI_F16] = SMX_OP_F16 };

static smx_status op_rows(void *ctx, const void *x, void *const *yv, size_t rows, size_t n, uint64_t row0) {
  const cli_op_ctx *c = ctx;
  (void)row0;
  smx_op_call a = { op_dtype[c->t], 0, rows, n, x, n, NULL, 0, NULL, 0, yv[0], n, c->params, c->nparams, NULL, NULL, NULL, NULL, 0, NULL };
  return smx_op_rows(c->row, &a, &c->opt);
}

/* The command's row: of the table's rows of that CLI name, the one with the most parameters, unless every
 * value is its default and a row without parameters exists: sigmoid names two, the plain one and the biased
 * one, which computes a nonzero --bias, as the command always did. */
static void find_row(cli_op_ctx *c) {
  size_t count = 0;
  const smx_op_info *full = NULL, *plain = NULL;
  smx_op_count(&count);
  for (size_t i = 0; i < count; i++) {
    const smx_op_info *r;
    if (smx_op_at(i, &r) != SMX_OK || !r->cli || !c->cmd || strcmp(r->cli, c->cmd)) continue;
    if (!full || r->nparams > full->nparams) full = r;
    if (!r->nparams) plain = r;
  }
  int defaults = 1;
  for (size_t i = 0, at = 0; full && i < full->nparams; i++)
    for (int k = 0; k < (full->params[i].type == SMX_PARAM_DOUBLE4 ? 4 : 1); k++)
      defaults &= c->params[at++] == full->params[i].def;
  c->row = plain && defaults ? plain : full;   /* smx_op_rows refuses a NULL row: the run fails, never guesses */
  c->nparams = c->row ? c->row->nvalues : 0;
}

cli_kernel cli_op_kernel(cli_op_ctx *ctx, uint64_t n) {
  find_row(ctx);
  int lse = ctx->row && ctx->row->sig == SMX_SIG_LSE;
  cli_kernel k = { ctx->t, 1, { lse ? 1 : n, 0 }, { CLI_F32, CLI_F32 }, !lse, lse, op_rows, ctx };
  /* float16 logsumexp comes out in float32: the library keeps its range */
  k.vt[0] = lse && ctx->t == CLI_F16 ? CLI_F32 : ctx->t;
  return k;
}
