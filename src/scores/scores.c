/*
 * Per-sample scores from logits rows (include/smx/smx_scores.h), all
 * "higher = more in-distribution".
 *
 * MSP, energy and max-logit go through the f32 softmax kernels of the
 * dispatched ISA: rmax, then the sum of exponentials in double partial sums
 * (the row is still in L1), so each row is read from memory once. Everything
 * else is computed in double (exp from scores/exp_neg_f64.h, within 2 ulp) from
 * one pass for the max / top-2 and one pass for the exponentials, kept in a per-call buffer of K doubles so that exp is
 * evaluated once per element. Rows with special values (NaN, +-inf max) take
 * the double path, which applies the policy written in the header.
 */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ops/softmax_row_f32.h"
#include "registry/registry.h"
#include "scores/exp_neg_f64.h"
#include "core/operands.h"
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

/* MSP, energy and max-logit without the double flag run on the f32 kernels. */
static int is_fast(smx_score_kind kind, const smx_score_params *p) {
  return (kind == SMX_SCORE_MSP || kind == SMX_SCORE_ENERGY || kind == SMX_SCORE_MAX_LOGIT) &&
         !(p->flags & SMX_SCORE_FLAG_DOUBLE);
}

smx_status smx_scores_rows_f32(smx_score_kind kind, const float *x, size_t ldx, size_t rows, size_t cols,
                               const smx_score_params *params, double *out) {
  smx_score_params p = { 0 };
  if (params) p = *params;
  smx_status st = check_call(kind, x, ldx, rows, cols, &p, out);
  if (st != SMX_OK || rows == 0) return st;
  score_ctx c = make_ctx(kind, &p);
  int fast = is_fast(kind, &p);
  if (kind != SMX_SCORE_MAX_LOGIT && kind != SMX_SCORE_MARGIN_LOGIT) {
    c.e = malloc(cols * sizeof(double) * (kind == SMX_SCORE_GEN ? 2 : 1));
    if (!c.e) return SMX_E_NOMEM;
    if (kind == SMX_SCORE_GEN) c.sorted = c.e + cols;
  }
  if (fast) {
    const smx_f32_ukernels *k = smx_registry_current()->f32;
    smx_row_params rp;
    smx_row_params_init(&rp, k, SMX_OP_LOGSUMEXP, SMX_ALGO_THREE_PASS, c.T, 0, 1);
    for (size_t r = 0; r < rows; r++) {
      const float *z = x + r * ldx;
      float m = k->rmax(cols, z);
      if (kind == SMX_SCORE_MAX_LOGIT) {
        /* rmax ignores NaN; the policy wants NaN out */
        if (m != m || m == -INFINITY) { out[r] = score_row_double(&c, z, cols); continue; }
        int nan = 0;
        for (size_t j = 0; j < cols; j++) nan |= z[j] != z[j];
        out[r] = nan ? NAN : (double)m;
        continue;
      }
      double s = (m > -INFINITY && m < INFINITY) ? k->raddstoreexp(cols, z, NULL, m, &rp.c) : NAN;
      if (!(s >= 1.0 && s <= DBL_MAX)) { out[r] = score_row_double(&c, z, cols); continue; }
      out[r] = kind == SMX_SCORE_MSP ? 1.0 / s : (double)m + c.T * log(s);
    }
  } else {
    for (size_t r = 0; r < rows; r++) out[r] = score_row_double(&c, x + r * ldx, cols);
  }
  free(c.e);
  return SMX_OK;
}

/* ------------------------------------------------------ several scores */
/* Does this kind read the exponentials of the row (rather than only z)? */
static int needs_exps(smx_score_kind kind) { return kind != SMX_SCORE_MAX_LOGIT && kind != SMX_SCORE_MARGIN_LOGIT; }

smx_status smx_scores_multi_rows_f32(size_t nkinds, const smx_score_kind *kinds, const smx_score_params *params,
                                     const float *x, size_t ldx, size_t rows, size_t cols, double *const *out) {
  if (nkinds == 0) return SMX_OK;
  if (!kinds || nkinds > SMX_SCORES_MULTI_MAX || (rows && !out)) return SMX_E_INVALID_ARG;
  smx_score_params p[SMX_SCORES_MULTI_MAX];
  for (size_t k = 0; k < nkinds; k++) {
    smx_score_params z = { 0 };
    p[k] = params ? params[k] : z;
    smx_status st = check_call(kinds[k], x, ldx, rows, cols, &p[k], rows ? out[k] : NULL);
    if (st != SMX_OK) return st;
    /* each score has its own output: two that overlap would be written over each other */
    for (size_t q = 0; rows && q < k; q++)
      if (smx_overlap(out[q], rows * sizeof(double), out[k], rows * sizeof(double))) return SMX_E_INVALID_ARG;
  }
  if (rows == 0) return SMX_OK;
  /* the double-path kinds share one row of exponentials per distinct temperature */
  score_ctx c[SMX_SCORES_MULTI_MAX];
  double slot_t[SMX_SCORES_MULTI_MAX];
  size_t slot_of[SMX_SCORES_MULTI_MAX] = { 0 }, nslots = 0, nslow = 0;
  for (size_t k = 0; k < nkinds; k++) {
    c[k] = make_ctx(kinds[k], &p[k]);
    if (is_fast(kinds[k], &p[k])) continue;
    nslow++;
    if (!needs_exps(kinds[k])) continue;
    size_t s = 0;
    while (s < nslots && slot_t[s] != c[k].T) s++;
    if (s == nslots) slot_t[nslots++] = c[k].T;
    slot_of[k] = s;
  }
  double *buf = NULL, *sorted = NULL;
  if (nslow) {
    buf = malloc((nslots + 1) * cols * sizeof(double));   /* + 1: GEN's sort scratch */
    if (!buf) return SMX_E_NOMEM;
    sorted = buf + nslots * cols;
  }
  for (size_t k = 0; k < nkinds; k++) {
    if (is_fast(kinds[k], &p[k])) {
      smx_status st = smx_scores_rows_f32(kinds[k], x, ldx, rows, cols, &p[k], out[k]);
      if (st != SMX_OK) { free(buf); return st; }
    } else {
      c[k].sorted = sorted;
      if (needs_exps(kinds[k])) c[k].e = buf + slot_of[k] * cols;
    }
  }
  if (nslow) {
    double sm[SMX_SCORES_MULTI_MAX], ss[SMX_SCORES_MULTI_MAX];
    int have[SMX_SCORES_MULTI_MAX];
    for (size_t r = 0; r < rows; r++) {
      const float *z = x + r * ldx;
      int nan = 0;
      for (size_t j = 0; j < cols; j++) nan |= z[j] != z[j];
      if (!nan)
        for (size_t s = 0; s < nslots; s++) have[s] = row_exps(z, cols, slot_t[s], buf + s * cols, &sm[s], &ss[s]);
      for (size_t k = 0; k < nkinds; k++) {
        if (is_fast(kinds[k], &p[k])) continue;
        if (nan) out[k][r] = NAN;
        else if (!needs_exps(kinds[k])) out[k][r] = score_row_double(&c[k], z, cols);
        else {
          size_t s = slot_of[k];
          out[k][r] = score_from_exps(&c[k], z, cols, c[k].e, sm[s], ss[s], have[s]);
        }
      }
    }
  }
  free(buf);
  return SMX_OK;
}

/* ------------------------------------------------------ KL templates */
smx_status smx_kl_templates_accumulate_f32(const float *x, size_t ldx, size_t rows, size_t cols, double *sums,
                                           uint64_t *counts) {
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

smx_status smx_kl_templates_finish(const double *sums, const uint64_t *counts, size_t cols, double *templates) {
  if (cols == 0) return SMX_OK;
  if (!sums || !counts || !templates || cols > (size_t)PTRDIFF_MAX / sizeof(double) / cols) return SMX_E_INVALID_ARG;
  for (size_t k = 0; k < cols; k++)
    for (size_t j = 0; j < cols; j++)
      templates[k * cols + j] = counts[k] ? sums[k * cols + j] / (double)counts[k] : (j == k ? 1.0 : 0.0);
  return SMX_OK;
}

smx_status smx_kl_templates_fit_f32(const float *x, size_t ldx, size_t rows, size_t cols, double *templates,
                                    size_t *used) {
  if (cols == 0 && rows == 0) return SMX_OK;
  if (!templates || cols == 0 || (rows && (!x || ldx < cols)) || cols > (size_t)PTRDIFF_MAX / sizeof(double) / cols)
    return SMX_E_INVALID_ARG;
  if (used && smx_overlap(templates, cols * cols * sizeof(double), used, sizeof *used)) return SMX_E_INVALID_ARG;
  double *sums = calloc(cols * cols, sizeof(double));
  uint64_t *counts = calloc(cols, sizeof(uint64_t));
  smx_status s = (sums && counts) ? smx_kl_templates_accumulate_f32(x, ldx, rows, cols, sums, counts) : SMX_E_NOMEM;
  if (s == SMX_OK) {
    smx_kl_templates_finish(sums, counts, cols, templates);
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
