/*
 * smx — the backward pass of the fused attention (smx_attention.h), for
 * training: FlashAttention-2's backward (Dao 2023, arXiv 2307.08691,
 * Algorithm 2) on the CPU, run on the forward's own plan.
 *
 * Given the forward's inputs, its output O and its log-sum-exp (args.lse,
 * required), and dO = dLoss/dO (o_stride layout, the storage dtype), it
 * computes dQ, dK, dV and the gradients of the run-time operands that carry
 * one:
 *   D_i   = sum_x dO[i,x] O[i,x]
 *   P_ij  = e^{z_ij - lse_i}             (recomputed tile by tile)
 *   dV_j  = sum_i P_ij dO_i              (summed over the query heads of a KV head)
 *   dS_ij = P_ij (dO_i . V_j - D_i)      (= dLoss/dz_ij)
 *   dQ_i  = scale sum_j dS'_ij K_j,  dK_j = scale sum_i dS'_ij Q_i
 * with dS' = dS times the derivative of the per-score options (softcap:
 * 1 - tanh^2, SSMax: s log n_i). The Lq x Lk matrices are never formed.
 * Two passes, so that no two threads add to the same output: tasks
 * (batch, KV head, key tile) sum dK and dV over every query row, then tasks
 * (batch, KV head, query tile) sum dQ over every key; each sum runs in a
 * fixed order, so the gradients are bitwise identical for every thread
 * count. Extra memory: O(threads x tile) (smx_attention_backward_workspace_size),
 * plus Dqk floats per task with QK-norm (the parts of the weights' gradients).
 *
 * Supported: the softmax kind with every mask (causal in both alignments,
 * window, radial, a bool mask, an additive bias, ALiBi), MHA / GQA / MQA,
 * sinks, softcap, SSMax, FoX and the output gate, f32 / f16 / bf16 storage;
 * the sigmoid kind (dS = w (1 - w) dP, no D) and the softpick kind with the
 * same options but sinks (which the forward refuses for them). Softpick:
 * lse = log(sum_j |e^{z_j} - 1| + eps e^{m_i}) (m_i the row's largest score),
 * w = relu(e^z - 1) e^{-lse}, dS = e^{z - lse} (1[z > 0] dP - sign(z) D)
 * (0 at z = 0); the eps term's derivative through m_i, -eps e^{m_i - lse} D
 * at the row's first maximum, is left out (at most 1e-8 of that key's
 * e^{m_i - lse} |D|, inside the bound below).
 * QK-norm (any of these kinds): the products use the normalised rows
 * x^ = x r w, r = 1 / sqrt(mean(x^2) + eps), and dX^ goes back through the
 * RMSNorm, dX = r (dY - Y mean(dY Y)) with Y = x r, dY = dX^ w; the weights'
 * gradients are sum over rows of dX^ Y (smx_attention_backward_qk_norm). A
 * key that no query row sees gets dK = 0 whatever it holds.
 * Differential attention (diff_lambda, O = O1 - lambda O2, O_m = softmax(z_m) V
 * on the halves of Dqk): a first pass over the query blocks recomputes the
 * second map's lse (the forward keeps the first's) and each map's D_m =
 * dO . O_m (the stored O does not give them apart); then dS1 = P1 (dP - D1),
 * dS2 = -lambda P2 (dP - D2), each into its half of dQ and dK, dV from
 * P1 - lambda P2, dbias and dfox from dS1 + dS2. A NaN score in either map
 * makes the row's gradients NaN in both halves. Extra memory: 16 bytes per
 * query row.
 * SMX_E_UNSUPPORTED (nothing written) for the plans whose backward smx does
 * not compute: the other kinds (linear, cosFormer, MALA, screening: other
 * algorithms), L2 distance (its derivative
 * adds row terms), NSA (a discrete block choice), int8 K (no gradient to a
 * quantised cache), BLASST (a dropped tile has no gradient the forward
 * agrees with); docs/attention.md says more for each.
 *
 * Outputs: dq (B, Hq, Lq, Dqk), dk (B, Hkv, Lk, Dqk) and dv (B, Hkv, Lk, Dv),
 * packed, in the storage dtype; each written whole. Optional (NULL: not
 * computed), f32, packed:
 *  - dbias (B, Hq, Lq, Lk) with SMX_ATTN_MASK_BIAS: dLoss/dbias = dS, 0
 *    where a key is hidden; a bias broadcast over batch, heads or rows is
 *    read through its strides and its gradient is the sum of dbias over
 *    those dimensions, left to the caller (as autograd does);
 *  - dsinks (Hq) with sinks: -sum_{b,i} e^{sink_h - lse_i} D_i;
 *  - dfox (B, Hq, Lk) with FoX: dLoss/dF (z_ij += F[p_i] - F[j]);
 *  - dgate with the output gate, the gate's shape: dO O (1 - sigmoid(g))
 *    (summed over the row for a per-row gate);
 *  - with qk_norm, smx_attention_backward_qk_norm() also writes dq_norm_w
 *    and dk_norm_w (Dqk f32 each, either may be NULL), the gradients of the
 *    RMSNorm weights args.q_norm_w / k_norm_w (also when those are NULL,
 *    i.e. at weights of 1), summed over every Q (K) row in a fixed order.
 *
 * Refused with SMX_E_INVALID_ARG before anything is written: a NULL plan,
 * args, dO or gradient output asked for by the plan (dq, dk, dv; dk and dv
 * may be NULL only when Lk = 0), a missing lse or other operand the forward
 * needs, what the forward's run refuses, and any output that overlaps any
 * input (Q, K, V, O, lse, dO, the mask, ...) or another output.
 *
 * Accuracy (f32 storage, against a long-double reference of the composed
 * form, tests/unit/test_attention_backward.c and attn_soak):
 *   |dX - ref| <= (2^-16 + 2^-23 L / 8) * M_X
 * per element, L = max(Lq, Lk), where M_X is the reference computed on
 * absolute values (|dS| from |dP| + |D|, |K|, |Q|, |dO|; each weight w, and
 * for sigmoid also 1 - w, taken times 1 + Z / 32): the bound of a sum
 * of such terms each carrying a few roundings, plus the recomputed P's
 * 2^-24 Z per logit of magnitude Z (as in the forward's bound). Where dS
 * cancels (dP close to D) the error is relative to M_X, not to |dX|.
 * Softpick: each weight enters M_X as (e^{z - lse} + e^{-lse}) kappa_i
 * (1 + Z / 32) and each dS as e^{z - lse} kappa_i (1 + Z / 32) (|dP| + |D|),
 * kappa_i = sum_j (e^{z_j - lse} + e^{-lse}) >= 1: the terms |e^z - 1| of
 * the forward's denominator cancel for z near 0, and its lse carries their
 * rounding relatively kappa_i times (docs/attention.md); a score within its
 * rounding of 0 (|z| <= 2^-20 Z) may fall on either side of the kink, so
 * its dS is only bounded by e^{z - lse} (|dP| + 2 |D|).
 * QK-norm: M of dQ^ and dK^ as above on the normalised rows, carried
 * through the norm on absolute values, r (|w| M + |Y| mean(|w| M |Y|)); of
 * the weights' gradients sum over rows of M |Y|. Differential attention:
 * M is the sum of the two maps' (the second's with |lambda| |dO|), and
 * dgate's is relative to the largest |O1| + |lambda| |O2| (O may cancel).
 * f16 / bf16 storage add the one rounding of each stored gradient, and the
 * stored O's where it is below the type's normal range (half the smallest
 * subnormal, absolute): through D_i = sum dO O into every dS, and into dgate
 * as |dO| (1 - sigmoid(g)) times it.
 *
 * NaN: a NaN score (NaN in Q, K or the bias) makes the row's lse NaN in the
 * forward; its P, dS and dQ row are NaN and so are dK and dV of every key the
 * row sees; a key hidden from a row adds exactly 0 to that row's gradients.
 */
#ifndef SMX_SMX_ATTENTION_BACKWARD_H
#define SMX_SMX_ATTENTION_BACKWARD_H

#include "smx/smx_attention.h" /* its plan and argument types (a header compiles on its own: check-install) */

#ifdef __cplusplus
extern "C" {
#endif

/* The gradients a backward run writes (see above for each shape). */
typedef struct smx_attention_grads {
  void *dq, *dk, *dv;
  float *dbias;    /* SMX_ATTN_MASK_BIAS, or NULL */
  float *dsinks;   /* sinks, or NULL              */
  float *dfox;     /* fox, or NULL                */
  float *dgate;    /* gate, or NULL               */
} smx_attention_grads;

/* Bytes of workspace a backward run of this plan needs; SMX_E_UNSUPPORTED as the run. */
SMX_API smx_status smx_attention_backward_workspace_size(const smx_attention_plan *plan, size_t *bytes);
/*
 * The backward pass: args are the forward's (o its output, lse its log-sum-exp), d_o the gradient of O.
 * workspace as in smx_attention_run (NULL: allocated for the call).
 */
SMX_API smx_status smx_attention_backward(const smx_attention_plan *plan, const smx_attention_args *args,
                                          const void *d_o, const smx_attention_grads *grads, void *workspace,
                                          size_t workspace_bytes);
/* The same, and with qk_norm the gradients of the RMSNorm weights (Dqk floats each, or NULL); without
 * qk_norm they must be NULL (else SMX_E_INVALID_ARG). */
SMX_API smx_status smx_attention_backward_qk_norm(const smx_attention_plan *plan, const smx_attention_args *args,
                                                  const void *d_o, const smx_attention_grads *grads,
                                                  float *dq_norm_w, float *dk_norm_w, void *workspace,
                                                  size_t workspace_bytes);

#ifdef __cplusplus
}
#endif

#endif
