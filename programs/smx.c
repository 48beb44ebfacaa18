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

static int cmd_help(const cli_spec *self, int argc, char **argv);
static int cmd_version(const cli_spec *self, int argc, char **argv);

static const cli_spec help_spec = {
  .name = "help", .run = cmd_help, .summary = "this list, or the help of one command", .usage = "[COMMAND]",
  .about = "Prints the list of commands, or the help of one (the same as smx COMMAND --help).\n",
  .maxpos = 1, .pos_what = "one command name",
};
static const cli_spec version_spec = {
  .name = "version", .run = cmd_version, .summary = "the version of smx", .usage = "  (also smx --version, smx -V)",
  .about = "Prints the version of smx.\n", .pos_what = "no arguments",
};

static const cli_spec *const commands[] = {
  &smx_softmax_spec, &smx_log_softmax_spec, &smx_logsumexp_spec, &smx_sigmoid_spec, &smx_multimax_spec,
  &smx_sparsemax_spec, &smx_entmax15_spec, &smx_entmax_spec, &smx_softpick_spec, &smx_ssmax_spec,
  &smx_sa_softmax_spec, &smx_adaptive_softmax_spec, &smx_topk_softmax_spec, &smx_softplus_l1_spec,
  &smx_standardize_softmax_spec, &smx_topk_spec, &smx_sample_spec, &smx_xent_spec, &smx_score_spec,
  &smx_eval_spec, &smx_fit_features_spec, &smx_attention_spec, &smx_demo_spec, &smx_bench_spec, &smx_info_spec, &smx_ops_spec,
  &help_spec, &version_spec,
};
#define N_COMMANDS (sizeof commands / sizeof commands[0])

static void overview(FILE *f) {
  fputs("usage: smx COMMAND [options]\n"
        "       smx COMMAND --help    (or smx help COMMAND): the options of one command\n"
        "commands:\n",
        f);
  for (size_t i = 0; i < N_COMMANDS; i++) fprintf(f, "  %-12s %s\n", commands[i]->name, commands[i]->summary);
  fputs("inputs and outputs: .npy files, - for stdin or stdout; CSV and TSV too for softmax,\n"
        "log-softmax, logsumexp, sigmoid, topk, sample, xent and score, which stream any axis in\n"
        "bounded memory;\n"
        "a regular output file is written whole or not at all (a temporary renamed over it)\n"
        "exit codes: 0 ok, 1 usage, 2 bad input, 3 output not written, 4 computation refused;\n"
        "            a terminating signal (INT, TERM, HUP, PIPE, ...) removes the temporary files and\n"
        "            ends smx by that signal (a shell shows 128 + its number, 130 for Ctrl-C)\n",
        f);
}

static const cli_spec *find(const char *name) {
  for (size_t i = 0; i < N_COMMANDS; i++)
    if (!strcmp(commands[i]->name, name)) return commands[i];
  return NULL;
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
  const char *names[N_COMMANDS];
  for (size_t i = 0; i < N_COMMANDS; i++) names[i] = commands[i]->name;
  const char *best = cli_nearest(name, names, N_COMMANDS);
  if (best) return smx_cli_usage_error("unknown command '%s'; did you mean '%s'?", name, best);
  return smx_cli_usage_error("unknown command '%s'", name);
}

static int cmd_help(const cli_spec *self, int argc, char **argv) {
  const char *name;
  int rc = cli_parse(self, argc, argv, NULL, &name);
  if (rc) return rc;
  smx_cli_set_command(NULL);   /* a name that is no command: the overview is the help to try */
  if (!name) { overview(stdout); return SMX_CLI_EXIT_OK; }
  const cli_spec *c = find(name);
  if (!c) return unknown_command(name);
  cli_help(c, stdout);
  return SMX_CLI_EXIT_OK;
}

static int cmd_version(const cli_spec *self, int argc, char **argv) {
  int rc = cli_parse(self, argc, argv, NULL, NULL);
  if (rc) return rc;
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
  smx_cli_set_command(NULL);
  if (!strcmp(name, "--help") || !strcmp(name, "-h")) return cmd_help(&help_spec, argc - 2, argv + 2);
  if (!strcmp(name, "--version") || !strcmp(name, "-V")) return cmd_version(&version_spec, 0, NULL);
  const cli_spec *c = find(name);
  if (!c) return unknown_command(name);
  if (asks_help(argc - 2, argv + 2)) {
    cli_help(c, stdout);
    return SMX_CLI_EXIT_OK;
  }
  return c->run(c, argc - 2, argv + 2);
}
