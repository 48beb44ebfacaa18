#include "smx/smx.h"

const char *smx_status_string(smx_status s) {
  switch (s) {
    case SMX_OK: return "ok";
    case SMX_E_INVALID_ARG: return "invalid argument";
    case SMX_E_UNSUPPORTED: return "unsupported on this machine";
    case SMX_E_NOT_BUILT: return "not built: an optional library was missing when smx was built";
    case SMX_E_DEVICE: return "device error: smx_cuda_last_error() has CUDA's message";
    case SMX_E_NOMEM: return "out of memory";
    case SMX_E_WORKSPACE_TOO_SMALL: return "workspace too small";
    case SMX_E_PARSE: return "malformed input";
    case SMX_E_IO: return "input/output error";
    case SMX_E_THREAD: return "could not start a thread";
    case SMX_E_NO_OPTIMUM: return "no finite optimum";
    case SMX_E_SINGULAR: return "singular covariance";
    case SMX_E_INTERNAL: return "internal error";
  }
  return "unknown status";
}

unsigned smx_version_number(void) { return SMX_VERSION_NUMBER; }

#define SMX_STR2(x) #x
#define SMX_STR(x) SMX_STR2(x)
const char *smx_version_string(void) {
  return SMX_STR(SMX_VERSION_MAJOR) "." SMX_STR(SMX_VERSION_MINOR) "." SMX_STR(SMX_VERSION_PATCH);
}
