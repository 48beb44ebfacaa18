/*
 * 2^r on r in [-0.5, 0.5] as 1 + r*(c1 + r*(c2 + ... + r*c6)).
 *
 * The coefficients are a relative-error minimax fit (weighted least squares on
 * Chebyshev nodes, iterated; fitted with mpmath at 40 digits, then rounded to
 * float). Measured bounds:
 *   - the real polynomial:           max |p(r)/2^r - 1| = 1.98e-9  (0.017 eps)
 *   - evaluated in float with FMA:   max relative error  < 0.82 eps (eps = 2^-23)
 * so the error of every vector exp in smx is dominated by the last rounding.
 * tests/unit/test_exp.c sweeps every float argument of the kernels against a
 * double exp2 and enforces the bound quoted in src/math/README.md.
 */
#ifndef SMX_MATH_EXP2_POLY_H
#define SMX_MATH_EXP2_POLY_H

#define SMX_EXP2_C1 0x1.62e430p-1f
#define SMX_EXP2_C2 0x1.ebfbdcp-3f
#define SMX_EXP2_C3 0x1.c6aee8p-5f
#define SMX_EXP2_C4 0x1.3b2d4cp-7f
#define SMX_EXP2_C5 0x1.5f3e6cp-10f
#define SMX_EXP2_C6 0x1.41fd0ep-13f

/*
 * A degree-5 variant for exponentials that are only summed (log-sum-exp and
 * log-softmax reductions), where each term's error averages out in the sum
 * and the bound is 4 eps absolute on log d: max |p5(r)/2^r - 1| = 9.2e-8
 * (0.77 eps) before rounding, about 1.3 eps evaluated in float.
 */
#define SMX_EXP2_D5_C1 0x1.62e42ap-1f
#define SMX_EXP2_D5_C2 0x1.ebf9bcp-3f
#define SMX_EXP2_D5_C3 0x1.c6b756p-5f
#define SMX_EXP2_D5_C4 0x1.3cea8ep-7f
#define SMX_EXP2_D5_C5 0x1.5bb914p-10f

/* log2(e) split so that hi + lo carries about 48 bits. */
#define SMX_LOG2E_D 1.4426950408889634073599246810018921

#endif
