/*
 * smx fit-features --train-features F.npy [--train-labels L.npy]
 *                  [--weight W.npy --bias B.npy] [feature options] -o MODEL.smxf
 *
 * Fits the feature OOD scores (smx_features.h) once, streaming the training
 * features, and writes the model (docs/feature-model.md) through a temporary
 * file renamed at the end: smx eval --features-model reads it.
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "cli/message.h"
#include "cli/options.h"
#include "commands.h"
#include "feature_args.h"

typedef struct fit_args {
  smx_feature_args fa;
  cli_common run;
} fit_args;
static const fit_args fit_defaults = { .run = CLI_COMMON_INIT };
static const cli_opt fit_out[] = {
  CLI_PATH("-o", "--output", "MODEL.smxf", CLI_OPT_OUTPUT, offsetof(cli_common, out), "smxf", 1,
           "the model (written whole or not at all)"),
};
static const cli_optset fit_sets[] = { CLI_SET(fit_args, run, fit_out), CLI_SET(fit_args, fa, smx_feature_opts),
                                       { cli_common_opts + 1, 2, offsetof(fit_args, run) } };

static int run_fit(const cli_spec *spec, int argc, char **argv) {
  fit_args a;
  int rc = cli_parse(spec, argc, argv, &a, NULL);
  if (rc) return rc;
  smx_feature_args fa = a.fa;
  fa.threads = a.run.threads;
  const char *out = a.run.out;
  int quiet = a.run.quiet;
  if (!fa.train) return smx_cli_usage_error("fit-features needs --train-features F.npy");
  if (fa.model) return smx_cli_usage_error("--features-model is for smx eval; fit-features writes one with -o");
  if (!out) return smx_cli_usage_error("fit-features needs -o MODEL.smxf");
  if (!strcmp(out, "-")) return smx_cli_usage_error("-o -: the model is a file (it is renamed into place)");
  smx_feature_model *m = NULL;
  rc = smx_feature_args_model(&fa, quiet, &m);
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
    const char *said[5] = { 0 };   /* three methods share LAPACK's sentence: each sentence once */
    size_t nsaid = 0;
    for (int me = 1; me <= 5; me++) {
      const char *why = smx_feature_method_requires((smx_feature_method)me);
      int dup = 0;
      for (size_t i = 0; i < nsaid; i++) dup |= said[i] == why;
      if (why && !dup && !(info.methods & SMX_FEAT_BIT(me))) {
        fprintf(stderr, "\nsmx: note: %s", why);
        said[nsaid++] = why;
      }
    }
    fputc('\n', stderr);
  }
  smx_feature_model_destroy(m);
  return rc;
}

const cli_spec smx_fit_features_spec = {
  "fit-features", run_fit, "fit the feature OOD scores (mahalanobis, knn, vim, react) once",
  "--train-features F.npy [--train-labels L.npy]\n"
  "                        [--weight W.npy --bias B.npy] [feature options] -o MODEL.smxf",
  "Fits the feature OOD scores (mahalanobis needs labels; vim, residual and react need the\n"
  "last layer; knn the features alone) and writes the model for smx eval --features-model.\n",
  fit_sets, 3, NULL, 0, "no file without an option (--train-features, -o, ...)", 0,
  CLI_DEFAULTS(fit_defaults) };
