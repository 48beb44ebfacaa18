/* Shared helpers of the language-model commands; see cmd_lm_common.h. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cmd_lm_common.h"


int smx_lm_parse_u64(const char *v, uint64_t lo, uint64_t hi, uint64_t *out) {
  if (!v || !*v || *v == '-' || *v == '+') return 0;
  char *end;
  errno = 0;
  unsigned long long n = strtoull(v, &end, 10);
  if (*end || errno || n < lo || n > hi) return 0;
  *out = n;
  return 1;
}

int smx_lm_parse_double(const char *v, double lo, double hi, double *out) {
  if (!v || !*v) return 0;
  double d;
  if (!smx_cli_parse_number(v, &d) || !(d >= lo && d <= hi)) return 0;
  *out = d;
  return 1;
}

size_t smx_lm_block_rows(uint64_t rows, uint64_t cols) {
  size_t block = cols ? ((size_t)16 << 20) / sizeof(float) / (size_t)cols : 1;
  if (block < 1) block = 1;
  if (block > rows) block = rows ? (size_t)rows : 1;
  return block;
}
