/* The AVX2 + FMA + F16C configuration. Built without ISA flags: it only names tables. */
#include "registry/registry.h"

SMX_DEFINE_REGISTRY(avx2, avx2, NULL);
