/*
 * The C attention soak (attn_soak.c) and its long-double reference
 * (attn_ref.c) share this: one case as the reference sees it, every tensor
 * in logical, packed form and in long double, whatever layout and storage
 * type the library was given. The reference never reads the library's
 * buffers, so a layout bug cannot hide in both.
 */
#ifndef SMX_TESTS_SOAK_ATTN_SOAK_H
#define SMX_TESTS_SOAK_ATTN_SOAK_H

#include <stddef.h>
#include <stdint.h>

#include "smx/smx_attention.h"

typedef struct attn_case {
  smx_attention_desc d;   /* as given to the library (strides included) */
  /* packed (B, Hq, Lq, Dqk), (B, Hkv, Lk, Dqk) (int8 K: dequantised), (B, Hkv, Lk, Dv): the stored values */
  long double *q, *k, *v;
  /* the mask tensor, expanded to (B, Hq, Lq, Lk): keep (bool) or bias (float); NULL without one */
  unsigned char *keep;
  long double *bias;
  long double *slopes, *sinks;   /* Hq */
  long double *fox;              /* (B, Hq, Lk) */
  long double *gate;             /* (B, Hq, Lq) or (B, Hq, Lq, Dv) */
  long double *qw, *kw;          /* Dqk, or NULL (weights of 1) */
  long double *kscale;           /* int8 K: (B, Hkv, ceil(Lk / 64)) */
  long double *sr, *sw;          /* screening per head (Hq), or NULL: desc.screen_r / screen_window */
} attn_case;

/* What an output element (or an lse) must be. */
enum {
  EXP_BOUND = 0,   /* within the bound of the reference value */
  EXP_NAN,         /* NaN (the row saw a NaN score) */
  EXP_NONFINITE,   /* NaN or an infinity (a non-finite V entry reached it) */
  EXP_ZERO,        /* exactly 0 (a row that sees no key); lse: exactly -inf, or the sink */
  EXP_ANY          /* no documented rule: only "no crash, no overrun" */
};

typedef struct attn_expect {
  long double *o;        /* packed (B, Hq, Lq, Dv) */
  long double *lse;      /* (B, Hq, Lq) */
  unsigned char *o_cls;  /* EXP_* per element of o */
  unsigned char *l_cls;  /* EXP_* per row */
  /* per row, what the conditioning of the row adds to the bound (absolute): the rounding of large logits
   * to f32, the cancellation of weights of both signs (cosFormer, MALA), the Trim edge of screening */
  long double *o_extra, *l_extra;
  long double min_rowmax, max_rowmax;   /* the extreme finite row maxima of the scores (score kinds), for KNOWN */
  long double min_score;                /* the smallest finite visible score */
} attn_expect;

/* Fills e (allocated by the caller: o and o_cls B Hq Lq Dv, lse and l_cls B Hq Lq). */
void attn_reference(const attn_case *c, attn_expect *e);

/* Position of query i (bottom-right unless TOP_LEFT) and its key range [lo, hi) from causal and window. */
void attn_ref_range(const smx_attention_desc *d, size_t i, long long *pos, long long *lo, long long *hi);
int attn_ref_radial_ok(size_t frame, long long qi, long long j);

/* The backward reference (attn_ref_bwd.c): gradients and, beside each, its magnitude M (the same sums on
 * absolute values, with each weight's logit-rounding term), which the documented bound is relative to. The
 * caller allocates every array (dbias / mbias, dsinks / msinks, dfox / mfox, dgate / mgate may be NULL when the
 * case has none); rowz[row] = 1 for a row that sees no key and no sink (every gradient of it exactly 0),
 * zmax[row] the largest logit magnitude of the row. */
typedef struct attn_grad_ref {
  long double *dq, *mq, *dk, *mk, *dv, *mv;
  long double *dbias, *mbias, *dsinks, *msinks, *dfox, *mfox, *dgate, *mgate;
  unsigned char *rowz;
  long double *zmax;
  long double *dqw, *mqw, *dkw, *mkw;   /* qk_norm: the RMSNorm weights' gradients (Dqk each), or NULL */
} attn_grad_ref;

/* 1 when smx_attention_backward computes this descriptor's gradients. */
int attn_bwd_case_ok(const smx_attention_desc *d);
/* dO packed (B, Hq, Lq, Dv), the values the library was given. */
void attn_reference_backward(const attn_case *c, const long double *dO, attn_grad_ref *g);
/* The same for differential attention (attn_ref_bwd_diff.c; attn_reference_backward calls it). */
void attn_reference_backward_diff(const attn_case *c, const long double *dO, attn_grad_ref *g);

#endif
