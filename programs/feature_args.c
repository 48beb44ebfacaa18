/* Feature-score options and files for smx fit-features and smx eval (feature_args.h). */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/message.h"
#include "feature_args.h"
#include "io/npy_io.h"
#include "logits_stream.h"

#define BLOCK_ROWS 4096

int smx_feature_args_any(const smx_feature_args *a) { return a->train || a->model; }

/* --knn-k, --vim-dim: 1 to 2^20, into a size_t */
static int check_size(void *args, void *dst, const char *v) {
  uint64_t n;
  (void)args;
  if (!smx_cli_parse_u64(v, 1, (uint64_t)1 << 20, &n)) return 0;
  *(size_t *)dst = (size_t)n;
  return 1;
}
/* --cov error | pinv | shrink=A, A in (0, 1] */
static int check_cov(void *args, void *dst, const char *v) {
  smx_feature_config *c = dst;
  double a;
  (void)args;
  if (v && !strcmp(v, "error")) c->cov_policy = SMX_COV_ERROR;
  else if (v && !strcmp(v, "pinv")) c->cov_policy = SMX_COV_PINV;
  else if (v && !strncmp(v, "shrink=", 7) && smx_cli_parse_number(v + 7, &a) && a > 0.0 && a <= 1.0)
    c->cov_policy = SMX_COV_SHRINK, c->shrinkage = a;
  else return 0;
  return 1;
}
static int check_index(void *args, void *dst, const char *v) {
  (void)args;
  if (v && !strcmp(v, "flat")) *(smx_knn_index *)dst = SMX_KNN_FLAT;
  else if (v && !strcmp(v, "ivf")) *(smx_knn_index *)dst = SMX_KNN_IVF;
  else return 0;
  return 1;
}

#define FEAT(field) offsetof(smx_feature_args, field)
#define FEAT_FILE(name, meta, field, help) CLI_PATH(name, NULL, meta, CLI_OPT_FILE, FEAT(field), NULL, 1, help)
const cli_opt smx_feature_opts[11] = {
  FEAT_FILE("--train-features", "F.npy", train, "training features (N x F) (smx_features.h; docs/scores.md 8)"),
  FEAT_FILE("--train-labels", "L.npy", train_labels, "their classes"),
  FEAT_FILE("--weight", "W.npy", weight, "the last layer, C x F (as torch Linear) (vim, residual, react)"),
  FEAT_FILE("--bias", "B.npy", bias, "its bias, C"),
  FEAT_FILE("--features-model", "M", model, "a model of smx fit-features (eval)"),
  CLI_PATH("--feature-scores", NULL, "LIST", CLI_OPT_STRING, FEAT(methods), NULL, 1,
           "of mahalanobis, knn, vim, residual, react (default: all the\ninputs allow)"),
  CLI_CHECKED("--knn-k", NULL, "K", FEAT(cfg.k), check_size, "a whole number from 1 to 1048576", "(default 50)"),
  CLI_CHECKED("--vim-dim", NULL, "D", FEAT(cfg.vim_dim), check_size, "a whole number from 1 to 1048576",
              "(default 1000 if F >= 2048, 512 if F >= 768, else F/2)"),
  CLI_NUM("--react-percentile", NULL, "P", CLI_OPT_DOUBLE, FEAT(cfg.react_percentile), DBL_TRUE_MIN, 100, NULL,
          "(default 90)"),
  CLI_CHECKED("--cov", NULL, "error|pinv|shrink=A", FEAT(cfg), check_cov, "error, pinv or shrink=A with A in (0, 1]",
              "a singular covariance: refused (default), pseudo-inverse, or\nshrunk"),
  CLI_CHECKED("--knn-index", NULL, "flat|ivf", FEAT(cfg.knn_index), check_index, "flat (exact) or ivf (approximate)",
              "(default flat; ivf is approximate)"),
};

static int open_2d(const char *path, const char *what, smx_npy_reader **r, const smx_npy_info **info) {
  char err[512];
  if (!strcmp(path, "-")) return smx_cli_fail(SMX_CLI_EXIT_INPUT, "%s: read from a file, not stdin ('-')", what);
  if (smx_npy_open(path, r, err, sizeof err) != SMX_OK) return smx_cli_fail(SMX_CLI_EXIT_INPUT, "%s", err);
  *info = smx_npy_reader_info(*r);
  if ((*info)->ndim != 2 || (*info)->cols == 0) {
    smx_npy_close(*r);
    return smx_cli_fail(SMX_CLI_EXIT_INPUT, "%s: %s must have shape (N, F) with F >= 1", path, what);
  }
  return 0;
}

/* The last layer: W (C x F, torch Linear's layout) and b (C), as doubles. */
static int read_head(const smx_feature_args *a, uint64_t F, double **W, double **b, uint64_t *C) {
  smx_npy_reader *r;
  const smx_npy_info *in;
  char err[512];
  int rc = open_2d(a->weight, "--weight", &r, &in);
  if (rc) return rc;
  *C = in->rows;
  if (in->cols != F) {
    rc = smx_cli_fail(SMX_CLI_EXIT_INPUT, "%s: W has shape (%llu, %llu) but the features have %llu columns: W must be "
                      "(classes, features) as torch's Linear stores it%s", a->weight, (unsigned long long)in->rows,
                      (unsigned long long)in->cols, (unsigned long long)F,
                      in->rows == F ? " (a (features, classes) matrix such as sklearn's coefs_ must be transposed)" : "");
    smx_npy_close(r);
    return rc;
  }
  *W = malloc((size_t)(in->rows * F) * sizeof **W);
  *b = calloc((size_t)in->rows, sizeof **b);
  if (!*W || !*b) { smx_npy_close(r); return smx_cli_fail(SMX_CLI_EXIT_INPUT, "%s: out of memory", a->weight); }
  smx_status s = smx_npy_read_rows_f64(r, 0, in->rows, *W, err, sizeof err);
  smx_npy_close(r);
  if (s) return smx_cli_fail(SMX_CLI_EXIT_INPUT, "%s", err);
  if (!a->bias) return 0;
  if (smx_npy_open(a->bias, &r, err, sizeof err) != SMX_OK) return smx_cli_fail(SMX_CLI_EXIT_INPUT, "%s", err);
  in = smx_npy_reader_info(r);
  if (in->count != *C || in->ndim > 2 || (in->ndim == 2 && in->cols != 1 && in->rows != 1)) {
    rc = smx_cli_fail(SMX_CLI_EXIT_INPUT, "%s: the bias must hold %llu values (one per row of %s), not %llu", a->bias,
                      (unsigned long long)*C, a->weight, (unsigned long long)in->count);
    smx_npy_close(r);
    return rc;
  }
  s = smx_npy_read_elems_f64(r, 0, (size_t)*C, *b, err, sizeof err);
  smx_npy_close(r);
  return s ? smx_cli_fail(SMX_CLI_EXIT_INPUT, "%s", err) : 0;
}

static int fit(smx_feature_args *a, int quiet, smx_feature_model **out) {
  smx_npy_reader *r = NULL;
  const smx_npy_info *in;
  int rc = open_2d(a->train, "--train-features", &r, &in);
  if (rc) return rc;
  uint64_t N = in->rows, F = in->cols, C = 0;
  int f64 = in->dtype == SMX_DTYPE_F64;
  double *W = NULL, *b = NULL;
  int64_t *lab = NULL;
  void *buf = NULL;
  smx_feature_model *m = NULL;
  if (a->bias && !a->weight) { rc = smx_cli_usage_error("--bias needs --weight"); goto out; }
  if (a->weight && (rc = read_head(a, F, &W, &b, &C))) goto out;
  if (a->train_labels) {
    uint64_t K = C ? C : (uint64_t)1 << 24;
    if ((rc = smx_cli_read_labels(a->train_labels, N, K, a->weight ? a->weight : a->train, &lab))) goto out;
    uint64_t top = 0;
    for (uint64_t i = 0; i < N; i++) top = (uint64_t)lab[i] + 1 > top ? (uint64_t)lab[i] + 1 : top;
    if (!C) C = top;
    uint64_t *cnt = calloc((size_t)C, sizeof *cnt);
    if (!cnt) { rc = smx_cli_fail(SMX_CLI_EXIT_INPUT, "out of memory for the labels"); goto out; }
    for (uint64_t i = 0; i < N; i++) cnt[lab[i]]++;
    uint64_t empty = C;
    for (uint64_t c = 0; c < C && empty == C; c++)
      if (!cnt[c]) empty = c;
    free(cnt);
    if (empty < C && (!a->methods || strstr(a->methods, "mahalanobis"))) {
      rc = smx_cli_fail(SMX_CLI_EXIT_INPUT, "%s: class %llu of [0, %llu) has no training rows (mahalanobis needs every "
                        "class; leave it out with --feature-scores)", a->train_labels, (unsigned long long)empty,
                        (unsigned long long)C);
      goto out;
    }
  }
  smx_feature_config cfg = a->cfg;
  cfg.features = (size_t)F;
  cfg.classes = lab ? (size_t)C : 0;
  cfg.weight = W;
  cfg.bias = W ? b : NULL;
  cfg.ldw = (size_t)F;
  cfg.head_rows = (size_t)C;
  if (a->methods) {
    char list[256];
    if (strlen(a->methods) >= sizeof list) { rc = smx_cli_usage_error("--feature-scores list too long"); goto out; }
    strcpy(list, a->methods);
    for (char *t = strtok(list, ","); t; t = strtok(NULL, ",")) {
      smx_feature_method me;
      if (smx_feature_method_from_name(t, &me))
        { rc = smx_cli_usage_error("unknown feature score '%s' (mahalanobis, knn, vim, residual, react)", t); goto out; }
      const char *why = smx_feature_method_requires(me);
      if (why) { rc = smx_cli_fail(SMX_CLI_EXIT_COMPUTE, "%s", why); goto out; }
      if (me == SMX_FEAT_MAHALANOBIS && !lab) { rc = smx_cli_usage_error("mahalanobis needs --train-labels"); goto out; }
      if (me != SMX_FEAT_MAHALANOBIS && me != SMX_FEAT_KNN && !W)
        { rc = smx_cli_usage_error("%s needs the last layer: --weight W.npy (and --bias B.npy)", t); goto out; }
      cfg.methods |= SMX_FEAT_BIT(me);
    }
  }
  size_t k = cfg.k ? cfg.k : 50;
  if ((!cfg.methods || (cfg.methods & SMX_FEAT_BIT(SMX_FEAT_KNN))) && smx_feature_method_requires(SMX_FEAT_KNN) == NULL &&
      k > N) {
    rc = smx_cli_fail(SMX_CLI_EXIT_INPUT, "--knn-k %zu exceeds the %llu training rows of %s", k, (unsigned long long)N,
                      a->train);
    goto out;
  }
  if (cfg.vim_dim && cfg.vim_dim >= F) {
    rc = smx_cli_usage_error("--vim-dim %zu must be below the %llu features", cfg.vim_dim, (unsigned long long)F);
    goto out;
  }
  smx_status s = smx_feature_model_create(&cfg, &m);
  if (s == SMX_E_NOT_BUILT) {   /* without labels or a last layer only knn applies, and this build lacks it */
    rc = smx_cli_fail(SMX_CLI_EXIT_COMPUTE, "%s: no feature score to fit: %s; mahalanobis needs --train-labels, vim, "
                      "residual and react need --weight", a->train, smx_feature_method_requires(SMX_FEAT_KNN));
    goto out;
  }
  if (s) {
    rc = smx_cli_fail(s == SMX_E_INVALID_ARG ? SMX_CLI_EXIT_INPUT : SMX_CLI_EXIT_COMPUTE, "%s: %s%s", a->train,
                      smx_status_string(s), s == SMX_E_INVALID_ARG ? " (non-finite weight or bias?)" : "");
    goto out;
  }
  size_t es = f64 ? sizeof(double) : sizeof(float);
  buf = malloc(BLOCK_ROWS * (size_t)F * es);
  if (!buf) { rc = smx_cli_fail(SMX_CLI_EXIT_INPUT, "out of memory"); goto out; }
  char err[512];
  for (uint64_t i = 0; i < N; i += BLOCK_ROWS) {
    uint64_t nr = N - i < BLOCK_ROWS ? N - i : BLOCK_ROWS;
    s = f64 ? smx_npy_read_rows_f64(r, i, nr, buf, err, sizeof err) : smx_npy_read_rows_f32(r, i, nr, buf, err, sizeof err);
    if (s) { rc = smx_cli_fail(SMX_CLI_EXIT_INPUT, "%s", err); goto out; }
    s = f64 ? smx_feature_model_fit_batch_f64(m, buf, (size_t)F, lab ? lab + i : NULL, (size_t)nr)
            : smx_feature_model_fit_batch_f32(m, buf, (size_t)F, lab ? lab + i : NULL, (size_t)nr);
    if (s) {
      rc = smx_cli_fail(SMX_CLI_EXIT_INPUT, "%s: rows %llu..%llu refused: %s (a NaN or infinite feature?)", a->train,
                        (unsigned long long)i, (unsigned long long)(i + nr - 1), smx_status_string(s));
      goto out;
    }
  }
  smx_options o;
  memset(&o, 0, sizeof o);
  o.threads = a->threads;
  s = smx_feature_model_finish(m, &o);
  if (s == SMX_E_SINGULAR)
    rc = smx_cli_fail(SMX_CLI_EXIT_COMPUTE, "%s: the covariance of the training features is singular (or ViM's residual "
                      "is empty): pass --cov pinv or --cov shrink=A, or a smaller --vim-dim", a->train);
  else if (s)
    rc = smx_cli_fail(SMX_CLI_EXIT_COMPUTE, "%s: fitting the feature scores: %s", a->train, smx_status_string(s));
  if (!rc && !quiet)
    fprintf(stderr, "smx: feature model fitted on %llu rows of %llu features%s\n", (unsigned long long)N,
            (unsigned long long)F, lab ? "" : " (no labels)");
out:
  smx_npy_close(r);
  free(buf);
  free(W);
  free(b);
  free(lab);
  if (rc) smx_feature_model_destroy(m);
  else *out = m;
  return rc;
}

int smx_feature_args_model(smx_feature_args *a, int quiet, smx_feature_model **m) {
  if (a->model && a->train) return smx_cli_usage_error("--features-model and --train-features exclude each other");
  if (a->train) return fit(a, quiet, m);
  const smx_feature_config *c = &a->cfg;
  const char *fitting = a->train_labels ? "--train-labels" : a->weight ? "--weight" : a->bias ? "--bias"
                      : c->k ? "--knn-k" : c->vim_dim ? "--vim-dim" : c->react_percentile != 0.0 ? "--react-percentile"
                      : c->cov_policy != SMX_COV_ERROR ? "--cov" : c->knn_index != SMX_KNN_FLAT ? "--knn-index" : NULL;
  if (fitting)   /* the model was fitted with its own: silently ignoring the option would mislead */
    return smx_cli_usage_error("%s is a fitting option: --features-model %s was fitted with its own (refit with "
                               "smx fit-features, or give --train-features instead)", fitting, a->model);
  errno = 0;
  smx_status s = smx_feature_model_load(a->model, 0, m);
  if (s == SMX_E_IO) return smx_cli_fail(SMX_CLI_EXIT_INPUT, "%s: %s", a->model, errno ? strerror(errno) : "cannot read");
  if (s == SMX_E_NOT_BUILT) return smx_cli_fail(SMX_CLI_EXIT_COMPUTE, "%s: %s", a->model, smx_feature_method_requires(SMX_FEAT_KNN));
  if (s == SMX_E_PARSE)
    return smx_cli_fail(SMX_CLI_EXIT_INPUT, "%s: not a feature model of this version (smx fit-features writes them), "
                        "or truncated or corrupted", a->model);
  if (s) return smx_cli_fail(SMX_CLI_EXIT_INPUT, "%s: %s", a->model, smx_status_string(s));
  return 0;
}

int smx_feature_args_methods(const smx_feature_args *a, const smx_feature_model *m, smx_feature_method *out,
                             size_t max, size_t *n) {
  smx_feature_info info;
  if (smx_feature_model_info(m, &info)) return smx_cli_fail(SMX_CLI_EXIT_COMPUTE, "feature model not finished");
  *n = 0;
  if (!a->methods) {
    for (int me = 1; me <= 5 && *n < max; me++)
      if (info.methods & SMX_FEAT_BIT(me)) out[(*n)++] = (smx_feature_method)me;
    return 0;
  }
  char list[256];
  if (strlen(a->methods) >= sizeof list) return smx_cli_usage_error("--feature-scores list too long");
  strcpy(list, a->methods);
  for (char *t = strtok(list, ","); t; t = strtok(NULL, ",")) {
    smx_feature_method me;
    if (smx_feature_method_from_name(t, &me))
      return smx_cli_usage_error("unknown feature score '%s' (mahalanobis, knn, vim, residual, react)", t);
    if (!(info.methods & SMX_FEAT_BIT(me)))
      return smx_cli_fail(SMX_CLI_EXIT_INPUT, "the feature model was not fitted for %s", t);
    for (size_t i = 0; i < *n; i++)
      if (out[i] == me) return smx_cli_usage_error("feature score '%s' listed twice", t);
    if (*n == max) return smx_cli_usage_error("too many scores");
    out[(*n)++] = me;
  }
  return 0;
}

int smx_feature_score_file(const smx_feature_model *m, smx_feature_method me, const char *path, uint64_t want_rows,
                           const char *rows_of, int threads, double *out) {
  smx_npy_reader *r;
  const smx_npy_info *in;
  smx_feature_info info;
  smx_feature_model_info(m, &info);
  int rc = open_2d(path, "features", &r, &in);
  if (rc) return rc;
  if (in->cols != info.features || in->rows != want_rows) {
    rc = smx_cli_fail(SMX_CLI_EXIT_INPUT, "%s: %llu x %llu features, but %s has %llu rows and the model %zu features",
                      path, (unsigned long long)in->rows, (unsigned long long)in->cols, rows_of,
                      (unsigned long long)want_rows, info.features);
    smx_npy_close(r);
    return rc;
  }
  int f64 = in->dtype == SMX_DTYPE_F64;
  size_t F = info.features;
  void *buf = malloc(BLOCK_ROWS * F * (f64 ? sizeof(double) : sizeof(float)));
  smx_options o;
  memset(&o, 0, sizeof o);
  o.threads = threads;
  char err[512];
  if (!buf) rc = smx_cli_fail(SMX_CLI_EXIT_INPUT, "out of memory");
  for (uint64_t i = 0; i < want_rows && !rc; i += BLOCK_ROWS) {
    uint64_t nr = want_rows - i < BLOCK_ROWS ? want_rows - i : BLOCK_ROWS;
    smx_status s = f64 ? smx_npy_read_rows_f64(r, i, nr, buf, err, sizeof err) : smx_npy_read_rows_f32(r, i, nr, buf, err, sizeof err);
    if (s) { rc = smx_cli_fail(SMX_CLI_EXIT_INPUT, "%s", err); break; }
    s = f64 ? smx_feature_score_f64(m, me, buf, F, NULL, 0, (size_t)nr, out + i, &o)
            : smx_feature_score_f32(m, me, buf, F, NULL, 0, (size_t)nr, out + i, &o);
    if (s)
      rc = smx_cli_fail(SMX_CLI_EXIT_INPUT, "%s: rows %llu..%llu: %s: %s (a NaN or infinite feature?)", path,
                        (unsigned long long)i, (unsigned long long)(i + nr - 1), smx_feature_method_name(me),
                        smx_status_string(s));
  }
  free(buf);
  smx_npy_close(r);
  return rc;
}

void smx_feature_label(const smx_feature_model *m, smx_feature_method me, char *buf, size_t len) {
  smx_feature_info info;
  const char *name = smx_feature_method_name(me);
  if (smx_feature_model_info(m, &info)) { snprintf(buf, len, "%s", name); return; }
  switch (me) {
    case SMX_FEAT_KNN: snprintf(buf, len, "knn_k%zu", info.k); break;
    case SMX_FEAT_VIM:
    case SMX_FEAT_RESIDUAL: snprintf(buf, len, "%s_D%zu", name, info.vim_dim); break;
    case SMX_FEAT_REACT: snprintf(buf, len, "react_p%g", info.react_percentile); break;
    default: snprintf(buf, len, "%s", name);
  }
}
