/*
 * f16 / bf16 rows through the engine's half-precision adaptor (core/elem.h):
 * converted to float block by block into a buffer on the stack, reduced with
 * the online normalizer (one read of x, whatever opt->algo says: it is the
 * only algorithm whose first pass needs no second look at the row), then
 * converted again and written block by block. The arithmetic is the f32 kernels'; the outputs are
 * rounded once to the storage type.
 */
#include <math.h>

#include "ops/softmax_row_half.h"
#include "math/reduce_state.h"

static void write_special(const smx_row_params *p, const smx_elem_io *io, const uint16_t *x, uint16_t *y,
                          size_t n, float *lse, float *a, float *b) {
  smx_row_summary s = { 0, 0, 0 };
  for (size_t i = 0; i < n; i += SMX_HALF_BLOCK) {
    size_t len = n - i < SMX_HALF_BLOCK ? n - i : SMX_HALF_BLOCK;
    io->load(len, x + i, a);
    smx_policy_scan(a, len, &s);
  }
  if (!smx_policy_is_special(&s)) s.has_nan = 1;   /* unreachable: a non-finite state comes from a special row */
  if (p->op == SMX_OP_LOGSUMEXP) { *lse = (float)p->pol->reduce(&s, p->flags); return; }
  for (size_t i = 0; i < n; i += SMX_HALF_BLOCK) {
    size_t len = n - i < SMX_HALF_BLOCK ? n - i : SMX_HALF_BLOCK;
    io->load(len, x + i, a);
    for (size_t k = 0; k < len; k++) b[k] = (float)p->pol->value(&s, p->flags, a[k]);
    io->store(len, b, y + i);
  }
}

void smx_row_half(const smx_row_params *p, smx_elem elem, const uint16_t *x, uint16_t *y, size_t n, float *lse) {
  const smx_f32_ukernels *k = p->k;
  smx_elem_io io = smx_elem_io_for(elem);
  float a[SMX_HALF_BLOCK], b[SMX_HALF_BLOCK];

  smx_online_state st = smx_online_identity();
  for (size_t i = 0; i < n; i += SMX_HALF_BLOCK) {
    size_t len = n - i < SMX_HALF_BLOCK ? n - i : SMX_HALF_BLOCK;
    io.load(len, x + i, a);
    st = smx_online_merge(st, k->ronline(len, a, &p->c), p->c.c);
  }
  if (!(st.d > 0.0 && st.d < INFINITY && st.m > -INFINITY && st.m < INFINITY)) {
    write_special(p, &io, x, y, n, lse, a, b);
    return;
  }
  if (p->op == SMX_OP_LOGSUMEXP) { *lse = (float)(st.m * p->inv_t_d + log(st.d)); return; }
  float m = (float)st.m, s = (float)(1.0 / st.d), off = (float)log(st.d);
  for (size_t i = 0; i < n; i += SMX_HALF_BLOCK) {
    size_t len = n - i < SMX_HALF_BLOCK ? n - i : SMX_HALF_BLOCK;
    io.load(len, x + i, a);
    if (p->op == SMX_OP_SOFTMAX) k->vscaleexp(len, a, b, m, &p->c, s, 0);
    else k->vlogsub(len, a, b, m, p->inv_t_d, off, 0);
    io.store(len, b, y + i);
  }
}
