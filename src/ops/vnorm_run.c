/* The shared engine call of the row variants (see vnorm_run.h). */
#include "ops/vnorm_run.h"

#include "core/grid.h"
#include "core/operands.h"
#include "core/options.h"

typedef struct vn_job {
  const smx_vn_op *op;
  smx_elem_io io;
  size_t es;
} vn_job;

static void vn_rows(void *ctx, size_t r0, size_t r1, void *scratch) {
  const vn_job *j = ctx;
  const smx_vn_op *op = j->op;
  size_t n = op->cols;
  for (size_t r = r0; r < r1; r++) {
    const char *in[SMX_VN_IN];
    for (int k = 0; k < SMX_VN_IN; k++)
      in[k] = op->in[k] ? (const char *)op->in[k] + r * op->ld_in[k] * j->es : NULL;
    char *out = (char *)op->out + r * op->ld_out * j->es;
    if (op->elem == SMX_ELEM_F64) {
      const double *a[SMX_VN_IN] = { (const double *)(const void *)in[0], (const double *)(const void *)in[1],
                                     (const double *)(const void *)in[2] };
      op->row64(op->ctx, r, a, (double *)(void *)out, n, scratch);
    } else if (op->elem == SMX_ELEM_F32) {
      const float *a[SMX_VN_IN] = { (const float *)(const void *)in[0], (const float *)(const void *)in[1],
                                    (const float *)(const void *)in[2] };
      op->row32(op->ctx, r, a, (float *)(void *)out, n, scratch);
    } else {
      /* half rows: every input and the output in f32 scratch, then the op's own scratch */
      float *buf = scratch;
      const float *a[SMX_VN_IN] = { NULL, NULL, NULL };
      for (int k = 0; k < SMX_VN_IN; k++) {
        if (!in[k]) continue;
        j->io.load(n, in[k], buf + (size_t)k * n);
        a[k] = buf + (size_t)k * n;
      }
      float *o = buf + SMX_VN_IN * n;
      op->row32(op->ctx, r, a, o, n, o + n);
      j->io.store(n, o, out);
    }
  }
}

smx_status smx_vn_run(const smx_vn_op *op, const smx_options *opt) {
  smx_resolved_options o;
  smx_status st = smx_resolve_options(opt, &o);
  if (st != SMX_OK) return st;
  for (int k = 0; k < SMX_VN_IN; k++)
    if (op->in[k] && op->ld_in[k] < op->cols) return SMX_E_INVALID_ARG;
  if (op->ld_out < op->cols) return SMX_E_INVALID_ARG;
  if (op->rows == 0 || op->cols == 0) return SMX_OK;
  if (!op->out) return SMX_E_INVALID_ARG;
  size_t es = smx_elem_size(op->elem);
  smx_arg args[SMX_VN_IN + 1];
  for (int k = 0; k < SMX_VN_IN; k++) {
    smx_arg a = SMX_ARG_IN(op->in[k], op->rows, op->cols, op->ld_in[k], es);
    args[k] = a;
  }
  smx_arg out = SMX_ARG_OUT(op->out, op->rows, op->cols, op->ld_out, es, op->alias);
  args[SMX_VN_IN] = out;
  if ((st = smx_check_args(args, SMX_VN_IN + 1)) != SMX_OK) return st;

  size_t per_row = op->scratch_rows, width = op->elem == SMX_ELEM_F64 ? sizeof(double) : sizeof(float);
  if (op->elem == SMX_ELEM_F16 || op->elem == SMX_ELEM_BF16) per_row += SMX_VN_IN + 1;
  size_t scratch = 0;
  if (per_row) {
    scratch = smx_mul(per_row * width, op->cols, (size_t)-1 / 2);
    if (!scratch) return SMX_E_NOMEM;
  }
  vn_job j = { .op = op, .io = smx_elem_io_for(op->elem == SMX_ELEM_F64 ? SMX_ELEM_F32 : op->elem), .es = es };
  smx_plan plan = smx_plan_rows(o.threads, op->rows, op->cols, 0);
  return smx_grid_rows(plan.row_threads, op->rows, scratch, vn_rows, &j);
}

int smx_vn_stream_out(smx_elem e, size_t rows, size_t cols) {
  if (e != SMX_ELEM_F32 || !rows || !cols) return 0;
  return cols >= SMX_VN_STREAM_BYTES / sizeof(float) / rows;
}
