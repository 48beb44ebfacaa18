/*
 * ROC curves of one score, ID as the positive class: the exact curve walked
 * over the distinct thresholds of two sorted sets, its area, the point at
 * 95% TPR, and a thinned copy of bounded size for drawing.
 */
#ifndef SMX_REPORT_ROC_H
#define SMX_REPORT_ROC_H

#include <stddef.h>

#include "score_set.h"
#include "strbuf.h"

typedef struct rep_roc {
  double *fpr, *tpr;   /* the drawn points, (0,0) first and (1,1) last */
  size_t n;            /* at most max_points + 2                        */
  size_t n_full;       /* points of the exact curve, (0,0) included     */
  double auroc;        /* exact area under the exact curve              */
  double fpr95, tpr95; /* first point, going down, with TPR >= 0.95     */
  double thr95;        /* its threshold (score >= thr95 accepted as ID) */
} rep_roc;

/*
 * id and ood must each hold at least one value (sorted, descending, as
 * rep_scores_make leaves them). max_points >= 2. Returns 0, or -1 when
 * memory runs out (then *out is empty).
 */
int rep_roc_compute(rep_roc *out, const rep_scores *id, const rep_scores *ood, size_t max_points);
void rep_roc_free(rep_roc *r);

/*
 * The ROC figure of one score: one curve per OOD set (ood[k] may be empty:
 * it is then named in the legend as "no scores"), the chance diagonal, the
 * 95%-TPR markers and a legend with AUROC and FPR at 95% TPR.
 * Returns 0 or -1 (no memory).
 */
int rep_roc_figure(rep_buf *b, const char *score_name, const rep_scores *id, const rep_scores *ood,
                   const char *const *ood_names, size_t n_ood, int compact);

/*
 * The ROC overlay of one OOD set: the curve of every score k (ids[k] against
 * oods[k], named score_names[k]) in one plot, the legend sorted by AUROC
 * (best first, with its value). Scores with an empty side are listed as
 * "no curve". Returns 0 or -1 (no memory).
 */
int rep_roc_overlay(rep_buf *b, const char *set_name, const rep_scores *ids, const rep_scores *oods,
                    const char *const *score_names, size_t n);

#endif
