/*
 * Reliability diagrams: accuracy against confidence in bins, with the gap
 * to the mean confidence of each bin, the diagonal of perfect calibration,
 * and the number of samples per bin underneath. The bins come either from
 * per-sample arrays (SMX_REPORT_CAL_BINS equal-width bins) or from the
 * caller, already counted.
 */
#ifndef SMX_REPORT_RELIABILITY_H
#define SMX_REPORT_RELIABILITY_H

#include <stddef.h>
#include <stdint.h>

#include "report.h"
#include "strbuf.h"

typedef struct rep_rel {
  size_t nb;                          /* bins in use                                 */
  double lo[SMX_REPORT_MAX_BINS], hi[SMX_REPORT_MAX_BINS];  /* bin m = (lo, hi]     */
  uint64_t count[SMX_REPORT_MAX_BINS];
  double conf[SMX_REPORT_MAX_BINS];   /* mean confidence of the bin (0 when empty)   */
  double acc[SMX_REPORT_MAX_BINS];    /* fraction correct in the bin (0 when empty)  */
  uint64_t n;                         /* samples binned                              */
  uint64_t dropped;                   /* NaN or outside [0, 1]                       */
  int equal_width;                    /* bins made here from per-sample data         */
  size_t merged_from;                 /* caller's bins merged into nb for drawing, or 0 */
  double ece;                         /* sum_m count_m / n |acc_m - conf_m|         */
  double accuracy, mean_conf;         /* over the binned samples                     */
} rep_rel;

/* The upper edge of bin m: (m + 1) / SMX_REPORT_CAL_BINS, correctly rounded. */
double rep_rel_edge(size_t m);
/* The bin of a confidence c in [0, 1]: the m with edge(m-1) < c <= edge(m), 0 for c = 0. */
size_t rep_rel_bin(double c);

/* Bins n samples into SMX_REPORT_CAL_BINS equal-width bins; correct[i] non-zero = right. */
void rep_rel_compute(rep_rel *out, const double *conf, const unsigned char *correct, size_t n);

/* 1 when bins[0 .. nb) are usable (see smx_report_bin): nb >= 1, 0 <= lo < hi <= 1,
 * ascending without overlap, conf and acc in [0, 1] where n > 0. */
int rep_rel_bins_valid(const smx_report_bin *bins, size_t nb);
/* Takes the caller's bins (checked by rep_rel_bins_valid): ECE, accuracy and
 * mean confidence over them as given; for drawing, more than
 * SMX_REPORT_MAX_BINS are merged in groups of consecutive bins. */
void rep_rel_from_bins(rep_rel *out, const smx_report_bin *bins, size_t nb);

/*
 * One diagram. kind is the data-fig word ("reliability-before" /
 * "reliability-after"), name the calibration set's name, heading the line
 * above the plot. Returns 0 or -1 (no memory).
 */
int rep_rel_figure(rep_buf *b, const char *kind, const char *name, const char *heading, const rep_rel *r);

#endif
