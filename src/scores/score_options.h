/*
 * How the scores, KL templates, OOD metrics, calibration and temperature fit read smx_options
 * (include/smx/smx_scores.h, smx_metrics.h): what smx_resolve_options refuses, plus
 *  - a temperature other than 0 or 1 where the function has a temperature of its own (each score's is in
 *    smx_score_params; the fit finds one) or none, so that a temperature given there is never ignored;
 *  - SMX_FLAG_MASKED_ROW_NAN: a row of all -inf has its own rule here (smx_scores.h), which that flag
 *    would contradict.
 * Algo and the store flags have no effect on these functions and are accepted, as elsewhere.
 */
#ifndef SMX_SCORES_SCORE_OPTIONS_H
#define SMX_SCORES_SCORE_OPTIONS_H

#include "core/options.h"

/* uses_temperature: the function reads opt->temperature (calibration); else it must be 0 or 1. */
static inline smx_status smx_scores_resolve_options(const smx_options *opt, int uses_temperature,
                                                    smx_resolved_options *r) {
  smx_status st = smx_resolve_options(opt, r);
  if (st != SMX_OK) return st;
  if (!uses_temperature && r->temperature != 1.0) return SMX_E_INVALID_ARG;
  if (r->flags & SMX_FLAG_MASKED_ROW_NAN) return SMX_E_INVALID_ARG;
  return SMX_OK;
}

#endif
