/* smx_attention_merge: partial attention results over disjoint key sets, folded by log-sum-exp. */
#include <math.h>

#include "attention/attention.h"
#include "core/operands.h"

smx_status smx_attention_merge(size_t n, const float *const *o, const float *const *lse, size_t rows, size_t dv,
                               size_t ldo, float *out, size_t ld_out, float *lse_out) {
  if (rows == 0 || dv == 0) return SMX_OK;
  if (n == 0 || !o || !lse || !out || ldo < dv || ld_out < dv) return SMX_E_INVALID_ARG;
  size_t ob = smx_span(rows, dv, ld_out);
  if (!ob || !smx_span(rows, dv, ldo)) return SMX_E_INVALID_ARG;
  for (size_t p = 0; p < n; p++) {
    if (!o[p] || !lse[p]) return SMX_E_INVALID_ARG;
    /* out may be o[0] exactly (row r is read before it is written); any other overlap is refused */
    if (!(p == 0 && o[0] == out && ldo == ld_out) && smx_overlap(out, ob * sizeof(float), o[p], smx_span(rows, dv, ldo) * sizeof(float)))
      return SMX_E_INVALID_ARG;
    if (smx_overlap(out, ob * sizeof(float), lse[p], rows * sizeof(float))) return SMX_E_INVALID_ARG;
  }
  if (lse_out && smx_overlap(out, ob * sizeof(float), lse_out, rows * sizeof(float))) return SMX_E_INVALID_ARG;
  for (size_t r = 0; r < rows; r++) {
    double m = -INFINITY;
    int nan = 0;
    for (size_t p = 0; p < n; p++) {
      m = fmax(m, (double)lse[p][r]);
      nan |= lse[p][r] != lse[p][r];
    }
    if (nan) m = NAN;   /* a part's NaN (fmax drops it) makes the row NaN: not an empty part */
    float *y = out + r * ld_out;
    if (m == -INFINITY || m != m) {
      for (size_t x = 0; x < dv; x++) y[x] = m == m ? 0.0f : (float)m;
      if (lse_out) lse_out[r] = (float)m;
      continue;
    }
    /* weights e^{lse_p - m} in double; parts in order 0, 1, ... */
    double wsum = 0.0;
    for (size_t p = 0; p < n; p++) wsum += exp((double)lse[p][r] - m);
    for (size_t x = 0; x < dv; x++) {
      double acc = 0.0;
      for (size_t p = 0; p < n; p++) {
        double wt = exp((double)lse[p][r] - m);
        if (wt > 0.0) acc += wt * (double)o[p][r * ldo + x];
      }
      y[x] = (float)(acc / wsum);
    }
    if (lse_out) lse_out[r] = (float)(m + log(wsum));
  }
  return SMX_OK;
}
