/* The AArch64 Advanced SIMD (NEON, with FMA) configuration. */
#include "registry/registry.h"

SMX_DEFINE_REGISTRY(neon, neon, NULL);
