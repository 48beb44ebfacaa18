/* Softmax statistics of one row for the losses: see loss_row.h. */
#include "ops/loss_row.h"

#include <float.h>
#include <math.h>

#include "core/temperature.h"
#include "registry/registry.h"

void smx_lrow_init(smx_lrow *p, double temperature) {
  double t32 = smx_f32_temperature(temperature);
  const smx_registry *r32 = smx_f32_registry_for(t32);
  p->k32 = r32->f32;
  p->g32 = r32->xent;
  smx_f32_expc(&p->c32, t32);
  p->k64 = smx_f64_temperature_extreme(temperature) ? smx_registry_scalar.f64 : smx_registry_current()->f64;
  smx_f64_expc(&p->c64, temperature);
  p->inv_t = 1.0 / temperature;
}

static int finish(const smx_lrow *p, smx_lstat *s) {
  if (!(s->d > 0.0 && s->d < INFINITY && s->m > -INFINITY && s->m < INFINITY)) return 0;
  s->logd = log(s->d);
  s->lse = s->m * p->inv_t + s->logd;
  return 1;
}

int smx_lrow_stat_f32(const smx_lrow *p, const float *x, size_t n, smx_lstat *s) {
  smx_online_state st = p->k32->ronline(n, x, &p->c32);
  s->m = st.m;
  s->d = st.d;
  return finish(p, s);
}

int smx_lrow_stat_f64(const smx_lrow *p, const double *x, size_t n, smx_lstat *s) {
  smx_online_dd st = p->k64->ronline(n, x, &p->c64);
  s->m = st.m;
  s->d = st.d.hi + st.d.lo;
  if (!finish(p, s)) return 0;
  s->logd = log(st.d.hi) + st.d.lo / st.d.hi;   /* first-order correction of the double-double */
  s->lse = s->m * p->inv_t + s->logd;
  return 1;
}

double smx_lrow_logp(const smx_lrow *p, const smx_lstat *s, double xj) {
  return xj == -INFINITY ? -INFINITY : (xj - s->m) * p->inv_t - s->logd;
}

double smx_lrow_logp_target_f64(const smx_lrow *p, const smx_lstat *s, const double *x, size_t n, size_t t) {
  double lp = smx_lrow_logp(p, s, x[t]);
  if (!(lp > -0.5)) return lp;   /* q > 0.39: its absolute error is a relative one */
  /* every other term is below p_t, so below 1: the sum is in [1, 1.65] and its hi - 1 is exact; exp(0) is 1 */
  smx_dd d = p->k64->raddstoreexp(n, x, NULL, x[t], &p->c64);
  double rest = (d.hi - 1.0) + d.lo;
  return -log1p(rest > 0.0 ? rest : 0.0);
}

void smx_lrow_scaled_p_f32(const smx_lrow *p, const smx_lstat *s, const float *x, float *g, size_t n, double a) {
  /* f32 rows: m is one of the entries, so every x_j - m <= 0 */
  p->g32->vexpaffine(n, x, g, (float)s->m, &p->c32, smx_lrow_sat(a / s->d), 0.0f, 0);
}

void smx_lrow_scaled_p_f64(const smx_lrow *p, const smx_lstat *s, const double *x, double *g, size_t n, double a) {
  p->k64->vscaleexp(n, x, g, s->m, &p->c64, a / s->d, 0);
}
