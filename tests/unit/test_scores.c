/*
 * Scores, OOD metrics, calibration and temperature scaling (smx_scores.h,
 * smx_metrics.h):
 * values against long-double / brute-force references on every ISA path,
 * special values, bin-edge conventions, ties, refusals. The digits-ood
 * figures are checked by tests/python/test_eval_expected.py and scikit-learn
 * parity by tests/python/test_metrics_sklearn.py.
 */
#include "../common/test_isa.h"
#include "smx/smx_scores.h"

/* ------------------------------------------------------------ references */
static long double ref_score(smx_score_kind kind, const float *z, size_t n, double T, double gamma, size_t M,
                             const double *tmpl) {
  long double m = -INFINITY;
  for (size_t j = 0; j < n; j++) m = z[j] > m ? z[j] : m;
  long double S = 0, p[256];
  for (size_t j = 0; j < n; j++) S += expl(((long double)z[j] - m) / (long double)T);
  for (size_t j = 0; j < n; j++) p[j] = expl(((long double)z[j] - m) / (long double)T) / S;
  long double a = -INFINITY, b = -INFINITY, pa = -1, pb = -1;
  for (size_t j = 0; j < n; j++) {
    if (z[j] > a) { b = a; a = z[j]; } else if (z[j] > b) b = z[j];
    if (p[j] > pa) { pb = pa; pa = p[j]; } else if (p[j] > pb) pb = p[j];
  }
  long double acc = 0;
  switch (kind) {
    case SMX_SCORE_MSP: case SMX_SCORE_ODIN: return pa;
    case SMX_SCORE_MAX_LOGIT: return m;
    case SMX_SCORE_ENERGY: return m + (long double)T * logl(S);
    case SMX_SCORE_NEG_ENTROPY:
      for (size_t j = 0; j < n; j++) if (p[j] > 0) acc += p[j] * logl(p[j]);
      return acc;
    case SMX_SCORE_MARGIN_PROB: return n == 1 ? 1.0L : pa - pb;
    case SMX_SCORE_MARGIN_LOGIT: return a - b;
    case SMX_SCORE_GEN: {
      /* 1 - p_j as the sum of the other probabilities: no cancellation near p = 1 */
      long double q[256], om[256];
      for (size_t j = 0; j < n; j++) {
        q[j] = p[j];
        om[j] = 0;
        for (size_t i = 0; i < n; i++) if (i != j) om[j] += p[i];
      }
      for (size_t i = 0; i < n; i++)   /* selection sort, descending, carrying 1 - p */
        for (size_t j = i + 1; j < n; j++)
          if (q[j] > q[i]) {
            long double t = q[i]; q[i] = q[j]; q[j] = t;
            t = om[i]; om[i] = om[j]; om[j] = t;
          }
      for (size_t j = 0; j < (M < n ? M : n); j++) acc += powl(q[j], gamma) * powl(om[j], gamma);
      return -acc;
    }
    case SMX_SCORE_NONUNIFORMITY:
      for (size_t j = 0; j < n; j++) acc += fabsl(p[j] - 1.0L / n);
      return acc;
    case SMX_SCORE_KL_MATCHING: {
      long double best = INFINITY;
      for (size_t k = 0; k < n; k++) {
        long double kl = 0;
        /* probabilities that underflow double count as 0 (the templates are doubles) */
        for (size_t j = 0; j < n; j++) if ((double)p[j] > 0) kl += p[j] * (logl(p[j]) - logl(tmpl[k * n + j]));
        best = kl < best ? kl : best;
      }
      return -best;
    }
  }
  return NAN;
}

static const smx_score_kind ALL[] = { SMX_SCORE_MSP, SMX_SCORE_MAX_LOGIT, SMX_SCORE_ENERGY, SMX_SCORE_NEG_ENTROPY,
                                      SMX_SCORE_MARGIN_PROB, SMX_SCORE_MARGIN_LOGIT, SMX_SCORE_GEN, SMX_SCORE_ODIN,
                                      SMX_SCORE_KL_MATCHING, SMX_SCORE_NONUNIFORMITY };
#define NKINDS (sizeof ALL / sizeof ALL[0])

static void test_score_values(void) {
  tu_rng rng = { 7 };
  enum { ROWS = 40, MAXK = 200 };
  static float x[ROWS * MAXK];
  static double out[ROWS], tmpl[MAXK * MAXK];
  const size_t ks[] = { 1, 2, 3, 5, 17, 100, 200 };
  {
    const int isa = tu_isa_at;
    for (size_t ki = 0; ki < sizeof ks / sizeof ks[0]; ki++) {
      size_t K = ks[ki];
      float scale = ki % 2 ? 30.0f : 3.0f;
      for (size_t i = 0; i < ROWS * K; i++) x[i] = scale * tu_normal(&rng) + (i % 7 == 0 ? 1e4f : 0.0f);
      size_t fit_used = 0;
      CHECK(smx_kl_templates_fit_f32(x, K, tmpl, &fit_used, ROWS, K, NULL) == SMX_OK, "templates");
      CHECK(fit_used == ROWS, "used %zu", fit_used);
      for (size_t c = 0; c < NKINDS; c++) {
        for (int dbl = 0; dbl < 2; dbl++) {
          smx_score_params p = { 0 };
          p.temperature = ALL[c] == SMX_SCORE_ENERGY ? 2.5 : 0.0;
          p.gen_m = ki % 2 ? 3 : 0;
          p.templates = tmpl;
          p.flags = dbl ? SMX_SCORE_FLAG_DOUBLE : 0;
          smx_status s = smx_scores_rows_f32(x, K, out, ROWS, K, ALL[c], &p, NULL);
          CHECK(s == SMX_OK, "kind %d status %d", (int)ALL[c], (int)s);
          double T = ALL[c] == SMX_SCORE_ENERGY ? 2.5 : ALL[c] == SMX_SCORE_ODIN ? 1000.0 : 1.0;
          int fast = !dbl && (ALL[c] == SMX_SCORE_MSP || ALL[c] == SMX_SCORE_ENERGY);
          for (size_t r = 0; r < ROWS; r++) {
            long double ref = ref_score(ALL[c], x + r * K, K, T, 0.1, p.gen_m ? p.gen_m : 100, tmpl);
            long double err = fabsl((long double)out[r] - ref);
            /* documented: f32 kernels 16 * 2^-24 (relative for MSP, absolute x max(1, T) for energy) */
            /* the other kinds: f32 exponentials 16 * 2^-24 (1 + |score|); the double flag (and the
             * logit-only kinds) 1e-12 (1 + |score|) */
            int f32 = !dbl && !fast && ALL[c] != SMX_SCORE_MAX_LOGIT && ALL[c] != SMX_SCORE_MARGIN_LOGIT;
            long double tol = fast ? (ALL[c] == SMX_SCORE_MSP ? 16 * 0x1p-24L * ref : 16 * 0x1p-24L * T)
                                   : (f32 ? 16 * 0x1p-24L : 1e-12L) * (1 + fabsl(ref));
            if (K == 1 && ALL[c] == SMX_SCORE_MARGIN_LOGIT) { CHECK(out[r] == INFINITY, "K=1 margin"); continue; }
            CHECK(err <= tol, "isa %d K %zu kind %s dbl %d row %zu: %.17g vs %.17Lg", isa, K, smx_score_name(ALL[c]),
                  dbl, r, out[r], ref);
          }
        }
      }
    }
  }
}

static void test_score_specials(void) {
  const size_t K = 4;
  float x[6 * 4] = {
    1, NAN, 2, 3,                                   /* NaN row            */
    -INFINITY, -INFINITY, -INFINITY, -INFINITY,      /* no distribution    */
    INFINITY, 1, INFINITY, 2,                        /* two +inf           */
    INFINITY, 1, 0, 2,                               /* one +inf           */
    -INFINITY, 0, -INFINITY, 0,                      /* masks: two equal   */
    5, 5, 5, 5,                                      /* uniform            */
  };
  double tmpl[16];
  for (int i = 0; i < 16; i++) tmpl[i] = (i % 5 == 0) ? 0.7 : 0.1;
  double out[6];
  smx_score_params p = { 0 };
  p.templates = tmpl;
  for (size_t c = 0; c < NKINDS; c++) {
    CHECK(smx_scores_rows_f32(x, K, out, 6, K, ALL[c], &p, NULL) == SMX_OK, "specials %d", (int)ALL[c]);
    CHECK(out[0] != out[0], "%s: NaN row gives NaN, got %g", smx_score_name(ALL[c]), out[0]);
    smx_score_kind k = ALL[c];
    if (k == SMX_SCORE_MAX_LOGIT || k == SMX_SCORE_ENERGY) CHECK(out[1] == -INFINITY, "%s all -inf", smx_score_name(k));
    else CHECK(out[1] != out[1], "%s all -inf: NaN, got %g", smx_score_name(k), out[1]);
    if (k == SMX_SCORE_MSP || k == SMX_SCORE_ODIN) {
      CHECK(out[2] == 0.5 && out[3] == 1.0 && out[4] == 0.5 && out[5] == 0.25, "%s specials %g %g %g %g",
            smx_score_name(k), out[2], out[3], out[4], out[5]);
    }
    if (k == SMX_SCORE_MAX_LOGIT || k == SMX_SCORE_ENERGY) CHECK(out[2] == INFINITY && out[3] == INFINITY, "+inf");
    if (k == SMX_SCORE_MARGIN_LOGIT) CHECK(out[2] != out[2] && out[3] == INFINITY && out[4] == 0.0, "margin logit");
    if (k == SMX_SCORE_MARGIN_PROB) CHECK(out[2] == 0.0 && out[3] == 1.0 && out[4] == 0.0 && out[5] == 0.0, "margin p");
    if (k == SMX_SCORE_NEG_ENTROPY)
      CHECK(fabs(out[2] + log(2.0)) < 1e-15 && out[3] == 0.0 && fabs(out[4] + log(2.0)) < 1e-15 &&
            fabs(out[5] + log(4.0)) < 1e-15, "entropy %g %g %g %g", out[2], out[3], out[4], out[5]);
    if (k == SMX_SCORE_NONUNIFORMITY) CHECK(fabs(out[5]) < 1e-15 && fabs(out[3] - 1.5) < 1e-15, "nonunif %g", out[3]);
    if (k == SMX_SCORE_ENERGY) CHECK(fabs(out[5] - (5 + log(4.0))) < 1e-12, "energy uniform %g", out[5]);
  }
  /* KL-matching: a template with a zero where p > 0 gives +inf divergence for that template */
  double t2[4] = { 1, 0, 0, 1 };
  float z[2] = { 0, 0 };
  p.templates = t2;
  CHECK(smx_scores_rows_f32(z, 2, out, 1, 2, SMX_SCORE_KL_MATCHING, &p, NULL) == SMX_OK, "kl");
  CHECK(out[0] == -INFINITY, "kl vs one-hot templates: %g", out[0]);
  /* templates: a class no row predicts gets the one-hot template */
  float v[2 * 3] = { 3, 0, 0, 2, 1, 0 };
  double tm[9];
  CHECK(smx_kl_templates_fit_f32(v, 3, tm, NULL, 2, 3, NULL) == SMX_OK, "fit");
  CHECK(tm[4] == 1.0 && tm[3] == 0.0 && tm[5] == 0.0 && tm[8] == 1.0, "one-hot templates");
  CHECK(fabs(tm[0] + tm[1] + tm[2] - 1.0) < 1e-15, "template sums to 1");
}

static void test_score_args(void) {
  float x[8] = { 0 };
  double out[4], tmpl[4] = { 0.5, 0.5, 0.5, 0.5 };
  smx_score_params p = { 0 };
  CHECK(smx_scores_rows_f32(NULL, 2, out, 2, 2, SMX_SCORE_MSP, NULL, NULL) == SMX_E_INVALID_ARG, "NULL x");
  CHECK(smx_scores_rows_f32(x, 2, NULL, 2, 2, SMX_SCORE_MSP, NULL, NULL) == SMX_E_INVALID_ARG, "NULL out");
  CHECK(smx_scores_rows_f32(x, 1, out, 2, 2, SMX_SCORE_MSP, NULL, NULL) == SMX_E_INVALID_ARG, "ldx < cols");
  CHECK(smx_scores_rows_f32(x, 2, out, 2, 0, SMX_SCORE_MSP, NULL, NULL) == SMX_E_INVALID_ARG, "no classes");
  CHECK(smx_scores_rows_f32(x, 2, out, 2, 2, (smx_score_kind)99, NULL, NULL) == SMX_E_INVALID_ARG, "unknown kind");
  CHECK(smx_scores_rows_f32(x, 2, NULL, 0, 2, SMX_SCORE_MSP, NULL, NULL) == SMX_OK, "no rows is fine");
  p.temperature = -1;
  CHECK(smx_scores_rows_f32(x, 2, out, 2, 2, SMX_SCORE_ENERGY, &p, NULL) == SMX_E_INVALID_ARG, "T < 0");
  p.temperature = NAN;
  CHECK(smx_scores_rows_f32(x, 2, out, 2, 2, SMX_SCORE_ODIN, &p, NULL) == SMX_E_INVALID_ARG, "T NaN");
  p.temperature = 0;
  p.gen_gamma = 1.5;
  CHECK(smx_scores_rows_f32(x, 2, out, 2, 2, SMX_SCORE_GEN, &p, NULL) == SMX_E_INVALID_ARG, "gamma > 1");
  p.gen_gamma = 0;
  CHECK(smx_scores_rows_f32(x, 2, out, 2, 2, SMX_SCORE_KL_MATCHING, &p, NULL) == SMX_E_INVALID_ARG, "no templates");
  tmpl[1] = NAN;
  p.templates = tmpl;
  CHECK(smx_scores_rows_f32(x, 2, out, 2, 2, SMX_SCORE_KL_MATCHING, &p, NULL) == SMX_E_INVALID_ARG, "NaN template");
  out[0] = 42;
  CHECK(smx_scores_rows_f32(x, 2, (double *)(void *)x, 2, 2, SMX_SCORE_MSP, NULL, NULL) == SMX_E_INVALID_ARG, "overlap");
  CHECK(out[0] == 42, "nothing written");
  smx_score_kind k;
  CHECK(smx_score_from_name("mls", &k) == SMX_OK && k == SMX_SCORE_MAX_LOGIT, "alias");
  CHECK(smx_score_from_name("frob", &k) == SMX_E_INVALID_ARG, "unknown name");
  for (size_t c = 0; c < NKINDS; c++) {
    CHECK(smx_score_from_name(smx_score_name(ALL[c]), &k) == SMX_OK && k == ALL[c], "name round trip");
  }
}

/* several scores at once = one call per score, bitwise */
static void test_scores_multi(void) {
  tu_rng rng = { 21 };
  enum { ROWS = 60, K = 37 };
  static float x[ROWS * K];
  for (size_t i = 0; i < ROWS * K; i++) x[i] = 4.0f * tu_normal(&rng);
  for (size_t j = 0; j < K; j++) { x[1 * K + j] = -INFINITY; x[2 * K + j] = j == 3 ? NAN : x[2 * K + j]; }
  x[3 * K + 5] = INFINITY;
  x[4 * K + 7] = -INFINITY;
  static double tmpl[K * K];
  CHECK(smx_kl_templates_fit_f32(x + 5 * K, K, tmpl, NULL, ROWS - 5, K, NULL) == SMX_OK, "templates");
  smx_score_kind kinds[NKINDS + 4];
  smx_score_params params[NKINDS + 4];
  memset(params, 0, sizeof params);
  size_t nk = 0;
  for (size_t c = 0; c < NKINDS; c++) { kinds[nk] = ALL[c]; params[nk].templates = tmpl; nk++; }
  kinds[nk] = SMX_SCORE_MSP; params[nk].flags = SMX_SCORE_FLAG_DOUBLE; nk++;
  kinds[nk] = SMX_SCORE_ENERGY; params[nk].flags = SMX_SCORE_FLAG_DOUBLE; params[nk].temperature = 3; nk++;
  kinds[nk] = SMX_SCORE_ODIN; params[nk].temperature = 3; nk++;
  kinds[nk] = SMX_SCORE_GEN; params[nk].gen_m = 2; params[nk].gen_gamma = 0.5; nk++;
  static double multi[NKINDS + 4][ROWS], single[ROWS];
  double *outs[NKINDS + 4];
  for (size_t k = 0; k < nk; k++) outs[k] = multi[k];
  CHECK(smx_scores_multi_rows_f32(x, K, outs, ROWS, K, nk, kinds, params, NULL) == SMX_OK, "multi");
  for (size_t k = 0; k < nk; k++) {
    CHECK(smx_scores_rows_f32(x, K, single, ROWS, K, kinds[k], &params[k], NULL) == SMX_OK, "single");
    for (size_t r = 0; r < ROWS; r++)
      CHECK(memcmp(&multi[k][r], &single[r], sizeof(double)) == 0 || (single[r] != single[r] && multi[k][r] != multi[k][r]),
            "multi = single: kind %s row %zu: %.17g vs %.17g", smx_score_name(kinds[k]), r, multi[k][r], single[r]);
  }
  /* arguments: checked for every kind before anything is written */
  multi[0][0] = 42;
  params[3].temperature = -1;
  CHECK(smx_scores_multi_rows_f32(x, K, outs, ROWS, K, nk, kinds, params, NULL) == SMX_E_INVALID_ARG, "bad params");
  CHECK(multi[0][0] == 42, "nothing written");
  params[3].temperature = 0;
  CHECK(smx_scores_multi_rows_f32(x, K, outs, ROWS, K, nk, kinds, NULL, NULL) == SMX_E_INVALID_ARG, "kl without templates");
  CHECK(smx_scores_multi_rows_f32(x, K, outs, ROWS, K, 33, kinds, params, NULL) == SMX_E_INVALID_ARG, "too many kinds");
  CHECK(smx_scores_multi_rows_f32(x, K, NULL, ROWS, K, nk, kinds, params, NULL) == SMX_E_INVALID_ARG, "NULL outs");
  CHECK(smx_scores_multi_rows_f32(NULL, 0, NULL, 0, 0, 0, NULL, NULL, NULL) == SMX_OK, "nothing to do");
}

/* ---------------------------------------------------------------- metrics */
static void test_metrics_bruteforce(void) {
  tu_rng rng = { 99 };
  double a[300], b[300];
  for (int trial = 0; trial < 200; trial++) {
    size_t na = 1 + tu_next(&rng) % 300, nb = 1 + tu_next(&rng) % 300;
    unsigned levels = 1 + (unsigned)(tu_next(&rng) % 20);
    for (size_t i = 0; i < na; i++) a[i] = (double)(tu_next(&rng) % levels) + (trial % 3 ? 0.5 : 0.0);
    for (size_t i = 0; i < nb; i++) b[i] = (double)(tu_next(&rng) % levels);
    if (trial % 5 == 0) { a[0] = -0.0; b[0] = 0.0; }
    smx_ood_metrics m;
    CHECK(smx_ood_metrics_f64(a, b, &m, na, nb, 0, NULL) == SMX_OK, "metrics");
    /* Mann-Whitney with half credit for ties */
    long double u = 0;
    for (size_t i = 0; i < na; i++)
      for (size_t j = 0; j < nb; j++) u += a[i] > b[j] ? 1.0L : a[i] == b[j] ? 0.5L : 0.0L;
    long double auroc = u / ((long double)na * nb);
    CHECK(fabsl((long double)m.auroc - auroc) < 1e-15L, "auroc %.17g vs %.17Lg", m.auroc, auroc);
    /* FPR (ID positive): the largest threshold accepting >= 95% of ID, then share of OOD >= it */
    double best_t = -INFINITY;
    for (size_t i = 0; i < na; i++) {
      size_t acc = 0;
      for (size_t j = 0; j < na; j++) acc += a[j] >= a[i];
      if ((double)acc / (double)na >= 0.95 && a[i] > best_t) best_t = a[i];
    }
    size_t fp = 0;
    for (size_t j = 0; j < nb; j++) fp += b[j] >= best_t;
    CHECK(m.fpr_idpos_exact == (double)fp / (double)nb, "fpr idpos %g vs %g", m.fpr_idpos_exact, (double)fp / (double)nb);
    CHECK(m.thr_idpos_exact == best_t || (best_t == 0 && m.thr_idpos_exact == 0), "threshold %g vs %g", m.thr_idpos_exact, best_t);
    /* FPR (OOD positive): the smallest threshold flagging >= 95% of OOD (score <= t) */
    double tt = INFINITY;
    for (size_t j = 0; j < nb; j++) {
      size_t fl = 0;
      for (size_t i = 0; i < nb; i++) fl += b[i] <= b[j];
      if ((double)fl / (double)nb >= 0.95 && b[j] < tt) tt = b[j];
    }
    size_t fl_id = 0;
    for (size_t i = 0; i < na; i++) fl_id += a[i] <= tt;
    CHECK(m.fpr_oodpos_exact == (double)fl_id / (double)na, "fpr oodpos %g vs %g", m.fpr_oodpos_exact, (double)fl_id / (double)na);
    /* distinct values */
    size_t distinct = 0;
    double all[600];
    for (size_t i = 0; i < na; i++) all[i] = a[i];
    for (size_t j = 0; j < nb; j++) all[na + j] = b[j];
    for (size_t i = 0; i < na + nb; i++) {
      int seen = 0;
      for (size_t j = 0; j < i && !seen; j++) seen = all[j] == all[i];
      distinct += !seen;
    }
    CHECK(m.n_tied_values == na + nb - distinct, "ties %llu vs %zu", (unsigned long long)m.n_tied_values,
          na + nb - distinct);
    CHECK(m.ap_in > 0 && m.ap_in <= 1 && m.ap_out > 0 && m.ap_out <= 1, "AP range");
    /* the f32 entry agrees on float-representable data */
    float fa[300], fb[300];
    for (size_t i = 0; i < na; i++) fa[i] = (float)a[i];
    for (size_t j = 0; j < nb; j++) fb[j] = (float)b[j];
    smx_ood_metrics m32;
    CHECK(smx_ood_metrics_f32(fa, fb, &m32, na, nb, 0, NULL) == SMX_OK, "f32");
    CHECK(m32.auroc == m.auroc && m32.ap_in == m.ap_in && m32.aupr_out_trapz == m.aupr_out_trapz &&
          m32.fpr_oodpos_openood == m.fpr_oodpos_openood && m32.fpr_idpos_nearest == m.fpr_idpos_nearest,
          "f32 = f64");
  }
  /* perfect separation, reversed separation, everything tied */
  double hi[3] = { 3, 4, 5 }, lo[2] = { 1, 2 }, same[2] = { 7, 7 };
  smx_ood_metrics m;
  CHECK(smx_ood_metrics_f64(hi, lo, &m, 3, 2, 0, NULL) == SMX_OK && m.auroc == 1.0 && m.fpr_idpos_exact == 0.0 &&
        m.ap_in == 1.0 && m.ap_out == 1.0, "separated");
  CHECK(smx_ood_metrics_f64(lo, hi, &m, 2, 3, 0, NULL) == SMX_OK && m.auroc == 0.0 && m.fpr_idpos_exact == 1.0, "reversed");
  CHECK(smx_ood_metrics_f64(same, same, &m, 2, 2, 0, NULL) == SMX_OK && m.auroc == 0.5 && m.fpr_idpos_exact == 1.0 &&
        m.ap_in == 0.5 && m.n_tied_values == 3, "tied: auroc %g", m.auroc);
  double nan1[1] = { NAN };
  CHECK(smx_ood_metrics_f64(nan1, hi, &m, 1, 3, 0, NULL) == SMX_E_INVALID_ARG, "NaN refused");
  CHECK(smx_ood_metrics_f64(hi, lo, &m, 0, 2, 0, NULL) == SMX_E_INVALID_ARG, "no ID");
  CHECK(smx_ood_metrics_f64(hi, lo, &m, 3, 0, 0, NULL) == SMX_E_INVALID_ARG, "no OOD");
  CHECK(smx_ood_metrics_f64(hi, lo, &m, 3, 2, 1.5, NULL) == SMX_E_INVALID_ARG, "tpr > 1");
  CHECK(smx_ood_metrics_f64(hi, lo, NULL, 3, 2, 0, NULL) == SMX_E_INVALID_ARG, "NULL out");
}

/* ------------------------------------------------------------ calibration */
static void test_calibration(void) {
  /* K = 2 with equal logits: conf = 0.5 exactly, an edge with 2 bins -> bin (0, 0.5] */
  float x[4 * 2] = { 0, 0, 0, 0, 5, 1, 1, 5 };
  int64_t y[4] = { 0, 1, 0, 0 };
  smx_calibration c;
  smx_reliability_bin b[2];
  CHECK(smx_calibration_rows_f32(x, 2, y, &c, b, 4, 2, 2, NULL) == SMX_OK, "calibration");
  CHECK(b[0].n == 2 && b[1].n == 2, "edge 0.5 goes to the lower bin: %llu %llu", (unsigned long long)b[0].n,
        (unsigned long long)b[1].n);
  CHECK(b[0].lo == 0.0 && b[0].hi == 0.5 && b[1].hi == 1.0, "edges");
  CHECK(c.acc == 0.5, "acc %g (argmax of a tie is the first class)", c.acc);
  double p5 = 1.0 / (1.0 + exp(-4.0));
  double nll = (log(2.0) * 2 + -log(p5) + -log(1 - p5)) / 4;
  CHECK(fabs(c.nll - nll) < 1e-15, "nll %.17g vs %.17g", c.nll, nll);
  double brier = (0.5 + 0.5 + 2 * (1 - p5) * (1 - p5) + 2 * p5 * p5) / 4;
  CHECK(fabs(c.brier - brier) < 1e-15, "brier %.17g vs %.17g", c.brier, brier);
  double ece = 0.5 * fabs(0.5 - 0.5) + 0.5 * fabs(p5 - 0.5);
  CHECK(fabs(c.ece - ece) < 1e-15, "ece %.17g vs %.17g", c.ece, ece);
  CHECK(fabs(c.mce - fabs(p5 - 0.5)) < 1e-15, "mce");
  /* K = 1: confidence exactly 1 goes to the last bin; bins with no samples are reported empty */
  float one[3] = { 2, -1, 7 };
  int64_t z3[3] = { 0, 0, 0 };
  smx_reliability_bin b15[15];
  CHECK(smx_calibration_rows_f32(one, 1, z3, &c, b15, 3, 1, 0, NULL) == SMX_OK, "K=1");
  CHECK(b15[14].n == 3 && b15[0].n == 0 && b15[0].conf != b15[0].conf, "conf 1 in the last bin, empty bins NaN");
  CHECK(c.ece == 0.0 && c.acc == 1.0 && c.nll == 0.0 && c.brier == 0.0, "K=1 perfect");
  /* refusals */
  int64_t bad[4] = { 0, 2, 0, 0 };
  CHECK(smx_calibration_rows_f32(x, 2, bad, &c, NULL, 4, 2, 0, NULL) == SMX_E_INVALID_ARG, "label out of range");
  int64_t neg[4] = { 0, -1, 0, 0 };
  CHECK(smx_calibration_rows_f32(x, 2, neg, &c, NULL, 4, 2, 0, NULL) == SMX_E_INVALID_ARG, "negative label");
  float xn[4] = { 0, NAN, 1, 2 };
  CHECK(smx_calibration_rows_f32(xn, 2, y, &c, NULL, 2, 2, 0, NULL) == SMX_E_INVALID_ARG, "NaN logits");
  CHECK(smx_calibration_rows_f32(x, 2, y, &c, NULL, 0, 2, 0, NULL) == SMX_E_INVALID_ARG, "no rows");
  smx_options bad_t = { .temperature = -1 };
  CHECK(smx_calibration_rows_f32(x, 2, y, &c, NULL, 4, 2, 0, &bad_t) == SMX_E_INVALID_ARG, "bad T");
  /* streaming in blocks = all at once; adaptive ECE against a direct computation */
  tu_rng rng = { 5 };
  enum { N = 1000, K = 7 };
  static float big[N * K];
  static int64_t lab[N];
  for (size_t i = 0; i < N * K; i++) big[i] = 2.0f * tu_normal(&rng);
  for (size_t i = 0; i < N; i++) lab[i] = (int64_t)(tu_next(&rng) % K);
  smx_calibration whole, parts;
  smx_options t07 = { .temperature = 0.7 };
  CHECK(smx_calibration_rows_f32(big, K, lab, &whole, NULL, N, K, 15, &t07) == SMX_OK, "whole");
  smx_calib_acc *acc = NULL;
  CHECK(smx_calib_create(&acc, K, 15, 0, &t07) == SMX_OK, "create");
  for (size_t r = 0; r < N; r += 333) {
    size_t nr = N - r < 333 ? N - r : 333;
    CHECK(smx_calib_add_rows_f32(acc, big + r * K, K, lab + r, nr) == SMX_OK, "add");
  }
  CHECK(smx_calib_result(acc, &parts, NULL) == SMX_OK, "result");
  smx_calib_destroy(acc);
  CHECK(whole.ece == parts.ece && whole.adaptive_ece == parts.adaptive_ece && whole.nll == parts.nll &&
        whole.classwise_ece == parts.classwise_ece, "blocks = whole");
  CHECK(whole.classwise_ece >= 0 && whole.adaptive_ece >= 0 && whole.mce >= whole.ece, "ranges");
}

/* ------------------------------------------------------- temperature */
static double val_nll(const float *x, size_t n, size_t K, const int64_t *y, double T) {
  double s = 0;
  for (size_t r = 0; r < n; r++) {
    long double m;
    long double ld = tu_ref_logd(x + r * K, K, (float)1, &m);
    (void)ld;
    long double S = 0;
    for (size_t j = 0; j < K; j++) S += expl(((long double)x[r * K + j] - m) / T);
    s += (double)(logl(S) - ((long double)x[r * K + y[r]] - m) / T);
  }
  return s / (double)n;
}

static void test_temperature(void) {
  tu_rng rng = { 11 };
  enum { N = 300, K = 6 };
  static float x[N * K];
  static int64_t y[N];
  for (int trial = 0; trial < 6; trial++) {
    double scale = trial < 3 ? 0.3 : 8.0;   /* under- and over-confident */
    for (size_t r = 0; r < N; r++) {
      y[r] = (int64_t)(tu_next(&rng) % K);
      for (size_t j = 0; j < K; j++) x[r * K + j] = (float)(scale * (tu_normal(&rng) + (j == (size_t)y[r] ? 2.0 : 0.0)));
    }
    double T = -1;
    smx_ts_info info;
    smx_status s = smx_temperature_fit_f32(x, K, y, &T, &info, N, K, NULL);
    CHECK(s == SMX_OK && info.outcome == SMX_TS_OPTIMUM, "fit status %d", (int)s);
    double f = val_nll(x, N, K, y, T);
    CHECK(val_nll(x, N, K, y, T * 1.001) > f && val_nll(x, N, K, y, T / 1.001) > f, "T = %g is a minimum", T);
    CHECK(fabs(info.nll_at_t - f) < 1e-12, "reported NLL %.17g vs %.17g", info.nll_at_t, f);
    CHECK(fabs(info.grad) < 1e-9, "gradient %g", info.grad);
    CHECK(trial < 3 ? T < 1 : T > 1, "direction: T = %g", T);
  }
  /* all correct: no finite optimum (T -> 0), T untouched */
  float xs[3 * 2] = { 2, 0, 0, 1, 5, -1 };
  int64_t ys[3] = { 0, 1, 0 };
  double T = 42;
  smx_ts_info info;
  CHECK(smx_temperature_fit_f32(xs, 2, ys, &T, &info, 3, 2, NULL) == SMX_E_NO_OPTIMUM && info.outcome == SMX_TS_TO_ZERO &&
        T == 42, "all correct");
  /* true class below the row mean on average: T -> infinity */
  int64_t yw[3] = { 1, 0, 1 };
  CHECK(smx_temperature_fit_f32(xs, 2, yw, &T, &info, 3, 2, NULL) == SMX_E_NO_OPTIMUM &&
        info.outcome == SMX_TS_TO_INFINITY && T == 42, "anti-signal");
  int64_t yb[3] = { 0, 2, 0 };
  CHECK(smx_temperature_fit_f32(xs, 2, yb, &T, &info, 3, 2, NULL) == SMX_E_INVALID_ARG, "label out of range");
  float xn[2] = { NAN, 0 };
  CHECK(smx_temperature_fit_f32(xn, 2, ys, &T, &info, 1, 2, NULL) == SMX_E_INVALID_ARG, "NaN");
  CHECK(smx_temperature_fit_f32(xs, 2, ys, &T, &info, 0, 2, NULL) == SMX_E_INVALID_ARG, "empty");
  CHECK(!strcmp(smx_status_string(SMX_E_NO_OPTIMUM), "no finite optimum"), "status string");
}

/* Functions with several outputs refuse outputs that overlap each other (nothing written). */
static void test_overlapping_outputs(void) {
  float x[12] = { 1, 2, 3, 0, -1, 4, 2, 2, 2, 5, 0, 1 };
  smx_score_kind k[3] = { SMX_SCORE_MSP, SMX_SCORE_ENERGY, SMX_SCORE_MAX_LOGIT };
  double buf[16];
  for (int i = 0; i < 16; i++) buf[i] = 99.0;
  double *same[3] = { buf, buf, buf + 8 }, *part[3] = { buf, buf + 2, buf + 8 }, *ok[3] = { buf, buf + 4, buf + 8 };
  CHECK(smx_scores_multi_rows_f32(x, 3, same, 4, 3, 3, k, NULL, NULL) == SMX_E_INVALID_ARG, "multi: same output twice");
  CHECK(smx_scores_multi_rows_f32(x, 3, part, 4, 3, 3, k, NULL, NULL) == SMX_E_INVALID_ARG, "multi: outputs overlap");
  int untouched = 1;
  for (int i = 0; i < 16; i++) untouched &= buf[i] == 99.0;
  CHECK(untouched, "multi: a refused call wrote");
  CHECK(smx_scores_multi_rows_f32(x, 3, ok, 4, 3, 3, k, NULL, NULL) == SMX_OK, "multi: adjacent outputs are fine");

  int64_t lab[4] = { 2, 2, 0, 0 };
  double tt[8];
  CHECK(smx_temperature_fit_f32(x, 3, lab, tt, (smx_ts_info *)(void *)tt, 4, 3, NULL) == SMX_E_INVALID_ARG,
        "temperature_fit: T inside info");
  smx_reliability_bin bins[4];
  smx_calib_acc *a = NULL;
  CHECK(smx_calib_create(&a, 3, 4, 0, NULL) == SMX_OK && smx_calib_add_rows_f32(a, x, 3, lab, 4) == SMX_OK, "calib");
  CHECK(smx_calib_result(a, (smx_calibration *)(void *)bins, bins) == SMX_E_INVALID_ARG, "calib_result: out inside bins");
  smx_calib_destroy(a);
  double sums[9] = { 0 };
  CHECK(smx_kl_templates_accumulate_f32(x, 3, sums, (uint64_t *)(void *)(sums + 6), 4, 3, NULL) == SMX_E_INVALID_ARG,
        "kl accumulate: counts inside sums");
  CHECK(smx_kl_templates_fit_f32(x, 3, sums, (size_t *)(void *)(sums + 4), 4, 3, NULL) == SMX_E_INVALID_ARG,
        "kl fit: used inside templates");
}

/* Labels are int64: a value that int32 would wrap into range (2^32 -> 0) and the int64 extremes are refused by
 * every labelled function, with nothing written or accumulated. */
static void test_int64_labels(void) {
  float x[8] = { 2, 0, 0, 1, 3, -1, 1, 0 };
  const int64_t wide[3] = { (int64_t)1 << 32, INT64_MIN, INT64_MAX };
  for (int w = 0; w < 3; w++) {
    int64_t y[4] = { 0, 1, 0, 0 };
    y[2] = wide[w];
    smx_calibration c;
    memset(&c, 0x5a, sizeof c);
    smx_reliability_bin b[2];
    memset(b, 0x5a, sizeof b);
    CHECK(smx_calibration_rows_f32(x, 2, y, &c, b, 4, 2, 2, NULL) == SMX_E_INVALID_ARG, "calibration: label %d", w);
    CHECK(c.n == 0x5a5a5a5a5a5a5a5aull && b[1].n == 0x5a5a5a5a5a5a5a5aull, "calibration wrote on label %d", w);
    double T = -7.0;
    smx_ts_info info;
    memset(&info, 0x5a, sizeof info);
    CHECK(smx_temperature_fit_f32(x, 2, y, &T, &info, 4, 2, NULL) == SMX_E_INVALID_ARG, "fit: label %d", w);
    CHECK(T == -7.0 && info.iterations == 0x5a5a5a5a, "fit wrote on label %d", w);
    /* a refused block leaves the accumulator as it was: the result is that of the good block alone */
    const int64_t good[4] = { 0, 1, 0, 0 };
    smx_calib_acc *a = NULL, *ref = NULL;
    smx_calibration ca, cr;
    CHECK(smx_calib_create(&a, 2, 4, 0, NULL) == SMX_OK && smx_calib_create(&ref, 2, 4, 0, NULL) == SMX_OK, "create");
    CHECK(smx_calib_add_rows_f32(a, x, 2, good, 4) == SMX_OK, "good block");
    CHECK(smx_calib_add_rows_f32(a, x, 2, y, 4) == SMX_E_INVALID_ARG, "block with label %d", w);
    CHECK(smx_calib_add_rows_f32(ref, x, 2, good, 4) == SMX_OK, "reference block");
    CHECK(smx_calib_result(a, &ca, NULL) == SMX_OK && smx_calib_result(ref, &cr, NULL) == SMX_OK, "results");
    CHECK(ca.n == 4 && !memcmp(&ca, &cr, sizeof ca), "a refused block changed the accumulator (label %d)", w);
    smx_calib_destroy(a);
    smx_calib_destroy(ref);
  }
}

/* The options: threads give the same bits; a temperature where the function has its own (or none) and the
 * masked-row flag are refused with nothing written; calibration reads its T from them. */
static void test_score_options(void) {
  enum { R = 1500, K = 7 };
  static float x[R * K];
  tu_rng rng = { 0x0b5e55edull };
  for (size_t i = 0; i < (size_t)R * K; i++) x[i] = tu_uniform_f(&rng, -8.0f, 8.0f);
  x[3 * K + 2] = NAN;
  x[900 * K + 1] = -INFINITY;
  smx_score_kind kinds[4] = { SMX_SCORE_MSP, SMX_SCORE_ENERGY, SMX_SCORE_GEN, SMX_SCORE_ODIN };
  static double base[4][R], out[4][R];
  double *ob[4] = { base[0], base[1], base[2], base[3] }, *oo[4] = { out[0], out[1], out[2], out[3] };
  CHECK(smx_scores_multi_rows_f32(x, K, ob, R, K, 4, kinds, NULL, NULL) == SMX_OK, "one thread");
  const int threads[3] = { 2, 3, 8 };
  for (int t = 0; t < 3; t++) {
    smx_options o = { .threads = threads[t] };
    memset(out, 0, sizeof out);
    CHECK(smx_scores_multi_rows_f32(x, K, oo, R, K, 4, kinds, NULL, &o) == SMX_OK, "%d threads", threads[t]);
    CHECK(!memcmp(out, base, sizeof out), "%d threads: other bits than one thread", threads[t]);
    CHECK(smx_scores_rows_f32(x, K, out[0], R, K, SMX_SCORE_GEN, NULL, &o) == SMX_OK &&
              !memcmp(out[0], base[2], sizeof out[0]), "rows_f32 on %d threads", threads[t]);
  }
  smx_options hot = { .temperature = 2.0 }, masked = { .flags = SMX_FLAG_MASKED_ROW_NAN }, neg = { .threads = -1 };
  const smx_options *refused[3] = { &hot, &masked, &neg };
  for (int i = 0; i < 3; i++) {
    for (int k = 0; k < 4; k++)
      for (size_t r = 0; r < R; r++) out[k][r] = 99.0;
    CHECK(smx_scores_rows_f32(x, K, out[0], R, K, SMX_SCORE_MSP, NULL, refused[i]) == SMX_E_INVALID_ARG,
          "scores: options %d", i);
    CHECK(smx_scores_multi_rows_f32(x, K, oo, R, K, 4, kinds, NULL, refused[i]) == SMX_E_INVALID_ARG,
          "multi: options %d", i);
    int untouched = 1;
    for (int k = 0; k < 4; k++)
      for (size_t r = 0; r < R; r++) untouched &= out[k][r] == 99.0;
    CHECK(untouched, "scores wrote under refused options %d", i);
    double tm[K * K];
    uint64_t counts[K] = { 0 };
    for (int j = 0; j < K * K; j++) tm[j] = 99.0;
    CHECK(smx_kl_templates_fit_f32(x, K, tm, NULL, R, K, refused[i]) == SMX_E_INVALID_ARG, "templates: options %d", i);
    CHECK(smx_kl_templates_accumulate_f32(x, K, tm, counts, R, K, refused[i]) == SMX_E_INVALID_ARG,
          "accumulate: options %d", i);
    CHECK(tm[0] == 99.0 && tm[K * K - 1] == 99.0 && counts[0] == 0, "templates wrote under options %d", i);
    smx_ood_metrics m;
    memset(&m, 0, sizeof m);
    CHECK(smx_ood_metrics_f64(base[0], base[0] + 700, &m, 700, 800, 0, refused[i]) == SMX_E_INVALID_ARG &&
              m.n_id == 0, "metrics: options %d", i);
    const int64_t lab[2] = { 1, 2 };
    double T = -7.0;
    CHECK(smx_temperature_fit_f32(x + 10 * K, K, lab, &T, NULL, 2, K, refused[i]) == SMX_E_INVALID_ARG && T == -7.0,
          "fit: options %d", i);
    smx_calib_acc *a = NULL;
    smx_status want = i == 0 ? SMX_OK : SMX_E_INVALID_ARG;   /* calibration's T is the options' */
    CHECK(smx_calib_create(&a, K, 15, 0, refused[i]) == want && (want != SMX_OK) == (a == NULL), "calib: options %d", i);
    smx_calib_destroy(a);
  }
  /* calibration at T = 2 through the options is calibration of z / 2 at T = 1 */
  static float half[R * K];
  static int64_t lab[R];
  for (size_t i = 0; i < (size_t)R * K; i++) half[i] = x[i] / 2.0f;
  for (size_t r = 0; r < R; r++) lab[r] = (int64_t)(r % K);
  half[3 * K + 2] = x[3 * K + 2] = 0.0f;   /* calibration refuses NaN */
  smx_calibration at2, of_half;
  CHECK(smx_calibration_rows_f32(x, K, lab, &at2, NULL, R, K, 15, &hot) == SMX_OK, "calibration at T = 2");
  CHECK(smx_calibration_rows_f32(half, K, lab, &of_half, NULL, R, K, 15, NULL) == SMX_OK, "calibration of z / 2");
  CHECK(fabs(at2.nll - of_half.nll) <= 1e-12 && fabs(at2.ece - of_half.ece) <= 1e-12 && at2.acc == of_half.acc,
        "T = 2: nll %.17g vs %.17g", at2.nll, of_half.nll);
}

int main(void) {
  tu_isa_start(3);
  test_score_values();
  if (tu_isa_once) {
    test_overlapping_outputs();
    test_score_specials();
    test_score_args();
    test_scores_multi();
    test_metrics_bruteforce();
    test_calibration();
    test_temperature();
    test_int64_labels();
    test_score_options();
  }
  return tu_finish("test_scores");
}
