#ifndef SMX_TUNE_WISDOM_H
#define SMX_TUNE_WISDOM_H
/*
 * The wisdom file: a calibration's row crossovers for one kernel set on one
 * CPU, as a few text lines closed by a checksum line:
 *   smx-wisdom 1
 *   isa avx512
 *   cpu 89ab...(16 hex digits)
 *   softmax_ws 8388608        (or "never")
 *   lse_ws 1048576
 *   sum <FNV-1a 64 of the lines above, 16 hex digits>
 * Anything else (missing, truncated, edited, another CPU or kernel set) is
 * not wisdom, and the caller calibrates again.
 */
#include <stdint.h>

#include "tune/tune.h"

/* 0 and t's softmax_ws and lse_ws set when `path` holds wisdom for this isa
 * and CPU; -1 (t untouched) otherwise. */
int smx_wisdom_load(const char *path, const char *isa, uint64_t cpu_hash, smx_tune_table *t);

/* Writes a temporary file next to `path` and renames it over `path`, so a
 * reader sees the old file or the new one, never half of one. 0 or -1. */
int smx_wisdom_save(const char *path, const char *isa, uint64_t cpu_hash, const smx_tune_table *t);
#endif
