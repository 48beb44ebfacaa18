/*
 * The feature-score options shared by smx fit-features and smx eval
 * (smx_features.h): the training inputs, the model's settings, and the
 * helpers that fit or load a model and score a features file. Kept in one
 * place, apart from the commands' own option loops, so that it ports to the
 * declarative option tables as one unit.
 */
#ifndef SMX_PROGRAMS_FEATURE_ARGS_H
#define SMX_PROGRAMS_FEATURE_ARGS_H

#include <stddef.h>
#include <stdint.h>

#include "cli/options.h"
#include "smx/smx_features.h"

typedef struct smx_feature_args {
  const char *train, *train_labels;   /* --train-features F.npy, --train-labels L.npy */
  const char *weight, *bias;          /* --weight W.npy (C x F), --bias B.npy (C)    */
  const char *model;                  /* --features-model M.smxf (eval)              */
  const char *methods;                /* --feature-scores LIST                       */
  smx_feature_config cfg;             /* --knn-k, --vim-dim, --react-percentile, --cov, --knn-index */
  int threads;                        /* the command's --threads                     */
} smx_feature_args;

/* The feature options as a table of cli/options.h, writing into an smx_feature_args (--threads is the
 * command's own, copied into threads). */
extern const cli_opt smx_feature_opts[11];
/* Any feature input given (training files or a model)? */
int smx_feature_args_any(const smx_feature_args *a);
/* Fits a model from --train-features (streamed) and friends, or loads
 * --features-model. 0 or an exit code, the message printed. */
int smx_feature_args_model(smx_feature_args *a, int quiet, smx_feature_model **m);
/* The methods to evaluate: --feature-scores, or every one the model scores. */
int smx_feature_args_methods(const smx_feature_args *a, const smx_feature_model *m, smx_feature_method *out,
                             size_t max, size_t *n);
/* Scores the rows of a features .npy (want_rows rows, the model's width)
 * into out. 0 or an exit code. */
int smx_feature_score_file(const smx_feature_model *m, smx_feature_method me, const char *path, uint64_t want_rows,
                           const char *rows_of, int threads, double *out);
/* "knn_k50", "vim_D512", "react_p90", "mahalanobis", "residual_D512". */
void smx_feature_label(const smx_feature_model *m, smx_feature_method me, char *buf, size_t len);

#endif
