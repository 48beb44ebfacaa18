#include "io/convert.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

/* ---- bytes <-> unsigned integers in an explicit byte order */
static inline uint64_t load(const unsigned char *p, size_t size, int big) {
  uint64_t v = 0;
  if (big) for (size_t i = 0; i < size; i++) v = v << 8 | p[i];
  else for (size_t i = size; i-- > 0;) v = v << 8 | p[i];
  return v;
}
static inline void store(unsigned char *p, uint64_t v, size_t size, int big) {
  if (big) for (size_t i = size; i-- > 0; v >>= 8) p[i] = (unsigned char)v;
  else for (size_t i = 0; i < size; i++, v >>= 8) p[i] = (unsigned char)v;
}

/* Two's complement of `bits` bits, without the implementation-defined
 * conversion of large unsigned values to signed types. */
static inline int64_t sign_extend(uint64_t u, unsigned bits) {
  uint64_t top = 1ull << (bits - 1);
  if (!(u & top)) return (int64_t)u;
  uint64_t mag = ((bits == 64 ? 0 : (1ull << bits)) - u);  /* modulo 2^64 when bits == 64 */
  if (mag == top && bits == 64) return INT64_MIN;
  return -(int64_t)mag;
}

static inline float u32_to_f32(uint32_t u) { float f; memcpy(&f, &u, 4); return f; }
static inline double u64_to_f64(uint64_t u) { double f; memcpy(&f, &u, 8); return f; }

/*
 * One loop per (type, byte order): `big` is a constant in each expansion, so
 * the compiler turns the byte assembly into a plain or byte-swapped load.
 * Integers convert straight to the destination type (one rounding).
 */
#define EACH(DT, EXPR)                                            \
  for (size_t i = 0; i < n; i++) dst[i * stride] = (DT)(EXPR);   \
  break;

#define DECODE_CASES(DT, BIG)                                                              \
  case SMX_DTYPE_I16: EACH(DT, sign_extend(load(src + 2 * i, 2, BIG), 16))                 \
  case SMX_DTYPE_I32: EACH(DT, sign_extend(load(src + 4 * i, 4, BIG), 32))                 \
  case SMX_DTYPE_I64: EACH(DT, sign_extend(load(src + 8 * i, 8, BIG), 64))                 \
  case SMX_DTYPE_U16: EACH(DT, load(src + 2 * i, 2, BIG))                                  \
  case SMX_DTYPE_U32: EACH(DT, load(src + 4 * i, 4, BIG))                                  \
  case SMX_DTYPE_U64: EACH(DT, load(src + 8 * i, 8, BIG))                                  \
  case SMX_DTYPE_F32: EACH(DT, u32_to_f32((uint32_t)load(src + 4 * i, 4, BIG)))            \
  case SMX_DTYPE_F64: EACH(DT, u64_to_f64(load(src + 8 * i, 8, BIG)))

/* float16: its bits in host order, then the library's conversion, a chunk at a time */
#define DECODE_F16(DT)                                                     \
  for (size_t i0 = 0; i0 < n; i0 += 256) {                                 \
    uint16_t h[256];                                                       \
    float f[256];                                                          \
    size_t m = n - i0 < 256 ? n - i0 : 256;                                \
    smx_io_decode_f16_bits(big, src + 2 * i0, m, h);                       \
    smx_f16_to_f32_n(h, f, m);                                             \
    for (size_t i = 0; i < m; i++) dst[(i0 + i) * stride] = (DT)f[i];      \
  }                                                                        \
  break;

#define DECODE_BODY(DT)                                                    \
  switch (t) {                                                             \
    case SMX_DTYPE_F16: DECODE_F16(DT)                                     \
    case SMX_DTYPE_BOOL: EACH(DT, src[i] != 0)                             \
    case SMX_DTYPE_U8: EACH(DT, src[i])                                    \
    case SMX_DTYPE_I8: EACH(DT, sign_extend(src[i], 8))                    \
    default:                                                               \
      if (big) switch (t) { DECODE_CASES(DT, 1) default: break; }          \
      else switch (t) { DECODE_CASES(DT, 0) default: break; }              \
      break;                                                               \
  }

/* The common case, little-endian float32 into contiguous floats on a
 * little-endian machine, is a copy. */
static int native_f32(smx_dtype t, int big, size_t stride) {
  const uint32_t one = 1;
  unsigned char first;
  memcpy(&first, &one, 1);
  return t == SMX_DTYPE_F32 && !big && stride == 1 && first == 1;
}

void smx_io_decode_f32(smx_dtype t, int big, const unsigned char *src, size_t n, float *dst, size_t stride) {
  if (native_f32(t, big, stride)) {
    memcpy(dst, src, n * sizeof(float));
    return;
  }
  DECODE_BODY(float)
}
void smx_io_decode_f64(smx_dtype t, int big, const unsigned char *src, size_t n, double *dst, size_t stride) {
  DECODE_BODY(double)
}

/* ---- values -> integers: round to nearest, ties to even, independent of the
 * floating-point rounding mode (trunc is exact). */
static inline double round_even(double x) {
  double t = trunc(x), d = x - t;  /* exact: |d| < 1 */
  if (d > 0.5 || (d == 0.5 && fmod(t, 2.0) != 0.0)) return t + 1.0;
  if (d < -0.5 || (d == -0.5 && fmod(t, 2.0) != 0.0)) return t - 1.0;
  return t;
}

/* Whether x rounds to a value of integer type t; 1 for the other types. */
static inline int fits(smx_dtype t, double x) {
  if (t == SMX_DTYPE_BOOL || t == SMX_DTYPE_F16 || t == SMX_DTYPE_F32 || t == SMX_DTYPE_F64) return 1;
  if (x != x) return 0;
  double r = round_even(x);  /* stays infinite, and then fails every range below */
  switch (t) {
    case SMX_DTYPE_I8: return r >= -128.0 && r <= 127.0;
    case SMX_DTYPE_I16: return r >= -32768.0 && r <= 32767.0;
    case SMX_DTYPE_I32: return r >= -2147483648.0 && r <= 2147483647.0;
    case SMX_DTYPE_I64: return r >= -0x1p63 && r < 0x1p63;
    case SMX_DTYPE_U8: return r >= 0.0 && r <= 255.0;
    case SMX_DTYPE_U16: return r >= 0.0 && r <= 65535.0;
    case SMX_DTYPE_U32: return r >= 0.0 && r <= 4294967295.0;
    case SMX_DTYPE_U64: return r >= 0.0 && r < 0x1p64;
    default: return 0;
  }
}

static int is_float_type(smx_dtype t) {
  return t == SMX_DTYPE_BOOL || t == SMX_DTYPE_F16 || t == SMX_DTYPE_F32 || t == SMX_DTYPE_F64;
}

size_t smx_io_check_f32(smx_dtype t, const float *src, size_t n) {
  if (is_float_type(t)) return n;   /* every value is representable: no scan */
  for (size_t i = 0; i < n; i++) if (!fits(t, src[i])) return i;
  return n;
}
size_t smx_io_check_f64(smx_dtype t, const double *src, size_t n) {
  if (is_float_type(t)) return n;
  for (size_t i = 0; i < n; i++) if (!fits(t, src[i])) return i;
  return n;
}

static inline uint64_t f32_bits(float f) { uint32_t u; memcpy(&u, &f, 4); return u; }
static inline uint64_t f64_bits(double f) { uint64_t u; memcpy(&u, &f, 8); return u; }
/* In range (see fits): the two's complement bits modulo 2^64, then truncated by store. */
static inline uint64_t int_bits(double x) { return x < 0 ? (uint64_t)(int64_t)round_even(x) : (uint64_t)round_even(x); }

/* Like decoding: one loop per (type, byte order), each with a constant size
 * and order. v is the source value (float or double); f32 from float is a
 * copy, from double one rounding; f16 goes through the exact double. */
#define PUT(SIZE, BIG, BITS)                                                   \
  for (size_t i = 0; i < n; i++) {                                             \
    ST v = src[i * stride];                                                    \
    store(dst + i * (SIZE), (BITS), (SIZE), BIG);                              \
  }                                                                            \
  break;

#define ENCODE_CASES(BIG)                                                      \
  case SMX_DTYPE_I16: case SMX_DTYPE_U16: PUT(2, BIG, int_bits((double)v))     \
  case SMX_DTYPE_I32: case SMX_DTYPE_U32: PUT(4, BIG, int_bits((double)v))     \
  case SMX_DTYPE_I64: case SMX_DTYPE_U64: PUT(8, BIG, int_bits((double)v))     \
  case SMX_DTYPE_F32: PUT(4, BIG, f32_bits((float)v))                          \
  case SMX_DTYPE_F64: PUT(8, BIG, f64_bits((double)v))

/* float16 from the exact double, a chunk at a time (one rounding) */
#define ENCODE_F16                                                             \
  for (size_t i0 = 0; i0 < n; i0 += 256) {                                     \
    double v[256];                                                             \
    uint16_t h[256];                                                           \
    size_t m = n - i0 < 256 ? n - i0 : 256;                                    \
    for (size_t i = 0; i < m; i++) v[i] = (double)src[(i0 + i) * stride];      \
    smx_f64_to_f16_n(v, h, m);                                                 \
    smx_io_encode_f16_bits(big, h, m, dst + 2 * i0);                           \
  }                                                                            \
  break;

#define ENCODE_BODY                                                            \
  switch (t) {                                                                 \
    case SMX_DTYPE_F16: ENCODE_F16                                             \
    case SMX_DTYPE_BOOL: PUT(1, 0, v != 0 || v != v) /* NaN is True, as in NumPy */ \
    case SMX_DTYPE_I8: case SMX_DTYPE_U8: PUT(1, 0, int_bits((double)v))       \
    default:                                                                   \
      if (big) switch (t) { ENCODE_CASES(1) default: break; }                  \
      else switch (t) { ENCODE_CASES(0) default: break; }                      \
      break;                                                                   \
  }

void smx_io_encode_f32(smx_dtype t, int big, const float *src, size_t stride, size_t n, unsigned char *dst) {
  if (native_f32(t, big, stride)) {
    memcpy(dst, src, n * sizeof(float));
    return;
  }
  typedef float ST;
  ENCODE_BODY
}
void smx_io_encode_f64(smx_dtype t, int big, const double *src, size_t stride, size_t n, unsigned char *dst) {
  typedef double ST;
  ENCODE_BODY
}

void smx_io_decode_f16_bits(int big, const unsigned char *src, size_t n, uint16_t *dst) {
  if (big) for (size_t i = 0; i < n; i++) dst[i] = (uint16_t)load(src + 2 * i, 2, 1);
  else for (size_t i = 0; i < n; i++) dst[i] = (uint16_t)load(src + 2 * i, 2, 0);
}

void smx_io_encode_f16_bits(int big, const uint16_t *src, size_t n, unsigned char *dst) {
  if (big) for (size_t i = 0; i < n; i++) store(dst + 2 * i, src[i], 2, 1);
  else for (size_t i = 0; i < n; i++) store(dst + 2 * i, src[i], 2, 0);
}

int smx_io_native_float(smx_dtype t, int big) {
  const uint32_t one = 1;
  unsigned char first;
  memcpy(&first, &one, 1);
  return (t == SMX_DTYPE_F32 || t == SMX_DTYPE_F64 || t == SMX_DTYPE_F16) && big == (first == 0);
}
