/*
 * smx attention Q K V -o OUT [--lse LSE] [options]
 *
 * Fused attention (smx_attention.h) over .npy files: Q (B, Hq, Lq, D), K
 * (B, Hkv, Lk, D), V (B, Hkv, Lk, Dv) of any float dtype (read as float32);
 * OUT is float32 (B, Hq, Lq, Dv), LSE float32 (B, Hq, Lq). The tensors are
 * read whole (the scores are never formed); OUT and LSE are written whole, and
 * both or neither (cli/outset.h).
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli/options.h"
#include "cli/message.h"
#include "cli/outset.h"
#include "cli/signals.h"
#include "io/fileio.h"
#include "commands.h"
#include "smx/smx.h"
#include "smx/smx_attention.h"
#include "io/npy_io.h"

/* the whole array as float32; its shape must be 4-d */
static float *read_all(const char *path, uint64_t shape[4], smx_dtype *dtype, int *rc) {
  char err[256];
  smx_npy_reader *r;
  if (smx_npy_open(path, &r, err, sizeof err) != SMX_OK) {
    *rc = smx_cli_fail(SMX_CLI_EXIT_INPUT, "%s", err);   /* the reader's messages start with the name */
    return NULL;
  }
  const smx_npy_info *in = smx_npy_reader_info(r);
  if (in->ndim != 4) {
    *rc = smx_cli_fail(SMX_CLI_EXIT_INPUT, "%s: expected a 4-d array (batch, heads, length, dim), got %d-d", path,
                       in->ndim);
    smx_npy_close(r);
    return NULL;
  }
  memcpy(shape, in->shape, 4 * sizeof shape[0]);
  *dtype = in->dtype;
  size_t n = (size_t)in->count;
  float *x = malloc((n ? n : 1) * sizeof *x);
  if (!x) {
    *rc = smx_cli_fail(SMX_CLI_EXIT_INPUT, "%s: out of memory", path);
  } else if (n && smx_npy_read_elems_f32(r, 0, n, x, err, sizeof err) != SMX_OK) {
    *rc = smx_cli_fail(SMX_CLI_EXIT_INPUT, "%s", err);
    free(x);
    x = NULL;
  }
  /* a Fortran-order file is stored column-major: refuse rather than permute */
  if (x && in->fortran_order) {
    *rc = smx_cli_fail(SMX_CLI_EXIT_INPUT, "%s: Fortran-order arrays are not supported here", path);
    free(x);
    x = NULL;
  }
  smx_npy_close(r);
  return x;
}

/* One .npy output of the set: header and data (n elements of dtype) to fd. 0 or an errno value. */
static int put_npy(int fd, int ndim, const uint64_t *shape, smx_dtype dtype, const void *x, size_t n, char *err,
                   size_t errlen) {
  smx_npy_info h;
  memset(&h, 0, sizeof h);
  h.dtype = dtype;
  const uint16_t one = 1;
  h.big_endian = *(const unsigned char *)&one == 0;   /* the data goes out in this machine's order */
  h.ndim = ndim;
  memcpy(h.shape, shape, (size_t)ndim * sizeof *shape);
  unsigned char hdr[SMX_NPY_FORMAT_MAX];
  size_t hlen;
  if (smx_npy_format_header(&h, hdr, sizeof hdr, &hlen, err, errlen) != SMX_OK) return EINVAL;
  int e = smx_io_write_full(fd, hdr, hlen);
  return e ? e : smx_io_write_full(fd, x, n * smx_dtype_size(dtype));
}

/* OUT and LSE appear together or not at all: both written to temporary
 * files, flushed, then renamed as a set; a stream (stdout, a device) is
 * written after the regular files are safely on the disk, since it cannot be
 * taken back. */
static int write_outputs(const char *paths[2], const uint64_t *so, smx_dtype odt, const void *o, size_t no,
                         const float *lse, size_t nl) {
  const int ndim[2] = { 4, 3 };
  const smx_dtype dt[2] = { odt, SMX_DTYPE_F32 };
  const void *data[2] = { o, lse };
  const size_t count[2] = { no, nl };
  int fd[2] = { -1, -1 }, stream[2] = { 0, 0 }, n = paths[1] ? 2 : 1, failed = 0, e = 0;
  const char *what = "write failed";
  char err[256] = "";
  cli_outset set;
  cli_outset_init(&set);
  for (int i = 0; i < n && !e; i++)
    if ((e = cli_outset_add(&set, paths[i], &fd[i], &stream[i])))
      failed = i, what = e == EISDIR ? "cannot write it" : "cannot create a temporary file next to it";
  for (int pass = 0; pass < 2 && !e; pass++) {   /* regular files, then streams */
    for (int i = 0; i < n && !e; i++)
      if (stream[i] == pass && (e = put_npy(fd[i], ndim[i], so, dt[i], data[i], count[i], err, sizeof err))) failed = i;
    if (!e && pass == 0 && (e = cli_outset_sync(&set, &failed, &what))) break;
  }
  if (!e && cli_signal_caught()) {
    cli_outset_abort(&set);
    return smx_cli_fail(SMX_CLI_EXIT_INTERRUPTED, "interrupted; %s was not written", paths[0]);
  }
  if (e) {
    cli_outset_abort(&set);
  } else if ((e = cli_outset_commit(&set, &failed, &what)) == 0) {
    return 0;
  }
  const char *other = n == 2 ? paths[1 - failed] : NULL;
  if (err[0]) smx_cli_fail(SMX_CLI_EXIT_OUTPUT, "%s: %s", paths[failed], err);
  else smx_cli_fail(SMX_CLI_EXIT_OUTPUT, "%s: %s: %s", paths[failed], what, strerror(e));
  if (other) smx_cli_fail(SMX_CLI_EXIT_OUTPUT, "%s was not written either (the two are written together)", other);
  return SMX_CLI_EXIT_OUTPUT;
}

/* The same file named twice: by its name, or the same inode under two names. */
static int same_file(const char *a, const char *b) {
  if (!strcmp(a, b)) return 1;
  struct stat sa, sb;
  return stat(a, &sa) == 0 && stat(b, &sb) == 0 && S_ISREG(sa.st_mode) && sa.st_dev == sb.st_dev &&
         sa.st_ino == sb.st_ino;
}

/* The option values that the library turns into float: a value beyond
 * FLT_MAX would become inf, and a nonzero one below FLT_MIN would round to 0
 * or lose its precision, which for softcap and the screen window means
 * "off". Such values are refused here with the range that works. */
static int float_value(const char *v, double *out) { return smx_cli_parse_number(v, out) && fabs(*out) <= FLT_MAX; }
static int tiny(double x) { return x != 0.0 && fabs(x) < FLT_MIN; }
static int check_scale(void *args, void *dst, const char *v) {
  (void)args;
  return float_value(v, dst) && *(double *)dst != 0.0 && !tiny(*(double *)dst);
}
static int check_off_or_positive(void *args, void *dst, const char *v) {   /* softcap, the screen window */
  (void)args;
  return float_value(v, dst) && *(double *)dst >= 0.0 && !tiny(*(double *)dst);
}
static int check_float(void *args, void *dst, const char *v) {
  (void)args;
  return float_value(v, dst);   /* a tiny value rounds to the nearest float, 0: nothing is switched off */
}
/* L or L,R, each >= -1 (-1: unbounded); without R, R is 0 when causal, else unbounded */
static int check_window(void *args, void *dst, const char *v) {
  int64_t *lr = dst;
  char *end;
  (void)args;
  if (!v) return 0;
  long long l = strtoll(v, &end, 10), r = -1;
  if (end == v || l < -1) return 0;
  lr[2] = 0;
  if (*end == ',') {
    const char *s = end + 1;
    r = strtoll(s, &end, 10);
    if (end == s || r < -1) return 0;
    lr[2] = 1;
  }
  lr[0] = l;
  lr[1] = r;
  return !*end;
}

/* The plan and its run: in float16 (Q, K, V and OUT stored so) when the inputs are float16 and OUT is to be,
 * else in float32, OUT then converted to odt into ob. */
static smx_status run_plan(smx_attention_desc *d, smx_dtype odt, int f16_in, const float *q, const float *k,
                           const float *v, float *o, void *ob, float *lse, size_t nq, size_t nk, size_t nv, size_t no) {
  int half = f16_in && odt == SMX_DTYPE_F16;
  uint16_t *h = half ? malloc((nq + nk + nv + 1) * sizeof *h) : NULL;
  if (half && !h) return SMX_E_NOMEM;
  smx_status s = SMX_OK;
  if (half) {   /* exact: the values were float16 */
    s = smx_f32_to_f16_n(q, h, nq);
    if (!s) s = smx_f32_to_f16_n(k, h + nq, nk);
    if (!s) s = smx_f32_to_f16_n(v, h + nq + nk, nv);
    d->dtype = SMX_ATTN_F16;
  }
  smx_attention_plan *p;
  if (!s) s = smx_attention_plan_create(d, &p);
  smx_attn_math used = SMX_ATTN_MATH_BF16;
  if (s == SMX_OK && d->math == SMX_ATTN_MATH_BF16 && (smx_attention_plan_math(p, &used), used != SMX_ATTN_MATH_BF16))
    fprintf(stderr, "smx attention: --math bf16: no bf16 tile products for this case on kernel set %s "
                    "(AVX512_BF16, and more than 16 query rows per KV head); computed in f32\n", smx_isa());
  if (s == SMX_OK) {
    smx_attention_args args = { .q = half ? (const void *)h : q, .k = half ? (const void *)(h + nq) : k,
                                .v = half ? (const void *)(h + nq + nk) : v, .o = half ? ob : (void *)o, .lse = lse };
    s = smx_attention_run(p, &args, NULL, 0, NULL);
    smx_attention_plan_destroy(p);
  }
  free(h);
  if (s || half || !ob) return s;
  if (odt == SMX_DTYPE_F16) return smx_f32_to_f16_n(o, ob, no);
  for (size_t i = 0; i < no; i++) ((double *)ob)[i] = o[i];
  return SMX_OK;
}

typedef struct attention_args {
  cli_common run;
  const char *lse;
  int causal, top_left, kind, no_vnorm, no_tanhnorm, dtype, math;
  double scale, softcap, sigmoid_bias, screen_r, screen_window;
  int64_t window[3];   /* left, right, whether right was given; window[0] = -2: no --window */
} attention_args;

#define ATTN(field) offsetof(attention_args, field)
#define FLOAT_RANGE "within float range (1.2e-38 to 3.4e+38"
static const attention_args attention_defaults = { .run = CLI_COMMON_INIT, .window = { -2, -1, 0 } };
static const cli_opt attention_opts[] = {
  CLI_PATH("-o", "--output", "OUT", CLI_OPT_OUTPUT, ATTN(run.out), "npy", 0, "the result (.npy)"),
  CLI_PATH("--lse", NULL, "LSE", CLI_OPT_OUTPUT, ATTN(lse), "npy", 0,
           "also the float32 (B, Hq, Lq) log-sum-exp (-inf: no key seen);\nOUT and LSE are written together, or neither"),
  CLI_FLAG("--causal", NULL, ATTN(causal), "key j visible to query i iff j <= i + Lk - Lq (bottom-right)"),
  CLI_FLAG("--causal-top-left", NULL, ATTN(top_left), "iff j <= i (torch's is_causal)"),
  CLI_CHECKED("--scale", NULL, "S", ATTN(scale), check_scale, "a nonzero number " FLOAT_RANGE " in magnitude)",
              "default 1/sqrt(D)"),
  CLI_CHECKED("--window", NULL, "L[,R]", ATTN(window), check_window, "L or L,R with L, R >= -1",
              "keys within L before (and R after, default 0 when causal,\nelse unbounded) the query position"),
  CLI_CHECKED("--softcap", NULL, "C", ATTN(softcap), check_off_or_positive,
              "0 (off) or a positive number " FLOAT_RANGE ")", "C tanh(s / C) on the scores"),
  CLI_CHOICE("--kind", ATTN(kind), "softmax|sigmoid|softpick|screen", "(default softmax)"),
  CLI_CHECKED("--sigmoid-bias", NULL, "B", ATTN(sigmoid_bias), check_float,
              "a number within float range (at most 3.4e+38 in magnitude)", "for --kind sigmoid"),
  CLI_NUM("--screen-r", NULL, "R", CLI_OPT_DOUBLE, ATTN(screen_r), DBL_TRUE_MIN, 1, NULL,
          "for --kind screen (Multiscreen): acceptance width in (0, 1]"),
  CLI_CHECKED("--screen-window", NULL, "W", ATTN(screen_window), check_off_or_positive,
              "0 (none) or a positive number " FLOAT_RANGE ")", "for --kind screen: Softmask window (default 0: none)"),
  CLI_FLAG("--screen-no-vnorm", NULL, ATTN(no_vnorm), "for --kind screen: V as given, not unit-normalised"),
  CLI_FLAG("--screen-no-tanhnorm", NULL, ATTN(no_tanhnorm), "for --kind screen: no TanhNorm on the output"),
  CLI_CHOICE("--math", ATTN(math), "auto|f32|bf16", "tile arithmetic: bf16 lets the f32 inputs use bf16 products "
             "(Q, K, V\nand P rounded to bf16) where the CPU has AVX512_BF16, else f32\n(a note says so)"),
  CLI_DTYPE(ATTN(dtype),
            "dtype of OUT (default f32); computed in float16 when Q, K\nand V are float16 and OUT is, else in float32"),
};
static const cli_optset attention_sets[] = { CLI_OWN(attention_opts), { cli_common_opts + 1, 1, ATTN(run) } };

static int run_attention(const cli_spec *spec, int argc, char **argv) {
  attention_args a;
  const char *files[3];
  int rc = cli_parse(spec, argc, argv, &a, files);
  if (rc) return rc;
  static const smx_attn_kind kinds[] = { SMX_ATTN_SOFTMAX, SMX_ATTN_SIGMOID, SMX_ATTN_SOFTPICK, SMX_ATTN_SCREEN };
  const char *out = a.run.out, *lse_out = a.lse;
  smx_attention_desc d;
  memset(&d, 0, sizeof d);
  d.threads = a.run.threads;
  d.scale = a.scale;
  d.softcap = a.softcap;
  d.sigmoid_bias = a.sigmoid_bias;
  d.kind = kinds[a.kind];
  d.math = (smx_attn_math)a.math;   /* the choices in the enum's order */
  d.screen_r = a.screen_r;
  d.screen_window = a.screen_window;
  d.screen_flags = (a.no_vnorm ? SMX_ATTN_SCREEN_NO_VNORM : 0u) | (a.no_tanhnorm ? SMX_ATTN_SCREEN_NO_TANHNORM : 0u);
  if (a.causal && a.top_left)   /* one would silently win */
    return smx_cli_usage_error("--causal (bottom-right) and --causal-top-left are two alignments of one mask; give one");
  d.causal = a.causal ? SMX_ATTN_CAUSAL_BOTTOM_RIGHT : a.top_left ? SMX_ATTN_CAUSAL_TOP_LEFT : d.causal;
  int have_right = (int)a.window[2];
  if (a.window[0] != -2) d.window = 1, d.window_left = a.window[0], d.window_right = a.window[1];
  if (!files[2]) return smx_cli_usage_error("attention needs three inputs: Q K V (.npy)");
  if (!out) return smx_cli_usage_error("attention needs -o OUT.npy");
  if (lse_out && !strcmp(out, "-") && !strcmp(lse_out, "-"))
    return smx_cli_usage_error("-o - and --lse - would both write to standard output; send one to a file");
  if (lse_out && same_file(out, lse_out)) return smx_cli_usage_error("-o and --lse name the same file '%s'", lse_out);
  if (d.window && !have_right && d.causal) d.window_right = 0;
  if (d.kind == SMX_ATTN_SCREEN && d.screen_r == 0.0) return smx_cli_usage_error("--kind screen needs --screen-r R");

  rc = 0;
  uint64_t sq[4], sk[4], sv[4];
  smx_dtype dq, dk, dv, odt = a.dtype ? (smx_dtype)a.dtype : SMX_DTYPE_F32;
  float *q = NULL, *k = NULL, *v = NULL, *o = NULL, *lse = NULL;
  void *ob = NULL;   /* OUT in odt when that is not float32 */
  if (!(q = read_all(files[0], sq, &dq, &rc)) || !(k = read_all(files[1], sk, &dk, &rc)) ||
      !(v = read_all(files[2], sv, &dv, &rc)))
    goto done;
  if (sk[0] != sq[0] || sv[0] != sq[0] || sk[3] != sq[3] || sv[1] != sk[1] || sv[2] != sk[2] || sk[1] == 0 ||
      sq[1] % sk[1]) {
    rc = smx_cli_fail(SMX_CLI_EXIT_INPUT, "shapes must be Q (B, Hq, Lq, D), K (B, Hkv, Lk, D), V (B, Hkv, Lk, Dv) "
                                          "with Hq a multiple of Hkv");
    goto done;
  }
  d.batch = sq[0]; d.heads_q = sq[1]; d.len_q = sq[2]; d.dim_qk = sq[3];
  d.heads_kv = sk[1]; d.len_k = sk[2]; d.dim_v = sv[3];
  size_t no = (size_t)(sq[0] * sq[1] * sq[2] * sv[3]), nl = (size_t)(sq[0] * sq[1] * sq[2]);
  o = malloc((no ? no : 1) * sizeof *o);
  lse = malloc((nl ? nl : 1) * sizeof *lse);
  ob = odt == SMX_DTYPE_F32 ? NULL : malloc((no ? no : 1) * smx_dtype_size(odt));
  if (!o || !lse || (odt != SMX_DTYPE_F32 && !ob)) {
    rc = smx_cli_fail(SMX_CLI_EXIT_COMPUTE, "out of memory");
    goto done;
  }
  smx_status s = run_plan(&d, odt, dq == SMX_DTYPE_F16 && dk == SMX_DTYPE_F16 && dv == SMX_DTYPE_F16, q, k, v, o,
                           ob, lse, sq[0] * sq[1] * sq[2] * sq[3], sk[0] * sk[1] * sk[2] * sk[3],
                           sv[0] * sv[1] * sv[2] * sv[3], no);
  if (s != SMX_OK) {
    rc = smx_cli_fail(SMX_CLI_EXIT_COMPUTE, "attention: %s", smx_status_string(s));
    goto done;
  }
  uint64_t so[4] = { sq[0], sq[1], sq[2], sv[3] };
  const char *paths[2] = { out, lse_out };
  rc = write_outputs(paths, so, odt, ob ? ob : (void *)o, no, lse, nl);
done:
  free(q); free(k); free(v); free(o); free(lse); free(ob);
  return rc;
}

const cli_spec smx_attention_spec = {
  "attention", run_attention, "fused attention softmax(Q K^T s) V over .npy files",
  "Q K V -o OUT [--lse LSE] [options]",
  "Fused attention softmax(Q K^T * scale + mask) V, never forming the scores. Q is\n"
  "(B, Hq, Lq, D), K (B, Hkv, Lk, D), V (B, Hkv, Lk, Dv), .npy of any float dtype, Hq a\n"
  "multiple of Hkv; OUT is (B, Hq, Lq, Dv), float32 unless --dtype.\n",
  attention_sets, 2,
  "A query row that sees no key gives 0; the results do not depend on --threads.\n",
  3, "three inputs (Q K V)", 0, CLI_DEFAULTS(attention_defaults) };
