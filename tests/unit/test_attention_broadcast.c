/*
 * Broadcast operands of the fused attention (the stride rule of
 * include/smx/smx_attention.h): Q, K or V stored once and repeated over
 * batch, heads or rows by zero strides (np.broadcast_to, torch.expand: the
 * usual way to repeat KV heads), in buffers of exactly the size they hold,
 * so that a read past them is caught under ASan. Each run must equal, bit
 * for bit, the run on the materialised copy, at every ISA and at 1, 2 and 7
 * threads: the decode, general and key-split paths, f32 / f16 / bf16, int8
 * K, QK-norm, L2 distance, the linear and screening kinds, broadcast masks.
 * Also the refusals: a zero stride on a non-empty output, a row stride
 * below the row.
 */
#include "../common/test_isa.h"
#include "math/half_scalar.h"
#include "smx/smx_attention.h"

typedef struct bcase {
  const char *name;
  smx_attention_desc d;   /* shape and options; strides are set by the test */
  unsigned bq, bk, bv;    /* broadcast dims of Q, K, V: bit 0 batch, 1 head, 2 row */
  int mask;               /* 0 none, 1 bool mask (B, 1, 1, Lk) by zero strides, 2 bias row for all (0,0,0,1) */
} bcase;

/* storage extents of a broadcast tensor: 1 where broadcast */
static void extents(unsigned bits, size_t n0, size_t n1, size_t n2, size_t e[3]) {
  e[0] = bits & 1 ? 1 : n0;
  e[1] = bits & 2 ? 1 : n1;
  e[2] = bits & 4 ? 1 : n2;
}

/* element strides of the stored tensor: packed over its extents, 0 on a broadcast dim */
static void bstrides(unsigned bits, const size_t e[3], size_t dim, size_t s[3]) {
  s[2] = bits & 4 ? 0 : dim;
  s[1] = bits & 2 ? 0 : e[2] * dim;
  s[0] = bits & 1 ? 0 : e[1] * e[2] * dim;
}

/* a buffer of exactly n elements of es bytes, random values in storage dtype */
static void *fill(tu_rng *r, smx_attn_dtype t, int int8, size_t n, size_t es) {
  unsigned char *p = malloc(n * es + (n == 0));
  for (size_t i = 0; i < n; i++) {
    float x = tu_normal(r);
    if (int8) ((int8_t *)p)[i] = (int8_t)((int)(tu_next(r) % 255) - 127);
    else if (t == SMX_ATTN_F16) ((uint16_t *)p)[i] = smx_f32_to_f16(x);
    else if (t == SMX_ATTN_BF16) ((uint16_t *)p)[i] = smx_f32_to_bf16(x);
    else ((float *)p)[i] = x;
  }
  return p;
}

/* the packed (n0, n1, n2, dim) copy of a tensor read through strides s (elements of es bytes) */
static void *materialise(const void *src, const size_t s[3], size_t n0, size_t n1, size_t n2, size_t dim, size_t es) {
  unsigned char *out = malloc(n0 * n1 * n2 * dim * es + 1), *o = out;
  for (size_t a = 0; a < n0; a++)
    for (size_t b = 0; b < n1; b++)
      for (size_t c = 0; c < n2; c++, o += dim * es)
        memcpy(o, (const unsigned char *)src + (a * s[0] + b * s[1] + c * s[2]) * es, dim * es);
  return out;
}

static smx_status run(const smx_attention_desc *d, const smx_attention_args *a) {
  smx_attention_plan *p = NULL;
  smx_status s = smx_attention_plan_create(d, &p);
  if (s != SMX_OK) return s;
  s = smx_attention_run(p, a, NULL, 0, NULL);
  smx_attention_plan_destroy(p);
  return s;
}

static void one(const bcase *c, uint64_t seed) {
  tu_rng r = { seed };
  smx_attention_desc d = c->d;
  size_t B = d.batch, hq = d.heads_q, hkv = d.heads_kv, lq = d.len_q, lk = d.len_k, dq = d.dim_qk, dv = d.dim_v;
  size_t es = d.dtype == SMX_ATTN_F32 ? 4 : 2, kes = d.k_int8 ? 1 : es;
  size_t eq[3], ek[3], ev[3];
  extents(c->bq, B, hq, lq, eq);
  extents(c->bk, B, hkv, lk, ek);
  extents(c->bv, B, hkv, lk, ev);
  void *q = fill(&r, d.dtype, 0, eq[0] * eq[1] * eq[2] * dq, es);
  void *k = fill(&r, d.dtype, d.k_int8, ek[0] * ek[1] * ek[2] * dq, kes);
  void *v = fill(&r, d.dtype, 0, ev[0] * ev[1] * ev[2] * dv, es);
  size_t sq[3], sk[3], sv[3];
  bstrides(c->bq, eq, dq, sq);
  bstrides(c->bk, ek, dq, sk);
  bstrides(c->bv, ev, dv, sv);
  void *qf = materialise(q, sq, B, hq, lq, dq, es);
  void *kf = materialise(k, sk, B, hkv, lk, dq, kes);
  void *vf = materialise(v, sv, B, hkv, lk, dv, es);

  size_t nblk = (lk + 63) / 64, no = B * hq * lq * dv, nl = B * hq * lq;
  float *scales = NULL, *mask = NULL;
  unsigned char *bmask = NULL;
  smx_attention_args a = { 0 };
  if (d.k_int8) {
    scales = malloc(B * hkv * nblk * sizeof *scales + 4);
    for (size_t i = 0; i < B * hkv * nblk; i++) scales[i] = tu_uniform_f(&r, 0.002f, 0.02f);
    a.k_scales = scales;
  }
  if (c->mask == 1) {   /* one bool row of keys per batch, shared by heads and queries; a quarter hidden */
    bmask = malloc(B * lk + 1);
    for (size_t i = 0; i < B * lk; i++) bmask[i] = tu_uniform(&r) < 0.75;
    d.mask_kind = SMX_ATTN_MASK_BOOL;
    d.mask_stride[0] = lk; d.mask_stride[1] = 0; d.mask_stride[2] = 0; d.mask_stride[3] = 1;
    a.mask = bmask;
  } else if (c->mask == 2) {   /* one bias row for everything */
    mask = malloc(lk * sizeof *mask + 4);
    for (size_t i = 0; i < lk; i++) mask[i] = tu_uniform(&r) < 0.1 ? -INFINITY : tu_normal(&r);
    d.mask_kind = SMX_ATTN_MASK_BIAS;
    d.mask_stride[0] = d.mask_stride[1] = d.mask_stride[2] = 0; d.mask_stride[3] = 1;
    a.mask = mask;
  }
  unsigned char *o_ref = malloc(no * es + 1), *o = malloc(no * es + 1);
  float *lse_ref = malloc(nl * sizeof(float) + 4), *lse = malloc(nl * sizeof(float) + 4);

  {
    const int isa = tu_isa_at;
    /* the materialised run (packed strides) */
    smx_attention_desc dm = d;
    memset(dm.q_stride, 0, sizeof dm.q_stride);
    memset(dm.k_stride, 0, sizeof dm.k_stride);
    memset(dm.v_stride, 0, sizeof dm.v_stride);
    memset(dm.o_stride, 0, sizeof dm.o_stride);
    dm.threads = 1;
    smx_attention_args am = a;
    am.q = qf; am.k = kf; am.v = vf; am.o = o_ref; am.lse = lse_ref;
    smx_status s = run(&dm, &am);
    CHECK(s == SMX_OK, "%s %s: materialised run: %s", c->name, tu_isa_names[isa], smx_status_string(s));
    for (int th = 1; th <= 7; th += th == 1 ? 1 : 5) {   /* 1, 2, 7 */
      smx_attention_desc db = d;
      memcpy(db.q_stride, sq, sizeof sq);
      memcpy(db.k_stride, sk, sizeof sk);
      memcpy(db.v_stride, sv, sizeof sv);
      db.threads = th;
      smx_attention_args ab = a;
      ab.q = q; ab.k = k; ab.v = v; ab.o = o; ab.lse = lse;
      memset(o, 0x7f, no * es);
      s = run(&db, &ab);
      CHECK(s == SMX_OK, "%s %s threads %d: %s", c->name, tu_isa_names[isa], th, smx_status_string(s));
      if (s != SMX_OK) continue;
      CHECK(memcmp(o, o_ref, no * es) == 0, "%s %s threads %d: O differs from the materialised run", c->name,
            tu_isa_names[isa], th);
      CHECK(memcmp(lse, lse_ref, nl * sizeof(float)) == 0, "%s %s threads %d: lse differs from the materialised run",
            c->name, tu_isa_names[isa], th);
    }
  }
  free(q); free(k); free(v); free(qf); free(kf); free(vf); free(scales); free(mask); free(bmask);
  free(o_ref); free(o); free(lse_ref); free(lse);
}

/* a descriptor of the given shape, storage and kind, everything else off */
static smx_attention_desc shape(size_t B, size_t hq, size_t hkv, size_t lq, size_t lk, size_t dq, size_t dv,
                                smx_attn_dtype t) {
  smx_attention_desc d;
  memset(&d, 0, sizeof d);
  d.batch = B; d.heads_q = hq; d.heads_kv = hkv; d.len_q = lq; d.len_k = lk; d.dim_qk = dq; d.dim_v = dv;
  d.dtype = t;
  return d;
}

static void refusals(void) {
  float q[2 * 8], k[4 * 8], v[4 * 8], o[64];
  smx_attention_desc d = shape(2, 1, 1, 1, 4, 8, 8, SMX_ATTN_F32);
  smx_attention_plan *p = NULL;
  /* O with a zero batch stride over two batches: both tasks would write the same row */
  d.o_stride[0] = 0; d.o_stride[1] = 8; d.o_stride[2] = 8;
  CHECK(smx_attention_plan_create(&d, &p) == SMX_E_INVALID_ARG, "zero batch stride on O accepted");
  smx_attention_plan_destroy(p);
  p = NULL;
  /* the same over one batch: the stride is never used */
  d.batch = 1;
  CHECK(smx_attention_plan_create(&d, &p) == SMX_OK, "zero stride on O's single batch refused");
  if (p) {
    smx_attention_args a = { 0 };
    a.q = q; a.k = k; a.v = v; a.o = o;
    memset(q, 0, sizeof q); memset(k, 0, sizeof k); memset(v, 0, sizeof v);
    CHECK(smx_attention_run(p, &a, NULL, 0, NULL) == SMX_OK, "run with O's single batch");
  }
  smx_attention_plan_destroy(p);
  p = NULL;
  /* a zero row stride on O over several queries, and on an empty O (nothing written: accepted) */
  d = shape(1, 1, 1, 3, 4, 8, 8, SMX_ATTN_F32);
  d.o_stride[0] = 24; d.o_stride[1] = 24; d.o_stride[2] = 0;
  CHECK(smx_attention_plan_create(&d, &p) == SMX_E_INVALID_ARG, "zero row stride on O accepted");
  smx_attention_plan_destroy(p);
  p = NULL;
  d.len_q = 0;
  CHECK(smx_attention_plan_create(&d, &p) == SMX_OK, "zero row stride on an empty O refused");
  smx_attention_plan_destroy(p);
  p = NULL;
  d = shape(1, 2, 1, 3, 4, 8, 8, SMX_ATTN_F32);
  d.o_stride[0] = 48; d.o_stride[1] = 0; d.o_stride[2] = 8;
  CHECK(smx_attention_plan_create(&d, &p) == SMX_E_INVALID_ARG, "zero head stride on O accepted");
  smx_attention_plan_destroy(p);
  p = NULL;
  /* an input row stride between 0 and the row: rows would overlap */
  d = shape(1, 1, 1, 3, 4, 8, 8, SMX_ATTN_F32);
  d.k_stride[0] = 32; d.k_stride[1] = 32; d.k_stride[2] = 5;
  CHECK(smx_attention_plan_create(&d, &p) == SMX_E_INVALID_ARG, "row stride 5 < 8 on K accepted");
  smx_attention_plan_destroy(p);
}

int main(void) {
  tu_isa_start(3);
  bcase cases[40];
  size_t n = 0;
  const smx_attn_dtype types[3] = { SMX_ATTN_F32, SMX_ATTN_F16, SMX_ATTN_BF16 };
  const char *tnames[3] = { "f32", "f16", "bf16" };
  static char names[40][96];
  for (int t = 0; t < 3; t++) {
    /* decoding (few rows per task): one KV head repeated over eight (MHA from GQA by expand) */
    snprintf(names[n], sizeof names[n], "decode %s, KV heads broadcast", tnames[t]);
    cases[n] = (bcase){ names[n], shape(2, 8, 8, 1, 150, 64, 48, types[t]), 0, 2, 2, 0 };
    n++;
    /* general path: K and V one row repeated over every key, Q one batch repeated */
    snprintf(names[n], sizeof names[n], "general %s, K/V rows and Q batch broadcast", tnames[t]);
    cases[n] = (bcase){ names[n], shape(3, 2, 2, 70, 90, 24, 17, types[t]), 1, 4, 4, 1 };
    n++;
    /* key split (Lk >= 2 x 2048, few rows): K batch and heads, V rows */
    snprintf(names[n], sizeof names[n], "split %s, K batch+heads, V rows broadcast", tnames[t]);
    cases[n] = (bcase){ names[n], shape(2, 2, 2, 1, 4200, 16, 8, types[t]), 0, 3, 4, 2 };
    n++;
  }
  /* options that load K through a pass of their own, and the other kinds */
  cases[n] = (bcase){ "int8 K heads broadcast", shape(2, 4, 4, 5, 130, 32, 16, SMX_ATTN_F32), 0, 2, 1, 0 };
  cases[n++].d.k_int8 = 1;
  cases[n] = (bcase){ "int8 K rows broadcast, Jensen", shape(1, 2, 2, 40, 70, 16, 16, SMX_ATTN_F32), 0, 4, 0, 0 };
  cases[n].d.k_int8 = 1;
  cases[n++].d.k_int8_jensen = 1;
  cases[n] = (bcase){ "QK-norm, Q heads and K rows broadcast", shape(2, 4, 2, 9, 33, 16, 16, SMX_ATTN_F32), 2, 4, 0, 1 };
  cases[n++].d.qk_norm = 1;
  cases[n] = (bcase){ "L2 distance, K batch broadcast", shape(2, 2, 1, 80, 33, 16, 16, SMX_ATTN_BF16), 0, 1, 1, 0 };
  cases[n++].d.l2_distance = 1;
  cases[n] = (bcase){ "linear kind, K/V heads broadcast", shape(2, 4, 4, 20, 30, 8, 8, SMX_ATTN_F32), 0, 2, 2, 0 };
  cases[n].d.kind = SMX_ATTN_LINEAR;
  cases[n++].d.causal = SMX_ATTN_CAUSAL_BOTTOM_RIGHT;
  cases[n] = (bcase){ "screening, K rows and V heads broadcast", shape(1, 4, 2, 12, 40, 8, 8, SMX_ATTN_F16), 0, 4, 2, 1 };
  cases[n].d.kind = SMX_ATTN_SCREEN;
  cases[n].d.screen_r = 0.7;
  cases[n++].d.causal = SMX_ATTN_CAUSAL_BOTTOM_RIGHT;
  cases[n] = (bcase){ "NSA, Q rows broadcast", shape(1, 2, 1, 100, 300, 16, 16, SMX_ATTN_F32), 4, 0, 3, 0 };
  cases[n++].d.nsa_topk = 2;
  cases[n] = (bcase){ "differential, K heads+rows broadcast", shape(2, 2, 2, 30, 50, 16, 8, SMX_ATTN_F32), 0, 6, 0, 2 };
  cases[n++].d.diff_lambda = 0.3;
  for (size_t i = 0; i < n; i++) one(&cases[i], 1000 + i);
  if (tu_isa_once) refusals();
  return tu_finish("test_attention_broadcast");
}
