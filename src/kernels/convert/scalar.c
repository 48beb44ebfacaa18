/* Portable conversions between f16 / bf16 and float. */
#include "kernels/convert/ukernels.h"
#include "math/half_scalar.h"

static void f16_to_f32_scalar(size_t n, const uint16_t *x, float *y) {
  for (size_t i = 0; i < n; i++) y[i] = smx_f16_to_f32(x[i]);
}
static void f32_to_f16_scalar(size_t n, const float *x, uint16_t *y) {
  for (size_t i = 0; i < n; i++) y[i] = smx_f32_to_f16(x[i]);
}
static void bf16_to_f32_scalar(size_t n, const uint16_t *x, float *y) {
  for (size_t i = 0; i < n; i++) y[i] = smx_bf16_to_f32(x[i]);
}
static void f32_to_bf16_scalar(size_t n, const float *x, uint16_t *y) {
  for (size_t i = 0; i < n; i++) y[i] = smx_f32_to_bf16(x[i]);
}

const smx_cvt_ukernels smx_cvt_ukernels_scalar = {
  f16_to_f32_scalar, f32_to_f16_scalar, bf16_to_f32_scalar, f32_to_bf16_scalar,
};
