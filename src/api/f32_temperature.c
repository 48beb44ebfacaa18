/* The extreme-temperature rule of f32_temperature.h. */
#include "api/f32_temperature.h"
#include "math/exp2_poly.h"
#include "runtime/dispatch.h"

double smx_f32_temperature(double t) { return t < SMX_F32_TEMPERATURE_MIN ? SMX_F32_TEMPERATURE_MIN : t; }

const smx_f32_ukernels *smx_f32_kernels_for(double t) {
  double c = SMX_LOG2E_D / smx_f32_temperature(t);
  if (!(c >= 0x1p-100 && c <= 0x1p100)) return &smx_f32_ukernels_scalar;
  return smx_dispatch_f32();
}
