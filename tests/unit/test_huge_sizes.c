/*
 * Every public function that takes a count, a shape or a leading dimension,
 * called with tiny real buffers and counts near SIZE_MAX: a span that cannot
 * exist in the address space must be refused (a non-OK status) before any
 * element is read or written. Size checks written as `a > MAX - b` or as a
 * product wrap around at these values; run under ASan + UBSan, a wrapped check
 * shows up as a read past the buffers. Output buffers hold a sentinel that
 * must come back untouched.
 */
#include "../common/test_util.h"

#define BUF 64
static float X[BUF], Y[BUF], DY[BUF], Z[BUF];
static uint16_t H[BUF], HY[BUF], HZ[BUF];
static double XD[BUF], YD[BUF], OD[BUF], TD[BUF * BUF];
static int64_t IX[BUF], TG[BUF];
static int64_t LB[BUF];
static uint64_t CN[BUF];

static void arm(void) {
  for (int i = 0; i < BUF; i++) {
    X[i] = DY[i] = (float)i;
    Y[i] = Z[i] = 12345.0f;
    H[i] = 0x3c00;
    HY[i] = HZ[i] = 0x7777;
    XD[i] = i;
    YD[i] = OD[i] = 12345.0;
    IX[i] = 777;
    TG[i] = 0;
    LB[i] = 0;
    CN[i] = 777;
  }
  for (int i = 0; i < BUF * BUF; i++) TD[i] = 12345.0;
}

static int untouched(void) {
  for (int i = 0; i < BUF; i++)
    if (Y[i] != 12345.0f || Z[i] != 12345.0f || HY[i] != 0x7777 || HZ[i] != 0x7777 || YD[i] != 12345.0 ||
        OD[i] != 12345.0 || IX[i] != 777 || CN[i] != 777)
      return 0;
  for (int i = 0; i < BUF * BUF; i++)
    if (TD[i] != 12345.0) return 0;
  return 1;
}

/* A call of one function with (rows, cols, ldx, ldy); es is its element size. */
typedef smx_status (*call_fn)(size_t r, size_t c, size_t lx, size_t ly);
typedef struct entry {
  const char *name;
  call_fn f;
  size_t es;
  int single;   /* takes one row of n = cols: only the rows == 1 cases */
  int no_ly;    /* has no second leading dimension (ldy is not passed) */
  size_t row_bytes;   /* bytes per row of its per-row arrays (outputs, targets, labels), 0 if none */
} entry;

#define W(name, expr) \
  static smx_status w_##name(size_t r, size_t c, size_t lx, size_t ly) { (void)r; (void)c; (void)lx; (void)ly; return expr; }

static const smx_score_params P0 = { 0 };
static smx_sample_params SP = { 1.0, 0, 0.0, 0.0, 0, SMX_SAMPLE_MULTINOMIAL, 0 };

/* smx.h */
W(softmax_f32, smx_softmax_f32(X, Y, c, NULL))
W(log_softmax_f32, smx_log_softmax_f32(X, Y, c, NULL))
W(logsumexp_f32, smx_logsumexp_f32(X, Y, c, NULL))
W(softmax_rows_f32, smx_softmax_rows_f32(X, lx, Y, ly, r, c, NULL))
W(log_softmax_rows_f32, smx_log_softmax_rows_f32(X, lx, Y, ly, r, c, NULL))
W(logsumexp_rows_f32, smx_logsumexp_rows_f32(X, lx, Y, r, c, NULL))
W(softmax_f16, smx_softmax_f16(H, HY, c, NULL))
W(log_softmax_f16, smx_log_softmax_f16(H, HY, c, NULL))
W(logsumexp_f16, smx_logsumexp_f16(H, Y, c, NULL))
W(softmax_rows_f16, smx_softmax_rows_f16(H, lx, HY, ly, r, c, NULL))
W(log_softmax_rows_f16, smx_log_softmax_rows_f16(H, lx, HY, ly, r, c, NULL))
W(logsumexp_rows_f16, smx_logsumexp_rows_f16(H, lx, Y, r, c, NULL))
W(softmax_bf16, smx_softmax_bf16(H, HY, c, NULL))
W(log_softmax_bf16, smx_log_softmax_bf16(H, HY, c, NULL))
W(logsumexp_bf16, smx_logsumexp_bf16(H, Y, c, NULL))
W(softmax_rows_bf16, smx_softmax_rows_bf16(H, lx, HY, ly, r, c, NULL))
W(log_softmax_rows_bf16, smx_log_softmax_rows_bf16(H, lx, HY, ly, r, c, NULL))
W(logsumexp_rows_bf16, smx_logsumexp_rows_bf16(H, lx, Y, r, c, NULL))
W(softmax_f64, smx_softmax_f64(XD, YD, c, NULL))
W(log_softmax_f64, smx_log_softmax_f64(XD, YD, c, NULL))
W(logsumexp_f64, smx_logsumexp_f64(XD, YD, c, NULL))
W(softmax_rows_f64, smx_softmax_rows_f64(XD, lx, YD, ly, r, c, NULL))
W(log_softmax_rows_f64, smx_log_softmax_rows_f64(XD, lx, YD, ly, r, c, NULL))
W(logsumexp_rows_f64, smx_logsumexp_rows_f64(XD, lx, YD, r, c, NULL))
/* smx_grad.h */
W(softmax_backward_f32, smx_softmax_backward_f32(X, DY, Y, c, NULL))
W(log_softmax_backward_f32, smx_log_softmax_backward_f32(X, DY, Y, c, NULL))
W(softmax_backward_rows_f32, smx_softmax_backward_rows_f32(X, lx, DY, lx, Y, ly, r, c, NULL))
W(log_softmax_backward_rows_f32, smx_log_softmax_backward_rows_f32(X, lx, DY, lx, Y, ly, r, c, NULL))
W(softmax_backward_rows_f16, smx_softmax_backward_rows_f16(H, lx, H, lx, HY, ly, r, c, NULL))
W(log_softmax_backward_rows_f16, smx_log_softmax_backward_rows_f16(H, lx, H, lx, HY, ly, r, c, NULL))
W(softmax_backward_rows_bf16, smx_softmax_backward_rows_bf16(H, lx, H, lx, HY, ly, r, c, NULL))
W(log_softmax_backward_rows_bf16, smx_log_softmax_backward_rows_bf16(H, lx, H, lx, HY, ly, r, c, NULL))
W(cross_entropy_f32, smx_cross_entropy_f32(X, lx, TG, Z, Y, ly, Z + 32, r, c, NULL))
W(cross_entropy_f16, smx_cross_entropy_f16(H, lx, TG, Z, HY, ly, Z + 32, r, c, NULL))
W(cross_entropy_bf16, smx_cross_entropy_bf16(H, lx, TG, Z, HY, ly, Z + 32, r, c, NULL))
/* smx_topk.h */
W(softmax_topk_f32, smx_softmax_topk_f32(X, Y, IX, c, 1, NULL))
W(softmax_topk_rows_f32, smx_softmax_topk_rows_f32(X, lx, Y, IX, r, c, 1, NULL))
W(log_softmax_topk_f32, smx_log_softmax_topk_f32(X, Y, IX, c, 1, NULL))
W(log_softmax_topk_rows_f32, smx_log_softmax_topk_rows_f32(X, lx, Y, IX, r, c, 1, NULL))
W(topk_f32, smx_topk_f32(X, Y, IX, c, 1, NULL))
W(topk_rows_f32, smx_topk_rows_f32(X, lx, Y, IX, r, c, 1, NULL))
W(softmax_topk_f16, smx_softmax_topk_f16(H, Y, IX, c, 1, NULL))
W(softmax_topk_rows_f16, smx_softmax_topk_rows_f16(H, lx, Y, IX, r, c, 1, NULL))
W(log_softmax_topk_f16, smx_log_softmax_topk_f16(H, Y, IX, c, 1, NULL))
W(log_softmax_topk_rows_f16, smx_log_softmax_topk_rows_f16(H, lx, Y, IX, r, c, 1, NULL))
W(topk_f16, smx_topk_f16(H, Y, IX, c, 1, NULL))
W(topk_rows_f16, smx_topk_rows_f16(H, lx, Y, IX, r, c, 1, NULL))
W(softmax_topk_bf16, smx_softmax_topk_bf16(H, Y, IX, c, 1, NULL))
W(softmax_topk_rows_bf16, smx_softmax_topk_rows_bf16(H, lx, Y, IX, r, c, 1, NULL))
W(log_softmax_topk_bf16, smx_log_softmax_topk_bf16(H, Y, IX, c, 1, NULL))
W(log_softmax_topk_rows_bf16, smx_log_softmax_topk_rows_bf16(H, lx, Y, IX, r, c, 1, NULL))
W(topk_bf16, smx_topk_bf16(H, Y, IX, c, 1, NULL))
W(topk_rows_bf16, smx_topk_rows_bf16(H, lx, Y, IX, r, c, 1, NULL))
W(sample_rows_f32, smx_sample_rows_f32(X, lx, IX, r, c, &SP, 1, 0, NULL))
W(sample_rows_f16, smx_sample_rows_f16(H, lx, IX, r, c, &SP, 1, 0, NULL))
W(sample_rows_bf16, smx_sample_rows_bf16(H, lx, IX, r, c, &SP, 1, 0, NULL))
W(gumbel_softmax_rows_f32, smx_gumbel_softmax_rows_f32(X, lx, Y, ly, r, c, 1.0, 1, 0, NULL))
W(gumbel_softmax_hard_rows_f32, smx_gumbel_softmax_hard_rows_f32(X, lx, Y, ly, Z, ly, r, c, 1.0, 1, 0, NULL))
W(gumbel_softmax_rows_f16, smx_gumbel_softmax_rows_f16(H, lx, HY, ly, r, c, 1.0, 1, 0, NULL))
W(gumbel_softmax_hard_rows_f16, smx_gumbel_softmax_hard_rows_f16(H, lx, HY, ly, HZ, ly, r, c, 1.0, 1, 0, NULL))
W(gumbel_softmax_rows_bf16, smx_gumbel_softmax_rows_bf16(H, lx, HY, ly, r, c, 1.0, 1, 0, NULL))
W(gumbel_softmax_hard_rows_bf16, smx_gumbel_softmax_hard_rows_bf16(H, lx, HY, ly, HZ, ly, r, c, 1.0, 1, 0, NULL))
W(gumbel_softmax_backward_rows_f32, smx_gumbel_softmax_backward_rows_f32(X, lx, DY, lx, Y, ly, r, c, 1.0, NULL))
/* smx_scores.h */
W(scores_rows_f32, smx_scores_rows_f32(X, lx, YD, r, c, SMX_SCORE_MSP, &P0, NULL))
static smx_status w_scores_multi_rows_f32(size_t r, size_t c, size_t lx, size_t ly) {
  (void)ly;
  smx_score_kind k[2] = { SMX_SCORE_MSP, SMX_SCORE_ENERGY };
  double *o[2] = { YD, OD };
  return smx_scores_multi_rows_f32(X, lx, o, r, c, 2, k, NULL, NULL);
}
W(kl_templates_fit_f32, smx_kl_templates_fit_f32(X, lx, TD, (size_t *)(void *)CN, r, c, NULL))
W(kl_templates_accumulate_f32, smx_kl_templates_accumulate_f32(X, lx, TD, CN, r, c, NULL))
W(kl_templates_finish, smx_kl_templates_finish(XD, CN, TD, c))
W(calibration_rows_f32, smx_calibration_rows_f32(X, lx, LB, (smx_calibration *)(void *)OD, NULL, r, c, 15, NULL))
W(temperature_fit_f32, smx_temperature_fit_f32(X, lx, LB, YD, (smx_ts_info *)(void *)OD, r, c, NULL))
static smx_status w_calib_create(size_t r, size_t c, size_t lx, size_t ly) {
  (void)r; (void)lx; (void)ly;
  smx_calib_acc *a = NULL;
  smx_status s = smx_calib_create(&a, c, 15, 0, NULL);
  if (s == SMX_OK) smx_calib_destroy(a);
  return s;
}
static smx_status w_calib_add_rows_f32(size_t r, size_t c, size_t lx, size_t ly) {
  (void)c; (void)ly;
  smx_calib_acc *a = NULL;
  if (smx_calib_create(&a, 4, 15, 0, NULL) != SMX_OK) return SMX_E_INTERNAL;
  smx_status s = smx_calib_add_rows_f32(a, X, lx, LB, r);
  smx_calib_destroy(a);
  return s;
}

#define E(name, es) { #name, w_##name, es, 0, 0, 0 }
#define N(name, es) { #name, w_##name, es, 0, 1, 0 }
#define S(name, es) { #name, w_##name, es, 1, 1, 0 }
#define R(name, es, rb) { #name, w_##name, es, 0, 1, rb }
static const entry table[] = {
  S(softmax_f32, 4), S(log_softmax_f32, 4), S(logsumexp_f32, 4), E(softmax_rows_f32, 4),
  E(log_softmax_rows_f32, 4), R(logsumexp_rows_f32, 4, 4), S(softmax_f16, 2), S(log_softmax_f16, 2),
  S(logsumexp_f16, 2), E(softmax_rows_f16, 2), E(log_softmax_rows_f16, 2), R(logsumexp_rows_f16, 2, 4),
  S(softmax_bf16, 2), S(log_softmax_bf16, 2), S(logsumexp_bf16, 2), E(softmax_rows_bf16, 2),
  E(log_softmax_rows_bf16, 2), R(logsumexp_rows_bf16, 2, 4), S(softmax_f64, 8), S(log_softmax_f64, 8),
  S(logsumexp_f64, 8), E(softmax_rows_f64, 8), E(log_softmax_rows_f64, 8), R(logsumexp_rows_f64, 8, 8),
  S(softmax_backward_f32, 4), S(log_softmax_backward_f32, 4), E(softmax_backward_rows_f32, 4),
  E(log_softmax_backward_rows_f32, 4), E(softmax_backward_rows_f16, 2), E(log_softmax_backward_rows_f16, 2),
  E(softmax_backward_rows_bf16, 2), E(log_softmax_backward_rows_bf16, 2), { "cross_entropy_f32", w_cross_entropy_f32, 4, 0, 0, 8 },
  { "cross_entropy_f16", w_cross_entropy_f16, 2, 0, 0, 8 }, { "cross_entropy_bf16", w_cross_entropy_bf16, 2, 0, 0, 8 }, S(softmax_topk_f32, 4), R(softmax_topk_rows_f32, 4, 8),
  S(log_softmax_topk_f32, 4), R(log_softmax_topk_rows_f32, 4, 8), S(topk_f32, 4), R(topk_rows_f32, 4, 8),
  S(softmax_topk_f16, 2), R(softmax_topk_rows_f16, 2, 8), S(log_softmax_topk_f16, 2),
  R(log_softmax_topk_rows_f16, 2, 8), S(topk_f16, 2), R(topk_rows_f16, 2, 8), S(softmax_topk_bf16, 2),
  R(softmax_topk_rows_bf16, 2, 8), S(log_softmax_topk_bf16, 2), R(log_softmax_topk_rows_bf16, 2, 8),
  S(topk_bf16, 2), R(topk_rows_bf16, 2, 8), R(sample_rows_f32, 4, 8), R(sample_rows_f16, 2, 8), R(sample_rows_bf16, 2, 8),
  E(gumbel_softmax_rows_f32, 4), E(gumbel_softmax_hard_rows_f32, 4), E(gumbel_softmax_rows_f16, 2),
  E(gumbel_softmax_hard_rows_f16, 2), E(gumbel_softmax_rows_bf16, 2), E(gumbel_softmax_hard_rows_bf16, 2),
  E(gumbel_softmax_backward_rows_f32, 4), R(scores_rows_f32, 4, 8), R(scores_multi_rows_f32, 4, 8),
  N(kl_templates_fit_f32, 4), N(kl_templates_accumulate_f32, 4), R(calibration_rows_f32, 4, 4),
  R(temperature_fit_f32, 4, 4), R(calib_add_rows_f32, 4, 4),
};

/* Bytes spanned by rows x cols with leading dimension ld, in 128 bits. */
static unsigned __int128 span_bytes(size_t r, size_t c, size_t ld, size_t es) {
  return ((unsigned __int128)(r - 1) * ld + c) * es;
}

static const size_t huge[] = { SIZE_MAX, SIZE_MAX / 2, SIZE_MAX / 2 + 2, SIZE_MAX / 4 + 1, SIZE_MAX / 16 + 1,
                               SIZE_MAX / 3, (size_t)PTRDIFF_MAX / 4 + 1 };
#define NH (sizeof huge / sizeof huge[0])

static void test_shapes(void) {
  for (size_t e = 0; e < sizeof table / sizeof table[0]; e++) {
    const entry *t = &table[e];
    size_t tried = 0;
    for (size_t h = 0; h < NH; h++) {
      size_t hv = huge[h];
      /* (rows, cols, ldx, ldy): one huge extent at a time, then several */
      size_t cases[][4] = {
        { 1, hv, hv, hv }, { hv, 1, 1, 1 }, { hv, 4, 4, 4 }, { 2, 4, hv, 4 }, { 2, 4, 4, hv }, { 16, 1, hv, hv },
        { hv, hv, hv, hv }, { 3, hv / 2, hv, hv }, { hv / 2 + 2, 2, 2, 2 }, { 2, hv - 1, hv, hv },
      };
      for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        size_t r = cases[k][0], c = cases[k][1], lx = cases[k][2], ly = cases[k][3];
        if (r == 0 || c == 0 || lx < c || ly < c) continue;
        if (t->single && (r != 1 || lx != c || ly != c)) continue;
        /* only shapes that cannot exist: a span (or the rows of the outputs) beyond the address space */
        if (t->no_ly && ly != c) continue;
        if (t->f == w_calib_add_rows_f32 && c != 4) continue;   /* its accumulator has 4 columns */
        unsigned __int128 xs = span_bytes(r, c, lx, t->es), ys = span_bytes(r, c, ly, t->es);
        unsigned __int128 lim = (unsigned __int128)PTRDIFF_MAX;
        if (xs <= lim && ys <= lim && (unsigned __int128)r * t->row_bytes <= lim) continue;
        arm();
        smx_status s = t->f(r, c, lx, ly);
        tried++;
        CHECK(s != SMX_OK, "%s(rows %zu, cols %zu, ldx %zu, ldy %zu) returned SMX_OK", t->name, r, c, lx, ly);
        CHECK(untouched(), "%s(rows %zu, cols %zu, ldx %zu, ldy %zu) wrote to an output", t->name, r, c, lx, ly);
      }
    }
    CHECK(tried > 0, "%s: no case tried", t->name);
  }
  /* sizes of a single extent: K x K templates, accumulator bins */
  for (size_t h = 0; h < NH; h++) {
    if ((unsigned __int128)huge[h] * huge[h] * 8 <= (unsigned __int128)PTRDIFF_MAX) continue;
    arm();
    CHECK(w_kl_templates_finish(1, huge[h], huge[h], huge[h]) != SMX_OK && untouched(), "kl_templates_finish %zu",
          huge[h]);
    CHECK(w_calib_create(1, huge[h], 0, 0) != SMX_OK, "calib_create cols %zu", huge[h]);
  }
}

/* Two counts: the sort buffers of the metrics hold both, 16 bytes per score. */
static void test_metrics(void) {
  const size_t pairs[][2] = {
    { SIZE_MAX / 2, SIZE_MAX / 2 + 2 }, { SIZE_MAX / 2 + 2, SIZE_MAX / 2 }, { 4, SIZE_MAX }, { SIZE_MAX, 4 },
    { SIZE_MAX / 16 + 1, 4 }, { 4, SIZE_MAX / 16 + 1 }, { SIZE_MAX / 32 + 1, SIZE_MAX / 32 + 1 },
    { SIZE_MAX / 16 - 3, 4 }, { SIZE_MAX, SIZE_MAX },
  };
  for (size_t k = 0; k < sizeof pairs / sizeof pairs[0]; k++) {
    size_t a = pairs[k][0], b = pairs[k][1];
    arm();
    smx_ood_metrics m;
    memset(&m, 0x5a, sizeof m);
    smx_ood_metrics m0 = m;
    CHECK(smx_ood_metrics_f64(XD, XD, &m, a, b, 0.95, NULL) != SMX_OK, "ood_metrics_f64(%zu, %zu) returned SMX_OK", a, b);
    CHECK(smx_ood_metrics_f32(X, X, &m, a, b, 0.95, NULL) != SMX_OK, "ood_metrics_f32(%zu, %zu) returned SMX_OK", a, b);
    CHECK(memcmp(&m, &m0, sizeof m) == 0, "ood_metrics(%zu, %zu) wrote its output", a, b);
  }
}

int main(void) {
  test_shapes();
  test_metrics();
  return tu_finish("test_huge_sizes");
}
