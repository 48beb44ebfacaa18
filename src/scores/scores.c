/*
 * Per-sample scores from logits rows (include/smx/smx_scores.h), all
 * "higher = more in-distribution".
 *
 * Every call is one fused scan per row (plan_row below): the row is read
 * from memory once by the score kernels' top2 pass (max, second largest,
 * NaN), then each distinct temperature of the double-path scores is one
 * exponential pass over the row in L1 (src/kernels/f32-scores: exponentials
 * in double, compensated sums of e, e (z - m), counts of the max), which all
 * the scores of that temperature share. MSP, energy and max-logit without
 * SMX_SCORE_FLAG_DOUBLE keep the f32 softmax kernels' sum. Rows with special
 * values (+inf, no finite entry) take the scalar double path below, which
 * applies the policy written in the header; NaN rows give NaN.
 */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/temperature.h"
#include "ops/softmax_row_f32.h"
#include "core/thread_pool.h"
#include "registry/registry.h"
#include "scores/exp_neg_f64.h"
#include "core/operands.h"
#include "scores/score_options.h"
#include "smx/smx_scores.h"

static const struct { smx_score_kind kind; const char *name; } names[] = {
  { SMX_SCORE_MSP, "msp" },
  { SMX_SCORE_MAX_LOGIT, "max_logit" },
  { SMX_SCORE_ENERGY, "energy" },
  { SMX_SCORE_NEG_ENTROPY, "neg_entropy" },
  { SMX_SCORE_MARGIN_PROB, "margin_prob" },
  { SMX_SCORE_MARGIN_LOGIT, "margin_logit" },
  { SMX_SCORE_GEN, "gen" },
  { SMX_SCORE_ODIN, "odin" },
  { SMX_SCORE_KL_MATCHING, "kl_matching" },
  { SMX_SCORE_NONUNIFORMITY, "nonuniformity" },
};
static const struct { const char *alias; smx_score_kind kind; } aliases[] = {
  { "mls", SMX_SCORE_MAX_LOGIT }, { "maxlogit", SMX_SCORE_MAX_LOGIT }, { "entropy", SMX_SCORE_NEG_ENTROPY },
  { "kl", SMX_SCORE_KL_MATCHING }, { "margin", SMX_SCORE_MARGIN_PROB }, { "ebo", SMX_SCORE_ENERGY },
};

const char *smx_score_name(smx_score_kind kind) {
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
    if (names[i].kind == kind) return names[i].name;
  return NULL;
}

smx_status smx_score_from_name(const char *name, smx_score_kind *kind) {
  if (!name || !kind) return SMX_E_INVALID_ARG;
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
    if (!strcmp(names[i].name, name)) { *kind = names[i].kind; return SMX_OK; }
  for (size_t i = 0; i < sizeof aliases / sizeof aliases[0]; i++)
    if (!strcmp(aliases[i].alias, name)) { *kind = aliases[i].kind; return SMX_OK; }
  return SMX_E_INVALID_ARG;
}

/* Resolved parameters of one call. */
typedef struct score_ctx {
  smx_score_kind kind;
  double T;            /* temperature actually used (1 for the kinds without one) */
  double gamma;
  size_t m;
  const double *tmpl;
  double *e;           /* K doubles: exp((z - max)/T), or NULL when not needed */
  double *sorted;      /* K doubles for GEN's top-M, or NULL */
} score_ctx;

/* Moves the m largest of a[0..n) to a[0..m) (in no particular order), in
 * O(n): quickselect with a median-of-three pivot and a three-way partition,
 * so runs of equal values (underflowed zeros) cost nothing extra. */
static void select_top(double *a, size_t n, size_t m) {
  size_t lo = 0, hi = n;
  while (hi - lo > 1) {
    double x = a[lo], y = a[lo + (hi - lo) / 2], z = a[hi - 1];
    double piv = x < y ? (y < z ? y : (x < z ? z : x)) : (x < z ? x : (y < z ? z : y));
    size_t lt = lo, i = lo, gt = hi;   /* [lo, lt) > piv, [lt, gt) == piv, [gt, hi) < piv */
    while (i < gt) {
      double v = a[i];
      if (v > piv) { a[i++] = a[lt]; a[lt++] = v; }
      else if (v < piv) { a[i] = a[--gt]; a[gt] = v; }
      else i++;
    }
    if (m <= lt) hi = lt;
    else if (m <= gt) return;
    else lo = gt;
  }
}

/*
 * Fills e[] with p_k * S (S returned through *S) and returns 1, or returns 0
 * when the row has no distribution (all -inf). +inf entries: e = 1 on them and
 * 0 elsewhere (the limit). NaN was excluded by the caller.
 */
static int row_exps(const float *z, size_t n, double T, double *e, double *mx, double *S) {
  double m = -INFINITY;
  for (size_t j = 0; j < n; j++) m = (double)z[j] > m ? (double)z[j] : m;
  *mx = m;
  if (m == -INFINITY) return 0;
  double s = 0.0;
  if (m == INFINITY) {
    for (size_t j = 0; j < n; j++) s += (e[j] = z[j] == INFINITY ? 1.0 : 0.0);
  } else {
    double inv = 1.0 / T;
    for (size_t j = 0; j < n; j++) e[j] = smx_exp_neg_f64(((double)z[j] - m) * inv);   /* vectorizes */
    s = smx_sum4_f64(e, n);
  }
  *S = s;
  return 1;
}

static double score_from_exps(const score_ctx *c, const float *z, size_t n, const double *e, double m, double S,
                              int have);

/* One row in double. */
static double score_row_double(const score_ctx *c, const float *z, size_t n) {
  for (size_t j = 0; j < n; j++)
    if (z[j] != z[j]) return NAN;
  if (c->kind == SMX_SCORE_MAX_LOGIT) {
    double m = -INFINITY;
    for (size_t j = 0; j < n; j++) m = (double)z[j] > m ? (double)z[j] : m;
    return m;
  }
  if (c->kind == SMX_SCORE_MARGIN_LOGIT) {
    double a = -INFINITY, b = -INFINITY;   /* top two, counting repeats */
    for (size_t j = 0; j < n; j++) {
      double v = z[j];
      if (v > a) { b = a; a = v; }
      else if (v > b) b = v;
    }
    if (n == 1) return INFINITY;
    return a - b;   /* all -inf: NaN; two +inf: NaN; one +inf: +inf */
  }
  double m, S;
  int have = row_exps(z, n, c->T, c->e, &m, &S);
  return score_from_exps(c, z, n, c->e, m, S, have);
}

/* A score that needs the probabilities, from row_exps' e[], max and sum
 * (have = 0: the row has no distribution). z has no NaN. */
static double score_from_exps(const score_ctx *c, const float *z, size_t n, const double *e, double m, double S,
                              int have) {
  if (!have) return c->kind == SMX_SCORE_ENERGY ? -INFINITY : NAN;
  double inv_s = 1.0 / S, K = (double)n;
  switch (c->kind) {
    case SMX_SCORE_MSP:
    case SMX_SCORE_ODIN: {
      double best = 0.0;
      for (size_t j = 0; j < n; j++) best = e[j] > best ? e[j] : best;
      return best * inv_s;    /* = 1/S when the max is finite */
    }
    case SMX_SCORE_ENERGY: return m == INFINITY ? INFINITY : m + c->T * log(S);
    case SMX_SCORE_NEG_ENTROPY: {
      /* sum p log p = sum p (t_j - log S), t_j = z_j - m; never log of an underflowed p */
      double logs = log(S), acc = 0.0;
      if (m == INFINITY) return -log(S);          /* k entries at 1/k each */
      for (size_t j = 0; j < n; j++)
        if (e[j] > 0.0) acc += e[j] * (((double)z[j] - m) - logs);
      return acc * inv_s;
    }
    case SMX_SCORE_MARGIN_PROB: {
      double a = -1.0, b = 0.0;
      for (size_t j = 0; j < n; j++) {
        if (e[j] > a) { b = a; a = e[j]; }
        else if (e[j] > b) b = e[j];
      }
      if (n == 1) return 1.0;
      return (a - (b < 0.0 ? 0.0 : b)) * inv_s;
    }
    case SMX_SCORE_GEN: {
      /* 1 - p of the top class is formed as (sum of the other e) / S, not as
       * 1 - p: with g = 0.1, (1 - p)^g of a confident row lives in the bits
       * that 1 - p would cancel (p2 = 1e-20 gives (1 - p1)^g = 0.01, not 0). */
      size_t top = 0;
      for (size_t j = 1; j < n; j++)
        if (e[j] > e[top]) top = j;
      double rest = 0.0;
      for (size_t j = 0; j < n; j++)
        if (j != top) rest += e[j];
      const double *pv = e;
      size_t cnt = n;
      if (c->m < n) {
        memcpy(c->sorted, e, n * sizeof(double));
        select_top(c->sorted, n, c->m);
        pv = c->sorted;
        cnt = c->m;
      }
      double acc = 0.0;
      int top_done = 0;
      for (size_t j = 0; j < cnt; j++) {
        double q = pv[j] * inv_s, one_minus;
        if (!top_done && pv[j] == e[top]) { one_minus = rest * inv_s; top_done = 1; }
        else one_minus = (S - pv[j]) * inv_s;
        acc += pow(q * one_minus, c->gamma);   /* = q^g (1 - q)^g, one pow */
      }
      return -acc;
    }
    case SMX_SCORE_NONUNIFORMITY: {
      double acc = 0.0, u = 1.0 / K;
      for (size_t j = 0; j < n; j++) acc += fabs(e[j] * inv_s - u);
      return acc;
    }
    case SMX_SCORE_KL_MATCHING: {
      /* KL(p || d_k) = sum_j p_j (log p_j - log d_kj); log p_j from the logits */
      double logs = log(S), best = INFINITY;
      for (size_t k = 0; k < n; k++) {
        const double *d = c->tmpl + k * n;
        double acc = 0.0;
        for (size_t j = 0; j < n; j++) {
          if (e[j] <= 0.0) continue;
          double lp = m == INFINITY ? -logs : ((double)z[j] - m) - logs;
          acc += e[j] * inv_s * (lp - log(d[j]));   /* d = 0: +inf */
        }
        best = acc < best ? acc : best;
      }
      return -best;
    }
    default: return NAN;
  }
}

/* Every check of one (kind, params, out) over the matrix; 0 or a status. */
static smx_status check_call(smx_score_kind kind, const float *x, size_t ldx, size_t rows, size_t cols,
                             const smx_score_params *p, const double *out) {
  if (!smx_score_name(kind)) return SMX_E_INVALID_ARG;
  if (rows == 0) return SMX_OK;
  if (!x || !out || cols == 0 || ldx < cols) return SMX_E_INVALID_ARG;
  /* the logits span and the outputs in bytes; per-row scratch of up to
   * SMX_SCORES_MULTI_MAX + 1 rows of doubles (smx_scores_multi_rows_f32) */
  if (!smx_span(rows, cols, ldx) || rows > (size_t)PTRDIFF_MAX / sizeof(double)) return SMX_E_INVALID_ARG;
  if (cols > (size_t)PTRDIFF_MAX / sizeof(double) / (SMX_SCORES_MULTI_MAX + 1)) return SMX_E_INVALID_ARG;
  if (p->temperature != 0.0 && !(p->temperature > 0.0 && p->temperature <= DBL_MAX)) return SMX_E_INVALID_ARG;
  if (p->gen_gamma != 0.0 && !(p->gen_gamma > 0.0 && p->gen_gamma <= 1.0)) return SMX_E_INVALID_ARG;
  if (kind == SMX_SCORE_KL_MATCHING) {
    if (!p->templates || cols > (size_t)PTRDIFF_MAX / sizeof(double) / cols) return SMX_E_INVALID_ARG;
    for (size_t i = 0; i < cols * cols; i++)
      if (!(p->templates[i] >= 0.0 && p->templates[i] <= 1.0)) return SMX_E_INVALID_ARG;
  }
  if (p->flags & ~(uint32_t)SMX_SCORE_FLAG_DOUBLE) return SMX_E_INVALID_ARG;
  /* out must not overlap the logits span */
  const char *xb = (const char *)x, *xe = (const char *)(x + (rows - 1) * ldx + cols);
  const char *ob = (const char *)out, *oe = (const char *)(out + rows);
  if (ob < xe && xb < oe) return SMX_E_INVALID_ARG;
  return SMX_OK;
}

/* The resolved context of one kind (e and sorted left NULL). */
static score_ctx make_ctx(smx_score_kind kind, const smx_score_params *p) {
  score_ctx c = { kind, 1.0, p->gen_gamma == 0.0 ? 0.1 : p->gen_gamma, p->gen_m == 0 ? 100 : p->gen_m, p->templates,
                  NULL, NULL };
  if (kind == SMX_SCORE_ENERGY && p->temperature != 0.0) c.T = p->temperature;
  if (kind == SMX_SCORE_ODIN) c.T = p->temperature != 0.0 ? p->temperature : 1000.0;
  return c;
}

/* MSP and energy without the double flag run on the f32 softmax kernels (the row's max by rmax when only
 * they are asked, and one raddstoreexp sum per temperature that they share). */
static int is_fast(smx_score_kind kind, const smx_score_params *p) {
  return (kind == SMX_SCORE_MSP || kind == SMX_SCORE_ENERGY) && !(p->flags & SMX_SCORE_FLAG_DOUBLE);
}

/* Does this kind read the exponentials of the row (rather than only z)? */
static int needs_exps(smx_score_kind kind) { return kind != SMX_SCORE_MAX_LOGIT && kind != SMX_SCORE_MARGIN_LOGIT; }

/* ------------------------------------------------------ the fused scan */
/*
 * One plan serves every call: smx_scores_rows_f32 is a plan of one kind, so
 * a score computed alone and the same score among others are the same
 * arithmetic on the same row (bitwise equal). A row is read from memory once
 * (top2: the max, the second largest, NaN); each distinct temperature of the
 * double-path kinds is one exponential pass from L1 (the slot), whose sums
 * every kind of that temperature shares; MSP and energy without the double
 * flag take the f32 softmax kernels' sum as before.
 */
typedef struct slot {
  double T;
  int dbl;                        /* SMX_SCORE_FLAG_DOUBLE: double exponentials (expsum), else f32 (expsum32) */
  smx_expcd c;
  smx_expc c32;
  const smx_scores_ukernels *k;   /* the current table, or the scalar one at an extreme T */
  int want_w, want_e;
  double *e;                      /* K doubles when want_e and dbl */
  float *e32;                     /* K floats when want_e and not dbl */
} slot;

typedef struct plan {
  size_t nk, nslots, n;
  score_ctx c[SMX_SCORES_MULTI_MAX];
  int slot_of[SMX_SCORES_MULTI_MAX];
  int fast_of[SMX_SCORES_MULTI_MAX];           /* the fast kinds' sum (fs below), else -1 */
  smx_row_params rp[SMX_SCORES_MULTI_MAX];     /* per distinct fast temperature: the f32 kernels' constants */
  double fast_T[SMX_SCORES_MULTI_MAX];
  size_t nfast;
  slot sl[SMX_SCORES_MULTI_MAX];
  const smx_scores_ukernels *sk;
  const smx_f32_ukernels *fk;
  int light;                      /* only fast kinds: the row's max by rmax */
  int need_m2;                    /* a margin kind: the row's second largest (top2), else the max alone */
  double *buf;                    /* every scratch row, one allocation */
  double *spec_e, *spec_sorted;   /* rows with specials: the double reference path (and KL's f32 e as doubles) */
  float *vals, *vals2;            /* GEN: candidates, and the ones the selection still looks at */
  double gen_gap;                 /* GEN: the last row's log-sum-exp minus its M-th value (a guess only) */
} plan;

static smx_status plan_init(plan *pl, size_t nk, const smx_score_kind *kinds, const smx_score_params *p, size_t n) {
  memset(pl, 0, sizeof *pl);
  const smx_registry *reg = smx_registry_current();
  pl->nk = nk;
  pl->n = n;
  pl->sk = reg->scores;
  pl->fk = reg->f32;
  pl->gen_gap = INFINITY;
  pl->light = 1;
  int any_exps = 0, any_gen_sel = 0;
  for (size_t k = 0; k < nk; k++) {
    pl->c[k] = make_ctx(kinds[k], &p[k]);
    pl->slot_of[k] = -1;
    pl->fast_of[k] = -1;
    pl->need_m2 |= kinds[k] == SMX_SCORE_MARGIN_LOGIT || kinds[k] == SMX_SCORE_MARGIN_PROB;
    if (is_fast(kinds[k], &p[k])) {
      size_t f = 0;
      while (f < pl->nfast && pl->fast_T[f] != pl->c[k].T) f++;
      if (f == pl->nfast) {
        pl->fast_T[f] = pl->c[k].T;
        smx_row_params_init(&pl->rp[f], pl->fk, SMX_OP_LOGSUMEXP, SMX_ALGO_THREE_PASS, pl->c[k].T, 0, 1);
        pl->nfast++;
      }
      pl->fast_of[k] = (int)f;
      any_exps = 1;
      continue;
    }
    pl->light = 0;
    if (!needs_exps(kinds[k])) continue;
    any_exps = 1;
    int dbl = (p[k].flags & SMX_SCORE_FLAG_DOUBLE) != 0;
    size_t s = 0;
    while (s < pl->nslots && (pl->sl[s].T != pl->c[k].T || pl->sl[s].dbl != dbl)) s++;
    if (s == pl->nslots) {
      slot *sl = &pl->sl[s];
      sl->T = pl->c[k].T;
      sl->dbl = dbl;
      smx_f64_expc(&sl->c, sl->T);
      if (dbl) {
        sl->k = sl->c.div ? &smx_scores_ukernels_scalar : pl->sk;
      } else {
        double t32 = smx_f32_temperature(sl->T);
        smx_f32_expc(&sl->c32, t32);
        sl->k = smx_f32_registry_for(t32)->scores;
        if (sl->c.div) sl->k = &smx_scores_ukernels_scalar;
      }
      pl->nslots++;
    }
    pl->slot_of[k] = (int)s;
    if (kinds[k] == SMX_SCORE_NEG_ENTROPY) pl->sl[s].want_w = 1;
    if (kinds[k] == SMX_SCORE_NONUNIFORMITY || kinds[k] == SMX_SCORE_KL_MATCHING) pl->sl[s].want_e = 1;
    if (kinds[k] == SMX_SCORE_GEN && pl->c[k].m < n) any_gen_sel = 1;
  }
  if (!any_exps) return SMX_OK;
  /* doubles: 2 rows for the reference path, one per double slot that keeps
   * its exponentials; then floats: one per f32 slot that keeps them, GEN's
   * candidates (2 rows) */
  size_t nd = 2, nf = any_gen_sel ? 2 : 0;
  for (size_t s = 0; s < pl->nslots; s++) {
    nd += (size_t)(pl->sl[s].want_e && pl->sl[s].dbl);
    nf += (size_t)(pl->sl[s].want_e && !pl->sl[s].dbl);
  }
  /* + 16 floats: filter_vals may store a whole vector past its last candidate */
  pl->buf = malloc(nd * n * sizeof(double) + nf * n * sizeof(float) + (any_gen_sel ? 16 * sizeof(float) : 0));
  if (!pl->buf) return SMX_E_NOMEM;
  double *d = pl->buf;
  pl->spec_e = d;
  pl->spec_sorted = d + n;
  d += 2 * n;
  for (size_t s = 0; s < pl->nslots; s++)
    if (pl->sl[s].want_e && pl->sl[s].dbl) { pl->sl[s].e = d; d += n; }
  float *f = (float *)(void *)d;
  for (size_t s = 0; s < pl->nslots; s++)
    if (pl->sl[s].want_e && !pl->sl[s].dbl) { pl->sl[s].e32 = f; f += n; }
  if (any_gen_sel) {
    pl->vals2 = f;
    pl->vals = f + n;   /* last: its slack is the allocation's 16 floats */
  }
  return SMX_OK;
}

/* A float as a key whose unsigned order is the floats' order (-0 just below +0), and back. */
static uint32_t f_key(float f) {
  uint32_t b;
  memcpy(&b, &f, sizeof b);
  return b >> 31 ? ~b : b | 0x80000000u;
}
static float key_f(uint32_t k) {
  uint32_t b = k >> 31 ? k & 0x7fffffffu : ~k;
  float f;
  memcpy(&f, &b, sizeof f);
  return f;
}

/* Keeps the entries of a[0..n) above t (gt = 1) or not above t (gt = 0), in order; returns how many. */
static size_t keep_side(float *a, size_t n, float t, int gt) {
  size_t c = 0;
  for (size_t i = 0; i < n; i++) {   /* branch-free: every entry is stored, the kept ones advance */
    float u = a[i];
    a[c] = u;
    c += (size_t)((u > t) == gt);
  }
  return c;
}

/*
 * The M-th largest of a[0..n) (1 <= M <= n), every entry in (lo, hi] and
 * none NaN; a is overwritten. A bisection over the floats of (lo, hi]: each
 * step is one vector count of the entries above the midpoint (count_gt),
 * with the invariant  above + #(a > key_f(klo)) >= M > above + #(a > key_f(khi)),
 * so it ends with key_f(khi) the M-th largest (a float compare sees -0 and
 * +0 as equal, so the split never falls between them). At most 32 counts;
 * once half of the entries left can no longer be the answer they are
 * dropped (those above the new khi counted in `above`), so the counts shrink.
 * The result is the value, whatever lo was: it does not depend on the guess.
 */
static float kth_largest(const smx_scores_ukernels *sk, float *a, size_t n, size_t M, float lo, float hi) {
  uint32_t klo = f_key(lo), khi = f_key(hi);
  size_t above = 0;
  while (khi - klo > 1) {
    uint32_t kmid = klo + (khi - klo) / 2;
    float t = key_f(kmid);
    size_t c = sk->count_gt(n, a, t);
    if (above + c >= M) {
      klo = kmid;
      if (n >= 64 && 2 * c <= n) n = keep_side(a, n, t, 1);
    } else {
      khi = kmid;
      if (n >= 64 && 2 * c >= n) {
        n = keep_side(a, n, t, 0);
        above += c;
      }
    }
  }
  return key_f(khi);
}

/* GEN's threshold guess for the next row: this row's log-sum-exp minus its M-th value, widened by this
 * factor; a row with fewer than M candidates widens its gap by GEN_GAP_GROW until it has them. Measured
 * on N(0, 9) rows of 4096 (M = 100): ~2.3 M candidates and 0.08 refilters a row; the log-sum-exp moves
 * less from row to row than the max (relative to the max: ~3.2 M candidates and 0.4 refilters). */
#define GEN_GAP_WIDEN 1.1
#define GEN_GAP_GROW 1.5

/*
 * GEN of a row with a finite max m and rest = the sum of the exponentials of
 * every entry but one maximum (so S = rest + 1). The top-M entries are those
 * above v, the M-th largest, plus copies of v to make M; the entries at m
 * take 1 - p from rest, not from 1 - p. The terms are summed in index order
 * over a set that does not depend on how v was found, so the result does not
 * depend on the guess below (nor on earlier rows, nor on the thread count).
 */
static double gen_row(plan *pl, const score_ctx *c, const float *z, size_t n, double m, smx_dd rest) {
  const smx_scores_ukernels *sk = pl->sk;
  smx_dd S = smx_dd_add(rest, (smx_dd){ 1.0, 0.0 });
  double s = smx_dd_value(S), log_s = log(S.hi) + S.lo / S.hi, r = smx_dd_value(rest);
  double g = c->gamma;
  double t_max = r > 0.0 ? exp(g * (log(r) - 2.0 * log_s)) : 0.0;   /* (p (1 - p))^g at the max */
  size_t M = c->m, n_eq = 0;
  if (M >= n) {
    for (size_t j = 0; j < n; j++) n_eq += z[j] == (float)m;
    return -((double)n_eq * t_max + sk->gen_sum(n, z, m, s, log_s, g));
  }
  /* candidates above a guessed threshold (the last row's gap below its log-sum-exp), widened until
   * there are M; thr stays below m, so every entry at m is a candidate */
  size_t cnt;
  float thr;
  double lse = m + log_s;
  for (int tries = 0;; tries++) {
    thr = pl->gen_gap < INFINITY ? (float)(lse - pl->gen_gap) : -INFINITY;
    if (!(thr < (float)m)) thr = nextafterf((float)m, -INFINITY);
    cnt = sk->filter_vals(n, z, thr, (float)m, pl->vals, &n_eq);
    if (cnt >= M || thr == -INFINITY) break;
    /* a little wider first (rows like the last one); then fast, for a row unlike it */
    pl->gen_gap = pl->gen_gap > 0.0 && pl->gen_gap < INFINITY ? pl->gen_gap * (tries ? 4.0 : GEN_GAP_GROW) : 1.0;
  }
  if (n_eq > M) n_eq = M;
  if (cnt < M) {   /* thr = -inf: the entries left out are -inf, whose terms are 0 */
    pl->gen_gap = INFINITY;
    return -((double)n_eq * t_max + sk->gen_sum(cnt, pl->vals, m, s, log_s, g));
  }
  memcpy(pl->vals2, pl->vals, cnt * sizeof(float));
  float v = kth_largest(sk, pl->vals2, cnt, M, thr, (float)m);   /* every candidate is in (thr, m] */
  pl->gen_gap = GEN_GAP_WIDEN * (lse - (double)v);
  size_t above = 0;
  for (size_t i = 0; i < cnt; i++) {   /* index order */
    float u = pl->vals[i];
    pl->vals[above] = u;
    above += u > v;
  }
  /* gen_sum leaves out the entries at m: they are the n_eq terms t_max (v = m: all M of them) */
  double acc = sk->gen_sum(above, pl->vals, m, s, log_s, g) + (double)(M - above) * sk->gen_sum(1, &v, m, s, log_s, g);
  return -((double)n_eq * t_max + acc);
}

/* One row into out[k][r] for every kind of the plan. */
static void plan_row(plan *pl, const float *z, size_t n, double *const *out, size_t r) {
  smx_score_top2 t2;
  if (pl->light) {
    /* msp and energy on the f32 kernels only: the max alone, as before (a NaN, which rmax skips, makes
     * the f32 sum NaN, and the row then takes the reference path below, which gives NaN) */
    t2.m1 = pl->fk->rmax(n, z);
    t2.m2 = -INFINITY;
    t2.nan = 0;
  } else if (pl->need_m2) {
    pl->sk->top2(n, z, &t2);
  } else {
    t2.m1 = pl->sk->max_nan(n, z, &t2.nan);
    t2.m2 = -INFINITY;
  }
  if (t2.nan) {
    for (size_t k = 0; k < pl->nk; k++) out[k][r] = NAN;
    return;
  }
  double m = t2.m1;
  if (!(m > -INFINITY && m < INFINITY)) {   /* +inf, or no finite entry: the reference path */
    for (size_t k = 0; k < pl->nk; k++) {
      score_ctx c = pl->c[k];
      c.e = pl->spec_e;
      c.sorted = pl->spec_sorted;
      out[k][r] = score_row_double(&c, z, n);
    }
    return;
  }
  smx_score_sums sums[SMX_SCORES_MULTI_MAX];
  double S[SMX_SCORES_MULTI_MAX], logS[SMX_SCORES_MULTI_MAX], fs[SMX_SCORES_MULTI_MAX];
  for (size_t f = 0; f < pl->nfast; f++) fs[f] = pl->fk->raddstoreexp(n, z, NULL, t2.m1, &pl->rp[f].c);
  for (size_t s = 0; s < pl->nslots; s++) {
    const slot *sl = &pl->sl[s];
    if (sl->dbl) sl->k->expsum(n, z, m, &sl->c, sl->e, sl->want_w, &sums[s]);
    else sl->k->expsum32(n, z, t2.m1, &sl->c32, &sl->c, sl->e32, sl->want_w, &sums[s]);
    smx_dd tot = smx_dd_add(sums[s].s, (smx_dd){ sums[s].n_eq, 0.0 });
    S[s] = smx_dd_value(tot);
    /* log of the double-double: log(hi) + lo / hi */
    logS[s] = log(tot.hi) + tot.lo / tot.hi;
  }
  for (size_t k = 0; k < pl->nk; k++) {
    const score_ctx *c = &pl->c[k];
    int si = pl->slot_of[k];
    double v;
    switch (c->kind) {
      case SMX_SCORE_MAX_LOGIT: v = m; break;
      case SMX_SCORE_MARGIN_LOGIT: v = n == 1 ? INFINITY : m - (double)t2.m2; break;
      case SMX_SCORE_MSP:
      case SMX_SCORE_ENERGY:
        if (pl->fast_of[k] >= 0) {
          double f = fs[pl->fast_of[k]];
          if (!(f >= 1.0 && f <= DBL_MAX)) {   /* NaN in the row (rmax skipped it), or an overflow */
            score_ctx cc = *c;
            cc.e = pl->spec_e;
            cc.sorted = pl->spec_sorted;
            v = score_row_double(&cc, z, n);
          } else {
            v = c->kind == SMX_SCORE_MSP ? 1.0 / f : m + c->T * log(f);
          }
        } else {
          v = c->kind == SMX_SCORE_MSP ? 1.0 / S[si] : m + c->T * logS[si];
        }
        break;
      case SMX_SCORE_ODIN: v = 1.0 / S[si]; break;
      case SMX_SCORE_NEG_ENTROPY:   /* sum p (t - log S) = W / S - log S: two terms <= 0, no cancellation */
        v = smx_dd_value(sums[si].w) / S[si] - logS[si];
        break;
      case SMX_SCORE_MARGIN_PROB:   /* (1 - e^(m2 - m)) / S, the difference by expm1 */
        v = n == 1 ? 1.0 : -expm1(((double)t2.m2 - m) / c->T) / S[si];
        break;
      case SMX_SCORE_GEN: {
        /* 1 - p of the top class is the sum of the others, which GEN raises to a small power: where
         * it is below 2^-64 the f32 exponentials, 0 below 2^-149, may have lost most of it, and the
         * double kernel forms it again */
        smx_score_sums gs = sums[si];
        smx_dd rest = smx_dd_add(gs.s, (smx_dd){ gs.n_eq - 1.0, 0.0 });
        if (!pl->sl[si].dbl && smx_dd_value(rest) < 0x1p-64) {
          smx_expcd c1;
          smx_f64_expc(&c1, 1.0);
          pl->sk->expsum(n, z, m, &c1, NULL, 0, &gs);
          rest = smx_dd_add(gs.s, (smx_dd){ gs.n_eq - 1.0, 0.0 });
        }
        v = gen_row(pl, c, z, n, m, rest);
        break;
      }
      case SMX_SCORE_NONUNIFORMITY: {   /* sum |p - 1/K| = 2 sum (p - 1/K)^+ (the parts above and below are equal) */
        const slot *sl = &pl->sl[si];
        double ex = sl->dbl ? sl->k->excess(n, sl->e, S[si] / (double)n)
                            : sl->k->excess32(n, sl->e32, (float)(S[si] / (double)n));
        v = 2.0 * ex / S[si];
        break;
      }
      case SMX_SCORE_KL_MATCHING: {
        const slot *sl = &pl->sl[si];
        score_ctx cc = *c;
        cc.e = sl->e;
        if (!sl->dbl) {   /* the f32 exponentials as doubles, in the reference path's row (free here) */
          for (size_t j = 0; j < n; j++) pl->spec_e[j] = sl->e32[j];
          cc.e = pl->spec_e;
        }
        v = score_from_exps(&cc, z, n, cc.e, m, S[si], 1);
        break;
      }
      default: v = NAN; break;
    }
    out[k][r] = v;
  }
}

static smx_status run_plan(size_t nk, const smx_score_kind *kinds, const smx_score_params *p, const float *x,
                           size_t ldx, size_t rows, size_t cols, double *const *out) {
  plan *pl = malloc(sizeof *pl);
  if (!pl) return SMX_E_NOMEM;
  smx_status st = plan_init(pl, nk, kinds, p, cols);
  if (st == SMX_OK)
    for (size_t r = 0; r < rows; r++) plan_row(pl, x + r * ldx, cols, out, r);
  free(pl->buf);
  free(pl);
  return st;
}

/*
 * opt->threads: the rows in fixed blocks, each task a plan of its own. A row's scores depend on that row
 * alone (the plan's carried GEN guess changes the work, never the value), so any split gives the same bits.
 */
#define SCORE_BLOCK_ROWS 256
#define SCORE_MIN_ROWS 8   /* fewer rows a task: the plan and GEN's first guess cost more than they share */
#define SCORE_MAX_TASKS 1024
typedef struct scores_job {
  size_t nk, ldx, rows, cols, block;
  const smx_score_kind *kinds;
  const smx_score_params *p;
  const float *x;
  double *const *out;
  smx_status status[SCORE_MAX_TASKS];
} scores_job;

static void scores_task(void *ctx, size_t t) {
  scores_job *j = ctx;
  size_t r0 = t * j->block, n = j->rows - r0 < j->block ? j->rows - r0 : j->block;
  double *out[SMX_SCORES_MULTI_MAX];
  for (size_t k = 0; k < j->nk; k++) out[k] = j->out[k] + r0;
  j->status[t] = run_plan(j->nk, j->kinds, j->p, j->x + r0 * j->ldx, j->ldx, n, j->cols, out);
}

static smx_status run_threads(size_t nk, const smx_score_kind *kinds, const smx_score_params *p, const float *x,
                              size_t ldx, size_t rows, size_t cols, double *const *out, int threads) {
  if (threads <= 1 || rows < 2 * SCORE_MIN_ROWS) return run_plan(nk, kinds, p, x, ldx, rows, cols, out);
  /* a call of few rows (smx score and smx eval send blocks of 1 MiB: 64 rows of 4096) still splits,
   * one task per thread */
  size_t block = SCORE_BLOCK_ROWS, per = (rows + (size_t)threads - 1) / (size_t)threads;
  if (per < block) block = per < SCORE_MIN_ROWS ? SCORE_MIN_ROWS : per;
  while ((rows + block - 1) / block > SCORE_MAX_TASKS) block *= 2;
  scores_job *j = malloc(sizeof *j);
  if (!j) return SMX_E_NOMEM;
  j->nk = nk; j->ldx = ldx; j->rows = rows; j->cols = cols; j->block = block;
  j->kinds = kinds; j->p = p; j->x = x; j->out = out;
  size_t ntasks = (rows + block - 1) / block;
  smx_status st = smx_parallel_for(threads, ntasks, scores_task, j);
  for (size_t t = 0; st == SMX_OK && t < ntasks; t++) st = j->status[t];
  free(j);
  return st;
}

smx_status smx_scores_rows_f32(const float *x, size_t ldx, double *out, size_t rows, size_t cols,
                               smx_score_kind kind, const smx_score_params *params, const smx_options *opt) {
  return smx_scores_multi_rows_f32(x, ldx, &out, rows, cols, 1, &kind, params, opt);
}

/* ------------------------------------------------------ several scores */
smx_status smx_scores_multi_rows_f32(const float *x, size_t ldx, double *const *out, size_t rows, size_t cols,
                                     size_t nkinds, const smx_score_kind *kinds, const smx_score_params *params,
                                     const smx_options *opt) {
  smx_resolved_options o;
  smx_status st = smx_scores_resolve_options(opt, 0, &o);
  if (st != SMX_OK) return st;
  if (nkinds == 0) return SMX_OK;
  if (!kinds || nkinds > SMX_SCORES_MULTI_MAX || (rows && !out)) return SMX_E_INVALID_ARG;
  smx_score_params p[SMX_SCORES_MULTI_MAX];
  for (size_t k = 0; k < nkinds; k++) {
    smx_score_params z = { 0 };
    p[k] = params ? params[k] : z;
    st = check_call(kinds[k], x, ldx, rows, cols, &p[k], rows ? out[k] : NULL);
    if (st != SMX_OK) return st;
    /* each score has its own output: two that overlap would be written over each other */
    for (size_t q = 0; rows && q < k; q++)
      if (smx_overlap(out[q], rows * sizeof(double), out[k], rows * sizeof(double))) return SMX_E_INVALID_ARG;
  }
  if (rows == 0) return SMX_OK;
  return run_threads(nkinds, kinds, p, x, ldx, rows, cols, out, o.threads);
}

/* ------------------------------------------------------ KL templates */
smx_status smx_kl_templates_accumulate_f32(const float *x, size_t ldx, double *sums, uint64_t *counts, size_t rows,
                                           size_t cols, const smx_options *opt) {
  smx_resolved_options o;
  smx_status st = smx_scores_resolve_options(opt, 0, &o);
  if (st != SMX_OK) return st;
  if (rows == 0) return SMX_OK;
  if (!x || !sums || !counts || cols == 0 || ldx < cols) return SMX_E_INVALID_ARG;
  if (!smx_span(rows, cols, ldx) || cols > (size_t)PTRDIFF_MAX / sizeof(double) / cols)
    return SMX_E_INVALID_ARG;
  if (smx_overlap(sums, cols * cols * sizeof(double), counts, cols * sizeof(uint64_t))) return SMX_E_INVALID_ARG;
  double *e = malloc(cols * sizeof(double));
  if (!e) return SMX_E_NOMEM;
  for (size_t r = 0; r < rows; r++) {
    const float *z = x + r * ldx;
    int nan = 0;
    for (size_t j = 0; j < cols; j++) nan |= z[j] != z[j];
    double m, S;
    if (nan || !row_exps(z, cols, 1.0, e, &m, &S)) continue;
    size_t arg = 0;
    for (size_t j = 1; j < cols; j++)
      if (z[j] > z[arg]) arg = j;
    double *row = sums + arg * cols;
    for (size_t j = 0; j < cols; j++) row[j] += e[j] / S;
    counts[arg]++;
  }
  free(e);
  return SMX_OK;
}

smx_status smx_kl_templates_finish(const double *sums, const uint64_t *counts, double *templates, size_t cols) {
  if (cols == 0) return SMX_OK;
  if (!sums || !counts || !templates || cols > (size_t)PTRDIFF_MAX / sizeof(double) / cols) return SMX_E_INVALID_ARG;
  for (size_t k = 0; k < cols; k++)
    for (size_t j = 0; j < cols; j++)
      templates[k * cols + j] = counts[k] ? sums[k * cols + j] / (double)counts[k] : (j == k ? 1.0 : 0.0);
  return SMX_OK;
}

smx_status smx_kl_templates_fit_f32(const float *x, size_t ldx, double *templates, size_t *used, size_t rows,
                                    size_t cols, const smx_options *opt) {
  smx_resolved_options o;
  smx_status st = smx_scores_resolve_options(opt, 0, &o);
  if (st != SMX_OK) return st;
  if (cols == 0 && rows == 0) return SMX_OK;
  if (!templates || cols == 0 || (rows && (!x || ldx < cols)) || cols > (size_t)PTRDIFF_MAX / sizeof(double) / cols)
    return SMX_E_INVALID_ARG;
  if (used && smx_overlap(templates, cols * cols * sizeof(double), used, sizeof *used)) return SMX_E_INVALID_ARG;
  double *sums = calloc(cols * cols, sizeof(double));
  uint64_t *counts = calloc(cols, sizeof(uint64_t));
  smx_status s =
      (sums && counts) ? smx_kl_templates_accumulate_f32(x, ldx, sums, counts, rows, cols, opt) : SMX_E_NOMEM;
  if (s == SMX_OK) {
    smx_kl_templates_finish(sums, counts, templates, cols);
    if (used) {
      uint64_t u = 0;
      for (size_t k = 0; k < cols; k++) u += counts[k];
      *used = (size_t)u;
    }
  }
  free(sums);
  free(counts);
  return s;
}
