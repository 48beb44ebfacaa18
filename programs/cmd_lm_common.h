/*
 * Pieces shared by `smx topk`, `smx sample` and `smx xent` (programs/cmd_topk.c,
 * programs/cmd_sample.c, programs/cmd_xent.c): row-block sizing.
 */
#ifndef SMX_PROGRAMS_CMD_LM_COMMON_H
#define SMX_PROGRAMS_CMD_LM_COMMON_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

/* Rows per block: about 16 MiB of floats, at least 1, at most rows. */
size_t smx_lm_block_rows(uint64_t rows, uint64_t cols);

#endif
