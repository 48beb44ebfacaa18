/*
 * The top-k filter, written once over the vector layer. Included (once) by
 * each per-ISA file, which first includes its src/simd/<isa>.h and defines
 * SMX_TOPK_TABLE. Four vectors per iteration, one ordered compare each; a
 * block with no hit costs four loads and compares, and the rare hits are
 * written by mf_store_lane_ids (a compress store where the ISA has one).
 * NaN is caught with an unordered compare kept in a mask. Positions fit
 * uint32_t: n <= 2^32 by contract.
 */
#include <math.h>

static size_t filter_gt_k(size_t n, const float *x, float thr, uint32_t *pos, int *has_nan) {
  const vf_t t = vf_set1(thr);
  mf_t nan = mf_none();
  size_t c = 0, i = 0;
  for (; i + 4 * VF_W <= n; i += 4 * VF_W) {
    vf_t a = vf_ld(x + i), b = vf_ld(x + i + VF_W), d = vf_ld(x + i + 2 * VF_W), e = vf_ld(x + i + 3 * VF_W);
    mf_t ga = vf_gt(a, t), gb = vf_gt(b, t), gd = vf_gt(d, t), ge = vf_gt(e, t);
    nan = mf_or(nan, mf_or(vf_unord(a, b), vf_unord(d, e)));
    if (!mf_any(mf_or(mf_or(ga, gb), mf_or(gd, ge)))) continue;
    c += mf_store_lane_ids(pos + c, ga, (uint32_t)i);
    c += mf_store_lane_ids(pos + c, gb, (uint32_t)(i + VF_W));
    c += mf_store_lane_ids(pos + c, gd, (uint32_t)(i + 2 * VF_W));
    c += mf_store_lane_ids(pos + c, ge, (uint32_t)(i + 3 * VF_W));
  }
  for (; i < n; i += VF_W) {
    /* lanes past n read as -inf: never above thr, never NaN */
    vf_t a = vf_ld_k(x + i, kf_tail(n - i < VF_W ? n - i : VF_W), vf_set1(-INFINITY));
    nan = mf_or(nan, vf_unord(a, a));
    c += mf_store_lane_ids(pos + c, vf_gt(a, t), (uint32_t)i);
  }
  if (mf_any(nan)) *has_nan = 1;
  return c;
}

const smx_topk_ukernels SMX_TOPK_TABLE = { SMX_SIMD_ISA, filter_gt_k };
