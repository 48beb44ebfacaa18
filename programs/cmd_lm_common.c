/* Shared helpers of the language-model commands; see cmd_lm_common.h. */
#define _POSIX_C_SOURCE 200809L
#include <stdlib.h>
#include <string.h>

#include "cmd_lm_common.h"


size_t smx_lm_block_rows(uint64_t rows, uint64_t cols) {
  size_t block = cols ? ((size_t)16 << 20) / sizeof(float) / (size_t)cols : 1;
  if (block < 1) block = 1;
  if (block > rows) block = rows ? (size_t)rows : 1;
  return block;
}
