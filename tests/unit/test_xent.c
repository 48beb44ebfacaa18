/*
 * Fused cross-entropy (smx_cross_entropy_*): loss and gradient against a
 * long-double reference for every ISA, reduction, target type, label
 * smoothing, z-loss and temperature; the gradient against finite differences
 * of the loss in double; ignore_index and PyTorch's mean; in-place gradient;
 * thread-count independence; the special-value policy; f16 / bf16; bad
 * targets and bad arguments leave every output untouched (guard pages:
 * tests/ops/).
 */
#include "../common/test_isa.h"
#include "math/half_scalar.h"

#define EPS_F 0x1p-23

typedef struct xopt {
  smx_reduction red;
  int64_t ignore;
  double eps, z, t;
} xopt;

/* Long-double loss of one row and (optionally) its gradient, unscaled (s = 1). */
static long double ref_row(const float *x, size_t n, size_t t, const xopt *o, long double *g, long double *lse_out) {
  long double T = o->t == 0.0 ? 1.0L : (long double)o->t;
  long double m = -INFINITY;
  for (size_t j = 0; j < n; j++) if ((long double)x[j] > m) m = x[j];
  long double d = 0.0L, sx = 0.0L;
  for (size_t j = 0; j < n; j++) { d += expl(((long double)x[j] - m) / T); sx += x[j]; }
  long double logd = logl(d), lse = m / T + logd;
  if (lse_out) *lse_out = lse;
  long double l = 0.0L;
  if (o->eps < 1.0) l += (1.0L - (long double)o->eps) * ((m - (long double)x[t]) / T + logd);
  if (o->eps > 0.0) l += (long double)o->eps * ((m - sx / (long double)n) / T + logd);
  if (o->z > 0.0) l += (long double)o->z * lse * lse;
  if (g) {
    long double zf = 1.0L + 2.0L * (long double)o->z * lse;
    for (size_t j = 0; j < n; j++) {
      long double p = expl(((long double)x[j] - m) / T - logd);
      g[j] = (p * zf - (long double)o->eps / (long double)n - (j == t ? 1.0L - (long double)o->eps : 0.0L)) / T;
    }
  }
  return l;
}

/* Checks smx_cross_entropy_f32 on rows x cols logits against the reference. */
static void check_case(const char *what, const float *x, size_t rows, size_t cols, const int64_t *tg, const xopt *xo,
                       int threads) {
  tu_loss_opts o = TU_LOSS_OPTS_INIT;
  o.e.reduction = xo->red;
  o.e.ignore_index = xo->ignore;
  o.e.label_smoothing = xo->eps;
  o.e.z_loss = xo->z;
  o.o.temperature = xo->t;
  o.o.threads = threads;
  size_t nl = xo->red == SMX_REDUCTION_NONE ? rows : 1;
  float *loss = malloc(nl * sizeof(float)), *lse = malloc(rows * sizeof(float));
  float *g = malloc(rows * cols * sizeof(float)), *g2 = malloc(rows * cols * sizeof(float));
  long double *rg = malloc(cols * sizeof(long double));
  smx_status st = smx_cross_entropy_f32(x, cols, tg, loss, g, cols, lse, rows, cols, tu_lo(&o));
  CHECK(st == SMX_OK, "%s: status %d", what, st);
  size_t count = 0;
  for (size_t r = 0; r < rows; r++) count += tg[r] != xo->ignore;
  long double s = xo->red == SMX_REDUCTION_MEAN ? (count ? 1.0L / count : 0.0L) : 1.0L;
  long double total = 0.0L;
  long double T = xo->t == 0.0 ? 1.0L : (long double)xo->t;
  long worst_g = 0, worst_l = 0;
  for (size_t r = 0; r < rows; r++) {
    int64_t t = tg[r];
    int ign = t == xo->ignore;
    long double rlse;
    long double l = ref_row(x + r * cols, cols, ign ? 0 : (size_t)t, xo, rg, &rlse);
    if (!ign) total += l;
    if (fabsl((long double)lse[r] - rlse) > 4 * EPS_F * fmaxl(1.0L, fabsl(rlse))) worst_l++;
    if (xo->red == SMX_REDUCTION_NONE) {
      long double want = ign ? 0.0L : l;
      if (!(fabsl((long double)loss[r] - want) <= 4 * EPS_F * fmaxl(1.0L, fabsl(want)))) {
        worst_l++;
        if (worst_l < 4) fprintf(stderr, "  %s row %zu loss %.9g ref %.9Lg\n", what, r, loss[r], want);
      }
    }
    const float *xr = x + r * cols;
    float mx = -INFINITY;
    for (size_t j = 0; j < cols; j++) mx = xr[j] > mx ? xr[j] : mx;
    long double zf = 1.0L + 2.0L * (long double)xo->z * rlse;
    for (size_t j = 0; j < cols; j++) {
      float gj = g[r * cols + j];
      if (ign) { worst_g += !(gj == 0.0f); continue; }
      long double ref = s * rg[j];
      long double p = expl(((long double)xr[j] - mx) / T - (rlse - mx / T));
      long double q = fabsl(s / T * zf * p), rest = fabsl(ref - s / T * zf * p);
      long double tj = fabsl(((long double)xr[j] - mx) / T);
      /* p_j below FLT_MIN may be flushed to 0: (s/T) |1 + 2 z lse| FLT_MIN absolute */
      long double bound = (q > 0.0L ? (6.0L + tj / 2.0L) * EPS_F * q : 0.0L) + 2.0L * EPS_F * rest +
                          s / T * fabsl(zf) * FLT_MIN;
      if (!(fabsl((long double)gj - ref) <= bound)) {
        worst_g++;
        if (worst_g < 4)
          fprintf(stderr, "  %s row %zu col %zu grad %.9g ref %.9Lg bound %.3Lg\n", what, r, j, gj, ref, bound);
      }
    }
  }
  if (xo->red != SMX_REDUCTION_NONE) {
    long double want = xo->red == SMX_REDUCTION_MEAN ? (count ? total / count : NAN) : total;
    int ok = count || xo->red == SMX_REDUCTION_SUM ? fabsl((long double)loss[0] - want) <= 4 * EPS_F * fmaxl(1.0L, fabsl(want))
                                                   : isnan(loss[0]);
    CHECK(ok, "%s: reduced loss %.9g, ref %.9Lg", what, loss[0], want);
  }
  CHECK(worst_l == 0, "%s: %ld loss / lse values beyond 4 eps", what, worst_l);
  CHECK(worst_g == 0, "%s: %ld gradient elements beyond the bound", what, worst_g);

  /* the same call without a gradient, and in place, and on 1 vs 3 threads: identical bits */
  float *loss2 = malloc(nl * sizeof(float));
  st = smx_cross_entropy_f32(x, cols, tg, loss2, NULL, 0, NULL, rows, cols, tu_lo(&o));
  int same = st == SMX_OK;
  for (size_t i = 0; i < nl; i++) same &= tu_same(loss[i], loss2[i]);
  CHECK(same, "%s: loss without gradient differs", what);
  memcpy(g2, x, rows * cols * sizeof(float));
  o.o.threads = threads == 1 ? 3 : 1;
  st = smx_cross_entropy_f32(g2, cols, tg, loss2, g2, cols, NULL, rows, cols, tu_lo(&o));
  same = st == SMX_OK;
  for (size_t i = 0; i < nl; i++) same &= tu_same(loss[i], loss2[i]);
  for (size_t i = 0; i < rows * cols; i++) same &= tu_same(g[i], g2[i]);
  CHECK(same, "%s: in-place gradient on another thread count differs", what);
  free(loss); free(loss2); free(lse); free(g); free(g2); free(rg);
}

static void fill(tu_rng *rng, float *x, size_t n, int family) {
  for (size_t i = 0; i < n; i++) {
    switch (family) {
      case 0: x[i] = tu_normal(rng) * 3.0f; break;                       /* ordinary logits          */
      case 1: x[i] = tu_uniform_f(rng, -100.0f, 100.0f); break;           /* wide (ggml's test range) */
      case 2: x[i] = 1000.0f + tu_uniform_f(rng, -5.0f, 5.0f); break;     /* huge offset              */
      default: x[i] = tu_uniform(rng) < 0.3 ? -INFINITY : tu_normal(rng); /* masked entries           */
    }
  }
}

static void test_values(void) {
  tu_rng rng = { 11 };
  static const size_t shapes[][2] = { { 1, 1 }, { 3, 2 }, { 5, 17 }, { 7, 33 }, { 4, 300 }, { 9, 1029 }, { 2, 70001 } };
  static const smx_reduction reds[3] = { SMX_REDUCTION_NONE, SMX_REDUCTION_MEAN, SMX_REDUCTION_SUM };
  {
    const int isa = tu_isa_at;
    for (size_t sh = 0; sh < sizeof shapes / sizeof shapes[0]; sh++) {
      size_t rows = shapes[sh][0], cols = shapes[sh][1];
      float *x = malloc(rows * cols * sizeof(float));
      int64_t *t64 = malloc(rows * 8);
      for (int fam = 0; fam < 4; fam++) {
        fill(&rng, x, rows * cols, fam);
        for (size_t r = 0; r < rows; r++) {
          int64_t t = (int64_t)(tu_next(&rng) % cols);
          if (fam == 3) {   /* a live target: the masked family keeps its -inf elsewhere */
            x[r * cols + (size_t)t] = tu_normal(&rng);
          }
          if (r % 4 == 3) t = -100;   /* some rows ignored */
          t64[r] = t;
        }
        for (int v = 0; v < 6; v++) {
          xopt o = { reds[v % 3], -100, 0.0, 0.0, 0.0 };
          if (v == 1) o.eps = 0.1;
          if (v == 2) { o.eps = 0.25; o.z = 1e-4; }
          if (v == 3) o.t = 0.7;
          if (v == 4) { o.eps = 1.0; o.t = 2.5; }
          if (v == 5) o.z = 0.01;
          if (fam == 3 && o.eps > 0.0) o.eps = 0.0;   /* smoothing over -inf entries is +inf: tested below */
          if (fam == 2 && o.z > 0.0) o.z = 1e-7;      /* lse ~ 1000: keep the z term comparable */
          char what[160];
          snprintf(what, sizeof what, "%s %zux%zu fam %d red %d eps %g z %g T %g", tu_isa_names[isa], rows, cols, fam,
                   (int)o.red, o.eps, o.z, o.t);
          check_case(what, x, rows, cols, t64, &o, 1 + (int)(sh & 1));
        }
      }
      free(x); free(t64);
    }
  }
}

/* Finite differences of the reduced loss, in double, against the gradient. */
static double loss_d(const double *x, size_t rows, size_t cols, const int64_t *t, const xopt *o) {
  double total = 0.0;
  size_t count = 0;
  for (size_t r = 0; r < rows; r++) {
    if (t[r] == o->ignore) continue;
    count++;
    const double *xr = x + r * cols;
    double m = -INFINITY, d = 0.0, sx = 0.0;
    for (size_t j = 0; j < cols; j++) m = xr[j] > m ? xr[j] : m;
    for (size_t j = 0; j < cols; j++) { d += exp((xr[j] - m) / o->t); sx += xr[j]; }
    double lse = m / o->t + log(d);
    total += (1.0 - o->eps) * (lse - xr[t[r]] / o->t) + o->eps * (lse - sx / (double)cols / o->t) + o->z * lse * lse;
  }
  return o->red == SMX_REDUCTION_MEAN ? total / (double)count : total;
}

static void test_finite_differences(void) {
  tu_rng rng = { 5 };
  enum { R = 4, C = 9 };
  float x[R * C], g[R * C];
  double xd[R * C];
  int64_t t[R] = { 3, -100, 0, 8 };
  for (int v = 0; v < 4; v++) {
    xopt o = { v == 1 ? SMX_REDUCTION_SUM : SMX_REDUCTION_MEAN, -100, v >= 2 ? 0.2 : 0.0, v == 3 ? 0.05 : 0.0,
               v == 2 ? 0.6 : 1.0 };
    for (int i = 0; i < R * C; i++) x[i] = tu_normal(&rng) * 2.0f;
    tu_loss_opts so = { { SMX_ALGO_AUTO, o.t, 0u, 1, NULL }, { o.red, o.ignore, 0.0, o.eps, o.z } };
    float loss;
    CHECK(smx_cross_entropy_f32(x, C, t, &loss, g, C, NULL, R, C, tu_lo(&so)) == SMX_OK, "fd call");
    long bad = 0;
    for (int i = 0; i < R * C; i++) xd[i] = x[i];
    CHECK(fabs(loss - loss_d(xd, R, C, t, &o)) <= 1e-6 * fmax(1.0, fabs(loss)), "fd %d: loss %.9g vs %.12g", v, loss,
          loss_d(xd, R, C, t, &o));
    for (int i = 0; i < R * C; i++) {
      const double h = 1e-5;
      xd[i] = (double)x[i] + h;
      double up = loss_d(xd, R, C, t, &o);
      xd[i] = (double)x[i] - h;
      double dn = loss_d(xd, R, C, t, &o);
      xd[i] = x[i];
      double fd = (up - dn) / (2 * h);
      if (!(fabs(fd - g[i]) <= 1e-7 + 1e-5 * fabs(fd))) {
        bad++;
        fprintf(stderr, "  fd %d elem %d: grad %.9g fd %.9g\n", v, i, g[i], fd);
      }
    }
    CHECK(bad == 0, "variant %d: %ld gradient elements differ from finite differences", v, bad);
  }
}

static void test_torch_semantics(void) {
  /* mean over the rows not ignored; all ignored: NaN loss, zero gradient */
  float x[6] = { 1, 2, 3, 4, 5, 6 }, g[6], loss;
  int64_t t[2] = { -100, -100 };
  tu_loss_opts o = TU_LOSS_OPTS_INIT;
  CHECK(smx_cross_entropy_f32(x, 3, t, &loss, g, 3, NULL, 2, 3, tu_lo(&o)) == SMX_OK, "all ignored");
  int zero = 1;
  for (int i = 0; i < 6; i++) zero &= g[i] == 0.0f && !signbit(g[i]);
  CHECK(isnan(loss) && zero, "all ignored: loss %g (want NaN), gradient zero %d", loss, zero);
  o.e.reduction = SMX_REDUCTION_SUM;
  CHECK(smx_cross_entropy_f32(x, 3, t, &loss, NULL, 0, NULL, 2, 3, tu_lo(&o)) == SMX_OK && loss == 0.0f,
        "all ignored, sum: %g", loss);
  /* NULL options are PyTorch's defaults: mean, ignore_index -100 */
  int64_t t2[2] = { 2, -100 };
  CHECK(smx_cross_entropy_f32(x, 3, t2, &loss, NULL, 0, NULL, 2, 3, NULL) == SMX_OK, "defaults");
  double want = log(exp(-2.0) + exp(-1.0) + 1.0);
  CHECK(fabs(loss - want) < 1e-6, "defaults: %.9g vs %.9g", loss, want);
  /* a real ignore index inside the class range */
  o.e.reduction = SMX_REDUCTION_MEAN;
  o.e.ignore_index = 0;
  int64_t t3[2] = { 0, 2 };
  CHECK(smx_cross_entropy_f32(x, 3, t3, &loss, NULL, 0, NULL, 2, 3, tu_lo(&o)) == SMX_OK &&
            fabs(loss - want) < 1e-6,
        "ignore_index 0: %g", loss);
  /* grad_scale multiplies the gradient only */
  {
    float gs1[6] = { 0 }, gs2[6] = { 0 }, l1 = 0.0f, l2 = 1.0f;
    int64_t tt[2] = { 1, 2 };
    tu_loss_opts a = TU_LOSS_OPTS_INIT, b2 = TU_LOSS_OPTS_INIT;
    b2.e.grad_scale = -0.5;
    CHECK(smx_cross_entropy_f32(x, 3, tt, &l1, gs1, 3, NULL, 2, 3, tu_lo(&a)) == SMX_OK &&
              smx_cross_entropy_f32(x, 3, tt, &l2, gs2, 3, NULL, 2, 3, tu_lo(&b2)) == SMX_OK, "grad_scale");
    int ok = l1 == l2;
    for (int i = 0; i < 6; i++) ok &= fabsf(gs2[i] + 0.5f * gs1[i]) <= 1e-7f;
    CHECK(ok, "grad_scale -0.5");
    b2.e.grad_scale = NAN;
    CHECK(smx_cross_entropy_f32(x, 3, tt, &l2, gs2, 3, NULL, 2, 3, tu_lo(&b2)) == SMX_E_INVALID_ARG,
          "grad_scale NaN");
  }
  /* rows == 0 */
  o = (tu_loss_opts)TU_LOSS_OPTS_INIT;
  loss = 5;
  CHECK(smx_cross_entropy_f32(NULL, 3, NULL, &loss, NULL, 0, NULL, 0, 3, tu_lo(&o)) == SMX_OK && isnan(loss),
        "no rows, mean: NaN");
  o.e.reduction = SMX_REDUCTION_SUM;
  CHECK(smx_cross_entropy_f32(NULL, 3, NULL, &loss, NULL, 0, NULL, 0, 3, tu_lo(&o)) == SMX_OK && loss == 0.0f,
        "no rows, sum: 0");
  /* one class: loss 0, gradient 0 */
  float one = 3.5f, g1;
  int64_t t0 = 0;
  o.e.reduction = SMX_REDUCTION_NONE;
  CHECK(smx_cross_entropy_f32(&one, 1, &t0, &loss, &g1, 1, NULL, 1, 1, tu_lo(&o)) == SMX_OK && loss == 0.0f &&
            g1 == 0.0f,
        "V = 1: loss %g grad %g", loss, g1);
}

static void test_specials(void) {
  const float I = INFINITY;
  tu_loss_opts o = TU_LOSS_OPTS_INIT;
  o.e.reduction = SMX_REDUCTION_NONE;
  float x[5][4] = { { 1, NAN, 2, 3 }, { 1, -I, 2, 3 }, { -I, -I, -I, -I }, { 1, I, 2, I }, { 1, I, 2, 3 } };
  int64_t t[5] = { 0, 1, 2, 1, 0 };
  float loss[5], lse[5], g[20];
  {
    const int isa = tu_isa_at;
    CHECK(smx_cross_entropy_f32(&x[0][0], 4, t, loss, g, 4, lse, 5, 4, tu_lo(&o)) == SMX_OK, "specials");
    int nanrow = isnan(loss[0]) && isnan(lse[0]);
    for (int j = 0; j < 4; j++) nanrow &= isnan(g[j]);
    CHECK(nanrow, "%s: NaN row: loss %g", tu_isa_names[isa], loss[0]);
    /* -inf at the target: +inf loss, finite gradient (PyTorch) */
    CHECK(loss[1] == I && g[5] == -1.0f && g[4] > 0.0f && isfinite(lse[1]), "%s: -inf target: loss %g grad %g",
          tu_isa_names[isa], loss[1], g[5]);
    CHECK(loss[2] == I && lse[2] == -I && g[8] == 0.0f && g[10] == -1.0f, "%s: all -inf: loss %g lse %g g %g %g",
          tu_isa_names[isa], loss[2], lse[2], g[8], g[10]);
    CHECK(fabsf(loss[3] - logf(2.0f)) < 1e-7f && lse[3] == I && g[13] == -0.5f && g[15] == 0.5f && g[12] == 0.0f,
          "%s: two +inf, target +inf: loss %g grads %g %g %g", tu_isa_names[isa], loss[3], g[12], g[13], g[15]);
    CHECK(loss[4] == I && g[16] == -1.0f && g[17] == 1.0f, "%s: +inf off target: loss %g", tu_isa_names[isa], loss[4]);
  }
  /* PyTorch's masked-row NaN on request; label smoothing over a -inf entry is +inf, gradient finite */
  o.o.flags = SMX_FLAG_MASKED_ROW_NAN;
  CHECK(smx_cross_entropy_f32(&x[2][0], 4, &t[2], loss, g, 4, lse, 1, 4, tu_lo(&o)) == SMX_OK &&
            isnan(loss[0]) && isnan(lse[0]) && isnan(g[0]),
        "masked row NaN flag: %g", loss[0]);
  o.o.flags = 0;
  o.e.label_smoothing = 0.1;
  int64_t t0 = 0;
  CHECK(smx_cross_entropy_f32(&x[1][0], 4, &t0, loss, g, 4, NULL, 1, 4, tu_lo(&o)) == SMX_OK &&
            loss[0] == I && fabsf(g[1] + 0.025f) < 1e-7f,
        "smoothing over -inf: loss %g g %g", loss[0], g[1]);
  /* a temperature so small that the gradient leaves the float range: saturated, never NaN */
  {
    float xt[4] = { 1, 2, 3, -INFINITY }, gt[4], lt;
    int64_t t1 = 1;
    tu_loss_opts ot = TU_LOSS_OPTS_INIT;
    ot.o.temperature = 1e-40;
    CHECK(smx_cross_entropy_f32(xt, 4, &t1, &lt, gt, 4, NULL, 1, 4, tu_lo(&ot)) == SMX_OK && lt == I &&
              gt[0] == 0.0f && gt[1] == -FLT_MAX && gt[2] == FLT_MAX && gt[3] == 0.0f,
          "T = 1e-40: loss %g grads %g %g %g %g", lt, gt[0], gt[1], gt[2], gt[3]);
  }
  /* an ignored NaN row: loss 0 and gradient 0 */
  int64_t tig = -100;
  o.e.label_smoothing = 0.0;
  CHECK(smx_cross_entropy_f32(&x[0][0], 4, &tig, loss, g, 4, NULL, 1, 4, tu_lo(&o)) == SMX_OK &&
            loss[0] == 0.0f && g[1] == 0.0f,
        "ignored NaN row");
}

static void test_bad_args(void) {
  float x[12] = { 0 }, g[12], loss[3], lse[3];
  for (int i = 0; i < 12; i++) x[i] = (float)i;
  int64_t t[3] = { 0, 3, 1 };
  int64_t t64[3] = { 0, 1, 2 };
  tu_loss_opts o = TU_LOSS_OPTS_INIT;
  o.e.reduction = SMX_REDUCTION_NONE;
#define SENTINEL()                                                  \
  do {                                                              \
    for (int i = 0; i < 12; i++) g[i] = -7.0f;                      \
    for (int i = 0; i < 3; i++) loss[i] = lse[i] = -7.0f;           \
  } while (0)
#define UNTOUCHED() (g[0] == -7.0f && g[11] == -7.0f && loss[0] == -7.0f && loss[2] == -7.0f && lse[0] == -7.0f && lse[2] == -7.0f)
  const int64_t bad_t[4] = { 4, -1, 1000000, -101 };
  for (int b = 0; b < 4; b++) {
    for (int isa = 0; isa < 2; isa++) {
      SENTINEL();
      int64_t tt[3] = { 0, 1, (int64_t)bad_t[b] };
      int64_t tl[3] = { 0, 1, bad_t[b] };
      smx_status s = isa ? smx_cross_entropy_f32(x, 4, tl, loss, g, 4, lse, 3, 4, tu_lo(&o))
                         : smx_cross_entropy_f32(x, 4, tt, loss, g, 4, lse, 3, 4, tu_lo(&o));
      CHECK(s == SMX_E_INVALID_ARG && UNTOUCHED(), "bad target %lld (i%d): status %d", (long long)bad_t[b],
            isa ? 64 : 32, s);
    }
  }
  /* a bad target in place: the logits stay untouched */
  float xi[12];
  memcpy(xi, x, sizeof xi);
  int64_t tb[3] = { 0, 1, 9 };
  CHECK(smx_cross_entropy_f32(xi, 4, tb, loss, xi, 4, NULL, 3, 4, tu_lo(&o)) == SMX_E_INVALID_ARG &&
            !memcmp(xi, x, sizeof xi),
        "bad target in place");
  /* a target of 2^32 + 1 must not wrap around in int64 */
  int64_t big[3] = { 0, 1, ((int64_t)1 << 32) + 1 };
  SENTINEL();
  CHECK(smx_cross_entropy_f32(x, 4, big, loss, g, 4, lse, 3, 4, tu_lo(&o)) == SMX_E_INVALID_ARG && UNTOUCHED(),
        "2^32 + 1");

  struct { const char *what; smx_status s; } cases[32];
  int nc = 0;
#define BAD(w, call) do { SENTINEL(); cases[nc].what = w; cases[nc].s = (call); CHECK(cases[nc].s == SMX_E_INVALID_ARG && UNTOUCHED(), "%s: status %d", w, cases[nc].s); nc++; } while (0)
  BAD("NULL logits", smx_cross_entropy_f32(NULL, 4, t, loss, g, 4, lse, 3, 4, tu_lo(&o)));
  BAD("NULL targets", smx_cross_entropy_f32(x, 4, NULL, loss, g, 4, lse, 3, 4, tu_lo(&o)));
  BAD("NULL loss", smx_cross_entropy_f32(x, 4, t, NULL, g, 4, lse, 3, 4, tu_lo(&o)));
  BAD("ld < cols", smx_cross_entropy_f32(x, 3, t, loss, g, 4, lse, 3, 4, tu_lo(&o)));
  BAD("ldg < cols", smx_cross_entropy_f32(x, 4, t, loss, g, 3, lse, 3, 4, tu_lo(&o)));
  BAD("cols 0", smx_cross_entropy_f32(x, 4, t, loss, g, 4, lse, 3, 0, tu_lo(&o)));
  BAD("grad overlaps logits", smx_cross_entropy_f32(x, 4, t, loss, x + 1, 4, lse, 2, 4, tu_lo(&o)));
  BAD("grad in place, other ld", smx_cross_entropy_f32(x, 4, t, loss, x, 5, lse, 2, 4, tu_lo(&o)));
  BAD("loss overlaps logits", smx_cross_entropy_f32(x, 4, t, x + 2, g, 4, lse, 2, 4, tu_lo(&o)));
  BAD("lse overlaps grad", smx_cross_entropy_f32(x, 4, t, loss, g, 4, g + 3, 2, 4, tu_lo(&o)));
  BAD("loss overlaps lse", smx_cross_entropy_f32(x, 4, t, loss, g, 4, loss + 1, 3, 4, tu_lo(&o)));
  BAD("loss overlaps targets", smx_cross_entropy_f32(x, 4, t64, (float *)t64, g, 4, lse, 3, 4, tu_lo(&o)));
  tu_loss_opts b = o;
  b.e.label_smoothing = -0.1;
  BAD("smoothing < 0", smx_cross_entropy_f32(x, 4, t, loss, g, 4, lse, 3, 4, tu_lo(&b)));
  b.e.label_smoothing = 1.5;
  BAD("smoothing > 1", smx_cross_entropy_f32(x, 4, t, loss, g, 4, lse, 3, 4, tu_lo(&b)));
  b.e.label_smoothing = NAN;
  BAD("smoothing NaN", smx_cross_entropy_f32(x, 4, t, loss, g, 4, lse, 3, 4, tu_lo(&b)));
  b = o;
  b.e.z_loss = -1;
  BAD("z < 0", smx_cross_entropy_f32(x, 4, t, loss, g, 4, lse, 3, 4, tu_lo(&b)));
  b.e.z_loss = INFINITY;
  BAD("z inf", smx_cross_entropy_f32(x, 4, t, loss, g, 4, lse, 3, 4, tu_lo(&b)));
  b = o;
  b.o.temperature = -1;
  BAD("T < 0", smx_cross_entropy_f32(x, 4, t, loss, g, 4, lse, 3, 4, tu_lo(&b)));
  b = o;
  b.e.reduction = (smx_reduction)3;
  BAD("reduction", smx_cross_entropy_f32(x, 4, t, loss, g, 4, lse, 3, 4, tu_lo(&b)));
  b = o;
  b.o.threads = -1;
  BAD("threads < 0", smx_cross_entropy_f32(x, 4, t, loss, g, 4, lse, 3, 4, tu_lo(&b)));
  b = o;
  b.o.flags = 0x100;
  BAD("unknown flag", smx_cross_entropy_f32(x, 4, t, loss, g, 4, lse, 3, 4, tu_lo(&b)));
  BAD("f16 NULL", smx_cross_entropy_f16(NULL, 4, t, loss, NULL, 4, lse, 3, 4, tu_lo(&o)));
  uint16_t h[12] = { 0 };
  int64_t tbad[3] = { 0, 1, 4 };
  BAD("bf16 bad target", smx_cross_entropy_bf16(h, 4, tbad, loss, NULL, 4, lse, 3, 4, tu_lo(&o)));
  /* a wrong ld with rows = 0 is still wrong; rows = 0 otherwise fine */
  CHECK(smx_cross_entropy_f32(x, 3, t, loss, NULL, 0, NULL, 0, 4, tu_lo(&o)) == SMX_E_INVALID_ARG, "ld, rows 0");
  (void)cases;
}

/* f16 / bf16 logits: against the reference on the widened values. */
static void test_half(void) {
  tu_rng rng = { 99 };
  enum { R = 6, C = 2500 };
  uint16_t *h = malloc(R * C * 2), *gh = malloc(R * C * 2), *gi = malloc(R * C * 2);
  float *xf = malloc(R * C * 4), lossn[R], loss2[R], lse[R];
  long double *rg = malloc(C * sizeof(long double));
  int64_t t[R];
  for (int r = 0; r < R; r++) t[r] = r == 2 ? -100 : (int64_t)(tu_next(&rng) % C);
  for (int kind = 0; kind < 2; kind++) {
    double u = kind == 0 ? 0x1p-11 : 0x1p-8;
    for (int i = 0; i < R * C; i++) {
      float v = tu_normal(&rng) * 4.0f;
      h[i] = kind == 0 ? smx_f32_to_f16(v) : smx_f32_to_bf16(v);
      xf[i] = kind == 0 ? smx_f16_to_f32(h[i]) : smx_bf16_to_f32(h[i]);
    }
    {
      const int isa = tu_isa_at;
      for (int v = 0; v < 3; v++) {
        xopt xo = { SMX_REDUCTION_NONE, -100, v == 1 ? 0.1 : 0.0, v == 2 ? 1e-3 : 0.0, v == 2 ? 0.8 : 0.0 };
        tu_loss_opts o = { { SMX_ALGO_AUTO, xo.t, 0u, 2, NULL }, { xo.red, xo.ignore, 0.0, xo.eps, xo.z } };
        smx_status s = kind == 0 ? smx_cross_entropy_f16(h, C, t, lossn, gh, C, lse, R, C, tu_lo(&o))
                                 : smx_cross_entropy_bf16(h, C, t, lossn, gh, C, lse, R, C, tu_lo(&o));
        CHECK(s == SMX_OK, "half status");
        long bad = 0;
        long double T = xo.t == 0.0 ? 1.0L : xo.t;
        for (int r = 0; r < R; r++) {
          int ign = t[r] == -100;
          long double rl;
          long double l = ref_row(xf + r * C, C, ign ? 0 : (size_t)t[r], &xo, rg, &rl);
          if (ign) l = 0.0L;
          bad += !(fabsl(lossn[r] - l) <= 4 * EPS_F * fmaxl(1.0L, fabsl(l)));
          float mx = -INFINITY;
          for (int j = 0; j < C; j++) mx = xf[r * C + j] > mx ? xf[r * C + j] : mx;
          for (int j = 0; j < C; j++) {
            float gv = kind == 0 ? smx_f16_to_f32(gh[r * C + j]) : smx_bf16_to_f32(gh[r * C + j]);
            if (ign) { bad += gv != 0.0f; continue; }
            long double ref = rg[j];
            long double tj = fabsl(((long double)xf[r * C + j] - mx) / T);
            long double bound = (isinf(tj) ? 0.0L : (7.0L + tj / 2.0L) * EPS_F * fabsl(ref)) + 4 * EPS_F + u * fabsl(ref) +
                                (kind == 0 ? 0x1p-25 : 0x1p-133);   /* half of the smallest f16 subnormal */
            if (!(fabsl(gv - ref) <= bound)) {
              bad++;
              if (bad < 4) fprintf(stderr, "  half %d r %d j %d: %.9g vs %.9Lg\n", kind, r, j, gv, ref);
            }
          }
        }
        CHECK(bad == 0, "%s %s v %d: %ld values beyond the bound", kind ? "bf16" : "f16", tu_isa_names[isa], v, bad);
        /* in place gives the same bits */
        memcpy(gi, h, R * C * 2);
        s = kind == 0 ? smx_cross_entropy_f16(gi, C, t, loss2, gi, C, NULL, R, C, tu_lo(&o))
                      : smx_cross_entropy_bf16(gi, C, t, loss2, gi, C, NULL, R, C, tu_lo(&o));
        CHECK(s == SMX_OK && !memcmp(gi, gh, R * C * 2) && !memcmp(loss2, lossn, sizeof lossn), "half in place");
      }
    }
  }
  free(h); free(gh); free(gi); free(xf); free(rg);
}

int main(void) {
  tu_isa_start(3);
  test_values();
  test_specials();
  test_half();
  if (tu_isa_once) {
    test_finite_differences();
    test_torch_semantics();
    test_bad_args();
  }
  return tu_finish("test_xent");
}
