/* Running a fused-attention plan: argument checks, workspace, the task loop over the thread pool. */
#include <stdint.h>
#include <stdlib.h>

#include "attention/attention.h"
#include "core/operands.h"
#include "core/thread_pool.h"
#include "registry/registry.h"

size_t smx_attn_span_bytes(const size_t s[3], size_t n0, size_t n1, size_t n2, size_t dim, size_t es) {
  const size_t lim = (size_t)PTRDIFF_MAX / 8;
  size_t n[3] = { n0, n1, n2 }, total = dim;
  for (int k = 0; k < 3; k++) {
    if (n[k] <= 1) continue;
    if (s[k] && n[k] - 1 > lim / s[k]) return 0;
    size_t add = (n[k] - 1) * s[k];
    if (total > lim - add) return 0;
    total += add;
  }
  return total > lim / es ? 0 : total * es;
}

static void worker(void *ctx, size_t w) {
  smx_attn_run *run = ctx;
  unsigned char *slice = run->ws + w * run->p->ws_worker;
  for (;;) {
    size_t t = atomic_fetch_add_explicit(&run->next, 1, memory_order_relaxed);
    if (t >= run->p->n_tasks) return;
    if (run->p->linear)
      smx_attn_linear_task(run, t, slice);
    else
      smx_attn_task(run, t, slice);
  }
}

static void folder(void *ctx, size_t w) {
  smx_attn_run *run = ctx;
  unsigned char *slice = run->ws + w * run->p->ws_worker;
  size_t tiles = run->p->n_tasks / run->p->n_split;
  for (;;) {
    size_t t = atomic_fetch_add_explicit(&run->next, 1, memory_order_relaxed);
    if (t >= tiles) return;
    smx_attn_fold(run, t, slice);
  }
}

smx_status smx_attention_run(const smx_attention_plan *plan, const smx_attention_args *a, void *workspace,
                             size_t workspace_bytes, smx_attention_stats *stats) {
  if (!plan || !a) return SMX_E_INVALID_ARG;
  const struct smx_attention_plan *p = plan;
  const smx_attention_desc *d = &p->d;
  if (stats) stats->row_tiles = stats->row_tiles_skipped = stats->tiles_masked = 0;
  if (!p->n_tasks) return SMX_OK;
  if (!a->q || !a->o || (d->len_k && (!a->k || !a->v))) return SMX_E_INVALID_ARG;
  if ((d->mask_kind && !a->mask) || (d->alibi && !a->alibi_slopes) || (d->sinks && !a->sinks) ||
      (d->fox && !a->fox) || (d->gate && !a->gate) || (d->k_int8 && !a->k_scales))
    return SMX_E_INVALID_ARG;
  if (p->screen && !smx_attn_screen_check(p, a)) return SMX_E_INVALID_ARG;
  size_t es = p->elem_size;
  size_t qb = smx_attn_span_bytes(d->q_stride, d->batch, d->heads_q, d->len_q, d->dim_qk, es);
  size_t ob = smx_attn_span_bytes(d->o_stride, d->batch, d->heads_q, d->len_q, d->dim_v, es);
  size_t kb = d->len_k ? smx_attn_span_bytes(d->k_stride, d->batch, d->heads_kv, d->len_k, d->dim_qk, d->k_int8 ? 1 : es) : 0;
  size_t vb = d->len_k ? smx_attn_span_bytes(d->v_stride, d->batch, d->heads_kv, d->len_k, d->dim_v, es) : 0;
  if (!qb || !ob || (d->len_k && (!kb || !vb))) return SMX_E_INVALID_ARG;
  /* the output may not overlap an input (the tasks read them while others write) */
  if (smx_overlap(a->o, ob, a->q, qb) || (kb && smx_overlap(a->o, ob, a->k, kb)) ||
      (vb && smx_overlap(a->o, ob, a->v, vb)))
    return SMX_E_INVALID_ARG;
  size_t rows = d->batch * d->heads_q * d->len_q;
  if (a->lse && (smx_overlap(a->lse, rows * sizeof(float), a->o, ob) ||
                 smx_overlap(a->lse, rows * sizeof(float), a->q, qb)))
    return SMX_E_INVALID_ARG;

  void *owned = NULL;
  if (!workspace) {
    owned = malloc(p->ws_total);
    if (!owned) return SMX_E_NOMEM;
    workspace = owned;
  } else if (workspace_bytes < p->ws_total) {
    return SMX_E_WORKSPACE_TOO_SMALL;
  }
  uintptr_t base = ((uintptr_t)workspace + 63) & ~(uintptr_t)63;

  smx_attn_run run;
  run.p = p;
  run.a = a;
  const smx_registry *reg = smx_registry_current();   /* one configuration for the whole run */
  run.uk = reg->attn;
  run.uk16 = p->bf16 ? reg->attn_bf16 : NULL;
  run.dec16 = p->dec16 ? reg->attn_bf16 : NULL;
  run.kv = p->elem == SMX_ELEM_F16 ? SMX_ATTN_KV_F16 : p->elem == SMX_ELEM_BF16 ? SMX_ATTN_KV_BF16 : SMX_ATTN_KV_F32;
  run.io = smx_elem_io_for(p->elem);
  run.ws = (unsigned char *)base;
  run.partials = p->n_split > 1 ? (float *)(void *)(run.ws + p->threads * p->ws_worker) : NULL;
  atomic_init(&run.next, 0);
  atomic_init(&run.row_tiles, 0);
  atomic_init(&run.skipped, 0);
  atomic_init(&run.masked, 0);
  smx_parallel_for((int)p->threads, p->threads, worker, &run);
  if (p->n_split > 1) {
    atomic_store(&run.next, 0);
    smx_parallel_for((int)p->threads, p->threads, folder, &run);
  }
  if (stats) {
    stats->row_tiles = atomic_load(&run.row_tiles);
    stats->row_tiles_skipped = atomic_load(&run.skipped);
    stats->tiles_masked = atomic_load(&run.masked);
  }
  free(owned);
  return SMX_OK;
}
