/* The cases of test_attention_backward.c (included once, after its helpers). */

static void run_accuracy_cases(void) {
  bcase cs[40];
  int n = 0;
#define ADD(nm, dd, ...) \
  do { \
    cs[n] = (bcase){ nm, dd, 0, 1.0f, 0 }; \
    bcase *c = &cs[n++]; \
    (void)c; \
    __VA_ARGS__; \
  } while (0)
  ADD("plain", base(2, 2, 2, 37, 53, 16, 12));
  ADD("one-key", base(1, 1, 1, 3, 1, 8, 8));
  ADD("long-rows", base(1, 2, 1, 70, 200, 32, 24), c->qmul = 2.0f);
  ADD("causal-br", base(1, 3, 3, 40, 90, 16, 16), c->d.causal = SMX_ATTN_CAUSAL_BOTTOM_RIGHT);
  ADD("causal-tl", base(2, 2, 1, 90, 70, 8, 20), c->d.causal = SMX_ATTN_CAUSAL_TOP_LEFT);
  ADD("causal-lq>lk", base(1, 2, 2, 80, 50, 12, 12), c->d.causal = SMX_ATTN_CAUSAL_BOTTOM_RIGHT);
  ADD("window", base(1, 2, 2, 100, 100, 16, 8), c->d.window = 1, c->d.window_left = 17, c->d.window_right = 5);
  ADD("window-causal", base(1, 1, 1, 130, 130, 8, 8), c->d.causal = SMX_ATTN_CAUSAL_BOTTOM_RIGHT, c->d.window = 1,
      c->d.window_left = 70, c->d.window_right = -1);
  ADD("radial", base(1, 2, 2, 96, 96, 8, 8), c->d.radial_frame = 8);
  ADD("bool-mask", base(2, 2, 2, 33, 47, 8, 8), c->d.mask_kind = SMX_ATTN_MASK_BOOL);
  ADD("bias", base(2, 2, 1, 33, 70, 16, 8), c->d.mask_kind = SMX_ATTN_MASK_BIAS);
  ADD("bias-inf", base(1, 2, 2, 41, 66, 8, 8), c->d.mask_kind = SMX_ATTN_MASK_BIAS, c->bias_inf = 1);
  ADD("alibi", base(1, 4, 2, 50, 80, 8, 8), c->d.alibi = 1, c->d.causal = SMX_ATTN_CAUSAL_TOP_LEFT);
  ADD("gqa", base(2, 8, 2, 29, 67, 16, 16), c->d.causal = SMX_ATTN_CAUSAL_BOTTOM_RIGHT);
  ADD("mqa", base(1, 6, 1, 21, 70, 8, 4));
  ADD("wide-group", base(1, 80, 1, 3, 65, 4, 4));
  ADD("strided", base(2, 4, 2, 37, 45, 8, 12), c->bthd = 1, c->d.causal = SMX_ATTN_CAUSAL_TOP_LEFT);
  ADD("scale", base(1, 2, 2, 20, 30, 8, 8), c->d.scale = 0.7, c->qmul = 3.0f);
  ADD("decode", base(1, 8, 2, 1, 300, 16, 16));
  ADD("sinks", base(2, 4, 2, 30, 70, 8, 8), c->d.sinks = 1, c->d.causal = SMX_ATTN_CAUSAL_BOTTOM_RIGHT);
  ADD("softcap", base(1, 2, 2, 40, 70, 16, 8), c->d.softcap = 5.0, c->qmul = 4.0f);
  ADD("ssmax", base(1, 2, 1, 40, 90, 8, 8), c->d.ssmax_s = 0.4, c->d.causal = SMX_ATTN_CAUSAL_BOTTOM_RIGHT);
  ADD("ssmax-bool", base(1, 2, 2, 30, 50, 8, 8), c->d.ssmax_s = 0.3, c->d.mask_kind = SMX_ATTN_MASK_BOOL);
  ADD("fox", base(2, 2, 1, 40, 70, 8, 8), c->d.fox = 1, c->d.causal = SMX_ATTN_CAUSAL_BOTTOM_RIGHT);
  ADD("fox-tl", base(1, 2, 2, 60, 60, 8, 8), c->d.fox = 1, c->d.causal = SMX_ATTN_CAUSAL_TOP_LEFT);
  ADD("gate", base(1, 2, 2, 30, 40, 8, 12), c->d.gate = 1);
  ADD("gate-ew", base(1, 2, 1, 30, 40, 8, 12), c->d.gate = 1, c->d.gate_flags = SMX_ATTN_GATE_ELEMENTWISE);
  ADD("everything", base(2, 4, 2, 45, 77, 16, 8), c->d.causal = SMX_ATTN_CAUSAL_BOTTOM_RIGHT, c->d.sinks = 1,
      c->d.softcap = 8.0, c->d.mask_kind = SMX_ATTN_MASK_BIAS, c->d.alibi = 1, c->d.fox = 1, c->d.gate = 1,
      c->d.ssmax_s = 0.5, c->bias_inf = 1);
  ADD("sigmoid", base(1, 2, 2, 40, 70, 16, 8), c->d.kind = SMX_ATTN_SIGMOID, c->d.sigmoid_bias = -2.0);
  ADD("sigmoid-gqa", base(2, 4, 1, 33, 90, 8, 8), c->d.kind = SMX_ATTN_SIGMOID, c->d.sigmoid_bias = -4.0,
      c->d.causal = SMX_ATTN_CAUSAL_BOTTOM_RIGHT, c->d.mask_kind = SMX_ATTN_MASK_BIAS, c->d.alibi = 1);
  ADD("sigmoid-gate", base(1, 2, 2, 30, 40, 8, 8), c->d.kind = SMX_ATTN_SIGMOID, c->d.gate = 1, c->d.softcap = 4.0,
      c->qmul = 3.0f);
  ADD("bf16", base(1, 2, 2, 40, 70, 16, 16), c->d.dtype = SMX_ATTN_BF16, c->d.causal = SMX_ATTN_CAUSAL_BOTTOM_RIGHT);
  ADD("bf16-strided", base(1, 4, 2, 20, 33, 8, 8), c->d.dtype = SMX_ATTN_BF16, c->bthd = 1, c->d.sinks = 1);
  ADD("empty-lq", base(1, 2, 2, 0, 40, 8, 8));
  ADD("empty-lk", base(1, 2, 2, 10, 0, 8, 8), c->d.sinks = 1);
#undef ADD
  for (int i = 0; i < n; i++) check_case(&cs[i], 0x5eed0000u + (uint64_t)i);
}

/* A central difference of L = sum dO . O through the f32 forward, on a tiny case with every option:
 * independent of the reference (f32 rounding over h = 2^-6: checked loosely). */
static void run_difference_cases(void) {
  bcase c = { "difference", base(1, 2, 1, 5, 7, 4, 3), 0, 1.0f, 0 };
  c.d.causal = SMX_ATTN_CAUSAL_BOTTOM_RIGHT, c.d.sinks = 1, c.d.softcap = 3.0, c.d.mask_kind = SMX_ATTN_MASK_BIAS;
  c.d.fox = 1, c.d.gate = 1, c.d.alibi = 1, c.d.ssmax_s = 0.7;
  c.d.mask_stride[3] = 1, c.d.mask_stride[2] = c.d.len_k, c.d.mask_stride[1] = c.d.len_q * c.d.len_k;
  const smx_attention_desc *d = &c.d;
  bdata t;
  make(&c, 99, &t);
  CHECK(forward(d, &t), "difference: forward");
  grads g;
  galloc(d, &g);
  CHECK(backward(d, &t, &g) == SMX_OK, "difference: backward");
  size_t no = n_of(d, 3);
  float *targets[] = { t.q, t.k, t.v, t.bias, t.sinks, t.fox, t.gate };
  void *stores[] = { t.qs, t.ks, t.vs, NULL, NULL, NULL, NULL };
  const float *grad[] = { g.dq, g.dk, g.dv, g.dbias, g.dsinks, g.dfox, g.dgate };
  size_t counts[] = { n_of(d, 0), n_of(d, 1), n_of(d, 2), d->len_q * d->len_k * d->heads_q, d->heads_q,
                      d->heads_q * d->len_k, d->heads_q * d->len_q };
  const char *names[] = { "dq", "dk", "dv", "dbias", "dsinks", "dfox", "dgate" };
  for (int w = 0; w < 7; w++)
    for (size_t e = 0; e < counts[w]; e++) {
      float keep = targets[w][e], hstep = 0x1p-6f;
      if (!isfinite(keep)) continue;
      double l[2];
      for (int s = 0; s < 2; s++) {
        targets[w][e] = keep + (s ? hstep : -hstep);
        if (stores[w]) ((float *)stores[w])[e] = targets[w][e];
        forward(d, &t);
        double sum = 0.0;
        for (size_t x = 0; x < no; x++) sum += (double)t.dO[x] * ((float *)t.os)[x];
        l[s] = sum;
      }
      targets[w][e] = keep;
      if (stores[w]) ((float *)stores[w])[e] = keep;
      double num = (l[1] - l[0]) / (2.0 * hstep), an = grad[w][e];
      CHECK(fabs(num - an) <= 2e-3 + 2e-3 * fabs(num), "difference %s[%zu]: analytic %.6g, central %.6g", names[w], e,
            an, num);
    }
  gfree(&g);
  drop(&t);
}

/* Each refusal leaves every output as it was. */
static void run_refusals(void) {
  bcase c = { "refusal", base(1, 2, 2, 9, 11, 8, 8), 0, 1.0f, 0 };
  c.d.mask_kind = SMX_ATTN_MASK_BIAS, c.d.sinks = 1;
  c.d.mask_stride[3] = 1, c.d.mask_stride[2] = c.d.len_k, c.d.mask_stride[1] = c.d.len_q * c.d.len_k;
  smx_attention_desc *d = &c.d;
  bdata t;
  make(&c, 7, &t);
  forward(d, &t);
  smx_attention_plan *p;
  CHECK(smx_attention_plan_create(d, &p) == SMX_OK, "refusal: plan");
  grads g;
  galloc(d, &g);
  size_t nq = n_of(d, 0), nk = n_of(d, 1), nv = n_of(d, 2), nm = d->heads_q * d->len_q * d->len_k;
  memset(g.dq, 0x5a, nq * 4), memset(g.dk, 0x5a, nk * 4), memset(g.dv, 0x5a, nv * 4), memset(g.dbias, 0x5a, nm * 4);
  memset(g.dsinks, 0x5a, d->heads_q * 4);
  smx_attention_args a = args_of(d, &t);
  smx_attention_grads gr = { g.dq, g.dk, g.dv, g.dbias, g.dsinks, NULL, NULL };
  smx_attention_args bad;
  smx_attention_grads bg;
#define REFUSE(what, st, call) CHECK((call) == (st), "refusal: %s", what)
  bad = a, bad.lse = NULL;
  REFUSE("no lse", SMX_E_INVALID_ARG, smx_attention_backward(p, &bad, t.dos, &gr, NULL, 0));
  REFUSE("no dO", SMX_E_INVALID_ARG, smx_attention_backward(p, &a, NULL, &gr, NULL, 0));
  bad = a, bad.mask = NULL;
  REFUSE("no bias", SMX_E_INVALID_ARG, smx_attention_backward(p, &bad, t.dos, &gr, NULL, 0));
  bad = a, bad.sinks = NULL;
  REFUSE("no sinks", SMX_E_INVALID_ARG, smx_attention_backward(p, &bad, t.dos, &gr, NULL, 0));
  bg = gr, bg.dq = NULL;
  REFUSE("no dq", SMX_E_INVALID_ARG, smx_attention_backward(p, &a, t.dos, &bg, NULL, 0));
  bg = gr, bg.dv = NULL;
  REFUSE("no dv", SMX_E_INVALID_ARG, smx_attention_backward(p, &a, t.dos, &bg, NULL, 0));
  REFUSE("no grads", SMX_E_INVALID_ARG, smx_attention_backward(p, &a, t.dos, NULL, NULL, 0));
  REFUSE("no plan", SMX_E_INVALID_ARG, smx_attention_backward(NULL, &a, t.dos, &gr, NULL, 0));
  bg = gr, bg.dq = t.qs;
  REFUSE("dq over q", SMX_E_INVALID_ARG, smx_attention_backward(p, &a, t.dos, &bg, NULL, 0));
  bg = gr, bg.dk = (float *)g.dv + 3;
  REFUSE("dk over dv", SMX_E_INVALID_ARG, smx_attention_backward(p, &a, t.dos, &bg, NULL, 0));
  bg = gr, bg.dbias = t.bias + 5;
  REFUSE("dbias over the bias", SMX_E_INVALID_ARG, smx_attention_backward(p, &a, t.dos, &bg, NULL, 0));
  bg = gr, bg.dv = (void *)t.dos;
  REFUSE("dv over dO", SMX_E_INVALID_ARG, smx_attention_backward(p, &a, t.dos, &bg, NULL, 0));
  bg = gr, bg.dsinks = t.lse;
  REFUSE("dsinks over lse", SMX_E_INVALID_ARG, smx_attention_backward(p, &a, t.dos, &bg, NULL, 0));
  size_t ws = 0;
  CHECK(smx_attention_backward_workspace_size(p, &ws) == SMX_OK && ws > 0, "refusal: workspace size");
  void *wsp = malloc(ws);
  REFUSE("small workspace", SMX_E_WORKSPACE_TOO_SMALL, smx_attention_backward(p, &a, t.dos, &gr, wsp, ws - 1));
  unsigned char pat[4];
  memset(pat, 0x5a, 4);
  int untouched = 1;
  for (size_t i = 0; i < nq * 4; i++) untouched &= ((unsigned char *)g.dq)[i] == 0x5a;
  for (size_t i = 0; i < nk * 4; i++) untouched &= ((unsigned char *)g.dk)[i] == 0x5a;
  for (size_t i = 0; i < nv * 4; i++) untouched &= ((unsigned char *)g.dv)[i] == 0x5a;
  for (size_t i = 0; i < nm * 4; i++) untouched &= ((unsigned char *)g.dbias)[i] == 0x5a;
  for (size_t i = 0; i < d->heads_q * 4; i++) untouched &= ((unsigned char *)g.dsinks)[i] == 0x5a;
  CHECK(untouched, "refusal: an output was written");
  CHECK(smx_attention_backward(p, &a, t.dos, &gr, wsp, ws) == SMX_OK, "refusal: the good call with a workspace");
  free(wsp);
  smx_attention_plan_destroy(p);
  /* plans whose backward is not computed */
  smx_attention_desc u[6];
  for (int i = 0; i < 6; i++) u[i] = base(1, 2, 2, 9, 11, 8, 8);
  u[0].kind = SMX_ATTN_SOFTPICK, u[1].qk_norm = 1, u[2].diff_lambda = 0.5, u[3].l2_distance = 1;
  u[4].blasst_log_threshold = -5.0, u[5].nsa_topk = 1;
  for (int i = 0; i < 6; i++) {
    CHECK(smx_attention_plan_create(&u[i], &p) == SMX_OK, "unsupported %d: plan", i);
    REFUSE("unsupported plan", SMX_E_UNSUPPORTED, smx_attention_backward(p, &a, t.dos, &gr, NULL, 0));
    REFUSE("unsupported workspace", SMX_E_UNSUPPORTED, smx_attention_backward_workspace_size(p, &ws));
    smx_attention_plan_destroy(p);
  }
#undef REFUSE
  gfree(&g);
  drop(&t);
}

static int all_nan(const float *x, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (x[i] == x[i]) return 0;
  return 1;
}
static int all_finite(const float *x, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (!isfinite(x[i])) return 0;
  return 1;
}

/* A NaN in one Q row, then in one K row, under a causal mask: NaN in exactly the gradient rows that see it. */
static void run_nan_cases(void) {
  for (int which = 0; which < 2; which++) {
    bcase c = { "nan", base(1, 2, 1, 70, 70, 8, 8), 0, 1.0f, 0 };
    c.d.causal = SMX_ATTN_CAUSAL_BOTTOM_RIGHT;
    const smx_attention_desc *d = &c.d;
    bdata t;
    make(&c, 11, &t);
    size_t D = d->dim_qk, at = 40;   /* query row 40 of head 1, or key 40 */
    if (which == 0)
      ((float *)t.qs)[(1 * d->len_q + at) * D + 3] = NAN;
    else
      ((float *)t.ks)[at * D + 3] = NAN;
    forward(d, &t);
    grads g;
    galloc(d, &g);
    for (int isa = 0; isa <= tu_isa_top(); isa++) {
      smx_set_max_isa(tu_isas[isa]);
      CHECK(backward(d, &t, &g) == SMX_OK, "nan: backward");
      const float *dq = g.dq, *dk = g.dk, *dv = g.dv;
      int ok = 1;
      for (size_t h = 0; h < 2; h++)
        for (size_t i = 0; i < d->len_q; i++) {
          /* which 0: row (1, 40) alone sees the NaN; which 1: every row i >= 40 of both heads sees key 40 */
          int sees = which == 0 ? (h == 1 && i == at) : i >= at;
          const float *row = dq + (h * d->len_q + i) * D;
          ok &= sees ? all_nan(row, D) : all_finite(row, D);
        }
      CHECK(ok, "nan %s %s: dq rows", which ? "K" : "Q", tu_isa_names[isa]);
      ok = 1;
      for (size_t j = 0; j < d->len_k; j++) {
        /* which 0: row 40 sees keys 0..40; which 1: rows >= 40 together see every key */
        int hit = which == 0 ? j <= at : 1;
        ok &= hit ? all_nan(dk + j * D, D) && all_nan(dv + j * d->dim_v, d->dim_v)
                  : all_finite(dk + j * D, D) && all_finite(dv + j * d->dim_v, d->dim_v);
      }
      CHECK(ok, "nan %s %s: dk / dv rows", which ? "K" : "Q", tu_isa_names[isa]);
    }
    gfree(&g);
    drop(&t);
  }
}
