/*
 * libFuzzer target for the feature-model loader (smx_feature_model_load,
 * docs/feature-model.md; also replayed without libFuzzer by
 * regression_driver.c). A random byte rarely keeps the file's checksum, so
 * each input is written twice: as it is, and followed by its own FNV-1a hash
 * (the corpus holds models without their last 8 bytes), which takes the
 * mutations past the checksum into the header and size checks. Invariants:
 *  1. load gives SMX_OK, SMX_E_PARSE, SMX_E_NOMEM or SMX_E_NOT_BUILT, never
 *     anything else, and a failed load leaves the output pointer alone;
 *  2. a loaded model reports sane facts (smx_feature_model_info) and scores
 *     three fixed rows with every method it has, the same at 1 and 2 threads
 *     (a NaN is allowed: the arrays are the file's), and refuses the others;
 *  3. saved and loaded again, it scores bit for bit the same.
 * Any broken invariant aborts, which libFuzzer reports as a crash.
 */
#define _GNU_SOURCE
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "smx/smx_features.h"

#define FUZZ_TARGET "fuzz_feature_model"
#include "fuzz_require.h"

static char path[64], path2[64];

static void cleanup(void) {
  unlink(path);
  unlink(path2);
}

static void write_file(const char *p, const uint8_t *d, size_t n, int with_hash) {
  FILE *f = fopen(p, "wb");
  REQUIRE(f);
  REQUIRE(fwrite(d, 1, n, f) == n || n == 0);
  if (with_hash) {
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < n; i++) h = (h ^ d[i]) * 0x100000001b3ull;
    REQUIRE(fwrite(&h, 8, 1, f) == 1);
  }
  REQUIRE(fclose(f) == 0);
}

static int same_bits(const double *a, const double *b, size_t n) { return !memcmp(a, b, n * sizeof *a); }

static void score_all(const smx_feature_model *m, const smx_feature_info *info, double *out /* 5 x 3 */) {
  size_t F = info->features;
  double *x = calloc(3 * F, sizeof *x);
  REQUIRE(x);
  for (size_t j = 0; j < F; j++) {
    x[F + j] = 1.0;
    x[2 * F + j] = (double)j / (double)F - 0.25;
  }
  smx_options o1, o2;
  memset(&o1, 0, sizeof o1);
  memset(&o2, 0, sizeof o2);
  o1.threads = 1;
  o2.threads = 2;
  for (int me = 1; me <= 5; me++) {
    double a[3], b[3];
    smx_status s = smx_feature_score_f64(m, (smx_feature_method)me, x, F, NULL, 0, 3, a, &o1);
    if (!(info->methods & SMX_FEAT_BIT(me))) {
      REQUIRE(s == SMX_E_INVALID_ARG || s == SMX_E_NOT_BUILT);
      for (int i = 0; i < 3; i++) out[(me - 1) * 3 + i] = 0.0;
      continue;
    }
    REQUIRE(s == SMX_OK || s == SMX_E_NOMEM);
    if (s) continue;
    REQUIRE(smx_feature_score_f64(m, (smx_feature_method)me, x, F, NULL, 0, 3, b, &o2) == SMX_OK);
    REQUIRE(same_bits(a, b, 3));
    memcpy(out + (me - 1) * 3, a, sizeof a);
  }
  free(x);
}

static void one(const uint8_t *data, size_t size, int with_hash) {
  write_file(path, data, size, with_hash);
  smx_feature_model *m = (smx_feature_model *)&m;   /* a sentinel a failed load must not touch */
  smx_status s = smx_feature_model_load(path, 1, &m);
  REQUIRE(s == SMX_OK || s == SMX_E_PARSE || s == SMX_E_NOMEM || s == SMX_E_NOT_BUILT);
  if (s != SMX_OK) {
    REQUIRE(m == (smx_feature_model *)&m);
    return;
  }
  smx_feature_info info;
  REQUIRE(smx_feature_model_info(m, &info) == SMX_OK);
  REQUIRE(info.features >= 1 && info.rows >= 1 && (info.methods & ~(unsigned)SMX_FEAT_ALL) == 0);
  if (info.features > 4096) {   /* a valid but large model: the scoring is not what is fuzzed */
    smx_feature_model_destroy(m);
    return;
  }
  double a[15], b[15];
  score_all(m, &info, a);
  REQUIRE(smx_feature_model_save(m, path2) == SMX_OK);
  smx_feature_model *l = NULL;
  REQUIRE(smx_feature_model_load(path2, 1, &l) == SMX_OK);
  score_all(l, &info, b);
  REQUIRE(same_bits(a, b, 15));
  smx_feature_model_destroy(l);
  smx_feature_model_destroy(m);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (!path[0]) {
    snprintf(path, sizeof path, "/tmp/fuzz_feat_%ld.smxf", (long)getpid());
    snprintf(path2, sizeof path2, "/tmp/fuzz_feat_%ld_b.smxf", (long)getpid());
    atexit(cleanup);
  }
  one(data, size, 0);
  one(data, size, 1);
  return 0;
}
