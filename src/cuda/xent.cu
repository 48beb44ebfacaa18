/*
 * The fused cross-entropy on the device (smx_cuda.h), the formulas and the
 * special rows of smx_grad.h as src/ops/xent_row.c computes them:
 *   1. the targets are checked and the rows not ignored counted (the workspace
 *      header, cleared first); every later kernel returns at once if a target
 *      was bad, so a refused call writes nothing;
 *   2. each row (or segment of a long row) is read into registers once: (max,
 *      sum) state, the logits' sum with label smoothing, and for a row that
 *      fits, the loss, lse and gradient at once (in place over the logits when
 *      asked: the target's logit is read before anything is written);
 *      a long row's segments are merged per row in a fixed tree, then read
 *      again to write the gradient;
 *   3. SUM / MEAN: the row losses (double, in the workspace) summed in a fixed
 *      tree by one block.
 */
#include <cuda_runtime.h>

#include "cuda/rows.cuh"

/* double to float, saturating at +-FLT_MAX (as the CPU's sat_float) */
__device__ __forceinline__ float sat_float(double v) {
  return v > FLT_MAX ? FLT_MAX : v < -FLT_MAX ? -FLT_MAX : (float)v;
}

__device__ __forceinline__ smx_cu_xent_header *header(const smx_cu_job &j) { return (smx_cu_xent_header *)j.ws; }
__device__ __forceinline__ double *row_losses(const smx_cu_job &j) {
  return (double *)((char *)j.ws + SMX_CU_XENT_HEADER);
}
__device__ __forceinline__ smx_cu_state *states(const smx_cu_job &j) {
  return (smx_cu_state *)((char *)j.ws + SMX_CU_XENT_HEADER + j.rows * sizeof(double));
}

/* ------------------------------------------------------------- 1. targets */
__global__ void k_targets(smx_cu_job j) {
  smx_cu_xent_header *h = header(j);
  unsigned long long count = 0;
  unsigned bad = 0;
  for (size_t r = (size_t)blockIdx.x * blockDim.x + threadIdx.x; r < j.rows; r += (size_t)gridDim.x * blockDim.x) {
    int64_t t = j.targets[r];
    if (t == j.ignore) continue;
    if (t < 0 || (uint64_t)t >= (uint64_t)j.cols) bad = 1;
    else count++;
  }
  /* integer sums: exact in any order */
  if (bad) atomicOr(&h->bad, 1u);
  if (count) atomicAdd(&h->count, count);
}

/* ------------------------------------------------------------ the row */
/* What a row's writes need, from its merged state (the same for every lane and block of the row). */
typedef struct xent_row {
  int special, nan_all, posinf, ignored;
  size_t t;
  float m, a, b;              /* normal rows: g_j = a 2^((x_j - m) c) + b                */
  float g_t;                  /* normal rows: the target's element, from double          */
  double gs, zf, pk, eps_n;   /* special rows                                            */
  double loss;
  float lse;
} xent_row;

__device__ xent_row finish_row(const smx_cu_job &j, const smx_cu_state &st, int64_t t64) {
  xent_row r;
  const double n = (double)j.cols;
  const smx_cu_xent_header *h = header(j);
  double s = j.grad_scale;
  if (j.reduction == SMX_REDUCTION_MEAN) s = h->count ? j.grad_scale / (double)h->count : 0.0;
  r.ignored = t64 == j.ignore;
  r.t = r.ignored ? 0 : (size_t)t64;
  r.special = cu_special_row(st.nan, st.ninf, st.m);
  r.nan_all = 0;
  r.posinf = 0;
  r.m = st.m;
  r.a = r.b = r.g_t = 0.0f;
  r.gs = s * j.inv_t;
  r.eps_n = j.eps / n;
  r.zf = 1.0;
  r.pk = 0.0;
  r.loss = 0.0;
  if (r.special) {
    r.lse = cu_special_lse(st.nan, st.ninf, j.flags);
    if (r.ignored) return r;
    r.nan_all = st.nan || (st.ninf == 0 && (j.flags & SMX_FLAG_MASKED_ROW_NAN));
    if (r.nan_all) {
      r.loss = NAN;
    } else if (st.ninf > 0) {
      r.posinf = 1;
      r.pk = 1.0 / (double)st.ninf;
      r.zf = j.z > 0.0 ? INFINITY : 1.0;
      double l = 0.0;
      if (j.eps < 1.0) l += (1.0 - j.eps) * (st.xt == INFINITY ? log((double)st.ninf) : INFINITY);
      if (j.eps > 0.0) l += j.eps * ((double)st.ninf == n ? log(n) : INFINITY);
      if (j.z > 0.0) l = INFINITY;
      r.loss = l;
    } else {
      r.loss = INFINITY;   /* every entry -inf */
    }
    return r;
  }
  const double logd = log(st.s), lse_d = (double)st.m * j.inv_t + logd;
  r.lse = (float)lse_d;
  if (r.ignored) return r;
  r.zf = 1.0 + 2.0 * j.z * lse_d;
  r.a = sat_float(r.gs * r.zf / st.s);
  r.b = sat_float(-r.gs * j.eps / n);
  const double pt = exp((st.xt - (double)st.m) * j.inv_t - logd);
  r.g_t = sat_float(r.gs * (pt * r.zf - j.eps / n - (1.0 - j.eps)));
  double l = 0.0;   /* terms with a zero coefficient are left out (no 0 * inf) */
  if (j.eps < 1.0) l += (1.0 - j.eps) * (((double)st.m - st.xt) * j.inv_t + logd);
  if (j.eps > 0.0) l += j.eps * (((double)st.m - st.sx / n) * j.inv_t + logd);
  if (j.z > 0.0) l += j.z * lse_d * lse_d;
  r.loss = l;
  return r;
}

/* the gradient's element c of a row with logit x */
__device__ __forceinline__ float grad_value(const xent_row &r, const smx_cu_job &j, float x, size_t c) {
  if (r.ignored) return 0.0f;
  if (r.special) {
    if (r.nan_all) return NAN;
    double p = r.posinf && x == INFINITY ? r.pk : 0.0;
    double v = (p > 0.0 ? p * r.zf : 0.0) - r.eps_n - (c == r.t ? 1.0 - j.eps : 0.0);
    return sat_float(r.gs * v);
  }
  if (c == r.t) return r.g_t;
  return cu_exp2c(x - r.m, j.c_hi, j.c_lo) * r.a + r.b;
}

/* the row's loss and lse (one thread) */
__device__ __forceinline__ void put_row(const smx_cu_job &j, size_t row, const xent_row &r) {
  if (j.vec) j.vec[row] = r.lse;
  if (j.reduction == SMX_REDUCTION_NONE) j.loss[row] = (float)r.loss;
  else row_losses(j)[row] = r.loss;
}

/* ------------------------------------------------ 2. rows and segments */
template <int DT, int PER>
__global__ void __launch_bounds__(SMX_CU_MAX_LANES) k_xent(smx_cu_job j) {
  if (header(j)->bad) return;   /* the same for the whole grid */
  const unsigned lane = threadIdx.x, lanes = blockDim.x;
  const size_t row = (size_t)blockIdx.x * blockDim.y + threadIdx.y;
  const bool valid = row < j.rows;
  const size_t c0 = (size_t)blockIdx.y * j.seg;
  const size_t c1 = c0 + j.seg < j.cols ? c0 + j.seg : j.cols;
  const char *xr = (const char *)j.a + (valid ? row : 0) * j.lda * cu_es<DT>();
  const int64_t t = valid ? j.targets[row] : j.ignore;
  const bool want_sum = j.eps > 0.0 && t != j.ignore;
  /* the target's logit, before any lane writes the gradient over the logits */
  const double xt = j.nseg == 1 && t != j.ignore ? (double)cu_ld<DT>(xr, (size_t)t) : 0.0;
  float v[PER];
  float m = -INFINITY;
  long long cnt = 0;
  double sx = 0.0;
#pragma unroll
  for (int k = 0; k < PER; k++) {
    size_t c = c0 + (size_t)k * lanes + lane;
    bool in = valid && c < c1;
    float x = in ? cu_ld<DT>(xr, c) : -INFINITY;
    v[k] = x;
    cnt += cu_count(x);
    m = fmaxf(m, x);
    if (want_sum && in) sx += (double)x;
  }
  m = cu_lanes_max(m);
  cnt = cu_lanes_sum_ll(cnt);
  double s = 0.0;
#pragma unroll
  for (int k = 0; k < PER; k++) s += (double)cu_exp2c(v[k] - m, j.c_hi, j.c_lo);
  s = cu_lanes_sum(s);
  if (j.eps > 0.0) sx = cu_lanes_sum(sx);   /* j.eps is the same for the whole block */
  cu_lanes_sync();                         /* every lane has read the target's logit */
  if (!valid) return;
  smx_cu_state st = cu_state_identity();
  st.m = m;
  st.s = s;
  st.sx = sx;
  st.xt = xt;
  st.nan = (int)(cnt >> 32);
  st.ninf = (int)(cnt & 0xffffffffLL);
  if (j.nseg > 1) {
    if (lane == 0) states(j)[row * j.nseg + blockIdx.y] = st;
    return;
  }
  const xent_row r = finish_row(j, st, t);
  if (lane == 0) put_row(j, row, r);
  if (!j.out) return;
  char *gr = (char *)j.out + row * j.ldo * cu_es<DT>();
#pragma unroll
  for (int k = 0; k < PER; k++) {
    size_t c = c0 + (size_t)k * lanes + lane;
    if (c < c1) cu_st<DT>(gr, c, grad_value(r, j, v[k], c));
  }
}

/* a long row: the merge of its segments, its loss and lse; the merged state kept for the writes */
template <int DT>
__global__ void __launch_bounds__(SMX_CU_MERGE_THREADS) k_xent_merge(smx_cu_job j) {
  if (header(j)->bad) return;
  const size_t row = blockIdx.x;
  smx_cu_state *ws = states(j);
  smx_cu_state st = cu_merge_segments(ws + row * j.nseg, j.nseg, j.c, true);
  if (threadIdx.x != 0) return;
  const int64_t t = j.targets[row];
  /* the target's logit: no kernel has written the gradient yet */
  st.xt = t != j.ignore ? (double)cu_ld<DT>((const char *)j.a + row * j.lda * cu_es<DT>(), (size_t)t) : 0.0;
  if (!(j.eps > 0.0 && t != j.ignore)) st.sx = 0.0;
  put_row(j, row, finish_row(j, st, t));
  ws[j.rows * j.nseg + row] = st;
}

template <int DT>
__global__ void __launch_bounds__(1024) k_xent_write(smx_cu_job j) {
  if (header(j)->bad) return;
  const size_t row = blockIdx.x;
  const smx_cu_state st = states(j)[j.rows * j.nseg + row];
  const xent_row r = finish_row(j, st, j.targets[row]);
  const size_t c0 = (size_t)blockIdx.y * j.seg;
  const size_t c1 = c0 + j.seg < j.cols ? c0 + j.seg : j.cols;
  const char *xr = (const char *)j.a + row * j.lda * cu_es<DT>();
  char *gr = (char *)j.out + row * j.ldo * cu_es<DT>();
#pragma unroll 4
  for (size_t c = c0 + threadIdx.x; c < c1; c += blockDim.x) cu_st<DT>(gr, c, grad_value(r, j, cu_ld<DT>(xr, c), c));
}

/* ------------------------------------------------------- 3. reductions */
__global__ void __launch_bounds__(1024) k_xent_reduce(smx_cu_job j) {
  const smx_cu_xent_header *h = header(j);
  if (h->bad) return;
  const double *l = row_losses(j);
  double acc = 0.0;
  for (size_t r = threadIdx.x; r < j.rows; r += blockDim.x) acc += l[r];
  acc = cu_lanes_sum(acc);
  if (threadIdx.x != 0) return;
  if (j.reduction == SMX_REDUCTION_MEAN) j.loss[0] = h->count ? (float)(acc / (double)h->count) : NAN;
  else j.loss[0] = (float)acc;
}

template <int DT>
static cudaError_t launch_xent(const smx_cu_job *j) {
  cudaStream_t s = (cudaStream_t)j->stream;
  if (j->rows > 0x7fffffffu || j->nseg > 65535u) return cudaErrorInvalidConfiguration;
  cudaError_t e = cudaMemsetAsync(j->ws, 0, sizeof(smx_cu_xent_header), s);
  if (e != cudaSuccess) return e;
  size_t tb = (j->rows + 255) / 256;
  k_targets<<<tb > 1024 ? 1024 : (unsigned)tb, 256, 0, s>>>(*j);
  if (j->nseg == 1) {
    unsigned lanes = cu_lanes_for(j->cols, SMX_CU_FWD_PER);
    unsigned rpb = lanes >= 256 ? 1 : 256 / lanes;
    k_xent<DT, SMX_CU_FWD_PER><<<dim3((unsigned)((j->rows + rpb - 1) / rpb), 1), dim3(lanes, rpb), 0, s>>>(*j);
  } else {
    dim3 grid((unsigned)j->rows, (unsigned)j->nseg);
    k_xent<DT, SMX_CU_FWD_PER><<<grid, dim3(SMX_CU_MAX_LANES, 1), 0, s>>>(*j);
    k_xent_merge<DT><<<(unsigned)j->rows, SMX_CU_MERGE_THREADS, 0, s>>>(*j);
    if (j->out) k_xent_write<DT><<<grid, 1024, 0, s>>>(*j);
  }
  if (j->reduction != SMX_REDUCTION_NONE) k_xent_reduce<<<1, 1024, 0, s>>>(*j);
  return cudaGetLastError();
}

extern "C" int smx_cu_launch_xent(const smx_cu_job *j) {
  switch (j->dtype) {
    case SMX_CU_F32: return (int)launch_xent<SMX_CU_F32>(j);
    case SMX_CU_F16: return (int)launch_xent<SMX_CU_F16>(j);
    default: return (int)launch_xent<SMX_CU_BF16>(j);
  }
}
