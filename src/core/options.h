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

/* The losses' reading of smx_options and its extension opt->loss (NULL: SMX_LOSS_EXT_INIT). */
typedef struct smx_loss_resolved {
  smx_resolved_options base;   /* algo, temperature, flags, threads (smx_resolve_options) */
  smx_reduction reduction;
  int64_t ignore_index;
  double grad_scale;           /* 0 resolved to 1 */
  double label_smoothing, z_loss;
} smx_loss_resolved;
/* What a loss reads beyond reduction, ignore_index, grad_scale and threads; the rest must be at its
 * default: temperature 0 or 1, label_smoothing and z_loss 0, no SMX_FLAG_MASKED_ROW_NAN. */
#define SMX_LOSS_USES_TEMPERATURE 0x1u
#define SMX_LOSS_USES_SMOOTHING   0x2u   /* label_smoothing and z_loss (cross-entropy) */
#define SMX_LOSS_USES_MASKED_FLAG 0x4u
/* SMX_E_INVALID_ARG for what smx_resolve_options refuses, an unknown reduction, a grad_scale NaN or
 * infinite, label_smoothing outside [0, 1], z_loss negative or not finite, or a field the loss does not use
 * (uses) away from its default. */
smx_status smx_resolve_loss_options(const smx_options *opt, unsigned uses, smx_loss_resolved *r);

/* A temperature as smx_options takes it: 0 means 1; negative, NaN or inf is refused (-1 returned). */
double smx_resolve_temperature(double t);

/* A non-negative thread count clamped to [1, SMX_MAX_THREADS] (0 means 1). */
int smx_resolve_threads(int t);

#endif
