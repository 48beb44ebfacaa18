/*
 * features_bench: the feature scores' two speed targets (issue 25), each
 * against its peer in the same run.
 *
 *  1. Fitting Mahalanobis + ViM (smx_feature_model_fit_batch_f32 in blocks of
 *     4096 rows, then finish) on N x F float32 training features, against the
 *     machine's read rate of the same buffer (a summing pass over it, the
 *     best of 5). Target: fit >= half the read rate. The fit does F^2 / 2
 *     multiply-adds per row in double (BLAS dsyrk), so it is compute bound:
 *     the GFLOP/s are printed next to the ratio.
 *  2. kNN scoring (smx_feature_score_f32, exact) of Q queries against an N-row
 *     bank, against FAISS's own IndexFlatL2 search of the same unit rows at
 *     the same k and thread count. Target: <= 1.5x FAISS.
 *
 * usage: features_bench [--fit-rows N] [--features F] [--bank N] [--queries Q] [--k K] [--threads T]
 * Defaults are scaled down from the 1,000,000 x 512 / 100,000 queries to fit a shared 2-core
 * machine (100,000 x 512 fit; 50,000-row bank, 2,000 queries); pass the sizes on a bigger one.
 * Medians of 3 runs (fit: 1 run of the full stream, it is long).
 */
#include <faiss/IndexFlat.h>
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>

extern "C" {
#include "smx/smx_features.h"
}

static double now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

static double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

int main(int argc, char **argv) {
  size_t fit_rows = 100000, F = 512, bank = 50000, queries = 2000, k = 50;
  int threads = 2;
  for (int i = 1; i + 1 < argc; i += 2) {
    size_t v = (size_t)strtoull(argv[i + 1], nullptr, 10);
    if (!strcmp(argv[i], "--fit-rows")) fit_rows = v;
    else if (!strcmp(argv[i], "--features")) F = v;
    else if (!strcmp(argv[i], "--bank")) bank = v;
    else if (!strcmp(argv[i], "--queries")) queries = v;
    else if (!strcmp(argv[i], "--k")) k = v;
    else if (!strcmp(argv[i], "--threads")) threads = (int)v;
    else { fprintf(stderr, "unknown option %s\n", argv[i]); return 2; }
  }
  std::mt19937_64 rng(1);
  std::normal_distribution<float> nd;
  const size_t C = 10;
  std::vector<float> X(std::max(fit_rows, bank) * F);
  for (auto &x : X) x = std::max(0.0f, nd(rng) + 0.5f);   // ReLU-like
  std::vector<int64_t> y(fit_rows);
  for (size_t i = 0; i < fit_rows; i++) y[i] = (int64_t)(i % C);
  std::vector<double> W(C * F), b(C);
  for (auto &w : W) w = nd(rng);
  smx_options opt;
  memset(&opt, 0, sizeof opt);
  opt.threads = threads;

  // ---- 1. fit vs read rate
  double bytes = (double)fit_rows * F * sizeof(float), best_read = 1e30, sink = 0;
  for (int r = 0; r < 5; r++) {   // 16 independent sums: a vectorised pass bound by memory, not by add latency
    double t = now();
    float acc[16] = {0};
    for (size_t i = 0; i + 16 <= fit_rows * F; i += 16)
      for (int j = 0; j < 16; j++) acc[j] += X[i + j];
    best_read = std::min(best_read, now() - t);
    for (float a : acc) sink += a;
  }
  smx_feature_config cfg;
  memset(&cfg, 0, sizeof cfg);
  cfg.features = F;
  cfg.classes = C;
  cfg.methods = SMX_FEAT_BIT(SMX_FEAT_MAHALANOBIS) | SMX_FEAT_BIT(SMX_FEAT_VIM);
  cfg.weight = W.data();
  cfg.bias = b.data();
  cfg.ldw = F;
  smx_feature_model *m = nullptr;
  if (smx_feature_model_create(&cfg, &m) != SMX_OK) {
    printf("fit: Mahalanobis/ViM not built (%s)\n", smx_feature_method_requires(SMX_FEAT_MAHALANOBIS));
  } else {
    double t0 = now();
    for (size_t i = 0; i < fit_rows; i += 4096) {
      size_t n = std::min<size_t>(4096, fit_rows - i);
      if (smx_feature_model_fit_batch_f32(m, X.data() + i * F, F, y.data() + i, n) != SMX_OK) return 1;
    }
    double t1 = now();
    smx_status s = smx_feature_model_finish(m, &opt);
    double t2 = now();
    double flops = (double)fit_rows * F * F;   // dsyrk: F^2/2 multiply-adds per row
    printf("fit  %zu x %zu f32 (%.0f MB): read %.3f s (%.2f GB/s); fit_batch %.3f s (%.2f GB/s, %.1f GFLOP/s), "
           "finish %.3f s (%s); fit / read = %.3f (target >= 0.5)\n",
           fit_rows, F, bytes / 1e6, best_read, bytes / best_read / 1e9, t1 - t0, bytes / (t1 - t0) / 1e9,
           flops / (t1 - t0) / 1e9, t2 - t1, smx_status_string(s), best_read / (t2 - t0));
    smx_feature_model_destroy(m);
  }

  // ---- 2. kNN vs FAISS flat
  if (smx_feature_method_requires(SMX_FEAT_KNN)) {
    printf("knn: not built (%s)\n", smx_feature_method_requires(SMX_FEAT_KNN));
    return sink == 0.5;
  }
  std::vector<float> Q(queries * F);
  for (auto &q : Q) q = std::max(0.0f, nd(rng) + 0.5f);
  memset(&cfg, 0, sizeof cfg);
  cfg.features = F;
  cfg.k = k;
  cfg.methods = SMX_FEAT_BIT(SMX_FEAT_KNN);
  if (smx_feature_model_create(&cfg, &m) || smx_feature_model_fit_batch_f32(m, X.data(), F, nullptr, bank) ||
      smx_feature_model_finish(m, &opt))
    return 1;
  auto unit = [&](const float *x, float *o, size_t n) {
    for (size_t i = 0; i < n; i++) {
      double s = 0;
      for (size_t j = 0; j < F; j++) s += (double)x[i * F + j] * x[i * F + j];
      for (size_t j = 0; j < F; j++) o[i * F + j] = (float)(x[i * F + j] / std::sqrt(s));
    }
  };
  std::vector<float> Bn(bank * F), Qn(queries * F), D(queries * k);
  std::vector<faiss::Index::idx_t> L(queries * k);
  unit(X.data(), Bn.data(), bank);
  faiss::IndexFlatL2 peer((faiss::Index::idx_t)F);
  peer.add((faiss::Index::idx_t)bank, Bn.data());
  std::vector<double> out(queries), ts, tf;
  for (int r = 0; r < 3; r++) {
    double t = now();
    if (smx_feature_score_f32(m, SMX_FEAT_KNN, Q.data(), F, nullptr, 0, queries, out.data(), &opt)) return 1;
    ts.push_back(now() - t);
    omp_set_num_threads(threads);
    t = now();
    unit(Q.data(), Qn.data(), queries);   // FAISS needs unit queries too (OpenOOD's normaliser)
    peer.search((faiss::Index::idx_t)queries, Qn.data(), (faiss::Index::idx_t)k, D.data(), L.data());
    tf.push_back(now() - t);
  }
  double worst = 0;
  for (size_t i = 0; i < queries; i++) worst = std::max(worst, std::fabs(out[i] + (double)D[i * k + k - 1]));
  double flops = 2.0 * queries * bank * F;
  printf("knn  bank %zu x %zu, %zu queries, k %zu, %d threads: smx %.3f s (%.1f GFLOP/s), FAISS IndexFlatL2 %.3f s; "
         "smx / FAISS = %.2f (target <= 1.5); max |smx - FAISS k-th distance| %.2g\n",
         bank, F, queries, k, threads, median(ts), flops / median(ts) / 1e9, median(tf), median(ts) / median(tf), worst);
  smx_feature_model_destroy(m);
  return sink == 0.5;
}
