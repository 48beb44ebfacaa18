#include "reliability.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

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

void rep_rel_compute(rep_rel *out, const double *conf, const unsigned char *correct, size_t n) {
  memset(out, 0, sizeof *out);
  long double csum[BINS] = { 0 }, all_conf = 0;
  size_t right[BINS] = { 0 }, all_right = 0;
  for (size_t i = 0; i < n; i++) {
    double c = conf[i];
    if (!(c >= 0 && c <= 1)) { out->dropped++; continue; }  /* also NaN */
    size_t m = rep_rel_bin(c);
    out->count[m]++;
    csum[m] += c;
    right[m] += correct[i] != 0;
    all_conf += c;
    all_right += correct[i] != 0;
  }
  out->n = n - out->dropped;
  if (out->n == 0) return;
  long double ece = 0;
  for (size_t m = 0; m < BINS; m++) {
    if (out->count[m] == 0) continue;
    out->conf[m] = (double)(csum[m] / (long double)out->count[m]);
    out->acc[m] = (double)right[m] / (double)out->count[m];
    ece += (long double)out->count[m] / (long double)out->n * fabsl((long double)right[m] / out->count[m] - csum[m] / out->count[m]);
  }
  out->ece = (double)ece;
  out->accuracy = (double)all_right / (double)out->n;
  out->mean_conf = (double)(all_conf / (long double)out->n);
}

int rep_rel_figure(rep_buf *b, const char *kind, const char *name, const char *heading, const rep_rel *r) {
  const double W = 440, left = 72, top = 40, pw = 330, ph = 300;
  const double strip_top = top + ph + 50, strip_h = 70;
  const double text_top = strip_top + strip_h + 50;
  const double H = text_top + 17 * 4 + 8;
  rep_plot p = { left, top, pw, ph, 0, 1, 0, 1 };
  unsigned hatch = rep_next_id(b);
  char hid[32];
  snprintf(hid, sizeof hid, "smx-hatch-%u", hatch);

  rep_svg_open(b, kind, name, W, H, heading);
  rep_printf(b, "<defs><pattern id=\"%s\" patternUnits=\"userSpaceOnUse\" width=\"6\" height=\"6\" "
                "patternTransform=\"rotate(45)\"><line x1=\"0\" y1=\"0\" x2=\"0\" y2=\"6\" stroke=\"#D55E00\" "
                "stroke-width=\"1.6\"/></pattern></defs>\n", hid);
  rep_axes(b, &p, "confidence (max probability)", "accuracy", 5, 5);

  double bw = pw / BINS;
  for (size_t m = 0; m < BINS; m++) {
    if (r->count[m] == 0) continue;
    double x = left + bw * (double)m + 1, w = bw - 2;
    double ya = rep_py(&p, r->acc[m]), y0 = rep_py(&p, 0), yc = rep_py(&p, r->conf[m]);
    if (y0 - ya > 0)
      rep_printf(b, "<rect class=\"acc\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"#0072B2\" fill-opacity=\"0.85\"/>\n",
                 x, ya, w, y0 - ya);
    double g0 = ya < yc ? ya : yc, gh = fabs(ya - yc);
    if (gh > 0) {
      /* under-confident bins have their gap inside the accuracy bar: a white
       * underlay keeps the gap the same light hatched orange in both cases */
      if (ya < yc)
        rep_printf(b, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"#fff\" fill-opacity=\"0.85\"/>\n",
                   x, g0, w, gh);
      rep_printf(b, "<rect class=\"gap\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"#D55E00\" fill-opacity=\"0.45\" stroke=\"#D55E00\" stroke-width=\"1\"/>\n",
                 x, g0, w, gh);
      rep_printf(b, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"url(#%s)\"/>\n", x, g0, w, gh, hid);
    }
  }
  rep_printf(b, "<line class=\"diagonal\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#111\" stroke-width=\"1.2\" stroke-dasharray=\"5 4\"/>\n",
             rep_px(&p, 0), rep_py(&p, 0), rep_px(&p, 1), rep_py(&p, 1));
  if (r->n == 0) rep_text(b, left + pw / 2, top + ph / 2, "middle", 13, "no sample to bin");

  /* samples per bin, on the same x scale */
  size_t most = 0;
  for (size_t m = 0; m < BINS; m++)
    if (r->count[m] > most) most = r->count[m];
  rep_printf(b, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"none\" stroke=\"#333\"/>\n", left,
             strip_top, pw, strip_h);
  for (size_t m = 0; m < BINS; m++) {
    if (r->count[m] == 0) continue;
    double h = (strip_h - 14) * (double)r->count[m] / (double)most;
    if (h < 1) h = 1;  /* one sample among millions still shows */
    double x = left + bw * (double)m + 1;
    rep_printf(b, "<rect class=\"count\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"#777\"/>\n", x,
               strip_top + strip_h - h, bw - 2, h);
    char c[16];
    rep_compact_count(c, sizeof c, r->count[m]);
    rep_text(b, x + (bw - 2) / 2, strip_top + strip_h - h - 3, "middle", 8.5, c);
  }
  rep_text(b, left + pw / 2, strip_top + strip_h + 16, "middle", 11, "samples per bin (15 equal-width bins)");

  char line[200];
  if (r->n > 0) {
    snprintf(line, sizeof line, "ECE %.4f \xC2\xB7 accuracy %.4f \xC2\xB7 mean confidence %.4f", r->ece, r->accuracy, r->mean_conf);
    rep_text(b, 14, text_top - 14, "start", 12, line);
  }
  snprintf(line, sizeof line, "%zu samples binned", r->n);
  if (r->dropped)
    snprintf(line + strlen(line), sizeof line - strlen(line), "; %zu dropped (NaN or outside [0, 1])", r->dropped);
  rep_text(b, 14, text_top + 3, "start", 11, line);
  double ly = text_top + 24;
  ly = rep_legend_box(b, 14, ly, "#0072B2", 0.85, NULL, "accuracy of the bin");
  ly = rep_legend_box(b, 14, ly, "#D55E00", 0.45, hid, "gap between accuracy and mean confidence");
  rep_style diag = { "#111", "5 4", 0 };
  rep_legend_line(b, 14, ly, &diag, "perfect calibration", NULL);
  rep_svg_close(b);
  return 0;
}
