/*
 * sparsemax, entmax-1.5 and bisection entmax (include/smx/smx_sparse.h)
 * beyond the op driver's accuracy rows: outputs on the simplex, supports equal
 * to a sort-based long-double oracle's (ties included), the pivot search bitwise
 * equal to the sort oracle, bisection entmax at alpha = 1.5 against the exact
 * entmax15, the special-value policy, central finite differences of the VJPs
 * and of the losses in double, the losses' values against the closed forms
 * (Martins & Astudillo 2016, eq. 17; Fenchel-Young), their reductions and
 * ignore_index, and the refused arguments. Every kernel set is walked.
 */
#include "../common/test_isa.h"

#include "ops/sparse_tau.h"

/* running maxima as comparisons: aarch64 gcc 12 at -O3 fails (an internal
 * compiler error) on vectorised fmax reductions */
static double upmax(double a, double b) { return b > a ? b : a; }

/* sort-based references in long double (Martins & Astudillo Alg. 1; Peters et al. Alg. 2) */
static int cmp_desc_ld(const void *a, const void *b) {
  long double x = *(const long double *)a, y = *(const long double *)b;
  return (x < y) - (x > y);
}
/* alpha 2 or 1.5; returns tau on the z = a x scale; n live entries (no -inf) */
static long double ref_tau(const double *x, size_t n, double alpha) {
  long double *s = malloc(n * sizeof *s), a = alpha == 2.0 ? 1.0L : 0.5L, tau = 0, cum = 0, cq = 0;
  size_t live = 0;
  for (size_t i = 0; i < n; i++) if (x[i] != -INFINITY) s[live++] = a * (long double)x[i];
  qsort(s, live, sizeof *s, cmp_desc_ld);
  for (size_t k = 1; k <= live; k++) {
    cum += s[k - 1];
    cq += s[k - 1] * s[k - 1];
    long double t;
    if (alpha == 2.0) t = (cum - 1) / (long double)k;
    else {
      long double mean = cum / k, ss = cq - cum * mean, d = (1 - ss) / k;
      t = mean - sqrtl(d > 0 ? d : 0);
    }
    if (t < s[k - 1] || (alpha != 2.0 && t <= s[k - 1])) tau = t;
    else break;
  }
  free(s);
  return tau;
}
static long double ref_at(double x, long double tau, double alpha) {
  long double a = alpha == 2.0 ? 1.0L : 0.5L, t = a * (long double)x - tau;
  if (!(t > 0)) return 0;
  return alpha == 2.0 ? t : t * t;
}

static void gen(tu_rng *r, double *x, size_t n, int kind) {
  for (size_t i = 0; i < n; i++) {
    switch (kind) {
    case 0: x[i] = tu_normal(r); break;                                  /* N(0,1) */
    case 1: x[i] = (double)(tu_next(r) % 9) / 8.0; break;                /* exact ties on a grid */
    case 2: x[i] = 3.0 * tu_normal(r); break;                            /* sparse supports */
    case 4: x[i] = 0.05 * tu_normal(r); break;                           /* narrow: most entries candidates */
    default: x[i] = i % 3 == 0 ? -INFINITY : tu_normal(r); break;         /* masked entries */
    }
  }
  if (kind == 3) x[n > 1 ? 1 : 0] = 0.5;   /* at least one live entry */
}

typedef smx_status (*fwd32)(const float *, float *, size_t, const smx_options *);
typedef smx_status (*fwd64)(const double *, double *, size_t, const smx_options *);

static void check_simplex_support(int isa) {
  tu_rng r = { 11u + (unsigned)isa };
  static const size_t lens[] = { 1, 2, 3, 7, 16, 17, 33, 100, 1000, 4099, 20000 };
  for (size_t li = 0; li < sizeof lens / sizeof lens[0]; li++)
    for (int kind = 0; kind < 5; kind++) {
      size_t n = lens[li];
      double *x = malloc(n * sizeof *x), *y = malloc(n * sizeof *y), *ys = malloc(n * sizeof *ys);
      float *xf = malloc(n * sizeof *xf), *yf = malloc(n * sizeof *yf), *yfs = malloc(n * sizeof *yfs);
      gen(&r, x, n, kind);
      for (size_t i = 0; i < n; i++) { xf[i] = (float)x[i]; x[i] = xf[i]; }
      for (int op = 0; op < 2; op++) {
        double alpha = op ? 1.5 : 2.0;
        fwd64 f64 = op ? smx_entmax15_f64 : smx_sparsemax_f64;
        fwd32 f32 = op ? smx_entmax15_f32 : smx_sparsemax_f32;
        CHECK(f64(x, y, n, NULL) == SMX_OK && f32(xf, yf, n, NULL) == SMX_OK, "status");
        long double tau = ref_tau(x, n, alpha), s64 = 0, s32 = 0;
        size_t bad_sup = 0, neg = 0;
        for (size_t i = 0; i < n; i++) {
          long double ref = ref_at(x[i], tau, alpha);
          bad_sup += (ref > 0) != (y[i] > 0) || (ref > 0) != (yf[i] > 0);
          neg += y[i] < 0 || yf[i] < 0;
          s64 += y[i];
          s32 += yf[i];
        }
        CHECK(bad_sup == 0 && neg == 0, "%s n=%zu kind %d: %zu support differences, %zu negative", op ? "entmax15" : "sparsemax",
              n, kind, bad_sup, neg);
        CHECK(fabsl(s64 - 1) <= 4 * n * DBL_EPSILON && fabsl(s32 - 1) <= 4 * n * FLT_EPSILON,
              "n=%zu kind %d: sums %Lg %Lg", n, kind, s64 - 1, s32 - 1);
        if (op == 0) {   /* the sort oracle: the same bits */
          CHECK(smx_sparsemax_sort_rows_f64(x, n, ys, n, 1, n, NULL) == SMX_OK &&
                    smx_sparsemax_sort_rows_f32(xf, n, yfs, n, 1, n, NULL) == SMX_OK,
                "sort status");
          CHECK(memcmp(ys, y, n * sizeof *y) == 0 && memcmp(yfs, yf, n * sizeof *yf) == 0,
                "n=%zu kind %d: sort oracle differs", n, kind);
        } else {
          /* bisection at alpha = 1.5 against the exact entmax15 */
          CHECK(smx_entmax_f64(x, ys, n, 1.5, NULL) == SMX_OK && smx_entmax_f32(xf, yfs, n, 1.5, NULL) == SMX_OK,
                "bisect status");
          double e64 = 0, e32 = 0;
          for (size_t i = 0; i < n; i++) {
            e64 = upmax(e64, fabs(ys[i] - y[i]));
            e32 = upmax(e32, fabs((double)yfs[i] - (double)yf[i]));
          }
          CHECK(e64 <= 1e-13 && e32 <= 2e-6, "n=%zu kind %d: bisection vs exact %g %g", n, kind, e64, e32);
          /* and the pivot threshold is the sort threshold, bit for bit */
          double *z = malloc(n * sizeof *z), *w = malloc(n * sizeof *w), m = -INFINITY;
          size_t k = 0;
          for (size_t i = 0; i < n; i++) m = upmax(m, x[i]);
          for (size_t i = 0; i < n; i++) if (x[i] >= m - 2.0) z[k++] = 0.5 * (x[i] - m);
          CHECK(smx_entmax15_tau(z, w, k) == smx_entmax15_tau_sort(z, w, k), "n=%zu kind %d: entmax15 tau", n, kind);
          CHECK(smx_sparsemax_tau(z, w, k) == smx_sparsemax_tau_sort(z, w, k), "n=%zu kind %d: sparsemax tau", n, kind);
          free(z);
          free(w);
        }
      }
      free(x); free(y); free(ys); free(xf); free(yf); free(yfs);
    }
}

/* The vector passes that narrow a row first (sparse_row.c) leave the bisection's
 * path of midpoints as the plain double iterations on every candidate take it. */
static void check_bisect_path(void) {
  tu_rng r = { 99 };
  enum { N = 20000 };
  double *x = malloc(N * sizeof *x), *y = malloc(N * sizeof *y), *z = malloc(N * sizeof *z), *p = malloc(N * sizeof *p);
  size_t *idx = malloc(N * sizeof *idx), *act = malloc(N * sizeof *act);
  float *xf = malloc(N * sizeof *xf), *yf = malloc(N * sizeof *yf);
  for (int rep = 0; rep < 4; rep++) {
    double alpha = rep % 2 ? 2.0 : 1.5, sc = rep < 2 ? 0.05 : 0.3, m = -INFINITY;
    for (size_t i = 0; i < N; i++) { xf[i] = (float)(sc * tu_normal(&r)); x[i] = xf[i]; m = upmax(m, x[i]); }
    CHECK(smx_entmax_f64(x, y, N, alpha, NULL) == SMX_OK && smx_entmax_f32(xf, yf, N, alpha, NULL) == SMX_OK, "status");
    size_t k = 0;
    for (size_t i = 0; i < N; i++)
      if ((alpha - 1) * (x[i] - m) > -1.0) { idx[k] = i; z[k++] = (alpha - 1) * (x[i] - m); }
    smx_entmax_bisect(z, k, N, alpha, 50, p, act);
    size_t diff = 0;
    for (size_t j = 0; j < k; j++) diff += p[j] != y[idx[j]];
    CHECK(diff == 0, "alpha %g scale %g: %zu outputs off the plain bisection's", alpha, sc, diff);
    smx_entmax_bisect(z, k, N, alpha, 30, p, act);
    double e = 0;
    for (size_t j = 0; j < k; j++) e = upmax(e, fabs(p[j] - (double)yf[idx[j]]) / (p[j] > 1e-30 ? p[j] : 1e-30));
    CHECK(e <= 1e-6, "f32 alpha %g scale %g: relative %g from the plain bisection's", alpha, sc, e);
  }
  free(x); free(y); free(z); free(p); free(idx); free(act); free(xf); free(yf);
}

static void check_policy(void) {
  const double inf = INFINITY;
  double x[6] = { 1, -inf, 0.5, -inf, 0.2, 3 }, xs[4] = { 1, 0.5, 0.2, 3 }, y[6], ys[4];
  for (int op = 0; op < 3; op++) {
    smx_status s1 = op == 0 ? smx_sparsemax_f64(x, y, 6, NULL) : op == 1 ? smx_entmax15_f64(x, y, 6, NULL)
                                                                         : smx_entmax_f64(x, y, 6, 1.7, NULL);
    smx_status s2 = op == 0 ? smx_sparsemax_f64(xs, ys, 4, NULL) : op == 1 ? smx_entmax15_f64(xs, ys, 4, NULL)
                                                                           : smx_entmax_f64(xs, ys, 4, 1.7, NULL);
    CHECK(s1 == SMX_OK && s2 == SMX_OK, "status");
    CHECK(y[1] == 0 && y[3] == 0 && y[0] == ys[0] && y[2] == ys[1] && y[4] == ys[2] && y[5] == ys[3],
          "op %d: -inf entries are not absent", op);
  }
  double m[3] = { -inf, -inf, -inf }, ym[3];
  smx_options o = { 0 };
  CHECK(smx_sparsemax_f64(m, ym, 3, NULL) == SMX_OK && ym[0] == 0 && ym[2] == 0, "masked row");
  o.flags = SMX_FLAG_MASKED_ROW_NAN;
  CHECK(smx_entmax15_f64(m, ym, 3, &o) == SMX_OK && isnan(ym[0]) && isnan(ym[2]), "masked row NaN");
  double pn[4] = { 1, NAN, 2, 3 }, yp[4];
  CHECK(smx_entmax_f64(pn, yp, 4, 1.3, NULL) == SMX_OK && isnan(yp[0]) && isnan(yp[3]), "NaN row");
  double pi[4] = { inf, 1, inf, 5 };
  CHECK(smx_sparsemax_f64(pi, yp, 4, NULL) == SMX_OK && yp[0] == 0.5 && yp[2] == 0.5 && yp[1] == 0 && yp[3] == 0,
        "+inf entries");
  float one = 7.5f, yo = 0;
  CHECK(smx_entmax15_f32(&one, &yo, 1, NULL) == SMX_OK && yo == 1.0f, "n = 1");
  CHECK(smx_entmax_f32(&one, &yo, 1, 1.25, NULL) == SMX_OK && yo == 1.0f, "n = 1 bisect");
  /* refusals */
  o.flags = 0;
  o.temperature = 2.0;
  CHECK(smx_sparsemax_f32(&one, &yo, 1, &o) == SMX_E_INVALID_ARG, "temperature 2");
  CHECK(smx_entmax_f32(&one, &yo, 1, 1.0, NULL) == SMX_E_INVALID_ARG, "alpha 1");
  CHECK(smx_entmax_f32(&one, &yo, 1, NAN, NULL) == SMX_E_INVALID_ARG, "alpha NaN");
  CHECK(smx_entmax_backward_f32(NULL, &yo, &yo, &yo, 1, 0.5, NULL) == SMX_E_INVALID_ARG, "alpha 0.5");
}

/* the map at alpha (2: sparsemax, 1.5: entmax15, else bisection) */
static void fmap(double alpha, int exact, const double *x, double *y, size_t n) {
  if (exact && alpha == 2.0) smx_sparsemax_f64(x, y, n, NULL);
  else if (exact && alpha == 1.5) smx_entmax15_f64(x, y, n, NULL);
  else smx_entmax_f64(x, y, n, alpha, NULL);
}

static void check_vjp_fd(void) {
  static const double alphas[] = { 2.0, 1.5, 1.5, 1.25, 1.7, 2.5 };
  tu_rng r = { 5 };
  enum { N = 12 };
  for (size_t a = 0; a < sizeof alphas / sizeof alphas[0]; a++) {
    double alpha = alphas[a];
    int exact = a < 2;
    for (int rep = 0; rep < 20; rep++) {
      double x[N], y[N], dy[N], dx[N], xp[N], yp[N], ym[N], worst = 0;
      for (int i = 0; i < N; i++) { x[i] = 0.7 * tu_normal(&r); dy[i] = tu_normal(&r); }
      fmap(alpha, exact, x, y, N);
      smx_status s = alpha == 2.0 ? smx_sparsemax_backward_f64(x, y, dy, dx, N, NULL)
                     : alpha == 1.5 && exact ? smx_entmax15_backward_f64(NULL, y, dy, dx, N, NULL)
                                            : smx_entmax_backward_f64(NULL, y, dy, dx, N, alpha, NULL);
      CHECK(s == SMX_OK, "status");
      const double h = 1e-6;
      for (int i = 0; i < N; i++) {
        memcpy(xp, x, sizeof x);
        xp[i] += h;
        fmap(alpha, exact, xp, yp, N);
        xp[i] -= 2 * h;
        fmap(alpha, exact, xp, ym, N);
        double fd = 0;
        for (int j = 0; j < N; j++) fd += dy[j] * (yp[j] - ym[j]);
        double e = fabs(fd / (2 * h) - dx[i]);
        if (e > worst) worst = e;
      }
      CHECK(worst < 1e-6, "alpha %g exact %d rep %d: finite differences off by %g", alpha, exact, rep, worst);
    }
  }
  /* f32 VJPs against the f64 ones on the same y */
  float yf[N], dyf[N], dxf[N];
  double y[N], dy[N], dx[N], x[N];
  for (int i = 0; i < N; i++) x[i] = 0.5 * tu_normal(&r);
  smx_entmax15_f64(x, y, N, NULL);
  for (int i = 0; i < N; i++) { yf[i] = (float)y[i]; y[i] = yf[i]; dyf[i] = (float)tu_normal(&r); dy[i] = dyf[i]; }
  for (int op = 0; op < 3; op++) {
    double e = 0;
    if (op == 0) { smx_sparsemax_backward_f32(NULL, yf, dyf, dxf, N, NULL); smx_sparsemax_backward_f64(NULL, y, dy, dx, N, NULL); }
    if (op == 1) { smx_entmax15_backward_f32(NULL, yf, dyf, dxf, N, NULL); smx_entmax15_backward_f64(NULL, y, dy, dx, N, NULL); }
    if (op == 2) { smx_entmax_backward_f32(NULL, yf, dyf, dxf, N, 1.3, NULL); smx_entmax_backward_f64(NULL, y, dy, dx, N, 1.3, NULL); }
    for (int i = 0; i < N; i++)
      if (fabs(dxf[i] - dx[i]) > e) e = fabs(dxf[i] - dx[i]);
    CHECK(e < 1e-5, "op %d: f32 VJP off by %g", op, e);
  }
}

typedef smx_status (*loss64)(const double *, size_t, const int64_t *, double *, double *, size_t, size_t, size_t,
                             double, const smx_options *);
static smx_status l_sp(const double *x, size_t ld, const int64_t *t, double *l, double *g, size_t ldg, size_t r,
                       size_t c, double a, const smx_options *o) {
  (void)a;
  return smx_sparsemax_loss_f64(x, ld, t, l, g, ldg, r, c, o);
}
static smx_status l_15(const double *x, size_t ld, const int64_t *t, double *l, double *g, size_t ldg, size_t r,
                       size_t c, double a, const smx_options *o) {
  (void)a;
  return smx_entmax15_loss_f64(x, ld, t, l, g, ldg, r, c, o);
}

static void check_losses(void) {
  enum { R = 5, C = 9 };
  tu_rng r = { 77 };
  double x[R * C], g[R * C], l[R], lm, ls, xp[R * C], lp[R], lmn[R];
  int64_t t[R] = { 0, 3, -100, 8, 4 };
  loss64 fns[3] = { l_sp, l_15, smx_entmax_loss_f64 };
  double alphas[3] = { 2.0, 1.5, 1.6 };
  for (int i = 0; i < R * C; i++) x[i] = tu_normal(&r);
  for (int f = 0; f < 3; f++) {
    tu_loss_opts o = TU_LOSS_OPTS_INIT;
    o.e.reduction = SMX_REDUCTION_NONE;
    CHECK(fns[f](x, C, t, l, g, C, R, C, alphas[f], tu_lo(&o)) == SMX_OK, "status");
    CHECK(l[2] == 0.0, "ignored row");
    for (int rr = 0; rr < R; rr++) CHECK(l[rr] >= -1e-12, "loss %d negative: %g", f, l[rr]);
    /* the gradient: finite differences of the row losses */
    double worst = 0;
    for (int i = 0; i < R * C; i++) {
      const double h = 1e-6;
      double lpp[R];
      memcpy(xp, x, sizeof x);
      xp[i] += h;
      fns[f](xp, C, t, lpp, NULL, 0, R, C, alphas[f], tu_lo(&o));
      xp[i] -= 2 * h;
      fns[f](xp, C, t, lp, NULL, 0, R, C, alphas[f], tu_lo(&o));
      worst = upmax(worst, fabs((lpp[i / C] - lp[i / C]) / (2 * h) - g[i]));
    }
    CHECK(worst < 1e-6, "loss %d: gradient off by %g", f, worst);
    if (f == 0) {   /* Martins & Astudillo eq. 17: -z_k + (1/2) sum_S (z_j^2 - tau^2) + 1/2 */
      for (int rr = 0; rr < R; rr++) {
        if (t[rr] < 0) continue;
        long double tau = ref_tau(x + rr * C, C, 2.0), s = 0;
        for (int j = 0; j < C; j++)
          if (x[rr * C + j] > tau) s += (long double)x[rr * C + j] * x[rr * C + j] - tau * tau;
        long double ref = -(long double)x[rr * C + t[rr]] + s / 2 + 0.5L;
        CHECK(fabsl(ref - l[rr]) <= 1e-13L * fmaxl(1, fabsl(ref)), "row %d: %Lg vs %g", rr, ref, l[rr]);
      }
    }
    memcpy(lmn, l, sizeof l);
    o.e.reduction = SMX_REDUCTION_MEAN;
    CHECK(fns[f](x, C, t, &lm, g, C, R, C, alphas[f], tu_lo(&o)) == SMX_OK, "mean");
    o.e.reduction = SMX_REDUCTION_SUM;
    CHECK(fns[f](x, C, t, &ls, NULL, 0, R, C, alphas[f], tu_lo(&o)) == SMX_OK, "sum");
    double sum = 0;
    for (int rr = 0; rr < R; rr++) sum += lmn[rr];
    CHECK(fabs(ls - sum) <= 1e-14 * fabs(sum) && fabs(lm - sum / 4) <= 1e-14 * fabs(sum), "reductions");
    double gs = 0;
    for (int j = 0; j < C; j++) gs += fabs(g[2 * C + j]);
    CHECK(gs == 0, "ignored row's gradient");
    /* in place over the logits */
    memcpy(xp, x, sizeof x);
    o.e.reduction = SMX_REDUCTION_NONE;
    CHECK(fns[f](xp, C, t, lp, xp, C, R, C, alphas[f], tu_lo(&o)) == SMX_OK, "in place");
    fns[f](x, C, t, l, g, C, R, C, alphas[f], tu_lo(&o));
    CHECK(memcmp(xp, g, sizeof g) == 0 && memcmp(lp, l, sizeof l) == 0, "in place differs");
  }
  int64_t bad[R] = { 0, 9, 0, 0, 0 };
  tu_loss_opts o = TU_LOSS_OPTS_INIT;
  CHECK(smx_sparsemax_loss_f64(x, C, bad, &lm, NULL, 0, R, C, tu_lo(&o)) == SMX_E_INVALID_ARG, "target out of range");
  o.e.label_smoothing = 0.1;
  CHECK(smx_sparsemax_loss_f64(x, C, t, &lm, NULL, 0, R, C, tu_lo(&o)) == SMX_E_INVALID_ARG, "label smoothing");
  float xf[C], gf[C], lf;
  for (int j = 0; j < C; j++) xf[j] = (float)x[j];
  o.e.label_smoothing = 0;
  CHECK(smx_entmax_loss_f32(xf, C, t, &lf, gf, C, 1, C, 1.5, tu_lo(&o)) == SMX_OK && lf >= 0, "f32 loss");
}

int main(void) {
  tu_isa_start(3);
  check_simplex_support(tu_isa_at);
  if (tu_isa_once) {
    check_policy();
    check_bisect_path();
    check_vjp_fd();
    check_losses();
  }
  return tu_finish("test_sparse");
}
