/*
 * libFuzzer target for the fused-attention descriptor (include/smx/smx_attention.h; also replayed without
 * libFuzzer by regression_driver.c). The input's bytes, read in order (attn_bytes below; make_corpus_attention.py
 * writes them the same way), become a descriptor with small shapes: every enum (out of range too), sizes
 * including 0, explicit stride triples, window bounds, every double option as 0, a value from a table of
 * awkward ones (NaN, +-inf, 1e300, 1e-300, negative) or 8 raw bytes, thread counts from -1; then run-time
 * operands, values from a generator seeded by the input. For each input:
 *  1. plan_create returns SMX_OK, or SMX_E_INVALID_ARG with the plan pointer set to NULL;
 *  2. on SMX_OK, every buffer is allocated to exactly the span the strides reach (so ASan sees a read or a
 *     write past it), and the run returns SMX_OK or SMX_E_INVALID_ARG (a run-time operand out of range);
 *     refused, it writes nothing; accepted, it writes nothing but O's elements and lse;
 *  3. on SMX_OK with finite inputs and options of moderate size (the header promises finite results
 *     there): O is finite; lse is finite or -inf, and -inf (without a sink) only on a row of O = 0;
 *  4. the same plan at another thread count gives bitwise the same O and lse.
 * Any broken invariant aborts, which libFuzzer reports as a crash.
 */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/attn_elems.h"
#include "math/half_scalar.h"
#include "smx/smx_attention.h"

#define FUZZ_TARGET "fuzz_attention"
#include "fuzz_require.h"

/* the input, read front to back; past its end every byte is 0 */
typedef struct attn_bytes {
  const uint8_t *p;
  size_t n, at;
} attn_bytes;
static unsigned u8(attn_bytes *b) { return b->at < b->n ? b->p[b->at++] : 0u; }
static unsigned u16(attn_bytes *b) { unsigned lo = u8(b); return lo | (u8(b) << 8); }
static uint64_t u64(attn_bytes *b) {
  uint64_t v = 0;
  for (int i = 0; i < 8; i++) v |= (uint64_t)u8(b) << (8 * i);
  return v;
}
/* a double option: selector 0 -> 0, 1 -> a table entry, 2 -> small positive, 3 -> 8 raw bytes */
static double option(attn_bytes *b) {
  static const double table[16] = { 0.5, 1.0, -1.0, 1e300, 1e-300, -1e300, NAN, INFINITY, -INFINITY, 3.5e38,
                                    1e-46, 2.0, 0.0625, -0.5, 40.0, -30.0 };
  unsigned sel = u8(b);
  switch (sel % 4) {
    case 0: return 0.0;
    case 1: return table[(sel / 4) % 16];
    case 2: return (double)(u8(b) + 1) / 32.0;
    default: {
      uint64_t bits = u64(b);
      double v;
      memcpy(&v, &bits, sizeof v);
      return v;
    }
  }
}

/* splitmix64 for the values */
static uint64_t mix(uint64_t *s) {
  uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}
static float val(uint64_t *s, float lo, float hi) { return lo + (hi - lo) * (float)(mix(s) >> 40) * 0x1p-24f; }

/* Elements spanned by (n0, n1, n2, dim) at strides s, the library's rule; 0 when empty. */
static size_t span(const size_t s[3], size_t n0, size_t n1, size_t n2, size_t dim) {
  if (!n0 || !n1 || !n2) return 0;
  return dim + (n0 - 1) * s[0] + (n1 - 1) * s[1] + (n2 - 1) * s[2];
}
/* the strides in effect: {0,0,0} is packed */
static void effective(const size_t given[3], size_t n1, size_t n2, size_t dim, size_t s[3]) {
  if (given[0] || given[1] || given[2]) { memcpy(s, given, 3 * sizeof *s); return; }
  s[2] = dim;
  s[1] = n2 * dim;
  s[0] = n1 * s[1];
}
static void strides_from(attn_bytes *b, size_t given[3]) {
  unsigned mode = u8(b) % 4;
  if (mode < 2) { given[0] = given[1] = given[2] = 0; return; }   /* packed */
  given[0] = u16(b);
  given[1] = u16(b);
  given[2] = u8(b);
}

static void *alloc(size_t bytes) {
  void *p = malloc(bytes ? bytes : 1);
  REQUIRE(p != NULL);
  return p;
}

static int moderate(double x) { return x == 0.0 || (fabs(x) >= 1e-6 && fabs(x) <= 1e6); }

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  attn_bytes in = { data, size, 0 };
  smx_attention_desc d;
  memset(&d, 0, sizeof d);
  d.kind = (smx_attn_kind)(u8(&in) % 9);
  d.dtype = (smx_attn_dtype)(u8(&in) % 4);
  d.causal = (smx_attn_causal)(u8(&in) % 4);
  d.mask_kind = (smx_attn_mask_kind)(u8(&in) % 4);
  d.batch = u8(&in) % 3;
  d.heads_kv = u8(&in) % 4;
  unsigned gq = u8(&in);
  d.heads_q = d.heads_kv * (gq % 5) + (gq >= 250 ? 1 : 0);   /* now and then not a multiple */
  d.len_q = u8(&in) % 70;
  unsigned lk = u8(&in);
  d.len_k = lk >= 250 ? 4096 + (lk - 250) * 37 : lk % 140;   /* split decode keys now and then */
  d.dim_qk = u8(&in) % 48;
  d.dim_v = u8(&in) % 48;
  strides_from(&in, d.q_stride);
  strides_from(&in, d.k_stride);
  strides_from(&in, d.v_stride);
  unsigned opad = u8(&in) % 4;   /* O: packed or padded rows (never shared: the writes of tasks must not meet) */
  if (opad) {
    d.o_stride[2] = d.dim_v + opad;
    d.o_stride[1] = (d.len_q ? d.len_q : 1) * d.o_stride[2];
    d.o_stride[0] = (d.heads_q ? d.heads_q : 1) * d.o_stride[1];
  }
  d.window = (int)(u8(&in) % 2);
  d.window_left = (int8_t)u8(&in);
  d.window_right = (int8_t)u8(&in);
  for (int a = 0; a < 4; a++) d.mask_stride[a] = u8(&in) % 8 == 0 ? 0 : u16(&in) % 4096;
  unsigned flags = u16(&in);
  d.alibi = flags & 1;
  d.sinks = (flags >> 1) & 1;
  d.fox = (flags >> 2) & 1;
  d.gate = (flags >> 3) & 1;
  d.qk_norm = (flags >> 4) & 1;
  d.l2_distance = (flags >> 5) & 1;
  d.k_int8 = (flags >> 6) & 1;
  d.k_int8_jensen = (flags >> 7) & 1;
  d.gate_flags = (flags >> 8) & 3;
  d.screen_flags = (flags >> 10) & 7;
  d.radial_frame = u8(&in) % 24 == 0 ? u8(&in) % 20 : 0;
  d.nsa_topk = u8(&in) % 6 == 0 ? 1 + u8(&in) % 4 : 0;
  d.threads = (int)(u8(&in) % 9) - 1;
  d.scale = option(&in);
  d.softcap = option(&in);
  d.ssmax_s = option(&in);
  d.sigmoid_bias = option(&in);
  d.qk_norm_eps = option(&in);
  d.blasst_log_threshold = option(&in);
  d.diff_lambda = option(&in);
  d.screen_r = option(&in);
  d.screen_window = option(&in);
  d.screen_eps = option(&in);
  unsigned rt = u8(&in);   /* run-time choices */
  uint64_t seed = u64(&in);

  /* small work only: the fuzzer wants many inputs a second */
  size_t Dq = d.dim_qk, Dv = d.dim_v;
  double work = (double)d.batch * (double)d.heads_q * (double)d.len_q * (double)d.len_k * (double)(Dq + Dv + 1);
  if (work > 4e6) return 0;

  smx_attention_plan *plan = (smx_attention_plan *)(uintptr_t)1;
  smx_status st = smx_attention_plan_create(&d, &plan);
  REQUIRE(st == SMX_OK || st == SMX_E_INVALID_ARG);
  if (st != SMX_OK) {
    REQUIRE(plan == NULL);
    return 0;
  }
  REQUIRE(plan != NULL);
  size_t ws = 0;
  REQUIRE(smx_attention_plan_workspace_size(plan, &ws) == SMX_OK);

  size_t B = d.batch, Hq = d.heads_q, Hkv = d.heads_kv, Lq = d.len_q, Lk = d.len_k;
  size_t es = d.dtype == SMX_ATTN_F32 ? 4 : 2, kes = d.k_int8 ? 1 : es;
  size_t sq[3], sk[3], sv[3], so[3];
  effective(d.q_stride, Hq, Lq, Dq, sq);
  effective(d.k_stride, Hkv, Lk, Dq, sk);
  effective(d.v_stride, Hkv, Lk, Dv, sv);
  effective(d.o_stride, Hq, Lq, Dv, so);
  size_t nq = span(sq, B, Hq, Lq, Dq), nk = span(sk, B, Hkv, Lk, Dq), nv = span(sv, B, Hkv, Lk, Dv);
  size_t no = span(so, B, Hq, Lq, Dv), rows = B * Hq * Lq;
  /* inputs: every stored element finite (the gaps of strided layouts too: only values are fuzzed here) */
  void *q = alloc(nq * es), *k = alloc(nk * kes), *v = alloc(nv * es);
  for (size_t i = 0; i < nq; i++) tu_attn_put(d.dtype, q, i, val(&seed, -3, 3));
  for (size_t i = 0; i < nk; i++) {
    if (d.k_int8) ((int8_t *)k)[i] = (int8_t)(mix(&seed) & 0xff);
    else tu_attn_put(d.dtype, k, i, val(&seed, -3, 3));
  }
  for (size_t i = 0; i < nv; i++) tu_attn_put(d.dtype, v, i, val(&seed, -4, 4));
  /* the mask: its exact span at the given strides */
  size_t mspan = 0;
  void *mask = NULL;
  if (d.mask_kind == SMX_ATTN_MASK_BOOL || d.mask_kind == SMX_ATTN_MASK_BIAS) {
    size_t n[4] = { B, Hq, Lq, Lk };
    mspan = 1;
    for (int a = 0; a < 4; a++) {
      if (!n[a]) mspan = 0;
      if (mspan && n[a] > 1) mspan += (n[a] - 1) * d.mask_stride[a];
    }
    size_t mes = d.mask_kind == SMX_ATTN_MASK_BOOL ? 1 : sizeof(float);
    mask = alloc(mspan * mes);
    for (size_t i = 0; i < mspan; i++) {
      if (mes == 1) ((uint8_t *)mask)[i] = (uint8_t)(mix(&seed) % 3);
      else ((float *)mask)[i] = mix(&seed) % 5 == 0 ? -INFINITY : val(&seed, -2, 2);
    }
  }
  size_t nblk = (Lk + 63) / 64;
  float *slopes = alloc(Hq * 4), *sinks = alloc(Hq * 4), *fox = alloc(B * Hq * Lk * 4);
  float *gate = alloc(rows * ((d.gate_flags & SMX_ATTN_GATE_ELEMENTWISE) ? Dv : 1) * 4);
  float *qw = alloc(Dq * 4), *kw = alloc(Dq * 4), *ks = alloc(B * Hkv * nblk * 4), *sr = alloc(Hq * 4), *sw = alloc(Hq * 4);
  for (size_t h = 0; h < Hq; h++) {
    slopes[h] = val(&seed, 0, 1);
    sinks[h] = val(&seed, -2, 3);
    /* screening widths: some out of (0, 1] (the run must refuse them) when rt asks */
    sr[h] = (rt & 0x10) ? val(&seed, -0.5f, 1.5f) : val(&seed, 0.05f, 1.0f);
    sw[h] = mix(&seed) % 4 == 0 ? INFINITY : val(&seed, 0, 50);
  }
  for (size_t bh = 0; bh < B * Hq; bh++) {
    float acc = 0;
    for (size_t j = 0; j < Lk; j++) fox[bh * Lk + j] = acc -= val(&seed, 0, 2);
  }
  for (size_t i = 0; i < rows * ((d.gate_flags & SMX_ATTN_GATE_ELEMENTWISE) ? Dv : 1); i++) gate[i] = val(&seed, -4, 4);
  for (size_t x = 0; x < Dq; x++) { qw[x] = val(&seed, 0.5f, 1.5f); kw[x] = val(&seed, 0.5f, 1.5f); }
  for (size_t i = 0; i < B * Hkv * nblk; i++) ks[i] = val(&seed, 0.001f, 0.05f);

  unsigned char *o1 = alloc(no * es), *o2 = alloc(no * es);
  float *l1 = alloc(rows * 4), *l2 = alloc(rows * 4);
  memset(o1, 0xa5, no * es);
  memset(o2, 0xa5, no * es);
  memset(l1, 0xa5, rows * 4);
  memset(l2, 0xa5, rows * 4);
  smx_attention_args a;
  memset(&a, 0, sizeof a);
  a.q = q; a.k = k; a.v = v; a.o = o1; a.lse = (rt & 1) ? NULL : l1;
  a.mask = mask; a.alibi_slopes = slopes; a.sinks = sinks; a.fox = fox; a.gate = gate;
  a.q_norm_w = (rt & 2) ? NULL : qw; a.k_norm_w = (rt & 4) ? NULL : kw; a.k_scales = ks;
  a.screen_r = (rt & 8) || d.screen_r == 0 ? sr : NULL;
  a.screen_window = (rt & 0x20) ? sw : NULL;
  void *w = (rt & 0x40) ? alloc(ws) : NULL;
  st = smx_attention_run(plan, &a, w, ws, NULL);
  REQUIRE(st == SMX_OK || st == SMX_E_INVALID_ARG);
  if (st != SMX_OK) {   /* refused: nothing written */
    for (size_t i = 0; i < no * es; i++) REQUIRE(o1[i] == 0xa5);
    for (size_t i = 0; i < rows * 4; i++) REQUIRE(((unsigned char *)l1)[i] == 0xa5);
  } else {
    /* O's gaps untouched */
    unsigned char *mark = calloc(no ? no : 1, 1);
    REQUIRE(mark != NULL);
    for (size_t b = 0; b < B; b++)
      for (size_t h = 0; h < Hq; h++)
        for (size_t i = 0; i < Lq; i++)
          for (size_t x = 0; x < Dv; x++) mark[b * so[0] + h * so[1] + i * so[2] + x] = 1;
    for (size_t i = 0; i < no; i++)
      if (!mark[i])
        for (size_t y = 0; y < es; y++) REQUIRE(o1[i * es + y] == 0xa5);
    free(mark);
    /* finite results from finite inputs and options of moderate size */
    int mod = moderate(d.scale) && moderate(d.softcap) && moderate(d.ssmax_s) && moderate(d.sigmoid_bias) &&
              moderate(d.qk_norm_eps) && moderate(d.blasst_log_threshold) && moderate(d.diff_lambda) &&
              moderate(d.screen_r) && moderate(d.screen_window) && moderate(d.screen_eps);
    if (mod)
      for (size_t b = 0; b < B; b++)
        for (size_t h = 0; h < Hq; h++)
          for (size_t i = 0; i < Lq; i++) {
            size_t row = (b * Hq + h) * Lq + i;
            int zero = 1;
            for (size_t x = 0; x < Dv; x++) {
              float y = tu_attn_get(d.dtype, o1, b * so[0] + h * so[1] + i * so[2] + x);
              /* f16 storage: a result beyond 65504 is stored as inf, its correct rounding */
              REQUIRE(isfinite(y) || (d.dtype == SMX_ATTN_F16 && isinf(y)));
              zero &= y == 0;
            }
            if (a.lse) {
              float l = l1[row];
              REQUIRE(l == l && l != INFINITY);
              if (l == -INFINITY && !d.sinks) REQUIRE(zero);
            }
          }
    /* another thread count: bitwise the same */
    smx_attention_desc d2 = d;
    d2.threads = d.threads > 1 ? 1 : 3;
    smx_attention_plan *p2 = NULL;
    REQUIRE(smx_attention_plan_create(&d2, &p2) == SMX_OK);
    a.o = o2;
    if (a.lse) a.lse = l2;
    REQUIRE(smx_attention_run(p2, &a, NULL, 0, NULL) == SMX_OK);
    REQUIRE(memcmp(o1, o2, no * es) == 0);
    if (a.lse) REQUIRE(memcmp(l1, l2, rows * 4) == 0);
    smx_attention_plan_destroy(p2);
  }
  smx_attention_plan_destroy(plan);
  free(w); free(q); free(k); free(v); free(mask); free(slopes); free(sinks); free(fox); free(gate);
  free(qw); free(kw); free(ks); free(sr); free(sw); free(o1); free(o2); free(l1); free(l2);
  return 0;
}
