/*
 * The accuracy contract of include/smx/smx.h, checked against a long-double
 * reference for every algorithm x ISA x thread count on adversarial row
 * families. Prints the worst error per (family, ISA, algorithm, op) in units
 * of the bound, and the worst error in eps, for the record.
 *
 * SMX_TEST_LONG_LOG2 sets the length of the long N(0,1) row (default 26).
 */
#include "../common/test_util.h"

static const double EPS = 0x1p-23;

typedef struct worst {
  double sm_ratio, sm_eps;      /* softmax: err / bound, err / (eps ref) */
  double sm_core;               /* softmax err / (eps ref) where |t| < 1: the error beyond rounding x - max */
  double ls_ratio, ls_eps;      /* log-softmax: err / bound, err / (eps max(1,|ref|)) */
  double lse_ratio, lse_eps;
} worst;

static worst table[3][3];        /* [isa][algo] over all families */
static worst fam_worst;          /* the current family, over every ISA, algorithm and thread count */

static void upd(double *w, double v) { if (v > *w) *w = v; }

/* References for one row, in double (rounded from long double). */
typedef struct refs {
  double *sm, *ls, *t;
  double lse;
  float xmax;
} refs;

static refs make_refs(const float *x, size_t n, float T) {
  refs r;
  r.sm = malloc(n * sizeof(double));
  r.ls = malloc(n * sizeof(double));
  r.t = malloc(n * sizeof(double));
  long double m;
  long double logd = tu_ref_logd(x, n, T, &m);
  long double TT = T == 0.0f ? 1.0L : T;
  r.lse = (double)(m / TT + logd);
  r.xmax = (float)m;
  for (size_t i = 0; i < n; i++) {
    long double t = ((long double)x[i] - m) / TT;
    r.ls[i] = (double)(t - logd);
    r.sm[i] = (double)expl(t - logd);
    r.t[i] = (double)t;
  }
  return r;
}

static void free_refs(refs *r) { free(r->sm); free(r->ls); free(r->t); }

static void check_outputs(const char *fam, int isa, int algo, int threads, const float *x, size_t n,
                          const refs *r, const float *ysm, const float *yls, float lse) {
  worst *w = &table[isa][algo], *fw = &fam_worst;
  long bad_sm = 0, bad_ls = 0;
  double fam_sm = 0, fam_ls = 0;
  for (size_t i = 0; i < n; i++) {
    if (x[i] == -INFINITY) {
      if (!tu_same(ysm[i], 0.0f)) bad_sm++;
      if (!(yls[i] == -INFINITY)) bad_ls++;
      continue;
    }
    double ref = r->sm[i], y = ysm[i];
    if (ref >= FLT_MIN) {
      double err = fabs(y - ref);
      double bound = (4.0 + fabs(r->t[i]) / 2.0) * EPS * ref;
      upd(&w->sm_ratio, err / bound);
      upd(&fw->sm_ratio, err / bound);
      if (fabs(r->t[i]) < 1.0) upd(&fw->sm_core, err / (EPS * ref));
      upd(&fam_sm, err / bound);
      upd(&w->sm_eps, err / (EPS * ref));
      if (fabs(r->t[i]) < 1.0) upd(&w->sm_core, err / (EPS * ref));
      if (!(err <= bound)) bad_sm++;
    } else if (!(y >= 0.0 && y <= FLT_MIN * (1 + 8 * EPS))) {
      bad_sm++;
    }
    double lref = r->ls[i], ly = yls[i];
    if (fabs(lref) > FLT_MAX) {
      /* the exact value is beyond the float range: correct rounding gives -inf */
      if (!((float)lref == ly)) bad_ls++;
      continue;
    }
    double lerr = fabs(ly - lref), lb = 4.0 * EPS * fmax(1.0, fabs(lref));
    upd(&w->ls_ratio, lerr / lb);
    upd(&fw->ls_ratio, lerr / lb);
    upd(&fam_ls, lerr / lb);
    upd(&w->ls_eps, lerr / (EPS * fmax(1.0, fabs(lref))));
    if (!(lerr <= lb)) bad_ls++;
  }
  double lerr = fabs((double)lse - r->lse), lb = 4.0 * EPS * fmax(1.0, fabs(r->lse));
  upd(&w->lse_ratio, lerr / lb);
  upd(&fw->lse_ratio, lerr / lb);
  upd(&w->lse_eps, lerr / (EPS * fmax(1.0, fabs(r->lse))));
  CHECK(bad_sm == 0, "%s %s %s threads=%d softmax: %ld outputs outside the bound (worst %.2f of bound)", fam,
        tu_isa_names[isa], tu_algo_names[tu_algos[algo]], threads, bad_sm, fam_sm);
  CHECK(bad_ls == 0, "%s %s %s threads=%d log-softmax: %ld outputs outside the bound (worst %.2f)", fam,
        tu_isa_names[isa], tu_algo_names[tu_algos[algo]], threads, bad_ls, fam_ls);
  CHECK(lerr <= lb, "%s %s %s threads=%d logsumexp: %.9g vs ref %.9g", fam, tu_isa_names[isa],
        tu_algo_names[tu_algos[algo]], threads, lse, r->lse);
}

static void run_family(const char *fam, const float *x, size_t n, float T) {
  refs r = make_refs(x, n, T);
  memset(&fam_worst, 0, sizeof fam_worst);
  float *ysm = malloc(n * sizeof(float)), *yls = malloc(n * sizeof(float));
  float *ysm1 = malloc(n * sizeof(float)), *yls1 = malloc(n * sizeof(float));
  int cpu = tu_isa_top();
  for (int isa = 0; isa <= cpu; isa++) {
    smx_set_max_isa(tu_isas[isa]);
    for (int a = 0; a < 3; a++) {
      float lse1 = 0;
      for (int threads = 1; threads <= 2; threads++) {
        smx_options o = { tu_algos[a], T, 0, threads };
        float lse = 0;
        CHECK(smx_softmax_f32(x, ysm, n, &o) == SMX_OK, "%s softmax status", fam);
        CHECK(smx_log_softmax_f32(x, yls, n, &o) == SMX_OK, "%s log-softmax status", fam);
        CHECK(smx_logsumexp_f32(x, n, &lse, &o) == SMX_OK, "%s logsumexp status", fam);
        check_outputs(fam, isa, a, threads, x, n, &r, ysm, yls, lse);
        if (threads == 1) {
          memcpy(ysm1, ysm, n * sizeof(float));
          memcpy(yls1, yls, n * sizeof(float));
          lse1 = lse;
        } else {
          size_t diff = 0;
          for (size_t i = 0; i < n; i++) diff += !tu_same(ysm[i], ysm1[i]) + !tu_same(yls[i], yls1[i]);
          CHECK(diff == 0 && tu_same(lse, lse1), "%s %s %s: %zu outputs differ between 1 and 2 threads", fam,
                tu_isa_names[isa], tu_algo_names[tu_algos[a]], diff);
        }
      }
    }
  }
  smx_set_max_isa(SMX_ISA_AVX512);
  printf("%-26s n=%-9zu softmax %6.3f (near max %5.2f eps) | log-softmax %6.3f | logsumexp %6.3f\n", fam, n,
         fam_worst.sm_ratio, fam_worst.sm_core, fam_worst.ls_ratio, fam_worst.lse_ratio);
  free(ysm); free(yls); free(ysm1); free(yls1);
  free_refs(&r);
}

int main(void) {
  printf("worst error per family over every ISA x algorithm x thread count, as a fraction of the bound\n");
  tu_rng rng = { 42 };
  size_t cap = (size_t)1 << 17;
  float *x = malloc(cap * sizeof(float));
  char name[64];

  for (size_t i = 0; i < 4103; i++) x[i] = tu_uniform_f(&rng, -10, 10);
  run_family("uniform[-10,10]", x, 4103, 0.0f);
  run_family("uniform[-10,10] T=0.37", x, 4103, 0.37f);
  run_family("uniform[-10,10] T=2.5", x, 4103, 2.5f);
  for (size_t i = 0; i < 1000; i++) x[i] = tu_uniform_f(&rng, -1e4f, 1e4f);
  run_family("uniform[-1e4,1e4]", x, 1000, 0.0f);
  for (size_t i = 0; i < 3000; i++) x[i] = tu_uniform_f(&rng, 90, 100);
  run_family("uniform[90,100]", x, 3000, 0.0f);
  run_family("uniform[90,100] T=1000", x, 3000, 1000.0f);
  for (size_t i = 0; i < 777; i++) x[i] = nextafterf(5.0f, (i & 1) ? 6.0f : 4.0f) + (float)(i % 3) * 0x1p-21f;
  run_family("near-ties", x, 777, 0.0f);
  for (size_t i = 0; i < 2049; i++) x[i] = (tu_next(&rng) & 1) ? -INFINITY : tu_uniform_f(&rng, -10, 10);
  x[5] = 1.0f;
  run_family("half -inf", x, 2049, 0.0f);
  for (size_t i = 0; i < 5000; i++) x[i] = 0.0f;
  x[1234] = 80.0f;
  run_family("spike 80", x, 5000, 0.0f);
  x[1234] = 1e4f;
  run_family("spike 1e4", x, 5000, 0.0f);
  for (size_t i = 0; i < 3001; i++) x[i] = tu_uniform_f(&rng, -3e38f, 3e38f);
  x[17] = FLT_MAX;
  x[18] = -FLT_MAX;
  run_family("huge +-3e38", x, 3001, 0.0f);
  for (size_t i = 0; i < 3001; i++) x[i] = 1e30f + (float)(i % 50) * 0x1p77f;
  run_family("1e30 + small steps", x, 3001, 0.0f);
  /* rows spanning more than FLT_MAX, where x - max overflows float, at T > 1 */
  for (size_t i = 0; i < 1001; i++) x[i] = tu_uniform_f(&rng, -FLT_MAX, FLT_MAX);
  x[3] = FLT_MAX;
  x[4] = -FLT_MAX;
  run_family("span > FLT_MAX T=4", x, 1001, 4.0f);
  run_family("span > FLT_MAX T=1e38", x, 1001, 1e38f);
  /* extreme temperatures: 1/T or log2(e)/T outside the float range */
  for (size_t i = 0; i < 1003; i++) x[i] = tu_uniform_f(&rng, -10, 10) * 1e-40f;
  run_family("tiny values T=1e-40", x, 1003, 1e-40f);
  for (size_t i = 0; i < 1003; i++) x[i] = tu_uniform_f(&rng, -3e31f, 3e31f);
  run_family("uniform[-3e31,3e31] T=1e30", x, 1003, 1e30f);
  /* slowly rising rows: the running max moves every block, so rescales compound */
  for (size_t i = 0; i < 65536; i++) x[i] = (float)i * 1e-6f - 11.0f;
  run_family("slow ramp -11", x, 65536, 0.0f);
  for (size_t i = 0; i < 65536; i++) x[i] = (float)i * 1e-6f;
  run_family("slow ramp 0", x, 65536, 0.0f);
  for (size_t i = 0; i < 999; i++) x[i] = (float)(i % 7) * 1e-41f;
  run_family("subnormal", x, 999, 0.0f);
  for (size_t len = 1; len <= 2 * 16 + 1; len++) {
    for (size_t i = 0; i < len; i++) x[i] = tu_uniform_f(&rng, -10, 10);
    snprintf(name, sizeof name, "length %zu", len);
    run_family(name, x, len, 0.0f);
  }
  free(x);

  /* chunked rows: several SMX_CHUNKs, threads split a single row */
  size_t nc = 3 * ((size_t)1 << 16) + 5;
  x = malloc(nc * sizeof(float));
  for (size_t i = 0; i < nc; i++) x[i] = tu_uniform_f(&rng, -20, 20);
  run_family("chunked 3*2^16+5", x, nc, 0.0f);
  for (size_t i = 0; i < nc; i++) x[i] = (i % 3) ? -INFINITY : tu_uniform_f(&rng, -20, 20);
  run_family("chunked with -inf", x, nc, 0.0f);
  free(x);

  const char *e = getenv("SMX_TEST_LONG_LOG2");
  int lg = e ? atoi(e) : 26;
  if (lg > 0) {
    size_t nl = (size_t)1 << lg;
    x = malloc(nl * sizeof(float));
    for (size_t i = 0; i < nl; i++) x[i] = tu_normal(&rng);
    snprintf(name, sizeof name, "N(0,1) 2^%d", lg);
    run_family(name, x, nl, 0.0f);
    free(x);
  }

  printf("worst error per ISA x algorithm over all families (ratio = err/bound; eps = 2^-23)\n");
  printf("softmax core = worst relative error in eps over entries with |t| < 1, where rounding x - max adds little\n");
  printf("%-7s %-10s | %-26s | %-18s | %-18s\n", "isa", "algo", "softmax ratio/eps/core", "log-softmax", "logsumexp");
  for (int isa = 0; isa <= tu_isa_top(); isa++)
    for (int a = 0; a < 3; a++) {
      worst *w = &table[isa][a];
      printf("%-7s %-10s | %7.3f %8.3f %7.3f   | %7.3f %8.3f   | %7.3f %8.3f\n", tu_isa_names[isa],
             tu_algo_names[tu_algos[a]], w->sm_ratio, w->sm_eps, w->sm_core, w->ls_ratio, w->ls_eps, w->lse_ratio,
             w->lse_eps);
    }
  return tu_finish("test_accuracy");
}
