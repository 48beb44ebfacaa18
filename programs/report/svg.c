#include "svg.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "escape.h"

static const char *const font = "font-family=\"DejaVu Sans, Arial, Helvetica, sans-serif\"";

double rep_px(const rep_plot *p, double x) {
  double t = (x * 0.5 - p->xmin * 0.5) / (p->xmax * 0.5 - p->xmin * 0.5);  /* halves: no overflow */
  if (!(t >= 0)) t = 0;  /* also NaN */
  if (t > 1) t = 1;
  return p->left + t * p->width;
}

double rep_py(const rep_plot *p, double y) {
  double t = (y * 0.5 - p->ymin * 0.5) / (p->ymax * 0.5 - p->ymin * 0.5);
  if (!(t >= 0)) t = 0;
  if (t > 1) t = 1;
  return p->top + (1 - t) * p->height;
}

rep_style rep_series_style(size_t i) {
  /* Okabe-Ito, without the yellow that vanishes on white paper; the dashes
   * keep the OOD sets apart when printed in grey. */
  static const char *const colors[] = { "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000" };
  static const char *const dashes[] = { "7 3", "2 2", "9 3 2 3", "", "4 4", "1 3" };
  rep_style s;
  if (i == 0) {
    s.color = "#0072B2";
    s.dash = "";
    s.fill_opacity = 0.22;
  } else {
    s.color = colors[(i - 1) % 6];
    s.dash = dashes[(i - 1) % 6];
    s.fill_opacity = 0;
  }
  return s;
}

void rep_text(rep_buf *b, double x, double y, const char *anchor, double size, const char *text) {
  rep_printf(b, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"%s\" font-size=\"%g\" %s fill=\"#111\">", x, y, anchor,
             size, font);
  rep_escape(b, text);
  rep_put(b, "</text>\n");
}

void rep_svg_open(rep_buf *b, const char *kind, const char *name, double w, double h, const char *heading) {
  rep_printf(b,
             "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"smx-fig\" data-fig=\"%s\" data-name=\"", kind);
  rep_escape(b, name);
  rep_printf(b, "\" width=\"%.0f\" height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\" role=\"img\">\n<title>", w, h, w, h);
  rep_escape(b, heading);
  rep_printf(b, "</title>\n<rect x=\"0\" y=\"0\" width=\"%.0f\" height=\"%.0f\" fill=\"#fff\"/>\n", w, h);
  rep_text(b, w / 2, 20, "middle", 14, heading);
}

void rep_svg_close(rep_buf *b) { rep_put(b, "</svg>\n"); }

double rep_nice_step(double lo, double hi, int n) {
  double span = hi - lo;
  if (!(span > 0) || !isfinite(span)) span = fabs(hi) > 0 && isfinite(hi) ? fabs(hi) : 1;
  if (n < 1) n = 1;
  double raw = span / n;
  double p = pow(10, floor(log10(raw)));
  double m = raw / p;
  double step = m < 1.5 ? 1 : m < 3.5 ? 2 : m < 7.5 ? 5 : 10;
  return step * p;
}

void rep_tick_label(char *out, size_t cap, double v, double step) {
  if (fabs(v) < step * 1e-9) v = 0;  /* 0.1 + 0.2 - 0.3: print "0", not "5.55e-17" or "-0" */
  double mag = fmax(fabs(v), step);
  if (mag >= 1e6 || step < 1e-4) {
    /* significant digits enough to tell neighbouring ticks apart */
    int sig = (int)ceil(log10(mag / step)) + 1;
    if (sig < 1) sig = 1;
    if (sig > 15) sig = 15;
    snprintf(out, cap, "%.*g", sig, v);
    return;
  }
  int dec = step >= 1 ? 0 : (int)ceil(-log10(step) - 1e-9);
  snprintf(out, cap, "%.*f", dec, v);
}

void rep_compact_count(char *out, size_t cap, size_t n) {
  static const char *const unit[] = { "", "k", "M", "G", "T", "P", "E" };
  if (n < 1000) { snprintf(out, cap, "%zu", n); return; }
  double v = (double)n;
  int u = 0;
  while (v >= 999.5 && u < 6) { v /= 1000; u++; }
  if (v < 9.95) snprintf(out, cap, "%.1f%s", v, unit[u]);
  else snprintf(out, cap, "%.0f%s", v, unit[u]);
}

unsigned rep_next_id(rep_buf *b) { return ++b->ids; }

/* The y ticks, the frame and both axis titles: what the linear and the log x axes share. */
static void y_axis_and_titles(rep_buf *b, const rep_plot *p, const char *xlabel, const char *ylabel, int ny);

void rep_axes_logx(rep_buf *b, const rep_plot *p, const char *xlabel, const char *ylabel, int ny) {
  char lab[48];
  double y0 = p->top, y1 = p->top + p->height, span = p->xmax - p->xmin;
  rep_put(b, "<g class=\"axes\" data-xscale=\"log\">\n");
  for (double e = ceil(p->xmin); e <= p->xmax + 1e-9 && e - p->xmin < 30; e++) {
    double px = p->left + (e - p->xmin) / span * p->width;
    rep_printf(b, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#d0d0d0\"/>\n", px, y0, px, y1);
    rep_printf(b, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#333\"/>\n", px, y1, px, y1 + 5);
    /* 0.001 ... 1 as plain decimals (what an FPR reads as); 1e-5 and below in exponent form */
    if (e >= -4) snprintf(lab, sizeof lab, "%.*f", e < 0 ? (int)-e : 0, pow(10, e));
    else snprintf(lab, sizeof lab, "1e%.0f", e);
    rep_text(b, px, y1 + 18, "middle", 11, lab);
    for (int m = 2; m <= 9 && e < p->xmax - 1e-9; m++) {
      double pm = px + log10((double)m) / span * p->width;
      rep_printf(b, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#eeeeee\"/>\n", pm, y0, pm, y1);
    }
  }
  y_axis_and_titles(b, p, xlabel, ylabel, ny);
}

void rep_axes(rep_buf *b, const rep_plot *p, const char *xlabel, const char *ylabel, int nx, int ny) {
  char lab[48];
  double y0 = p->top, y1 = p->top + p->height;
  double sx = rep_nice_step(p->xmin, p->xmax, nx), slackx = 1e-9 * (p->xmax - p->xmin);
  rep_put(b, "<g class=\"axes\">\n");
  /* x ticks: k * sx for the integers k in range (at most a few dozen by construction) */
  double k0 = ceil((p->xmin - slackx) / sx), k1 = floor((p->xmax + slackx) / sx);
  for (double k = k0; k <= k1 && k - k0 < 60; k++) {
    double v = k * sx, px = rep_px(p, v);
    rep_printf(b, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#e3e3e3\"/>\n", px, y0, px, y1);
    rep_printf(b, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#333\"/>\n", px, y1, px, y1 + 5);
    rep_tick_label(lab, sizeof lab, v, sx);
    rep_text(b, px, y1 + 18, "middle", 11, lab);
  }
  y_axis_and_titles(b, p, xlabel, ylabel, ny);
}

static void y_axis_and_titles(rep_buf *b, const rep_plot *p, const char *xlabel, const char *ylabel, int ny) {
  char lab[48];
  double x0 = p->left, x1 = p->left + p->width, y0 = p->top, y1 = p->top + p->height;
  double sy = rep_nice_step(p->ymin, p->ymax, ny), slacky = 1e-9 * (p->ymax - p->ymin);
  double k0 = ceil((p->ymin - slacky) / sy), k1 = floor((p->ymax + slacky) / sy);
  for (double k = k0; k <= k1 && k - k0 < 60; k++) {
    double v = k * sy, py = rep_py(p, v);
    rep_printf(b, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#e3e3e3\"/>\n", x0, py, x1, py);
    rep_printf(b, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#333\"/>\n", x0 - 5, py, x0, py);
    rep_tick_label(lab, sizeof lab, v, sy);
    rep_text(b, x0 - 8, py + 4, "end", 11, lab);
  }
  rep_printf(b, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"none\" stroke=\"#333\"/>\n", x0, y0,
             p->width, p->height);
  rep_text(b, (x0 + x1) / 2, y1 + 36, "middle", 12, xlabel);
  double cy = (y0 + y1) / 2, cx = x0 - 44;
  rep_printf(b, "<text transform=\"translate(%.1f %.1f) rotate(-90)\" text-anchor=\"middle\" font-size=\"12\" %s fill=\"#111\">",
             cx, cy, font);
  rep_escape(b, ylabel);
  rep_put(b, "</text>\n</g>\n");
}

double rep_legend_line(rep_buf *b, double x, double y, const rep_style *st, const char *label, const char *detail) {
  rep_printf(b, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" stroke-width=\"2.2\"%s%s%s/>\n", x,
             y - 4, x + 28, y - 4, st->color, st->dash[0] ? " stroke-dasharray=\"" : "", st->dash,
             st->dash[0] ? "\"" : "");
  rep_printf(b, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"12\" %s fill=\"#111\">", x + 36, y, font);
  rep_escape_max(b, label, 56);
  rep_put(b, "</text>\n");
  if (detail == NULL) return y + 17;
  rep_printf(b, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"11\" %s fill=\"#333\">", x + 36, y + 15, font);
  rep_escape(b, detail);
  rep_put(b, "</text>\n");
  return y + 34;
}

double rep_legend_box(rep_buf *b, double x, double y, const char *fill, double opacity, const char *pattern_id,
                      const char *label) {
  rep_printf(b, "<rect x=\"%.1f\" y=\"%.1f\" width=\"28\" height=\"10\" fill=\"%s\" fill-opacity=\"%.2f\" stroke=\"%s\"/>\n",
             x, y - 9, fill, opacity, fill);
  if (pattern_id)
    rep_printf(b, "<rect x=\"%.1f\" y=\"%.1f\" width=\"28\" height=\"10\" fill=\"url(#%s)\"/>\n", x, y - 9, pattern_id);
  rep_printf(b, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"12\" %s fill=\"#111\">", x + 36, y, font);
  rep_escape_max(b, label, 56);
  rep_put(b, "</text>\n");
  return y + 17;
}
