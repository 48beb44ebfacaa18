/*
 * attn_soak: random fused-attention calls (include/smx/smx_attention.h)
 * against the long-double reference of attn_ref.c, for a bounded time.
 *
 * Each case is made from one 64-bit seed: a random descriptor (every kind,
 * mask and variant the header offers, in the combinations it allows), a
 * shape (GQA, decode with Lq = 1 and split keys, Lq > Lk, empty sizes), a
 * layout per tensor (packed, padded (B, H, L, D), (B, L, H, D), and the
 * zero-stride forms where the plan accepts them), a storage type, run-time
 * operands (broadcast masks, slopes, sinks, FoX, gates, QK-norm weights,
 * int8 scales, per-head screening widths), values with special values
 * (NaN, +-inf in Q, K, V) and fully masked rows, and a kernel set.
 *
 * Every buffer the library reads or writes is allocated to its exact span,
 * so that ASan sees any access past it; the gaps of strided inputs hold NaN
 * (a read of a gap shows in the output) and those of O a byte pattern that
 * must survive. The case runs at 1, 2 and 7 threads, bitwise equal, and the
 * 1-thread result is checked against the reference within the header's
 * bound (f32: 1e-5 max|ref| over the tensor; f16 / bf16 add one rounding of
 * each output) and its special-value policy (attn_ref.c). Some cases are bad
 * arguments instead: they must be refused with the documented status and
 * write nothing.
 *
 *   attn_soak [--seconds S] [--seed S] [--case 0xSEED] [--verbose] [--no-known]
 *
 * SMX_SOAK_SECONDS sets the time when --seconds is not given (default 15).
 * The run prints its seed; a failing case prints its description and the
 * command that replays it alone. Exit status 1 when some case failed.
 */
#define _POSIX_C_SOURCE 200809L
#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../../common/attn_elems.h"
#include "../../common/soak_run.h"
#include "attn_soak.h"
#include "math/half_scalar.h"
#include "smx/smx.h"

typedef long double ld;

/* ------------------------------------ draws (splitmix64: tests/common/splitmix.h) */
static double unif_in(tu_rng *r, double lo, double hi) { return lo + (hi - lo) * tu_uniform(r); }
static size_t range_in(tu_rng *r, size_t lo, size_t hi) { return lo + tu_below(r, hi - lo + 1); }

/* ------------------------------------------------------------- failures */
static int verbose;
static uint64_t cur_seed;
static int cur_failed;
static char cur_desc[1024];
/* what went wrong in the current case, for the KNOWN list */
#define FK_NAN_MISSED 0x1u    /* a NaN / non-finite output expected, a finite one came */
#define FK_ZERO 0x2u          /* a row that sees no key: not O = 0 / lse = -inf */
#define FK_BOUND 0x4u         /* outside the bound */
#define FK_LSE_POSINF 0x8u    /* lse +inf where the reference is finite */
#define FK_LSE_NEGINF 0x10u   /* lse -inf where the reference is finite */
#define FK_NAN_EXTRA 0x20u    /* NaN where a finite value is expected */
#define FK_OTHER 0x40u        /* a status, thread-count difference, gap write, bad argument */
static unsigned cur_fk;

static void fail(const char *fmt, ...) {
  if (!cur_fk) cur_fk = FK_OTHER;   /* the checks of values set theirs first */
  if (!cur_failed) {
    fprintf(stderr, "FAIL case 0x%016" PRIx64 ": %s\n", cur_seed, cur_desc);
  }
  if (cur_failed < (verbose ? 40 : 6)) {
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "  ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
  }
  cur_failed++;
}

/* ------------------------------------------------------------ the case */
/* A tensor (n0, n1, n2, dim) in its stored layout: the strides given to the library and those in effect. */
typedef struct tensor {
  size_t n[3], dim;
  size_t given[3];   /* what the descriptor gets ({0,0,0}: packed) */
  size_t s[3];       /* element strides in effect */
  size_t span;       /* elements spanned (0 when empty) */
  const char *layout;
} tensor;

typedef struct gen {
  attn_case c;
  tensor tq, tk, tv, to;
  int es;                    /* bytes per stored element */
  void *q, *k, *v;           /* stored, exact span */
  size_t mask_n[4];          /* stored mask extents (1 = broadcast) */
  void *mask;                /* stored mask, exact span */
  size_t mask_span;
  float *slopes, *sinks, *fox, *gate, *qw, *kw, *kscales, *sr, *sw;
  int use_lse, ws_given, isa;
  int edge;                  /* some option the header leaves open: refusal is fine, a result must be right */
  int special;               /* special values were placed */
  int big;                   /* logits of extreme magnitude */
  long double min_rowmax, max_rowmax, min_score, min_lse;   /* from the reference, for the KNOWN list */
} gen;

static const char *kind_name(int k) {
  static const char *const n[] = { "softmax", "sigmoid", "softpick", "linear", "cosformer", "mala", "screen" };
  return k >= 0 && k < 7 ? n[k] : "?";
}
static const char *dt_name(smx_attn_dtype t) { return t == SMX_ATTN_F16 ? "f16" : t == SMX_ATTN_BF16 ? "bf16" : "f32"; }

/* The kernel sets to pick from. */
#if defined(__aarch64__)
static const smx_isa_level isa_cand[] = { SMX_ISA_SCALAR, SMX_ISA_NEON };
#else
static const smx_isa_level isa_cand[] = { SMX_ISA_SCALAR, SMX_ISA_AVX2, SMX_ISA_AVX512, SMX_ISA_AVX512BF16 };
#endif
static smx_isa_level isa_levels[5];
static int n_isa;
static void isa_init(void) {
  const char *top = smx_isa();
  char prev[64] = "";
  for (size_t i = 0; i < sizeof isa_cand / sizeof isa_cand[0]; i++) {
    if (smx_set_max_isa(isa_cand[i]) != SMX_OK) continue;
    if (strcmp(smx_isa(), prev) == 0) continue;
    snprintf(prev, sizeof prev, "%s", smx_isa());
    isa_levels[n_isa++] = isa_cand[i];
    if (strcmp(prev, top) == 0) break;
  }
}

static size_t span_of(const size_t n[3], const size_t s[3], size_t dim) {
  if (!n[0] || !n[1] || !n[2]) return 0;
  size_t t = dim;
  for (int k = 0; k < 3; k++) t += (n[k] - 1) * s[k];
  return t;
}

/* Picks a layout: packed, padded (B, H, L, D), (B, L, H, D); bcast: K / V may share a batch or head (stride 0). */
static void layout(tu_rng *r, tensor *t, size_t n0, size_t n1, size_t n2, size_t dim, int bcast, int *edge) {
  t->n[0] = n0; t->n[1] = n1; t->n[2] = n2; t->dim = dim;
  int mode = (int)tu_below(r, bcast ? 5 : 4);
  size_t pr = tu_chance(r, 0.5) ? range_in(r, 1, 9) : 0, ph = tu_below(r, 3) * 7, pb = tu_below(r, 3) * 5;
  switch (mode) {
    case 0: case 1:   /* packed, given as {0,0,0} */
      t->given[0] = t->given[1] = t->given[2] = 0;
      t->s[2] = dim; t->s[1] = n2 * dim; t->s[0] = n1 * n2 * dim;
      t->layout = "packed";
      break;
    case 2:
      t->s[2] = dim + pr; t->s[1] = n2 * t->s[2] + ph; t->s[0] = n1 * t->s[1] + pb;
      memcpy(t->given, t->s, sizeof t->s);
      t->layout = "bhld-padded";
      break;
    case 3:
      t->s[1] = dim + pr; t->s[2] = (n1 ? n1 : 1) * t->s[1] + ph; t->s[0] = n2 * t->s[2] + pb;
      memcpy(t->given, t->s, sizeof t->s);
      t->layout = "blhd";
      break;
    default:   /* broadcast: a zero batch and / or head stride (np.broadcast_to, torch.expand) */
      t->s[2] = dim + pr; t->s[1] = n2 * t->s[2] + ph; t->s[0] = n1 * t->s[1] + pb;
      if (n0 > 1 && tu_chance(r, 0.6)) t->s[0] = 0;
      if (n1 > 1 && (t->s[0] != 0 || tu_chance(r, 0.5))) t->s[1] = 0;
      memcpy(t->given, t->s, sizeof t->s);
      t->layout = "broadcast";
      *edge = 1;
      break;
  }
  /* a single row: its stride is never used, the header's rule on it notwithstanding */
  if (mode >= 2 && n2 <= 1 && tu_chance(r, 0.3)) { t->s[2] = t->given[2] = 0; *edge = 1; }
  /* a given triple of zeros would mean packed: keep at least one nonzero */
  if (mode >= 2 && !t->given[0] && !t->given[1] && !t->given[2]) { t->s[2] = t->given[2] = dim; }
  t->span = span_of(t->n, t->s, dim);
}

static size_t off(const tensor *t, size_t a, size_t b, size_t c, size_t x) {
  return a * t->s[0] + b * t->s[1] + c * t->s[2] + x;
}

static void *xmalloc(size_t bytes) {
  void *p = malloc(bytes ? bytes : 1);
  if (!p) { perror("malloc"); exit(2); }
  return p;
}

/* A stored tensor of n elements of es bytes, every element NaN (the gaps stay so). */
static void *alloc_nan(smx_attn_dtype dt, size_t n, int es) {
  void *p = xmalloc(n * (size_t)es);
  for (size_t i = 0; i < n; i++) tu_attn_put(dt, p, i, NAN);
  return p;
}

static float special_value(tu_rng *r) {
  int k = (int)tu_below(r, 3);
  return k == 0 ? NAN : k == 1 ? INFINITY : -INFINITY;
}

/* The descriptor and everything the case needs, from its seed. */
static void make_case(uint64_t seed, gen *g) {
  tu_rng r = { seed };
  memset(g, 0, sizeof *g);
  smx_attention_desc *d = &g->c.d;
  /* kind: the softmax most often, every other kind regularly */
  static const int kinds[] = { 0, 0, 0, 0, 0, 0, 1, 1, 2, 2, 3, 4, 5, 6, 6 };
  int kind = kinds[tu_below(&r, sizeof kinds / sizeof kinds[0])];
  d->kind = (smx_attn_kind)kind;
  int score = kind <= SMX_ATTN_SOFTPICK, lin = kind >= SMX_ATTN_LINEAR && kind <= SMX_ATTN_MALA, scr = kind == SMX_ATTN_SCREEN;
  d->dtype = (smx_attn_dtype)(tu_chance(&r, 0.5) ? SMX_ATTN_F32 : tu_chance(&r, 0.5) ? SMX_ATTN_F16 : SMX_ATTN_BF16);
  g->es = d->dtype == SMX_ATTN_F32 ? 4 : 2;

  /* shape */
  static const size_t bs[] = { 1, 1, 1, 2, 3 }, gs[] = { 1, 1, 2, 3, 4, 5, 8 };
  d->batch = tu_chance(&r, 0.02) ? 0 : bs[tu_below(&r, 5)];
  d->heads_kv = tu_chance(&r, 0.02) ? 0 : range_in(&r, 1, 3);
  d->heads_q = tu_chance(&r, 0.02) ? 0 : d->heads_kv * gs[tu_below(&r, 7)];   /* (Hq = 0 with Hkv > 0: nothing to do) */
  double u = tu_uniform(&r);
  d->len_q = u < 0.3 ? 1 : u < 0.45 ? range_in(&r, 2, 8) : u < 0.9 ? range_in(&r, 9, 90) : u < 0.95 ? 0 : range_in(&r, 91, 160);
  u = tu_uniform(&r);
  d->len_k = u < 0.04 ? 0 : u < 0.6 ? range_in(&r, 1, 130) : u < 0.9 ? range_in(&r, 131, 700) : range_in(&r, 4096, 4700);
  /* keep the reference's work (rows x keys x dims) bounded */
  while (d->batch * d->heads_q * d->len_q * d->len_k > 150000 && d->len_q > 1) d->len_q = d->len_q / 2;
  while (d->batch * d->heads_q * d->len_q * d->len_k > 150000 && d->len_k > 64) d->len_k = d->len_k / 2;
  static const size_t dims[] = { 1, 2, 3, 7, 8, 16, 24, 31, 32, 40, 64, 72, 80, 128 };
  d->dim_qk = tu_chance(&r, 0.5) ? dims[tu_below(&r, 14)] : range_in(&r, 1, 96);
  d->dim_v = tu_chance(&r, 0.5) ? d->dim_qk : tu_chance(&r, 0.5) ? dims[tu_below(&r, 14)] : range_in(&r, 1, 96);
  while (d->batch * d->heads_q * d->len_q * d->len_k * (d->dim_qk + d->dim_v) > 6000000 && d->dim_qk > 8) d->dim_qk /= 2;
  while (d->batch * d->heads_q * d->len_q * d->len_k * (d->dim_qk + d->dim_v) > 6000000 && d->dim_v > 8) d->dim_v /= 2;

  /* masks */
  if (tu_chance(&r, 0.45)) d->causal = (smx_attn_causal)range_in(&r, 1, 2);
  if (!lin) {
    if (tu_chance(&r, 0.2)) {
      d->window = 1;
      d->window_left = tu_chance(&r, 0.2) ? -1 : (int64_t)range_in(&r, 0, 120);
      d->window_right = tu_chance(&r, 0.4) ? -1 : (int64_t)range_in(&r, 0, 40);
    }
    u = tu_uniform(&r);
    if (u < 0.15) d->mask_kind = SMX_ATTN_MASK_BOOL;
    else if (u < 0.3 && !scr) d->mask_kind = SMX_ATTN_MASK_BIAS;
    if (!scr && tu_chance(&r, 0.15)) d->alibi = 1;
    if (tu_chance(&r, 0.07)) d->radial_frame = range_in(&r, 1, 16);
  }
  /* variants */
  if (score) {
    if (tu_chance(&r, 0.15)) d->softcap = unif_in(&r, 0.5, 50);
    if (tu_chance(&r, 0.15)) d->ssmax_s = unif_in(&r, 0.1, 2);
    if (tu_chance(&r, 0.1) && d->len_q <= d->len_k) d->fox = 1;
    if (tu_chance(&r, 0.12)) { d->qk_norm = 1; if (tu_chance(&r, 0.5)) d->qk_norm_eps = unif_in(&r, 1e-8, 1e-2); }
    if (tu_chance(&r, 0.1)) d->l2_distance = 1;
    if (tu_chance(&r, 0.1)) { d->k_int8 = 1; d->k_int8_jensen = tu_chance(&r, 0.5); }
    if (kind == SMX_ATTN_SOFTMAX) {
      if (tu_chance(&r, 0.15)) d->sinks = 1;
      if (tu_chance(&r, 0.1)) d->blasst_log_threshold = unif_in(&r, -40, -6);
      if (tu_chance(&r, 0.1) && !d->sinks && !d->qk_norm && d->dim_qk >= 2) {
        d->diff_lambda = unif_in(&r, 0.1, 0.9);
        if (d->dim_qk % 2) d->dim_qk++;
      }
    }
    if (kind == SMX_ATTN_SIGMOID) d->sigmoid_bias = unif_in(&r, -10, 2);
    /* NSA: block selection on <q, mean k>; kept apart from QK-norm and L2 distance, where "q" and "k" of the
     * block score are not pinned down by the header */
    if (tu_chance(&r, 0.1) && d->diff_lambda == 0 && !d->qk_norm && !d->l2_distance) d->nsa_topk = range_in(&r, 1, 4);
  }
  if (scr) {
    d->screen_r = tu_chance(&r, 0.2) ? 0 : tu_chance(&r, 0.85) ? unif_in(&r, 0.2, 1) : unif_in(&r, 0.02, 0.2);
    d->screen_window = tu_chance(&r, 0.5) ? 0 : unif_in(&r, 1, (double)d->len_k + 10);
    if (tu_chance(&r, 0.2)) d->screen_eps = tu_chance(&r, 0.5) ? 1e-30 : unif_in(&r, 1e-6, 1e-2);
    d->screen_flags = (uint32_t)tu_below(&r, 4);
    if (tu_chance(&r, 0.1)) d->k_int8 = 1;
  }
  if (!scr && kind != SMX_ATTN_LINEAR && kind != SMX_ATTN_COSFORMER && tu_chance(&r, 0.3))
    d->scale = unif_in(&r, 0.02, 1.5);
  if (tu_chance(&r, 0.15)) { d->gate = 1; if (tu_chance(&r, 0.5)) d->gate_flags = SMX_ATTN_GATE_ELEMENTWISE; }

  /* options the header leaves open, now and then: a refusal is fine, a result must be right */
  if (tu_chance(&r, 0.04)) {
    g->edge = 1;
    switch (tu_below(&r, 6)) {
      case 0: if (score) d->softcap = tu_chance(&r, 0.5) ? 1e300 : 1e-300; break;
      case 1: if (score || kind == SMX_ATTN_MALA) d->scale = tu_chance(&r, 0.5) ? 1e300 : 1e-300; break;
      case 2: if (score) d->ssmax_s = -unif_in(&r, 0.1, 2); break;
      case 3: if (kind == SMX_ATTN_SIGMOID) d->sigmoid_bias = tu_chance(&r, 0.5) ? 1e300 : -1e300; break;
      case 4: if (d->qk_norm) d->qk_norm_eps = 1e300; break;
      default: if (kind == SMX_ATTN_SOFTMAX) d->blasst_log_threshold = -1e300; break;
    }
  }
  d->threads = 1;

  /* layouts */
  layout(&r, &g->tq, d->batch, d->heads_q, d->len_q, d->dim_qk, 0, &g->edge);
  layout(&r, &g->tk, d->batch, d->heads_kv, d->len_k, d->dim_qk, tu_chance(&r, 0.15), &g->edge);
  layout(&r, &g->tv, d->batch, d->heads_kv, d->len_k, d->dim_v, tu_chance(&r, 0.15), &g->edge);
  layout(&r, &g->to, d->batch, d->heads_q, d->len_q, d->dim_v, 0, &g->edge);
  memcpy(d->q_stride, g->tq.given, sizeof d->q_stride);
  memcpy(d->k_stride, g->tk.given, sizeof d->k_stride);
  memcpy(d->v_stride, g->tv.given, sizeof d->v_stride);
  memcpy(d->o_stride, g->to.given, sizeof d->o_stride);

  /* values */
  size_t B = d->batch, Hq = d->heads_q, Hkv = d->heads_kv, Lq = d->len_q, Lk = d->len_k, Dq = d->dim_qk, Dv = d->dim_v;
  size_t nq = B * Hq * Lq * Dq, nk = B * Hkv * Lk * Dq, nv = B * Hkv * Lk * Dv;
  g->big = tu_chance(&r, 0.05);
  double qmul = g->big ? unif_in(&r, 10, 60) : tu_chance(&r, 0.2) ? unif_in(&r, 2, 4) : 1;
  double vmul = tu_chance(&r, 0.1) ? pow(10.0, unif_in(&r, -3, 3)) : 1;
  if (lin && qmul > 2) qmul = 2;   /* elu + 1 of large q: the weights, not the bound, are the subject */
  attn_case *c = &g->c;
  c->q = xmalloc((nq + 1) * sizeof(ld));
  c->k = xmalloc((nk + 1) * sizeof(ld));
  c->v = xmalloc((nv + 1) * sizeof(ld));
  g->q = alloc_nan(d->dtype, g->tq.span, g->es);
  g->v = alloc_nan(d->dtype, g->tv.span, g->es);
  float *kf = xmalloc((nk + 1) * sizeof(float));
  for (size_t i = 0; i < nq; i++) c->q[i] = (ld)(float)(tu_gauss(&r) * qmul);
  for (size_t i = 0; i < nk; i++) kf[i] = (float)tu_gauss(&r);
  for (size_t i = 0; i < nv; i++) c->v[i] = (ld)(float)(tu_gauss(&r) * vmul);
  /* screening: zero rows give 0 (q^ = 0 sees nothing, k^ = 0 and v^ = 0 add nothing) */
  if (scr && tu_chance(&r, 0.5)) {
    for (size_t x = 0; x + Dq <= nq; x += Dq) if (tu_chance(&r, 0.1)) for (size_t y = 0; y < Dq; y++) c->q[x + y] = 0;
    for (size_t x = 0; x + Dq <= nk; x += Dq) if (tu_chance(&r, 0.1)) for (size_t y = 0; y < Dq; y++) kf[x + y] = 0;
  }
  /* special values: NaN and +-inf in Q, K and V (not with NSA, whose block scores assume finite keys) */
  if (!d->nsa_topk && tu_chance(&r, 0.2)) {
    g->special = 1;
    int n = (int)range_in(&r, 1, 3);
    for (int s = 0; s < n; s++) {
      int which = (int)tu_below(&r, 3);
      if (which == 0 && nq) c->q[tu_below(&r, nq)] = special_value(&r);
      if (which == 1 && nk && !d->k_int8) kf[tu_below(&r, nk)] = special_value(&r);
      if (which == 2 && nv) c->v[tu_below(&r, nv)] = special_value(&r);
    }
  }
  /* stored forms; the reference reads the stored values back */
  for (size_t b = 0; b < B; b++)
    for (size_t h = 0; h < Hq; h++)
      for (size_t i = 0; i < Lq; i++)
        for (size_t x = 0; x < Dq; x++) {
          size_t li = ((b * Hq + h) * Lq + i) * Dq + x, o = off(&g->tq, b, h, i, x);
          tu_attn_put(d->dtype, g->q, o, (float)c->q[li]);
          c->q[li] = tu_attn_get(d->dtype, g->q, o);
        }
  /* K and V: with a zero stride, the last write to a shared element wins, and every logical element reads it */
  size_t nblk = (Lk + 63) / 64;
  if (d->k_int8) {
    g->k = xmalloc(g->tk.span ? g->tk.span : 1);
    memset(g->k, 0x7f, g->tk.span ? g->tk.span : 1);
    g->kscales = xmalloc((B * Hkv * nblk + 1) * sizeof(float));
    c->kscale = xmalloc((B * Hkv * nblk + 1) * sizeof(ld));
    for (size_t b = 0; b < B; b++)
      for (size_t gg = 0; gg < Hkv; gg++)
        for (size_t blk = 0; blk < nblk; blk++) {
          size_t j1 = blk * 64 + 64 < Lk ? blk * 64 + 64 : Lk;
          float mx = 0;
          for (size_t j = blk * 64; j < j1; j++)
            for (size_t x = 0; x < Dq; x++) mx = fmaxf(mx, fabsf(kf[((b * Hkv + gg) * Lk + j) * Dq + x]));
          float sc = mx > 0 ? mx / 127 : 1;
          g->kscales[(b * Hkv + gg) * nblk + blk] = sc;
          for (size_t j = blk * 64; j < j1; j++)
            for (size_t x = 0; x < Dq; x++)
              ((int8_t *)g->k)[off(&g->tk, b, gg, j, x)] = (int8_t)lrintf(kf[((b * Hkv + gg) * Lk + j) * Dq + x] / sc);
        }
  } else {
    g->k = alloc_nan(d->dtype, g->tk.span, g->es);
    for (size_t b = 0; b < B; b++)
      for (size_t gg = 0; gg < Hkv; gg++)
        for (size_t j = 0; j < Lk; j++)
          for (size_t x = 0; x < Dq; x++) tu_attn_put(d->dtype, g->k, off(&g->tk, b, gg, j, x), kf[((b * Hkv + gg) * Lk + j) * Dq + x]);
  }
  for (size_t b = 0; b < B; b++)
    for (size_t gg = 0; gg < Hkv; gg++)
      for (size_t j = 0; j < Lk; j++) {
        for (size_t x = 0; x < Dq; x++) {
          size_t o = off(&g->tk, b, gg, j, x), li = ((b * Hkv + gg) * Lk + j) * Dq + x;
          c->k[li] = d->k_int8 ? (ld)((const int8_t *)g->k)[o] * g->kscales[(b * Hkv + gg) * nblk + j / 64]
                               : (ld)tu_attn_get(d->dtype, g->k, o);
        }
        for (size_t x = 0; x < Dv; x++) tu_attn_put(d->dtype, g->v, off(&g->tv, b, gg, j, x), (float)c->v[((b * Hkv + gg) * Lk + j) * Dv + x]);
      }
  for (size_t b = 0; b < B; b++)
    for (size_t gg = 0; gg < Hkv; gg++)
      for (size_t j = 0; j < Lk; j++)
        for (size_t x = 0; x < Dv; x++) c->v[((b * Hkv + gg) * Lk + j) * Dv + x] = tu_attn_get(d->dtype, g->v, off(&g->tv, b, gg, j, x));
  if (d->k_int8)
    for (size_t i = 0; i < B * Hkv * nblk; i++) c->kscale[i] = g->kscales[i];
  free(kf);

  /* the mask tensor: each of (batch, head, query, key) stored whole or broadcast (stride 0) */
  if (d->mask_kind) {
    size_t full[4] = { B, Hq, Lq, Lk }, s = 1;
    for (int a = 3; a >= 0; a--) {
      g->mask_n[a] = full[a] > 1 && tu_chance(&r, a == 3 ? 0.05 : 0.4) ? 1 : full[a];
      if (g->mask_n[a] <= 1) {
        /* one stored entry along this axis: the stride is never used when the extent is 1 */
        d->mask_stride[a] = full[a] <= 1 && tu_chance(&r, 0.5) ? s : 0;
        continue;
      }
      d->mask_stride[a] = s + (a == 2 && tu_chance(&r, 0.3) ? range_in(&r, 1, 3) : 0);   /* padded query rows */
      s = d->mask_stride[a] * g->mask_n[a];
    }
    /* the span: one past the stored element the largest index reaches */
    size_t span = 1;
    for (int a = 0; a < 4; a++) if (g->mask_n[a] > 1) span += (g->mask_n[a] - 1) * d->mask_stride[a];
    g->mask_span = span;
    int isbool = d->mask_kind == SMX_ATTN_MASK_BOOL;
    g->mask = xmalloc(span * (isbool ? 1 : sizeof(float)));
    double keep = unif_in(&r, 0.3, 0.95), ninf = tu_chance(&r, 0.5) ? 0.1 : 0;
    for (size_t e = 0; e < span; e++) {
      if (isbool) ((unsigned char *)g->mask)[e] = (unsigned char)(tu_chance(&r, keep) ? (tu_chance(&r, 0.5) ? 1 : range_in(&r, 2, 255)) : 0);
      else ((float *)g->mask)[e] = tu_chance(&r, ninf) ? -INFINITY : (float)unif_in(&r, -3, 3);
    }
    /* fully masked rows now and then */
    if (tu_chance(&r, 0.3) && B && Hq && Lq && Lk) {
      size_t n0 = g->mask_n[0], n1 = g->mask_n[1], n2 = g->mask_n[2];
      for (size_t q = 0; q < n0 * n1 * n2; q++) {
        if (!tu_chance(&r, 0.25)) continue;
        size_t i2 = q % n2, h2 = q / n2 % n1, b2 = q / n2 / n1;
        size_t base = b2 * d->mask_stride[0] + h2 * d->mask_stride[1] + i2 * d->mask_stride[2];
        for (size_t j = 0; j < g->mask_n[3]; j++) {
          if (isbool) ((unsigned char *)g->mask)[base + j * d->mask_stride[3]] = 0;
          else ((float *)g->mask)[base + j * d->mask_stride[3]] = -INFINITY;
        }
      }
    }
    size_t n = B * Hq * Lq * Lk;
    if (isbool) c->keep = xmalloc(n + 1);
    else c->bias = xmalloc((n + 1) * sizeof(ld));
    for (size_t b = 0; b < B; b++)
      for (size_t h = 0; h < Hq; h++)
        for (size_t i = 0; i < Lq; i++)
          for (size_t j = 0; j < Lk; j++) {
            size_t e = b * d->mask_stride[0] + h * d->mask_stride[1] + i * d->mask_stride[2] + j * d->mask_stride[3];
            size_t li = ((b * Hq + h) * Lq + i) * Lk + j;
            if (isbool) c->keep[li] = ((unsigned char *)g->mask)[e] != 0;
            else c->bias[li] = ((float *)g->mask)[e];
          }
  }
  /* run-time operands, exact sizes */
  if (d->alibi) {
    g->slopes = xmalloc(Hq * sizeof(float));
    c->slopes = xmalloc(Hq * sizeof(ld));
    for (size_t h = 0; h < Hq; h++) c->slopes[h] = g->slopes[h] = exp2f(-(float)(h % 8 + 1)) * (float)unif_in(&r, 0.5, 2);
  }
  if (d->sinks) {
    g->sinks = xmalloc(Hq * sizeof(float));
    c->sinks = xmalloc(Hq * sizeof(ld));
    for (size_t h = 0; h < Hq; h++) c->sinks[h] = g->sinks[h] = (float)unif_in(&r, -2, 4);
  }
  if (d->fox) {
    g->fox = xmalloc((B * Hq * Lk + 1) * sizeof(float));
    c->fox = xmalloc((B * Hq * Lk + 1) * sizeof(ld));
    for (size_t bh = 0; bh < B * Hq; bh++) {
      float acc = 0;
      for (size_t j = 0; j < Lk; j++) {   /* cumulative log-sigmoid of forget-gate logits */
        acc += -log1pf(expf(-(float)unif_in(&r, -1, 6)));
        c->fox[bh * Lk + j] = g->fox[bh * Lk + j] = acc;
      }
    }
  }
  if (d->gate) {
    size_t n = B * Hq * Lq * ((d->gate_flags & SMX_ATTN_GATE_ELEMENTWISE) ? Dv : 1);
    g->gate = xmalloc((n + 1) * sizeof(float));
    c->gate = xmalloc((n + 1) * sizeof(ld));
    for (size_t i = 0; i < n; i++) c->gate[i] = g->gate[i] = (float)(2 * tu_gauss(&r));
  }
  if (d->qk_norm) {
    if (tu_chance(&r, 0.7)) {
      g->qw = xmalloc(Dq * sizeof(float));
      c->qw = xmalloc(Dq * sizeof(ld));
      for (size_t x = 0; x < Dq; x++) c->qw[x] = g->qw[x] = (float)unif_in(&r, 0.5, 1.5);
    }
    if (tu_chance(&r, 0.7)) {
      g->kw = xmalloc(Dq * sizeof(float));
      c->kw = xmalloc(Dq * sizeof(ld));
      for (size_t x = 0; x < Dq; x++) c->kw[x] = g->kw[x] = (float)unif_in(&r, 0.5, 1.5);
    }
  }
  if (scr) {
    if (d->screen_r == 0 || tu_chance(&r, 0.3)) {
      g->sr = xmalloc(Hq * sizeof(float));
      c->sr = xmalloc(Hq * sizeof(ld));
      for (size_t h = 0; h < Hq; h++) c->sr[h] = g->sr[h] = tu_chance(&r, 0.2) ? 1.0f : (float)unif_in(&r, 0.2, 0.95);
    }
    if (tu_chance(&r, 0.3)) {
      g->sw = xmalloc(Hq * sizeof(float));
      c->sw = xmalloc(Hq * sizeof(ld));
      for (size_t h = 0; h < Hq; h++) {
        double w = tu_uniform(&r);
        c->sw[h] = g->sw[h] = w < 0.2 ? 0.0f : w < 0.4 ? INFINITY : (float)unif_in(&r, 1, (double)Lk + 5);
      }
    }
  }
  g->use_lse = tu_chance(&r, 0.8);
  g->ws_given = tu_chance(&r, 0.5);
  g->isa = n_isa ? (int)tu_below(&r, (size_t)n_isa) : 0;
  /* the tile arithmetic, from a stream of its own (the other draws, and so the cases of older seeds, stay):
   * f32 storage sometimes opts in to bf16 products, bf16 storage sometimes asks for f32 */
  tu_rng rm = { seed ^ 0x9e3779b97f4a7c15ull };
  if (d->dtype == SMX_ATTN_F32)
    d->math = tu_chance(&rm, 0.25) ? SMX_ATTN_MATH_BF16 : tu_chance(&rm, 0.1) ? SMX_ATTN_MATH_F32 : SMX_ATTN_MATH_AUTO;
  else
    d->math = tu_chance(&rm, 0.15) ? SMX_ATTN_MATH_F32 : SMX_ATTN_MATH_AUTO;
  /* half of the cases that may take bf16 products run at the top kernel set, which has them where the CPU does */
  if ((d->dtype == SMX_ATTN_BF16 || d->math == SMX_ATTN_MATH_BF16) && n_isa && tu_chance(&rm, 0.5)) g->isa = n_isa - 1;

  snprintf(cur_desc, sizeof cur_desc,
           "%s %s B=%zu Hq=%zu Hkv=%zu Lq=%zu Lk=%zu Dqk=%zu Dv=%zu causal=%d window=%d(%" PRId64 ",%" PRId64 ") mask=%d"
           " alibi=%d radial=%zu softcap=%g ssmax=%g sinks=%d fox=%d gate=%d/%u qknorm=%d(eps %g) blasst=%g diff=%g l2=%d"
           " nsa=%zu int8=%d/%d scale=%g sigbias=%g screen(r %g w %g eps %g flags %u arrays %d/%d)"
           " layouts q=%s k=%s v=%s o=%s lse=%d ws=%d isa=%d special=%d big=%d edge=%d math=%d",
           kind_name(kind), dt_name(d->dtype), B, Hq, Hkv, Lq, Lk, Dq, Dv, (int)d->causal, d->window, d->window_left,
           d->window_right, (int)d->mask_kind, d->alibi, d->radial_frame, d->softcap, d->ssmax_s, d->sinks, d->fox,
           d->gate, d->gate_flags, d->qk_norm, d->qk_norm_eps, d->blasst_log_threshold, d->diff_lambda, d->l2_distance,
           d->nsa_topk, d->k_int8, d->k_int8_jensen, d->scale, d->sigmoid_bias, d->screen_r, d->screen_window,
           d->screen_eps, d->screen_flags, g->sr != NULL, g->sw != NULL, g->tq.layout, g->tk.layout, g->tv.layout,
           g->to.layout, g->use_lse, g->ws_given, g->isa, g->special, g->big, g->edge, (int)d->math);
}

static void free_case(gen *g) {
  attn_case *c = &g->c;
  free(c->q); free(c->k); free(c->v); free(c->keep); free(c->bias); free(c->slopes); free(c->sinks); free(c->fox);
  free(c->gate); free(c->qw); free(c->kw); free(c->kscale); free(c->sr); free(c->sw);
  free(g->q); free(g->k); free(g->v); free(g->mask); free(g->slopes); free(g->sinks); free(g->fox); free(g->gate);
  free(g->qw); free(g->kw); free(g->kscales); free(g->sr); free(g->sw);
}

static smx_attention_args args_of(const gen *g, void *o, float *lse) {
  smx_attention_args a;
  memset(&a, 0, sizeof a);
  a.q = g->q; a.k = g->k; a.v = g->v; a.o = o; a.lse = lse;
  a.mask = g->mask; a.alibi_slopes = g->slopes; a.sinks = g->sinks; a.fox = g->fox; a.gate = g->gate;
  a.q_norm_w = g->qw; a.k_norm_w = g->kw; a.k_scales = g->kscales; a.screen_r = g->sr; a.screen_window = g->sw;
  return a;
}

/* ------------------------------------------------------------ KNOWN */
/* Open library defects, each saying what and why: a matching failing case counts as known, not as a failure.
 * Delete an entry when its fix is merged. */
/* Each entry says which kinds of failure (FK_*) it explains in a case it applies to (0: not this case); a
 * failing case is known when the entries that apply explain every kind of failure it shows. */
typedef struct known {
  const char *what;
  unsigned (*match)(const gen *g);
} known;
#define FK_VALUES (FK_NAN_MISSED | FK_ZERO | FK_BOUND | FK_LSE_POSINF | FK_LSE_NEGINF | FK_NAN_EXTRA)
static const known known_list[] = {
  { NULL, NULL },   /* none open: keep the list non-empty */
};
#define NKNOWN (sizeof known_list / sizeof known_list[0])
static long known_seen[NKNOWN];
static int use_known = 1;

static int known_match(const gen *g) {
  if (!use_known) return -1;
  unsigned covered = 0;
  int first = -1;
  for (size_t i = 0; i < NKNOWN; i++) {
    unsigned m = known_list[i].match ? known_list[i].match(g) : 0;
    if (m & cur_fk) {
      covered |= m;
      if (first < 0) first = (int)i;
    }
  }
  return first >= 0 && (cur_fk & ~covered) == 0 ? first : -1;
}

/* ------------------------------------------------------------ checks */
static double dt_unit(smx_attn_dtype t) { return t == SMX_ATTN_F16 ? 0x1p-11 : t == SMX_ATTN_BF16 ? 0x1p-8 : 0; }
static double dt_max(smx_attn_dtype t) { return t == SMX_ATTN_F16 ? 65504.0 : t == SMX_ATTN_BF16 ? 0x1.fep127 : FLT_MAX; }
static double dt_half_sub(smx_attn_dtype t) { return t == SMX_ATTN_F16 ? 0x1p-25 : t == SMX_ATTN_BF16 ? 0x1p-134 : 0; }

/* Runs the plan at one thread count into o (the stored O, gaps pre-filled) and lse; returns the status. */
static smx_status run_at(gen *g, int threads, void *o, float *lse, smx_attention_stats *st) {
  smx_attention_desc d = g->c.d;
  d.threads = threads;
  smx_attention_plan *p = (smx_attention_plan *)(uintptr_t)1;   /* must be overwritten */
  smx_status s = smx_attention_plan_create(&d, &p);
  if (s != SMX_OK) {
    if (p != NULL) fail("plan_create returned %d without setting the plan to NULL", (int)s);
    return s;
  }
  smx_attention_args a = args_of(g, o, lse);
  size_t ws = 0;
  void *w = NULL;
  if (smx_attention_plan_workspace_size(p, &ws) != SMX_OK) fail("workspace_size failed");
  if (g->ws_given) w = xmalloc(ws);
  s = smx_attention_run(p, &a, w, ws, st);
  free(w);
  smx_attention_plan_destroy(p);
  return s;
}

#define O_FILL 0xa5
static long n_cases, n_fail, n_known, n_refused, n_bad, n_special, n_edge_ok, n_bf16;

/* Whether a run of d under the kernel set in use has bf16 tile products (smx_attention_plan_math). */
static int bf16_math(const smx_attention_desc *d) {
  smx_attention_plan *p;
  smx_attn_math m = SMX_ATTN_MATH_F32;
  if (smx_attention_plan_create(d, &p) != SMX_OK) return 0;
  smx_attention_plan_math(p, &m);
  smx_attention_plan_destroy(p);
  return m == SMX_ATTN_MATH_BF16;
}

/* The inputs as bf16 products see them (smx_attention.h, Accuracy): f32 storage rounded to bf16 (nearest
 * even), and subnormals 0, as vdpbf16ps reads them. */
static ld *as_bf16(const ld *x, size_t n) {
  ld *y = xmalloc((n + 1) * sizeof *y);
  for (size_t i = 0; i < n; i++) {
    float f = smx_bf16_to_f32(smx_f32_to_bf16((float)x[i]));
    y[i] = fabsf(f) < FLT_MIN ? (ld)copysignf(0.0f, f) : (ld)f;
  }
  return y;
}

static void check_results(gen *g, const unsigned char *ob, const float *lse, const smx_attention_stats *st) {
  const smx_attention_desc *d = &g->c.d;
  size_t B = d->batch, Hq = d->heads_q, Lq = d->len_q, Dv = d->dim_v, rows = B * Hq * Lq;
  attn_expect e;
  e.o = xmalloc((rows * Dv + 1) * sizeof(ld));
  e.lse = xmalloc((rows + 1) * sizeof(ld));
  e.o_cls = xmalloc(rows * Dv + 1);
  e.l_cls = xmalloc(rows + 1);
  e.o_extra = xmalloc((rows + 1) * sizeof(ld));
  e.l_extra = xmalloc((rows + 1) * sizeof(ld));
  /* bf16 tile products: the reference of the inputs they read, and the rounding of P added below */
  int bfm = bf16_math(d);
  n_bf16 += bfm;
  attn_case cb = g->c;
  if (bfm) {
    cb.q = as_bf16(g->c.q, B * Hq * Lq * d->dim_qk);
    cb.k = as_bf16(g->c.k, B * d->heads_kv * d->len_k * d->dim_qk);
    cb.v = as_bf16(g->c.v, B * d->heads_kv * d->len_k * Dv);
  }
  attn_reference(&cb, &e);
  if (bfm) { free(cb.q); free(cb.k); free(cb.v); }
  g->min_rowmax = e.min_rowmax;
  g->max_rowmax = e.max_rowmax;
  g->min_score = e.min_score;
  g->min_lse = INFINITY;
  for (size_t i = 0; i < rows; i++) if (isfinite(e.lse[i]) && e.lse[i] < g->min_lse) g->min_lse = e.lse[i];
  ld mx = 0, vmax = 0;
  for (size_t i = 0; i < rows * Dv; i++)
    if (e.o_cls[i] == EXP_BOUND && isfinite(e.o[i]) && fabsl(e.o[i]) > mx) mx = fabsl(e.o[i]);
  for (size_t i = 0; i < d->batch * d->heads_kv * d->len_k * Dv; i++)
    if (isfinite(g->c.v[i]) && fabsl(g->c.v[i]) > vmax) vmax = fabsl(g->c.v[i]);
  /* the header's bound: 1e-5 max|ref| over the tensor (f16 / bf16: plus one rounding of each output) */
  double rel = 1e-5;
  /* BLASST: each dropped tile loses under 64 e^{threshold} of the row's largest weight */
  ld blasst = 0;
  if (d->blasst_log_threshold < 0 && d->kind == SMX_ATTN_SOFTMAX) {
    ld tiles = (ld)((d->len_k + 63) / 64);
    blasst = tiles * 64 * expl((ld)d->blasst_log_threshold);
  }
  ld tol_abs = (ld)rel * mx + 2 * blasst * vmax * (d->gate ? 1 : 1);
  long bad = 0, bad_lse = 0, gap = 0;
  size_t first_bad = (size_t)-1;
  ld worst = 0;
  for (size_t b = 0; b < B; b++)
    for (size_t h = 0; h < Hq; h++)
      for (size_t i = 0; i < Lq; i++) {
        size_t row = (b * Hq + h) * Lq + i;
        for (size_t x = 0; x < Dv; x++) {
          size_t li = row * Dv + x;
          float y = tu_attn_get(d->dtype, ob, off(&g->to, b, h, i, x));
          ld ref = e.o[li];
          int ok = 1;
          switch (e.o_cls[li]) {
            case EXP_NAN: ok = y != y; break;
            case EXP_NONFINITE: ok = !isfinite(y); break;
            case EXP_ZERO: ok = y == 0; break;
            case EXP_ANY: ok = 1; break;
            default: {
              ld ta = tol_abs + e.o_extra[row];
              if (bfm) {   /* P rounded to bf16: 2^-8 of sum_j w_ij |v_j| (sigmoid: weights sum to e^lse) */
                ld wsum = d->kind == SMX_ATTN_SIGMOID && isfinite(e.lse[row]) ? expl(e.lse[row]) : 1;
                ta += 0x1p-8L * vmax * wsum * (1 + fabsl((ld)d->diff_lambda)) + (ld)d->len_k * 0x1p-126L;
              }
              ld tol = ta + (ld)dt_unit(d->dtype) * (fabsl(ref) + ta) + (ld)dt_half_sub(d->dtype);
              ld err = fabsl((ld)y - ref);
              ok = err <= tol;   /* NaN fails */
              /* beyond the storage type's range (f16: 65504), the rounding of the result is the infinity */
              if (!ok && isinf(y) && (y > 0) == (ref > 0) && fabsl(ref) + tol >= (ld)dt_max(d->dtype)) ok = 1;
              if (tol > 0 && err / tol > worst) worst = err / tol;
            }
          }
          if (!ok) {
            unsigned c0 = e.o_cls[li];
            cur_fk |= c0 == EXP_NAN || c0 == EXP_NONFINITE ? FK_NAN_MISSED : c0 == EXP_ZERO ? FK_ZERO : y != y ? FK_NAN_EXTRA : FK_BOUND;
            if (bad < (verbose ? 30 : 3))
              fail("O[b=%zu h=%zu i=%zu x=%zu] = %.9g, want %s %.12Lg (bound %.3Lg, max|ref| %.4Lg)", b, h, i, x, (double)y,
                   e.o_cls[li] == EXP_NAN ? "NaN" : e.o_cls[li] == EXP_NONFINITE ? "non-finite" : e.o_cls[li] == EXP_ZERO ? "exactly 0" : "about",
                   ref, tol_abs, mx);
            if (first_bad == (size_t)-1) first_bad = row;
            bad++;
          }
        }
        if (lse) {
          ld ref = e.lse[row];
          float y = lse[row];
          int ok = 1;
          switch (e.l_cls[row]) {
            case EXP_NAN: ok = y != y; break;
            case EXP_NONFINITE: ok = !isfinite(y); break;
            case EXP_ZERO: ok = y == -INFINITY; break;
            case EXP_ANY: ok = 1; break;
            default: {
              /* lse: not in the header's bound; the unit test's 1e-5 max(1, |lse|) (1e-3 for f16 / bf16, whose
               * stored inputs are the reference's too, but whose rows are summed from rounded scores) */
              ld tol = (d->dtype == SMX_ATTN_F32 ? 1e-5L : 1e-3L) * fmaxl(1, fabsl(ref)) + blasst * 2 + e.l_extra[row];
              ok = fabsl((ld)y - ref) <= tol;
              /* screening: when keys within f32's rounding of the Trim edge make up the row's whole sum
               * (their share of lse's bound, l_extra, is 1 or more: the sum is uncertain by all of itself),
               * f32 may keep none of them, and the row reads as seeing no key: lse -inf (O 0, in bound) */
              if (!ok && y == -INFINITY && d->kind == SMX_ATTN_SCREEN && e.l_extra[row] >= 1) ok = 1;
            }
          }
          if (!ok) {
            unsigned c0 = e.l_cls[row];
            cur_fk |= c0 == EXP_NAN || c0 == EXP_NONFINITE ? FK_NAN_MISSED : c0 == EXP_ZERO ? FK_ZERO
                    : y == INFINITY ? FK_LSE_POSINF : y == -INFINITY ? FK_LSE_NEGINF : y != y ? FK_NAN_EXTRA : FK_BOUND;
            if (bad_lse < 3)
              fail("lse[b=%zu h=%zu i=%zu] = %.9g, want %s %.12Lg (conditioning adds %.3Lg)", b, h, i, (double)y,
                   e.l_cls[row] == EXP_NAN ? "NaN" : e.l_cls[row] == EXP_NONFINITE ? "non-finite" : e.l_cls[row] == EXP_ZERO ? "-inf" : "about", ref,
                   e.l_extra[row]);
            bad_lse++;
          }
        }
      }
  /* O's gaps (padding between rows, heads, batches) must be as they were */
  if (g->to.span) {
    unsigned char *mark = calloc(g->to.span, 1);
    if (!mark) { perror("calloc"); exit(2); }
    for (size_t b = 0; b < B; b++)
      for (size_t h = 0; h < Hq; h++)
        for (size_t i = 0; i < Lq; i++)
          for (size_t x = 0; x < Dv; x++) mark[off(&g->to, b, h, i, x)] = 1;
    for (size_t i = 0; i < g->to.span; i++)
      if (!mark[i])
        for (int k = 0; k < g->es; k++) gap += ob[i * (size_t)g->es + (size_t)k] != O_FILL;
    free(mark);
  }
  if (bad || bad_lse) cur_fk |= 0;   /* set above */
  if (bad || bad_lse) fail("%ld O and %ld lse values wrong, worst in-bound error %.3Lg of the bound", bad, bad_lse, worst);
  if (gap) fail("%ld bytes of O's gaps written", gap);
  if (st && st->row_tiles_skipped > st->row_tiles) fail("stats: %llu of %llu row tiles skipped",
                                                        (unsigned long long)st->row_tiles_skipped, (unsigned long long)st->row_tiles);
  if (verbose) printf("  worst %.3Lg of the bound, max|ref| %.4Lg\n", worst, mx);
  free(e.o); free(e.lse); free(e.o_cls); free(e.l_cls); free(e.o_extra); free(e.l_extra);
}

/* Bad arguments: a descriptor the header refuses (plan_create: SMX_E_INVALID_ARG, plan NULL), or a run
 * without an operand it needs (smx_attention_run: SMX_E_INVALID_ARG, O and lse untouched). */
static void bad_case(gen *g, tu_rng *r) {
  smx_attention_desc d = g->c.d;
  const char *what = "";
  int at_run = 0;
  switch (tu_below(r, 16)) {
    case 0: d.heads_kv = 2; d.heads_q = 2 * tu_below(r, 4) + 1; what = "Hq not a multiple of Hkv"; break;
    case 1: d.dim_qk = 0; what = "Dqk 0"; break;
    case 2: d.dim_v = 0; what = "Dv 0"; break;
    case 3: d.scale = tu_below(r, 2) ? NAN : -INFINITY; what = "non-finite scale"; break;
    case 4: d.softcap = tu_below(r, 2) ? -1.0 : NAN; what = "bad softcap"; break;
    case 5: d.threads = -1 - (int)tu_below(r, 5); what = "negative threads"; break;
    case 6: d.blasst_log_threshold = 0.5; what = "BLASST threshold > 0"; break;
    case 7: d.window = 1; d.window_left = -2 - (int64_t)tu_below(r, 100); what = "window_left < -1"; break;
    case 8: d.kind = (smx_attn_kind)(7 + tu_below(r, 100)); what = "unknown kind"; break;
    case 9: d.mask_kind = (smx_attn_mask_kind)(3 + tu_below(r, 5)); what = "unknown mask kind"; break;
    case 10:
      if (tu_below(r, 2)) { d.dtype = (smx_attn_dtype)(3 + tu_below(r, 5)); what = "unknown dtype"; break; }
      if (tu_below(r, 2)) { d.math = (smx_attn_math)(3 + tu_below(r, 5)); what = "unknown math"; break; }
      d.dtype = SMX_ATTN_F16;
      d.math = SMX_ATTN_MATH_BF16;
      what = "bf16 math on f16 storage";
      break;
    case 11:
      d.q_stride[0] = 1;
      d.q_stride[1] = 1;
      d.q_stride[2] = d.dim_qk > 1 ? d.dim_qk - 1 : 0;
      if (d.len_q > 1 && d.dim_qk > 1) what = "Q row stride below Dqk";
      break;
    case 12: d.screen_r = tu_below(r, 2) ? 1.5 : -0.25; what = "screen_r outside [0, 1]"; break;
    case 13: d.gate_flags = 2u << tu_below(r, 8); what = "unknown gate flag"; break;
    case 14:
      if (d.kind == SMX_ATTN_SOFTMAX) {
        d.kind = SMX_ATTN_SIGMOID;
        d.sinks = 1;
        what = "sigmoid with sinks";
      } else if (d.kind == SMX_ATTN_LINEAR || d.kind == SMX_ATTN_MALA) {
        d.window = 1;
        d.window_left = 3;
        what = "linear kind with a window";
      }
      break;
    default: at_run = 1; break;
  }
  if (at_run) {
    smx_attention_plan *p = NULL;
    if (smx_attention_plan_create(&d, &p) != SMX_OK) return;   /* an edge option the plan refuses */
    size_t rows = d.batch * d.heads_q * d.len_q;
    size_t obytes = g->to.span * (size_t)g->es;
    unsigned char *o = xmalloc(obytes);
    float *lse = xmalloc((rows + 1) * sizeof(float));
    memset(o, O_FILL, obytes);
    memset(lse, O_FILL, (rows + 1) * sizeof(float));
    smx_attention_args a = args_of(g, o, lse);
    int k = (int)tu_below(r, 6);
    int needs = d.batch && d.heads_q && d.len_q;   /* no work: any operand may be absent */
    switch (k) {
      case 0: a.q = NULL; what = "NULL Q"; break;
      case 1: a.o = NULL; what = "NULL O"; break;
      case 2: if (d.len_k) { a.k = NULL; what = "NULL K"; } else needs = 0; break;
      case 3:
        if (d.mask_kind) { a.mask = NULL; what = "NULL mask"; }
        else if (d.sinks) { a.sinks = NULL; what = "NULL sinks"; }
        else if (d.gate) { a.gate = NULL; what = "NULL gate"; }
        else needs = 0;
        break;
      case 4:
        if (d.alibi) { a.alibi_slopes = NULL; what = "NULL slopes"; }
        else if (d.fox) { a.fox = NULL; what = "NULL fox"; }
        else if (d.k_int8) { a.k_scales = NULL; what = "NULL k_scales"; }
        else needs = 0;
        break;
      default: what = "workspace too small"; break;
    }
    size_t ws = 0;
    smx_attention_plan_workspace_size(p, &ws);
    smx_status s;
    if (k == 5) {
      void *w = xmalloc(ws);
      s = smx_attention_run(p, &a, w, ws - 1, NULL);
      free(w);
      if (needs && s != SMX_E_WORKSPACE_TOO_SMALL) fail("%s: status %d, want SMX_E_WORKSPACE_TOO_SMALL", what, (int)s);
    } else {
      s = smx_attention_run(p, &a, NULL, 0, NULL);
      if (needs && s != SMX_E_INVALID_ARG) fail("%s: status %d, want SMX_E_INVALID_ARG", what, (int)s);
    }
    if (needs) {
      size_t changed = 0;
      for (size_t i = 0; i < obytes; i++) changed += o[i] != O_FILL;
      for (size_t i = 0; i < rows * sizeof(float); i++) changed += ((unsigned char *)lse)[i] != O_FILL;
      if (changed) fail("%s: %zu bytes of O / lse written by a refused run", what, changed);
    }
    smx_attention_plan_destroy(p);
    free(o);
    free(lse);
    n_bad++;
    return;
  }
  if (!*what) return;
  smx_attention_plan *p = (smx_attention_plan *)(uintptr_t)1;
  smx_status s = smx_attention_plan_create(&d, &p);
  if (s != SMX_E_INVALID_ARG || p != NULL) fail("%s: plan_create status %d (plan %s), want SMX_E_INVALID_ARG", what, (int)s, p ? "set" : "NULL");
  if (s == SMX_OK && p) smx_attention_plan_destroy(p);
  n_bad++;
}


/* ------------------------------------------------------------ backward */
static long n_bwd, n_bwd_pick, n_bwd_qkn, n_bwd_diff;

/* One gradient tensor against the reference: |g - ref| <= eps M + u |ref| (the stored rounding). */
static void bwd_cmp(const char *what, smx_attn_dtype dt, const void *got, int f32out, const ld *ref, const ld *mag,
                    size_t n, double eps) {
  double u = f32out ? 0.0 : dt_unit(dt), sub = f32out ? 0.0 : dt_half_sub(dt);
  for (size_t i = 0; i < n; i++) {
    ld y = f32out ? (ld)((const float *)got)[i] : (ld)tu_attn_get(dt, got, i);
    /* the stored gradient's rounding: relative, or half the smallest subnormal of a 16-bit type */
    ld tol = (ld)eps * mag[i] + (ld)u * fabsl(ref[i]) + (ld)sub + 1e-30L;
    if (!(fabsl(y - ref[i]) <= tol)) {
      cur_fk |= y != y ? FK_NAN_EXTRA : FK_BOUND;
      fail("backward %s[%zu] = %.9Lg, reference %.9Lg (M %.3Lg, bound %.3Lg)", what, i, y, ref[i], mag[i], tol);
      return;
    }
  }
}

/* The backward pass (smx_attention_backward.h) of a case whose forward passed, for the descriptors it
 * supports, finite inputs and ordinary logits: a random dO in O's layout, the gradients against the
 * long-double reference within the header's bound, and 1, 2 and 7 threads bitwise equal. */
static void check_backward(gen *g, const unsigned char *ob, const float *lse, uint64_t seed) {
  const smx_attention_desc *d = &g->c.d;
  if (!lse || g->special || g->big || g->edge || !attn_bwd_case_ok(d) || bf16_math(d)) return;
  size_t B = d->batch, Hq = d->heads_q, Hkv = d->heads_kv, Lq = d->len_q, Lk = d->len_k, D = d->dim_qk, Dv = d->dim_v;
  size_t rows = B * Hq * Lq, nq = rows * D, nk = B * Hkv * Lk * D, nv = B * Hkv * Lk * Dv, nm = rows * Lk;
  size_t nf = B * Hq * Lk, ng = rows * ((d->gate_flags & SMX_ATTN_GATE_ELEMENTWISE) ? Dv : 1);
  if (nm > ((size_t)1 << 22)) return;   /* dbias is Lq x Lk per head: keep the soak's memory small */
  tu_rng r = { seed ^ 0xb4c4u };
  smx_attn_dtype dt = d->dtype;
  size_t es = (size_t)g->es;
  unsigned char *dob = xmalloc(g->to.span * es + 1);
  ld *dol = xmalloc((rows * Dv + 1) * sizeof(ld));
  for (size_t b = 0; b < B; b++)
    for (size_t h = 0; h < Hq; h++)
      for (size_t i = 0; i < Lq; i++)
        for (size_t x = 0; x < Dv; x++) {
          size_t at = off(&g->to, b, h, i, x);
          tu_attn_put(dt, dob, at, (float)tu_gauss(&r));
          dol[((b * Hq + h) * Lq + i) * Dv + x] = tu_attn_get(dt, dob, at);
        }
  size_t sz[9] = { nq, nk, nv, nm, Hq, nf, ng, D, D };
  void *got[3][9];
  for (int t = 0; t < 3; t++)
    for (int w = 0; w < 9; w++) got[t][w] = xmalloc((sz[w] + 1) * (w < 3 ? es : sizeof(float)));
  static const int th[3] = { 1, 2, 7 };
  for (int t = 0; t < 3; t++) {
    smx_attention_desc dd = *d;
    dd.threads = th[t];
    smx_attention_plan *p;
    if (smx_attention_plan_create(&dd, &p) != SMX_OK) {
      cur_fk |= FK_OTHER;
      fail("backward: plan_create refused a descriptor the forward took");
      goto out;
    }
    smx_attention_args a = args_of(g, (void *)ob, (float *)lse);
    smx_attention_grads gr = { got[t][0], got[t][1], got[t][2], d->mask_kind == SMX_ATTN_MASK_BIAS ? got[t][3] : NULL,
                               d->sinks ? got[t][4] : NULL, d->fox ? got[t][5] : NULL, d->gate ? got[t][6] : NULL };
    /* QK-norm: with the RMSNorm weights' gradients (at weights of 1 when the case has none) */
    smx_status s = d->qk_norm ? smx_attention_backward_qk_norm(p, &a, dob, &gr, got[t][7], got[t][8], NULL, 0)
                              : smx_attention_backward(p, &a, dob, &gr, NULL, 0);
    smx_attention_plan_destroy(p);
    if (s != SMX_OK) {
      cur_fk |= FK_OTHER;
      fail("backward threads=%d: status %d (%s)", th[t], (int)s, smx_status_string(s));
      goto out;
    }
    if (t)
      for (int w = 0; w < 9; w++)
        if (memcmp(got[t][w], got[0][w], sz[w] * (w < 3 ? es : sizeof(float))) != 0 &&
            (w < 3 || (w == 3 && d->mask_kind == SMX_ATTN_MASK_BIAS) || (w == 4 && d->sinks) || (w == 5 && d->fox) ||
             (w == 6 && d->gate) || (w >= 7 && d->qk_norm))) {
          cur_fk |= FK_OTHER;
          fail("backward threads=%d: gradient %d differs bitwise from 1 thread", th[t], w);
        }
  }
  {
    n_bwd++;
    ld *buf[18];
    size_t bs[18] = { nq, nq, nk, nk, nv, nv, nm, nm, Hq, Hq, nf, nf, rows * Dv, rows * Dv, D, D, D, D };
    for (int i = 0; i < 18; i++) buf[i] = xmalloc((bs[i] + 1) * sizeof(ld));
    attn_grad_ref gr = { buf[0], buf[1], buf[2], buf[3], buf[4], buf[5],
                         d->mask_kind == SMX_ATTN_MASK_BIAS ? buf[6] : NULL, buf[7], buf[8], buf[9], buf[10], buf[11],
                         buf[12], buf[13], xmalloc(rows + 1), xmalloc((rows + 1) * sizeof(ld)),
                         d->qk_norm ? buf[14] : NULL, buf[15], d->qk_norm ? buf[16] : NULL, buf[17] };
    attn_reference_backward(&g->c, dol, &gr);
    size_t L = Lq > Lk ? Lq : Lk;
    double eps = 0x1p-16 + 0x1p-23 * (double)L / 8.0 + dt_unit(dt);   /* smx_attention_backward.h */
    bwd_cmp("dq", dt, got[0][0], 0, gr.dq, gr.mq, nq, eps);
    bwd_cmp("dk", dt, got[0][1], 0, gr.dk, gr.mk, nk, eps);
    bwd_cmp("dv", dt, got[0][2], 0, gr.dv, gr.mv, nv, eps);
    if (d->mask_kind == SMX_ATTN_MASK_BIAS) bwd_cmp("dbias", dt, got[0][3], 1, gr.dbias, gr.mbias, nm, eps);
    if (d->sinks) bwd_cmp("dsinks", dt, got[0][4], 1, gr.dsinks, gr.msinks, Hq, eps);
    if (d->fox) bwd_cmp("dfox", dt, got[0][5], 1, gr.dfox, gr.mfox, nf, eps);
    if (d->gate) bwd_cmp("dgate", dt, got[0][6], 1, gr.dgate, gr.mgate, ng, eps);
    if (d->qk_norm) bwd_cmp("dq_norm_w", dt, got[0][7], 1, gr.dqw, gr.mqw, D, eps);
    if (d->qk_norm) bwd_cmp("dk_norm_w", dt, got[0][8], 1, gr.dkw, gr.mkw, D, eps);
    n_bwd_qkn += d->qk_norm != 0;
    n_bwd_pick += d->kind == SMX_ATTN_SOFTPICK;
    n_bwd_diff += d->diff_lambda != 0;
    for (int i = 0; i < 18; i++) free(buf[i]);
    free(gr.rowz);
    free(gr.zmax);
  }
out:
  for (int t = 0; t < 3; t++)
    for (int w = 0; w < 9; w++) free(got[t][w]);
  free(dob);
  free(dol);
}

static void run_case(uint64_t seed) {
  gen g;
  cur_seed = seed;
  cur_failed = 0;
  cur_fk = 0;
  make_case(seed, &g);
  smx_set_max_isa(isa_levels[g.isa]);
  if (verbose) printf("case 0x%016" PRIx64 ": %s\n", seed, cur_desc);
  tu_rng r = { seed ^ 0x5bd1e995u };
  n_cases++;
  if (g.special) n_special++;
  if (tu_chance(&r, 0.12)) {
    bad_case(&g, &r);
  } else {
    const smx_attention_desc *d = &g.c.d;
    size_t rows = d->batch * d->heads_q * d->len_q, obytes = g.to.span * (size_t)g.es;
    unsigned char *o1 = xmalloc(obytes), *o2 = xmalloc(obytes);
    float *l1 = g.use_lse ? xmalloc(rows * sizeof(float)) : NULL, *l2 = g.use_lse ? xmalloc(rows * sizeof(float)) : NULL;
    static const int th[3] = { 1, 2, 7 };
    smx_attention_stats st1, st2;
    for (int t = 0; t < 3; t++) {
      unsigned char *o = t ? o2 : o1;
      float *l = t ? l2 : l1;
      memset(o, O_FILL, obytes);
      if (l) memset(l, O_FILL, rows * sizeof(float));
      smx_status s = run_at(&g, th[t], o, l, t ? &st2 : &st1);
      if (s != SMX_OK) {
        if (g.edge && s == SMX_E_INVALID_ARG && t == 0) { n_refused++; break; }
        fail("threads=%d: status %d (%s)", th[t], (int)s, smx_status_string(s));
        break;
      }
      if (t == 0) {
        check_results(&g, o1, l1, &st1);
        if (!cur_failed) check_backward(&g, o1, l1, seed);
        if (g.edge) n_edge_ok++;
        continue;
      }
      if (memcmp(o1, o2, obytes) != 0 || (l1 && memcmp(l1, l2, rows * sizeof(float)) != 0))
        fail("threads=%d: O or lse differ bitwise from 1 thread", th[t]);
      if (st1.row_tiles != st2.row_tiles || st1.row_tiles_skipped != st2.row_tiles_skipped || st1.tiles_masked != st2.tiles_masked)
        fail("threads=%d: stats differ from 1 thread", th[t]);
    }
    free(o1); free(o2); free(l1); free(l2);
  }
  if (cur_failed) {
    int k = known_match(&g);
    if (k >= 0) {
      known_seen[k]++;
      n_known++;
      fprintf(stderr, "  (known: %s)\n", known_list[k].what);
    } else {
      n_fail++;
      fprintf(stderr, "  failure kinds 0x%x; replay: attn_soak --case 0x%016" PRIx64 "\n", cur_fk, seed);
    }
  }
  free_case(&g);
}

int main(int argc, char **argv) {
  tu_soak_args a = TU_SOAK_ARGS_INIT;
  for (int i = 1; i < argc; i++) {
    if (tu_soak_arg(&a, argc, argv, &i)) continue;
    if (!strcmp(argv[i], "--verbose")) verbose = 1;
    else if (!strcmp(argv[i], "--no-known")) use_known = 0;
    else {
      fprintf(stderr, "usage: attn_soak [--seconds S] [--seed S] [--case 0xSEED] [--verbose] [--no-known]\n");
      return 2;
    }
  }
  tu_soak_defaults(&a);
  isa_init();
  if (a.have_one) {
    verbose = 1;
    run_case(a.one);
  } else {
    printf("attn_soak: seed 0x%016" PRIx64 ", %.0f s, %d kernel sets (replay the run: --seed 0x%016" PRIx64 ")\n", a.seed,
           a.seconds, n_isa, a.seed);
    fflush(stdout);
    uint64_t s;
    for (tu_soak_loop l = tu_soak_loop_start(&a); tu_soak_loop_next(&l, &s);) run_case(s);
  }
  smx_set_max_isa(isa_levels[n_isa ? n_isa - 1 : 0]);
  for (size_t i = 0; i < NKNOWN; i++)
    if (known_list[i].what)
      printf("known: %s: %s\n", known_list[i].what, known_seen[i] ? "seen" : "not seen in this run");
  printf("attn_soak: %ld cases (%ld with special values, %ld bad arguments, %ld edge options accepted and checked,"
         " %ld refused, %ld with bf16 tile products, %ld backward passes checked: %ld softpick, %ld QK-norm,"
         " %ld differential), %ld failed, %ld known\n",
         n_cases, n_special, n_bad, n_edge_ok, n_refused, n_bf16, n_bwd, n_bwd_pick, n_bwd_qkn, n_bwd_diff, n_fail,
         n_known);
  return n_fail ? 1 : 0;
}
