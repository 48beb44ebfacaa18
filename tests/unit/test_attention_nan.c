/*
 * NaN in the fused attention (the rule in include/smx/smx_attention.h): a NaN
 * in Q, K (or a NaN score) reaches exactly the query rows that see it: every
 * element of their O row and their lse is NaN; a NaN in V reaches the O
 * column of the rows that see that key. Every other row is bitwise the clean
 * run's (valid keys are never thrown away), and a row that sees no key keeps
 * O = 0 and lse = -inf (the sink with sinks) even when NaN rows share its tile.
 * For every kind, the tile and decode paths, split keys, masks, f32 / f16 /
 * bf16 storage, every ISA, 1 and 3 threads.
 */
#include "../common/test_isa.h"
#include "math/half_scalar.h"
#include "smx/smx_attention.h"

#define DESC(B, HQ, HKV, LQ, LK, DQ, DV) \
  .batch = B, .heads_q = HQ, .heads_kv = HKV, .len_q = LQ, .len_k = LK, .dim_qk = DQ, .dim_v = DV

typedef struct ncase {
  const char *name;
  smx_attention_desc d;
  int bmask;   /* a bool mask (batch, 1, Lq, Lk) with some fully masked rows */
} ncase;

static const ncase cases[] = {
  { "plain", { DESC(1, 2, 2, 70, 150, 24, 20) }, 0 },
  { "causal Lq > Lk", { DESC(1, 2, 2, 80, 50, 16, 16), .causal = SMX_ATTN_CAUSAL_BOTTOM_RIGHT }, 0 },
  { "causal top-left", { DESC(2, 2, 1, 70, 100, 16, 12), .causal = SMX_ATTN_CAUSAL_TOP_LEFT }, 0 },
  { "window 9/2", { DESC(1, 2, 2, 100, 100, 16, 16), .window = 1, .window_left = 9, .window_right = 2 }, 0 },
  { "bool mask", { DESC(2, 2, 1, 30, 140, 24, 24), .mask_kind = SMX_ATTN_MASK_BOOL }, 1 },
  { "decode GQA", { DESC(2, 8, 2, 1, 300, 40, 24) }, 0 },
  { "decode causal mask", { DESC(1, 4, 2, 2, 200, 32, 16), .causal = 1, .mask_kind = SMX_ATTN_MASK_BOOL }, 1 },
  { "decode split", { DESC(1, 4, 1, 1, 4500, 32, 16) }, 0 },
  { "decode split causal", { DESC(1, 4, 2, 3, 4200, 16, 16), .causal = 1 }, 0 },
  { "few rows", { DESC(1, 12, 1, 1, 200, 32, 16), .causal = 1 }, 0 },
  { "sinks causal", { DESC(1, 2, 2, 80, 50, 16, 16), .causal = 1, .sinks = 1 }, 0 },
  { "sinks decode mask", { DESC(1, 4, 2, 1, 150, 16, 16), .sinks = 1, .mask_kind = SMX_ATTN_MASK_BOOL }, 1 },
  { "softcap alibi causal", { DESC(1, 2, 2, 40, 90, 16, 16), .causal = 1, .softcap = 5.0, .alibi = 1 }, 0 },
  { "ssmax bool", { DESC(1, 2, 2, 30, 100, 16, 16), .ssmax_s = 0.5, .mask_kind = SMX_ATTN_MASK_BOOL }, 1 },
  { "differential", { DESC(1, 2, 2, 40, 90, 32, 16), .causal = 1, .diff_lambda = 0.3 }, 0 },
  { "sigmoid causal", { DESC(1, 2, 2, 80, 50, 16, 16), .causal = 1, .kind = SMX_ATTN_SIGMOID }, 0 },
  { "sigmoid bool", { DESC(1, 2, 2, 30, 100, 16, 16), .kind = SMX_ATTN_SIGMOID, .mask_kind = SMX_ATTN_MASK_BOOL }, 1 },
  { "softpick causal", { DESC(1, 2, 2, 80, 50, 16, 16), .causal = 1, .kind = SMX_ATTN_SOFTPICK }, 0 },
  { "softpick bool", { DESC(1, 2, 2, 30, 100, 16, 16), .kind = SMX_ATTN_SOFTPICK, .mask_kind = SMX_ATTN_MASK_BOOL }, 1 },
  { "screen causal", { DESC(1, 2, 2, 80, 70, 16, 16), .causal = 1, .kind = SMX_ATTN_SCREEN, .screen_r = 1.0 }, 0 },
  { "screen bool", { DESC(1, 2, 2, 30, 100, 16, 16), .kind = SMX_ATTN_SCREEN, .screen_r = 1.0, .mask_kind = SMX_ATTN_MASK_BOOL }, 1 },
  { "linear causal", { DESC(1, 2, 2, 40, 40, 16, 16), .causal = 1, .kind = SMX_ATTN_LINEAR }, 0 },
  { "cosformer causal", { DESC(1, 2, 2, 40, 40, 16, 16), .causal = 1, .kind = SMX_ATTN_COSFORMER }, 0 },
  { "cosformer", { DESC(1, 2, 1, 30, 50, 16, 16), .kind = SMX_ATTN_COSFORMER }, 0 },
  { "mala causal", { DESC(1, 2, 2, 50, 40, 16, 16), .causal = 1, .kind = SMX_ATTN_MALA }, 0 },
};

/* bool mask entry of (b, i, j): rows i % 7 == 3 see nothing, others about 2 keys in 3 */
static int mask_at(size_t b, size_t i, size_t j) {
  if (i % 7 == 3) return 0;
  return (b * 31 + i * 7 + j * 13) % 3 != 0;
}

/* whether query (b, h, i) sees key j: positional masks and the bool mask */
static int sees(const ncase *c, size_t b, size_t i, size_t j) {
  const smx_attention_desc *d = &c->d;
  long long pos = d->causal == SMX_ATTN_CAUSAL_TOP_LEFT ? (long long)i : (long long)i + (long long)d->len_k - (long long)d->len_q;
  long long jj = (long long)j;
  if (d->causal && jj > pos) return 0;
  if (d->window && d->window_left >= 0 && jj < pos - d->window_left) return 0;
  if (d->window && d->window_right >= 0 && jj > pos + d->window_right) return 0;
  if (c->bmask && !mask_at(b, i, j)) return 0;
  return 1;
}

static int sees_any(const ncase *c, size_t b, size_t i) {
  for (size_t j = 0; j < c->d.len_k; j++)
    if (sees(c, b, i, j)) return 1;
  return 0;
}

static void *to_storage(smx_attn_dtype t, const float *x, size_t n) {
  if (t == SMX_ATTN_F32) {
    float *y = malloc(n * 4 + 4);
    memcpy(y, x, n * 4);
    return y;
  }
  uint16_t *h = malloc(n * 2 + 2);
  for (size_t i = 0; i < n; i++) h[i] = t == SMX_ATTN_F16 ? smx_f32_to_f16(x[i]) : smx_f32_to_bf16(x[i]);
  return h;
}

static float from_storage(smx_attn_dtype t, const void *p, size_t i) {
  if (t == SMX_ATTN_F16) return smx_f16_to_f32(((const uint16_t *)p)[i]);
  if (t == SMX_ATTN_BF16) return smx_bf16_to_f32(((const uint16_t *)p)[i]);
  return ((const float *)p)[i];
}

typedef struct inputs {
  float *q, *k, *v, slopes[16], sinks[16];
  unsigned char *mask;
} inputs;

/* Runs the case; O converted to f32 in of (packed), lse in lf. */
static smx_status run(const ncase *c, smx_attn_dtype dt, int threads, const inputs *in, float *of, float *lf) {
  smx_attention_desc d = c->d;
  d.dtype = dt;
  d.threads = threads;
  if (c->bmask) {
    d.mask_stride[0] = d.len_q * d.len_k; d.mask_stride[1] = 0; d.mask_stride[2] = d.len_k; d.mask_stride[3] = 1;
  }
  size_t nq = d.batch * d.heads_q * d.len_q * d.dim_qk, nk = d.batch * d.heads_kv * d.len_k * d.dim_qk;
  size_t nv = d.batch * d.heads_kv * d.len_k * d.dim_v, no = d.batch * d.heads_q * d.len_q * d.dim_v;
  void *q = to_storage(dt, in->q, nq), *k = to_storage(dt, in->k, nk), *v = to_storage(dt, in->v, nv);
  void *o = malloc(no * 4 + 4);
  memset(o, 0x7f, no * 4);
  smx_attention_args a = { .q = q, .k = k, .v = v, .o = o, .lse = lf, .mask = in->mask,
                           .alibi_slopes = in->slopes, .sinks = in->sinks };
  smx_attention_plan *p;
  smx_status s = smx_attention_plan_create(&d, &p);
  if (s == SMX_OK) {
    s = smx_attention_run(p, &a, NULL, 0, NULL);
    smx_attention_plan_destroy(p);
  }
  for (size_t i = 0; i < no; i++) of[i] = from_storage(dt, o, i);
  free(q); free(k); free(v); free(o);
  return s;
}

/* where: 0 Q, 1 K, 2 V */
static void check(const ncase *c, smx_attn_dtype dt, int where, uint64_t seed) {
  static const char *const wn[3] = { "Q", "K", "V" }, *const dn[3] = { "f32", "f16", "bf16" };
  const smx_attention_desc *d = &c->d;
  size_t B = d->batch, Hq = d->heads_q, Hkv = d->heads_kv, Lq = d->len_q, Lk = d->len_k, Dq = d->dim_qk, Dv = d->dim_v;
  size_t G = Hq / Hkv, nq = B * Hq * Lq * Dq, nk = B * Hkv * Lk * Dq, nv = B * Hkv * Lk * Dv, no = B * Hq * Lq * Dv;
  size_t rows = B * Hq * Lq;
  tu_rng r = { seed };
  inputs in;
  in.q = malloc(nq * 4); in.k = malloc(nk * 4); in.v = malloc(nv * 4);
  in.mask = malloc(B * Lq * Lk + 1);
  for (size_t i = 0; i < nq; i++) in.q[i] = tu_normal(&r);
  for (size_t i = 0; i < nk; i++) in.k[i] = tu_normal(&r);
  for (size_t i = 0; i < nv; i++) in.v[i] = tu_normal(&r);
  for (size_t b = 0; b < B; b++)
    for (size_t i = 0; i < Lq; i++)
      for (size_t j = 0; j < Lk; j++) in.mask[(b * Lq + i) * Lk + j] = (unsigned char)mask_at(b, i, j);
  for (size_t h = 0; h < 16; h++) { in.slopes[h] = 0.05f * (float)(h + 1); in.sinks[h] = 0.3f * (float)h - 0.5f; }
  /* the NaN: Q of the last batch's last head at a query that sees keys; K or V of batch 0, KV head 0, at a
   * key that some rows see and (with masks) some do not */
  size_t qb = B - 1, qh = Hq - 1, qi = Lq / 2, kj = Lk / 2, vx = 1 % Dv;
  if (where == 0) {
    for (size_t i = 0; i < Lq; i++)
      if (sees_any(c, qb, (qi + i) % Lq)) { qi = (qi + i) % Lq; break; }
    in.q[((qb * Hq + qh) * Lq + qi) * Dq] = NAN;
  } else if (where == 1) {
    in.k[kj * Dq] = NAN;
  } else {
    in.v[kj * Dv + vx] = NAN;
  }
  float *o0 = malloc(no * 4 + 4), *o1 = malloc(no * 4 + 4), *l0 = malloc(rows * 4 + 4), *l1 = malloc(rows * 4 + 4);
  /* the clean run: the NaN replaced by a finite value (rows that do not see it must not notice) */
  inputs clean = in;
  float *cq = malloc(nq * 4), *ck = malloc(nk * 4), *cv = malloc(nv * 4);
  memcpy(cq, in.q, nq * 4); memcpy(ck, in.k, nk * 4); memcpy(cv, in.v, nv * 4);
  for (size_t i = 0; i < nq; i++) if (cq[i] != cq[i]) cq[i] = 0.25f;
  for (size_t i = 0; i < nk; i++) if (ck[i] != ck[i]) ck[i] = 0.25f;
  for (size_t i = 0; i < nv; i++) if (cv[i] != cv[i]) cv[i] = 0.25f;
  clean.q = cq; clean.k = ck; clean.v = cv;
  int mala = d->kind == SMX_ATTN_MALA, screen = d->kind == SMX_ATTN_SCREEN;
  {
    const int isa = tu_isa_at;
    for (int th = 1; th <= 3; th += 2) {
      smx_status s0 = run(c, dt, th, &clean, o0, l0), s1 = run(c, dt, th, &in, o1, l1);
      CHECK(s0 == SMX_OK && s1 == SMX_OK, "%s %s: status %d %d", c->name, dn[dt], (int)s0, (int)s1);
      long wrong = 0, first = -1, nan_rows = 0;
      for (size_t b = 0; b < B; b++)
        for (size_t h = 0; h < Hq; h++)
          for (size_t i = 0; i < Lq; i++) {
            size_t row = (b * Hq + h) * Lq + i;
            const float *y0 = o0 + row * Dv, *y1 = o1 + row * Dv;
            int hit = where == 0 ? b == qb && h == qh && i == qi && sees_any(c, b, i)
                                 : b == 0 && h / G == 0 && sees(c, b, i, kj);
            int ok = 1;
            if (!sees_any(c, b, i)) {   /* no key: the documented result, NaN or not */
              for (size_t x = 0; x < Dv; x++) ok &= y1[x] == 0.0f;
              ok &= d->sinks ? l1[row] == in.sinks[h] : mala ? 1 : l1[row] == -INFINITY;
            } else if (hit && where < 2) {
              for (size_t x = 0; x < Dv; x++) ok &= y1[x] != y1[x];
              ok &= mala ? l1[row] == 0.0f : l1[row] != l1[row];
            } else if (hit && screen) {
              /* screening: v^ = v / |v| is NaN in every column, for the rows whose Trim keeps the key */
              int all = 1, same = 1;
              for (size_t x = 0; x < Dv; x++) { all &= y1[x] != y1[x]; same &= tu_same(y1[x], y0[x]); }
              ok &= (all || same) && tu_same(l1[row], l0[row]);
              nan_rows += all;
            } else if (hit) {   /* V: its column, not the lse */
              for (size_t x = 0; x < Dv; x++) ok &= x == vx ? y1[x] != y1[x] : tu_same(y1[x], y0[x]);
              ok &= tu_same(l1[row], l0[row]);
            } else {
              /* a row that does not see the NaN is the clean run's; with NaN in V, 0 x NaN may reach its column
               * when it sees other keys of the NaN key's tile (as in PyTorch's kernels) */
              int all = 1, same = 1;
              for (size_t x = 0; x < Dv; x++) {
                ok &= tu_same(y1[x], y0[x]) || (where == 2 && x == vx && y1[x] != y1[x]);
                all &= y1[x] != y1[x];
                same &= tu_same(y1[x], y0[x]);
              }
              if (screen && where == 2) ok = all || same;   /* TanhNorm spreads a NaN column over the row */
              ok &= tu_same(l1[row], l0[row]);
            }
            if (!ok && first < 0) first = (long)row;
            wrong += !ok;
          }
      CHECK(wrong == 0, "%s %s NaN in %s, %s, %d threads: %ld rows wrong (first %ld: o[0] %g lse %g, clean %g %g)",
            c->name, dn[dt], wn[where], tu_isa_names[isa], th, wrong, first, first >= 0 ? o1[first * Dv] : 0.0,
            first >= 0 ? l1[first] : 0.0, first >= 0 ? o0[first * Dv] : 0.0, first >= 0 ? l0[first] : 0.0);
      if (screen && where == 2) CHECK(nan_rows > 0, "%s %s: no row took the NaN of V", c->name, dn[dt]);
    }
  }
  free(o0); free(o1); free(l0); free(l1); free(cq); free(ck); free(cv);
  free(in.q); free(in.k); free(in.v); free(in.mask);
}

/* Merging parts: a NaN lse (or a NaN in a part with weight) makes the row NaN; -inf parts are empty. */
static void test_merge_nan(void) {
  float oa[2 * 3] = { 1, 2, 3, 4, 5, 6 }, ob[2 * 3] = { 7, 8, 9, 10, 11, 12 }, out[2 * 3], lo[2];
  float la[2] = { NAN, -INFINITY }, lb[2] = { 0.5f, 0.25f };
  const float *o[2] = { oa, ob }, *l[2] = { la, lb };
  CHECK(smx_attention_merge(2, o, l, 2, 3, 3, out, 3, lo) == SMX_OK, "merge");
  CHECK(out[0] != out[0] && out[1] != out[1] && out[2] != out[2] && lo[0] != lo[0], "merge: NaN lse lost: %g %g", out[0], lo[0]);
  CHECK(out[3] == 10 && out[4] == 11 && out[5] == 12 && lo[1] == 0.25f, "merge: -inf part not empty: %g %g", out[3], lo[1]);
  la[1] = NAN; lb[0] = -INFINITY; lb[1] = NAN;
  CHECK(smx_attention_merge(2, o, l, 2, 3, 3, out, 3, lo) == SMX_OK, "merge 2");
  CHECK(out[0] != out[0] && lo[0] != lo[0] && out[3] != out[3] && lo[1] != lo[1], "merge: NaN with -inf: %g %g", out[0], lo[0]);
}

/* screening with an infinity in K: q.k is +inf or -inf by the sign of q (or NaN), s = q^.k^ takes inf / inf;
 * a -inf score must not read as a masked key (soak case 0x45a7a1fb11b5a2d4): the rows that see the key are
 * NaN, the rows before it (causal) are untouched */
static void test_screen_inf_k(void) {
  enum { L = 8, D = 4 };
  float q[L * D], k[L * D], v[L * D], o[L * D], lse[L];
  for (size_t i = 0; i < L; i++)
    for (size_t x = 0; x < D; x++) {
      q[i * D + x] = (i % 2 ? -1.0f : 1.0f) * (float)(x + 1);
      k[i * D + x] = (i % 2 ? -1.0f : 1.0f) * (float)(D - x);
      v[i * D + x] = 0.1f * (float)(i + x);
    }
  for (int sign = 0; sign < 2; sign++) {
    k[3 * D] = sign ? -INFINITY : INFINITY;
    smx_attention_desc d = { DESC(1, 1, 1, L, L, D, D), .causal = 1, .kind = SMX_ATTN_SCREEN, .screen_r = 1.0,
                             .threads = 1 };
    smx_attention_plan *p;
    CHECK(smx_attention_plan_create(&d, &p) == SMX_OK, "screen inf K: plan");
    smx_attention_args a = { .q = q, .k = k, .v = v, .o = o, .lse = lse };
    CHECK(smx_attention_run(p, &a, NULL, 0, NULL) == SMX_OK, "screen inf K: run");
    smx_attention_plan_destroy(p);
    for (size_t i = 0; i < L; i++) {
      int nan = lse[i] != lse[i];
      for (size_t x = 0; x < D; x++) nan &= o[i * D + x] != o[i * D + x];
      if (i >= 3) CHECK(nan, "screen %cinf K: row %zu sees the key, not NaN (lse %g)", sign ? '-' : '+', i, lse[i]);
      else CHECK(lse[i] == lse[i] && o[i * D] == o[i * D], "screen inf K: row %zu does not see the key, NaN", i);
    }
  }
  /* an infinity in V: v / |v| is NaN in its column, which TanhNorm spreads; 1 / |v| = 0 dropped the key */
  k[3 * D] = -1.0f * (float)D;
  v[3 * D + 1] = INFINITY;
  smx_attention_desc d = { DESC(1, 1, 1, L, L, D, D), .causal = 1, .kind = SMX_ATTN_SCREEN, .screen_r = 1.0, .threads = 1 };
  smx_attention_plan *p;
  CHECK(smx_attention_plan_create(&d, &p) == SMX_OK, "screen inf V: plan");
  smx_attention_args a = { .q = q, .k = k, .v = v, .o = o, .lse = lse };
  CHECK(smx_attention_run(p, &a, NULL, 0, NULL) == SMX_OK, "screen inf V: run");
  smx_attention_plan_destroy(p);
  int nan_rows = 0;
  for (size_t i = 0; i < L; i++) {
    int all = 1, none = 1;
    for (size_t x = 0; x < D; x++) { all &= o[i * D + x] != o[i * D + x]; none &= o[i * D + x] == o[i * D + x]; }
    CHECK(all || none, "screen inf V: row %zu partly NaN", i);
    if (i < 3) CHECK(none, "screen inf V: row %zu does not see the key, NaN", i);
    nan_rows += all;
  }
  CHECK(nan_rows > 0, "screen inf V: no row took the infinity of V");
}

int main(void) {
  tu_isa_start(3);
  if (tu_isa_once) {
    test_merge_nan();
    test_screen_inf_k();
  }
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
    for (int dt = 0; dt < 3; dt++)
      for (int where = 0; where < 3; where++) check(&cases[i], (smx_attn_dtype)dt, where, 100 + i * 9 + (size_t)dt * 3 + (size_t)where);
  return tu_finish("test_attention_nan");
}
