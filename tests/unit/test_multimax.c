/*
 * MultiMax (include/smx/smx_multi.h): f32 and f64 forward and backward
 * (with the parameter gradients) against long-double references at every
 * ISA and a few thread counts (bitwise equal), the f64 VJP against central
 * differences, f16 / bf16 storage against the f32 results, the special
 * values, and refused arguments.
 */
#include <string.h>

#include "../common/test_isa.h"
#include "math/half_scalar.h"

#define N 67
#define ROWS 5

static const double R[4] = { 0.3, -0.2, 1.0, 0.5 }, TS[4] = { 0.7, 1.3, -0.4, 0.9 };

static long double modl(long double x) {
  long double a = R[0] - x > 0 ? R[0] - x : 0, b = x - R[1] > 0 ? x - R[1] : 0;
  long double c = R[2] - x > 0 ? R[2] - x : 0, d = x - R[3] > 0 ? x - R[3] : 0;
  return x + TS[0] * a + TS[1] * b + TS[2] * c * c + TS[3] * d * d;
}

/* |x| + the magnitudes of the modulator's terms: s(x) is formed in double within a few eps of it */
static long double magl(long double x) {
  long double a = R[0] - x > 0 ? R[0] - x : 0, b = x - R[1] > 0 ? x - R[1] : 0;
  long double c = R[2] - x > 0 ? R[2] - x : 0, d = x - R[3] > 0 ? x - R[3] : 0;
  return fabsl(x) + fabsl(TS[0] * a) + fabsl(TS[1] * b) + fabsl(TS[2] * c * c) + fabsl(TS[3] * d * d);
}

static void ref_row(const double *x, size_t n, long double T, long double *y) {
  long double m = -INFINITY, s = 0;
  for (size_t i = 0; i < n; i++) { y[i] = modl(x[i]) / T; if (y[i] > m) m = y[i]; }
  for (size_t i = 0; i < n; i++) { y[i] = expl(y[i] - m); s += y[i]; }
  for (size_t i = 0; i < n; i++) y[i] /= s;
}

static double loss64(const double *x, const double *dy, double T) {
  double y[ROWS * N], l = 0;
  smx_options o = { SMX_ALGO_AUTO, T, 0, 1, NULL };
  smx_multimax_rows_f64(x, N, y, N, ROWS, N, R, TS, &o);
  for (size_t i = 0; i < ROWS * N; i++) l += y[i] * dy[i];
  return l;
}

int main(void) {
  tu_isa_start(3);
  tu_rng rng = { 99 };
  static double x[ROWS * N], dy[ROWS * N], y64[ROWS * N], dx64[ROWS * N], xp[ROWS * N];
  static float xf[ROWS * N], dyf[ROWS * N], y32[ROWS * N], dx32[ROWS * N], y32b[ROWS * N];
  for (size_t i = 0; i < ROWS * N; i++) {
    xf[i] = 2.5f * tu_normal(&rng);
    x[i] = xf[i];
    dyf[i] = tu_normal(&rng);
    dy[i] = dyf[i];
  }
  const double temps[2] = { 1.0, 0.6 };
  {
    const int isa = tu_isa_at;
    for (int k = 0; k < 2; k++) {
      double T = temps[k];
      smx_options o = { SMX_ALGO_AUTO, T, 0, 1, NULL };
      CHECK(smx_multimax_rows_f64(x, N, y64, N, ROWS, N, R, TS, &o) == SMX_OK, "f64");
      CHECK(smx_multimax_rows_f32(xf, N, y32, N, ROWS, N, R, TS, &o) == SMX_OK, "f32");
      for (size_t r = 0; r < ROWS; r++) {
        long double ref[N], smax = -INFINITY;
        ref_row(x + r * N, N, T, ref);
        for (size_t i = 0; i < N; i++) if (modl(x[r * N + i]) > smax) smax = modl(x[r * N + i]);
        for (size_t i = 0; i < N; i++) {
          /* the softmax bounds grow with the span; the rounding of s(x) with its terms' size */
          long double span = (smax - modl(x[r * N + i])) / T + 4 * magl(x[r * N + i]) / T;
          CHECK(fabsl(y64[r * N + i] - ref[i]) <= (8 + span) * 0x1p-52 * ref[i] + 1e-300, "%s f64 %zu: %.17g vs %.17Lg",
                tu_isa_names[isa], i, y64[r * N + i], ref[i]);
          CHECK(fabsl(y32[r * N + i] - ref[i]) <= (8 + 2 * span) * 0x1p-23 * ref[i] + 0x1p-126, "%s f32 %zu: %.9g vs %.12Lg",
                tu_isa_names[isa], i, (double)y32[r * N + i], ref[i]);
        }
      }
      /* VJP against the f64 reference's own finite differences */
      double dp[8], dp2[8];
      CHECK(smx_multimax_backward_rows_f64(x, N, y64, N, dy, N, dx64, N, ROWS, N, R, TS, dp, &o) == SMX_OK, "bwd");
      memcpy(xp, x, sizeof x);
      for (size_t i = 0; i < ROWS * N; i += 7) {
        double h = 1e-6;
        xp[i] = x[i] + h;
        double lp = loss64(xp, dy, T);
        xp[i] = x[i] - h;
        double lm = loss64(xp, dy, T);
        xp[i] = x[i];
        double fd = (lp - lm) / (2 * h);
        CHECK(fabs(fd - dx64[i]) <= 1e-7 * (1 + fabs(dx64[i])), "FD %zu: %.12g vs %.12g", i, fd, dx64[i]);
      }
      /* f32 VJP close to the f64 one; threads bitwise */
      CHECK(smx_multimax_backward_rows_f32(xf, N, y32, N, dyf, N, dx32, N, ROWS, N, R, TS, dp2, &o) == SMX_OK, "b32");
      for (size_t i = 0; i < ROWS * N; i++)
        CHECK(fabs(dx32[i] - dx64[i]) <= 1e-4 * (1 + fabs(dx64[i])), "f32 vjp %zu", i);
      for (int p = 0; p < 8; p++) CHECK(fabs(dp2[p] - dp[p]) <= 1e-4 * (1 + fabs(dp[p])), "param grad %d", p);
      o.threads = 3;
      CHECK(smx_multimax_rows_f32(xf, N, y32b, N, ROWS, N, R, TS, &o) == SMX_OK, "threads");
      CHECK(!memcmp(y32, y32b, sizeof y32), "threads differ");
    }
  }
  if (!tu_isa_once) return tu_finish("test_multimax");   /* what follows is the same at every level */
  /* a call large enough for the thread pool: 1 and 4 threads bitwise equal, forward and VJP */
  {
    enum { BR = 64, BC = 1000 };
    static float bx[BR * BC], by1[BR * BC], by4[BR * BC], bdx1[BR * BC], bdx4[BR * BC];
    double p1[8], p4[8];
    for (size_t i = 0; i < (size_t)BR * BC; i++) bx[i] = 2.0f * tu_normal(&rng);
    smx_options o1 = { SMX_ALGO_AUTO, 0, 0, 1, NULL }, o4 = { SMX_ALGO_AUTO, 0, 0, 4, NULL };
    CHECK(smx_multimax_rows_f32(bx, BC, by1, BC, BR, BC, R, TS, &o1) == SMX_OK, "big 1");
    CHECK(smx_multimax_rows_f32(bx, BC, by4, BC, BR, BC, R, TS, &o4) == SMX_OK, "big 4");
    CHECK(!memcmp(by1, by4, sizeof by1), "forward: 4 threads differ");
    CHECK(smx_multimax_backward_rows_f32(bx, BC, by1, BC, bx, BC, bdx1, BC, BR, BC, R, TS, p1, &o1) == SMX_OK, "b1");
    CHECK(smx_multimax_backward_rows_f32(bx, BC, by1, BC, bx, BC, bdx4, BC, BR, BC, R, TS, p4, &o4) == SMX_OK, "b4");
    CHECK(!memcmp(bdx1, bdx4, sizeof bdx1) && !memcmp(p1, p4, sizeof p1), "VJP: 4 threads differ");
  }
  /* f16 / bf16: the f32 computation on the widened inputs, rounded once */
  for (int bf = 0; bf < 2; bf++) {
    static uint16_t xh[ROWS * N], yh[ROWS * N], dyh[ROWS * N], dxh[ROWS * N];
    static float xw[ROWS * N], yw[ROWS * N], dyw[ROWS * N], dxw[ROWS * N];
    double dph[8], dpw[8];
    for (size_t i = 0; i < ROWS * N; i++) {
      xh[i] = bf ? smx_f32_to_bf16(xf[i]) : smx_f32_to_f16(xf[i]);
      xw[i] = bf ? smx_bf16_to_f32(xh[i]) : smx_f16_to_f32(xh[i]);
    }
    CHECK((bf ? smx_multimax_rows_bf16(xh, N, yh, N, ROWS, N, R, TS, NULL)
              : smx_multimax_rows_f16(xh, N, yh, N, ROWS, N, R, TS, NULL)) == SMX_OK, "half forward");
    smx_multimax_rows_f32(xw, N, yw, N, ROWS, N, R, TS, NULL);
    for (size_t i = 0; i < ROWS * N; i++) {
      uint16_t want = bf ? smx_f32_to_bf16(yw[i]) : smx_f32_to_f16(yw[i]);
      CHECK(yh[i] == want, "%s forward %zu", bf ? "bf16" : "f16", i);
      dyh[i] = bf ? smx_f32_to_bf16(dyf[i]) : smx_f32_to_f16(dyf[i]);
      dyw[i] = bf ? smx_bf16_to_f32(dyh[i]) : smx_f16_to_f32(dyh[i]);
      yw[i] = bf ? smx_bf16_to_f32(yh[i]) : smx_f16_to_f32(yh[i]);
    }
    CHECK((bf ? smx_multimax_backward_rows_bf16(xh, N, yh, N, dyh, N, dxh, N, ROWS, N, R, TS, dph, NULL)
              : smx_multimax_backward_rows_f16(xh, N, yh, N, dyh, N, dxh, N, ROWS, N, R, TS, dph, NULL)) == SMX_OK,
          "half backward");
    smx_multimax_backward_rows_f32(xw, N, yw, N, dyw, N, dxw, N, ROWS, N, R, TS, dpw, NULL);
    for (size_t i = 0; i < ROWS * N; i++)
      CHECK(dxh[i] == (bf ? smx_f32_to_bf16(dxw[i]) : smx_f32_to_f16(dxw[i])), "%s backward %zu", bf ? "bf16" : "f16", i);
    CHECK(!memcmp(dph, dpw, sizeof dph), "half parameter gradients");
  }
  /* special values: masks stay masks, NaN propagates, +inf gives the limit */
  float s[4] = { -INFINITY, 0.0f, INFINITY, 1.0f }, ys[4];
  CHECK(smx_multimax_f32(s, ys, 4, R, TS, NULL) == SMX_OK && ys[0] == 0.0f && ys[2] == 1.0f && ys[1] == 0.0f, "inf");
  float sn[2] = { NAN, 0.0f }, yn[2];
  CHECK(smx_multimax_f32(sn, yn, 2, R, TS, NULL) == SMX_OK && yn[0] != yn[0], "nan");
  /* the VJP at infinite entries: 0, and no NaN in the parameter gradients */
  float sdy[4] = { 1.0f, -2.0f, 0.5f, 3.0f }, sdx[4];
  double sdp[8];
  CHECK(smx_multimax_backward_f32(s, ys, sdy, sdx, 4, R, TS, sdp, NULL) == SMX_OK && sdx[0] == 0.0f && sdx[2] == 0.0f,
        "inf vjp");
  for (int p = 0; p < 8; p++) CHECK(sdp[p] == sdp[p], "parameter gradient %d NaN", p);
  CHECK(smx_multimax_backward_f32(s, ys, sdy, sdx, 4, R, TS, NULL, NULL) == SMX_OK && sdx[0] == 0.0f && sdx[2] == 0.0f,
        "inf vjp without parameters");
  double bad[4] = { 0, 0, INFINITY, 0 };
  float keep = 7.0f;
  CHECK(smx_multimax_f32(s, &keep, 1, bad, TS, NULL) == SMX_E_INVALID_ARG && keep == 7.0f, "inf parameter");
  CHECK(smx_multimax_f32(s, ys, 4, NULL, TS, NULL) == SMX_E_INVALID_ARG, "NULL ranges");
  CHECK(smx_multimax_backward_f32(s, ys, ys, s, 4, R, TS, NULL, NULL) == SMX_E_INVALID_ARG, "dx over x");
  return tu_finish("test_multimax");
}
