/*
 * The feature scores' C contract (smx_features.h): argument checks that
 * write nothing, the edge cases of the issue (duplicate rows, k > bank, a
 * class of one sample, a singular covariance under each policy, a wrong W,
 * NaN features, an empty set), streaming in batches, thread-count
 * independence, save / load and refused files. The values themselves are
 * checked against float64 NumPy/SciPy references in
 * tests/python/test_features_ref.py. Methods this build lacks are skipped
 * with a message, and must say SMX_E_NOT_BUILT.
 */
#include "../common/test_util.h"
#include "smx/smx_features.h"

#define F 8
#define C 3
#define N 120

static double X[N * F], Wt[C * F], bias[C];
static int64_t Y[N];

static void make_data(void) {
  tu_rng r = { 42 };
  for (size_t i = 0; i < N; i++) {
    Y[i] = (int64_t)(i % C);
    for (size_t j = 0; j < F; j++) X[i * F + j] = fabs((double)tu_normal(&r)) + (j == (size_t)Y[i] ? 2.0 : 0.0);
  }
  for (size_t i = 0; i < C * F; i++) Wt[i] = tu_normal(&r);
  for (size_t i = 0; i < C; i++) bias[i] = 0.5 * tu_normal(&r);
}

static smx_feature_config base_cfg(void) {
  smx_feature_config c;
  memset(&c, 0, sizeof c);
  c.features = F;
  c.classes = C;
  c.k = 5;
  c.vim_dim = 4;
  c.weight = Wt;
  c.bias = bias;
  c.ldw = F;
  return c;
}

static int built(smx_feature_method m) {
  const char *why = smx_feature_method_requires(m);
  if (why) printf("skip %s: %s\n", smx_feature_method_name(m), why);
  return why == NULL;
}

static smx_feature_model *fit(const smx_feature_config *c, size_t batch) {
  smx_feature_model *m = NULL;
  if (smx_feature_model_create(c, &m) != SMX_OK) return NULL;
  for (size_t i = 0; i < N; i += batch) {
    size_t n = N - i < batch ? N - i : batch;
    if (smx_feature_model_fit_batch_f64(m, X + i * F, F, c->classes ? Y + i : NULL, n) != SMX_OK) break;
  }
  if (smx_feature_model_finish(m, NULL) != SMX_OK) {
    smx_feature_model_destroy(m);
    return NULL;
  }
  return m;
}

static void test_args(void) {
  smx_feature_config c = base_cfg();
  smx_feature_model *m = NULL;
  c.features = 0;
  CHECK(smx_feature_model_create(&c, &m) == SMX_E_INVALID_ARG && !m, "F = 0");
  c = base_cfg();
  c.vim_dim = F;
  CHECK(smx_feature_model_create(&c, &m) == SMX_E_INVALID_ARG && !m, "vim_dim = F");
  c = base_cfg();
  c.react_percentile = 101;
  CHECK(smx_feature_model_create(&c, &m) == SMX_E_INVALID_ARG, "percentile 101");
  c = base_cfg();
  c.head_rows = C + 1;   /* W of the wrong shape: its rows are not the classes */
  CHECK(smx_feature_model_create(&c, &m) == SMX_E_INVALID_ARG, "W rows != classes");
  c = base_cfg();
  c.ldw = F - 1;
  CHECK(smx_feature_model_create(&c, &m) == SMX_E_INVALID_ARG, "ldw < F");
  double badw[C * F];
  memcpy(badw, Wt, sizeof badw);
  badw[5] = NAN;
  c = base_cfg();
  c.weight = badw;
  CHECK(smx_feature_model_create(&c, &m) == SMX_E_INVALID_ARG, "NaN in W");
  c = base_cfg();
  c.weight = NULL;
  c.bias = NULL;
  c.methods = SMX_FEAT_BIT(SMX_FEAT_REACT);
  CHECK(smx_feature_model_create(&c, &m) == SMX_E_INVALID_ARG, "react without W");
  c = base_cfg();
  c.classes = 0;
  c.head_rows = C;
  c.methods = SMX_FEAT_BIT(SMX_FEAT_MAHALANOBIS);
  CHECK(smx_feature_model_create(&c, &m) == (built(SMX_FEAT_MAHALANOBIS) ? SMX_E_INVALID_ARG : SMX_E_NOT_BUILT) ||
        smx_feature_model_create(&c, &m) == SMX_E_INVALID_ARG, "mahalanobis without labels");
  const char *nm[] = { "mahalanobis", "knn", "vim", "residual", "react" };
  for (int i = 0; i < 5; i++) {
    smx_feature_method k;
    CHECK(smx_feature_method_from_name(nm[i], &k) == SMX_OK && !strcmp(smx_feature_method_name(k), nm[i]), "%s", nm[i]);
  }
  smx_feature_method k;
  CHECK(smx_feature_method_from_name("mds", &k) == SMX_E_INVALID_ARG, "unknown name");
  CHECK(!strcmp(smx_status_string(SMX_E_NOT_BUILT), "not built: an optional library was missing when smx was built"),
        "status string");
  CHECK(smx_status_string(SMX_E_SINGULAR) != NULL && strcmp(smx_status_string(SMX_E_SINGULAR), "unknown status"), "singular");
}

/* A bad batch adds nothing; labels in range; nothing after finish. */
static void test_fit_checks(void) {
  smx_feature_config c = base_cfg();
  c.methods = SMX_FEAT_BIT(SMX_FEAT_REACT);
  smx_feature_model *m = NULL;
  CHECK(smx_feature_model_create(&c, &m) == SMX_OK, "create");
  if (!m) return;
  double row[2 * F];
  memcpy(row, X, sizeof row);
  row[F + 3] = NAN;
  int64_t y2[2] = { 0, 1 };
  CHECK(smx_feature_model_fit_batch_f64(m, row, F, y2, 2) == SMX_E_INVALID_ARG, "NaN row refused");
  int64_t bad[2] = { 0, C };
  CHECK(smx_feature_model_fit_batch_f64(m, X, F, bad, 2) == SMX_E_INVALID_ARG, "label C refused");
  bad[1] = -1;
  CHECK(smx_feature_model_fit_batch_f64(m, X, F, bad, 2) == SMX_E_INVALID_ARG, "label -1 refused");
  CHECK(smx_feature_model_fit_batch_f64(m, X, F, NULL, 2) == SMX_E_INVALID_ARG, "labels missing");
  CHECK(smx_feature_model_fit_batch_f64(m, X, F - 1, y2, 2) == SMX_E_INVALID_ARG, "ldx < F");
  CHECK(smx_feature_model_finish(m, NULL) == SMX_E_INVALID_ARG, "no rows: finish refused");
  CHECK(smx_feature_model_fit_batch_f64(m, X, F, y2, 2) == SMX_OK, "good batch");
  CHECK(smx_feature_model_finish(m, NULL) == SMX_OK, "finish");
  smx_feature_info info;
  CHECK(smx_feature_model_info(m, &info) == SMX_OK && info.rows == 2, "only the good batch counted: %zu", info.rows);
  CHECK(smx_feature_model_fit_batch_f64(m, X, F, y2, 2) == SMX_E_INVALID_ARG, "fit after finish");
  double out[3] = { 7, 7, 7 };
  double q[2 * F];
  memcpy(q, X, sizeof q);
  q[4] = NAN;
  CHECK(smx_feature_score_f64(m, SMX_FEAT_REACT, q, F, NULL, 0, 2, out, NULL) == SMX_E_INVALID_ARG && out[0] == 7 &&
        out[1] == 7, "NaN feature: nothing written");
  CHECK(smx_feature_score_f64(m, SMX_FEAT_REACT, q, F, NULL, 0, 0, out, NULL) == SMX_OK && out[0] == 7,
        "empty set: fine, nothing written");
  CHECK(smx_feature_score_f64(m, SMX_FEAT_KNN, X, F, NULL, 0, 1, out, NULL) != SMX_OK, "method not fitted");
  double both[2 * F];
  memcpy(both, X, sizeof both);
  CHECK(smx_feature_score_f64(m, SMX_FEAT_REACT, both, F, NULL, 0, 1, both + 3, NULL) == SMX_E_INVALID_ARG &&
        both[3] == X[3], "out overlaps x: refused, nothing written");
  smx_feature_model_destroy(m);
}

static void same_for_threads(smx_feature_model *m, smx_feature_method me, const char *what) {
  double a[N], b[N];
  smx_options o;
  memset(&o, 0, sizeof o);
  int th[] = { 1, 2, 7 };
  for (int t = 0; t < 3; t++) {
    o.threads = th[t];
    smx_status s = smx_feature_score_f64(m, me, X, F, NULL, 0, N, t ? b : a, &o);
    CHECK(s == SMX_OK, "%s threads %d: %s", what, th[t], smx_status_string(s));
    if (t) CHECK(!memcmp(a, b, sizeof a), "%s: threads %d differ from 1", what, th[t]);
  }
}

static void test_methods(void) {
  for (int me = 1; me <= 5; me++) {
    smx_feature_config c = base_cfg();
    c.methods = SMX_FEAT_BIT(me);
    smx_feature_model *m = NULL;
    if (!built((smx_feature_method)me)) {
      CHECK(smx_feature_model_create(&c, &m) == SMX_E_NOT_BUILT, "explicit unbuilt method: NOT_BUILT");
      continue;
    }
    m = fit(&c, N);
    smx_feature_model *m7 = fit(&c, 7);   /* the same rows in batches of 7 */
    CHECK(m && m7, "%s fitted", smx_feature_method_name(me));
    if (!m || !m7) { smx_feature_model_destroy(m); smx_feature_model_destroy(m7); continue; }
    same_for_threads(m, (smx_feature_method)me, smx_feature_method_name(me));
    double a[N], b[N];
    CHECK(smx_feature_score_f64(m, me, X, F, NULL, 0, N, a, NULL) == SMX_OK, "score");
    CHECK(smx_feature_score_f64(m7, me, X, F, NULL, 0, N, b, NULL) == SMX_OK, "score batches");
    double worst = 0;
    for (int i = 0; i < N; i++) worst = fmax(worst, fabs(a[i] - b[i]) / fmax(1.0, fabs(a[i])));
    CHECK(worst < 1e-12, "%s: one batch vs batches of 7 differ by %g", smx_feature_method_name(me), worst);
    /* save / load: the same scores bit for bit */
    char path[] = "/tmp/smx_featXXXXXX";
    int fd = mkstemp(path);
    close(fd);
    CHECK(smx_feature_model_save(m, path) == SMX_OK, "save");
    smx_feature_model *l = NULL;
    CHECK(smx_feature_model_load(path, 0, &l) == SMX_OK, "load");
    if (l) {
      CHECK(smx_feature_score_f64(l, me, X, F, NULL, 0, N, b, NULL) == SMX_OK && !memcmp(a, b, sizeof a),
            "%s: loaded model scores the same", smx_feature_method_name(me));
      smx_feature_model_destroy(l);
    }
    /* refused files: truncated, another version, one flipped byte, one byte more */
    FILE *f = fopen(path, "rb");
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *buf = malloc((size_t)len + 1);
    CHECK(fread(buf, 1, (size_t)len, f) == (size_t)len, "read back");
    fclose(f);
    struct { long n; long flip; unsigned char v; const char *what; } cases[] = {
      { len - 1, -1, 0, "truncated" }, { 100, -1, 0, "truncated header+" }, { len, 8, 2, "version 2" },
      { len, len / 2, 0x55, "flipped byte" }, { len + 1, -1, 0, "trailing byte" }, { 10, -1, 0, "10 bytes" },
    };
    for (size_t t = 0; t < sizeof cases / sizeof cases[0]; t++) {
      unsigned char save = buf[cases[t].flip >= 0 ? cases[t].flip : 0];
      if (cases[t].flip >= 0) buf[cases[t].flip] ^= cases[t].v;
      buf[len] = 0;
      f = fopen(path, "wb");
      fwrite(buf, 1, (size_t)cases[t].n, f);
      fclose(f);
      l = (smx_feature_model *)1;
      smx_status s = smx_feature_model_load(path, 0, &l);
      CHECK(s == SMX_E_PARSE && l == (smx_feature_model *)1, "%s: %s file refused (%s)", smx_feature_method_name(me),
            cases[t].what, smx_status_string(s));
      if (cases[t].flip >= 0) buf[cases[t].flip] = save;
    }
    free(buf);
    unlink(path);
    CHECK(smx_feature_model_load("/nonexistent/x.smxf", 0, &l) == SMX_E_IO, "missing file");
    smx_feature_model_destroy(m);
    smx_feature_model_destroy(m7);
  }
}

/* kNN: duplicate training rows tie; k larger than the bank is refused. */
static void test_knn_edges(void) {
  if (!built(SMX_FEAT_KNN)) return;
  smx_feature_config c;
  memset(&c, 0, sizeof c);
  c.features = 2;
  c.k = 3;
  c.methods = SMX_FEAT_BIT(SMX_FEAT_KNN);
  smx_feature_model *m = NULL;
  double bank[] = { 1, 0, 1, 0, 1, 0, 0, 1, 0, 2 };   /* three copies of (1,0), (0,1) twice over */
  CHECK(smx_feature_model_create(&c, &m) == SMX_OK, "create");
  CHECK(smx_feature_model_fit_batch_f64(m, bank, 2, NULL, 5) == SMX_OK, "fit");
  CHECK(smx_feature_model_finish(m, NULL) == SMX_OK, "finish");
  double q[] = { 3, 0, 0, 5, 1, 1, 0, 0 }, out[4];
  CHECK(smx_feature_score_f64(m, SMX_FEAT_KNN, q, 2, NULL, 0, 4, out, NULL) == SMX_OK, "score");
  CHECK(out[0] == 0.0, "3rd nearest of (1,0) among three copies: 0, got %g", out[0]);
  CHECK(fabs(out[1] + 2.0) < 1e-12, "(0,1) has only two copies: the 3rd is at squared distance 2, got %g", out[1]);
  CHECK(fabs(out[2] + (2.0 - sqrt(2.0))) < 1e-7, "diagonal: %g", out[2]);
  CHECK(fabs(out[3] + 1.0) < 1e-12, "a zero query stays zero: distance 1, got %g", out[3]);
  smx_feature_model_destroy(m);
  c.k = 6;   /* k > bank: refused at finish, never clamped */
  CHECK(smx_feature_model_create(&c, &m) == SMX_OK, "create");
  CHECK(smx_feature_model_fit_batch_f64(m, bank, 2, NULL, 5) == SMX_OK, "fit");
  CHECK(smx_feature_model_finish(m, NULL) == SMX_E_INVALID_ARG, "k = 6 > 5 rows refused");
  CHECK(smx_feature_model_fit_batch_f64(m, bank, 2, NULL, 1) == SMX_OK && smx_feature_model_finish(m, NULL) == SMX_OK,
        "one row more: finish works");
  smx_feature_model_destroy(m);
}

/* Mahalanobis: a class of one sample; a singular covariance under each policy. */
static void test_covariance(void) {
  if (!built(SMX_FEAT_MAHALANOBIS)) return;
  smx_feature_config c = base_cfg();
  c.methods = SMX_FEAT_BIT(SMX_FEAT_MAHALANOBIS);
  int64_t y[N];
  memcpy(y, Y, sizeof y);
  for (size_t i = 0; i < N; i++)
    if (y[i] == 2) y[i] = 1;
  y[17] = 2;   /* class 2: one sample */
  smx_feature_model *m = NULL;
  CHECK(smx_feature_model_create(&c, &m) == SMX_OK && smx_feature_model_fit_batch_f64(m, X, F, y, N) == SMX_OK &&
        smx_feature_model_finish(m, NULL) == SMX_OK, "class of one sample fits");
  double out;
  CHECK(smx_feature_score_f64(m, SMX_FEAT_MAHALANOBIS, X + 17 * F, F, NULL, 0, 1, &out, NULL) == SMX_OK &&
        fabs(out) < 1e-9, "its own sample is at distance 0: %g", out);
  smx_feature_model_destroy(m);
  /* a class with no sample: refused */
  for (size_t i = 0; i < N; i++) y[i] = Y[i] == 2 ? 1 : Y[i];
  CHECK(smx_feature_model_create(&c, &m) == SMX_OK && smx_feature_model_fit_batch_f64(m, X, F, y, N) == SMX_OK &&
        smx_feature_model_finish(m, NULL) == SMX_E_INVALID_ARG, "empty class refused");
  smx_feature_model_destroy(m);
  /* singular: column 7 = column 0 + column 1 */
  static double Z[N * F];
  memcpy(Z, X, sizeof Z);
  for (size_t i = 0; i < N; i++) Z[i * F + 7] = Z[i * F] + Z[i * F + 1];
  smx_cov_policy pol[] = { SMX_COV_ERROR, SMX_COV_PINV, SMX_COV_SHRINK };
  smx_status want[] = { SMX_E_SINGULAR, SMX_OK, SMX_OK };
  size_t rank[] = { 0, F - 1, F };
  for (int p = 0; p < 3; p++) {
    c.cov_policy = pol[p];
    c.shrinkage = 0.1;
    CHECK(smx_feature_model_create(&c, &m) == SMX_OK && smx_feature_model_fit_batch_f64(m, Z, F, Y, N) == SMX_OK,
          "fit");
    smx_status s = smx_feature_model_finish(m, NULL);
    CHECK(s == want[p], "policy %d: %s", p, smx_status_string(s));
    smx_feature_info info;
    if (s == SMX_OK)
      CHECK(smx_feature_model_info(m, &info) == SMX_OK && info.cov_rank == rank[p], "policy %d rank %zu", p,
            info.cov_rank);
    smx_feature_model_destroy(m);
  }
}

int main(void) {
  make_data();
  test_args();
  test_fit_checks();
  test_methods();
  test_knn_edges();
  test_covariance();
  return tu_finish("test_features");
}
