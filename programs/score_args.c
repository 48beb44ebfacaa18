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
  smx_status s = smx_kl_templates_fit_f32(x, (size_t)cols, t, NULL, (size_t)rows, (size_t)cols, NULL);
  free(x);
  if (s != SMX_OK) { free(t); return smx_cli_fail(SMX_CLI_EXIT_COMPUTE, "%s: %s", a->templates_from, smx_status_string(s)); }
  *templates = t;
  return 0;
}
