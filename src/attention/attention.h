/*
 * Internals of the fused attention (include/smx/smx_attention.h): the plan,
 * the task geometry and the per-row state. plan.c validates a descriptor and
 * fixes the geometry, run.c schedules tasks, tile.c computes one task,
 * scores.c applies the per-score options, nsa.c selects key blocks,
 * finish.c ends the rows, linear.c runs the linear kinds, mask.c holds the
 * positional masks and merge.c the public log-sum-exp merge.
 *
 * A task is (batch b, KV head g, query tile t, key split s). Its rows are the
 * `group` query heads of KV head g times `bq` query indices, so K and V tiles
 * are read once for every query head that shares them (GQA, MQA). The
 * geometry depends on the shape only, never on the thread count: every task
 * computes the same values on any thread, and splits fold in a fixed order.
 */
#ifndef SMX_ATTENTION_ATTENTION_H
#define SMX_ATTENTION_ATTENTION_H

#include <stddef.h>
#include <stdint.h>

#include <stdatomic.h>

#include "core/elem.h"
#include "kernels/bf16-attention/ukernels.h"
#include "smx/smx_attention.h"

/* Query rows per task (group heads x query indices) and keys per tile (also NSA's selection block). */
#define SMX_ATTN_ROWS 64
#define SMX_ATTN_BK 64
/* Decoding: tasks with at most this many rows split the keys into pieces of
 * SMX_ATTN_SPLIT_K (merged by log-sum-exp) once there are at least two. */
#define SMX_ATTN_SPLIT_ROWS 16
#define SMX_ATTN_SPLIT_K 2048

struct smx_attention_plan {
  smx_attention_desc d;          /* strides resolved (packed when given as 0) */
  smx_elem elem;
  size_t elem_size;
  size_t group;                  /* heads_q / heads_kv                        */
  size_t bq;                     /* query indices per task                    */
  size_t rows, rows_pad;         /* group * bq, padded to SMX_ATTN_ROW_PAD    */
  size_t n_qt;                   /* query tiles per (batch, KV head)          */
  size_t n_split;                /* key pieces per task (1: no split)         */
  size_t n_tasks;                /* batch * heads_kv * n_qt * n_split         */
  size_t threads;
  size_t ws_worker, ws_total;    /* bytes                                     */
  float scale, softcap, ssmax_s, sigmoid_bias, qk_eps, blasst, diff_lambda;
  int elementwise;               /* some option acts on each score            */
  size_t nsa_blocks;             /* NSA: ceil(Lk / SMX_ATTN_BK) (0: off)      */
  int linear;                    /* a linear kind (linear.c): tasks (b, h)    */
  int screen;                    /* SMX_ATTN_SCREEN (screen.c)                */
  float screen_eps;              /* unit-normalisation floor                  */
  int decode;                    /* the decode kernels (dec_qk, dec_pv) run the tiles */
  int bf16;                      /* bf16 tile products where the kernel set has them (ukernels bf16) */
  size_t ldvp;                   /* bf16: columns of a packed V tile (dim_v rounded up to 16)        */
  int dec16;                     /* decoding bf16 storage: Q K^T on bf16 rows (ukernels bf16 dec_qk)  */
};

/* The run-time context shared by the tasks of one run. */
typedef struct smx_attn_run {
  const struct smx_attention_plan *p;
  const smx_attention_args *a;
  const struct smx_attn_ukernels *uk;
  const struct smx_attn_bf16_ukernels *uk16;   /* bf16 tile products, or NULL: f32 */
  const struct smx_attn_bf16_ukernels *dec16;  /* bf16 decode products, or NULL: f32 */
  int kv;                        /* storage of K and V rows for the decode kernels (smx_attn_kv) */
  smx_elem_io io;
  unsigned char *ws;             /* workers' slices, then the split partials  */
  float *partials;               /* n_tasks x rows_pad x (dv + 2), or NULL    */
  _Atomic size_t next;           /* next task to take                         */
  _Atomic uint64_t row_tiles, skipped, masked;
} smx_attn_run;

/* A worker's workspace slice (plan.c sizes it, smx_attn_carve cuts it). */
typedef struct smx_attn_slice {
  float *qr;   /* Q rows row-major (tasks of few rows) */
  float *qt, *st, *o, *m, *l, *alpha, *kbuf, *vbuf, *tmp;
  float *st2;   /* decoding: the next tile's scores (tile.c, decode_run) */
  float *o1, *lse1;   /* differential attention: the first map's normalised rows */
  float *knorm, *qnorm;   /* L2-distance attention: scale |k|^2 of the tile's keys, scale |q|^2 of the rows */
  float *nsa;             /* NSA: per row and key block, the coarse score, then 1 = selected */
  float *qsq;             /* int8 K with the Jensen correction: |q'|^2 of the rows (q' = scale q) */
  float *fac;             /* SSMax: the factor s log(n_i) of each row */
  float *sr, *sw;         /* screening: 1 / r and the Softmask window of each row (0: none) */
  float *nz;              /* screening: the keys of the tile each row kept */
  int64_t *lo, *hi;
  /* bf16 tile products (ukernels of kernels/bf16-attention): Q by pairs of dimensions (decoding: Q rows
   * in bf16, row-major), a K tile in bf16 (f32 storage), a V tile by pairs of keys, P by pairs of keys */
  uint32_t *qp, *vp, *pp;
  uint16_t *kb;
} smx_attn_slice;

/* Bytes spanned by a (n0, n1, n2, dim) tensor with element strides s, or 0 past PTRDIFF_MAX. */
size_t smx_attn_span_bytes(const size_t s[3], size_t n0, size_t n1, size_t n2, size_t dim, size_t es);

/* The row helpers (rows.c, a leaf: it calls nothing else here). A workspace slice: the next `floats`
 * floats at *at, 64-byte aligned. */
float *smx_attn_take(unsigned char **at, size_t floats);
smx_attn_slice smx_attn_carve(const struct smx_attention_plan *p, unsigned char *at);
/* Row r of a task (KV head g, query tile t): its query head and index; 0 when r is padding. */
int smx_attn_row_of(const struct smx_attention_plan *p, size_t g, size_t t, size_t r, size_t *h, size_t *i);
/* Dimensions [qoff, qoff + dim) of key rows [j0, j0 + nk) as f32 rows (row stride *ld). */
const float *smx_attn_load_k(smx_attn_run *run, size_t qoff, size_t dim, size_t b, size_t g, size_t j0, size_t nk,
                             float *buf, size_t *ld);
/* Rows [j0, j0 + nk) of a K or V tensor (base, strides s) of KV head (b, g) as f32 rows: in place for f32
 * storage without norm, else converted into buf (RMS-normalised when norm). */
const float *smx_attn_load_rows(smx_attn_run *run, const void *base, const size_t *s, size_t dim, size_t b, size_t g,
                                size_t j0, size_t nk, float *buf, int norm, size_t *ld);
/* x * rsqrt(mean(x^2) + eps) * w (w NULL: 1), in double. */
void smx_attn_rms_norm(float *x, size_t n, float eps, const float *w);
/* Every per-score option on the scores of keys [j0, j0 + nk) (scores.c): score (r, c) at st[r rs + c cs]. */
void smx_attn_transform(smx_attn_run *run, smx_attn_slice *w, size_t b, size_t g, size_t t, size_t j0, size_t nk,
                        size_t rs, size_t cs);
/* NSA block selection for the task's rows (nsa.c), and whether a row selected block blk. */
void smx_attn_nsa_select(smx_attn_run *run, smx_attn_slice *w, size_t b, size_t g, size_t t, size_t dqe, size_t qoff);
int smx_attn_nsa_any(const struct smx_attention_plan *p, const smx_attn_slice *w, size_t blk);

/* SSMax: s log(n_i) for query index i of head h (n_i: the keys that take part; 1 when none do). */
float smx_attn_ssmax_factor(smx_attn_run *run, size_t b, size_t h, size_t i);
/* Screening (screen.c): head h's 1 / r and window (0: none), from the args or the descriptor. */
void smx_attn_screen_params(const smx_attn_run *run, size_t h, float *rinv, float *win);
/* 0 when a head's r or window is out of range (run.c checks before any task). */
int smx_attn_screen_check(const struct smx_attention_plan *p, const smx_attention_args *a);
/* Screening weights of a tile in place: masked scores (-inf) and trimmed keys give 0, others
 * a_ij m_ij (knorm: 1 / |k| of the tile's keys, sr: 1 / r of every padded row); l += the row
 * sums; alpha = 1, or -1 for a row that Trim emptied. cnt += { rows with a visible key, of
 * those the emptied ones }. Returns whether Trim kept a weight. */
int smx_attn_screen_weights(smx_attn_run *run, smx_attn_slice *w, size_t g, size_t t, size_t j0, size_t nk,
                            uint64_t *cnt);
/* O = TanhNorm(h) in place (unless switched off). */
void smx_attn_tanh_norm(const struct smx_attention_plan *p, float *o);

/* Keys [lo, hi) that the causal and window options leave to query index i. */
void smx_attn_key_range(const struct smx_attention_plan *p, size_t i, int64_t *lo, int64_t *hi);
/* The query position p_i of query index i (bottom-right or top-left). */
int64_t smx_attn_pos(const struct smx_attention_plan *p, size_t i);
/* 1 when the radial mask lets query position qi see key j. */
int smx_attn_radial_visible(size_t frame, int64_t qi, int64_t j);

/* One task: rows state left in (m, l, O) of the worker slice, then either
 * finished into O / lse or stored as a split partial. */
void smx_attn_task(smx_attn_run *run, size_t task, unsigned char *slice);
/* One task of a linear kind (linear.c): query head task % Hq of batch task / Hq. */
void smx_attn_linear_task(smx_attn_run *run, size_t task, unsigned char *slice);
/* Folds the split partials of tile (b, g, t) in order and finishes its rows. */
void smx_attn_fold(smx_attn_run *run, size_t tile, unsigned char *slice);

/* Normalises a row's (m, l, O) in place (sink, softpick's epsilon, sigmoid: none); returns its lse. */
float smx_attn_normalize(smx_attn_run *run, size_t h, float m, float l, float *o);
/* Finishes one row: normalisation, the differential subtraction (first: the first map's
 * normalised row, or NULL), gate, store. */
void smx_attn_finish_row(smx_attn_run *run, size_t b, size_t h, size_t i, float m, float l, float *o, const float *first,
                         float first_lse);

#endif
