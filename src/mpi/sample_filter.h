/*
 * The arithmetic of smx_sample_rows_f32 that a sharded draw must repeat bit
 * for bit: the weights exp2((x - m) c), the min-p threshold, the Gumbel key
 * ((x - m) c ln2 + g) and the top-k branch of the filters (top-p's prefix by
 * the same mass-guided quickselect, over the same index-ordered candidates).
 * c = log2(e) / T, the constant of the engine's f32 kernels.
 */
#ifndef SMX_MPI_SAMPLE_FILTER_H
#define SMX_MPI_SAMPLE_FILTER_H
#include <stddef.h>
#include <stdint.h>

#include "smx/smx.h"

typedef struct smx_mpi_sample_cfg {
  double c;            /* log2(e) / T */
  double top_p, min_p;
  int greedy, use_p, use_min;
  uint64_t seed, step;
} smx_mpi_sample_cfg;

void smx_mpi_sample_cfg_init(smx_mpi_sample_cfg *cfg, const smx_sample_params *p, uint64_t seed, uint64_t step);
double smx_mpi_weight(const smx_mpi_sample_cfg *cfg, float x, float m);
float smx_mpi_threshold_x(const smx_mpi_sample_cfg *cfg, float m, double rho);
double smx_mpi_gumbel_key(const smx_mpi_sample_cfg *cfg, float x, float m, double g);
/* The token of a row from its kk merged top-k candidates (cand.h layout),
 * with the top-p and min-p filters after top-k; scratch holds 5 kk doubles
 * (two of its five arrays hold int64_t indices, the size of a double). */
int64_t smx_mpi_topk_token(const smx_mpi_sample_cfg *cfg, const double *cands, size_t kk, float m, uint64_t row,
                           double *scratch);
/* The token from c candidates in index order (weights w, indices idx,
 * logits xs) and the normaliser z: top-p's prefix, min-p, then Gumbel-max.
 * w and idx are permuted; w2 and idx2 hold c entries each. The top-p prefix
 * is the engine's own (src/ops/sample_prefix.h). */
int64_t smx_mpi_filtered_token(const smx_mpi_sample_cfg *cfg, double *w, int64_t *idx, const double *xs, size_t c,
                               double z, float m, uint64_t row, double *w2, int64_t *idx2);
double smx_mpi_gumbel_noise(uint64_t seed, uint64_t row, uint64_t step, uint64_t i);
#endif
