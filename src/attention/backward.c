/*
 * The attention backward pass (include/smx/smx_attention_backward.h): which
 * plans it covers, the operand checks (all before any write), the workspace,
 * and the two passes over the thread pool (backward_tile.c computes the tasks).
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "attention/backward.h"
#include "core/operands.h"
#include "core/thread_pool.h"
#include "registry/registry.h"

int smx_attn_bwd_supported(const struct smx_attention_plan *p) {
  const smx_attention_desc *d = &p->d;
  return (d->kind == SMX_ATTN_SOFTMAX || d->kind == SMX_ATTN_SIGMOID || d->kind == SMX_ATTN_SOFTPICK) &&
         !d->l2_distance && !d->nsa_topk &&
         !d->k_int8 && p->blasst == 0.0f;
}

/* a * b, or 0 past PTRDIFF_MAX / 8 (a product of 0 is reported by the caller's own zero tests) */
static size_t mul(size_t a, size_t b) {
  const size_t lim = (size_t)PTRDIFF_MAX / 8;
  if (a == 0 || b == 0) return 0;
  return a > lim / b ? SIZE_MAX : a * b;
}

typedef struct geom {
  size_t n_kt, tasks1, tasks2, threads, slice, parts, diffrow, total;
} geom;

static geom geometry(const struct smx_attention_plan *p) {
  const smx_attention_desc *d = &p->d;
  geom q;
  q.n_kt = (d->len_k + SMX_ATTN_BK - 1) / SMX_ATTN_BK;
  q.tasks1 = mul(mul(d->batch, d->heads_kv), q.n_kt);
  q.tasks2 = d->heads_q && d->len_q ? mul(mul(d->batch, d->heads_kv), p->n_qt) : 0;
  size_t most = q.tasks1 > q.tasks2 ? q.tasks1 : q.tasks2;
  size_t t = d->threads > 1 ? (size_t)d->threads : 1;
  if (t > SMX_MAX_THREADS) t = SMX_MAX_THREADS;
  if (t > most) t = most ? most : 1;
  q.threads = t;
  q.slice = smx_attn_bwd_slice_bytes(p);
  /* QK-norm: each task's part of the weights' gradients, summed in task order at the end (bitwise the same for
   * every thread count) */
  q.parts = d->qk_norm ? mul(mul(q.tasks1 + q.tasks2, d->dim_qk), sizeof(float)) : 0;
  /* differential attention: per query row, the second map's lse and both maps' D (the first pass) */
  q.diffrow = d->diff_lambda != 0 ? mul(mul(mul(d->batch, d->heads_q), d->len_q), 4 * sizeof(float)) : 0;
  q.total = mul(t, q.slice) + q.parts + q.diffrow + 64;   /* room to align the caller's pointer */
  if (q.parts == SIZE_MAX || q.diffrow == SIZE_MAX || q.total < q.parts + q.diffrow) q.total = SIZE_MAX;
  return q;
}

smx_status smx_attention_backward_workspace_size(const smx_attention_plan *plan, size_t *bytes) {
  if (!plan || !bytes) return SMX_E_INVALID_ARG;
  if (!smx_attn_bwd_supported(plan)) return SMX_E_UNSUPPORTED;
  *bytes = geometry(plan).total;
  if (*bytes == SIZE_MAX) return SMX_E_INVALID_ARG;
  return SMX_OK;
}

/* A memory range an operand spans (bytes 0: absent or empty). */
typedef struct range {
  const void *at;
  size_t bytes;
} range;

/* Elements a (batch, Hq, Lq, Lk) mask spans through its strides, or SIZE_MAX past the limit. */
static size_t mask_span(const smx_attention_desc *d) {
  size_t n[4] = { d->batch, d->heads_q, d->len_q, d->len_k }, total = 1;
  for (int k = 0; k < 4; k++) {
    if (n[k] <= 1) continue;
    size_t add = mul(n[k] - 1, d->mask_stride[k]);
    if (add == SIZE_MAX || total > SIZE_MAX / 16 - add) return SIZE_MAX;
    total += add;
  }
  return total;
}

static void bwd_kv_worker(void *ctx, size_t w) {
  smx_attn_bwd *bw = ctx;
  for (;;) {
    size_t t = atomic_fetch_add_explicit(&bw->run.next, 1, memory_order_relaxed);
    if (t >= bw->tasks1) return;
    smx_attn_bwd_kv_task(bw, t, bw->run.ws + w * bw->ws_worker);
  }
}

static void bwd_diff_worker(void *ctx, size_t w) {
  smx_attn_bwd *bw = ctx;
  for (;;) {
    size_t t = atomic_fetch_add_explicit(&bw->run.next, 1, memory_order_relaxed);
    if (t >= bw->tasks2) return;
    smx_attn_bwd_diff_task(bw, t, bw->run.ws + w * bw->ws_worker);
  }
}

static void bwd_q_worker(void *ctx, size_t w) {
  smx_attn_bwd *bw = ctx;
  for (;;) {
    size_t t = atomic_fetch_add_explicit(&bw->run.next, 1, memory_order_relaxed);
    if (t >= bw->tasks2) return;
    smx_attn_bwd_q_task(bw, t, bw->run.ws + w * bw->ws_worker);
  }
}

/* dsinks[h] = -sum_{b,i} e^{sink_h - lse_i} D_i, in (b, i) order on the calling thread (two rows of scratch). */
static void sink_grads(smx_attn_bwd *bw, float *row_o, float *row_do) {
  const struct smx_attention_plan *p = bw->run.p;
  const smx_attention_desc *d = &p->d;
  const smx_attention_args *a = bw->run.a;
  size_t dv = d->dim_v, es = p->elem_size;
  for (size_t h = 0; h < d->heads_q; h++) {
    double s = 0.0;
    for (size_t b = 0; b < d->batch; b++)
      for (size_t i = 0; i < d->len_q; i++) {
        size_t off = (b * d->o_stride[0] + h * d->o_stride[1] + i * d->o_stride[2]) * es;
        bw->run.io.load(dv, (const unsigned char *)a->o + off, row_o);
        bw->run.io.load(dv, (const unsigned char *)bw->d_o + off, row_do);
        double dd = 0.0;
        for (size_t x = 0; x < dv; x++) dd += (double)row_do[x] * row_o[x];
        float lse = a->lse[(b * d->heads_q + h) * d->len_q + i];
        s += exp((double)a->sinks[h] - (double)lse) * dd;
      }
    bw->g->dsinks[h] = (float)-s;
  }
}

smx_status smx_attention_backward(const smx_attention_plan *plan, const smx_attention_args *a, const void *d_o,
                                  const smx_attention_grads *gr, void *workspace, size_t workspace_bytes) {
  return smx_attention_backward_qk_norm(plan, a, d_o, gr, NULL, NULL, workspace, workspace_bytes);
}

smx_status smx_attention_backward_qk_norm(const smx_attention_plan *plan, const smx_attention_args *a,
                                          const void *d_o, const smx_attention_grads *gr, float *dq_norm_w,
                                          float *dk_norm_w, void *workspace, size_t workspace_bytes) {
  if (!plan || !a || !gr) return SMX_E_INVALID_ARG;
  const struct smx_attention_plan *p = plan;
  const smx_attention_desc *d = &p->d;
  if (!d->qk_norm && (dq_norm_w || dk_norm_w)) return SMX_E_INVALID_ARG;
  if (!smx_attn_bwd_supported(p)) return SMX_E_UNSUPPORTED;
  geom gm = geometry(p);
  size_t es = p->elem_size, dq = d->dim_qk, dv = d->dim_v;
  size_t rows = mul(mul(d->batch, d->heads_q), d->len_q), keys = mul(mul(d->batch, d->heads_kv), d->len_k);
  if (rows == SIZE_MAX || keys == SIZE_MAX) return SMX_E_INVALID_ARG;
  /* every operand the forward read, its output and lse, dO, and the gradients the plan asks for */
  if (rows && (!a->q || !a->o || !a->lse || !d_o || !gr->dq)) return SMX_E_INVALID_ARG;
  if (keys && (!gr->dk || !gr->dv)) return SMX_E_INVALID_ARG;
  if (rows && keys && (!a->k || !a->v)) return SMX_E_INVALID_ARG;
  if (rows && ((d->mask_kind && !a->mask) || (d->alibi && !a->alibi_slopes) || (d->sinks && !a->sinks) ||
               (d->fox && !a->fox) || (d->gate && !a->gate)))
    return SMX_E_INVALID_ARG;
  int ew = (d->gate_flags & SMX_ATTN_GATE_ELEMENTWISE) != 0;
  size_t qb = rows ? smx_attn_span_bytes(d->q_stride, d->batch, d->heads_q, d->len_q, dq, es) : 0;
  size_t ob = rows ? smx_attn_span_bytes(d->o_stride, d->batch, d->heads_q, d->len_q, dv, es) : 0;
  size_t kb = rows && keys ? smx_attn_span_bytes(d->k_stride, d->batch, d->heads_kv, d->len_k, dq, es) : 0;
  size_t vb = rows && keys ? smx_attn_span_bytes(d->v_stride, d->batch, d->heads_kv, d->len_k, dv, es) : 0;
  if ((rows && (!qb || !ob)) || (rows && keys && (!kb || !vb))) return SMX_E_INVALID_ARG;
  size_t mk = rows && d->mask_kind ? mask_span(d) : 0;
  if (mk == SIZE_MAX) return SMX_E_INVALID_ARG;
  size_t lk4 = mul(mul(mul(d->batch, d->heads_q), d->len_k), sizeof(float));
  size_t gate_b = d->gate ? mul(mul(rows, ew ? dv : 1), sizeof(float)) : 0;
  size_t dbias_b = d->mask_kind == SMX_ATTN_MASK_BIAS && gr->dbias ? mul(mul(rows, d->len_k), sizeof(float)) : 0;
  size_t dq_b = mul(mul(rows, dq), es), dk_b = mul(mul(keys, dq), es), dv_b = mul(mul(keys, dv), es);
  if (lk4 == SIZE_MAX || gate_b == SIZE_MAX || dbias_b == SIZE_MAX || dq_b == SIZE_MAX || dk_b == SIZE_MAX ||
      dv_b == SIZE_MAX)
    return SMX_E_INVALID_ARG;
  range in[] = { { a->q, qb },
                 { a->k, kb },
                 { a->v, vb },
                 { a->o, ob },
                 { d_o, ob },
                 { a->lse, rows ? rows * sizeof(float) : 0 },
                 { a->mask, mk ? mk * (d->mask_kind == SMX_ATTN_MASK_BOOL ? 1 : sizeof(float)) : 0 },
                 { a->alibi_slopes, d->alibi ? d->heads_q * sizeof(float) : 0 },
                 { a->sinks, d->sinks ? d->heads_q * sizeof(float) : 0 },
                 { a->fox, d->fox ? lk4 : 0 },
                 { a->gate, gate_b },
                 { a->q_norm_w, d->qk_norm && a->q_norm_w ? dq * sizeof(float) : 0 },
                 { a->k_norm_w, d->qk_norm && a->k_norm_w ? dq * sizeof(float) : 0 } };
  range out[] = { { gr->dq, dq_b },
                  { gr->dk, dk_b },
                  { gr->dv, dv_b },
                  { gr->dbias, dbias_b },
                  { gr->dsinks, d->sinks && gr->dsinks ? d->heads_q * sizeof(float) : 0 },
                  { gr->dfox, d->fox && gr->dfox ? lk4 : 0 },
                  { gr->dgate, d->gate && gr->dgate ? gate_b : 0 },
                  { dq_norm_w, d->qk_norm && dq_norm_w ? dq * sizeof(float) : 0 },
                  { dk_norm_w, d->qk_norm && dk_norm_w ? dq * sizeof(float) : 0 } };
  size_t n_in = sizeof in / sizeof in[0], n_out = sizeof out / sizeof out[0];
  for (size_t o = 0; o < n_out; o++) {
    if (!out[o].bytes) continue;
    for (size_t i = 0; i < n_in; i++)
      if (in[i].bytes && smx_overlap(out[o].at, out[o].bytes, in[i].at, in[i].bytes)) return SMX_E_INVALID_ARG;
    for (size_t o2 = o + 1; o2 < n_out; o2++)
      if (out[o2].bytes && smx_overlap(out[o].at, out[o].bytes, out[o2].at, out[o2].bytes)) return SMX_E_INVALID_ARG;
  }

  if (gm.total == SIZE_MAX) return SMX_E_INVALID_ARG;
  if (!rows && !keys) {   /* nothing to compute; the sinks' and norm weights' gradients are 0 */
    if (d->sinks && gr->dsinks)
      for (size_t h = 0; h < d->heads_q; h++) gr->dsinks[h] = 0.0f;
    for (size_t x = 0; d->qk_norm && x < dq; x++) {
      if (dq_norm_w) dq_norm_w[x] = 0.0f;
      if (dk_norm_w) dk_norm_w[x] = 0.0f;
    }
    return SMX_OK;
  }
  void *owned = NULL;
  if (!workspace) {
    owned = malloc(gm.total);
    if (!owned) return SMX_E_NOMEM;
    workspace = owned;
  } else if (workspace_bytes < gm.total) {
    return SMX_E_WORKSPACE_TOO_SMALL;
  }
  smx_attn_bwd bw;
  bw.run.p = p;
  bw.run.a = a;
  bw.run.uk = smx_registry_current()->attn;
  bw.run.io = smx_elem_io_for(p->elem);
  bw.run.ws = (unsigned char *)(((uintptr_t)workspace + 63) & ~(uintptr_t)63);
  bw.run.partials = NULL;
  atomic_init(&bw.run.row_tiles, 0);
  atomic_init(&bw.run.skipped, 0);
  atomic_init(&bw.run.masked, 0);
  bw.bk = smx_registry_current()->attn_bwd;
  bw.d_o = d_o;
  bw.g = gr;
  bw.n_kt = gm.n_kt;
  bw.tasks1 = gm.tasks1;
  bw.tasks2 = gm.tasks2;
  bw.ws_worker = gm.slice;
  bw.wpart = gm.parts ? (float *)(void *)(bw.run.ws + gm.threads * gm.slice) : NULL;
  bw.diffrow = gm.diffrow ? (float *)(void *)(bw.run.ws + gm.threads * gm.slice + gm.parts) : NULL;
  bw.diff_ready = 0;
  /* pass 1 before pass 2: FoX's gradient at the queries is added to what pass 1 wrote at the keys */
  atomic_init(&bw.run.next, 0);
  if (bw.diffrow && gm.tasks2) {   /* differential: the rows' second lse and D first (both passes read them) */
    smx_parallel_for((int)gm.threads, gm.threads, bwd_diff_worker, &bw);
    atomic_store(&bw.run.next, 0);
  }
  bw.diff_ready = 1;
  if (gm.tasks1) smx_parallel_for((int)gm.threads, gm.threads, bwd_kv_worker, &bw);
  atomic_store(&bw.run.next, 0);
  if (gm.tasks2) smx_parallel_for((int)gm.threads, gm.threads, bwd_q_worker, &bw);
  if (bw.wpart) {   /* the norm weights' gradients: the tasks' parts in task order, in double */
    for (int which = 0; which < 2; which++) {
      float *dw = which ? dq_norm_w : dk_norm_w;
      const float *part = bw.wpart + (which ? gm.tasks1 : 0) * dq;
      size_t n = which ? gm.tasks2 : gm.tasks1;
      for (size_t x = 0; dw && x < dq; x++) {
        double s = 0.0;
        for (size_t t = 0; t < n; t++) s += part[t * dq + x];
        dw[x] = (float)s;
      }
    }
  }
  if (d->sinks && gr->dsinks && rows) {
    float *row = (float *)(void *)bw.run.ws;
    sink_grads(&bw, row, row + dv);
  } else if (d->sinks && gr->dsinks) {
    for (size_t h = 0; h < d->heads_q; h++) gr->dsinks[h] = 0.0f;
  }
  free(owned);
  return SMX_OK;
}
