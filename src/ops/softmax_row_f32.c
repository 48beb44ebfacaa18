/*
 * The three algorithms over one row, in terms of the kernel family
 * (src/kernels/f32-softmax/). Each phase runs over the row's chunks on the
 * engine's chunk grid (src/core/grid.h), which folds their results left to
 * right: the arithmetic is the same whatever the number of threads, and the
 * window of chunk results lives in the job, so no call allocates.
 */
#include <float.h>
#include <math.h>

#include "core/grid.h"
#include "core/temperature.h"
#include "ops/softmax_row_f32.h"
#include "math/exp2_poly.h"
#include "math/reduce_state.h"

void smx_row_params_init(smx_row_params *p, const smx_f32_ukernels *k, smx_op op, smx_algo algo,
                         double temperature, uint32_t flags, int threads) {
  double t = smx_f32_temperature(temperature == 0.0 ? 1.0 : temperature);
  smx_f32_expc(&p->c, t);
  p->k = k;
  p->op = op;
  p->pol = smx_softmax_policy(op);
  p->algo = algo;
  p->inv_t_d = 1.0 / t;
  p->flags = flags;
  p->threads = threads < 1 ? 1 : threads;
  p->stream = 0;
}

enum phase { P_MAX, P_EXPSUM, P_EXPSUB, P_SCALE, P_ONLINE, P_SCALEEXP, P_EXT, P_SCALEEXT, P_LOGSUB };

/* The accumulators a phase produces: max, sum, online or ext state. */
typedef struct fold { float mx; double sum; smx_online_state on; smx_ext_state ext; } fold;

typedef struct chunk_job {
  const smx_row_params *p;
  enum phase phase;
  const float *x;
  float *y;            /* NULL: P_EXPSUM without stores */
  float m, s, off, inv_v, neg_e;
  double sd;          /* P_LOGSUB: 1/T */
  fold f;
  float mx[SMX_WINDOW];
  double sum[SMX_WINDOW];
  smx_online_state on[SMX_WINDOW];
  smx_ext_state ext[SMX_WINDOW];
} chunk_job;

static void chunk_task(void *ctx, size_t w, size_t off, size_t len) {
  chunk_job *j = ctx;
  const smx_f32_ukernels *k = j->p->k;
  const float *x = j->x + off;
  float *y = j->y ? j->y + off : NULL;
  switch (j->phase) {
    case P_MAX: j->mx[w] = k->rmax(len, x); break;
    case P_EXPSUM: j->sum[w] = k->raddstoreexp(len, x, y, j->m, &j->p->c); break;
    case P_EXPSUB: j->sum[w] = k->raddexpstoresub(len, x, y, j->m, &j->p->c); break;
    case P_SCALE: k->vscale(len, y, y, j->s, j->p->stream); break;
    case P_ONLINE: j->on[w] = k->ronline(len, x, &j->p->c); break;
    case P_SCALEEXP: k->vscaleexp(len, x, y, j->m, &j->p->c, j->s, j->p->stream); break;
    case P_EXT: j->ext[w] = k->raddextexp(len, x, &j->p->c); break;
    case P_SCALEEXT: k->vscaleextexp(len, x, y, &j->p->c, j->inv_v, j->neg_e, j->p->stream); break;
    case P_LOGSUB: k->vlogsub(len, x, y, j->m, j->sd, j->off, j->p->stream); break;
  }
}

static void fold_task(void *ctx, size_t w) {
  chunk_job *j = ctx;
  fold *f = &j->f;
  switch (j->phase) {
    case P_MAX: f->mx = j->mx[w] > f->mx ? j->mx[w] : f->mx; break;
    case P_EXPSUM:
    case P_EXPSUB: f->sum += j->sum[w]; break;
    case P_ONLINE: f->on = smx_online_merge(f->on, j->on[w], j->p->c.c); break;
    case P_EXT: f->ext = smx_ext_merge(f->ext, j->ext[w]); break;
    default: break;
  }
}

/* Runs one phase over every chunk of the row (n elements) and returns its folded result. */
static fold run_phase(chunk_job *j, size_t n, enum phase ph) {
  fold f = { -INFINITY, 0.0, smx_online_identity(), smx_ext_identity() };
  j->f = f;
  j->phase = ph;
  smx_grid_chunks(j->p->threads, n, chunk_task, fold_task, j);
  return j->f;
}

/* The row is special (NaN, +inf or fully masked): the policy writes it. */
static void write_special(const smx_row_params *p, const float *x, float *y, size_t n, float *lse) {
  if (!smx_policy_row(p->pol, x, y, n, p->flags, lse)) {
    /* unreachable: a non-finite state always comes from a special row */
    smx_policy_nan_row(p->pol, y, n, lse);
  }
}

static void three_pass(const smx_row_params *p, chunk_job *j, const float *x, float *y, size_t n, float *lse) {
  fold f = run_phase(j, n, P_MAX);
  if (!(f.mx > -INFINITY && f.mx < INFINITY)) {  /* all -inf, all NaN, or +inf */
    write_special(p, x, y, n, lse);
    return;
  }
  j->m = f.mx;
  /* softmax stores the exponentials; log-softmax at T = 1 the shifted inputs
   * x - m (then subtracts log d in place); otherwise only the sum is formed */
  int store_shift = p->op == SMX_OP_LOG_SOFTMAX && p->inv_t_d == 1.0;
  j->y = p->op == SMX_OP_SOFTMAX || store_shift ? y : NULL;
  fold g = run_phase(j, n, store_shift ? P_EXPSUB : P_EXPSUM);
  if (!(g.sum >= 1.0 && g.sum < INFINITY)) {
    /* a NaN the max skipped: y may already overwrite x, and NaN is the only case left */
    smx_policy_nan_row(p->pol, y, n, lse);
    return;
  }
  if (p->op == SMX_OP_SOFTMAX) {
    j->s = (float)(1.0 / g.sum);
    run_phase(j, n, P_SCALE);
  } else if (p->op == SMX_OP_LOG_SOFTMAX) {
    j->y = y;
    if (store_shift) {   /* in place: y = y - log d */
      j->x = y;
      j->m = 0.0f;
    }
    j->sd = store_shift ? 1.0 : p->inv_t_d;
    j->off = (float)log(g.sum);
    run_phase(j, n, P_LOGSUB);
  } else {
    *lse = (float)((double)f.mx * p->inv_t_d + log(g.sum));
  }
}

static void online(const smx_row_params *p, chunk_job *j, const float *x, float *y, size_t n, float *lse) {
  fold f = run_phase(j, n, P_ONLINE);
  smx_online_state st = f.on;
  if (!(st.d > 0.0 && st.d < INFINITY && st.m > -INFINITY && st.m < INFINITY)) {
    write_special(p, x, y, n, lse);
    return;
  }
  if (p->op == SMX_OP_LOGSUMEXP) { *lse = (float)(st.m * p->inv_t_d + log(st.d)); return; }
  j->y = y;
  j->m = (float)st.m;
  if (p->op == SMX_OP_SOFTMAX) {
    j->s = (float)(1.0 / st.d);
    run_phase(j, n, P_SCALEEXP);
  } else {
    j->sd = p->inv_t_d;
    j->off = (float)log(st.d);
    run_phase(j, n, P_LOGSUB);
  }
}

static void two_pass(const smx_row_params *p, chunk_job *j, const float *x, float *y, size_t n, float *lse) {
  fold f = run_phase(j, n, P_EXT);
  smx_ext_state st = f.ext;
  if (!(st.v > 0.0 && st.v < INFINITY)) {
    /* a special row, or |x c| overflowed float (|x/T| > 2.3e38): three-pass handles those */
    if (!smx_policy_row(p->pol, x, y, n, p->flags, lse)) three_pass(p, j, x, y, n, lse);
    return;
  }
  if (!(st.e >= SMX_EXTEXP_E_MIN && st.e <= SMX_EXTEXP_E_MAX)) {
    /* |x/T| beyond about 1.45e6: the float exponents would not be exact */
    three_pass(p, j, x, y, n, lse);
    return;
  }
  const double ln2 = 0.69314718055994530941723212145818;
  double L = (st.e + log2(st.v)) * ln2;   /* log sum exp(x/T) */
  if (p->op == SMX_OP_LOGSUMEXP) { *lse = (float)L; return; }
  j->y = y;
  if (p->op == SMX_OP_SOFTMAX) {
    j->inv_v = (float)(1.0 / st.v);
    j->neg_e = (float)-st.e;
    run_phase(j, n, P_SCALEEXT);
  } else {
    /* a shift near the max keeps (x - m) small, as in the other algorithms */
    double md = st.e / p->c.c;
    if (!(fabs(md) <= FLT_MAX)) {   /* only at extreme temperatures (scalar kernels) */
      three_pass(p, j, x, y, n, lse);
      return;
    }
    float m = (float)md;
    j->m = m;
    j->sd = p->inv_t_d;
    j->off = (float)(L - (double)m * p->inv_t_d);
    run_phase(j, n, P_LOGSUB);
  }
}

/* The three-pass algorithm on a row of one chunk, without the chunk
 * machinery: the same kernel calls in the same order as three_pass(), so the
 * same bits, with less per-call overhead for short rows. */
static void three_pass_short(const smx_row_params *p, const float *x, float *y, size_t n, float *lse) {
  const smx_f32_ukernels *k = p->k;
  float m = k->rmax(n, x);
  if (!(m > -INFINITY && m < INFINITY)) { write_special(p, x, y, n, lse); return; }
  int store_shift = p->op == SMX_OP_LOG_SOFTMAX && p->inv_t_d == 1.0;   /* as in three_pass() */
  double sum = 0.0 + (store_shift ? k->raddexpstoresub(n, x, y, m, &p->c)
                                  : k->raddstoreexp(n, x, p->op == SMX_OP_SOFTMAX ? y : NULL, m, &p->c));
  if (!(sum >= 1.0 && sum < INFINITY)) {
    /* a NaN that the max skipped: y may already overwrite x, and NaN is the only case left */
    smx_policy_nan_row(p->pol, y, n, lse);
    return;
  }
  if (p->op == SMX_OP_SOFTMAX) k->vscale(n, y, y, (float)(1.0 / sum), p->stream);
  else if (store_shift) k->vlogsub(n, y, y, 0.0f, 1.0, (float)log(sum), p->stream);
  else if (p->op == SMX_OP_LOG_SOFTMAX) k->vlogsub(n, x, y, m, p->inv_t_d, (float)log(sum), p->stream);
  else *lse = (float)((double)m * p->inv_t_d + log(sum));
}

void smx_row_f32(const smx_row_params *p, const float *x, float *y, size_t n, float *lse) {
  if (n <= SMX_CHUNK && p->algo == SMX_ALGO_THREE_PASS) { three_pass_short(p, x, y, n, lse); return; }
  chunk_job j;
  j.p = p;
  j.x = x;
  j.y = y;
  switch (p->algo) {
    case SMX_ALGO_ONLINE: online(p, &j, x, y, n, lse); break;
    case SMX_ALGO_TWO_PASS: two_pass(p, &j, x, y, n, lse); break;
    default: three_pass(p, &j, x, y, n, lse); break;
  }
}
