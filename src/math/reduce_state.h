/*
 * The mergeable reduction states of softmax, written once and used by the
 * kernels' lane reductions, the chunked long-row path and the thread pool.
 *
 *  - online (Milakov & Gimelshein): (m, d) means sum_i 2^((x_i - m) c) = d.
 *    Merge: M = max(ma, mb); d = da 2^((ma-M)c) + db 2^((mb-M)c).
 *    Identity (-inf, 0). When M is -inf nothing is computed (no -inf - -inf).
 *  - extexp (Dukhan & Ablavatski): (v, e) means sum_i 2^(x_i c) = v 2^e,
 *    e an integer. Merge: E = max(ea, eb); v = va 2^(ea-E) + vb 2^(eb-E).
 *    Identity (0, -inf).
 * Both merges are associative and commutative up to rounding; smx always
 * merges in a fixed order so that results do not depend on thread count.
 */
#ifndef SMX_MATH_REDUCE_STATE_H
#define SMX_MATH_REDUCE_STATE_H

#include <math.h>

typedef struct smx_online_state { double m; double d; } smx_online_state;
typedef struct smx_ext_state { double v; double e; } smx_ext_state;

static inline smx_online_state smx_online_identity(void) {
  smx_online_state s = { -INFINITY, 0.0 };
  return s;
}

/* c = log2(e)/T. NaN in either state gives a NaN d. */
static inline smx_online_state smx_online_merge(smx_online_state a, smx_online_state b, double c) {
  smx_online_state r;
  if (a.d != a.d || b.d != b.d) { r.m = a.m > b.m ? a.m : b.m; r.d = NAN; return r; }
  if (b.d == 0.0) return a;
  if (a.d == 0.0) return b;
  r.m = a.m > b.m ? a.m : b.m;
  r.d = a.d * exp2((a.m - r.m) * c) + b.d * exp2((b.m - r.m) * c);
  return r;
}

static inline smx_ext_state smx_ext_identity(void) {
  smx_ext_state s = { 0.0, -INFINITY };
  return s;
}

static inline smx_ext_state smx_ext_merge(smx_ext_state a, smx_ext_state b) {
  smx_ext_state r;
  if (a.v != a.v || b.v != b.v) { r.v = NAN; r.e = 0.0; return r; }
  if (b.v == 0.0) return a;
  if (a.v == 0.0) return b;
  r.e = a.e > b.e ? a.e : b.e;
  /* exponents are integers: ldexp is exact and cheap */
  double da = a.e - r.e, db = b.e - r.e;
  /* written so that a NaN difference (inf - inf) never reaches the int conversion */
  r.v = (!(da >= -2000.0) ? 0.0 : ldexp(a.v, (int)da)) + (!(db >= -2000.0) ? 0.0 : ldexp(b.v, (int)db));
  return r;
}

#endif
