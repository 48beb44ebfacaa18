/*
 * The commands of smx: each cmd_*.c defines its function and its help text,
 * and smx.c lists them in its command table. Only smx.c (and the program's
 * entry points) read this table; the shared plumbing in cli/ never does.
 */
#ifndef SMX_PROGRAMS_COMMANDS_H
#define SMX_PROGRAMS_COMMANDS_H

/* The whole command line, argv[0] being the program: what main returns.
 * Separate from main so that a fuzz target can run it in-process. */
int smx_cli_main(int argc, char **argv);

/* Each command gets the arguments after its name. */
int smx_cmd_softmax(int argc, char **argv);      /* cmd_rows.c   */
int smx_cmd_log_softmax(int argc, char **argv);  /* cmd_rows.c   */
int smx_cmd_logsumexp(int argc, char **argv);    /* cmd_rows.c   */
int smx_cmd_sigmoid(int argc, char **argv);      /* cmd_rows.c   */
int smx_cmd_sparsemax(int argc, char **argv);    /* cmd_rows.c   */
int smx_cmd_entmax15(int argc, char **argv);     /* cmd_rows.c   */
int smx_cmd_entmax(int argc, char **argv);       /* cmd_rows.c   */
/* the row variants (cmd_rows.c) */
int smx_cmd_softpick(int argc, char **argv);
int smx_cmd_ssmax(int argc, char **argv);
int smx_cmd_sa_softmax(int argc, char **argv);
int smx_cmd_adaptive_softmax(int argc, char **argv);
int smx_cmd_topk_softmax(int argc, char **argv);
int smx_cmd_softplus_l1(int argc, char **argv);
int smx_cmd_standardize_softmax(int argc, char **argv);
extern const char smx_softpick_help[], smx_ssmax_help[], smx_sa_softmax_help[], smx_adaptive_softmax_help[],
    smx_topk_softmax_help[], smx_softplus_l1_help[], smx_standardize_softmax_help[];
int smx_cmd_topk(int argc, char **argv);         /* cmd_topk.c   */
int smx_cmd_sample(int argc, char **argv);       /* cmd_sample.c */
int smx_cmd_xent(int argc, char **argv);         /* cmd_xent.c   */
int smx_cmd_score(int argc, char **argv);        /* cmd_score.c  */
int smx_cmd_eval(int argc, char **argv);         /* cmd_eval.c   */
int smx_cmd_fit_features(int argc, char **argv); /* cmd_fit_features.c */
int smx_cmd_attention(int argc, char **argv);    /* cmd_attention.c */
int smx_cmd_demo(int argc, char **argv);         /* cmd_demo.c   */
int smx_cmd_bench(int argc, char **argv);        /* cmd_demo.c   */
int smx_cmd_info(int argc, char **argv);         /* cmd_demo.c   */
int smx_cmd_multimax(int argc, char **argv);     /* cmd_multimax.c */
int smx_cmd_ops(int argc, char **argv);          /* cmd_ops.c    */

/* Help texts, printed whole by `smx CMD --help` and `smx help CMD`. */
extern const char smx_softmax_help[], smx_log_softmax_help[], smx_logsumexp_help[], smx_sigmoid_help[];
extern const char smx_sparsemax_help[], smx_entmax15_help[], smx_entmax_help[];
extern const char smx_topk_help[], smx_sample_help[], smx_xent_help[];
extern const char smx_score_help[], smx_eval_help[], smx_attention_help[], smx_fit_features_help[];
extern const char smx_demo_help[], smx_bench_help[], smx_info_help[];
extern const char smx_multimax_help[];
extern const char smx_ops_help[];

#endif
