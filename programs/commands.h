/*
 * The commands of smx: each cmd_*.c defines the cli_spec of its commands (name, function, summary, help
 * and option tables: cli/options.h), and smx.c lists them. Only smx.c (and the program's entry points) read
 * this list; the shared plumbing in cli/ never does.
 */
#ifndef SMX_PROGRAMS_COMMANDS_H
#define SMX_PROGRAMS_COMMANDS_H

#include "cli/options.h"

/* The whole command line, argv[0] being the program: what main returns.
 * Separate from main so that a fuzz target can run it in-process. */
int smx_cli_main(int argc, char **argv);

/* cmd_rows.c: the row operations, by their op-table rows */
extern const cli_spec smx_softmax_spec, smx_log_softmax_spec, smx_logsumexp_spec, smx_sigmoid_spec,
    smx_multimax_spec, smx_sparsemax_spec, smx_entmax15_spec, smx_entmax_spec, smx_softpick_spec, smx_ssmax_spec,
    smx_sa_softmax_spec, smx_adaptive_softmax_spec, smx_topk_softmax_spec, smx_softplus_l1_spec,
    smx_standardize_softmax_spec;
extern const cli_spec smx_topk_spec;       /* cmd_topk.c      */
extern const cli_spec smx_sample_spec;     /* cmd_sample.c    */
extern const cli_spec smx_xent_spec;       /* cmd_xent.c      */
extern const cli_spec smx_score_spec;      /* cmd_score.c     */
extern const cli_spec smx_eval_spec;       /* cmd_eval.c      */
extern const cli_spec smx_fit_features_spec;   /* cmd_fit_features.c */
extern const cli_spec smx_attention_spec;  /* cmd_attention.c */
extern const cli_spec smx_demo_spec, smx_bench_spec, smx_info_spec;   /* cmd_demo.c */
extern const cli_spec smx_ops_spec;        /* cmd_ops.c       */

#endif
