/*
 * smx — fused attention: the kinds and variants a plan computes, selected by
 * fields of smx_attention_desc (smx_attention.h, which includes this header and
 * states the layout, masks, NaN rule, accuracy and the plan API that apply to
 * every one of them).
 *
 * ---------------------------------------------------------------------------
 * Variants (per plan)
 * ---------------------------------------------------------------------------
 *  - l2_distance: z = -scale |q_i - k_j|^2 (L2-distance attention), formed as
 *    scale (2 q.k - |q|^2 - |k|^2); every option below then applies to it;
 *  - softcap > 0: z = softcap * tanh(z / softcap), before masks and biases;
 *  - ssmax_s > 0 (SSMax; < 0 is refused, as smx_ssmax refuses it):
 *    z *= ssmax_s * log(n_i), n_i = the keys that take part for query i:
 *    those the causal, window and radial masks leave and the mask tensor
 *    keeps (a false entry, or a bias of -inf, removes a key); counted once
 *    per row over the mask tensor;
 *  - sinks (run time, one logit per query head): e^{sink} joins the
 *    denominator only;
 *  - fox (run time, FoX forgetting gate): F[b,h,t] = cumulative log forget
 *    (length Lk per query head); z_ij += F[p_i] - F[j];
 *  - kind SMX_ATTN_SIGMOID: w_ij = sigmoid(z_ij + sigmoid_bias), no
 *    normalisation (FlashSigmoid); lse = log sum_j w_ij, summed with a shift
 *    so that it stays right where the weights underflow float (scores far
 *    below 0: lse about -120 + log n for scores about -120);
 *  - kind SMX_ATTN_SOFTPICK: w_ij = relu(e^z - 1) / (sum_j |e^z - 1| + eps),
 *    eps = 1e-8 after the max shift (the reference implementation's form:
 *    eps e^{m_i} unshifted, m_i the row's largest score), computed with the
 *    shift max(m_i, 0) so that scores far below 0 do not overflow e^{-m};
 *  - kind SMX_ATTN_LINEAR (Katharopoulos et al. 2020): w_ij = phi(q_i).phi(k_j)
 *    with phi = elu + 1, O_i = sum_j w_ij v_j / sum_j w_ij, computed in
 *    O(L D Dv) through the running sums sum_j phi(k_j) v_j^T (scale unused);
 *  - kind SMX_ATTN_COSFORMER (Qin et al. 2022): phi = relu and
 *    w_ij = phi(q_i).phi(k_j) cos(pi/2 (p_i - j) / Lk), by the same sums over
 *    the cos / sin halves;
 *  - kind SMX_ATTN_MALA (Fan et al. 2025, "Rectifying magnitude neglect in
 *    linear attention"): with a_ij = scale phi(q_i).phi(k_j), phi = elu + 1,
 *    n_i visible keys and z_i = mean_j a_ij, w_ij = ((1 + 1/(z_i + 1e-6))
 *    a_ij - z_i) / n_i (weights that sum to about 1 and may be negative; the
 *    reference code's form, means over the visible keys when causal; lse 0).
 *    All three: causal or not, no other mask or variant
 *    (SMX_E_INVALID_ARG); a row whose weights sum to 0 gives O = 0; lse is
 *    log sum_j w_ij (MALA: 0);
 *  - kind SMX_ATTN_SCREEN (screening, Multiscreen: Nakanishi 2026, "Screening
 *    Is Enough", arXiv 2604.01178): no softmax, no normalisation across
 *    keys. With x^ = x / max(|x|, eps) (eps = screen_eps, 0: 1e-12; at
 *    least FLT_MIN, so that a zero row gives 0),
 *      s_ij = q^_i . k^_j in [-1, 1] (scale is not used),
 *      a_ij = max(1 - (1 - s_ij) / r_h, 0)^2 (Trim: keys with s <= 1 - r_h
 *             take no part),
 *      m_ij = (cos(pi (j - p_i) / w_h) + 1) / 2 for -w_h < j - p_i <= 0,
 *             else 0 (the causal distance Softmask; with w_h = 0 or +inf
 *             it is off: m = 1 on every key the masks leave; keys outside
 *             (p_i - w_h, p_i] are not seen by row i, as with a window
 *             mask: they are never read, and a NaN there reaches no row),
 *      h_i  = sum_j a_ij m_ij v^_j, O_i = tanh(|h_i|) h_i / |h_i| (TanhNorm;
 *             h_i when it is 0).
 *    r_h in (0, 1] and w_h >= 0 are per query head: args.screen_r and
 *    args.screen_window (Hq each), or, where NULL, desc.screen_r and
 *    desc.screen_window for every head (screen_r 0 without the array:
 *    SMX_E_INVALID_ARG at run time). screen_flags switch off the
 *    normalisation of V (SMX_ATTN_SCREEN_NO_VNORM) or TanhNorm
 *    (SMX_ATTN_SCREEN_NO_TANHNORM). The masks (causal, window, radial, a
 *    bool mask) remove keys; an additive bias, ALiBi, softcap, SSMax, FoX,
 *    sinks, QK-norm, L2 distance, NSA, BLASST and the Jensen correction have
 *    no meaning here (SMX_E_INVALID_ARG). MiPE, the paper's position
 *    encoding, belongs to the model: rotate Q and K before the call. lse is
 *    log sum_j a_ij m_ij (-inf when no key passes). The stats count, per
 *    (row, tile), the tiles whose weights are all 0 as skipped (no P V);
 *  - output gate (run time): O *= sigmoid(g), g per (b, h, i) or per
 *    (b, h, i, d) with SMX_ATTN_GATE_ELEMENTWISE;
 *  - qk_norm: Q and K rows are RMS-normalised (eps qk_norm_eps, weights at
 *    run time, NULL = 1) before the product;
 *  - diff_lambda != 0 (differential attention, Ye et al. 2024): Dqk is split
 *    in halves, O = softmax(z1) V - lambda softmax(z2) V with z1, z2 from
 *    the first and second halves of Q and K (default scale 1/sqrt(Dqk/2)),
 *    the same masks for both; lse is the first map's. The per-head RMSNorm
 *    and (1 - lambda_init) of the paper are left to the caller. Softmax kind
 *    only, without sinks or QK-norm;
 *  - nsa_topk = n > 0 (NSA-style block selection, Yuan et al. 2025): keys in
 *    blocks of 64; a query row scores each block that its causal / window
 *    range holds whole by scale <q, mean of the block's keys>, keeps the n
 *    best (ties: lower block) plus the block of its last visible key, and
 *    attends only to those (with every other mask). Not with diff_lambda;
 *    extra workspace rows x ceil(Lk / 64) floats per thread;
 *  - k_int8: K is stored as int8 (whatever dtype says of Q, V, O), key j of
 *    KV head (b, g) being k * k_scales[(b Hkv + g) ceil(Lk/64) + j / 64]. With
 *    k_int8_jensen, each logit gets -|scale q|^2 s_b^2 / 24: rounding K to a
 *    step s_b adds noise of variance |scale q|^2 s_b^2 / 12 to the logit, and
 *    E[e^{z + noise}] = e^{z + var/2} (Jensen), so the softmax weights are
 *    unbiased to first order;
 *  - blasst_log_threshold < 0 (BLASST): for a query row, a key tile whose
 *    largest logit lies more than |threshold| below the running maximum is
 *    dropped (the first tile a row sees is never dropped); the stats report
 *    how many were.
 */
#ifndef SMX_SMX_ATTENTION_VARIANTS_H
#define SMX_SMX_ATTENTION_VARIANTS_H

/* Only enums and flags: it includes nothing, so that smx.h -> smx_attention.h -> here has no cycle. */

#ifdef __cplusplus
extern "C" {
#endif

typedef enum smx_attn_kind {
  SMX_ATTN_SOFTMAX = 0,
  SMX_ATTN_SIGMOID = 1,
  SMX_ATTN_SOFTPICK = 2,
  SMX_ATTN_LINEAR = 3,      /* linear attention, phi = elu + 1 (no softmax)  */
  SMX_ATTN_COSFORMER = 4,   /* cosFormer: phi = relu, cos re-weighting        */
  SMX_ATTN_MALA = 5,        /* magnitude-aware linear attention               */
  SMX_ATTN_SCREEN = 6       /* screening (Multiscreen): Trim, Softmask, TanhNorm */
} smx_attn_kind;

#define SMX_ATTN_GATE_ELEMENTWISE 0x1u   /* gate is (b, h, i, d), not (b, h, i) */
#define SMX_ATTN_SCREEN_NO_VNORM 0x1u    /* screening: V rows as given, not unit-normalised */
#define SMX_ATTN_SCREEN_NO_TANHNORM 0x2u /* screening: O = h, without TanhNorm               */

#ifdef __cplusplus
}
#endif
#endif /* SMX_SMX_ATTENTION_VARIANTS_H */
