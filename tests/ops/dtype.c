/*
 * Storage types of the op table, written independently of src/ so that the
 * test does not read its inputs or judge its outputs through the conversions
 * it is testing. Every value goes through long double (exact for all four).
 */
#include <float.h>
#include <math.h>
#include <string.h>

#include "op.h"

size_t dt_size(dtype d) { return d == DT_F64 ? 8 : d == DT_F32 ? 4 : 2; }

const char *dt_name(dtype d) {
  static const char *const names[] = { "f32", "f64", "f16", "bf16" };
  return names[d];
}

static float from_f16(uint16_t h) {
  int e = (h >> 10) & 0x1f, m = h & 0x3ff;
  float v;
  if (e == 31) v = m ? NAN : INFINITY;
  else if (e == 0) v = ldexpf((float)m, -24);
  else v = ldexpf((float)(m | 0x400), e - 25);
  return (h & 0x8000) ? -v : v;
}

/* Rounds in double: every f16 value and every midpoint between two of them is
 * exact there, and the inputs come from long double only through (double). */
static uint16_t to_f16(double v) {
  uint16_t sign = signbit(v) ? 0x8000 : 0;
  double a = fabs(v);
  if (a != a) return 0x7e00;
  if (a >= 65520.0) return sign | 0x7c00;   /* 65520 is the midpoint above the largest f16: ties to even go up */
  if (a < 0x1p-14) return (uint16_t)(sign | (uint16_t)nearbyint(a * 0x1p24));  /* 1024 becomes the smallest normal */
  int e;
  frexp(a, &e);  /* a = f * 2^e, f in [0.5, 1) */
  double m = nearbyint(ldexp(a, 11 - e));   /* 11 significant bits */
  if (m == 2048.0) { m = 1024.0; e++; }
  if (e + 14 > 30) return sign | 0x7c00;
  return (uint16_t)(sign | (uint16_t)((e + 14) << 10) | (uint16_t)((int)m - 1024));
}

static float from_bf16(uint16_t h) {
  uint32_t u = (uint32_t)h << 16;
  float f;
  memcpy(&f, &u, sizeof f);
  return f;
}

static uint16_t to_bf16(float f) {
  uint32_t u;
  memcpy(&u, &f, sizeof u);
  if (f != f) return (uint16_t)((u >> 16) | 0x40);
  u += 0x7fffu + ((u >> 16) & 1u);
  return (uint16_t)(u >> 16);
}

long double dt_get(dtype d, const void *p, size_t i) {
  switch (d) {
    case DT_F32: { float v; memcpy(&v, (const char *)p + 4 * i, 4); return v; }
    case DT_F64: { double v; memcpy(&v, (const char *)p + 8 * i, 8); return v; }
    case DT_F16: { uint16_t h; memcpy(&h, (const char *)p + 2 * i, 2); return from_f16(h); }
    default: { uint16_t h; memcpy(&h, (const char *)p + 2 * i, 2); return from_bf16(h); }
  }
}

void dt_put(dtype d, void *p, size_t i, long double v) {
  switch (d) {
    case DT_F32: { float f = (float)v; memcpy((char *)p + 4 * i, &f, 4); break; }
    case DT_F64: { double f = (double)v; memcpy((char *)p + 8 * i, &f, 8); break; }
    case DT_F16: { uint16_t h = to_f16((double)v); memcpy((char *)p + 2 * i, &h, 2); break; }
    default: { uint16_t h = to_bf16((float)v); memcpy((char *)p + 2 * i, &h, 2); break; }
  }
}

long double dt_round(dtype d, long double v) {
  unsigned char buf[8];
  dt_put(d, buf, 0, v);
  return dt_get(d, buf, 0);
}
