/*
 * smx eval --id ID.npy --ood OOD.npy [--ood OOD2.npy ...] [--labels ID_LABELS.npy]
 *          [--val VAL.npy [--val-labels VAL_LABELS.npy]] [--scores msp,energy,...]
 *          [--json OUT.json] [--report OUT.html] [score options]
 *
 * Scores ID and OOD logits with each requested score, prints the OOD metrics
 * (both conventions) and, with labels, the calibration before and after
 * temperature scaling fitted on the validation set. Logits are streamed in
 * blocks of rows (bounded memory: 8 bytes per row and score are kept for the
 * metrics); the validation set is loaded whole (the fit iterates over it).
 */
#define _POSIX_C_SOURCE 200809L
#define _XOPEN_SOURCE 700   /* realpath */
#include <float.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "cli/message.h"
#include "cli/options.h"
#include "eval_dist.h"
#include "eval_result.h"
#include "feature_args.h"
#include "logits_stream.h"
#include "score_args.h"
#include "smx/smx.h"
#include "io/npy_io.h"

#define DEFAULT_SCORES "msp,max_logit,energy,neg_entropy,margin_prob,margin_logit,gen,odin,kl_matching,nonuniformity"

typedef struct eval_job {
  smx_eval_result *r;
  double **dst;                 /* per kind: the rows of this file */
  const char *path;
  smx_calib_acc *cal, *cal_ts;  /* ID only */
  const int64_t *labels;
  int only, skip;               /* score index to compute alone / to leave out (-1: none) */
  uint64_t first, end;          /* the rows to score (this rank's block); calibration takes every row streamed */
  int threads;                  /* --threads: the block's rows split among them */
} eval_job;

/* Confidence per row for the report: max softmax(z / T) in double. */
static int report_block(smx_eval_result *r, const float *x, size_t nr, size_t cols, uint64_t r0, const int64_t *labels,
                        const char *path) {
  smx_score_params p;
  memset(&p, 0, sizeof p);
  p.temperature = 1.0;   /* ODIN's score is max softmax(z / T), computed in double */
  smx_status s = smx_scores_rows_f32(x, cols, r->conf + r0, nr, cols, SMX_SCORE_ODIN, &p, NULL);
  if (!s && r->conf_ts) {
    p.temperature = r->T;
    s = smx_scores_rows_f32(x, cols, r->conf_ts + r0, nr, cols, SMX_SCORE_ODIN, &p, NULL);
  }
  if (s) return smx_cli_fail(SMX_CLI_EXIT_COMPUTE, "%s: %s", path, smx_status_string(s));
  for (size_t i = 0; i < nr; i++) {
    const float *z = x + i * cols;
    size_t arg = 0;
    for (size_t j = 1; j < cols; j++)
      if (z[j] > z[arg]) arg = j;
    r->correct[r0 + i] = arg == (size_t)labels[r0 + i];
  }
  return 0;
}

static int calib_block(eval_job *j, const float *x, size_t nr, size_t cols, uint64_t r0) {
  smx_status s = smx_calib_add_rows_f32(j->cal, x, cols, j->labels + r0, nr);
  if (!s && j->cal_ts) s = smx_calib_add_rows_f32(j->cal_ts, x, cols, j->labels + r0, nr);
  if (s != SMX_OK)
    return smx_cli_fail(SMX_CLI_EXIT_COMPUTE, "%s: calibration refused rows %llu..%llu (+inf or all -inf logits?): %s",
                        j->path, (unsigned long long)r0, (unsigned long long)(r0 + nr - 1), smx_status_string(s));
  if (j->r->conf) return report_block(j->r, x, nr, cols, r0, j->labels, j->path);
  return 0;
}

static int eval_block(void *ctx, const float *x, size_t nr, size_t cols, uint64_t r0) {
  eval_job *j = ctx;
  if (j->cal) {   /* rank 0 under MPI streams every ID row for the calibration, scores only its block */
    int rc = calib_block(j, x, nr, cols, r0);
    if (rc) return rc;
  }
  uint64_t a = r0 > j->first ? r0 : j->first, b = r0 + nr < j->end ? r0 + nr : j->end;
  if (a >= b) return 0;
  x += (size_t)(a - r0) * cols;
  nr = (size_t)(b - a);
  r0 = a;
  /* all scores of the block in one call: the double-path ones share their exponentials */
  smx_score_kind kinds[SMX_EVAL_MAX_SCORES];
  smx_score_params params[SMX_EVAL_MAX_SCORES];
  double *outs[SMX_EVAL_MAX_SCORES];
  size_t n = 0;
  for (size_t k = 0; k < j->r->nk; k++) {
    if ((j->only >= 0 && (int)k != j->only) || (int)k == j->skip) continue;
    kinds[n] = j->r->kinds[k];
    params[n] = j->r->params[k];
    outs[n++] = j->dst[k] + r0;
  }
  smx_options o = { .threads = j->threads };
  smx_status s = smx_scores_multi_rows_f32(x, cols, outs, nr, cols, n, kinds, params, &o);
  if (s != SMX_OK) return smx_cli_fail(SMX_CLI_EXIT_COMPUTE, "%s: %s", j->path, smx_status_string(s));
  return 0;
}

static int parse_scores(const char *list, smx_eval_result *r) {
  char buf[512];
  if (strlen(list) >= sizeof buf) return smx_cli_usage_error("--scores list too long");
  strcpy(buf, list);
  r->nk = 0;
  for (char *tok = strtok(buf, ","); tok; tok = strtok(NULL, ",")) {
    smx_score_kind k;
    if (smx_score_from_name(tok, &k) != SMX_OK)
      return smx_cli_usage_error("unknown score '%s' in --scores (one of %s)", tok, SMX_SCORE_NAMES);
    for (size_t i = 0; i < r->nk; i++)
      if (r->kinds[i] == k) return smx_cli_usage_error("score '%s' is listed twice in --scores", tok);
    if (r->nk == SMX_EVAL_MAX_SCORES) return smx_cli_usage_error("at most %d scores", SMX_EVAL_MAX_SCORES);
    r->kinds[r->nk++] = k;
  }
  if (!r->nk) return smx_cli_usage_error("--scores needs at least one score name");
  return 0;
}

static int header_of(const char *path, smx_npy_info *info) {
  char err[512];
  smx_npy_reader *rd = NULL;
  if (smx_npy_open(path, &rd, err, sizeof err) != SMX_OK) return smx_cli_fail(SMX_CLI_EXIT_INPUT, "%s", err);
  *info = *smx_npy_reader_info(rd);
  smx_npy_close(rd);
  if (info->rows > SIZE_MAX / sizeof(double) / SMX_EVAL_MAX_SCORES)
    return smx_cli_fail(SMX_CLI_EXIT_INPUT, "%s: too many rows", path);
  if (!strcmp(path, "-")) return smx_cli_fail(SMX_CLI_EXIT_INPUT, "eval reads files, not stdin ('-')");
  return 0;
}

static void free_result(smx_eval_result *r) {
  for (size_t k = 0; k < SMX_EVAL_MAX_SCORES; k++) free(r->id_scores[k]);
  for (size_t o = 0; o < r->nood; o++)
    for (size_t k = 0; k < SMX_EVAL_MAX_SCORES; k++) free(r->ood[o].scores[k]);
  free(r->bins);
  free(r->bins_ts);
  free(r->conf);
  free(r->conf_ts);
  free(r->correct);
}

static int run_eval(int argc, char **argv, const smx_eval_dist *dist);

static int cmd_eval(const cli_spec *s, int argc, char **argv) {
  smx_eval_dist dist;
  (void)s;
  int rc = smx_eval_dist_begin(&dist);
  if (!rc) rc = run_eval(argc, argv, &dist);
  smx_eval_dist_end(&dist);
  return rc;
}

/* The command line: the result's own fields (paths, tpr) and the rest, read by the table below. */
typedef struct eval_opts {
  smx_eval_result r;
  smx_score_args sa;
  cli_common run;   /* --threads (the feature scores' too), -q */
  smx_feature_args fa;
  const char *scores, *json, *report;
  size_t nperturbed, nfeat;
  uint64_t bins;
  int odin;   /* the index of the odin score, or -1 */
} eval_opts;

/* --ood, --perturbed-ood and --ood-features: one more file each time (dst: the count of that list) */
static int add_file(void *args, void *dst, const char *v) {
  eval_opts *op = args;
  size_t *n = dst;
  int list = n == &op->r.nood ? 0 : n == &op->nperturbed ? 1 : 2;
  static const char *const names[] = { "--ood", "--perturbed-ood", "--ood-features" };
  if (!v) return 0;
  if (*n == SMX_EVAL_MAX_OOD) return smx_cli_usage_error("at most %d %s files", SMX_EVAL_MAX_OOD, names[list]), -1;
  smx_eval_ood *o = &op->r.ood[(*n)++];
  *(list == 0 ? &o->path : list == 1 ? &o->perturbed_path : &o->features_path) = v;
  return 1;
}

#define EVAL(field) offsetof(eval_opts, field)
#define EVAL_FILE(name, meta, field, help) CLI_PATH(name, NULL, meta, CLI_OPT_FILE, EVAL(field), NULL, 1, help)
static const cli_opt eval_table[] = {
  EVAL_FILE("--id", "ID.npy", r.id_path, "in-distribution logits (N, K)"),
  CLI_CHECKED("--ood", NULL, "OOD.npy", EVAL(r.nood), add_file, "a file name", "out-of-distribution logits; one or more"),
  EVAL_FILE("--labels", "L.npy", r.labels_path, "the classes of the ID rows: the calibration"),
  EVAL_FILE("--val", "V.npy", r.val_path, "validation logits: kl_matching's templates, temperature scaling"),
  EVAL_FILE("--val-labels", "VL.npy", r.val_labels_path, "their classes: the fitted temperature"),
  CLI_PATH("--scores", NULL, "LIST", CLI_OPT_STRING, EVAL(scores), NULL, 1,
           "msp,energy,... (default all; kl_matching needs --val)"),
  CLI_NUM("--bins", NULL, "N", CLI_OPT_UINT, EVAL(bins), 1, 100000, NULL, "calibration bins (default 15)"),
  EVAL_FILE("--perturbed-id", "F", r.perturbed_id_path, "ODIN from perturbed-input logits: the ID ones"),
  CLI_CHECKED("--perturbed-ood", NULL, "F", EVAL(nperturbed), add_file, "a file name", "and one per --ood"),
  CLI_NUM("--tpr", NULL, "R", CLI_OPT_DOUBLE, EVAL(r.tpr), DBL_TRUE_MIN, 1, NULL, "the TPR of FPR@TPR (default 0.95)"),
  EVAL_FILE("--id-features", "F", r.id_features_path, "ID features (rows as the logits): the feature scores join"),
  CLI_CHECKED("--ood-features", NULL, "F", EVAL(nfeat), add_file, "a file name", "and one per --ood"),
  CLI_PATH("--json", NULL, "FILE", CLI_OPT_OUTPUT, EVAL(json), "json", 1, "the results as JSON (- for stdout)"),
  CLI_PATH("--report", NULL, "FILE.html", CLI_OPT_OUTPUT, EVAL(report), "html", 1,
           "the HTML report (- for stdout: the table then goes to stderr)"),
};
static const cli_optset eval_sets[] = { CLI_OWN(eval_table), { cli_common_opts + 1, 2, EVAL(run) },
                                        CLI_SET(eval_opts, sa, smx_score_opts), CLI_SET(eval_opts, fa, smx_feature_opts) };

/* The options, their consistency and the files' headers: everything that
 * can fail before any row is read. No MPI call here: a rank that fails
 * still meets the others at the agreement in run_eval. */
static int eval_setup(int argc, char **argv, const smx_eval_dist *dist, eval_opts *op) {
  smx_eval_result *r = &op->r;
  op->run = (cli_common)CLI_COMMON_INIT;
  op->bins = 15;
  r->tpr = 0.95;
  int rc = cli_parse(&smx_eval_spec, argc, argv, op, NULL);
  if (rc) return rc;
  smx_score_args sa = op->sa;
  const char *scores = op->scores, *json = op->json, *report = op->report;
  int quiet = op->run.quiet;
  size_t nperturbed = op->nperturbed, nfeat = op->nfeat;
  op->fa.threads = op->run.threads;
  if (dist->rank != 0) quiet = 1;
  if (json && report && !strcmp(json, "-") && !strcmp(report, "-"))
    return smx_cli_usage_error("--json - and --report - would both write to standard output; send one to a file");
  if (!r->id_path) return smx_cli_usage_error("eval needs --id ID_LOGITS.npy");
  if (!r->nood && !r->labels_path) return smx_cli_usage_error("eval needs --ood OOD_LOGITS.npy (or --labels for calibration only)");
  if (r->val_labels_path && !r->val_path) return smx_cli_usage_error("--val-labels needs --val VAL_LOGITS.npy");
  if ((r->perturbed_id_path || nperturbed) && (!r->perturbed_id_path || nperturbed != r->nood))
    return smx_cli_usage_error("ODIN with perturbed inputs needs --perturbed-id and one --perturbed-ood per --ood");
  int feat = smx_feature_args_any(&op->fa);
  if ((feat || r->id_features_path || nfeat) && (!feat || !r->id_features_path || nfeat != r->nood || !r->nood))
    return smx_cli_usage_error("the feature scores need --id-features, one --ood-features per --ood, and "
                               "--features-model M or --train-features F");
  if (!feat && (op->fa.train_labels || op->fa.weight || op->fa.bias || op->fa.methods))
    return smx_cli_usage_error("--train-labels, --weight, --bias and --feature-scores are for the feature scores: "
                               "give --train-features or --features-model with them");
  if (op->fa.model && op->fa.train)
    return smx_cli_usage_error("--features-model and --train-features exclude each other");
  r->features_from = op->fa.model ? op->fa.model : op->fa.train;
  r->features_fitted = op->fa.model == NULL;
  int explicit_scores = scores != NULL;
  if (!scores) scores = DEFAULT_SCORES;
  rc = parse_scores(scores, r);
  if (rc) return rc;
  int have_ref = r->val_path || sa.templates_from;
  for (size_t k = 0; k < r->nk; k++) {
    if (r->kinds[k] != SMX_SCORE_KL_MATCHING || have_ref) continue;
    if (explicit_scores) return smx_cli_usage_error("kl_matching needs --val VAL.npy or --templates-from REF.npy");
    memmove(r->kinds + k, r->kinds + k + 1, (r->nk - k - 1) * sizeof r->kinds[0]);   /* default list: skip it */
    r->nk--;
    k--;
  }
  if (!r->nood) r->nk = 0;
  if (r->nood && !r->nk) return smx_cli_usage_error("no score to evaluate");
  int odin = -1;
  for (size_t k = 0; k < r->nk; k++)
    if (r->kinds[k] == SMX_SCORE_ODIN) odin = (int)k;
  if (r->perturbed_id_path && odin < 0) return smx_cli_usage_error("--perturbed-id is for the odin score, which --scores leaves out");
  if (sa.odin_temperature == 0.0) sa.odin_temperature = 1000.0;
  if (sa.temperature == 0.0) sa.temperature = 1.0;

  smx_npy_info idh;
  if ((rc = header_of(r->id_path, &idh))) return rc;
  r->K = idh.cols;
  if (idh.ndim < 2 || r->K == 0)
    return smx_cli_fail(SMX_CLI_EXIT_INPUT, "%s: logits must have shape (N, K) with K >= 1 classes", r->id_path);
  r->id_rows = idh.rows;
  if (r->nood && r->id_rows == 0) return smx_cli_fail(SMX_CLI_EXIT_INPUT, "%s: no ID rows to compare with", r->id_path);
  for (size_t o = 0; o < r->nood; o++) {
    smx_npy_info h;
    if ((rc = header_of(r->ood[o].path, &h))) return rc;
    if (h.ndim < 2 || h.cols == 0)
      return smx_cli_fail(SMX_CLI_EXIT_INPUT, "%s: logits must have shape (N, K) with K >= 1 classes", r->ood[o].path);
    if (h.cols != r->K)
      return smx_cli_fail(SMX_CLI_EXIT_INPUT, "%s: %llu classes, but %s has %llu", r->ood[o].path,
                          (unsigned long long)h.cols, r->id_path, (unsigned long long)r->K);
    if (h.rows == 0) return smx_cli_fail(SMX_CLI_EXIT_INPUT, "%s: no OOD rows", r->ood[o].path);
    r->ood[o].rows = h.rows;
  }
  for (size_t o = 0; r->perturbed_id_path && o <= r->nood; o++) {
    const char *pp = o ? r->ood[o - 1].perturbed_path : r->perturbed_id_path;
    const char *orig = o ? r->ood[o - 1].path : r->id_path;
    uint64_t want = o ? r->ood[o - 1].rows : r->id_rows;
    smx_npy_info h;
    if ((rc = header_of(pp, &h))) return rc;
    if (h.rows != want || h.cols != r->K)
      return smx_cli_fail(SMX_CLI_EXIT_INPUT, "%s: %llu x %llu logits, but %s (which it perturbs) is %llu x %llu", pp,
                          (unsigned long long)h.rows, (unsigned long long)h.cols, orig, (unsigned long long)want,
                          (unsigned long long)r->K);
  }
  op->sa = sa;
  op->run.quiet = quiet;
  op->odin = odin;
  return 0;
}

/* The feature scores (smx_features.h), appended after the logit scores:
 * the model fitted or loaded, then each method over the ID and OOD features
 * files. Every rank computes all rows (the gather then moves equal values). */
static int eval_features(smx_eval_result *r, eval_opts *op) {
  smx_feature_model *m = NULL;
  int rc = smx_feature_args_model(&op->fa, op->run.quiet, &m);
  smx_feature_method me[5];
  size_t n = 0;
  if (!rc) rc = smx_feature_args_methods(&op->fa, m, me, 5, &n);
  if (!rc && r->nk + n > SMX_EVAL_MAX_SCORES)
    rc = smx_cli_usage_error("at most %d scores in all: leave some out with --scores or --feature-scores",
                             SMX_EVAL_MAX_SCORES);
  smx_feature_info info;
  if (!rc && !smx_feature_model_info(m, &info)) {
    r->vim_alpha = info.vim_alpha;
    r->react_threshold = info.react_threshold;
  }
  for (size_t i = 0; i < n && !rc; i++) {
    size_t k = r->nk++;
    r->feature[k] = (int)me[i];
    smx_feature_label(m, me[i], r->feature_label[k], sizeof r->feature_label[k]);
    r->id_scores[k] = malloc((size_t)r->id_rows * sizeof(double));
    if (!r->id_scores[k]) { rc = smx_cli_fail(SMX_CLI_EXIT_INPUT, "out of memory for the scores"); break; }
    rc = smx_feature_score_file(m, me[i], r->id_features_path, r->id_rows, r->id_path, op->fa.threads, r->id_scores[k]);
    for (size_t o = 0; o < r->nood && !rc; o++) {
      r->ood[o].scores[k] = malloc((size_t)r->ood[o].rows * sizeof(double));
      if (!r->ood[o].scores[k]) { rc = smx_cli_fail(SMX_CLI_EXIT_INPUT, "out of memory for the scores"); break; }
      rc = smx_feature_score_file(m, me[i], r->ood[o].features_path, r->ood[o].rows, r->ood[o].path, op->fa.threads,
                                  r->ood[o].scores[k]);
    }
  }
  smx_feature_model_destroy(m);
  return rc;
}

/* Under MPI every rank runs all of this on the same arguments and files:
 * the headers, the validation set and the fits are the same everywhere;
 * the rows are scored in blocks (one per rank), calibration on rank 0 (it
 * streams the ID rows whole), and the scores gathered to rank 0, which alone
 * computes the metrics and writes. Every rank, failed or not, reaches the
 * agreement at sync: a rank that stopped early would leave the others
 * waiting in a collective. Only rank 0 speaks (eval_dist.h). */
static int run_eval(int argc, char **argv, const smx_eval_dist *dist) {
  static eval_opts op;   /* large (64 OOD sets); one per process */
  memset(&op, 0, sizeof op);
  smx_eval_result *r = &op.r;
  int64_t *labels = NULL, *val_labels = NULL;
  float *val = NULL;
  double *templates = NULL;
  smx_calib_acc *cal = NULL, *cal_ts = NULL;
  int rc = eval_setup(argc, argv, dist, &op);
  if (rc) goto sync;
  int odin = op.odin;
  size_t bins = op.bins;
  smx_score_args sa = op.sa;
  if (r->labels_path && (rc = smx_cli_read_labels(r->labels_path, r->id_rows, r->K, r->id_path, &labels))) goto sync;
  if (r->labels_path && r->id_rows == 0) { rc = smx_cli_fail(SMX_CLI_EXIT_INPUT, "%s: no rows to calibrate", r->id_path); goto sync; }
  if (r->val_path) {
    uint64_t vc = 0;
    if ((rc = smx_cli_load_logits(r->val_path, op.run.quiet, r->K, r->id_path, &val, &r->val_rows, &vc))) goto sync;
    if (r->val_labels_path &&
        (rc = smx_cli_read_labels(r->val_labels_path, r->val_rows, r->K, r->val_path, &val_labels))) goto sync;
  }
  int need_tmpl = 0;
  for (size_t k = 0; k < r->nk; k++) need_tmpl |= r->kinds[k] == SMX_SCORE_KL_MATCHING;
  if (need_tmpl) {
    if (sa.templates_from) {
      if ((rc = smx_score_args_templates(&sa, r->K, r->id_path, op.run.quiet, &templates))) goto sync;
    } else {
      templates = malloc((size_t)(r->K * r->K) * sizeof(double));
      smx_status s = templates ? smx_kl_templates_fit_f32(val, (size_t)r->K, templates, NULL, (size_t)r->val_rows,
                                                          (size_t)r->K, NULL)
                               : SMX_E_NOMEM;
      if (s) { rc = smx_cli_fail(SMX_CLI_EXIT_COMPUTE, "%s: KL templates: %s", r->val_path, smx_status_string(s)); goto sync; }
    }
    r->templates = templates;
  }
  if (val_labels) {
    r->have_ts = 1;
    r->ts_status =
        smx_temperature_fit_f32(val, (size_t)r->K, val_labels, &r->T, &r->ts, (size_t)r->val_rows, (size_t)r->K, NULL);
    if (r->ts_status != SMX_OK && r->ts_status != SMX_E_NO_OPTIMUM) {
      rc = smx_cli_fail(SMX_CLI_EXIT_COMPUTE, "%s: temperature scaling: %s", r->val_path, smx_status_string(r->ts_status));
      goto sync;
    }
    if (r->ts_status == SMX_E_NO_OPTIMUM && !op.run.quiet)
      smx_cli_fail(SMX_CLI_EXIT_OK, "note: %s: no finite temperature minimises the validation NLL (%s); "
                   "the calibration after scaling is left out", r->val_path,
              r->ts.outcome == SMX_TS_TO_ZERO ? "every sample is classified correctly: T -> 0"
                                              : "the true-class logits are not above the row means: T -> infinity");
  }
  for (size_t k = 0; k < r->nk; k++) r->params[k] = smx_score_args_params_for(&sa, r->kinds[k], templates);

  if (labels && dist->rank == 0) {
    r->have_calib = 1;
    r->nbins = bins;
    r->bins = calloc(bins, sizeof *r->bins);
    r->bins_ts = calloc(bins, sizeof *r->bins_ts);
    smx_options at_ts = { .temperature = r->T };
    smx_status s = r->bins && r->bins_ts ? smx_calib_create(&cal, (size_t)r->K, bins, 0, NULL) : SMX_E_NOMEM;
    if (!s && r->have_ts && r->ts_status == SMX_OK) s = smx_calib_create(&cal_ts, (size_t)r->K, bins, 0, &at_ts);
    if (s) { rc = smx_cli_fail(SMX_CLI_EXIT_COMPUTE, "calibration: %s", smx_status_string(s)); goto sync; }
    if (op.report) {   /* per-sample confidences for the reliability diagrams */
      size_t n = (size_t)r->id_rows;
      r->conf = malloc(n * sizeof(double));
      r->correct = malloc(n);
      if (cal_ts) r->conf_ts = malloc(n * sizeof(double));
      if (!r->conf || !r->correct || (cal_ts && !r->conf_ts)) {
        rc = smx_cli_fail(SMX_CLI_EXIT_COMPUTE, "out of memory for the report's confidences");
        goto sync;
      }
    }
  }
  for (size_t k = 0; k < r->nk; k++) {
    r->id_scores[k] = malloc((size_t)r->id_rows * sizeof(double));
    for (size_t o = 0; o < r->nood; o++) r->ood[o].scores[k] = malloc((size_t)r->ood[o].rows * sizeof(double));
    int bad = !r->id_scores[k];
    for (size_t o = 0; o < r->nood; o++) bad |= !r->ood[o].scores[k];
    if (bad) { rc = smx_cli_fail(SMX_CLI_EXIT_INPUT, "out of memory for the scores"); goto sync; }
  }
  {
    uint64_t rows, cols;
    int skip = r->perturbed_id_path ? odin : -1;   /* ODIN then comes from the perturbed files */
    uint64_t a, b;
    smx_eval_dist_block(dist, r->id_rows, &a, &b);
    eval_job j = { r, r->id_scores, r->id_path, cal, cal_ts, labels, -1, skip, a, b, op.run.threads };
    rc = smx_cli_stream_logits_range(r->id_path, op.run.quiet, r->K, r->id_path, 0, cal ? 0 : a, cal ? UINT64_MAX : b, &rows,
                                     &cols, eval_block, &j);
    for (size_t o = 0; o < r->nood && !rc; o++) {
      smx_eval_dist_block(dist, r->ood[o].rows, &a, &b);
      eval_job jo = { r, r->ood[o].scores, r->ood[o].path, NULL, NULL, NULL, -1, skip, a, b, op.run.threads };
      rc = smx_cli_stream_logits_range(r->ood[o].path, op.run.quiet, r->K, r->id_path, 0, a, b, &rows, &cols, eval_block, &jo);
    }
    for (size_t o = 0; skip >= 0 && o <= r->nood && !rc; o++) {
      smx_eval_dist_block(dist, o ? r->ood[o - 1].rows : r->id_rows, &a, &b);
      eval_job jp = { r, o ? r->ood[o - 1].scores : r->id_scores, o ? r->ood[o - 1].perturbed_path : r->perturbed_id_path,
                      NULL, NULL, NULL, odin, -1, a, b, op.run.threads };
      rc = smx_cli_stream_logits_range(jp.path, op.run.quiet, r->K, r->id_path, 0, a, b, &rows, &cols, eval_block, &jp);
    }
  }
  if (!rc && r->features_from) rc = eval_features(r, &op);
sync:   /* every rank gets here, failed or not: then all stop, or all gather */
  rc = smx_eval_dist_agree(dist, rc);
  if (rc) goto done;
  for (size_t k = 0; k < r->nk && !rc; k++) {
    rc = smx_eval_dist_gather(dist, r->id_scores[k], r->id_rows);
    for (size_t o = 0; o < r->nood && !rc; o++) rc = smx_eval_dist_gather(dist, r->ood[o].scores[k], r->ood[o].rows);
  }
  if (rc || dist->rank != 0) goto done;
  for (size_t o = 0; o < r->nood; o++)
    for (size_t k = 0; k < r->nk; k++) {
      smx_status s = smx_ood_metrics_f64(r->id_scores[k], r->ood[o].scores[k], &r->ood[o].m[k], (size_t)r->id_rows,
                                         (size_t)r->ood[o].rows, r->tpr, NULL);
      if (s) {
        char lab[64];
        smx_eval_score_label(r, k, lab, sizeof lab);
        rc = smx_cli_fail(SMX_CLI_EXIT_COMPUTE, "%s: metrics of %s: %s", r->ood[o].path, lab, smx_status_string(s));
        goto done;
      }
    }
  if (cal) {
    smx_status s = smx_calib_result(cal, &r->cal, r->bins);
    if (!s && cal_ts) s = smx_calib_result(cal_ts, &r->cal_ts, r->bins_ts);
    if (s) { rc = smx_cli_fail(SMX_CLI_EXIT_COMPUTE, "%s: calibration: %s", r->id_path, smx_status_string(s)); goto done; }
  }
  /* stdout carries one thing: with --json - or --report - it is that data
   * alone (a pipe into jq or a browser must not see the table), and the
   * table, meant for a person, goes to stderr unless -q */
  int data_on_stdout = (op.json && !strcmp(op.json, "-")) || (op.report && !strcmp(op.report, "-"));
  if (!data_on_stdout) smx_eval_print_table(r, stdout);
  else if (!op.run.quiet) {
    smx_eval_print_table(r, stderr);
    fflush(stderr);
  }
  if (op.json && (rc = smx_eval_write_json(r, op.json))) goto done;
  if (op.report && (rc = smx_eval_write_report(r, op.report))) goto done;
  if (op.report && !op.run.quiet) {   /* one line: where the page is (absolute, to open it from anywhere) */
    char *abs = strcmp(op.report, "-") ? realpath(op.report, NULL) : NULL;
    fputs("smx: report written to ", stderr);
    if (!strcmp(op.report, "-")) fputs("standard output", stderr);
    else smx_cli_put_escaped(stderr, abs ? abs : op.report);
    fputc('\n', stderr);
    free(abs);
  }
done:
  smx_calib_destroy(cal);
  smx_calib_destroy(cal_ts);
  free(labels);
  free(val_labels);
  free(val);
  free(templates);
  free_result(r);
  return rc;
}

const cli_spec smx_eval_spec = {
  "eval", cmd_eval, "OOD metrics and calibration of in- and out-of-distribution logits",
  "--id ID.npy --ood OOD.npy [--ood OOD2.npy ...] [--labels L.npy]\n"
  "                [--val V.npy --val-labels VL.npy] [--scores msp,energy,...]\n"
  "                [--json F] [--report F.html] [--id-features F --ood-features F ...] [options]",
  "OOD metrics (both conventions) of each score and, with labels, the calibration\n"
  "before and after temperature scaling fitted on the validation set. With --id-features\n"
  "and one --ood-features per --ood (rows as the logits), the feature scores join the\n"
  "table, from --features-model M (smx fit-features) or the training inputs.\n",
  eval_sets, 4,
  "-q also leaves out the table when stdout is data; the scores are the same for any\n"
  "--threads. ODIN here has no input perturbation unless --perturbed-id and\n"
  "--perturbed-ood give the logits of perturbed inputs.\n",
  0, "no file without an option (--id, --ood, ...)", 0, NULL, 0 };
