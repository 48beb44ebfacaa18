/*
 * smx eval's outputs: the table on stdout and the JSON file. The JSON keeps
 * the key names of the digits-ood fixture's expected.json (OpenOOD's figures
 * under auroc / aupr_in / aupr_out / fpr95_oodpos, scikit-learn's under sk_*,
 * the papers' FPR under fpr95_idpos_*), so that scripts can compare directly.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <math.h>
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
    fprintf(f, "%-22s %8s %8s %8s %8s %8s %10s %10s\n", "score", "AUROC", "AUPR-In", "AUPR-Out", "AP-In", "AP-Out",
            "FPR(ID+)", "FPR(OOD+)");
    for (size_t k = 0; k < r->nk; k++) {
      const smx_ood_metrics *m = &d->m[k];
      smx_eval_score_label(r, k, lab, sizeof lab);
      fprintf(f, "%-22s %8.4f %8.4f %8.4f %8.4f %8.4f %10.4f %10.4f\n", lab, m->auroc, m->aupr_in_trapz,
              m->aupr_out_trapz, m->aupr_in, m->aupr_out, m->fpr_idpos, m->fpr_oodpos_openood);
    }
  }
  if (r->nood)
    fprintf(f, "AUPR: trapezoid as OpenOOD; AP: average precision as scikit-learn. FPR(ID+): share of OOD accepted when\n"
               "the ID are positive (papers); FPR(OOD+): share of ID flagged when the OOD are positive (OpenOOD v1.5).\n");
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
    fprintf(f, "%-14s %8s %8s %8s %8s %8s %8s %8s\n", "", "acc", "NLL", "Brier", "ECE", "MCE", "adaECE", "cwECE");
    for (int t = 0; t < 2; t++) {
      if (t == 1 && !(r->have_ts && r->ts_status == SMX_OK)) break;
      const smx_calibration *c = t ? &r->cal_ts : &r->cal;
      char row[64];
      if (t) snprintf(row, sizeof row, "T = %.6g", r->T);
      else snprintf(row, sizeof row, "T = 1");
      fprintf(f, "%-14s %8.4f %8.4f %8.4f %8.4f %8.4f %8.4f %8.4f\n", row, c->acc, c->nll, c->brier, c->ece, c->mce,
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

static void jmetrics(FILE *f, const smx_ood_metrics *m) {
  struct { const char *k; double v; } kv[] = {
    { "auroc", m->auroc },
    { "aupr_in", m->aupr_in_trapz },
    { "aupr_out", m->aupr_out_trapz },
    { "fpr95_oodpos", m->fpr_oodpos_openood },
    { "sk_roc_auc_idpos", m->auroc },
    { "sk_ap_in", m->aupr_in },
    { "sk_ap_out", m->aupr_out },
    { "fpr95_idpos_exact", m->fpr_idpos },
    { "fpr95_idpos_energyood", m->fpr_idpos_nearest },
    { "fpr95_oodpos_oe", m->fpr_oodpos_nearest },
    { "fpr95_oodpos_fullcurve", m->fpr_oodpos },
    { "threshold_idpos", m->thr_idpos },
    { "threshold_oodpos", m->thr_oodpos },
  };
  fputs("{", f);
  for (size_t i = 0; i < sizeof kv / sizeof kv[0]; i++) {
    fprintf(f, "%s\"%s\": ", i ? ", " : "", kv[i].k);
    jnum(f, kv[i].v);
  }
  fprintf(f, ", \"n_tied_values\": %llu}", (unsigned long long)m->n_tied_values);
}

static void jcalib(FILE *f, const smx_calibration *c, const smx_reliability_bin *b, size_t nb) {
  fprintf(f, "{\"acc\": ");
  jnum(f, c->acc);
  fprintf(f, ", \"ece%zu\": ", nb); jnum(f, c->ece);
  fprintf(f, ", \"mce%zu\": ", nb); jnum(f, c->mce);
  fprintf(f, ", \"adaptive_ece%zu\": ", nb); jnum(f, c->adaptive_ece);
  fprintf(f, ", \"classwise_ece%zu\": ", nb); jnum(f, c->classwise_ece);
  fprintf(f, ", \"nll\": "); jnum(f, c->nll);
  fprintf(f, ", \"brier\": "); jnum(f, c->brier);
  fprintf(f, ", \"n\": %llu,\n   \"reliability_bins_lo_hi_n_conf_acc\": [", (unsigned long long)c->n);
  int first = 1;
  for (size_t i = 0; i < nb; i++) {
    if (!b[i].n) continue;   /* as the fixture: non-empty bins only */
    fprintf(f, "%s[", first ? "" : ", ");
    jnum(f, b[i].lo); fputs(", ", f);
    jnum(f, b[i].hi);
    fprintf(f, ", %llu, ", (unsigned long long)b[i].n);
    jnum(f, b[i].conf); fputs(", ", f);
    jnum(f, b[i].acc);
    fputs("]", f);
    first = 0;
  }
  fputs("]}", f);
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
  if (r->have_ts) {
    fputs(",\n \"temperature\": {\"file\": ", f);
    jstr(f, r->val_path);
    fprintf(f, ", \"rows\": %llu, \"outcome\": \"%s\", \"T_star_val_nll\": ", (unsigned long long)r->val_rows,
            r->ts_status == SMX_OK ? "optimum"
            : r->ts.outcome == SMX_TS_TO_ZERO ? "no finite optimum: T -> 0" : "no finite optimum: T -> infinity");
    jnum(f, r->ts_status == SMX_OK ? r->T : NAN);
    fputs(", \"val_nll_T1\": ", f);
    jnum(f, r->ts.nll_at_1);
    fputs(", \"val_nll_Tstar\": ", f);
    jnum(f, r->ts.nll_at_t);
    fprintf(f, ", \"iterations\": %d}", r->ts.iterations);
  }
  if (r->have_calib) {
    fputs(",\n \"calibration_test\": ", f);
    jcalib(f, &r->cal, r->bins, r->nbins);
    if (r->have_ts && r->ts_status == SMX_OK) {
      fputs(",\n \"calibration_test_after_ts\": ", f);
      jcalib(f, &r->cal_ts, r->bins_ts, r->nbins);
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
