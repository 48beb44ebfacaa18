/*
 * The thresholds of sparsemax and entmax on a row's candidate entries
 * (include/smx/smx_sparse.h). The callers pass z_j = a (x_j - max) for the
 * entries that can be in the support (x_j >= max - 1/a, a = alpha - 1), in
 * index order, so that every z_j lies in [-1 - slack, 0] and the row's max has
 * z = 0; the threshold comes back relative to max in the same units. Each
 * function also takes a workspace w of k doubles, which it overwrites.
 *
 * The support a search finds is summarised by its smallest value; the
 * threshold is then formed once from the candidates at or above it, summed in
 * index order (compensated), so that two searches that agree on the support
 * return the same bits.
 */
#ifndef SMX_OPS_SPARSE_TAU_H
#define SMX_OPS_SPARSE_TAU_H

#include <stddef.h>
#include <stdint.h>

/* sparsemax (alpha = 2): tau with sum_j max(z_j - tau, 0) = 1.
 * Expected O(k): randomised pivot (Duchi et al. 2008, "Efficient projections onto
 * the l1-ball", Fig. 2 with radius 1). */
double smx_sparsemax_tau(const double *z, double *w, size_t k);
/* The same by a full sort (Martins & Astudillo 2016, Alg. 1): O(k log k), the oracle. */
double smx_sparsemax_tau_sort(const double *z, double *w, size_t k);

/* entmax-1.5 on z = (x - max) / 2: tau with sum_j max(z_j - tau, 0)^2 = 1,
 * exactly (Peters et al. 2019, Alg. 2), by the same pivot search. */
double smx_entmax15_tau(const double *z, double *w, size_t k);
/* The same by a full sort (the entmax package's _entmax_threshold_and_support). */
double smx_entmax15_tau_sort(const double *z, double *w, size_t k);

/* alpha-entmax by bisection on z = (alpha - 1)(x - max), as the entmax package's
 * EntmaxBisectFunction: bracket [-1, -(1/n)^(alpha-1)] (n the row length), n_iter
 * halvings, p_j = max(z_j - tau, 0)^(1/(alpha-1)) at the last midpoint, divided
 * by its sum (ensure_sum_one). Writes p[0..k); act is a workspace of k indices.
 * Returns the last midpoint. */
double smx_entmax_bisect(const double *z, size_t k, size_t n, double alpha, int n_iter, double *p, size_t *act);

/* The same from iteration it0 on, with the bracket's lower end lo, its width dm
 * and the last midpoint mid as the iterations before it0 left them, and f_lo the
 * sign state of the bracket's initial lower end; z holds every entry above lo. */
double smx_entmax_bisect_from(const double *z, size_t k, double alpha, int it0, int n_iter, double lo, double dm,
                              double mid, double f_lo, double *p, size_t *act);

/* max(t, 0)^(1/(alpha-1)): square for 1.5, identity for 2, pow otherwise */
double smx_entmax_pow(double t, double alpha);

#endif
