/*
 * The three algorithms over one f64 row, in terms of the f64 kernel family
 * (src/kernels/f64-softmax/), shaped as softmax_row_f32.c: each phase runs
 * over the row's chunks on the engine's chunk grid, which folds their results
 * left to right, so the arithmetic is the same whatever the number of threads.
 * Sums are double-doubles all the way (smx_dd).
 */
#include <float.h>
#include <math.h>

#include "core/grid.h"
#include "core/temperature.h"
#include "ops/softmax_row_f64.h"
#include "math/exp2_poly.h"
#include "math/exp2d_scalar.h"
#include "math/reduce_state_f64.h"

void smx_row_params_f64_init(smx_row_params_f64 *p, const smx_f64_ukernels *k, smx_op op, smx_algo algo,
                             double temperature, uint32_t flags, int threads) {
  smx_f64_expc(&p->c, temperature == 0.0 ? 1.0 : temperature);
  p->k = k;
  p->op = op;
  p->pol = smx_softmax_policy(op);
  p->algo = algo;
  p->flags = flags;
  p->threads = threads < 1 ? 1 : threads;
  p->stream = 0;
}

/* log(hi + lo) as a double-double, for hi >= 0.5: libm's log, then one
 * Newton step against the kernels' own exponential, so that the absolute
 * error is about eps (not eps |log d|). Log-sum-exp needs it where m/T and
 * log d nearly cancel. */
static smx_dd log_dd(smx_dd d) {
  double l = log(d.hi);
  double e = smx_exp2d_ac(l, SMX_LOG2E_HI, SMX_LOG2E_LO);   /* e^l, within about 1 ulp */
  smx_dd r = { l, ((d.hi - e) + d.lo) / e };
  return r;
}

/* log(hi + lo) rounded to double, for log-softmax's offset: there the result
 * y = t - log d never cancels (t <= 0 <= log d), so libm's log with the
 * first-order correction lo/hi is enough and cheaper than log_dd(). */
static double log_d(smx_dd d) { return log(d.hi) + d.lo / d.hi; }

/* a / T as a double-double */
static smx_dd div_dd(double a, double t) {
  double q = a / t;
  smx_dd r = { q, 0.0 };
  if (t != 1.0 && isfinite(q) && q != 0.0) r.lo = fma(-q, t, a) / t;
  return r;
}

/* m/T + log d, rounded once; +inf when m/T overflows (its correct rounding:
 * log d is at most about 19) */
static double lse_value(double m, double t, smx_dd d) {
  smx_dd a = div_dd(m, t), b = log_dd(d);
  if (!isfinite(a.hi)) return a.hi;
  smx_dd s = smx_dd_add(a, b);
  return smx_dd_value(s);
}

enum phase { P_MAX, P_EXPSUM, P_SCALE, P_ONLINE, P_SCALEEXP, P_EXT, P_SCALEEXT, P_LOGSUB };

/* The accumulators a phase produces. */
typedef struct fold { double mx; smx_dd sum; smx_online_dd on; smx_ext_dd ext; } fold;

typedef struct chunk_job {
  const smx_row_params_f64 *p;
  enum phase phase;
  const double *x;
  double *y;           /* NULL: P_EXPSUM without stores */
  size_t n;
  double m, s, off, inv_v, e;
  fold f;
  double mx[SMX_WINDOW];
  smx_dd sum[SMX_WINDOW];
  smx_online_dd on[SMX_WINDOW];
  smx_ext_dd ext[SMX_WINDOW];
} chunk_job;

static void chunk_task(void *ctx, size_t w, size_t off, size_t len) {
  chunk_job *j = ctx;
  const smx_f64_ukernels *k = j->p->k;
  const double *x = j->x + off;
  double *y = j->y ? j->y + off : NULL;
  switch (j->phase) {
    case P_MAX: j->mx[w] = k->rmax(len, x); break;
    case P_EXPSUM: j->sum[w] = k->raddstoreexp(len, x, y, j->m, &j->p->c); break;
    case P_SCALE: k->vscale(len, y, y, j->s, j->p->stream); break;
    case P_ONLINE: j->on[w] = k->ronline(len, x, &j->p->c); break;
    case P_SCALEEXP: k->vscaleexp(len, x, y, j->m, &j->p->c, j->s, j->p->stream); break;
    case P_EXT: j->ext[w] = k->raddextexp(len, x, &j->p->c); break;
    case P_SCALEEXT: k->vscaleextexp(len, x, y, &j->p->c, j->inv_v, j->e, j->p->stream); break;
    case P_LOGSUB: k->vlogsub(len, x, y, j->m, &j->p->c, j->off, j->p->stream); break;
  }
}

static void fold_task(void *ctx, size_t w) {
  chunk_job *j = ctx;
  fold *f = &j->f;
  switch (j->phase) {
    case P_MAX: f->mx = j->mx[w] > f->mx ? j->mx[w] : f->mx; break;
    case P_EXPSUM: f->sum = smx_dd_add(f->sum, j->sum[w]); break;
    case P_ONLINE: f->on = smx_online_dd_merge(f->on, j->on[w], j->p->c.hi, j->p->c.lo); break;
    case P_EXT: f->ext = smx_ext_dd_merge(f->ext, j->ext[w]); break;
    default: break;
  }
}

static fold run_phase(chunk_job *j, enum phase ph) {
  fold f = { -INFINITY, { 0.0, 0.0 }, smx_online_dd_identity(), smx_ext_dd_identity() };
  j->f = f;
  j->phase = ph;
  smx_grid_chunks(j->p->threads, j->n, chunk_task, fold_task, j);
  return j->f;
}

/* The row is special (NaN, +inf or fully masked): the policy writes it. */
static void write_special(const smx_row_params_f64 *p, const double *x, double *y, size_t n, double *lse) {
  if (!smx_policy_row_f64(p->pol, x, y, n, p->flags, lse)) {
    /* unreachable: a non-finite state always comes from a special row */
    smx_policy_nan_row_f64(p->pol, y, n, lse);
  }
}

/* Softmax scale, log-softmax offset or log-sum-exp from (m, d). */
static void finish(const smx_row_params_f64 *p, chunk_job *j, double m, smx_dd d, double *y, double *lse,
                   enum phase scale_phase) {
  if (p->op == SMX_OP_LOGSUMEXP) { *lse = lse_value(m, p->c.t, d); return; }
  j->y = y;
  j->m = m;
  if (p->op == SMX_OP_SOFTMAX) {
    j->s = 1.0 / smx_dd_value(d);
    run_phase(j, scale_phase);
  } else {
    j->off = log_d(d);
    run_phase(j, P_LOGSUB);
  }
}

static void three_pass(const smx_row_params_f64 *p, chunk_job *j, const double *x, double *y, size_t n,
                       double *lse) {
  fold f = run_phase(j, P_MAX);
  if (!(f.mx > -INFINITY && f.mx < INFINITY)) {  /* all -inf, all NaN, or +inf */
    write_special(p, x, y, n, lse);
    return;
  }
  j->m = f.mx;
  j->y = p->op == SMX_OP_SOFTMAX ? y : NULL;
  fold g = run_phase(j, P_EXPSUM);
  if (!(g.sum.hi >= 1.0 && g.sum.hi < INFINITY)) {
    /* a NaN the max skipped: y may already overwrite x, and NaN is the only case left */
    smx_policy_nan_row_f64(p->pol, y, n, lse);
    return;
  }
  /* softmax scales the stored exponentials in place */
  finish(p, j, f.mx, g.sum, y, lse, P_SCALE);
}

static void online(const smx_row_params_f64 *p, chunk_job *j, const double *x, double *y, size_t n, double *lse) {
  fold f = run_phase(j, P_ONLINE);
  smx_online_dd st = f.on;
  if (!(st.d.hi > 0.0 && st.d.hi < INFINITY && st.m > -INFINITY && st.m < INFINITY)) {
    write_special(p, x, y, n, lse);
    return;
  }
  finish(p, j, st.m, st.d, y, lse, P_SCALEEXP);
}

static void two_pass(const smx_row_params_f64 *p, chunk_job *j, const double *x, double *y, size_t n,
                     double *lse) {
  fold f = run_phase(j, P_EXT);
  smx_ext_dd st = f.ext;
  if (!(st.v.hi > 0.0 && st.v.hi < INFINITY)) {
    /* a special row, or x c overflowed */
    if (!smx_policy_row_f64(p->pol, x, y, n, p->flags, lse)) three_pass(p, j, x, y, n, lse);
    return;
  }
  if (!(st.e >= SMX_EXTEXP_D_E_MIN && st.e <= SMX_EXTEXP_D_E_MAX)) {
    three_pass(p, j, x, y, n, lse);   /* |x/T| beyond about 7.6e11 */
    return;
  }
  if (p->op == SMX_OP_SOFTMAX) {
    j->y = y;
    j->inv_v = 1.0 / smx_dd_value(st.v);
    j->e = st.e;
    run_phase(j, P_SCALEEXT);
    return;
  }
  /* log sum exp(x/T) = e ln2 + log v, e ln2 as a double-double (e is an integer) */
  smx_dd lv = log_dd(st.v);
  if (p->op == SMX_OP_LOGSUMEXP) {
    double eh = st.e * SMX_LN2_HI;
    smx_dd el = { eh, fma(st.e, SMX_LN2_HI, -eh) + st.e * SMX_LN2_LO };
    *lse = smx_dd_value(smx_dd_add(el, lv));
    return;
  }
  /* Log-softmax subtracts from x - m, m = e/c near the max:
   * log sum 2^((x_i - m) c) = log v + g ln2 with g = e - m c, formed from an
   * exact product (two-product against c = hi + lo); g is tiny. */
  double m = st.e / p->c.hi;
  double ph = m * p->c.hi;
  double pl = fma(m, p->c.hi, -ph);
  double g = ((st.e - ph) - pl) - m * p->c.lo;
  j->y = y;
  j->m = m;
  j->off = smx_dd_value(smx_dd_add(lv, (smx_dd){ g * SMX_LN2_HI, 0.0 }));
  run_phase(j, P_LOGSUB);
}

/* The three-pass algorithm on a row of one chunk, without the chunk
 * machinery: the same kernel calls in the same order as three_pass() and
 * finish(), so the same bits, with less per-row overhead for short rows. */
static void three_pass_short(const smx_row_params_f64 *p, const double *x, double *y, size_t n, double *lse) {
  const smx_f64_ukernels *k = p->k;
  double m = k->rmax(n, x);
  if (!(m > -INFINITY && m < INFINITY)) { write_special(p, x, y, n, lse); return; }
  smx_dd d = smx_dd_add((smx_dd){ 0.0, 0.0 }, k->raddstoreexp(n, x, p->op == SMX_OP_SOFTMAX ? y : NULL, m, &p->c));
  if (!(d.hi >= 1.0 && d.hi < INFINITY)) { smx_policy_nan_row_f64(p->pol, y, n, lse); return; }
  if (p->op == SMX_OP_LOGSUMEXP) *lse = lse_value(m, p->c.t, d);
  else if (p->op == SMX_OP_SOFTMAX) k->vscale(n, y, y, 1.0 / smx_dd_value(d), p->stream);
  else k->vlogsub(n, x, y, m, &p->c, log_d(d), p->stream);
}

void smx_row_f64(const smx_row_params_f64 *p, const double *x, double *y, size_t n, double *lse) {
  if (n <= SMX_CHUNK && p->algo == SMX_ALGO_THREE_PASS) { three_pass_short(p, x, y, n, lse); return; }
  chunk_job j;
  j.p = p;
  j.x = x;
  j.y = y;
  j.n = n;
  switch (p->algo) {
    case SMX_ALGO_ONLINE: online(p, &j, x, y, n, lse); break;
    case SMX_ALGO_TWO_PASS: two_pass(p, &j, x, y, n, lse); break;
    default: three_pass(p, &j, x, y, n, lse); break;
  }
}
