/*
 * Softmax, log-softmax and log-sum-exp over rows, and the backward passes of
 * the first two, on the device (the launchers of job.h).
 *
 * A row of up to seg entries is one warp's (up to 32 * PER entries; several
 * rows per block) or one block's (up to 1024 lanes), held in registers: read
 * once, reduced across lanes, written once. A longer row is cut into segments
 * of seg entries, one block each (grid.y): each block writes its segment's
 * state to the workspace, one block per row merges them in a fixed tree, and
 * a third kernel reads each segment again and writes it. No atomics: the
 * results are the same bits on every run.
 */
#include <cuda_runtime.h>

#include "cuda/rows.cuh"

/* -------------------------------------------------------------- forward */
/* OP: SMX_CUDA_SOFTMAX (0), SMX_CUDA_LOG_SOFTMAX (1), SMX_CUDA_LOGSUMEXP (2), as smx_cuda_op */
template <int DT, int OP>
__device__ __forceinline__ float fwd_value(float x, float m, float inv_s, float log_s, const smx_cu_job &j,
                                           float inv_tf) {
  if (OP == 0) return cu_exp2c(x - m, j.c_hi, j.c_lo) * inv_s;
  return (x - m) * inv_tf - log_s;
}

/* One row (nseg == 1) or one segment of a row (blockIdx.y) per blockDim.x lanes. */
template <int DT, int OP, int PER>
__global__ void __launch_bounds__(SMX_CU_MAX_LANES) k_forward(smx_cu_job j) {
  const unsigned lane = threadIdx.x, lanes = blockDim.x;
  const size_t row = (size_t)blockIdx.x * blockDim.y + threadIdx.y;
  const bool valid = row < j.rows;
  const size_t c0 = (size_t)blockIdx.y * j.seg;
  const size_t c1 = c0 + j.seg < j.cols ? c0 + j.seg : j.cols;
  const char *xr = (const char *)j.a + (valid ? row : 0) * j.lda * cu_es<DT>();
  float v[PER];
  float m = -INFINITY;
  long long cnt = 0;
#pragma unroll
  for (int k = 0; k < PER; k++) {
    size_t c = c0 + (size_t)k * lanes + lane;
    float x = valid && c < c1 ? cu_ld<DT>(xr, c) : -INFINITY;
    v[k] = x;
    cnt += cu_count(x);
    m = fmaxf(m, x);
  }
  m = cu_lanes_max(m);
  cnt = cu_lanes_sum_ll(cnt);
  double s = 0.0;
#pragma unroll
  for (int k = 0; k < PER; k++) s += (double)cu_exp2c(v[k] - m, j.c_hi, j.c_lo);
  s = cu_lanes_sum(s);
  if (!valid) return;   /* after the last reduction: every lane took part */
  const int nan = (int)(cnt >> 32), ninf = (int)(cnt & 0xffffffffLL);
  if (j.nseg > 1) {     /* a segment: its state waits for the merge */
    if (lane == 0) {
      smx_cu_state st = cu_state_identity();
      st.m = m;
      st.s = s;
      st.nan = nan;
      st.ninf = ninf;
      ((smx_cu_state *)j.ws)[row * j.nseg + blockIdx.y] = st;
    }
    return;
  }
  const bool special = cu_special_row(nan, ninf, m);
  if (OP == 2) {
    if (lane == 0) j.vec[row] = special ? cu_special_lse(nan, ninf, j.flags) : (float)((double)m * j.inv_t + log(s));
    return;
  }
  const float inv_s = (float)(1.0 / s), log_s = (float)log(s), inv_tf = (float)j.inv_t;
  char *yr = (char *)j.out + row * j.ldo * cu_es<DT>();
#pragma unroll
  for (int k = 0; k < PER; k++) {
    size_t c = c0 + (size_t)k * lanes + lane;
    if (c < c1) {
      float y = special ? cu_special_value(OP == 1, nan, ninf, j.flags, v[k])
                        : fwd_value<DT, OP>(v[k], m, inv_s, log_s, j, inv_tf);
      cu_st<DT>(yr, c, y);
    }
  }
}

/* The merge of a long row's segment states, one block per row: the row's state after the segment states
 * (log-sum-exp: the output itself). online: (max, sum) states (forward), else plain sums (backward). */
template <int OP>
__global__ void __launch_bounds__(SMX_CU_MERGE_THREADS) k_merge(smx_cu_job j) {
  const size_t row = blockIdx.x;
  smx_cu_state *ws = (smx_cu_state *)j.ws;
  smx_cu_state st = cu_merge_segments(ws + row * j.nseg, j.nseg, j.c, OP <= 2);
  if (threadIdx.x != 0) return;
  if (OP == 2) {
    j.vec[row] = cu_special_row(st.nan, st.ninf, st.m) ? cu_special_lse(st.nan, st.ninf, j.flags)
                                                       : (float)((double)st.m * j.inv_t + log(st.s));
    return;
  }
  ws[j.rows * j.nseg + row] = st;
}

/* The writes of a long row's segment, from the merged state. */
template <int DT, int OP>
__global__ void __launch_bounds__(1024) k_forward_write(smx_cu_job j) {
  const size_t row = blockIdx.x;
  const smx_cu_state st = ((const smx_cu_state *)j.ws)[j.rows * j.nseg + row];
  const size_t c0 = (size_t)blockIdx.y * j.seg;
  const size_t c1 = c0 + j.seg < j.cols ? c0 + j.seg : j.cols;
  const char *xr = (const char *)j.a + row * j.lda * cu_es<DT>();
  char *yr = (char *)j.out + row * j.ldo * cu_es<DT>();
  const bool special = cu_special_row(st.nan, st.ninf, st.m);
  const float inv_s = (float)(1.0 / st.s), log_s = (float)log(st.s), inv_tf = (float)j.inv_t;
#pragma unroll 4
  for (size_t c = c0 + threadIdx.x; c < c1; c += blockDim.x) {
    float x = cu_ld<DT>(xr, c);
    float y = special ? cu_special_value(OP == 1, st.nan, st.ninf, j.flags, x)
                      : fwd_value<DT, OP>(x, st.m, inv_s, log_s, j, inv_tf);
    cu_st<DT>(yr, c, y);
  }
}

/* log-sum-exp of empty rows: -inf each (smx.h) */
__global__ void k_fill(float *p, size_t n, float v) {
  for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) p[i] = v;
}

static unsigned grid_for(size_t n, unsigned per_block) {
  size_t g = (n + per_block - 1) / per_block;
  return g > 65535u * 16u ? 65535u * 16u : (unsigned)g;
}

template <int DT, int OP>
static cudaError_t launch_forward(const smx_cu_job *j) {
  cudaStream_t s = (cudaStream_t)j->stream;
  if (j->nseg == 1) {
    unsigned lanes = cu_lanes_for(j->cols, SMX_CU_FWD_PER);
    unsigned rpb = lanes >= 256 ? 1 : 256 / lanes;
    size_t blocks = (j->rows + rpb - 1) / rpb;
    if (blocks > 0x7fffffffu) return cudaErrorInvalidConfiguration;
    k_forward<DT, OP, SMX_CU_FWD_PER><<<dim3((unsigned)blocks, 1), dim3(lanes, rpb), 0, s>>>(*j);
    return cudaGetLastError();
  }
  if (j->rows > 0x7fffffffu || j->nseg > 65535u) return cudaErrorInvalidConfiguration;
  dim3 grid((unsigned)j->rows, (unsigned)j->nseg);
  k_forward<DT, OP, SMX_CU_FWD_PER><<<grid, dim3(SMX_CU_MAX_LANES, 1), 0, s>>>(*j);
  k_merge<OP><<<(unsigned)j->rows, SMX_CU_MERGE_THREADS, 0, s>>>(*j);
  if (OP != 2) k_forward_write<DT, OP><<<grid, 1024, 0, s>>>(*j);
  return cudaGetLastError();
}

template <int DT>
static cudaError_t forward_dt(const smx_cu_job *j) {
  switch (j->op) {
    case 0: return launch_forward<DT, 0>(j);
    case 1: return launch_forward<DT, 1>(j);
    default: return launch_forward<DT, 2>(j);
  }
}

extern "C" int smx_cu_launch_forward(const smx_cu_job *j) {
  if (j->cols == 0) {   /* log-sum-exp of empty rows (the others return before) */
    k_fill<<<grid_for(j->rows, 256), 256, 0, (cudaStream_t)j->stream>>>(j->vec, j->rows, -INFINITY);
    return (int)cudaGetLastError();
  }
  switch (j->dtype) {
    case SMX_CU_F32: return (int)forward_dt<SMX_CU_F32>(j);
    case SMX_CU_F16: return (int)forward_dt<SMX_CU_F16>(j);
    default: return (int)forward_dt<SMX_CU_BF16>(j);
  }
}

extern "C" int smx_cu_launch_fill(float *p, float v, void *stream) {
  k_fill<<<1, 32, 0, (cudaStream_t)stream>>>(p, 1, v);
  return (int)cudaGetLastError();
}

/* ------------------------------------------------------------- backward */
/* OP 3: softmax, dx = (1/T) y (dy - <dy, y>); OP 4: log-softmax, dx = (1/T) (dy - exp(y) sum(dy)) */
template <int OP>
__device__ __forceinline__ float bwd_value(float y, float dy, float r, float inv_tf) {
  if (OP == 3) return inv_tf * (y * (dy - r));
  return inv_tf * (dy - expf(y) * r);
}

template <int OP>
__device__ __forceinline__ double bwd_term(float y, float dy) {
  return OP == 3 ? (double)dy * (double)y : (double)dy;
}

template <int DT, int OP, int PER>
__global__ void __launch_bounds__(SMX_CU_MAX_LANES) k_backward(smx_cu_job j) {
  const unsigned lane = threadIdx.x, lanes = blockDim.x;
  const size_t row = (size_t)blockIdx.x * blockDim.y + threadIdx.y;
  const bool valid = row < j.rows;
  const size_t c0 = (size_t)blockIdx.y * j.seg;
  const size_t c1 = c0 + j.seg < j.cols ? c0 + j.seg : j.cols;
  const size_t r = valid ? row : 0;
  const char *yr = (const char *)j.a + r * j.lda * cu_es<DT>();
  const char *dyr = (const char *)j.b + r * j.ldb * cu_es<DT>();
  float yv[PER], dv[PER];
  double acc = 0.0;
#pragma unroll
  for (int k = 0; k < PER; k++) {
    size_t c = c0 + (size_t)k * lanes + lane;
    bool in = valid && c < c1;
    yv[k] = in ? cu_ld<DT>(yr, c) : 0.0f;
    dv[k] = in ? cu_ld<DT>(dyr, c) : 0.0f;
    acc += bwd_term<OP>(yv[k], dv[k]);
  }
  acc = cu_lanes_sum(acc);
  if (!valid) return;
  if (j.nseg > 1) {
    if (lane == 0) {
      smx_cu_state st = cu_state_identity();
      st.s = acc;
      ((smx_cu_state *)j.ws)[row * j.nseg + blockIdx.y] = st;
    }
    return;
  }
  const float rf = (float)acc, inv_tf = (float)j.inv_t;
  char *dxr = (char *)j.out + row * j.ldo * cu_es<DT>();
#pragma unroll
  for (int k = 0; k < PER; k++) {
    size_t c = c0 + (size_t)k * lanes + lane;
    if (c < c1) cu_st<DT>(dxr, c, bwd_value<OP>(yv[k], dv[k], rf, inv_tf));
  }
}

template <int DT, int OP>
__global__ void __launch_bounds__(1024) k_backward_write(smx_cu_job j) {
  const size_t row = blockIdx.x;
  const float rf = (float)((const smx_cu_state *)j.ws)[j.rows * j.nseg + row].s, inv_tf = (float)j.inv_t;
  const size_t c0 = (size_t)blockIdx.y * j.seg;
  const size_t c1 = c0 + j.seg < j.cols ? c0 + j.seg : j.cols;
  const char *yr = (const char *)j.a + row * j.lda * cu_es<DT>();
  const char *dyr = (const char *)j.b + row * j.ldb * cu_es<DT>();
  char *dxr = (char *)j.out + row * j.ldo * cu_es<DT>();
#pragma unroll 4
  for (size_t c = c0 + threadIdx.x; c < c1; c += blockDim.x)
    cu_st<DT>(dxr, c, bwd_value<OP>(cu_ld<DT>(yr, c), cu_ld<DT>(dyr, c), rf, inv_tf));
}

template <int DT, int OP>
static cudaError_t launch_backward(const smx_cu_job *j) {
  cudaStream_t s = (cudaStream_t)j->stream;
  if (j->nseg == 1) {
    unsigned lanes = cu_lanes_for(j->cols, SMX_CU_BWD_PER);
    unsigned rpb = lanes >= 256 ? 1 : 256 / lanes;
    size_t blocks = (j->rows + rpb - 1) / rpb;
    if (blocks > 0x7fffffffu) return cudaErrorInvalidConfiguration;
    k_backward<DT, OP, SMX_CU_BWD_PER><<<dim3((unsigned)blocks, 1), dim3(lanes, rpb), 0, s>>>(*j);
    return cudaGetLastError();
  }
  if (j->rows > 0x7fffffffu || j->nseg > 65535u) return cudaErrorInvalidConfiguration;
  dim3 grid((unsigned)j->rows, (unsigned)j->nseg);
  k_backward<DT, OP, SMX_CU_BWD_PER><<<grid, dim3(SMX_CU_MAX_LANES, 1), 0, s>>>(*j);
  k_merge<OP><<<(unsigned)j->rows, SMX_CU_MERGE_THREADS, 0, s>>>(*j);
  k_backward_write<DT, OP><<<grid, 1024, 0, s>>>(*j);
  return cudaGetLastError();
}

template <int DT>
static cudaError_t backward_dt(const smx_cu_job *j) {
  return j->op == 3 ? launch_backward<DT, 3>(j) : launch_backward<DT, 4>(j);
}

extern "C" int smx_cu_launch_backward(const smx_cu_job *j) {
  switch (j->dtype) {
    case SMX_CU_F32: return (int)backward_dt<SMX_CU_F32>(j);
    case SMX_CU_F16: return (int)backward_dt<SMX_CU_F16>(j);
    default: return (int)backward_dt<SMX_CU_BF16>(j);
  }
}
