/* The sampler's arithmetic, repeated for sharded rows (sample_filter.h; the
 * engine's is src/ops/sample_row.c, which this must match bit for bit). */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "mpi/cand.h"
#include "ops/sample_prefix.h"
#include "mpi/sample_filter.h"

_Static_assert(sizeof(int64_t) == sizeof(double), "the scratch arrays hold indices in double-sized slots");

#define LOG2E 1.4426950408889634073599246810018921
#define LN2 0.69314718055994530941723212145818

void smx_mpi_sample_cfg_init(smx_mpi_sample_cfg *cfg, const smx_sample_params *p, uint64_t seed, uint64_t step) {
  cfg->greedy = p->greedy || p->temperature == 0.0;
  double t = cfg->greedy ? 1.0 : p->temperature;
  cfg->c = LOG2E / (t < 0x1p-600 ? 0x1p-600 : t);
  cfg->top_p = p->top_p == 0.0 ? 1.0 : p->top_p;
  cfg->min_p = p->min_p;
  cfg->use_p = cfg->top_p > 0.0 && cfg->top_p < 1.0;
  cfg->use_min = cfg->min_p > 0.0;
  cfg->seed = seed;
  cfg->step = step;
}

double smx_mpi_gumbel_noise(uint64_t seed, uint64_t row, uint64_t step, uint64_t i) {
  uint32_t ctr[4] = { (uint32_t)i, (uint32_t)row, (uint32_t)step, (uint32_t)(step >> 32) }, w[4];
  smx_philox4x32(seed, ctr, w);
  uint64_t bits = (uint64_t)w[0] | (uint64_t)(w[1] & 0x1fffffu) << 32;
  return -log(-log(((double)bits + 0.5) * 0x1p-53));
}

double smx_mpi_weight(const smx_mpi_sample_cfg *cfg, float x, float m) { return exp2(((double)x - (double)m) * cfg->c); }

float smx_mpi_threshold_x(const smx_mpi_sample_cfg *cfg, float m, double rho) {
  double t = (double)m + log2(rho) / cfg->c;
  if (!(t >= -FLT_MAX)) return -INFINITY;
  float f = (float)t;
  return nextafterf(nextafterf(f, -INFINITY), -INFINITY);
}

double smx_mpi_gumbel_key(const smx_mpi_sample_cfg *cfg, float x, float m, double g) {
  return ((double)x - (double)m) * cfg->c * LN2 + g;
}

/* insertion of (idx, x) pairs by index: kk is a top-k size, and the engine
 * sorts its candidates by index too before it walks them */
static void sort_by_index(int64_t *idx, double *x, size_t c) {
  for (size_t i = 1; i < c; i++)
    for (size_t j = i; j > 0 && idx[j] < idx[j - 1]; j--) {
      int64_t ti = idx[j];
      double tx = x[j];
      idx[j] = idx[j - 1];
      x[j] = x[j - 1];
      idx[j - 1] = ti;
      x[j - 1] = tx;
    }
}

int64_t smx_mpi_filtered_token(const smx_mpi_sample_cfg *cfg, double *w, int64_t *idx, const double *xs, size_t c,
                               double z, float m, uint64_t row, double *w2, int64_t *idx2) {
  memcpy(w2, w, c * sizeof(double));
  memcpy(idx2, idx, c * sizeof(int64_t));
  double bw = -1.0;
  int64_t bi = INT64_MAX;
  if (cfg->use_p) {
    size_t r = smx_sample_prefix(w, idx, c, cfg->top_p * z);
    bw = w[0];
    bi = idx[0];
    for (size_t q = 1; q < r; q++)
      if (w[q] < bw || (w[q] == bw && idx[q] > bi)) {
        bw = w[q];
        bi = idx[q];
      }
  }
  int64_t best = -1;
  double bv = -INFINITY;
  for (size_t q = 0; q < c; q++) {
    double wq = w2[q];
    int64_t iq = idx2[q];
    if (cfg->use_p && !(wq > bw || (wq == bw && iq <= bi))) continue;
    if (cfg->use_min && !(wq >= cfg->min_p)) continue;
    if (xs[q] == -INFINITY) continue;
    double v = smx_mpi_gumbel_key(cfg, (float)xs[q], m, smx_mpi_gumbel_noise(cfg->seed, row, cfg->step, (uint64_t)iq));
    if (v > bv || (v == bv && iq < best)) {
      bv = v;
      best = iq;
    }
  }
  return best;
}

int64_t smx_mpi_topk_token(const smx_mpi_sample_cfg *cfg, const double *cands, size_t kk, float m, uint64_t row,
                           double *scratch) {
  /* int64_t and double have the same size and alignment (sample_filter.h) */
  double *w = scratch, *w2 = w + 2 * kk, *xs = w + 4 * kk;
  int64_t *idx = (int64_t *)(void *)(w + kk), *idx2 = (int64_t *)(void *)(w + 3 * kk);
  size_t c = 0;
  for (size_t q = 0; q < kk; q++) {
    if (cands[2 * q + 1] < 0.0) continue;
    xs[c] = cands[2 * q];
    idx[c++] = (int64_t)cands[2 * q + 1];
  }
  /* z before the sort, in the merged order (the engine's is its heap's: the
   * sums may differ in the last bit) */
  double z = 0.0;
  for (size_t q = 0; q < c; q++) z += smx_mpi_weight(cfg, (float)xs[q], m);
  sort_by_index(idx, xs, c);
  for (size_t q = 0; q < c; q++) w[q] = smx_mpi_weight(cfg, (float)xs[q], m);
  return smx_mpi_filtered_token(cfg, w, idx, xs, c, z, m, row, w2, idx2);
}
