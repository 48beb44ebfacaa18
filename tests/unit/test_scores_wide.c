/*
 * The logit-score kernels (src/kernels/f32-scores) on wide adversarial rows,
 * at every ISA the CPU has: each score against a long-double reference within
 * the bound smx_scores.h documents, rows of 33 to 4099 classes (vector bodies
 * and their tails), huge and tiny logits, ties, masked (-inf) classes, a
 * dominant class, near-ties; NaN and +inf rows keep the header's policy; a
 * score alone equals the same score among all the others, bitwise.
 */
#include <stdlib.h>

#include "../common/test_isa.h"
#include "smx/smx_scores.h"

enum { NROWS = 12 };

static int cmp_desc(const void *a, const void *b) {
  long double x = *(const long double *)a, y = *(const long double *)b;
  return x < y ? 1 : x > y ? -1 : 0;
}

/* the exact score of the float row (long double), finite max, no NaN */
static long double ref(smx_score_kind kind, const float *z, size_t n, double T, double g, size_t M) {
  long double m = -INFINITY, m2 = -INFINITY;
  for (size_t j = 0; j < n; j++) {
    long double v = z[j];
    if (v > m) { m2 = m; m = v; }
    else if (v > m2) m2 = v;
  }
  long double *e = malloc(n * sizeof *e), S = 0, acc = 0;
  for (size_t j = 0; j < n; j++) S += (e[j] = expl(((long double)z[j] - m) / (long double)T));
  switch (kind) {
    case SMX_SCORE_MSP: case SMX_SCORE_ODIN: acc = 1 / S; break;
    case SMX_SCORE_MAX_LOGIT: acc = m; break;
    case SMX_SCORE_ENERGY: acc = m + (long double)T * logl(S); break;
    case SMX_SCORE_MARGIN_LOGIT: acc = n == 1 ? INFINITY : m - m2; break;
    case SMX_SCORE_MARGIN_PROB: acc = n == 1 ? 1 : (1 - expl((m2 - m) / (long double)T)) / S; break;
    case SMX_SCORE_NEG_ENTROPY:
      for (size_t j = 0; j < n; j++)
        if (e[j] > 0) acc += e[j] / S * (((long double)z[j] - m) - logl(S));
      break;
    case SMX_SCORE_NONUNIFORMITY:
      for (size_t j = 0; j < n; j++) acc += fabsl(e[j] / S - 1.0L / n);
      break;
    case SMX_SCORE_GEN: {
      /* 1 - p of the top entry from the others' sum (no cancellation); sorted descending */
      size_t top = 0;
      for (size_t j = 1; j < n; j++)
        if (e[j] > e[top]) top = j;
      long double rest = S - e[top], *q = malloc(n * sizeof *q);
      rest = 0;
      for (size_t j = 0; j < n; j++)
        if (j != top) rest += e[j];
      for (size_t j = 0, k = 0; j < n; j++)
        if (j != top) q[1 + k++] = e[j];
      qsort(q + 1, n - 1, sizeof *q, cmp_desc);
      q[0] = e[top];
      for (size_t j = 0; j < (M < n ? M : n); j++) {
        long double om = j == 0 ? rest : S - q[j];
        acc += powl(q[j] / S, g) * powl(om / S, g);
      }
      acc = -acc;
      free(q);
      break;
    }
    default: acc = NAN;
  }
  free(e);
  return acc;
}

/* row r of an n-class matrix: the adversarial families */
static void fill_row(float *z, size_t n, int r, tu_rng *rng) {
  for (size_t j = 0; j < n; j++) {
    float v = tu_normal(rng);
    switch (r) {
      case 0: z[j] = 3 * v; break;
      case 1: z[j] = 30 * v; break;                          /* most exponentials underflow          */
      case 2: z[j] = 1e30f + 1e23f * v; break;               /* huge: spacing of 2^76, ties at the max */
      case 3: z[j] = 1e-30f * v; break;                      /* tiny: uniform                        */
      case 4: z[j] = (float)(tu_next(rng) % 3); break;       /* ties everywhere, the max repeated    */
      case 5: z[j] = j % 2 ? -INFINITY : 2 * v; break;       /* masked classes                       */
      case 6: z[j] = v + (j == n / 3 ? 100.0f : 0.0f); break; /* one dominant class                 */
      case 7: z[j] = 7.0f; break;                            /* all equal                            */
      case 8: z[j] = j == 1 || j == n - 1 ? 4.0f : -INFINITY; break;   /* two maxima, the rest masked */
      case 9: z[j] = 5.0f + 1e-6f * (float)j; break;         /* near-ties: margins of a few ulp      */
      case 10: z[j] = j == n / 2 ? NAN : v; break;           /* NaN                                  */
      default: z[j] = j == 2 ? INFINITY : v; break;          /* +inf                                 */
    }
  }
}

#define D SMX_SCORE_FLAG_DOUBLE

typedef struct variant { smx_score_kind kind; double T; double g; size_t M; uint32_t flags; } variant;

static void test_wide(void) {
  const size_t ks[] = { 33, 1000, 4096, 4099 };
  const variant vs[] = {
    { SMX_SCORE_MSP, 0, 0, 0, 0 }, { SMX_SCORE_MSP, 0, 0, 0, SMX_SCORE_FLAG_DOUBLE },
    { SMX_SCORE_MAX_LOGIT, 0, 0, 0, 0 }, { SMX_SCORE_ENERGY, 0, 0, 0, 0 },
    { SMX_SCORE_ENERGY, 2.5, 0, 0, SMX_SCORE_FLAG_DOUBLE }, { SMX_SCORE_ENERGY, 1e-3, 0, 0, SMX_SCORE_FLAG_DOUBLE },
    { SMX_SCORE_NEG_ENTROPY, 0, 0, 0, 0 }, { SMX_SCORE_MARGIN_PROB, 0, 0, 0, 0 },
    { SMX_SCORE_MARGIN_LOGIT, 0, 0, 0, 0 }, { SMX_SCORE_GEN, 0, 0, 0, 0 }, { SMX_SCORE_GEN, 0, 0.5, 3, 0 },
    { SMX_SCORE_GEN, 0, 1.0, 5000, 0 }, { SMX_SCORE_GEN, 0, 0.1, 1000, 0 }, { SMX_SCORE_ODIN, 0, 0, 0, 0 },
    { SMX_SCORE_ODIN, 1.0, 0, 0, 0 }, { SMX_SCORE_ODIN, 1e300, 0, 0, 0 }, { SMX_SCORE_ODIN, 1e-300, 0, 0, 0 },
    { SMX_SCORE_NONUNIFORMITY, 0, 0, 0, 0 },
    /* the double kernels */
    { SMX_SCORE_NEG_ENTROPY, 0, 0, 0, D }, { SMX_SCORE_MARGIN_PROB, 0, 0, 0, D }, { SMX_SCORE_GEN, 0, 0, 0, D },
    { SMX_SCORE_GEN, 0, 0.5, 3, D }, { SMX_SCORE_GEN, 0, 1.0, 5000, D }, { SMX_SCORE_ODIN, 0, 0, 0, D },
    { SMX_SCORE_ODIN, 1e300, 0, 0, D }, { SMX_SCORE_NONUNIFORMITY, 0, 0, 0, D },
  };
  enum { NV = sizeof vs / sizeof vs[0] };
  tu_rng rng = { 2024 };
  float *x = malloc(NROWS * 4099 * sizeof(float));
  static double out[NV][NROWS];
  double *outs[NV];
  smx_score_kind kinds[NV];
  smx_score_params ps[NV];
  for (size_t v = 0; v < NV; v++) {
    outs[v] = out[v];
    kinds[v] = vs[v].kind;
    memset(&ps[v], 0, sizeof ps[v]);
    ps[v].temperature = vs[v].T;
    ps[v].gen_gamma = vs[v].g;
    ps[v].gen_m = vs[v].M;
    ps[v].flags = vs[v].flags;
  }
  {
    const int isa = tu_isa_at;
    for (size_t ki = 0; ki < sizeof ks / sizeof ks[0]; ki++) {
      size_t K = ks[ki];
      for (int r = 0; r < NROWS; r++) fill_row(x + (size_t)r * K, K, r, &rng);
      CHECK(smx_scores_multi_rows_f32(x, K, outs, NROWS, K, NV, kinds, ps, NULL) == SMX_OK, "multi");
      for (size_t v = 0; v < NV; v++) {
        double single[NROWS];
        CHECK(smx_scores_rows_f32(x, K, single, NROWS, K, kinds[v], &ps[v], NULL) == SMX_OK, "single");
        double T = vs[v].T != 0 ? vs[v].T : kinds[v] == SMX_SCORE_ODIN ? 1000.0 : 1.0;
        if (kinds[v] != SMX_SCORE_ENERGY && kinds[v] != SMX_SCORE_ODIN) T = 1.0;
        double g = vs[v].g != 0 ? vs[v].g : 0.1;
        size_t M = vs[v].M ? vs[v].M : 100;
        int fast = !vs[v].flags && (kinds[v] == SMX_SCORE_MSP || kinds[v] == SMX_SCORE_ENERGY);
        for (int r = 0; r < NROWS; r++) {
          const char *name = smx_score_name(kinds[v]);
          CHECK(memcmp(&single[r], &out[v][r], sizeof(double)) == 0 || (single[r] != single[r] && out[v][r] != out[v][r]),
                "isa %d K %zu %s row %d: alone %.17g, among others %.17g", isa, K, name, r, single[r], out[v][r]);
          double got = out[v][r];
          if (r == 10) { CHECK(got != got, "isa %d %s: a NaN row gives NaN (%g)", isa, name, got); continue; }
          if (r == 11) {   /* +inf: the limit (one +inf entry) */
            if (kinds[v] == SMX_SCORE_MSP || kinds[v] == SMX_SCORE_ODIN || kinds[v] == SMX_SCORE_MARGIN_PROB)
              CHECK(got == 1.0, "isa %d %s +inf row: %g", isa, name, got);
            if (kinds[v] == SMX_SCORE_MAX_LOGIT || kinds[v] == SMX_SCORE_ENERGY || kinds[v] == SMX_SCORE_MARGIN_LOGIT)
              CHECK(got == INFINITY, "isa %d %s +inf row: %g", isa, name, got);
            continue;
          }
          long double want = ref(kinds[v], x + (size_t)r * K, K, T, g, M);
          /* smx_scores.h: the f32 kernels 16 * 2^-24 (relative for MSP, absolute x max(1, T) for
           * energy, and (1 + |score|) for the others); the double flag 1e-13 (1 + |score|) */
          int f32 = !fast && !vs[v].flags && kinds[v] != SMX_SCORE_MAX_LOGIT && kinds[v] != SMX_SCORE_MARGIN_LOGIT;
          long double tol = fast ? (kinds[v] == SMX_SCORE_MSP ? 16 * 0x1p-24L * want : 16 * 0x1p-24L * (T > 1 ? T : 1))
                                 : (f32 ? 16 * 0x1p-24L : 1e-13L) * (1 + fabsl(want));
          if (kinds[v] == SMX_SCORE_ENERGY) tol *= 1 + fabsl(want) / (T > 1 ? T : 1);   /* relative at |m| >> T */
          CHECK(fabsl((long double)got - want) <= tol || (isinf(got) && (long double)got == want),
                "isa %d K %zu %s (T %g g %g M %zu) row %d: %.17g vs %.17Lg (err %.3Lg, tol %.3Lg)", isa, K, name, T, g,
                M, r, got, want, fabsl((long double)got - want), tol);
        }
      }
    }
  }
  free(x);
}

int main(void) {
  tu_isa_start(3);
  test_wide();
  return tu_finish("test_scores_wide");
}
