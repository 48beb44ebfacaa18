#include "reliability.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "escape.h"
#include "svg.h"

enum { BINS = SMX_REPORT_CAL_BINS };

double rep_rel_edge(size_t m) { return (double)(m + 1) / BINS; }

size_t rep_rel_bin(double c) {
  /* a first guess from c * BINS, then moved onto the documented edges, which
   * the rounding of the product may miss by one */
  double t = ceil(c * BINS) - 1;
  size_t m = t <= 0 ? 0 : t >= BINS - 1 ? BINS - 1 : (size_t)t;
  while (m > 0 && c <= rep_rel_edge(m - 1)) m--;
  while (m < BINS - 1 && c > rep_rel_edge(m)) m++;
  return m;
}

/* ECE, accuracy and mean confidence from the filled bins. */
static void summarise(rep_rel *out) {
  long double ece = 0, right = 0, conf = 0;
  out->n = 0;
  for (size_t m = 0; m < out->nb; m++) out->n += out->count[m];
  if (out->n == 0) return;
  for (size_t m = 0; m < out->nb; m++) {
    if (out->count[m] == 0) continue;
    long double w = (long double)out->count[m];
    ece += w * fabsl((long double)out->acc[m] - (long double)out->conf[m]);
    right += w * (long double)out->acc[m];
    conf += w * (long double)out->conf[m];
  }
  long double n = (long double)out->n;
  out->ece = (double)(ece / n);
  out->accuracy = (double)(right / n);
  out->mean_conf = (double)(conf / n);
}

void rep_rel_compute(rep_rel *out, const double *conf, const unsigned char *correct, size_t n) {
  out->nb = BINS;
  out->merged_from = 0;
  out->n = out->dropped = 0;
  out->equal_width = 1;
  out->ece = out->accuracy = out->mean_conf = 0;
  long double csum[BINS] = { 0 };
  uint64_t right[BINS] = { 0 };
  for (size_t m = 0; m < BINS; m++) {
    out->lo[m] = m ? rep_rel_edge(m - 1) : 0;
    out->hi[m] = rep_rel_edge(m);
    out->count[m] = 0;
  }
  for (size_t i = 0; i < n; i++) {
    double c = conf[i];
    if (!(c >= 0 && c <= 1)) { out->dropped++; continue; }  /* also NaN */
    size_t m = rep_rel_bin(c);
    out->count[m]++;
    csum[m] += c;
    right[m] += correct[i] != 0;
  }
  for (size_t m = 0; m < BINS; m++) {
    out->conf[m] = out->count[m] ? (double)(csum[m] / (long double)out->count[m]) : 0;
    out->acc[m] = out->count[m] ? (double)right[m] / (double)out->count[m] : 0;
  }
  summarise(out);
}

int rep_rel_bins_valid(const smx_report_bin *bins, size_t nb) {
  if (bins == NULL || nb == 0) return 0;
  for (size_t m = 0; m < nb; m++) {
    const smx_report_bin *x = &bins[m];
    if (!(x->lo >= 0 && x->lo < x->hi && x->hi <= 1)) return 0;
    if (m > 0 && !(x->lo >= bins[m - 1].hi)) return 0;
    if (x->n > 0 && !(x->conf >= 0 && x->conf <= 1 && x->acc >= 0 && x->acc <= 1)) return 0;
  }
  return 1;
}

void rep_rel_from_bins(rep_rel *out, const smx_report_bin *bins, size_t nb) {
  out->dropped = 0;
  out->equal_width = 0;
  out->ece = out->accuracy = out->mean_conf = 0;
  /* the statistics over the caller's bins exactly as given ... */
  long double ece = 0, right = 0, conf = 0;
  uint64_t n = 0;
  for (size_t m = 0; m < nb; m++) {
    if (bins[m].n == 0) continue;  /* the caller's NaN means of an empty bin stay out */
    long double w = (long double)bins[m].n;
    ece += w * fabsl((long double)bins[m].acc - (long double)bins[m].conf);
    right += w * (long double)bins[m].acc;
    conf += w * (long double)bins[m].conf;
    n += bins[m].n;
  }
  out->n = n;
  if (n > 0) {
    out->ece = (double)(ece / (long double)n);
    out->accuracy = (double)(right / (long double)n);
    out->mean_conf = (double)(conf / (long double)n);
  }
  /* ... and the drawn bins: groups of g consecutive ones when there are more
   * than SMX_REPORT_MAX_BINS (a bar under a pixel wide shows nothing more) */
  size_t g = (nb + SMX_REPORT_MAX_BINS - 1) / SMX_REPORT_MAX_BINS;
  out->nb = (nb + g - 1) / g;
  out->merged_from = g > 1 ? nb : 0;
  for (size_t q = 0; q < out->nb; q++) {
    size_t m0 = q * g, m1 = m0 + g < nb ? m0 + g : nb;
    long double c = 0, a = 0;
    uint64_t k = 0;
    for (size_t m = m0; m < m1; m++) {
      if (bins[m].n == 0) continue;
      c += (long double)bins[m].n * (long double)bins[m].conf;
      a += (long double)bins[m].n * (long double)bins[m].acc;
      k += bins[m].n;
    }
    out->lo[q] = bins[m0].lo;
    out->hi[q] = bins[m1 - 1].hi;
    out->count[q] = k;
    out->conf[q] = k ? (double)(c / (long double)k) : 0;
    out->acc[q] = k ? (double)(a / (long double)k) : 0;
  }
}

/* The pixel span of bin m's bars: its edges, less a 1 px gap each side when
 * the bar is wide enough to keep some width. */
static void bar_span(const rep_plot *p, const rep_rel *r, size_t m, double *x, double *w) {
  double x0 = rep_px(p, r->lo[m]), x1 = rep_px(p, r->hi[m]);
  double pad = x1 - x0 > 4 ? 1 : 0;
  *x = x0 + pad;
  *w = x1 - x0 - 2 * pad;
  if (*w < 0.5) *w = 0.5;  /* a very narrow bin still shows */
}

int rep_rel_figure(rep_buf *b, const char *kind, const char *name, const char *heading, const rep_rel *r) {
  const double W = 440, left = 72, top = 40, pw = 330, ph = 300;
  const double strip_top = top + ph + 50, strip_h = 70;
  const double text_top = strip_top + strip_h + 50;
  const double H = text_top + 40 + 17 * 5 + 4;
  rep_plot p = { left, top, pw, ph, 0, 1, 0, 1 };
  unsigned hatch = rep_next_id(b);
  char hid[32];
  snprintf(hid, sizeof hid, "smx-hatch-%u", hatch);

  rep_svg_open(b, kind, name, W, H, heading);
  rep_printf(b, "<defs><pattern id=\"%s\" patternUnits=\"userSpaceOnUse\" width=\"6\" height=\"6\" "
                "patternTransform=\"rotate(45)\"><line x1=\"0\" y1=\"0\" x2=\"0\" y2=\"6\" stroke=\"#D55E00\" "
                "stroke-width=\"1.6\"/></pattern></defs>\n", hid);
  rep_axes(b, &p, "confidence (max probability)", "accuracy", 5, 5);
  /* the data box, for scripts that read the bars back: y = top is 1, top + height is 0 */
  rep_printf(b, "<rect class=\"plot-area\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"none\"/>\n",
             left, top, pw, ph);

  /* Each bin: the accuracy bar (solid, from 0) on the left of the bin and the
   * gap beside it on the right, from the accuracy to the mean confidence,
   * hatched and outlined, with a tick at the mean confidence. Nothing is
   * drawn over the accuracy bar, whichever side of it the confidence lies. */
  size_t sparse = 0;
  for (size_t m = 0; m < r->nb; m++) {
    if (r->count[m] == 0) continue;
    int thin = r->count[m] < SMX_REPORT_SPARSE_BIN;
    sparse += thin;
    double x, w;
    bar_span(&p, r, m, &x, &w);
    double wa = w * 0.62, xg = x + wa, wg = w - wa;
    double ya = rep_py(&p, r->acc[m]), y0 = rep_py(&p, 0), yc = rep_py(&p, r->conf[m]);
    rep_printf(b, "<rect class=\"acc%s\" data-bin=\"%zu\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" "
                  "fill=\"#0072B2\" fill-opacity=\"%s\"/>\n",
               thin ? " sparse" : "", m, x, ya, wa, y0 - ya, thin ? "0.35" : "0.9");
    double g0 = ya < yc ? ya : yc, gh = fabs(ya - yc);
    if (gh > 0) {
      rep_printf(b, "<rect class=\"gap\" data-bin=\"%zu\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" "
                    "fill=\"url(#%s)\" stroke=\"#D55E00\" stroke-width=\"1\"/>\n",
                 m, xg, g0, wg, gh, hid);
    }
    rep_printf(b, "<line class=\"conf\" data-bin=\"%zu\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
                  "stroke=\"#111\" stroke-width=\"2\"/>\n", m, xg, yc, xg + wg, yc);
  }
  rep_printf(b, "<line class=\"diagonal\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#111\" stroke-width=\"1.2\" stroke-dasharray=\"5 4\"/>\n",
             rep_px(&p, 0), rep_py(&p, 0), rep_px(&p, 1), rep_py(&p, 1));
  if (r->n == 0) rep_text(b, left + pw / 2, top + ph / 2, "middle", 13, "no sample to bin");

  /* samples per bin, on the same x scale */
  uint64_t most = 0;
  for (size_t m = 0; m < r->nb; m++)
    if (r->count[m] > most) most = r->count[m];
  rep_printf(b, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"none\" stroke=\"#333\"/>\n", left,
             strip_top, pw, strip_h);
  /* count labels: level above bars at least 16 px wide, turned upright above
   * narrower ones (then with more headroom), none below 8 px */
  double narrowest = pw;
  for (size_t m = 0; m < r->nb; m++) {
    double x, w;
    bar_span(&p, r, m, &x, &w);
    if (r->count[m] && w < narrowest) narrowest = w;
  }
  int upright = narrowest < 16, labels = narrowest >= 8;
  double headroom = upright ? 26 : 14;
  for (size_t m = 0; m < r->nb; m++) {
    if (r->count[m] == 0) continue;
    double h = (strip_h - headroom) * (double)r->count[m] / (double)most;
    if (h < 1) h = 1;  /* one sample among millions still shows */
    double x, w;
    bar_span(&p, r, m, &x, &w);
    rep_printf(b, "<rect class=\"count\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"#777\"/>\n", x,
               strip_top + strip_h - h, w, h);
    if (labels) {
      char c[16];
      rep_compact_count(c, sizeof c, (size_t)r->count[m]);
      if (upright)
        rep_printf(b, "<text transform=\"translate(%.1f %.1f) rotate(-90)\" font-size=\"8.5\" "
                      "font-family=\"DejaVu Sans, Arial, Helvetica, sans-serif\" fill=\"#111\">%s</text>\n",
                   x + w / 2 + 3, strip_top + strip_h - h - 2, c);
      else rep_text(b, x + w / 2, strip_top + strip_h - h - 3, "middle", 8.5, c);
    }
  }
  char caption[80];
  if (r->merged_from)
    snprintf(caption, sizeof caption, "samples per bin (%zu bins, merged from %zu)", r->nb, r->merged_from);
  else snprintf(caption, sizeof caption, "samples per bin (%zu %sbins)", r->nb, r->equal_width ? "equal-width " : "");
  rep_text(b, left + pw / 2, strip_top + strip_h + 16, "middle", 11, caption);

  char line[200];
  if (r->n > 0) {
    snprintf(line, sizeof line, "ECE %.4f \xC2\xB7 accuracy %.4f \xC2\xB7 mean confidence %.4f", r->ece, r->accuracy, r->mean_conf);
    rep_text(b, 14, text_top - 14, "start", 12, line);
  }
  snprintf(line, sizeof line, "%llu samples binned", (unsigned long long)r->n);
  if (r->dropped)
    snprintf(line + strlen(line), sizeof line - strlen(line), "; %llu dropped (NaN or outside [0, 1])",
             (unsigned long long)r->dropped);
  rep_text(b, 14, text_top + 3, "start", 11, line);
  if (sparse) {
    snprintf(line, sizeof line, "%zu bin%s with fewer than %d samples, drawn lighter: %s accuracy is noisy", sparse,
             sparse == 1 ? "" : "s", SMX_REPORT_SPARSE_BIN, sparse == 1 ? "its" : "their");
    rep_printf(b, "<text class=\"sparse-note\" x=\"14\" y=\"%.1f\" font-size=\"11\" "
                  "font-family=\"DejaVu Sans, Arial, Helvetica, sans-serif\" fill=\"#7a3a00\">", text_top + 20);
    rep_escape(b, line);
    rep_put(b, "</text>\n");
  }
  double ly = text_top + 40;
  ly = rep_legend_box(b, 14, ly, "#0072B2", 0.9, NULL, "accuracy of the bin (bar height)");
  ly = rep_legend_box(b, 14, ly, "#0072B2", 0.35, NULL, "accuracy of a bin with fewer than 10 samples");
  ly = rep_legend_box(b, 14, ly, "#D55E00", 0, hid, "gap: from the accuracy to the mean confidence");
  rep_style tick = { "#111", "", 0 };
  ly = rep_legend_line(b, 14, ly, &tick, "mean confidence of the bin", NULL);
  rep_style diag = { "#111", "5 4", 0 };
  rep_legend_line(b, 14, ly, &diag, "perfect calibration", NULL);
  rep_svg_close(b);
  return 0;
}
