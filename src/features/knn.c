/*
 * Without FAISS (SMX_HAVE_FAISS unset), the kNN entry points of
 * features/model.h report SMX_E_NOT_BUILT; with it they live in
 * faiss_knn.cpp and this file only answers smx_feature_method_requires.
 */
#include <stddef.h>
#include <stdlib.h>

#include "features/model.h"

const char *smx_feature_method_requires(smx_feature_method m) {
  switch (m) {
    case SMX_FEAT_KNN:
      return smx_feat_have_faiss() ? NULL
                                   : "knn needs FAISS, absent when smx was built: install Debian's libfaiss-dev "
                                     "(scripts/setup) and rebuild";
    case SMX_FEAT_MAHALANOBIS:
    case SMX_FEAT_VIM:
    case SMX_FEAT_RESIDUAL:
      return smx_feat_have_lapack() ? NULL
                                    : "this score needs LAPACK, absent when smx was built: install Debian's "
                                      "liblapacke-dev and libopenblas-dev (scripts/setup) and rebuild";
    case SMX_FEAT_REACT: return NULL;
  }
  return "unknown feature score";
}

#ifndef SMX_HAVE_FAISS
int smx_feat_have_faiss(void) { return 0; }
smx_status smx_feat_knn_build(const float *rows, size_t N, size_t F, smx_knn_index kind, size_t lists, size_t probe,
                              void **index) {
  (void)rows; (void)N; (void)F; (void)kind; (void)lists; (void)probe; (void)index;
  return SMX_E_NOT_BUILT;
}
smx_status smx_feat_knn_search(void *index, const float *q, size_t n, size_t k, int64_t *labels) {
  (void)index; (void)q; (void)n; (void)k; (void)labels;
  return SMX_E_NOT_BUILT;
}
void smx_feat_knn_free(void *index) { (void)index; }
const float *smx_feat_knn_rows(void *index) {
  (void)index;
  return NULL;
}
#endif

const float *smx_feat_knn_adopt(void *index, float **nbank) {
  const float *xb = smx_feat_knn_rows(index);
  if (!xb) return *nbank;
  free(*nbank);   /* IndexFlatL2 keeps an exact copy of the rows it was given: one copy is enough */
  *nbank = NULL;
  return xb;
}
