/*
 * smx: the command table and the dispatch. Each command lives in its own
 * cmd_*.c with its help text beside its option parsing; this file only
 * lists them, answers help and version the way git and zstd do, and hands
 * the rest of the command line to the command named. Data goes to files or
 * stdout, messages to stderr prefixed "smx: "; exit codes in cli/message.h.
 */
#include <stdio.h>
#include <string.h>

#include "cli/message.h"
#include "commands.h"
#include "smx/smx.h"

static int cmd_help(int argc, char **argv);
static int cmd_version(int argc, char **argv);

static const char help_help[] =
    "usage: smx help [COMMAND]\n"
    "Prints the list of commands, or the help of one (the same as smx COMMAND --help).\n";
static const char version_help[] =
    "usage: smx version   (also smx --version, smx -V)\n"
    "Prints the version of smx.\n";

typedef struct command {
  const char *name;
  int (*run)(int argc, char **argv);  /* the arguments after the name */
  const char *summary;                /* one line of the overview     */
  const char *help;                   /* the whole help, for --help   */
} command;

static const command commands[] = {
  { "softmax", smx_cmd_softmax, "softmax over an axis (default the last)", smx_softmax_help },
  { "log-softmax", smx_cmd_log_softmax, "log-softmax over an axis", smx_log_softmax_help },
  { "logsumexp", smx_cmd_logsumexp, "log-sum-exp over an axis (the axis is removed)", smx_logsumexp_help },
  { "sigmoid", smx_cmd_sigmoid, "sigmoid, elementwise: 1 / (1 + exp(-x / T))", smx_sigmoid_help },
  { "multimax", smx_cmd_multimax, "MultiMax (softmax of piecewise-modulated scores) over an axis", smx_multimax_help },
  { "sparsemax", smx_cmd_sparsemax, "sparsemax over an axis (projection onto the simplex)", smx_sparsemax_help },
  { "entmax15", smx_cmd_entmax15, "exact 1.5-entmax over an axis", smx_entmax15_help },
  { "entmax", smx_cmd_entmax, "alpha-entmax over an axis (--alpha A > 1, bisection)", smx_entmax_help },
  { "softpick", smx_cmd_softpick, "softpick over an axis (rectified, not summing to one)", smx_softpick_help },
  { "ssmax", smx_cmd_ssmax, "Scalable-Softmax over an axis: softmax((s log n) x)", smx_ssmax_help },
  { "sa-softmax", smx_cmd_sa_softmax, "Self-Adjust Softmax over an axis: x * softmax(x)", smx_sa_softmax_help },
  { "adaptive-softmax", smx_cmd_adaptive_softmax, "adaptive-temperature softmax over an axis",
    smx_adaptive_softmax_help },
  { "topk-softmax", smx_cmd_topk_softmax, "softmax over the K largest entries of an axis", smx_topk_softmax_help },
  { "softplus-l1", smx_cmd_softplus_l1, "softplus normalised to sum one over an axis", smx_softplus_l1_help },
  { "standardize-softmax", smx_cmd_standardize_softmax, "softmax of z-scored logits over an axis",
    smx_standardize_softmax_help },
  { "topk", smx_cmd_topk, "the K largest softmax probabilities over an axis, and their indices", smx_topk_help },
  { "sample", smx_cmd_sample, "one token per row drawn from the logits (top-k, top-p, min-p)", smx_sample_help },
  { "xent", smx_cmd_xent, "cross-entropy of logits against integer targets, and its gradient", smx_xent_help },
  { "score", smx_cmd_score, "per-sample OOD scores (higher = more in-distribution)", smx_score_help },
  { "eval", smx_cmd_eval, "OOD metrics and calibration of in- and out-of-distribution logits", smx_eval_help },
  { "fit-features", smx_cmd_fit_features, "fit the feature OOD scores (mahalanobis, knn, vim, react) once",
    smx_fit_features_help },
  { "attention", smx_cmd_attention, "fused attention softmax(Q K^T s) V over .npy files", smx_attention_help },
  { "demo", smx_cmd_demo, "softmax of sample rows and a quick speed table", smx_demo_help },
  { "bench", smx_cmd_bench, "smx against oneDNN, XNNPACK and the memory roof", smx_bench_help },
  { "info", smx_cmd_info, "version, kernel set in use, CPU support", smx_info_help },
  { "ops", smx_cmd_ops, "the library's operations, from its op table (--markdown: docs/ops.md)", smx_ops_help },
  { "help", cmd_help, "this list, or the help of one command", help_help },
  { "version", cmd_version, "the version of smx", version_help },
};
#define N_COMMANDS (sizeof commands / sizeof commands[0])

static void overview(FILE *f) {
  fputs("usage: smx COMMAND [options]\n"
        "       smx COMMAND --help    (or smx help COMMAND): the options of one command\n"
        "commands:\n",
        f);
  for (size_t i = 0; i < N_COMMANDS; i++) fprintf(f, "  %-12s %s\n", commands[i].name, commands[i].summary);
  fputs("inputs and outputs: .npy files, - for stdin or stdout; CSV and TSV too for softmax,\n"
        "log-softmax, logsumexp, sigmoid, topk, sample, xent and score, which stream any axis in\n"
        "bounded memory;\n"
        "a regular output file is written whole or not at all (a temporary renamed over it)\n"
        "exit codes: 0 ok, 1 usage, 2 bad input, 3 output not written, 4 computation refused;\n"
        "            a terminating signal (INT, TERM, HUP, PIPE, ...) removes the temporary files and\n"
        "            ends smx by that signal (a shell shows 128 + its number, 130 for Ctrl-C)\n",
        f);
}

static const command *find(const char *name) {
  for (size_t i = 0; i < N_COMMANDS; i++)
    if (!strcmp(commands[i].name, name)) return &commands[i];
  return NULL;
}

/* Edit distance of two short strings, counting an insertion, a deletion,
 * a substitution or a swap of two neighbours as one edit (the optimal
 * string alignment distance), since a swap is the commonest typo. Names of
 * 64 bytes or more count as far from everything. */
static size_t distance(const char *a, const char *b) {
  enum { MAX = 64 };
  size_t la = strlen(a), lb = strlen(b);
  if (la >= MAX || lb >= MAX) return (size_t)-1;
  size_t rows[3][MAX + 1];  /* the rows i - 2, i - 1 and i of the table, in turn */
  for (size_t j = 0; j <= lb; j++) rows[0][j] = j;
  for (size_t i = 1; i <= la; i++) {
    size_t *cur = rows[i % 3], *prev = rows[(i - 1) % 3], *prev2 = rows[(i + 1) % 3];
    cur[0] = i;
    for (size_t j = 1; j <= lb; j++) {
      size_t best = prev[j - 1] + (a[i - 1] != b[j - 1]);
      if (prev[j] + 1 < best) best = prev[j] + 1;
      if (cur[j - 1] + 1 < best) best = cur[j - 1] + 1;
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] && prev2[j - 2] + 1 < best)
        best = prev2[j - 2] + 1;
      cur[j] = best;
    }
  }
  return rows[la % 3][lb];
}

/* The message for a name that is no command, with the nearest command when
 * it is close enough to be a typo (at most two edits, and fewer edits than
 * half the name, so that short words are not matched to anything). */
static int unknown_command(const char *name) {
  /* the names other libraries give to a command: no typo, so the edit distance would not find them */
  static const char *const other_names[][2] = {
    { "cross-entropy", "xent" }, { "cross_entropy", "xent" }, { "crossentropy", "xent" },
    { "log_softmax", "log-softmax" }, { "lse", "logsumexp" }, { "top-k", "topk" }, { "multinomial", "sample" },
    { "sdpa", "attention" }, { "scaled-dot-product-attention", "attention" }, { "ood", "score" },
  };
  for (size_t i = 0; i < sizeof other_names / sizeof other_names[0]; i++)
    if (!strcmp(name, other_names[i][0]))
      return smx_cli_usage_error("unknown command '%s'; did you mean '%s'?", name, other_names[i][1]);
  const command *best = NULL;
  size_t bd = (size_t)-1;
  for (size_t i = 0; i < N_COMMANDS; i++) {
    size_t d = distance(name, commands[i].name);
    if (d < bd) { bd = d; best = &commands[i]; }
  }
  if (best && bd <= 2 && 2 * bd < strlen(name))
    return smx_cli_usage_error("unknown command '%s'; did you mean '%s'?", name, best->name);
  return smx_cli_usage_error("unknown command '%s'", name);
}

static int cmd_help(int argc, char **argv) {
  if (argc == 0) { overview(stdout); return SMX_CLI_EXIT_OK; }
  if (argc > 1) return smx_cli_usage_error("help takes one command name; '%s' is extra", argv[1]);
  const command *c = find(argv[0]);
  if (!c) return unknown_command(argv[0]);
  fputs(c->help, stdout);
  return SMX_CLI_EXIT_OK;
}

static int cmd_version(int argc, char **argv) {
  (void)argc;
  (void)argv;
  printf("smx %s\n", smx_version_string());
  return SMX_CLI_EXIT_OK;
}

/* Whether the arguments of a command ask for its help, wherever they do:
 * a command line that asks for help is answered, not run. */
static int asks_help(int argc, char **argv) {
  for (int i = 0; i < argc; i++)
    if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) return 1;
  return 0;
}

int smx_cli_main(int argc, char **argv) {
  if (smx_version_number() != SMX_VERSION_NUMBER) {
    fprintf(stderr, "smx: library version %s does not match this program\n", smx_version_string());
    return 2;
  }
  /* Nothing asked for is a usage error, as in git: the overview goes to
   * stderr, so that `smx > out.npy` leaves no help text in a data file. */
  if (argc < 2) {
    overview(stderr);
    return SMX_CLI_EXIT_USAGE;
  }
  const char *name = argv[1];
  if (!strcmp(name, "--help") || !strcmp(name, "-h")) return cmd_help(argc - 2, argv + 2);
  if (!strcmp(name, "--version") || !strcmp(name, "-V")) return cmd_version(0, NULL);
  const command *c = find(name);
  if (!c) return unknown_command(name);
  if (asks_help(argc - 2, argv + 2)) {
    fputs(c->help, stdout);
    return SMX_CLI_EXIT_OK;
  }
  return c->run(argc - 2, argv + 2);
}
