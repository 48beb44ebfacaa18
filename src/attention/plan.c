/* Plans of the fused attention: descriptor checks and the task geometry (attention.h). */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "attention/attention.h"
#include "core/thread_pool.h"
#include "kernels/f32-attention/ukernels.h"
#include "registry/registry.h"

/* a * b, or 0 (refused) past PTRDIFF_MAX / 8 */
static size_t mul(size_t a, size_t b) {
  const size_t lim = (size_t)PTRDIFF_MAX / 8;
  if (a == 0 || b == 0) return 0;
  return a > lim / b ? 0 : a * b;
}

/* Resolves a stride triple and checks it (the rule of smx_attention.h). {0,0,0} is the packed layout.
 * Otherwise a zero stride broadcasts its dimension: every index of it reads the same data (a KV head
 * repeated by np.broadcast_to or torch.expand), and a nonzero row stride must hold a row. An output is
 * written by many threads at once, so a zero stride over more than one index there (threads writing
 * the same row) is refused unless the output is empty. */
static int strides_ok(size_t s[3], size_t batch, size_t heads, size_t len, size_t dim, int output) {
  if (s[0] == 0 && s[1] == 0 && s[2] == 0) {
    s[2] = dim;
    s[1] = len > 1 ? mul(len, dim) : dim;
    s[0] = heads > 1 ? mul(heads, s[1]) : s[1];
    return s[1] != 0 && s[0] != 0;
  }
  if (output && batch && heads && len && ((batch > 1 && !s[0]) || (heads > 1 && !s[1]) || (len > 1 && !s[2])))
    return 0;
  return len <= 1 || s[2] == 0 || s[2] >= dim;
}

static int finite(double x) { return x == x && x - x == 0.0; }

/* The options are used as floats: a finite double beyond FLT_MAX would become inf (softcap 1e300 or scale
 * 1e300 gave O = 0), and an option whose 0 means "off" or "default" must not round to 0 (softcap 1e-300
 * turned the cap off). in_float: |x| <= FLT_MAX; switch_ok: also 0 or |x| >= FLT_MIN. */
static int in_float(double x) { return finite(x) && fabs(x) <= (double)FLT_MAX; }
static int switch_ok(double x) { return in_float(x) && (x == 0.0 || fabs(x) >= (double)FLT_MIN); }

static smx_status check(const smx_attention_desc *d) {
  if (d->heads_kv == 0 ? d->heads_q != 0 : d->heads_q % d->heads_kv != 0) return SMX_E_INVALID_ARG;
  if (d->dim_qk == 0 || d->dim_v == 0) return SMX_E_INVALID_ARG;
  if ((unsigned)d->dtype > SMX_ATTN_BF16 || (unsigned)d->causal > SMX_ATTN_CAUSAL_TOP_LEFT) return SMX_E_INVALID_ARG;
  if ((unsigned)d->mask_kind > SMX_ATTN_MASK_BIAS || (unsigned)d->kind > SMX_ATTN_SCREEN) return SMX_E_INVALID_ARG;
  /* linear kinds: a running-sum algorithm, with the causal mask only */
  if ((d->kind == SMX_ATTN_LINEAR || d->kind == SMX_ATTN_COSFORMER || d->kind == SMX_ATTN_MALA) &&
      (d->window || d->mask_kind || d->alibi || d->radial_frame || d->softcap > 0 || d->ssmax_s != 0 || d->fox ||
       d->qk_norm || d->l2_distance || d->nsa_topk || d->k_int8))
    return SMX_E_INVALID_ARG;
  if (d->threads < 0) return SMX_E_INVALID_ARG;
  if (!in_float(d->scale) || !switch_ok(d->softcap) || d->softcap < 0 || !in_float(d->sigmoid_bias))
    return SMX_E_INVALID_ARG;
  /* SSMax's s >= 0, as smx_ssmax asks (a negative s turns the softmax around) */
  if (!switch_ok(d->ssmax_s) || d->ssmax_s < 0) return SMX_E_INVALID_ARG;
  if (!switch_ok(d->qk_norm_eps) || d->qk_norm_eps < 0) return SMX_E_INVALID_ARG;
  if (!switch_ok(d->blasst_log_threshold) || d->blasst_log_threshold > 0) return SMX_E_INVALID_ARG;
  if (d->window && (d->window_left < -1 || d->window_right < -1)) return SMX_E_INVALID_ARG;
  if (d->gate_flags & ~SMX_ATTN_GATE_ELEMENTWISE) return SMX_E_INVALID_ARG;
  if (d->radial_frame > ((size_t)1 << 40)) return SMX_E_INVALID_ARG;
  /* F is indexed by query position: positions must be keys */
  if (d->fox && d->len_q > d->len_k) return SMX_E_INVALID_ARG;
  /* differential attention: two maps over the halves of Dqk, softmax kind, no sink or QK-norm */
  if (!switch_ok(d->diff_lambda)) return SMX_E_INVALID_ARG;
  if (d->nsa_topk && d->diff_lambda != 0) return SMX_E_INVALID_ARG;
  if (d->k_int8_jensen && !d->k_int8) return SMX_E_INVALID_ARG;
  if (d->diff_lambda != 0 && (d->dim_qk % 2 || d->kind != SMX_ATTN_SOFTMAX || d->sinks || d->qk_norm))
    return SMX_E_INVALID_ARG;
  /* the sink and BLASST are defined on the softmax's running maximum */
  if (d->kind != SMX_ATTN_SOFTMAX && (d->sinks || d->blasst_log_threshold < 0)) return SMX_E_INVALID_ARG;
  /* screening: keys are kept or dropped, never shifted; options on the logits have no meaning there */
  if (!finite(d->screen_r) || d->screen_r < 0 || d->screen_r > 1 || !finite(d->screen_window) ||
      d->screen_window < 0 || !finite(d->screen_eps) || d->screen_eps < 0 ||
      (d->screen_flags & ~(SMX_ATTN_SCREEN_NO_VNORM | SMX_ATTN_SCREEN_NO_TANHNORM)))
    return SMX_E_INVALID_ARG;
  /* bf16 arithmetic is for f32 and bf16 storage (f16 has no native path here) */
  if ((unsigned)d->math > SMX_ATTN_MATH_BF16 || (d->math == SMX_ATTN_MATH_BF16 && d->dtype == SMX_ATTN_F16))
    return SMX_E_INVALID_ARG;
  if (d->kind == SMX_ATTN_SCREEN && (d->mask_kind == SMX_ATTN_MASK_BIAS || d->alibi || d->softcap > 0 ||
                                     d->ssmax_s != 0 || d->fox || d->qk_norm || d->l2_distance || d->nsa_topk ||
                                     d->k_int8_jensen))
    return SMX_E_INVALID_ARG;
  return SMX_OK;
}

/* floats, rounded up to whole cache lines */
static size_t lines(size_t floats) { return (floats + 15) / 16 * 64; }

smx_status smx_attention_plan_create(const smx_attention_desc *desc, smx_attention_plan **plan) {
  if (!desc || !plan) return SMX_E_INVALID_ARG;
  *plan = NULL;
  smx_status st = check(desc);
  if (st != SMX_OK) return st;
  struct smx_attention_plan p = { 0 };
  p.d = *desc;
  smx_attention_desc *d = &p.d;
  if (!strides_ok(d->q_stride, d->batch, d->heads_q, d->len_q, d->dim_qk, 0) ||
      !strides_ok(d->k_stride, d->batch, d->heads_kv, d->len_k, d->dim_qk, 0) ||   /* elements: bytes for int8 K */
      !strides_ok(d->v_stride, d->batch, d->heads_kv, d->len_k, d->dim_v, 0) ||
      !strides_ok(d->o_stride, d->batch, d->heads_q, d->len_q, d->dim_v, 1))
    return SMX_E_INVALID_ARG;
  p.elem = d->dtype == SMX_ATTN_F16 ? SMX_ELEM_F16 : d->dtype == SMX_ATTN_BF16 ? SMX_ELEM_BF16 : SMX_ELEM_F32;
  p.elem_size = smx_elem_size(p.elem);
  size_t dqe = d->diff_lambda != 0 ? d->dim_qk / 2 : d->dim_qk;
  p.scale = (float)(d->scale != 0.0 ? d->scale : 1.0 / sqrt((double)dqe));
  p.diff_lambda = (float)d->diff_lambda;
  p.softcap = (float)d->softcap;
  p.ssmax_s = (float)d->ssmax_s;
  p.sigmoid_bias = (float)d->sigmoid_bias;
  p.qk_eps = (float)(d->qk_norm_eps != 0.0 ? d->qk_norm_eps : 1e-6);
  p.blasst = (float)d->blasst_log_threshold;
  p.screen = d->kind == SMX_ATTN_SCREEN;
  /* at least the smallest normal float: 1 / eps stays finite, so a zero row gives 0, never NaN */
  p.screen_eps = (float)(d->screen_eps != 0.0 ? fmin(fmax(d->screen_eps, (double)FLT_MIN), (double)FLT_MAX) : 1e-12);
  p.linear = d->kind == SMX_ATTN_LINEAR || d->kind == SMX_ATTN_COSFORMER || d->kind == SMX_ATTN_MALA;
  p.nsa_blocks = d->nsa_topk ? (d->len_k + SMX_ATTN_BK - 1) / SMX_ATTN_BK : 0;
  p.elementwise = (d->k_int8 && d->k_int8_jensen) || d->nsa_topk || d->mask_kind != SMX_ATTN_MASK_NONE || d->alibi || d->radial_frame || d->softcap > 0 || d->l2_distance ||
                  d->ssmax_s != 0 || d->fox;

  size_t work = d->batch && d->heads_q && d->len_q ? 1 : 0;
  /* (Hq = 0 with Hkv > 0 is an empty batch of heads, not a group of 0: 64 / 0 was a division by zero that
   * fuzz_attention found, its input in tests/fuzz/crashes/attention/) */
  p.group = d->heads_kv && d->heads_q ? d->heads_q / d->heads_kv : 1;
  p.bq = p.group >= SMX_ATTN_ROWS ? 1 : SMX_ATTN_ROWS / p.group;
  if (d->len_q && p.bq > d->len_q) p.bq = d->len_q;
  p.rows = mul(p.group, p.bq);
  if (!p.rows) return SMX_E_INVALID_ARG;
  p.rows_pad = (p.rows + SMX_ATTN_ROW_PAD - 1) / SMX_ATTN_ROW_PAD * SMX_ATTN_ROW_PAD;
  p.n_qt = work ? (d->len_q + p.bq - 1) / p.bq : 0;
  p.n_split = 1;
  if (p.rows <= SMX_ATTN_SPLIT_ROWS && d->len_k >= 2 * SMX_ATTN_SPLIT_K && d->diff_lambda == 0 && !d->nsa_topk)
    p.n_split = (d->len_k + SMX_ATTN_SPLIT_K - 1) / SMX_ATTN_SPLIT_K;
  /* decoding: a task of few rows of the softmax kind (BLASST's skipped rows are the general path's) */
  p.decode = p.rows <= SMX_ATTN_DEC_ROWS && d->kind == SMX_ATTN_SOFTMAX && p.blasst == 0.0f;
  /* bf16 tile products (where the kernel set has them): bf16 storage unless F32 is asked for, f32 storage
   * that opted in; the general path's tasks (more rows than the few-row and decode kernels take), the
   * kinds whose P goes through `pv`, K read as it is stored (no int8, QK-norm or L2 norms), and not NSA
   * (its block choice scores the f32 inputs: rounded ones could choose other blocks) */
  int want = d->dtype == SMX_ATTN_BF16 ? d->math != SMX_ATTN_MATH_F32
                                       : d->dtype == SMX_ATTN_F32 && d->math == SMX_ATTN_MATH_BF16;
  p.bf16 = want && p.rows > SMX_ATTN_SPLIT_ROWS && !p.screen && !p.linear && !d->k_int8 && !d->qk_norm &&
           !d->l2_distance && !d->nsa_topk;
  /* decoding bf16 storage: Q K^T on the bf16 rows as stored (Q and K exact in bf16; P V stays f32) */
  p.dec16 = p.decode && d->dtype == SMX_ATTN_BF16 && d->math != SMX_ATTN_MATH_F32 && !d->k_int8 && !d->qk_norm &&
            !d->l2_distance && !d->nsa_topk;
  p.ldvp = (d->dim_v + 15) / 16 * 16;
  p.n_tasks = work ? mul(mul(d->batch, d->heads_kv), mul(p.n_qt, p.n_split)) : 0;
  if (work && !p.n_tasks) return SMX_E_INVALID_ARG;
  size_t t = d->threads > 1 ? (size_t)d->threads : 1;
  if (t > SMX_MAX_THREADS) t = SMX_MAX_THREADS;
  if (t > p.n_tasks) t = p.n_tasks ? p.n_tasks : 1;
  p.threads = t;

  size_t r = p.rows_pad, dq = d->dim_qk, dv = d->dim_v;
  size_t dmax = dq > dv ? dq : dv;
  size_t parts[] = { mul(dq, r), mul(dq, r), mul(SMX_ATTN_BK, r), mul(r, dv), r, r, r, mul(SMX_ATTN_BK, dq),
                     mul(SMX_ATTN_BK, dv), dmax, mul(r, dv), r, SMX_ATTN_BK, r, 4 * r, p.nsa_blocks ? mul(r, p.nsa_blocks) : 1, r,
                     r, r, r, r,
                     /* bf16 (in floats): Qp, Vp, Pp, the K tile */
                     p.bf16 || p.dec16 ? mul((dq + 1) / 2, r) : 1, p.bf16 ? mul(SMX_ATTN_BK / 2, p.ldvp) : 1,
                     p.bf16 ? mul(SMX_ATTN_BK / 2, r) : 1, p.bf16 ? mul(SMX_ATTN_BK, dq + 1) / 2 + 1 : 1,
                     p.decode && p.elem_size == 2 ? mul(SMX_ATTN_BK, r) : 1 };
  /* qr qt st o m l alpha kbuf vbuf tmp o1 lse1 knorm qnorm ranges nsa qsq fac sr sw nz qp vp pp kb st2
   * (tile.c carves them in this order) */
  size_t ws = 0;
  for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++) {
    if (!parts[i]) return SMX_E_INVALID_ARG;
    ws += lines(parts[i]);
  }
  p.ws_worker = ws;
  size_t total = mul(t, ws);
  if (p.n_split > 1) total += lines(mul(mul(p.n_tasks, r), dv + 2));
  if (p.linear) {   /* one task per (batch, query head); running sums of 2 Dqk x Dv, and row buffers */
    p.n_qt = 1;
    p.n_split = 1;
    p.n_tasks = work ? mul(d->batch, d->heads_q) : 0;
    t = d->threads > 1 ? (size_t)d->threads : 1;
    if (t > SMX_MAX_THREADS) t = SMX_MAX_THREADS;
    if (t > p.n_tasks) t = p.n_tasks ? p.n_tasks : 1;
    p.threads = t;
    p.ws_worker = lines(mul(2 * dq, dv)) + lines(2 * dq) * 3 + lines(dmax) + 2 * lines(dv);
    total = mul(t, p.ws_worker);
  }
  if (!total) return SMX_E_INVALID_ARG;
  p.ws_total = total + 64;   /* room to align the caller's pointer */

  struct smx_attention_plan *out = malloc(sizeof *out);
  if (!out) return SMX_E_NOMEM;
  *out = p;
  *plan = out;
  return SMX_OK;
}

smx_status smx_attention_plan_workspace_size(const smx_attention_plan *plan, size_t *bytes) {
  if (!plan || !bytes) return SMX_E_INVALID_ARG;
  *bytes = plan->ws_total;
  return SMX_OK;
}

smx_status smx_attention_plan_math(const smx_attention_plan *plan, smx_attn_math *math) {
  if (!plan || !math) return SMX_E_INVALID_ARG;
  *math = (plan->bf16 || plan->dec16) && smx_registry_current()->attn_bf16 ? SMX_ATTN_MATH_BF16 : SMX_ATTN_MATH_F32;
  return SMX_OK;
}

smx_status smx_attention_plan_destroy(smx_attention_plan *plan) {
  free(plan);
  return SMX_OK;
}
