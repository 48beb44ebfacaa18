/*
 * Element conversion between the bytes of a .npy file (any dtype, either
 * byte order) and the caller's f32 / f64 values. The byte order is handled by
 * assembling values from bytes, so the code is the same on every host.
 */
#ifndef SMX_IO_CONVERT_H
#define SMX_IO_CONVERT_H

#include <stddef.h>
#include <stdint.h>

#include "io/npy_io.h"

/* n elements of type t at src -> dst[0], dst[stride], ..., dst[(n-1)*stride]. */
void smx_io_decode_f32(smx_dtype t, int big, const unsigned char *src, size_t n, float *dst, size_t stride);
void smx_io_decode_f64(smx_dtype t, int big, const unsigned char *src, size_t n, double *dst, size_t stride);

/* Whether every value of src[0 .. n) can be stored as t (only integer types can
 * refuse: NaN, or out of range after rounding). Returns n when all fit, else
 * the index of the first that does not. */
size_t smx_io_check_f32(smx_dtype t, const float *src, size_t n);
size_t smx_io_check_f64(smx_dtype t, const double *src, size_t n);

/* src[0], src[stride], ... (n values, already checked) -> n elements at dst. */
void smx_io_encode_f32(smx_dtype t, int big, const float *src, size_t stride, size_t n, unsigned char *dst);
void smx_io_encode_f64(smx_dtype t, int big, const double *src, size_t stride, size_t n, unsigned char *dst);

/* float16 bits in byte order `big` <-> host uint16_t bits (n values, contiguous). */
void smx_io_decode_f16_bits(int big, const unsigned char *src, size_t n, uint16_t *dst);
void smx_io_encode_f16_bits(int big, const uint16_t *src, size_t n, unsigned char *dst);

/* 1 when values of dtype t in byte order big have the host's float / double
 * representation, so that bytes can be copied as they are. */
int smx_io_native_float(smx_dtype t, int big);

#endif
