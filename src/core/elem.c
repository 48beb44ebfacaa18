/* The half-precision streaming adaptor of elem.h. */
#include <string.h>

#include "core/elem.h"
#include "registry/registry.h"

static void load_f32(size_t n, const void *src, float *dst) { memmove(dst, src, n * sizeof(float)); }
static void store_f32(size_t n, const float *src, void *dst) { memmove(dst, src, n * sizeof(float)); }

/* The converters take uint16_t pointers; these wrappers give them the adaptor's shape. */
#define SMX_HALF_WRAP(name, slot_load, slot_store)                                                              \
  static void load_##name(size_t n, const void *src, float *dst) {                                              \
    smx_registry_current()->cvt->slot_load(n, (const uint16_t *)src, dst);                                      \
  }                                                                                                             \
  static void store_##name(size_t n, const float *src, void *dst) {                                             \
    smx_registry_current()->cvt->slot_store(n, src, (uint16_t *)dst);                                           \
  }
SMX_HALF_WRAP(f16, f16_to_f32, f32_to_f16)
SMX_HALF_WRAP(bf16, bf16_to_f32, f32_to_bf16)

smx_elem_io smx_elem_io_for(smx_elem elem) {
  smx_elem_io io = { elem, load_f32, store_f32 };
  if (elem == SMX_ELEM_F16) { io.load = load_f16; io.store = store_f16; }
  if (elem == SMX_ELEM_BF16) { io.load = load_bf16; io.store = store_bf16; }
  return io;
}

float smx_elem_get(const smx_elem_io *io, const void *src, size_t i) {
  if (io->elem == SMX_ELEM_F32) return ((const float *)src)[i];
  float v;
  io->load(1, (const uint16_t *)src + i, &v);
  return v;
}

void smx_elem_set(const smx_elem_io *io, void *dst, size_t i, float v) {
  if (io->elem == SMX_ELEM_F32) ((float *)dst)[i] = v;
  else io->store(1, &v, (uint16_t *)dst + i);
}
