/* Score parameters on the command line, shared by smx score and smx eval. */
#ifndef SMX_PROGRAMS_SCORE_ARGS_H
#define SMX_PROGRAMS_SCORE_ARGS_H

#include <stdint.h>

#include "cli/options.h"
#include "smx/smx.h"

#define SMX_SCORE_NAMES \
  "msp, max_logit, energy, neg_entropy, margin_prob, margin_logit, gen, odin, kl_matching, nonuniformity"

typedef struct smx_score_args {
  double temperature;       /* --temperature: energy (default 1)               */
  double odin_temperature;  /* --odin-temperature (default 1000)               */
  double gamma;             /* --gen-gamma (default 0.1)                       */
  uint64_t top_m;           /* --gen-m (default 100)                           */
  const char *templates_from;  /* --templates-from REF.npy (kl_matching)       */
  int dbl;                  /* --double                                        */
} smx_score_args;

/* The score options as a table of cli/options.h, writing into an smx_score_args. */
extern const cli_opt smx_score_opts[6];

/* Parameters for one kind (temperature picked by kind). */
smx_score_params smx_score_args_params_for(const smx_score_args *a, smx_score_kind kind, const double *templates);
/* KL templates fitted from a.templates_from (must have K classes). Exit code or 0. */
int smx_score_args_templates(const smx_score_args *a, uint64_t K, const char *logits_path, int quiet, double **templates);

#endif
