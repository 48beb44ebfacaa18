/*
 * The kernel registry: one configuration per ISA (registry_<isa>.c), each
 * listing every kernel family's table, in the manner of BLIS's per-arch
 * contexts. One configuration is picked at run time (select.c): the best
 * level the CPU and OS support, capped by SMX_MAX_ISA or smx_set_max_isa().
 * Callers take every family from the same configuration, so one cap governs
 * all of them and no caller compares table pointers.
 */
#ifndef SMX_REGISTRY_REGISTRY_H
#define SMX_REGISTRY_REGISTRY_H

#include "kernels/bf16-attention/ukernels.h"
#include "kernels/convert/ukernels.h"
#include "kernels/f32-attention/ukernels.h"
#include "kernels/f32-attention-bwd/ukernels.h"
#include "kernels/f32-sigmoid/ukernels.h"
#include "kernels/f32-scores/ukernels.h"
#include "kernels/f32-softmax/ukernels.h"
#include "kernels/f32-sparse/ukernels.h"
#include "kernels/f32-topk/ukernels.h"
#include "kernels/f32-vnorm/ukernels.h"
#include "kernels/f32-xent/ukernels.h"
#include "kernels/f64-softmax/ukernels.h"
#include "smx/smx.h"

typedef struct smx_registry {
  const char *isa;                 /* the name smx_isa() reports */
  const smx_f32_ukernels *f32;     /* f32 softmax, log-softmax, log-sum-exp */
  const smx_f64_ukernels *f64;     /* the same in double */
  const smx_cvt_ukernels *cvt;     /* f16 / bf16 <-> f32 */
  const smx_xent_ukernels *xent;   /* backward passes and cross-entropy */
  const smx_topk_ukernels *topk;   /* top-k filters */
  const smx_sigmoid_ukernels *sigmoid;   /* elementwise sigmoid */
  const smx_attn_ukernels *attn;         /* fused attention tiles */
  const smx_attn_bwd_ukernels *attn_bwd; /* fused attention backward tiles */
  const smx_attn_bf16_ukernels *attn_bf16;   /* bf16 tile products (vdpbf16ps), or NULL */
  const smx_sparse_ukernels *sparse;     /* sparsemax and entmax passes */
  const smx_vnorm_ukernels *vnorm;       /* softpick, softplus-l1, self-adjust softmax passes */
  const smx_scores_ukernels *scores;     /* logit-score passes (smx_scores.h) */
} smx_registry;

/* One configuration: every family's table for the ISA whose kernels it runs
 * (TABLES: the suffix of the smx_<family>_ukernels_<isa> tables), under the
 * name smx_isa() reports (NAME), plus the bf16 attention tile table or NULL.
 * Written once here so that a new family is added to every ISA in one place
 * and no configuration can miss it. */
#define SMX_DEFINE_REGISTRY(NAME, TABLES, ATTN_BF16)          \
  const smx_registry smx_registry_##NAME = {                  \
    .isa = #NAME,                                             \
    .f32 = &smx_f32_ukernels_##TABLES,                        \
    .f64 = &smx_f64_ukernels_##TABLES,                        \
    .cvt = &smx_cvt_ukernels_##TABLES,                        \
    .xent = &smx_xent_ukernels_##TABLES,                      \
    .topk = &smx_topk_ukernels_##TABLES,                      \
    .sigmoid = &smx_sigmoid_ukernels_##TABLES,                \
    .attn = &smx_attn_ukernels_##TABLES,                      \
    .attn_bwd = &smx_attn_bwd_ukernels_##TABLES,              \
    .attn_bf16 = ATTN_BF16,                                   \
    .sparse = &smx_sparse_ukernels_##TABLES,                  \
    .vnorm = &smx_vnorm_ukernels_##TABLES,                    \
    .scores = &smx_scores_ukernels_##TABLES,                  \
  }

extern const smx_registry smx_registry_scalar;
extern const smx_registry smx_registry_avx2;
extern const smx_registry smx_registry_avx512;
extern const smx_registry smx_registry_avx512bf16;
extern const smx_registry smx_registry_neon;

/* The configuration in use (picked once; smx_set_max_isa() may lower it). */
const smx_registry *smx_registry_current(void);

#endif
