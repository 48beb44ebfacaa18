/*
 * What the smx_cuda tests share: storage types, a seeded generator, padded
 * host matrices with a poison pattern, device copies, float64 references of
 * softmax / log-softmax / log-sum-exp (the policy of smx.h), and the checks
 * of the headers' bounds.
 *
 * Every test runs its cases through a backend: the GPU (libsmx_cuda), or,
 * where no GPU is present, the CPU library in its place, so that the harness
 * itself (references, bounds, poison and stride checks) is exercised on
 * every machine; the test then exits 77 (ctest: skipped), since the GPU was
 * not tested.
 */
#ifndef SMX_TESTS_CUDA_HARNESS_H
#define SMX_TESTS_CUDA_HARNESS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "smx/smx.h"
#include "smx/smx_cuda.h"

#define SKIP_CODE 77

enum dtype { DT_F32 = 0, DT_F16 = 1, DT_BF16 = 2 };
extern const char *const dtype_name[3];
size_t dtype_size(int dt);

extern int failures, checks;
#define CHECK(cond, ...)                                                     \
  do {                                                                       \
    checks++;                                                                \
    if (!(cond)) {                                                           \
      if (++failures <= 40) {                                                \
        fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__);                 \
        fprintf(stderr, __VA_ARGS__);                                        \
        fputc('\n', stderr);                                                 \
      }                                                                      \
    }                                                                        \
  } while (0)

/* splitmix64 */
uint64_t rng_next(uint64_t *s);
double rng_uniform(uint64_t *s, double lo, double hi);

/* element i of a buffer of dtype dt, as float; and stores (rounded to nearest even) */
float elem_get(int dt, const void *p, size_t i);
void elem_set(int dt, void *p, size_t i, float v);
/* a poison bit pattern that no kernel computes (a NaN with a payload) */
int elem_is_poison(int dt, const void *p, size_t i);
void fill_poison(int dt, void *p, size_t n);

/* A host matrix rows x cols, leading dimension ld, of dtype dt (bytes = rows * ld elements). */
typedef struct mat {
  int dt;
  size_t rows, cols, ld;
  void *h;
} mat;
mat mat_new(int dt, size_t rows, size_t cols, size_t ld);
void mat_free(mat *m);
float mat_get(const mat *m, size_t r, size_t c);
void mat_set(mat *m, size_t r, size_t c, float v);

/* The row families: random, NaN, -inf masks, all masked, +inf entries, ties, huge spread. */
enum row_kind { ROW_RANDOM, ROW_NAN, ROW_MASKED, ROW_ALL_MASKED, ROW_POSINF, ROW_TIES, ROW_SPREAD, ROW_KINDS };
extern const char *const row_kind_name[ROW_KINDS];
void fill_row(mat *m, size_t r, int kind, uint64_t *seed);

/* float64 references (the policy of smx.h), on the stored (widened) values of row r, temperature t:
 * lse, and softmax / log-softmax into out[cols] */
double ref_lse(const mat *m, size_t r, double t, uint32_t flags);
void ref_softmax(const mat *m, size_t r, double t, uint32_t flags, int log_form, double *out);

/* The bounds (eps = 2^-23; u = the storage's unit roundoff, 0 for f32): 1 when got is within. */
int within_softmax(int dt, double got, double ref, double ti);
int within_log(int dt, double got, double ref);     /* log-softmax and log-sum-exp */
/* the same value class: both NaN, or equal infinities, or both finite */
int same_class(double got, double ref);

/* ------------------------------------------------------------ the backend */
/* 1: the GPU runs the cases; 0: the CPU library stands in (no GPU here). */
extern int use_gpu;
/* Sets use_gpu from smx_cuda_device_count; prints which. */
void backend_init(const char *test);
/* a device copy of a host matrix (or a plain host copy on the CPU backend), and back */
void *dev_upload(const mat *m);
void *dev_alloc(size_t bytes);
void dev_download(mat *m, const void *d);
void dev_copy_to_host(void *h, const void *d, size_t bytes);
void dev_copy_from_host(void *d, const void *h, size_t bytes);
void dev_free(void *d);
/* waits for the device and reports any CUDA error (as a failed check) */
void dev_sync(const char *what);
/* a workspace of the size op needs on rows x cols (NULL when 0), filled in *ex */
void exec_with_workspace(smx_cuda_exec *ex, smx_cuda_op op, size_t rows, size_t cols);
void exec_free(smx_cuda_exec *ex);

/* the result line and exit code: 0 all passed on the GPU, 1 a failure, SKIP_CODE no GPU (harness passed) */
int finish(const char *test);

#endif
