/*
 * The S-DPO loss (Chen et al. 2024; definition and policy in include/smx/smx_losses.h).
 * With w the preferred item and m the log-ratio margins of a row,
 *   -log sigmoid(-log sum_{j != w} exp(b (m_j - m_w))) = log(1 + sum_{j != w} exp(b (m_j - m_w)))
 *                                                       = logsumexp_j(b m_j) - b m_w,
 * since the j = w term of the last sum is exp(0) = 1: the Plackett-Luce loss is exactly the
 * cross-entropy of softmax(b m) at w, with gradient b (softmax(b m) - onehot(w)). So it is the fused
 * cross-entropy (xent.c) at temperature 1 / b, in every dtype, with its bounds and special-value
 * rule, and no kernel of its own. Written this way the -log sigmoid(-log(...)) form never rounds
 * through the sigmoid: a row of tiny losses keeps its digits.
 */
#include <math.h>

#include "core/options.h"
#include "smx/smx.h"

/* The cross-entropy's options for a call of beta with opt: its loss fields (reduction, ignore_index,
 * grad_scale) kept, the temperature 1 / beta. SMX_E_INVALID_ARG where S-DPO refuses: a beta outside
 * [DBL_MIN, DBL_MAX] (1 / beta must be finite) or NaN, a temperature other than 0 or 1 (beta is the
 * temperature's reciprocal: two would be ambiguous), label smoothing or a z-loss (cross-entropy's), or what
 * every loss refuses. */
static smx_status sdpo_options(double beta, const smx_options *opt, smx_options *o, smx_loss_ext *e) {
  smx_loss_resolved r;
  smx_status st = smx_resolve_loss_options(opt, SMX_LOSS_USES_MASKED_FLAG, &r);
  if (st != SMX_OK) return st;
  if (!(beta >= 2.2250738585072014e-308 && beta <= 1.7976931348623157e308)) return SMX_E_INVALID_ARG;
  e->reduction = r.reduction;
  e->ignore_index = r.ignore_index;
  e->grad_scale = r.grad_scale;
  e->label_smoothing = 0.0;
  e->z_loss = 0.0;
  o->algo = SMX_ALGO_AUTO;
  o->temperature = 1.0 / beta;
  o->flags = r.base.flags;
  o->threads = r.base.threads;
  o->loss = e;
  return SMX_OK;
}

/* The four entry points: one expansion per dtype (T the logits, L the loss). */
#define SDPO_ENTRY(sfx, T, L)                                                                              \
  smx_status smx_sdpo_loss_##sfx(const T *margins, size_t ld, const int64_t *targets, L *loss, T *grad,      \
                                 size_t ldg, size_t rows, size_t cols, double beta, const smx_options *opt) { \
    smx_options o;                                                                                        \
    smx_loss_ext e;                                                                                       \
    smx_status st = sdpo_options(beta, opt, &o, &e);                                                      \
    if (st != SMX_OK) return st;                                                                          \
    return smx_cross_entropy_##sfx(margins, ld, targets, loss, grad, ldg, NULL, rows, cols, &o);          \
  }
SDPO_ENTRY(f64, double, double)
SDPO_ENTRY(f32, float, float)
SDPO_ENTRY(f16, uint16_t, float)
SDPO_ENTRY(bf16, uint16_t, float)
