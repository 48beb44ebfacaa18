/* The AVX-512 (F, DQ, VL, BW) configuration. Built without ISA flags: it only names tables. */
#include "registry/registry.h"

SMX_DEFINE_REGISTRY(avx512, avx512, NULL);
