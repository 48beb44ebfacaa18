/*
 * The f16 / bf16 <-> f32 conversions, written once over the vector layer
 * (vf_ld_f16 .. vf_st_bf16). Included (once) by each per-ISA file, which
 * first includes its src/simd/<isa>.h and defines SMX_CVT_TABLE. Whole
 * vectors go through the layer; the tail goes through math/half_scalar.h,
 * which rounds the same way, so nothing past n is touched.
 */
#include "math/half_scalar.h"

/* One conversion: whole vectors loaded by vload and stored by vstore, the tail by the scalar conversion */
#define SMX_CVT_K(name, From, To, vload, vstore, scalar)                           \
  static void name(size_t n, const From *x, To *y) {                               \
    size_t i = 0;                                                                  \
    for (; i + VF_W <= n; i += VF_W) vstore(y + i, vload(x + i));                  \
    for (; i < n; i++) y[i] = scalar(x[i]);                                        \
  }
SMX_CVT_K(f16_to_f32_k, uint16_t, float, vf_ld_f16, vf_st, smx_f16_to_f32)
SMX_CVT_K(f32_to_f16_k, float, uint16_t, vf_ld, vf_st_f16, smx_f32_to_f16)
SMX_CVT_K(bf16_to_f32_k, uint16_t, float, vf_ld_bf16, vf_st, smx_bf16_to_f32)
SMX_CVT_K(f32_to_bf16_k, float, uint16_t, vf_ld, vf_st_bf16, smx_f32_to_bf16)

const smx_cvt_ukernels SMX_CVT_TABLE = { f16_to_f32_k, f32_to_f16_k, bf16_to_f32_k, f32_to_bf16_k };
