/*
 * The long-double reference of sampling (smx_sample_rows_*, include/smx/smx_topk.h), written from the header:
 * the row as the sampler sees it (f32 / f16 / bf16 values; an f64 row's (x - max) / T formed in double and
 * rounded to float once, then T = 1), the filters in the header's order (top-k by value, ties to the lowest
 * index; top-p over what top-k kept, in order of decreasing probability, ties to the lowest index, the smallest
 * prefix whose mass reaches top_p; min-p against the largest probability), then the draw from the same
 * Philox4x32-10 stream, rebuilt from the public smx_philox4x32 at counter (draw, row, step): the inverse CDF
 * of u = draw 0 over the kept set in index order, or the argmax of x / T + g_i, g_i = -log(-log U_i) from draw i.
 *
 * The token is exact where the header's rounding cannot reach: the reference says which tokens the library's
 * weights (the f32 exponential, a few float ulp, and the normaliser summed in float) may move the draw to.
 * ex[0] is the token (or the middle of the range of tokens the rounding can reach) and ex[1] half that range:
 * 0 where the token is exact. Where rounding can change a filter's kept set (u within its margin of the top-p
 * boundary, a weight that close to min_p), ex[1] is +inf: the header leaves that row to the ISA's rounding.
 */
#include <math.h>
#include <stdlib.h>

#include "op.h"

typedef struct scfg {
  size_t top_k;
  double top_p, min_p;
  int greedy, gumbel;
} scfg;

/* the uniform in (0, 1) of draw d (the header's 53 bits of words 0 and 1, centred) */
static long double ref_uniform(size_t row, uint32_t d) {
  uint32_t ctr[4] = { d, (uint32_t)row, (uint32_t)OPS_RNG_STEP, (uint32_t)((uint64_t)OPS_RNG_STEP >> 32) }, w[4];
  smx_philox4x32(OPS_RNG_SEED, ctr, w);
  uint64_t bits = (uint64_t)w[0] | (uint64_t)(w[1] & 0x1fffffu) << 32;
  return ((long double)bits + 0.5L) * 0x1p-53L;
}

/* the row as the sampler sees it, and the temperature it runs at */
typedef struct srow {
  long double *v, T, m;   /* m: the largest value (+inf, or -inf for a row of -inf) */
  size_t n;
  int nan;
} srow;

static int srow_load(const ref_ctx *c, srow *s) {
  s->n = c->n;
  s->v = malloc((c->n ? c->n : 1) * sizeof(long double));
  if (!s->v) return 0;
  s->T = c->T;
  if (c->dt == DT_F64) {   /* (x - m) / T in double, m the largest finite entry, rounded to float once */
    double m = -INFINITY, t = (double)c->T;
    for (size_t i = 0; i < c->n; i++) {
      double x = (double)ref_in(c, 0, i);
      if (x > m && x < INFINITY) m = x;
    }
    for (size_t i = 0; i < c->n; i++) {
      double x = (double)ref_in(c, 0, i), d = x - m;
      if (!(x > -INFINITY && x < INFINITY)) { s->v[i] = x; continue; }
      double q = d > -INFINITY ? d / t : (0.5 * x - 0.5 * m) / t * 2.0;
      s->v[i] = q < -(double)FLT_MAX ? -INFINITY : (long double)(float)q;
    }
    s->T = 1.0L;
  } else
    for (size_t i = 0; i < c->n; i++) s->v[i] = ref_in(c, 0, i);
  s->nan = 0;
  s->m = -INFINITY;
  for (size_t i = 0; i < c->n; i++) {
    if (s->v[i] != s->v[i]) s->nan = 1;
    else if (s->v[i] > s->m) s->m = s->v[i];
  }
  return 1;
}

/* The draw among the kept indices k[0..c) (index order) with weights w: the inverse CDF at u times their sum,
 * or the Gumbel argmax. Sets ex[0], ex[1] to the token or the range the rounding (margin dl of the cumulative
 * sums; dg of the Gumbel scores) can reach. */
static void draw(ref_ctx *c, const srow *s, const scfg *g, const size_t *k, const long double *w, size_t cnt) {
  size_t lo = SIZE_MAX, hi = SIZE_MAX;
  if (g->gumbel) {
    long double best = -INFINITY;
    long double *sc = malloc((cnt ? cnt : 1) * sizeof(long double));
    if (!sc) abort();
    for (size_t q = 0; q < cnt; q++) {
      sc[q] = -INFINITY;
      if (s->v[k[q]] == -INFINITY) continue;
      long double u = ref_uniform(c->row, (uint32_t)k[q]);
      sc[q] = (s->v[k[q]] - s->m) / s->T - logl(-logl(u));
      if (sc[q] > best) best = sc[q];
    }
    /* the library's score in double: ((x - m) c) ln 2 + g, a few DBL_EPSILON of its terms */
    for (size_t q = 0; q < cnt && best > -INFINITY; q++)
      if (sc[q] > -INFINITY && best - sc[q] <= 0x1p-44L * (fabsl(sc[q]) + fabsl(best) + 8.0L)) {
        if (lo == SIZE_MAX) lo = k[q];
        hi = k[q];
      }
    free(sc);
  } else {
    long double total = 0.0L, slack = 0.0L;
    for (size_t q = 0; q < cnt; q++) {
      total += w[q];
      long double t = w[q] > 0.0L ? -logl(w[q]) : 0.0L;
      slack += w[q] * (16.0L + t);
    }
    /* the f32 exponentials (4 + |t|/2 float ulp each) and the normaliser's float sums (a block of 4096 in 16
     * lanes), as a margin on the cumulative sums */
    size_t nb = s->n < 4096 ? s->n : 4096;
    long double dl = 0x1p-23L * (slack + total * (long double)(nb / 16 + 16));
    long double t = ref_uniform(c->row, 0) * total, cum = 0.0L;
    size_t last = SIZE_MAX;
    for (size_t q = 0; q < cnt; q++) {
      if (!(w[q] > 0.0L)) continue;
      cum += w[q];
      last = k[q];
      if (lo == SIZE_MAX && cum > t - dl) lo = k[q];
      if (hi == SIZE_MAX && cum > t + dl) hi = k[q];
    }
    if (hi == SIZE_MAX) hi = last;
    if (lo == SIZE_MAX) lo = last;
  }
  if (lo == SIZE_MAX) { c->ex[0] = -1; c->ex[1] = 0; return; }   /* unreachable: the max is always kept */
  c->ex[0] = ((long double)lo + (long double)hi) / 2.0L;
  c->ex[1] = ((long double)hi - (long double)lo) / 2.0L;
}

/* top-p's order: decreasing value (= probability), ties to the lowest index */
static const long double *sort_v;
static int by_value(const void *a, const void *b) {
  size_t i = *(const size_t *)a, j = *(const size_t *)b;
  long double x = sort_v[i], y = sort_v[j];
  if (x != y) return x > y ? -1 : 1;
  return i < j ? -1 : i > j;
}
static int by_index(const void *a, const void *b) {
  size_t i = *(const size_t *)a, j = *(const size_t *)b;
  return i < j ? -1 : i > j;
}

static void sample_row(ref_ctx *c, const scfg *g) {
  srow s;
  c->ex[0] = -1;
  c->ex[1] = 0;
  if (!srow_load(c, &s)) abort();
  size_t n = s.n;
  if (s.nan || n == 0 || s.m == -INFINITY) { free(s.v); return; }   /* token -1 */
  if (g->greedy) {
    for (size_t i = 0; i < n; i++)
      if (s.v[i] == s.m) { c->ex[0] = (long double)i; break; }
    if (c->dt == DT_F64) {   /* greedy is the exact argmax in double */
      long double mx = -INFINITY;
      for (size_t i = 0; i < n; i++)
        if (ref_in(c, 0, i) > mx) { mx = ref_in(c, 0, i); c->ex[0] = (long double)i; }
    }
    free(s.v);
    return;
  }
  size_t *k = malloc(n * sizeof(size_t));
  long double *w = malloc(n * sizeof(long double));
  if (!k || !w) abort();
  size_t cnt = 0;
  if (s.m == INFINITY) {   /* uniform among the +inf entries, the filters aside */
    for (size_t i = 0; i < n; i++)
      if (s.v[i] == INFINITY) k[cnt++] = i;
    if (g->gumbel) {
      long double best = -INFINITY;
      for (size_t q = 0; q < cnt; q++) {
        long double gq = -logl(-logl(ref_uniform(c->row, (uint32_t)k[q])));
        if (gq > best) { best = gq; c->ex[0] = (long double)k[q]; }
      }
    } else {
      size_t at = (size_t)floorl(ref_uniform(c->row, 0) * (long double)cnt);
      c->ex[0] = (long double)k[at < cnt ? at : cnt - 1];
    }
    goto done;
  }
  /* the candidates: every entry, or the top_k largest (ties to the lowest index) */
  int use_k = g->top_k > 0 && g->top_k < n, use_p = g->top_p > 0.0 && g->top_p < 1.0;
  sort_v = s.v;
  if (use_k) {   /* insertion into the sorted list of the best top_k so far (top_k is small) */
    for (size_t i = 0; i < n; i++) {
      if (cnt == g->top_k && !(s.v[i] > s.v[k[cnt - 1]])) continue;
      size_t at = cnt < g->top_k ? cnt++ : cnt - 1;
      while (at > 0 && s.v[i] > s.v[k[at - 1]]) { k[at] = k[at - 1]; at--; }
      k[at] = i;
    }
  } else
    for (size_t i = 0; i < n; i++) k[cnt++] = i;
  if (use_p) {   /* the smallest prefix, in decreasing order, whose mass reaches top_p of what is kept */
    long double z = 0.0L, slack = 0.0L, cum = 0.0L;
    for (size_t q = 0; q < cnt; q++) {
      w[q] = expl((s.v[k[q]] - s.m) / s.T);
      z += w[q];
      slack += w[q] * (16.0L + (w[q] > 0.0L ? -logl(w[q]) : 0.0L));
    }
    if (!use_k) {   /* entries below (1 - p) z / 2n weigh less than half of what the nucleus leaves out */
      long double rho = (1.0L - (long double)g->top_p) * z / (2.0L * (long double)n);
      size_t kept = 0;
      for (size_t q = 0; q < cnt; q++)
        if (w[q] >= rho) k[kept++] = k[q];
      cnt = kept;
      qsort(k, cnt, sizeof *k, by_value);
      for (size_t q = 0; q < cnt; q++) w[q] = expl((s.v[k[q]] - s.m) / s.T);
    }
    long double goal = (long double)g->top_p * z, dl = 0x1p-23L * (slack + z * 272.0L);
    size_t r = 0;
    while (r < cnt && !(cum >= goal)) cum += w[r++];
    if (r == 0) r = 1;
    /* the boundary within rounding of the goal, or the next entry's weight within rounding of the last's */
    if (fabsl(cum - goal) <= dl || fabsl(cum - w[r - 1] - goal) <= dl ||
        (r < cnt && w[r] >= w[r - 1] * (1.0L - 0x1p-18L)))
      c->ex[1] = INFINITY;
    cnt = r;
  }
  if (use_k || use_p) qsort(k, cnt, sizeof *k, by_index);   /* back to index order */
  for (size_t q = 0; q < cnt && !(g->gumbel && g->min_p == 0.0); q++) w[q] = expl((s.v[k[q]] - s.m) / s.T);
  if (g->min_p > 0.0) {   /* probability >= min_p times the largest: weight >= min_p (the largest weighs 1) */
    size_t keep = 0;
    for (size_t q = 0; q < cnt; q++) {
      long double t = (s.v[k[q]] - s.m) / s.T;
      if (fabsl(w[q] - (long double)g->min_p) <= (long double)g->min_p * 0x1p-23L * (16.0L + fabsl(t)))
        c->ex[1] = INFINITY;
      if (w[q] >= (long double)g->min_p) { k[keep] = k[q]; w[keep] = w[q]; keep++; }
    }
    cnt = keep;
  }
  if (c->ex[1] == INFINITY) goto done;
  draw(c, &s, g, k, w, cnt);
done:
  free(k);
  free(w);
  free(s.v);
}

static const scfg cfg_plain = { 0, 1.0, 0.0, 0, 0 };
static const scfg cfg_nucleus = { 0, OPS_SAMPLE_TOP_P, OPS_SAMPLE_MIN_P, 0, 0 };
static const scfg cfg_topk_gumbel = { OPS_SAMPLE_TOP_K, OPS_SAMPLE_TOP_P, 0.0, 0, 1 };
static const scfg cfg_gumbel = { 0, 1.0, 0.0, 0, 1 };
static const scfg cfg_greedy = { 0, 1.0, 0.0, 1, 0 };
void ref_sample_row(ref_ctx *c) { sample_row(c, &cfg_plain); }
void ref_sample_nucleus_row(ref_ctx *c) { sample_row(c, &cfg_nucleus); }
void ref_sample_topk_gumbel_row(ref_ctx *c) { sample_row(c, &cfg_topk_gumbel); }
void ref_sample_gumbel_row(ref_ctx *c) { sample_row(c, &cfg_gumbel); }
void ref_sample_greedy_row(ref_ctx *c) { sample_row(c, &cfg_greedy); }

/* the token (the adapter writes it as a double), or the middle of the range of tokens rounding can reach */
long double ref_sample_at(const ref_ctx *c, size_t i, long double *aux) {
  (void)i;
  *aux = c->ex[1];
  return c->ex[0];
}

/* exact (negative), half the range, or +inf where the header leaves the row to the rounding */
double bound_sample(const ref_ctx *c, dtype od, size_t i, long double ref, long double aux) {
  (void)c; (void)od; (void)i; (void)ref;
  return aux > 0.0L ? (double)aux : -1.0;
}
