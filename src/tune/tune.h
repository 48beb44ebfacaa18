#ifndef SMX_TUNE_TUNE_H
#define SMX_TUNE_TUNE_H
/*
 * SMX_ALGO_AUTO's crossovers, in bytes of working set relative to the CPU's
 * caches (src/tune/cpu_caches.h), optionally moved by a calibration run that
 * is cached on disk ("wisdom", src/tune/wisdom.h, src/tune/calibrate.h).
 * docs/crossovers.md describes the rules and where the ratios come from.
 */
#include <stddef.h>
#include <stdint.h>

#include "core/op.h"
#include "smx/smx.h"
#include "tune/cpu_caches.h"

/* a crossover that is never reached: three-pass at every size */
#define SMX_TUNE_NEVER SIZE_MAX

enum { SMX_TUNE_MODEL = 0, SMX_TUNE_FROM_WISDOM = 1, SMX_TUNE_CALIBRATED = 2 };

typedef struct smx_tune_table {
  /* f32 kernels (f16 / bf16 rows are counted as f32 rows, 4 bytes a column) */
  size_t softmax_ws;  /* softmax, log-softmax: two-pass when a row's x + y bytes exceed this */
  size_t lse_ws;      /* log-sum-exp: two-pass when a row's x bytes exceed this            */
  size_t batch_row;   /* softmax, log-softmax: two-pass when a row's x bytes are at least this ... */
  size_t batch_total; /* ... and all rows' x bytes at least this                                   */
  size_t lse_batch_row, lse_batch_total; /* the same for log-sum-exp                               */
  smx_algo lse_far;   /* what log-sum-exp takes past its crossovers: two-pass, or online (AVX2)     */
  /* f64 log-softmax and log-sum-exp (f64 softmax is three-pass at every size) */
  size_t f64_row;         /* two-pass when a row's x bytes are at least this */
  size_t f64_batch_row;   /* or a row's x bytes at least this ...            */
  size_t f64_batch_total; /* ... and all rows' x bytes at least this         */
  int source;             /* SMX_TUNE_MODEL, _FROM_WISDOM or _CALIBRATED      */
  double calib_s;         /* wall seconds the calibration took, when it ran  */
} smx_tune_table;

/* The cache model for kernel set `isa`: the development machine's measured
 * crossovers divided by its cache sizes, times this CPU's. With AVX2 kernels
 * two-pass won only for log-sum-exp out of cache, and with the scalar and NEON
 * kernels it is not known to win: their other crossovers are NEVER. */
void smx_tune_model(const smx_cpu_caches *c, const char *isa, smx_tune_table *t);

/* The table AUTO uses for kernel set `isa`: the model, or the model with the
 * wisdom file's (or a fresh calibration's) row crossovers when wisdom is on.
 * Settled once per kernel set and process (thread-safe); never NULL, never fails. */
const smx_tune_table *smx_tune_table_for(const char *isa);

smx_algo smx_tune_pick_f32(const smx_tune_table *t, smx_op op, size_t rows, size_t cols);
smx_algo smx_tune_pick_f64(const smx_tune_table *t, smx_op op, size_t rows, size_t cols);

/* Wisdom settings, read once from the environment:
 *   SMX_NO_WISDOM=1      no file, no calibration: the cache model only (wins over SMX_WISDOM)
 *   SMX_WISDOM=1         wisdom on, file $XDG_CACHE_HOME/smx/wisdom-<isa>-<cpu hash>
 *                        ($HOME/.cache when XDG_CACHE_HOME is unset)
 *   SMX_WISDOM=/a/path   wisdom on, that file
 *   unset, empty or 0    off (the default)
 * SMX_TUNE_DEBUG=1 prints the calibration's timings to stderr. */
typedef struct smx_tune_config {
  int enabled;
  int disabled_by_env; /* SMX_NO_WISDOM set */
  const char *file;    /* SMX_WISDOM's path, or NULL for the default path */
} smx_tune_config;
const smx_tune_config *smx_tune_config_get(void);

/* The wisdom file used for kernel set `isa` (creating its directory when
 * `mkdirs`); -1 when there is none (no HOME, path too long). */
int smx_tune_wisdom_path(const char *isa, char *buf, size_t n, int mkdirs);

const char *smx_tune_source_name(int source);
#endif
