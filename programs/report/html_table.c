#include "html_table.h"

#include <math.h>
#include <stdio.h>

#include "escape.h"

int rep_table_valid(const smx_report_table *t) {
  if (t->ncols == 0 || t->header == NULL) return 0;
  if (t->nrows > 0 && t->text == NULL && t->values == NULL) return 0;
  if (t->nrows > 0 && t->ncols > ((size_t)-1) / sizeof(double) / t->nrows) return 0;  /* cell count overflows */
  return 1;
}

void rep_format_value(char *out, size_t cap, double v, int digits) {
  if (digits < 0) digits = 0;
  if (digits > 17) digits = 17;
  if (isnan(v)) snprintf(out, cap, "n/a");
  else if (isinf(v)) snprintf(out, cap, "%s", v > 0 ? "inf" : "-inf");
  else snprintf(out, cap, "%.*f", digits, v);
}

/* The two directions a column can want, as shown after its header. */
#define UP "\xE2\x96\xB2"    /* U+25B2 */
#define DOWN "\xE2\x96\xBC"  /* U+25BC */

/* The best value of column j (NaN when none or not asked for). */
static double column_best(const smx_report_table *t, size_t j) {
  double best = NAN;
  if (t->col_best == NULL || t->col_best[j] == 0 || t->values == NULL) return best;
  for (size_t i = 0; i < t->nrows; i++) {
    size_t c = i * t->ncols + j;
    if (t->text && t->text[c]) continue;
    double v = t->values[c];
    if (isnan(v)) continue;
    if (isnan(best) || (t->col_best[j] > 0 ? v > best : v < best)) best = v;
  }
  return best;
}

void rep_html_table(rep_buf *b, const smx_report_table *t) {
  int up = 0, down = 0;
  for (size_t j = 0; t->col_best && j < t->ncols; j++) {
    up |= t->col_best[j] > 0;
    down |= t->col_best[j] < 0;
  }
  rep_put(b, "<table class=\"smx-table\">\n");
  if (t->caption || up || down) {
    rep_put(b, "<caption>");
    if (t->caption) rep_escape(b, t->caption);
    /* the legend of the marks: a triangle alone would read as "higher" in every column */
    if (up || down) {
      rep_put(b, " <span class=\"best-key\">");
      if (up) rep_put(b, UP " higher is better");
      if (up && down) rep_put(b, ", ");
      if (down) rep_put(b, DOWN " lower is better");
      rep_put(b, "; <b class=\"best-sample\">shaded</b>: best of the column</span>");
    }
    rep_put(b, "</caption>\n");
  }
  rep_put(b, "<thead>");
  /* the directions in a row of their own above the keys: a key keeps the
   * column's width, and stays the whole text of its <th> for scripts */
  if (up || down) {
    rep_put(b, "<tr class=\"dir\">");
    for (size_t j = 0; j < t->ncols; j++) {
      int dir = t->col_best[j];
      rep_put(b, dir > 0 ? "<td title=\"higher is better\">" UP : dir < 0 ? "<td title=\"lower is better\">" DOWN : "<td>");
      rep_put(b, "</td>");
    }
    rep_put(b, "</tr>");
  }
  rep_put(b, "<tr>");
  for (size_t j = 0; t->ncols > 0 && j < t->ncols; j++) {
    rep_put(b, "<th>");
    if (t->header[j]) rep_escape(b, t->header[j]);
    rep_put(b, "</th>");
  }
  rep_put(b, "</tr></thead>\n<tbody>\n");
  double best[64];
  for (size_t j = 0; j < t->ncols && j < 64; j++) best[j] = column_best(t, j);
  for (size_t i = 0; i < t->nrows; i++) {
    rep_put(b, "<tr>");
    for (size_t j = 0; j < t->ncols; j++) {
      size_t c = i * t->ncols + j;
      if (t->text && t->text[c]) {
        rep_put(b, "<td>");
        rep_escape(b, t->text[c]);
      } else if (t->values) {
        /* %.17f of 1e308 is 327 characters */
        char num[400];
        double v = t->values[c];
        rep_format_value(num, sizeof num, v, t->col_digits ? t->col_digits[j] : t->digits);
        int is_best = j < 64 && !isnan(best[j]) && v == best[j];
        rep_put(b, is_best ? "<td class=\"num best\"" : "<td class=\"num\"");
        if (isfinite(v)) rep_printf(b, " data-value=\"%.17g\">", v);
        else rep_put(b, ">");
        rep_put(b, num);
      } else {
        rep_put(b, "<td>");
      }
      if (t->cell_notes && t->cell_notes[c]) {
        rep_put(b, "<span class=\"cell-note\">");
        rep_escape(b, t->cell_notes[c]);
        rep_put(b, "</span>");
      }
      rep_put(b, "</td>");
    }
    rep_put(b, "</tr>\n");
  }
  rep_put(b, "</tbody></table>\n");
}
