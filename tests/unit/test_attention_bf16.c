/*
 * bf16 tile products of the fused attention (smx_attention.h, Accuracy; kernels/bf16-attention) against a
 * long-double reference of the inputs as the products read them (bf16, subnormals 0), on adversarial
 * inputs: peaked logits, V of large entries that cancel in O (the bound is in max|V|, not max|O|), near
 * ties, subnormal entries, odd head dimensions and tile remainders, GQA, causal, a bias, sinks, sigmoid.
 * At every kernel set: below avx512bf16 the convert path (f32 arithmetic, plan_math F32, the tighter f32
 * bound), at avx512bf16 the native one (plan_math BF16, the bf16 bound, outputs that differ from the
 * convert path's); 1, 2 and 7 threads bitwise equal. f32 storage opts in with SMX_ATTN_MATH_BF16 only:
 * AUTO equals F32 bitwise, and bf16 storage with F32 equals the convert path bitwise.
 */
#include "../common/test_isa.h"
#include "math/half_scalar.h"
#include "smx/smx_attention.h"

typedef long double ld;

typedef struct bcase {
  const char *name;
  smx_attention_desc d;
  int data;   /* 0 normal, 1 peaked logits, 2 cancelling V, 3 near ties, 4 subnormal entries */
  int dec;    /* decode shape (at most 8 query rows per KV head): bf16 products for bf16 storage only */
} bcase;

#define DESC(HQ, HKV, LQ, LK, DQ, DV) \
  .batch = 2, .heads_q = HQ, .heads_kv = HKV, .len_q = LQ, .len_k = LK, .dim_qk = DQ, .dim_v = DV

static const bcase cases[] = {
  { "plain", { DESC(2, 2, 70, 130, 64, 64) }, 0, 0 },
  { "odd D and Dv, tile tails", { DESC(3, 3, 37, 101, 33, 17) }, 0, 0 },
  { "GQA 4, causal", { DESC(8, 2, 40, 150, 48, 40), .causal = SMX_ATTN_CAUSAL_BOTTOM_RIGHT }, 0, 0 },
  { "peaked logits", { DESC(2, 2, 64, 200, 64, 64) }, 1, 0 },
  { "cancelling V", { DESC(2, 1, 50, 190, 32, 80) }, 2, 0 },
  { "near ties", { DESC(2, 2, 33, 257, 16, 24), .causal = SMX_ATTN_CAUSAL_TOP_LEFT }, 3, 0 },
  { "subnormal entries", { DESC(2, 2, 30, 90, 20, 36) }, 4, 0 },
  { "bias and sinks", { DESC(2, 2, 45, 77, 24, 24), .mask_kind = SMX_ATTN_MASK_BIAS, .sinks = 1 }, 0, 0 },
  { "sigmoid", { DESC(2, 2, 40, 120, 32, 32), .kind = SMX_ATTN_SIGMOID, .sigmoid_bias = -3 }, 0, 0 },
  { "D 1, Dv 1", { DESC(1, 1, 20, 65, 1, 1) }, 0, 0 },
  /* decoding (the decode kernels: Q K^T and P V by pairs in registers, K and V as stored) */
  { "decode GQA 4, split", { DESC(8, 2, 1, 4500, 128, 128) }, 0, 1 },
  { "decode MHA, odd D and Dv", { DESC(3, 3, 1, 101, 33, 17) }, 0, 1 },
  { "decode G 2, Lq 3, causal, cancelling V", { DESC(4, 2, 3, 190, 32, 80), .causal = SMX_ATTN_CAUSAL_BOTTOM_RIGHT }, 2, 1 },
  { "decode G 8, subnormal entries", { DESC(8, 1, 1, 300, 64, 40) }, 4, 1 },
  { "decode peaked, bias and sinks", { DESC(4, 1, 1, 130, 96, 50), .mask_kind = SMX_ATTN_MASK_BIAS, .sinks = 1 }, 1, 1 },
  { "decode D 1, Dv 1", { DESC(2, 2, 1, 65, 1, 1) }, 0, 1 },
};

static size_t n_q(const smx_attention_desc *d) { return d->batch * d->heads_q * d->len_q * d->dim_qk; }
static size_t n_k(const smx_attention_desc *d) { return d->batch * d->heads_kv * d->len_k * d->dim_qk; }
static size_t n_v(const smx_attention_desc *d) { return d->batch * d->heads_kv * d->len_k * d->dim_v; }
static size_t n_o(const smx_attention_desc *d) { return d->batch * d->heads_q * d->len_q * d->dim_v; }

/* what vdpbf16ps reads: bf16 (nearest even), subnormals 0 */
static float as_bf16(float x) {
  float f = smx_bf16_to_f32(smx_f32_to_bf16(x));
  return fabsf(f) < FLT_MIN ? copysignf(0.0f, f) : f;
}

static void fill(const bcase *c, float *q, float *k, float *v, float *bias, float *sinks, tu_rng *r) {
  const smx_attention_desc *d = &c->d;
  float qm = c->data == 1 ? 6.0f : c->data == 3 ? 0.01f : 1.0f;
  for (size_t i = 0; i < n_q(d); i++) q[i] = qm * tu_normal(r);
  for (size_t i = 0; i < n_k(d); i++) k[i] = tu_normal(r);
  for (size_t i = 0; i < n_v(d); i++)   /* cancelling: +-1000 alternating by key, and a small signal */
    v[i] = c->data == 2 ? ((i / d->dim_v) % 2 ? 1000.0f : -1000.0f) + 0.1f * tu_normal(r) : tu_normal(r);
  if (c->data == 4)
    for (size_t i = 0; i < n_k(d); i += 3) k[i] = 1e-39f * (float)(i % 7);   /* f32 subnormals */
  if (c->data == 4)
    for (size_t i = 0; i < n_v(d); i += 5) v[i] = -3e-39f;
  for (size_t i = 0; i < d->batch * d->heads_q * d->len_q * d->len_k; i++) bias[i] = 2.0f * tu_normal(r);
  for (size_t i = 0; i < d->heads_q; i++) sinks[i] = tu_normal(r);
}

/* o (packed (B, Hq, Lq, Dv)) and each row's weight sum (softmax: 1) from the inputs x as they are read */
static void reference(const smx_attention_desc *d, const float *q, const float *k, const float *v, const float *bias,
                      const float *sinks, ld *o, ld *wsum) {
  size_t G = d->heads_q / d->heads_kv, Lq = d->len_q, Lk = d->len_k, D = d->dim_qk, Dv = d->dim_v;
  float scale = (float)(1.0 / sqrt((double)D));
  ld *z = malloc(Lk * sizeof *z);
  for (size_t b = 0; b < d->batch; b++)
    for (size_t h = 0; h < d->heads_q; h++)
      for (size_t i = 0; i < Lq; i++) {
        size_t row = (b * d->heads_q + h) * Lq + i, g = h / G;
        long long pos = d->causal == SMX_ATTN_CAUSAL_TOP_LEFT ? (long long)i : (long long)i + (long long)Lk - (long long)Lq;
        ld m = -INFINITY;
        for (size_t j = 0; j < Lk; j++) {
          z[j] = -INFINITY;
          if (d->causal && (long long)j > pos) continue;
          ld s = 0;
          for (size_t x = 0; x < D; x++)
            s += (ld)q[row * D + x] * (ld)k[((b * d->heads_kv + g) * Lk + j) * D + x];
          z[j] = (ld)scale * s + (d->mask_kind ? (ld)bias[((b * d->heads_q + h) * Lq + i) * Lk + j] : 0);
          if (z[j] > m) m = z[j];
        }
        ld l = 0, *out = o + row * Dv;
        for (size_t x = 0; x < Dv; x++) out[x] = 0;
        if (m == -INFINITY) { wsum[row] = 0; continue; }
        for (size_t j = 0; j < Lk; j++) {
          if (z[j] == -INFINITY) continue;
          ld w = d->kind == SMX_ATTN_SIGMOID ? 1 / (1 + expl(-(z[j] + (ld)d->sigmoid_bias))) : expl(z[j] - m);
          l += w;
          for (size_t x = 0; x < Dv; x++) out[x] += w * (ld)v[((b * d->heads_kv + g) * Lk + j) * Dv + x];
        }
        if (d->kind == SMX_ATTN_SIGMOID) { wsum[row] = l; continue; }
        if (d->sinks) l += expl((ld)sinks[h] - m);
        for (size_t x = 0; x < Dv; x++) out[x] /= l;
        wsum[row] = 1;
      }
  free(z);
}

static smx_status run(const smx_attention_desc *d0, smx_attn_dtype dt, smx_attn_math math, int threads,
                      const void *q, const void *k, const void *v, const float *bias, const float *sinks, void *o,
                      smx_attn_math *used) {
  smx_attention_desc d = *d0;
  d.dtype = dt;
  d.math = math;
  d.threads = threads;
  if (d.mask_kind) { d.mask_stride[1] = d.len_q * d.len_k; d.mask_stride[2] = d.len_k; d.mask_stride[3] = 1;
    d.mask_stride[0] = d.heads_q * d.mask_stride[1]; }
  smx_attention_plan *p;
  smx_status s = smx_attention_plan_create(&d, &p);
  if (s != SMX_OK) return s;
  if (used) smx_attention_plan_math(p, used);
  smx_attention_args a = { .q = q, .k = k, .v = v, .o = o, .mask = bias, .sinks = sinks };
  s = smx_attention_run(p, &a, NULL, 0, NULL);
  smx_attention_plan_destroy(p);
  return s;
}

static uint16_t *to_bf16(const float *x, size_t n) {
  uint16_t *h = malloc(n * 2 + 2);
  for (size_t i = 0; i < n; i++) h[i] = smx_f32_to_bf16(x[i]);
  return h;
}

/* max over elements of |y - ref| / bound(ref); bf: the P rounding term; out_round: bf16 output */
static double worst(const smx_attention_desc *d, const float *y, const ld *ref, const ld *wsum, ld vmax, int bf,
                    int out_round) {
  ld mx = 0;
  for (size_t i = 0; i < n_o(d); i++) mx = fmaxl(mx, fabsl(ref[i]));
  ld base = (1e-5L + 0x1p-23L * (ld)d->len_k / 64) * mx + (ld)d->len_k * 0x1p-126L;
  double w = 0;
  for (size_t i = 0; i < n_o(d); i++) {
    ld t = base + (bf ? 0x1p-8L * vmax * wsum[i / d->dim_v] : 0);
    t += out_round ? 0x1p-8L * (fabsl(ref[i]) + t) + 0x1p-134L : 0;
    double e = (double)(fabsl((ld)y[i] - ref[i]) / t);
    if (!(e <= w)) w = e;   /* NaN wins */
  }
  return w;
}

static void check_case(const bcase *c, uint64_t seed) {
  const smx_attention_desc *d = &c->d;
  tu_rng r = { seed };
  size_t nq = n_q(d), nk = n_k(d), nv = n_v(d), no = n_o(d), rows = no / d->dim_v;
  float *q = malloc(nq * 4), *k = malloc(nk * 4), *v = malloc(nv * 4);
  float *bias = malloc(d->batch * d->heads_q * d->len_q * d->len_k * 4 + 4), *sinks = malloc(d->heads_q * 4);
  fill(c, q, k, v, bias, sinks, &r);
  /* the stored inputs (bf16), and the values bf16 products read, which f32 storage that opts in reads too */
  uint16_t *qb = to_bf16(q, nq), *kb = to_bf16(k, nk), *vb = to_bf16(v, nv);
  float *qr = malloc(nq * 4), *kr = malloc(nk * 4), *vr = malloc(nv * 4);
  for (size_t i = 0; i < nq; i++) qr[i] = as_bf16(q[i]);
  for (size_t i = 0; i < nk; i++) kr[i] = as_bf16(k[i]);
  for (size_t i = 0; i < nv; i++) vr[i] = as_bf16(v[i]);
  /* the convert path reads the stored bf16 exactly (subnormals kept): its own reference */
  float *qs = malloc(nq * 4), *ks = malloc(nk * 4), *vs = malloc(nv * 4);
  for (size_t i = 0; i < nq; i++) qs[i] = smx_bf16_to_f32(qb[i]);
  for (size_t i = 0; i < nk; i++) ks[i] = smx_bf16_to_f32(kb[i]);
  for (size_t i = 0; i < nv; i++) vs[i] = smx_bf16_to_f32(vb[i]);
  ld *ref = malloc(no * sizeof *ref), *refs = malloc(no * sizeof *refs), *ws = malloc(rows * sizeof *ws);
  reference(d, qr, kr, vr, bias, sinks, ref, ws);
  reference(d, qs, ks, vs, bias, sinks, refs, ws);
  ld vmax = 0;
  for (size_t i = 0; i < nv; i++) vmax = fmaxl(vmax, fabsl((ld)vr[i]));

  uint16_t *ob = malloc(no * 2), *ob2 = malloc(no * 2), *conv = malloc(no * 2);
  float *of = malloc(no * 4), *of2 = malloc(no * 4), *y = malloc(no * 4), *f32o = malloc(no * 4);
  {
    const int isa = tu_isa_at;
    const char *in = tu_isa_names[isa];
    int native = tu_isas[isa] == SMX_ISA_AVX512BF16;
    /* bf16 storage, AUTO */
    smx_attn_math used = SMX_ATTN_MATH_AUTO;
    CHECK(run(d, SMX_ATTN_BF16, SMX_ATTN_MATH_AUTO, 1, qb, kb, vb, bias, sinks, ob, &used) == SMX_OK, "%s %s: run",
          c->name, in);
    CHECK(used == (native ? SMX_ATTN_MATH_BF16 : SMX_ATTN_MATH_F32), "%s %s: plan_math %d", c->name, in, (int)used);
    for (size_t i = 0; i < no; i++) y[i] = smx_bf16_to_f32(ob[i]);
    double e = native ? worst(d, y, ref, ws, vmax, 1, 1) : worst(d, y, refs, ws, vmax, 0, 1);
    CHECK(e <= 1.0, "%s %s: bf16 storage error %.3g of the %s bound", c->name, in, e, native ? "bf16" : "convert");
    static const int ths[] = { 2, 7 };
    for (int t = 0; t < 2; t++) {
      CHECK(run(d, SMX_ATTN_BF16, SMX_ATTN_MATH_AUTO, ths[t], qb, kb, vb, bias, sinks, ob2, NULL) == SMX_OK &&
                !memcmp(ob, ob2, no * 2),
            "%s %s: %d threads differ from 1", c->name, in, ths[t]);
    }
    if (native) {   /* the convert path, as the avx512 entry runs it, is what MATH_F32 must give here */
      smx_set_max_isa(SMX_ISA_AVX512);
      CHECK(run(d, SMX_ATTN_BF16, SMX_ATTN_MATH_AUTO, 1, qb, kb, vb, bias, sinks, conv, NULL) == SMX_OK,
            "%s avx512: run", c->name);
      smx_set_max_isa(SMX_ISA_AVX512BF16);
      CHECK(memcmp(ob, conv, no * 2) != 0, "%s %s: the same bits as the convert path", c->name, in);
      CHECK(run(d, SMX_ATTN_BF16, SMX_ATTN_MATH_F32, 1, qb, kb, vb, bias, sinks, ob2, &used) == SMX_OK &&
                used == SMX_ATTN_MATH_F32 && !memcmp(ob2, conv, no * 2),
            "%s %s: MATH_F32 is not the convert path", c->name, in);
    }
    /* f32 storage: AUTO is F32 bitwise; BF16 opts in (decode shapes: f32 all the same) */
    int f32n = native && !c->dec;
    CHECK(run(d, SMX_ATTN_F32, SMX_ATTN_MATH_AUTO, 1, q, k, v, bias, sinks, f32o, &used) == SMX_OK &&
              used == SMX_ATTN_MATH_F32,
          "%s %s: f32 AUTO", c->name, in);
    CHECK(run(d, SMX_ATTN_F32, SMX_ATTN_MATH_F32, 1, q, k, v, bias, sinks, of2, NULL) == SMX_OK &&
              !memcmp(f32o, of2, no * 4),
          "%s %s: f32 AUTO differs from MATH_F32", c->name, in);
    CHECK(run(d, SMX_ATTN_F32, SMX_ATTN_MATH_BF16, 1, q, k, v, bias, sinks, of, &used) == SMX_OK &&
              used == (f32n ? SMX_ATTN_MATH_BF16 : SMX_ATTN_MATH_F32),
          "%s %s: f32 with MATH_BF16: plan_math %d", c->name, in, (int)used);
    if (f32n) {
      e = worst(d, of, ref, ws, vmax, 1, 0);
      CHECK(e <= 1.0, "%s %s: f32 with MATH_BF16: error %.3g of the bf16 bound (rounded inputs)", c->name, in, e);
      CHECK(run(d, SMX_ATTN_F32, SMX_ATTN_MATH_BF16, 7, q, k, v, bias, sinks, of2, NULL) == SMX_OK &&
                !memcmp(of, of2, no * 4),
            "%s %s: f32 with MATH_BF16: 7 threads differ from 1", c->name, in);
    } else {
      CHECK(!memcmp(of, f32o, no * 4), "%s %s: MATH_BF16 without bf16 products is not the f32 result", c->name, in);
    }
    if (f32n)
      printf("  %-26s bf16 storage %.2f, f32 opting in %.2f of the bound\n", c->name, worst(d, y, ref, ws, vmax, 1, 1),
             worst(d, of, ref, ws, vmax, 1, 0));
    else if (native)   /* decode shapes: f32 storage computes in f32 (checked bitwise above) */
      printf("  %-26s bf16 storage %.2f of the bound\n", c->name, worst(d, y, ref, ws, vmax, 1, 1));
  }
  free(q); free(k); free(v); free(bias); free(sinks); free(qb); free(kb); free(vb); free(qr); free(kr); free(vr);
  free(qs); free(ks); free(vs); free(ref); free(refs); free(ws); free(ob); free(ob2); free(conv); free(of); free(of2);
  free(y); free(f32o);
}

static void test_bad(void) {
  smx_attention_desc d = { DESC(2, 2, 20, 20, 8, 8) };
  smx_attention_plan *p = (smx_attention_plan *)(uintptr_t)1;
  d.math = (smx_attn_math)3;
  CHECK(smx_attention_plan_create(&d, &p) == SMX_E_INVALID_ARG && p == NULL, "unknown math refused");
  d.math = SMX_ATTN_MATH_BF16;
  d.dtype = SMX_ATTN_F16;
  CHECK(smx_attention_plan_create(&d, &p) == SMX_E_INVALID_ARG && p == NULL, "bf16 math on f16 storage refused");
  d.dtype = SMX_ATTN_F32;
  CHECK(smx_attention_plan_create(&d, &p) == SMX_OK, "bf16 math on f32 storage");
  smx_attn_math m;
  CHECK(smx_attention_plan_math(NULL, &m) == SMX_E_INVALID_ARG && smx_attention_plan_math(p, NULL) == SMX_E_INVALID_ARG,
        "plan_math NULL");
  smx_attention_plan_destroy(p);
}

int main(void) {
  tu_isa_start(3);
  if (tu_isa_once) test_bad();
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) check_case(&cases[i], 2000 + i);
  return tu_finish("test_attention_bf16");
}
