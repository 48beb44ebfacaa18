/*
 * smx eval's outputs: the table on stdout and the JSON file. Every metric is
 * written under the name of its smx_ood_metrics / smx_calibration field, the
 * same key smx.ood_metrics and smx.calibration use in Python (docs/metrics.md
 * lists them with the convention each follows).
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/message.h"
#include "cli/signals.h"
#include "io/fileio.h"
#include "eval_result.h"

void smx_eval_score_label(const smx_eval_result *r, size_t k, char *buf, size_t len) {
  const smx_score_params *p = &r->params[k];
  if (r->feature[k]) {
    snprintf(buf, len, "%s", r->feature_label[k]);
    return;
  }
  const char *name = smx_score_name(r->kinds[k]);
  switch (r->kinds[k]) {
    case SMX_SCORE_ENERGY: snprintf(buf, len, "%s_T%g", name, p->temperature ? p->temperature : 1.0); break;
    case SMX_SCORE_ODIN:
      snprintf(buf, len, "%s_T%g%s", name, p->temperature ? p->temperature : 1000.0,
               r->perturbed_id_path ? "_perturbed" : "");
      break;
    case SMX_SCORE_GEN:
      snprintf(buf, len, "%s_g%g_M%zu", name, p->gen_gamma ? p->gen_gamma : 0.1, p->gen_m ? p->gen_m : (size_t)100);
      break;
    default: snprintf(buf, len, "%s", name);
  }
}

/* auroc, ap_in, ap_out, aupr_in_trapz, aupr_out_trapz, fpr_idpos_exact, fpr_oodpos_openood */
const size_t smx_eval_table_metrics[SMX_EVAL_N_TABLE_METRICS] = { 0, 1, 2, 3, 4, 5, 7 };

static int col_width(size_t c) {
  size_t n = strlen(smx_eval_metric_keys[smx_eval_table_metrics[c]].key);
  return n < 8 ? 8 : (int)n;
}

static void base_name(const char *path, char *buf, size_t len) {
  const char *s = strrchr(path, '/');
  snprintf(buf, len, "%s", s ? s + 1 : path);
}

void smx_eval_print_table(const smx_eval_result *r, FILE *f) {
  char lab[64], name[256];
  base_name(r->id_path, name, sizeof name);
  fprintf(f, "ID: %s (%llu rows, %llu classes)\n", r->id_path, (unsigned long long)r->id_rows,
          (unsigned long long)r->K);
  for (size_t o = 0; o < r->nood; o++) {
    const smx_eval_ood *d = &r->ood[o];
    fprintf(f, "\nOOD: %s (%llu rows)   higher score = more in-distribution; FPR at TPR %g\n", d->path,
            (unsigned long long)d->rows, r->tpr);
    fprintf(f, "%-22s", "score");
    for (size_t c = 0; c < SMX_EVAL_N_TABLE_METRICS; c++)
      fprintf(f, " %*s", col_width(c), smx_eval_metric_keys[smx_eval_table_metrics[c]].key);
    fputc('\n', f);
    for (size_t k = 0; k < r->nk; k++) {
      smx_eval_score_label(r, k, lab, sizeof lab);
      fprintf(f, "%-22s", lab);
      for (size_t c = 0; c < SMX_EVAL_N_TABLE_METRICS; c++)
        fprintf(f, " %*.4f", col_width(c), smx_eval_metric(&d->m[k], smx_eval_table_metrics[c]));
      fputc('\n', f);
    }
  }
  if (r->nood)
    fprintf(f, "ap_*: average precision as scikit-learn; aupr_*_trapz: trapezoid as OpenOOD v1.5. fpr_idpos_exact:\n"
               "share of OOD accepted when the ID are positive (papers); fpr_oodpos_openood: share of ID flagged when\n"
               "the OOD are positive (OpenOOD v1.5). Every key: docs/metrics.md.\n");
  if (r->have_ts) {
    if (r->ts_status == SMX_OK)
      fprintf(f, "\ntemperature scaling on %s: T = %.6f (validation NLL %.4f at T = 1, %.4f at T)\n", r->val_path, r->T,
              r->ts.nll_at_1, r->ts.nll_at_t);
    else
      fprintf(f, "\ntemperature scaling on %s: no finite optimum (%s)\n", r->val_path,
              r->ts.outcome == SMX_TS_TO_ZERO ? "all validation samples correct: NLL falls as T -> 0"
                                              : "NLL falls as T -> infinity");
  }
  if (r->have_calib) {
    fprintf(f, "\ncalibration of %s against %s (%zu equal-width bins (lo, hi])\n", r->id_path, r->labels_path, r->nbins);
    fprintf(f, "%-14s %8s %8s %8s %8s %8s %13s %13s\n", "", "acc", "nll", "brier", "ece", "mce", "adaptive_ece",
            "classwise_ece");
    for (int t = 0; t < 2; t++) {
      if (t == 1 && !(r->have_ts && r->ts_status == SMX_OK)) break;
      const smx_calibration *c = t ? &r->cal_ts : &r->cal;
      char row[64];
      if (t) snprintf(row, sizeof row, "T = %.6g", r->T);
      else snprintf(row, sizeof row, "T = 1");
      fprintf(f, "%-14s %8.4f %8.4f %8.4f %8.4f %8.4f %13.4f %13.4f\n", row, c->acc, c->nll, c->brier, c->ece, c->mce,
              c->adaptive_ece, c->classwise_ece);
    }
  }
}

/* ------------------------------------------------------------------ JSON */
static void jnum(FILE *f, double v) {
  if (v != v || isinf(v)) fputs("null", f);
  else fprintf(f, "%.17g", v);
}

static void jstr(FILE *f, const char *s) {
  fputc('"', f);
  for (; *s; s++) {
    unsigned char c = (unsigned char)*s;
    if (c == '"' || c == '\\') fprintf(f, "\\%c", c);
    else if (c < 0x20) fprintf(f, "\\u%04x", c);
    else fputc(c, f);
  }
  fputc('"', f);
}

const smx_eval_metric_key smx_eval_metric_keys[] = {
  { "auroc", offsetof(smx_ood_metrics, auroc), 1 },
  { "ap_in", offsetof(smx_ood_metrics, ap_in), 1 },
  { "ap_out", offsetof(smx_ood_metrics, ap_out), 1 },
  { "aupr_in_trapz", offsetof(smx_ood_metrics, aupr_in_trapz), 1 },
  { "aupr_out_trapz", offsetof(smx_ood_metrics, aupr_out_trapz), 1 },
  { "fpr_idpos_exact", offsetof(smx_ood_metrics, fpr_idpos_exact), -1 },
  { "fpr_oodpos_exact", offsetof(smx_ood_metrics, fpr_oodpos_exact), -1 },
  { "fpr_oodpos_openood", offsetof(smx_ood_metrics, fpr_oodpos_openood), -1 },
  { "fpr_idpos_nearest", offsetof(smx_ood_metrics, fpr_idpos_nearest), -1 },
  { "fpr_oodpos_nearest", offsetof(smx_ood_metrics, fpr_oodpos_nearest), -1 },
  { "thr_idpos_exact", offsetof(smx_ood_metrics, thr_idpos_exact), 0 },
  { "thr_oodpos_exact", offsetof(smx_ood_metrics, thr_oodpos_exact), 0 },
  { "tpr", offsetof(smx_ood_metrics, tpr), 0 },
};
const size_t smx_eval_n_metric_keys = sizeof smx_eval_metric_keys / sizeof smx_eval_metric_keys[0];

static void jmetrics(FILE *f, const smx_ood_metrics *m) {
  fputs("{", f);
  for (size_t i = 0; i < smx_eval_n_metric_keys; i++) {
    fprintf(f, "%s\"%s\": ", i ? ", " : "", smx_eval_metric_keys[i].key);
    jnum(f, smx_eval_metric(m, i));
  }
  fprintf(f, ", \"n_id\": %llu, \"n_ood\": %llu, \"n_tied_values\": %llu}", (unsigned long long)m->n_id,
          (unsigned long long)m->n_ood, (unsigned long long)m->n_tied_values);
}

/* The keys of smx.calibration: the smx_calibration fields, then the
 * reliability diagram as arrays over all bins (null mean confidence and
 * accuracy for an empty bin). */
static void jcalib(FILE *f, const smx_calibration *c, const smx_reliability_bin *b, size_t nb, double T) {
  fputs("{\"temperature\": ", f);
  jnum(f, T);
  fprintf(f, ", \"n\": %llu", (unsigned long long)c->n);
  struct { const char *k; double v; } kv[] = {
    { "acc", c->acc }, { "nll", c->nll }, { "brier", c->brier }, { "ece", c->ece }, { "mce", c->mce },
    { "adaptive_ece", c->adaptive_ece }, { "classwise_ece", c->classwise_ece },
  };
  for (size_t i = 0; i < sizeof kv / sizeof kv[0]; i++) {
    fprintf(f, ", \"%s\": ", kv[i].k);
    jnum(f, kv[i].v);
  }
  fprintf(f, ", \"bins\": %zu", nb);
  static const char *const arr[] = { "bin_lo", "bin_hi", "bin_count", "bin_conf", "bin_acc" };
  for (int a = 0; a < 5; a++) {
    fprintf(f, ",\n   \"%s\": [", arr[a]);
    for (size_t i = 0; i < nb; i++) {
      if (i) fputs(", ", f);
      if (a == 2) fprintf(f, "%llu", (unsigned long long)b[i].n);
      else jnum(f, a == 0 ? b[i].lo : a == 1 ? b[i].hi : !b[i].n ? NAN : a == 3 ? b[i].conf : b[i].acc);
    }
    fputs("]", f);
  }
  fputs("}", f);
}

static void write_body(const smx_eval_result *r, FILE *f) {
  char lab[64];
  fprintf(f, "{\n \"tool\": \"smx %s\",\n \"convention\": \"higher score = more in-distribution\",\n", smx_version_string());
  fputs(" \"id\": {\"file\": ", f);
  jstr(f, r->id_path);
  fprintf(f, ", \"rows\": %llu, \"classes\": %llu},\n", (unsigned long long)r->id_rows, (unsigned long long)r->K);
  fputs(" \"scores\": [", f);
  for (size_t k = 0; k < r->nk; k++) {
    smx_eval_score_label(r, k, lab, sizeof lab);
    fprintf(f, "%s", k ? ", " : "");
    jstr(f, lab);
  }
  fprintf(f, "],\n \"tpr\": ");
  jnum(f, r->tpr);
  fputs(",\n \"ood_sets\": [", f);
  for (size_t o = 0; o < r->nood; o++) {
    fprintf(f, "%s\n  {\"file\": ", o ? "," : "");
    jstr(f, r->ood[o].path);
    fprintf(f, ", \"rows\": %llu, \"ood\": {", (unsigned long long)r->ood[o].rows);
    for (size_t k = 0; k < r->nk; k++) {
      smx_eval_score_label(r, k, lab, sizeof lab);
      fprintf(f, "%s\n   ", k ? "," : "");
      jstr(f, lab);
      fputs(": ", f);
      jmetrics(f, &r->ood[o].m[k]);
    }
    fputs("}}", f);
  }
  fputs("\n ]", f);
  if (r->templates) {
    fputs(",\n \"kl_matching_templates\": [", f);
    for (uint64_t i = 0; i < r->K; i++) {
      fprintf(f, "%s[", i ? ", " : "");
      for (uint64_t j = 0; j < r->K; j++) {
        if (j) fputs(", ", f);
        jnum(f, r->templates[i * r->K + j]);
      }
      fputs("]", f);
    }
    fputs("]", f);
  }
  if (r->features_from) {
    fputs(",\n \"features\": {\"model\": ", f);
    jstr(f, r->features_from);
    fputs(", \"id\": ", f);
    jstr(f, r->id_features_path);
    fputs(", \"vim_alpha\": ", f);
    jnum(f, r->vim_alpha);
    fputs(", \"react_threshold\": ", f);
    jnum(f, r->react_threshold);
    fputs("}", f);
  }
  if (r->have_ts) {
    /* the keys of smx.fit_temperature(..., return_info=True): T and the info dict */
    fputs(",\n \"temperature\": {\"file\": ", f);
    jstr(f, r->val_path);
    fprintf(f, ", \"rows\": %llu, \"T\": ", (unsigned long long)r->val_rows);
    jnum(f, r->ts_status == SMX_OK ? r->T : NAN);
    fprintf(f, ", \"outcome\": \"%s\", \"iterations\": %d, \"nll_at_1\": ",
            r->ts_status == SMX_OK ? "optimum" : r->ts.outcome == SMX_TS_TO_ZERO ? "to_zero" : "to_infinity",
            r->ts.iterations);
    jnum(f, r->ts.nll_at_1);
    fputs(", \"nll_at_t\": ", f);
    jnum(f, r->ts.nll_at_t);
    fputs(", \"grad\": ", f);
    jnum(f, r->ts.grad);
    fputs("}", f);
  }
  if (r->have_calib) {
    fputs(",\n \"calibration\": ", f);
    jcalib(f, &r->cal, r->bins, r->nbins, 1.0);
    if (r->have_ts && r->ts_status == SMX_OK) {
      fputs(",\n \"calibration_after_ts\": ", f);
      jcalib(f, &r->cal_ts, r->bins_ts, r->nbins, r->T);
    }
  }
  fputs("\n}\n", f);
}

int smx_eval_write_json(const smx_eval_result *r, const char *path) {
  if (!strcmp(path, "-")) {
    write_body(r, stdout);
    return fflush(stdout) ? smx_cli_fail(SMX_CLI_EXIT_OUTPUT, "stdout: %s", strerror(errno)) : 0;
  }
  smx_io_out o;
  int e = smx_io_out_open(&o, path);
  if (e) return smx_cli_fail(SMX_CLI_EXIT_OUTPUT, "%s: not written: %s", path, strerror(e));
  cli_cleanup_register(o.tmp);
  int dfd = dup(o.fd);
  FILE *f = dfd >= 0 ? fdopen(dfd, "w") : NULL;
  const char *what = "cannot write";
  if (!f) {
    e = errno;
    if (dfd >= 0) close(dfd);
  } else {
    write_body(r, f);
    if (ferror(f) | (fflush(f) != 0)) e = errno ? errno : EIO;
    if (fclose(f) != 0 && !e) e = errno;
  }
  cli_cleanup_unregister(o.tmp);
  if (e) smx_io_out_abort(&o);
  else e = smx_io_out_commit(&o, &what);
  return e ? smx_cli_fail(SMX_CLI_EXIT_OUTPUT, "%s: not written: %s: %s", path, what, strerror(e)) : 0;
}
