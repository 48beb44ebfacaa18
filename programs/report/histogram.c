#include "histogram.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "report.h"
#include "svg.h"

int rep_hist_range(const rep_scores *sets, size_t n, double *lo, double *hi) {
  int any = 0;
  double mn = INFINITY, mx = -INFINITY;
  for (size_t k = 0; k < n; k++) {
    if (rep_scores_finite(&sets[k]) == 0) continue;
    any = 1;
    double top = sets[k].v[sets[k].n_posinf], bottom = sets[k].v[sets[k].n - sets[k].n_neginf - 1];
    if (top > mx) mx = top;
    if (bottom < mn) mn = bottom;
  }
  if (!any) return 0;
  if (mn == mx) {
    double half = 0.5;
    /* beyond 2^52 the doubles around v are more than 0.5 apart */
    if (mn - half == mn || mx + half == mx) half = fabs(mn) * 0x1p-20;
    mn -= half;
    mx += half;
  }
  *lo = mn;
  *hi = mx;
  return 1;
}

void rep_hist_count(const rep_scores *s, double lo, double hi, size_t bins, size_t *counts) {
  for (size_t m = 0; m < bins; m++) counts[m] = 0;
  /* halves: hi - lo may overflow for values near +-DBL_MAX */
  double span = hi * 0.5 - lo * 0.5;
  size_t end = s->n - s->n_neginf;
  for (size_t i = s->n_posinf; i < end; i++) {
    double t = (s->v[i] * 0.5 - lo * 0.5) / span * (double)bins;
    size_t m = t >= (double)bins ? bins - 1 : t > 0 ? (size_t)t : 0;  /* NaN: 0 */
    counts[m]++;
  }
}

int rep_hist_figure(rep_buf *b, const char *score_name, const rep_scores *sets, const char *const *names, size_t n,
                    int compact) {
  enum { BINS = SMX_REPORT_HIST_BINS };
  double lo, hi;
  if (!rep_hist_range(sets, n, &lo, &hi)) return 0;
  double *frac = malloc(n * BINS * sizeof *frac);
  size_t *counts = malloc(BINS * sizeof *counts);
  if (frac == NULL || counts == NULL) {
    free(frac);
    free(counts);
    return -1;
  }
  double top = 0;
  for (size_t k = 0; k < n; k++) {
    size_t fin = rep_scores_finite(&sets[k]);
    rep_hist_count(&sets[k], lo, hi, BINS, counts);
    for (size_t m = 0; m < BINS; m++) {
      frac[k * BINS + m] = fin ? (double)counts[m] / (double)fin : 0;
      if (frac[k * BINS + m] > top) top = frac[k * BINS + m];
    }
  }
  free(counts);
  top = top > 0 ? top * 1.08 : 1;

  const double W = compact ? 290 : 560, left = compact ? 62 : 78, top_px = 40, pw = compact ? 210 : 450,
               ph = compact ? 190 : 300;
  double legend_top = top_px + ph + 62;
  double H = legend_top + 34.0 * (double)n + 8;
  rep_plot p = { left, top_px, pw, ph, lo, hi, 0, top };
  rep_buf title = { 0 };
  rep_put(&title, compact ? "Histogram: " : "Score histogram: ");
  rep_put(&title, score_name);
  if (title.failed) { rep_free(&title); free(frac); return -1; }
  rep_svg_open(b, "hist", score_name, W, H, title.data);
  rep_free(&title);
  rep_axes(b, &p, compact ? "score (higher = more ID)" : "score (higher = more in-distribution)",
           compact ? "fraction per bin" : "fraction of the set per bin", compact ? 4 : 6, 5);

  double ly = legend_top;
  for (size_t k = 0; k < n; k++) {
    rep_style st = rep_series_style(k);
    const rep_scores *s = &sets[k];
    size_t fin = rep_scores_finite(s);
    char detail[200];
    if (fin > 0) {
      /* a step outline: up and across each bin, starting and ending on the axis */
      double x0 = rep_px(&p, lo), y0 = rep_py(&p, 0);
      rep_buf path = { 0 };
      rep_printf(&path, "M%.1f,%.1f", x0, y0);
      for (size_t m = 0; m < BINS; m++) {
        /* lo (1 - f) + hi f: no overflow even for a range near +-DBL_MAX */
        double fa = (double)m / BINS, fb = (double)(m + 1) / BINS;
        double xa = lo * (1 - fa) + hi * fa, xb = m == BINS - 1 ? hi : lo * (1 - fb) + hi * fb;
        double y = rep_py(&p, frac[k * BINS + m]);
        rep_printf(&path, "L%.1f,%.1fL%.1f,%.1f", rep_px(&p, xa), y, rep_px(&p, xb), y);
      }
      rep_printf(&path, "L%.1f,%.1fZ", rep_px(&p, hi), y0);
      if (path.failed) { rep_free(&path); free(frac); return -1; }
      rep_printf(b, "<path class=\"bars\" d=\"%s\" fill=\"%s\" fill-opacity=\"%.2f\" stroke=\"%s\" stroke-width=\"%s\"%s%s%s/>\n",
                 path.data, st.fill_opacity > 0 ? st.color : "none", st.fill_opacity, st.color,
                 k == 0 ? "1.5" : "2", st.dash[0] ? " stroke-dasharray=\"" : "", st.dash, st.dash[0] ? "\"" : "");
      rep_free(&path);
    }
    int len = snprintf(detail, sizeof detail, "%zu scores drawn", fin);
    if (s->n_nan) len += snprintf(detail + len, sizeof detail - (size_t)len, "; %zu NaN dropped", s->n_nan);
    if (s->n_posinf + s->n_neginf)
      len += snprintf(detail + len, sizeof detail - (size_t)len, "; %zu infinite not drawn", s->n_posinf + s->n_neginf);
    if (fin == 0) snprintf(detail + len, sizeof detail - (size_t)len, "; nothing to draw");
    ly = rep_legend_line(b, left - 60, ly, &st, names[k], detail);
  }
  free(frac);
  rep_svg_close(b);
  return 0;
}
