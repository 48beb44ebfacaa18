/*
 * Fused softmax + top-k over one row (Milakov & Gimelshein 2018, Alg. 4):
 * blocks of the row are read once into L1 (converted to float first for
 * f16 / bf16); each block's (max, exponential sum) is formed from L1 and
 * merged into the row's online state (m, d) (the merge of Milakov &
 * Gimelshein, one rescale per block, not per element), and then the top-k
 * filter kernel reads the block again from L1, which rejects everything at or below the current k-th
 * value with vector compares.
 *
 * Determinism: the row is cut into fixed chunks of SMX_CHUNK elements; block
 * states are folded inside a chunk and chunk states are folded left to right,
 * whether the chunks run on one thread or many. The selection is exact (a
 * total order on (x, index)), so it needs no such care.
 */
#ifndef SMX_OPS_TOPK_ROW_H
#define SMX_OPS_TOPK_ROW_H

#include <stddef.h>
#include <stdint.h>

#include "ops/softmax_row_half.h"
#include "ops/softmax_row_f32.h"
#include "core/elem.h"
#include "kernels/f32-topk/ukernels.h"
#include "ops/topk_heap.h"
#include "math/reduce_state.h"

/* elements per block: converted / filtered in L1 */
#define SMX_TOPK_BLOCK 2048

typedef enum smx_topk_op { SMX_TOPK_SOFTMAX, SMX_TOPK_LOG_SOFTMAX, SMX_TOPK_RAW } smx_topk_op;

typedef struct smx_topk_cfg {
  const smx_f32_ukernels *k;     /* online normaliser kernel          */
  const smx_topk_ukernels *tk;   /* filter kernel                      */
  smx_elem_io io;                 /* storage type and its loads         */
  smx_topk_op op;
  smx_expc c;                    /* exp(a / T) = 2^(a c)               */
  double inv_t;
  uint32_t flags;
  size_t kk;                     /* k                                  */
} smx_topk_cfg;

/* What a scan of part of a row leaves behind. */
typedef struct smx_topk_part {
  smx_online_state st;   /* fold of the block states (softmax ops only) */
  int has_nan;
} smx_topk_part;

/* The identity part (nothing scanned). */
smx_topk_part smx_topk_part_identity(void);
/* a then b (b's elements after a's): the fixed merge order. */
void smx_topk_part_merge(const smx_topk_cfg *cfg, smx_topk_part *a, const smx_topk_part *b);

/* Reads x[off, off + len) of a row (element type cfg->elem), pushing into h
 * (which selects by x) and folding block states into part->st. */
void smx_topk_scan(const smx_topk_cfg *cfg, const void *x, size_t off, size_t len, smx_topk_heap *h,
                   smx_topk_part *part);

/* Sorts h and writes the k results of a row whose scan gave `part`. x is the
 * row, read again only for a row with +inf or no entry above -inf. */
void smx_topk_finish(const smx_topk_cfg *cfg, const void *x, size_t n, smx_topk_heap *h, const smx_topk_part *part,
                     float *values, int64_t *indices);

/* One whole row on the calling thread: chunk by chunk, then finish. */
void smx_topk_row(const smx_topk_cfg *cfg, const void *x, size_t n, smx_topk_heap *h, float *values,
                  int64_t *indices);

/* Reads block [off, off + len) (len <= SMX_TOPK_BLOCK) of a row as floats:
 * a pointer into x for f32, else buf after conversion. */
const float *smx_topk_block(const smx_topk_cfg *cfg, const void *x, size_t off, size_t len, float *buf);

#endif
