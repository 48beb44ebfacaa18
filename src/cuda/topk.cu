/*
 * Fused softmax + top-k (and log-softmax + top-k) over rows on the device,
 * in one read of the logits (Milakov & Gimelshein 2018, Algorithm 4, with a
 * block-wide radix select in place of the per-thread heap: select.cuh).
 *
 * A row of up to SMX_CU_FWD_SEG entries is one block's: the block holds it
 * in registers, forms its (max, sum) state, selects its k largest keys,
 * sorts them and writes the k values and indices. A longer row is cut into
 * segments of SMX_CU_FWD_SEG, one block each (grid.y); each leaves its state
 * and its sorted candidates (up to k keys) in the workspace, and one block
 * per row merges the states in a fixed tree and selects the row's k among
 * the candidates. The same segment kernel serves the sampler's top-k path
 * (sample.cu), which always keeps the candidates in the workspace.
 */
#include <cuda_runtime.h>

#include "cuda/select.cuh"
#include "cuda/topk.cuh"

/* ----------------------------------------------------------- the values */
/* The k results of a row from its sorted keys and state (smx_topk.h: the CPU's smx_topk_finish). */
template <int LOG>
__device__ __forceinline__ void topk_write(const cu_key_t *keys, const smx_cu_state &st, const smx_cu_job &j,
                                           size_t row) {
  const bool special = cu_special_row(st.nan, st.ninf, st.m);
  const double inv_d = 1.0 / st.s, log_d = log(st.s);
  for (size_t q = threadIdx.x; q < j.k; q += blockDim.x) {
    cu_key_t key = keys[q];
    float x = cu_key_value(key), v;
    long long idx = cu_key_col(key);
    if (st.nan) {
      v = NAN;
      idx = -1;
    } else if (special) {
      v = cu_special_value(LOG != 0, st.nan, st.ninf, j.flags, x);
    } else if (LOG) {
      v = (float)(((double)x - (double)st.m) * j.inv_t - log_d);
    } else {
      v = (float)(exp2(((double)x - (double)st.m) * j.c) * inv_d);
    }
    j.values[row * j.k + q] = v;
    j.indices[row * j.k + q] = (int64_t)idx;
  }
}

/* ------------------------------------------------------------ segments */
/* One row (nseg == 1) or one segment of a row (blockIdx.y) per block of blockDim.x lanes, PER entries each.
 * MODE 0: softmax top-k, 1: log-softmax top-k (both write the results when the row is one segment),
 * 2: the candidates and state always go to the workspace (long rows, and the sampler). */
template <int DT, int MODE, int PER>
__global__ void __launch_bounds__(SMX_CU_MAX_LANES) k_topk_segment(smx_cu_job j) {
  __shared__ unsigned hist[256];
  __shared__ cu_select sel;
  __shared__ unsigned found;
  __shared__ cu_key_t keys[SMX_CU_MAX_TOPK];
  const unsigned lane = threadIdx.x, lanes = blockDim.x;
  const size_t row = blockIdx.x;
  const size_t c0 = (size_t)blockIdx.y * j.seg;
  const size_t c1 = c0 + j.seg < j.cols ? c0 + j.seg : j.cols;
  const char *xr = (const char *)j.a + row * j.lda * cu_es<DT>();
  float v[PER];
  float m = -INFINITY;
  long long cnt = 0;
#pragma unroll
  for (int q = 0; q < PER; q++) {
    size_t c = c0 + (size_t)q * lanes + lane;
    float x = c < c1 ? cu_ld<DT>(xr, c) : -INFINITY;
    v[q] = x;
    cnt += cu_count(x);
    m = fmaxf(m, x);
  }
  m = cu_lanes_max(m);
  cnt = cu_lanes_sum_ll(cnt);
  double s = 0.0;
#pragma unroll
  for (int q = 0; q < PER; q++) s += (double)cu_exp2c(v[q] - m, j.c_hi, j.c_lo);
  s = cu_lanes_sum(s);

  /* the k largest keys of the segment */
  const size_t len = c1 - c0;
  const unsigned kk = (unsigned)(j.k < len ? j.k : len);
  cu_select_init(&sel, kk);
  __syncthreads();
  while (!sel.done && sel.shift > 0) {
    for (unsigned b = lane; b < 256; b += lanes) hist[b] = 0;
    __syncthreads();
#pragma unroll
    for (int q = 0; q < PER; q++) {
      size_t c = c0 + (size_t)q * lanes + lane;
      cu_hist_add(hist, cu_select_bin(sel, cu_key(v[q], c), c < c1));
    }
    __syncthreads();
    cu_select_step(&sel, hist);
    __syncthreads();
  }
  const unsigned n2 = cu_pow2_at_least(kk);
  if (lane == 0) found = 0;
  for (unsigned q = kk + lane; q < n2; q += lanes) keys[q] = 0;   /* below every key of a row */
  __syncthreads();
#pragma unroll
  for (int q = 0; q < PER; q++) {
    size_t c = c0 + (size_t)q * lanes + lane;
    cu_key_t key = cu_key(v[q], c);
    if (c < c1 && cu_select_taken(sel, key)) keys[atomicAdd(&found, 1u)] = key;
  }
  __syncthreads();
  cu_sort_desc(keys, n2);

  smx_cu_state st = cu_state_identity();
  st.m = m;
  st.s = s;
  st.nan = (int)(cnt >> 32);
  st.ninf = (int)(cnt & 0xffffffffLL);
  if (MODE == 2 || j.nseg > 1) {
    const size_t seg = row * j.nseg + blockIdx.y;
    if (lane == 0) cu_topk_states(j)[seg] = st;
    cu_key_t *out = cu_topk_keys(j) + seg * j.k;
    for (unsigned q = lane; q < kk; q += lanes) out[q] = keys[q];
    return;
  }
  topk_write<MODE>(keys, st, j, row);
}

/* ---------------------------------------------------------------- merge */
template <int LOG>
__global__ void __launch_bounds__(SMX_CU_MERGE_THREADS) k_topk_merge(smx_cu_job j) {
  __shared__ cu_key_t keys[SMX_CU_MAX_TOPK];
  smx_cu_state st;
  cu_topk_merge_row(j, blockIdx.x, keys, &st);
  topk_write<LOG>(keys, st, j, blockIdx.x);
}

/* ------------------------------------------------------------- launchers */
template <int DT, int MODE>
static cudaError_t launch_segments(const smx_cu_job *j) {
  if (j->rows > 0x7fffffffu || j->nseg > 65535u) return cudaErrorInvalidConfiguration;
  unsigned lanes = j->nseg > 1 ? SMX_CU_MAX_LANES : cu_lanes_for(j->cols, SMX_CU_FWD_PER);
  dim3 grid((unsigned)j->rows, (unsigned)j->nseg);
  k_topk_segment<DT, MODE, SMX_CU_FWD_PER><<<grid, lanes, 0, (cudaStream_t)j->stream>>>(*j);
  return cudaGetLastError();
}

template <int DT>
static cudaError_t segments_dt(const smx_cu_job *j, int mode) {
  switch (mode) {
    case 0: return launch_segments<DT, 0>(j);
    case 1: return launch_segments<DT, 1>(j);
    default: return launch_segments<DT, 2>(j);
  }
}

extern "C" int smx_cu_launch_topk_segments(const smx_cu_job *j, int mode) {
  switch (j->dtype) {
    case SMX_CU_F32: return (int)segments_dt<SMX_CU_F32>(j, mode);
    case SMX_CU_F16: return (int)segments_dt<SMX_CU_F16>(j, mode);
    default: return (int)segments_dt<SMX_CU_BF16>(j, mode);
  }
}

extern "C" int smx_cu_launch_topk(const smx_cu_job *j) {
  const int log_form = j->op == SMX_CU_OP_LOG_TOPK;
  int e = smx_cu_launch_topk_segments(j, log_form);
  if (e || j->nseg == 1) return e;
  cudaStream_t s = (cudaStream_t)j->stream;
  if (log_form) k_topk_merge<1><<<(unsigned)j->rows, SMX_CU_MERGE_THREADS, 0, s>>>(*j);
  else k_topk_merge<0><<<(unsigned)j->rows, SMX_CU_MERGE_THREADS, 0, s>>>(*j);
  return (int)cudaGetLastError();
}
