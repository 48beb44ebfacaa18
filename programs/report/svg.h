/*
 * SVG building blocks shared by the figures: the <svg> element itself, a
 * plot box mapping data to pixels, axes with "nice" ticks and labels, line
 * and fill styles that stay distinct in grey print (colour-blind-safe
 * Okabe-Ito colours plus dash patterns), and a legend drawn below the plot
 * so that it never hides data. Coordinates are written with one decimal:
 * that keeps pages small and is finer than a screen pixel.
 */
#ifndef SMX_REPORT_SVG_H
#define SMX_REPORT_SVG_H

#include <stddef.h>

#include "strbuf.h"

/* The data area of a plot: a pixel box and the data range it shows. */
typedef struct rep_plot {
  double left, top, width, height;  /* pixels, inside the <svg>  */
  double xmin, xmax, ymin, ymax;    /* data; xmin < xmax, ymin < ymax */
} rep_plot;

/* Data to pixel coordinates (y grows downwards in SVG). Values outside the
 * range are clamped to the box edge (a histogram never pokes out). */
double rep_px(const rep_plot *p, double x);
double rep_py(const rep_plot *p, double y);

/* How a series is drawn. */
typedef struct rep_style {
  const char *color;  /* stroke colour, "#rrggbb"               */
  const char *dash;   /* stroke-dasharray, "" for a solid line   */
  double fill_opacity; /* > 0: the area under a histogram is filled too */
} rep_style;

/* Series styles: 0 is the ID set (blue, solid, filled), 1.. the OOD sets. */
rep_style rep_series_style(size_t i);

/*
 * Opens <svg class="smx-fig" data-fig="KIND" data-name="NAME" ...> of w x h
 * pixels with a white background and a <title> (escaped text), then a
 * heading line at the top. kind is a fixed ASCII word; name and heading are
 * caller text (escaped).
 */
void rep_svg_open(rep_buf *b, const char *kind, const char *name, double w, double h, const char *heading);
void rep_svg_close(rep_buf *b);

/*
 * Light grid, frame, ticks at "nice" numbers (about `nx` / `ny` of them)
 * with labels, and the axis titles (escaped). Ticks are placed inside
 * [xmin, xmax] and [ymin, ymax].
 */
void rep_axes(rep_buf *b, const rep_plot *p, const char *xlabel, const char *ylabel, int nx, int ny);

/* The same with a logarithmic x axis: p->xmin < p->xmax are whole powers of
 * ten's exponents (xmin = -3: the axis runs from 0.001), a labelled tick at
 * each power and light grid lines at its multiples 2..9. The caller places x
 * at p->left + (log10(x) - xmin) / (xmax - xmin) * p->width. */
void rep_axes_logx(rep_buf *b, const rep_plot *p, const char *xlabel, const char *ylabel, int ny);

/* A legend entry at (x, y): a short sample of the style, then the label
 * (escaped, shortened to 56 characters); when detail is not NULL, a second
 * line under the label (escaped, not shortened: keep it short). Returns
 * the y of the next entry. */
double rep_legend_line(rep_buf *b, double x, double y, const rep_style *st, const char *label, const char *detail);
/* Same for a filled box sample (bars): fill colour and opacity, optional hatch id. */
double rep_legend_box(rep_buf *b, double x, double y, const char *fill, double opacity, const char *pattern_id,
                      const char *label);

/* Text at (x, y), escaped; anchor "start", "middle" or "end"; size in px. */
void rep_text(rep_buf *b, double x, double y, const char *anchor, double size, const char *text);

/* The step between ticks for about n ticks over [lo, hi]: 1, 2 or 5 x 10^k. */
double rep_nice_step(double lo, double hi, int n);
/* A tick label for v on a grid of `step`: just enough decimals, "0" not "-0",
 * exponent form for very large or small magnitudes. out has >= 32 bytes. */
void rep_tick_label(char *out, size_t cap, double v, double step);

/* A short count: "987", "9.9k", "99k", "1.2M", "12G". out has >= 16 bytes. */
void rep_compact_count(char *out, size_t cap, size_t n);

/* A number for element ids (hatch patterns), unique within one page. */
unsigned rep_next_id(rep_buf *b);

#endif
