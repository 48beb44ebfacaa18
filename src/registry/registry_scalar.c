/* The portable configuration: every family's scalar kernels. */
#include "registry/registry.h"

SMX_DEFINE_REGISTRY(scalar, scalar, NULL);
