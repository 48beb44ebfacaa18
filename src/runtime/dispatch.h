/* Runtime CPU detection and the kernel table in use. */
#ifndef SMX_RUNTIME_DISPATCH_H
#define SMX_RUNTIME_DISPATCH_H

#include "kernels/convert/ukernels.h"
#include "kernels/f32-softmax/ukernels.h"
#include "kernels/f64-softmax/ukernels.h"
#include "smx/smx.h"

/* The f32 softmax kernels for the current ISA level (picked once, capped by SMX_MAX_ISA / smx_set_max_isa). */
const smx_f32_ukernels *smx_dispatch_f32(void);
/* The f64 softmax kernels of the same ISA level. */
const smx_f64_ukernels *smx_dispatch_f64(void);
/* The f16 / bf16 conversion kernels of the same ISA level. */
const smx_cvt_ukernels *smx_dispatch_cvt(void);

#endif
