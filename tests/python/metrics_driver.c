/*
 * Test driver for tests/python/test_metrics_sklearn.py: reads
 *   "f64"|"f32" N_ID N_OOD TPR, then N_ID + N_OOD numbers (hex floats are exact)
 * from stdin and prints every field of smx_ood_metrics_f64 / _f32 as
 * "name value" lines (%.17g), or "status N" when the call fails.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "smx/smx.h"

int main(void) {
  char kind[8];
  size_t n_id, n_ood;
  double tpr;
  if (scanf("%7s %zu %zu %lf", kind, &n_id, &n_ood, &tpr) != 4) return 2;
  size_t n = n_id + n_ood;
  double *v = malloc((n ? n : 1) * sizeof(double));
  float *f = malloc((n ? n : 1) * sizeof(float));
  if (!v || !f) return 2;
  char tok[64];
  for (size_t i = 0; i < n; i++) {
    if (scanf("%63s", tok) != 1) return 2;
    v[i] = strtod(tok, NULL);
    f[i] = (float)v[i];
  }
  smx_ood_metrics m;
  smx_status s = !strcmp(kind, "f32") ? smx_ood_metrics_f32(f, f + n_id, &m, n_id, n_ood, tpr, NULL)
                                      : smx_ood_metrics_f64(v, v + n_id, &m, n_id, n_ood, tpr, NULL);
  if (s != SMX_OK) {
    printf("status %d\n", (int)s);
    free(v);
    free(f);
    return 0;
  }
  printf("auroc %.17g\nap_in %.17g\nap_out %.17g\naupr_in_trapz %.17g\naupr_out_trapz %.17g\n", m.auroc,
         m.ap_in, m.ap_out, m.aupr_in_trapz, m.aupr_out_trapz);
  printf("fpr_idpos_exact %.17g\nfpr_oodpos_exact %.17g\nfpr_oodpos_openood %.17g\nfpr_idpos_nearest %.17g\n", m.fpr_idpos_exact,
         m.fpr_oodpos_exact, m.fpr_oodpos_openood, m.fpr_idpos_nearest);
  printf("fpr_oodpos_nearest %.17g\nthr_idpos_exact %.17g\nthr_oodpos_exact %.17g\nn_tied_values %llu\n", m.fpr_oodpos_nearest,
         m.thr_idpos_exact, m.thr_oodpos_exact, (unsigned long long)m.n_tied_values);
  free(v);
  free(f);
  return 0;
}
