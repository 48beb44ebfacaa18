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

/* 0 when the plan's backward is not computed (SMX_E_UNSUPPORTED). */
int smx_attn_bwd_supported(const struct smx_attention_plan *p);
/* Bytes of one worker's slice. */
size_t smx_attn_bwd_slice_bytes(const struct smx_attention_plan *p);
/* Pass 1: dK, dV (and dfox at the keys) of key tile `task`; pass 2: dQ (dbias, dgate, dfox at the
 * queries) of query block `task`. */
void smx_attn_bwd_kv_task(smx_attn_bwd *bw, size_t task, unsigned char *slice);
void smx_attn_bwd_q_task(smx_attn_bwd *bw, size_t task, unsigned char *slice);
/* Differential attention, before pass 1: the second map's lse and both maps' D of query block `task`. */
void smx_attn_bwd_diff_task(smx_attn_bwd *bw, size_t task, unsigned char *slice);

#endif
