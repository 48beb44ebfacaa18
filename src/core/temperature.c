/* The temperature rule of temperature.h. */
#include "core/temperature.h"
#include "math/exp2_poly.h"
#include "registry/registry.h"

double smx_f32_temperature(double t) { return t < SMX_F32_TEMPERATURE_MIN ? SMX_F32_TEMPERATURE_MIN : t; }

const smx_registry *smx_f32_registry_for(double t) {
  double c = SMX_LOG2E_D / smx_f32_temperature(t);
  if (!(c >= 0x1p-100 && c <= 0x1p100)) return &smx_registry_scalar;
  return smx_registry_current();
}

const smx_f32_ukernels *smx_f32_kernels_for(double t) { return smx_f32_registry_for(t)->f32; }

int smx_f64_temperature_extreme(double t) {
  double c = SMX_LOG2E_HI / t;
  return !(c >= 0x1p-900 && c <= 0x1p900);
}
