/*
 * The vector layer on AArch64 Advanced SIMD (FMA is part of it): 4 floats
 * (vf_t) or 2 doubles (vd_t). The names and conventions are those of
 * avx2.h; what differs is stated here:
 *   - NEON's own max/min return NaN when either operand is NaN, so
 *     vf_max / vd_max are compare + select: they return the second operand
 *     when either is NaN, as the x86 layers do, which the NaN-skipping
 *     chains of the kernels rely on;
 *   - there are no masked loads or stores: a tail mask is a lane count, and
 *     tails go through a small buffer, so nothing outside [0, n) is touched;
 *   - no non-temporal vector store intrinsic: *_st_nt are plain stores;
 *   - 2^n is built in the exponent field (SMX_VF_SCALE2_SATURATES is 0).
 */
#ifndef SMX_SIMD_NEON_H
#define SMX_SIMD_NEON_H

#include <arm_neon.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define SMX_INLINE static inline __attribute__((always_inline))

#define SMX_SIMD_ISA "neon"

/* ---- shared ------------------------------------------------------------ */

SMX_INLINE void smx_sfence(void) {}
SMX_INLINE void smx_prefetch(uintptr_t a) { __builtin_prefetch((const void *)a, 0, 3); }
SMX_INLINE void smx_prefetchw(uintptr_t a) { __builtin_prefetch((const void *)a, 1, 3); }
SMX_INLINE void smx_prefetch_l2(uintptr_t a) { __builtin_prefetch((const void *)a, 0, 2); }

/* ---- f64: 2 lanes ------------------------------------------------------ */

typedef float64x2_t vd_t;
typedef uint64x2_t md_t;
#define VD_W 2

SMX_INLINE vd_t vd_set1(double a) { return vdupq_n_f64(a); }
SMX_INLINE vd_t vd_ld(const double *p) { return vld1q_f64(p); }
SMX_INLINE vd_t vd_ld_part(const double *p, size_t k, double fill) {
  double t[VD_W] = { fill, fill };
  memcpy(t, p, k * sizeof(double));
  return vld1q_f64(t);
}
SMX_INLINE void vd_st(double *p, vd_t v) { vst1q_f64(p, v); }
SMX_INLINE void vd_st_nt(double *p, vd_t v) { vst1q_f64(p, v); }
SMX_INLINE void vd_st_part(double *p, size_t k, vd_t v) {
  double t[VD_W];
  vst1q_f64(t, v);
  memcpy(p, t, k * sizeof(double));
}
SMX_INLINE vd_t vd_add(vd_t a, vd_t b) { return vaddq_f64(a, b); }
SMX_INLINE vd_t vd_sub(vd_t a, vd_t b) { return vsubq_f64(a, b); }
SMX_INLINE vd_t vd_mul(vd_t a, vd_t b) { return vmulq_f64(a, b); }
SMX_INLINE vd_t vd_fmadd(vd_t a, vd_t b, vd_t c) { return vfmaq_f64(c, a, b); }             /* a b + c */
SMX_INLINE vd_t vd_fmsub(vd_t a, vd_t b, vd_t c) { return vfmaq_f64(vnegq_f64(c), a, b); }  /* a b - c */
SMX_INLINE vd_t vd_fnmadd(vd_t a, vd_t b, vd_t c) { return vfmsq_f64(c, a, b); }            /* c - a b */
SMX_INLINE vd_t vd_max(vd_t a, vd_t b) { return vbslq_f64(vcgtq_f64(a, b), a, b); }
SMX_INLINE vd_t vd_min(vd_t a, vd_t b) { return vbslq_f64(vcltq_f64(a, b), a, b); }
SMX_INLINE vd_t vd_div(vd_t a, vd_t b) { return vdivq_f64(a, b); }
SMX_INLINE vd_t vd_abs(vd_t a) { return vabsq_f64(a); }
SMX_INLINE vd_t vd_round(vd_t a) { return vrndnq_f64(a); }
SMX_INLINE vd_t vd_ceil(vd_t a) { return vrndpq_f64(a); }
SMX_INLINE md_t vd_gt(vd_t a, vd_t b) { return vcgtq_f64(a, b); }
SMX_INLINE md_t vd_eq(vd_t a, vd_t b) { return vceqq_f64(a, b); }
SMX_INLINE md_t md_andnot(md_t a, md_t b) { return vbicq_u64(b, a); }   /* !a && b */
SMX_INLINE md_t md_and(md_t a, md_t b) { return vandq_u64(a, b); }
SMX_INLINE int md_any(md_t a) { return vmaxvq_u32(vreinterpretq_u32_u64(a)) != 0; }
SMX_INLINE vd_t vd_sel(md_t m, vd_t t, vd_t f) { return vbslq_f64(m, t, f); }
/* 2^k for integers k in [-1022, 1023] (the bits of k + 2^52 + 2^51 + 1023) */
SMX_INLINE vd_t vd_pow2i(vd_t k) {
  vd_t b = vaddq_f64(k, vdupq_n_f64(0x1.8p52 + 1023.0));
  return vreinterpretq_f64_u64(vshlq_n_u64(vreinterpretq_u64_f64(b), 52));
}
/* p 2^n for an integer n (clamped to [-1100, 1000]), rounded once (as avx2.h) */
SMX_INLINE vd_t vd_scale2(vd_t p, vd_t n) {
  n = vd_min(vd_max(n, vdupq_n_f64(-1100.0)), vdupq_n_f64(1000.0));
  vd_t n1 = vd_max(n, vdupq_n_f64(-1000.0));
  vd_t n2 = vsubq_f64(n, n1);
  return vmulq_f64(vmulq_f64(p, vd_pow2i(n1)), vd_pow2i(n2));
}
SMX_INLINE double vd_reduce_max(vd_t a) {
  double l0 = vgetq_lane_f64(a, 0), l1 = vgetq_lane_f64(a, 1);
  return l0 > l1 ? l0 : l1;
}
SMX_INLINE double vd_reduce_add(vd_t a) { return vgetq_lane_f64(a, 0) + vgetq_lane_f64(a, 1); }

/* ---- f32: 4 lanes ------------------------------------------------------ */

typedef float32x4_t vf_t;
typedef uint32x4_t mf_t;
typedef size_t kf_t;   /* a tail mask: the number of live lanes */
#define VF_W 4
#define SMX_VF_SCALE2_SATURATES 0

SMX_INLINE kf_t kf_tail(size_t k) { return k; }
SMX_INLINE kf_t kf_full(void) { return VF_W; }
SMX_INLINE vf_t vf_set1(float a) { return vdupq_n_f32(a); }
SMX_INLINE vf_t vf_zero(void) { return vdupq_n_f32(0.0f); }
SMX_INLINE vf_t vf_ld(const float *p) { return vld1q_f32(p); }
SMX_INLINE void vf_st(float *p, vf_t v) { vst1q_f32(p, v); }
SMX_INLINE void vf_st_nt(float *p, vf_t v) { vst1q_f32(p, v); }
SMX_INLINE vf_t vf_ld_k(const float *p, kf_t k, vf_t fill) {
  if (k == VF_W) return vld1q_f32(p);
  float t[VF_W];
  vst1q_f32(t, fill);
  memcpy(t, p, k * sizeof(float));
  return vld1q_f32(t);
}
SMX_INLINE vf_t vf_ldz_k(const float *p, kf_t k) { return vf_ld_k(p, k, vdupq_n_f32(0.0f)); }
SMX_INLINE void vf_st_k(float *p, kf_t k, vf_t v) {
  if (k == VF_W) { vst1q_f32(p, v); return; }
  float t[VF_W];
  vst1q_f32(t, v);
  memcpy(p, t, k * sizeof(float));
}
SMX_INLINE vf_t vf_keep_k(vf_t v, kf_t k) {
  const uint32_t iota[VF_W] = { 0, 1, 2, 3 };
  uint32x4_t live = vcltq_u32(vld1q_u32(iota), vdupq_n_u32((uint32_t)k));
  return vreinterpretq_f32_u32(vandq_u32(vreinterpretq_u32_f32(v), live));
}
SMX_INLINE vf_t vf_add(vf_t a, vf_t b) { return vaddq_f32(a, b); }
SMX_INLINE vf_t vf_sub(vf_t a, vf_t b) { return vsubq_f32(a, b); }
SMX_INLINE vf_t vf_mul(vf_t a, vf_t b) { return vmulq_f32(a, b); }
SMX_INLINE vf_t vf_fmadd(vf_t a, vf_t b, vf_t c) { return vfmaq_f32(c, a, b); }
SMX_INLINE vf_t vf_fmsub(vf_t a, vf_t b, vf_t c) { return vfmaq_f32(vnegq_f32(c), a, b); }
SMX_INLINE vf_t vf_max(vf_t a, vf_t b) { return vbslq_f32(vcgtq_f32(a, b), a, b); }
SMX_INLINE vf_t vf_min(vf_t a, vf_t b) { return vbslq_f32(vcltq_f32(a, b), a, b); }
SMX_INLINE vf_t vf_div(vf_t a, vf_t b) { return vdivq_f32(a, b); }
SMX_INLINE vf_t vf_abs(vf_t a) { return vabsq_f32(a); }
SMX_INLINE vf_t vf_sel(mf_t m, vf_t t, vf_t f) { return vbslq_f32(m, t, f); }
SMX_INLINE vf_t vf_round(vf_t a) { return vrndnq_f32(a); }
SMX_INLINE mf_t vf_eq(vf_t a, vf_t b) { return vceqq_f32(a, b); }
SMX_INLINE mf_t vf_neq(vf_t a, vf_t b) { return vmvnq_u32(vceqq_f32(a, b)); }
SMX_INLINE mf_t vf_gt(vf_t a, vf_t b) { return vcgtq_f32(a, b); }
SMX_INLINE mf_t vf_unord(vf_t a, vf_t b) { return vmvnq_u32(vandq_u32(vceqq_f32(a, a), vceqq_f32(b, b))); }
SMX_INLINE mf_t mf_none(void) { return vdupq_n_u32(0); }
SMX_INLINE mf_t mf_and(mf_t a, mf_t b) { return vandq_u32(a, b); }
SMX_INLINE mf_t mf_or(mf_t a, mf_t b) { return vorrq_u32(a, b); }
SMX_INLINE int mf_any(mf_t a) { return vmaxvq_u32(a) != 0; }
SMX_INLINE unsigned mf_bits(mf_t a) {
  const uint32_t w[VF_W] = { 1, 2, 4, 8 };
  return vaddvq_u32(vandq_u32(a, vld1q_u32(w)));
}
/* The lanes of v set in m, in lane order, to dst[0..count) (dst has room
 * for VF_W floats: a layer may store a whole vector); returns the count. */
SMX_INLINE size_t vf_compress_st(float *dst, mf_t m, vf_t v) {
  float t[VF_W];
  vf_st(t, v);
  size_t c = 0;
  for (unsigned bits = mf_bits(m); bits; bits &= bits - 1) dst[c++] = t[__builtin_ctz(bits)];
  return c;
}
SMX_INLINE size_t mf_store_lane_ids(uint32_t *dst, mf_t m, uint32_t base) {
  unsigned bits = mf_bits(m);
  size_t c = 0;
  for (; bits; bits &= bits - 1) dst[c++] = base + (uint32_t)__builtin_ctz(bits);
  return c;
}
/* 2^d for integer-valued d, built in the exponent field: d <= -127 gives +0 */
SMX_INLINE vf_t vf_pow2i(vf_t d) {
  d = vf_max(vdupq_n_f32(-127.0f), d);
  int32x4_t b = vaddq_s32(vcvtnq_s32_f32(d), vdupq_n_s32(127));
  return vreinterpretq_f32_s32(vshlq_n_s32(b, 23));
}
/* p 2^n for integer-valued n in [-127, 127] (-127 gives +0) */
SMX_INLINE vf_t vf_scale2(vf_t p, vf_t n) {
  int32x4_t b = vaddq_s32(vcvtnq_s32_f32(n), vdupq_n_s32(127));
  return vmulq_f32(p, vreinterpretq_f32_s32(vshlq_n_s32(b, 23)));
}
SMX_INLINE vf_t vf_scale2_sat(vf_t p, vf_t n) { return vmulq_f32(p, vf_pow2i(n)); }
SMX_INLINE float vf_reduce_max(vf_t v) {
  vf_t m = vf_max(v, vextq_f32(v, v, 2));
  float l0 = vgetq_lane_f32(m, 0), l1 = vgetq_lane_f32(m, 1);
  return l0 > l1 ? l0 : l1;
}
/* sum of the lanes (pairwise, a fixed order) */
SMX_INLINE float vf_reduce_add(vf_t v) { return vaddvq_f32(v); }
/* out[i] = the sum of the lanes of v_i, i < 4, by pairwise adds */
SMX_INLINE void vf_reduce_add4(vf_t a, vf_t b, vf_t c, vf_t d, float *out) {
  vst1q_f32(out, vpaddq_f32(vpaddq_f32(a, b), vpaddq_f32(c, d)));
}
/* lane i = the sum of the lanes of v[i], i < 4 (pairwise adds, as vf_reduce_add4) */
SMX_INLINE vf_t vf_reduce_add_w(const vf_t *v) { return vpaddq_f32(vpaddq_f32(v[0], v[1]), vpaddq_f32(v[2], v[3])); }
SMX_INLINE vd_t vf_lo_pd(vf_t v) { return vcvt_f64_f32(vget_low_f32(v)); }
SMX_INLINE vd_t vf_hi_pd(vf_t v) { return vcvt_high_f64_f32(v); }

/* ---- half-precision storage: VF_W values, rounded as math/half_scalar.h */

SMX_INLINE vf_t vf_ld_f16(const uint16_t *p) { return vcvt_f32_f16(vreinterpret_f16_u16(vld1_u16(p))); }
SMX_INLINE void vf_st_f16(uint16_t *p, vf_t v) { vst1_u16(p, vreinterpret_u16_f16(vcvt_f16_f32(v))); }
SMX_INLINE vf_t vf_ld_bf16(const uint16_t *p) {
  return vreinterpretq_f32_u32(vshlq_n_u32(vmovl_u16(vld1_u16(p)), 16));
}
/* nearest even by adding 0x7fff + the kept lowest bit; NaN truncated and made quiet */
SMX_INLINE void vf_st_bf16(uint16_t *p, vf_t v) {
  uint32x4_t u = vreinterpretq_u32_f32(v);
  uint32x4_t r = vaddq_u32(u, vaddq_u32(vdupq_n_u32(0x7fff), vandq_u32(vshrq_n_u32(u, 16), vdupq_n_u32(1))));
  r = vshrq_n_u32(r, 16);
  uint32x4_t q = vorrq_u32(vshrq_n_u32(u, 16), vdupq_n_u32(0x40));
  r = vbslq_u32(vmvnq_u32(vceqq_f32(v, v)), q, r);
  vst1_u16(p, vmovn_u32(r));
}

#endif
