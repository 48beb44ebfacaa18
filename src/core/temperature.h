/*
 * The temperature rule of every operation: how f32 arithmetic (f32, f16 and
 * bf16 storage) and f64 arithmetic carry a temperature T (already resolved by
 * core/options.h: finite, > 0): the kernel set that can hold log2(e)/T, and
 * the temperature actually used. Written once, for every entry point.
 */
#ifndef SMX_CORE_TEMPERATURE_H
#define SMX_CORE_TEMPERATURE_H

#include "registry/registry.h"

/*
 * Below this temperature every float result is already its T -> 0 limit:
 * the smallest nonzero difference of two floats is 2^-149, so |x_i - m| / T
 * exceeds 2^450 and any quotient the results are built from (log-softmax,
 * log-sum-exp, a loss, even divided by a row count below 2^64) lies far
 * beyond FLT_MAX, and every exponential of a non-maximal entry is 0. Using
 * this temperature instead of a smaller one keeps 1/T and log2(e)/T finite
 * in double (a subnormal T makes them infinite, and 0 * inf is NaN).
 */
#define SMX_F32_TEMPERATURE_MIN 0x1p-600

/* The temperature f32 arithmetic uses for a resolved T > 0. */
double smx_f32_temperature(double t);

/* The registry configuration in use, or the scalar one when log2(e)/T
 * leaves [2^-100, 2^100], the range the vector kernels hold in float. */
const smx_registry *smx_f32_registry_for(double t);
/* Its f32 softmax kernels. */
const smx_f32_ukernels *smx_f32_kernels_for(double t);

/* The constants of exp(a/T) = 2^(a c) for the f32 kernels, for a T already
 * passed through smx_f32_temperature(). */
void smx_f32_expc(smx_expc *e, double t);

/* 1 when log2(e)/T is outside [2^-900, 2^900]: f64 rows then use the scalar
 * kernels, in their division mode, and the three-pass algorithm only. */
int smx_f64_temperature_extreme(double t);

/* The constants of exp(a/T) for the f64 kernels: c = log2(e)/T as a
 * double-double, or, at an extreme T, log2(e) with c->div set. */
void smx_f64_expc(smx_expcd *c, double t);

#endif
