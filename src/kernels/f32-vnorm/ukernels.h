/*
 * The elementwise-plus-normalise kernel family (softpick, softplus-l1,
 * self-adjust softmax, sigmoid backward, MultiMax backward): the passes of
 * include/smx/smx_norm.h's row variants that are not a softmax. One f32
 * body over the vector layer (body.h, instantiated by avx2.c, avx512.c and
 * neon.c) and a portable table (scalar.c) that computes in double; the f64
 * entries are the portable ones in every table (f64 rows are not the hot path).
 *
 * Contract: any n >= 1, any alignment; nothing outside [0, n) is touched;
 * outputs may equal inputs where noted. Sums are accumulated in double.
 * exp(a) = 2^(a c) with smx_expc at T = 1 (c = log2 e), passed as c.
 */
#ifndef SMX_KERNELS_F32_VNORM_UKERNELS_H
#define SMX_KERNELS_F32_VNORM_UKERNELS_H

#include <stddef.h>

#include "kernels/f32-softmax/ukernels.h"

typedef struct smx_softpick_state {
  float m;
  double d, gy;
  size_t blk;
} smx_softpick_state;

/* self-adjust's row facts: nan / pinf set when some entry is NaN / +inf;
 * fmax, fmin over the finite entries (-inf, +inf when none) and the first
 * index of each (n when none). */
typedef struct smx_vnorm_stats {
  int nan, pinf;
  float fmax, fmin;
  size_t imax, imin;
} smx_vnorm_stats;

/* the block of softpick_stats: small enough to stay in L1 between its two reads */
#define SMX_SOFTPICK_BLOCK 2048

typedef struct smx_vnorm_ukernels {
  const char *isa;
  /* softpick pass 2: e_i = exp(x_i - m) stored to e (e may equal x); returns
   * sum |e_i - em| over the entries with x_i > -inf (NaN: a NaN sum). */
  double (*softpick_exp)(size_t n, const float *x, float *e, float m, const smx_expc *c, float em);
  /* softpick pass 3: y_i = max(e_i - em, 0) * s (y may equal e). */
  void (*softpick_out)(size_t n, const float *e, float *y, float em, float s);
  /* softpick backward pass 2: returns sum |e_i - em| (x_i > -inf) and
   * *gy = sum g_i max(e_i - em, 0), e_i = exp(x_i - m). */
  double (*softpick_dot)(size_t n, const float *x, const float *g, float m, const smx_expc *c, float em,
                         double *gy);
  /* softpick backward pass 3: dx_i = e_i s (x_i > 0 ? g_i - d : x_i < 0 ? d : 0);
   * dx may equal x or g. */
  void (*softpick_bwd)(size_t n, const float *x, const float *g, float *dx, float m, const smx_expc *c, float s,
                       float d);
  /* softplus(x_i) = max(x_i, 0) + log1p(exp(-|x_i|)) stored to y (y may
   * equal x; -inf gives 0, NaN NaN); returns the sum. With g (may be NULL),
   * *gy = sum g_i softplus(x_i). */
  double (*softplus)(size_t n, const float *x, float *y, const float *g, double *gy, const smx_expc *c);
  /* softplus-l1 backward: dx_i = sigmoid(x_i) s (g_i - d); dx may equal x or g. */
  void (*softplus_bwd)(size_t n, const float *x, const float *g, float *dx, float s, float d, const smx_expc *c);
  /* self-adjust: y_i = p_i == 0 ? 0 : (x_i - lo) s p_i (y may equal p or x). */
  void (*sa_out)(size_t n, const float *x, const float *p, float *y, float lo, float s);
  /* self-adjust backward: returns sum p_i g_i (x_i - lo) s over p_i != 0 and
   * *gp = sum p_i g_i. */
  double (*sa_dot)(size_t n, const float *x, const float *p, const float *g, float lo, float s, double *gp);
  /* dx_i = p_i == 0 ? 0 : p_i (g_i (x_i - lo) s - d + g_i s); dx may equal p or g. */
  void (*sa_bwd)(size_t n, const float *x, const float *p, const float *g, float *dx, float lo, float s, float d);
  /* softpick's row state in one read of x, block by block (a block's max,
   * then its terms at that max from L1, folded into the running state with
   * an exact rescaling: |e^(x-m) - e^-m| e^(m-m') = |e^(x-m') - e^-m'|):
   * st->m the max over the finite entries (NaN ignored; +inf when there is a
   * +inf entry, then nothing else is valid; -inf when no finite entry),
   * st->d = sum over entries > -inf of |e^(x_i-m) - e^(-m)| (NaN if a NaN),
   * st->gy = sum g_i max(e^(x_i-m) - e^(-m), 0) when g is not NULL, and
   * st->blk the start of the first block holding the max. */
  void (*softpick_stats)(size_t n, const float *x, const float *g, const smx_expc *c, smx_softpick_state *st);
  /* y_i = max(e^(x_i - m) - em, 0) * s from x (y may equal x). */
  void (*softpick_outx)(size_t n, const float *x, float *y, float m, const smx_expc *c, float em, float s);
  /* sigmoid backward from y: dx_i = y_i (1 - y_i) g_i s; dx may equal y or g. */
  void (*sig_bwd)(size_t n, const float *y, const float *g, float *dx, float s);
  /* softplus-l1 backward pass 1: returns sum softplus(x_i), *gy = sum g_i
   * softplus(x_i), and stores sigmoid(x_i) to sg (sg may equal x, not g). */
  double (*softplus_sig)(size_t n, const float *x, const float *g, float *sg, double *gy, const smx_expc *c);
  /* softplus-l1 backward pass 2: dx_i = sg_i s (g_i - d); dx may equal sg or g.
   * stream: non-temporal stores (as smx_f32_ukernels' vscale). */
  void (*sig_scale)(size_t n, const float *sg, const float *g, float *dx, float s, float d, int stream);
  /* self-adjust backward from x, pass 2 of 3 (m: the finite row max): e_i =
   * exp(x_i - m) stored to e; returns sum e_i, *egw = sum e_i g_i (x_i - lo) s
   * over e_i != 0, *eg = sum e_i g_i. e must not alias x or g. */
  double (*sa_bexp)(size_t n, const float *x, const float *g, float *e, float m, const smx_expc *c, float lo,
                    float s, double *egw, double *eg);
  /* pass 3: sa_bwd at p_i = e_i inv; dx may equal e or g. */
  void (*sa_bwde)(size_t n, const float *x, const float *e, const float *g, float *dx, float lo, float s, float d,
                  float inv, int stream);
  /* self-adjust's row facts (smx_vnorm_stats) */
  void (*sa_stats)(size_t n, const float *x, smx_vnorm_stats *st);
  /* MultiMax backward (src/ops/multimax.c), p = r0..r3, t0..t3: g_i = y_i
   * (dy_i - dot) s (the softmax VJP), dx_i = g_i s'(x_i), 0 where x_i is
   * infinite; with pg (else NULL) the 8 parameter partials of the row,
   * sum g_i times t0 [x < r0], -t1 [x > r1], 2 t2 (r2 - x)_+, -2 t3 (x - r3)_+,
   * (r0 - x)_+, (x - r1)_+, (r2 - x)_+^2, (x - r3)_+^2 over finite x_i. dx may
   * equal y or dy; stream as sig_scale. */
  void (*mm_bwd)(size_t n, const float *x, const float *y, const float *dy, float *dx, float dot, float s,
                 const float p[8], double *pg, int stream);
} smx_vnorm_ukernels;

/* The same passes in double (portable loops with libm; the same contracts,
 * em, m, lo, s, d in double, exp(a) = e^a). */
double smx_vnorm_softpick_exp_f64(size_t n, const double *x, double *e, double m, double em);
void smx_vnorm_softpick_out_f64(size_t n, const double *e, double *y, double em, double s);
double smx_vnorm_softpick_dot_f64(size_t n, const double *x, const double *g, double m, double em, double *gy);
void smx_vnorm_softpick_bwd_f64(size_t n, const double *x, const double *g, double *dx, double m, double s, double d);
double smx_vnorm_softplus_f64(size_t n, const double *x, double *y, const double *g, double *gy);
void smx_vnorm_softplus_bwd_f64(size_t n, const double *x, const double *g, double *dx, double s, double d);
void smx_vnorm_sa_out_f64(size_t n, const double *x, const double *p, double *y, double lo, double s);
double smx_vnorm_sa_dot_f64(size_t n, const double *x, const double *p, const double *g, double lo, double s,
                            double *gp);
void smx_vnorm_sa_bwd_f64(size_t n, const double *x, const double *p, const double *g, double *dx, double lo,
                          double s, double d);
void smx_vnorm_sig_bwd_f64(size_t n, const double *y, const double *g, double *dx, double s);

extern const smx_vnorm_ukernels smx_vnorm_ukernels_scalar;
extern const smx_vnorm_ukernels smx_vnorm_ukernels_avx2;
extern const smx_vnorm_ukernels smx_vnorm_ukernels_avx512;
extern const smx_vnorm_ukernels smx_vnorm_ukernels_neon;

#endif
