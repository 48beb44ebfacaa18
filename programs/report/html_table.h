/* The caller's tables as HTML <table> elements. */
#ifndef SMX_REPORT_HTML_TABLE_H
#define SMX_REPORT_HTML_TABLE_H

#include "report.h"
#include "strbuf.h"

/* A table already checked by rep_table_valid. */
void rep_html_table(rep_buf *b, const smx_report_table *t);
/* 1 when t can be drawn (see smx_report_table in report.h). */
int rep_table_valid(const smx_report_table *t);
/* One value cell's text: "%.*f" with digits clamped to [0, 17], "n/a", "inf", "-inf". */
void rep_format_value(char *out, size_t cap, double v, int digits);

#endif
