/*
 * The losses on softmax outputs (include/smx/smx_losses.h: focal, spherical
 * Z-loss, InfoNCE / CLIP, soft Dice): f32 and f64 losses and gradients
 * against long-double references at every ISA, every reduction and a few
 * parameters; the f64 gradients against central finite differences of the
 * f64 losses; thread-count independence (bitwise); the focal gradient in
 * place; focal f64 on confident rows (1 - p_t down to 1e-130); bad targets
 * and arguments refused with nothing written.
 */
#include <string.h>

#include "../common/test_isa.h"

#define EPS_F 0x1p-23
#define EPS_D 0x1p-52
#define MAXR 12
#define MAXC 300

typedef long double ld_t;

/* ------------------------------------------------ long-double references */

static ld_t lse_row(const double *x, size_t n, size_t stride, ld_t T) {
  ld_t m = -INFINITY, d = 0.0L;
  for (size_t j = 0; j < n; j++) if ((ld_t)x[j * stride] > m) m = x[j * stride];
  for (size_t j = 0; j < n; j++) d += expl(((ld_t)x[j * stride] - m) / T);
  return m / T + logl(d);
}

/* focal: loss of one row, gradient (s = 1) into g */
static ld_t focal_row(const double *x, size_t n, size_t t, double gamma, const double *alpha, ld_t *g) {
  ld_t lse = lse_row(x, n, 1, 1.0L), lp = (ld_t)x[t] - lse, pt = expl(lp), q = -expm1l(lp);
  ld_t a = alpha ? (ld_t)alpha[t] : 1.0L, qg = gamma == 0.0 ? 1.0L : powl(q, (ld_t)gamma);
  ld_t t1 = (gamma == 0.0 || pt == 0.0L) ? 0.0L : (ld_t)gamma * pt * qg * (q > 0.0L ? lp / q : -1.0L);
  ld_t k = a * (qg - t1);
  for (size_t j = 0; j < n; j++) g[j] = k * (expl((ld_t)x[j] - lse) - (j == t ? 1.0L : 0.0L));
  return -a * qg * lp;
}

static ld_t softplusl(ld_t u) { return u > 0 ? u + log1pl(expl(-u)) : log1pl(expl(u)); }

static ld_t zl_row(const double *x, size_t n, size_t t, double a, double b, ld_t *g) {
  ld_t s1 = 0, s2 = 0, D = (ld_t)n;
  for (size_t j = 0; j < n; j++) { s1 += x[j]; s2 += (ld_t)x[j] * x[j]; }
  ld_t mu = s1 / D, sd = sqrtl(s2 / D - mu * mu), z = ((ld_t)x[t] - mu) / sd, u = (ld_t)a * ((ld_t)b - z);
  ld_t sg = 1.0L / (1.0L + expl(-u));
  for (size_t k = 0; k < n; k++)
    g[k] = -sg / sd * ((k == t ? 1.0L : 0.0L) - 1.0L / D - z * (((ld_t)x[k] - mu) / sd) / D);
  return softplusl(u) / (ld_t)a;
}

/* reduction of per-row losses (NONE: into out[r]) and the gradient's scale */
static ld_t reduce_rows(const ld_t *l, const int *keep, size_t rows, smx_reduction red, ld_t *out, ld_t *scale) {
  ld_t sum = 0.0L;
  size_t cnt = 0;
  for (size_t r = 0; r < rows; r++) {
    if (!keep[r]) { if (out) out[r] = 0.0L; continue; }
    cnt++;
    sum += l[r];
    if (out) out[r] = l[r];
  }
  *scale = red == SMX_REDUCTION_MEAN ? 1.0L / (ld_t)cnt : 1.0L;
  return red == SMX_REDUCTION_MEAN ? sum / (ld_t)cnt : sum;
}

/* InfoNCE over R x C (ld = C), full gradient; out: rows values for NONE */
static ld_t nce_ref(const double *s, size_t R, size_t C, const int64_t *t, double T, int sym, smx_reduction red,
                    ld_t *out, ld_t *g) {
  ld_t l[MAXR], sc;
  int keep[MAXR];
  for (size_t i = 0; i < R * C; i++) g[i] = 0.0L;
  for (size_t r = 0; r < R; r++) {
    int64_t k = t ? t[r] : (int64_t)r;
    keep[r] = k != -100;
    l[r] = 0;
    if (!keep[r]) continue;
    ld_t a = lse_row(s + r * C, C, 1, T) - (ld_t)s[r * C + k] / T;
    l[r] = a;
    if (sym) l[r] = (a + lse_row(s + k, R, C, T) - (ld_t)s[r * C + k] / T) / 2;
  }
  ld_t tot = reduce_rows(l, keep, R, red, out, &sc);
  ld_t w = sym ? sc / 2 : sc;
  for (size_t r = 0; r < R; r++) {
    if (!keep[r]) continue;
    size_t k = t ? (size_t)t[r] : r;
    ld_t lr = lse_row(s + r * C, C, 1, T), lc = lse_row(s + k, R, C, T);
    for (size_t c = 0; c < C; c++) g[r * C + c] += w / T * (expl((ld_t)s[r * C + c] / T - lr) - (c == k));
    if (sym)
      for (size_t q = 0; q < R; q++) g[q * C + k] += w / T * (expl((ld_t)s[q * C + k] / T - lc) - (q == r));
  }
  return tot;
}

static ld_t dice_wmax;   /* max_c |A_c| + |B_c| of the last dice_ref: the gradient's error scale */

/* soft Dice over R x C with one-hot (t) or soft (soft) targets; out: C values for NONE */
static ld_t dice_ref(const double *x, size_t R, size_t C, const int64_t *t, const double *soft, double sm,
                     smx_reduction red, ld_t *out, ld_t *g) {
  static ld_t P[MAXR * MAXC], G[MAXR * MAXC];
  ld_t S[MAXC] = { 0 }, I[MAXC] = { 0 }, U[MAXC] = { 0 }, w[MAXC];
  for (size_t r = 0; r < R; r++) {
    int keep = !t || t[r] != -100;
    ld_t lse = lse_row(x + r * C, C, 1, 1.0L);
    for (size_t c = 0; c < C; c++) {
      P[r * C + c] = keep ? expl((ld_t)x[r * C + c] - lse) : 0.0L;
      G[r * C + c] = t ? (keep && (int64_t)c == t[r] ? 1.0L : 0.0L) : (ld_t)soft[r * C + c];
      S[c] += P[r * C + c];
      I[c] += P[r * C + c] * G[r * C + c];
      U[c] += G[r * C + c];
    }
  }
  ld_t kappa = red == SMX_REDUCTION_MEAN ? 1.0L / (ld_t)C : 1.0L, tot = 0.0L;
  dice_wmax = 0.0L;
  for (size_t c = 0; c < C; c++) {
    ld_t den = S[c] + U[c] + sm, d = (2 * I[c] + sm) / den;
    if (out) out[c] = 1.0L - d;
    tot += 1.0L - d;
    w[c] = kappa * d / den;   /* + B_c G */
    S[c] = -2.0L * kappa / den;
    if (fabsl(w[c]) - S[c] > dice_wmax) dice_wmax = fabsl(w[c]) - S[c];
  }
  for (size_t r = 0; r < R; r++) {
    int keep = !t || t[r] != -100;
    ld_t dot = 0.0L;
    for (size_t c = 0; c < C; c++) dot += P[r * C + c] * (w[c] + S[c] * G[r * C + c]);
    for (size_t c = 0; c < C; c++)
      g[r * C + c] = keep ? P[r * C + c] * (w[c] + S[c] * G[r * C + c] - dot) : 0.0L;
  }
  return red == SMX_REDUCTION_MEAN ? tot * kappa : tot;
}

/* ------------------------------------------------------------- the cases */

typedef enum { L_FOCAL, L_ZL, L_NCE, L_DICE_HARD, L_DICE_SOFT, L_COUNT } loss_kind;
static const char *const names[L_COUNT] = { "focal", "spherical_z", "info_nce", "dice", "dice_soft" };

typedef struct lcase {
  loss_kind kind;
  size_t rows, cols;
  double p1, p2;   /* gamma / a / T / smooth; b / symmetric */
  int use_alpha;
  smx_reduction red;
} lcase;

static double X[MAXR * MAXC], SOFT[MAXR * MAXC], ALPHA[MAXC];
static float XF[MAXR * MAXC], SOFTF[MAXR * MAXC], ALPHAF[MAXC];
static int64_t TG[MAXR];

static smx_status call_f64(const lcase *c, const double *x, const smx_options *o, double *loss, double *grad) {
  size_t R = c->rows, C = c->cols;
  switch (c->kind) {
  case L_FOCAL: return smx_focal_loss_f64(x, C, TG, c->use_alpha ? ALPHA : NULL, loss, grad, C, R, C, c->p1, o);
  case L_ZL: return smx_spherical_z_loss_f64(x, C, TG, loss, grad, C, R, C, c->p1, c->p2, o);
  case L_NCE: {
    smx_options on = *o;   /* InfoNCE's temperature is the options' */
    on.temperature = c->p1;
    return smx_info_nce_f64(x, C, c->use_alpha ? TG : NULL, loss, grad, C, R, C, (int)c->p2, &on);
  }
  case L_DICE_HARD: return smx_dice_loss_f64(x, C, TG, NULL, 0, loss, grad, C, R, C, c->p1, o);
  default: return smx_dice_loss_f64(x, C, NULL, SOFT, C, loss, grad, C, R, C, c->p1, o);
  }
}

static smx_status call_f32(const lcase *c, const float *x, const smx_options *o, float *loss, float *grad) {
  size_t R = c->rows, C = c->cols;
  switch (c->kind) {
  case L_FOCAL: return smx_focal_loss_f32(x, C, TG, c->use_alpha ? ALPHAF : NULL, loss, grad, C, R, C, c->p1, o);
  case L_ZL: return smx_spherical_z_loss_f32(x, C, TG, loss, grad, C, R, C, c->p1, c->p2, o);
  case L_NCE: {
    smx_options on = *o;   /* InfoNCE's temperature is the options' */
    on.temperature = c->p1;
    return smx_info_nce_f32(x, C, c->use_alpha ? TG : NULL, loss, grad, C, R, C, (int)c->p2, &on);
  }
  case L_DICE_HARD: return smx_dice_loss_f32(x, C, TG, NULL, 0, loss, grad, C, R, C, c->p1, o);
  default: return smx_dice_loss_f32(x, C, NULL, SOFTF, C, loss, grad, C, R, C, c->p1, o);
  }
}

/* reference loss (out: the NONE values) and gradient of the reduced loss, on inputs x */
static ld_t reference(const lcase *c, const double *x, const double *soft, ld_t *out, ld_t *g) {
  size_t R = c->rows, C = c->cols;
  if (c->kind == L_NCE) return nce_ref(x, R, C, c->use_alpha ? TG : NULL, c->p1, (int)c->p2, c->red, out, g);
  if (c->kind == L_DICE_HARD) return dice_ref(x, R, C, TG, NULL, c->p1, c->red, out, g);
  if (c->kind == L_DICE_SOFT) return dice_ref(x, R, C, NULL, soft, c->p1, c->red, out, g);
  ld_t l[MAXR] = { 0 }, sc = 1;
  int keep[MAXR] = { 0 };
  for (size_t r = 0; r < R; r++) {
    keep[r] = TG[r] != -100;
    l[r] = 0;
    if (!keep[r]) { for (size_t j = 0; j < C; j++) g[r * C + j] = 0; continue; }
    l[r] = c->kind == L_FOCAL ? focal_row(x + r * C, C, (size_t)TG[r], c->p1, c->use_alpha ? ALPHA : NULL, g + r * C)
                              : zl_row(x + r * C, C, (size_t)TG[r], c->p1, c->p2, g + r * C);
  }
  ld_t tot = reduce_rows(l, keep, R, c->red, out, &sc);
  for (size_t i = 0; i < R * C; i++) g[i] *= sc;
  return tot;
}

static void make_data(tu_rng *rng, const lcase *c) {
  size_t R = c->rows, C = c->cols;
  for (size_t i = 0; i < R * C; i++) {
    XF[i] = 3.0f * tu_normal(rng);
    X[i] = XF[i];
    SOFTF[i] = (float)tu_uniform(rng);
    SOFT[i] = SOFTF[i];
  }
  for (size_t j = 0; j < C; j++) ALPHAF[j] = (float)tu_uniform(rng), ALPHA[j] = ALPHAF[j];
  for (size_t r = 0; r < R; r++) {
    if (c->kind == L_NCE) TG[r] = (int64_t)((r * 7 + 3) % C);   /* distinct when C coprime to 7 or R small */
    else TG[r] = (int64_t)(tu_next(rng) % C);
  }
  if (R > 2 && c->kind != L_DICE_SOFT) TG[1] = -100;
}

static size_t nloss(const lcase *c) {
  if (c->red != SMX_REDUCTION_NONE) return 1;
  return (c->kind == L_DICE_HARD || c->kind == L_DICE_SOFT) ? c->cols : c->rows;
}

static void check_case(const lcase *c, const char *isa) {
  static ld_t gref[MAXR * MAXC], gr32[MAXR * MAXC];
  static double g64[MAXR * MAXC], xp[MAXR * MAXC];
  static float g32[MAXR * MAXC];
  ld_t out[MAXC], out32[MAXC];
  double l64[MAXC];
  float l32[MAXC];
  size_t R = c->rows, C = c->cols, nl = nloss(c);
  tu_loss_opts o = TU_LOSS_OPTS_INIT;
  o.e.reduction = c->red;
  /* f64 against the reference on the same inputs */
  ld_t tot = reference(c, X, SOFT, out, gref);
  CHECK(call_f64(c, X, tu_lo(&o), l64, g64) == SMX_OK, "%s f64 status", names[c->kind]);
  ld_t gmax = 0;
  for (size_t i = 0; i < R * C; i++) if (fabsl(gref[i]) > gmax) gmax = fabsl(gref[i]);
  if (c->kind == L_DICE_HARD || c->kind == L_DICE_SOFT) gmax += dice_wmax;   /* the header's dice bound */
  for (size_t i = 0; i < nl; i++) {
    ld_t want = c->red == SMX_REDUCTION_NONE ? out[i] : tot;
    CHECK(fabsl(l64[i] - want) <= 64 * EPS_D * fmaxl(1.0L, fabsl(want)), "%s %s f64 loss %zu: %.17g vs %.17Lg",
          names[c->kind], isa, i, l64[i], want);
  }
  for (size_t i = 0; i < R * C; i++)
    CHECK(fabsl(g64[i] - gref[i]) <= 64 * EPS_D * (fabsl(gref[i]) + gmax) + 1e-300,
          "%s %s f64 grad %zu: %.17g vs %.17Lg", names[c->kind], isa, i, g64[i], gref[i]);
  /* f32 against the reference on the float inputs (widened exactly) */
  CHECK(call_f32(c, XF, tu_lo(&o), l32, g32) == SMX_OK, "%s f32 status", names[c->kind]);
  tot = reference(c, X, SOFT, out32, gr32);
  for (size_t i = 0; i < nl; i++) {
    ld_t want = c->red == SMX_REDUCTION_NONE ? out32[i] : tot;
    CHECK(fabsl(l32[i] - want) <= 16 * EPS_F * fmaxl(1.0L, fabsl(want)), "%s %s f32 loss %zu: %.9g vs %.12Lg",
          names[c->kind], isa, i, (double)l32[i], want);
  }
  for (size_t i = 0; i < R * C; i++)
    CHECK(fabsl(g32[i] - gr32[i]) <= 16 * EPS_F * (fabsl(gr32[i]) + gmax) + 0x1p-126,
          "%s %s f32 grad %zu: %.9g vs %.12Lg", names[c->kind], isa, i, (double)g32[i], gr32[i]);
  /* threads: bitwise the same */
  static float g32b[MAXR * MAXC];
  float l32b[MAXC];
  o.o.threads = 4;
  CHECK(call_f32(c, XF, tu_lo(&o), l32b, g32b) == SMX_OK, "threads status");
  CHECK(!memcmp(l32, l32b, nl * sizeof(float)) && !memcmp(g32, g32b, R * C * sizeof(float)),
        "%s %s: 4 threads differ", names[c->kind], isa);
  o.o.threads = 1;
  /* finite differences of the f64 loss (reduced: SUM/MEAN; NONE: summed) */
  if (C * R > 64) return;
  memcpy(xp, X, R * C * sizeof(double));
  for (size_t i = 0; i < R * C; i++) {
    double h = 1e-6 * fmax(1.0, fabs(X[i])), lp[MAXC], lm[MAXC], sp = 0, sm = 0;
    xp[i] = X[i] + h;
    call_f64(c, xp, tu_lo(&o), lp, NULL);
    xp[i] = X[i] - h;
    call_f64(c, xp, tu_lo(&o), lm, NULL);
    xp[i] = X[i];
    for (size_t k = 0; k < nl; k++) { sp += lp[k]; sm += lm[k]; }
    double fd = (sp - sm) / (2 * h);
    CHECK(fabs(fd - g64[i]) <= 1e-6 * (1.0 + fabs(g64[i])), "%s FD %zu: %.12g vs %.12g", names[c->kind], i, fd,
          g64[i]);
  }
}

static void cases(tu_rng *rng, const char *isa) {
  static const size_t shapes[][2] = { { 1, 1 }, { 3, 5 }, { 6, 9 }, { 12, 300 }, { 5, 11 } };
  for (int k = 0; k < L_COUNT; k++) {
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
      for (int red = 0; red < 3; red++) {
        lcase c = { (loss_kind)k, shapes[s][0], shapes[s][1], 0, 0, 0, (smx_reduction)red };
        if (k == L_ZL && c.cols < 2) continue;                 /* sigma = 0: NaN by definition */
        if (k == L_NCE && c.rows > c.cols) continue;
        for (int v = 0; v < 3; v++) {
          switch (k) {
          case L_FOCAL: c.p1 = v == 0 ? 0.0 : v == 1 ? 2.0 : 0.5; c.use_alpha = v == 2; break;
          case L_ZL: c.p1 = v == 0 ? 1.0 : v == 1 ? 0.3 : 4.0; c.p2 = v == 0 ? 0.0 : v == 1 ? 5.0 : -1.0; break;
          case L_NCE: c.p1 = v == 1 ? 0.07 : 1.0; c.p2 = v != 0; c.use_alpha = v == 2; break;
          default: c.p1 = v == 0 ? 1.0 : v == 1 ? 1e-5 : 0.0; break;
          }
          if (k == L_NCE && c.red == SMX_REDUCTION_MEAN && c.rows < 3 && c.use_alpha) continue;
          make_data(rng, &c);
          check_case(&c, isa);
        }
      }
    }
  }
}

static void errors(void) {
  float x[12] = { 0 }, g[12], l[3] = { 7, 7, 7 };
  int64_t t[3] = { 0, 4, 1 };   /* 4 is out of range for 4 columns */
  tu_loss_opts o = TU_LOSS_OPTS_INIT;
  g[0] = 5.0f;
  CHECK(smx_focal_loss_f32(x, 4, t, NULL, l, g, 4, 3, 4, 2.0, tu_lo(&o)) == SMX_E_INVALID_ARG, "bad target");
  CHECK(smx_spherical_z_loss_f32(x, 4, t, l, g, 4, 3, 4, 1.0, 0.0, tu_lo(&o)) == SMX_E_INVALID_ARG, "bad target");
  CHECK(smx_dice_loss_f32(x, 4, t, NULL, 0, l, g, 4, 3, 4, 1.0, tu_lo(&o)) == SMX_E_INVALID_ARG, "bad target");
  CHECK(l[0] == 7 && g[0] == 5.0f, "nothing written");
  t[1] = 2;
  CHECK(smx_focal_loss_f32(x, 4, t, NULL, l, g, 4, 3, 4, -1.0, tu_lo(&o)) == SMX_E_INVALID_ARG, "gamma < 0");
  CHECK(smx_spherical_z_loss_f32(x, 4, t, l, g, 4, 3, 4, 0.0, 0.0, tu_lo(&o)) == SMX_E_INVALID_ARG, "a = 0");
  CHECK(smx_dice_loss_f32(x, 4, t, x, 4, l, g, 4, 3, 4, 1.0, tu_lo(&o)) == SMX_E_INVALID_ARG, "both target kinds");
  o.o.temperature = -1.0;
  CHECK(smx_info_nce_f32(x, 4, NULL, l, g, 4, 3, 4, 1, tu_lo(&o)) == SMX_E_INVALID_ARG, "T < 0");
  o.o.temperature = 2.0;   /* the losses without a temperature refuse one */
  CHECK(smx_focal_loss_f32(x, 4, t, NULL, l, g, 4, 3, 4, 2.0, tu_lo(&o)) == SMX_E_INVALID_ARG, "focal T = 2");
  o.o.temperature = 0.0;
  o.e.label_smoothing = 0.1;   /* cross-entropy's alone */
  CHECK(smx_dice_loss_f32(x, 4, t, NULL, 0, l, g, 4, 3, 4, 1.0, tu_lo(&o)) == SMX_E_INVALID_ARG, "dice smoothing");
  o.e.label_smoothing = 0.0;
  o.o.flags = SMX_FLAG_MASKED_ROW_NAN;
  CHECK(smx_spherical_z_loss_f32(x, 4, t, l, g, 4, 3, 4, 1.0, 0.0, tu_lo(&o)) == SMX_E_INVALID_ARG, "masked flag");
  o.o.flags = 0;
  int64_t dup[3] = { 1, 1, 0 };
  CHECK(smx_info_nce_f32(x, 4, dup, l, g, 4, 3, 4, 1, tu_lo(&o)) == SMX_E_INVALID_ARG, "shared positive");
  CHECK(smx_info_nce_f32(x, 4, NULL, l, x, 4, 3, 4, 1, tu_lo(&o)) == SMX_E_INVALID_ARG, "symmetric in place");
  CHECK(smx_focal_loss_f32(x, 3, t, NULL, l, g, 4, 3, 4, 2.0, tu_lo(&o)) == SMX_E_INVALID_ARG, "ld < cols");
  CHECK(smx_focal_loss_f32(x, 4, t, NULL, NULL, g, 4, 3, 4, 2.0, tu_lo(&o)) == SMX_E_INVALID_ARG, "NULL loss");
  o.e.reduction = (smx_reduction)7;
  CHECK(smx_focal_loss_f32(x, 4, t, NULL, l, g, 4, 3, 4, 2.0, tu_lo(&o)) == SMX_E_INVALID_ARG, "bad reduction");
  CHECK(l[0] == 7 && g[0] == 5.0f, "nothing written");
}

/* Calls large enough for the thread pool (the grid keeps small ones on the
 * calling thread): every loss, 1 and 4 threads, bitwise equal. */
static void threaded(tu_rng *rng) {
  enum { R = 64, C = 1000 };
  static float x[R * C], g1[R * C], g4[R * C], soft[R * C];
  static int64_t t[R];
  float l1[C], l4[C];
  for (size_t i = 0; i < (size_t)R * C; i++) x[i] = 2.0f * tu_normal(rng), soft[i] = (float)tu_uniform(rng);
  for (size_t r = 0; r < R; r++) t[r] = (int64_t)((r * 7 + 3) % C);
  tu_loss_opts o = TU_LOSS_OPTS_INIT;
  for (int k = 0; k < 5; k++) {
    for (int th = 1; th <= 4; th += 3) {
      float *g = th == 1 ? g1 : g4, *l = th == 1 ? l1 : l4;
      o.o.threads = th;
      smx_status s = k == 0   ? smx_focal_loss_f32(x, C, t, NULL, l, g, C, R, C, 2.0, tu_lo(&o))
                     : k == 1 ? smx_spherical_z_loss_f32(x, C, t, l, g, C, R, C, 1.0, 0.5, tu_lo(&o))
                     : k == 2 ? smx_info_nce_f32(x, C, t, l, g, C, R, C, 1, tu_lo(&o))
                     : k == 3 ? smx_dice_loss_f32(x, C, t, NULL, 0, l, g, C, R, C, 1.0, tu_lo(&o))
                              : smx_dice_loss_f32(x, C, NULL, soft, C, l, g, C, R, C, 1.0, tu_lo(&o));
      CHECK(s == SMX_OK, "threaded %d status", k);
    }
    CHECK(l1[0] == l4[0] && !memcmp(g1, g4, sizeof g1), "loss %d: 4 threads differ", k);
  }
}

static void in_place(tu_rng *rng) {
  float x[40], g[40], l, l2;
  int64_t t[4] = { 1, 9, 0, 5 };
  for (int i = 0; i < 40; i++) x[i] = 2.0f * tu_normal(rng);
  CHECK(smx_focal_loss_f32(x, 10, t, NULL, &l, g, 10, 4, 10, 2.0, NULL) == SMX_OK, "focal");
  CHECK(smx_focal_loss_f32(x, 10, t, NULL, &l2, x, 10, 4, 10, 2.0, NULL) == SMX_OK, "focal in place");
  CHECK(l == l2 && !memcmp(g, x, sizeof g), "in-place focal differs");
}

/* focal f64 on confident rows, p_t = 1 - q with q down to 1e-130: the gradient is K p_j with K ~ q^gamma,
 * so q must keep its relative precision. The kernels' online reference need not be the row's max (the vector
 * ones shift it by whole steps; the scalar one past its first 64-entry block), and log p_t formed from it was
 * off by eps absolutely: q = 1e-35 came out as 5e-17 and the gradient 1e37 times the bound (op driver soak). */
static void confident(tu_rng *rng, const char *isa) {
  static const size_t lens[] = { 10, 33, 300 };
  static const double spikes[] = { 3.0, 20.0, 40.0, 82.6, 300.0 };
  static double x[300], g[300];
  for (size_t li = 0; li < 3; li++) {
    for (size_t si = 0; si < 5; si++) {
      for (int gi = 0; gi < 2; gi++) {
        size_t n = lens[li], t = n == 10 ? 7 : n - 5;   /* n = 300: in the scalar kernel's last block */
        double gamma = gi ? 2.0 : 0.5, loss;
        for (size_t j = 0; j < n; j++) x[j] = 0.1 * tu_normal(rng);
        x[t] = spikes[si];
        int64_t tg = (int64_t)t;
        CHECK(smx_focal_loss_f64(x, n, &tg, NULL, &loss, g, n, 1, n, gamma, NULL) == SMX_OK, "confident focal");
        /* long double, against x_t: log p_t = -log1p(rest) keeps q = 1 - p_t however small */
        ld_t rest = 0.0L;
        for (size_t j = 0; j < n; j++) if (j != t) rest += expl((ld_t)x[j] - x[t]);
        ld_t lp = -log1pl(rest), q = -expm1l(lp), pt = expl(lp), qg = powl(q, (ld_t)gamma);
        ld_t k = qg - (ld_t)gamma * pt * qg * (lp / q), lref = -qg * lp;
        double worst = 0.0;
        for (size_t j = 0; j < n; j++) {
          ld_t r = j == t ? -k * q : k * expl((ld_t)x[j] - x[t] + lp);
          double e = (double)(fabsl((ld_t)g[j] - r) / (64.0L * EPS_D * (fabsl(r) + fabsl(k)) + 0x1p-1074L));
          if (e > worst) worst = e;
        }
        CHECK(worst <= 1.0, "%s focal f64 n=%zu x_t=%g gamma=%g (q=%.3Lg): gradient %.3g of the bound", isa, n,
              x[t], gamma, q, worst);
        CHECK(fabsl((ld_t)loss - lref) <= 64.0L * EPS_D * fabsl(lref) + 0x1p-1074L, "%s focal f64 n=%zu x_t=%g: loss %.17g, ref %.17Lg",
              isa, n, x[t], loss, lref);
      }
    }
  }
}

int main(void) {
  tu_isa_start(3);
  tu_rng rng = { 12345 };
  cases(&rng, tu_isa_names[tu_isa_at]);
  confident(&rng, tu_isa_names[tu_isa_at]);
  if (tu_isa_once) {
    errors();
    threaded(&rng);
    in_place(&rng);
  }
  return tu_finish("test_losses");
}
