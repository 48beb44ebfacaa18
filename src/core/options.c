/* Option resolution of options.h. */
#include <math.h>

#include "core/options.h"
#include "core/thread_pool.h"

#define SMX_KNOWN_FLAGS (SMX_FLAG_MASKED_ROW_NAN | SMX_FLAG_STREAM_STORES | SMX_FLAG_CACHED_STORES)

smx_status smx_resolve_options(const smx_options *opt, smx_resolved_options *r) {
  r->algo = SMX_ALGO_AUTO;
  r->temperature = 1.0;
  r->flags = 0;
  r->threads = 1;
  if (!opt) return SMX_OK;
  if ((unsigned)opt->algo > (unsigned)SMX_ALGO_ONLINE) return SMX_E_INVALID_ARG;
  double t = smx_resolve_temperature(opt->temperature);
  if (t < 0.0) return SMX_E_INVALID_ARG;
  if (opt->flags & ~(uint32_t)SMX_KNOWN_FLAGS) return SMX_E_INVALID_ARG;
  if ((opt->flags & SMX_FLAG_STREAM_STORES) && (opt->flags & SMX_FLAG_CACHED_STORES)) return SMX_E_INVALID_ARG;
  if (opt->threads < 0) return SMX_E_INVALID_ARG;
  r->algo = opt->algo;
  r->temperature = t;
  r->flags = opt->flags;
  r->threads = smx_resolve_threads(opt->threads);
  return SMX_OK;
}

smx_status smx_resolve_loss_options(const smx_options *opt, unsigned uses, smx_loss_resolved *r) {
  static const smx_loss_ext defaults = SMX_LOSS_EXT_INIT;
  smx_status st = smx_resolve_options(opt, &r->base);
  if (st != SMX_OK) return st;
  const smx_loss_ext *e = opt && opt->loss ? opt->loss : &defaults;
  if ((unsigned)e->reduction > (unsigned)SMX_REDUCTION_NONE) return SMX_E_INVALID_ARG;
  if (!isfinite(e->grad_scale)) return SMX_E_INVALID_ARG;
  if (!(e->label_smoothing >= 0.0 && e->label_smoothing <= 1.0)) return SMX_E_INVALID_ARG;
  if (!(e->z_loss >= 0.0 && isfinite(e->z_loss))) return SMX_E_INVALID_ARG;
  if (!(uses & SMX_LOSS_USES_TEMPERATURE) && r->base.temperature != 1.0) return SMX_E_INVALID_ARG;
  if (!(uses & SMX_LOSS_USES_SMOOTHING) && (e->label_smoothing != 0.0 || e->z_loss != 0.0)) return SMX_E_INVALID_ARG;
  if (!(uses & SMX_LOSS_USES_MASKED_FLAG) && (r->base.flags & SMX_FLAG_MASKED_ROW_NAN)) return SMX_E_INVALID_ARG;
  r->reduction = e->reduction;
  r->ignore_index = e->ignore_index;
  r->grad_scale = e->grad_scale == 0.0 ? 1.0 : e->grad_scale;
  r->label_smoothing = e->label_smoothing;
  r->z_loss = e->z_loss;
  return SMX_OK;
}

double smx_resolve_temperature(double t) {
  if (t != t || t < 0.0 || t == INFINITY) return -1.0;
  return t == 0.0 ? 1.0 : t;
}

int smx_resolve_threads(int t) { return t > SMX_MAX_THREADS ? SMX_MAX_THREADS : (t < 1 ? 1 : t); }
