/*
 * Sampling one token per row on the device (smx_cuda.h), with the CPU
 * library's parameters, filters and Philox streams (src/ops/sample_row.c).
 *
 * Two paths:
 *  - top-k (0 < top_k < cols): the segments' top-k candidates (topk.cu,
 *    mode 2) and one block per row that merges them, then redoes the CPU's
 *    work on the k candidates in the CPU's order and arithmetic: the weights
 *    exp2((x - m) c) in double, sorted by index, summed one after the other
 *    by one thread, the same walk of the inverse CDF, the same Gumbel noise;
 *  - the row path (no top-k): one block of SMX_CU_SAMPLE_THREADS per row,
 *    a few passes over the row: (max, NaN, +inf count, first argmax), then
 *    the filter and the draw. Weights are summed as 64-bit fixed-point
 *    integers (w 2^S, S = 62 - ceil(log2 cols), so no sum can overflow):
 *    integer sums are exact in any order, so the block's atomics and trees
 *    give the same bits every run, and the draw's inverse CDF is exact for
 *    those integers. Top-p finds the nucleus without a sort: a radix search
 *    over the bits of the f32 weights (three passes of 10 bits, each a
 *    histogram of counts and masses), which gives the weight w_B of the
 *    nucleus's last entry and, among entries of exactly that weight, how
 *    many (lowest index first) it takes. (The same threshold-by-mass idea as
 *    FlashInfer's pivot-based top-p, here exact instead of iterated.)
 */
#include <limits.h>
#include <string.h>

#include <cuda_runtime.h>

#include "cuda/topk.cuh"

#define LN2_D 0.69314718055994530941723212145818

/* ------------------------------------------------------ block reductions */
/* For a 1-D block whose threads all call (blockDim.x a multiple of 32). */
__device__ __forceinline__ unsigned long long block_max_u64(unsigned long long v) {
  __shared__ unsigned long long sh[32];
  for (int o = 16; o > 0; o >>= 1) {
    unsigned long long w = __shfl_xor_sync(SMX_CU_FULL_MASK, v, o);
    v = w > v ? w : v;
  }
  unsigned w = threadIdx.x >> 5, l = threadIdx.x & 31, nw = blockDim.x >> 5;
  __syncthreads();
  if (l == 0) sh[w] = v;
  __syncthreads();
  v = l < nw ? sh[l] : 0ull;
  for (int o = 16; o > 0; o >>= 1) {
    unsigned long long u = __shfl_xor_sync(SMX_CU_FULL_MASK, v, o);
    v = u > v ? u : v;
  }
  return v;
}

__device__ __forceinline__ unsigned long long block_sum_u64(unsigned long long v) {
  __shared__ unsigned long long sh[32];
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(SMX_CU_FULL_MASK, v, o);
  unsigned w = threadIdx.x >> 5, l = threadIdx.x & 31, nw = blockDim.x >> 5;
  __syncthreads();
  if (l == 0) sh[w] = v;
  __syncthreads();
  v = l < nw ? sh[l] : 0ull;
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(SMX_CU_FULL_MASK, v, o);
  return v;
}

/* (v, i) pairs: the larger v, then the lower i (i = -1: none, below everything) */
__device__ __forceinline__ bool arg_better(double va, long long ia, double vb, long long ib) {
  if (ia < 0) return false;
  if (ib < 0) return true;
  return va > vb || (va == vb && ia < ib);
}
__device__ __forceinline__ long long block_argmax(double v, long long i) {
  __shared__ double shv[32];
  __shared__ long long shi[32];
  for (int o = 16; o > 0; o >>= 1) {
    double v2 = __shfl_xor_sync(SMX_CU_FULL_MASK, v, o);
    long long i2 = __shfl_xor_sync(SMX_CU_FULL_MASK, i, o);
    if (arg_better(v2, i2, v, i)) v = v2, i = i2;
  }
  unsigned w = threadIdx.x >> 5, l = threadIdx.x & 31, nw = blockDim.x >> 5;
  __syncthreads();
  if (l == 0) shv[w] = v, shi[w] = i;
  __syncthreads();
  v = l < nw ? shv[l] : 0.0;
  i = l < nw ? shi[l] : -1;
  for (int o = 16; o > 0; o >>= 1) {
    double v2 = __shfl_xor_sync(SMX_CU_FULL_MASK, v, o);
    long long i2 = __shfl_xor_sync(SMX_CU_FULL_MASK, i, o);
    if (arg_better(v2, i2, v, i)) v = v2, i = i2;
  }
  return i;
}

/* Exclusive prefix sum over the block in thread order; *total gets the block's sum. */
__device__ __forceinline__ unsigned long long block_scan_u64(unsigned long long v, unsigned long long *total) {
  __shared__ unsigned long long sh[32];
  unsigned w = threadIdx.x >> 5, l = threadIdx.x & 31, nw = blockDim.x >> 5;
  unsigned long long incl = v;
  for (int o = 1; o < 32; o <<= 1) {
    unsigned long long u = __shfl_up_sync(SMX_CU_FULL_MASK, incl, o);
    if (l >= (unsigned)o) incl += u;
  }
  __syncthreads();
  if (l == 31) sh[w] = incl;
  __syncthreads();
  if (w == 0) {
    unsigned long long s = l < nw ? sh[l] : 0ull, si = s;
    for (int o = 1; o < 32; o <<= 1) {
      unsigned long long u = __shfl_up_sync(SMX_CU_FULL_MASK, si, o);
      if (l >= (unsigned)o) si += u;
    }
    sh[l] = si;   /* inclusive over the warps */
  }
  __syncthreads();
  *total = sh[nw - 1];
  return incl - v + (w ? sh[w - 1] : 0ull);
}

/* ---------------------------------------------------------------- the row */
typedef struct row_ctx {
  const char *x;
  size_t n;
  unsigned long long rownum;   /* the random stream's row */
  float m;
  int S;                        /* fixed-point scale: weights are floor(w 2^S) */
} row_ctx;

template <int DT>
__device__ __forceinline__ float row_x(const row_ctx &r, size_t i) {
  return cu_ld<DT>(r.x, i);
}

__device__ __forceinline__ unsigned long long fixed(double w, int S) { return __double2ull_rz(w * ldexp(1.0, S)); }

/* the CPU's double weight exp((x - m) / T) */
__device__ __forceinline__ double weight_d(float x, float m, double c) { return exp2(((double)x - (double)m) * c); }

/* the CPU's Gumbel score of entry i: (x - m) / T + g_i */
__device__ __forceinline__ double gumbel_score(const smx_cu_job &j, float x, float m, unsigned long long rownum,
                                               size_t i) {
  return ((double)x - (double)m) * j.c * LN2_D + cu_philox_gumbel(j.seed, rownum, j.step, (unsigned)i);
}

/* floor(u K) for u = (bits + 0.5) 2^-53, exactly: ((2 bits + 1) K) >> 54, in 128 bits */
__device__ __forceinline__ unsigned long long scaled_draw(unsigned long long bits, unsigned long long K) {
  unsigned long long a = 2 * bits + 1, lo = a * K, hi = __umul64hi(a, K);
  return (hi << 10) | (lo >> 54);
}

/* What a pass over the row asks of entry i: kept or not, and its fixed-point weight q. */
enum { F_POSINF, F_TIES, F_NUCLEUS, F_MIN_P };
typedef struct filter {
  int mode;
  int shift;          /* F_TIES, F_NUCLEUS: weight bits >> shift compared with prefix */
  unsigned prefix;
  long long last;     /* F_NUCLEUS: entries of the edge's weight are in up to this index */
  float thr;          /* F_MIN_P: x above it may pass                                     */
  int use_min;
} filter;

/* f32 weight of entry i on the row path's top-p (the device's exponential, as the normaliser's) */
template <int DT>
__device__ __forceinline__ float weight_f(const smx_cu_job &j, const row_ctx &r, size_t i) {
  return cu_exp2c(row_x<DT>(r, i) - r.m, j.c_hi, j.c_lo);
}

template <int DT>
__device__ __forceinline__ bool entry(const smx_cu_job &j, const row_ctx &r, const filter &f, size_t i,
                                      unsigned long long *q) {
  *q = 0;
  if (f.mode == F_POSINF) {
    *q = row_x<DT>(r, i) == INFINITY;
    return *q != 0;
  }
  if (f.mode == F_TIES) {
    *q = __float_as_uint(weight_f<DT>(j, r, i)) == f.prefix;
    return *q != 0;
  }
  if (f.mode == F_NUCLEUS) {
    float w = weight_f<DT>(j, r, i);
    unsigned u = __float_as_uint(w) >> f.shift;
    if (!(u > f.prefix || (u == f.prefix && (long long)i <= f.last))) return false;
    if (f.use_min && !((double)w >= j.min_p)) return false;
    *q = fixed(w, r.S);
    return true;
  }
  /* F_MIN_P (or no filter): the CPU's double weights, and its threshold on x below which none can pass */
  float x = row_x<DT>(r, i);
  if (!(x > f.thr)) return false;
  double w = weight_d(x, r.m, j.c);
  if (f.use_min && !(w >= j.min_p)) return false;
  *q = fixed(w, r.S);
  return true;
}

/* The entry at which the running sum of the weights q over [0, n) in index order first exceeds t (t below
 * their total); -1 if none. */
template <int DT>
__device__ long long walk_to(const smx_cu_job &j, const row_ctx &r, const filter &f, unsigned long long t) {
  __shared__ long long hit;
  if (threadIdx.x == 0) hit = -1;
  __syncthreads();
  unsigned long long run = 0;
  for (size_t base = 0; base < r.n; base += blockDim.x) {
    size_t i = base + threadIdx.x;
    unsigned long long qi = 0, total;
    if (i < r.n) entry<DT>(j, r, f, i, &qi);
    unsigned long long before = run + block_scan_u64(qi, &total);
    if (qi && before <= t && t < before + qi) hit = (long long)i;   /* one thread at most */
    __syncthreads();
    if (hit >= 0) break;
    run += total;
  }
  return hit;
}

/* The draw over the kept entries: Gumbel-max (the argmax of the scores over kept entries above -inf; +inf
 * entries: of the noise alone), or multinomial over their fixed-point weights in index order. */
template <int DT>
__device__ long long draw_kept(const smx_cu_job &j, const row_ctx &r, const filter &f) {
  if (j.gumbel) {
    double bv = 0.0;
    long long bi = -1;
    for (size_t i = threadIdx.x; i < r.n; i += blockDim.x) {
      unsigned long long q;
      float x = row_x<DT>(r, i);
      if (x > -INFINITY && entry<DT>(j, r, f, i, &q)) {
        double v = f.mode == F_POSINF ? cu_philox_gumbel(j.seed, r.rownum, j.step, (unsigned)i)
                                      : gumbel_score(j, x, r.m, r.rownum, i);
        if (arg_better(v, (long long)i, bv, bi)) bv = v, bi = (long long)i;
      }
    }
    return block_argmax(bv, bi);
  }
  unsigned long long part = 0;
  for (size_t i = threadIdx.x; i < r.n; i += blockDim.x) {
    unsigned long long q;
    if (entry<DT>(j, r, f, i, &q)) part += q;
  }
  const unsigned long long K = block_sum_u64(part);
  if (K == 0) return -1;   /* unreachable: the max is always kept, with weight 2^S */
  unsigned long long t;
  if (f.mode == F_POSINF) {   /* the CPU's: the floor(u c)-th of the c entries at +inf */
    t = (unsigned long long)(cu_philox_uniform(j.seed, r.rownum, j.step, 0) * (double)K);
    if (t >= K) t = K - 1;
  } else {
    t = scaled_draw(cu_philox_bits(j.seed, r.rownum, j.step, 0), K);
  }
  return walk_to<DT>(j, r, f, t);
}

/* The nucleus on the row path: the smallest prefix, in order of decreasing f32 weight then increasing index,
 * whose fixed-point mass reaches ceil(top_p Q), Q the row's. Returned in f (F_NUCLEUS): entries whose weight
 * bits, shifted right by f.shift, exceed f.prefix are in; equal ones up to index f.last (LLONG_MAX: all). */
template <int DT>
__device__ void nucleus(const smx_cu_job &j, const row_ctx &r, filter *f) {
  __shared__ unsigned long long hmass[1024];
  __shared__ unsigned hcnt[1024];
  __shared__ unsigned prefix;
  __shared__ int shift, done;
  __shared__ unsigned long long need;
  unsigned long long part = 0;
  for (size_t i = threadIdx.x; i < r.n; i += blockDim.x) part += fixed(weight_f<DT>(j, r, i), r.S);
  const unsigned long long Q = block_sum_u64(part);
  if (threadIdx.x == 0) {
    double tq = ceil(j.top_p * (double)Q);
    need = tq < 1.0 ? 1ull : tq >= (double)Q ? Q : (unsigned long long)tq;
    prefix = 0;
    shift = 30;   /* weights are in [0, 1]: bits 31 and 30 are 0 */
    done = 0;
  }
  __syncthreads();
  while (!done && shift > 0) {
    const int sh = shift - 10;
    for (unsigned b = threadIdx.x; b < 1024; b += blockDim.x) hmass[b] = 0, hcnt[b] = 0;
    __syncthreads();
    for (size_t i = threadIdx.x; i < r.n; i += blockDim.x) {
      float w = weight_f<DT>(j, r, i);
      unsigned u = __float_as_uint(w);
      if (shift == 30 || (u >> shift) == prefix) {
        unsigned d = (u >> sh) & 1023u;
        atomicAdd(&hmass[d], fixed(w, r.S));
        atomicAdd(&hcnt[d], 1u);
      }
    }
    __syncthreads();
    if (threadIdx.x < 32) {   /* warp 0: the bin where the mass from the top reaches need */
      const unsigned l = threadIdx.x;
      unsigned long long mine = 0;
      for (unsigned q = 0; q < 32; q++) mine += hmass[1023 - 32 * l - q];
      unsigned long long incl = mine;
      for (int o = 1; o < 32; o <<= 1) {
        unsigned long long u = __shfl_up_sync(SMX_CU_FULL_MASK, incl, o);
        if (l >= (unsigned)o) incl += u;
      }
      const unsigned long long nd = need, excl = incl - mine;
      __syncwarp();   /* every lane has read need before the one that crosses writes it */
      if (excl < nd && nd <= incl) {
        unsigned long long above = excl;
        for (unsigned q = 0; q < 32; q++) {
          unsigned b = 1023 - 32 * l - q;
          if (above + hmass[b] >= nd) {
            prefix = (prefix << 10) | b;
            shift = sh;
            need = nd - above;
            done = nd - above == hmass[b] || hcnt[b] == 1;   /* the bin is taken whole */
            break;
          }
          above += hmass[b];
        }
      }
    }
    __syncthreads();
  }
  f->mode = F_NUCLEUS;
  f->shift = shift;
  f->prefix = prefix;
  f->last = LLONG_MAX;
  if (done) return;
  /* shift 0: ties of weight exactly w_B; the first ceil(need / q_B) of them in index order are in */
  const unsigned long long qb = fixed(__uint_as_float(prefix), r.S);
  const unsigned long long rr = qb ? (need + qb - 1) / qb : 1;
  filter ties = *f;
  ties.mode = F_TIES;
  long long last = walk_to<DT>(j, r, ties, rr - 1);
  if (last >= 0) f->last = last;
}

template <int DT>
__global__ void __launch_bounds__(SMX_CU_SAMPLE_THREADS) k_sample_row(smx_cu_job j) {
  const size_t row = blockIdx.x;
  row_ctx r;
  r.x = (const char *)j.a + row * j.lda * cu_es<DT>();
  r.n = j.cols;
  r.rownum = j.row0 + row;
  r.S = r.n > 1 ? 62 - (64 - __clzll((long long)(r.n - 1))) : 62;
  float m = -INFINITY;
  long long cnt = 0;
  cu_key_t best = 0;
  for (size_t i = threadIdx.x; i < r.n; i += blockDim.x) {
    float x = row_x<DT>(r, i);
    cnt += cu_count(x);
    m = fmaxf(m, x);
    if (x == x) {
      cu_key_t key = cu_key(x, i);
      best = key > best ? key : best;
    }
  }
  m = cu_lanes_max(m);
  cnt = cu_lanes_sum_ll(cnt);
  best = block_max_u64(best);
  r.m = m;
  const int nan = (int)(cnt >> 32);
  const bool use_p = j.top_p < 1.0, use_min = j.min_p > 0.0;
  long long tok;
  if (nan || !(m > -INFINITY)) {
    tok = -1;
  } else if (j.greedy) {
    tok = cu_key_col(best);
  } else {
    filter f;
    memset(&f, 0, sizeof f);
    f.use_min = use_min;
    f.thr = -INFINITY;
    if (m == INFINITY) {
      f.mode = F_POSINF;
    } else if (use_p) {
      nucleus<DT>(j, r, &f);
    } else {
      f.mode = F_MIN_P;
      if (use_min) {
        double t = (double)m + log2(j.min_p) / j.c;
        if (t >= -FLT_MAX) f.thr = nextafterf(nextafterf((float)t, -INFINITY), -INFINITY);
      }
    }
    tok = draw_kept<DT>(j, r, f);
  }
  if (threadIdx.x == 0) j.tokens[row] = (int64_t)tok;
}

/* ------------------------------------------------------------- top-k path */
/* One block (SMX_CU_MERGE_THREADS) per row, after the segments (mode 2): the CPU's filters and draw on the
 * top_k candidates, in the CPU's order. */
template <int DT>
__global__ void __launch_bounds__(SMX_CU_MERGE_THREADS) k_sample_topk(smx_cu_job j) {
  __shared__ cu_key_t keys[SMX_CU_MAX_TOPK];
  __shared__ double w[SMX_CU_MAX_TOPK], g[SMX_CU_MAX_TOPK];
  __shared__ long long tok_sh;
  const size_t row = blockIdx.x, k = j.k;
  smx_cu_state st;
  cu_topk_merge_row(j, row, keys, &st);
  row_ctx r;
  r.x = (const char *)j.a + row * j.lda * cu_es<DT>();
  r.n = j.cols;
  r.rownum = j.row0 + row;
  r.m = st.m;
  r.S = 62;
  long long tok = -1;
  if (st.nan || !(st.m > -INFINITY)) {
    tok = -1;
  } else if (st.m == INFINITY) {
    filter f;
    memset(&f, 0, sizeof f);
    f.mode = F_POSINF;
    tok = draw_kept<DT>(j, r, f);
  } else {
    const bool use_p = j.top_p < 1.0, use_min = j.min_p > 0.0;
    /* weights by place in the order (x descending, index ascending) */
    for (size_t q = threadIdx.x; q < k; q += blockDim.x) {
      float x = cu_key_value(keys[q]);
      w[q] = weight_d(x, st.m, j.c);
      /* -inf: never drawn by Gumbel-max (a finite x whose weight underflows still can be, as on the CPU) */
      g[q] = !j.gumbel ? 0.0 : x > -INFINITY ? gumbel_score(j, x, st.m, r.rownum, (size_t)cu_key_col(keys[q])) : -INFINITY;
    }
    __syncthreads();
    /* the places in index order: keys (index, place), sorted by index */
    for (size_t q = threadIdx.x; q < k; q += blockDim.x)
      keys[q] = ~(((cu_key_t)(0xffffffffu - (unsigned)keys[q]) << 32) | (cu_key_t)q);
    const unsigned n2 = cu_pow2_at_least((unsigned)k);
    for (size_t q = k + threadIdx.x; q < n2; q += blockDim.x) keys[q] = 0;
    __syncthreads();
    cu_sort_desc(keys, n2);   /* ~key descending: index ascending */
    if (threadIdx.x == 0) {
      /* top-p: the normaliser over the candidates in index order, the prefix in the filters' order */
      unsigned rp = (unsigned)k;
      if (use_p) {
        double z = 0.0, acc = 0.0;
        for (size_t q = 0; q < k; q++) z += w[(unsigned)~keys[q]];
        for (rp = 0; rp < k;) {
          acc += w[rp++];
          if (acc >= j.top_p * z) break;
        }
      }
      long long best = -1, last = -1, first = -1;
      double bv = -INFINITY, total = 0.0;
      for (size_t q = 0; q < k; q++) {   /* the kept set in index order: its first entry, mass and Gumbel argmax */
        unsigned p = (unsigned)~keys[q];
        if (p >= rp || (use_min && !(w[p] >= j.min_p))) continue;
        long long i = (long long)(~keys[q] >> 32);
        if (first < 0) first = i;
        total += w[p];
        if (j.gumbel && g[p] > -INFINITY && (g[p] > bv || (g[p] == bv && i < best))) bv = g[p], best = i;
      }
      if (!j.gumbel) {
        double t = cu_philox_uniform(j.seed, r.rownum, j.step, 0) * total, cum = 0.0;
        for (size_t q = 0; q < k && best < 0; q++) {
          unsigned p = (unsigned)~keys[q];
          if (p >= rp || (use_min && !(w[p] >= j.min_p))) continue;
          long long i = (long long)(~keys[q] >> 32);
          cum += w[p];
          if (w[p] > 0.0) last = i;
          if (cum > t && w[p] > 0.0) best = i;
        }
        if (best < 0) best = last >= 0 ? last : first;
      }
      tok_sh = best;
    }
    __syncthreads();
    tok = tok_sh;
  }
  if (threadIdx.x == 0) j.tokens[row] = (int64_t)tok;
}

/* ------------------------------------------------------------- launchers */
template <int DT>
static cudaError_t launch_sample(const smx_cu_job *j) {
  cudaStream_t s = (cudaStream_t)j->stream;
  if (j->rows > 0x7fffffffu) return cudaErrorInvalidConfiguration;
  if (j->k == 0) {
    k_sample_row<DT><<<(unsigned)j->rows, SMX_CU_SAMPLE_THREADS, 0, s>>>(*j);
    return cudaGetLastError();
  }
  int e = smx_cu_launch_topk_segments(j, 2);
  if (e) return (cudaError_t)e;
  k_sample_topk<DT><<<(unsigned)j->rows, SMX_CU_MERGE_THREADS, 0, s>>>(*j);
  return cudaGetLastError();
}

extern "C" int smx_cu_launch_sample(const smx_cu_job *j) {
  switch (j->dtype) {
    case SMX_CU_F32: return (int)launch_sample<SMX_CU_F32>(j);
    case SMX_CU_F16: return (int)launch_sample<SMX_CU_F16>(j);
    default: return (int)launch_sample<SMX_CU_BF16>(j);
  }
}
