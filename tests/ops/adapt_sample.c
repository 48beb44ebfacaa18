/*
 * Adapters of sampling (smx_sample_rows_*, reference: ref_sample.c) keyed by OPS_RNG_SEED and OPS_RNG_STEP,
 * row_offset 0: the driver's temperature (0: 1) is params.temperature, with the options' temperature left at
 * 0 (the library takes no other), so the driver's bad temperatures are bad params. The tokens are written by
 * the library into the driver's output (flush against its guard pages) and then turned, in place, into
 * doubles (the row's out_dt), which the driver compares with the reference's token.
 */
#include <string.h>

#include "op.h"

static smx_status sample_call(const op_call *c, dtype dt, smx_sample_params p) {
  smx_options o;
  if (c->opt) o = *c->opt;
  else memset(&o, 0, sizeof o);
  p.temperature = o.temperature == 0.0 ? 1.0 : o.temperature;
  o.temperature = 0.0;
  int64_t *tok = c->out;
  smx_status s;
  switch (dt) {
    case DT_F32:
      s = smx_sample_rows_f32(c->in[0], c->ld_in[0], tok, c->rows, c->cols, &p, OPS_RNG_SEED, OPS_RNG_STEP, &o);
      break;
    case DT_F64:
      s = smx_sample_rows_f64(c->in[0], c->ld_in[0], tok, c->rows, c->cols, &p, OPS_RNG_SEED, OPS_RNG_STEP, &o);
      break;
    case DT_F16:
      s = smx_sample_rows_f16(c->in[0], c->ld_in[0], tok, c->rows, c->cols, &p, OPS_RNG_SEED, OPS_RNG_STEP, &o);
      break;
    default:
      s = smx_sample_rows_bf16(c->in[0], c->ld_in[0], tok, c->rows, c->cols, &p, OPS_RNG_SEED, OPS_RNG_STEP, &o);
  }
  for (size_t q = 0; s == SMX_OK && c->out && q < c->rows; q++) {
    int64_t t;
    memcpy(&t, (char *)c->out + 8 * q, 8);
    double d = (double)t;
    memcpy((char *)c->out + 8 * q, &d, 8);
  }
  return s;
}

static const smx_sample_params sp_nucleus = { 1.0, 0, OPS_SAMPLE_TOP_P, OPS_SAMPLE_MIN_P, 0, SMX_SAMPLE_MULTINOMIAL, 0 };
static const smx_sample_params sp_topk_gumbel = { 1.0, OPS_SAMPLE_TOP_K, OPS_SAMPLE_TOP_P, 0.0, 0, SMX_SAMPLE_GUMBEL_MAX, 0 };
static const smx_sample_params sp_gumbel = { 1.0, 0, 1.0, 0.0, 0, SMX_SAMPLE_GUMBEL_MAX, 0 };
static const smx_sample_params sp_greedy = { 1.0, 0, 1.0, 0.0, 1, SMX_SAMPLE_MULTINOMIAL, 0 };

#define SAMPLE_ADAPTER(cfg, sfx, D) \
  smx_status a_sample##cfg##_##sfx(const op_call *c) { return sample_call(c, D, sp##cfg); }
static const smx_sample_params sp = { 1.0, 0, 1.0, 0.0, 0, SMX_SAMPLE_MULTINOMIAL, 0 };
SAMPLE_ADAPTER(, f32, DT_F32) SAMPLE_ADAPTER(, f64, DT_F64) SAMPLE_ADAPTER(, f16, DT_F16) SAMPLE_ADAPTER(, bf16, DT_BF16)
SAMPLE_ADAPTER(_topk_gumbel, f32, DT_F32) SAMPLE_ADAPTER(_topk_gumbel, f64, DT_F64)
SAMPLE_ADAPTER(_topk_gumbel, f16, DT_F16) SAMPLE_ADAPTER(_topk_gumbel, bf16, DT_BF16)
SAMPLE_ADAPTER(_nucleus, f32, DT_F32)
SAMPLE_ADAPTER(_gumbel, f32, DT_F32) SAMPLE_ADAPTER(_gumbel, f64, DT_F64)
SAMPLE_ADAPTER(_greedy, f32, DT_F32) SAMPLE_ADAPTER(_greedy, f64, DT_F64) SAMPLE_ADAPTER(_greedy, f16, DT_F16)
