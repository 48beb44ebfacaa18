/*
 * The kNN index over FAISS's C++ API (Debian's libfaiss-dev ships no C API
 * library): faiss::IndexFlatL2 (exact, the deep-kNN paper's and OpenOOD's
 * index) or faiss::IndexIVFFlat (approximate: only `probe` of `lists`
 * inverted lists are searched). Internal to libsmx: the functions of
 * features/model.h, no exception crosses into C.
 *
 * Threads: the caller (score.c) splits queries into fixed blocks on its own
 * threads; FAISS's OpenMP is held to one thread inside each call (the
 * calling thread's OpenMP setting is restored), so the two pools do not
 * multiply.
 */
#include <faiss/IndexFlat.h>
#include <faiss/IndexIVFFlat.h>
#include <omp.h>

#include <cstdint>
#include <memory>
#include <new>
#include <vector>

extern "C" {
#include "features/model.h"
}

namespace {

struct KnnIndex {
  std::unique_ptr<faiss::IndexFlatL2> quantizer;   // IVF's coarse quantizer, or the flat index itself
  std::unique_ptr<faiss::IndexIVFFlat> ivf;
  faiss::Index *index() { return ivf ? static_cast<faiss::Index *>(ivf.get()) : quantizer.get(); }
};

struct OmpOne {   // one OpenMP thread for this call, the caller's setting restored after
  int saved;
  OmpOne() : saved(omp_get_max_threads()) { omp_set_num_threads(1); }
  ~OmpOne() { omp_set_num_threads(saved); }
};

}  // namespace

extern "C" int smx_feat_have_faiss(void) { return 1; }

extern "C" smx_status smx_feat_knn_build(const float *rows, size_t N, size_t F, smx_knn_index kind, size_t lists,
                                         size_t probe, void **out) {
  try {
    std::unique_ptr<KnnIndex> k(new KnnIndex);
    k->quantizer.reset(new faiss::IndexFlatL2((faiss::Index::idx_t)F));
    if (kind == SMX_KNN_IVF) {
      if (lists == 0) {
        lists = 1;
        while (lists * lists < N) lists++;
      }
      if (lists > N) lists = N;
      if (probe == 0) probe = 1;
      if (probe > lists) probe = lists;   // more probes than lists is all of them (and FAISS sizes arrays by it)
      k->ivf.reset(new faiss::IndexIVFFlat(k->quantizer.get(), F, lists, faiss::METRIC_L2));
      k->ivf->nprobe = probe;
      k->ivf->cp.seed = 1234;
      k->ivf->cp.min_points_per_centroid = 1;   // any bank size: FAISS would print a warning on stderr below 39
      k->ivf->train((faiss::Index::idx_t)N, rows);
    }
    k->index()->add((faiss::Index::idx_t)N, rows);
    *out = k.release();
    return SMX_OK;
  } catch (const std::bad_alloc &) {
    return SMX_E_NOMEM;
  } catch (...) {
    return SMX_E_INTERNAL;
  }
}

extern "C" smx_status smx_feat_knn_search(void *h, const float *q, size_t n, size_t k, int64_t *labels) {
  try {
    OmpOne one;
    KnnIndex *x = static_cast<KnnIndex *>(h);
    std::vector<float> dist(n * k);
    std::vector<faiss::Index::idx_t> lab(n * k);
    x->index()->search((faiss::Index::idx_t)n, q, (faiss::Index::idx_t)k, dist.data(), lab.data());
    for (size_t i = 0; i < n * k; i++) labels[i] = (int64_t)lab[i];
    return SMX_OK;
  } catch (const std::bad_alloc &) {
    return SMX_E_NOMEM;
  } catch (...) {
    return SMX_E_INTERNAL;
  }
}

extern "C" void smx_feat_knn_free(void *h) { delete static_cast<KnnIndex *>(h); }

extern "C" const float *smx_feat_knn_rows(void *h) {
  KnnIndex *x = static_cast<KnnIndex *>(h);
  return x && !x->ivf ? x->quantizer->get_xb() : nullptr;
}
