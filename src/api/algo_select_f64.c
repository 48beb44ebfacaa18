/*
 * SMX_ALGO_AUTO for f64 rows. Three-pass until measured otherwise: it
 * computes each exponential once, and its extra passes over the row hit the
 * caches for rows that fit in them.
 */
#include "api/algo_select.h"

smx_algo smx_algo_auto_f64(smx_op op, size_t rows, size_t cols, const char *isa) {
  (void)op;
  (void)rows;
  (void)cols;
  (void)isa;
  return SMX_ALGO_THREE_PASS;
}
