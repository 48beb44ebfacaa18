/*
 * One option parser for every command: a command is a cli_spec, its options tables of cli_opt, and the same
 * tables make its parsing, its `smx CMD --help` and the "did you mean" of a mistyped option. Values are
 * read and range-checked by type, and a refusal names the option, the rule and the value given:
 * "smx: --top-p must be a number in (0, 1] (1: off), not '2'", then "smx: try 'smx sample --help'".
 * The row commands take the parameters of their op-table rows (include/smx/smx_ops.h) as options too:
 * name, type, default and range come from the table, so a parameter added there is an option here. A
 * command that computes several rows (smx xent --loss NAME) picks one with a SELECT option, whose values
 * are read from the rows' cli fields: a row added there is a value here, its parameters options.
 */
#ifndef SMX_PROGRAMS_CLI_OPTIONS_H
#define SMX_PROGRAMS_CLI_OPTIONS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "smx/smx.h"

typedef enum cli_opt_type {
  CLI_OPT_FLAG,    /* no value: the int is set to 1                                             */
  CLI_OPT_STRING,  /* const char *: a name or a list ("needs a value")                          */
  CLI_OPT_FILE,    /* const char *: a file ("needs a file name")                                */
  CLI_OPT_OUTPUT,  /* const char *: an output file, refused when its extension says another format
                      than `choices` lists ("npy|csv|tsv", "json", ...)                         */
  CLI_OPT_DOUBLE,  /* double, finite, in [min, max] (min DBL_TRUE_MIN: > 0)                      */
  CLI_OPT_UINT,    /* uint64_t in [min, max] (max 0x1p64: any)                                  */
  CLI_OPT_INT,     /* int64_t, any                                                              */
  CLI_OPT_CHOICE,  /* int: the index of the value in choices ("zero|nan")                       */
  CLI_OPT_CHECK,   /* check(args, dst, v): 1 taken, 0 refused by the rule, -1 refused with its own message */
  CLI_OPT_PARAM,   /* a parameter of the op table: doubles at dst (a DOUBLE4 takes four, "a,b,c,d") */
  CLI_OPT_SELECT   /* const char *: which op-table row the command computes: VALUE picks the rows whose cli
                      field is "<command> <this option> VALUE" ('-' and '_' alike); the rows whose cli is
                      "<command>" are the default, named by their C name. Its parameters become the
                      options (the spec's params), whatever the place of this option on the line */
} cli_opt_type;

typedef struct cli_opt {
  const char *name;     /* "--threads"                                                          */
  const char *alias;    /* "-t", or NULL                                                        */
  const char *meta;     /* the value in the help ("N", "FILE"); NULL for a flag                 */
  cli_opt_type type;
  size_t off;           /* where the value goes: this many bytes into the command's arguments   */
  double min, max;
  const char *choices;  /* CHOICE, OUTPUT                                                       */
  const char *rule;     /* what a value must be, for the refusal; NULL: said from the type and range */
  const char *help;     /* the help, one line or several separated by \n                       */
  int (*check)(void *args, void *dst, const char *v);
  const smx_op_param *param;  /* PARAM                                                          */
  int once;             /* given twice is a usage error                                         */
} cli_opt;

/* Table rows: a flag; a number of a type and range (rule NULL: said from them); a value a function checks; one
 * of several words; a file (type CLI_OPT_FILE or CLI_OPT_OUTPUT, once: given twice is refused). */
#define CLI_FLAG(name, alias, off, help) { name, alias, NULL, CLI_OPT_FLAG, off, 0, 0, NULL, NULL, help, NULL, NULL, 0 }
#define CLI_NUM(name, alias, meta, type, off, min, max, rule, help) \
  { name, alias, meta, type, off, min, max, NULL, rule, help, NULL, NULL, 0 }
#define CLI_CHECKED(name, alias, meta, off, check, rule, help) \
  { name, alias, meta, CLI_OPT_CHECK, off, 0, 0, NULL, rule, help, check, NULL, 0 }
#define CLI_CHOICE(name, off, choices, help) \
  { name, NULL, NULL, CLI_OPT_CHOICE, off, 0, 0, choices, NULL, help, NULL, NULL, 0 }
#define CLI_PATH(name, alias, meta, type, off, formats, once, help) \
  { name, alias, meta, type, off, 0, 0, formats, NULL, help, NULL, NULL, once }
#define CLI_SELECT(name, meta, off, help) { name, NULL, meta, CLI_OPT_SELECT, off, 0, 0, NULL, NULL, help, NULL, NULL, 1 }

/* The rows every command spells the same: -t / --temperature (positive, finite), --dtype f32|f64|f16. */
#define CLI_TEMPERATURE(off, help) \
  CLI_CHECKED("--temperature", "-t", "T", off, cli_check_temperature, CLI_TEMPERATURE_RULE, help)
#define CLI_DTYPE(off, help) CLI_CHECKED("--dtype", NULL, "f32|f64|f16", off, cli_check_dtype, CLI_DTYPE_RULE, help)
/* In a spec's initializer: its option sets with their count; its defaults with their size. */
#define CLI_SETS(...) \
  (const cli_optset[]){ __VA_ARGS__ }, sizeof((const cli_optset[]){ __VA_ARGS__ }) / sizeof(cli_optset)
#define CLI_DEFAULTS(x) &(x), sizeof(x)

/* A table of options whose values lie `base` bytes into the command's arguments (a shared table
 * writes into a struct of its own that the command embeds). */
typedef struct cli_optset {
  const cli_opt *opts;
  size_t n, base;
} cli_optset;
#define CLI_SET(type, member, table) { table, sizeof table / sizeof table[0], offsetof(type, member) }
#define CLI_OWN(table) { table, sizeof table / sizeof table[0], 0 }

typedef struct cli_spec cli_spec;
struct cli_spec {
  const char *name;      /* the command                                                         */
  int (*run)(const cli_spec *self, int argc, char **argv);
  const char *summary;   /* its line in `smx --help`                                            */
  const char *usage;     /* after "usage: smx NAME ": the positionals and the required options; the
                            op table's parameters and " [options]" are added when `params` is set  */
  const char *about;     /* the text after the usage line                                       */
  const cli_optset *sets;
  size_t nsets;
  const char *notes;     /* after the options                                                   */
  int maxpos;            /* positionals taken; -1: the arguments are not parsed (smx bench)      */
  const char *pos_what;  /* for the refusal of one too many: "one input file"                   */
  size_t params;         /* nonzero: the op table's rows named `name` (or the one a SELECT option picks)
                            add their parameters as options, stored as doubles this many bytes into
                            the arguments (cli_params)                                           */
  const void *defaults;  /* the arguments before any option (size bytes), copied first; or NULL     */
  size_t size;
};

/* The parameter values of a row command: the table's defaults (NaN: required), then the options'. */
#define CLI_MAX_PARAM_VALUES 16
typedef struct cli_params {
  double v[CLI_MAX_PARAM_VALUES];
  const smx_op_info *row;   /* the op-table row with the most parameters named by the command (or picked
                               by its SELECT option)                                                */
} cli_params;
/* 0 when every parameter of p->row without a default was given; else the usage error's exit code after
 * "CMD needs --name N". */
int cli_params_given(const cli_spec *s, const cli_params *p);

/* Copies s->defaults into args, then reads argv (the arguments after the command's name) into args and the
 * positionals into pos (maxpos of them, NULL when not given). Returns 0, or the usage error's exit code after
 * its message. The command is named in every later usage error's hint ("try 'smx topk --help'"). */
int cli_parse(const cli_spec *s, int argc, char **argv, void *args, const char **pos);
/* The whole help of a command, from its tables. */
void cli_help(const cli_spec *s, FILE *f);

/* The name of candidates (n of them) nearest to name when it is a likely typo: at most two edits (a
 * swap of neighbours counting as one) and fewer than half its length; NULL otherwise. */
const char *cli_nearest(const char *name, const char *const *candidates, size_t n);

/* Numbers as every command reads them: whole strings only. A finite number (subnormals included: strtod's
 * ERANGE for them is not an error); a whole number in [lo, hi] without sign. 0 if v is not one. */
int smx_cli_parse_number(const char *v, double *out);
int smx_cli_parse_u64(const char *v, uint64_t lo, uint64_t hi, uint64_t *out);

/* v as the tables mean it: 2^53 and 2^64 by name, else the shortest digits that read back. */
void cli_format_number(char *buf, size_t size, double v);

/* The shared options. Each writes into its own struct, which a command embeds (CLI_SET). */
typedef struct cli_files {
  int fmt_in, fmt_out;  /* CLI_FMT_*, or -1: from the file names (formats.h) */
  long axis;            /* negative counts from the end                     */
} cli_files;
#define CLI_FILES_INIT { -1, -1, -1 }
extern const cli_opt cli_files_opts[3];   /* -a/--axis, --format, --in-format */

typedef struct cli_common {
  const char *out;      /* -o, --output                 */
  int threads;          /* --threads (1 unless given)   */
  int quiet;            /* -q, --quiet                  */
  int masked_nan;       /* --masked-row nan             */
} cli_common;
#define CLI_COMMON_INIT { NULL, 1, 0, 0 }
extern const cli_opt cli_common_opts[3];     /* -o/--output, --threads, -q/--quiet */
extern const cli_opt cli_masked_opts[1];  /* --masked-row zero|nan           */
/* The flags of smx_options that --masked-row sets. */
#define CLI_MASK_FLAGS(r) ((r).masked_nan ? (uint32_t)SMX_FLAG_MASKED_ROW_NAN : 0u)

/* Checks for CLI_OPT_CHECK: -t/--temperature (positive, finite), --dtype (f32, f64, f16 and the long
 * names, into an smx_dtype of io/npy_io.h). */
int cli_check_temperature(void *args, void *dst, const char *v);
int cli_check_threads(void *args, void *dst, const char *v);   /* 1 to 256, into an int */
int cli_check_dtype(void *args, void *dst, const char *v);
#define CLI_TEMPERATURE_RULE "a positive finite number"
#define CLI_DTYPE_RULE "f32, f64 or f16"

#endif
