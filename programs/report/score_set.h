/*
 * One set of scores made ready for drawing: NaN dropped (and counted), the
 * rest copied and sorted in descending order, with -0 turned into +0 so
 * that equal values are equal bit for bit (ties are found by ==).
 */
#ifndef SMX_REPORT_SCORE_SET_H
#define SMX_REPORT_SCORE_SET_H

#include <stddef.h>

typedef struct rep_scores {
  double *v;                 /* n values, descending: +inf first, -inf last */
  size_t n;                  /* values kept (not NaN)                        */
  size_t n_nan;              /* NaN dropped                                  */
  size_t n_posinf, n_neginf; /* kept, but not drawn in histograms            */
} rep_scores;

/* Returns 0, or -1 when memory runs out (then *out is empty). x may be NULL when n == 0. */
int rep_scores_make(rep_scores *out, const double *x, size_t n);
void rep_scores_free(rep_scores *s);

/* Finite values: v[n_posinf .. n - n_neginf). */
static inline size_t rep_scores_finite(const rep_scores *s) { return s->n - s->n_posinf - s->n_neginf; }

/* Sorts v[0 .. n) in descending order (no NaN allowed). Returns 0 or -1 (no memory). */
int rep_sort_desc(double *v, size_t n);

#endif
