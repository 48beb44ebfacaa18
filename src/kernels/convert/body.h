/*
 * The f16 / bf16 <-> f32 conversions, written once over the vector layer
 * (vf_ld_f16 .. vf_st_bf16). Included (once) by each per-ISA file, which
 * first includes its src/simd/<isa>.h and defines SMX_CVT_TABLE. Whole
 * vectors go through the layer; the tail goes through math/half_scalar.h,
 * which rounds the same way, so nothing past n is touched.
 */
#include "math/half_scalar.h"

static void f16_to_f32_k(size_t n, const uint16_t *x, float *y) {
  size_t i = 0;
  for (; i + VF_W <= n; i += VF_W) vf_st(y + i, vf_ld_f16(x + i));
  for (; i < n; i++) y[i] = smx_f16_to_f32(x[i]);
}

static void f32_to_f16_k(size_t n, const float *x, uint16_t *y) {
  size_t i = 0;
  for (; i + VF_W <= n; i += VF_W) vf_st_f16(y + i, vf_ld(x + i));
  for (; i < n; i++) y[i] = smx_f32_to_f16(x[i]);
}

static void bf16_to_f32_k(size_t n, const uint16_t *x, float *y) {
  size_t i = 0;
  for (; i + VF_W <= n; i += VF_W) vf_st(y + i, vf_ld_bf16(x + i));
  for (; i < n; i++) y[i] = smx_bf16_to_f32(x[i]);
}

static void f32_to_bf16_k(size_t n, const float *x, uint16_t *y) {
  size_t i = 0;
  for (; i + VF_W <= n; i += VF_W) vf_st_bf16(y + i, vf_ld(x + i));
  for (; i < n; i++) y[i] = smx_f32_to_bf16(x[i]);
}

const smx_cvt_ukernels SMX_CVT_TABLE = { f16_to_f32_k, f32_to_f16_k, bf16_to_f32_k, f32_to_bf16_k };
