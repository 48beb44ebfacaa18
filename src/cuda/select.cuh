/*
 * Block-wide selection of the k best entries of a row (topk.cu, sample.cu).
 *
 * The order of smx_topk.h (larger x first, equal x by lower index) is one
 * unsigned 64-bit key, larger = better: the float's bits made monotone (+0
 * and -0 as one, since they compare equal), then the complement of the
 * column. The keys of a row are distinct, so "the k largest keys" is one
 * set whatever the order in which threads see them, and sorting that set
 * gives one sequence: the results cannot depend on scheduling.
 *
 * The k largest keys are found by a radix select (most significant byte
 * first): each pass counts, in a 256-bin histogram, the keys that share the
 * bytes chosen so far, and picks the byte whose bin holds the k-th largest;
 * it stops as soon as the chosen bin is taken whole (usually after the four
 * bytes of the value; the column's bytes decide ties). Counts are integers,
 * so the shared-memory atomics that build them are exact in any order. The
 * winners (exactly k) are then gathered and sorted by a bitonic network.
 * (The scheme is that of radix top-k on GPUs, e.g. Zhang et al., "Parallel
 * top-k algorithms on GPU", and the AIR top-k of RAFT; written here for
 * blocks that hold a row or a row's candidates.)
 */
#ifndef SMX_CUDA_SELECT_CUH
#define SMX_CUDA_SELECT_CUH

#include "cuda/rows.cuh"

typedef unsigned long long cu_key_t;

__device__ __forceinline__ cu_key_t cu_key(float x, size_t col) {
  unsigned u = __float_as_uint(x == 0.0f ? 0.0f : x);
  u = (u & 0x80000000u) ? ~u : (u | 0x80000000u);
  return ((cu_key_t)u << 32) | (cu_key_t)(0xffffffffu - (unsigned)col);
}

/* the value of a key (a zero comes back as +0) and its column */
__device__ __forceinline__ float cu_key_value(cu_key_t key) {
  unsigned u = (unsigned)(key >> 32);
  u = (u & 0x80000000u) ? (u & 0x7fffffffu) : ~u;
  return __uint_as_float(u);
}
__device__ __forceinline__ long long cu_key_col(cu_key_t key) { return (long long)(0xffffffffu - (unsigned)key); }

/* The selection's progress, in shared memory: the keys whose top (64 - shift) bits equal prefix are still
 * open, need of them are wanted; done: every key with (key >> shift) >= prefix is selected (exactly k). */
typedef struct cu_select {
  cu_key_t prefix;
  int shift;
  unsigned need;
  int done;
} cu_select;

__device__ __forceinline__ bool cu_select_open(const cu_select &s, cu_key_t key) {
  return s.shift == 64 || (key >> s.shift) == s.prefix;
}
__device__ __forceinline__ bool cu_select_taken(const cu_select &s, cu_key_t key) {
  return (key >> s.shift) >= s.prefix;
}
/* the bin of an open key in this pass, 256 for any other (which counts nowhere) */
__device__ __forceinline__ unsigned cu_select_bin(const cu_select &s, cu_key_t key, bool valid) {
  return valid && cu_select_open(s, key) ? (unsigned)(key >> (s.shift - 8)) & 255u : 256u;
}

/* Adds one to hist[d] for each lane (d == 256: nothing). Every lane of the warp must call it: lanes with the
 * same bin add once, together (a bin shared by the whole warp costs one atomic, not 32). */
__device__ __forceinline__ void cu_hist_add(unsigned *hist, unsigned d) {
  unsigned peers = __match_any_sync(SMX_CU_FULL_MASK, d);
  if (d < 256u && (threadIdx.x & 31u) == (unsigned)(__ffs(peers) - 1)) atomicAdd(&hist[d], (unsigned)__popc(peers));
}

__device__ __forceinline__ void cu_select_init(cu_select *s, unsigned k) {
  if (threadIdx.x == 0) {
    s->prefix = 0;
    s->shift = 64;
    s->need = k;
    s->done = 0;
  }
}

/* After a histogram pass: warp 0 picks the bin of the need-th largest open key (bins scanned from 255 down:
 * lane l holds bins 255 - 8l .. 248 - 8l). The caller synchronises before and after. */
__device__ __forceinline__ void cu_select_step(cu_select *s, const unsigned *hist) {
  if (threadIdx.x >= 32) return;
  const unsigned l = threadIdx.x;
  unsigned mine = 0;
  for (unsigned j = 0; j < 8; j++) mine += hist[255 - 8 * l - j];
  unsigned incl = mine;
  for (unsigned o = 1; o < 32; o <<= 1) {
    unsigned v = __shfl_up_sync(SMX_CU_FULL_MASK, incl, o);
    if (l >= o) incl += v;
  }
  const unsigned need = s->need, excl = incl - mine;
  __syncwarp();   /* every lane has read need before the one that crosses writes it */
  if (excl < need && need <= incl) {   /* one lane: the counts above it fall short, its own reach */
    unsigned above = excl;
    for (unsigned j = 0; j < 8; j++) {
      unsigned b = 255 - 8 * l - j, h = hist[b];
      if (above + h >= need) {
        s->prefix = (s->prefix << 8) | b;
        s->shift -= 8;
        s->need = need - above;
        s->done = need - above == h;   /* the bin is taken whole; at shift 0 a bin holds one key */
        break;
      }
      above += h;
    }
  }
}

/* Sorts keys[0, n) in decreasing order, n a power of two; the block synchronises between the stages. */
__device__ __forceinline__ void cu_sort_desc(cu_key_t *keys, unsigned n) {
  for (unsigned size = 2; size <= n; size <<= 1) {
    for (unsigned stride = size >> 1; stride > 0; stride >>= 1) {
      for (unsigned t = threadIdx.x; t < n; t += blockDim.x) {
        unsigned p = t ^ stride;
        if (p > t) {
          cu_key_t a = keys[t], b = keys[p];
          bool desc = (t & size) == 0;
          if (desc ? a < b : a > b) {
            keys[t] = b;
            keys[p] = a;
          }
        }
      }
      __syncthreads();
    }
  }
}

__device__ __forceinline__ unsigned cu_pow2_at_least(unsigned k) {
  unsigned n = 1;
  while (n < k) n <<= 1;
  return n;
}

/* ----------------------------------------------------------- Philox4x32-10 */
/* The CPU library's generator (src/math/philox.c) word for word: key = seed, counter = (draw, row, step). */
__device__ __forceinline__ void cu_philox(unsigned long long seed, unsigned c0, unsigned c1, unsigned c2, unsigned c3,
                                          unsigned out[4]) {
  unsigned k0 = (unsigned)seed, k1 = (unsigned)(seed >> 32);
  for (int r = 0; r < 10; r++) {
    unsigned hi0 = __umulhi(0xD2511F53u, c0), lo0 = 0xD2511F53u * c0;
    unsigned hi1 = __umulhi(0xCD9E8D57u, c2), lo1 = 0xCD9E8D57u * c2;
    unsigned n0 = hi1 ^ c1 ^ k0, n2 = hi0 ^ c3 ^ k1;
    c0 = n0;
    c1 = lo1;
    c2 = n2;
    c3 = lo0;
    k0 += 0x9E3779B9u;
    k1 += 0xBB67AE85u;
  }
  out[0] = c0;
  out[1] = c1;
  out[2] = c2;
  out[3] = c3;
}

/* The 53 random bits of draw `draw` of (seed, row, step); the uniform is (bits + 0.5) 2^-53, in (0, 1). */
__device__ __forceinline__ unsigned long long cu_philox_bits(unsigned long long seed, unsigned long long row,
                                                             unsigned long long step, unsigned draw) {
  unsigned w[4];
  cu_philox(seed, draw, (unsigned)row, (unsigned)step, (unsigned)(step >> 32), w);
  return (unsigned long long)w[0] | (unsigned long long)(w[1] & 0x1fffffu) << 32;
}
__device__ __forceinline__ double cu_philox_uniform(unsigned long long seed, unsigned long long row,
                                                    unsigned long long step, unsigned draw) {
  return ((double)cu_philox_bits(seed, row, step, draw) + 0.5) * 0x1p-53;
}
__device__ __forceinline__ double cu_philox_gumbel(unsigned long long seed, unsigned long long row,
                                                   unsigned long long step, unsigned draw) {
  return -log(-log(cu_philox_uniform(seed, row, step, draw)));
}

#endif
