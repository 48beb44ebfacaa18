/*
 * The vector exponential inside the kernels, measured directly: y = e^(x - 0)
 * through each ISA's raddstoreexp over every k-th float of [-87.33, 0] (the
 * range where softmax's exponentials are normal numbers), against double exp.
 * Also the special inputs: 0 -> 1 exactly, -inf -> +0, NaN -> NaN, and lane
 * independence (a NaN or -inf in one lane leaves its neighbours unchanged).
 *
 * Bound enforced: 1.5 ulp and 1.1 eps relative for the vector kernels,
 * 0.51 ulp for the scalar (double) kernel. SMX_EXP_STRIDE=1 sweeps all floats.
 */
#include "../common/test_isa.h"
#include "ops/softmax_row_f32.h"

static double ulp_of(double v) {
  int e;
  frexp(v, &e);
  return ldexp(1.0, e - 24);
}

int main(void) {
  tu_isa_start(2);
  const char *s = getenv("SMX_EXP_STRIDE");
  uint32_t stride = s ? (uint32_t)atoi(s) : 97;
  if (stride == 0) stride = 1;
  const smx_f32_ukernels *tables[3] = { &smx_f32_ukernels_scalar, &smx_f32_ukernels_avx2, &smx_f32_ukernels_avx512 };
  const double ulp_bound[3] = { 0.51, 1.5, 1.5 };
  smx_row_params p;
  enum { B = 4096 };
  float x[B], y[B];
  { /* the one kernel set of SMX_MAX_ISA (ctest: one entry per level) */
    const int isa = tu_isa_at;
    const smx_f32_ukernels *k = tables[isa];
    smx_row_params_init(&p, k, SMX_OP_SOFTMAX, SMX_ALGO_THREE_PASS, 1.0f, 0, 1);
    double max_ulp = 0, max_rel = 0;
    float worst_x = 0;
    /* bit patterns of -0.0 .. -87.336 (0x80000000 .. 0xC2AEAC50) */
    uint64_t lo = 0x80000000u, hi = 0xC2AEAC50u, cnt = 0;
    size_t fillc = 0;
    for (uint64_t b = lo; b <= hi + (uint64_t)stride * B; b += stride) {
      if (b <= hi) {
        uint32_t u = (uint32_t)b;
        memcpy(&x[fillc++], &u, 4);
      }
      if (fillc == B || (b > hi && fillc > 0)) {
        k->raddstoreexp(fillc, x, y, 0.0f, &p.c);
        for (size_t i = 0; i < fillc; i++) {
          double ref = exp((double)x[i]);
          double err = fabs((double)y[i] - ref);
          double u = err / ulp_of(ref), r = err / (ref * 0x1p-23);
          if (u > max_ulp) { max_ulp = u; worst_x = x[i]; }
          if (r > max_rel) max_rel = r;
        }
        cnt += fillc;
        fillc = 0;
      }
      if (b > hi) break;
    }
    printf("%-7s exp over %llu arguments in [-87.34, 0]: max %.3f ulp (at x = %a), max %.3f eps relative\n",
           tu_isa_names[isa], (unsigned long long)cnt, max_ulp, worst_x, max_rel);
    CHECK(max_ulp <= ulp_bound[isa], "%s exp error %.3f ulp > %.2f", tu_isa_names[isa], max_ulp, ulp_bound[isa]);

    /* special values and lane independence */
    for (size_t pos = 0; pos < 20; pos++) {
      float xs[20], ys[20];
      for (size_t i = 0; i < 20; i++) xs[i] = -(float)i * 0.75f;
      float special[3] = { NAN, -INFINITY, -1e30f };
      for (int sp = 0; sp < 3; sp++) {
        xs[pos] = special[sp];
        k->raddstoreexp(20, xs, ys, 0.0f, &p.c);
        int ok = 1;
        for (size_t i = 0; i < 20; i++) {
          if (i == pos) ok &= sp == 0 ? ys[i] != ys[i] : tu_same(ys[i], 0.0f);
          else ok &= fabs(ys[i] - exp((double)xs[i])) <= 1.5 * ulp_of(exp((double)xs[i]));
        }
        CHECK(ok, "%s lane %zu special %g", tu_isa_names[isa], pos, special[sp]);
      }
      xs[pos] = 0.0f;
      k->raddstoreexp(20, xs, ys, 0.0f, &p.c);
      CHECK(ys[pos] == 1.0f, "%s exp(0) = %a", tu_isa_names[isa], ys[pos]);
    }
  }
  return tu_finish("test_exp");
}
