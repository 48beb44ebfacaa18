/*
 * Storage types and the half-precision streaming adaptor. f16 and bf16 rows
 * are computed in f32: an operation loads a block of at most SMX_HALF_BLOCK
 * elements into a float buffer, works on it, and stores the block back,
 * rounding once to the storage type. No call makes a full-size temporary.
 */
#ifndef SMX_CORE_ELEM_H
#define SMX_CORE_ELEM_H

#include <stddef.h>
#include <stdint.h>

typedef enum smx_elem { SMX_ELEM_F32, SMX_ELEM_F16, SMX_ELEM_BF16, SMX_ELEM_F64 } smx_elem;

static inline size_t smx_elem_size(smx_elem e) { return e == SMX_ELEM_F64 ? 8 : e == SMX_ELEM_F32 ? 4 : 2; }

/* Block of the adaptor: two float buffers of it fit comfortably on a stack and in L1. */
#define SMX_HALF_BLOCK 2048

/* Loads and stores of f32, f16 or bf16 storage as floats (an f32 load is a copy). */
typedef struct smx_elem_io {
  smx_elem elem;
  void (*load)(size_t n, const void *src, float *dst);
  void (*store)(size_t n, const float *src, void *dst);
} smx_elem_io;

/* The adaptor for elem (F32, F16 or BF16), with the kernels of the registry in use. */
smx_elem_io smx_elem_io_for(smx_elem elem);

/* Element i of storage src as a float; a float stored into element i of dst. */
float smx_elem_get(const smx_elem_io *io, const void *src, size_t i);
void smx_elem_set(const smx_elem_io *io, void *dst, size_t i, float v);

#endif
