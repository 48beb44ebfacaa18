/* smx_auto_describe (smx.h): the caches SMX_ALGO_AUTO reads and the crossovers it derived, as text. */
#include <stdarg.h>
#include <stdio.h>

#include "smx/smx.h"
#include "tune/tune.h"

typedef struct text {
  char *buf;
  size_t size, len;
} text;

static void put(text *t, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int k = vsnprintf(t->len < t->size ? t->buf + t->len : NULL, t->len < t->size ? t->size - t->len : 0, fmt, ap);
  va_end(ap);
  if (k > 0) t->len += (size_t)k;
}

static const char *bytes_str(char *b, size_t n, size_t v) {
  if (v == SMX_TUNE_NEVER) snprintf(b, n, "never");
  else if (v >= ((size_t)1 << 20) && v % ((size_t)1 << 20) == 0) snprintf(b, n, "%zu MiB", v >> 20);
  else if (v >= ((size_t)1 << 20)) snprintf(b, n, "%.2f MiB", (double)v / (1 << 20));
  else snprintf(b, n, "%zu KiB", v >> 10);
  return b;
}

size_t smx_auto_describe(char *buf, size_t size) {
  text o = { buf, buf ? size : 0, 0 };
  if (o.size) buf[0] = '\0';
  const smx_cpu_caches *c = smx_cpu_caches_get();
  const smx_tune_config *cfg = smx_tune_config_get();
  char a[32], b[32], d[32], e[32];
  put(&o, "caches (%s): L1d %s, L2 %s, L3 %s shared by %u CPUs (%s each)\n", c->source, bytes_str(a, 32, c->l1d),
      bytes_str(b, 32, c->l2), bytes_str(d, 32, c->l3), c->l3_sharing, bytes_str(e, 32, c->l3_per_cpu));
  char path[4096];
  if (cfg->enabled && smx_tune_wisdom_path(smx_isa(), path, sizeof path, 0) == 0) put(&o, "wisdom: on, %s\n", path);
  else if (cfg->enabled) put(&o, "wisdom: on, no file (no HOME)\n");
  else put(&o, "wisdom: off%s\n", cfg->disabled_by_env ? " (SMX_NO_WISDOM)" : " (SMX_WISDOM=1 turns it on)");
  const smx_tune_table *t = smx_tune_table_for(smx_isa());
  put(&o, "auto (%s", smx_tune_source_name(t->source));
  if (t->source == SMX_TUNE_CALIBRATED) put(&o, ", %.0f ms", t->calib_s * 1e3);
  if (t->softmax_ws == SMX_TUNE_NEVER && t->lse_ws == SMX_TUNE_NEVER && t->batch_row == SMX_TUNE_NEVER &&
      t->lse_batch_row == SMX_TUNE_NEVER && t->f64_row == SMX_TUNE_NEVER) {
    put(&o, "): three-pass at every size\n");
    return o.len;
  }
  put(&o, "): two-pass when a row's x+y exceeds %s (softmax, log-softmax), its x exceeds %s (logsumexp%s)",
      bytes_str(a, 32, t->softmax_ws), bytes_str(b, 32, t->lse_ws), t->lse_far == SMX_ALGO_ONLINE ? ": online" : "");
  if (t->batch_row != SMX_TUNE_NEVER || t->lse_batch_row != SMX_TUNE_NEVER) {
    int lse_only = t->batch_row == SMX_TUNE_NEVER;
    put(&o, ",\n  or%s rows of x >= %s in batches of x >= %s", lse_only ? " (logsumexp)" : "",
        bytes_str(a, 32, lse_only ? t->lse_batch_row : t->batch_row),
        bytes_str(b, 32, lse_only ? t->lse_batch_total : t->batch_total));
  }
  put(&o, "; f64 log-softmax and logsumexp: rows of x >= %s\n", bytes_str(a, 32, t->f64_row));
  return o.len;
}
