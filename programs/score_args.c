/* Score options shared by smx score and smx eval (score_args.h). */
#define _POSIX_C_SOURCE 200809L
#include <float.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "cli/message.h"
#include "logits_stream.h"
#include "score_args.h"

#define SCORE(field) offsetof(smx_score_args, field)
const cli_opt smx_score_opts[6] = {
  CLI_TEMPERATURE(SCORE(temperature), "energy's T (score: also odin's), default 1"),
  CLI_CHECKED("--odin-temperature", NULL, "T", SCORE(odin_temperature), cli_check_temperature, CLI_TEMPERATURE_RULE,
              "ODIN's T (default 1000); ODIN here has no input perturbation:\nto get it, pass logits of perturbed "
              "inputs from your framework"),
  CLI_NUM("--gen-gamma", NULL, "G", CLI_OPT_DOUBLE, SCORE(gamma), DBL_TRUE_MIN, 1, NULL, "GEN's gamma (default 0.1)"),
  CLI_NUM("--gen-m", NULL, "M", CLI_OPT_UINT, SCORE(top_m), 1, 0x1p64, NULL, "GEN's top-M classes (default 100)"),
  CLI_PATH("--templates-from", NULL, "REF.npy", CLI_OPT_FILE, SCORE(templates_from), NULL, 0,
           "kl_matching templates from reference logits (eval: or --val)"),
  CLI_FLAG("--double", NULL, SCORE(dbl), "every score from double exponentials (1e-13) instead of f32"),
};

typedef struct scores_job {
  size_t nk, rows, cols, ldx, tasks;
  const smx_score_kind *kinds;
  const smx_score_params *params;
  const float *x;
  double *const *out;
  smx_status status[256];
} scores_job;

static void scores_task(void *ctx, size_t t) {
  scores_job *j = ctx;
  size_t r0 = j->rows * t / j->tasks, r1 = j->rows * (t + 1) / j->tasks;
  double *out[SMX_SCORES_MULTI_MAX];
  for (size_t k = 0; k < j->nk; k++) out[k] = j->out[k] + r0;
  j->status[t] = smx_scores_multi_rows_f32(j->nk, j->kinds, j->params, j->x + r0 * j->ldx, j->ldx, r1 - r0, j->cols, out);
}

smx_status smx_scores_threaded(int threads, size_t nkinds, const smx_score_kind *kinds, const smx_score_params *params,
                               const float *x, size_t ldx, size_t rows, size_t cols, double *const *out) {
  size_t tasks = threads > 1 ? (size_t)threads : 1;
  if (tasks > 256) tasks = 256;
  if (tasks > rows / 16) tasks = rows / 16 ? rows / 16 : 1;   /* blocks of at least 16 rows */
  if (tasks == 1 || nkinds > SMX_SCORES_MULTI_MAX)
    return smx_scores_multi_rows_f32(nkinds, kinds, params, x, ldx, rows, cols, out);
  scores_job j = { nkinds, rows, cols, ldx, tasks, kinds, params, x, out, { SMX_OK } };
  smx_status s = smx_parallel_for((int)tasks, tasks, scores_task, &j);
  for (size_t t = 0; s == SMX_OK && t < tasks; t++) s = j.status[t];
  return s;
}

smx_score_params smx_score_args_params_for(const smx_score_args *a, smx_score_kind kind, const double *templates) {
  smx_score_params p;
  memset(&p, 0, sizeof p);
  if (kind == SMX_SCORE_ENERGY) p.temperature = a->temperature;
  if (kind == SMX_SCORE_ODIN) p.temperature = a->odin_temperature;
  p.gen_gamma = a->gamma;
  p.gen_m = a->top_m;
  p.templates = templates;
  p.flags = a->dbl ? SMX_SCORE_FLAG_DOUBLE : 0;
  return p;
}

int smx_score_args_templates(const smx_score_args *a, uint64_t K, const char *logits_path, int quiet,
                             double **templates) {
  float *x = NULL;
  uint64_t rows = 0, cols = 0;
  int rc = smx_cli_load_logits(a->templates_from, quiet, K, logits_path, &x, &rows, &cols);
  if (rc) return rc;
  double *t = malloc((size_t)(K * K) * sizeof(double));
  if (!t) { free(x); return smx_cli_fail(SMX_CLI_EXIT_INPUT, "%s: out of memory for the templates", a->templates_from); }
  smx_status s = smx_kl_templates_fit_f32(x, (size_t)cols, (size_t)rows, (size_t)cols, t, NULL);
  free(x);
  if (s != SMX_OK) { free(t); return smx_cli_fail(SMX_CLI_EXIT_COMPUTE, "%s: %s", a->templates_from, smx_status_string(s)); }
  *templates = t;
  return 0;
}
