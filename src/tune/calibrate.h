#ifndef SMX_TUNE_CALIBRATE_H
#define SMX_TUNE_CALIBRATE_H
#include "tune/cpu_caches.h"
#include "tune/tune.h"

/* Times the three-pass and two-pass f32 algorithms of the kernel set in use,
 * one thread, at rows of 1/4 to 4 times the cache model's crossovers (the
 * AVX-512 ones, whatever the kernel set), and sets t->softmax_ws and
 * t->lse_ws where two-pass starts to win. Stops after about budget_s seconds
 * of wall time, leaving the crossovers it did not finish as they were, and
 * allocates at most 64 MiB. Returns the number of crossovers it measured
 * (0-2). Never fails a caller: out of memory or an error is 0. */
int smx_tune_calibrate(const smx_cpu_caches *c, smx_tune_table *t, double budget_s);
#endif
