/*
 * Row families: the adversarial rows of the accuracy contract (huge and tiny
 * values, values near exp's overflow, spans beyond the largest float, -inf
 * masks, ties, spikes, ramps that move the running max, extreme
 * temperatures), the special-value policy rows, every length up to 4W+1
 * (W = 16 f32 lanes of AVX-512), and lengths around the long-row chunk size
 * (SMX_CHUNK = 2^16 in src/core/grid.h, windows of 64 chunks).
 */
#include "families.h"

#include "smx/smx.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define W 16
#define CHUNK ((size_t)1 << 16)

/* splitmix64 */
static uint64_t next(uint64_t *s) {
  uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}
static double unif01(uint64_t *s) { return (double)(next(s) >> 11) * 0x1p-53; }
/* lo (1 - u) + hi u: no overflow for spans beyond the largest value */
static double unif(uint64_t *s, double lo, double hi) {
  double u = unif01(s);
  return lo * (1.0 - u) + hi * u;
}
static double normal(uint64_t *s) {
  double u1 = unif01(s), u2 = unif01(s);
  if (u1 < 1e-300) u1 = 1e-300;
  return sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
}

static void g_unif(uint64_t s, double *x, size_t n, double a, double b) {
  for (size_t i = 0; i < n; i++) x[i] = unif(&s, a, b);
}
/* +-a at random, with both extremes b and -b present */
static void g_huge(uint64_t s, double *x, size_t n, double a, double b) {
  g_unif(s, x, n, -a, a);
  x[n / 3] = b;
  x[n / 3 + 1] = -b;
}
static void g_near_ties_f32(uint64_t s, double *x, size_t n, double a, double b) {
  (void)s; (void)a; (void)b;
  for (size_t i = 0; i < n; i++) x[i] = nextafterf(5.0f, (i & 1) ? 6.0f : 4.0f) + (float)(i % 3) * 0x1p-21f;
}
static void g_near_ties_f64(uint64_t s, double *x, size_t n, double a, double b) {
  (void)s; (void)a; (void)b;
  for (size_t i = 0; i < n; i++) x[i] = nextafter(5.0, (i & 1) ? 6.0 : 4.0) + (double)(i % 3) * 0x1p-50;
}
static void g_const(uint64_t s, double *x, size_t n, double a, double b) {
  (void)s; (void)b;
  for (size_t i = 0; i < n; i++) x[i] = a;
}
/* half the entries -inf (a mask), one entry 1, the rest uniform in [a, b] */
static void g_half_ninf(uint64_t s, double *x, size_t n, double a, double b) {
  for (size_t i = 0; i < n; i++) x[i] = (next(&s) & 1) ? -INFINITY : unif(&s, a, b);
  if (n > 5) x[5] = 1.0;
}
/* every third entry finite */
static void g_every3(uint64_t s, double *x, size_t n, double a, double b) {
  for (size_t i = 0; i < n; i++) x[i] = (i % 3) ? -INFINITY : unif(&s, a, b);
}
static void g_spike(uint64_t s, double *x, size_t n, double a, double b) {
  (void)s; (void)b;
  for (size_t i = 0; i < n; i++) x[i] = 0.0;
  x[n / 4] = a;
}
static void g_steps(uint64_t s, double *x, size_t n, double a, double b) {
  (void)s;
  for (size_t i = 0; i < n; i++) x[i] = a + (double)(i % 50) * b;
}
static void g_ramp(uint64_t s, double *x, size_t n, double a, double b) {
  (void)s;
  for (size_t i = 0; i < n; i++) x[i] = a + (double)i * b;
}
static void g_mod7(uint64_t s, double *x, size_t n, double a, double b) {
  (void)s; (void)b;
  for (size_t i = 0; i < n; i++) x[i] = (double)(i % 7) * a;
}
static void g_ladder(uint64_t s, double *x, size_t n, double a, double b) {
  (void)s; (void)a; (void)b;
  for (size_t i = 0; i < n; i++) x[i] = -(double)(i % 800) - 0.5;
}
static void g_scaled(uint64_t s, double *x, size_t n, double a, double b) {
  for (size_t i = 0; i < n; i++) x[i] = unif(&s, -10, 10) * a;
  (void)b;
}
static void g_normal(uint64_t s, double *x, size_t n, double a, double b) {
  for (size_t i = 0; i < n; i++) x[i] = normal(&s) + (a > 0 ? unif(&s, -a, a) : 0.0);
  (void)b;
}
/* the mass in the first chunk, each later chunk raising the max a little: an
 * online rescale per chunk while the running sum still dominates */
static void g_rescale_chunks(uint64_t s, double *x, size_t n, double a, double b) {
  (void)a; (void)b;
  for (size_t i = 0; i < n; i++) {
    size_t ch = i / CHUNK;
    x[i] = ch == 0 ? unif(&s, -0.01, 0.0) : ((i % CHUNK) == 777 ? 0.75 * (double)ch : -1000.0);
  }
}
/* the same within one chunk: a rise every 64 entries */
static void g_rescale_blocks(uint64_t s, double *x, size_t n, double a, double b) {
  (void)a; (void)b;
  for (size_t i = 0; i < n; i++)
    x[i] = i < 40000 ? unif(&s, -0.01, 0.0) : ((i % 64) == 5 ? 0.75 * (double)(i / 64 - 624) : -1000.0);
}
/* the special-value policy: a values at the listed places of a uniform row */
static void g_nan(uint64_t s, double *x, size_t n, double a, double b) {
  g_unif(s, x, n, -10, 10);
  x[n / 2] = NAN;
  (void)a; (void)b;
}
static void g_pinf(uint64_t s, double *x, size_t n, double a, double b) {
  g_unif(s, x, n, -10, 10);
  for (size_t i = 0; i < n; i += (size_t)a) x[i] = INFINITY;
  if (b != 0.0 && n > 2) x[n - 2] = -INFINITY;
}
static void g_pinf_nan(uint64_t s, double *x, size_t n, double a, double b) {
  g_pinf(s, x, n, a, b);
  x[n - 1] = NAN;
}

/* a and b in turn (a row of two values, repeated) */
static void g_alt(uint64_t s, double *x, size_t n, double a, double b) {
  (void)s;
  for (size_t i = 0; i < n; i++) x[i] = i % 2 ? b : a;
}

/* a row of a with +inf at the ends (a zero range for the normalised self-adjust softmax when a = 0) */
static void g_pinf_ends(uint64_t s, double *x, size_t n, double a, double b) {
  (void)s; (void)b;
  for (size_t i = 0; i < n; i++) x[i] = i == 0 || i + 1 == n ? INFINITY : a;
}

#define F(name, kind, n, T, flags, gen, a, b) { name, kind, n, T, flags, gen, a, b }
static const family fixed[] = {
  /* float range (also run on f16 and bf16 rows) */
  F("uniform[-10,10]", FAM_FLOAT, 4103, 0, 0, g_unif, -10, 10),
  F("uniform[-10,10] T=0.37", FAM_ALL, 4103, 0.37, 0, g_unif, -10, 10),
  F("uniform[-10,10] T=2.5", FAM_ALL, 4103, 2.5, 0, g_unif, -10, 10),
  F("uniform[-1e4,1e4]", FAM_ALL, 1000, 0, 0, g_unif, -1e4, 1e4),
  F("uniform[90,100]", FAM_FLOAT, 3000, 0, 0, g_unif, 90, 100),
  F("uniform[90,100] T=1000", FAM_FLOAT, 3000, 1000, 0, g_unif, 90, 100),
  F("near-ties", FAM_FLOAT, 777, 0, 0, g_near_ties_f32, 0, 0),
  F("half -inf", FAM_ALL, 2049, 0, 0, g_half_ninf, -10, 10),
  F("spike 80", FAM_FLOAT, 5000, 0, 0, g_spike, 80, 0),
  F("spike 1e4", FAM_FLOAT, 5000, 0, 0, g_spike, 1e4, 0),
  F("huge +-3e38", FAM_FLOAT, 3001, 0, 0, g_huge, 3e38, FLT_MAX),
  F("1e30 + small steps", FAM_FLOAT, 3001, 0, 0, g_steps, 1e30, 0x1p77),
  F("span > FLT_MAX T=4", FAM_FLOAT, 1001, 4, 0, g_huge, FLT_MAX, FLT_MAX),
  F("span > FLT_MAX T=1e38", FAM_FLOAT, 1001, 1e38, 0, g_huge, FLT_MAX, FLT_MAX),
  F("tiny values T=1e-40", FAM_FLOAT, 1003, 1e-40, 0, g_scaled, 1e-40, 0),
  F("uniform[-3e31,3e31] T=1e30", FAM_FLOAT, 1003, 1e30, 0, g_unif, -3e31, 3e31),
  F("slow ramp -11", FAM_FLOAT, 65536, 0, 0, g_ramp, -11, 1e-6),
  F("slow ramp 0", FAM_FLOAT, 65536, 0, 0, g_ramp, 0, 1e-6),
  F("subnormal", FAM_FLOAT, 999, 0, 0, g_mod7, 1e-41, 0),
  /* large negative rows: every normalisation must shift (or scale) by the row, not only the
   * exponential-based ones; softplus(x) ~ e^x is subnormal or 0 in float below about -87 and -104 */
  F("pair -90,-91", FAM_ALL | FAM_EDGES, 2, 0, 0, g_alt, -90, -91),
  F("pair -103,-104", FAM_ALL | FAM_EDGES, 2, 0, 0, g_alt, -103, -104),
  F("uniform[-100,-90]", FAM_ALL, 1001, 0, 0, g_unif, -100, -90),
  F("uniform[-210,-200]", FAM_ALL, 1001, 0, 0, g_unif, -210, -200),
  F("uniform[-1e4,-9e3]", FAM_ALL, 1001, 0, 0, g_unif, -1e4, -9e3),
  F("uniform[-25,-15] T=4", FAM_ALL, 1001, 4, 0, g_unif, -25, -15),
  F("uniform[-95,-5]", FAM_FLOAT, 1001, 0, 0, g_unif, -95, -5),
  F("uniform[-95,0.5]", FAM_FLOAT, 1001, 0, 0, g_unif, -95, 0.5),
  /* double range */
  F("uniform[-10,10]", FAM_F64, 4103, 0, 0, g_unif, -10, 10),
  F("uniform[-745,0]", FAM_F64, 4103, 0, 0, g_unif, -745, 0),
  F("uniform[690,700]", FAM_F64, 3000, 0, 0, g_unif, 690, 700),
  F("uniform[690,700] T=1000", FAM_F64, 3000, 1000, 0, g_unif, 690, 700),
  F("near-ties", FAM_F64, 777, 0, 0, g_near_ties_f64, 0, 0),
  F("ties", FAM_ALL, 777, 0, 0, g_const, 3.25, 0),
  F("spike 700", FAM_F64, 5000, 0, 0, g_spike, 700, 0),
  F("spike 1e300", FAM_F64, 5000, 0, 0, g_spike, 1e300, 0),
  F("ladder to subnormal", FAM_F64, 5000, 0, 0, g_ladder, 0, 0),
  F("huge +-1.7e308", FAM_F64, 3001, 0, 0, g_huge, 1.7e308, DBL_MAX),
  F("huge +-1.7e308 T=4", FAM_F64, 3001, 4, 0, g_huge, 1.7e308, DBL_MAX),
  F("huge +-1.7e308 T=1e307", FAM_F64, 3001, 1e307, 0, g_huge, 1.7e308, DBL_MAX),
  F("huge values T=1e-5", FAM_F64, 1001, 1e-5, 0, g_unif, 1.6e308, 1.7e308),
  F("huge values T=0.5", FAM_F64, 1001, 0.5, 0, g_unif, 1.6e308, 1.7e308),
  F("1e300 + small steps", FAM_F64, 3001, 0, 0, g_steps, 1e300, 0x1p946),
  F("around -1e12", FAM_F64, 3001, 0, 0, g_steps, -1e12, -0.1),
  F("pair -800,-801", FAM_F64 | FAM_EDGES, 2, 0, 0, g_alt, -800, -801),
  F("uniform[-810,-700]", FAM_F64, 1001, 0, 0, g_unif, -810, -700),
  F("uniform[-760,-5]", FAM_F64, 1001, 0, 0, g_unif, -760, -5),
  F("uniform[-760,0.5]", FAM_F64, 1001, 0, 0, g_unif, -760, 0.5),
  F("uniform[-1e300,-9e299]", FAM_F64, 1001, 0, 0, g_unif, -1e300, -9e299),
  F("lse near 0", FAM_F64, 100000, 0, 0, g_unif, -11.512925464970229 - 1e-9, -11.512925464970229 + 1e-9),
  F("tiny values T=1e-300", FAM_F64, 1003, 1e-300, 0, g_scaled, 1e-300, 0),
  F("subnormal values T=1e-310", FAM_F64, 1003, 1e-310, 0, g_scaled, 1e-310, 0),
  F("subnormal values T=5e-324", FAM_F64, 1003, 5e-324, 0, g_scaled, 1e-310, 0),
  F("uniform[-3e301,3e301] T=1e300", FAM_F64, 1003, 1e300, 0, g_unif, -3e301, 3e301),
  F("uniform[-3e301,3e301] T=DBL_MAX", FAM_F64, 1003, DBL_MAX, 0, g_unif, -3e301, 3e301),
  F("uniform[-10,10] T=1e-3", FAM_F64, 1003, 1e-3, 0, g_unif, -10, 10),
  F("uniform[-10,10] T=1e-250", FAM_F64, 1003, 1e-250, 0, g_unif, -10, 10),
  F("slow ramp -11", FAM_F64, 131072, 0, 0, g_ramp, -11, 1e-6),
  F("slow ramp 0", FAM_F64, 131072, 0, 0, g_ramp, 0, 1e-12),
  F("ramp 1e-3", FAM_F64, 131072, 0, 0, g_ramp, 0, 1e-3),
  F("subnormal", FAM_F64, 999, 0, 0, g_mod7, 1e-310, 0),
  F("chunked ramp", FAM_F64, 3 * CHUNK + 5, 0, 0, g_ramp, 0, 1e-7),
  F("rescale chain (chunks)", FAM_F64, 24 * CHUNK, 0, 0, g_rescale_chunks, 0, 0),
  F("rescale chain (chunks) T=3", FAM_F64, 24 * CHUNK, 3, 0, g_rescale_chunks, 0, 0),
  F("rescale chain (blocks)", FAM_F64, 70000, 0, 0, g_rescale_blocks, 0, 0),
  /* chunked rows: threads split one row */
  F("chunked 3*2^16+5", FAM_ALL, 3 * CHUNK + 5, 0, 0, g_unif, -20, 20),
  F("chunked with -inf", FAM_ALL, 3 * CHUNK + 5, 0, 0, g_every3, -20, 20),
  /* the special-value policy */
  F("NaN entry", FAM_ALL | FAM_EDGES, 37, 0, 0, g_nan, 0, 0),
  F("all -inf", FAM_ALL | FAM_EDGES, 19, 0, 0, g_const, -INFINITY, 0),
  F("all -inf, MASKED_ROW_NAN", FAM_ALL | FAM_EDGES, 19, 0, SMX_FLAG_MASKED_ROW_NAN, g_const, -INFINITY, 0),
  F("-inf mask, MASKED_ROW_NAN", FAM_ALL, 45, 0, SMX_FLAG_MASKED_ROW_NAN, g_every3, -5, 5),
  F("+inf entries", FAM_ALL | FAM_EDGES, 23, 0, 0, g_pinf, 8, 1),
  F("one +inf", FAM_ALL | FAM_EDGES, 41, 0, 0, g_pinf, 41, 0),
  F("+inf and NaN", FAM_ALL, 23, 0, 0, g_pinf_nan, 8, 1),
  F("all +inf", FAM_ALL, 17, 0, 0, g_const, INFINITY, 0),
  F("+inf ends, zeros", FAM_ALL | FAM_EDGES, 9, 0, 0, g_pinf_ends, 0, 0),
  F("n=1 -inf", FAM_ALL | FAM_EDGES, 1, 0, 0, g_const, -INFINITY, 0),
  F("n=1 +inf", FAM_ALL | FAM_EDGES, 1, 0, 0, g_const, INFINITY, 0),
  F("n=1 NaN", FAM_ALL | FAM_EDGES, 1, 0, 0, g_const, NAN, 0),
  F("n=1 1e4 T=1e-3", FAM_ALL | FAM_EDGES, 1, 1e-3, 0, g_const, 1e4, 0),
};

static int long_log2(unsigned kind) {
  const char *e = getenv("SMX_TEST_LONG_LOG2");
  return e ? atoi(e) : kind == FAM_F64 ? 24 : 26;
}

family *families_build(size_t *count) {
  size_t nfixed = sizeof fixed / sizeof fixed[0];
  static const size_t edges[] = { CHUNK - 1, CHUNK, CHUNK + 1, 2 * CHUNK - 1, 2 * CHUNK + 1, 64 * CHUNK + 1 };
  size_t nedges = sizeof edges / sizeof edges[0];
  /* around the vector blocks, with each store flag: streaming (non-temporal) and cached output stores */
  static const size_t blocks[] = { 127, 128, 129, 255, 256, 257, 511, 513, 1000, 2047, 2049, 4099 };
  size_t nblocks = sizeof blocks / sizeof blocks[0];
  /* the forward ops with each store flag at every length up to 2W+1 and around the vector blocks and
   * the chunk edges, flush against either guard page (a half -inf row) */
  static const size_t flagged_more[] = { 63, 64, 65, CHUNK - 1, CHUNK, CHUNK + 1, 2 * CHUNK + 1 };
  size_t nflagged = 2 * W + 1 + sizeof flagged_more / sizeof flagged_more[0];
  size_t cap = nfixed + (4 * W + 2) + nedges + 2 * nblocks + 2 * nflagged + 2;
  family *f = calloc(cap, sizeof *f);
  size_t k = 0;
  if (!f) return NULL;
  for (size_t i = 0; i < nfixed; i++) f[k++] = fixed[i];
  for (size_t n = 0; n <= 4 * W + 1; n++) {
    f[k] = (family)F("", FAM_ALL | FAM_EDGES, n, 0, 0, g_unif, -10, 10);
    snprintf(f[k++].name, sizeof f[0].name, "length %zu", n);
  }
  for (size_t i = 0; i < nedges; i++) {
    /* the window edge (2^22 + 1) goes with the long rows: left out when SMX_TEST_LONG_LOG2 asks for
     * rows of 2^22 or less (the sanitizer runs) */
    if (edges[i] > ((size_t)1 << 22) && long_log2(FAM_F32) <= 22) continue;
    /* half rows are never split across threads: the window edge is for f32 and f64 */
    unsigned kind = edges[i] > 2 * CHUNK + 1 ? FAM_F32 | FAM_F64 : FAM_ALL | FAM_EDGES;
    f[k] = (family)F("", kind, edges[i], 0, 0, i % 2 ? g_every3 : g_unif, -20, 20);
    snprintf(f[k++].name, sizeof f[0].name, "chunk edge %zu%s", edges[i], i % 2 ? " -inf" : "");
  }
  for (size_t i = 0; i < 2 * nblocks; i++) {
    uint32_t fl = i < nblocks ? SMX_FLAG_STREAM_STORES : SMX_FLAG_CACHED_STORES;
    f[k] = (family)F("", FAM_ALL | FAM_EDGES, blocks[i % nblocks], 0, fl, g_half_ninf, -20, 20);
    snprintf(f[k++].name, sizeof f[0].name, "length %zu %s stores", blocks[i % nblocks], i < nblocks ? "streaming" : "cached");
  }
  for (size_t i = 0; i < 2 * nflagged; i++) {
    size_t j = i % nflagged;
    size_t n = j < 2 * W + 1 ? j + 1 : flagged_more[j - (2 * W + 1)];
    uint32_t fl = i < nflagged ? SMX_FLAG_STREAM_STORES : SMX_FLAG_CACHED_STORES;
    f[k] = (family)F("", FAM_ALL | FAM_EDGES | FAM_FWD, n, 0, fl, g_half_ninf, -20, 20);
    snprintf(f[k++].name, sizeof f[0].name, "forward %zu %s stores", n, i < nflagged ? "streaming" : "cached");
  }
  static const unsigned kinds[2] = { FAM_F32, FAM_F64 };
  for (int j = 0; j < 2; j++) {
    int lg = long_log2(kinds[j]);
    if (lg <= 0) continue;
    f[k] = (family)F("", kinds[j] | FAM_LONG, (size_t)1 << lg, 0, 0, g_normal, j ? 0.5 : 0.0, 0);
    snprintf(f[k++].name, sizeof f[0].name, "N(0,1) 2^%d", lg);
  }
  *count = k;
  return f;
}
