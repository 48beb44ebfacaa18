/*
 * What the host side (api.c: checks, options, workspace) hands to the
 * launchers (softmax.cu, xent.cu): one call, resolved and checked. Plain C,
 * so that api.c needs no CUDA compiler; the launchers return a cudaError_t
 * as an int (0: enqueued) and never check arguments.
 */
#ifndef SMX_CUDA_JOB_H
#define SMX_CUDA_JOB_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* storage types */
enum { SMX_CU_F32 = 0, SMX_CU_F16 = 1, SMX_CU_BF16 = 2 };

/* Row lengths: a row of up to SMX_CU_FWD_SEG entries (forward, cross-entropy) or SMX_CU_BWD_SEG (backward)
 * is one block's (or one warp's) and is read once; a longer row is cut into segments of that length, one
 * block each, whose states wait in the workspace. */
#define SMX_CU_FWD_PER 32                         /* entries per thread, held in registers */
#define SMX_CU_BWD_PER 16                         /* the backward holds two rows (y, dy)   */
#define SMX_CU_MAX_LANES 512                      /* threads per row: 128 registers each   */
#define SMX_CU_FWD_SEG (SMX_CU_FWD_PER * SMX_CU_MAX_LANES)
#define SMX_CU_BWD_SEG (SMX_CU_BWD_PER * SMX_CU_MAX_LANES)
#define SMX_CU_XENT_HEADER 64                     /* bad-target flag and row count         */

/* A segment's, then a row's, reduction state (in the workspace). */
typedef struct smx_cu_state {
  double s;     /* sum of 2^((x - m) c) (forward, cross-entropy), or the backward's dot / sum */
  double sx;    /* cross-entropy with label smoothing: sum of the logits                      */
  double xt;    /* cross-entropy: the target's logit (read before an in-place gradient)       */
  float m;      /* the largest entry (-inf: none above -inf)                                  */
  int nan;      /* a NaN was seen                                                              */
  int ninf;     /* entries equal to +inf                                                       */
  int pad;
} smx_cu_state;

/* The cross-entropy's workspace header. */
typedef struct smx_cu_xent_header {
  unsigned int bad;                 /* a target outside [0, cols) that is not ignore_index */
  unsigned int pad;
  unsigned long long count;         /* rows not ignored                                    */
} smx_cu_xent_header;

typedef struct smx_cu_job {
  int dtype;              /* SMX_CU_*                                                    */
  int op;                 /* smx_cuda_op                                                 */
  const void *a;          /* x, y (backward) or the logits                               */
  size_t lda;
  const void *b;          /* dy (backward)                                               */
  size_t ldb;
  void *out;              /* y, dx or the gradient (NULL: none)                          */
  size_t ldo;
  float *vec;             /* log-sum-exp per row (LSE op; cross-entropy's lse, or NULL)  */
  float *loss;            /* cross-entropy                                               */
  const int64_t *targets; /* cross-entropy                                               */
  size_t rows, cols;
  size_t seg, nseg;       /* segment length and segments per row (1: fused)              */
  double c;               /* log2(e) / T                                                 */
  float c_hi, c_lo;       /* c as an unevaluated float sum                               */
  double inv_t;           /* 1 / T                                                       */
  uint32_t flags;         /* SMX_FLAG_MASKED_ROW_NAN                                     */
  int reduction;          /* cross-entropy: smx_reduction                                */
  int64_t ignore;
  double eps, z, grad_scale;
  void *ws;               /* workspace (may be NULL when not needed)                     */
  void *stream;
  /* top-k (topk.cu) and sampling (sample.cu) */
  size_t k;               /* top-k: k; sampling: top_k of the top-k path (0: the row path) */
  float *values;          /* top-k outputs, rows x k                                     */
  int64_t *indices;
  int64_t *tokens;        /* sampling: one per row                                       */
  int greedy, gumbel;     /* sampling: argmax; SMX_SAMPLE_GUMBEL_MAX                      */
  double top_p, min_p;    /* sampling: 1 / 0 = off                                       */
  uint64_t seed, step, row0;
} smx_cu_job;

/* Internal operation numbers of the top-k and sampling launchers (beside smx_cuda_op's). */
enum { SMX_CU_OP_TOPK = 16, SMX_CU_OP_LOG_TOPK = 17, SMX_CU_OP_SAMPLE = 18 };

/* Top-k: the largest k; a row of up to SMX_CU_FWD_SEG entries is one block's, a longer one is cut into such
 * segments whose states and sorted candidates (k 64-bit keys each) wait in the workspace. */
#define SMX_CU_MAX_TOPK 1024
/* The sampler's row path: one block of this many threads per row. */
#define SMX_CU_SAMPLE_THREADS 512

int smx_cu_launch_forward(const smx_cu_job *j);
int smx_cu_launch_backward(const smx_cu_job *j);
int smx_cu_launch_xent(const smx_cu_job *j);
int smx_cu_launch_topk(const smx_cu_job *j);     /* op SMX_CU_OP_TOPK or SMX_CU_OP_LOG_TOPK */
int smx_cu_launch_sample(const smx_cu_job *j);   /* op SMX_CU_OP_SAMPLE                     */
/* rows == 0 cross-entropy with a reduction: the scalar loss (0 for SUM, NaN for MEAN) */
int smx_cu_launch_fill(float *p, float v, void *stream);

#ifdef __cplusplus
}
#endif
#endif
