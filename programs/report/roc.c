#include "roc.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "escape.h"
#include "report.h"
#include "svg.h"

void rep_roc_free(rep_roc *r) {
  free(r->fpr);
  free(r->tpr);
  memset(r, 0, sizeof *r);
}

/* Where an FPR is drawn along x, in [0, 1]: itself, or on a log axis from
 * 10^-decades (0 and anything below drawn on the left edge) to 1. */
static double x_of(double fpr, double decades) {
  if (decades <= 0) return fpr;
  double u = fpr > 0 ? 1 + log10(fpr) / decades : 0;
  return u < 0 ? 0 : u;
}

static int roc_compute(rep_roc *out, const rep_scores *id, const rep_scores *ood, size_t max_points, double decades);

int rep_roc_compute(rep_roc *out, const rep_scores *id, const rep_scores *ood, size_t max_points) {
  return roc_compute(out, id, ood, max_points, 0);
}

/* decades > 0: points are thinned by their distance as drawn on the log-FPR
 * axis, so that the stretched low-FPR end keeps its detail. */
static int roc_compute(rep_roc *out, const rep_scores *id, const rep_scores *ood, size_t max_points, double decades) {
  memset(out, 0, sizeof *out);
  const size_t nid = id->n, nood = ood->n;
  const double *a = id->v, *o = ood->v;
  size_t cap = max_points + 2;
  out->fpr = malloc(cap * sizeof *out->fpr);
  out->tpr = malloc(cap * sizeof *out->tpr);
  if (out->fpr == NULL || out->tpr == NULL) {
    rep_roc_free(out);
    return -1;
  }
  /* Thinning: keep a point when it lies at least `step` (L1) from the last
   * kept one. The curve is monotone from (0,0) to (1,1), so its L1 length is
   * 2 and at most 2 / step = max_points points pass between the first and
   * the last; every dropped point is within `step` of a kept one. (On the
   * log axis x_of is monotone from 0 to 1 too: the same bound holds.) */
  const double step = 2.0 / (double)max_points;
  /* The area in integer counts: sum over steps of d_ood * (i_before + i_after),
   * divided by 2 nid nood at the end - exact while the sum fits 64 bits,
   * which it does up to 2^31 scores per set; beyond, long double. */
  const int exact = nid <= (UINT64_C(1) << 31) && nood <= (UINT64_C(1) << 31);
  uint64_t area2 = 0;
  long double area2l = 0;
  size_t i = 0, j = 0, k = 0;
  int have95 = 0;
  out->fpr[k] = 0;
  out->tpr[k] = 0;
  k++;
  out->n_full = 1;
  while (i < nid || j < nood) {
    double t = i < nid && (j >= nood || a[i] >= o[j]) ? a[i] : o[j];
    size_t i0 = i, j0 = j;
    while (i < nid && a[i] == t) i++;  /* tied scores enter together */
    while (j < nood && o[j] == t) j++;
    if (exact) area2 += (uint64_t)(j - j0) * (uint64_t)(i0 + i);
    else area2l += (long double)(j - j0) * ((long double)i0 + (long double)i);
    out->n_full++;
    double x = (double)j / (double)nood, y = (double)i / (double)nid;
    /* 0.95 = 19/20, compared in integers so that exactly 95% counts */
    if (!have95 && (uint64_t)i * 20 >= (uint64_t)nid * 19) {
      have95 = 1;
      out->fpr95 = x;
      out->tpr95 = y;
      out->thr95 = t;
    }
    /* the last slot is kept for (1,1), whatever rounding did to the distances */
    if (i == nid && j == nood) {
      if (k == cap) k--;
      out->fpr[k] = x;
      out->tpr[k] = y;
      k++;
    } else if (k < cap - 1 &&
               fabs(x_of(x, decades) - x_of(out->fpr[k - 1], decades)) + fabs(y - out->tpr[k - 1]) >= step) {
      out->fpr[k] = x;
      out->tpr[k] = y;
      k++;
    }
  }
  out->n = k;
  out->auroc = exact ? (double)area2 / (2.0 * (double)nid * (double)nood)
                     : (double)(area2l / (2.0L * (long double)nid * (long double)nood));
  return 0;
}

static void fmt_num(char *out, size_t cap, double v) {
  if (isinf(v)) snprintf(out, cap, "%s", v > 0 ? "+inf" : "-inf");
  else snprintf(out, cap, "%.6g", v);
}

int rep_roc_figure(rep_buf *b, const char *score_name, const rep_scores *id, const rep_scores *ood,
                   const char *const *ood_names, size_t n_ood, int compact) {
  const double W = compact ? 290 : 480, plot = compact ? 200 : 340, left = compact ? 62 : 78, top = 40;
  double legend_top = top + plot + 62;
  double H = legend_top + 34.0 * (double)n_ood + 17 + 8;
  rep_plot p = { left, top, plot, plot, 0, 1, 0, 1 };
  rep_buf title = { 0 };
  rep_put(&title, "ROC: ");
  rep_put(&title, score_name);
  if (title.failed) { rep_free(&title); return -1; }
  rep_svg_open(b, "roc", score_name, W, H, title.data);
  rep_free(&title);
  if (compact) rep_axes(b, &p, "FPR (OOD accepted)", "TPR (ID accepted)", 5, 5);
  else rep_axes(b, &p, "FPR: fraction of the OOD set accepted as ID", "TPR: fraction of the ID set accepted", 5, 5);
  rep_printf(b, "<line class=\"chance\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#888\" stroke-dasharray=\"3 4\"/>\n",
             rep_px(&p, 0), rep_py(&p, 0), rep_px(&p, 1), rep_py(&p, 1));
  double ly = legend_top;
  for (size_t s = 0; s < n_ood; s++) {
    rep_style st = rep_series_style(s + 1);
    char detail[200];
    if (id->n == 0 || ood[s].n == 0) {
      snprintf(detail, sizeof detail, "%s", id->n == 0 ? "no ID score: no curve" : "no score in this set: no curve");
    } else {
      rep_roc r;
      if (rep_roc_compute(&r, id, &ood[s], SMX_REPORT_ROC_MAX_POINTS) != 0) return -1;
      rep_printf(b, "<polyline class=\"curve\" fill=\"none\" stroke=\"%s\" stroke-width=\"2\" stroke-linejoin=\"round\"%s%s%s points=\"",
                 st.color, st.dash[0] ? " stroke-dasharray=\"" : "", st.dash, st.dash[0] ? "\"" : "");
      for (size_t k = 0; k < r.n; k++)
        rep_printf(b, "%s%.1f,%.1f", k ? " " : "", rep_px(&p, r.fpr[k]), rep_py(&p, r.tpr[k]));
      rep_put(b, "\"/>\n");
      rep_printf(b, "<circle class=\"tpr95\" cx=\"%.1f\" cy=\"%.1f\" r=\"4\" fill=\"#fff\" stroke=\"%s\" stroke-width=\"2\"/>\n",
                 rep_px(&p, r.fpr95), rep_py(&p, r.tpr95), st.color);
      char thr[40];
      fmt_num(thr, sizeof thr, r.thr95);
      if (compact) snprintf(detail, sizeof detail, "AUROC %.4f; FPR %.4f at TPR %.4f", r.auroc, r.fpr95, r.tpr95);
      else
        snprintf(detail, sizeof detail, "AUROC %.4f; FPR %.4f at TPR %.4f (score \xE2\x89\xA5 %s)", r.auroc, r.fpr95,
                 r.tpr95, thr);
      rep_roc_free(&r);
    }
    ly = rep_legend_line(b, left - 60, ly, &st, ood_names[s], detail);
  }
  rep_style chance = { "#888", "3 4", 0 };
  rep_legend_line(b, left - 60, ly, &chance, compact ? "chance; circle: TPR \xE2\x89\xA5 0.95"
                                                       : "chance; circles: first threshold with TPR \xE2\x89\xA5 0.95", NULL);
  rep_svg_close(b);
  return 0;
}

/* Styles of the overlay: ten colours, dashes cycled on a different period so
 * that no two of the first 35 curves look alike. */
static rep_style overlay_style(size_t i) {
  static const char *const colors[] = { "#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00",
                                        "#56B4E9", "#000000", "#8C564B", "#7F7F7F", "#B8860B" };
  static const char *const dashes[] = { "", "7 3", "2 2", "9 3 2 3", "4 4" };
  rep_style s = { colors[i % 10], dashes[i % 5], 0 };
  return s;
}

/* The decades of the overlay's log-FPR axis: down to the smallest nonzero
 * FPR any curve can have (1 / the largest OOD set), rounded down to a power
 * of ten, between 2 and 4 decades: below 1e-4 there are too few OOD samples
 * accepted for the differences to mean much. */
static double overlay_decades(const rep_scores *oods, size_t n) {
  size_t most = 1;
  for (size_t k = 0; k < n; k++)
    if (oods[k].n > most) most = oods[k].n;
  double d = ceil(log10((double)most) - 1e-9);
  return d < 2 ? 2 : d > 4 ? 4 : d;
}

int rep_roc_overlay(rep_buf *b, const char *set_name, const rep_scores *ids, const rep_scores *oods,
                    const char *const *score_names, size_t n) {
  const double W = 440, plot = 300, left = 70, top = 40;
  const double legend_top = top + plot + 60, row_h = 17;
  size_t rows = (n + 1) / 2;
  double H = legend_top + row_h * (double)(rows + 2) + 6;
  /* x is log10(FPR): ten curves that all hug the top-left corner on a linear
   * axis separate where they differ, at low FPR */
  const double decades = overlay_decades(oods, n);
  rep_plot p = { left, top, plot, plot, -decades, 0, 0, 1 };
  double *auc = malloc((n ? n : 1) * sizeof *auc);
  size_t *order = malloc((n ? n : 1) * sizeof *order);
  if (auc == NULL || order == NULL) { free(auc); free(order); return -1; }
  rep_buf title = { 0 };
  rep_put(&title, "ROC of every score against ");
  rep_put(&title, set_name);
  if (title.failed) { rep_free(&title); free(auc); free(order); return -1; }
  rep_svg_open(b, "roc-overlay", set_name, W, H, title.data);
  rep_free(&title);
  rep_axes_logx(b, &p, "FPR (log scale): fraction of the OOD set accepted as ID", "TPR: fraction of the ID set accepted",
                5);
  /* chance, TPR = FPR: a curve on this axis */
  rep_put(b, "<polyline class=\"chance\" fill=\"none\" stroke=\"#888\" stroke-dasharray=\"3 4\" points=\"");
  for (int i = 0; i <= 40; i++) {
    double u = (double)i / 40, fpr = pow(10, (u - 1) * decades);
    rep_printf(b, "%s%.1f,%.1f", i ? " " : "", p.left + u * p.width, rep_py(&p, fpr));
  }
  rep_put(b, "\"/>\n");
  for (size_t k = 0; k < n; k++) {
    auc[k] = NAN;
    order[k] = k;
    if (ids[k].n == 0 || oods[k].n == 0) continue;
    rep_roc r;
    if (roc_compute(&r, &ids[k], &oods[k], SMX_REPORT_ROC_MAX_POINTS, decades) != 0) {
      free(auc);
      free(order);
      return -1;
    }
    rep_style st = overlay_style(k);
    rep_printf(b, "<polyline class=\"curve\" data-score=\"%zu\" fill=\"none\" stroke=\"%s\" stroke-width=\"1.8\" "
                  "stroke-linejoin=\"round\"%s%s%s points=\"",
               k, st.color, st.dash[0] ? " stroke-dasharray=\"" : "", st.dash, st.dash[0] ? "\"" : "");
    for (size_t i = 0; i < r.n; i++) {
      /* The curve is straight between its points in linear FPR (a run of
       * tied scores is one long diagonal): on the log axis such a segment
       * bends, so a long one gets points of its own every 1/100 of the
       * width (at most 100 in all, the axis being 1 wide). */
      if (i > 0) {
        double f0 = r.fpr[i - 1], f1 = r.fpr[i], u0 = x_of(f0, decades), u1 = x_of(f1, decades);
        int m = (int)ceil((u1 - u0) * 100);
        for (int t = 1; t < m; t++) {
          double u = u0 + (u1 - u0) * t / m, f = pow(10, (u - 1) * decades);
          double y = r.tpr[i - 1] + (r.tpr[i] - r.tpr[i - 1]) * (f - f0) / (f1 - f0);
          rep_printf(b, " %.1f,%.1f", p.left + u * p.width, rep_py(&p, y));
        }
      }
      rep_printf(b, "%s%.1f,%.1f", i ? " " : "", p.left + x_of(r.fpr[i], decades) * p.width, rep_py(&p, r.tpr[i]));
    }
    rep_put(b, "\"/>\n");
    auc[k] = r.auroc;
    rep_roc_free(&r);
  }
  /* legend: best AUROC first (insertion sort, stable; no curve last) */
  for (size_t i = 1; i < n; i++) {
    size_t v = order[i], j = i;
    while (j > 0 && (isnan(auc[order[j - 1]]) ? !isnan(auc[v]) : !isnan(auc[v]) && auc[v] > auc[order[j - 1]])) {
      order[j] = order[j - 1];
      j--;
    }
    order[j] = v;
  }
  for (size_t i = 0; i < n; i++) {
    size_t k = order[i];
    double x = 10 + (i / rows ? W / 2 : 0), y = legend_top + row_h * (double)(i % rows);
    rep_style st = overlay_style(k);
    rep_printf(b, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" stroke-width=\"2.2\"%s%s%s/>\n", x,
               y - 4, x + 26, y - 4, st.color, st.dash[0] ? " stroke-dasharray=\"" : "", st.dash,
               st.dash[0] ? "\"" : "");
    rep_printf(b, "<text class=\"legend\" data-score=\"%zu\" x=\"%.1f\" y=\"%.1f\" font-size=\"11.5\" "
                  "font-family=\"DejaVu Sans, Arial, Helvetica, sans-serif\" fill=\"#111\">", k, x + 32, y);
    rep_escape_max(b, score_names[k], 22);
    if (isnan(auc[k])) rep_put(b, " (no curve)");
    else rep_printf(b, " %.4f", auc[k]);
    rep_put(b, "</text>\n");
  }
  char note[96];
  snprintf(note, sizeof note, "FPR below %g (0 included) is drawn on the left edge.", pow(10, -decades));
  rep_text(b, 10, legend_top + row_h * (double)rows + 4, "start", 11,
           "legend: score and AUROC, best first; grey curve: chance (TPR = FPR).");
  rep_text(b, 10, legend_top + row_h * (double)(rows + 1) + 4, "start", 11, note);
  free(auc);
  free(order);
  rep_svg_close(b);
  return 0;
}
