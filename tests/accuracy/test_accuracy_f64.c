/*
 * The f64 accuracy contract of include/smx/smx.h, checked against an x87
 * long-double reference (64-bit significand: 11 bits beyond double) for
 * every algorithm x ISA x thread count on adversarial row families, the
 * double counterparts of tests/accuracy/test_accuracy.c. Prints the worst
 * error per family and per (ISA, algorithm) in units of the bound and in eps.
 * Also checks that results are bitwise identical for 1 and 2 threads.
 *
 * SMX_TEST_LONG_LOG2 sets the length of the long N(0,1) row (default 24).
 */
#include "../common/test_util.h"

static const double EPS = 0x1p-52;
static const double C_BOUND = 4.0;   /* the C of the header's f64 bounds */

typedef struct worst {
  double sm_ratio, sm_eps, sm_core, ls_ratio, ls_eps, lse_ratio, lse_eps;
} worst;

static worst table[3][3];
static worst fam_worst;

static void upd(double *w, double v) { if (v > *w) *w = v; }

/* The reference of a row: its max and log sum exp((x - max)/T) in long
 * double; each output's reference is formed from them when it is checked. */
typedef struct refs {
  long double m, logd, T, lse;
} refs;

/* log sum exp((x - m)/T) in long double, blocked so that 2^26 terms stay exact enough */
static long double ref_logd(const double *x, size_t n, double t, long double *mout) {
  long double T = t == 0.0 ? 1.0L : (long double)t;
  long double m = -INFINITY;
  for (size_t i = 0; i < n; i++) if ((long double)x[i] > m) m = x[i];
  *mout = m;
  if (m == -INFINITY) return -INFINITY;
  long double s = 0.0L, blk = 0.0L;
  for (size_t i = 0; i < n; i++) {
    blk += expl(((long double)x[i] - m) / T);
    if ((i & 4095) == 4095) { s += blk; blk = 0.0L; }
  }
  return logl(s + blk);
}

static refs make_refs(const double *x, size_t n, double T) {
  refs r;
  r.T = T == 0.0 ? 1.0L : T;
  r.logd = ref_logd(x, n, T, &r.m);
  r.lse = r.m / r.T + r.logd;
  return r;
}

static int same_d(double a, double b) {
  if (a != a && b != b) return 1;
  return memcmp(&a, &b, sizeof a) == 0;
}

static void check_outputs(const char *fam, int isa, int algo, int threads, const double *x, size_t n,
                          const refs *r, const double *ysm, const double *yls, double lse) {
  worst *w = &table[isa][algo], *fw = &fam_worst;
  long bad_sm = 0, bad_ls = 0;
  double fam_sm = 0, fam_ls = 0;
  for (size_t i = 0; i < n; i++) {
    if (x[i] == -INFINITY) {
      if (!same_d(ysm[i], 0.0)) bad_sm++;
      if (!(yls[i] == -INFINITY)) bad_ls++;
      continue;
    }
    long double t = ((long double)x[i] - r->m) / r->T;
    long double lref = t - r->logd, ref = expl(lref);
    double y = ysm[i];
    if (ref >= DBL_MIN) {
      double err = (double)fabsl((long double)y - ref);
      double bound = (C_BOUND + (double)fabsl(t) / 2.0) * EPS * (double)ref;
      double rel = err / (EPS * (double)ref);
      upd(&w->sm_ratio, err / bound);
      upd(&fw->sm_ratio, err / bound);
      upd(&fam_sm, err / bound);
      upd(&w->sm_eps, rel);
      if (fabsl(t) < 1.0L) { upd(&w->sm_core, rel); upd(&fw->sm_core, rel); }
      if (!(err <= bound)) bad_sm++;
    } else if (!(y >= 0.0 && y < DBL_MIN)) {
      bad_sm++;
    }
    double ly = yls[i];
    if (fabsl(lref) > DBL_MAX) {
      /* beyond the double range: correct rounding gives -inf */
      if (!(ly == -INFINITY)) bad_ls++;
      continue;
    }
    double scale = fmax(1.0, (double)fabsl(lref));
    double lerr = (double)fabsl((long double)ly - lref), lb = C_BOUND * EPS * scale;
    upd(&w->ls_ratio, lerr / lb);
    upd(&fw->ls_ratio, lerr / lb);
    upd(&fam_ls, lerr / lb);
    upd(&w->ls_eps, lerr / (EPS * scale));
    if (!(lerr <= lb)) bad_ls++;
  }
  int lse_ok;
  double lerr = 0, lb = 1;
  if (fabsl(r->lse) > DBL_MAX) {
    lse_ok = lse == (r->lse > 0 ? INFINITY : -INFINITY);
  } else {
    double scale = fmax(1.0, (double)fabsl(r->lse));
    lerr = (double)fabsl((long double)lse - r->lse);
    lb = C_BOUND * EPS * scale;
    upd(&w->lse_ratio, lerr / lb);
    upd(&fw->lse_ratio, lerr / lb);
    upd(&w->lse_eps, lerr / (EPS * scale));
    lse_ok = lerr <= lb;
  }
  CHECK(bad_sm == 0, "%s %s %s threads=%d softmax: %ld outputs outside the bound (worst %.2f of bound)", fam,
        tu_isa_names[isa], tu_algo_names[tu_algos[algo]], threads, bad_sm, fam_sm);
  CHECK(bad_ls == 0, "%s %s %s threads=%d log-softmax: %ld outputs outside the bound (worst %.2f)", fam,
        tu_isa_names[isa], tu_algo_names[tu_algos[algo]], threads, bad_ls, fam_ls);
  CHECK(lse_ok, "%s %s %s threads=%d logsumexp: %.17g vs ref %.17Lg (%.2f of bound)", fam, tu_isa_names[isa],
        tu_algo_names[tu_algos[algo]], threads, lse, r->lse, lerr / lb);
}

static void run_family(const char *fam, const double *x, size_t n, double T) {
  refs r = make_refs(x, n, T);
  memset(&fam_worst, 0, sizeof fam_worst);
  double *ysm = malloc(n * sizeof(double)), *yls = malloc(n * sizeof(double));
  double *ysm1 = malloc(n * sizeof(double)), *yls1 = malloc(n * sizeof(double));
  int cpu = tu_isa_top();
  for (int isa = 0; isa <= cpu; isa++) {
    smx_set_max_isa(tu_isas[isa]);
    for (int a = 0; a < 3; a++) {
      double lse1 = 0;
      for (int threads = 1; threads <= 2; threads++) {
        smx_options o = { tu_algos[a], T, 0, threads };
        double lse = 0;
        CHECK(smx_softmax_f64(x, ysm, n, &o) == SMX_OK, "%s softmax status", fam);
        CHECK(smx_log_softmax_f64(x, yls, n, &o) == SMX_OK, "%s log-softmax status", fam);
        CHECK(smx_logsumexp_f64(x, n, &lse, &o) == SMX_OK, "%s logsumexp status", fam);
        check_outputs(fam, isa, a, threads, x, n, &r, ysm, yls, lse);
        if (threads == 1) {
          memcpy(ysm1, ysm, n * sizeof(double));
          memcpy(yls1, yls, n * sizeof(double));
          lse1 = lse;
        } else {
          size_t diff = 0;
          for (size_t i = 0; i < n; i++) diff += !same_d(ysm[i], ysm1[i]) + !same_d(yls[i], yls1[i]);
          CHECK(diff == 0 && same_d(lse, lse1), "%s %s %s: %zu outputs differ between 1 and 2 threads", fam,
                tu_isa_names[isa], tu_algo_names[tu_algos[a]], diff);
        }
      }
    }
  }
  smx_set_max_isa(SMX_ISA_AVX512);
  printf("%-28s n=%-9zu softmax %6.3f (near max %5.2f eps) | log-softmax %6.3f | logsumexp %6.3f\n", fam, n,
         fam_worst.sm_ratio, fam_worst.sm_core, fam_worst.ls_ratio, fam_worst.lse_ratio);
  fflush(stdout);
  free(ysm); free(yls); free(ysm1); free(yls1);
}

/* lo (1 - u) + hi u: no overflow for spans beyond DBL_MAX */
static double unif(tu_rng *r, double lo, double hi) {
  double u = tu_uniform(r);
  return lo * (1.0 - u) + hi * u;
}

int main(void) {
  printf("f64: worst error per family over every ISA x algorithm x thread count, as a fraction of the bound\n");
  tu_rng rng = { 4242 };
  size_t cap = (size_t)1 << 17;
  double *x = malloc(cap * sizeof(double));
  char name[64];

  for (size_t i = 0; i < 4103; i++) x[i] = unif(&rng, -10, 10);
  run_family("uniform[-10,10]", x, 4103, 0.0);
  run_family("uniform[-10,10] T=0.37", x, 4103, 0.37);
  run_family("uniform[-10,10] T=2.5", x, 4103, 2.5);
  for (size_t i = 0; i < 4103; i++) x[i] = unif(&rng, -745, 0);
  run_family("uniform[-745,0]", x, 4103, 0.0);
  for (size_t i = 0; i < 1000; i++) x[i] = unif(&rng, -1e4, 1e4);
  run_family("uniform[-1e4,1e4]", x, 1000, 0.0);
  for (size_t i = 0; i < 3000; i++) x[i] = unif(&rng, 690, 700);
  run_family("uniform[690,700]", x, 3000, 0.0);
  run_family("uniform[690,700] T=1000", x, 3000, 1000.0);
  for (size_t i = 0; i < 777; i++) x[i] = nextafter(5.0, (i & 1) ? 6.0 : 4.0) + (double)(i % 3) * 0x1p-50;
  run_family("near-ties", x, 777, 0.0);
  for (size_t i = 0; i < 777; i++) x[i] = 3.25;
  run_family("ties", x, 777, 0.0);
  for (size_t i = 0; i < 2049; i++) x[i] = (tu_next(&rng) & 1) ? -INFINITY : unif(&rng, -10, 10);
  x[5] = 1.0;
  run_family("half -inf", x, 2049, 0.0);
  for (size_t i = 0; i < 5000; i++) x[i] = 0.0;
  x[1234] = 700.0;
  run_family("spike 700", x, 5000, 0.0);
  x[1234] = 1e300;
  run_family("spike 1e300", x, 5000, 0.0);
  for (size_t i = 0; i < 5000; i++) x[i] = -(double)(i % 800) - 0.5;
  run_family("ladder to subnormal", x, 5000, 0.0);
  for (size_t i = 0; i < 3001; i++) x[i] = unif(&rng, -1.7e308, 1.7e308);
  x[17] = DBL_MAX;
  x[18] = -DBL_MAX;
  run_family("huge +-1.7e308", x, 3001, 0.0);
  run_family("huge +-1.7e308 T=4", x, 3001, 4.0);
  run_family("huge +-1.7e308 T=1e307", x, 3001, 1e307);
  /* max/T overflows: log-sum-exp is +inf, log-softmax still finite near the max */
  for (size_t i = 0; i < 1001; i++) x[i] = unif(&rng, 1.6e308, 1.7e308);
  run_family("huge values T=1e-5", x, 1001, 1e-5);
  run_family("huge values T=0.5", x, 1001, 0.5);
  for (size_t i = 0; i < 3001; i++) x[i] = 1e300 + (double)(i % 50) * 0x1p946;
  run_family("1e300 + small steps", x, 3001, 0.0);
  for (size_t i = 0; i < 3001; i++) x[i] = -1e12 - (double)(i % 50) * 0.1;
  run_family("around -1e12", x, 3001, 0.0);
  /* log-sum-exp where max/T and log d nearly cancel */
  for (size_t i = 0; i < 100000; i++) x[i] = -log(100000.0) + unif(&rng, -1e-9, 1e-9);
  run_family("lse near 0", x, 100000, 0.0);
  /* extreme temperatures */
  for (size_t i = 0; i < 1003; i++) x[i] = unif(&rng, -10, 10) * 1e-300;
  run_family("tiny values T=1e-300", x, 1003, 1e-300);
  for (size_t i = 0; i < 1003; i++) x[i] = unif(&rng, -10, 10) * 1e-310;
  run_family("subnormal values T=1e-310", x, 1003, 1e-310);
  run_family("subnormal values T=5e-324", x, 1003, 5e-324);
  for (size_t i = 0; i < 1003; i++) x[i] = unif(&rng, -3e301, 3e301);
  run_family("uniform[-3e301,3e301] T=1e300", x, 1003, 1e300);
  run_family("uniform[-3e301,3e301] T=DBL_MAX", x, 1003, DBL_MAX);
  for (size_t i = 0; i < 1003; i++) x[i] = unif(&rng, -10, 10);
  run_family("uniform[-10,10] T=1e-3", x, 1003, 1e-3);
  run_family("uniform[-10,10] T=1e-250", x, 1003, 1e-250);
  /* slowly rising rows: the running max moves every block */
  for (size_t i = 0; i < 131072; i++) x[i] = (double)i * 1e-6 - 11.0;
  run_family("slow ramp -11", x, 131072, 0.0);
  for (size_t i = 0; i < 131072; i++) x[i] = (double)i * 1e-12;
  run_family("slow ramp 0", x, 131072, 0.0);
  for (size_t i = 0; i < 131072; i++) x[i] = (double)i * 1e-3;
  run_family("ramp 1e-3", x, 131072, 0.0);
  for (size_t i = 0; i < 999; i++) x[i] = (double)(i % 7) * 1e-310;
  run_family("subnormal", x, 999, 0.0);
  for (size_t len = 1; len <= 2 * 8 + 1; len++) {
    for (size_t i = 0; i < len; i++) x[i] = unif(&rng, -10, 10);
    snprintf(name, sizeof name, "length %zu", len);
    run_family(name, x, len, 0.0);
  }
  free(x);

  /* chunked rows: several SMX_CHUNKs, threads split a single row */
  size_t nc = 3 * ((size_t)1 << 16) + 5;
  x = malloc(nc * sizeof(double));
  for (size_t i = 0; i < nc; i++) x[i] = unif(&rng, -20, 20);
  run_family("chunked 3*2^16+5", x, nc, 0.0);
  for (size_t i = 0; i < nc; i++) x[i] = (i % 3) ? -INFINITY : unif(&rng, -20, 20);
  run_family("chunked with -inf", x, nc, 0.0);
  for (size_t i = 0; i < nc; i++) x[i] = (double)i * 1e-7;
  run_family("chunked ramp", x, nc, 0.0);
  free(x);

  /* A rescale chain: the mass of the row sits in its first chunk, and each
   * later chunk raises the maximum a little, so the running sum is rescaled
   * once per chunk while it still dominates (an online rescale whose rounding
   * compounded would show here). Also within one chunk: the rise every 64. */
  size_t nr = 24 * ((size_t)1 << 16);
  x = malloc(nr * sizeof(double));
  for (size_t i = 0; i < nr; i++) {
    size_t ch = i >> 16;
    x[i] = ch == 0 ? unif(&rng, -0.01, 0.0) : ((i & 0xffff) == 777 ? 0.75 * (double)ch : -1000.0);
  }
  run_family("rescale chain (chunks)", x, nr, 0.0);
  run_family("rescale chain (chunks) T=3", x, nr, 3.0);
  for (size_t i = 0; i < 70000; i++) x[i] = i < 40000 ? unif(&rng, -0.01, 0.0) : ((i % 64) == 5 ? 0.75 * (double)(i / 64 - 624) : -1000.0);
  run_family("rescale chain (blocks)", x, 70000, 0.0);
  free(x);

  const char *e = getenv("SMX_TEST_LONG_LOG2");
  int lg = e ? atoi(e) : 24;
  if (lg > 0) {
    size_t nl = (size_t)1 << lg;
    x = malloc(nl * sizeof(double));
    for (size_t i = 0; i < nl; i++) x[i] = tu_normal(&rng) + unif(&rng, -0.5, 0.5);
    snprintf(name, sizeof name, "N(0,1) 2^%d", lg);
    run_family(name, x, nl, 0.0);
    free(x);
  }

  printf("worst error per ISA x algorithm over all families (ratio = err/bound, C = %g; eps = 2^-52)\n", C_BOUND);
  printf("softmax core = worst relative error in eps over entries with |t| < 1\n");
  printf("%-7s %-10s | %-26s | %-18s | %-18s\n", "isa", "algo", "softmax ratio/eps/core", "log-softmax", "logsumexp");
  for (int isa = 0; isa <= tu_isa_top(); isa++)
    for (int a = 0; a < 3; a++) {
      worst *w = &table[isa][a];
      printf("%-7s %-10s | %7.3f %8.3f %7.3f   | %7.3f %8.3f   | %7.3f %8.3f\n", tu_isa_names[isa],
             tu_algo_names[tu_algos[a]], w->sm_ratio, w->sm_eps, w->sm_core, w->ls_ratio, w->ls_eps, w->lse_ratio,
             w->lse_eps);
    }
  return tu_finish("test_accuracy_f64");
}
