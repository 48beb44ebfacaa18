/*
 * The host-side checks that every smx_cuda entry point shares (api.c), for
 * the files that add entry points (api_topk.c): CUDA errors kept as
 * SMX_E_DEVICE, operands (NULL, alignment, overflow, device memory,
 * overlap), the stream's device, the temperature's constants.
 */
#ifndef SMX_CUDA_HOST_H
#define SMX_CUDA_HOST_H

#include <stddef.h>
#include <stdint.h>

#include "cuda/job.h"
#include "smx/smx.h"

/* a rows x cols matrix of es-byte elements, ld in elements */
typedef struct smx_cu_operand {
  const void *p;
  size_t rows, cols, ld, es;
  int out;          /* written                                        */
  int inplace_ok;   /* may equal an input exactly (same ld and size)  */
} smx_cu_operand;

/* keeps CUDA's message for smx_cuda_last_error(); returns SMX_E_DEVICE */
smx_status smx_cu_device_error(int err, const char *what);
/* SMX_OK for err == 0, else smx_cu_device_error */
smx_status smx_cu_launched(int err, const char *what);
int smx_cu_mul_ok(size_t a, size_t b, size_t *r);
int smx_cu_add_ok(size_t a, size_t b, size_t *r);
smx_status smx_cu_check_device_pointer(const void *p, int device);
smx_status smx_cu_check_operands(const smx_cu_operand *ops, int n, int device);
/* the current device in *device, and the stream's being it */
smx_status smx_cu_check_stream(void *stream, int *device);
/* j->c, c_hi, c_lo, inv_t for temperature t; SMX_E_UNSUPPORTED where log2(e)/t does not fit a float */
smx_status smx_cu_set_temperature(smx_cu_job *j, double t);
size_t smx_cu_elem_size(int dtype);

#endif
