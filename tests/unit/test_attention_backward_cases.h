/* The cases of test_attention_backward.c (included once, after its helpers). */

static void run_accuracy_cases(void) {
  bcase cs[96];
  int n = 0;
#define ADD(nm, dd, ...) \
  do { \
    cs[n] = (bcase){ nm, dd, 0, 1.0f, 0, 0 }; \
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
  ADD("softpick", base(2, 2, 2, 37, 53, 16, 12), c->d.kind = SMX_ATTN_SOFTPICK);
  ADD("softpick-causal", base(1, 4, 2, 70, 90, 8, 8), c->d.kind = SMX_ATTN_SOFTPICK,
      c->d.causal = SMX_ATTN_CAUSAL_BOTTOM_RIGHT, c->qmul = 2.0f);
  ADD("softpick-tl-win", base(1, 2, 1, 90, 70, 8, 12), c->d.kind = SMX_ATTN_SOFTPICK,
      c->d.causal = SMX_ATTN_CAUSAL_TOP_LEFT, c->d.window = 1, c->d.window_left = 20, c->d.window_right = -1);
  ADD("softpick-bias", base(2, 4, 2, 33, 66, 8, 8), c->d.kind = SMX_ATTN_SOFTPICK, c->d.mask_kind = SMX_ATTN_MASK_BIAS,
      c->bias_inf = 1, c->d.alibi = 1);
  ADD("softpick-bool", base(1, 2, 2, 30, 47, 8, 8), c->d.kind = SMX_ATTN_SOFTPICK, c->d.mask_kind = SMX_ATTN_MASK_BOOL,
      c->d.ssmax_s = 0.4);
  ADD("softpick-radial", base(1, 2, 2, 64, 64, 8, 8), c->d.kind = SMX_ATTN_SOFTPICK, c->d.radial_frame = 8);
  ADD("softpick-mqa", base(1, 6, 1, 1, 300, 16, 16), c->d.kind = SMX_ATTN_SOFTPICK);
  ADD("softpick-opts", base(2, 2, 1, 40, 70, 8, 8), c->d.kind = SMX_ATTN_SOFTPICK, c->d.softcap = 4.0, c->qmul = 3.0f,
      c->d.fox = 1, c->d.gate = 1, c->d.gate_flags = SMX_ATTN_GATE_ELEMENTWISE, c->d.causal = SMX_ATTN_CAUSAL_BOTTOM_RIGHT);
  ADD("softpick-bf16", base(1, 4, 2, 20, 33, 8, 8), c->d.kind = SMX_ATTN_SOFTPICK, c->d.dtype = SMX_ATTN_BF16, c->bthd = 1,
      c->d.gate = 1);
  ADD("qknorm", base(2, 2, 2, 37, 53, 16, 12), c->d.qk_norm = 1, c->normw = 1, c->qmul = 2.0f);
  ADD("qknorm-1", base(1, 4, 2, 70, 90, 8, 8), c->d.qk_norm = 1, c->d.causal = SMX_ATTN_CAUSAL_BOTTOM_RIGHT);
  ADD("qknorm-masks", base(2, 4, 1, 33, 66, 8, 8), c->d.qk_norm = 1, c->normw = 1, c->d.qk_norm_eps = 1e-3,
      c->d.mask_kind = SMX_ATTN_MASK_BIAS, c->bias_inf = 1, c->d.alibi = 1, c->d.window = 1, c->d.window_left = 30,
      c->d.window_right = 3);
  ADD("qknorm-bool", base(1, 2, 2, 30, 47, 8, 8), c->d.qk_norm = 1, c->normw = 1, c->d.mask_kind = SMX_ATTN_MASK_BOOL,
      c->d.ssmax_s = 0.4, c->d.sinks = 1);
  ADD("qknorm-mqa", base(1, 8, 1, 1, 300, 16, 16), c->d.qk_norm = 1, c->normw = 1);
  ADD("qknorm-opts", base(2, 2, 1, 40, 70, 8, 8), c->d.qk_norm = 1, c->normw = 1, c->d.softcap = 4.0, c->d.fox = 1,
      c->d.gate = 1, c->d.causal = SMX_ATTN_CAUSAL_TOP_LEFT, c->d.radial_frame = 8);
  ADD("qknorm-kinds", base(1, 2, 2, 40, 70, 16, 8), c->d.qk_norm = 1, c->normw = 1, c->d.kind = SMX_ATTN_SIGMOID,
      c->d.sigmoid_bias = -2.0);
  ADD("qknorm-pick", base(1, 2, 2, 40, 70, 16, 8), c->d.qk_norm = 1, c->normw = 1, c->d.kind = SMX_ATTN_SOFTPICK,
      c->bthd = 1);
  ADD("qknorm-bf16", base(1, 4, 2, 20, 33, 8, 8), c->d.qk_norm = 1, c->normw = 1, c->d.dtype = SMX_ATTN_BF16, c->bthd = 1);
  ADD("diff", base(2, 2, 2, 37, 53, 16, 12), c->d.diff_lambda = 0.6);
  ADD("diff-causal-gqa", base(1, 4, 2, 70, 90, 8, 8), c->d.diff_lambda = 0.3, c->d.causal = SMX_ATTN_CAUSAL_BOTTOM_RIGHT,
      c->qmul = 2.0f);
  ADD("diff-tl-window", base(1, 2, 1, 90, 70, 8, 12), c->d.diff_lambda = -0.4, c->d.causal = SMX_ATTN_CAUSAL_TOP_LEFT,
      c->d.window = 1, c->d.window_left = 20, c->d.window_right = -1);
  ADD("diff-bias", base(2, 4, 2, 33, 66, 8, 8), c->d.diff_lambda = 0.8, c->d.mask_kind = SMX_ATTN_MASK_BIAS,
      c->bias_inf = 1, c->d.alibi = 1);
  ADD("diff-bool", base(1, 2, 2, 30, 47, 8, 8), c->d.diff_lambda = 0.5, c->d.mask_kind = SMX_ATTN_MASK_BOOL,
      c->d.ssmax_s = 0.4);
  ADD("diff-radial", base(1, 2, 2, 64, 64, 8, 8), c->d.diff_lambda = 0.5, c->d.radial_frame = 8);
  ADD("diff-mqa", base(1, 8, 1, 1, 300, 16, 16), c->d.diff_lambda = 0.2);
  ADD("diff-opts", base(2, 2, 1, 40, 70, 8, 8), c->d.diff_lambda = 0.7, c->d.softcap = 4.0, c->qmul = 3.0f, c->d.fox = 1,
      c->d.gate = 1, c->d.gate_flags = SMX_ATTN_GATE_ELEMENTWISE, c->d.causal = SMX_ATTN_CAUSAL_BOTTOM_RIGHT,
      c->d.scale = 0.3);
  ADD("diff-gate", base(1, 2, 2, 30, 40, 4, 12), c->d.diff_lambda = 0.9, c->d.gate = 1);
  ADD("diff-bf16", base(1, 4, 2, 20, 33, 8, 8), c->d.diff_lambda = 0.5, c->d.dtype = SMX_ATTN_BF16, c->bthd = 1,
      c->d.gate = 1);
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
  bcase c = { "difference", base(1, 2, 1, 5, 7, 4, 3), 0, 1.0f, 0, 0 };
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

/* L = sum dO . O through the long-double reference forward (attn_ref.c), never the library */
static ld ref_loss(const attn_case *ac, const ld *dO) {
  const smx_attention_desc *d = &ac->d;
  size_t rows = d->batch * d->heads_q * d->len_q, no = rows * d->dim_v;
  attn_expect e;
  e.o = calloc(no + 1, sizeof(ld)), e.lse = calloc(rows + 1, sizeof(ld));
  e.o_cls = calloc(no + 1, 1), e.l_cls = calloc(rows + 1, 1);
  e.o_extra = calloc(rows + 1, sizeof(ld)), e.l_extra = calloc(rows + 1, sizeof(ld));
  attn_reference(ac, &e);
  ld s = 0;
  for (size_t x = 0; x < no; x++) s += dO[x] * e.o[x];
  free(e.o), free(e.lse), free(e.o_cls), free(e.l_cls), free(e.o_extra), free(e.l_extra);
  return s;
}

/* The library's gradients against central differences of the long-double reference forward (h = 2^-20: the
 * difference is exact to about 1e-11, so this checks the derivation of the variants, not only the hand-written
 * reference backward), within the header's bound on M (from attn_ref_bwd.c) plus 1e-9. */
static void ref_difference(const bcase *c0, uint64_t seed) {
  bcase c = *c0;
  smx_attention_desc *dm = &c.d;
  if (dm->mask_kind) {
    dm->mask_stride[3] = 1, dm->mask_stride[2] = dm->len_k, dm->mask_stride[1] = dm->len_q * dm->len_k;
    dm->mask_stride[0] = dm->heads_q * dm->mask_stride[1];
  }
  const smx_attention_desc *d = dm;
  bdata t;
  make(&c, seed, &t);
  CHECK(forward(d, &t), "%s: forward", c.name);
  grads g;
  galloc(d, &g);
  CHECK(backward(d, &t, &g) == SMX_OK, "%s: backward", c.name);
  size_t rows = d->batch * d->heads_q * d->len_q, nm = rows * d->len_k, nf = d->batch * d->heads_q * d->len_k;
  size_t ng = rows * ((d->gate_flags & SMX_ATTN_GATE_ELEMENTWISE) ? d->dim_v : 1);
  size_t nq = n_of(d, 0), nk = n_of(d, 1), nv = n_of(d, 2);
  attn_case ac = { 0 };
  ac.d = *d;
  ac.q = to_ld(t.q, nq), ac.k = to_ld(t.k, nk), ac.v = to_ld(t.v, nv);
  if (d->mask_kind == SMX_ATTN_MASK_BOOL) ac.keep = t.keep;
  if (d->mask_kind == SMX_ATTN_MASK_BIAS) ac.bias = to_ld(t.bias, nm);
  ac.slopes = to_ld(t.slopes, d->heads_q), ac.sinks = to_ld(t.sinks, d->heads_q);
  ac.fox = to_ld(t.fox, nf), ac.gate = to_ld(t.gate, rows * d->dim_v);
  if (t.normw) ac.qw = to_ld(t.qw, d->dim_qk), ac.kw = to_ld(t.kw, d->dim_qk);
  ld *dO = to_ld(t.dO, n_of(d, 3));
  attn_grad_ref gr = { 0 };
  ld *buf[14];
  size_t sz[14] = { nq, nq, nk, nk, nv, nv, nm, nm, d->heads_q, d->heads_q, nf, nf, rows * d->dim_v, rows * d->dim_v };
  for (int i = 0; i < 14; i++) buf[i] = calloc(sz[i] + 1, sizeof(ld));
  gr.dq = buf[0], gr.mq = buf[1], gr.dk = buf[2], gr.mk = buf[3], gr.dv = buf[4], gr.mv = buf[5];
  gr.dbias = d->mask_kind == SMX_ATTN_MASK_BIAS ? buf[6] : NULL, gr.mbias = buf[7];
  gr.dsinks = buf[8], gr.msinks = buf[9], gr.dfox = buf[10], gr.mfox = buf[11], gr.dgate = buf[12], gr.mgate = buf[13];
  gr.rowz = calloc(rows + 1, 1);
  gr.zmax = calloc(rows + 1, sizeof(ld));
  ld *wbuf = calloc(4 * d->dim_qk + 4, sizeof(ld));
  if (d->qk_norm) gr.dqw = wbuf, gr.mqw = wbuf + d->dim_qk, gr.dkw = wbuf + 2 * d->dim_qk, gr.mkw = wbuf + 3 * d->dim_qk;
  attn_reference_backward(&ac, dO, &gr);
  double eps = bound_eps(d);
  ld *targets[] = { ac.q, ac.k, ac.v, ac.bias, ac.fox, ac.gate, ac.qw, ac.kw };
  const float *got[] = { g.dq, g.dk, g.dv, g.dbias, g.dfox, g.dgate, g.dqw, g.dkw };
  const ld *mags[] = { gr.mq, gr.mk, gr.mv, gr.mbias, gr.mfox, gr.mgate, gr.mqw, gr.mkw };
  size_t nw = d->qk_norm && t.normw ? d->dim_qk : 0;
  size_t counts[] = { nq, nk, nv, d->mask_kind == SMX_ATTN_MASK_BIAS ? nm : 0, d->fox ? nf : 0, d->gate ? ng : 0, nw, nw };
  const char *names[] = { "dq", "dk", "dv", "dbias", "dfox", "dgate", "dq_norm_w", "dk_norm_w" };
  double worst = 0.0;
  for (int w = 0; w < 8; w++)
    for (size_t e = 0; e < counts[w]; e++) {
      ld keep = targets[w][e], h = 0x1p-20L;
      if (!isfinite(keep)) continue;
      targets[w][e] = keep + h;
      ld lp = ref_loss(&ac, dO);
      targets[w][e] = keep - h;
      ld lm = ref_loss(&ac, dO);
      targets[w][e] = keep;
      ld num = (lp - lm) / (2 * h), tol = (ld)eps * mags[w][e] + 1e-9L * (1 + fabsl(num));
      ld err = fabsl((ld)got[w][e] - num);
      if ((double)(err / tol) > worst) worst = (double)(err / tol);
      CHECK(err <= tol, "%s: %s[%zu]: library %.9g, central difference of the reference %.12Lg (tol %.3Lg)", c.name,
            names[w], e, (double)got[w][e], num, tol);
    }
  if (getenv("SMX_TEST_VERBOSE")) printf("  %-14s central differences: worst %.3g of the bound\n", c.name, worst);
  for (int i = 0; i < 14; i++) free(buf[i]);
  free(gr.rowz), free(gr.zmax), free(dO), free(wbuf);
  free(ac.q), free(ac.k), free(ac.v), free(ac.bias), free(ac.slopes), free(ac.sinks), free(ac.fox), free(ac.gate);
  free(ac.qw), free(ac.kw);
  gfree(&g);
  drop(&t);
}

static void run_ref_difference_cases(void) {
  bcase cs[16];
  int n = 0;
#define ADD(nm, dd, ...) \
  do { \
    cs[n] = (bcase){ nm, dd, 0, 1.0f, 0, 0 }; \
    bcase *c = &cs[n++]; \
    (void)c; \
    __VA_ARGS__; \
  } while (0)
  ADD("d-softmax", base(1, 2, 1, 5, 7, 4, 3), c->d.causal = SMX_ATTN_CAUSAL_BOTTOM_RIGHT, c->d.softcap = 3.0,
      c->d.mask_kind = SMX_ATTN_MASK_BIAS, c->d.fox = 1, c->d.gate = 1, c->d.alibi = 1, c->d.ssmax_s = 0.7);
  ADD("d-softpick", base(1, 2, 1, 5, 7, 4, 3), c->d.kind = SMX_ATTN_SOFTPICK, c->qmul = 2.0f);
  ADD("d-softpick-all", base(1, 2, 1, 6, 7, 4, 3), c->d.kind = SMX_ATTN_SOFTPICK,
      c->d.causal = SMX_ATTN_CAUSAL_TOP_LEFT, c->d.softcap = 3.0, c->d.mask_kind = SMX_ATTN_MASK_BIAS, c->bias_inf = 1,
      c->d.fox = 1, c->d.gate = 1, c->d.alibi = 1, c->d.ssmax_s = 0.7);
  ADD("d-qknorm", base(1, 2, 1, 5, 7, 4, 3), c->d.qk_norm = 1, c->normw = 1, c->d.causal = SMX_ATTN_CAUSAL_BOTTOM_RIGHT);
  ADD("d-qknorm-1", base(1, 2, 2, 5, 7, 4, 3), c->d.qk_norm = 1, c->d.qk_norm_eps = 0.3, c->d.softcap = 2.0,
      c->d.gate = 1, c->d.mask_kind = SMX_ATTN_MASK_BIAS);
  ADD("d-qknorm-pick", base(1, 4, 2, 5, 7, 6, 3), c->d.qk_norm = 1, c->normw = 1, c->d.kind = SMX_ATTN_SOFTPICK,
      c->d.fox = 1, c->d.causal = SMX_ATTN_CAUSAL_TOP_LEFT);
  ADD("d-qknorm-sig", base(1, 2, 1, 5, 7, 4, 3), c->d.qk_norm = 1, c->normw = 1, c->d.kind = SMX_ATTN_SIGMOID,
      c->d.sigmoid_bias = -1.0);
  ADD("d-diff", base(1, 2, 1, 5, 7, 4, 3), c->d.diff_lambda = 0.6, c->d.causal = SMX_ATTN_CAUSAL_BOTTOM_RIGHT);
  ADD("d-diff-all", base(1, 4, 2, 6, 7, 6, 3), c->d.diff_lambda = -0.5, c->d.causal = SMX_ATTN_CAUSAL_TOP_LEFT,
      c->d.softcap = 3.0, c->d.mask_kind = SMX_ATTN_MASK_BIAS, c->bias_inf = 1, c->d.fox = 1, c->d.gate = 1,
      c->d.alibi = 1, c->d.ssmax_s = 0.7);
  ADD("d-diff-gate-ew", base(1, 2, 2, 5, 7, 4, 3), c->d.diff_lambda = 0.8, c->d.gate = 1,
      c->d.gate_flags = SMX_ATTN_GATE_ELEMENTWISE, c->d.mask_kind = SMX_ATTN_MASK_BOOL);
#undef ADD
  for (int i = 0; i < n; i++) ref_difference(&cs[i], 0xd1ffu + (uint64_t)i);
}

/* Each refusal leaves every output as it was. */
static void run_refusals(void) {
  bcase c = { "refusal", base(1, 2, 2, 9, 11, 8, 8), 0, 1.0f, 0, 0 };
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
  u[0].kind = SMX_ATTN_LINEAR, u[1].kind = SMX_ATTN_SCREEN, u[1].screen_r = 0.5, u[2].kind = SMX_ATTN_MALA, u[3].l2_distance = 1;
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
  static const char *const names[4] = { "nan", "nan-softpick", "nan-qknorm", "nan-diff" };
  for (int which = 0; which < 8; which++) {
    bcase c = { names[which / 2], base(1, 2, 1, 70, 70, 8, 8), 0, 1.0f, 0, 0 };
    c.d.causal = SMX_ATTN_CAUSAL_BOTTOM_RIGHT;
    if (which / 2 == 1) c.d.kind = SMX_ATTN_SOFTPICK;
    if (which / 2 == 2) c.d.qk_norm = 1, c.normw = 1;   /* the NaN row normalised is all NaN */
    if (which / 2 == 3) c.d.diff_lambda = 0.5;   /* the NaN in dimension 3: the first map (Q), the second (K) */
    const smx_attention_desc *d = &c.d;
    bdata t;
    make(&c, 11, &t);
    size_t D = d->dim_qk, at = 40;   /* query row 40 of head 1, or key 40 */
    if (which % 2 == 0)
      ((float *)t.qs)[(1 * d->len_q + at) * D + 3] = NAN;
    else
      ((float *)t.ks)[at * D + (d->diff_lambda != 0 ? 6 : 3)] = NAN;   /* differential: the second map */
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
          int sees = which % 2 == 0 ? (h == 1 && i == at) : i >= at;
          const float *row = dq + (h * d->len_q + i) * D;
          ok &= sees ? all_nan(row, D) : all_finite(row, D);
        }
      CHECK(ok, "%s %s %s: dq rows", c.name, which % 2 ? "K" : "Q", tu_isa_names[isa]);
      ok = 1;
      for (size_t j = 0; j < d->len_k; j++) {
        /* which 0: row 40 sees keys 0..40; which 1: rows >= 40 together see every key */
        int hit = which % 2 == 0 ? j <= at : 1;
        ok &= hit ? all_nan(dk + j * D, D) && all_nan(dv + j * d->dim_v, d->dim_v)
                  : all_finite(dk + j * D, D) && all_finite(dv + j * d->dim_v, d->dim_v);
      }
      CHECK(ok, "%s %s %s: dk / dv rows", c.name, which % 2 ? "K" : "Q", tu_isa_names[isa]);
    }
    gfree(&g);
    drop(&t);
  }
}
