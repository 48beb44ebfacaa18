/*
 * loss_soak: random calls of the losses of include/smx/smx_losses.h (focal,
 * spherical Z, InfoNCE / CLIP, soft Dice, knowledge distillation, and the
 * Fenchel-Young losses of sparsemax / entmax15 / entmax) for a bounded time.
 *
 * Each case, from one 64-bit seed: a loss, f32 or f64, rows (0..40) x cols
 * (1..250) logits with a padded leading dimension, rows of ordinary, shifted
 * (far negative or positive), huge, tied or constant values, special values
 * (NaN, +-inf, all -inf rows, a -inf target), targets with ignored rows, the
 * reduction, grad_scale, the loss's parameters, the gradient NULL, separate
 * or in place where allowed. It runs at 1, 2 and 7 threads (loss and
 * gradient bitwise equal) and is checked against a long-double reference
 * with the header's bound (the losses' common bound: f32 loss 16 eps max(1,
 * |ref|), gradient 16 eps (|ref_j| + G) + FLT_MIN; f64 64 eps; KD: its double
 * arithmetic rounded once) and its special-value rules; the Fenchel-Young
 * losses, whose map has its own bound in the op driver, are checked for
 * their rules and properties (loss >= 0, gradient rows p - e_t summing to 0,
 * the special rows). One case in six is a bad argument instead (a bad option
 * or parameter, a target out of range, NULL pointers, ld or ldg < cols, a
 * gradient overlapping the logits other than exactly): SMX_E_INVALID_ARG and
 * nothing written.
 *
 *   loss_soak [--seconds S] [--seed S] [--case 0xSEED] [--no-known]
 *
 * SMX_SOAK_SECONDS sets the time when --seconds is not given (default 15).
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

#include "../../common/soak_run.h"
#include "smx/smx.h"

/* The options of a loss call, smx_options with its loss extension beside it (as tests/common/test_util.h):
 * tu_lo() points the extension at the copy's own e just before the call. */
typedef struct tu_loss_opts { smx_options o; smx_loss_ext e; } tu_loss_opts;
#define TU_LOSS_OPTS_INIT { { SMX_ALGO_AUTO, 0.0, 0u, 0, NULL }, SMX_LOSS_EXT_INIT }
static const smx_options *tu_lo(tu_loss_opts *t) {
  t->o.loss = &t->e;
  return &t->o;
}

typedef long double ld;

static double uin(tu_rng *r, double lo, double hi) { return lo + (hi - lo) * tu_uniform(r); }

enum { L_FOCAL, L_ZLOSS, L_NCE, L_DICE, L_KD, L_SPARSEMAX, L_ENTMAX15, L_ENTMAX, L_N };
static const char *const lname[L_N] = { "focal", "spherical_z", "info_nce", "dice", "kd", "sparsemax_loss",
                                        "entmax15_loss", "entmax_loss" };

/* ------------------------------------------------------------- the case */
typedef struct lcase {
  int kind, f64, red, sym, standardize, soft, inplace, with_grad, threads_unused;
  size_t rows, cols, ld, ldg, ldt;
  double gamma, za, zb, temp, smooth, alpha_ent, grad_scale;
  int has_alpha, null_targets;
  int64_t ignore;
  double *x;        /* rows x ld, as stored (f32 values when !f64) */
  double *x2;       /* KD's teacher, Dice's soft targets: rows x ld */
  double *alpha;    /* focal: cols */
  int64_t *t;       /* rows */
  char desc[400];
} lcase;

static int verbose, use_known = 1;
static uint64_t cur;
static int cur_fail;
static const char *cur_desc;

static void fail(const char *fmt, ...) {
  if (!cur_fail) fprintf(stderr, "FAIL case 0x%016" PRIx64 ": %s\n", cur, cur_desc);
  if (cur_fail < (verbose ? 30 : 4)) {
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "  ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
  }
  cur_fail++;
}

static void *xmalloc(size_t n) {
  void *p = malloc(n ? n : 1);
  if (!p) { perror("malloc"); exit(2); }
  return p;
}

/* one row of values */
static void gen_row(tu_rng *r, double *x, size_t n, int f64) {
  double s = pow(10.0, uin(r, -1, 0.8)), off = 0;
  int k = (int)tu_below(r, 10);
  if (k == 0) off = (tu_chance(r, 0.7) ? -1 : 1) * pow(10.0, uin(r, 1, f64 ? 4 : 3.5));
  for (size_t j = 0; j < n; j++) x[j] = off + tu_gauss(r) * s;
  if (k == 1) for (size_t j = 0; j < n; j++) x[j] = tu_chance(r, 0.5) ? x[0] : x[j];   /* ties */
  if (k == 2) for (size_t j = 0; j < n; j++) x[j] = 1.25;                             /* constant */
  if (k == 3 && n) x[tu_below(r, n)] = uin(r, 20, 60);                                    /* a spike */
  if (!f64) for (size_t j = 0; j < n; j++) x[j] = (double)(float)x[j];
}

static int finite_row(const double *x, size_t n) {
  for (size_t j = 0; j < n; j++) if (!isfinite(x[j])) return 0;
  return 1;
}

/* ----------------------------------------------------------- references */
/* log sum exp(x / T) as m / T + log1p(the sum without one maximal entry): the terms far below the max keep
 * their digits (a focal p_t of 1 - 1e-30 has q = 1e-30, not 0) */
static ld lse_l(const double *x, size_t n, size_t stride, ld T) {
  ld m = -INFINITY, d = 0;
  size_t jm = 0;
  for (size_t j = 0; j < n; j++) if ((ld)x[j * stride] > m) { m = x[j * stride]; jm = j; }
  if (m == -INFINITY || m != m) return m;
  for (size_t j = 0; j < n; j++) if (j != jm) d += expl(((ld)x[j * stride] - m) / T);
  return m / T + log1pl(d);
}

/* What a row must give: a value within the bound (BOUND), NaN, +inf, or anything (the header is silent). */
enum { E_BOUND, E_NAN, E_PINF, E_ANY };

typedef struct expect {
  ld *loss;       /* rows (NONE), cols (Dice NONE), or 1 */
  unsigned char *lcls;
  size_t nloss;
  ld *grad;       /* rows x cols */
  unsigned char *gcls;   /* per element */
  ld gscale;      /* G of the bound */
} expect;

/* row classes of the softmax-family special rules: a NaN, a +inf or no entry above -inf */
static int special_row(const double *x, size_t n) {
  int above = 0;
  for (size_t j = 0; j < n; j++) {
    if (x[j] != x[j] || x[j] == INFINITY) return 1;
    if (x[j] > -INFINITY) above = 1;
  }
  return !above;
}

static ld row_gmag;   /* the size of the terms of the current row's gradient (before its scale) */
static void focal_ref(const lcase *c, size_t r, ld *loss, unsigned char *lc, ld *g, unsigned char *gc) {
  const double *x = c->x + r * c->ld;
  size_t n = c->cols, t = (size_t)c->t[r];
  for (size_t j = 0; j < n; j++) { g[j] = 0; gc[j] = E_BOUND; }
  *lc = E_BOUND;
  if (n == 1 && finite_row(x, n)) { *loss = 0; return; }   /* cols = 1: loss 0, grad 0 (finite row) */
  if (special_row(x, n)) {
    *loss = NAN; *lc = E_NAN;
    for (size_t j = 0; j < n; j++) { g[j] = NAN; gc[j] = E_NAN; }
    return;
  }
  /* log p_t directly: (x_t - m) - log1p(the rest), so that p_t = 1 - 1e-30 keeps q */
  ld m = -INFINITY, dd = 0;
  size_t jm = 0;
  for (size_t j = 0; j < n; j++) if ((ld)x[j] > m) { m = x[j]; jm = j; }
  for (size_t j = 0; j < n; j++) if (j != jm) dd += expl((ld)x[j] - m);
  ld lse = m + log1pl(dd), lp = ((ld)x[t] - m) - log1pl(dd), pt = expl(lp), q = -expm1l(lp);
  ld a = c->has_alpha ? (ld)c->alpha[t] : 1, qg = c->gamma == 0 ? 1 : powl(q, (ld)c->gamma);
  ld t1 = (c->gamma == 0 || pt == 0) ? 0 : (ld)c->gamma * pt * qg * (q > 0 ? lp / q : -1);
  ld k = a * (qg - t1);
  for (size_t j = 0; j < n; j++) g[j] = j == t ? -k * q : k * expl((ld)x[j] - lse);   /* p_t - 1 = -q, kept */
  row_gmag = fabsl(k);   /* the one-hot term's size: p_t - 1 is formed at eps absolutely (the header's G) */
  if (x[t] == -INFINITY) { *loss = a == 0 ? 0 : INFINITY; *lc = a == 0 ? E_BOUND : E_PINF; return; }
  *loss = -a * qg * lp;
}

static ld softplus_l(ld u) { return u > 0 ? u + log1pl(expl(-u)) : log1pl(expl(u)); }

static void zloss_ref(const lcase *c, size_t r, ld *loss, unsigned char *lc, ld *g, unsigned char *gc) {
  const double *x = c->x + r * c->ld;
  size_t n = c->cols, t = (size_t)c->t[r];
  ld s1 = 0, s2 = 0, D = (ld)n;
  for (size_t j = 0; j < n; j++) s1 += x[j];
  ld mu = s1 / D;
  for (size_t j = 0; j < n; j++) s2 += ((ld)x[j] - mu) * ((ld)x[j] - mu);
  ld var = s2 / D, sd = sqrtl(var), ms = 0;
  for (size_t j = 0; j < n; j++) ms += (ld)x[j] * x[j];
  ms /= D;
  *lc = E_BOUND;
  for (size_t j = 0; j < n; j++) gc[j] = E_BOUND;
  if (!finite_row(x, n) || !(sd > 0) || !isfinite(sd)) {
    *loss = NAN; *lc = E_NAN;
    for (size_t j = 0; j < n; j++) { g[j] = NAN; gc[j] = E_NAN; }
    /* sigma = 0 exactly in the reference; f32 / f64 moments may not see it: the header's bound needs
     * sigma^2 >= 2^-20 mean(x^2) anyway */
    if (finite_row(x, n)) { *lc = E_ANY; for (size_t j = 0; j < n; j++) gc[j] = E_ANY; }
    return;
  }
  ld z = ((ld)x[t] - mu) / sd, u = (ld)c->za * ((ld)c->zb - z), sg = 1 / (1 + expl(-u));
  ld zmax = 0;
  for (size_t k = 0; k < n; k++) {
    g[k] = -sg / sd * ((k == t ? 1 : 0) - 1 / D - z * (((ld)x[k] - mu) / sd) / D);
    if (fabsl(((ld)x[k] - mu) / sd) > zmax) zmax = fabsl(((ld)x[k] - mu) / sd);
  }
  /* the terms of grad_k cancel to 0 exactly on some rows (D = 2): the bound's G is their size */
  row_gmag = sg / sd * (1 + 1 / D + fabsl(z) * zmax / D);
  *loss = softplus_l(u) / (ld)c->za;
  if (!c->f64 && var < 0x1p-20L * ms) {   /* f32 outside the documented bound: one-pass moments lose digits */
    *lc = E_ANY;
    for (size_t j = 0; j < n; j++) gc[j] = E_ANY;
  }
}

/* InfoNCE rows: a_r, and the row part of the gradient (unscaled); the column part is added by nce_all */
static void nce_all(const lcase *c, expect *e, ld *rowloss, unsigned char *rowcls, const int *keep, ld s_row) {
  size_t R = c->rows, C = c->cols;
  ld T = (ld)c->temp;
  for (size_t r = 0; r < R; r++) {
    const double *x = c->x + r * c->ld;
    ld *g = e->grad + r * C;
    unsigned char *gc = e->gcls + r * C;
    for (size_t j = 0; j < C; j++) { g[j] = 0; gc[j] = E_BOUND; }
    rowcls[r] = E_BOUND;
    rowloss[r] = 0;
    if (!keep[r]) continue;
    size_t t = c->null_targets ? r : (size_t)c->t[r];
    if (special_row(x, C)) {
      rowloss[r] = NAN; rowcls[r] = E_NAN;
      for (size_t j = 0; j < C; j++) { g[j] = NAN; gc[j] = E_NAN; }
      continue;
    }
    ld lse = lse_l(x, C, 1, T);
    rowloss[r] = lse - (ld)x[t] / T;
    if (x[t] == -INFINITY) { rowloss[r] = INFINITY; rowcls[r] = E_PINF; }
    ld rest = 0;
    for (size_t j = 0; j < C; j++) if (j != t) rest += expl((ld)x[j] / T - lse);
    for (size_t j = 0; j < C; j++) g[j] += s_row / T * (j == t ? -rest : expl((ld)x[j] / T - lse));
    if (fabsl(s_row / T) > e->gscale) e->gscale = fabsl(s_row / T);   /* the one-hot term's size (the header's G) */
  }
  if (!c->sym) return;
  for (size_t r = 0; r < R; r++) {   /* column terms: (lse_q L[q][c] - L[r][c]), c = t_r */
    if (!keep[r]) continue;
    size_t t = c->null_targets ? r : (size_t)c->t[r];
    ld lse = lse_l(c->x + t, R, c->ld, T);
    int colspecial = 0;
    for (size_t q = 0; q < R; q++) {
      double v = c->x[q * c->ld + t];
      if (v != v || v == INFINITY) colspecial = 1;
    }
    if (lse == -INFINITY) colspecial = 1;
    if (colspecial) {   /* the column's term NaN, and its gradient column */
      rowloss[r] = NAN; rowcls[r] = E_NAN;
      for (size_t q = 0; q < R; q++) { e->grad[q * C + t] = NAN; e->gcls[q * C + t] = E_NAN; }
      continue;
    }
    ld b = lse - (ld)c->x[r * c->ld + t] / T;
    if (rowcls[r] == E_BOUND) rowloss[r] = (rowloss[r] + b) / 2;
    else if (rowcls[r] == E_PINF) rowloss[r] = INFINITY;
    ld rest = 0;
    for (size_t q = 0; q < R; q++) if (q != r) rest += expl((ld)c->x[q * c->ld + t] / T - lse);
    for (size_t q = 0; q < R; q++)
      e->grad[q * C + t] += s_row / T * (q == r ? -rest : expl((ld)c->x[q * c->ld + t] / T - lse));
  }
}

/* ---------------------------------------------------------------- calls */
static smx_status call(const lcase *c, int threads, const void *x, void *loss, void *grad, size_t ldg, int64_t *tgt,
                       const void *x2, const tu_loss_opts *lopt_in, int red_override) {
  tu_loss_opts lo = lopt_in ? *lopt_in : (tu_loss_opts)TU_LOSS_OPTS_INIT;
  if (!lopt_in) {
    lo.e.reduction = (smx_reduction)c->red;
    lo.e.ignore_index = c->ignore;
    lo.e.grad_scale = c->grad_scale;
  }
  if (!lopt_in || lopt_in->o.threads >= 0) lo.o.threads = threads;   /* (a bad-argument case's threads stay) */
  if (red_override >= 0) lo.e.reduction = (smx_reduction)red_override;
  tu_loss_opts xo = TU_LOSS_OPTS_INIT;
  xo.e.reduction = lo.e.reduction;
  xo.e.ignore_index = lo.e.ignore_index;
  xo.e.grad_scale = lo.e.grad_scale;
  xo.o.threads = lo.o.threads;
  tu_loss_opts to = lo;   /* InfoNCE and KD: their temperature is the options' (KD: no grad_scale in its reference) */
  to.o.temperature = c->temp;
  if (c->kind == L_KD) to.e.grad_scale = 0.0;
  const int64_t *t = c->null_targets ? NULL : tgt;
  if (c->f64) {
    const double *xd = x;
    switch (c->kind) {
      case L_FOCAL: return smx_focal_loss_f64(xd, c->ld, t, c->has_alpha ? c->alpha : NULL, loss, grad, ldg, c->rows,
                                              c->cols, c->gamma, tu_lo(&lo));
      case L_ZLOSS: return smx_spherical_z_loss_f64(xd, c->ld, t, loss, grad, ldg, c->rows, c->cols, c->za, c->zb, tu_lo(&lo));
      case L_NCE: return smx_info_nce_f64(xd, c->ld, t, loss, grad, ldg, c->rows, c->cols, c->sym, tu_lo(&to));
      case L_DICE: return smx_dice_loss_f64(xd, c->ld, c->soft ? NULL : t, c->soft ? x2 : NULL, c->ldt, loss, grad, ldg,
                                            c->rows, c->cols, c->smooth, tu_lo(&lo));
      case L_KD: return smx_kd_loss_f64(xd, c->ld, x2, c->ldt, loss, grad, ldg, c->rows, c->cols, c->standardize, tu_lo(&to));
      case L_SPARSEMAX: return smx_sparsemax_loss_f64(xd, c->ld, t, loss, grad, ldg, c->rows, c->cols, tu_lo(&xo));
      case L_ENTMAX15: return smx_entmax15_loss_f64(xd, c->ld, t, loss, grad, ldg, c->rows, c->cols, tu_lo(&xo));
      default: return smx_entmax_loss_f64(xd, c->ld, t, loss, grad, ldg, c->rows, c->cols, c->alpha_ent, tu_lo(&xo));
    }
  }
  const float *xf = x;
  float *al = NULL;
  if (c->kind == L_FOCAL && c->has_alpha) {
    al = xmalloc(c->cols * sizeof *al);
    for (size_t j = 0; j < c->cols; j++) al[j] = (float)c->alpha[j];
  }
  smx_status s;
  switch (c->kind) {
    case L_FOCAL: s = smx_focal_loss_f32(xf, c->ld, t, al, loss, grad, ldg, c->rows, c->cols, c->gamma, tu_lo(&lo)); break;
    case L_ZLOSS: s = smx_spherical_z_loss_f32(xf, c->ld, t, loss, grad, ldg, c->rows, c->cols, c->za, c->zb, tu_lo(&lo)); break;
    case L_NCE: s = smx_info_nce_f32(xf, c->ld, t, loss, grad, ldg, c->rows, c->cols, c->sym, tu_lo(&to)); break;
    case L_DICE: s = smx_dice_loss_f32(xf, c->ld, c->soft ? NULL : t, c->soft ? x2 : NULL, c->ldt, loss, grad, ldg,
                                       c->rows, c->cols, c->smooth, tu_lo(&lo)); break;
    case L_KD: s = smx_kd_loss_f32(xf, c->ld, x2, c->ldt, loss, grad, ldg, c->rows, c->cols, c->standardize, tu_lo(&to)); break;
    case L_SPARSEMAX: s = smx_sparsemax_loss_f32(xf, c->ld, t, loss, grad, ldg, c->rows, c->cols, tu_lo(&xo)); break;
    case L_ENTMAX15: s = smx_entmax15_loss_f32(xf, c->ld, t, loss, grad, ldg, c->rows, c->cols, tu_lo(&xo)); break;
    default: s = smx_entmax_loss_f32(xf, c->ld, t, loss, grad, ldg, c->rows, c->cols, c->alpha_ent, tu_lo(&xo)); break;
  }
  free(al);
  return s;
}

/* Z(x) of KD: (x - mean) / (unbiased std + 1e-7), or x */
static void kd_z(const double *x, size_t n, int standardize, ld *z, ld *mu_out, ld *d_out, ld *sd_out) {
  ld mu = 0, ss = 0;
  for (size_t j = 0; j < n; j++) mu += x[j];
  mu /= (ld)n;
  for (size_t j = 0; j < n; j++) ss += ((ld)x[j] - mu) * ((ld)x[j] - mu);
  ld sd = n > 1 ? sqrtl(ss / (ld)(n - 1)) : 0, d = sd + 1e-7L;
  for (size_t j = 0; j < n; j++) z[j] = standardize ? ((ld)x[j] - mu) / d : (ld)x[j];
  *mu_out = mu;
  *d_out = d;
  *sd_out = sd;
}

static ld *kd_mag;   /* per row: the magnitude of the terms of T^2 KL */
static void kd_ref(const lcase *c, size_t r, ld *loss, unsigned char *lc, ld *g, unsigned char *gc, ld *scratch) {
  size_t n = c->cols;
  const double *s = c->x + r * c->ld, *t = c->x2 + r * c->ldt;
  ld T = (ld)c->temp, *zs = scratch, *zt = scratch + n, mu, d, sd, mu2, d2, sd2;
  *lc = E_BOUND;
  for (size_t j = 0; j < n; j++) gc[j] = E_BOUND;
  if (!finite_row(s, n) || !finite_row(t, n)) {   /* NaN: loss NaN; the gradient is not specified */
    *loss = NAN; *lc = E_NAN;
    for (size_t j = 0; j < n; j++) { g[j] = 0; gc[j] = E_ANY; }
    int nan = 0;
    for (size_t j = 0; j < n; j++) nan |= s[j] != s[j] || t[j] != t[j];
    if (!nan) *lc = E_ANY;
    return;
  }
  kd_z(s, n, c->standardize, zs, &mu, &d, &sd);
  kd_z(t, n, c->standardize, zt, &mu2, &d2, &sd2);
  ld ls = -INFINITY, lt = -INFINITY;
  for (size_t j = 0; j < n; j++) { if (zs[j] / T > ls) ls = zs[j] / T; if (zt[j] / T > lt) lt = zt[j] / T; }
  ld as = 0, at = 0;
  for (size_t j = 0; j < n; j++) { as += expl(zs[j] / T - ls); at += expl(zt[j] / T - lt); }
  ls += logl(as);
  lt += logl(at);
  ld kl = 0;
  for (size_t j = 0; j < n; j++) {
    ld lpt = zt[j] / T - lt, lps = zs[j] / T - ls;
    kl += expl(lpt) * (lpt - lps);
  }
  *loss = T * T * kl;
  /* the KL's terms cancel: its error is relative to their magnitude (kept for the bound in e->lmag) */
  ld mag = 0;
  for (size_t j = 0; j < n; j++) {
    ld lpt = zt[j] / T - lt, lps = zs[j] / T - ls;
    mag += expl(lpt) * (fabsl(lpt) + fabsl(lps) + 1);
  }
  kd_mag[r] = T * T * mag;
  /* dL/dz_s = T (p_s - p_t); through Z's VJP when standardising */
  ld sg = 0, sgu = 0;
  for (size_t j = 0; j < n; j++) {
    g[j] = T * (expl(zs[j] / T - ls) - expl(zt[j] / T - lt));
    sg += g[j];
    sgu += g[j] * ((ld)s[j] - mu);
  }
  /* T (p_s - p_t): each p_j carries smx.h's softmax error, (4 + |t_j| / 2) eps relatively, t_j = z_j / T - max */
  ld gm = 0, ms = -INFINITY, mt = -INFINITY;
  for (size_t j = 0; j < n; j++) { if (zs[j] > ms) ms = zs[j]; if (zt[j] > mt) mt = zt[j]; }
  for (size_t j = 0; j < n; j++) {
    ld ps = expl(zs[j] / T - ls), pt = expl(zt[j] / T - lt);
    ld a = T * (ps * (1 + fabsl(zs[j] - ms) / T) + pt * (1 + fabsl(zt[j] - mt) / T));
    if (a > gm) gm = a;
  }
  /* the VJP's terms before they cancel (cols = 2: to about 0), and Z's conditioning: x - mean of a row far
   * from 0 carries eps |mean| in double, |mean| / sigma relatively in z (the header promises no better) */
  row_gmag = c->standardize ? gm / d * 3 * (1 + (fabsl(mu) + fabsl(mu2)) / fminl(d, d2)) : gm;
  if (c->standardize && n > 1) {
    for (size_t j = 0; j < n; j++) {
      ld u = (ld)s[j] - mu;
      ld dsd = sd > 0 ? u / ((ld)(n - 1) * sd) : 0;   /* d sigma / d x_j */
      g[j] = (g[j] - sg / (ld)n) / d - sgu / (d * d) * dsd;
    }
  }
}

static void dice_ref(const lcase *c, const int *keep, expect *e, ld s_g) {
  size_t R = c->rows, C = c->cols;
  ld *P = xmalloc((R * C + 1) * sizeof *P), *I = calloc(C + 1, sizeof(ld)), *S = calloc(C + 1, sizeof(ld));
  ld *U = calloc(C + 1, sizeof(ld)), *Dc = calloc(C + 1, sizeof(ld)), *W = xmalloc((C + 1) * sizeof(ld));
  int nan = 0;
  for (size_t r = 0; r < R; r++) {
    const double *x = c->x + r * c->ld;
    if (!keep[r]) continue;
    if (special_row(x, C)) { nan = 1; continue; }
    ld l = lse_l(x, C, 1, 1);
    for (size_t j = 0; j < C; j++) {
      ld p = expl((ld)x[j] - l), gt = c->soft ? (ld)c->x2[r * c->ldt + j] : (ld)((size_t)c->t[r] == j);
      P[r * C + j] = p;
      I[j] += p * gt;
      S[j] += p;
      U[j] += gt;
    }
  }
  ld kappa = c->red == SMX_REDUCTION_MEAN ? 1 / (ld)C : 1, sum = 0, amax = 0;
  for (size_t j = 0; j < C; j++) {
    ld den = S[j] + U[j] + (ld)c->smooth;
    Dc[j] = den == 0 ? 1 : (2 * I[j] + (ld)c->smooth) / den;
    sum += 1 - Dc[j];
    if (den > 0) {
      ld a = fabsl(kappa * Dc[j] / den) + fabsl(2 * kappa / den);
      if (a > amax) amax = a;
    }
  }
  for (size_t i = 0; i < e->nloss; i++) e->lcls[i] = nan ? E_NAN : E_BOUND;
  if (c->red == SMX_REDUCTION_NONE) for (size_t j = 0; j < C; j++) e->loss[j] = nan ? NAN : 1 - Dc[j];
  else e->loss[0] = nan ? NAN : c->red == SMX_REDUCTION_MEAN ? sum / (ld)C : sum;
  for (size_t r = 0; r < R; r++) {
    ld *g = e->grad + r * C;
    unsigned char *gc = e->gcls + r * C;
    for (size_t j = 0; j < C; j++) { g[j] = 0; gc[j] = nan ? E_NAN : E_BOUND; }
    if (!keep[r] || nan) {
      if (nan && !keep[r]) for (size_t j = 0; j < C; j++) gc[j] = E_ANY;   /* an ignored row: 0, or NaN with the rest */
      continue;
    }
    ld pw = 0;
    for (size_t j = 0; j < C; j++) {
      ld den = S[j] + U[j] + (ld)c->smooth, gt = c->soft ? (ld)c->x2[r * c->ldt + j] : (ld)((size_t)c->t[r] == j);
      W[j] = den > 0 ? -kappa * (2 * gt - Dc[j]) / den : 0;
      pw += P[r * C + j] * W[j];
    }
    for (size_t j = 0; j < C; j++) g[j] = s_g * P[r * C + j] * (W[j] - pw);
  }
  e->gscale = amax * fabsl(s_g);
  free(P); free(I); free(S); free(U); free(Dc); free(W);
}

/* Fills e for the losses with references (not the Fenchel-Young ones). */
static void reference(const lcase *c, expect *e) {
  size_t R = c->rows, C = c->cols;
  int *keep = xmalloc((R + 1) * sizeof *keep);
  size_t cnt = 0;
  for (size_t r = 0; r < R; r++) {
    keep[r] = c->kind == L_KD || (c->kind == L_DICE && c->soft) || c->null_targets || c->t[r] != c->ignore;
    cnt += (size_t)keep[r];
  }
  ld s = c->grad_scale != 0 ? (ld)c->grad_scale : 1;
  ld s_row = c->red == SMX_REDUCTION_MEAN ? (cnt ? s / (ld)cnt : 0) : s;
  e->gscale = 0;
  if (c->kind == L_DICE) {
    dice_ref(c, keep, e, s);
    free(keep);
    return;
  }
  ld *rl = xmalloc((R + 1) * sizeof *rl), *scratch = xmalloc((2 * C + 2) * sizeof *scratch);
  unsigned char *rc = xmalloc(R + 1);
  if (c->kind == L_NCE) {
    if (c->sym) s_row /= 2;
    nce_all(c, e, rl, rc, keep, s_row);
  } else {
    for (size_t r = 0; r < R; r++) {
      ld *g = e->grad + r * C;
      unsigned char *gc = e->gcls + r * C;
      if (!keep[r]) {
        rl[r] = 0; rc[r] = E_BOUND;
        for (size_t j = 0; j < C; j++) { g[j] = 0; gc[j] = E_BOUND; }
        continue;
      }
      row_gmag = 0;
      if (c->kind == L_FOCAL) focal_ref(c, r, &rl[r], &rc[r], g, gc);
      else if (c->kind == L_ZLOSS) zloss_ref(c, r, &rl[r], &rc[r], g, gc);
      else kd_ref(c, r, &rl[r], &rc[r], g, gc, scratch);
      /* KD: the gradient of the reduced loss (MEAN over every row); the others: grad_scale as well */
      ld k = c->kind == L_KD ? (c->red == SMX_REDUCTION_MEAN && R ? 1 / (ld)R : 1) : s_row;
      for (size_t j = 0; j < C; j++) g[j] *= k;
      if (isfinite(row_gmag) && fabsl(k) * row_gmag > e->gscale) e->gscale = fabsl(k) * row_gmag;
    }
  }
  if (c->red == SMX_REDUCTION_NONE) {
    for (size_t r = 0; r < R; r++) { e->loss[r] = rl[r]; e->lcls[r] = rc[r]; }
  } else {
    ld sum = 0;
    int any = 0;
    for (size_t r = 0; r < R; r++) {
      if (!keep[r]) continue;
      if (rc[r] == E_ANY) any = 1;
      sum += rl[r];
    }
    ld v = c->red == SMX_REDUCTION_SUM ? sum : (c->kind == L_KD ? (R ? sum / (ld)R : (ld)NAN) : (cnt ? sum / (ld)cnt : (ld)NAN));
    if (R == 0 && c->red == SMX_REDUCTION_SUM) v = 0;
    e->loss[0] = v;
    e->lcls[0] = any ? E_ANY : v != v ? E_NAN : v == INFINITY ? E_PINF : E_BOUND;
  }
  free(rl); free(rc); free(scratch); free(keep);
}

/* ------------------------------------------------------------ the run */
static long n_cases, n_fail, n_bad, n_special, n_known;

static double getv(const lcase *c, const void *p, size_t i) { return c->f64 ? ((const double *)p)[i] : (double)((const float *)p)[i]; }

static void make_case(uint64_t seed, lcase *c, tu_rng *r) {
  memset(c, 0, sizeof *c);
  c->kind = (int)tu_below(r, L_N);
  c->f64 = tu_chance(r, 0.5);
  c->rows = tu_chance(r, 0.03) ? 0 : 1 + tu_below(r, 40);
  c->cols = tu_chance(r, 0.05) ? 1 : 2 + tu_below(r, 249);
  c->red = (int)tu_below(r, 3);
  static const double gs[] = { 0, 0, 1, 0.5, -3, 1e-3 };
  c->grad_scale = gs[tu_below(r, 6)];
  c->ignore = tu_chance(r, 0.7) ? -100 : (int64_t)tu_below(r, 8);
  static const double gam[] = { 0, 0.5, 1, 2, 5 };
  c->gamma = gam[tu_below(r, 5)];
  c->has_alpha = tu_chance(r, 0.4);
  c->za = uin(r, 0.5, 5);
  c->zb = uin(r, -2, 3);
  static const double temps[] = { 0.07, 0.5, 1, 3 };
  c->temp = c->kind == L_KD ? (double)(1 + tu_below(r, 4)) : temps[tu_below(r, 4)];
  static const double sm[] = { 0, 1, 1e-5 };
  c->smooth = sm[tu_below(r, 3)];
  static const double ae[] = { 1.2, 1.5, 1.7, 2, 3 };
  c->alpha_ent = ae[tu_below(r, 5)];
  c->standardize = tu_chance(r, 0.5);
  c->soft = c->kind == L_DICE && tu_chance(r, 0.3);
  c->sym = c->kind == L_NCE && tu_chance(r, 0.4);
  c->null_targets = c->kind == L_NCE && tu_chance(r, 0.3);
  if (c->kind == L_KD) c->cols = c->cols < 2 ? 2 : c->cols;
  if ((c->sym || c->null_targets) && c->rows > c->cols) c->rows = c->cols;
  c->ld = c->cols + (tu_chance(r, 0.5) ? tu_below(r, 7) : 0);
  c->ldt = c->cols + (tu_chance(r, 0.5) ? tu_below(r, 5) : 0);
  c->with_grad = tu_chance(r, 0.8);
  int inplace_ok = c->kind != L_DICE && !(c->kind == L_NCE && c->sym);
  c->inplace = c->with_grad && inplace_ok && tu_chance(r, 0.2);
  c->ldg = c->inplace ? c->ld : c->cols + (tu_chance(r, 0.5) ? tu_below(r, 6) : 0);
  size_t R = c->rows, C = c->cols;
  c->x = xmalloc((R * c->ld + 1) * sizeof(double));
  c->x2 = xmalloc((R * c->ldt + 1) * sizeof(double));
  c->alpha = xmalloc((C + 1) * sizeof(double));
  c->t = xmalloc((R + 1) * sizeof(int64_t));
  for (size_t i = 0; i < R * c->ld; i++) c->x[i] = 0;
  for (size_t q = 0; q < R; q++) gen_row(r, c->x + q * c->ld, C, c->f64);
  for (size_t j = 0; j < C; j++) c->alpha[j] = tu_chance(r, 0.1) ? 0 : uin(r, 0.1, 2);
  for (size_t i = 0; i < R * c->ldt; i++) c->x2[i] = 0;
  for (size_t q = 0; q < R; q++) {   /* KD's teacher, or Dice's soft targets (rows of probabilities) */
    double *t = c->x2 + q * c->ldt, sum = 0;
    if (c->kind == L_KD) gen_row(r, t, C, c->f64);
    else {
      for (size_t j = 0; j < C; j++) sum += t[j] = tu_chance(r, 0.5) ? 0 : tu_uniform(r);
      for (size_t j = 0; j < C; j++) t[j] = sum > 0 ? t[j] / sum : 1.0 / (double)C;
      if (!c->f64) for (size_t j = 0; j < C; j++) t[j] = (double)(float)t[j];
    }
  }
  /* targets: distinct for the symmetric InfoNCE (a column is the positive of one row at most) */
  for (size_t q = 0; q < R; q++) c->t[q] = (int64_t)tu_below(r, C);
  if (c->sym)
    for (size_t q = 0; q < R; q++) {
      size_t a = q + tu_below(r, C - q);   /* a partial Fisher-Yates draw of distinct columns */
      c->t[q] = (int64_t)a;
      for (size_t p = 0; p < q; p++) if (c->t[p] == (int64_t)a) c->t[q] = (int64_t)q;
    }
  if (c->sym) {   /* make them distinct for sure: a permutation prefix */
    size_t *perm = xmalloc(C * sizeof *perm);
    for (size_t j = 0; j < C; j++) perm[j] = j;
    for (size_t q = 0; q < R; q++) {
      size_t a = q + tu_below(r, C - q), tmp = perm[q];
      perm[q] = perm[a];
      perm[a] = tmp;
      c->t[q] = (int64_t)perm[q];
    }
    free(perm);
  }
  for (size_t q = 0; q < R; q++) if (tu_chance(r, 0.12)) c->t[q] = c->ignore;
  for (size_t q = 0; q < R; q++) if (c->t[q] != c->ignore && (c->t[q] < 0 || c->t[q] >= (int64_t)C)) c->t[q] = 0;
  /* special values in a few rows */
  if (tu_chance(r, 0.2) && R) {
    n_special++;
    size_t k = 1 + tu_below(r, 3);
    for (size_t s = 0; s < k; s++) {
      size_t q = tu_below(r, R);
      double *x = c->x + q * c->ld;
      switch (tu_below(r, 5)) {
        case 0: x[tu_below(r, C)] = NAN; break;
        case 1: x[tu_below(r, C)] = INFINITY; break;
        case 2: for (size_t j = 0; j < C; j++) x[j] = -INFINITY; break;
        case 3: if (c->t[q] >= 0 && c->t[q] < (int64_t)C) x[c->t[q]] = -INFINITY; break;
        default: for (size_t j = 0; j < C; j++) if (tu_chance(r, 0.3)) x[j] = -INFINITY; break;
      }
    }
  }
  snprintf(c->desc, sizeof c->desc,
           "%s %s rows=%zu cols=%zu ld=%zu ldg=%zu red=%d gs=%g ignore=%lld grad=%d inplace=%d gamma=%g alpha=%d"
           " a=%g b=%g T=%g sym=%d diag=%d smooth=%g soft=%d alpha_ent=%g std=%d",
           lname[c->kind], c->f64 ? "f64" : "f32", R, C, c->ld, c->ldg, c->red, c->grad_scale, (long long)c->ignore,
           c->with_grad, c->inplace, c->gamma, c->has_alpha, c->za, c->zb, c->temp, c->sym, c->null_targets,
           c->smooth, c->soft, c->alpha_ent, c->standardize);
  (void)seed;
}

static void free_case(lcase *c) { free(c->x); free(c->x2); free(c->alpha); free(c->t); }

/* the stored form (f32 or f64) of n doubles */
static void *stored(const lcase *c, const double *x, size_t n) {
  void *p = xmalloc(n * (c->f64 ? 8 : 4));
  for (size_t i = 0; i < n; i++) {
    if (c->f64) ((double *)p)[i] = x[i];
    else ((float *)p)[i] = (float)x[i];
  }
  return p;
}

static size_t nloss_of(const lcase *c) {
  if (c->red != SMX_REDUCTION_NONE) return 1;
  return c->kind == L_DICE ? c->cols : c->rows;
}


/* Open library defects the soak still shows: a failing case that matches is counted as known. */
typedef struct known { const char *what; int (*match)(const lcase *c); } known;
static const known known_list[] = {
  { NULL, NULL },   /* none open: keep the list non-empty */
};
#define NKNOWN (sizeof known_list / sizeof known_list[0])
static long known_seen[NKNOWN];

static void check_values(const lcase *c, const void *loss, const void *grad, const expect *e) {
  double eps = c->f64 ? 0x1p-52 : 0x1p-23, k = c->f64 ? 64 : 16;
  if (c->kind == L_KD && !c->f64) k = 16;   /* double arithmetic rounded once: well inside */
  size_t R = c->rows, C = c->cols;
  for (size_t i = 0; i < e->nloss; i++) {
    double y = getv(c, loss, i);
    ld ref = e->loss[i];
    int ok;
    switch (e->lcls[i]) {
      case E_NAN: ok = y != y; break;
      case E_PINF: ok = y == INFINITY; break;
      case E_ANY: ok = 1; break;
      default: {
        ld scale = fmaxl(1, fabsl(ref));
        if (c->kind == L_KD) {   /* KD: relative to the magnitude of the KL's terms (the header's "relative arithmetic") */
          ld m = 0;
          for (size_t q = 0; q < c->rows; q++) m += kd_mag[q];
          scale = fmaxl(scale, e->nloss > 1 ? kd_mag[i] : c->red == SMX_REDUCTION_MEAN && c->rows ? m / (ld)c->rows : m);
        }
        ok = fabsl((ld)y - ref) <= (ld)(k * eps) * scale || (isinf(y) && isinf(ref) && (y > 0) == (ref > 0));
      }
    }
    if (!ok) fail("loss[%zu] = %.17g, want %s %.20Lg", i, y, e->lcls[i] == E_NAN ? "NaN" : e->lcls[i] == E_PINF ? "+inf" : "about", ref);
  }
  if (!grad) return;
  ld G = e->gscale;
  for (size_t i = 0; i < R * C; i++)
    if (e->gcls[i] == E_BOUND && isfinite(e->grad[i]) && fabsl(e->grad[i]) > G) G = fabsl(e->grad[i]);
  long bad = 0;
  for (size_t r = 0; r < R; r++)
    for (size_t j = 0; j < C; j++) {
      double y = getv(c, grad, r * c->ldg + j);
      ld ref = e->grad[r * C + j];
      int ok;
      switch (e->gcls[r * C + j]) {
        case E_NAN: ok = y != y; break;
        case E_PINF: ok = y == INFINITY; break;
        case E_ANY: ok = 1; break;
        default: ok = fabsl((ld)y - ref) <= (ld)(k * eps) * (fabsl(ref) + G) + (c->f64 ? 0 : (ld)FLT_MIN);
      }
      if (!ok && bad++ < 3) fail("grad[%zu][%zu] = %.17g, want %.20Lg (G %.3Lg)", r, j, y, ref, G);
    }
  if (bad > 3) fail("%ld gradient values wrong", bad);
}

/* The Fenchel-Young losses: their rules and properties (the map's values are the op driver's). */
static void check_fy(const lcase *c, const void *loss, const void *grad) {
  size_t R = c->rows, C = c->cols, cnt = 0;
  double eps = c->f64 ? 0x1p-52 : 0x1p-23;
  double s = c->grad_scale != 0 ? c->grad_scale : 1;
  for (size_t r = 0; r < R; r++) cnt += c->t[r] != c->ignore;
  double sr = c->red == SMX_REDUCTION_MEAN ? (cnt ? s / (double)cnt : 0) : s;
  int any_nan = 0, any_inf = 0;
  for (size_t r = 0; r < R; r++) {
    const double *x = c->x + r * c->ld;
    int ign = c->t[r] == c->ignore, nan = 0, kinf = 0, above = 0;
    for (size_t j = 0; j < C; j++) { nan |= x[j] != x[j]; kinf += x[j] == INFINITY; above |= x[j] > -INFINITY; }
    size_t t = ign ? 0 : (size_t)c->t[r];
    double lr = c->red == SMX_REDUCTION_NONE ? getv(c, loss, r) : 0;
    if (ign) {
      if (c->red == SMX_REDUCTION_NONE && lr != 0) fail("row %zu ignored: loss %g", r, lr);
      if (grad) for (size_t j = 0; j < C; j++) if (getv(c, grad, r * c->ldg + j) != 0) { fail("row %zu ignored: grad %zu nonzero", r, j); break; }
      continue;
    }
    if (nan) {   /* NaN: NaN loss and gradient */
      any_nan = 1;
      if (c->red == SMX_REDUCTION_NONE && lr == lr) fail("row %zu with a NaN: loss %g", r, lr);
      if (grad) for (size_t j = 0; j < C; j++) if (getv(c, grad, r * c->ldg + j) == getv(c, grad, r * c->ldg + j)) { fail("row %zu with a NaN: grad[%zu] not NaN", r, j); break; }
      continue;
    }
    if (kinf) { any_nan = 1; if (c->red == SMX_REDUCTION_NONE && lr == lr) fail("row %zu with +inf: loss %g, want NaN", r, lr); }
    else if (!above || x[t] == -INFINITY) {
      any_inf = 1;
      if (c->red == SMX_REDUCTION_NONE && lr != INFINITY) fail("row %zu (%s): loss %g, want +inf", r, above ? "target -inf" : "all -inf", lr);
    } else if (c->red == SMX_REDUCTION_NONE) {
      double mx = 0;
      for (size_t j = 0; j < C; j++) if (isfinite(x[j]) && fabs(x[j]) > mx) mx = fabs(x[j]);
      if (!(lr >= -16 * eps * fmax(1, mx)) || !isfinite(lr)) fail("row %zu: loss %g, want finite >= 0", r, lr);
    }
    if (grad && !kinf) {   /* p - e_t, times the scale: in [-|s|, |s|], summing to 0 (all -inf: -s e_t) */
      double sum = 0, asum = 0;
      for (size_t j = 0; j < C; j++) {
        double gj = getv(c, grad, r * c->ldg + j);
        if (!(fabs(gj) <= fabs(sr) * (1 + 8 * eps))) { fail("row %zu: grad[%zu] = %g outside [-|s|, |s|] (s %g)", r, j, gj, sr); break; }
        sum += gj;
        asum += fabs(gj);
      }
      if (above && fabs(sum) > (double)C * 4 * eps * (asum + fabs(sr))) fail("row %zu: gradient sums to %g (s %g)", r, sum, sr);
    }
  }
  if (c->red != SMX_REDUCTION_NONE) {
    double l = getv(c, loss, 0);
    if (any_nan && l == l) fail("a NaN row: reduced loss %g, want NaN", l);
    else if (!any_nan && any_inf && l != INFINITY) fail("a +inf row: reduced loss %g, want +inf", l);
    else if (!any_nan && !any_inf && cnt && !(l >= -1e-3)) fail("reduced loss %g", l);
    else if (!cnt && c->red == SMX_REDUCTION_MEAN && l == l) fail("every row ignored: MEAN %g, want NaN", l);
  }
}

/* a bad argument: refused with SMX_E_INVALID_ARG, nothing written */
static void bad_case(lcase *c, tu_rng *r, const void *x, const void *x2) {
  size_t R = c->rows, C = c->cols, es = c->f64 ? 8 : 4, nl = nloss_of(c) + 1;
  if (R < 2 || C < 2) return;
  size_t gcount = (R - 1) * c->ldg + C + 8;
  unsigned char *loss = xmalloc(nl * es), *grad = xmalloc(gcount * es);
  memset(loss, 0xa5, nl * es);
  memset(grad, 0xa5, gcount * es);
  int64_t *t = xmalloc(R * sizeof *t);
  memcpy(t, c->t, R * sizeof *t);
  void *xx = (void *)x;
  unsigned char *xcopy = NULL;
  tu_loss_opts lo = TU_LOSS_OPTS_INIT;
  lo.e.reduction = (smx_reduction)c->red;
  lo.e.ignore_index = c->ignore;
  lo.e.grad_scale = c->grad_scale;
  const tu_loss_opts *lop = NULL;
  void *g = grad;
  size_t ldg = c->ldg;
  const char *what = NULL;
  int fy = c->kind >= L_SPARSEMAX, kd = c->kind == L_KD, uses_t = !kd && !c->soft && !c->null_targets;
  lcase b = *c;
  switch (tu_below(r, 9)) {
    case 0: b.ld = C - 1; what = "ld < cols"; break;
    case 1: ldg = C - 1; what = "ldg < cols"; break;
    case 2:
      if (uses_t) {   /* (a value equal to ignore_index is a valid target) */
        int64_t v = tu_chance(r, 0.5) ? (int64_t)C : -5;
        if (v == c->ignore) v = v < 0 ? -6 : v + 1;
        t[tu_below(r, R)] = v;
        what = "target out of range";
      }
      break;
    case 3: xx = NULL; what = "NULL logits"; break;
    case 4: if (!kd) { lo.e.reduction = (smx_reduction)(3 + tu_below(r, 5)); lop = &lo; what = "bad reduction"; } break;
    case 5: if (!kd && !fy) { lo.e.grad_scale = tu_chance(r, 0.5) ? NAN : INFINITY; lop = &lo; what = "grad_scale NaN / inf"; } break;
    case 6:   /* the gradient one element into the logits: an overlap other than exactly */
      xcopy = xmalloc((R * c->ld + 2) * es);
      memcpy(xcopy, x, R * c->ld * es);
      xx = xcopy;
      g = xcopy + es;
      ldg = c->ld;
      what = "gradient overlapping the logits";
      break;
    case 7: if (!kd && !fy) { lo.o.threads = -1; lop = &lo; what = "threads -1"; } break;
    default:
      switch (c->kind) {
        case L_FOCAL: b.gamma = tu_chance(r, 0.5) ? -1 : NAN; what = "gamma < 0 or NaN"; break;
        case L_ZLOSS: if (tu_chance(r, 0.5)) b.za = tu_chance(r, 0.5) ? 0 : -1; else b.zb = NAN; what = "a <= 0 or b NaN"; break;
        case L_NCE: b.temp = tu_chance(r, 0.5) ? -1 : NAN; what = "temperature < 0 or NaN"; break;
        case L_DICE: b.smooth = tu_chance(r, 0.5) ? -1 : NAN; what = "smooth < 0 or NaN"; break;
        case L_KD: b.temp = tu_chance(r, 0.5) ? NAN : -2; what = "temperature < 0 or NaN"; break;
        case L_ENTMAX: b.alpha_ent = tu_chance(r, 0.5) ? 1 : NAN; what = "alpha <= 1 or NaN"; break;
        default: break;
      }
  }
  if (what) {
    if (!c->with_grad && (g == grad)) { g = grad; }   /* the bad cases always pass a gradient */
    smx_status s = call(&b, 1, xx, loss, g, ldg, t, x2, lop, -1);
    size_t changed = 0;
    for (size_t i = 0; i < nl * es; i++) changed += loss[i] != 0xa5;
    for (size_t i = 0; i < gcount * es; i++) changed += grad[i] != 0xa5;
    if (xcopy && memcmp(xcopy, x, R * c->ld * es) != 0) changed++;
    if (s != SMX_E_INVALID_ARG || changed) fail("%s: status %d (want SMX_E_INVALID_ARG), %zu bytes written", what, (int)s, changed);
    n_bad++;
  }
  free(loss); free(grad); free(t); free(xcopy);
}

static void run_case(uint64_t seed) {
  tu_rng r = { seed };
  lcase c;
  cur = seed;
  cur_fail = 0;
  make_case(seed, &c, &r);
  cur_desc = c.desc;
  n_cases++;
  size_t R = c.rows, C = c.cols, es = c.f64 ? 8 : 4, nl = nloss_of(&c);
  void *x = stored(&c, c.x, R * c.ld), *x2 = stored(&c, c.x2, R * c.ldt);
  if (tu_chance(&r, 1.0 / 6)) {
    bad_case(&c, &r, x, x2);
  } else {
    size_t gcount = R ? (R - 1) * c.ldg + C : 0;
    if (c.inplace) gcount = R * c.ld;
    unsigned char *l1 = xmalloc((nl + 1) * es), *l2 = xmalloc((nl + 1) * es);
    unsigned char *g1 = xmalloc((gcount + 1) * es), *g2 = xmalloc((gcount + 1) * es);
    static const int th[3] = { 1, 2, 7 };
    for (int k = 0; k < 3; k++) {
      unsigned char *l = k ? l2 : l1, *g = k ? g2 : g1;
      memset(l, 0xa5, (nl + 1) * es);
      memset(g, 0xa5, (gcount + 1) * es);
      void *xin = x;
      if (c.inplace) { memcpy(g, x, R * c.ld * es); xin = g; }
      smx_status s = call(&c, th[k], xin, l, c.with_grad ? g : NULL, c.ldg, c.t, x2, NULL, -1);
      if (s != SMX_OK) { fail("threads=%d: status %d", th[k], (int)s); break; }
      if (k == 0) continue;
      if (memcmp(l1, l2, nl * es) != 0 || (c.with_grad && memcmp(g1, g2, gcount * es) != 0))
        fail("threads=%d: loss or gradient differs bitwise from 1 thread", th[k]);
    }
    if (!cur_fail) {
      /* the gaps of the gradient's rows untouched (separate gradient only) */
      if (c.with_grad && !c.inplace)
        for (size_t q = 0; q + 1 < R; q++)
          for (size_t b = C * es; b < c.ldg * es; b++)
            if (g1[q * c.ldg * es + b] != 0xa5) { fail("gradient gap of row %zu written", q); q = R; break; }
      if (c.kind >= L_SPARSEMAX) {
        check_fy(&c, l1, c.with_grad ? g1 : NULL);
      } else {
        expect e;
        e.nloss = nl;
        e.loss = xmalloc((nl + 1) * sizeof(ld));
        e.lcls = xmalloc(nl + 1);
        e.grad = xmalloc((R * C + 1) * sizeof(ld));
        e.gcls = xmalloc(R * C + 1);
        kd_mag = xmalloc((R + 1) * sizeof *kd_mag);
        for (size_t q = 0; q <= R; q++) kd_mag[q] = 0;
        reference(&c, &e);
        check_values(&c, l1, c.with_grad ? g1 : NULL, &e);
        free(e.loss); free(e.lcls); free(e.grad); free(e.gcls); free(kd_mag);
        kd_mag = NULL;
      }
    }
    free(l1); free(l2); free(g1); free(g2);
  }
  if (cur_fail) {
    int k = -1;
    for (size_t i = 0; use_known && i < NKNOWN && k < 0; i++)
      if (known_list[i].match && known_list[i].match(&c)) k = (int)i;
    if (k >= 0) { n_known++; known_seen[k]++; fprintf(stderr, "  (known: %s)\n", known_list[k].what); }
    else { n_fail++; fprintf(stderr, "  replay: loss_soak --case 0x%016" PRIx64 "\n", seed); }
  }
  free(x); free(x2);
  free_case(&c);
}

int main(int argc, char **argv) {
  tu_soak_args a = TU_SOAK_ARGS_INIT;
  for (int i = 1; i < argc; i++) {
    if (tu_soak_arg(&a, argc, argv, &i)) continue;
    if (!strcmp(argv[i], "--no-known")) use_known = 0;
    else {
      fprintf(stderr, "usage: loss_soak [--seconds S] [--seed S] [--case 0xSEED] [--no-known]\n");
      return 2;
    }
  }
  tu_soak_defaults(&a);
  if (a.have_one) {
    verbose = 1;
    run_case(a.one);
    printf("case 0x%016" PRIx64 ": %s\n", a.one, cur_desc);
  } else {
    printf("loss_soak: seed 0x%016" PRIx64 ", %.0f s (replay the run: --seed 0x%016" PRIx64 ")\n", a.seed, a.seconds, a.seed);
    fflush(stdout);
    uint64_t s;
    for (tu_soak_loop l = tu_soak_loop_start(&a); tu_soak_loop_next(&l, &s);) run_case(s);
  }
  for (size_t i = 0; i < NKNOWN; i++)
    if (known_list[i].what) printf("known: %s: %s\n", known_list[i].what, known_seen[i] ? "seen" : "not seen in this run");
  printf("loss_soak: %ld cases (%ld with special values, %ld bad arguments), %ld failed, %ld known\n", n_cases, n_special,
         n_bad, n_fail, n_known);
  return n_fail ? 1 : 0;
}
