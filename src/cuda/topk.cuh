/*
 * The top-k workspace (topk.cu, sample.cu): for a row cut into nseg
 * segments, rows x nseg states (smx_cu_state), then rows x nseg x k keys,
 * each segment's candidates sorted best first (its first min(k, segment
 * length) slots used). And the merge of a row's segments, which both the
 * top-k and the sampler's top-k path run.
 */
#ifndef SMX_CUDA_TOPK_CUH
#define SMX_CUDA_TOPK_CUH

#include "cuda/select.cuh"

__device__ __forceinline__ smx_cu_state *cu_topk_states(const smx_cu_job &j) { return (smx_cu_state *)j.ws; }
__device__ __forceinline__ cu_key_t *cu_topk_keys(const smx_cu_job &j) {
  return (cu_key_t *)((char *)j.ws + j.rows * j.nseg * sizeof(smx_cu_state));
}
/* slot i of a row's nseg x k candidates holds a key */
__device__ __forceinline__ bool cu_topk_slot_used(const smx_cu_job &j, size_t i) {
  size_t seg = i / j.k, slot = i % j.k, c0 = seg * j.seg;
  size_t len = j.cols - c0 < j.seg ? j.cols - c0 : j.seg;
  return slot < len;
}

/* One block (SMX_CU_MERGE_THREADS) per row: the row's state and its k keys, sorted best first, out of the
 * segments' (keys: room for the power of two at or above k). */
__device__ __forceinline__ void cu_topk_merge_row(const smx_cu_job &j, size_t row, cu_key_t *keys,
                                                  smx_cu_state *st_out) {
  __shared__ unsigned hist[256];
  __shared__ cu_select sel;
  __shared__ unsigned found;
  const smx_cu_state st = cu_merge_segments(cu_topk_states(j) + row * j.nseg, j.nseg, j.c, true);
  const cu_key_t *cand = cu_topk_keys(j) + row * j.nseg * j.k;
  const size_t total = j.nseg * j.k;
  /* every thread runs every round (the warp-wide histogram add): the loop is rounded up to blocks */
  const size_t rounds = (total + blockDim.x - 1) / blockDim.x;
  cu_select_init(&sel, (unsigned)j.k);
  __syncthreads();
  while (!sel.done && sel.shift > 0) {
    for (unsigned b = threadIdx.x; b < 256; b += blockDim.x) hist[b] = 0;
    __syncthreads();
    for (size_t r = 0; r < rounds; r++) {
      size_t i = r * blockDim.x + threadIdx.x;
      bool valid = i < total && cu_topk_slot_used(j, i);
      cu_hist_add(hist, cu_select_bin(sel, valid ? cand[i] : 0, valid));
    }
    __syncthreads();
    cu_select_step(&sel, hist);
    __syncthreads();
  }
  const unsigned n2 = cu_pow2_at_least((unsigned)j.k);
  if (threadIdx.x == 0) found = 0;
  for (unsigned q = (unsigned)j.k + threadIdx.x; q < n2; q += blockDim.x) keys[q] = 0;
  __syncthreads();
  for (size_t i = threadIdx.x; i < total; i += blockDim.x)
    if (cu_topk_slot_used(j, i) && cu_select_taken(sel, cand[i])) keys[atomicAdd(&found, 1u)] = cand[i];
  __syncthreads();
  cu_sort_desc(keys, n2);
  *st_out = st;
}


/* enqueues the segment kernel (topk.cu): mode 0 / 1 softmax / log-softmax top-k, 2 candidates to the workspace */
extern "C" int smx_cu_launch_topk_segments(const smx_cu_job *j, int mode);

#endif
