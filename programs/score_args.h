/* Score parameters on the command line, shared by smx score and smx eval. */
#ifndef SMX_PROGRAMS_SCORE_ARGS_H
#define SMX_PROGRAMS_SCORE_ARGS_H

#include <stdint.h>

#include "smx/smx.h"

#define SMX_SCORE_NAMES \
  "msp, max_logit, energy, neg_entropy, margin_prob, margin_logit, gen, odin, kl_matching, nonuniformity"

typedef struct smx_score_args {
  double temperature;       /* --temperature: energy (default 1)               */
  double odin_temperature;  /* --odin-temperature (default 1000)               */
  double gamma;             /* --gen-gamma (default 0.1)                       */
  size_t top_m;             /* --gen-m (default 100)                           */
  const char *templates_from;  /* --templates-from REF.npy (kl_matching)       */
  int dbl;                  /* --double                                        */
} smx_score_args;

void smx_score_args_init(smx_score_args *a);
/* 1: option consumed (*used = values taken), 0: not a score option, -1: usage error printed. */
int smx_score_args_parse(smx_score_args *a, const char *opt, const char *val, int *used);
/* Parameters for one kind (temperature picked by kind). */
smx_score_params smx_score_args_params_for(const smx_score_args *a, smx_score_kind kind, const double *templates);
/* KL templates fitted from a.templates_from (must have K classes). Exit code or 0. */
int smx_score_args_templates(const smx_score_args *a, uint64_t K, const char *logits_path, int quiet, double **templates);

/* The help text of the options above, shared by smx score and smx eval. */
#define SMX_SCORE_OPTIONS_HELP \
  "score options:\n" \
  "  --temperature T        energy's T (score: also odin's), default 1\n" \
  "  --odin-temperature T   ODIN's T (default 1000); ODIN here has no input perturbation:\n" \
  "                         to get it, pass logits of perturbed inputs from your framework\n" \
  "  --gen-gamma G --gen-m M  GEN's gamma in (0, 1] (0.1) and top-M classes (100)\n" \
  "  --templates-from REF.npy  kl_matching templates from reference logits (eval: --val)\n" \
  "  --double               every score from double exponentials (1e-13) instead of f32\n"

#endif
