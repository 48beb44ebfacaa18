/*
 * The engine call shared by the row variants of include/smx/smx_norm.h
 * (softpick, SSMax, self-adjust softmax, adaptive temperature, top-k
 * softmax, softplus-l1, standardised softmax and their backward passes):
 * options, argument checks, the row grid and half storage, written once.
 * An op gives one row function per arithmetic (f32, f64); f16 and bf16 rows
 * are loaded whole into per-task f32 scratch, computed in f32 and stored
 * back rounded once.
 */
#ifndef SMX_OPS_VNORM_RUN_H
#define SMX_OPS_VNORM_RUN_H

#include <stddef.h>

#include "core/elem.h"
#include "smx/smx.h"

#define SMX_VN_IN 3

/* Row r: in[k] (NULL where absent), out, n entries; scratch holds
 * vn_op.scratch_rows rows of n of the arithmetic's type. */
typedef void (*smx_vn_row32)(const void *ctx, size_t r, const float *const *in, float *out, size_t n, float *scratch);
typedef void (*smx_vn_row64)(const void *ctx, size_t r, const double *const *in, double *out, size_t n,
                             double *scratch);

typedef struct smx_vn_op {
  smx_elem elem;
  size_t rows, cols;
  const void *in[SMX_VN_IN];   /* NULL: absent (optional inputs only; the op checks which are required) */
  size_t ld_in[SMX_VN_IN];
  void *out;
  size_t ld_out;
  int alias;                   /* 1 + the input out may be exactly (in place); 0: none */
  size_t scratch_rows;
  smx_vn_row32 row32;
  smx_vn_row64 row64;
  const void *ctx;
} smx_vn_op;

/* Resolves opt (its temperature is not used by these operations), checks
 * leading dimensions, spans and overlaps, and runs the rows on opt->threads
 * threads (one row per task element: the same result for every count).
 * rows == 0 or cols == 0 does nothing. */
smx_status smx_vn_run(const smx_vn_op *op, const smx_options *opt);

/* 1 when a backward's f32 output rows should be written with non-temporal
 * stores: an output of rows x cols far beyond the caches (SMX_VN_STREAM_BYTES;
 * f16/bf16 rows pass through scratch and never stream). A backward reads two
 * arrays and writes a third, so the write-allocate reads of dx are a quarter
 * of its memory traffic; bench/python/bench_variants_norm.py measured the
 * SA-softmax and softplus-l1 backward passes about 15-25 % faster on 4096 x 32000
 * with them (AMD EPYC Zen 5). Forwards keep ordinary stores (algo_select.c). */
#define SMX_VN_STREAM_BYTES ((size_t)64 << 20)
int smx_vn_stream_out(smx_elem e, size_t rows, size_t cols);

#endif
