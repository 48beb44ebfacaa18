/*
 * Reliability diagrams: accuracy against confidence in equal-width bins,
 * with the gap to the mean confidence of each bin, the diagonal of perfect
 * calibration, and the number of samples per bin underneath.
 */
#ifndef SMX_REPORT_RELIABILITY_H
#define SMX_REPORT_RELIABILITY_H

#include <stddef.h>

#include "report.h"
#include "strbuf.h"

typedef struct rep_rel {
  size_t count[SMX_REPORT_CAL_BINS];
  double conf[SMX_REPORT_CAL_BINS];  /* mean confidence of the bin (0 when empty) */
  double acc[SMX_REPORT_CAL_BINS];   /* fraction correct in the bin (0 when empty) */
  size_t n;                          /* samples binned                             */
  size_t dropped;                    /* NaN or outside [0, 1]                      */
  double ece;                        /* sum_m count_m / n |acc_m - conf_m|        */
  double accuracy, mean_conf;        /* over the binned samples                    */
} rep_rel;

/* The upper edge of bin m: (m + 1) / SMX_REPORT_CAL_BINS, correctly rounded. */
double rep_rel_edge(size_t m);
/* The bin of a confidence c in [0, 1]: the m with edge(m-1) < c <= edge(m), 0 for c = 0. */
size_t rep_rel_bin(double c);

/* Bins n samples; correct[i] non-zero = right. */
void rep_rel_compute(rep_rel *out, const double *conf, const unsigned char *correct, size_t n);

/*
 * One diagram. kind is the data-fig word ("reliability-before" /
 * "reliability-after"), name the calibration set's name, heading the line
 * above the plot. Returns 0 or -1 (no memory).
 */
int rep_rel_figure(rep_buf *b, const char *kind, const char *name, const char *heading, const rep_rel *r);

#endif
