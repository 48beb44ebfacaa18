/*
 * smx — fused attention on the CPU (FlashAttention-2 style; the backward pass
 * is in smx_attention_backward.h, included below).
 *
 *   O[b,h,i,:] = sum_j w_ij V[b,g(h),j,:]      w_i = softmax_j(z_ij)
 *   z_ij       = scale * <Q[b,h,i,:], K[b,g(h),j,:]>  (+ the options below)
 *
 * with g(h) = h / (Hq / Hkv) (MHA when Hq == Hkv, GQA, MQA when Hkv == 1).
 * The Lq x Lk score matrix is never formed: keys are streamed in tiles with a
 * running maximum, a running sum and a rescaled accumulator, so the extra
 * memory is O(threads x tile) (smx_attention_plan_workspace_size()).
 *
 * Usage: fill an smx_attention_desc (zero it first: every zero field means
 * "off" or "default"), create a plan, run it on pointers as often as wanted,
 * destroy it. Every function returns an smx_status and never aborts; a bad
 * descriptor (Hq not a multiple of Hkv, a zero Dqk or Dv, a stride the
 * Layout rule below refuses, a non-finite or out-of-range option, a combination listed
 * as refused below, sizes that overflow) is rejected by
 * smx_attention_plan_create() with SMX_E_INVALID_ARG, and nothing is
 * written. Batch, heads and lengths may be 0 (nothing to do; Lk = 0 gives
 * O = 0 and lse = -inf). The double options are used as floats: scale,
 * softcap, ssmax_s, sigmoid_bias, qk_norm_eps, blasst_log_threshold and
 * diff_lambda must lie within +-FLT_MAX, and those whose 0 means off or
 * default (all but scale and sigmoid_bias) must be 0 or at least FLT_MIN in
 * magnitude, so that none rounds to inf or to 0 (the screening options are
 * clamped, see there).
 *
 * ---------------------------------------------------------------------------
 * Layout
 * ---------------------------------------------------------------------------
 * Q is (batch, Hq, Lq, Dqk), K is (batch, Hkv, Lk, Dqk), V is (batch, Hkv, Lk,
 * Dv) and O is (batch, Hq, Lq, Dv), each with its own element strides for the
 * batch, head and row dimensions; the last dimension is contiguous. Storage
 * is f32, f16 or bf16 (all four tensors alike); arithmetic is f32, but for
 * the bf16 tile products of `math` (Accuracy).
 * Strides:
 *  - {0, 0, 0} means the packed layout (rows Dqk or Dv apart, and so on);
 *  - otherwise a zero stride broadcasts its dimension: every index reads
 *    the same data, as np.broadcast_to and torch.expand give (a KV head
 *    repeated over heads, one batch over the batch, one row over Lk), and
 *    the kernels read only what the strides reach. A tensor broadcast over
 *    all three dimensions cannot be told from packed: give it any nonzero
 *    stride on a dimension of extent 1, or copy it;
 *  - a nonzero row stride must be at least the row (Dqk, or Dv for V and O);
 *  - O is written by many threads at once: a zero stride on a dimension of
 *    O with more than one index is refused (SMX_E_INVALID_ARG) unless O is
 *    empty. The batch and head strides of O are not otherwise checked for
 *    overlap: rows that alias give undefined results.
 *
 * ---------------------------------------------------------------------------
 * Masks (combined: a key takes part only when every active mask allows it)
 * ---------------------------------------------------------------------------
 * Query i has position p_i = i + Lk - Lq (bottom-right alignment, as in
 * decoding and flash-attn), or p_i = i with SMX_ATTN_CAUSAL_TOP_LEFT
 * (PyTorch's is_causal); every positional option below uses p_i.
 *  - causal: key j is visible iff j <= p_i;
 *  - window_left / window_right (>= 0; -1 = unbounded): j >= p_i - left and
 *    j <= p_i + right;
 *  - a mask tensor (run-time pointer), broadcastable over batch and heads
 *    (stride 0): SMX_ATTN_MASK_BOOL (uint8, nonzero = takes part, as PyTorch)
 *    or SMX_ATTN_MASK_BIAS (float, added to z; -inf masks);
 *  - ALiBi: z_ij -= slope_h * |p_i - j|, slopes given per query head at run
 *    time;
 *  - radial (Li et al. 2025): tokens in frames of radial_frame tokens; frames
 *    d = |f_i - f_j| apart see each other inside a band of width
 *    2^bitlen(T) / 2^bitlen(d) (T for d <= 1), see docs/attention.md.
 * Tiles that every mask hides are skipped before any arithmetic (causal
 * costs about half of full attention). A query row that sees no key gets
 * O = 0 and lse = -inf (never NaN); with a sink its lse is the sink.
 *
 * ---------------------------------------------------------------------------
 * NaN
 * ---------------------------------------------------------------------------
 * A NaN score (from a NaN in Q or K, a NaN bias, +inf - inf, ...) reaches
 * exactly the query rows that see that key: every element of their O row is
 * NaN and so is their lse (MALA: lse 0), as softmax does with a NaN input and
 * as PyTorch does; the other keys of such a row are not dropped, and rows
 * that do not see the key are unchanged. A NaN in element x of V row j makes
 * O[., x] NaN for the rows that see key j (screening, which divides v by
 * |v|: their whole row, where Trim keeps the key, and so does an infinity
 * in v); the lse is untouched. As
 * in PyTorch's kernels (0 x NaN is NaN in the tile products), a NaN in V may
 * also reach other rows of the same (batch, head) that see at least one key
 * but not key j (a masked key weighs 0, and 0 x NaN is NaN); never a row that
 * sees no key, which keeps O = 0 and lse = -inf. BLASST decides on a tile's
 * largest score, and a NaN among a row's scores keeps it from dropping that
 * tile; an infinity of V in a tile that BLASST drops reaches nothing. The
 * same holds for the split keys of decoding and in smx_attention_merge (a
 * part with lse NaN makes the row NaN).
 *
 * Variants (the kinds sigmoid, softpick, linear, cosFormer, MALA and
 * screening; L2 distance, softcap, SSMax, sinks, FoX, the output gate,
 * QK-norm, differential attention, NSA, int8 K, BLASST): each is documented
 * in smx_attention_variants.h, included below.
 *
 * ---------------------------------------------------------------------------
 * Accuracy and reproducibility
 * ---------------------------------------------------------------------------
 * f32 storage: |O - ref| <= (1e-5 + 2^-23 Lk / 64) * max|ref| over the
 * tensor (the sums across a row's Lk / 64 key tiles run in order, each step
 * rounding once), against a
 * long-double reference (tests/unit/test_attention.c), at every ISA, for
 * every mask, variant and kind (int8 K: against the reference on the
 * dequantised K; BLASST adds the weight it drops, under 64 e^{threshold} of
 * a row's largest weight per dropped tile). f16 /
 * bf16 storage add the one rounding of each stored output. Ill-conditioned
 * rows add what their conditioning forces (tests/soak/attention/attn_ref.c
 * derives each): a logit rounded to f32 from terms as large as Z (|q||k|
 * scale, |q|^2 + |k|^2 for L2 distance, bias, ALiBi, FoX) moves the weights
 * by about 2^-24 Z, so add 2^-21 Z max|v| (lse: 2^-22 Z); the linear kinds'
 * weights of both signs (cosFormer with Lq > Lk, MALA) make the error
 * relative to sum_j |terms_j| |v_j| / |sum_j w_ij| instead of max|O|, and a
 * weight sum within its rounding of 0 may come out as O = 0 or not;
 * screening's keys near the Trim edge or the end of the Softmask window
 * carry the f32 rounding of s and of the cosine relatively large into lse;
 * softpick's |e^z - 1| cancels for z near 0, relatively as much as its sum
 * is below sum_j (e^{z_j - m} + e^{-m}).
 * bf16 tile products (math: bf16 storage by default, f32 storage that opts
 * in with SMX_ATTN_MATH_BF16; only at kernel set avx512bf16, for tasks of more
 * than 16 query rows per KV head, the softmax, sigmoid and softpick kinds,
 * and for decoding, at most 8 query rows per KV head, of the softmax kind
 * in bf16 storage (f32 storage computes in f32 there); without int8 K,
 * QK-norm, L2 distance, NSA or BLASST; elsewhere f32): Q K^T and P V
 * on pairs of bf16 with f32 accumulation (vdpbf16ps: products exact, one
 * rounding per step, as the f32 FMA chains), the online softmax in f32, P
 * rounded to bf16 (nearest even) for P V while l sums the f32 P, as
 * FlashAttention does. Against the reference of the inputs as these products
 * read them (f32 storage rounded to bf16; subnormals, below 2^-126, as 0),
 * the f32 bound above grows by 2^-8 max|V| sum_j w_ij (softmax, softpick: the
 * weights sum to at most 1; differential: times 1 + |lambda|) + Lk 2^-126:
 * rounding P moves each weight by at most 2^-9 of itself, so O by at most
 * 2^-9 sum_j w_ij |v_j| (doubled for margin), and results below 2^-126 flush
 * to 0. The rounding of the inputs is the caller's (f32 that opts in: about
 * 2^-8 Z of each logit, Z as above, so relatively 2^-7 Z max|V| of O).
 * f16 storage always computes in f32 (no AVX512_FP16 or AMX build: no
 * hardware here to test one on).
 * Results are
 * bitwise identical for every thread count (tasks are fixed by the shape;
 * KV splits are merged in a fixed order); ISAs may differ in the last bits.
 */
#ifndef SMX_SMX_ATTENTION_H
#define SMX_SMX_ATTENTION_H

#include <stddef.h>
#include <stdint.h>

#include "smx/smx.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum smx_attn_dtype { SMX_ATTN_F32 = 0, SMX_ATTN_F16 = 1, SMX_ATTN_BF16 = 2 } smx_attn_dtype;

/* The arithmetic of the tile products (see Accuracy): AUTO is F32 for f32 and f16 storage and bf16 for
 * bf16 storage where the CPU has AVX512_BF16; F32 always computes in f32; BF16 lets f32 storage use bf16
 * tile products too (as PyTorch's allow_bf16_reduced_precision). A permission, never a demand: where
 * the kernel set in use has no bf16 products (smx_isa() below avx512bf16) it computes in f32, which is
 * within the bf16 bound; smx_attention_plan_math() tells which a run would use. */
typedef enum smx_attn_math { SMX_ATTN_MATH_AUTO = 0, SMX_ATTN_MATH_F32 = 1, SMX_ATTN_MATH_BF16 = 2 } smx_attn_math;

typedef enum smx_attn_causal {
  SMX_ATTN_CAUSAL_NONE = 0,
  SMX_ATTN_CAUSAL_BOTTOM_RIGHT = 1,   /* j <= i + Lk - Lq (flash-attn, decoding) */
  SMX_ATTN_CAUSAL_TOP_LEFT = 2        /* j <= i (PyTorch is_causal)               */
} smx_attn_causal;

typedef enum smx_attn_mask_kind {
  SMX_ATTN_MASK_NONE = 0,
  SMX_ATTN_MASK_BOOL = 1,   /* uint8_t, nonzero = the key takes part */
  SMX_ATTN_MASK_BIAS = 2    /* float, added to the logit             */
} smx_attn_mask_kind;

#include "smx/smx_attention_variants.h" /* smx_attn_kind, the gate and screening flags */

typedef struct smx_attention_desc {
  size_t batch, heads_q, heads_kv;   /* heads_q a multiple of heads_kv            */
  size_t len_q, len_k;               /* Lq, Lk                                    */
  size_t dim_qk, dim_v;              /* Dqk, Dv                                   */
  /* element strides (batch, head, row); {0,0,0} = packed, else 0 broadcasts (see Layout) */
  size_t q_stride[3], k_stride[3], v_stride[3], o_stride[3];
  double scale;                      /* 0: 1 / sqrt(Dqk)                          */
  smx_attn_dtype dtype;              /* storage of Q, K, V and O                  */
  int threads;                       /* 0 or 1: the calling thread                */
  /* masks */
  smx_attn_causal causal;
  int64_t window_left, window_right; /* -1: unbounded (both 0 in a zeroed desc: */
  int window;                        /*   only read when window != 0)           */
  smx_attn_mask_kind mask_kind;
  size_t mask_stride[4];             /* (batch, head, query, key); 0 broadcasts   */
  int alibi;                         /* slopes per query head at run time         */
  size_t radial_frame;               /* radial mask: tokens per frame (0 = off)   */
  /* variants */
  smx_attn_kind kind;
  double softcap;                    /* > 0: tanh cap                             */
  double ssmax_s;                    /* > 0: SSMax with this s (< 0 refused)      */
  double sigmoid_bias;               /* SMX_ATTN_SIGMOID                          */
  int sinks;                         /* one sink logit per query head at run time */
  int fox;                           /* FoX cumulative log forget at run time     */
  int gate;                          /* sigmoid output gate at run time           */
  uint32_t gate_flags;               /* SMX_ATTN_GATE_ELEMENTWISE                 */
  int qk_norm;                       /* RMS-normalise Q and K rows                */
  double qk_norm_eps;                /* 0: 1e-6                                   */
  double blasst_log_threshold;       /* < 0: BLASST with ln(lambda) = this        */
  double diff_lambda;                /* != 0: differential attention, this lambda */
  int l2_distance;                   /* z = -scale |q - k|^2 instead of the product */
  size_t nsa_topk;                   /* > 0: NSA-style selection of this many key blocks */
  int k_int8;                        /* K is int8 (k_stride in bytes), scales per 64-key block */
  int k_int8_jensen;                 /* with k_int8: the Jensen-bias correction     */
  /* SMX_ATTN_SCREEN (each per head at run time when args give an array) */
  double screen_r;                   /* acceptance width in (0, 1] (0: args.screen_r) */
  double screen_window;              /* Softmask window w > 0 (0: no Softmask)    */
  double screen_eps;                 /* unit-normalisation floor (0: 1e-12)       */
  uint32_t screen_flags;             /* SMX_ATTN_SCREEN_NO_VNORM, _NO_TANHNORM    */
  smx_attn_math math;                /* tile-product arithmetic (0: AUTO)         */
} smx_attention_desc;

/* The run-time operands. Pointers not asked for by the descriptor are ignored. */
typedef struct smx_attention_args {
  const void *q, *k, *v;
  void *o;
  float *lse;              /* optional: (batch, Hq, Lq) packed, natural log    */
  const void *mask;        /* mask_kind: uint8_t or float, mask_stride         */
  const float *alibi_slopes;   /* Hq                                           */
  const float *sinks;      /* Hq                                               */
  const float *fox;        /* (batch, Hq, Lk) packed                           */
  const float *gate;       /* (batch, Hq, Lq) or (batch, Hq, Lq, Dv) packed    */
  const float *q_norm_w, *k_norm_w;   /* Dqk, or NULL (weights of 1)           */
  const float *k_scales;   /* k_int8: (batch, Hkv, ceil(Lk / 64)) packed       */
  const float *screen_r;   /* screening: Hq acceptance widths in (0, 1], or NULL */
  const float *screen_window;   /* screening: Hq windows (0 or +inf: none), or NULL */
} smx_attention_args;

/* What a run did (optional output of smx_attention_run). */
typedef struct smx_attention_stats {
  uint64_t row_tiles;           /* (query row, key tile) pairs the masks left  */
  uint64_t row_tiles_skipped;   /* of those, dropped by BLASST, or all-zero screening weights */
  uint64_t tiles_masked;        /* (query tile, key tile) pairs never visited  */
} smx_attention_stats;

typedef struct smx_attention_plan smx_attention_plan;

/* SMX_E_INVALID_ARG for a bad descriptor (sizes of 0 are allowed: nothing to do). */
SMX_API smx_status smx_attention_plan_create(const smx_attention_desc *desc, smx_attention_plan **plan);
/* Bytes of workspace a run needs (the plan allocates it itself when run gets NULL). */
SMX_API smx_status smx_attention_plan_workspace_size(const smx_attention_plan *plan, size_t *bytes);
/*
 * Runs the plan. workspace may be NULL (allocated for the call and freed:
 * SMX_E_NOMEM on failure) or hold workspace_bytes >= the reported size
 * (SMX_E_WORKSPACE_TOO_SMALL otherwise). stats may be NULL.
 */
SMX_API smx_status smx_attention_run(const smx_attention_plan *plan, const smx_attention_args *args,
                                     void *workspace, size_t workspace_bytes, smx_attention_stats *stats);
SMX_API smx_status smx_attention_plan_destroy(smx_attention_plan *plan);
/* The arithmetic a run of the plan would use now, under the kernel set in use: SMX_ATTN_MATH_BF16 when
 * its tile products are bf16 (some tasks of few rows, e.g. decoding, still compute in f32), else F32. */
SMX_API smx_status smx_attention_plan_math(const smx_attention_plan *plan, smx_attn_math *math);

/*
 * Merges n partial results of the same queries over disjoint key sets
 * (softmax kind, no sink in the parts): rows x dv outputs o[p] (f32, row
 * stride ldo) with their log-sum-exp lse[p]; out = sum_p e^{lse_p - L} o_p,
 * L = log sum_p e^{lse_p} (written to lse_out when not NULL). Parts with
 * lse = -inf are ignored; a row with none left gives 0 and -inf; a part with
 * lse NaN makes the row's out and L NaN. Folds in
 * the order p = 0, 1, ... out may equal o[0].
 */
SMX_API smx_status smx_attention_merge(size_t n, const float *const *o, const float *const *lse, size_t rows,
                                       size_t dv, size_t ldo, float *out, size_t ld_out, float *lse_out);

#ifdef __cplusplus
}
#endif

/* the backward pass (training): smx_attention_backward() on the same plan */
#include "smx/smx_attention_backward.h"

#endif
