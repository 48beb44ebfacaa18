/* The option parser of every command, its help and its suggestions; see options.h. */
#include "cli/options.h"

#include <ctype.h>
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cli/message.h"
#include "io/npy_io.h"

/* ----------------------------------------------------------------------------------- values by rule */
int smx_cli_parse_number(const char *v, double *out) {
  if (!v || !*v) return 0;
  char *end;
  errno = 0;
  double d = strtod(v, &end);
  if (*end || !isfinite(d)) return 0;
  /* strtod reports ERANGE for a result in the subnormal range too; such a
   * number is still exactly what was asked for, to the nearest double. Only
   * an underflow to zero of a nonzero literal is refused. */
  if (errno == ERANGE && d == 0.0) return 0;
  *out = d;
  return 1;
}

int smx_cli_parse_u64(const char *v, uint64_t lo, uint64_t hi, uint64_t *out) {
  if (!v || !*v || *v == '-' || *v == '+') return 0;
  char *end;
  errno = 0;
  unsigned long long n = strtoull(v, &end, 10);
  if (*end || errno || n < lo || n > hi) return 0;
  *out = n;
  return 1;
}

static int check_axis(void *args, void *dst, const char *v) {
  (void)args;
  char *end = NULL;
  errno = 0;
  long *axis = dst;
  if (v && !strcmp(v, "last")) *axis = -1;
  else if (!v || !*v || (*axis = strtol(v, &end, 10), *end) || errno || *axis < -SMX_NPY_MAX_DIMS ||
           *axis >= SMX_NPY_MAX_DIMS)
    return 0;
  return 1;
}

int cli_check_threads(void *args, void *dst, const char *v) {
  uint64_t n;
  (void)args;
  if (!smx_cli_parse_u64(v, 1, 256, &n)) return 0;
  *(int *)dst = (int)n;
  return 1;
}

int cli_check_temperature(void *args, void *dst, const char *v) {
  double t;
  (void)args;
  if (!smx_cli_parse_number(v, &t) || !(t > 0.0)) return 0;
  *(double *)dst = t;
  return 1;
}

int cli_check_dtype(void *args, void *dst, const char *v) {
  static const char *const names[][2] = { { "f32", "float32" }, { "f64", "float64" }, { "f16", "float16" } };
  static const smx_dtype types[] = { SMX_DTYPE_F32, SMX_DTYPE_F64, SMX_DTYPE_F16 };
  (void)args;
  for (int i = 0; v && i < 3; i++)
    if (!strcmp(v, names[i][0]) || !strcmp(v, names[i][1])) {
      *(int *)dst = (int)types[i];
      return 1;
    }
  return 0;
}

/* ------------------------------------------------------------------------------------- the shared tables */
#define FILES(field) offsetof(cli_files, field)
const cli_opt cli_files_opts[3] = {
  CLI_CHECKED("--axis", "-a", "A", FILES(axis), check_axis, "a whole number (negative counts from the end)",
              "the axis, negative counts from the end (default -1)"),
  CLI_CHOICE("--format", FILES(fmt_out), "npy|csv|tsv",
             "output format (default: from the extension of each output, else\nnpy; the input's format for -)"),
  CLI_CHOICE("--in-format", FILES(fmt_in), "npy|csv|tsv",
             "input format (default: from the extension of each input, else npy)"),
};

#define RUN(field) offsetof(cli_common, field)
const cli_opt cli_common_opts[3] = {
  CLI_PATH("-o", "--output", "FILE", CLI_OPT_OUTPUT, RUN(out), "npy|csv|tsv", 0,
           "output file (- for stdout); a regular file is written whole\nor not at all (a temporary renamed over "
           "it); a device, FIFO\nor socket is written in place, as a stream, never replaced"),
  CLI_CHECKED("--threads", NULL, "N", RUN(threads), cli_check_threads, "a whole number from 1 to 256",
              "threads to use (default 1); the results do not depend on it"),
  CLI_FLAG("--quiet", "-q", RUN(quiet), "no progress line or notes on stderr"),
};
const cli_opt cli_masked_opts[1] = {
  CLI_CHOICE("--masked-row", RUN(masked_nan), "zero|nan", "rows of all -inf: 0 / -inf (default) or NaN"),
};

/* ---------------------------------------------------------------------------------------- suggestions */
/* Edit distance of two short strings, counting an insertion, a deletion, a substitution or a swap of two
 * neighbours as one edit (the optimal string alignment distance), since a swap is the commonest typo.
 * Names of 64 bytes or more count as far from everything. */
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

const char *cli_nearest(const char *name, const char *const *candidates, size_t n) {
  const char *best = NULL;
  size_t bd = (size_t)-1;
  for (size_t i = 0; i < n; i++) {
    size_t d = candidates[i] ? distance(name, candidates[i]) : (size_t)-1;
    if (d < bd) { bd = d; best = candidates[i]; }
  }
  return best && bd <= 2 && 2 * bd < strlen(name) ? best : NULL;
}

/* ------------------------------------------------------------------------- the options of one command */
enum { MAX_OPTS = 64, MAX_PARAMS = 8, MAX_ROWS = 32 };
typedef struct entry { const cli_opt *o; size_t base; } entry;

/* The command's SELECT option, or NULL. */
static const cli_opt *select_opt(const cli_spec *s) {
  for (size_t k = 0; k < s->nsets; k++)
    for (size_t i = 0; i < s->sets[k].n; i++)
      if (s->sets[k].opts[i].type == CLI_OPT_SELECT) return &s->sets[k].opts[i];
  return NULL;
}

/* The option of s (not a parameter) named or aliased name, or NULL. */
static const cli_opt *shared_opt(const cli_spec *s, const char *name) {
  for (size_t k = 0; k < s->nsets; k++)
    for (size_t i = 0; i < s->sets[k].n; i++) {
      const cli_opt *o = &s->sets[k].opts[i];
      if (!strcmp(o->name, name) || (o->alias && !strcmp(o->alias, name))) return o;
    }
  return NULL;
}

/* The word by which s's SELECT option sel picks row r: its C name for a row of the command itself (cli
 * "<command>"), VALUE for cli "<command> <sel> VALUE"; NULL for a row of another command. */
static const char *row_word(const cli_spec *s, const cli_opt *sel, const smx_op_info *r) {
  size_t n = strlen(s->name), m = sel ? strlen(sel->name) : 0;
  if (!r->cli || strncmp(r->cli, s->name, n)) return NULL;
  if (!r->cli[n]) return r->name;
  if (!sel || r->cli[n] != ' ' || strncmp(r->cli + n + 1, sel->name, m) || r->cli[n + 1 + m] != ' ') return NULL;
  return r->cli + n + 2 + m;
}

/* a and b the same word, '-' and '_' alike */
static int same_word(const char *a, const char *b) {
  for (; *a && *b; a++, b++)
    if (*a != *b && !((*a == '-' || *a == '_') && (*b == '-' || *b == '_'))) return 0;
  return *a == *b;
}

/* The row s computes: of the rows word picks (NULL: the command's own rows, cli "<command>"), the one with
 * the most parameters; NULL: none. */
static const smx_op_info *pick_row(const cli_spec *s, const cli_opt *sel, const char *word) {
  size_t count = 0;
  const smx_op_info *row = NULL;
  smx_op_count(&count);
  for (size_t i = 0; i < count; i++) {
    const smx_op_info *r;
    if (smx_op_at(i, &r) != SMX_OK) continue;
    const char *w = row_word(s, sel, r);
    if (!w || (word ? !same_word(w, word) : strcmp(r->cli, s->name) != 0)) continue;
    if (!row || r->nparams > row->nparams) row = r;
  }
  return row;
}

/* The rows sel can pick, one per word, in the table's order (the command's own rows first); their count. */
static size_t choices(const cli_spec *s, const cli_opt *sel, const smx_op_info **rows) {
  size_t count = 0, n = 0;
  smx_op_count(&count);
  for (int own = 1; own >= 0; own--)
    for (size_t i = 0; i < count && n < MAX_ROWS; i++) {
      const smx_op_info *r;
      if (smx_op_at(i, &r) != SMX_OK || !row_word(s, sel, r) || own != !strcmp(r->cli, s->name)) continue;
      size_t k = 0;
      while (k < n && !same_word(row_word(s, sel, rows[k]), row_word(s, sel, r))) k++;
      if (k == n) rows[n++] = r;
    }
  return n;
}

/* The option of parameter p: -k for a one-letter name (also --k), --top-k (underscores as dashes) for a
 * longer one; a one-letter name that another option of s has as its short form (-a: --axis) is --a alone.
 * alias: "" when none. */
static void param_option(const cli_spec *s, const smx_op_param *p, char *name, size_t size, char *alias,
                         size_t asize) {
  snprintf(name, size, "-%s%s", p->name[1] ? "-" : "", p->name);
  for (char *c = name; *c; c++) if (*c == '_') *c = '-';
  snprintf(alias, asize, "%s", "");
  if (p->name[1]) return;
  const cli_opt *o = shared_opt(s, name);
  if (o && strcmp(o->name, name)) snprintf(name, size, "--%s", p->name);
  else snprintf(alias, asize, "--%s", p->name);
}

/* The options of row's parameters (cli_params at s->params), built into static storage. */
static size_t param_opts(const cli_spec *s, const smx_op_info *row, cli_opt *opts) {
  static char names[MAX_PARAMS][2][40], metas[MAX_PARAMS][16];
  if (!row || row->nvalues > CLI_MAX_PARAM_VALUES) return 0;
  size_t n = row->nparams < MAX_PARAMS ? row->nparams : MAX_PARAMS, at = 0;
  for (size_t i = 0; i < n; i++) {
    const smx_op_param *p = &row->params[i];
    char *name = names[i][0], *alias = names[i][1], *meta = metas[i];
    param_option(s, p, name, sizeof names[i][0], alias, sizeof names[i][1]);
    char up = (char)toupper((unsigned char)p->name[0]);
    if (p->type == SMX_PARAM_DOUBLE4) snprintf(meta, sizeof metas[i], "%c0,%c1,%c2,%c3", up, up, up, up);
    else snprintf(meta, sizeof metas[i], "%c", up);
    cli_opt o = { name, alias[0] ? alias : NULL, p->type == SMX_PARAM_BOOL ? NULL : meta, CLI_OPT_PARAM,
                  s->params + at * sizeof(double), p->min, p->max, NULL, NULL, p->doc, NULL, p, 0 };
    opts[i] = o;
    at += p->type == SMX_PARAM_DOUBLE4 ? 4 : 1;
  }
  return n;
}

/* Every option of s computing row: its parameters first; a shared option of the same name gives way to the
 * parameter, which takes its short form. */
static size_t collect(const cli_spec *s, entry *list, const smx_op_info *row) {
  static cli_opt pbuf[MAX_PARAMS];
  static char alias_buf[MAX_PARAMS][8];
  size_t n = 0, np = 0;
  if (s->params) np = param_opts(s, row, pbuf);
  for (size_t i = 0; i < np; i++) list[n++] = (entry){ &pbuf[i], 0 };
  for (size_t k = 0; k < s->nsets; k++)
    for (size_t i = 0; i < s->sets[k].n && n < MAX_OPTS; i++) {
      const cli_opt *o = &s->sets[k].opts[i];
      int replaced = 0;
      for (size_t j = 0; j < np; j++)
        if (!strcmp(pbuf[j].name, o->name)) {
          replaced = 1;
          if (o->alias && !pbuf[j].alias) {
            snprintf(alias_buf[j], sizeof alias_buf[j], "%s", o->alias);
            pbuf[j].alias = alias_buf[j];
          }
        }
      if (!replaced) list[n++] = (entry){ o, s->sets[k].base };
    }
  return n;
}

/* The value of the SELECT option sel on the line (the last given; NULL: none), read before the rest so that
 * the parameters of the row it picks are options wherever they stand. The values of the other options are
 * skipped ("-o --loss" names a file); the parameters' values, not known yet, are read as positionals. */
static const char *selection(const cli_spec *s, const cli_opt *sel, int argc, char **argv) {
  const char *word = NULL;
  size_t m = strlen(sel->name);
  for (int i = 0; i < argc && strcmp(argv[i], "--"); i++) {
    const char *a = argv[i];
    const cli_opt *o = a[0] == '-' && !strchr(a, '=') ? shared_opt(s, a) : NULL;
    if (!strncmp(a, sel->name, m) && a[m] == '=') word = a + m + 1;
    else if (o == sel) word = i + 1 < argc ? argv[++i] : NULL;
    else if (o && o->type != CLI_OPT_FLAG) i++;
  }
  return word;
}

/* "--loss must be cross_entropy, spherical_z_loss or sdpo_loss, not 'x'", and the nearest when it is a typo */
static int bad_selection(const cli_spec *s, const cli_opt *sel, const char *word) {
  const smx_op_info *rows[MAX_ROWS];
  const char *words[MAX_ROWS];
  char list[1024] = "";
  size_t n = choices(s, sel, rows), at = 0;
  for (size_t i = 0; i < n; i++) {
    words[i] = row_word(s, sel, rows[i]);
    int w = snprintf(list + at, sizeof list - at, "%s%s", !i ? "" : i + 1 < n ? ", " : " or ", words[i]);
    if (w > 0 && (size_t)w < sizeof list - at) at += (size_t)w;
  }
  const char *near = cli_nearest(word, words, n);
  if (near) return smx_cli_usage_error("%s must be %s, not '%s'; did you mean '%s'?", sel->name, list, word, near);
  return smx_cli_usage_error("%s must be %s, not '%s'", sel->name, list, word);
}

int cli_params_given(const cli_spec *s, const cli_params *p) {
  for (size_t i = 0, at = 0; p->row && i < p->row->nparams; at += p->row->params[i++].type == SMX_PARAM_DOUBLE4 ? 4 : 1)
    if (isnan(p->v[at])) {   /* a parameter without default was not given */
      char name[40], alias[40];
      param_option(s, &p->row->params[i], name, sizeof name, alias, sizeof alias);
      return smx_cli_usage_error("%s needs %s %c", s->name, name, toupper((unsigned char)p->row->params[i].name[0]));
    }
  return 0;
}

/* ------------------------------------------------------------------------------------- rules and values */
/* v as the table means it: 2^53 and 2^64 by name, else the shortest digits that read back. */
void cli_format_number(char *buf, size_t size, double v) {
  if (v == 0x1p53) snprintf(buf, size, "2^53");
  else if (v == 0x1p64) snprintf(buf, size, "2^64");
  else
    for (int prec = 1; prec <= 17; prec++) {
      snprintf(buf, size, "%.*g", prec, v);
      if (strtod(buf, NULL) == v) break;
    }
}

/* "a number in (0, 1]", "a number > 1", "a finite number", "a whole number from 1 to 256" */
static void range_rule(char *buf, size_t size, double lo, double hi, int whole) {
  const char *what = whole ? "a whole number" : "a number";
  int open = lo == DBL_TRUE_MIN || lo == 1.0 + DBL_EPSILON;
  double l = lo == DBL_TRUE_MIN ? 0.0 : lo == 1.0 + DBL_EPSILON ? 1.0 : lo;
  char a[32], b[32];
  cli_format_number(a, sizeof a, l);
  cli_format_number(b, sizeof b, hi);
  int unbounded = hi == DBL_MAX || (whole && hi >= 0x1p64);
  if (lo == -DBL_MAX && hi == DBL_MAX) snprintf(buf, size, "%s", whole ? "a whole number" : "a finite number");
  else if (unbounded) snprintf(buf, size, "%s %s %s", what, open ? ">" : ">=", a);
  else if (whole) snprintf(buf, size, "%s from %s to %s", what, a, b);
  else snprintf(buf, size, "%s in %s%s, %s]", what, open ? "(" : "[", a, b);
}

static void rule_of(const cli_opt *o, char *buf, size_t size) {
  if (o->rule) { snprintf(buf, size, "%s", o->rule); return; }
  if (o->type == CLI_OPT_CHOICE) {   /* "a, b or c" */
    size_t at = 0, len = strlen(o->choices);
    for (size_t i = 0; i < len && at + 4 < size; i++) {
      if (o->choices[i] != '|') { buf[at++] = o->choices[i]; continue; }
      const char *sep = strchr(o->choices + i + 1, '|') ? ", " : " or ";
      for (const char *c = sep; *c && at + 4 < size; c++) buf[at++] = *c;
    }
    buf[at] = '\0';
    return;
  }
  if (o->type == CLI_OPT_INT) { snprintf(buf, size, "a whole number"); return; }
  const smx_op_param *p = o->param;
  int whole = o->type == CLI_OPT_UINT || o->type == CLI_OPT_INT ||
              (p && (p->type == SMX_PARAM_INT || p->type == SMX_PARAM_SIZE || p->type == SMX_PARAM_U64));
  char r[96];
  range_rule(r, sizeof r, o->min, o->max, whole);
  if (p && p->type == SMX_PARAM_DOUBLE4)
    snprintf(buf, size, o->min == -DBL_MAX && o->max == DBL_MAX ? "four finite numbers separated by commas"
                                                                 : "four numbers separated by commas, each %s", r);
  else snprintf(buf, size, "%s", r);
}

static int in_range(const cli_opt *o, double d) {
  return d >= (o->min == 1.0 + DBL_EPSILON ? nextafter(1.0, 2.0) : o->min) && d <= o->max;
}

/* a parameter of the op table: a finite number (four of them for DOUBLE4), whole for the integer types */
static int take_param(const cli_opt *o, double *dst, const char *v) {
  if (o->param->type == SMX_PARAM_BOOL) { *dst = 1.0; return 1; }
  char buf[256];
  int n = o->param->type == SMX_PARAM_DOUBLE4 ? 4 : 1;
  if (!v || strlen(v) >= sizeof buf) return 0;
  strcpy(buf, v);
  char *tok = buf;
  for (int k = 0; k < n; k++) {
    char *comma = k + 1 < n ? strchr(tok, ',') : NULL;
    if (k + 1 < n && !comma) return 0;
    if (comma) *comma = '\0';
    double d;
    if (o->param->type == SMX_PARAM_DOUBLE || o->param->type == SMX_PARAM_DOUBLE4) {
      if (!smx_cli_parse_number(tok, &d)) return 0;
    } else {
      uint64_t u;
      if (!smx_cli_parse_u64(tok, 0, UINT64_MAX, &u)) return 0;
      d = (double)u;
    }
    if (!in_range(o, d)) return 0;
    dst[k] = d;
    tok = comma ? comma + 1 : tok;
  }
  return 1;
}

/* The format an extension names among those a command writes, or NULL. */
static const char *known_ext(const char *path) {
  static const char *const known[] = { "npy", "csv", "tsv", "json", "html", "htm" };
  const char *dot = strrchr(path, '.');
  if (!dot || strchr(dot, '/') || strlen(dot + 1) > 4) return NULL;
  char ext[5] = { 0 };
  for (size_t i = 0; dot[1 + i]; i++) ext[i] = (char)tolower((unsigned char)dot[1 + i]);
  for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
    if (!strcmp(ext, known[i])) return known[i];
  return NULL;
}

static int listed(const char *choices, const char *word) {
  size_t n = strlen(word);
  for (const char *c = choices; c; c = strchr(c, '|'), c = c ? c + 1 : NULL)
    if (!strncmp(c, word, n) && (c[n] == '|' || c[n] == '\0')) return 1;
  return 0;
}

static int take(const cli_spec *s, const cli_opt *o, const char *name, char *args, size_t base, const char *v) {
  void *dst = args + base + o->off;
  char rule[160];
  int ok = 1;
  switch (o->type) {
  case CLI_OPT_FLAG: *(int *)dst = 1; return 0;
  case CLI_OPT_STRING: case CLI_OPT_FILE: case CLI_OPT_OUTPUT: case CLI_OPT_SELECT:   /* SELECT: checked first */
    if (!v)
      return smx_cli_usage_error("%s needs %s", name,
                                 o->type == CLI_OPT_FILE || o->type == CLI_OPT_OUTPUT ? "a file name" : "a value");
    if (o->type == CLI_OPT_OUTPUT && strcmp(v, "-")) {
      const char *ext = known_ext(v);
      if (ext && !listed(o->choices, !strcmp(ext, "htm") ? "html" : ext)) {   /* it would say what it is not */
        char list[64] = "";
        for (const char *c = o->choices; c; c = strchr(c, '|'), c = c ? c + 1 : NULL) {
          size_t l = strcspn(c, "|"), at = strlen(list);
          snprintf(list + at, sizeof list - at, "%s.%.*s", !at ? "" : strchr(c, '|') ? ", " : " or ", (int)l, c);
        }
        return smx_cli_usage_error("%s %s: %s writes %s only; name the file %s", name, v, s->name, list, list);
      }
    }
    *(const char **)dst = v;
    return 0;
  case CLI_OPT_DOUBLE: {
    double d;
    ok = smx_cli_parse_number(v, &d) && in_range(o, d);
    if (ok) *(double *)dst = d;
    break;
  }
  case CLI_OPT_UINT: {
    uint64_t u;
    ok = smx_cli_parse_u64(v, (uint64_t)o->min, o->max >= 0x1p64 ? UINT64_MAX : (uint64_t)o->max, &u);
    if (ok) *(uint64_t *)dst = u;
    break;
  }
  case CLI_OPT_INT: {
    char *end;
    errno = 0;
    long long n = v ? strtoll(v, &end, 10) : 0;
    ok = v && end != v && !*end && !errno;
    if (ok) *(int64_t *)dst = (int64_t)n;
    break;
  }
  case CLI_OPT_CHOICE: {
    ok = 0;
    int k = 0;
    for (const char *c = o->choices; c && v && !ok; c = strchr(c, '|'), c = c ? c + 1 : NULL, k++) {
      size_t l = strcspn(c, "|");
      if (strlen(v) == l && !strncmp(c, v, l)) ok = 1, *(int *)dst = k;
    }
    break;
  }
  case CLI_OPT_CHECK:
    ok = o->check(args, dst, v);
    if (ok < 0) return SMX_CLI_EXIT_USAGE;
    break;
  case CLI_OPT_PARAM: ok = take_param(o, dst, v); break;
  }
  if (ok) return 0;
  rule_of(o, rule, sizeof rule);
  return smx_cli_usage_error("%s must be %s, not '%s'", name, rule, v ? v : "");
}

/* An option s does not take: the nearest it takes (or that a row its SELECT option picks takes), and when it
 * is a parameter of such a row, which value of the SELECT option takes it. */
static int unknown(const cli_spec *s, const entry *list, size_t n, const smx_op_info *row, const char *a) {
  static char pnames[MAX_ROWS * MAX_PARAMS][2][40];
  const char *names[2 * MAX_OPTS + 2 * MAX_ROWS * MAX_PARAMS];
  size_t k = 0, np = 0;
  for (size_t i = 0; i < n; i++) {
    names[k++] = list[i].o->name;
    names[k++] = list[i].o->alias;
  }
  const cli_opt *sel = select_opt(s);
  const smx_op_info *rows[MAX_ROWS];
  size_t nr = sel && s->params ? choices(s, sel, rows) : 0;
  for (size_t r = 0; r < nr; r++)
    for (size_t i = 0; rows[r] != row && i < rows[r]->nparams && np < MAX_ROWS * MAX_PARAMS; i++, np++) {
      param_option(s, &rows[r]->params[i], pnames[np][0], sizeof pnames[np][0], pnames[np][1], sizeof pnames[np][1]);
      if (!strcmp(a, pnames[np][0]) || !strcmp(a, pnames[np][1]))
        return smx_cli_usage_error("%s is an option of %s %s, not of %s", a, sel->name, row_word(s, sel, rows[r]),
                                   row ? row_word(s, sel, row) : s->name);
      names[k++] = pnames[np][0];
      names[k++] = pnames[np][1];
    }
  const char *near = cli_nearest(a, names, k);
  if (near) return smx_cli_usage_error("unknown option '%s' for %s; did you mean '%s'?", a, s->name, near);
  return smx_cli_usage_error("unknown option '%s' for %s", a, s->name);
}

int cli_parse(const cli_spec *s, int argc, char **argv, void *args, const char **pos) {
  entry list[MAX_OPTS];
  const cli_opt *sel = select_opt(s);
  const smx_op_info *row = NULL;
  smx_cli_set_command(s->name);
  if (s->params) {   /* the row computed, so that its parameters are options */
    const char *word = sel ? selection(s, sel, argc, argv) : NULL;
    row = pick_row(s, sel, word);
    if (word && !row) return bad_selection(s, sel, word);
  }
  size_t n = collect(s, list, row);
  unsigned char seen[MAX_OPTS] = { 0 };
  int npos = 0, only_pos = 0;
  if (s->defaults) memcpy(args, s->defaults, s->size);
  for (int i = 0; i < s->maxpos; i++) pos[i] = NULL;
  if (s->params) {   /* the table's defaults; NaN: the command checks that it was given */
    cli_params *p = (cli_params *)((char *)args + s->params);
    size_t at = 0;
    p->row = row;
    for (size_t i = 0; row && i < row->nparams && at < CLI_MAX_PARAM_VALUES; i++)
      for (int k = 0; k < (row->params[i].type == SMX_PARAM_DOUBLE4 ? 4 : 1); k++) p->v[at++] = row->params[i].def;
  }
  for (int i = 0; i < argc; i++) {
    const char *a = argv[i];
    if (only_pos || a[0] != '-' || a[1] == '\0') {   /* a positional ("-" is stdin) */
      if (npos < s->maxpos) { pos[npos++] = a; continue; }
      return smx_cli_usage_error("%s takes %s; '%s' is extra", s->name, s->pos_what, a);
    }
    if (!strcmp(a, "--")) { only_pos = 1; continue; }
    char name[64];
    const char *eq = a[1] == '-' ? strchr(a, '=') : NULL, *v = NULL;   /* --name=value */
    snprintf(name, sizeof name, "%.*s", eq ? (int)(eq - a) : (int)strlen(a), a);
    size_t k = 0;
    while (k < n && strcmp(name, list[k].o->name) && !(list[k].o->alias && !strcmp(name, list[k].o->alias))) k++;
    if (k == n) return unknown(s, list, n, row, name);
    const cli_opt *o = list[k].o;
    int flag = o->type == CLI_OPT_FLAG || (o->type == CLI_OPT_PARAM && o->param->type == SMX_PARAM_BOOL);
    if (flag && eq) return smx_cli_usage_error("%s takes no value", name);
    if (!flag) v = eq ? eq + 1 : i + 1 < argc ? argv[++i] : NULL;
    if (o->once && seen[k]) return smx_cli_usage_error("%s given twice", name);
    seen[k] = 1;
    int rc = take(s, o, o->name, args, list[k].base, v);   /* messages name the option as its help does */
    if (rc) return rc;
  }
  return 0;
}

/* ------------------------------------------------------------------------------------------------ help */
/* One option: its names and value from column indent, its help from column 25; dflt: the default to say
 * when it is no parameter (which says its own). */
static void help_line(FILE *f, const cli_opt *o, const char *dflt, int indent) {
  char left[96], def[64] = "";
  const char *first = o->alias && strlen(o->alias) < strlen(o->name) ? o->alias : o->name;
  const char *second = first == o->name ? o->alias : o->name;
  const char *meta = o->meta ? o->meta : o->type == CLI_OPT_CHOICE ? o->choices : NULL;
  snprintf(left, sizeof left, "%s%s%s%s%s", first, second ? ", " : "", second ? second : "", meta ? " " : "",
           meta ? meta : "");
  if (o->param) {
    char d[32];
    cli_format_number(d, sizeof d, o->param->def);
    if (o->param->type == SMX_PARAM_BOOL) def[0] = '\0';
    else if (isnan(o->param->def)) snprintf(def, sizeof def, " (required)");
    else snprintf(def, sizeof def, " (default %s)", d);
  } else if (dflt) snprintf(def, sizeof def, " (default %s)", dflt);
  int field = 24 - indent;
  fprintf(f, "%*s", indent, "");
  if ((int)strlen(left) <= field) fprintf(f, "%-*s ", field, left);
  else fprintf(f, "%s  ", left);
  for (const char *h = o->help; *h; h++) {
    if (*h == '\n') { fputs(h[1] ? "\n                         " : "", f); continue; }
    fputc(*h, f);
  }
  fprintf(f, "%s\n", def);
}

/* text into buf with a newline for the space before each word that would pass column 88 (from 25) */
static void wrap(char *buf, size_t size, const char *text) {
  snprintf(buf, size, "%s", text);
  for (char *line = buf, *space = NULL, *c = buf; *c; c++) {
    if (*c == ' ') space = c;
    if (c - line >= 63 && space) { *space = '\n'; line = space + 1; space = NULL; }
  }
}

/* The values of s's SELECT option sel, each with where it comes from and the options of its parameters. */
static void help_choices(const cli_spec *s, const cli_opt *sel, FILE *f) {
  const smx_op_info *rows[MAX_ROWS];
  size_t n = choices(s, sel, rows);
  fprintf(f, "values of %s (rows of the op table: smx ops NAME), with the options each adds:\n", sel->name);
  for (size_t r = 0; r < n; r++) {
    cli_opt po[MAX_PARAMS];
    char text[512];
    wrap(text, sizeof text, rows[r]->paper ? rows[r]->paper : "");
    cli_opt head = { .name = row_word(s, sel, rows[r]), .type = CLI_OPT_FLAG, .help = text };
    help_line(f, &head, NULL, 2);
    for (size_t i = 0, np = param_opts(s, rows[r], po); i < np; i++) help_line(f, &po[i], NULL, 4);
  }
}

void cli_help(const cli_spec *s, FILE *f) {
  entry list[MAX_OPTS];
  const cli_opt *sel = select_opt(s);
  const smx_op_info *row = s->params ? pick_row(s, sel, NULL) : NULL;
  size_t n = collect(s, list, row);
  fprintf(f, "usage: smx %s%s%s", s->name, s->usage[0] ? " " : "", s->usage);
  for (size_t i = 0; s->params && i < n && list[i].o->param; i++) {
    const cli_opt *o = list[i].o;
    const char *nm = o->alias && strlen(o->alias) < strlen(o->name) ? o->alias : o->name;
    int req = isnan(o->param->def);
    fprintf(f, " %s%s%s%s%s", req ? "" : "[", nm, o->meta ? " " : "", o->meta ? o->meta : "", req ? "" : "]");
  }
  fprintf(f, "%s\n%s", s->params ? " [options]" : "", s->about);
  if (n) fputs("options:\n", f);
  for (size_t i = 0; i < n; i++) help_line(f, list[i].o, list[i].o == sel && row ? row->name : NULL, 2);
  if (sel && s->params) help_choices(s, sel, f);
  fputs(s->notes ? s->notes : "", f);
}
