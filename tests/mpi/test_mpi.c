/*
 * smx_mpi against the single-process engine, run under mpirun with 1 to 4
 * ranks (tests/CMakeLists.txt). Every rank builds the same whole rows, takes
 * its slice under several splits (even, uneven, empty slices, everything on
 * one rank) and checks the sharded results: tokens, top-k indices and
 * special values equal to the engine's; log-sum-exp, softmax, log-softmax,
 * top-k values, losses and gradients within smx_mpi.h's bounds of a long
 * double reference or of the engine. Then the errors: a row count, k or
 * pointer wrong on one rank makes every rank return the same error.
 */
#include <mpi.h>

#include "../common/test_util.h"
#include "smx/smx_mpi.h"

#define EPS 0x1p-23
static int rank_, size_;

/* global columns [off[r], off[r+1]) on rank r, for split scheme s */
static void split(size_t V, int s, size_t *off) {
  off[0] = 0;
  for (int r = 0; r < size_; r++) {
    size_t len;
    if (s == 0) len = V / (size_t)size_ + ((size_t)r < V % (size_t)size_);
    else if (s == 1) len = (size_t)(r + 1) * V * 2 / ((size_t)size_ * (size_t)(size_ + 1));  /* uneven */
    else if (s == 2) len = r == 0 && size_ > 1 ? 0 : V / (size_t)(size_ > 1 ? size_ - 1 : 1); /* rank 0 empty */
    else len = r == size_ - 1 ? V : 0;                                                          /* one rank */
    off[r + 1] = off[r] + len;
  }
  off[size_] = V;   /* the last rank takes the rest */
  for (int r = size_; r > 0; r--)
    if (off[r - 1] > off[r]) off[r - 1] = off[r];
}

/* rows: random, then special rows */
enum { NSPECIAL = 7 };
static void fill(float *x, size_t R, size_t V, uint64_t seed) {
  tu_rng g = { seed };
  for (size_t i = 0; i < R * V; i++) x[i] = tu_normal(&g) * 4.0f;
  if (R < NSPECIAL + 1) return;
  float *s = x + (R - NSPECIAL) * V;
  s[V / 2] = NAN;                                           /* NaN row */
  for (size_t j = 0; j < V; j++) s[V + j] = -INFINITY;      /* all -inf */
  for (size_t j = 0; j < V; j += 2) s[2 * V + j] = -INFINITY;   /* half masked */
  s[3 * V + V / 3] = INFINITY;                              /* +inf twice */
  s[3 * V + V - 1] = INFINITY;
  for (size_t j = 0; j < V; j++) s[4 * V + j] = 1.0f;        /* ties */
  s[5 * V + V / 4] = 80.0f;                                 /* spike */
  for (size_t j = 0; j < V; j++) s[6 * V + j] = (float)j * 1e-3f + 3000.0f;   /* large, close */
}

static int same_special(float a, float b) {
  if (a != a || b != b) return a != a && b != b;
  if (isinf(a) || isinf(b)) return a == b;
  return 1;
}

static long double ref_lse(const float *x, size_t n, double T, long double *mo) {
  long double m = -INFINITY, s = 0;
  for (size_t j = 0; j < n; j++) if (x[j] > m) m = x[j];
  *mo = m;
  if (!(m > -INFINITY) || m == INFINITY) return m;
  for (size_t j = 0; j < n; j++) s += expl(((long double)x[j] - m) / T);
  return m / T + logl(s);
}

static void test_norm(size_t R, size_t V, int s, double T, uint32_t flags) {
  size_t off[9];
  split(V, s, off);
  size_t c0 = off[rank_], lc = off[rank_ + 1] - c0;
  float *x = malloc(R * V * 4), *y = malloc(R * V * 4 + 4), *yl = malloc(R * (lc + 1) * 4), *o = malloc(R * 4),
        *oe = malloc(R * 4);
  fill(x, R, V, 1000 + V);
  smx_options opt = { SMX_ALGO_AUTO, T, flags, 1, NULL };
  /* log-sum-exp */
  CHECK(smx_mpi_logsumexp_rows_f32(MPI_COMM_WORLD, x + c0, V, o, R, lc, &opt) == SMX_OK, "lse");
  smx_logsumexp_rows_f32(x, V, oe, R, V, &opt);
  for (size_t r = 0; r < R; r++) {
    long double m, ref = ref_lse(x + r * V, V, T, &m);
    if (!isfinite(oe[r]) || oe[r] != oe[r]) {
      CHECK(same_special(o[r], oe[r]) && (isnan(oe[r]) == isnan(o[r])), "lse special row %zu: %g vs %g", r, o[r], oe[r]);
      continue;
    }
    long double err = fabsl(o[r] - ref), b = 6 * EPS * fmaxl(1, fabsl(ref));
    CHECK(err <= b, "lse V=%zu s=%d T=%g row %zu: err %Lg > %Lg", V, s, T, r, err, b);
  }
  /* softmax and log-softmax of the slice */
  for (int lg = 0; lg < 2; lg++) {
    smx_status st = lg ? smx_mpi_log_softmax_rows_f32(MPI_COMM_WORLD, x + c0, V, yl, lc + 1, R, lc, &opt)
                       : smx_mpi_softmax_rows_f32(MPI_COMM_WORLD, x + c0, V, yl, lc + 1, R, lc, &opt);
    CHECK(st == SMX_OK, "softmax %d: %d", lg, st);
    if (lg) smx_log_softmax_rows_f32(x, V, y, V, R, V, &opt);
    else smx_softmax_rows_f32(x, V, y, V, R, V, &opt);
    for (size_t r = 0; r < R; r++) {
      long double m, lse = ref_lse(x + r * V, V, T, &m);
      for (size_t j = 0; j < lc; j++) {
        float a = yl[r * (lc + 1) + j], e = y[r * V + c0 + j];
        if (!isfinite(e) || !isfinite(lse)) {
          CHECK(same_special(a, e) && a == a ? a == e : e != e, "softmax %d special r%zu j%zu: %g vs %g", lg, r, j, a, e);
          continue;
        }
        long double xv = x[r * V + c0 + j], t = (xv - m) / T, rl = xv / T - lse;
        if (lg) {
          CHECK(fabsl(a - rl) <= 6 * EPS * fmaxl(1, fabsl(rl)), "log_softmax r%zu j%zu: %g vs %Lg", r, j, a, rl);
        } else {
          long double ref = expl(rl);
          if (ref >= FLT_MIN)
            CHECK(fabsl(a - ref) <= (7 + fabsl(t) / 2) * EPS * ref, "softmax V=%zu r%zu j%zu: %g vs %Lg", V, r, j, a, ref);
          else
            CHECK(a >= 0 && a < FLT_MIN * 1.0001f, "softmax tiny r%zu: %g", r, a);
        }
        if (size_ == 1 && !lg) CHECK(a == e, "softmax one rank not bitwise r%zu j%zu: %a vs %a", r, j, a, e);
      }
    }
  }
  free(x), free(y), free(yl), free(o), free(oe);
}

static void test_topk(size_t R, size_t V, int s, size_t k, double T, uint32_t flags) {
  size_t off[9];
  split(V, s, off);
  size_t c0 = off[rank_], lc = off[rank_ + 1] - c0;
  float *x = malloc(R * V * 4), *v = malloc(R * k * 4), *ve = malloc(R * k * 4);
  int64_t *i = malloc(R * k * 8), *ie = malloc(R * k * 8);
  fill(x, R, V, 7 + V);
  smx_options opt = { SMX_ALGO_AUTO, T, flags, 1, NULL };
  CHECK(smx_mpi_softmax_topk_rows_f32(MPI_COMM_WORLD, x + c0, V, v, i, R, lc, k, &opt) == SMX_OK, "topk");
  smx_softmax_topk_rows_f32(x, V, ve, ie, R, V, k, &opt);
  for (size_t q = 0; q < R * k; q++) {
    CHECK(i[q] == ie[q], "topk V=%zu s=%d k=%zu index %zu: %lld vs %lld", V, s, k, q, (long long)i[q], (long long)ie[q]);
    if (!isfinite(ve[q]) || ve[q] == 0.0f) {
      CHECK((v[q] != v[q]) == (ve[q] != ve[q]) && (ve[q] != ve[q] || v[q] == ve[q]), "topk special %zu: %g vs %g", q, v[q], ve[q]);
      continue;
    }
    /* ref: the engine within its bound; ours within 7 eps + |t|/2 of the ref */
    long double m, lse = ref_lse(x + (q / k) * V, V, T, &m), xv = x[(q / k) * V + ie[q]];
    long double ref = expl(xv / T - lse), t = (xv - m) / T;
    if (ref >= FLT_MIN) CHECK(fabsl(v[q] - ref) <= (7 + fabsl(t) / 2) * EPS * ref, "topk value %zu: %g vs %Lg", q, v[q], ref);
  }
  free(x), free(v), free(ve), free(i), free(ie);
}

static void test_sample(size_t R, size_t V, int s, smx_sample_params p, smx_status want) {
  size_t off[9];
  split(V, s, off);
  size_t c0 = off[rank_], lc = off[rank_ + 1] - c0;
  float *x = malloc(R * V * 4);
  int64_t *t = malloc(R * 8), *te = malloc(R * 8);
  fill(x, R, V, 99 + V);
  for (uint64_t step = 0; step < 3; step++) {
    smx_status st = smx_mpi_sample_rows_f32(MPI_COMM_WORLD, x + c0, V, t, R, lc, &p, 42 + step, step, NULL);
    CHECK(st == want, "sample status %d, want %d (T=%g k=%zu p=%g minp=%g m=%d)", st, want, p.temperature, p.top_k,
          p.top_p, p.min_p, p.method);
    if (st != SMX_OK) break;
    smx_sample_rows_f32(x, V, te, R, V, &p, 42 + step, step, NULL);
    for (size_t r = 0; r < R; r++)
      CHECK(t[r] == te[r], "sample V=%zu s=%d T=%g k=%zu p=%g minp=%g greedy=%d row %zu: %lld vs %lld", V, s,
            p.temperature, p.top_k, p.top_p, p.min_p, p.greedy, r, (long long)t[r], (long long)te[r]);
  }
  free(x), free(t), free(te);
}

/* in_place: the gradient over the logits; null_empty: a rank with an empty slice passes grad = NULL (allowed
 * there; the other ranks pass theirs) */
static void test_xent(size_t R, size_t V, int s, tu_loss_opts o, int in_place, int null_empty) {
  size_t off[9];
  split(V, s, off);
  size_t c0 = off[rank_], lc = off[rank_ + 1] - c0, nl = o.e.reduction == SMX_REDUCTION_NONE ? R : 1;
  float *x = malloc(R * V * 4), *xs = malloc(R * (lc + 1) * 4 + 4), *g = malloc(R * V * 4), *gl = malloc(R * (lc + 1) * 4 + 4);
  float *l = malloc(R * 4), *le = malloc(R * 4), *z = malloc(R * 4), *ze = malloc(R * 4);
  int64_t *tg = malloc(R * 8);
  fill(x, R, V, 5 + V);
  tu_rng rg = { 3 };
  for (size_t r = 0; r < R; r++) tg[r] = (int64_t)(tu_next(&rg) % V);
  tg[0] = o.e.ignore_index;
  if (R > 3) tg[3] = o.e.ignore_index;
  for (size_t r = 0; r < R; r++) memcpy(xs + r * (lc + 1), x + r * V + c0, lc * 4);
  float *gp = in_place ? xs : null_empty && lc == 0 ? NULL : gl;
  smx_status xs_st = smx_mpi_cross_entropy_f32(MPI_COMM_WORLD, xs, lc + 1, tg, l, gp, lc + 1, z, R, lc, tu_lo(&o));
  CHECK(xs_st == SMX_OK, "xent V=%zu s=%d (%zu columns here, grad %s): status %d", V, s, lc, gp ? "given" : "NULL",
        (int)xs_st);
  CHECK(smx_cross_entropy_f32(x, V, tg, le, g, V, ze, R, V, tu_lo(&o)) == SMX_OK, "xent engine");
  for (size_t r = 0; r < nl; r++) {
    if (!isfinite(le[r])) { CHECK((l[r] != l[r]) == (le[r] != le[r]) && (le[r] != le[r] || l[r] == le[r]), "loss special %zu: %g vs %g", r, l[r], le[r]); continue; }
    CHECK(fabs((double)l[r] - le[r]) <= 10 * EPS * fmax(1, fabs(le[r])), "loss V=%zu s=%d red=%d r%zu: %.9g vs %.9g", V, s,
          o.e.reduction, r, l[r], le[r]);
  }
  size_t kept = 0;
  for (size_t r = 0; r < R; r++) kept += tg[r] != o.e.ignore_index;
  double T0 = o.o.temperature == 0 ? 1 : o.o.temperature, gs = o.e.grad_scale == 0 ? 1 : o.e.grad_scale;
  double st = gs / T0 / (o.e.reduction == SMX_REDUCTION_MEAN ? (double)kept : 1.0);
  for (size_t r = 0; r < R; r++) {
    if (!isfinite(ze[r])) { CHECK((z[r] != z[r]) == (ze[r] != ze[r]) && (ze[r] != ze[r] || z[r] == ze[r]), "lse special %zu", r); continue; }
    CHECK(fabs((double)z[r] - ze[r]) <= 10 * EPS * fmax(1, fabs(ze[r])), "xent lse r%zu: %.9g vs %.9g", r, z[r], ze[r]);
    long double m = -INFINITY;
    for (size_t j = 0; j < V; j++) if (x[r * V + j] > m) m = x[r * V + j];
    double T = o.o.temperature == 0 ? 1 : o.o.temperature;
    for (size_t j = 0; j < lc; j++) {
      float a = gp[r * (lc + 1) + j], e = g[r * V + c0 + j];
      if (!isfinite(e)) { CHECK((a != a) == (e != e) && (e != e || a == e), "grad special r%zu j%zu: %g vs %g", r, j, a, e); continue; }
      if (a == e) { CHECK(1, " "); continue; }
      double t = fabs(((double)x[r * V + c0 + j] - (double)m) / T);
      /* relative to the terms, which cancel with label smoothing */
      double p = exp((double)x[r * V + c0 + j] / T - (double)ze[r]), zf = 1 + 2 * o.e.z_loss * ze[r];
      double comp = fabs(st) * (p * fabs(zf) + o.e.label_smoothing / (double)V);
      double tol = (16 + t) * EPS * (fabs(e) + comp) + 1e-37;
      CHECK(fabs((double)a - e) <= tol, "grad V=%zu s=%d r%zu j%zu: %.9g vs %.9g", V, s, r, j, a, e);
    }
  }
  free(x), free(xs), free(g), free(gl), free(l), free(le), free(z), free(ze), free(tg);
}

/* errors: every rank returns the same status, nobody hangs */
static void test_errors(void) {
  size_t R = 4, V = 10, off[9];
  split(V, 0, off);
  size_t c0 = off[rank_], lc = off[rank_ + 1] - c0;
  float x[40], o[8], v[16];
  int64_t i[16];
  for (int j = 0; j < 40; j++) x[j] = (float)j;
  size_t rows = rank_ == size_ - 1 && size_ > 1 ? R + 1 : R;   /* the last rank disagrees */
  smx_status st = smx_mpi_logsumexp_rows_f32(MPI_COMM_WORLD, x + c0, V, o, rows, lc, NULL);
  CHECK(st == (size_ > 1 ? SMX_E_INVALID_ARG : SMX_OK), "row mismatch: %d", st);
  st = smx_mpi_softmax_rows_f32(MPI_COMM_WORLD, x + c0, V, rank_ == 0 ? NULL : x + c0, V, R, lc, NULL);
  CHECK(st == SMX_E_INVALID_ARG, "NULL y on rank 0 (which has columns): %d", st);
  size_t k = rank_ == size_ - 1 && size_ > 1 ? 3 : 2;
  st = smx_mpi_softmax_topk_rows_f32(MPI_COMM_WORLD, x + c0, V, v, i, R, lc, k, NULL);
  CHECK(st == (size_ > 1 ? SMX_E_INVALID_ARG : SMX_OK), "k mismatch: %d", st);
  st = smx_mpi_softmax_topk_rows_f32(MPI_COMM_WORLD, x + c0, V, v, i, R, lc, V + 1, NULL);
  CHECK(st == SMX_E_INVALID_ARG, "k above the row: %d", st);
  smx_sample_params p = { 1.0, 0, 0.9, 0, 0, SMX_SAMPLE_GUMBEL_MAX, 0 };
  int64_t t[4];
  CHECK(smx_mpi_sample_rows_f32(MPI_COMM_WORLD, x + c0, V, t, R, lc, &p, 1, 0, NULL) == SMX_OK, "top-p alone");
  p.top_p = 0;
  p.method = SMX_SAMPLE_MULTINOMIAL;
  CHECK(smx_mpi_sample_rows_f32(MPI_COMM_WORLD, x + c0, V, t, R, lc, &p, 1, 0, NULL) == SMX_E_UNSUPPORTED, "multinomial");
  p.greedy = 1;
  CHECK(smx_mpi_sample_rows_f32(MPI_COMM_WORLD, x + c0, V, t, R, lc, &p, 1, 0, NULL) == SMX_OK, "greedy multinomial");
  int64_t tg[4] = { 0, 1, 2, rank_ == 0 && size_ > 1 ? 3 : 4 };   /* targets differ on rank 0 */
  float loss;
  st = smx_mpi_cross_entropy_f32(MPI_COMM_WORLD, x + c0, V, tg, &loss, NULL, 0, NULL, R, lc, NULL);
  CHECK(st == (size_ > 1 ? SMX_E_INVALID_ARG : SMX_OK), "targets mismatch: %d", st);
  tg[3] = (int64_t)V;
  st = smx_mpi_cross_entropy_f32(MPI_COMM_WORLD, x + c0, V, tg, &loss, NULL, 0, NULL, R, lc, NULL);
  CHECK(st == SMX_E_INVALID_ARG, "target out of range: %d", st);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  size_t Vs[] = { 1, 5, 33, 1000, 70001 };
  for (int s = 0; s < 4; s++)
    for (size_t vi = 0; vi < sizeof Vs / sizeof Vs[0]; vi++) {
      size_t V = Vs[vi], R = V > 5000 ? 9 : 12;
      test_norm(R, V, s, 1.0, 0);
      if (V >= 5) {
        test_norm(R, V, s, 0.37, SMX_FLAG_MASKED_ROW_NAN);
        test_topk(R, V, s, 1, 1.0, 0);
        test_topk(R, V, s, V < 5 ? V : 5, 2.0, SMX_FLAG_MASKED_ROW_NAN);
        smx_sample_params p = { 1.0, 0, 0, 0, 0, SMX_SAMPLE_GUMBEL_MAX, 5 };
        test_sample(R, V, s, p, SMX_OK);
        p.temperature = 0.7; p.min_p = 0.05;
        test_sample(R, V, s, p, SMX_OK);
        p.top_p = 0.9; p.min_p = 0;               /* top-p over the whole row */
        test_sample(R, V, s, p, SMX_OK);
        p.top_p = 0.5; p.min_p = 0.02;
        test_sample(R, V, s, p, SMX_OK);
        p.top_p = 0; p.top_k = 4; p.min_p = 0;
        test_sample(R, V, s, p, SMX_OK);
        p.top_p = 0.8; p.min_p = 0.01;
        test_sample(R, V, s, p, SMX_OK);
        p.greedy = 1; p.method = SMX_SAMPLE_MULTINOMIAL;
        test_sample(R, V, s, p, SMX_OK);
        tu_loss_opts xo = TU_LOSS_OPTS_INIT;
        test_xent(R, V, s, xo, 0, 0);
        test_xent(R, V, s, xo, 0, 1);
        xo.e.reduction = SMX_REDUCTION_NONE; xo.e.label_smoothing = 0.1; xo.e.z_loss = 1e-3; xo.o.temperature = 2.0;
        test_xent(R, V, s, xo, 1, 0);
        xo.e.reduction = SMX_REDUCTION_SUM; xo.e.grad_scale = 0.5; xo.o.flags = SMX_FLAG_MASKED_ROW_NAN; xo.e.ignore_index = 2;
        test_xent(R, V, s, xo, 0, 1);
      }
    }
  test_errors();
  long fails = tu_fail, all_fails = 0;
  MPI_Allreduce(&fails, &all_fails, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
  if (rank_ == 0) printf("test_mpi on %d ranks: %ld checks on rank 0, %ld failed on all ranks\n", size_, tu_pass, all_fails);
  MPI_Finalize();
  return all_fails ? 1 : 0;
}
