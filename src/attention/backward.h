/*
 * Internals of the attention backward pass (include/smx/smx_attention_backward.h):
 * backward.c checks the operands and schedules the two passes, backward_tile.c
 * computes their tasks. The query blocks are the forward's task rows (attention.h:
 * the `group` query heads of a KV head times `bq` query indices), so the forward's
 * per-score options (scores.c) apply to the backward's score tiles unchanged.
 */
#ifndef SMX_ATTENTION_BACKWARD_H
#define SMX_ATTENTION_BACKWARD_H

#include "attention/attention.h"
#include "kernels/f32-attention-bwd/ukernels.h"

typedef struct smx_attn_bwd {
  smx_attn_run run;                    /* the forward's context: plan, args, io, workspace */
  const struct smx_attn_bwd_ukernels *bk;
  const void *d_o;
  const smx_attention_grads *g;
  size_t n_kt;                         /* key tiles per (batch, KV head)                 */
  size_t tasks1, tasks2;               /* (b, g, key tile), then (b, g, query block)     */
  size_t ws_worker;                    /* bytes of a worker's slice                      */
  float *diffrow;                      /* differential: per query row (lse1, lse2, D1, D2)  */
  int diff_ready;                      /* diffrow is filled (passes 1 and 2 read it)        */
  float *wpart;                        /* qk_norm: per task, its part of dk_norm_w (pass 1)
                                          then of dq_norm_w (pass 2), Dqk floats each    */
} smx_attn_bwd;

/* A worker's slice: the forward's (st, lo, hi and fac for the options; qr holds the scaled Q rows, o the dO
 * rows, kbuf and vbuf the K and V tiles, tmp a row), then the backward's own buffers. */
typedef struct smx_attn_bslice {
  smx_attn_slice f;
  float *p, *dp, *raw;      /* rows x SMX_ATTN_BK: P, dP then dS, the scores before the options */
  float *kt, *vt;           /* the key tile transposed: Dqk x SMX_ATTN_BK, Dv x SMX_ATTN_BK     */
  float *dka, *dva, *dqa;   /* the sums: SMX_ATTN_BK x Dqk, SMX_ATTN_BK x Dv, rows x Dqk        */
  float *dvec, *lse, *rsum; /* per row: D, lse, the row sums of dS (FoX)                         */
  float *csum;              /* FoX: per query head of the group, the column sums of dS          */
  /* Q rows and K tile for the gradient products, with non-finite rows set to 0: a key hidden from a row has
   * dS = 0 there, and 0 x NaN would carry a NaN of Q or K to rows and keys that do not see it (the rows that
   * do see it have dS NaN already, through their lse) */
  float *qg, *kg;
  int qbad, kbad;           /* whether qg / kg differ from the rows as loaded */
  /* differential attention: the second map's scores, P, dP then dS, raw scores; per row its lse and D */
  float *st2, *p2, *dp2, *raw2, *lse2, *dvec2;
} smx_attn_bslice;

/* 0 when the plan's backward is not computed (SMX_E_UNSUPPORTED). */
int smx_attn_bwd_supported(const struct smx_attention_plan *p);
/* Bytes of one worker's slice. */
size_t smx_attn_bwd_slice_bytes(const struct smx_attention_plan *p);
/* Pass 1: dK, dV (and dfox at the keys) of key tile `task`; pass 2: dQ (dbias, dgate, dfox at the
 * queries) of query block `task`. */
void smx_attn_bwd_kv_task(smx_attn_bwd *bw, size_t task, unsigned char *slice);
void smx_attn_bwd_q_task(smx_attn_bwd *bw, size_t task, unsigned char *slice);
/* The task helpers of backward_tile.c: a worker's slice cut from its bytes; the key ranges of query block
 * (g, t) into w->f.lo / hi with their union [lo_u, hi_u) and intersection [lo_i, hi_i), 1 when every row of
 * the block is real; the block's rows (scaled Q, gated dO, D, lse; pass2: dgate too); key tile [j0, j0 + nk)
 * (K and V transposed; returns the K rows for dQ, non-finite rows zeroed, row stride *ldk). */
smx_attn_bslice smx_attn_bwd_carve(const struct smx_attention_plan *p, unsigned char *at);
int smx_attn_bwd_block_ranges(const struct smx_attention_plan *p, smx_attn_bslice *w, size_t g, size_t t,
                              int64_t *lo_u, int64_t *hi_u, int64_t *lo_i, int64_t *hi_i);
void smx_attn_bwd_load_block(smx_attn_bwd *bw, smx_attn_bslice *w, size_t b, size_t g, size_t t, int pass2);
const float *smx_attn_bwd_load_tile(smx_attn_bwd *bw, smx_attn_bslice *w, size_t b, size_t g, size_t j0, size_t nk,
                                    size_t *ldk);
/* The variants' steps (backward_variants.c), each documented there. */
void smx_attn_bwd_rms_norm_vjp(float *g, const float *x, size_t n, float eps, const float *wt, float *acc);
void smx_attn_bwd_diff_tile(smx_attn_bwd *bw, smx_attn_bslice *w, size_t b, size_t g, size_t t, size_t j0, size_t nk,
                            int inside, int grads);
/* Differential attention, before pass 1: the second map's lse and both maps' D of query block `task`. */
void smx_attn_bwd_diff_task(smx_attn_bwd *bw, size_t task, unsigned char *slice);

#endif
