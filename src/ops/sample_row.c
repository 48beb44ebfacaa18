/* One sampled token per row; see sample_row.h and include/smx/smx_topk.h. */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "ops/softmax_row_half.h"
#include "math/philox.h"
#include "ops/sample_prefix.h"
#include "ops/sample_row.h"
#include "ops/topk_heap.h"
#include "ops/topk_row.h"

#define SB 4096              /* elements per block of the normaliser sums */
#define LN2 0.69314718055994530941723212145818

size_t smx_sample_scratch_bytes(size_t n) {
  if (n > SIZE_MAX / 64) return 0;
  return n * (4 * sizeof(double) + 2 * sizeof(float) + sizeof(uint32_t)) + (n / SB + 1) * sizeof(double);
}

void smx_sample_scratch_init(smx_sample_scratch *s, void *buf, size_t n) {
  /* the 8-byte arrays first, so every array is aligned */
  char *p = buf;
  s->n = n;
  s->w = (double *)(void *)p;
  s->w2 = s->w + n;
  s->idx = (int64_t *)(void *)(s->w2 + n);
  s->idx2 = s->idx + n;
  s->bsum = (double *)(void *)(s->idx2 + n);
  s->hv = (float *)(void *)(s->bsum + n / SB + 1);
  s->row = s->hv + n;
  s->pos = (uint32_t *)(void *)(s->row + n);
}

/* Heapsort by index (the top-k candidates come out of a heap in no useful order). */
static void sift_idx(double *w, int64_t *idx, size_t at, size_t size) {
  for (;;) {
    size_t l = 2 * at + 1, r = l + 1, big = at;
    if (l < size && idx[l] > idx[big]) big = l;
    if (r < size && idx[r] > idx[big]) big = r;
    if (big == at) return;
    smx_prefix_swap(w, idx, at, big);
    at = big;
  }
}

static void sort_by_index(double *w, int64_t *idx, size_t c) {
  for (size_t i = c / 2; i-- > 0;) sift_idx(w, idx, i, c);
  for (size_t n = c; n > 1; n--) {
    smx_prefix_swap(w, idx, 0, n - 1);
    sift_idx(w, idx, 0, n - 1);
  }
}

static double weight(const smx_sample_cfg *cfg, float xi, float m) {
  return exp2(((double)xi - (double)m) * cfg->c.c);
}

/* A float at or below the weight threshold rho (x >= it keeps every w >= rho). */
static float threshold_x(const smx_sample_cfg *cfg, float m, double rho) {
  double t = (double)m + log2(rho) / cfg->c.c;
  if (!(t >= -FLT_MAX)) return -INFINITY;
  float f = (float)t;
  return nextafterf(nextafterf(f, -INFINITY), -INFINITY);
}

/* Candidates x > thr with their weights; returns their number. */
static size_t collect(const smx_sample_cfg *cfg, const float *x, size_t n, float m, float thr,
                      smx_sample_scratch *s, int *nan) {
  size_t c = 0;
  for (size_t off = 0; off < n; off += SB) {
    size_t len = n - off < SB ? n - off : SB;
    size_t cnt = cfg->tk->filter_gt(len, x + off, thr, s->pos + c, nan);
    for (size_t q = 0; q < cnt; q++) {
      size_t i = off + s->pos[c + q];
      s->idx[c + q] = (int64_t)i;
      s->w[c + q] = weight(cfg, x[i], m);
    }
    c += cnt;
  }
  return c;
}

/* Candidates e_i > thr of the stored exponentials, their weight e_i itself. */
static size_t collect_e(const smx_sample_cfg *cfg, const float *e, size_t n, float thr, smx_sample_scratch *s) {
  size_t c = 0;
  int nan = 0;
  for (size_t off = 0; off < n; off += SB) {
    size_t len = n - off < SB ? n - off : SB;
    size_t cnt = cfg->tk->filter_gt(len, e + off, thr, s->pos + c, &nan);
    for (size_t q = 0; q < cnt; q++) {
      size_t i = off + s->pos[c + q];
      s->idx[c + q] = (int64_t)i;
      s->w[c + q] = e[i];
    }
    c += cnt;
  }
  return c;
}

/* Normaliser sum_i 2^((x_i - m) c) from the f32 kernel, block by block (bs gets each block's sum). */
static double block_sums(const smx_sample_cfg *cfg, const float *x, size_t n, float m, double *bs) {
  double z = 0.0;
  for (size_t b = 0, off = 0; off < n; b++, off += SB) {
    size_t len = n - off < SB ? n - off : SB;
    double v = cfg->k->raddstoreexp(len, x + off, NULL, m, &cfg->c);
    if (bs) bs[b] = v;
    z += v;
  }
  return z;
}

static int64_t draw_gumbel(const smx_sample_cfg *cfg, const float *x, float m, const int64_t *idx, size_t c,
                           uint64_t row) {
  int64_t best = -1;
  double bv = -INFINITY;
  for (size_t q = 0; q < c; q++) {
    int64_t i = idx[q];
    if (x[i] == -INFINITY) continue;
    double v = ((double)x[i] - (double)m) * cfg->c.c * LN2 + smx_philox_gumbel(cfg->seed, row, cfg->step, (uint32_t)i);
    if (v > bv || (v == bv && i < best)) { bv = v; best = i; }
  }
  return best;
}

/* Entries equal to +inf: the softmax limit is uniform over them. */
static int64_t draw_posinf(const smx_sample_cfg *cfg, const float *x, size_t n, uint64_t row,
                           smx_sample_scratch *s) {
  int nan = 0;
  size_t c = 0;
  for (size_t off = 0; off < n; off += SB) {
    size_t len = n - off < SB ? n - off : SB;
    size_t cnt = cfg->tk->filter_gt(len, x + off, FLT_MAX, s->pos, &nan);
    for (size_t q = 0; q < cnt; q++) s->idx[c++] = (int64_t)(off + s->pos[q]);
  }
  if (nan || c == 0) return -1;
  if (cfg->greedy) return s->idx[0];
  if (cfg->gumbel) {
    int64_t best = s->idx[0];
    double bv = -INFINITY;
    for (size_t q = 0; q < c; q++) {
      double g = smx_philox_gumbel(cfg->seed, row, cfg->step, (uint32_t)s->idx[q]);
      if (g > bv) { bv = g; best = s->idx[q]; }
    }
    return best;
  }
  size_t at = (size_t)(smx_philox_uniform(cfg->seed, row, cfg->step, 0) * (double)c);
  return s->idx[at < c ? at : c - 1];
}

/* No filter: inverse CDF over the whole row, block sums first. */
static int64_t draw_full(const smx_sample_cfg *cfg, const float *x, size_t n, float m, uint64_t row,
                         smx_sample_scratch *s) {
  double z = block_sums(cfg, x, n, m, s->bsum);
  if (z != z) return -1;
  double t = smx_philox_uniform(cfg->seed, row, cfg->step, 0) * z, cum = 0.0;
  int64_t last = -1;
  for (size_t b = 0, off = 0; off < n; b++, off += SB) {
    size_t len = n - off < SB ? n - off : SB;
    if (s->bsum[b] == 0.0) continue;
    if (cum + s->bsum[b] <= t) {
      cum += s->bsum[b];
      for (size_t i = off + len; i-- > off;)
        if (x[i] > -INFINITY) { last = (int64_t)i; break; }
      continue;
    }
    /* the crossing block, in double; if its rounding falls short, its last live entry */
    for (size_t i = off; i < off + len; i++) {
      if (x[i] == -INFINITY) continue;
      last = (int64_t)i;
      cum += weight(cfg, x[i], m);
      if (cum > t) return last;
    }
    return last;
  }
  return last;
}

int64_t smx_sample_row(const smx_sample_cfg *cfg, const float *x, size_t n, uint64_t row, smx_sample_scratch *s) {
  float m = cfg->k->rmax(n, x);
  if (!(m > -INFINITY)) return -1;                    /* every entry -inf or NaN */
  if (m == INFINITY) return draw_posinf(cfg, x, n, row, s);
  int nan = 0;
  if (cfg->greedy) {
    /* the first entry equal to the max */
    size_t c = collect(cfg, x, n, m, nextafterf(m, -INFINITY), s, &nan);
    return nan || c == 0 ? -1 : s->idx[0];
  }
  int use_k = cfg->top_k > 0 && cfg->top_k < n;
  int use_p = cfg->top_p > 0.0 && cfg->top_p < 1.0;
  int use_min = cfg->min_p > 0.0;
  if (!use_k && !use_p && !use_min) {
    if (!cfg->gumbel) return draw_full(cfg, x, n, m, row, s);
    size_t c = collect(cfg, x, n, m, -INFINITY, s, &nan);
    return nan ? -1 : draw_gumbel(cfg, x, m, s->idx, c, row);
  }

  size_t c;
  double z = 0.0;   /* normaliser of the top-p step */
  if (use_k) {
    smx_topk_cfg tc;
    tc.k = cfg->k;
    tc.tk = cfg->tk;
    tc.io = smx_elem_io_for(SMX_ELEM_F32);
    tc.op = SMX_TOPK_RAW;
    tc.c = cfg->c;
    tc.inv_t = 1.0;
    tc.flags = 0;
    tc.kk = cfg->top_k;
    smx_topk_heap h;
    smx_topk_heap_init(&h, cfg->top_k, s->hv, s->idx);
    smx_topk_part part = smx_topk_part_identity();
    for (size_t off = 0; off < n; off += SMX_CHUNK)
      smx_topk_scan(&tc, x, off, n - off < SMX_CHUNK ? n - off : SMX_CHUNK, &h, &part);
    if (part.has_nan) return -1;
    c = h.size;
    for (size_t q = 0; q < c; q++) {
      s->w[q] = weight(cfg, h.v[q], m);
      z += s->w[q];
    }
  } else if (use_p) {
    /* The exponentials of the whole row, stored (n floats, in cache) as the
     * normaliser sums them: the weights of the candidates are these very
     * numbers, so z and the prefix sums agree. */
    float *e = s->hv;
    for (size_t off = 0; off < n; off += SB) {
      size_t len = n - off < SB ? n - off : SB;
      z += cfg->k->raddstoreexp(len, x + off, e + off, m, &cfg->c);
    }
    if (z != z) return -1;
    /* Entries lighter than rho = (1 - p) z / n weigh less than (1 - p) z all
     * together, so the entries above rho reach p z: the nucleus is among them. */
    double rho = (1.0 - cfg->top_p) * z / (double)n;
    float thr = rho < FLT_MAX ? nextafterf(nextafterf((float)rho, -INFINITY), -INFINITY) : FLT_MAX;
    c = collect_e(cfg, e, n, thr, s);
    double mass = 0.0;
    for (size_t q = 0; q < c; q++) mass += s->w[q];
    if (!(mass >= cfg->top_p * z)) c = collect_e(cfg, e, n, -1.0f, s);   /* rounding: take all */
  } else {
    c = collect(cfg, x, n, m, threshold_x(cfg, m, cfg->min_p), s, &nan);
    if (nan) return -1;
  }
  /* the candidates in increasing index order (collect() scans in order; the
   * top-k heap does not), kept aside: the inverse CDF walks them in that
   * order, which needs no sort of the kept set */
  if (use_k) sort_by_index(s->w, s->idx, c);
  memcpy(s->w2, s->w, c * sizeof(double));
  memcpy(s->idx2, s->idx, c * sizeof(int64_t));
  /* top-p: the prefix is everything up to its last entry B in the order */
  double bw = -1.0;
  int64_t bi = INT64_MAX;
  if (use_p) {
    size_t r = smx_sample_prefix(s->w, s->idx, c, cfg->top_p * z);
    bw = s->w[0];
    bi = s->idx[0];
    for (size_t q = 1; q < r; q++)
      if (s->w[q] < bw || (s->w[q] == bw && s->idx[q] > bi)) {
        bw = s->w[q];
        bi = s->idx[q];
      }
  }
  /* keep, in index order: inside the prefix, and min-p relative to the
   * largest probability (whose weight is exactly 1) */
  size_t keep = 0;
  for (size_t q = 0; q < c; q++) {
    double w = s->w2[q];
    int64_t i = s->idx2[q];
    if (use_p && !(w > bw || (w == bw && i <= bi))) continue;
    if (use_min && !(w >= cfg->min_p)) continue;
    s->w[keep] = w;
    s->idx[keep] = i;
    keep++;
  }
  c = keep;
  if (c == 0) return -1;   /* unreachable: the max always stays */
  if (cfg->gumbel) return draw_gumbel(cfg, x, m, s->idx, c, row);
  double total = 0.0;
  for (size_t q = 0; q < c; q++) total += s->w[q];
  double t = smx_philox_uniform(cfg->seed, row, cfg->step, 0) * total, cum = 0.0;
  for (size_t q = 0; q < c; q++) {
    cum += s->w[q];
    if (cum > t && s->w[q] > 0.0) return s->idx[q];
  }
  for (size_t q = c; q-- > 0;)
    if (s->w[q] > 0.0) return s->idx[q];
  return s->idx[0];
}
