/*
 * Pieces shared by `smx topk`, `smx sample` and `smx xent` (programs/cmd_topk.c,
 * programs/cmd_sample.c, programs/cmd_xent.c): number parsing with the usage messages of cli.h,
 * the interruption flag, and row-block sizing.
 */
#ifndef SMX_PROGRAMS_CMD_LM_COMMON_H
#define SMX_PROGRAMS_CMD_LM_COMMON_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

/* Parses a whole number in [lo, hi]; 0 if v is not one. */
int smx_lm_parse_u64(const char *v, uint64_t lo, uint64_t hi, uint64_t *out);
/* Parses a finite double in [lo, hi]; 0 if v is not one. */
int smx_lm_parse_double(const char *v, double lo, double hi, double *out);

/* SIGINT / SIGTERM set this; install / restore with the two calls below. */

/* Rows per block: about 16 MiB of floats, at least 1, at most rows. */
size_t smx_lm_block_rows(uint64_t rows, uint64_t cols);

#endif
