/*
 * smx eval --report FILE.html: hands smx eval's results to the HTML renderer
 * (programs/report/report.h): the same tables as the terminal, the ROC
 * curves and score histograms of every score, and the reliability diagrams
 * of the ID set before and after temperature scaling.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/message.h"
#include "eval_result.h"
#include "report/report.h"

#define OOD_COLS (1 + SMX_EVAL_N_TABLE_METRICS)
#define CAL_COLS 8

static const char *base_of(const char *path) {
  const char *s = strrchr(path, '/');
  return s && s[1] ? s + 1 : path;
}

int smx_eval_write_report(const smx_eval_result *r, const char *path) {
  size_t nk = r->nk, no = r->nood;
  char labels[SMX_EVAL_MAX_SCORES][64];
  for (size_t k = 0; k < nk; k++) smx_eval_score_label(r, k, labels[k], sizeof labels[k]);

  /* tables: one per OOD set (they lead the page), then calibration; the
   * headers are the metric keys of the JSON and of smx.ood_metrics */
  const char *ood_hdr[OOD_COLS];
  int ood_best[OOD_COLS];
  ood_hdr[0] = "score";
  ood_best[0] = 0;
  for (size_t c = 0; c < SMX_EVAL_N_TABLE_METRICS; c++) {
    ood_hdr[c + 1] = smx_eval_metric_keys[smx_eval_table_metrics[c]].key;
    ood_best[c + 1] = smx_eval_metric_keys[smx_eval_table_metrics[c]].higher;
  }
  static const char *cal_hdr[CAL_COLS] = { "", "acc", "nll", "brier", "ece", "mce", "adaptive_ece", "classwise_ece" };
  static const int cal_best[CAL_COLS] = { 0, 0, -1, -1, -1, -1, -1, -1 };
  smx_report_table tables[SMX_EVAL_MAX_OOD + 1];
  static const char *ood_text[SMX_EVAL_MAX_OOD][SMX_EVAL_MAX_SCORES * OOD_COLS];
  static double ood_val[SMX_EVAL_MAX_OOD][SMX_EVAL_MAX_SCORES * OOD_COLS];
  static char captions[SMX_EVAL_MAX_OOD + 1][600];
  size_t nt = 0;
  for (size_t o = 0; o < no; o++, nt++) {
    for (size_t k = 0; k < nk; k++) {
      const smx_ood_metrics *m = &r->ood[o].m[k];
      const char **t = ood_text[o] + k * OOD_COLS;
      double *v = ood_val[o] + k * OOD_COLS;
      memset(t, 0, OOD_COLS * sizeof *t);
      t[0] = labels[k];
      v[0] = 0;
      for (size_t c = 0; c < SMX_EVAL_N_TABLE_METRICS; c++) v[c + 1] = smx_eval_metric(m, smx_eval_table_metrics[c]);
    }
    snprintf(captions[o], sizeof captions[o], "OOD metrics: %s (%llu rows) against %s (%llu rows); FPR at TPR %g",
             base_of(r->ood[o].path), (unsigned long long)r->ood[o].rows, base_of(r->id_path),
             (unsigned long long)r->id_rows, r->tpr);
    smx_report_table t = { .caption = captions[o], .ncols = OOD_COLS, .nrows = nk, .header = ood_hdr,
                           .text = ood_text[o], .values = ood_val[o], .digits = 4, .col_best = ood_best };
    tables[nt] = t;
  }
  const char *cal_text[2 * CAL_COLS] = { 0 }, *cal_notes[2 * CAL_COLS] = { 0 };
  double cal_val[2 * CAL_COLS] = { 0 };
  char trow[2][64], mce_note[2][80];
  int ts_ok = r->have_ts && r->ts_status == SMX_OK;
  if (r->have_calib) {
    size_t rows = ts_ok ? 2 : 1;
    for (size_t i = 0; i < rows; i++) {
      const smx_calibration *c = i ? &r->cal_ts : &r->cal;
      if (i) snprintf(trow[i], sizeof trow[i], "T = %.6g (fitted)", r->T);
      else snprintf(trow[i], sizeof trow[i], "T = 1");
      cal_text[i * CAL_COLS] = trow[i];
      double row[CAL_COLS] = { 0, c->acc, c->nll, c->brier, c->ece, c->mce, c->adaptive_ece, c->classwise_ece };
      memcpy(cal_val + i * CAL_COLS, row, sizeof row);
      /* The MCE is the gap of one bin: when that bin holds a handful of
       * samples it is mostly their noise (after scaling, often one stray
       * sample in an emptied bin), which the reader must see next to it. */
      const smx_reliability_bin *rb = i ? r->bins_ts : r->bins;
      size_t worst = SIZE_MAX;
      for (size_t m = 0; rb && m < r->nbins; m++)
        if (rb[m].n && (worst == SIZE_MAX || fabs(rb[m].acc - rb[m].conf) > fabs(rb[worst].acc - rb[worst].conf)))
          worst = m;
      if (worst != SIZE_MAX && rb[worst].n < SMX_REPORT_SPARSE_BIN) {
        snprintf(mce_note[i], sizeof mce_note[i], "from a bin of %llu sample%s: noise",
                 (unsigned long long)rb[worst].n, rb[worst].n == 1 ? "" : "s");
        cal_notes[i * CAL_COLS + 5] = mce_note[i];
      }
    }
    snprintf(captions[nt], sizeof captions[nt], "Calibration of %s against %s (%zu equal-width bins (lo, hi])",
             r->id_path, r->labels_path, r->nbins);
    smx_report_table t = { .caption = captions[nt], .ncols = CAL_COLS, .nrows = rows, .header = cal_hdr,
                           .text = cal_text, .values = cal_val, .digits = 4, .col_best = rows > 1 ? cal_best : NULL,
                           .cell_notes = cal_notes };
    tables[nt++] = t;
  }

  /* figures */
  smx_report_ood_set sets[SMX_EVAL_MAX_SCORES][SMX_EVAL_MAX_OOD];
  smx_report_score scores[SMX_EVAL_MAX_SCORES];
  for (size_t k = 0; k < nk; k++) {
    for (size_t o = 0; o < no; o++) {
      smx_report_ood_set s = { base_of(r->ood[o].path), r->ood[o].scores[k], (size_t)r->ood[o].rows };
      sets[k][o] = s;
    }
    smx_report_score s = { labels[k], r->id_scores[k], (size_t)r->id_rows, sets[k], no };
    scores[k] = s;
  }
  char calname[600], tnote[200];
  smx_report_calibration cal;
  memset(&cal, 0, sizeof cal);
  smx_report_bin *rbins = NULL;   /* the reliability bins before / after scaling, for the diagrams */
  if (r->have_calib && r->conf) {
    snprintf(calname, sizeof calname, "%s (%llu samples)", r->id_path, (unsigned long long)r->id_rows);
    cal.name = calname;
    cal.n = (size_t)r->id_rows;
    cal.conf_before = r->conf;
    cal.correct_before = r->correct;
    cal.conf_after = ts_ok ? r->conf_ts : NULL;
    cal.temperature = ts_ok ? r->T : NAN;
    /* the diagrams use the table's bins (--bins), not the renderer's default 15 */
    if (r->bins && r->nbins) {
      rbins = calloc(2 * r->nbins, sizeof *rbins);
      if (rbins) {
        for (size_t b = 0; b < r->nbins; b++) {
          smx_report_bin x = { r->bins[b].lo, r->bins[b].hi, r->bins[b].n, r->bins[b].conf, r->bins[b].acc };
          rbins[b] = x;
          if (ts_ok && r->bins_ts) {
            smx_report_bin y = { r->bins_ts[b].lo, r->bins_ts[b].hi, r->bins_ts[b].n, r->bins_ts[b].conf,
                                 r->bins_ts[b].acc };
            rbins[r->nbins + b] = y;
          }
        }
        cal.bins_before = rbins;
        cal.bins_after = ts_ok && r->bins_ts ? rbins + r->nbins : NULL;
        cal.n_bins = r->nbins;
      }
    }
    if (!r->have_ts) snprintf(tnote, sizeof tnote, "no temperature fitted (give --val and --val-labels)");
    else if (!ts_ok)
      snprintf(tnote, sizeof tnote, "no finite optimum: %s",
               r->ts.outcome == SMX_TS_TO_ZERO ? "every validation sample is right, the NLL falls as T -> 0"
                                               : "the NLL falls as T -> infinity");
    else snprintf(tnote, sizeof tnote, "fitted on %s by Newton on the validation NLL", r->val_path);
    cal.temperature_note = tnote;
  }

  /* header lines and notes */
  smx_report_item items[6 + 2 * SMX_EVAL_MAX_OOD];
  size_t ni = 0;
  smx_report_item id = { "ID logits", r->id_path };
  items[ni++] = id;
  for (size_t o = 0; o < no; o++) {
    smx_report_item it = { "OOD logits", r->ood[o].path };
    items[ni++] = it;
  }
  if (r->features_from) {
    smx_report_item a = { r->features_fitted ? "training features" : "feature model", r->features_from },
                    b = { "ID features", r->id_features_path };
    items[ni++] = a;
    items[ni++] = b;
    for (size_t o = 0; o < no; o++) {
      smx_report_item it = { "OOD features", r->ood[o].features_path };
      items[ni++] = it;
    }
  }
  if (r->labels_path) { smx_report_item it = { "ID labels", r->labels_path }; items[ni++] = it; }
  if (r->val_path) { smx_report_item it = { "validation logits", r->val_path }; items[ni++] = it; }
  if (r->val_labels_path) { smx_report_item it = { "validation labels", r->val_labels_path }; items[ni++] = it; }
  const char *notes[4];
  size_t nn = 0;
  notes[nn++] = "Every score is 'higher = more in-distribution'. The column headers are the keys of smx eval --json "
                "and of Python's smx.ood_metrics: ap_* is scikit-learn's average precision, aupr_*_trapz the "
                "trapezoid over the precision-recall points as OpenOOD v1.5; fpr_idpos_exact: share of OOD "
                "accepted at the first threshold accepting the TPR share of ID (papers); fpr_oodpos_openood: share "
                "of ID flagged when the TPR share of OOD is flagged (OpenOOD v1.5). Ties enter the curves together. "
                "Every key: docs/metrics.md.";
  for (size_t k = 0; k < nk; k++)
    if (r->kinds[k] == SMX_SCORE_ODIN) {
      notes[nn++] = "ODIN here is the temperature-scaled MSP without input perturbation (eps = 0): the perturbation "
                    "needs the model's gradient. Pass logits of perturbed inputs to get full ODIN.";
      break;
    }
  if (r->features_from)
    notes[nn++] = "Feature scores (docs/scores.md section 8, OpenOOD v1.5): mahalanobis = max over classes of "
                  "-(f - mu_c)^T S^-1 (f - mu_c); knn_kK = -(squared distance to the k-th nearest unit training "
                  "feature); vim_DD = -alpha r + logsumexp(logits), r the residual outside the top-D principal space "
                  "about u = -W^+ b; residual_DD = -r; react_pP = energy of the logits of the features clipped at the "
                  "P-th training percentile.";
  smx_report rep;
  memset(&rep, 0, sizeof rep);
  rep.title = "smx eval";
  rep.subtitle = r->features_from ? "OOD detection and calibration from logits and features"
                                  : "OOD detection and calibration from logits";
  rep.items = items;
  rep.n_items = ni;
  rep.notes = notes;
  rep.n_notes = nn;
  rep.tables = tables;
  rep.n_tables = nt;
  rep.scores = nk ? scores : NULL;
  rep.n_scores = nk;
  rep.calibration = cal.name ? &cal : NULL;
  rep.n_calibration = cal.name ? 1 : 0;
  rep.id_name = "ID";
  rep.n_lead_tables = no;
  char err[512];
  smx_status st = smx_report_write_html(path, &rep, err, sizeof err);
  free(rbins);
  if (st != SMX_OK)
    return smx_cli_fail(st == SMX_E_IO ? SMX_CLI_EXIT_OUTPUT : SMX_CLI_EXIT_COMPUTE, "%s", err);
  return 0;
}
