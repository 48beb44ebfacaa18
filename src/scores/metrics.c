/*
 * OOD detection metrics from ID and OOD score arrays (smx_metrics.h).
 *
 * Both arrays are mapped to order-preserving integer keys and radix sorted
 * separately (no labels to carry); a merge of the two sorted arrays then
 * visits the groups of equal scores, from the top for the ID-positive curve
 * and from the bottom for the OOD-positive one. A group enters the curve in
 * one step, as in scikit-learn's _binary_clf_curve, so ties are exact. All
 * counts are integers; figures are formed in double from them.
 */
#include <math.h>
#include <stdlib.h>

#include "scores/radix_sort.h"
#include "scores/score_options.h"
#include "smx/smx_metrics.h"

/* Sorted keys of both classes, widened to 64 bits for the walk (f32 keys are
 * kept as u32 to halve the sort's memory traffic). */
typedef struct sorted_pair {
  const uint32_t *a32, *b32;
  const uint64_t *a64, *b64;
  size_t na, nb;
  int wide;
} sorted_pair;

static uint64_t key_a(const sorted_pair *s, size_t i) { return s->wide ? s->a64[i] : s->a32[i]; }
static uint64_t key_b(const sorted_pair *s, size_t i) { return s->wide ? s->b64[i] : s->b32[i]; }
static double key_value(const sorted_pair *s, uint64_t k) {
  return s->wide ? smx_f64_from_key(k) : (double)smx_f32_from_key((uint32_t)k);
}

/* A walk over the groups of equal keys, downward (desc = 1) or upward. */
typedef struct walker {
  const sorted_pair *s;
  int desc;
  size_t ia, ib;   /* items consumed from each side */
} walker;

/* Next group: its key, a = ID count, b = OOD count. 0 when done. */
static int walk_next(walker *w, uint64_t *key, uint64_t *a, uint64_t *b) {
  const sorted_pair *s = w->s;
  int has_a = w->ia < s->na, has_b = w->ib < s->nb;
  if (!has_a && !has_b) return 0;
  uint64_t ka = 0, kb = 0;
  if (has_a) ka = key_a(s, w->desc ? s->na - 1 - w->ia : w->ia);
  if (has_b) kb = key_b(s, w->desc ? s->nb - 1 - w->ib : w->ib);
  uint64_t k;
  if (!has_a) k = kb;
  else if (!has_b) k = ka;
  else k = w->desc ? (ka > kb ? ka : kb) : (ka < kb ? ka : kb);
  uint64_t ca = 0, cb = 0;
  while (w->ia < s->na && key_a(s, w->desc ? s->na - 1 - w->ia : w->ia) == k) { w->ia++; ca++; }
  while (w->ib < s->nb && key_b(s, w->desc ? s->nb - 1 - w->ib : w->ib) == k) { w->ib++; cb++; }
  *key = k;
  *a = ca;
  *b = cb;
  return 1;
}

/*
 * One side of the metrics, in one walk over the groups: downward (desc = 1)
 * the positives are the ID samples, upward the OOD samples (on -score).
 * Fills AP, trapezoid AUPR, the first-reaching FPR and its threshold, the
 * FPR after sklearn's drop_intermediate, the nearest-recall FPR, the number
 * of groups and (downward) twice the Mann-Whitney U.
 */
typedef struct side_result {
  double ap, trapz, fpr_first, thr_first, fpr_nearest, fpr_openood;
  uint64_t groups;
  unsigned __int128 auc2;   /* 2 x Mann-Whitney U (only filled for the downward walk) */
} side_result;

static void walk_side(const sorted_pair *s, int desc, double tpr, side_result *r) {
  walker w = { s, desc, 0, 0 };
  uint64_t P = desc ? s->na : s->nb, N = desc ? s->nb : s->na;
  uint64_t tps = 0, fps = 0, key, ga, gb;
  double prev_r = 0.0, prev_p = 1.0;
  double ap = 0.0, tr = 0.0;
  int found = 0, found_oo = 0, near_done = 0;
  double best_d = INFINITY, best_fpr = NAN;
  unsigned __int128 auc2 = 0;
  /* drop_intermediate: the previous point and the step that led to it */
  uint64_t d_tp = 0, d_fp = 0, prev_tps = 0, prev_fps = 0;
  uint64_t k = 0;
  r->fpr_first = r->thr_first = r->fpr_openood = NAN;
  while (walk_next(&w, &key, &ga, &gb)) {
    uint64_t gp = desc ? ga : gb, gn = desc ? gb : ga;
    tps += gp;
    fps += gn;
    if (desc) auc2 += (unsigned __int128)ga * (2 * (N - fps) + gb);
    double rec = (double)tps / (double)P;
    double prec = (double)tps / (double)(tps + fps);
    ap += (rec - prev_r) * prec;
    tr += (rec - prev_r) * (prec + prev_p) / 2.0;
    prev_r = rec;
    prev_p = prec;
    if (!found && rec >= tpr) {
      found = 1;
      r->fpr_first = (double)fps / (double)N;
      r->thr_first = key_value(s, key);
    }
    /* point k-1 is kept unless the steps into and out of it are equal */
    uint64_t s_tp = tps - prev_tps, s_fp = fps - prev_fps;
    if (k >= 1 && !found_oo) {
      int kept = (k - 1 == 0) || s_tp != d_tp || s_fp != d_fp;
      if (kept && (double)prev_tps / (double)P >= tpr) { found_oo = 1; r->fpr_openood = (double)prev_fps / (double)N; }
    }
    d_tp = s_tp;
    d_fp = s_fp;
    prev_tps = tps;
    prev_fps = fps;
    /* nearest recall (fpr_and_fdr_at_recall): points up to the first with full
     * recall, argmin |recall - tpr| in reversed order, so the later point wins
     * ties; then an appended (recall 1, fps 0) point that wins only when
     * strictly nearer */
    if (!near_done) {
      double d = fabs(rec - tpr);
      if (d <= best_d) { best_d = d; best_fpr = (double)fps / (double)N; }
      near_done = tps == P;
    }
    k++;
  }
  if (fabs(1.0 - tpr) < best_d) best_fpr = 0.0;
  /* the last point is always kept */
  if (!found_oo && k >= 1 && (double)prev_tps / (double)P >= tpr) r->fpr_openood = (double)prev_fps / (double)N;
  r->ap = ap;
  r->trapz = tr;
  r->groups = k;
  r->auc2 = auc2;
  r->fpr_nearest = best_fpr;
}

static smx_status finish(const sorted_pair *s, double tpr, smx_ood_metrics *out) {
  side_result up, down;
  walk_side(s, 1, tpr, &down);   /* from the top: ID positive */
  walk_side(s, 0, tpr, &up);     /* from the bottom: OOD positive on -score */
  smx_ood_metrics m;
  m.auroc = (double)((long double)down.auc2 / (2.0L * (long double)s->na * (long double)s->nb));
  m.ap_in = down.ap;
  m.ap_out = up.ap;
  m.aupr_in_trapz = down.trapz;
  m.aupr_out_trapz = up.trapz;
  m.fpr_idpos_exact = down.fpr_first;
  m.thr_idpos_exact = down.thr_first;
  m.fpr_oodpos_exact = up.fpr_first;
  m.thr_oodpos_exact = up.thr_first;
  m.fpr_oodpos_openood = up.fpr_openood;
  m.fpr_idpos_nearest = down.fpr_nearest;
  m.fpr_oodpos_nearest = up.fpr_nearest;
  m.tpr = tpr;
  m.n_id = s->na;
  m.n_ood = s->nb;
  m.n_tied_values = (uint64_t)(s->na + s->nb) - down.groups;
  *out = m;
  return SMX_OK;
}

static smx_status check_args(const void *id, size_t n_id, const void *ood, size_t n_ood, double *tpr,
                             const smx_ood_metrics *out, const smx_options *opt) {
  smx_resolved_options o;
  smx_status st = smx_scores_resolve_options(opt, 0, &o);
  if (st != SMX_OK) return st;
  if (!out || !id || !ood || n_id == 0 || n_ood == 0) return SMX_E_INVALID_ARG;
  if (*tpr == 0.0) *tpr = 0.95;
  if (!(*tpr > 0.0 && *tpr <= 1.0)) return SMX_E_INVALID_ARG;
  /* the two sort buffers hold 16 bytes per score; each count is bounded
   * first, so that the subtraction cannot wrap */
  const size_t lim = (size_t)PTRDIFF_MAX / 16;
  if (n_ood > lim || n_id > lim - n_ood) return SMX_E_INVALID_ARG;
  return SMX_OK;
}

/* The f32 and f64 entry points differ only in the width of the sort keys
 * (bits: 32 or 64), so one body, written by this macro, serves both. */
#define OOD_METRICS_ENTRY(T, sfx, bits)                                                                          \
  smx_status smx_ood_metrics_##sfx(const T *id, const T *ood, smx_ood_metrics *out, size_t n_id, size_t n_ood, \
                                   double tpr, const smx_options *opt) {                                         \
    smx_status st = check_args(id, n_id, ood, n_ood, &tpr, out, opt);                                             \
    if (st) return st;                                                                                            \
    for (size_t i = 0; i < n_id; i++) if (id[i] != id[i]) return SMX_E_INVALID_ARG;                               \
    for (size_t i = 0; i < n_ood; i++) if (ood[i] != ood[i]) return SMX_E_INVALID_ARG;                            \
    size_t n = n_id + n_ood;                                                                                      \
    uint##bits##_t *k = smx_sort_buffer_alloc(n * sizeof *k), *t = smx_sort_buffer_alloc(n * sizeof *t);         \
    if (!k || !t) { smx_sort_buffer_free(k, n * sizeof *k); smx_sort_buffer_free(t, n * sizeof *t); return SMX_E_NOMEM; } \
    for (size_t i = 0; i < n_id; i++) k[i] = smx_key_from_##sfx(id[i]);                                          \
    for (size_t i = 0; i < n_ood; i++) k[n_id + i] = smx_key_from_##sfx(ood[i]);                                  \
    sorted_pair s = { .a##bits = smx_radix_sort_u##bits(k, t, n_id),                                              \
                      .b##bits = smx_radix_sort_u##bits(k + n_id, t + n_id, n_ood),                               \
                      .na = n_id, .nb = n_ood, .wide = bits == 64 };                                              \
    st = finish(&s, tpr, out);                                                                                    \
    smx_sort_buffer_free(k, n * sizeof *k);                                                                       \
    smx_sort_buffer_free(t, n * sizeof *t);                                                                       \
    return st;                                                                                                    \
  }

OOD_METRICS_ENTRY(double, f64, 64)
OOD_METRICS_ENTRY(float, f32, 32)
