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

/*
 * 2^r in double on [-0.5, 0.5]: Taylor coefficients (ln 2)^k / k!, degree 10
 * (truncation < 2.2e-13 relative). Used where an exponential is applied again
 * and again to one running sum (the online kernels' rescale), so that its
 * error cannot compound the way a float exponential's would.
 */
#define SMX_EXP2D_C1 0x1.62e42fefa39efp-1
#define SMX_EXP2D_C2 0x1.ebfbdff82c58fp-3
#define SMX_EXP2D_C3 0x1.c6b08d704a0c0p-5
#define SMX_EXP2D_C4 0x1.3b2ab6fba4e77p-7
#define SMX_EXP2D_C5 0x1.5d87fe78a6731p-10
#define SMX_EXP2D_C6 0x1.430912f86c787p-13
#define SMX_EXP2D_C7 0x1.ffcbfc588b0c7p-17
#define SMX_EXP2D_C8 0x1.62c0223a5c824p-20
#define SMX_EXP2D_C9 0x1.b5253d395e7c4p-24
#define SMX_EXP2D_C10 0x1.e4cf5158b8ecap-28

/*
 * 2^r in double for the f64 kernels, |r| <= 0.5005: 1 + r q(r) with q of
 * degree 10, a Chebyshev fit of (2^r - 1)/r (mpmath, 200 bits, then rounded
 * to double). Measured with the rounded coefficients: max |p(r)/2^r - 1| =
 * 0.085 eps (eps = 2^-52). The degree-10 Taylor polynomial above would be
 * 2.4e-12 (10640 eps) on the same interval, far too coarse for double
 * results; degree-13 Taylor reaches 0.02 eps at two more FMAs, and the
 * difference is invisible in the kernels' measured error (src/math/README.md).
 */
#define SMX_EXP2D11_C1 0x1.62e42fefa39efp-1
#define SMX_EXP2D11_C2 0x1.ebfbdff82c598p-3
#define SMX_EXP2D11_C3 0x1.c6b08d704a0c2p-5
#define SMX_EXP2D11_C4 0x1.3b2ab6fba1d76p-7
#define SMX_EXP2D11_C5 0x1.5d87fe78a524bp-10
#define SMX_EXP2D11_C6 0x1.430913098a106p-13
#define SMX_EXP2D11_C7 0x1.ffcbfc6724283p-17
#define SMX_EXP2D11_C8 0x1.62bfd427a44e9p-20
#define SMX_EXP2D11_C9 0x1.b524faa21725ep-24
#define SMX_EXP2D11_C10 0x1.e606dee7e5577p-28
#define SMX_EXP2D11_C11 0x1.e9d48637d76acp-32

/* log2(e) and ln(2) as double-double pairs (hi + lo to about 106 bits). */
#define SMX_LOG2E_HI 0x1.71547652b82fep+0
#define SMX_LOG2E_LO 0x1.777d0ffda0d24p-56
#define SMX_LN2_HI 0x1.62e42fefa39efp-1
#define SMX_LN2_LO 0x1.abc9e3b39803fp-56

/* log2(e) split so that hi + lo carries about 48 bits. */
#define SMX_LOG2E_D 1.4426950408889634073599246810018921

#endif
