/*
 * smx attention Q K V -o OUT [--lse LSE] [options]
 *
 * Fused attention (smx_attention.h) over .npy files: Q (B, Hq, Lq, D), K
 * (B, Hkv, Lk, D), V (B, Hkv, Lk, Dv) of any float dtype (read as float32);
 * OUT is float32 (B, Hq, Lq, Dv), LSE float32 (B, Hq, Lq). The tensors are
 * read whole (the scores are never formed); OUT is written whole or not at all.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/message.h"
#include "cli/number.h"
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
    "  --lse LSE              also the float32 (B, Hq, Lq) log-sum-exp (-inf: no key seen)\n"
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
    "  --threads N            threads (default 1); results do not depend on it\n"
    "A query row that sees no key gives 0.\n";

/* the whole array as float32; its shape must be 4-d */
static float *read_all(const char *path, uint64_t shape[4], int *rc) {
  char err[256];
  smx_npy_reader *r;
  if (smx_npy_open(path, &r, err, sizeof err) != SMX_OK) {
    *rc = smx_cli_fail(SMX_CLI_EXIT_INPUT, "%s: %s", path, err);
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
    *rc = smx_cli_fail(SMX_CLI_EXIT_INPUT, "%s: %s", path, err);
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

static int write_all(const char *path, int ndim, const uint64_t *shape, const float *x, size_t n) {
  char err[256];
  smx_npy_writer *w;
  if (smx_npy_writer_open(path, SMX_DTYPE_F32, ndim, shape, NULL, &w, err, sizeof err) != SMX_OK)
    return smx_cli_fail(SMX_CLI_EXIT_OUTPUT, "%s: %s", path, err);
  if ((n && smx_npy_write_elems_f32(w, 0, x, n, err, sizeof err) != SMX_OK) ||
      smx_npy_writer_finish(w, err, sizeof err) != SMX_OK) {
    smx_npy_writer_abort(w);
    return smx_cli_fail(SMX_CLI_EXIT_OUTPUT, "%s: %s", path, err);
  }
  return 0;
}

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
    } else if (!strcmp(a, "--causal")) {
      d.causal = SMX_ATTN_CAUSAL_BOTTOM_RIGHT;
    } else if (!strcmp(a, "--causal-top-left")) {
      d.causal = SMX_ATTN_CAUSAL_TOP_LEFT;
    } else if (!strcmp(a, "--scale")) {
      if (!smx_cli_parse_double(v, -1e30, 1e30, &d.scale) || d.scale == 0.0)
        return smx_cli_usage_error("--scale must be a finite nonzero number");
      i++;
    } else if (!strcmp(a, "--softcap")) {
      if (!smx_cli_parse_double(v, 0.0, 1e30, &d.softcap)) return smx_cli_usage_error("--softcap must be >= 0");
      i++;
    } else if (!strcmp(a, "--sigmoid-bias")) {
      if (!smx_cli_parse_double(v, -1e30, 1e30, &d.sigmoid_bias)) return smx_cli_usage_error("--sigmoid-bias must be a number");
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
      if (!smx_cli_parse_double(v, 0.0, 1e30, &d.screen_window)) return smx_cli_usage_error("--screen-window must be >= 0");
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
  rc = write_all(out, 4, so, o, no);
  if (!rc && lse_out) rc = write_all(lse_out, 3, so, lse, nl);
done:
  free(q); free(k); free(v); free(o); free(lse);
  return rc;
}
