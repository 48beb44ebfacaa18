/*
 * Noisy Softmax (include/smx/smx_noisy.h): the noise rebuilt here from the
 * documented Philox counter (smx_philox4x32 and Box-Muller in long double),
 * distinct across rows and steps and standard normal over 200k rows; f32 and
 * f64 losses, logit gradients and norm gradients against long-double
 * references at every ISA, every reduction and each mode; the f64 gradients
 * against central differences; alpha = 0 against smx_cross_entropy; thread
 * counts bitwise; ignore_index, special rows, in place, argument errors.
 */
#include <string.h>

#include "../common/test_isa.h"

#define EPS_F 0x1p-23
#define EPS_D 0x1p-52
#define MAXR 12
#define MAXC 300

typedef long double ld_t;

/* ------------------------------------------------------------- the noise */

static ld_t unif(uint32_t lo, uint32_t hi) {
  return ((ld_t)((uint64_t)lo | (uint64_t)(hi & 0x1fffffu) << 32) + 0.5L) * 0x1p-53L;
}

/* xi of (seed, row, step) from the header's recipe, independently of the library's Box-Muller */
static ld_t ref_xi(uint64_t seed, uint64_t row, uint64_t step) {
  uint32_t c[4] = { 0xFFFFFFFFu, (uint32_t)row, (uint32_t)step, (uint32_t)(step >> 32) }, w[4];
  smx_philox4x32(seed, c, w);
  return sqrtl(-2.0L * logl(unif(w[0], w[1]))) * cosl(2.0L * 3.14159265358979323846264338327950288L * unif(w[2], w[3]));
}

static void noise(void) {
  enum { N = 200000 };
  static double xi[N];
  CHECK(smx_noisy_softmax_noise(7, 3, 0, N, xi) == SMX_OK, "noise status");
  for (size_t i = 0; i < 1000; i++) {
    ld_t want = ref_xi(7, i, 3);
    CHECK(fabsl(xi[i] - want) <= 1e-14L, "xi row %zu: %.17g vs %.17Lg", i, xi[i], want);
  }
  double one;
  CHECK(smx_noisy_softmax_noise(7, 3, 12345, 1, &one) == SMX_OK && one == xi[12345], "row0 offsets the rows");
  CHECK(smx_noisy_softmax_noise(7, 3, 0, 1, NULL) == SMX_E_INVALID_ARG, "NULL xi");
  CHECK(smx_noisy_softmax_noise(7, 3, 0, 0, NULL) == SMX_OK, "no rows");
  /* distinct across rows, steps and seeds */
  size_t same = 0;
  for (size_t i = 1; i < N; i++) same += xi[i] == xi[i - 1];
  CHECK(same == 0, "%zu adjacent rows share xi", same);
  double a[64], b[64], s[64];
  smx_noisy_softmax_noise(7, 4, 0, 64, a);
  smx_noisy_softmax_noise(7, (uint64_t)3 + (1ull << 32), 0, 64, b);   /* the step's high word counts */
  smx_noisy_softmax_noise(8, 3, 0, 64, s);
  size_t da = 0, db = 0, ds = 0;
  for (size_t i = 0; i < 64; i++) da += a[i] != xi[i], db += b[i] != xi[i], ds += s[i] != xi[i];
  CHECK(da == 64 && db == 64 && ds == 64, "steps / seeds: %zu %zu %zu of 64 differ", da, db, ds);
  /* N(0, 1): mean, variance, E|xi| = sqrt(2/pi) and the tail, each within
   * about 5 standard errors (fails for a uniform, a half-normal or a scale error) */
  ld_t m1 = 0, m2 = 0, ma = 0;
  size_t tail = 0;
  for (size_t i = 0; i < N; i++) {
    m1 += xi[i];
    m2 += (ld_t)xi[i] * xi[i];
    ma += fabsl((ld_t)xi[i]);
    tail += fabs(xi[i]) > 1.959963984540054;
  }
  m1 /= N, m2 = m2 / N - m1 * m1, ma /= N;
  CHECK(fabsl(m1) < 0.012L, "mean of xi %Lg", m1);
  CHECK(fabsl(m2 - 1.0L) < 0.016L, "variance of xi %Lg", m2);
  CHECK(fabsl(ma - 0.7978845608028654L) < 0.007L, "E|xi| %Lg", ma);
  CHECK(fabs((double)tail / N - 0.05) < 0.0025, "P(|xi| > 1.96) = %g", (double)tail / N);
}

/* ------------------------------------------------------- the reference */

static const char *const mode_names[3] = { "annealed", "free", "amplitude" };

/* one row (s = 1): loss, logit gradient into g, norm gradient into *gr */
static ld_t ref_row(const double *x, size_t n, size_t t, double r, double alpha, ld_t xi, int mode, ld_t *g,
                    ld_t *gr) {
  ld_t ft = x[t], a = (ld_t)alpha * fabsl(xi), amp = 1.0L, da_df = 0.0L, da_dr = 0.0L;
  if (mode == SMX_NOISY_ANNEALED) {
    amp = (ld_t)r - ft;
    if (amp > 0) da_df = -1, da_dr = 1;
    else amp = 0;
  } else if (mode == SMX_NOISY_AMPLITUDE) {
    amp = r, da_dr = 1;
  }
  ld_t fn = a == 0 ? ft : ft - a * amp, m = fn;
  for (size_t j = 0; j < n; j++) if (j != t && (ld_t)x[j] > m) m = x[j];
  ld_t rest = 0;
  for (size_t j = 0; j < n; j++) if (j != t) rest += expl((ld_t)x[j] - m);
  /* the loss lse - f~_t; log1p where f~_t is the maximum (p~_t near 1) */
  ld_t loss = m == fn ? log1pl(rest) : logl(rest + expl(fn - m)) + (m - fn), lse = fn + loss;
  for (size_t j = 0; j < n; j++) g[j] = j == t ? 0 : expl((ld_t)x[j] - lse);
  ld_t pm1 = expm1l(-loss);
  g[t] = pm1 * (1 - a * da_df);
  *gr = pm1 * (-a * da_dr);
  return loss;
}

typedef struct ncase {
  size_t rows, cols;
  double alpha;
  int mode;
  smx_reduction red;
} ncase;

static double X[MAXR * MAXC], NR[MAXR];
static float XF[MAXR * MAXC], NRF[MAXR];
static int64_t TG[MAXR];
static const uint64_t SEED = 0x5eed5eedull, STEP = 41;

/* reduced (or NONE: out[r]) reference, its gradients scaled for the reduction */
static ld_t reference(const ncase *c, const double *x, const double *nr, ld_t *out, ld_t *g, ld_t *gr) {
  ld_t sum = 0, cnt = 0;
  for (size_t r = 0; r < c->rows; r++) {
    out[r] = 0;
    gr[r] = 0;
    for (size_t j = 0; j < c->cols; j++) g[r * c->cols + j] = 0;
    if (TG[r] == -100) continue;
    out[r] = ref_row(x + r * c->cols, c->cols, (size_t)TG[r], nr[r], c->alpha, ref_xi(SEED, r, STEP), c->mode,
                     g + r * c->cols, gr + r);
    sum += out[r];
    cnt++;
  }
  ld_t sc = c->red == SMX_REDUCTION_MEAN ? 1 / cnt : 1;
  for (size_t i = 0; i < c->rows * c->cols; i++) g[i] *= sc;
  for (size_t r = 0; r < c->rows; r++) gr[r] *= sc;
  return sum * sc;
}

static smx_status call_f64(const ncase *c, const double *x, const double *nr, const smx_options *o, double *l,
                           double *g, double *gr) {
  return smx_noisy_softmax_loss_f64(x, c->cols, TG, nr, l, g, c->cols, gr, c->rows, c->cols, c->alpha, SEED, STEP, 0,
                                    (smx_noisy_mode)c->mode, o);
}

static smx_status call_f32(const ncase *c, const float *x, const float *nr, const smx_options *o, float *l, float *g,
                           float *gr) {
  return smx_noisy_softmax_loss_f32(x, c->cols, TG, nr, l, g, c->cols, gr, c->rows, c->cols, c->alpha, SEED, STEP, 0,
                                    (smx_noisy_mode)c->mode, o);
}

/* logits of scale 3; norms r = |x_t| + 0.5 + 3u (the noise active, by a margin
 * the finite differences respect); row 1 ignored (its norm NaN: never read) */
static void make_data(tu_rng *rng, const ncase *c) {
  for (size_t i = 0; i < c->rows * c->cols; i++) XF[i] = 3.0f * tu_normal(rng), X[i] = XF[i];
  for (size_t r = 0; r < c->rows; r++) {
    TG[r] = (int64_t)(tu_next(rng) % c->cols);
    NRF[r] = fabsf(XF[r * c->cols + TG[r]]) + 0.5f + 3.0f * (float)tu_uniform(rng);
    NR[r] = NRF[r];
  }
  if (c->rows > 2) TG[1] = -100, NRF[1] = NAN, NR[1] = NAN;
}

static void check_case(const ncase *c, const char *isa) {
  static ld_t gref[MAXR * MAXC];
  static double g64[MAXR * MAXC], xp[MAXR * MAXC];
  static float g32[MAXR * MAXC], g32b[MAXR * MAXC];
  ld_t out[MAXR], grref[MAXR];
  double l64[MAXR], gr64[MAXR];
  float l32[MAXR], gr32[MAXR], l32b[MAXR], gr32b[MAXR];
  size_t R = c->rows, C = c->cols, nl = c->red == SMX_REDUCTION_NONE ? R : 1;
  const char *mn = mode_names[c->mode];
  tu_loss_opts o = TU_LOSS_OPTS_INIT;
  o.e.reduction = c->red;
  ld_t tot = reference(c, X, NR, out, gref, grref), gmax = 0;
  for (size_t i = 0; i < R * C; i++) if (fabsl(gref[i]) > gmax) gmax = fabsl(gref[i]);
  for (size_t r = 0; r < R; r++) if (fabsl(grref[r]) > gmax) gmax = fabsl(grref[r]);
  /* f64 */
  CHECK(call_f64(c, X, NR, tu_lo(&o), l64, g64, gr64) == SMX_OK, "f64 status");
  for (size_t i = 0; i < nl; i++) {
    ld_t want = nl == 1 ? tot : out[i];
    CHECK(fabsl(l64[i] - want) <= 64 * EPS_D * fmaxl(1, fabsl(want)), "%s %s f64 loss %zu: %.17g vs %.17Lg", mn, isa,
          i, l64[i], want);
  }
  for (size_t i = 0; i < R * C; i++)
    CHECK(fabsl(g64[i] - gref[i]) <= 64 * EPS_D * (fabsl(gref[i]) + gmax) + 1e-300, "%s %s f64 grad %zu: %.17g vs %.17Lg",
          mn, isa, i, g64[i], gref[i]);
  for (size_t r = 0; r < R; r++)
    CHECK(fabsl(gr64[r] - grref[r]) <= 64 * EPS_D * (fabsl(grref[r]) + gmax) + 1e-300,
          "%s %s f64 grad_norms %zu: %.17g vs %.17Lg", mn, isa, r, gr64[r], grref[r]);
  /* f32 (the reference on the same widened inputs) */
  CHECK(call_f32(c, XF, NRF, tu_lo(&o), l32, g32, gr32) == SMX_OK, "f32 status");
  for (size_t i = 0; i < nl; i++) {
    ld_t want = nl == 1 ? tot : out[i];
    CHECK(fabsl(l32[i] - want) <= 16 * EPS_F * fmaxl(1, fabsl(want)), "%s %s f32 loss %zu: %.9g vs %.12Lg", mn, isa,
          i, (double)l32[i], want);
  }
  for (size_t i = 0; i < R * C; i++)
    CHECK(fabsl(g32[i] - gref[i]) <= 16 * EPS_F * (fabsl(gref[i]) + gmax) + 0x1p-126, "%s %s f32 grad %zu: %.9g vs %.12Lg",
          mn, isa, i, (double)g32[i], gref[i]);
  for (size_t r = 0; r < R; r++)
    CHECK(fabsl(gr32[r] - grref[r]) <= 16 * EPS_F * (fabsl(grref[r]) + gmax) + 0x1p-126,
          "%s %s f32 grad_norms %zu: %.9g vs %.12Lg", mn, isa, r, (double)gr32[r], grref[r]);
  if (R > 2) CHECK(g32[C] == 0 && g32[2 * C - 1] == 0 && gr32[1] == 0 && (nl == 1 || l32[1] == 0), "ignored row");
  /* 4 threads: bitwise */
  o.o.threads = 4;
  CHECK(call_f32(c, XF, NRF, tu_lo(&o), l32b, g32b, gr32b) == SMX_OK, "threads status");
  CHECK(!memcmp(l32, l32b, nl * sizeof(float)) && !memcmp(g32, g32b, R * C * sizeof(float)) &&
            !memcmp(gr32, gr32b, R * sizeof(float)),
        "%s %s: 4 threads differ", mn, isa);
  o.o.threads = 1;
  /* central differences of the f64 loss, in the logits and in the norms */
  if (R * C > 64) return;
  memcpy(xp, X, R * C * sizeof(double));
  for (size_t i = 0; i < R * C; i++) {
    double h = 1e-6 * fmax(1.0, fabs(X[i])), lp[MAXR], lm[MAXR], sp = 0, sm = 0;
    xp[i] = X[i] + h;
    call_f64(c, xp, NR, tu_lo(&o), lp, NULL, NULL);
    xp[i] = X[i] - h;
    call_f64(c, xp, NR, tu_lo(&o), lm, NULL, NULL);
    xp[i] = X[i];
    for (size_t k = 0; k < nl; k++) sp += lp[k], sm += lm[k];
    double fd = (sp - sm) / (2 * h);
    CHECK(fabs(fd - g64[i]) <= 1e-6 * (1.0 + fabs(g64[i])), "%s FD logit %zu: %.12g vs %.12g", mn, i, fd, g64[i]);
  }
  double np[MAXR];
  memcpy(np, NR, R * sizeof(double));
  for (size_t r = 0; r < R; r++) {
    if (TG[r] == -100) continue;
    double h = 1e-6 * fmax(1.0, NR[r]), lp[MAXR], lm[MAXR], sp = 0, sm = 0;
    np[r] = NR[r] + h;
    call_f64(c, X, np, tu_lo(&o), lp, NULL, NULL);
    np[r] = NR[r] - h;
    call_f64(c, X, np, tu_lo(&o), lm, NULL, NULL);
    np[r] = NR[r];
    for (size_t k = 0; k < nl; k++) sp += lp[k], sm += lm[k];
    double fd = (sp - sm) / (2 * h);
    CHECK(fabs(fd - gr64[r]) <= 1e-6 * (1.0 + fabs(gr64[r])), "%s FD norm %zu: %.12g vs %.12g", mn, r, fd, gr64[r]);
  }
}

static void cases(tu_rng *rng, const char *isa) {
  static const size_t shapes[][2] = { { 1, 1 }, { 3, 5 }, { 6, 9 }, { 12, 300 }, { 5, 11 } };
  for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
    for (int red = 0; red < 3; red++)
      for (int mode = 0; mode < 3; mode++)
        for (int v = 0; v < 2; v++) {
          ncase c = { shapes[s][0], shapes[s][1], v == 0 ? 0.1 : 0.7, mode, (smx_reduction)red };
          make_data(rng, &c);
          check_case(&c, isa);
        }
}

/* alpha = 0 is cross-entropy: smx_cross_entropy_f32 within the losses'
 * bound; f64 (no f64 cross-entropy in the library) against long-double
 * cross-entropy written here, whatever the norms */
static void alpha_zero(tu_rng *rng) {
  enum { R = 7, C = 40 };
  static float x[R * C], g[R * C], gx[R * C];
  static double xd[R * C], gd[R * C];
  float nr[R], l[R], lx[R];
  double nrd[R], ld[R];
  int64_t t[R];
  for (size_t i = 0; i < R * C; i++) x[i] = 4.0f * tu_normal(rng), xd[i] = x[i];
  for (size_t r = 0; r < R; r++) t[r] = (int64_t)(tu_next(rng) % C), nr[r] = 50.0f * (float)r, nrd[r] = nr[r];
  t[3] = -100;
  tu_loss_opts o = TU_LOSS_OPTS_INIT;
  tu_loss_opts xo = TU_LOSS_OPTS_INIT;
  for (int red = 0; red < 3; red++) {
    o.e.reduction = xo.e.reduction = (smx_reduction)red;
    size_t nl = red == SMX_REDUCTION_NONE ? R : 1;
    for (int mode = 0; mode < 3; mode++) {
      CHECK(smx_noisy_softmax_loss_f32(x, C, t, nr, l, g, C, NULL, R, C, 0.0, 1, 2, 0, (smx_noisy_mode)mode, tu_lo(&o)) ==
                SMX_OK, "alpha 0 f32");
      CHECK(smx_cross_entropy_f32(x, C, t, lx, gx, C, NULL, R, C, tu_lo(&xo)) == SMX_OK, "xent f32");
      for (size_t i = 0; i < nl; i++)
        CHECK(fabsf(l[i] - lx[i]) <= 16 * EPS_F * fmaxf(1, fabsf(lx[i])), "alpha 0 f32 loss %zu: %.9g vs %.9g", i,
              (double)l[i], (double)lx[i]);
      float gm = 0;
      for (size_t i = 0; i < R * C; i++) gm = fmaxf(gm, fabsf(gx[i]));
      for (size_t i = 0; i < R * C; i++)
        CHECK(fabsf(g[i] - gx[i]) <= 16 * EPS_F * (fabsf(gx[i]) + gm) + 0x1p-126, "alpha 0 f32 grad %zu: %.9g vs %.9g",
              i, (double)g[i], (double)gx[i]);
    }
  }
  o.e.reduction = SMX_REDUCTION_NONE;
  CHECK(smx_noisy_softmax_loss_f64(xd, C, t, nrd, ld, gd, C, NULL, R, C, 0.0, 1, 2, 0, SMX_NOISY_ANNEALED, tu_lo(&o)) == SMX_OK,
        "alpha 0 f64");
  for (size_t r = 0; r < R; r++) {
    if (t[r] == -100) continue;
    const double *xr = xd + r * C;
    ld_t m = -INFINITY, s = 0;
    for (size_t j = 0; j < C; j++) m = fmaxl(m, xr[j]);
    for (size_t j = 0; j < C; j++) s += expl(xr[j] - m);
    ld_t lse = m + logl(s), want = lse - xr[t[r]];
    CHECK(fabsl(ld[r] - want) <= 64 * EPS_D * fmaxl(1, want), "alpha 0 f64 loss %zu: %.17g vs %.17Lg", r, ld[r], want);
    for (size_t j = 0; j < C; j++) {
      ld_t gw = expl(xr[j] - lse) - ((int64_t)j == t[r]);
      CHECK(fabsl(gd[r * C + j] - gw) <= 64 * EPS_D * (fabsl(gw) + 1), "alpha 0 f64 grad %zu %zu", r, j);
    }
  }
}

/* special rows: NaN, +inf, all -inf, a -inf target, -inf non-targets, the clamp */
static void specials(void) {
  enum { C = 4 };
  float x[6 * C] = { 1, NAN, 0, 2,                    /* NaN                     */
                     1, INFINITY, 0, 2,               /* +inf                    */
                     -INFINITY, -INFINITY, -INFINITY, -INFINITY,   /* all -inf   */
                     -INFINITY, 1, 0, 2,              /* -inf target (col 0)     */
                     -INFINITY, 1.5f, -INFINITY, 0.25f,            /* -inf others */
                     3, 0, 1, -1 };                   /* r below f_t: clamped    */
  int64_t t[6] = { 0, 0, 0, 0, 1, 0 };
  float nr[6] = { 5, 5, 5, 5, 2, 2.9f }, l[6], g[6 * C], gr[6];
  tu_loss_opts o = TU_LOSS_OPTS_INIT;
  o.e.reduction = SMX_REDUCTION_NONE;
  CHECK(smx_noisy_softmax_loss_f32(x, C, t, nr, l, g, C, gr, 6, C, 0.3, 9, 1, 0, SMX_NOISY_ANNEALED, tu_lo(&o)) == SMX_OK,
        "specials");
  for (int r = 0; r < 3; r++) {
    int all = isnan(l[r]) && isnan(gr[r]);
    for (int j = 0; j < C; j++) all = all && isnan(g[r * C + j]);
    CHECK(all, "special row %d: NaN loss and gradients", r);
  }
  double xi3, xi4;
  smx_noisy_softmax_noise(9, 1, 3, 1, &xi3);
  smx_noisy_softmax_noise(9, 1, 4, 1, &xi4);
  ld_t a3 = 0.3L * fabsl((ld_t)xi3), s3 = expl(1) + expl(0) + expl(2);
  CHECK(l[3] == INFINITY, "-inf target: loss %g", (double)l[3]);
  CHECK(fabsl(g[12] + (1 + a3)) <= 4 * EPS_F && fabsl(gr[3] - a3) <= 4 * EPS_F, "-inf target: grads %g %g",
        (double)g[12], (double)gr[3]);
  CHECK(fabsl(g[13] - expl(1) / s3) <= 4 * EPS_F && fabsl(g[15] - expl(2) / s3) <= 4 * EPS_F, "-inf target: p");
  /* row 4: the -inf entries take no part: the same as the row (1.5, 0.25) with target 0 */
  double x4[2] = { 1.5, 0.25 }, nr4 = 2;
  ld_t g4[2], gr4, l4 = ref_row(x4, 2, 0, nr4, 0.3, xi4, SMX_NOISY_ANNEALED, g4, &gr4);
  CHECK(fabsl(l[4] - l4) <= 16 * EPS_F && g[16] == 0 && g[18] == 0 && fabsl(g[17] - g4[0]) <= 16 * EPS_F &&
            fabsl(g[19] - g4[1]) <= 16 * EPS_F && fabsl(gr[4] - gr4) <= 16 * EPS_F,
        "-inf non-targets: %g vs %Lg", (double)l[4], l4);
  /* row 5: r = 2.9 < f_t = 3: no noise, plain cross-entropy, grad_norms 0 */
  ld_t s5 = expl(3) + expl(0) + expl(1) + expl(-1);
  CHECK(fabsl(l[5] - (logl(s5) - 3)) <= 16 * EPS_F && gr[5] == 0 && fabsl(g[20] - (expl(3) / s5 - 1)) <= 16 * EPS_F,
        "clamped row: %g", (double)l[5]);
  /* p~_t near 1: the loss (about 3 e^-40) to full relative precision, which
   * taking exp(f_t) out of the whole row's sum would lose */
  double xs[C] = { 40, 0, 0, 0 }, ns = 40.5, ls, gs[C], grs, xi0;
  o.e.reduction = SMX_REDUCTION_SUM;
  smx_noisy_softmax_noise(9, 1, 0, 1, &xi0);
  ld_t gw[C], grw, lw = ref_row(xs, C, 0, ns, 0.1, xi0, SMX_NOISY_ANNEALED, gw, &grw);
  CHECK(smx_noisy_softmax_loss_f64(xs, C, t, &ns, &ls, gs, C, &grs, 1, C, 0.1, 9, 1, 0, SMX_NOISY_ANNEALED, tu_lo(&o)) ==
                SMX_OK && fabsl(ls - lw) <= 1e-13L * lw && fabsl(gs[0] - gw[0]) <= 1e-13L * fabsl(gw[0]) &&
            fabsl(grs - grw) <= 1e-13L * fabsl(grw),
        "p_t near 1: %.17g vs %.17Lg", ls, lw);
  float xsf[C] = { 40, 0, 0, 0 }, nsf = 40.5f, lsf, gsf[C], grsf;
  CHECK(smx_noisy_softmax_loss_f32(xsf, C, t, &nsf, &lsf, gsf, C, &grsf, 1, C, 0.1, 9, 1, 0, SMX_NOISY_ANNEALED, tu_lo(&o)) ==
                SMX_OK && fabsl(lsf - lw) <= 1e-6L * lw && fabsl(grsf - grw) <= 1e-6L * fabsl(grw),
        "f32 p_t near 1: %.9g vs %.17Lg", (double)lsf, lw);
  o.e.reduction = SMX_REDUCTION_NONE;
  /* a -inf target under FREE noise and the other modes: finite gradients */
  CHECK(smx_noisy_softmax_loss_f32(x + 12, C, t, nr, l, g, C, gr, 1, C, 0.3, 9, 1, 0, SMX_NOISY_AMPLITUDE, tu_lo(&o)) ==
                SMX_OK && l[0] == INFINITY && g[0] == -1.0f && isfinite(gr[0]),
        "-inf target, amplitude");
}

static void errors(void) {
  float x[12] = { 0 }, g[12], l[3] = { 7, 7, 7 }, nr[3] = { 1, 1, 1 }, gr[3] = { 6, 6, 6 };
  int64_t t[3] = { 0, 2, 1 };
  tu_loss_opts o = TU_LOSS_OPTS_INIT;
  const smx_noisy_mode A = SMX_NOISY_ANNEALED;
  g[0] = 5.0f;
#define NS(x_, t_, nr_, al_, mode_, l_, g_, gr_) \
  smx_noisy_softmax_loss_f32(x_, 4, t_, nr_, l_, g_, 4, gr_, 3, 4, al_, 1, 2, 0, mode_, tu_lo(&o))
  CHECK(NS(NULL, t, nr, 0.1, A, l, g, gr) == SMX_E_INVALID_ARG, "NULL logits");
  CHECK(NS(x, NULL, nr, 0.1, A, l, g, gr) == SMX_E_INVALID_ARG, "NULL targets");
  CHECK(NS(x, t, NULL, 0.1, A, l, g, gr) == SMX_E_INVALID_ARG, "NULL norms");
  CHECK(NS(x, t, nr, 0.1, A, NULL, g, gr) == SMX_E_INVALID_ARG, "NULL loss");
  CHECK(NS(x, t, nr, -0.1, A, l, g, gr) == SMX_E_INVALID_ARG, "alpha < 0");
  CHECK(NS(x, t, nr, NAN, A, l, g, gr) == SMX_E_INVALID_ARG, "alpha NaN");
  CHECK(NS(x, t, nr, INFINITY, A, l, g, gr) == SMX_E_INVALID_ARG, "alpha inf");
  CHECK(NS(x, t, nr, 0.1, (smx_noisy_mode)3, l, g, gr) == SMX_E_INVALID_ARG, "bad mode");
  CHECK(NS(x, t, nr, 0.1, A, l, g, l) == SMX_E_INVALID_ARG, "grad_norms over the loss");
  CHECK(NS(x, t, nr, 0.1, A, l, g, x) == SMX_E_INVALID_ARG, "grad_norms over the logits");
  CHECK(NS(x, t, nr, 0.1, A, l, g, nr) == SMX_E_INVALID_ARG, "grad_norms over the norms");
  float bad[3] = { NAN, -1.0f, INFINITY };
  for (int k = 0; k < 3; k++) {
    nr[1] = bad[k];
    CHECK(NS(x, t, nr, 0.1, A, l, g, gr) == SMX_E_INVALID_ARG, "norm %g", (double)bad[k]);
  }
  t[1] = 4;
  nr[1] = 1;
  CHECK(NS(x, t, nr, 0.1, A, l, g, gr) == SMX_E_INVALID_ARG, "target out of range");
  o.e.reduction = (smx_reduction)7;
  t[1] = 2;
  CHECK(NS(x, t, nr, 0.1, A, l, g, gr) == SMX_E_INVALID_ARG, "bad reduction");
  CHECK(l[0] == 7 && g[0] == 5.0f && gr[0] == 6, "nothing written");
  o.e.reduction = SMX_REDUCTION_MEAN;
  /* FREE reads no norms; an ignored row's norm is not read */
  CHECK(NS(x, t, NULL, 0.1, SMX_NOISY_FREE, l, g, gr) == SMX_OK, "free without norms");
  nr[1] = NAN;
  t[1] = -100;
  CHECK(NS(x, t, nr, 0.1, A, l, g, gr) == SMX_OK && gr[1] == 0, "ignored row's norm");
#undef NS
  CHECK(smx_noisy_softmax_loss_f32(x, 4, NULL, NULL, l, NULL, 4, NULL, 0, 4, 0.1, 1, 2, 0, A, tu_lo(&o)) == SMX_OK &&
            isnan(l[0]),
        "rows = 0, MEAN: NaN");
}

/* calls large enough for the thread pool: 1 and 4 threads, bitwise */
static void threaded(tu_rng *rng) {
  enum { R = 64, C = 1000 };
  static float x[R * C], g1[R * C], g4[R * C];
  static int64_t t[R];
  float nr[R], l1[R], l4[R], r1[R], r4[R];
  for (size_t i = 0; i < (size_t)R * C; i++) x[i] = 2.0f * tu_normal(rng);
  for (size_t r = 0; r < R; r++) t[r] = (int64_t)((r * 7 + 3) % C), nr[r] = 10.0f;
  tu_loss_opts o = TU_LOSS_OPTS_INIT;
  o.e.reduction = SMX_REDUCTION_NONE;
  for (int mode = 0; mode < 3; mode++) {
    o.o.threads = 1;
    CHECK(smx_noisy_softmax_loss_f32(x, C, t, nr, l1, g1, C, r1, R, C, 0.2, 5, 6, 0, (smx_noisy_mode)mode, tu_lo(&o)) ==
              SMX_OK, "threaded 1");
    o.o.threads = 4;
    CHECK(smx_noisy_softmax_loss_f32(x, C, t, nr, l4, g4, C, r4, R, C, 0.2, 5, 6, 0, (smx_noisy_mode)mode, tu_lo(&o)) ==
              SMX_OK, "threaded 4");
    CHECK(!memcmp(l1, l4, sizeof l1) && !memcmp(g1, g4, sizeof g1) && !memcmp(r1, r4, sizeof r1),
          "mode %d: 4 threads differ", mode);
  }
  /* in pieces: rows 20.. with row_offset 20 draw the whole call's noise (bitwise) */
  static float gp[R * C];
  float lp[R], rp[R];
  o.o.threads = 1;
  CHECK(smx_noisy_softmax_loss_f32(x + 20 * C, C, t + 20, nr + 20, lp, gp, C, rp, R - 20, C, 0.2, 5, 6, 20,
                                   SMX_NOISY_AMPLITUDE, tu_lo(&o)) == SMX_OK &&
            !memcmp(lp, l1 + 20, (R - 20) * sizeof(float)) && !memcmp(gp, g1 + 20 * C, (R - 20) * C * sizeof(float)) &&
            !memcmp(rp, r1 + 20, (R - 20) * sizeof(float)),
        "row_offset: the pieces differ from the whole");
  CHECK(smx_noisy_softmax_loss_f32(x + 20 * C, C, t + 20, nr + 20, lp, NULL, C, NULL, R - 20, C, 0.2, 5, 6, 0,
                                   SMX_NOISY_AMPLITUDE, tu_lo(&o)) == SMX_OK &&
            memcmp(lp, l1 + 20, (R - 20) * sizeof(float)),
        "row_offset 0 on the piece: other noise");
  /* in place over the logits */
  static float xc[R * C];
  memcpy(xc, x, sizeof x);
  o.o.threads = 1;
  CHECK(smx_noisy_softmax_loss_f32(xc, C, t, nr, l4, xc, C, r4, R, C, 0.2, 5, 6, 0, SMX_NOISY_AMPLITUDE, tu_lo(&o)) == SMX_OK &&
            !memcmp(l1, l4, sizeof l1) && !memcmp(g1, xc, sizeof g1),
        "in place differs");
}

int main(void) {
  tu_isa_start(3);
  tu_rng rng = { 2017 };
  cases(&rng, tu_isa_names[tu_isa_at]);
  if (tu_isa_once) {
    noise();
    alpha_zero(&rng);
    specials();
    errors();
    threaded(&rng);
  }
  return tu_finish("test_noisy_softmax");
}
