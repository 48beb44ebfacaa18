/*
 * One row of the fused cross-entropy. Pass 1 is the online (max, sum)
 * reduction of the softmax kernels; pass 2 writes the gradient
 * g_j = 2^((x_j - m) c) * a + b over the row (in place when asked) and, with
 * label smoothing, sums the logits as it reads them; the target's element is
 * then rewritten from double. Without a gradient, label smoothing needs a
 * second read for the sum. Half-precision rows go through stack buffers
 * (never a full-size temporary). Special rows (NaN, +inf, all -inf) are
 * scanned and written here, following the policy of smx.h as documented in
 * smx_grad.h.
 */
#include <float.h>
#include <math.h>
#include <string.h>

#include "ops/softmax_policy.h"
#include "ops/xent_row.h"
#include "math/reduce_state.h"

/* double to float, saturating at +-FLT_MAX (an out-of-range conversion is UB;
 * a scale that large only comes from T near 1e-38: then 0 * scale stays 0) */
static float sat_float(double v) { return v > FLT_MAX ? FLT_MAX : v < -FLT_MAX ? -FLT_MAX : (float)v; }

static void write_zeros(const smx_elem_io *io, void *g, size_t n) {
  memset(g, 0, n * smx_elem_size(io->elem));   /* +0 in every storage type */
}

/* The gradient element of a special row, from the policy's p (or NaN). */
typedef struct special_grad {
  int nan;          /* every element NaN                           */
  int posinf;       /* p = 1/k on the +inf entries, 0 elsewhere    */
  double pk;        /* 1/k                                         */
  double zf;        /* 1 + 2 z lse for entries with p > 0          */
  double gs, eps_n, one_minus_eps;
  size_t t;
} special_grad;

static float special_value(const special_grad *sg, float xi, size_t i) {
  if (sg->nan) return NAN;
  double p = sg->posinf && xi == INFINITY ? sg->pk : 0.0;
  double v = (p > 0.0 ? p * sg->zf : 0.0) - sg->eps_n - (i == sg->t ? sg->one_minus_eps : 0.0);
  return sat_float(sg->gs * v);
}

static void write_special_grad(const smx_elem_io *io, const special_grad *sg, const void *x, void *g, size_t n) {
  if (io->elem == SMX_ELEM_F32) {
    const float *xf = x;
    float *gf = g;
    for (size_t i = 0; i < n; i++) gf[i] = special_value(sg, xf[i], i);
    return;
  }
  float a[SMX_HALF_BLOCK];
  for (size_t i = 0; i < n; i += SMX_HALF_BLOCK) {
    size_t len = n - i < SMX_HALF_BLOCK ? n - i : SMX_HALF_BLOCK;
    io->load(len, (const uint16_t *)x + i, a);
    for (size_t k = 0; k < len; k++) a[k] = special_value(sg, a[k], i + k);
    io->store(len, a, (uint16_t *)g + i);
  }
}

static void special_row(const smx_xent_params *p, const smx_elem_io *io, const void *x, size_t n, size_t t, int ignored,
                        double *loss, float *lse, void *g) {
  smx_row_summary s = { 0, 0, 0 };
  if (io->elem == SMX_ELEM_F32) {
    smx_policy_scan(x, n, &s);
  } else {
    float a[SMX_HALF_BLOCK];
    for (size_t i = 0; i < n; i += SMX_HALF_BLOCK) {
      size_t len = n - i < SMX_HALF_BLOCK ? n - i : SMX_HALF_BLOCK;
      io->load(len, (const uint16_t *)x + i, a);
      smx_policy_scan(a, len, &s);
    }
  }
  if (!smx_policy_is_special(&s)) s.has_nan = 1;   /* unreachable: a non-finite state comes from a special row */
  if (lse) *lse = (float)smx_policy_logsumexp.reduce(&s, p->flags);
  if (ignored) {
    *loss = 0.0;
    if (g) write_zeros(io, g, n);
    return;
  }
  special_grad sg;
  memset(&sg, 0, sizeof sg);
  sg.nan = s.has_nan || (s.n_posinf == 0 && (p->flags & SMX_FLAG_MASKED_ROW_NAN));
  if (sg.nan) {
    *loss = NAN;
  } else if (s.n_posinf > 0) {
    /* the limit: p = 1/k on the k entries at +inf */
    sg.posinf = 1;
    sg.pk = 1.0 / (double)s.n_posinf;
    sg.zf = p->z > 0.0 ? INFINITY : 1.0;
    double xt = smx_elem_get(io, x, t);
    double l = 0.0;
    if (p->eps < 1.0) l += (1.0 - p->eps) * (xt == INFINITY ? log((double)s.n_posinf) : INFINITY);
    if (p->eps > 0.0) l += p->eps * (s.n_posinf == n ? log((double)n) : INFINITY);
    if (p->z > 0.0) l = INFINITY;
    *loss = l;
  } else {
    *loss = INFINITY;   /* every entry -inf: p = 0, -log p_t = +inf */
  }
  if (!g) return;
  sg.gs = p->s * p->inv_t;
  sg.eps_n = p->eps / (double)n;
  sg.one_minus_eps = 1.0 - p->eps;
  sg.t = t;
  write_special_grad(io, &sg, x, g, n);
}

void smx_xent_row(const smx_xent_params *p, smx_elem elem, const void *x, size_t n, int64_t t64, int ignored,
                  double *loss, float *lse, void *g) {
  smx_elem_io io = smx_elem_io_for(elem);
  size_t t = ignored ? 0 : (size_t)t64;
  int want_sum = !ignored && p->eps > 0.0;
  if (ignored && !lse) {   /* nothing to compute: the row is not even read */
    *loss = 0.0;
    if (g) write_zeros(&io, g, n);
    return;
  }

  /* pass 1: (m, d) with sum_j 2^((x_j - m) c) = d; half rows also sum x here */
  smx_online_state st;
  double sx = 0.0;
  if (elem == SMX_ELEM_F32) {
    st = p->k->ronline(n, x, &p->c);
  } else {
    float a[SMX_HALF_BLOCK];
    st = smx_online_identity();
    for (size_t i = 0; i < n; i += SMX_HALF_BLOCK) {
      size_t len = n - i < SMX_HALF_BLOCK ? n - i : SMX_HALF_BLOCK;
      io.load(len, (const uint16_t *)x + i, a);
      st = smx_online_merge(st, p->k->ronline(len, a, &p->c), p->c.c);
      if (want_sum) sx += p->g->rsum(len, a);
    }
  }
  if (!(st.d > 0.0 && st.d < INFINITY && st.m > -INFINITY && st.m < INFINITY)) {
    special_row(p, &io, x, n, t, ignored, loss, lse, g);
    return;
  }
  double logd = log(st.d), lse_d = st.m * p->inv_t + logd;
  if (lse) *lse = (float)lse_d;
  if (ignored) {
    *loss = 0.0;
    if (g) write_zeros(&io, g, n);
    return;
  }
  double xt = smx_elem_get(&io, x, t);   /* read before the gradient may overwrite it */
  float m = (float)st.m;              /* a float: the largest entry */
  if (g) {
    double gs = p->s * p->inv_t, zf = 1.0 + 2.0 * p->z * lse_d;
    float a = sat_float(gs * zf / st.d), b = sat_float(-gs * p->eps / (double)n);
    if (elem == SMX_ELEM_F32) {
      double s2 = p->g->vexpaffine(n, x, g, m, &p->c, a, b, want_sum);
      if (want_sum) sx = s2;
    } else {
      float xa[SMX_HALF_BLOCK], ga[SMX_HALF_BLOCK];
      for (size_t i = 0; i < n; i += SMX_HALF_BLOCK) {
        size_t len = n - i < SMX_HALF_BLOCK ? n - i : SMX_HALF_BLOCK;
        io.load(len, (const uint16_t *)x + i, xa);
        p->g->vexpaffine(len, xa, ga, m, &p->c, a, b, 0);
        io.store(len, ga, (uint16_t *)g + i);
      }
    }
    /* the target's element, where p_t - (1 - eps) may cancel: from double */
    double pt = exp((xt - st.m) * p->inv_t - logd);
    smx_elem_set(&io, g, t, sat_float(gs * (pt * zf - p->eps / (double)n - (1.0 - p->eps))));
  } else if (want_sum && elem == SMX_ELEM_F32) {
    sx = p->g->rsum(n, x);
  }
  /* terms with a zero coefficient are left out (no 0 * inf) */
  double l = 0.0;
  if (p->eps < 1.0) l += (1.0 - p->eps) * ((st.m - xt) * p->inv_t + logd);
  if (p->eps > 0.0) l += p->eps * ((st.m - sx / (double)n) * p->inv_t + logd);
  if (p->z > 0.0) l += p->z * lse_d * lse_d;
  *loss = l;
}
