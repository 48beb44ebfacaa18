/*
 * The attention backward pass (include/smx/smx_attention_backward.h) against
 * the long-double reference of the composed form (tests/soak/attention/
 * attn_ref_bwd.c), within the header's bound, for every mask and supported
 * variant, GQA / MQA, odd sizes, strided (B, L, H, D) operands, Lq != Lk,
 * f32 and bf16 storage, at every ISA; 1, 2 and 7 threads bitwise equal; a
 * central difference of the forward on tiny cases; bad arguments refused
 * with nothing written; a NaN in Q or K reaching exactly the gradients that
 * see it.
 */
#include <math.h>

#include "../common/test_isa.h"
#include "../soak/attention/attn_soak.h"
#include "math/half_scalar.h"
#include "smx/smx_attention.h"

typedef long double ld;

typedef struct bcase {
  const char *name;
  smx_attention_desc d;
  int bthd;        /* Q, K, V, O, dO stored (B, L, H, D) */
  float qmul;      /* spread of the logits */
  int bias_inf;    /* some bias entries -inf, some rows fully masked */
  int normw;       /* qk_norm with weights (else NULL: weights of 1) */
} bcase;

typedef struct bdata {
  float *q, *k, *v, *o, *dO, *lse, *bias, *slopes, *sinks, *fox, *gate, *qw, *kw;
  int normw;
  unsigned char *keep;
  void *qs, *ks, *vs, *os, *dos;   /* storage */
} bdata;

static size_t n_of(const smx_attention_desc *d, int which) {
  switch (which) {
    case 0: return d->batch * d->heads_q * d->len_q * d->dim_qk;
    case 1: return d->batch * d->heads_kv * d->len_k * d->dim_qk;
    case 2: return d->batch * d->heads_kv * d->len_k * d->dim_v;
    default: return d->batch * d->heads_q * d->len_q * d->dim_v;
  }
}

/* offset of packed element e of a (B, H, L, D) tensor in the test's layout */
static size_t lay(int bthd, size_t H, size_t L, size_t D, size_t e) {
  if (!bthd) return e;
  size_t x = e % D, i = (e / D) % L, h = (e / D / L) % H, b = e / D / L / H;
  return ((b * L + i) * H + h) * D + x;
}

static void strides(int bthd, size_t *s, size_t H, size_t L, size_t D) {
  if (!bthd) {
    s[0] = s[1] = s[2] = 0;
    return;
  }
  s[0] = L * H * D;
  s[1] = D;
  s[2] = H * D;
}

static float rnd_to(smx_attn_dtype t, float x) { return t == SMX_ATTN_BF16 ? smx_bf16_to_f32(smx_f32_to_bf16(x)) : x; }

/* storage copy in the test's layout of a packed f32 tensor */
static void *stored(smx_attn_dtype t, const float *x, int bthd, size_t H, size_t L, size_t D, size_t n) {
  void *s = malloc(n * 4 + 4);
  for (size_t e = 0; e < n; e++) {
    size_t o = lay(bthd, H, L, D, e);
    if (t == SMX_ATTN_BF16)
      ((uint16_t *)s)[o] = smx_f32_to_bf16(x[e]);
    else
      ((float *)s)[o] = x[e];
  }
  return s;
}

static float *fill(tu_rng *r, size_t n, float mul) {
  float *x = malloc(n * 4 + 4);
  for (size_t i = 0; i < n; i++) x[i] = tu_normal(r) * mul;
  return x;
}

static ld *to_ld(const float *x, size_t n) {
  ld *y = malloc(n * sizeof(ld) + sizeof(ld));
  for (size_t i = 0; i < n; i++) y[i] = x[i];
  return y;
}

static void make(const bcase *c, uint64_t seed, bdata *t) {
  const smx_attention_desc *d = &c->d;
  tu_rng r = { seed };
  memset(t, 0, sizeof *t);
  size_t nq = n_of(d, 0), nk = n_of(d, 1), nv = n_of(d, 2), no = n_of(d, 3);
  size_t nm = d->batch * d->heads_q * d->len_q * d->len_k, rows = d->batch * d->heads_q * d->len_q;
  t->q = fill(&r, nq, c->qmul);
  t->k = fill(&r, nk, 1.0f);
  t->v = fill(&r, nv, 1.0f);
  t->dO = fill(&r, no, 1.0f);
  /* the values as stored: the reference sees what the library reads */
  for (size_t i = 0; i < nq; i++) t->q[i] = rnd_to(d->dtype, t->q[i]);
  for (size_t i = 0; i < nk; i++) t->k[i] = rnd_to(d->dtype, t->k[i]);
  for (size_t i = 0; i < nv; i++) t->v[i] = rnd_to(d->dtype, t->v[i]);
  for (size_t i = 0; i < no; i++) t->dO[i] = rnd_to(d->dtype, t->dO[i]);
  t->o = calloc(no + 1, 4);
  t->lse = calloc(rows + 1, 4);
  if (d->mask_kind == SMX_ATTN_MASK_BOOL) {
    t->keep = malloc(nm + 1);
    for (size_t i = 0; i < nm; i++) t->keep[i] = tu_uniform(&r) < 0.8;
  }
  if (d->mask_kind == SMX_ATTN_MASK_BIAS) {
    t->bias = fill(&r, nm, 1.0f);
    if (c->bias_inf)
      for (size_t i = 0; i < nm; i++)
        if (tu_uniform(&r) < 0.2 || (i / d->len_k) % 5 == 3) t->bias[i] = -INFINITY;
  }
  t->slopes = malloc(d->heads_q * 4 + 4);
  t->sinks = fill(&r, d->heads_q + 1, 1.0f);
  for (size_t h = 0; h < d->heads_q; h++) t->slopes[h] = powf(2.0f, -8.0f * (float)(h + 1) / (float)d->heads_q);
  t->fox = malloc(d->batch * d->heads_q * d->len_k * 4 + 4);
  for (size_t bh = 0; bh < d->batch * d->heads_q; bh++) {
    float f = 0.0f;
    for (size_t j = 0; j < d->len_k; j++) {
      f += logf(1.0f / (1.0f + expf(-(2.0f + tu_normal(&r)))));
      t->fox[bh * d->len_k + j] = f;
    }
  }
  t->gate = fill(&r, rows * d->dim_v + 1, 1.5f);
  t->qw = fill(&r, d->dim_qk + 1, 0.5f);
  t->kw = fill(&r, d->dim_qk + 1, 0.5f);
  for (size_t x = 0; x < d->dim_qk; x++) t->qw[x] += 1.0f, t->kw[x] -= 1.0f;
  t->normw = c->normw;
  size_t HQ = d->heads_q, HK = d->heads_kv;
  t->qs = stored(d->dtype, t->q, c->bthd, HQ, d->len_q, d->dim_qk, nq);
  t->ks = stored(d->dtype, t->k, c->bthd, HK, d->len_k, d->dim_qk, nk);
  t->vs = stored(d->dtype, t->v, c->bthd, HK, d->len_k, d->dim_v, nv);
  t->dos = stored(d->dtype, t->dO, c->bthd, HQ, d->len_q, d->dim_v, no);
  t->os = calloc(no + 1, 4);
}

static void drop(bdata *t) {
  free(t->q), free(t->k), free(t->v), free(t->o), free(t->dO), free(t->lse), free(t->bias), free(t->slopes);
  free(t->sinks), free(t->fox), free(t->gate), free(t->keep), free(t->qs), free(t->ks), free(t->vs), free(t->os);
  free(t->dos), free(t->qw), free(t->kw);
}

static smx_attention_args args_of(const smx_attention_desc *d, bdata *t) {
  smx_attention_args a = { 0 };
  a.q = t->qs, a.k = t->ks, a.v = t->vs, a.o = t->os, a.lse = t->lse;
  a.mask = d->mask_kind == SMX_ATTN_MASK_BOOL ? (const void *)t->keep : (const void *)t->bias;
  a.alibi_slopes = t->slopes, a.sinks = t->sinks, a.fox = t->fox, a.gate = t->gate;
  if (t->normw) a.q_norm_w = t->qw, a.k_norm_w = t->kw;
  return a;
}

typedef struct grads {
  void *dq, *dk, *dv;
  float *dbias, *dsinks, *dfox, *dgate, *dqw, *dkw;
} grads;

static void galloc(const smx_attention_desc *d, grads *g) {
  size_t es = d->dtype == SMX_ATTN_F32 ? 4 : 2;
  g->dq = calloc(n_of(d, 0) + 1, es);
  g->dk = calloc(n_of(d, 1) + 1, es);
  g->dv = calloc(n_of(d, 2) + 1, es);
  g->dbias = calloc(d->batch * d->heads_q * d->len_q * d->len_k + 1, 4);
  g->dsinks = calloc(d->heads_q + 1, 4);
  g->dfox = calloc(d->batch * d->heads_q * d->len_k + 1, 4);
  g->dgate = calloc(d->batch * d->heads_q * d->len_q * d->dim_v + 1, 4);
  g->dqw = calloc(d->dim_qk + 1, 4);
  g->dkw = calloc(d->dim_qk + 1, 4);
}

static void gfree(grads *g) { free(g->dq), free(g->dk), free(g->dv), free(g->dbias), free(g->dsinks), free(g->dfox), free(g->dgate), free(g->dqw), free(g->dkw); }

static smx_status backward(const smx_attention_desc *d, bdata *t, grads *g) {
  smx_attention_plan *p;
  smx_status st = smx_attention_plan_create(d, &p);
  if (st != SMX_OK) return st;
  smx_attention_args a = args_of(d, t);
  smx_attention_grads gr = { g->dq, g->dk, g->dv, d->mask_kind == SMX_ATTN_MASK_BIAS ? g->dbias : NULL,
                             d->sinks ? g->dsinks : NULL, d->fox ? g->dfox : NULL, d->gate ? g->dgate : NULL };
  /* QK-norm: the weights' gradients too (at weights of 1 when the case passes none) */
  if (d->qk_norm)
    st = smx_attention_backward_qk_norm(p, &a, t->dos, &gr, g->dqw, g->dkw, NULL, 0);
  else
    st = smx_attention_backward(p, &a, t->dos, &gr, NULL, 0);
  smx_attention_plan_destroy(p);
  return st;
}

static int forward(const smx_attention_desc *d, bdata *t) {
  smx_attention_plan *p;
  if (smx_attention_plan_create(d, &p) != SMX_OK) return 0;
  smx_attention_args a = args_of(d, t);
  smx_status st = smx_attention_run(p, &a, NULL, 0, NULL);
  smx_attention_plan_destroy(p);
  return st == SMX_OK;
}

static float gval(smx_attn_dtype t, const void *p, size_t i) {
  return t == SMX_ATTN_BF16 ? smx_bf16_to_f32(((const uint16_t *)p)[i]) : ((const float *)p)[i];
}

/* |got - ref| <= eps M (+ the storage rounding of |ref|); returns the worst ratio error / tolerance */
static double cmp(const char *what, const bcase *c, smx_attn_dtype dt, const void *got, int f32out, const ld *ref,
                  const ld *mag, size_t n, double eps) {
  double worst = 0.0;
  long bad = 0;
  for (size_t i = 0; i < n; i++) {
    double gv = f32out ? ((const float *)got)[i] : gval(dt, got, i);
    ld tol = (ld)eps * mag[i] + (dt == SMX_ATTN_BF16 && !f32out ? 0x1p-8L * fabsl(ref[i]) : 0) + 1e-30L;
    ld err = fabsl((ld)gv - ref[i]);
    if (!(err <= tol)) {
      if (bad++ < 3)
        fprintf(stderr, "  %s %s[%zu]: got %.9g ref %.9Lg (M %.3Lg, tol %.3Lg)\n", c->name, what, i, gv, ref[i], mag[i],
                tol);
    }
    if ((double)(err / tol) > worst) worst = (double)(err / tol);
  }
  if (getenv("SMX_TEST_VERBOSE")) printf("  %-14s %-6s worst %.3g of the bound\n", c->name, what, worst);
  CHECK(bad == 0, "%s: %s: %ld elements outside the bound (worst %.3g of it)", c->name, what, bad, worst);
  return worst;
}

static double bound_eps(const smx_attention_desc *d) {
  size_t L = d->len_q > d->len_k ? d->len_q : d->len_k;
  /* 16-bit storage: D = dO . O is formed from the stored O (one rounding, u = 2^-8 for bf16, 2^-11 for f16) */
  double u = d->dtype == SMX_ATTN_BF16 ? 0x1p-8 : d->dtype == SMX_ATTN_F16 ? 0x1p-11 : 0.0;
  return 0x1p-16 + 0x1p-23 * (double)L / 8.0 + u;
}

static void check_case(const bcase *c0, uint64_t seed) {
  bcase cc = *c0;
  const bcase *c = &cc;
  smx_attention_desc *dm = &cc.d;
  strides(c->bthd, dm->q_stride, dm->heads_q, dm->len_q, dm->dim_qk);
  strides(c->bthd, dm->k_stride, dm->heads_kv, dm->len_k, dm->dim_qk);
  strides(c->bthd, dm->v_stride, dm->heads_kv, dm->len_k, dm->dim_v);
  strides(c->bthd, dm->o_stride, dm->heads_q, dm->len_q, dm->dim_v);
  if (dm->mask_kind) {   /* the mask tensor packed (B, Hq, Lq, Lk) */
    dm->mask_stride[3] = 1, dm->mask_stride[2] = dm->len_k, dm->mask_stride[1] = dm->len_q * dm->len_k;
    dm->mask_stride[0] = dm->heads_q * dm->mask_stride[1];
  }
  const smx_attention_desc *d = dm;
  bdata t;
  make(c, seed, &t);
  CHECK(forward(d, &t), "%s: forward", c->name);
  /* the reference's case: packed long-double tensors */
  attn_case ac = { 0 };
  ac.d = *d;
  ac.q = to_ld(t.q, n_of(d, 0));
  ac.k = to_ld(t.k, n_of(d, 1));
  ac.v = to_ld(t.v, n_of(d, 2));
  size_t nm = d->batch * d->heads_q * d->len_q * d->len_k, rows = d->batch * d->heads_q * d->len_q;
  if (d->mask_kind == SMX_ATTN_MASK_BOOL) ac.keep = t.keep;
  if (d->mask_kind == SMX_ATTN_MASK_BIAS) ac.bias = to_ld(t.bias, nm);
  ac.slopes = to_ld(t.slopes, d->heads_q);
  ac.sinks = to_ld(t.sinks, d->heads_q);
  ac.fox = to_ld(t.fox, d->batch * d->heads_q * d->len_k);
  ac.gate = to_ld(t.gate, rows * d->dim_v);
  if (t.normw) ac.qw = to_ld(t.qw, d->dim_qk), ac.kw = to_ld(t.kw, d->dim_qk);
  ld *dO = to_ld(t.dO, n_of(d, 3));
  size_t nq = n_of(d, 0), nk = n_of(d, 1), nv = n_of(d, 2), ng = rows * ((d->gate_flags & 1) ? d->dim_v : 1);
  attn_grad_ref g = { 0 };
  ld *buf[14];
  size_t sz[14] = { nq, nq, nk, nk, nv, nv, nm, nm, d->heads_q, d->heads_q, d->batch * d->heads_q * d->len_k,
                    d->batch * d->heads_q * d->len_k, rows * d->dim_v, rows * d->dim_v };
  for (int i = 0; i < 14; i++) buf[i] = calloc(sz[i] + 1, sizeof(ld));
  g.dq = buf[0], g.mq = buf[1], g.dk = buf[2], g.mk = buf[3], g.dv = buf[4], g.mv = buf[5];
  g.dbias = d->mask_kind == SMX_ATTN_MASK_BIAS ? buf[6] : NULL, g.mbias = buf[7];
  g.dsinks = buf[8], g.msinks = buf[9], g.dfox = buf[10], g.mfox = buf[11], g.dgate = buf[12], g.mgate = buf[13];
  g.rowz = calloc(rows + 1, 1);
  g.zmax = calloc(rows + 1, sizeof(ld));
  ld *wbuf = calloc(4 * d->dim_qk + 4, sizeof(ld));
  if (d->qk_norm) g.dqw = wbuf, g.mqw = wbuf + d->dim_qk, g.dkw = wbuf + 2 * d->dim_qk, g.mkw = wbuf + 3 * d->dim_qk;
  attn_reference_backward(&ac, dO, &g);
  double eps = bound_eps(d);

  grads g1;
  galloc(d, &g1);
  {
    const int isa = tu_isa_at;
    grads gi;
    galloc(d, &gi);
    smx_status st = backward(d, &t, &gi);
    CHECK(st == SMX_OK, "%s %s: status %d", c->name, tu_isa_names[isa], (int)st);
    cmp("dq", c, d->dtype, gi.dq, 0, g.dq, g.mq, nq, eps);
    cmp("dk", c, d->dtype, gi.dk, 0, g.dk, g.mk, nk, eps);
    cmp("dv", c, d->dtype, gi.dv, 0, g.dv, g.mv, nv, eps);
    if (d->mask_kind == SMX_ATTN_MASK_BIAS) cmp("dbias", c, d->dtype, gi.dbias, 1, g.dbias, g.mbias, nm, eps);
    if (d->sinks) cmp("dsinks", c, d->dtype, gi.dsinks, 1, g.dsinks, g.msinks, d->heads_q, eps);
    if (d->fox) cmp("dfox", c, d->dtype, gi.dfox, 1, g.dfox, g.mfox, d->batch * d->heads_q * d->len_k, eps);
    if (d->gate) cmp("dgate", c, d->dtype, gi.dgate, 1, g.dgate, g.mgate, ng, eps);
    if (d->qk_norm) cmp("dq_norm_w", c, d->dtype, gi.dqw, 1, g.dqw, g.mqw, d->dim_qk, eps);
    if (d->qk_norm) cmp("dk_norm_w", c, d->dtype, gi.dkw, 1, g.dkw, g.mkw, d->dim_qk, eps);
    gfree(&g1);
    g1 = gi;
  }
  /* every thread count gives the same bits (checked in the top level's entry) */
  size_t es = d->dtype == SMX_ATTN_F32 ? 4 : 2;
  for (int th = 2; tu_isa_once && th <= 7; th += 5) {
    bcase c2 = *c;
    c2.d.threads = th;
    grads gt;
    galloc(d, &gt);
    CHECK(backward(&c2.d, &t, &gt) == SMX_OK, "%s threads %d", c->name, th);
    int same = !memcmp(gt.dq, g1.dq, nq * es) && !memcmp(gt.dk, g1.dk, nk * es) && !memcmp(gt.dv, g1.dv, nv * es) &&
               !memcmp(gt.dbias, g1.dbias, nm * 4) && !memcmp(gt.dsinks, g1.dsinks, d->heads_q * 4) &&
               !memcmp(gt.dfox, g1.dfox, d->batch * d->heads_q * d->len_k * 4) && !memcmp(gt.dgate, g1.dgate, ng * 4) &&
               !memcmp(gt.dqw, g1.dqw, d->dim_qk * 4) && !memcmp(gt.dkw, g1.dkw, d->dim_qk * 4);
    CHECK(same, "%s: threads %d differ from threads 1", c->name, th);
    gfree(&gt);
  }
  gfree(&g1);
  for (int i = 0; i < 14; i++) free(buf[i]);
  free(g.rowz), free(g.zmax), free(dO), free(wbuf);
  free(ac.q), free(ac.k), free(ac.v), free(ac.bias), free(ac.slopes), free(ac.sinks), free(ac.fox), free(ac.gate);
  free(ac.qw), free(ac.kw);
  drop(&t);
}

static smx_attention_desc base(size_t B, size_t Hq, size_t Hkv, size_t Lq, size_t Lk, size_t D, size_t Dv) {
  smx_attention_desc d;
  memset(&d, 0, sizeof d);
  d.batch = B, d.heads_q = Hq, d.heads_kv = Hkv, d.len_q = Lq, d.len_k = Lk, d.dim_qk = D, d.dim_v = Dv;
  return d;
}

#include "test_attention_backward_cases.h"

int main(void) {
  tu_isa_start(3);
  run_accuracy_cases();
  if (tu_isa_once) {
    run_difference_cases();
    run_ref_difference_cases();
    run_refusals();
    run_nan_cases();
  }
  return tu_finish("test_attention_backward");
}
