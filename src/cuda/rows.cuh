/*
 * The device building blocks of the smx_cuda kernels (softmax.cu, xent.cu):
 * storage loads and stores, the exponential, the (max, sum) state and its
 * merge, the special-value policy of smx.h, and reductions across the lanes
 * that share a row. The one C++ feature used is a template parameter for the
 * storage type (and the operation), so that one kernel body serves every
 * dtype, as one kernel body per family does on the CPU.
 *
 * Accuracy (eps = 2^-24 rounding, 2^-23 = the headers' eps): a = x - m is
 * rounded once (the |t|/2 eps term of smx.h's bound); 2^(a c) is reduced with
 * FMAs against c = c_hi + c_lo, so its error does not grow with |a|, and
 * evaluated by a degree-7 polynomial on [-1/2, 1/2] (truncation 0.04 eps,
 * Horner about 1 ulp); sums are in double, in a fixed order; the scale 1/s is
 * rounded once and multiplied once. The build passes --fmad=false, so nothing
 * else is contracted.
 */
#ifndef SMX_CUDA_ROWS_CUH
#define SMX_CUDA_ROWS_CUH

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <float.h>
#include <math.h>
#include <stdint.h>

#include "cuda/job.h"
#include "smx/smx.h"

#define SMX_CU_FULL_MASK 0xffffffffu
#define SMX_CU_MAX_ROWS_PER_BLOCK 8

/* ---------------------------------------------------------------- storage */
template <int DT>
__device__ __forceinline__ float cu_ld(const void *p, size_t i) {
  if (DT == SMX_CU_F32) return ((const float *)p)[i];
  unsigned short u = ((const unsigned short *)p)[i];
  if (DT == SMX_CU_F16) return __half2float(__ushort_as_half(u));
  return __bfloat162float(__ushort_as_bfloat16(u));
}

template <int DT>
__device__ __forceinline__ void cu_st(void *p, size_t i, float v) {
  if (DT == SMX_CU_F32) {
    ((float *)p)[i] = v;
    return;
  }
  unsigned short u = DT == SMX_CU_F16 ? __half_as_ushort(__float2half_rn(v))
                                      : __bfloat16_as_ushort(__float2bfloat16_rn(v));
  ((unsigned short *)p)[i] = u;
}

template <int DT>
__device__ __forceinline__ size_t cu_es() {
  return DT == SMX_CU_F32 ? 4 : 2;
}

/* ------------------------------------------------------------ exponential */
/* 2^(a c) for a <= 0 (a = x - max), c = c_hi + c_lo; 0 below 2^-151.5 and for NaN (the rows where a is NaN,
 * -inf - -inf or inf - inf, are special rows, whose outputs come from the policy instead). */
__device__ __forceinline__ float cu_exp2c(float a, float c_hi, float c_lo) {
  float v = a * c_hi;
  if (!(v > -151.5f)) return 0.0f;
  float k = rintf(v);
  float r = fmaf(a, c_hi, -k);   /* a c_hi - k, one rounding: the reduction does not grow with |a| */
  r = fmaf(a, c_lo, r);
  float p = 1.525273380405984e-05f;   /* ln2^i / i!, i = 7 .. 0 */
  p = fmaf(p, r, 1.5403530393381606e-04f);
  p = fmaf(p, r, 1.3333558146428443e-03f);
  p = fmaf(p, r, 9.618129107628477e-03f);
  p = fmaf(p, r, 5.550410866482158e-02f);
  p = fmaf(p, r, 2.402265069591007e-01f);
  p = fmaf(p, r, 6.931471805599453e-01f);
  p = fmaf(p, r, 1.0f);
  int ki = (int)k;   /* in [-152, 0] */
  if (ki >= -126) return p * __int_as_float((ki + 127) << 23);
  return (p * __int_as_float((ki + 64 + 127) << 23)) * 0x1p-64f;   /* subnormal: one rounding, the last */
}

/* ------------------------------------------------------------- the state */
__device__ __forceinline__ smx_cu_state cu_state_identity() {
  smx_cu_state s;
  s.s = 0.0;
  s.sx = 0.0;
  s.xt = 0.0;
  s.m = -INFINITY;
  s.nan = 0;
  s.ninf = 0;
  s.pad = 0;
  return s;
}

/* a's sum on the scale of the larger max m: an exact-difference rescale in double */
__device__ __forceinline__ double cu_rescale(const smx_cu_state &a, float m, double c) {
  if (a.m == m) return a.s;
  if (a.s == 0.0) return 0.0;
  return a.s * exp2(((double)a.m - (double)m) * c);
}

/* The merge of two states (online: (max, sum) pairs; otherwise plain sums, the backward's). */
__device__ __forceinline__ smx_cu_state cu_merge(const smx_cu_state &a, const smx_cu_state &b, double c, bool online) {
  smx_cu_state r = a;
  r.nan = a.nan | b.nan;
  r.ninf = a.ninf + b.ninf;
  r.sx = a.sx + b.sx;
  if (online) {
    r.m = fmaxf(a.m, b.m);
    r.s = cu_rescale(a, r.m, c) + cu_rescale(b, r.m, c);
  } else {
    r.s = a.s + b.s;
  }
  return r;
}

/* ---------------------------------------------------------------- policy */
/* a row with a NaN, an entry at +inf, or nothing above -inf */
__device__ __forceinline__ bool cu_special_row(int nan, int ninf, float m) { return nan || ninf || m == -INFINITY; }

/* softmax (log_form 0) or log-softmax (1) of entry x of a special row (smx.h's policy) */
__device__ __forceinline__ float cu_special_value(bool log_form, int nan, int ninf, uint32_t flags, float x) {
  if (nan) return NAN;
  if (ninf) {
    if (x != INFINITY) return log_form ? -INFINITY : 0.0f;
    return log_form ? (float)-log((double)ninf) : (float)(1.0 / (double)ninf);
  }
  if (flags & SMX_FLAG_MASKED_ROW_NAN) return NAN;
  return log_form ? -INFINITY : 0.0f;
}

__device__ __forceinline__ float cu_special_lse(int nan, int ninf, uint32_t flags) {
  if (nan) return NAN;
  if (ninf) return INFINITY;
  return (flags & SMX_FLAG_MASKED_ROW_NAN) ? NAN : -INFINITY;
}

/* ------------------------------------------------- reductions over lanes */
/*
 * blockDim.x lanes share a row (32, or a multiple of 32 up to 1024 with
 * blockDim.y == 1); blockDim.y rows share a block (at most
 * SMX_CU_MAX_ROWS_PER_BLOCK). Every thread of the block must call these (no
 * thread leaves early), and every lane of a row gets the same bits: the
 * butterfly adds the same two operands on both sides of each exchange, and the
 * order is fixed, so the result is the same on every run.
 */
__device__ __forceinline__ void cu_lanes_sync() {
  if (blockDim.x > 32) __syncthreads();
  else __syncwarp();
}

__device__ __forceinline__ float cu_lanes_max(float v) {
  __shared__ float sh[SMX_CU_MAX_ROWS_PER_BLOCK][32];
  for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(SMX_CU_FULL_MASK, v, o));
  if (blockDim.x == 32) return v;
  int w = threadIdx.x >> 5, l = threadIdx.x & 31, nw = blockDim.x >> 5;
  __syncthreads();   /* an earlier call's readers are done */
  if (l == 0) sh[threadIdx.y][w] = v;
  __syncthreads();
  v = l < nw ? sh[threadIdx.y][l] : -INFINITY;
  for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(SMX_CU_FULL_MASK, v, o));
  return v;
}

__device__ __forceinline__ double cu_lanes_sum(double v) {
  __shared__ double sh[SMX_CU_MAX_ROWS_PER_BLOCK][32];
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(SMX_CU_FULL_MASK, v, o);
  if (blockDim.x == 32) return v;
  int w = threadIdx.x >> 5, l = threadIdx.x & 31, nw = blockDim.x >> 5;
  __syncthreads();
  if (l == 0) sh[threadIdx.y][w] = v;
  __syncthreads();
  v = l < nw ? sh[threadIdx.y][l] : 0.0;
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(SMX_CU_FULL_MASK, v, o);
  return v;
}

__device__ __forceinline__ long long cu_lanes_sum_ll(long long v) {
  __shared__ long long sh[SMX_CU_MAX_ROWS_PER_BLOCK][32];
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(SMX_CU_FULL_MASK, v, o);
  if (blockDim.x == 32) return v;
  int w = threadIdx.x >> 5, l = threadIdx.x & 31, nw = blockDim.x >> 5;
  __syncthreads();
  if (l == 0) sh[threadIdx.y][w] = v;
  __syncthreads();
  v = l < nw ? sh[threadIdx.y][l] : 0;
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(SMX_CU_FULL_MASK, v, o);
  return v;
}

/* NaN and +inf counts of one entry, packed: +inf in the low 32 bits, NaN in the high */
__device__ __forceinline__ long long cu_count(float x) {
  return x != x ? (1LL << 32) : (x == INFINITY ? 1LL : 0LL);
}

/* ------------------------------------------------ merging a long row's segments */
/* One block (blockDim.x threads, a power of two up to 1024) per row merges the row's nseg states in a fixed
 * tree; thread 0 gets the result. */
__device__ __forceinline__ smx_cu_state cu_merge_segments(const smx_cu_state *st, size_t nseg, double c, bool online) {
  __shared__ smx_cu_state sh[256];
  smx_cu_state acc = cu_state_identity();
  for (size_t i = threadIdx.x; i < nseg; i += blockDim.x) acc = cu_merge(acc, st[i], c, online);
  sh[threadIdx.x] = acc;
  __syncthreads();
  for (unsigned w = blockDim.x >> 1; w > 0; w >>= 1) {
    if (threadIdx.x < w) sh[threadIdx.x] = cu_merge(sh[threadIdx.x], sh[threadIdx.x + w], c, online);
    __syncthreads();
  }
  return sh[0];
}
#define SMX_CU_MERGE_THREADS 256

/* lanes per row for a fused row of n entries, PER per lane: a power of two in [32, 1024] */
static inline unsigned cu_lanes_for(size_t n, size_t per) {
  unsigned lanes = 32;
  while (lanes < SMX_CU_MAX_LANES && (size_t)lanes * per < n) lanes <<= 1;
  return lanes;
}

#endif
