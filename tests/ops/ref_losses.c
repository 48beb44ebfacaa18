/*
 * Long-double references and the documented bounds of the losses
 * (include/smx/smx_variants.h), one row at a time with reduction NONE: focal,
 * the spherical Z-loss, KD and the Fenchel-Young losses of sparsemax,
 * entmax-1.5 and bisection entmax. Each reference follows the header's
 * special-value rules, so NaN, +inf, -inf and masked rows are checked by the
 * same comparison as ordinary ones. The losses' common bound (the header's
 * "Accuracy"): f32 loss within 16 eps max(1, |ref|), gradient within
 * 16 eps (|ref_j| + G) + FLT_MIN; f64 64 eps and 64 eps (|ref_j| + G);
 * G the size of the row's gradient terms (at least the one-hot term's).
 */
#include <math.h>

#include "op.h"

static int row_finite(const ref_ctx *c, int which) {
  for (size_t j = 0; j < c->n; j++)
    if (!isfinite(ref_in(c, which, j))) return 0;
  return 1;
}

/* s += v in long double, compensated (Kahan): the references' sums over rows of 2^17 and more stay well
 * inside the f64 bounds (a plain loop leaves n 2^-64) */
static void ksum_l(long double *s, long double *c, long double v) {
  long double y = v - *c, t = *s + y;
  *c = (t - *s) - y;
  *s = t;
}

static long double k_common(dtype od) { return od == DT_F64 ? 64.0L : 16.0L; }

/* the row's loss, kept in ex[4] */
long double ref_loss_at(const ref_ctx *c, size_t i, long double *aux) {
  (void)i;
  *aux = 0;
  return c->ex[4];
}

/* k eps max(1, |ref|, ex[5]): ex[5] the size of the terms that cancel into the loss (KD), else 0 */
double bound_loss(const ref_ctx *c, dtype od, size_t i, long double ref, long double aux) {
  (void)i; (void)aux;
  if (c->any) return INFINITY;
  long double s = fmaxl(1.0L, fmaxl(fabsl(ref), c->ex[5]));
  return (double)(k_common(od) * (long double)dt_eps(od) * s);
}

/* k eps (|ref_j| + G) (+ FLT_MIN in f32), G = aux */
double bound_loss_grad(const ref_ctx *c, dtype od, size_t i, long double ref, long double aux) {
  (void)i;
  if (c->any) return INFINITY;
  return (double)(k_common(od) * (long double)dt_eps(od) * (fabsl(ref) + aux)) + (od == DT_F64 ? 0.0 : FLT_MIN);
}

/* ------------------------------------------------------------------ focal */
/* loss = -q^g log p_t, grad_j = K (p_j - [j == t]), K = q^g - g p_t q^(g-1) log p_t, q = 1 - p_t formed as
 * -expm1(log p_t) with log p_t = (x_t - m) - log1p(the sum without one maximal entry): p_t = 1 - 1e-30
 * keeps q. ex[0] = log1p(that sum) (the lse less m: m + it rounds away at m = 1e30), ex[1] = K, ex[2] = q, ex[4] = the loss; c->nan marks a NaN row. */
void ref_focal_row(ref_ctx *c) {
  long double g = OPS_FOCAL_GAMMA;
  size_t n = c->n, t = (size_t)c->target, jm = 0;
  c->any = 0;
  ref_softmax_state(c);
  if (c->nan || c->kinf || c->masked) { c->nan = 1; c->ex[4] = NAN; return; }
  if (n == 1) { c->ex[1] = 0; c->ex[4] = 0; return; }
  long double m = -INFINITY, dd = 0;
  for (size_t j = 0; j < n; j++) if (ref_in(c, 0, j) > m) { m = ref_in(c, 0, j); jm = j; }
  for (size_t j = 0; j < n; j++) if (j != jm) dd += expl(ref_in(c, 0, j) - m);
  long double lp = (ref_in(c, 0, t) - m) - log1pl(dd), pt = expl(lp), q = -expm1l(lp), qg = powl(q, g);
  long double t1 = pt == 0 ? 0 : g * pt * qg * (q > 0 ? lp / q : -1);
  c->m = m;
  c->ex[0] = log1pl(dd);
  c->ex[1] = qg - t1;
  c->ex[2] = q;
  c->ex[4] = ref_in(c, 0, t) == -INFINITY ? INFINITY : -qg * lp;
}

long double ref_focal_grad_at(const ref_ctx *c, size_t i, long double *aux) {
  *aux = fabsl(c->ex[1]);
  if (c->nan) return NAN;
  if (c->n == 1) return 0;
  if ((int64_t)i == c->target) return -c->ex[1] * c->ex[2];
  return c->ex[1] * expl((ref_in(c, 0, i) - c->m) - c->ex[0]);
}

/* ------------------------------------------------------------ spherical Z */
/* z_t = (x_t - mu) / sigma (population sigma), loss = softplus(a (b - z_t)) / a,
 * grad_k = -sigmoid(a (b - z_t)) / sigma ([k == t] - 1/D - z_t z_k / D). m = x_0, ex[0] = mu less x_0, ex[1] = sigma,
 * ex[2] = the sigmoid, ex[3] = z_t, ex[4] = the loss, ex[5] (as G) the size of the gradient's terms. */
void ref_zloss_row(ref_ctx *c) {
  long double a = OPS_ZLOSS_A, b = OPS_ZLOSS_B, D = (long double)c->n, s1 = 0, s2 = 0, ms = 0, zmax = 0;
  size_t n = c->n, t = (size_t)c->target;
  c->any = 0;
  c->nan = 0;
  /* moments of x - x_0: exact differences keep a near-tied f64 row's spread (2^-52 of its mean), which a
   * long-double mean of x itself (2^-64 of it) would blur */
  long double x0 = n ? ref_in(c, 0, 0) : 0;
  if (!isfinite(x0)) x0 = 0;
  long double k1 = 0, k2 = 0;
  for (size_t j = 0; j < n; j++) ksum_l(&s1, &k1, ref_in(c, 0, j) - x0);
  long double mu = s1 / D;   /* of x - x_0 */
  for (size_t j = 0; j < n; j++) {
    long double d = (ref_in(c, 0, j) - x0) - mu;
    ksum_l(&s2, &k2, d * d);
    ms += ref_in(c, 0, j) * ref_in(c, 0, j);
  }
  long double var = s2 / D, sd = sqrtl(var);
  ms /= D;
  if (!row_finite(c, 0) || !(sd > 0) || !isfinite(sd)) {
    /* sigma = 0 exactly here; f32 / f64 moments may not see it: the bound asks sigma^2 >= 2^-20 mean(x^2) */
    c->nan = 1;
    c->any = row_finite(c, 0);
    c->ex[4] = NAN;
    return;
  }
  /* f32 rows below the documented range: one-pass moments lose digits there */
  if (c->dt != DT_F64 && var < 0x1p-20L * ms) c->any = 1;
  long double z = ((ref_in(c, 0, t) - x0) - mu) / sd, u = a * (b - z), sg = 1 / (1 + expl(-u));
  for (size_t j = 0; j < n; j++) zmax = fmaxl(zmax, fabsl(((ref_in(c, 0, j) - x0) - mu) / sd));
  c->m = x0;
  c->ex[0] = mu;
  c->ex[1] = sd;
  c->ex[2] = sg;
  c->ex[3] = z;
  c->ex[4] = (u > 0 ? u + log1pl(expl(-u)) : log1pl(expl(u))) / a;
  c->ex[5] = sg / sd * (1 + 1 / D + fabsl(z) * zmax / D);
}

long double ref_zloss_grad_at(const ref_ctx *c, size_t i, long double *aux) {
  long double D = (long double)c->n, zi;
  *aux = c->ex[5];
  if (c->nan) return NAN;
  zi = ((ref_in(c, 0, i) - c->m) - c->ex[0]) / c->ex[1];
  return -c->ex[2] / c->ex[1] * (((int64_t)i == c->target ? 1 : 0) - 1 / D - c->ex[3] * zi / D);
}

/* the loss' terms do not cancel beyond those of the gradient's size: ex[5] is G, not a loss scale */
double bound_zloss(const ref_ctx *c, dtype od, size_t i, long double ref, long double aux) {
  (void)i; (void)aux;
  if (c->any) return INFINITY;
  return (double)(k_common(od) * (long double)dt_eps(od) * fmaxl(1.0L, fabsl(ref)));
}

/* --------------------------------------------------------------------- KD */
/* The teacher (in[1]): finite, a fixed pattern of the row length, so the rows' special values are the
 * student's. */
void prep_kd(const double *x, size_t n, const smx_options *o, dtype dt, void *in0, void *in1) {
  (void)o;
  for (size_t i = 0; i < n; i++) {
    dt_put(dt, in0, i, x[i]);
    dt_put(dt, in1, i, 3.0L * sinl(0.7L * (long double)i + 0.3L));
  }
}

/* log p_j of softmax(in[which] / T) as (x_j / T - m) - log s: m + log s would round log s away at m = 1e30 */
typedef struct lsm { long double m, logs; } lsm;
static lsm lsm_of(const ref_ctx *c, int which, long double T) {
  lsm l = { -INFINITY, 0 };
  long double s = 0;
  for (size_t j = 0; j < c->n; j++) l.m = fmaxl(l.m, ref_in(c, which, j) / T);
  for (size_t j = 0; j < c->n; j++) s += expl(ref_in(c, which, j) / T - l.m);
  l.logs = logl(s);
  return l;
}
static long double lsm_at(const ref_ctx *c, int which, long double T, long double m, long double logs, size_t j) {
  return (ref_in(c, which, j) / T - m) - logs;
}

/* L = T^2 KL(p_t || p_s) over softmax(x / T); grad_j = T (p_s,j - p_t,j). A student NaN, +inf or no entry
 * above -inf: loss and gradient NaN; a student -inf (the teacher has mass everywhere): loss +inf.
 * ex[0], ex[1]: the student's max and log-sum (lsm), ex[2] = G, ex[3] = the teacher's log-sum (its max in m), ex[4] = the loss, ex[5] = T^2 sum p_t
 * (|log p_t| + |log p_s| + 1), the size of the terms that cancel. */
void ref_kd_row(ref_ctx *c) {
  long double T = OPS_KD_T, kl = 0, mag = 0, G = 0;
  int above = 0, bad = 0;
  c->any = 0;
  for (size_t j = 0; j < c->n; j++) {
    long double v = ref_in(c, 0, j);
    if (v != v || v == INFINITY) bad = 1;
    if (v > -INFINITY) above = 1;
  }
  c->nan = bad || !above;
  if (c->nan) { c->ex[4] = NAN; c->ex[5] = 0; return; }
  lsm ls = lsm_of(c, 0, T), lt = lsm_of(c, 1, T);
  for (size_t j = 0; j < c->n; j++) {
    long double lpt = lsm_at(c, 1, T, lt.m, lt.logs, j), lps = lsm_at(c, 0, T, ls.m, ls.logs, j), pt = expl(lpt);
    kl += pt * (lpt - lps);
    mag += pt * (fabsl(lpt) + fabsl(lps) + 1);
    G = fmaxl(G, fabsl(T * (expl(lps) - pt)));
  }
  c->ex[0] = ls.m;
  c->ex[1] = ls.logs;
  c->m = lt.m;
  c->ex[3] = lt.logs;
  c->ex[2] = G;
  c->ex[4] = T * T * kl;
  c->ex[5] = isfinite(mag) ? T * T * mag : 0;
}

long double ref_kd_grad_at(const ref_ctx *c, size_t i, long double *aux) {
  long double T = OPS_KD_T;
  *aux = c->ex[2];
  if (c->nan) return NAN;
  return T * (expl(lsm_at(c, 0, T, c->ex[0], c->ex[1], i)) - expl(lsm_at(c, 1, T, c->m, c->ex[3], i)));
}

/* ------------------------------------------------------ Fenchel-Young losses */
/* loss = Omega(p) + <p, x> - x_t = Omega(p) + sum_j p_j (x_j - m) - (x_t - m), Omega(p) =
 * (1 - sum p^alpha) / (alpha (alpha - 1)); grad = p - e_t. Special rows: NaN: NaN and NaN; +inf entries: NaN
 * loss, gradient the map's limit less e_t; no entry above -inf: +inf (NaN with SMX_FLAG_MASKED_ROW_NAN),
 * gradient -e_t; x_t = -inf: +inf. ex[4] = the loss, ex[5] = the map's largest error over the support
 * times max |x - m| there (the header's second term of the loss' bound). */
static void fy_row(ref_ctx *c, double alpha, double (*map_bound)(const ref_ctx *, dtype, size_t, long double,
                                                                   long double)) {
  c->any = 0;
  ref_sparse_state(c, alpha);
  c->ex[5] = 0;
  if (c->nan || c->kinf || c->n == 0) { c->ex[4] = NAN; return; }   /* (n = 0 is refused: never compared) */
  long double xt = ref_in(c, 0, (size_t)c->target);
  if (c->masked) { c->ex[4] = (c->flags & SMX_FLAG_MASKED_ROW_NAN) ? NAN : INFINITY; return; }
  if (xt == -INFINITY) { c->ex[4] = INFINITY; return; }
  long double a = alpha, spa = 0, px = 0, e = 0, X = 0;
  for (size_t j = 0; j < c->n; j++) {
    long double aux, p = ref_sparse_at(c, j, &aux, alpha);
    if (!(p > 0)) continue;
    long double d = ref_in(c, 0, j) - c->m;
    spa += powl(p, a);
    px += p * d;
    e = fmaxl(e, (long double)map_bound(c, c->dt, j, p, aux));
    X = fmaxl(X, fabsl(d));
  }
  c->ex[4] = (1 - spa) / (a * (a - 1)) + px - (xt - c->m);
  c->ex[5] = e * X;
}

static long double fy_grad_at(const ref_ctx *c, size_t i, long double *aux, double alpha) {
  long double onehot = (int64_t)i == c->target ? 1.0L : 0.0L;
  *aux = 0;
  if (c->nan) return NAN;
  if (c->masked) return (c->flags & SMX_FLAG_MASKED_ROW_NAN) ? NAN : -onehot;
  return ref_sparse_at(c, i, aux, alpha) - onehot;
}

/* 8 eps max(1, |loss|) + ex[5] */
double bound_fy_loss(const ref_ctx *c, dtype od, size_t i, long double ref, long double aux) {
  (void)i; (void)aux;
  return (double)(8.0L * (long double)dt_eps(od) * fmaxl(1.0L, fabsl(ref)) + c->ex[5]);
}

#define FY_REF(tag, alpha, map_bound)                                                                        \
  void ref_fy##tag##_row(ref_ctx *c) { fy_row(c, alpha, map_bound); }                                        \
  long double ref_fy##tag##_grad_at(const ref_ctx *c, size_t i, long double *aux) {                          \
    return fy_grad_at(c, i, aux, alpha);                                                                     \
  }                                                                                                          \
  double bound_fy##tag##_grad(const ref_ctx *c, dtype od, size_t i, long double ref, long double aux) {      \
    long double p = ref + ((int64_t)i == c->target ? 1.0L : 0.0L);                                           \
    return map_bound(c, od, i, p, aux) + dt_eps(od) * (double)fabsl(ref);   /* and p_t - 1's rounding */      \
  }
FY_REF(_sparsemax, 2.0, bound_sparsemax)
FY_REF(_entmax15, 1.5, bound_entmax15)
FY_REF(_entmax, (double)OPS_FY_ALPHA, bound_entmax_a17)

/* ------------------------------------------------------------------ S-DPO */
/* The paper's form, independently of cross-entropy: with b = 1/T (the adapter's beta) and w the target,
 *   z = log sum_{j != w} exp(b (m_j - m_w)),  loss = -log sigmoid(-z) = softplus(z),
 *   grad_j = b exp(b (m_j - m_w) - loss) (j != w),  grad_w = b expm1(-loss).
 * ex[0] = the loss, ex[2..3] the parts of the gradient's exponent, ex[1] = 1 on the rows of the special-value rule (NaN, +inf, no entry above -inf,
 * m_w = -inf), which the header defines as cross-entropy's: those take ref_grad.c's cross-entropy reference.
 * The bounds are cross-entropy's at T (bound_xent_loss, bound_xent_grad), as the header states. */
void ref_sdpo_row(ref_ctx *c) {
  ref_sm_row(c);
  c->ex[0] = 0;
  c->ex[1] = c->nan || c->masked || c->kinf || c->n == 0;
  if (c->ex[1]) return;
  size_t w = (size_t)c->target;
  long double b = 1.0L / c->T, mw = ref_in(c, 0, w), mr = -INFINITY;
  if (mw == -INFINITY) {
    c->ex[1] = 1;
    return;
  }
  for (size_t j = 0; j < c->n; j++)
    if (j != w) mr = fmaxl(mr, ref_in(c, 0, j));
  if (mr == -INFINITY) return;   /* nothing rejected (or all -inf): the sum is 0, the loss 0 */
  /* the terms relative to the largest rejected margin mr: b (m_j - m_w) = b (m_j - mr) + top, so that a
   * huge m_w never rounds away the rejected margins' differences (the library's softmax keeps them) */
  long double top = b * (mr - mw), s = 0, k = 0;
  for (size_t j = 0; j < c->n; j++)
    if (j != w) ksum_l(&s, &k, expl(b * (ref_in(c, 0, j) - mr)));
  long double z = top + logl(s);
  c->ex[0] = z > 0 ? z + log1pl(expl(-z)) : log1pl(expl(z));
  c->ex[2] = mr;
  /* the gradient's exponent less b (m_j - mr): top - loss, formed from its parts when z > 0 (loss - top
   * = log s + log1p(e^-z): top + log s can round log s away) */
  c->ex[3] = z > 0 ? -(logl(s) + log1pl(expl(-z))) : top - c->ex[0];
}

long double ref_sdpo_loss_at(const ref_ctx *c, size_t i, long double *aux) {
  if (c->ex[1] != 0) return ref_xent_loss_at(c, i, aux);
  *aux = 0;
  return c->ex[0];
}

long double ref_sdpo_grad_at(const ref_ctx *c, size_t i, long double *aux) {
  if (c->ex[1] != 0) return ref_xent_grad_at(c, i, aux);
  long double b = 1.0L / c->T, mi = ref_in(c, 0, i);
  *aux = (mi - c->m) / c->T;   /* t_i of cross-entropy's bound */
  if ((int64_t)i == c->target) return b * expm1l(-c->ex[0]);
  return b * expl(b * (mi - c->ex[2]) + c->ex[3]);
}

/* --------------------------------------------------------------- InfoNCE */
/* The one-sided InfoNCE (symmetric = 0) of a row: the cross-entropy of L = x / T at its positive, with the
 * header's own rules (a NaN, a +inf or every entry -inf: NaN term and gradient row; a -inf positive: +inf).
 * loss = (m - x_t) / T + log sum exp((x - m) / T), grad_j = (p_j - [j == t]) / T. ex[4] = the loss; c->nan a
 * NaN row. (The symmetric CLIP form couples the rows through its column softmaxes: tests/unit/test_losses.c.) */
void ref_info_nce_row(ref_ctx *c) {
  c->any = 0;
  c->ex[5] = 0;
  ref_softmax_state(c);
  if (c->nan || c->kinf || c->masked) { c->nan = 1; c->ex[4] = NAN; return; }
  long double xt = ref_in(c, 0, (size_t)c->target);
  c->ex[4] = xt == -INFINITY ? INFINITY : (c->m - xt) / c->T + c->logd;
}

/* aux = G = 1 / T, the one-hot term */
long double ref_info_nce_grad_at(const ref_ctx *c, size_t i, long double *aux) {
  *aux = 1.0L / c->T;
  if (c->nan) return NAN;
  long double p = expl((ref_in(c, 0, i) - c->m) / c->T - c->logd);
  return ((int64_t)i == c->target ? p - 1.0L : p) / c->T;
}
