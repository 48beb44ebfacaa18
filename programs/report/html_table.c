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

void rep_html_table(rep_buf *b, const smx_report_table *t) {
  rep_put(b, "<table class=\"smx-table\">\n");
  if (t->caption) {
    rep_put(b, "<caption>");
    rep_escape(b, t->caption);
    rep_put(b, "</caption>\n");
  }
  rep_put(b, "<thead><tr>");
  for (size_t j = 0; j < t->ncols; j++) {
    rep_put(b, "<th>");
    rep_escape(b, t->header[j]);
    rep_put(b, "</th>");
  }
  rep_put(b, "</tr></thead>\n<tbody>\n");
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
        rep_format_value(num, sizeof num, t->values[c], t->col_digits ? t->col_digits[j] : t->digits);
        rep_put(b, "<td class=\"num\">");
        rep_put(b, num);
      } else {
        rep_put(b, "<td>");
      }
      rep_put(b, "</td>");
    }
    rep_put(b, "</tr>\n");
  }
  rep_put(b, "</tbody></table>\n");
}
