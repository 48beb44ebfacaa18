/*
 * The HTML report of `smx eval --report FILE.html`: one self-contained page
 * (no external resource, no JavaScript) with the caller's tables and, drawn
 * as inline SVG, for every score the ROC curves and the ID-vs-OOD score
 * histograms, and for every calibration set the reliability diagrams before
 * and after temperature scaling.
 *
 * Part of the smx command, not of the public library: the caller (smx eval)
 * computes the metrics and passes raw arrays; this module only draws. It
 * never modifies or keeps the caller's arrays; everything it needs is copied
 * and freed before returning.
 *
 * Usage (all fields not listed may stay zero / NULL). Fill the structs with
 * designated initializers (.name = ...) as below: fields may be appended to
 * them later, and a positional initializer would then trip the build's
 * -Wextra -Werror (missing-field-initializers).
 *
 *   #include "report/report.h"   (from a programs/ source; CMake: link the smx_report
 *                                  library, defined in programs/CMakeLists.txt)
 *
 *   const char *hdr[] = { "score", "AUROC", "FPR@95" };
 *   const char *txt[] = { "MSP", NULL, NULL,  "Energy", NULL, NULL };
 *   double val[]      = { 0, 0.9399, 0.4520,  0, 0.9533, 0.2768 };
 *   smx_report_table t = { .caption = "OOD metrics", .ncols = 3, .nrows = 2,
 *                          .header = hdr, .text = txt, .values = val, .digits = 4 };
 *   smx_report_ood_set o[] = { { .name = "svhn.npy", .scores = ood_msp, .n = n_ood } };
 *   smx_report_score s[] = { { .name = "MSP", .id_scores = id_msp, .n_id = n_id,
 *                              .ood = o, .n_ood = 1 } };
 *   smx_report_calibration c = { .name = "ID test set", .n = n_id,
 *       .conf_before = conf, .correct_before = ok,
 *       .conf_after = conf_ts, .correct_after = NULL,  (NULL: same as before)
 *       .temperature = 1.42 };
 *   smx_report r = { .title = "smx eval", .tables = &t, .n_tables = 1,
 *                    .scores = s, .n_scores = 1, .calibration = &c, .n_calibration = 1 };
 *
 *   Pre-binned instead (bins from smx_calib_result, rb and rb_ts below):
 *     smx_report_bin b[15], bt[15];
 *     for (k = 0; k < 15; k++) {
 *       b[k] = (smx_report_bin){ rb[k].lo, rb[k].hi, rb[k].n, rb[k].conf, rb[k].acc };
 *       bt[k] = (smx_report_bin){ rb_ts[k].lo, rb_ts[k].hi, rb_ts[k].n, rb_ts[k].conf, rb_ts[k].acc };
 *     }
 *     smx_report_calibration c = { .name = "ID test set", .bins_before = b,
 *                                  .bins_after = bt, .n_bins = 15, .temperature = T };
 *
 *   char err[256];
 *   smx_status st = smx_report_write_html("report.html", &r, err, sizeof err);
 *   if (st != SMX_OK) return smx_cli_fail(st == SMX_E_IO ? SMX_CLI_EXIT_OUTPUT
 *                                                     : SMX_CLI_EXIT_COMPUTE, "%s", err);
 *
 * Conventions of the figures (also printed on the page):
 *  - Scores are "higher = more in-distribution". A sample is accepted as ID
 *    when score >= t; the ROC curve has ID as the positive class:
 *    x = FPR = fraction of the OOD set accepted, y = TPR = fraction of the ID
 *    set accepted, one point per distinct threshold, so tied scores enter
 *    together (a diagonal segment). The AUROC in the legend is the exact area
 *    under that curve (= Mann-Whitney U with half credit for ties, computed
 *    with integer counts), and the marked point is the first threshold, going
 *    down, whose TPR >= 0.95. The drawn polyline is thinned to at most
 *    SMX_REPORT_ROC_MAX_POINTS points, each dropped point lying within
 *    L1 distance 2 / SMX_REPORT_ROC_MAX_POINTS of the drawn curve.
 *  - NaN scores are dropped and counted (the count is printed under the
 *    figure); +inf and -inf are kept in the ROC curve (they order fine) but
 *    left out of the histograms (counted as well).
 *  - Histograms: SMX_REPORT_HIST_BINS equal-width bins over [min, max] of the
 *    finite scores of all sets of that score (the last bin closed), drawn as
 *    the fraction of each set per bin, so sets of different sizes compare; a
 *    constant score gets the range [v - 0.5, v + 0.5] (wider for |v| >= 2^52,
 *    where 0.5 is below the spacing of doubles).
 *  - Reliability diagrams from per-sample data: SMX_REPORT_CAL_BINS
 *    equal-width bins of the confidence, bin m = (m/15, (m+1)/15] with confidence 0 in bin 0 (the
 *    gpleiss/temperature_scaling convention); per bin a solid accuracy bar
 *    from 0 to the accuracy (rect.acc, nothing drawn over it) and, beside it
 *    in the same bin, the gap as a hatched, outlined segment from the
 *    accuracy to the mean confidence (rect.gap) with a tick at the mean
 *    confidence; bins holding fewer than SMX_REPORT_SPARSE_BIN samples are
 *    drawn lighter (class "sparse") and counted under the figure; the
 *    diagonal, and the bin counts underneath; the ECE printed is sum_m |B_m|/n |acc_m - conf_m|
 *    over these bins. Confidences that are NaN or outside [0, 1] are dropped
 *    and counted.
 *
 * Size: every figure is bounded (ROC points, bins), so millions of scores
 * give a page of the same size as thousands: at most about 13 KB per ROC
 * curve and 2 KB per histogram set, plus 5 KB per figure; 13 KB per
 * reliability diagram; plus 3 KB of style and the caller's tables and texts
 * (measured: 55 KB for one score, one OOD set and one calibration set, the
 * same for 5000 and for 5 million scores).
 *
 * Text: every string (titles, names, cells, notes) is escaped for HTML and
 * SVG; invalid UTF-8 and control characters are replaced by U+FFFD, so any
 * bytes a file name holds are safe. Strings may be NULL where marked
 * "optional"; a NULL name elsewhere is SMX_E_INVALID_ARG.
 *
 * Numbers are printed with printf: call this under the "C" LC_NUMERIC
 * locale (the smx command never calls setlocale).
 *
 * Functions return SMX_OK, SMX_E_INVALID_ARG (a NULL pointer where data is
 * required, a count with a NULL array, a table with header or cells missing,
 * bins out of order or outside [0, 1]),
 * SMX_E_NOMEM, or SMX_E_IO (write_html: create / write / rename failed; errno
 * text in err). On failure err receives a one-line message without the
 * "smx: " prefix (at most errlen bytes with the NUL; err may be NULL when
 * errlen is 0). Nothing aborts. Thread-safe for distinct reports.
 */
#ifndef SMX_PROGRAMS_REPORT_H
#define SMX_PROGRAMS_REPORT_H

#include <stddef.h>
#include <stdint.h>

#include "smx/smx.h"

#define SMX_REPORT_ROC_MAX_POINTS 1000 /* drawn points per ROC curve, at most (+2) */
#define SMX_REPORT_HIST_BINS 50         /* bins of a score histogram               */
#define SMX_REPORT_CAL_BINS 15          /* bins of a reliability diagram           */
#define SMX_REPORT_SPARSE_BIN 10        /* fewer samples: a bin drawn lighter      */

/* A "label: value" line under the title, e.g. { "ID logits", "test.npy" }. */
typedef struct smx_report_item {
  const char *label;
  const char *value;
} smx_report_item;

/*
 * A table of nrows x ncols cells, row-major. Cell (i, j) shows, in order of
 * preference: text[i * ncols + j] when text != NULL and that entry is not
 * NULL (escaped, left-aligned); else values[i * ncols + j] when values !=
 * NULL, as "%.*f" with col_digits[j] (when col_digits != NULL) or digits
 * decimals, right-aligned, NaN as "n/a", infinities as "inf" / "-inf"; else
 * an empty cell. At least one of text and values when nrows > 0. digits and
 * col_digits entries are clamped to [0, 17]. A value cell also carries its
 * full value as data-value="%.17g" (for scripts). Headers are metric keys:
 * they never wrap (a key cut at "_" or mid-word reads as two words).
 *
 * col_best[j] != 0 puts the column's direction after its header (a up
 * triangle: higher is better; a down triangle: lower is better, as for FPR,
 * NLL and ECE), explained in the caption, and shades the best value(s) of
 * the column in bold. cell_notes, when given, adds a short remark in small
 * type after the value of a cell (e.g. that an MCE comes from a bin of few
 * samples).
 */
typedef struct smx_report_table {
  const char *caption;        /* optional; shown above the table        */
  size_t ncols, nrows;        /* ncols >= 1                              */
  const char *const *header;  /* ncols column names (entries optional)   */
  const char *const *text;    /* optional: nrows * ncols, entries optional */
  const double *values;       /* optional: nrows * ncols                 */
  int digits;                 /* decimals for values                     */
  const int *col_digits;      /* optional: ncols decimals, per column    */
  const int *col_best;        /* optional: ncols; +1 marks the largest value of that
                                 column as the best, -1 the smallest, 0 nothing
                                 (ties: every equal cell is marked)         */
  const char *const *cell_notes; /* optional: nrows * ncols, entries optional */
} smx_report_table;

/* One OOD set's scores for one score function (name: e.g. the file name). */
typedef struct smx_report_ood_set {
  const char *name;
  const double *scores;  /* n values; may be NULL when n == 0 */
  size_t n;
} smx_report_ood_set;

/*
 * One score function: its ID scores and zero or more OOD sets. Gives a ROC
 * figure (one curve per OOD set; a note instead when there is no OOD set, or
 * no usable ID or OOD score) and a histogram figure (ID and every OOD set).
 */
typedef struct smx_report_score {
  const char *name;                /* e.g. "MSP", "Energy (T=1)"            */
  const double *id_scores;         /* n_id values; may be NULL when n_id == 0 */
  size_t n_id;
  const smx_report_ood_set *ood;   /* n_ood sets; may be NULL when n_ood == 0 */
  size_t n_ood;
} smx_report_score;

/*
 * One bin of a reliability diagram computed by the caller (the same fields
 * as smx_reliability_bin of smx_metrics.h, copied field by field). This
 * struct is complete: it will not grow, so positional initializers are fine.
 */
typedef struct smx_report_bin {
  double lo, hi;     /* the bin (lo, hi]: 0 <= lo < hi <= 1, bins in ascending order */
  uint64_t n;        /* samples in the bin                                        */
  double conf, acc;  /* mean confidence and accuracy, in [0, 1]; ignored when n = 0 */
} smx_report_bin;

/* Pre-binned reliability data with more bins than this is drawn with
 * consecutive bins merged into at most this many bars (the ECE printed is
 * still that of the bins given). */
#define SMX_REPORT_MAX_BINS 1000

/*
 * One calibration set: per-sample top-label confidence (max probability) and
 * correctness (non-zero = prediction right) before and after temperature
 * scaling. Gives two reliability diagrams side by side; the "after" one is
 * replaced by a note when conf_after is NULL (then temperature_note, or a
 * default text, says why).
 *
 * Or, pre-binned (for callers that accumulate bins while streaming and keep
 * no per-sample arrays): bins_before (and bins_after) hold n_bins bins each;
 * when bins_before is not NULL the per-sample fields are not used (n,
 * conf_*, correct_* may be 0 / NULL), and the "after" diagram is drawn when
 * bins_after is not NULL. The diagram then shows these bins as given (any
 * edges), and its ECE is sum_b n_b / N |acc_b - conf_b| with N = sum_b n_b.
 */
typedef struct smx_report_calibration {
  const char *name;                       /* e.g. "ID test set (271 samples)"       */
  size_t n;                               /* samples in each array                  */
  const double *conf_before;              /* n confidences in [0, 1]                */
  const unsigned char *correct_before;    /* n flags                                */
  const double *conf_after;               /* optional: n confidences after scaling  */
  const unsigned char *correct_after;     /* optional: NULL = same as before (a
                                             positive T keeps the argmax)           */
  double temperature;                     /* fitted T; NaN (or <= 0) = none         */
  const char *temperature_note;           /* optional, shown next to T, e.g. "no finite
                                             optimum: every validation sample is right" */
  const smx_report_bin *bins_before;      /* optional: pre-binned data (see above)  */
  const smx_report_bin *bins_after;       /* optional                               */
  size_t n_bins;                          /* entries of each bins array, >= 1        */
} smx_report_calibration;

/* The whole page. Sections appear in this order: title, subtitle, items;
 * the lead, which answers on the first screen whether the model is
 * calibrated and which score is best: a calibration verdict per calibration
 * set (over- or under-confident, well calibrated, or both ways, from the mean
 * confidence against the accuracy and the ECE; then the ECE after
 * temperature scaling and the fitted T, or why there is none), the first
 * n_lead_tables tables, and next to them one ROC overlay per OOD set name
 * (every score's curve against that set on a log-FPR axis, where curves that
 * crowd the top-left corner of a linear one come apart; legend sorted by
 * AUROC); notes, the other tables, the per-score panels (ROC and histogram,
 * in a compact grid), calibration. Counts may be 0 (arrays then NULL). */
typedef struct smx_report {
  const char *title;                      /* required; also the <title>             */
  const char *subtitle;                   /* optional                               */
  const smx_report_item *items;           /* n_items "label: value" lines (inputs)  */
  size_t n_items;
  const char *const *notes;               /* n_notes free-text remarks (warnings)   */
  size_t n_notes;
  const smx_report_table *tables;
  size_t n_tables;
  const smx_report_score *scores;
  size_t n_scores;
  const smx_report_calibration *calibration;
  size_t n_calibration;
  const char *id_name;                    /* optional: legend name of the ID set
                                             (default "ID"), e.g. "ID (test.npy)"    */
  size_t n_lead_tables;                   /* the first n_lead_tables tables open the
                                             page, next to the ROC overlay         */
} smx_report;

/*
 * Renders the page into a malloc'ed, NUL-terminated buffer: *html (free() it)
 * and *len (bytes, without the NUL). On failure *html is NULL and *len 0.
 */
smx_status smx_report_render_html(const smx_report *r, char **html, size_t *len, char *err, size_t errlen);

/*
 * Renders the page and writes it to path atomically: into a new temporary
 * file "DIR/.BASE.tmp.XXXXXX" next to it, then renamed over path, so path is
 * either left as it was or holds the whole page; the temporary file is
 * removed on any failure. path "-" writes to standard output instead, and a
 * device, FIFO or socket is written in place, never replaced. Nothing is
 * created when the arguments are invalid.
 */
smx_status smx_report_write_html(const char *path, const smx_report *r, char *err, size_t errlen);

#endif
