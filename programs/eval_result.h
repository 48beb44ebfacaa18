/* What smx eval computed, for its table, its JSON and the HTML report. */
#ifndef SMX_PROGRAMS_EVAL_RESULT_H
#define SMX_PROGRAMS_EVAL_RESULT_H

#include <stddef.h>
#include <stdio.h>

#include "smx/smx.h"

#define SMX_EVAL_MAX_SCORES 16
#define SMX_EVAL_MAX_OOD 64

typedef struct smx_eval_ood {
  const char *path;
  const char *perturbed_path;               /* --perturbed-ood: ODIN's logits of perturbed inputs */
  const char *features_path;                /* --ood-features: its penultimate features */
  uint64_t rows;
  double *scores[SMX_EVAL_MAX_SCORES];      /* per score kind, rows values */
  smx_ood_metrics m[SMX_EVAL_MAX_SCORES];
} smx_eval_ood;

typedef struct smx_eval_result {
  const char *id_path, *labels_path, *val_path, *val_labels_path;
  const char *perturbed_id_path;  /* --perturbed-id: ODIN scores come from perturbed-input logits */
  uint64_t id_rows, K, val_rows;
  size_t nk;                      /* scores: the logit ones first, then the feature ones */
  smx_score_kind kinds[SMX_EVAL_MAX_SCORES];
  int feature[SMX_EVAL_MAX_SCORES];               /* 0: a logit score; else its smx_feature_method */
  char feature_label[SMX_EVAL_MAX_SCORES][48];    /* "knn_k50", "vim_D16", ... */
  const char *id_features_path;   /* --id-features */
  const char *features_from;      /* --features-model or --train-features */
  int features_fitted;            /* 1: features_from is the training features, fitted here */
  double vim_alpha, react_threshold;   /* of the feature model (NaN when absent) */
  smx_score_params params[SMX_EVAL_MAX_SCORES];
  double *id_scores[SMX_EVAL_MAX_SCORES];
  size_t nood;
  smx_eval_ood ood[SMX_EVAL_MAX_OOD];
  double tpr;
  const double *templates;        /* K x K, or NULL */
  int have_calib;                 /* --labels given */
  size_t nbins;
  smx_calibration cal, cal_ts;    /* T = 1, and T = T* (when have_ts) */
  smx_reliability_bin *bins, *bins_ts;
  int have_ts;                    /* --val-labels given: ts_status says how the fit went */
  smx_status ts_status;
  double T;
  smx_ts_info ts;
  /* per ID sample, kept only for --report with --labels: confidence at T = 1
   * and at T* (max softmax, in double), and whether the argmax is the label */
  double *conf, *conf_ts;
  unsigned char *correct;
} smx_eval_result;

/*
 * The OOD metrics by name: the keys of the JSON, the report's column headers
 * and smx.ood_metrics' dict keys are these field names of smx_ood_metrics
 * (docs/metrics.md). `higher` is +1 where larger is better, -1 where smaller
 * is, 0 for what is not a quality (thresholds).
 */
typedef struct smx_eval_metric_key {
  const char *key;
  size_t offset;   /* of the double in smx_ood_metrics */
  int higher;
} smx_eval_metric_key;
extern const smx_eval_metric_key smx_eval_metric_keys[];
extern const size_t smx_eval_n_metric_keys;
static inline double smx_eval_metric(const smx_ood_metrics *m, size_t i) {
  return *(const double *)(const void *)((const char *)m + smx_eval_metric_keys[i].offset);
}

/* The metrics of the table on stdout and in the report: indices into smx_eval_metric_keys. */
#define SMX_EVAL_N_TABLE_METRICS 7
extern const size_t smx_eval_table_metrics[SMX_EVAL_N_TABLE_METRICS];

/* "energy_T1", "odin_T1000", "gen_g0.1_M100": the score's name with its parameters. */
void smx_eval_score_label(const smx_eval_result *r, size_t k, char *buf, size_t len);
void smx_eval_print_table(const smx_eval_result *r, FILE *f);
/* Writes the JSON through a temporary file renamed at the end; 0 or an exit code. */
int smx_eval_write_json(const smx_eval_result *r, const char *path);
/* Writes the HTML report (programs/report/); 0 or an exit code. */
int smx_eval_write_report(const smx_eval_result *r, const char *path);

#endif
