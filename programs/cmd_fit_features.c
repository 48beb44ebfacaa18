/*
 * smx fit-features --train-features F.npy [--train-labels L.npy]
 *                  [--weight W.npy --bias B.npy] [feature options] -o MODEL.smxf
 *
 * Fits the feature OOD scores (smx_features.h) once, streaming the training
 * features, and writes the model (docs/feature-model.md) through a temporary
 * file renamed at the end: smx eval --features-model reads it.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cli/message.h"
#include "commands.h"
#include "feature_args.h"

const char smx_fit_features_help[] =
    "usage: smx fit-features --train-features F.npy [--train-labels L.npy]\n"
    "                        [--weight W.npy --bias B.npy] [feature options] -o MODEL.smxf\n"
    "Fits the feature OOD scores (mahalanobis needs labels; vim, residual and react need the\n"
    "last layer; knn the features alone) and writes the model for smx eval --features-model.\n"
    "  -o / --output FILE   the model (written whole or not at all), -q (no note)\n"
    SMX_FEATURE_OPTIONS_HELP;

int smx_cmd_fit_features(int argc, char **argv) {
  smx_feature_args fa;
  smx_feature_args_init(&fa);
  const char *out = NULL;
  int quiet = 0;
  for (int i = 0; i < argc; i++) {
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    int used = 0, prc = smx_feature_args_parse(&fa, a, v, &used);
    if (prc < 0) return SMX_CLI_EXIT_USAGE;
    if (prc > 0) { i += used; continue; }
    if (!strcmp(a, "-o") || !strcmp(a, "--output")) {
      if (!v) return smx_cli_usage_error("%s needs a file name", a);
      if (out) return smx_cli_usage_error("%s given twice", a);
      out = v;
      i++;
    } else if (!strcmp(a, "-q") || !strcmp(a, "--quiet")) {
      quiet = 1;
    } else {
      return smx_cli_usage_error("unknown argument '%s' for fit-features", a);
    }
  }
  if (!fa.train) return smx_cli_usage_error("fit-features needs --train-features F.npy");
  if (fa.model) return smx_cli_usage_error("--features-model is for smx eval; fit-features writes one with -o");
  if (!out) return smx_cli_usage_error("fit-features needs -o MODEL.smxf");
  if (!strcmp(out, "-")) return smx_cli_usage_error("-o -: the model is a file (it is renamed into place)");
  smx_feature_model *m = NULL;
  int rc = smx_feature_args_model(&fa, quiet, &m);
  if (rc) return rc;
  smx_status s = smx_feature_model_save(m, out);
  int e = errno;
  if (s) rc = smx_cli_fail(SMX_CLI_EXIT_OUTPUT, "%s: not written: %s%s%s", out, smx_status_string(s),
                           s == SMX_E_IO ? ": " : "", s == SMX_E_IO ? strerror(e) : "");
  if (!rc && !quiet) {
    smx_feature_info info;
    smx_feature_model_info(m, &info);
    fprintf(stderr, "smx: %s: scores", out);
    for (int me = 1; me <= 5; me++)
      if (info.methods & SMX_FEAT_BIT(me)) fprintf(stderr, " %s", smx_feature_method_name((smx_feature_method)me));
    const char *said = NULL;   /* three methods share LAPACK's sentence: say it once */
    for (int me = 1; me <= 5; me++) {
      const char *why = smx_feature_method_requires((smx_feature_method)me);
      if (why && why != said && !(info.methods & SMX_FEAT_BIT(me))) fprintf(stderr, "\nsmx: note: %s", why);
      if (why) said = why;
    }
    fputc('\n', stderr);
  }
  smx_feature_model_destroy(m);
  return rc;
}
