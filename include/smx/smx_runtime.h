/*
 * smx — the run time: the CPU's ISA and the kernel-set cap, what SMX_ALGO_AUTO picks, the
 * f16 / bf16 array conversions and the library's thread pool. Included by smx/smx.h.
 */
#ifndef SMX_SMX_RUNTIME_H
#define SMX_SMX_RUNTIME_H

#include <stddef.h>
#include <stdint.h>

#include "smx/smx.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------ CPU and ISA */
typedef enum smx_isa_level {
  SMX_ISA_SCALAR = 0,
  SMX_ISA_AVX2 = 1,     /* AVX2 + FMA                    */
  SMX_ISA_AVX512 = 2,   /* AVX-512F (+DQ, VL, BW)        */
  SMX_ISA_NEON = 3,     /* AArch64 Advanced SIMD + FMA   */
  SMX_ISA_AVX512BF16 = 4 /* AVX-512 + AVX512_BF16 (vdpbf16ps): above AVX512 */
} smx_isa_level;

/*
 * The x86 levels in order: scalar < avx2 < avx512 < avx512bf16 (the numbers
 * are stable, not an order: NEON sits between). avx512bf16 runs the avx512
 * kernels except where a family has bf16 ones (attention's tile products).
 */
/** @return the kernel set in use: "scalar", "avx2", "avx512", "avx512bf16" or "neon". */
SMX_API const char *smx_isa(void);
/** @return the best level this CPU supports (ignoring caps). */
SMX_API smx_isa_level smx_cpu_isa(void);
/*
 * Caps the kernel set at `level` (never above what the CPU has), like the
 * environment variable SMX_MAX_ISA=scalar|avx2|avx512|avx512bf16|neon, which
 * is read once at first use; on AArch64 every level above scalar is NEON, on
 * x86 a cap of NEON is no cap.
 * SMX_E_INVALID_ARG for an unknown level. Safe to call at any time;
 * calls already running finish with the kernels they started with.
 */
SMX_API smx_status smx_set_max_isa(smx_isa_level level);
/*
 * What SMX_ALGO_AUTO uses here, for the kernel set in use: the CPU's caches, the
 * wisdom setting and file, and the crossovers, as a few lines of text (what
 * `smx info` prints). snprintf-style: writes at most size bytes, NUL included,
 * and returns the length of the whole text. buf may be NULL when size is 0.
 */
SMX_API size_t smx_auto_describe(char *buf, size_t size);

/* ------------------------------------------------------ f16 / bf16 conversion */
/*
 * n IEEE binary16 (f16) or bfloat16 (bf16) bit patterns to and from float, by the
 * kernels of the f16 / bf16 entry points: widening is exact; narrowing rounds to
 * nearest even, overflows to infinity and keeps NaN a NaN (quieted); the same bits
 * on every ISA. smx_f64_to_f16_n rounds once (not twice through float).
 * SMX_E_INVALID_ARG, nothing written, for a NULL pointer when n > 0 or for x and y
 * overlapping.
 */
SMX_API smx_status smx_f16_to_f32_n(const uint16_t *x, float *y, size_t n);
SMX_API smx_status smx_f32_to_f16_n(const float *x, uint16_t *y, size_t n);
SMX_API smx_status smx_bf16_to_f32_n(const uint16_t *x, float *y, size_t n);
SMX_API smx_status smx_f32_to_bf16_n(const float *x, uint16_t *y, size_t n);
SMX_API smx_status smx_f64_to_f16_n(const double *x, uint16_t *y, size_t n);

/* -------------------------------------------------------------- thread pool */
/*
 * Runs fn(ctx, i) for every i in [0, ntasks) on up to `threads` threads of the
 * library's reused pool (the caller is one of them; 0 or 1: the calling thread
 * only; above 256: 256) and returns when all are done. When the pool is busy
 * with another caller's tasks or cannot grow, the tasks run on the calling
 * thread, so a result must not depend on which thread ran a task. For callers
 * with per-row work of their own around the library's (the Python module's
 * strided gathers). SMX_E_INVALID_ARG for a NULL fn when ntasks > 0.
 */
typedef void (*smx_task_fn)(void *ctx, size_t task);
SMX_API smx_status smx_parallel_for(int threads, size_t ntasks, smx_task_fn fn, void *ctx);

#ifdef __cplusplus
}
#endif
#endif /* SMX_SMX_RUNTIME_H */
