/* The public f16 / bf16 <-> float conversions (smx.h): the registry's kernels, argument checks first. */
#include "core/operands.h"
#include "math/half_scalar.h"
#include "registry/registry.h"

static int bad(const void *x, size_t xs, const void *y, size_t ys, size_t n) {
  if (n == 0) return 0;
  if (!x || !y || n > PTRDIFF_MAX / 8) return 1;
  return smx_overlap(x, n * xs, y, n * ys);
}

#define SMX_CONVERT(NAME, SRC, DST, KERNEL)                                      \
  smx_status NAME(const SRC *x, DST *y, size_t n) {                              \
    if (bad(x, sizeof *x, y, sizeof *y, n)) return SMX_E_INVALID_ARG;            \
    if (n) smx_registry_current()->cvt->KERNEL(n, x, y);                         \
    return SMX_OK;                                                               \
  }
SMX_CONVERT(smx_f16_to_f32_n, uint16_t, float, f16_to_f32)
SMX_CONVERT(smx_f32_to_f16_n, float, uint16_t, f32_to_f16)
SMX_CONVERT(smx_bf16_to_f32_n, uint16_t, float, bf16_to_f32)
SMX_CONVERT(smx_f32_to_bf16_n, float, uint16_t, f32_to_bf16)

smx_status smx_f64_to_f16_n(const double *x, uint16_t *y, size_t n) {
  if (bad(x, sizeof *x, y, sizeof *y, n)) return SMX_E_INVALID_ARG;
  for (size_t i = 0; i < n; i++) y[i] = smx_f64_to_f16(x[i]);
  return SMX_OK;
}
