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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli/formats.h"
#include "cli/message.h"
#include "cli/number.h"
#include "cli/outset.h"
#include "cli/signals.h"
#include "io/fileio.h"
#include "commands.h"
#include "smx/smx.h"
#include "smx/smx_attention.h"
#include "io/npy_io.h"

const char smx_attention_help[] =
    "usage: smx attention Q K V -o OUT [--lse LSE] [options]\n"
    "Fused attention softmax(Q K^T * scale + mask) V, never forming the scores. Q is\n"
    "(B, Hq, Lq, D), K (B, Hkv, Lk, D), V (B, Hkv, Lk, Dv), .npy of any float dtype, Hq a\n"
    "multiple of Hkv; OUT is float32 (B, Hq, Lq, Dv).\n"
    "  -o, --output OUT       the result (.npy)\n"
    "  --lse LSE              also the float32 (B, Hq, Lq) log-sum-exp (-inf: no key seen);\n"
    "                         OUT and LSE are written together, or neither\n"
    "  --causal               key j visible to query i iff j <= i + Lk - Lq (bottom-right)\n"
    "  --causal-top-left      iff j <= i (torch's is_causal)\n"
    "  --scale S              default 1/sqrt(D)\n"
    "  --window L[,R]         keys within L before (and R after, default 0 when causal,\n"
    "                         else unbounded) the query position\n"
    "  --softcap C            C tanh(s / C) on the scores\n"
    "  --kind softmax|sigmoid|softpick|screen   (default softmax)\n"
    "  --sigmoid-bias B       for --kind sigmoid\n"
    "  --screen-r R           for --kind screen (Multiscreen): acceptance width in (0, 1]\n"
    "  --screen-window W      for --kind screen: Softmask window (default 0: none)\n"
    "  --screen-no-vnorm      for --kind screen: V as given, not unit-normalised\n"
    "  --screen-no-tanhnorm   for --kind screen: no TanhNorm on the output\n"
    "  --math auto|f32|bf16   tile arithmetic: bf16 lets the f32 inputs use bf16 products (Q, K, V and P\n"
    "                         rounded to bf16) where the CPU has AVX512_BF16, else f32 (a note says so)\n"
    "  --threads N            threads (default 1); results do not depend on it\n"
    "A query row that sees no key gives 0.\n";

/* the whole array as float32; its shape must be 4-d */
static float *read_all(const char *path, uint64_t shape[4], int *rc) {
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

/* One float32 .npy output of the set: header and data to fd. 0 or an errno value. */
static int put_npy(int fd, int ndim, const uint64_t *shape, const float *x, size_t n, char *err, size_t errlen) {
  smx_npy_info h;
  memset(&h, 0, sizeof h);
  h.dtype = SMX_DTYPE_F32;
  const uint16_t one = 1;
  h.big_endian = *(const unsigned char *)&one == 0;   /* the data goes out in this machine's order */
  h.ndim = ndim;
  memcpy(h.shape, shape, (size_t)ndim * sizeof *shape);
  unsigned char hdr[SMX_NPY_FORMAT_MAX];
  size_t hlen;
  if (smx_npy_format_header(&h, hdr, sizeof hdr, &hlen, err, errlen) != SMX_OK) return EINVAL;
  int e = smx_io_write_full(fd, hdr, hlen);
  return e ? e : smx_io_write_full(fd, x, n * sizeof *x);
}

/* OUT and LSE appear together or not at all: both written to temporary
 * files, flushed, then renamed as a set; a stream (stdout, a device) is
 * written after the regular files are safely on the disk, since it cannot be
 * taken back. */
static int write_outputs(const char *paths[2], const uint64_t *so, const float *o, size_t no, const float *lse,
                         size_t nl) {
  const int ndim[2] = { 4, 3 };
  const float *data[2] = { o, lse };
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
      if (stream[i] == pass && (e = put_npy(fd[i], ndim[i], so, data[i], count[i], err, sizeof err))) failed = i;
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

int smx_cmd_attention(int argc, char **argv) {
  const char *files[3] = { NULL, NULL, NULL }, *out = NULL, *lse_out = NULL;
  int nfiles = 0, have_right = 0;
  smx_attention_desc d;
  memset(&d, 0, sizeof d);
  d.threads = 1;
  for (int i = 0; i < argc; i++) {
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (!strcmp(a, "-o") || !strcmp(a, "--output")) {
      if (!v) return smx_cli_usage_error("%s needs a file name", a);
      out = v; i++;
    } else if (!strcmp(a, "--lse")) {
      if (!v) return smx_cli_usage_error("%s needs a file name", a);
      lse_out = v; i++;
    } else if (!strcmp(a, "--causal") || !strcmp(a, "--causal-top-left")) {
      smx_attn_causal c = !strcmp(a, "--causal") ? SMX_ATTN_CAUSAL_BOTTOM_RIGHT : SMX_ATTN_CAUSAL_TOP_LEFT;
      if (d.causal && d.causal != c)   /* the last one would silently win */
        return smx_cli_usage_error("--causal (bottom-right) and --causal-top-left are two alignments of one mask; give one");
      d.causal = c;
    } else if (!strcmp(a, "--scale")) {
      if (!float_value(v, &d.scale) || d.scale == 0.0 || tiny(d.scale))
        return smx_cli_usage_error("--scale must be a nonzero number within float range (%.2g to %.2g in magnitude), "
                                   "not '%s'", FLT_MIN, FLT_MAX, v ? v : "");
      i++;
    } else if (!strcmp(a, "--softcap")) {
      if (!float_value(v, &d.softcap) || d.softcap < 0.0 || tiny(d.softcap))
        return smx_cli_usage_error("--softcap must be 0 (off) or a positive number within float range (%.2g to %.2g), "
                                   "not '%s'", FLT_MIN, FLT_MAX, v ? v : "");
      i++;
    } else if (!strcmp(a, "--sigmoid-bias")) {
      /* a tiny bias may round to 0: that is the nearest float, nothing is switched off */
      if (!float_value(v, &d.sigmoid_bias))
        return smx_cli_usage_error("--sigmoid-bias must be a number within float range (at most %.2g in magnitude), "
                                   "not '%s'", FLT_MAX, v ? v : "");
      i++;
    } else if (!strcmp(a, "--window")) {
      char *end;
      if (!v) return smx_cli_usage_error("--window needs L or L,R");
      long long l = strtoll(v, &end, 10), r = -1;
      if (end == v || l < -1) return smx_cli_usage_error("--window must be L or L,R with L, R >= -1");
      if (*end == ',') {
        const char *s = end + 1;
        r = strtoll(s, &end, 10);
        if (end == s || r < -1) return smx_cli_usage_error("--window must be L or L,R with L, R >= -1");
        have_right = 1;
      }
      if (*end) return smx_cli_usage_error("--window must be L or L,R with L, R >= -1");
      d.window = 1; d.window_left = l; d.window_right = r;
      i++;
    } else if (!strcmp(a, "--kind")) {
      if (!v) return smx_cli_usage_error("--kind needs softmax, sigmoid, softpick or screen");
      if (!strcmp(v, "softmax")) d.kind = SMX_ATTN_SOFTMAX;
      else if (!strcmp(v, "sigmoid")) d.kind = SMX_ATTN_SIGMOID;
      else if (!strcmp(v, "softpick")) d.kind = SMX_ATTN_SOFTPICK;
      else if (!strcmp(v, "screen")) d.kind = SMX_ATTN_SCREEN;
      else return smx_cli_usage_error("--kind must be softmax, sigmoid, softpick or screen");
      i++;
    } else if (!strcmp(a, "--screen-r")) {
      if (!smx_cli_parse_double(v, 0.0, 1.0, &d.screen_r) || d.screen_r == 0.0)
        return smx_cli_usage_error("--screen-r must lie in (0, 1]");
      i++;
    } else if (!strcmp(a, "--screen-window")) {
      if (!float_value(v, &d.screen_window) || d.screen_window < 0.0 || tiny(d.screen_window))
        return smx_cli_usage_error("--screen-window must be 0 (none) or a positive number within float range "
                                   "(%.2g to %.2g), not '%s'", FLT_MIN, FLT_MAX, v ? v : "");
      i++;
    } else if (!strcmp(a, "--math")) {
      if (v && !strcmp(v, "auto")) d.math = SMX_ATTN_MATH_AUTO;
      else if (v && !strcmp(v, "f32")) d.math = SMX_ATTN_MATH_F32;
      else if (v && !strcmp(v, "bf16")) d.math = SMX_ATTN_MATH_BF16;
      else return smx_cli_usage_error("--math must be auto, f32 or bf16, not '%s'", v ? v : "");
      i++;
    } else if (!strcmp(a, "--screen-no-vnorm")) {
      d.screen_flags |= SMX_ATTN_SCREEN_NO_VNORM;
    } else if (!strcmp(a, "--screen-no-tanhnorm")) {
      d.screen_flags |= SMX_ATTN_SCREEN_NO_TANHNORM;
    } else if (!strcmp(a, "--threads")) {
      uint64_t n;
      if (!smx_cli_parse_u64(v, 1, 256, &n)) return smx_cli_usage_error("--threads must be a whole number from 1 to 256");
      d.threads = (int)n; i++;
    } else if (a[0] == '-' && a[1] != '\0') {
      return smx_cli_usage_error("unknown option '%s' for attention", a);
    } else if (nfiles < 3) {
      files[nfiles++] = a;
    } else {
      return smx_cli_usage_error("attention takes three inputs (Q K V); '%s' is extra", a);
    }
  }
  if (nfiles < 3) return smx_cli_usage_error("attention needs three inputs: Q K V (.npy)");
  if (!out) return smx_cli_usage_error("attention needs -o OUT.npy");
  /* both outputs are .npy: a name that says CSV or TSV would get .npy bytes under the wrong extension */
  const char *names[2] = { out, lse_out };
  for (int i = 0; i < 2; i++) {
    int fmt = 0;
    if (names[i] && strcmp(names[i], "-") &&
        (cli_resolve_format(i ? "--lse" : "-o", -1, names[i], cli_parse_format("npy"), &fmt) ||
         fmt != cli_parse_format("npy")))
      return smx_cli_usage_error("%s %s: attention writes .npy only; name the file .npy", i ? "--lse" : "-o", names[i]);
  }
  if (lse_out && !strcmp(out, "-") && !strcmp(lse_out, "-"))
    return smx_cli_usage_error("-o - and --lse - would both write to standard output; send one to a file");
  if (lse_out && same_file(out, lse_out)) return smx_cli_usage_error("-o and --lse name the same file '%s'", lse_out);
  if (d.window && !have_right && d.causal) d.window_right = 0;
  if (d.kind == SMX_ATTN_SCREEN && d.screen_r == 0.0) return smx_cli_usage_error("--kind screen needs --screen-r R");

  int rc = 0;
  uint64_t sq[4], sk[4], sv[4];
  float *q = NULL, *k = NULL, *v = NULL, *o = NULL, *lse = NULL;
  if (!(q = read_all(files[0], sq, &rc)) || !(k = read_all(files[1], sk, &rc)) || !(v = read_all(files[2], sv, &rc)))
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
  if (!o || !lse) {
    rc = smx_cli_fail(SMX_CLI_EXIT_COMPUTE, "out of memory");
    goto done;
  }
  smx_attention_plan *p;
  smx_status s = smx_attention_plan_create(&d, &p);
  if (s == SMX_OK && d.math == SMX_ATTN_MATH_BF16) {
    smx_attn_math used = SMX_ATTN_MATH_F32;
    smx_attention_plan_math(p, &used);
    if (used != SMX_ATTN_MATH_BF16)
      fprintf(stderr, "smx attention: --math bf16: no bf16 tile products for this case on kernel set %s "
                      "(AVX512_BF16, and more than 16 query rows per KV head); computed in f32\n", smx_isa());
  }
  if (s == SMX_OK) {
    smx_attention_args args = { .q = q, .k = k, .v = v, .o = o, .lse = lse };
    s = smx_attention_run(p, &args, NULL, 0, NULL);
    smx_attention_plan_destroy(p);
  }
  if (s != SMX_OK) {
    rc = smx_cli_fail(SMX_CLI_EXIT_COMPUTE, "attention: %s", smx_status_string(s));
    goto done;
  }
  uint64_t so[4] = { sq[0], sq[1], sq[2], sv[3] };
  const char *paths[2] = { out, lse_out };
  rc = write_outputs(paths, so, o, no, lse, nl);
done:
  free(q); free(k); free(v); free(o); free(lse);
  return rc;
}
