/*
 * The one reading of smx_options: what is refused and what the defaults are.
 * Every entry point that takes smx_options (src/ops/) resolves
 * through here, so they all refuse the same things.
 */
#ifndef SMX_CORE_OPTIONS_H
#define SMX_CORE_OPTIONS_H

#include <stdint.h>

#include "smx/smx.h"

typedef struct smx_resolved_options {
  smx_algo algo;        /* may still be AUTO: resolved per row length */
  double temperature;   /* 0 resolved to 1 */
  uint32_t flags;
  int threads;          /* >= 1, clamped to SMX_MAX_THREADS */
} smx_resolved_options;

/* SMX_E_INVALID_ARG for an unknown algo or flag, both store flags, a bad
 * temperature or a negative thread count; opt may be NULL (defaults). */
smx_status smx_resolve_options(const smx_options *opt, smx_resolved_options *r);

/* A temperature as smx_options takes it: 0 means 1; negative, NaN or inf is refused (-1 returned). */
double smx_resolve_temperature(double t);

/* A non-negative thread count clamped to [1, SMX_MAX_THREADS] (0 means 1). */
int smx_resolve_threads(int t);

#endif
