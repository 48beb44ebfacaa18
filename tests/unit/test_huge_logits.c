/*
 * Logits so large that x / T times log2(e) overflows float (|x / T| above
 * about 2.36e38): every algorithm and ISA must give the same answer as for
 * any other row whose maximum dominates, a one-hot softmax and
 * logsumexp = max / T. The Two-Pass algorithm's (mantissa, exponent) sums
 * meet an infinite exponent there, which a kernel must report rather than
 * fold into a finite sum. Run under each SMX_MAX_ISA by ctest.
 */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "smx/smx.h"

static int fails = 0, checks = 0;

static void expect(int ok, const char *what, size_t n, int algo, double t, float big) {
  checks++;
  if (!ok) {
    fails++;
    fprintf(stderr, "FAIL %s: n %zu algo %d T %g max %g (isa %s)\n", what, n, algo, t, (double)big, smx_isa());
  }
}

int main(void) {
  static const float bigs[] = { 2.2e38f, 2.4e38f, 2.5e38f, 3.0e38f, FLT_MAX };
  static const double temps[] = { 1.0, 0.5, 0.0137 };
  float x[70], y[70], z[70];
  for (int spread = 0; spread < 2; spread++)  /* the rest small (1, -1, ...) or around 1e33 */
  for (size_t n = 2; n <= 70; n += 17)
    for (int algo = 0; algo < 4; algo++)
      for (size_t ti = 0; ti < sizeof temps / sizeof temps[0]; ti++)
        for (size_t b = 0; b < sizeof bigs / sizeof bigs[0]; b++) {
          double t = temps[ti];
          float big = bigs[b];
          if (t == 1.0 && big < 2.3e38f) continue;  /* not an overflow at T = 1 */
          size_t at = (n * 7 + (size_t)b) % n;
          for (size_t i = 0; i < n; i++) x[i] = (float)((int)(i % 5) - 2) * (spread ? 1.0e33f : 1.0f);
          x[at] = big;
          smx_options o = { (smx_algo)algo, t, 0, 1, NULL };
          float lse = 0.0f;
          smx_status s1 = smx_softmax_f32(x, y, n, &o), s2 = smx_log_softmax_f32(x, z, n, &o);
          smx_status s3 = smx_logsumexp_f32(x, &lse, n, &o);
          expect(s1 == SMX_OK && s2 == SMX_OK && s3 == SMX_OK, "status", n, algo, t, big);
          int one_hot = 1, log_ok = 1;
          for (size_t i = 0; i < n; i++) {
            one_hot &= y[i] == (i == at ? 1.0f : 0.0f);
            log_ok &= i == at ? z[i] == 0.0f : z[i] == -INFINITY || z[i] < -1e30f;
          }
          expect(one_hot, "softmax is one-hot at the maximum", n, algo, t, big);
          expect(log_ok, "log-softmax is 0 at the maximum, hugely negative elsewhere", n, algo, t, big);
          double want = (double)big / t;
          double got = (double)lse;
          int lse_ok = want > FLT_MAX ? isinf(lse) && lse > 0 : fabs(got - want) <= 1e-6 * want;
          expect(lse_ok, "logsumexp is max / T", n, algo, t, big);
        }
  printf("test_huge_logits (%s): %d passed, %d failed\n", smx_isa(), checks - fails, fails);
  return fails != 0;
}
