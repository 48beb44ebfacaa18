/* Score options shared by smx score and smx eval (score_args.h). */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <float.h>
#include <stdlib.h>
#include <string.h>

#include "cli/message.h"
#include "cli/number.h"
#include "logits_stream.h"
#include "score_args.h"

void smx_score_args_init(smx_score_args *a) { memset(a, 0, sizeof *a); }

static int temperature(const char *opt, const char *v, double *out) {
  if (!v) return smx_cli_usage_error("%s needs a value", opt), -1;
  if (!smx_cli_parse_temperature(v, out)) return smx_cli_temperature_error(opt, v), -1;
  return 1;
}

static int positive(const char *opt, const char *v, double max, double *out) {
  double t;
  if (!v) return smx_cli_usage_error("%s needs a value", opt), -1;
  if (!smx_cli_parse_number(v, &t) || !(t > 0.0) || !(t <= max)) {
    smx_cli_usage_error("%s must be a number in (0, %g], not '%s'", opt, max, v);
    return -1;
  }
  *out = t;
  return 1;
}

int smx_score_args_parse(smx_score_args *a, const char *opt, const char *v, int *used) {
  *used = 1;
  if (!strcmp(opt, "--temperature") || !strcmp(opt, "-t")) return temperature("--temperature", v, &a->temperature);
  if (!strcmp(opt, "--odin-temperature")) return temperature(opt, v, &a->odin_temperature);
  if (!strcmp(opt, "--gen-gamma")) return positive(opt, v, 1.0, &a->gamma);
  if (!strcmp(opt, "--gen-m")) {
    char *end;
    long long n = v ? strtoll(v, &end, 10) : -1;
    if (!v || *end || n < 1) { smx_cli_usage_error("--gen-m must be a whole number >= 1"); return -1; }
    a->top_m = (size_t)n;
    return 1;
  }
  if (!strcmp(opt, "--templates-from")) {
    if (!v) { smx_cli_usage_error("%s needs a file name", opt); return -1; }
    a->templates_from = v;
    return 1;
  }
  *used = 0;
  if (!strcmp(opt, "--double")) { a->dbl = 1; return 1; }
  return 0;
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
