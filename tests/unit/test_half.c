/*
 * f16 and bf16: the conversion kernels of every ISA (every f16 and bf16 bit
 * pattern, and 2^22 floats plus every rounding tie to narrow), softmax /
 * log-softmax / log-sum-exp on half rows against the long-double reference,
 * the special-value policy and argument checks (guard pages: tests/ops/).
 */
#include "../common/test_isa.h"
#include "kernels/convert/ukernels.h"
#include "math/half_scalar.h"

static const smx_cvt_ukernels *cvts[3] = { &smx_cvt_ukernels_scalar, &smx_cvt_ukernels_avx2, &smx_cvt_ukernels_avx512 };

static double f16_value(uint16_t h) { return (double)smx_f16_to_f32(h); }

/* nearest representable neighbour check: b is a correctly rounded (ties to even) narrowing of x */
static int is_nearest(double x, uint16_t b, double (*val)(uint16_t)) {
  double v = val(b);
  if (isinf(v)) return 1;   /* overflow handled by the dedicated checks */
  double lo = val((uint16_t)(b - 1)), hi = val((uint16_t)(b + 1));
  double d = fabs(v - x);
  if (!isnan(lo) && !isinf(lo) && fabs(lo - x) < d) return 0;
  if (!isnan(hi) && !isinf(hi) && fabs(hi - x) < d) return 0;
  if ((!isnan(lo) && fabs(lo - x) == d && (b & 1)) || (!isnan(hi) && fabs(hi - x) == d && (b & 1))) return 0;
  return 1;
}

static double bf16_value(uint16_t h) { return (double)smx_bf16_to_f32(h); }

static void test_conversions(void) {
  static uint16_t h[65536], h2[65536];
  static float f[65536];
  for (uint32_t i = 0; i < 65536; i++) h[i] = (uint16_t)i;
  tu_rng rng = { 17 };
  enum { NF = 1 << 22 };
  float *xf = malloc(NF * sizeof(float));
  uint16_t *ref16 = malloc(NF * 2), *refb = malloc(NF * 2), *out = malloc(NF * 2);
  for (size_t i = 0; i < NF; i++) {
    uint32_t u = (uint32_t)tu_next(&rng);
    if (i & 1) u = (u & 0x807fffffu) | ((uint32_t)(100 + (tu_next(&rng) % 50)) << 23);   /* around the f16 range */
    if (i % 5 == 0) u = (u & 0xffffe000u) | 0x1000u;   /* an exact f16 tie */
    if (i % 7 == 0) u = (u & 0xffff0000u) | 0x8000u;   /* an exact bf16 tie */
    memcpy(&xf[i], &u, 4);
  }
  for (size_t i = 0; i < NF; i++) { ref16[i] = smx_f32_to_f16(xf[i]); refb[i] = smx_f32_to_bf16(xf[i]); }
  /* the scalar rounding is the specification: check it is correctly rounded */
  long bad = 0;
  for (size_t i = 0; i < NF; i += 3) {
    double x = xf[i];
    if (isnan(x)) { bad += !isnan(f16_value(ref16[i])) + !isnan(bf16_value(refb[i])); continue; }
    if (fabs(x) < 65520.0) bad += !is_nearest(x, ref16[i], f16_value);
    else bad += !isinf(f16_value(ref16[i]));
    bad += !is_nearest(x, refb[i], bf16_value);
  }
  CHECK(bad == 0, "%ld narrowings are not correctly rounded", bad);
  {
    const int isa = tu_isa_at;   /* avx512bf16 converts with the avx512 table: main runs this up to avx512 */
    const smx_cvt_ukernels *c = cvts[isa];
    /* every f16 pattern widens exactly and narrows back to itself (NaNs stay NaN) */
    c->f16_to_f32(65536, h, f);
    c->f32_to_f16(65536, f, h2);
    long bw = 0, rt = 0;
    for (uint32_t i = 0; i < 65536; i++) {
      bw += !tu_same(f[i], smx_f16_to_f32(h[i])) && !(f[i] != f[i] && smx_f16_to_f32(h[i]) != smx_f16_to_f32(h[i]));
      int nan = (i & 0x7c00u) == 0x7c00u && (i & 0x3ffu);
      rt += nan ? !((h2[i] & 0x7c00u) == 0x7c00u && (h2[i] & 0x3ffu)) : h2[i] != h[i];
    }
    CHECK(bw == 0 && rt == 0, "%s f16: %ld widenings differ, %ld round trips fail", tu_isa_names[isa], bw, rt);
    c->bf16_to_f32(65536, h, f);
    c->f32_to_bf16(65536, f, h2);
    bw = rt = 0;
    for (uint32_t i = 0; i < 65536; i++) {
      bw += !tu_same(f[i], smx_bf16_to_f32(h[i]));
      int nan = (i & 0x7f80u) == 0x7f80u && (i & 0x7fu);
      rt += nan ? !((h2[i] & 0x7f80u) == 0x7f80u && (h2[i] & 0x7fu)) : h2[i] != h[i];
    }
    CHECK(bw == 0 && rt == 0, "%s bf16: %ld widenings differ, %ld round trips fail", tu_isa_names[isa], bw, rt);
    /* narrowing of arbitrary floats agrees with the scalar rounding, at every tail length */
    c->f32_to_f16(NF - 3, xf, out);
    long d16 = 0, db = 0;
    for (size_t i = 0; i < NF - 3; i++) d16 += out[i] != ref16[i] && !((out[i] & 0x7fffu) > 0x7c00u && (ref16[i] & 0x7fffu) > 0x7c00u);
    c->f32_to_bf16(NF - 5, xf + 1, out);
    for (size_t i = 0; i < NF - 5; i++) db += out[i] != refb[i + 1];
    CHECK(d16 == 0 && db == 0, "%s: %ld f16 and %ld bf16 narrowings differ from the scalar rounding", tu_isa_names[isa], d16, db);
  }
  free(xf); free(ref16); free(refb); free(out);
}

typedef smx_status (*sm_fn)(const uint16_t *, uint16_t *, size_t, const smx_options *);
typedef smx_status (*lse_fn)(const uint16_t *, float *, size_t, const smx_options *);

static void check_half_row(const char *what, int bf, const uint16_t *x, size_t n, float T) {
  sm_fn sm = bf ? smx_softmax_bf16 : smx_softmax_f16, ls = bf ? smx_log_softmax_bf16 : smx_log_softmax_f16;
  lse_fn lf = bf ? smx_logsumexp_bf16 : smx_logsumexp_f16;
  float (*wid)(uint16_t) = bf ? smx_bf16_to_f32 : smx_f16_to_f32;
  const double u = bf ? 0x1p-8 : 0x1p-11, tiny = bf ? 0x1p-133 : 0x1p-25;   /* rounding unit; half the smallest subnormal */
  float *xf = malloc(n * sizeof(float));
  uint16_t *y = malloc(n * 2), *z = malloc(n * 2);
  for (size_t i = 0; i < n; i++) xf[i] = wid(x[i]);
  long double m;
  long double logd = tu_ref_logd(xf, n, T, &m), TT = T == 0.0f ? 1.0L : T;
  {
    const int isa = tu_isa_at;
    smx_options o = { 0, T, 0, 1, NULL };
    float l;
    CHECK(sm(x, y, n, &o) == SMX_OK && ls(x, z, n, &o) == SMX_OK && lf(x, &l, n, &o) == SMX_OK, "%s status", what);
    long bad = 0, badl = 0;
    for (size_t i = 0; i < n; i++) {
      if (xf[i] == -INFINITY) {   /* masked: exactly +0 and -inf */
        bad += y[i] != 0;
        badl += wid(z[i]) != -INFINITY;
        continue;
      }
      long double t = ((long double)xf[i] - m) / TT;
      double ref = (double)expl(t - logd), lref = (double)(t - logd);
      double yv = wid(y[i]), zv = wid(z[i]);
      double bound = u * ref + (4.0 + fabs((double)t) / 2.0) * 0x1p-23 * ref + tiny;
      bad += !(fabs(yv - ref) <= bound);
      badl += !(fabs(zv - lref) <= u * fabs(lref) + 4 * 0x1p-23 * fmax(1.0, fabs(lref)));
    }
    double lref = (double)(m / TT + logd);
    CHECK(bad == 0, "%s %s %s softmax: %ld outputs outside the bound", what, bf ? "bf16" : "f16", tu_isa_names[isa], bad);
    CHECK(badl == 0, "%s %s %s log-softmax: %ld outputs outside the bound", what, bf ? "bf16" : "f16", tu_isa_names[isa], badl);
    CHECK(fabs(l - lref) <= 4 * 0x1p-23 * fmax(1.0, fabs(lref)), "%s logsumexp %.9g vs %.9g", what, l, lref);
  }
  free(xf); free(y); free(z);
}

static void test_values(void) {
  tu_rng rng = { 23 };
  size_t lens[] = { 1, 7, 33, 2047, 2048, 2049, 5000, 100003 };
  for (int bf = 0; bf <= 1; bf++)
    for (size_t li = 0; li < sizeof lens / sizeof lens[0]; li++) {
      size_t n = lens[li];
      uint16_t *x = malloc(n * 2);
      for (size_t i = 0; i < n; i++) {
        float v = tu_uniform_f(&rng, -12, 12);
        if (n > 10 && i % 11 == 3) v = -INFINITY;
        x[i] = bf ? smx_f32_to_bf16(v) : smx_f32_to_f16(v);
      }
      char what[48];
      snprintf(what, sizeof what, "n=%zu", n);
      check_half_row(what, bf, x, n, 0.0f);
      check_half_row(what, bf, x, n, 0.5f);
      free(x);
    }
}

static void test_special(void) {
  const uint16_t F16_NAN = 0x7e00, F16_PINF = 0x7c00, F16_NINF = 0xfc00, F16_ONE = 0x3c00, F16_ZERO = 0;
  uint16_t x[5], y[5];
  float l;
  x[0] = F16_ONE; x[1] = F16_NAN; x[2] = F16_ZERO; x[3] = F16_PINF; x[4] = F16_NINF;
  CHECK(smx_softmax_f16(x, y, 5, NULL) == SMX_OK, "status");
  int allnan = 1;
  for (int i = 0; i < 5; i++) allnan &= smx_f16_to_f32(y[i]) != smx_f16_to_f32(y[i]);
  CHECK(allnan, "NaN row is NaN");
  x[1] = F16_PINF;
  smx_softmax_f16(x, y, 5, NULL);
  CHECK(y[0] == 0 && y[1] == 0x3800 && y[2] == 0 && y[3] == 0x3800 && y[4] == 0, "two +inf: 0.5 each (%04x %04x)", y[1], y[3]);
  smx_logsumexp_f16(x, &l, 5, NULL);
  CHECK(l == INFINITY, "+inf lse");
  for (int i = 0; i < 5; i++) x[i] = F16_NINF;
  smx_softmax_f16(x, y, 5, NULL);
  CHECK(y[0] == 0 && y[4] == 0, "masked row is 0");
  smx_log_softmax_f16(x, y, 5, NULL);
  CHECK(y[0] == F16_NINF, "masked row log-softmax -inf");
  smx_options o = { 0, 0, SMX_FLAG_MASKED_ROW_NAN, 0, NULL };
  smx_logsumexp_f16(x, &l, 5, &o);
  CHECK(l != l, "masked row NaN with the flag");
  /* bf16 -inf entries give exactly +0 */
  uint16_t b[4] = { 0x3f80, 0xff80, 0x4000, 0xff80 }, by[4];
  smx_softmax_bf16(b, by, 4, NULL);
  CHECK(by[1] == 0 && by[3] == 0 && by[0] != 0, "bf16 -inf gives +0");
  /* in place */
  uint16_t ip[3] = { 0x3c00, 0x4000, 0x4200 }, cp[3];
  smx_softmax_f16(ip, cp, 3, NULL);
  smx_softmax_f16(ip, ip, 3, NULL);
  CHECK(memcmp(ip, cp, sizeof ip) == 0, "in place");
  /* argument checks */
  CHECK(smx_softmax_f16(NULL, y, 3, NULL) == SMX_E_INVALID_ARG, "null x");
  uint16_t six[6] = { 0x3c00, 0x4000, 0x4200, 0, 0, 0 };
  CHECK(smx_softmax_f16(six, six + 1, 3, NULL) == SMX_E_INVALID_ARG, "overlap");
  CHECK(smx_softmax_f16(six, six + 3, 3, NULL) == SMX_OK, "adjacent");
  CHECK(smx_softmax_rows_bf16(b, 1, by, 2, 2, 2, NULL) == SMX_E_INVALID_ARG, "ld < cols");
  CHECK(smx_logsumexp_bf16(NULL, &l, 0, NULL) == SMX_OK && l == -INFINITY, "empty");
  smx_options bad = { 0, -1.0f, 0, 0, NULL };
  CHECK(smx_softmax_bf16(b, by, 4, &bad) == SMX_E_INVALID_ARG, "bad temperature");
}

/* The public conversions (smx.h) under every kernel set: the scalar rounding, and the argument checks. */
static void test_public_conversions(void) {
  static uint16_t h[65536], h2[65536], r[65536];
  static float f[65536];
  static double d[65536];
  for (uint32_t i = 0; i < 65536; i++) h[i] = (uint16_t)i;
  {
    const int isa = tu_isa_at;
    long bad = 0;
    CHECK(smx_f16_to_f32_n(h, f, 65536) == SMX_OK, "f16 widening");
    for (uint32_t i = 0; i < 65536; i++) bad += memcmp(&f[i], &(float){ smx_f16_to_f32(h[i]) }, 4) != 0;
    CHECK(smx_f32_to_f16_n(f, h2, 65536) == SMX_OK, "f16 narrowing");
    for (uint32_t i = 0; i < 65536; i++) bad += h2[i] != smx_f32_to_f16(f[i]);
    CHECK(smx_bf16_to_f32_n(h, f, 65536) == SMX_OK && smx_f32_to_bf16_n(f, h2, 65536) == SMX_OK, "bf16");
    for (uint32_t i = 0; i < 65536; i++) bad += memcmp(&f[i], &(float){ smx_bf16_to_f32(h[i]) }, 4) != 0;
    for (uint32_t i = 0; i < 65536; i++) bad += h2[i] != smx_f32_to_bf16(f[i]);
    for (uint32_t i = 0; i < 65536; i++) d[i] = (double)f[i] * (1.0 + 0x1p-30);  /* between f16 values */
    CHECK(smx_f64_to_f16_n(d, h2, 65536) == SMX_OK, "f64 narrowing");
    for (uint32_t i = 0; i < 65536; i++) bad += h2[i] != smx_f64_to_f16(d[i]);
    CHECK(bad == 0, "%s: %ld public conversions differ from the scalar ones", tu_isa_names[isa], bad);
  }
  memcpy(r, h, sizeof r);
  CHECK(smx_f16_to_f32_n(NULL, f, 1) == SMX_E_INVALID_ARG && smx_f32_to_f16_n(f, NULL, 1) == SMX_E_INVALID_ARG,
        "NULL pointers");
  CHECK(smx_f64_to_f16_n(NULL, NULL, 0) == SMX_OK && smx_bf16_to_f32_n(NULL, NULL, 0) == SMX_OK, "n == 0");
  CHECK(smx_f16_to_f32_n(h, (float *)(void *)(h + 2), 4) == SMX_E_INVALID_ARG &&
        smx_f32_to_bf16_n((float *)(void *)h, h + 1, 2) == SMX_E_INVALID_ARG && !memcmp(r, h, sizeof r), "overlap");
}

int main(void) {
  tu_isa_start(3);
  test_values();
  test_public_conversions();
  if (tu_isa_at <= 2) test_conversions();   /* this kernel set's own conversion table, called directly */
  if (tu_isa_once) {
    test_special();
  }
  return tu_finish("test_half");
}
