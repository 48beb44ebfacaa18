/*
 * The op table (src/ops/op_table.def) through its public face, include/smx/smx_ops.h:
 *  - every operation is found by its name, at its id, once; unknown names are SMX_E_INVALID_ARG;
 *  - every parameter's range is sane and its default (where it has one) inside it;
 *  - the dtype bits are the library's symbols, both ways: a bit is set exactly when
 *    smx_<name>_rows_<dt> or smx_<name>_<dt> (backward: smx_<name>_backward_rows_<dt> or
 *    smx_<name>_backward_<dt>) is exported by the shared library given as argv[1];
 *  - smx_op_rows gives bitwise the results of the op's own entry point for every row operation with an
 *    f32 form, forward and backward (the direct calls below are written out by hand, on purpose: they
 *    are the check of the generated dispatch), and runs every dtype the table lists;
 *  - smx_op_rows refuses bad parameters, classes and dtypes.
 */
#include <dlfcn.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "smx/smx.h"

static int failures;
#define CHECK(cond, ...)                                                                                   \
  do {                                                                                                     \
    if (!(cond)) {                                                                                         \
      failures++;                                                                                          \
      fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__);                                                 \
      fprintf(stderr, __VA_ARGS__);                                                                        \
      fputc('\n', stderr);                                                                                 \
    }                                                                                                      \
  } while (0)

static int is_rows_class(smx_op_sig s) {
  return s == SMX_SIG_ROWS || s == SMX_SIG_ROWS_YBWD || s == SMX_SIG_ROWS_LENS || s == SMX_SIG_ROWS_PGRAD ||
         s == SMX_SIG_LSE;
}

static void test_lookup(void) {
  size_t n = 0;
  CHECK(smx_op_count(&n) == SMX_OK && n >= 40, "smx_op_count: %zu", n);
  CHECK(smx_op_count(NULL) == SMX_E_INVALID_ARG, "smx_op_count(NULL)");
  for (size_t i = 0; i < n; i++) {
    const smx_op_info *op = NULL, *found = NULL;
    CHECK(smx_op_at(i, &op) == SMX_OK && op && op->id == i, "smx_op_at(%zu)", i);
    if (!op) continue;
    CHECK(smx_op_find(op->name, &found) == SMX_OK && found == op, "smx_op_find(%s)", op->name);
    CHECK(op->bound && op->bound[0] && op->special && op->special[0], "%s: bound and special text", op->name);
    CHECK(op->dtypes != 0, "%s: no dtype", op->name);
    CHECK((op->bwd_dtypes & ~op->dtypes) == 0, "%s: a backward dtype without its forward", op->name);
    CHECK(strcmp(smx_op_family_name(op->family), "?") && strcmp(smx_op_sig_name(op->sig), "?"), "%s: enums",
          op->name);
  }
  const smx_op_info *op = (const smx_op_info *)1;
  CHECK(smx_op_at(n, &op) == SMX_E_INVALID_ARG && op == NULL, "smx_op_at(count)");
  CHECK(smx_op_at(0, NULL) == SMX_E_INVALID_ARG, "smx_op_at(0, NULL)");
  op = (const smx_op_info *)1;
  CHECK(smx_op_find("no_such_op", &op) == SMX_E_INVALID_ARG && op == NULL, "unknown name");
  CHECK(smx_op_find("Softmax", &op) == SMX_E_INVALID_ARG, "names are case-sensitive");
  CHECK(smx_op_find("", &op) == SMX_E_INVALID_ARG, "empty name");
  CHECK(smx_op_find(NULL, &op) == SMX_E_INVALID_ARG, "NULL name");
  CHECK(smx_op_find("softmax", NULL) == SMX_E_INVALID_ARG, "NULL out");
  CHECK(!strcmp(smx_op_dtype_name(SMX_OP_BF16), "bf16") && !strcmp(smx_param_type_name(SMX_PARAM_SIZE), "size_t"),
        "names");
}

static void test_params(void) {
  size_t n = 0;
  smx_op_count(&n);
  for (size_t i = 0; i < n; i++) {
    const smx_op_info *op;
    smx_op_at(i, &op);
    size_t values = 0;
    for (size_t j = 0; j < op->nparams; j++) {
      const smx_op_param *p = &op->params[j];
      values += p->type == SMX_PARAM_DOUBLE4 ? 4 : 1;
      CHECK(p->name && p->name[0] && p->doc && p->doc[0], "%s: parameter %zu unnamed", op->name, j);
      CHECK(p->min <= p->max, "%s.%s: empty range", op->name, p->name);
      CHECK(isnan(p->def) || (p->def >= p->min && p->def <= p->max), "%s.%s: default %g outside [%g, %g]",
            op->name, p->name, p->def, p->min, p->max);
      int whole = p->type == SMX_PARAM_INT || p->type == SMX_PARAM_BOOL || p->type == SMX_PARAM_SIZE ||
                  p->type == SMX_PARAM_U64;
      CHECK(!whole || isnan(p->def) || p->def == floor(p->def), "%s.%s: default not whole", op->name, p->name);
      CHECK(p->type != SMX_PARAM_BOOL || (p->min == 0 && p->max == 1), "%s.%s: bool range", op->name, p->name);
      CHECK(p->type != SMX_PARAM_INT || (p->min >= -2147483647.0 && p->max <= 2147483647.0), "%s.%s: int range",
            op->name, p->name);
    }
    CHECK(values == op->nvalues, "%s: nvalues %zu, parameters %zu", op->name, op->nvalues, values);
  }
}

/* The dtype bits against the shared library's exported symbols: a listed entry is smx_op_symbol's name,
 * an unlisted one exists in neither form. */
static int has_symbol(void *lib, const char *name, const char *mid, const char *dt) {
  char s[128];
  snprintf(s, sizeof s, "smx_%s%s_rows_%s", name, mid, dt);
  if (dlsym(lib, s)) return 1;
  snprintf(s, sizeof s, "smx_%s%s_%s", name, mid, dt);
  return dlsym(lib, s) != NULL;
}

static void test_symbols(const char *path) {
  void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  CHECK(lib != NULL, "dlopen %s: %s", path, dlerror());
  if (!lib) return;
  size_t n = 0, checked = 0;
  smx_op_count(&n);
  for (size_t i = 0; i < n; i++) {
    const smx_op_info *op;
    smx_op_at(i, &op);
    for (int d = SMX_OP_F64; d <= SMX_OP_BF16; d++)
      for (int bwd = 0; bwd <= 1; bwd++) {
        const char *dt = smx_op_dtype_name((smx_op_dtype)d);
        int listed = !!((bwd ? op->bwd_dtypes : op->dtypes) & SMX_OP_BIT(d));
        char sym[128];
        smx_status s = smx_op_symbol(op, (smx_op_dtype)d, bwd, sym, sizeof sym);
        CHECK((s == SMX_OK) == listed, "%s %s: smx_op_symbol %d", op->name, dt, (int)s);
        if (listed) {
          CHECK(s == SMX_OK && dlsym(lib, sym) != NULL, "%s: the table lists %s, the library lacks it", op->name, sym);
          checked++;
        } else if (op->sig != SMX_SIG_ATTENTION && op->sig != SMX_SIG_MERGE) {
          /* attention's storage type is in its plan: no per-dtype symbols to look for */
          CHECK(!has_symbol(lib, op->name, bwd ? "_backward" : "", dt), "%s%s %s: in the library, not in the table",
                op->name, bwd ? " backward" : "", dt);
        }
      }
  }
  CHECK(checked > 100, "too few symbols checked: %zu", checked);
  char small[8];
  const smx_op_info *sm;
  smx_op_find("softmax", &sm);
  CHECK(smx_op_symbol(sm, SMX_OP_F32, 0, small, sizeof small) == SMX_E_INVALID_ARG && small[0] == 0, "small buffer");
  dlclose(lib);
}

/* ---------------------------------------------------------------- generic == direct, bitwise */
enum { ROWS = 3, COLS = 7, LD = 9 };

/* Parameters other than the defaults, so that their passing is seen. */
static const struct { const char *op; size_t n; double v[8]; } test_values[] = {
  { "multimax", 8, { -1.0, 1.0, -2.0, 2.0, 0.1, 0.2, 0.05, 0.03 } },
  { "softpick", 1, { 0.01 } },        { "ssmax", 1, { 0.7 } },    { "sa_softmax", 1, { 1 } },
  { "topk_softmax", 1, { 3 } },
  { "sigmoid_bias", 1, { 0.3 } },     { "entmax", 1, { 1.3 } },
};

/* The op's own entry points, called by hand. 1: called, 0: not a known op (the test fails). */
static int direct_f32(const char *name, int bwd, const float *x, const float *y, const float *dy, float *out,
                      const double *p, const int64_t *lens, double *dparams, const smx_options *o, smx_status *s) {
#define F x, LD, out, LD, ROWS, COLS
#define B x, LD, y, LD, dy, LD, out, LD, ROWS, COLS
  if (!strcmp(name, "softmax")) *s = bwd ? smx_softmax_backward_rows_f32(y, LD, dy, LD, out, LD, ROWS, COLS, o)
                                         : smx_softmax_rows_f32(F, o);
  else if (!strcmp(name, "log_softmax"))
    *s = bwd ? smx_log_softmax_backward_rows_f32(y, LD, dy, LD, out, LD, ROWS, COLS, o) : smx_log_softmax_rows_f32(F, o);
  else if (!strcmp(name, "logsumexp")) *s = smx_logsumexp_rows_f32(x, LD, out, ROWS, COLS, o);
  else if (!strcmp(name, "multimax"))
    *s = bwd ? smx_multimax_backward_rows_f32(B, p, p + 4, dparams, o) : smx_multimax_rows_f32(F, p, p + 4, o);
  else if (!strcmp(name, "softpick"))
    *s = bwd ? smx_softpick_backward_rows_f32(B, p[0], o) : smx_softpick_rows_f32(F, p[0], o);
  else if (!strcmp(name, "ssmax"))
    *s = bwd ? smx_ssmax_backward_rows_f32(B, p[0], lens, o) : smx_ssmax_rows_f32(F, p[0], lens, o);
  else if (!strcmp(name, "sa_softmax"))
    *s = bwd ? smx_sa_softmax_backward_rows_f32(B, (int)p[0], o) : smx_sa_softmax_rows_f32(F, (int)p[0], o);
  else if (!strcmp(name, "adaptive_softmax"))
    *s = bwd ? smx_adaptive_softmax_backward_rows_f32(B, o) : smx_adaptive_softmax_rows_f32(F, o);
  else if (!strcmp(name, "topk_softmax"))
    *s = bwd ? smx_topk_softmax_backward_rows_f32(B, (size_t)p[0], o) : smx_topk_softmax_rows_f32(F, (size_t)p[0], o);
  else if (!strcmp(name, "softplus_l1"))
    *s = bwd ? smx_softplus_l1_backward_rows_f32(B, o) : smx_softplus_l1_rows_f32(F, o);
  else if (!strcmp(name, "standardize_softmax"))
    *s = bwd ? smx_standardize_softmax_backward_rows_f32(B, o) : smx_standardize_softmax_rows_f32(F, o);
  else if (!strcmp(name, "sigmoid")) *s = bwd ? smx_sigmoid_backward_rows_f32(B, o) : smx_sigmoid_rows_f32(F, o);
  else if (!strcmp(name, "sigmoid_bias")) *s = smx_sigmoid_bias_rows_f32(F, p[0], o);
  else if (!strcmp(name, "sparsemax"))
    *s = bwd ? smx_sparsemax_backward_rows_f32(B, o) : smx_sparsemax_rows_f32(F, o);
  else if (!strcmp(name, "sparsemax_sort")) *s = smx_sparsemax_sort_rows_f32(F, o);
  else if (!strcmp(name, "entmax15"))
    *s = bwd ? smx_entmax15_backward_rows_f32(B, o) : smx_entmax15_rows_f32(F, o);
  else if (!strcmp(name, "entmax"))
    *s = bwd ? smx_entmax_backward_rows_f32(B, p[0], o) : smx_entmax_rows_f32(F, p[0], o);
  else return 0;
  return 1;
#undef F
#undef B
}

static void fill(float *a, unsigned seed) {
  for (size_t i = 0; i < (size_t)ROWS * LD; i++) {
    seed = seed * 1664525u + 1013904223u;
    a[i] = (float)((double)(seed >> 8) / 16777216.0 * 6.0 - 3.0);
  }
}

static void test_generic_f32(void) {
  size_t n = 0, covered = 0;
  smx_op_count(&n);
  const smx_options o = { SMX_ALGO_AUTO, 0.0, 0, 2, NULL };
  const int64_t lens[ROWS] = { 2, 5, 7 };
  for (size_t i = 0; i < n; i++) {
    const smx_op_info *op;
    smx_op_at(i, &op);
    if (!is_rows_class(op->sig) || !(op->dtypes & SMX_OP_BIT(SMX_OP_F32))) continue;
    double p[8] = { 0 };
    size_t np = 0;
    for (size_t t = 0; t < sizeof test_values / sizeof test_values[0]; t++)
      if (!strcmp(test_values[t].op, op->name)) {
        np = test_values[t].n;
        memcpy(p, test_values[t].v, sizeof p);
      }
    const int64_t *ln = op->sig == SMX_SIG_ROWS_LENS ? lens : NULL;
    for (int bwd = 0; bwd <= 1; bwd++) {
      if (bwd && !(op->bwd_dtypes & SMX_OP_BIT(SMX_OP_F32))) continue;
      float x[ROWS * LD], y[ROWS * LD], dy[ROWS * LD], a[ROWS * LD], b[ROWS * LD];
      double da[8] = { 0 }, db[8] = { 0 };
      fill(x, 7u + (unsigned)i);
      fill(dy, 91u + (unsigned)i);
      memset(y, 0, sizeof y);
      smx_status s = SMX_OK;
      if (bwd && !direct_f32(op->name, 0, x, NULL, NULL, y, p, ln, NULL, &o, &s)) continue;
      CHECK(s == SMX_OK, "%s: forward for y: %d", op->name, (int)s);
      /* the same fill of both outputs, so that the gaps between rows compare too */
      memset(a, 0x5a, sizeof a);
      memset(b, 0x5a, sizeof b);
      int pgrad = bwd && op->sig == SMX_SIG_ROWS_PGRAD;
      smx_op_call c = { SMX_OP_F32, bwd, ROWS, COLS, x, LD, y, LD, dy, LD, a, LD, p, np, ln, pgrad ? da : NULL, NULL, NULL, 0, NULL };
      smx_status sg = smx_op_rows(op, &c, &o), sd = SMX_E_INTERNAL;
      int known = direct_f32(op->name, bwd, x, y, dy, b, p, ln, pgrad ? db : NULL, &o, &sd);
      CHECK(known, "%s: no direct call in this test: add it to direct_f32", op->name);
      if (!known) continue;
      covered++;
      CHECK(sg == SMX_OK && sd == SMX_OK, "%s%s: status %d (generic) %d (direct)", op->name, bwd ? " backward" : "",
            (int)sg, (int)sd);
      CHECK(!memcmp(a, b, sizeof a), "%s%s: the generic entry differs from the direct call", op->name,
            bwd ? " backward" : "");
      CHECK(!memcmp(da, db, sizeof da), "%s backward: parameter gradients differ", op->name);
    }
  }
  CHECK(covered >= 25, "only %zu row calls compared", covered);
  printf("test_op_table: %zu row calls compared bitwise\n", covered);
}

/* Every dtype the table lists runs through smx_op_rows (half rows: the bit patterns of small values). */
static void test_generic_dtypes(void) {
  size_t n = 0;
  smx_op_count(&n);
  const smx_options o = { SMX_ALGO_AUTO, 0.0, 0, 1, NULL };
  for (size_t i = 0; i < n; i++) {
    const smx_op_info *op;
    smx_op_at(i, &op);
    if (!is_rows_class(op->sig)) continue;
    double p[8] = { 0 };
    size_t np = 0;
    for (size_t t = 0; t < sizeof test_values / sizeof test_values[0]; t++)
      if (!strcmp(test_values[t].op, op->name)) {
        np = test_values[t].n;
        memcpy(p, test_values[t].v, sizeof p);
      }
    for (int d = SMX_OP_F64; d <= SMX_OP_BF16; d++)
      for (int bwd = 0; bwd <= 1; bwd++) {
        /* buffers of each element type (f16 / bf16: 0x3c00, 1.0 in f16 and 0.0078 in bf16) */
        double xd[ROWS * LD], yd[ROWS * LD], dyd[ROWS * LD], od[ROWS * LD];
        float xf[ROWS * LD], yf[ROWS * LD], dyf[ROWS * LD], of[ROWS * LD];
        uint16_t xh[ROWS * LD], yh[ROWS * LD], dyh[ROWS * LD], oh[ROWS * LD];
        for (size_t k = 0; k < (size_t)ROWS * LD; k++) {
          xd[k] = (double)k / 8.0 - 2.0, yd[k] = 1.0 / COLS, dyd[k] = 0.25;
          xf[k] = (float)xd[k], yf[k] = (float)yd[k], dyf[k] = 0.25f;
          xh[k] = 0x3c00, yh[k] = 0x3000, dyh[k] = 0x3400;
        }
        int h = d >= SMX_OP_F16, lse_half = h && op->sig == SMX_SIG_LSE; /* half LSE writes floats */
        smx_op_call c = { (smx_op_dtype)d, bwd, ROWS, COLS,
                          d == SMX_OP_F64 ? (void *)xd : d == SMX_OP_F32 ? (void *)xf : (void *)xh, LD,
                          d == SMX_OP_F64 ? (void *)yd : d == SMX_OP_F32 ? (void *)yf : (void *)yh, LD,
                          d == SMX_OP_F64 ? (void *)dyd : d == SMX_OP_F32 ? (void *)dyf : (void *)dyh, LD,
                          d == SMX_OP_F64 ? (void *)od : d == SMX_OP_F32 || lse_half ? (void *)of : (void *)oh, LD,
                          p, np, NULL, NULL, NULL, NULL, 0, NULL };
        unsigned have = bwd ? op->bwd_dtypes : op->dtypes;
        smx_status s = smx_op_rows(op, &c, &o);
        if (have & SMX_OP_BIT(d))
          CHECK(s == SMX_OK, "%s%s %s: %d", op->name, bwd ? " backward" : "", smx_op_dtype_name((smx_op_dtype)d), (int)s);
        else
          CHECK(s == SMX_E_UNSUPPORTED, "%s%s %s: %d, not SMX_E_UNSUPPORTED", op->name, bwd ? " backward" : "",
                smx_op_dtype_name((smx_op_dtype)d), (int)s);
      }
  }
}

/* The target losses (TLOSS) through smx_op_rows: bitwise the direct call, loss and gradient, for every
 * op of the class and every dtype it lists (f16 / bf16 rows from the f32 ones); the class's own refusals.
 * The direct call is the entry point the table names (smx_op_symbol), looked up in the library and called
 * with the class's argument list, so a new TLOSS op is checked here without a line of its own. */
typedef smx_status (*tl64_fn)(const double *, size_t, const int64_t *, double *, double *, size_t, size_t, size_t,
                              double, double, const smx_options *);
typedef smx_status (*tl32_fn)(const float *, size_t, const int64_t *, float *, float *, size_t, size_t, size_t,
                              double, double, const smx_options *);
typedef smx_status (*tl16_fn)(const uint16_t *, size_t, const int64_t *, float *, uint16_t *, size_t, size_t,
                              size_t, double, double, const smx_options *);
typedef smx_status (*tl64_1_fn)(const double *, size_t, const int64_t *, double *, double *, size_t, size_t,
                                size_t, double, const smx_options *);
typedef smx_status (*tl32_1_fn)(const float *, size_t, const int64_t *, float *, float *, size_t, size_t, size_t,
                                double, const smx_options *);
typedef smx_status (*tl16_1_fn)(const uint16_t *, size_t, const int64_t *, float *, uint16_t *, size_t, size_t,
                                size_t, double, const smx_options *);
static smx_status direct_tloss(void *lib, const smx_op_info *op, smx_op_dtype d, const void *x, const int64_t *t,
                               void *loss, void *grad, const double *p, const smx_options *o, int *known) {
  char sym[128];
  void *f = smx_op_symbol(op, d, 0, sym, sizeof sym) == SMX_OK && lib ? dlsym(lib, sym) : NULL;
  /* the classes' parameter lists this test calls: one or two doubles */
  *known = f != NULL && (op->nvalues == 1 || op->nvalues == 2);
  if (!*known) return SMX_E_INTERNAL;
  /* (POSIX: dlsym's object pointer converts to the function pointer it is) */
  union { void *obj; tl64_fn a64; tl32_fn a32; tl16_fn a16; tl64_1_fn b64; tl32_1_fn b32; tl16_1_fn b16; } u;
  u.obj = f;
#define TL(T, L) (const T *)x, LD, t, (L *)loss, (T *)grad, LD, ROWS, COLS
  if (op->nvalues == 2)
    return d == SMX_OP_F64 ? u.a64(TL(double, double), p[0], p[1], o)
           : d == SMX_OP_F32 ? u.a32(TL(float, float), p[0], p[1], o)
                             : u.a16(TL(uint16_t, float), p[0], p[1], o);
  return d == SMX_OP_F64 ? u.b64(TL(double, double), p[0], o)
         : d == SMX_OP_F32 ? u.b32(TL(float, float), p[0], o)
                           : u.b16(TL(uint16_t, float), p[0], o);
#undef TL
}

/* The rows both direct-call tests feed: x in f32 (fill(seed)), the same values in f64, and a pattern finite in f16
 * and in bf16 */
typedef struct direct_rows {
  float xf[ROWS * LD];
  double xd[ROWS * LD];
  uint16_t xh[ROWS * LD];
} direct_rows;
static void direct_rows_fill(direct_rows *r, unsigned seed) {
  fill(r->xf, seed);
  for (size_t i = 0; i < (size_t)ROWS * LD; i++) {
    r->xd[i] = r->xf[i];
    r->xh[i] = (uint16_t)(0x3c00u + (i % 512u));
  }
}
/* x in dtype d (f16 and bf16 read the same pattern) */
static const void *direct_x(const direct_rows *r, int d) {
  return d == SMX_OP_F64 ? (const void *)r->xd : d == SMX_OP_F32 ? (const void *)r->xf : (const void *)r->xh;
}

static void test_tloss(const char *path) {
  void *lib = path ? dlopen(path, RTLD_NOW | RTLD_LOCAL) : NULL;
  CHECK(lib != NULL, "dlopen %s for the TLOSS direct calls", path ? path : "(none)");
  size_t n = 0, covered = 0;
  smx_op_count(&n);
  smx_loss_ext e = SMX_LOSS_EXT_INIT;
  e.reduction = SMX_REDUCTION_NONE;
  const smx_options o = { SMX_ALGO_AUTO, 0.0, 0, 2, &e };
  const int64_t t[ROWS] = { 0, 6, -100 };
  static double gd[2][ROWS * LD];
  static direct_rows in;
  direct_rows_fill(&in, 7u);
  for (size_t i = 0; i < n; i++) {
    const smx_op_info *op;
    smx_op_at(i, &op);
    if (op->sig != SMX_SIG_TLOSS) continue;
    double p[2] = { op->nparams > 0 ? op->params[0].def * 0.75 : 0, op->nparams > 1 ? op->params[1].def + 0.5 : 0 };
    for (int d = SMX_OP_F64; d <= SMX_OP_BF16; d++) {
      if (!(op->dtypes & SMX_OP_BIT(d))) continue;
      const void *x = direct_x(&in, d);
      double la[2][ROWS];
      memset(gd, 0x5a, sizeof gd);
      memset(la, 0x5a, sizeof la);
      smx_op_call c = { (smx_op_dtype)d, 0, ROWS, COLS, x, LD, NULL, 0, NULL, 0, la[0], 0, p, op->nvalues,
                        NULL, NULL, t, gd[0], LD, NULL };
      smx_status sg = smx_op_rows(op, &c, &o);
      int known;
      smx_status sd = direct_tloss(lib, op, (smx_op_dtype)d, x, t, la[1], gd[1], p, &o, &known);
      CHECK(known, "%s: its entry point is not in the library, or takes other than 1 or 2 parameters (extend direct_tloss)", op->name);
      CHECK(sg == SMX_OK && sd == SMX_OK, "%s %s: statuses %d and %d", op->name,
            smx_op_dtype_name((smx_op_dtype)d), (int)sg, (int)sd);
      CHECK(!memcmp(la[0], la[1], sizeof la[0]) && !memcmp(gd[0], gd[1], sizeof gd[0]),
            "%s %s: the generic call differs from the direct one", op->name, smx_op_dtype_name((smx_op_dtype)d));
      c.backward = 1;
      CHECK(smx_op_rows(op, &c, &o) == SMX_E_UNSUPPORTED, "%s: a TLOSS has no backward entry", op->name);
      covered++;
    }
  }
  CHECK(covered >= 6, "TLOSS: %zu op x dtype pairs covered (sdpo_loss x 4, spherical_z_loss x 2 at least)", covered);
  if (lib) dlclose(lib);
  const smx_op_info *sdpo, *sm;
  smx_op_find("sdpo_loss", &sdpo);
  smx_op_find("softmax", &sm);
  float out[ROWS * LD], loss[ROWS];
  double beta = 0.0;
  smx_op_call c = { SMX_OP_F32, 0, ROWS, COLS, in.xf, LD,
                    NULL, 0, NULL, 0, out, LD, NULL, 0, NULL, NULL, t, NULL, 0, NULL };
  CHECK(smx_op_rows(sm, &c, &o) == SMX_E_INVALID_ARG, "targets for softmax");
  c.targets = NULL, c.grad = out, c.ldg = LD;
  CHECK(smx_op_rows(sm, &c, &o) == SMX_E_INVALID_ARG, "grad for softmax");
  smx_op_call l = { SMX_OP_F32, 0, ROWS, COLS, in.xf, LD,
                    NULL, 0, NULL, 0, loss, 0, &beta, 1, NULL, NULL, t, NULL, 0, NULL };
  memset(loss, 0x5a, sizeof loss);
  CHECK(smx_op_rows(sdpo, &l, &o) == SMX_E_INVALID_ARG, "sdpo beta = 0");
  CHECK(((unsigned char *)loss)[0] == 0x5a, "a refused call wrote its loss");
  beta = 1e-310;
  CHECK(smx_op_rows(sdpo, &l, &o) == SMX_E_INVALID_ARG, "sdpo beta = 1e-310 (1 / beta overflows)");
  beta = 2.0;
  l.targets = NULL;
  CHECK(smx_op_rows(sdpo, &l, &o) == SMX_E_INVALID_ARG, "sdpo without targets");
}

/* Cross-entropy (XENT) through smx_op_rows: bitwise the direct call, loss, gradient and log-sum-exp, for every
 * op of the class and every dtype it lists, each reduction, with label smoothing and z-loss; the direct call is
 * the entry point the table names (smx_op_symbol) looked up in the library, so a new XENT op is checked here
 * without a line of its own. Then the class's own refusals. */
typedef smx_status (*xe64_fn)(const double *, size_t, const int64_t *, double *, double *, size_t, double *, size_t,
                              size_t, const smx_options *);
typedef smx_status (*xe32_fn)(const float *, size_t, const int64_t *, float *, float *, size_t, float *, size_t,
                              size_t, const smx_options *);
typedef smx_status (*xe16_fn)(const uint16_t *, size_t, const int64_t *, float *, uint16_t *, size_t, float *,
                              size_t, size_t, const smx_options *);
static void test_xent(const char *path) {
  void *lib = path ? dlopen(path, RTLD_NOW | RTLD_LOCAL) : NULL;
  CHECK(lib != NULL, "dlopen %s for the XENT direct calls", path ? path : "(none)");
  size_t n = 0, covered = 0;
  smx_op_count(&n);
  const int64_t t[ROWS] = { 0, 6, -100 };
  static double gd[2][ROWS * LD];
  static direct_rows in;
  direct_rows_fill(&in, 11u);
  for (size_t i = 0; i < n; i++) {
    const smx_op_info *op;
    smx_op_at(i, &op);
    if (op->sig != SMX_SIG_XENT) continue;
    for (int d = SMX_OP_F64; d <= SMX_OP_BF16; d++) {
      if (!(op->dtypes & SMX_OP_BIT(d))) continue;
      char sym[128];
      void *f = smx_op_symbol(op, (smx_op_dtype)d, 0, sym, sizeof sym) == SMX_OK && lib ? dlsym(lib, sym) : NULL;
      CHECK(f != NULL, "%s %s: its entry point is not in the library", op->name, smx_op_dtype_name((smx_op_dtype)d));
      if (!f) continue;
      /* (POSIX: dlsym's object pointer converts to the function pointer it is) */
      union { void *obj; xe64_fn a64; xe32_fn a32; xe16_fn a16; } u;
      u.obj = f;
      const void *x = direct_x(&in, d);
      for (int v = 0; v < 3; v++) {
        smx_loss_ext e = SMX_LOSS_EXT_INIT;
        e.reduction = v == 0 ? SMX_REDUCTION_NONE : v == 1 ? SMX_REDUCTION_MEAN : SMX_REDUCTION_SUM;
        e.label_smoothing = v == 1 ? 0.125 : 0.0;
        e.z_loss = v == 2 ? 1e-3 : 0.0;
        const smx_options o = { SMX_ALGO_AUTO, v == 2 ? 1.5 : 0.0, 0, 2, &e };
        double la[2][ROWS], ls[2][ROWS];
        memset(gd, 0x5a, sizeof gd);
        memset(la, 0x5a, sizeof la);
        memset(ls, 0x5a, sizeof ls);
        smx_op_call c = { (smx_op_dtype)d, 0, ROWS, COLS, x, LD, NULL, 0, NULL, 0, la[0], 0, NULL, 0,
                          NULL, NULL, t, gd[0], LD, ls[0] };
        smx_status sg = smx_op_rows(op, &c, &o), sd;
#define XE(T, L) (const T *)x, LD, t, (L *)la[1], (T *)gd[1], LD, (L *)ls[1], ROWS, COLS, &o
        sd = d == SMX_OP_F64 ? u.a64(XE(double, double)) : d == SMX_OP_F32 ? u.a32(XE(float, float))
                                                                          : u.a16(XE(uint16_t, float));
#undef XE
        CHECK(sg == SMX_OK && sd == SMX_OK, "%s %s (case %d): statuses %d and %d", op->name,
              smx_op_dtype_name((smx_op_dtype)d), v, (int)sg, (int)sd);
        CHECK(!memcmp(la[0], la[1], sizeof la[0]) && !memcmp(gd[0], gd[1], sizeof gd[0]) &&
                  !memcmp(ls[0], ls[1], sizeof ls[0]),
              "%s %s (case %d): the generic call differs from the direct one", op->name,
              smx_op_dtype_name((smx_op_dtype)d), v);
        /* the loss alone (no gradient, no lse) is the same loss */
        double l1[ROWS];
        memset(l1, 0x5a, sizeof l1);
        smx_op_call lo = c;
        lo.out = l1, lo.grad = NULL, lo.ldg = 0, lo.lse = NULL;
        CHECK(smx_op_rows(op, &lo, &o) == SMX_OK && !memcmp(l1, la[0], sizeof l1), "%s %s (case %d): loss alone",
              op->name, smx_op_dtype_name((smx_op_dtype)d), v);
        c.backward = 1;
        CHECK(smx_op_rows(op, &c, &o) == SMX_E_UNSUPPORTED, "%s: XENT has no backward entry", op->name);
      }
      covered++;
    }
  }
  CHECK(covered >= 4, "XENT: %zu op x dtype pairs covered (cross_entropy x 4 at least)", covered);
  if (lib) dlclose(lib);
  /* lse only where the class has it; targets checked by the entry */
  const smx_op_info *xe, *sdpo, *sm;
  smx_op_find("cross_entropy", &xe);
  smx_op_find("sdpo_loss", &sdpo);
  smx_op_find("softmax", &sm);
  float out[ROWS * LD], loss[ROWS], lse[ROWS];
  const smx_options o = { SMX_ALGO_AUTO, 0.0, 0, 1, NULL };
  smx_op_call c = { SMX_OP_F32, 0, ROWS, COLS, in.xf, LD,
                    NULL, 0, NULL, 0, out, LD, NULL, 0, NULL, NULL, NULL, NULL, 0, lse };
  CHECK(smx_op_rows(sm, &c, &o) == SMX_E_INVALID_ARG, "lse for softmax");
  smx_op_call l = { SMX_OP_F32, 0, ROWS, COLS, in.xf, LD,
                    NULL, 0, NULL, 0, loss, 0, NULL, 0, NULL, NULL, t, NULL, 0, lse };
  CHECK(smx_op_rows(sdpo, &l, &o) == SMX_E_INVALID_ARG, "lse for sdpo_loss (TLOSS)");
  double one = 1.0;
  l.params = &one, l.nparams = 1;
  CHECK(smx_op_rows(xe, &l, &o) == SMX_E_INVALID_ARG, "a parameter for cross_entropy");
  l.params = NULL, l.nparams = 0, l.targets = NULL;
  memset(loss, 0x5a, sizeof loss);
  CHECK(smx_op_rows(xe, &l, &o) == SMX_E_INVALID_ARG && ((unsigned char *)loss)[0] == 0x5a,
        "cross_entropy without targets, nothing written");
  const int64_t bad[ROWS] = { 0, COLS, 1 };
  l.targets = bad;
  CHECK(smx_op_rows(xe, &l, &o) == SMX_E_INVALID_ARG && ((unsigned char *)loss)[0] == 0x5a,
        "cross_entropy with a target out of range, nothing written");
}

static void test_refusals(void) {
  const smx_op_info *topk, *entmax, *focal, *sm, *ssmax, *mm;
  smx_op_find("topk_softmax", &topk);
  smx_op_find("entmax", &entmax);
  smx_op_find("focal_loss", &focal);
  smx_op_find("softmax", &sm);
  smx_op_find("ssmax", &ssmax);
  smx_op_find("multimax", &mm);
  float x[ROWS * LD] = { 0 }, out[ROWS * LD];
  double p[9] = { 2.5 }, dp[8];
  const int64_t lens[ROWS] = { 1, 1, 1 };
  smx_op_call c = { SMX_OP_F32, 0, ROWS, COLS, x, LD, NULL, 0, NULL, 0, out, LD, NULL, 0, NULL, NULL, NULL, NULL, 0, NULL };
  CHECK(smx_op_rows(topk, &c, NULL) == SMX_E_INVALID_ARG, "topk_softmax without k (no default)");
  c.params = p, c.nparams = 1;
  CHECK(smx_op_rows(topk, &c, NULL) == SMX_E_INVALID_ARG, "k = 2.5");
  p[0] = 0;
  CHECK(smx_op_rows(topk, &c, NULL) == SMX_E_INVALID_ARG, "k = 0");
  p[0] = 3;
  CHECK(smx_op_rows(topk, &c, NULL) == SMX_OK, "k = 3");
  p[0] = 0x1p60;
  CHECK(smx_op_rows(topk, &c, NULL) == SMX_E_INVALID_ARG, "k = 2^60 (not exact as a double)");
  p[0] = 1.0;
  CHECK(smx_op_rows(entmax, &c, NULL) == SMX_E_INVALID_ARG, "entmax alpha = 1");
  p[0] = NAN;
  CHECK(smx_op_rows(entmax, &c, NULL) == SMX_E_INVALID_ARG, "entmax alpha = NaN");
  c.nparams = 0;
  CHECK(smx_op_rows(entmax, &c, NULL) == SMX_OK, "entmax with its default alpha");
  c.nparams = 1, c.params = NULL;
  CHECK(smx_op_rows(entmax, &c, NULL) == SMX_E_INVALID_ARG, "params NULL with nparams 1");
  c.params = p, p[0] = 1.5, c.nparams = 2;
  CHECK(smx_op_rows(entmax, &c, NULL) == SMX_E_INVALID_ARG, "more values than the op takes");
  c.nparams = 0;
  CHECK(smx_op_rows(focal, &c, NULL) == SMX_E_INVALID_ARG, "a loss is not a row operation");
  CHECK(smx_op_rows(NULL, &c, NULL) == SMX_E_INVALID_ARG && smx_op_rows(sm, NULL, NULL) == SMX_E_INVALID_ARG, "NULLs");
  smx_op_info copy = *sm;
  CHECK(smx_op_rows(&copy, &c, NULL) == SMX_E_INVALID_ARG, "a copied descriptor");
  c.lens = lens;
  CHECK(smx_op_rows(sm, &c, NULL) == SMX_E_INVALID_ARG, "lens for softmax");
  CHECK(smx_op_rows(ssmax, &c, NULL) == SMX_OK, "lens for ssmax");
  c.lens = NULL, c.dparams = dp;
  CHECK(smx_op_rows(mm, &c, NULL) == SMX_E_INVALID_ARG, "dparams in a forward call");
  c.dparams = NULL, c.dtype = (smx_op_dtype)7;
  CHECK(smx_op_rows(sm, &c, NULL) == SMX_E_INVALID_ARG, "dtype 7");
  c.dtype = SMX_OP_F32, c.ldx = COLS - 1;
  CHECK(smx_op_rows(sm, &c, NULL) == SMX_E_INVALID_ARG, "the entry's own checks (ldx < cols)");
}

int main(int argc, char **argv) {
  test_lookup();
  test_params();
  if (argc > 1) test_symbols(argv[1]);
  else CHECK(0, "usage: test_op_table LIBSMX.so");
  test_generic_f32();
  test_generic_dtypes();
  test_tloss(argc > 1 ? argv[1] : NULL);
  test_xent(argc > 1 ? argv[1] : NULL);
  test_refusals();
  if (failures) {
    fprintf(stderr, "test_op_table: %d failure(s)\n", failures);
    return 1;
  }
  printf("test_op_table: ok\n");
  return 0;
}
