/*
 * Scalar f32 softmax kernels: the portable fallback (any x86-64 or other CPU).
 * Arithmetic is done in double, so these kernels are also the most exact
 * (exp within 0.51 ulp) and serve as the first-level oracle in the tests.
 */
#include <float.h>
#include <math.h>

#include "kernels/f32-softmax/ukernels.h"
#include "kernels/scalar_rows.h"
#include "math/exp2_scalar.h"

SMX_SCALAR_ROWS(float)

/* e^((x - m)/T), with x - m rounded to float (the one rounding the contract
 * allows) unless it overflows float, when the double difference is used. */
static inline double exp_arg(float x, float m, double c) {
  float a = x - m;
  double ad = a == -INFINITY && x != -INFINITY ? (double)x - (double)m : (double)a;
  return smx_exp2_d(ad * c);
}

static double raddstoreexp_scalar(size_t n, const float *x, float *y, float m, const smx_expc *c) {
  double s0 = 0.0, s1 = 0.0;
  size_t i = 0;
  if (y) {
    for (; i + 2 <= n; i += 2) {
      float e0 = (float)exp_arg(x[i], m, c->c), e1 = (float)exp_arg(x[i + 1], m, c->c);
      y[i] = e0; y[i + 1] = e1;
      s0 += e0; s1 += e1;
    }
    if (i < n) { float e = (float)exp_arg(x[i], m, c->c); y[i] = e; s0 += e; }
  } else {
    for (; i + 2 <= n; i += 2) {
      s0 += exp_arg(x[i], m, c->c);
      s1 += exp_arg(x[i + 1], m, c->c);
    }
    if (i < n) s0 += exp_arg(x[i], m, c->c);
  }
  return s0 + s1;
}

static double raddexpstoresub_scalar(size_t n, const float *x, float *y, float m, const smx_expc *c) {
  double s0 = 0.0;
  for (size_t i = 0; i < n; i++) {
    float a = x[i] - m;
    s0 += smx_exp2_d((double)a * c->c);
    y[i] = a;
  }
  return s0;
}

static void vscaleexp_scalar(size_t n, const float *x, float *y, float m, const smx_expc *c, float s, int stream) {
  (void)stream;
  for (size_t i = 0; i < n; i++) y[i] = (float)(exp_arg(x[i], m, c->c) * (double)s);
}

/* Blocked online normalizer: the max of a block, one rescale per block. */
static smx_online_state ronline_scalar(size_t n, const float *x, const smx_expc *c) {
  enum { BLOCK = 64 };
  double m = -FLT_MAX, d = 0.0;
  for (size_t i = 0; i < n; i += BLOCK) {
    size_t nb = n - i < BLOCK ? n - i : BLOCK;
    float bm = rmax_scalar(nb, x + i);
    float nm = bm > (float)m ? bm : (float)m;
    if (nm > (float)m) { d *= smx_exp2_d(((double)(float)m - nm) * c->c); m = nm; }
    double s = 0.0;
    for (size_t j = 0; j < nb; j++) s += exp_arg(x[i + j], (float)m, c->c);
    d += s;
  }
  smx_online_state st = { m, d };
  return st;
}

/* Dukhan & Ablavatski pass 1 in double: each term is p 2^k with k integer. */
static smx_ext_state raddextexp_scalar(size_t n, const float *x, const smx_expc *c) {
  const double magic = 0x1.8p52;
  double v = 0.0, e = -INFINITY;
  for (size_t i = 0; i < n; i++) {
    float xi = x[i];
    if (xi == -INFINITY) continue;          /* a masked entry adds nothing */
    double z = (double)xi * c->c;
    if (z != z || z == INFINITY) { v = NAN; break; }  /* NaN or +inf: the caller applies the policy */
    /* keep k exact; a row this large is outside the two-pass window anyway */
    if (z > 0x1p40) z = 0x1p40;
    if (z < -0x1p40) z = -0x1p40;
    double k = (z + magic) - magic;
    double p = smx_exp2_d(z - k);
    if (k > e) { v = (e == -INFINITY ? 0.0 : v * smx_exp2_d(e - k)) + p; e = k; }
    else v += p * smx_exp2_d(k - e);
  }
  smx_ext_state st = { v, e };
  return st;
}

static void vscaleextexp_scalar(size_t n, const float *x, float *y, const smx_expc *c, float inv_v, float neg_e,
                                int stream) {
  (void)stream;
  for (size_t i = 0; i < n; i++) {
    double z = (double)x[i] * c->c + (double)neg_e;
    y[i] = (float)(smx_exp2_d(z) * (double)inv_v);
  }
}

static void vlogsub_scalar(size_t n, const float *x, float *y, float m, double s, float off, int stream) {
  (void)stream;
  for (size_t i = 0; i < n; i++) {
    float a = x[i] - m;
    double ad = a == -INFINITY && x[i] != -INFINITY ? (double)x[i] - (double)m : (double)a;
    y[i] = (float)(ad * s - (double)off);
  }
}

const smx_f32_ukernels smx_f32_ukernels_scalar = {
  "scalar",
  rmax_scalar,
  raddstoreexp_scalar,
  raddexpstoresub_scalar,
  vscale_scalar,
  vscaleexp_scalar,
  ronline_scalar,
  raddextexp_scalar,
  vscaleextexp_scalar,
  vlogsub_scalar,
};
