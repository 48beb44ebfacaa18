/*
 * Sharded sampling (smx_mpi.h): the token of smx_sample_rows_f32 on the
 * whole rows. Gumbel-max is argmax_i ((x_i - M) c ln2 + g_i) over the kept
 * set, g_i from Philox keyed by (seed, row, step, global index i): with the
 * whole row's max M known on every rank, each rank forms the very same
 * doubles as one process for its own entries, and a MAXLOC-style reduction
 * (ties to the lower index) picks the token. Collective 1 carries (M, first
 * index of M, column count) and, with top-k, the merged top_k candidates,
 * which then decide the kept set (and the token) on every rank; collective 2
 * the per-row best (key, index) when the kept set is spread over the slices.
 * Top-p over whole rows gathers the nucleus candidates (nucleus_tokens).
 */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "mpi/cand.h"
#include "mpi/mpi_common.h"
#include "mpi/mpi_util.h"
#include "mpi/sample_filter.h"
#include "smx/smx_mpi.h"

#define H 3   /* header of collective 1: max, index, count */

static uint64_t mix(uint64_t h, uint64_t v) {
  h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
  return h * 0xff51afd7ed558ccdull;
}

static uint64_t params_hash(const smx_sample_params *p, uint64_t seed, uint64_t step) {
  uint64_t h = 0;
  h = mix(h, (uint64_t)p->top_k);
  h = mix(h, smx_mpi_bits(p->top_p));
  h = mix(h, smx_mpi_bits(p->min_p));
  h = mix(h, (uint64_t)(p->greedy != 0));
  h = mix(h, (uint64_t)p->method);
  h = mix(h, p->row_offset);
  h = mix(h, seed);
  return mix(h, step);
}

static smx_status check_local(const float *x, size_t ldx, size_t rows, size_t cols, const smx_sample_params *p,
                              const int64_t *tokens, const smx_options *opt) {
  smx_options lo;
  double it;
  if (smx_mpi_local_options(opt, &lo, &it) != SMX_OK) return SMX_E_INVALID_ARG;
  if (opt && opt->temperature != 0.0 && opt->temperature != 1.0) return SMX_E_INVALID_ARG;
  if (!p) return SMX_E_INVALID_ARG;
  if (!(p->temperature >= 0.0 && p->temperature <= DBL_MAX)) return SMX_E_INVALID_ARG;
  if (!(p->top_p >= 0.0 && p->top_p <= 1.0) || !(p->min_p >= 0.0 && p->min_p <= 1.0)) return SMX_E_INVALID_ARG;
  if (p->method != SMX_SAMPLE_MULTINOMIAL && p->method != SMX_SAMPLE_GUMBEL_MAX) return SMX_E_INVALID_ARG;
  if (ldx < cols) return SMX_E_INVALID_ARG;
  if (rows == 0) return SMX_OK;
  if (!tokens || (cols && !x)) return SMX_E_INVALID_ARG;
  if (smx_mpi_overlap_es(x, rows, cols * 4, ldx * 4, tokens, 1, rows * 8, rows * 8, 1)) return SMX_E_INVALID_ARG;
  return SMX_OK;
}

/* Collective 1's records of the slice: (max, global index of its first
 * occurrence) from the engine's raw top-k, and the top kk candidates. */
static smx_status local_records(const float *x, size_t ldx, size_t rows, size_t cols, size_t kk, uint64_t col0,
                                const smx_options *local, double *rec, size_t w) {
  size_t want = kk > 1 ? kk : 1, kl = want < cols ? want : cols;
  float *v = malloc(rows * kl * sizeof *v);
  int64_t *idx = malloc(rows * kl * sizeof *idx);
  smx_status st = v && idx ? smx_topk_rows_f32(x, ldx, v, idx, rows, cols, kl, local) : SMX_E_NOMEM;
  for (size_t r = 0; r < rows && st == SMX_OK; r++) {
    double *d = rec + r * w;
    const int64_t *ir = idx + r * kl;
    if (ir[0] < 0) {   /* NaN in the slice */
      d[0] = NAN;
      d[1] = -1.0;
      continue;
    }
    d[0] = (double)v[r * kl];
    d[1] = (double)(col0 + (uint64_t)ir[0]);
    if (kk) smx_mpi_fill_cands(d + H, kk, v + r * kl, ir, kl, col0);
  }
  free(v);
  free(idx);
  return st;
}

/* The slice's best (key, global index) over its share of the kept set. */
static void local_best(const smx_mpi_sample_cfg *cfg, const float *x, size_t cols, uint64_t col0, float m,
                       uint64_t row, double *best) {
  best[0] = -INFINITY;
  best[1] = -1.0;
  if (m == INFINITY) {   /* the limit: uniform over the +inf entries, by their noise alone */
    for (size_t j = 0; j < cols; j++) {
      if (x[j] != INFINITY) continue;
      double g = smx_mpi_gumbel_noise(cfg->seed, row, cfg->step, col0 + j);
      if (best[1] < 0.0 || g > best[0]) best[0] = g, best[1] = (double)(col0 + j);
    }
    return;
  }
  float thr = cfg->use_min ? smx_mpi_threshold_x(cfg, m, cfg->min_p) : -INFINITY;
  for (size_t j = 0; j < cols; j++) {
    if (!(x[j] > thr)) continue;
    if (cfg->use_min && !(smx_mpi_weight(cfg, x[j], m) >= cfg->min_p)) continue;
    double key = smx_mpi_gumbel_key(cfg, x[j], m, smx_mpi_gumbel_noise(cfg->seed, row, cfg->step, col0 + j));
    if (best[1] < 0.0 || key > best[0]) best[0] = key, best[1] = (double)(col0 + j);
  }
}

/* A failure on any rank, known to every rank. */
static int any(MPI_Comm comm, int fail) {
  int all = fail;
  if (MPI_Allreduce(&fail, &all, 1, MPI_INT, MPI_MAX, comm) != MPI_SUCCESS) return 1;
  return all;
}

/*
 * Top-p without top-k: the row's normaliser z (one all-reduce of sums), then
 * the entries heavier than rho = (1 - p) z / cols (all the others weigh less
 * than (1 - p) z together, so the nucleus is among them: the engine's
 * argument) gathered on every rank, in global index order, and the engine's
 * prefix, min-p and Gumbel-max on them. The weights are exp2((x - M) c) in
 * double; the engine's are its f32 exponentials, so a token can differ where
 * the nucleus boundary lies within their rounding.
 */
static smx_status nucleus_tokens(MPI_Comm comm, int P, const float *x, size_t ldx, size_t lc, uint64_t col0,
                                 size_t n, const double *mrow, double total, const smx_mpi_sample_cfg *cfg,
                                 uint64_t row0, int64_t *tokens) {
  double *z = calloc(n, sizeof *z), *rho = malloc(n * sizeof *rho);
  int *cnt = malloc(n * ((size_t)P + 1) * sizeof *cnt), *rc = malloc(2 * (size_t)P * sizeof *rc);
  double *send = NULL, *recv = NULL, *scr = NULL;
  smx_status st = SMX_OK;
  if (any(comm, !z || !rho || !cnt || !rc)) { st = SMX_E_NOMEM; goto out; }
  for (size_t r = 0; r < n; r++) {
    if (tokens[r] != -3) continue;
    const float *xr = x + r * ldx;
    float m = (float)mrow[r];
    for (size_t j = 0; j < lc; j++)
      if (xr[j] > -INFINITY) z[r] += smx_mpi_weight(cfg, xr[j], m);
  }
  if (MPI_Allreduce(MPI_IN_PLACE, z, (int)n, MPI_DOUBLE, MPI_SUM, comm) != MPI_SUCCESS) { st = SMX_E_INTERNAL; goto out; }
  size_t mine = 0;
  for (size_t r = 0; r < n; r++) {
    cnt[r] = 0;
    if (tokens[r] != -3) continue;
    /* a little below the bound: a superset changes nothing but the work */
    rho[r] = (1.0 - cfg->top_p) * z[r] / total * (1.0 - 0x1p-20);
    const float *xr = x + r * ldx;
    for (size_t j = 0; j < lc; j++)
      if (xr[j] > -INFINITY && smx_mpi_weight(cfg, xr[j], (float)mrow[r]) > rho[r]) cnt[r]++;
    mine += (size_t)cnt[r];
  }
  if (MPI_Allgather(cnt, (int)n, MPI_INT, cnt + n, (int)n, MPI_INT, comm) != MPI_SUCCESS) { st = SMX_E_INTERNAL; goto out; }
  size_t grand = 0, cmax = 0;
  for (int q = 0; q < P; q++) {
    size_t t = 0;
    for (size_t r = 0; r < n; r++) t += (size_t)cnt[n + (size_t)q * n + r];
    rc[q] = t * 3 <= INT32_MAX ? (int)(t * 3) : -1;
    rc[P + q] = grand * 3 <= INT32_MAX ? (int)(grand * 3) : -1;
    grand += t;
  }
  for (size_t r = 0; r < n; r++) {
    size_t t = 0;
    for (int q = 0; q < P; q++) t += (size_t)cnt[n + (size_t)q * n + r];
    cmax = t > cmax ? t : cmax;
  }
  int bad = grand * 3 > INT32_MAX;
  for (int q = 0; q < 2 * P; q++) bad |= rc[q] < 0;
  send = malloc((3 * mine + 1) * sizeof *send);
  recv = malloc((3 * grand + 1) * sizeof *recv);
  scr = malloc((5 * cmax + 1) * sizeof *scr);
  if (any(comm, bad || !send || !recv || !scr)) { st = bad ? SMX_E_INVALID_ARG : SMX_E_NOMEM; goto out; }
  size_t at = 0;
  for (size_t r = 0; r < n; r++) {
    if (tokens[r] != -3) continue;
    const float *xr = x + r * ldx;
    for (size_t j = 0; j < lc; j++) {
      double wj;
      if (!(xr[j] > -INFINITY) || !((wj = smx_mpi_weight(cfg, xr[j], (float)mrow[r])) > rho[r])) continue;
      send[at++] = wj;
      send[at++] = (double)(col0 + j);
      send[at++] = (double)xr[j];
    }
  }
  if (MPI_Allgatherv(send, (int)at, MPI_DOUBLE, recv, rc, rc + P, MPI_DOUBLE, comm) != MPI_SUCCESS) {
    st = SMX_E_INTERNAL;
    goto out;
  }
  /* rank q's block holds its rows in order: a cursor per block (rc's first half) */
  for (int q = 0; q < P; q++) rc[q] = rc[P + q];
  for (size_t r = 0; r < n; r++) {
    size_t C = 0;
    double *w = scr, *xs = w + 2 * cmax, *w2 = w + 3 * cmax;
    int64_t *idx = (int64_t *)(void *)(w + cmax), *idx2 = (int64_t *)(void *)(w + 4 * cmax);
    for (int q = 0; q < P; q++) {
      int k = cnt[n + (size_t)q * n + r];
      for (int e = 0; e < k; e++, C++) {
        const double *d = recv + rc[q] + 3 * e;
        w[C] = d[0];
        idx[C] = (int64_t)d[1];
        xs[C] = d[2];
      }
      rc[q] += 3 * k;
    }
    if (tokens[r] == -3)
      tokens[r] = smx_mpi_filtered_token(cfg, w, idx, xs, C, z[r], (float)mrow[r], row0 + r, w2, idx2);
  }
out:
  free(z);
  free(rho);
  free(cnt);
  free(rc);
  free(send);
  free(recv);
  free(scr);
  return st;
}

smx_status smx_mpi_sample_rows_f32(MPI_Comm comm, const float *x, size_t ldx, int64_t *tokens, size_t rows,
                                   size_t local_cols, const smx_sample_params *params, uint64_t seed, uint64_t step,
                                   const smx_options *opt) {
  smx_status st = check_local(x, ldx, rows, local_cols, params, tokens, opt);
  smx_sample_params p;
  memset(&p, 0, sizeof p);
  if (params) p = *params;
  smx_options local;
  double inv_t;
  if (smx_mpi_local_options(opt, &local, &inv_t) != SMX_OK) memset(&local, 0, sizeof local);
  smx_mpi_call c;
  smx_status bs = smx_mpi_begin(&c, comm, SMX_MPI_FN_SAMPLE, rows, local_cols, smx_mpi_bits(p.temperature),
                                params_hash(&p, seed, step), p.greedy || p.temperature == 0.0 ? 0 : p.top_k);
  if (bs != SMX_OK) return bs;
  if (st == SMX_OK && c.mismatch) st = SMX_E_INVALID_ARG;
  smx_mpi_sample_cfg cfg;
  smx_mpi_sample_cfg_init(&cfg, &p, seed, step);
  int gumbel_or_greedy = cfg.greedy || p.method == SMX_SAMPLE_GUMBEL_MAX;
  /* the candidates (none when greedy): rank 0's number, so that every rank's records match */
  size_t n = c.rows, kk = (size_t)c.ref[2], w = H + 2 * kk;
  if (n >= INT32_MAX - 2 || kk >= INT32_MAX / 4 || (n + 2) > SIZE_MAX / 8 / w) return SMX_E_INVALID_ARG;
  double *rec = malloc((n + 2) * w * sizeof *rec);
  /* collective 2's records and the top-k scratch, allocated before any
   * collective so that a failure here reaches every rank as a status */
  double *best = malloc((n * 4 + 5 * kk + 1) * sizeof *best), *mrow = best ? best + 3 * n + 5 * kk : NULL;
  MPI_Datatype type;
  if (!rec || !best || !smx_mpi_record_type(H, kk, &type)) {
    free(rec);
    free(best);
    return SMX_E_NOMEM;
  }
  for (size_t r = 0; r < n + 2; r++) {
    double *d = rec + r * w;
    d[0] = -INFINITY;
    d[1] = -1.0;
    d[2] = 0.0;
    smx_mpi_fill_cands(d + H, kk, NULL, NULL, 0, 0);
  }
  if (st == SMX_OK && local_cols > 0 && n > 0) st = local_records(x, ldx, n, local_cols, kk, c.col0, &local, rec, w);
  if (st != SMX_OK)
    for (size_t r = 0; r < n; r++) rec[r * w] = -INFINITY, rec[r * w + 1] = -1.0;
  rec[n * w] = (double)st;
  rec[(n + 1) * w + 2] = (double)local_cols;
  if (MPI_Allreduce(MPI_IN_PLACE, rec, (int)(n + 2), type, smx_mpi_maxloc_op(), comm) != MPI_SUCCESS)
    st = SMX_E_INTERNAL;
  else
    st = smx_mpi_status_of(rec[n * w]);
  MPI_Type_free(&type);
  double total = rec[(n + 1) * w + 2];
  if (st == SMX_OK && n > 0 && (total == 0.0 || total > (double)UINT32_MAX)) st = SMX_E_INVALID_ARG;
  int use_k = kk > 0 && (double)kk < total;
  if (st == SMX_OK && !cfg.greedy && !gumbel_or_greedy) st = SMX_E_UNSUPPORTED;
  for (size_t r = 0; r < n && st == SMX_OK; r++)
    if (kk && rec[r * w + H + 1] == SMX_MPI_MERGE_FAILED) st = SMX_E_NOMEM;
  if (st != SMX_OK || n == 0) {
    free(rec);
    free(best);
    return st;
  }

  /* decided here: special rows, greedy, and top-k's kept set (on every rank) */
  int need2 = 0, nucleus = 0;
  for (size_t r = 0; r < n; r++) {
    const double *d = rec + r * w;
    double M = d[0];
    uint64_t row = p.row_offset + r;
    best[3 * r] = -INFINITY;
    best[3 * r + 1] = -1.0;
    best[3 * r + 2] = 0.0;
    tokens[r] = -2;   /* collective 2 decides */
    if (!(M > -INFINITY)) tokens[r] = -1;   /* NaN, or every entry -inf */
    else if (cfg.greedy) tokens[r] = (int64_t)d[1];
    else if (M != INFINITY && use_k) tokens[r] = smx_mpi_topk_token(&cfg, d + H, kk, (float)M, row, best + 3 * n);
    else if (M != INFINITY && cfg.use_p) tokens[r] = -3, nucleus = 1;   /* top-p over the whole row */
    mrow[r] = M;
    if (tokens[r] != -2) continue;
    need2 = 1;
    if (local_cols > 0) local_best(&cfg, x + r * ldx, local_cols, c.col0, (float)M, row, best + 3 * r);
  }
  free(rec);
  /* need2 is the same on every rank: it depends only on collective 1's results */
  if (st == SMX_OK && need2) {
    if (MPI_Type_contiguous(3, MPI_DOUBLE, &type) != MPI_SUCCESS || MPI_Type_commit(&type) != MPI_SUCCESS) {
      st = SMX_E_INTERNAL;
    } else {
      if (MPI_Allreduce(MPI_IN_PLACE, best, (int)n, type, smx_mpi_maxloc_op(), comm) != MPI_SUCCESS)
        st = SMX_E_INTERNAL;
      MPI_Type_free(&type);
    }
    for (size_t r = 0; r < n && st == SMX_OK; r++)
      if (tokens[r] == -2) tokens[r] = (int64_t)best[3 * r + 1];
  }
  /* nucleus is the same on every rank too */
  if (st == SMX_OK && nucleus)
    st = nucleus_tokens(comm, c.size, x, ldx, local_cols, c.col0, n, mrow, total, &cfg, p.row_offset, tokens);
  free(best);
  return st;
}
