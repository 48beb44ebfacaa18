/*
 * Writes a sample report from synthetic data, for the rendering test and
 * for looking at: three scores (one with NaN and infinite values, one
 * constant), two OOD sets plus an empty one, a results table, and three
 * calibration sets (one without a finite temperature, one pre-binned).
 * Usage: make_sample_report OUT.html [N_ID]
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "report.h"

static uint64_t state = 12345;
static double uniform(void) {
  uint64_t z = (state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return (double)((z ^ (z >> 31)) >> 11) * 0x1p-53;
}
static double normal(void) {
  double u = uniform();
  if (u < 1e-300) u = 1e-300;
  return sqrt(-2 * log(u)) * cos(6.283185307179586 * uniform());
}
static double sigmoid(double x) { return 1 / (1 + exp(-x)); }

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: make_sample_report OUT.html [N_ID]\n");
    return 1;
  }
  size_t n = argc > 2 ? (size_t)strtoull(argv[2], NULL, 10) : 2000;
  size_t n1 = n * 3 / 2, n2 = n / 2;
  double *id_e = malloc(n * sizeof(double)), *o1_e = malloc(n1 * sizeof(double)), *o2_e = malloc(n2 * sizeof(double));
  double *id_m = malloc(n * sizeof(double)), *o1_m = malloc(n1 * sizeof(double)), *o2_m = malloc(n2 * sizeof(double));
  double *cst = malloc(n * sizeof(double)), *cst1 = malloc(n1 * sizeof(double));
  double *conf = malloc(n * sizeof(double)), *conf_ts = malloc(n * sizeof(double));
  unsigned char *ok = malloc(n);
  if (!id_e || !o1_e || !o2_e || !id_m || !o1_m || !o2_m || !cst || !cst1 || !conf || !conf_ts || !ok) return 2;
  for (size_t i = 0; i < n; i++) {
    id_e[i] = 6 + 1.2 * normal();
    id_m[i] = sigmoid(2.5 + 1.3 * normal());
    cst[i] = 0.25;
    /* under-confident model: right with probability above its confidence */
    double z = 1.5 + 1.1 * normal();
    conf[i] = 0.2 + 0.8 * sigmoid(z);
    ok[i] = uniform() < 0.2 + 0.8 * sigmoid(2.2 * z);
    conf_ts[i] = 0.2 + 0.8 * sigmoid(2.2 * z + 0.05 * normal());
  }
  for (size_t i = 0; i < n1; i++) {
    o1_e[i] = 3.5 + 1.5 * normal();
    o1_m[i] = sigmoid(0.8 + 1.2 * normal());
    cst1[i] = 0.25;
  }
  for (size_t i = 0; i < n2; i++) {
    o2_e[i] = 5 + 1.0 * normal();
    o2_m[i] = sigmoid(1.8 + 1.0 * normal());
  }
  /* some NaN and infinite MSP-like scores, and ties (rounded to 2 decimals) */
  for (size_t i = 0; i < n; i += 97) id_m[i] = NAN;
  for (size_t i = 0; i < n1; i += 211) o1_m[i] = INFINITY;
  for (size_t i = 0; i < n2; i++) o2_m[i] = round(o2_m[i] * 100) / 100;

  smx_report_ood_set energy_sets[] = { { "svhn_logits.npy", o1_e, n1 }, { "near-ood <cifar100>.npy", o2_e, n2 } };
  smx_report_ood_set msp_sets[] = { { "svhn_logits.npy", o1_m, n1 }, { "near-ood <cifar100>.npy", o2_m, n2 },
                                    { "empty.npy", NULL, 0 } };
  smx_report_ood_set cst_sets[] = { { "svhn_logits.npy", cst1, n1 } };
  smx_report_score scores[] = {
    { "Energy (T=1)", id_e, n, energy_sets, 2 },
    { "MSP", id_m, n, msp_sets, 3 },
    { "constant", cst, n, cst_sets, 1 },
  };
  const char *hdr[] = { "score", "OOD set", "AUROC", "AUPR-In", "FPR@95TPR" };
  const char *txt[] = { "Energy (T=1)", "svhn_logits.npy", NULL, NULL, NULL,
                        "MSP", "svhn_logits.npy", NULL, NULL, NULL,
                        "MSP & friends", "near-ood <cifar100>.npy", NULL, NULL, "—" };
  double val[] = { 0, 0, 0.9533, 0.9121, 0.2768,
                   0, 0, 0.9399, 0.8975, 0.4520,
                   0, 0, NAN, INFINITY, 0 };
  const int best[] = { 0, 0, 1, 1, -1 };
  smx_report_table tables[] = {
    { .caption = "OOD metrics (higher score = ID)", .ncols = 5, .nrows = 3, .header = hdr, .text = txt, .values = val,
      .digits = 4, .col_best = best },
  };
  const char *cal_hdr[] = { "set", "accuracy", "ECE", "NLL", "T" };
  const char *cal_txt[] = { "ID test", NULL, NULL, NULL, NULL };
  double cal_val[] = { 0, 0.9668, 0.1794, 0.2756, 0.143236 };
  int cal_digits[] = { 0, 4, 4, 4, 6 };
  smx_report_table cal_table = { .caption = "Calibration", .ncols = 5, .nrows = 1, .header = cal_hdr, .text = cal_txt,
                                 .values = cal_val, .digits = 4, .col_digits = cal_digits };
  smx_report_table all_tables[] = { tables[0], cal_table };
  smx_report_calibration cal[3] = {
    { .name = "ID test set", .n = n, .conf_before = conf, .correct_before = ok, .conf_after = conf_ts,
      .temperature = 0.143236 },
    { .name = "ID test set, all predictions right", .n = n, .conf_before = conf, .correct_before = ok,
      .temperature = NAN,
      .temperature_note = "no finite optimum: every validation sample is classified right, NLL falls as T goes to 0" },
  };
  /* the same data pre-binned by the caller into 20 bins, as smx eval does while streaming */
  smx_report_bin pre[20], pre_ts[20];
  for (int t = 0; t < 2; t++) {
    smx_report_bin *bins = t ? pre_ts : pre;
    const double *c = t ? conf_ts : conf;
    double sc[20] = { 0 }, sa[20] = { 0 };
    for (int m = 0; m < 20; m++) bins[m] = (smx_report_bin){ m / 20.0, (m + 1) / 20.0, 0, NAN, NAN };
    for (size_t i = 0; i < n; i++) {
      int m = (int)ceil(c[i] * 20) - 1;
      m = m < 0 ? 0 : m > 19 ? 19 : m;
      bins[m].n++;
      sc[m] += c[i];
      sa[m] += ok[i];
    }
    for (int m = 0; m < 20; m++)
      if (bins[m].n) {
        bins[m].conf = sc[m] / (double)bins[m].n;
        bins[m].acc = sa[m] / (double)bins[m].n;
      }
  }
  cal[2] = (smx_report_calibration){ .name = "ID test set, pre-binned (20 bins)", .bins_before = pre,
                                     .bins_after = pre_ts, .n_bins = 20, .temperature = 0.143236 };
  smx_report_item items[] = { { "ID logits", "test_logits.npy" }, { "labels", "test_labels.npy" },
                              { "OOD logits", "svhn_logits.npy, near-ood <cifar100>.npy" } };
  const char *notes[] = { "3 rows of svhn_logits.npy hold NaN logits: their scores are NaN & dropped." };
  smx_report r = { "smx eval: sample report", "synthetic scores <for the rendering test>", items, 3, notes, 1,
                   all_tables, 2, scores, 3, cal, 3, "ID (test_logits.npy)", 1 };
  char err[256];
  smx_status st = smx_report_write_html(argv[1], &r, err, sizeof err);
  if (st != SMX_OK) {
    fprintf(stderr, "make_sample_report: %s\n", err);
    return 3;
  }
  free(id_e); free(o1_e); free(o2_e); free(id_m); free(o1_m); free(o2_m);
  free(cst); free(cst1); free(conf); free(conf_ts); free(ok);
  return 0;
}
