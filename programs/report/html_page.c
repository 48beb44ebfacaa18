/*
 * The page: argument checks, then head and style, title block, tables, one
 * section per score (ROC and histogram side by side) and one per
 * calibration set (reliability before and after), built in memory.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "escape.h"
#include "histogram.h"
#include "html_table.h"
#include "reliability.h"
#include "report.h"
#include "roc.h"
#include "score_set.h"
#include "strbuf.h"

static smx_status fail(smx_status s, char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static smx_status fail(smx_status s, char *err, size_t errlen, const char *fmt, ...) {
  if (err && errlen) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
  }
  return s;
}


static smx_status rep_check(const smx_report *r, char *err, size_t errlen) {
  const smx_status bad = SMX_E_INVALID_ARG;
  if (r == NULL) return fail(bad, err, errlen, "report: no report given");
  if (r->title == NULL) return fail(bad, err, errlen, "report: the title is missing");
  if (r->n_items && r->items == NULL) return fail(bad, err, errlen, "report: %zu items but no array", r->n_items);
  for (size_t k = 0; k < r->n_items; k++)
    if (r->items[k].label == NULL || r->items[k].value == NULL)
      return fail(bad, err, errlen, "report: item %zu has no label or value", k);
  if (r->n_notes && r->notes == NULL) return fail(bad, err, errlen, "report: %zu notes but no array", r->n_notes);
  for (size_t k = 0; k < r->n_notes; k++)
    if (r->notes[k] == NULL) return fail(bad, err, errlen, "report: note %zu is NULL", k);
  if (r->n_tables && r->tables == NULL) return fail(bad, err, errlen, "report: %zu tables but no array", r->n_tables);
  for (size_t k = 0; k < r->n_tables; k++)
    if (!rep_table_valid(&r->tables[k]))
      return fail(bad, err, errlen, "report: table %zu needs ncols >= 1, a header and cells", k);
  if (r->n_scores && r->scores == NULL) return fail(bad, err, errlen, "report: %zu scores but no array", r->n_scores);
  for (size_t k = 0; k < r->n_scores; k++) {
    const smx_report_score *s = &r->scores[k];
    if (s->name == NULL) return fail(bad, err, errlen, "report: score %zu has no name", k);
    if (s->n_id && s->id_scores == NULL)
      return fail(bad, err, errlen, "report: score %zu: %zu ID scores but no array", k, s->n_id);
    if (s->n_ood && s->ood == NULL)
      return fail(bad, err, errlen, "report: score %zu: %zu OOD sets but no array", k, s->n_ood);
    for (size_t o = 0; o < s->n_ood; o++) {
      if (s->ood[o].name == NULL) return fail(bad, err, errlen, "report: score %zu: OOD set %zu has no name", k, o);
      if (s->ood[o].n && s->ood[o].scores == NULL)
        return fail(bad, err, errlen, "report: score %zu: OOD set %zu: %zu scores but no array", k, o, s->ood[o].n);
    }
  }
  if (r->n_calibration && r->calibration == NULL)
    return fail(bad, err, errlen, "report: %zu calibration sets but no array", r->n_calibration);
  for (size_t k = 0; k < r->n_calibration; k++) {
    const smx_report_calibration *c = &r->calibration[k];
    if (c->name == NULL) return fail(bad, err, errlen, "report: calibration set %zu has no name", k);
    if (c->bins_before != NULL || c->bins_after != NULL) {
      if (c->bins_before == NULL)
        return fail(bad, err, errlen, "report: calibration set %zu: bins after scaling but none before", k);
      if (!rep_rel_bins_valid(c->bins_before, c->n_bins) ||
          (c->bins_after != NULL && !rep_rel_bins_valid(c->bins_after, c->n_bins)))
        return fail(bad, err, errlen,
                    "report: calibration set %zu: bins need n_bins >= 1, 0 <= lo < hi <= 1 in ascending "
                    "order, confidence and accuracy in [0, 1]", k);
    } else if (c->n && (c->conf_before == NULL || c->correct_before == NULL)) {
      return fail(bad, err, errlen, "report: calibration set %zu: %zu samples but no confidence or correctness array",
                  k, c->n);
    }
  }
  return SMX_OK;
}

static const char style[] =
    "body{font-family:'DejaVu Sans',Arial,Helvetica,sans-serif;color:#111;background:#fff;margin:24px auto;"
    "max-width:1240px;padding:0 16px;line-height:1.4}\n"
    "h1{font-size:22px;margin:0 0 2px}h2{font-size:19px;margin:28px 0 8px;border-bottom:1px solid #bbb}"
    "h3{font-size:16px;margin:18px 0 6px}\n"
    ".subtitle{color:#444;margin:0 0 10px}\n"
    "dl.items{display:grid;grid-template-columns:max-content auto;gap:0 14px;margin:4px 0 8px;font-size:13px}"
    "dl.items dt{font-weight:bold}dl.items dd{margin:0;font-family:'DejaVu Sans Mono',monospace;"
    "overflow-wrap:anywhere}\n"
    "ul.notes{background:#fff8e5;border-left:4px solid #E69F00;padding:6px 10px 6px 28px}\n"
    "table.smx-table{border-collapse:collapse;margin:10px 0 18px;font-size:14px}"
    "table.smx-table caption{text-align:left;font-weight:bold;padding:4px 0}"
    "table.smx-table th,table.smx-table td{border:1px solid #999;padding:3px 9px}"
    "table.smx-table th{background:#eee}table.smx-table td.num{text-align:right;"
    "font-variant-numeric:tabular-nums}\n"
    ".figs{display:flex;flex-wrap:wrap;gap:8px;align-items:flex-start}"
    ".lead{display:flex;flex-wrap:wrap;gap:14px;align-items:flex-start}"
    ".lead-tables{flex:1 1 560px;min-width:0}.lead figure.overlay{flex:0 0 auto}"
    ".lead table.smx-table{margin:0 0 10px;font-size:13px}.lead table.smx-table th{font-size:11px;font-weight:normal;"
    "font-family:'DejaVu Sans Mono',monospace}.lead table.smx-table th,.lead table.smx-table td{padding:3px 6px}"
    "table.smx-table td.num{white-space:nowrap}table.smx-table td.best{font-weight:bold;background:#e6f4ea}"
    /* a metric key is one name: never cut at "_" or mid-word */
    "table.smx-table th{white-space:nowrap}table.smx-table tr.dir td{background:#eee;border-bottom:none;"
    "text-align:center;color:#444;font-size:10px;line-height:1.1;padding:2px 4px 0}"
    "table.smx-table tr.dir+tr th{border-top:none}"
    "span.best-key{font-weight:normal;font-size:12px;color:#333}b.best-sample{background:#e6f4ea;padding:0 3px}"
    "span.cell-note{display:block;font-size:10px;font-weight:normal;color:#7a3a00;white-space:normal;max-width:11em;"
    "margin-left:auto}\n"
    ".verdict{border-left:4px solid #0072B2;background:#eef5fb;padding:6px 10px;margin:0 0 10px;font-size:14px}"
    ".verdict p{margin:2px 0}\n"
    ".score-grid{display:grid;grid-template-columns:repeat(auto-fill,minmax(590px,1fr));gap:12px}"
    ".card{border:1px solid #ddd;padding:4px 6px}.card h3{margin:2px 0}.card .conventions{font-size:11px;margin:2px 0 4px}\n"
    "figure{margin:0;border:1px solid #ddd}svg.smx-fig{display:block}\n"
    ".smx-missing{color:#7a3a00;font-style:italic}\n"
    ".conventions{font-size:13px;color:#333}\n"
    "footer{margin-top:32px;font-size:12px;color:#555}\n"
    "@media print{body{margin:0;max-width:none}figure,table{break-inside:avoid}h2,h3{break-after:avoid}}\n";

static void head(rep_buf *b, const smx_report *r) {
  rep_put(b, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
             "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>");
  rep_escape(b, r->title);
  rep_put(b, "</title>\n<style>\n");
  rep_put(b, style);
  rep_put(b, "</style>\n</head>\n<body>\n<header>\n<h1>");
  rep_escape(b, r->title);
  rep_put(b, "</h1>\n");
  if (r->subtitle) {
    rep_put(b, "<p class=\"subtitle\">");
    rep_escape(b, r->subtitle);
    rep_put(b, "</p>\n");
  }
  if (r->n_items) {
    rep_put(b, "<dl class=\"items\">\n");
    for (size_t k = 0; k < r->n_items; k++) {
      rep_put(b, "<dt>");
      rep_escape(b, r->items[k].label);
      rep_put(b, "</dt><dd>");
      rep_escape(b, r->items[k].value);
      rep_put(b, "</dd>\n");
    }
    rep_put(b, "</dl>\n");
  }
  rep_put(b, "</header>\n");
}

static void notes(rep_buf *b, const smx_report *r) {
  if (r->n_notes == 0) return;
  rep_put(b, "<ul class=\"notes\">\n");
  for (size_t k = 0; k < r->n_notes; k++) {
    rep_put(b, "<li>");
    rep_escape(b, r->notes[k]);
    rep_put(b, "</li>\n");
  }
  rep_put(b, "</ul>\n");
}

static void set_summary(rep_buf *b, const char *name, size_t given, const rep_scores *s) {
  rep_escape(b, name);
  rep_printf(b, ": %zu scores", given);
  if (s->n_nan) rep_printf(b, ", %zu NaN dropped", s->n_nan);
  if (s->n_posinf || s->n_neginf) rep_printf(b, ", %zu +inf and %zu -inf", s->n_posinf, s->n_neginf);
}

/* One score's section. Returns 0 or -1 (no memory). */
static int score_section(rep_buf *b, const smx_report_score *sc, const char *id_name) {
  size_t nsets = sc->n_ood + 1;
  rep_scores *sets = calloc(nsets, sizeof *sets);
  const char **names = malloc(nsets * sizeof *names);
  int rc = -1;
  if (sets == NULL || names == NULL) goto out;
  if (rep_scores_make(&sets[0], sc->id_scores, sc->n_id) != 0) goto out;
  names[0] = id_name;
  for (size_t o = 0; o < sc->n_ood; o++) {
    if (rep_scores_make(&sets[o + 1], sc->ood[o].scores, sc->ood[o].n) != 0) goto out;
    names[o + 1] = sc->ood[o].name;
  }
  rep_put(b, "<section class=\"score card\">\n<h3>");
  rep_escape(b, sc->name);
  rep_put(b, "</h3>\n<p class=\"conventions\">");
  set_summary(b, id_name, sc->n_id, &sets[0]);
  for (size_t o = 0; o < sc->n_ood; o++) {
    rep_put(b, "; ");
    set_summary(b, names[o + 1], sc->ood[o].n, &sets[o + 1]);
  }
  rep_put(b, ".</p>\n<div class=\"figs\">\n");
  if (sc->n_ood == 0) {
    rep_put(b, "<p class=\"smx-missing\" data-fig=\"roc\">No OOD set was given: no ROC curve.</p>\n");
  } else {
    rep_put(b, "<figure>\n");
    if (rep_roc_figure(b, sc->name, &sets[0], sets + 1, names + 1, sc->n_ood, 1) != 0) goto out;
    rep_put(b, "</figure>\n");
  }
  double lo, hi;
  if (rep_hist_range(sets, nsets, &lo, &hi)) {
    rep_put(b, "<figure>\n");
    if (rep_hist_figure(b, sc->name, sets, names, nsets, 1) != 0) goto out;
    rep_put(b, "</figure>\n");
  } else {
    rep_put(b, "<p class=\"smx-missing\" data-fig=\"hist\">No finite score in any set: no histogram.</p>\n");
  }
  rep_put(b, "</div>\n</section>\n");
  rc = 0;
out:
  if (sets)
    for (size_t k = 0; k < nsets; k++) rep_scores_free(&sets[k]);
  free(sets);
  free(names);
  return rc;
}

/* The ROC overlays: for each OOD set position o, every score that has an
 * o-th set, named after the first such score's set. Returns 0 or -1. */
static int overlays(rep_buf *b, const smx_report *r) {
  size_t most = 0;
  for (size_t k = 0; k < r->n_scores; k++)
    if (r->scores[k].n_ood > most) most = r->scores[k].n_ood;
  if (most == 0) return 0;
  size_t n = r->n_scores;
  rep_scores *ids = calloc(n, sizeof *ids), *oods = calloc(n, sizeof *oods);
  const char **names = malloc(n * sizeof *names);
  int rc = -1;
  if (ids == NULL || oods == NULL || names == NULL) goto out;
  for (size_t k = 0; k < n; k++)
    if (rep_scores_make(&ids[k], r->scores[k].id_scores, r->scores[k].n_id) != 0) goto out;
  for (size_t o = 0; o < most; o++) {
    size_t m = 0;
    const char *set_name = NULL;
    rep_scores *id_sel = calloc(n, sizeof *id_sel);
    if (id_sel == NULL) goto out;
    for (size_t k = 0; k < n; k++) {
      const smx_report_score *sc = &r->scores[k];
      if (sc->n_ood <= o) continue;
      if (set_name == NULL) set_name = sc->ood[o].name;
      rep_scores_free(&oods[m]);
      if (rep_scores_make(&oods[m], sc->ood[o].scores, sc->ood[o].n) != 0) { free(id_sel); goto out; }
      id_sel[m] = ids[k];   /* shared, not owned */
      names[m++] = sc->name;
    }
    rep_put(b, "<figure class=\"overlay\">\n");
    int e = rep_roc_overlay(b, set_name, id_sel, oods, names, m);
    rep_put(b, "</figure>\n");
    free(id_sel);
    if (e != 0) goto out;
  }
  rc = 0;
out:
  for (size_t k = 0; k < n && ids; k++) rep_scores_free(&ids[k]);
  for (size_t k = 0; k < n && oods; k++) rep_scores_free(&oods[k]);
  free(ids);
  free(oods);
  free(names);
  return rc;
}

/* The verdict's thresholds (also stated in the calibration section): an ECE
 * below WELL is called calibrated; otherwise the direction is that of the
 * mean gap (confidence - accuracy) when it is at least half the ECE (the
 * ECE bounds the gap, so a smaller gap means bins miss both ways). */
#define VERDICT_WELL 0.02
#define VERDICT_SIDE 0.5

static const char *verdict_word(const rep_rel *r) {
  double gap = r->mean_conf - r->accuracy;
  if (r->ece < VERDICT_WELL) return "well calibrated";
  if (gap >= VERDICT_SIDE * r->ece) return "over-confident";
  if (-gap >= VERDICT_SIDE * r->ece) return "under-confident";
  return "miscalibrated both ways (over-confident in some bins, under-confident in others)";
}

/* The first screen's answer to "is the model calibrated?" for one set: the
 * verdict at T = 1 with the mean confidence, accuracy and ECE it rests on,
 * then the ECE after temperature scaling and the fitted T, or why there is
 * none. Returns 0 or -1 (no memory). */
static int verdict(rep_buf *b, const smx_report_calibration *c) {
  rep_rel *rel = malloc(sizeof *rel);  /* about 40 KB: not on the stack */
  if (rel == NULL) return -1;
  int binned = c->bins_before != NULL;
  if (binned) rep_rel_from_bins(rel, c->bins_before, c->n_bins);
  else rep_rel_compute(rel, c->conf_before, c->correct_before, c->n);
  rep_put(b, "<div class=\"verdict\" data-verdict=\"");
  if (rel->n == 0) {
    rep_put(b, "none\"><p><b>Calibration:</b> no sample of ");
    rep_escape(b, c->name);
    rep_put(b, " to judge by.</p></div>\n");
    free(rel);
    return 0;
  }
  const char *word = verdict_word(rel);
  rep_printf(b, "%s\"><p><b>Calibration: %s.</b> ", word[0] == 'm' ? "mixed" : word, word);
  rep_escape(b, c->name);
  rep_printf(b, ": mean confidence %.4f against accuracy %.4f; ECE %.4f at T = 1.</p>\n", rel->mean_conf,
             rel->accuracy, rel->ece);
  int have_t = isfinite(c->temperature) && c->temperature > 0;
  if (binned ? c->bins_after != NULL : c->conf_after != NULL) {
    double ece1 = rel->ece;
    if (binned) rep_rel_from_bins(rel, c->bins_after, c->n_bins);
    else rep_rel_compute(rel, c->conf_after, c->correct_after ? c->correct_after : c->correct_before, c->n);
    rep_put(b, "<p>After temperature scaling");
    if (have_t)
      rep_printf(b, " with the fitted T = %.4g (%s)", c->temperature,
                 c->temperature < 1 ? "below 1: it sharpens the probabilities"
                 : c->temperature > 1 ? "above 1: it softens the probabilities" : "1: no change");
    rep_printf(b, ": ECE %.4f (%s), mean confidence %.4f: then %s.</p>\n", rel->ece,
               rel->ece < ece1 ? "lower" : rel->ece > ece1 ? "higher" : "unchanged", rel->mean_conf,
               verdict_word(rel));
  } else {
    rep_put(b, "<p>No temperature scaling");
    if (c->temperature_note) {
      rep_put(b, ": ");
      rep_escape(b, c->temperature_note);
    }
    rep_put(b, ".</p>\n");
  }
  rep_put(b, "</div>\n");
  free(rel);
  return 0;
}

/* One calibration set's section. Returns 0 or -1 (no memory). */
static int calibration_section(rep_buf *b, const smx_report_calibration *c) {
  rep_rel *rel = malloc(sizeof *rel);  /* about 40 KB: not on the stack */
  if (rel == NULL) return -1;
  char heading[160];
  int have_t = isfinite(c->temperature) && c->temperature > 0;
  int binned = c->bins_before != NULL;
  rep_put(b, "<section class=\"calibration\">\n<h3>");
  rep_escape(b, c->name);
  rep_put(b, "</h3>\n<p class=\"conventions\">");
  if (have_t) rep_printf(b, "Fitted temperature T = %.6g", c->temperature);
  else rep_put(b, "No fitted temperature");
  if (c->temperature_note) {
    rep_put(b, ": ");
    rep_escape(b, c->temperature_note);
  }
  rep_put(b, ".</p>\n<div class=\"figs\">\n<figure>\n");
  if (binned) rep_rel_from_bins(rel, c->bins_before, c->n_bins);
  else rep_rel_compute(rel, c->conf_before, c->correct_before, c->n);
  rep_rel_figure(b, "reliability-before", c->name, "Before temperature scaling", rel);
  rep_put(b, "</figure>\n");
  if (binned ? c->bins_after != NULL : c->conf_after != NULL) {
    if (binned) rep_rel_from_bins(rel, c->bins_after, c->n_bins);
    else rep_rel_compute(rel, c->conf_after, c->correct_after ? c->correct_after : c->correct_before, c->n);
    if (have_t) snprintf(heading, sizeof heading, "After temperature scaling (T = %.4g)", c->temperature);
    else snprintf(heading, sizeof heading, "After temperature scaling");
    rep_put(b, "<figure>\n");
    rep_rel_figure(b, "reliability-after", c->name, heading, rel);
    rep_put(b, "</figure>\n");
  } else {
    rep_put(b, "<p class=\"smx-missing\" data-fig=\"reliability-after\">No diagram after temperature scaling");
    if (c->temperature_note) {
      rep_put(b, ": ");
      rep_escape(b, c->temperature_note);
    }
    rep_put(b, ".</p>\n");
  }
  rep_put(b, "</div>\n</section>\n");
  free(rel);
  return 0;
}

smx_status smx_report_render_html(const smx_report *r, char **html, size_t *len, char *err, size_t errlen) {
  if (html == NULL || len == NULL) return fail(SMX_E_INVALID_ARG, err, errlen, "report: no output pointer given");
  *html = NULL;
  *len = 0;
  smx_status st = rep_check(r, err, errlen);
  if (st != SMX_OK) return st;
  const char *id_name = r->id_name ? r->id_name : "ID";
  size_t lead = r->n_lead_tables < r->n_tables ? r->n_lead_tables : r->n_tables;
  rep_buf b = { 0 };
  head(&b, r);
  /* the lead, on the first screen: is the model calibrated, and which
   * score separates the OOD sets best */
  if (lead || r->n_scores || r->n_calibration) {
    rep_put(&b, "<section class=\"lead\">\n");
    if (lead || r->n_calibration) {
      rep_put(&b, "<div class=\"lead-tables\">\n");
      for (size_t k = 0; k < r->n_calibration; k++)
        if (verdict(&b, &r->calibration[k]) != 0) b.failed = 1;
      for (size_t k = 0; k < lead; k++) rep_html_table(&b, &r->tables[k]);
      rep_put(&b, "</div>\n");
    }
    if (r->n_scores && overlays(&b, r) != 0) b.failed = 1;
    rep_put(&b, "</section>\n");
  }
  notes(&b, r);
  if (r->n_tables > lead) {
    rep_put(&b, "<section class=\"tables\">\n<h2>Results</h2>\n");
    for (size_t k = lead; k < r->n_tables; k++) rep_html_table(&b, &r->tables[k]);
    rep_put(&b, "</section>\n");
  }
  if (r->n_scores) {
    rep_put(&b, "<section class=\"scores\">\n<h2>Per score: ROC and score histograms</h2>\n"
                "<p class=\"conventions\">Higher scores mean more in-distribution; a sample is accepted as ID when "
                "its score is at least the threshold. ROC curves take ID as the positive class, one point per "
                "distinct threshold (tied scores enter together); the AUROC is the exact area under that curve. "
                "NaN scores are dropped; infinite scores are kept in the ROC curves but not drawn in the "
                "histograms.</p>\n<div class=\"score-grid\">\n");
    for (size_t k = 0; k < r->n_scores; k++)
      if (score_section(&b, &r->scores[k], id_name) != 0) b.failed = 1;
    rep_put(&b, "</div>\n</section>\n");
  }
  if (r->n_calibration) {
    rep_put(&b, "<section class=\"calibration\">\n<h2>Calibration</h2>\n"
                "<p class=\"conventions\">Reliability diagrams: bins (lo, hi] of the confidence (15 equal-width "
                "bins when drawn from per-sample data, confidence 0 in the first). In each bin the solid bar's height is "
                "the accuracy of the bin; beside it, the hatched segment runs from the accuracy to the mean "
                "confidence (the black tick), so nothing covers the bar. Bins with fewer than 10 samples are drawn "
                "lighter: their accuracy, and an MCE taken from them, is noise. ECE = sum over bins of "
                "(bin size / n) |accuracy - mean confidence|. The verdict at the top of the page: well calibrated "
                "when the ECE is below 0.02; else over-confident when the mean confidence exceeds the accuracy by "
                "at least half the ECE, under-confident when it falls short by as much, and both ways "
                "otherwise.</p>\n");
    for (size_t k = 0; k < r->n_calibration; k++)
      if (calibration_section(&b, &r->calibration[k]) != 0) b.failed = 1;
    rep_put(&b, "</section>\n");
  }
  rep_printf(&b, "<footer>Written by smx %s (smx eval --report).</footer>\n</body>\n</html>\n", smx_version_string());
  if (b.failed) {
    rep_free(&b);
    return fail(SMX_E_NOMEM, err, errlen, "report: out of memory while drawing the page");
  }
  *html = b.data;
  *len = b.len;
  return SMX_OK;
}
