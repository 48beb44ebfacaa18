/*
 * Conversion kernels between the half-precision storage types and float:
 * one implementation per ISA in this folder, all rounding exactly as
 * src/math/half_scalar.h (nearest even; NaN stays NaN). Any n, any alignment;
 * they touch exactly x[0..n) and y[0..n).
 */
#ifndef SMX_KERNELS_CONVERT_UKERNELS_H
#define SMX_KERNELS_CONVERT_UKERNELS_H

#include <stddef.h>
#include <stdint.h>

typedef struct smx_cvt_ukernels {
  void (*f16_to_f32)(size_t n, const uint16_t *x, float *y);
  void (*f32_to_f16)(size_t n, const float *x, uint16_t *y);
  void (*bf16_to_f32)(size_t n, const uint16_t *x, float *y);
  void (*f32_to_bf16)(size_t n, const float *x, uint16_t *y);
} smx_cvt_ukernels;

extern const smx_cvt_ukernels smx_cvt_ukernels_scalar;
extern const smx_cvt_ukernels smx_cvt_ukernels_avx2;
extern const smx_cvt_ukernels smx_cvt_ukernels_avx512;
extern const smx_cvt_ukernels smx_cvt_ukernels_neon;

#endif
