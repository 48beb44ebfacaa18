/*
 * Score histograms: ID against every OOD set of one score, as the fraction
 * of each set per bin over a common range of equal-width bins.
 */
#ifndef SMX_REPORT_HISTOGRAM_H
#define SMX_REPORT_HISTOGRAM_H

#include <stddef.h>

#include "score_set.h"
#include "strbuf.h"

/*
 * The common range of the finite values of sets[0 .. n): [*lo, *hi] with
 * *lo < *hi. A single value v gives [v - 0.5, v + 0.5] (wider where 0.5 is
 * below the spacing of doubles around v). Returns 0 when no set holds a
 * finite value.
 */
int rep_hist_range(const rep_scores *sets, size_t n, double *lo, double *hi);

/* counts[0 .. bins) of the finite values of s over [lo, hi]: bin
 * floor((v - lo) / (hi - lo) * bins), the last bin closed. */
void rep_hist_count(const rep_scores *s, double lo, double hi, size_t bins, size_t *counts);

/*
 * The histogram figure: sets[0] is the ID set, sets[1 .. n) the OOD sets,
 * names[k] their legend names. Sets without a finite value are listed in
 * the legend only. The caller checked that rep_hist_range finds a range.
 * Returns 0 or -1 (no memory).
 */
int rep_hist_figure(rep_buf *b, const char *score_name, const rep_scores *sets, const char *const *names, size_t n,
                    int compact);

#endif
