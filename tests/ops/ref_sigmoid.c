/* The sigmoid rows' reference and bound (include/smx/smx_elem.h). */
#include <math.h>

#include "op.h"

/* elementwise: nothing to compute over the row */
void ref_sigmoid_row(ref_ctx *c) { (void)c; }

long double ref_sigmoid_at(const ref_ctx *c, size_t i, long double *aux) {
  long double x = ref_in(c, 0, i);
  *aux = 0.0L;
  if (x != x) return x;
  return 1.0L / (1.0L + expl(-x / c->T));
}

/* 3 eps ref above the arithmetic's smallest normal, that normal below (the
 * exponent-field kernels flush there), plus the storage rounding */
double bound_sigmoid(const ref_ctx *c, dtype od, size_t i, long double ref, long double aux) {
  (void)c; (void)i; (void)aux;
  double r = (double)ref;
  double b = r >= dt_arith_tiny(od) ? 3.0 * dt_eps(od) * r : dt_arith_tiny(od);
  return r >= dt_tiny(od) ? b + dt_unit(od) * r : b + dt_half_sub(od);
}
