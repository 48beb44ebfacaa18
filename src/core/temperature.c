/* The temperature rule of temperature.h. */
#include <float.h>
#include <math.h>
#include <pthread.h>

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

/* double to float, saturating at +-FLT_MAX (an out-of-range conversion is UB) */
static float sat_float(double v) { return v > FLT_MAX ? FLT_MAX : v < -FLT_MAX ? -FLT_MAX : (float)v; }

static void expc_init(smx_expc *e, double t) {
  double c = SMX_LOG2E_D / t;
  e->c = c;
  e->hi = sat_float(c);
  e->lo = sat_float(c - (double)e->hi);
  /* a*c >= -127 for a >= amin: round amin toward zero */
  e->amin = nextafterf(sat_float(-127.0 / c), 0.0f);
  e->amin_s = sat_float(-200.0 / c);
  e->xlim = sat_float(2097152.0 / c);
}

static smx_expc unit_expc;
static pthread_once_t unit_once = PTHREAD_ONCE_INIT;
static void unit_init(void) { expc_init(&unit_expc, 1.0); }

void smx_f32_expc(smx_expc *e, double t) {
  if (t == 1.0) {
    pthread_once(&unit_once, unit_init);   /* T = 1, the common case: computed once */
    *e = unit_expc;
  } else {
    expc_init(e, t);
  }
}

void smx_f64_expc(smx_expcd *c, double t) {
  c->t = t;
  c->inv_t = 1.0 / t;
  c->div = smx_f64_temperature_extreme(t);
  if (c->div || t == 1.0) {
    c->hi = SMX_LOG2E_HI;
    c->lo = SMX_LOG2E_LO;
  } else {
    /* (L_hi + L_lo) / T as a double-double: one correction step of the quotient */
    double q = SMX_LOG2E_HI / t;
    double rem = fma(-q, t, SMX_LOG2E_HI) + SMX_LOG2E_LO;
    c->hi = q;
    c->lo = rem / t;
  }
}
