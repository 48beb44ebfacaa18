/*
 * smx.attention: the fused attention of include/smx/smx_attention.h over
 * NumPy arrays. q is (B, Hq, Lq, D), k and v (B, Hkv, Lk, D) with any
 * strides, zero strides (broadcast) read in place (a copy only when the last
 * axis is not contiguous, a stride is negative or rows partly overlap);
 * float32 and float16 are computed in place, float64 through a float32
 * copy (the result is cast back to q's dtype). Masks broadcast over batch
 * and heads by zero strides.
 */
#include <math.h>
#include <string.h>

#include "arrays.h"
#include "bindings.h"
#include "options.h"
#include "smx/smx_attention.h"

const char smx_py_attention_doc[] = PyDoc_STR(
  "attention($module, /, q, k, v, *, causal=False, scale=None, window=None, mask=None, sink=None,\n"
  "          return_lse=False, threads=0, softcap=None, ssmax=None, kind='softmax', sigmoid_bias=0.0,\n"
  "          alibi=None, fox=None, gate=None, qk_norm=None, qk_norm_eps=1e-6, blasst=None,\n"
  "          radial_frame=None, diff_lambda=0.0, l2_distance=False, nsa_topk=0, k_scales=None,\n"
  "          jensen=False, screen_r=None, screen_window=None, screen_eps=0.0, screen_vnorm=True,\n"
  "          screen_tanhnorm=True, math='auto', bf16=False)\n"
  "--\n\n"
  "Fused attention softmax(q k^T * scale + ...) v, never forming the Lq x Lk scores.\n"
  "q : (B, Hq, Lq, D); k : (B, Hkv, Lk, D); v : (B, Hkv, Lk, Dv); float32 or float16 (float64 is\n"
  "    computed in float32; float16 storage when all three are float16); Hq a multiple of Hkv (GQA /\n"
  "    MQA); any strides, zero strides (broadcast KV heads) read in place. Result (B, Hq, Lq, Dv), q's dtype.\n"
  "causal : False, True / 'bottom_right' (query i sees keys <= i + Lk - Lq, as flash-attn),\n"
  "    or 'top_left' (keys <= i, as torch's is_causal).\n"
  "scale : default 1 / sqrt(D).\n"
  "window : int w (keys within w before the query position) or (left, right); -1 unbounded.\n"
  "mask : bool array (True = takes part) or float array added to the scores (other dtypes are\n"
  "    refused), broadcastable to (B, Hq, Lq, Lk).\n"
  "sink : (Hq,) sink logits, joining the denominator only.\n"
  "return_lse : also return the (B, Hq, Lq) float32 log-sum-exp (-inf for a row that sees no key).\n"
  "threads : >= 0 (0: every core this process may use; 1: the calling thread); results do not depend on it.\n"
  "Variants: softcap (tanh cap), ssmax (SSMax s), kind 'softmax' | 'sigmoid' (with sigmoid_bias)\n"
  "| 'softpick' | 'linear' (elu+1 features) | 'cosformer' | 'mala', alibi (Hq,) slopes, fox (B, Hq, Lk) cumulative log forget, gate (B, Hq, Lq) or\n"
  "(B, Hq, Lq, Dv) sigmoid output gate logits, qk_norm True or (wq, wk) RMSNorm weights,\n"
  "blasst ln(threshold) < 0, radial_frame (tokens per frame), diff_lambda (differential attention over\n"
  "the halves of D), l2_distance (scores -scale |q - k|^2), nsa_topk (NSA block selection, blocks of\n"
  "64 keys); k of dtype int8 with k_scales (B, Hkv, ceil(Lk / 64)), one step per 64-key block, and\n"
  "jensen (the Jensen-bias correction). kind 'screen' (Multiscreen screening: unit q, k, v, Trim,\n"
  "Softmask, TanhNorm; scale unused) takes screen_r (acceptance width in (0, 1], a float or (Hq,)),\n"
  "screen_window (Softmask window, a float or (Hq,); None, 0 or inf: none), screen_eps, and\n"
  "screen_vnorm / screen_tanhnorm (False switches each off); masks must be bool. See docs/attention.md.\n"
  "math : 'auto' (float32 / float16: f32 arithmetic; bfloat16: bf16 tile products where the CPU has\n"
  "    AVX512_BF16), 'f32' (always f32), 'bf16' (float32 storage may use bf16 tile products too: Q, K, V\n"
  "    and P rounded to bf16, as torch's allow_bf16_reduced_precision; f32 where the CPU lacks them).\n"
  "bf16 : q, k, v are uint16 / int16 arrays of bfloat16 bits (NumPy has no bfloat16; torch:\n"
  "    t.view(torch.int16).numpy()); the result is bfloat16 bits in q's dtype.\n"
  "A query row that sees no key gives 0 (never NaN). The GIL is released while computing.");

/* a float32 C-contiguous copy of an optional per-head / per-row operand of exactly n elements */
static PyArrayObject *f32_vector(const char *what, PyObject *o, npy_intp n) {
  PyArrayObject *a = (PyArrayObject *)PyArray_FROMANY(o, NPY_FLOAT32, 0, 0, NPY_ARRAY_CARRAY | NPY_ARRAY_FORCECAST);
  if (!a) return NULL;
  if (PyArray_SIZE(a) != n) {
    PyErr_Format(PyExc_ValueError, "attention: %s has %zd elements, expected %zd", what, (Py_ssize_t)PyArray_SIZE(a),
                 (Py_ssize_t)n);
    Py_DECREF(a);
    return NULL;
  }
  return a;
}

/* q / k / v as a 4-d array of `type` (cast from any float) whose last axis is contiguous and whose strides are non-negative */
static PyArrayObject *tensor(const char *what, PyObject *o, int type) {
  /* the dtype was checked (float, or int8 k): float64 is rounded to float32 here, as documented */
  PyArrayObject *a = (PyArrayObject *)PyArray_FROMANY(o, type, 4, 4,
                                                      NPY_ARRAY_ALIGNED | NPY_ARRAY_NOTSWAPPED | NPY_ARRAY_FORCECAST);
  if (!a) {
    if (PyErr_ExceptionMatches(PyExc_ValueError)) {
      PyErr_Clear();
      PyErr_Format(PyExc_ValueError, "attention: %s must be 4-d (batch, heads, length, dim)", what);
    }
    return NULL;
  }
  int ok = PyArray_DIM(a, 3) <= 1 || PyArray_STRIDE(a, 3) == PyArray_ITEMSIZE(a);
  for (int i = 0; i < 3; i++) ok = ok && PyArray_STRIDE(a, i) >= 0 && PyArray_STRIDE(a, i) % PyArray_ITEMSIZE(a) == 0;
  /* rows that overlap without coinciding (as_strided windows) are no layout of the library's */
  npy_intp rs = PyArray_STRIDE(a, 2);
  ok = ok && (PyArray_DIM(a, 2) <= 1 || rs == 0 || rs >= PyArray_DIM(a, 3) * PyArray_ITEMSIZE(a));
  if (ok) return a;
  PyArrayObject *c = (PyArrayObject *)PyArray_NewCopy(a, NPY_CORDER);
  Py_DECREF(a);
  return c;
}

/* The element strides (batch, head, row) of q / k / v for the library, under smx_attention.h's rule: a
 * zero stride (np.broadcast_to, torch.expand: a KV head repeated over heads) broadcasts there and is
 * passed as it is, so that the kernels read only the rows the array holds. {0,0,0} would read as
 * packed: a dimension of extent <= 1 (whose stride is never used) then gets a nonzero one, and an array
 * broadcast over all three dimensions is copied (*a replaced; 0 when the copy fails). */
static int strides_of(PyArrayObject **a, size_t s[3]) {
  for (int i = 0; i < 3; i++)
    s[i] = PyArray_DIM(*a, i) <= 1 ? 0 : (size_t)(PyArray_STRIDE(*a, i) / PyArray_ITEMSIZE(*a));
  if (s[0] || s[1] || s[2]) return 1;
  for (int i = 2; i >= 0; i--)
    if (PyArray_DIM(*a, i) <= 1) {
      s[i] = 1;
      return 1;
    }
  PyArrayObject *c = (PyArrayObject *)PyArray_NewCopy(*a, NPY_CORDER);
  if (!c) return 0;
  Py_DECREF(*a);
  *a = c;
  s[2] = (size_t)PyArray_DIM(c, 3);
  s[1] = s[2] * (size_t)PyArray_DIM(c, 2);
  s[0] = s[1] * (size_t)PyArray_DIM(c, 1);
  return 1;
}

/* The NumPy type of an operand as given (a list becomes an array first), or -1 with an error set. */
static int type_of(PyObject *o) {
  if (PyArray_Check(o)) return PyArray_TYPE((PyArrayObject *)o);
  PyArrayObject *a = (PyArrayObject *)PyArray_FROMANY(o, NPY_NOTYPE, 0, 0, 0);
  if (!a) return -1;
  int t = PyArray_TYPE(a);
  Py_DECREF(a);
  return t;
}

/* 1 when q / k / v of NumPy type t can be computed (floats; int8 for k), else 0 with a TypeError */
static int float_type(const char *what, int t, int int8_ok) {
  if (PyTypeNum_ISFLOAT(t) || (int8_ok && t == NPY_INT8)) return 1;
  PyArray_Descr *dt = PyArray_DescrFromType(t);
  PyErr_Format(PyExc_TypeError, "attention: %s must be float16, float32 or float64%s, not %s", what,
               int8_ok ? " (or int8 with k_scales)" : "", dt ? dt->typeobj->tp_name : "this dtype");
  Py_XDECREF(dt);
  return 0;
}

/* 1 when axis i of a equals axis j of b, else 0 with a ValueError naming both */
static int same_dim(const char *an, PyArrayObject *a, int i, const char *bn, PyArrayObject *b, int j, const char *axis) {
  if (PyArray_DIM(a, i) == PyArray_DIM(b, j)) return 1;
  PyErr_Format(PyExc_ValueError, "attention: %s: %s %zd does not match %s's %zd (q (B, Hq, Lq, D), k (B, Hkv, Lk, D), "
               "v (B, Hkv, Lk, Dv))", an, axis, (Py_ssize_t)PyArray_DIM(a, i), bn, (Py_ssize_t)PyArray_DIM(b, j));
  return 0;
}

/* A C-contiguous array of `type` and exactly the given shape (the backward's O, lse and dO), or NULL with a
 * ValueError naming it. */
static PyArrayObject *exact(const char *what, PyObject *o, int type, int nd, const npy_intp *shape) {
  PyArrayObject *a = (PyArrayObject *)PyArray_FROMANY(o, type, 0, 0, NPY_ARRAY_CARRAY | NPY_ARRAY_FORCECAST);
  if (!a) return NULL;
  int ok = PyArray_NDIM(a) == nd;
  for (int i = 0; ok && i < nd; i++) ok = PyArray_DIM(a, i) == shape[i];
  if (ok) return a;
  PyErr_Format(PyExc_ValueError, "attention_backward: %s must have the forward's shape (%s)", what,
               nd == 3 ? "B, Hq, Lq" : "B, Hq, Lq, Dv");
  Py_DECREF(a);
  return NULL;
}

/* Sets key to a new reference's value in dict (stealing it); 0 on failure. */
static int put(PyObject *dict, const char *key, PyArrayObject *x) {
  if (!x) return 0;
  int r = PyDict_SetItemString(dict, key, (PyObject *)x);
  Py_DECREF(x);
  return r == 0;
}

/* The backward run of smx_py_attention_backward: d and a as the forward parsed them. */
static PyObject *backward(smx_attention_desc *d, smx_attention_args *a, PyArrayObject *q, PyArrayObject *k,
                          PyArrayObject *v, PyObject *bwd, int type) {
  PyObject *oo, *lo, *doo;
  int dmask;
  if (!PyArg_ParseTuple(bwd, "OOOi", &oo, &lo, &doo, &dmask)) return NULL;
  npy_intp oshape[4] = { (npy_intp)d->batch, (npy_intp)d->heads_q, (npy_intp)d->len_q, (npy_intp)d->dim_v };
  PyArrayObject *o = exact("o", oo, type, 4, oshape), *lse = o ? exact("lse", lo, NPY_FLOAT32, 3, oshape) : NULL;
  PyArrayObject *dO = lse ? exact("do", doo, type, 4, oshape) : NULL;
  PyObject *res = NULL;
  PyArrayObject *dq = NULL, *dk = NULL, *dv = NULL, *db = NULL, *ds = NULL, *df = NULL, *dg = NULL;
  if (!dO) goto out;
  npy_intp qs[4] = { (npy_intp)d->batch, (npy_intp)d->heads_q, (npy_intp)d->len_q, (npy_intp)d->dim_qk };
  npy_intp ks[4] = { (npy_intp)d->batch, (npy_intp)d->heads_kv, (npy_intp)d->len_k, (npy_intp)d->dim_qk };
  npy_intp vs[4] = { (npy_intp)d->batch, (npy_intp)d->heads_kv, (npy_intp)d->len_k, (npy_intp)d->dim_v };
  npy_intp bs[4] = { (npy_intp)d->batch, (npy_intp)d->heads_q, (npy_intp)d->len_q, (npy_intp)d->len_k };
  npy_intp hs[1] = { (npy_intp)d->heads_q }, fs[3] = { (npy_intp)d->batch, (npy_intp)d->heads_q, (npy_intp)d->len_k };
  int ew = (d->gate_flags & SMX_ATTN_GATE_ELEMENTWISE) != 0;
  if (!(dq = (PyArrayObject *)PyArray_EMPTY(4, qs, type, 0)) || !(dk = (PyArrayObject *)PyArray_EMPTY(4, ks, type, 0)) ||
      !(dv = (PyArrayObject *)PyArray_EMPTY(4, vs, type, 0)))
    goto out;
  if (dmask && d->mask_kind == SMX_ATTN_MASK_BIAS && !(db = (PyArrayObject *)PyArray_EMPTY(4, bs, NPY_FLOAT32, 0))) goto out;
  if (d->sinks && !(ds = (PyArrayObject *)PyArray_EMPTY(1, hs, NPY_FLOAT32, 0))) goto out;
  if (d->fox && !(df = (PyArrayObject *)PyArray_EMPTY(3, fs, NPY_FLOAT32, 0))) goto out;
  if (d->gate && !(dg = (PyArrayObject *)PyArray_EMPTY(ew ? 4 : 3, oshape, NPY_FLOAT32, 0))) goto out;
  d->o_stride[2] = d->dim_v;
  d->o_stride[1] = d->len_q * d->dim_v;
  d->o_stride[0] = d->heads_q * d->o_stride[1];
  a->q = PyArray_DATA(q);
  a->k = PyArray_DATA(k);
  a->v = PyArray_DATA(v);
  a->o = PyArray_DATA(o);
  a->lse = PyArray_DATA(lse);
  smx_attention_grads g = { PyArray_DATA(dq), PyArray_DATA(dk), PyArray_DATA(dv), db ? PyArray_DATA(db) : NULL,
                            ds ? PyArray_DATA(ds) : NULL, df ? PyArray_DATA(df) : NULL, dg ? PyArray_DATA(dg) : NULL };
  smx_attention_plan *plan = NULL;
  smx_status s = smx_attention_plan_create(d, &plan);
  if (s == SMX_OK) {
    const void *dop = PyArray_DATA(dO);
    Py_BEGIN_ALLOW_THREADS
    s = smx_attention_backward(plan, a, dop, &g, NULL, 0);
    Py_END_ALLOW_THREADS
    smx_attention_plan_destroy(plan);
  }
  if (s == SMX_E_UNSUPPORTED) {
    PyErr_SetString(PyExc_NotImplementedError, "attention_backward: smx computes the backward of the softmax and sigmoid kinds with "
                    "masks, sinks, softcap, SSMax, FoX and the gate only (not of this kind or option; docs/attention.md)");
    goto out;
  }
  if (s != SMX_OK) {
    smx_py_raise_status("attention_backward", s);
    goto out;
  }
  if (!(res = PyDict_New())) goto out;
  int ok = put(res, "dq", dq) && put(res, "dk", dk) && put(res, "dv", dv);
  dq = dk = dv = NULL;
  if (ok && db) ok = put(res, "dmask", db), db = NULL;
  if (ok && ds) ok = put(res, "dsink", ds), ds = NULL;
  if (ok && df) ok = put(res, "dfox", df), df = NULL;
  if (ok && dg) ok = put(res, "dgate", dg), dg = NULL;
  if (!ok) Py_CLEAR(res);
out:
  Py_XDECREF(o); Py_XDECREF(lse); Py_XDECREF(dO); Py_XDECREF(dq); Py_XDECREF(dk); Py_XDECREF(dv);
  Py_XDECREF(db); Py_XDECREF(ds); Py_XDECREF(df); Py_XDECREF(dg);
  return res;
}

/* The forward (bwd NULL) or, with bwd = (o, lse, do, want_dmask), the backward on the same options. */
static PyObject *attention_impl(PyObject *args, PyObject *kwargs, PyObject *bwd) {
  static char *kw[] = { "q", "k", "v", "causal", "scale", "window", "mask", "sink", "return_lse", "threads",
                        "softcap", "ssmax", "kind", "sigmoid_bias", "alibi", "fox", "gate", "qk_norm",
                        "qk_norm_eps", "blasst", "radial_frame", "diff_lambda", "l2_distance", "nsa_topk", "k_scales", "jensen",
                        "screen_r", "screen_window", "screen_eps", "screen_vnorm", "screen_tanhnorm", "math", "bf16",
                        NULL };
  PyObject *qo, *ko, *vo, *causal = Py_False, *scale = Py_None, *window = Py_None, *mask = Py_None, *sink = Py_None;
  PyObject *softcap = Py_None, *ssmax = Py_None, *alibi = Py_None, *fox = Py_None, *gate = Py_None;
  PyObject *qk_norm = Py_None, *blasst = Py_None, *radial = Py_None;
  const char *kind = "softmax";
  int return_lse = 0, threads = 0, l2 = 0;
  Py_ssize_t nsa_topk = 0;
  PyObject *k_scales = Py_None;
  int jensen = 0, screen_vnorm = 1, screen_tanhnorm = 1;
  PyObject *screen_r = Py_None, *screen_window = Py_None;
  double screen_eps = 0.0;
  double sigmoid_bias = 0.0, qk_eps = 1e-6, diff_lambda = 0.0;
  const char *math = "auto";
  int bf16 = 0;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OOO|$OOOOOpiOOsdOOOOdOOdpnOpOOdppsp:attention", kw, &qo, &ko, &vo, &causal,
                                   &scale, &window, &mask, &sink, &return_lse, &threads, &softcap, &ssmax, &kind,
                                   &sigmoid_bias, &alibi, &fox, &gate, &qk_norm, &qk_eps, &blasst, &radial, &diff_lambda, &l2, &nsa_topk, &k_scales, &jensen,
                                   &screen_r, &screen_window, &screen_eps, &screen_vnorm, &screen_tanhnorm, &math, &bf16))
    return NULL;
  PyObject *result = NULL;
  PyArrayObject *q = NULL, *k = NULL, *v = NULL, *o = NULL, *lse = NULL, *m = NULL, *sk = NULL, *al = NULL,
                *fx = NULL, *gt = NULL, *wq = NULL, *wk = NULL, *ks = NULL, *sr = NULL, *sw = NULL;
  smx_attention_desc d;
  memset(&d, 0, sizeof d);
  smx_attention_args a;
  memset(&a, 0, sizeof a);

  /* Storage: float16 when q, k and v all are (int8 k aside), float32 otherwise; float64 (and wider) is
   * computed in float32 as the docstring says. The result takes q's dtype. */
  int tq = type_of(qo), tk = tq < 0 ? -1 : type_of(ko), tv = tk < 0 ? -1 : type_of(vo);
  if (tv < 0) return NULL;
  /* int8 K (a quantised KV cache): read as it is, with k_scales */
  int k8 = tk == NPY_INT8;
  int type;
  if (bf16) {   /* bfloat16 bits in 16-bit integers, read in place (q's type; k and v reinterpreted alike) */
    if ((tq != NPY_UINT16 && tq != NPY_INT16) || (tk != NPY_UINT16 && tk != NPY_INT16) ||
        (tv != NPY_UINT16 && tv != NPY_INT16)) {
      PyErr_SetString(PyExc_TypeError, "attention: with bf16=True, q, k and v must be uint16 or int16 arrays of "
                                       "bfloat16 bits");
      return NULL;
    }
    type = tq;
  } else {
    if (!float_type("q", tq, 0) || !float_type("k", tk, 1) || !float_type("v", tv, 0)) return NULL;
    type = tq == NPY_FLOAT16 && (k8 || tk == NPY_FLOAT16) && tv == NPY_FLOAT16 ? NPY_FLOAT16 : NPY_FLOAT32;
  }
  if (!strcmp(math, "auto")) d.math = SMX_ATTN_MATH_AUTO;
  else if (!strcmp(math, "f32")) d.math = SMX_ATTN_MATH_F32;
  else if (!strcmp(math, "bf16")) d.math = SMX_ATTN_MATH_BF16;
  else {
    PyErr_Format(PyExc_ValueError, "attention: math must be 'auto', 'f32' or 'bf16', not '%s'", math);
    return NULL;
  }
  if (d.math == SMX_ATTN_MATH_BF16 && type == NPY_FLOAT16) {
    PyErr_SetString(PyExc_ValueError, "attention: math='bf16' is for float32 or bfloat16 storage (float16 storage "
                                      "computes in f32)");
    return NULL;
  }
  if (!(q = tensor("q", qo, type)) || !(k = tensor("k", ko, k8 ? NPY_INT8 : type)) || !(v = tensor("v", vo, type)))
    goto done;
  d.batch = (size_t)PyArray_DIM(q, 0);
  d.heads_q = (size_t)PyArray_DIM(q, 1);
  d.len_q = (size_t)PyArray_DIM(q, 2);
  d.dim_qk = (size_t)PyArray_DIM(q, 3);
  d.heads_kv = (size_t)PyArray_DIM(k, 1);
  d.len_k = (size_t)PyArray_DIM(k, 2);
  d.dim_v = (size_t)PyArray_DIM(v, 3);
  /* name the argument and the axis that disagree */
  if (!same_dim("k", k, 0, "q", q, 0, "batch") || !same_dim("v", v, 0, "q", q, 0, "batch") ||
      !same_dim("k", k, 3, "q", q, 3, "dim") || !same_dim("v", v, 1, "k", k, 1, "heads") ||
      !same_dim("v", v, 2, "k", k, 2, "length"))
    goto done;
  if (d.heads_kv == 0 ? d.heads_q != 0 : d.heads_q % d.heads_kv) {
    PyErr_Format(PyExc_ValueError, "attention: q's %zd heads are not a multiple of k's %zd (GQA shares each KV "
                 "head among Hq / Hkv query heads)", (Py_ssize_t)d.heads_q, (Py_ssize_t)d.heads_kv);
    goto done;
  }
  d.dtype = bf16 ? SMX_ATTN_BF16 : type == NPY_FLOAT16 ? SMX_ATTN_F16 : SMX_ATTN_F32;
  if (!strides_of(&q, d.q_stride) || !strides_of(&k, d.k_stride) || !strides_of(&v, d.v_stride)) goto done;
  if (threads < 0) {
    PyErr_SetString(PyExc_ValueError, "attention: threads must be >= 0");
    goto done;
  }
  d.threads = smx_py_threads(threads);
  if (causal == Py_True) {
    d.causal = SMX_ATTN_CAUSAL_BOTTOM_RIGHT;
  } else if (PyUnicode_Check(causal)) {
    const char *c = PyUnicode_AsUTF8(causal);
    if (!c) goto done;
    if (!strcmp(c, "bottom_right")) d.causal = SMX_ATTN_CAUSAL_BOTTOM_RIGHT;
    else if (!strcmp(c, "top_left")) d.causal = SMX_ATTN_CAUSAL_TOP_LEFT;
    else {
      PyErr_Format(PyExc_ValueError, "attention: causal must be a bool, 'bottom_right' or 'top_left', not '%s'", c);
      goto done;
    }
  } else if (causal != Py_False && causal != Py_None) {
    int t = PyObject_IsTrue(causal);
    if (t < 0) goto done;
    d.causal = t ? SMX_ATTN_CAUSAL_BOTTOM_RIGHT : SMX_ATTN_CAUSAL_NONE;
  }
  if (scale != Py_None && ((d.scale = PyFloat_AsDouble(scale)) == -1.0 && PyErr_Occurred())) goto done;
  if (scale != Py_None && (d.scale == 0.0 || !isfinite(d.scale))) {
    PyErr_SetString(PyExc_ValueError, "attention: scale must be finite and nonzero");
    goto done;
  }
  if (window != Py_None) {
    long long l = -1, r = 0;
    if (PyTuple_Check(window)) {
      if (!PyArg_ParseTuple(window, "LL", &l, &r)) goto done;
    } else {
      l = PyLong_AsLongLong(window);
      if (l == -1 && PyErr_Occurred()) goto done;
      r = -1;
    }
    d.window = 1;
    d.window_left = l;
    d.window_right = r;
  }
  if (mask != Py_None) {
    PyArrayObject *m0 = (PyArrayObject *)PyArray_FROMANY(mask, NPY_NOTYPE, 0, 4, 0);
    if (!m0) goto done;
    int isbool = PyArray_TYPE(m0) == NPY_BOOL;
    /* an integer mask is ambiguous (0/1 keep-flags or a bias?): read as a bias it would be silently wrong */
    if (!isbool && !PyArray_ISFLOAT(m0)) {
      PyErr_Format(PyExc_TypeError, "attention: mask must be bool (True = takes part) or float (added to the "
                   "scores), not %s", PyArray_DESCR(m0)->typeobj->tp_name);
      Py_DECREF(m0);
      goto done;
    }
    Py_DECREF(m0);
    m = (PyArrayObject *)PyArray_FROMANY(mask, isbool ? NPY_BOOL : NPY_FLOAT32, 0, 4,
                                         NPY_ARRAY_ALIGNED | NPY_ARRAY_NOTSWAPPED | NPY_ARRAY_FORCECAST);
    if (!m) goto done;
    size_t want[4] = { d.batch, d.heads_q, d.len_q, d.len_k };
    int nd = PyArray_NDIM(m);
    for (int i = 0; i < 4; i++) {
      int j = i - (4 - nd);
      size_t n = j >= 0 ? (size_t)PyArray_DIM(m, j) : 1;
      npy_intp st = j >= 0 ? PyArray_STRIDE(m, j) : 0;
      if (n != want[i] && n != 1) {
        PyErr_Format(PyExc_ValueError, "attention: mask does not broadcast to (B, Hq, Lq, Lk) at axis %d", i);
        goto done;
      }
      if (n == 1) st = 0;
      if (st < 0 || st % PyArray_ITEMSIZE(m)) {
        PyArrayObject *c = (PyArrayObject *)PyArray_NewCopy(m, NPY_CORDER);
        Py_DECREF(m);
        m = c;
        if (!m) goto done;
        i = -1;   /* start again on the copy */
        continue;
      }
      d.mask_stride[i] = (size_t)(st / PyArray_ITEMSIZE(m));
    }
    d.mask_kind = isbool ? SMX_ATTN_MASK_BOOL : SMX_ATTN_MASK_BIAS;
    a.mask = PyArray_DATA(m);
  }
  if (sink != Py_None) {
    if (!(sk = f32_vector("sink", sink, (npy_intp)d.heads_q))) goto done;
    d.sinks = 1;
    a.sinks = PyArray_DATA(sk);
  }
  if (softcap != Py_None && ((d.softcap = PyFloat_AsDouble(softcap)) == -1.0 && PyErr_Occurred())) goto done;
  if (ssmax != Py_None && ((d.ssmax_s = PyFloat_AsDouble(ssmax)) == -1.0 && PyErr_Occurred())) goto done;
  if (blasst != Py_None && ((d.blasst_log_threshold = PyFloat_AsDouble(blasst)) == -1.0 && PyErr_Occurred())) goto done;
  if (radial != Py_None) {
    long long f = PyLong_AsLongLong(radial);
    if (f == -1 && PyErr_Occurred()) goto done;
    if (f < 1) {
      PyErr_SetString(PyExc_ValueError, "attention: radial_frame must be >= 1");
      goto done;
    }
    d.radial_frame = (size_t)f;
  }
  if (!strcmp(kind, "softmax")) d.kind = SMX_ATTN_SOFTMAX;
  else if (!strcmp(kind, "sigmoid")) d.kind = SMX_ATTN_SIGMOID;
  else if (!strcmp(kind, "softpick")) d.kind = SMX_ATTN_SOFTPICK;
  else if (!strcmp(kind, "linear")) d.kind = SMX_ATTN_LINEAR;
  else if (!strcmp(kind, "cosformer")) d.kind = SMX_ATTN_COSFORMER;
  else if (!strcmp(kind, "mala")) d.kind = SMX_ATTN_MALA;
  else if (!strcmp(kind, "screen")) d.kind = SMX_ATTN_SCREEN;
  else {
    PyErr_Format(PyExc_ValueError, "attention: kind must be 'softmax', 'sigmoid', 'softpick', 'linear', 'cosformer', 'mala' or 'screen', not '%s'", kind);
    goto done;
  }
  if (d.kind == SMX_ATTN_SCREEN) {   /* a number for every head, or an (Hq,) array */
    if (screen_r == Py_None) {
      PyErr_SetString(PyExc_ValueError, "attention: kind 'screen' needs screen_r (acceptance width in (0, 1])");
      goto done;
    }
    if (PyFloat_Check(screen_r) || PyLong_Check(screen_r)) {
      if ((d.screen_r = PyFloat_AsDouble(screen_r)) == -1.0 && PyErr_Occurred()) goto done;
      if (!(d.screen_r > 0 && d.screen_r <= 1)) {
        PyErr_SetString(PyExc_ValueError, "attention: screen_r must lie in (0, 1]");
        goto done;
      }
    } else {
      if (!(sr = f32_vector("screen_r", screen_r, (npy_intp)d.heads_q))) goto done;
      a.screen_r = PyArray_DATA(sr);
    }
    if (PyFloat_Check(screen_window) || PyLong_Check(screen_window)) {
      double w = PyFloat_AsDouble(screen_window);
      if (w == -1.0 && PyErr_Occurred()) goto done;
      d.screen_window = isinf(w) && w > 0 ? 0.0 : w;
    } else if (screen_window != Py_None) {
      if (!(sw = f32_vector("screen_window", screen_window, (npy_intp)d.heads_q))) goto done;
      a.screen_window = PyArray_DATA(sw);
    }
    d.screen_eps = screen_eps;
    d.screen_flags = (screen_vnorm ? 0u : SMX_ATTN_SCREEN_NO_VNORM) | (screen_tanhnorm ? 0u : SMX_ATTN_SCREEN_NO_TANHNORM);
  }
  d.sigmoid_bias = sigmoid_bias;
  d.diff_lambda = diff_lambda;
  d.l2_distance = l2;
  if (nsa_topk < 0) {
    PyErr_SetString(PyExc_ValueError, "attention: nsa_topk must be >= 0");
    goto done;
  }
  d.nsa_topk = (size_t)nsa_topk;
  if (k8 != (k_scales != Py_None)) {
    PyErr_SetString(PyExc_ValueError, "attention: int8 k needs k_scales (B, Hkv, ceil(Lk / 64)), and only int8 k takes them");
    goto done;
  }
  if (k8) {
    if (!(ks = f32_vector("k_scales", k_scales, (npy_intp)(d.batch * d.heads_kv * ((d.len_k + 63) / 64))))) goto done;
    d.k_int8 = 1;
    d.k_int8_jensen = jensen;
    a.k_scales = PyArray_DATA(ks);
  }
  if (alibi != Py_None) {
    if (!(al = f32_vector("alibi", alibi, (npy_intp)d.heads_q))) goto done;
    d.alibi = 1;
    a.alibi_slopes = PyArray_DATA(al);
  }
  if (fox != Py_None) {
    if (!(fx = f32_vector("fox", fox, (npy_intp)(d.batch * d.heads_q * d.len_k)))) goto done;
    d.fox = 1;
    a.fox = PyArray_DATA(fx);
  }
  if (gate != Py_None) {
    PyArrayObject *g0 = (PyArrayObject *)PyArray_FROMANY(gate, NPY_FLOAT32, 0, 0, NPY_ARRAY_FORCECAST);
    if (!g0) goto done;
    int ew = PyArray_NDIM(g0) == 4;
    Py_DECREF(g0);
    if (!(gt = f32_vector("gate", gate, (npy_intp)(d.batch * d.heads_q * d.len_q * (ew ? d.dim_v : 1))))) goto done;
    d.gate = 1;
    d.gate_flags = ew ? SMX_ATTN_GATE_ELEMENTWISE : 0;
    a.gate = PyArray_DATA(gt);
  }
  if (qk_norm != Py_None && qk_norm != Py_False) {
    d.qk_norm = 1;
    d.qk_norm_eps = qk_eps;
    if (PyTuple_Check(qk_norm)) {
      PyObject *w0, *w1;
      if (!PyArg_ParseTuple(qk_norm, "OO", &w0, &w1)) goto done;
      if (!(wq = f32_vector("qk_norm[0]", w0, (npy_intp)d.dim_qk)) ||
          !(wk = f32_vector("qk_norm[1]", w1, (npy_intp)d.dim_qk)))
        goto done;
      a.q_norm_w = PyArray_DATA(wq);
      a.k_norm_w = PyArray_DATA(wk);
    }
  }

  npy_intp oshape[4] = { (npy_intp)d.batch, (npy_intp)d.heads_q, (npy_intp)d.len_q, (npy_intp)d.dim_v };
  if (!(o = (PyArrayObject *)PyArray_EMPTY(4, oshape, type, 0))) goto done;
  d.o_stride[2] = d.dim_v;
  d.o_stride[1] = d.len_q * d.dim_v;
  d.o_stride[0] = d.heads_q * d.o_stride[1];
  if (bwd) {
    result = backward(&d, &a, q, k, v, bwd, type);
    goto done;
  }
  if (return_lse && !(lse = (PyArrayObject *)PyArray_EMPTY(3, oshape, NPY_FLOAT32, 0))) goto done;
  a.q = PyArray_DATA(q);
  a.k = PyArray_DATA(k);
  a.v = PyArray_DATA(v);
  a.o = PyArray_DATA(o);
  a.lse = lse ? PyArray_DATA(lse) : NULL;

  smx_attention_plan *plan = NULL;
  smx_status s = smx_attention_plan_create(&d, &plan);
  if (s == SMX_OK) {
    Py_BEGIN_ALLOW_THREADS
    s = smx_attention_run(plan, &a, NULL, 0, NULL);
    Py_END_ALLOW_THREADS
    smx_attention_plan_destroy(plan);
  }
  if (s != SMX_OK) {
    smx_py_raise_status("attention", s);
    goto done;
  }
  if (tq != type) {   /* the result in q's dtype (float64 q: computed in float32, returned as float64) */
    PyArrayObject *c = (PyArrayObject *)PyArray_CastToType(o, PyArray_DescrFromType(tq), 0);
    if (!c) goto done;
    Py_DECREF(o);
    o = c;
  }
  if (lse) {
    result = PyTuple_Pack(2, (PyObject *)o, (PyObject *)lse);
  } else {
    result = (PyObject *)o;
    Py_INCREF(result);
  }
done:
  Py_XDECREF(q); Py_XDECREF(k); Py_XDECREF(v); Py_XDECREF(o); Py_XDECREF(lse); Py_XDECREF(m);
  Py_XDECREF(sk); Py_XDECREF(al); Py_XDECREF(fx); Py_XDECREF(gt); Py_XDECREF(wq); Py_XDECREF(wk); Py_XDECREF(ks);
  Py_XDECREF(sr); Py_XDECREF(sw);
  return result;
}

PyObject *smx_py_attention(PyObject *self, PyObject *args, PyObject *kwargs) {
  (void)self;
  return attention_impl(args, kwargs, NULL);
}

const char smx_py_attention_backward_doc[] = PyDoc_STR(
  "attention_backward($module, q, k, v, o, lse, do, /, *, dmask=False, threads=0, **options)\n"
  "--\n\n"
  "The gradients of smx.attention (include/smx/smx_attention_backward.h): q, k, v and the options as\n"
  "given to the forward, o and lse (return_lse=True) its results, do = dLoss/do (o's shape). Returns a\n"
  "dict: 'dq', 'dk', 'dv' (q's / k's / v's shapes, float32, or float16 for float16 storage), and as the\n"
  "options ask: 'dsink' (Hq,), 'dfox' (B, Hq, Lk), 'dgate' (the gate's shape), and with dmask=True and a\n"
  "float mask 'dmask' (B, Hq, Lq, Lk): sum it over the dimensions the mask broadcasts. The softmax and sigmoid kinds with\n"
  "every mask, sinks, softcap, SSMax, FoX and the gate; other options raise NotImplementedError. threads as\n"
  "smx.attention (0: every core); the gradients are the same bits for every count.");

PyObject *smx_py_attention_backward(PyObject *self, PyObject *args, PyObject *kwargs) {
  (void)self;
  if (!PyTuple_Check(args) || PyTuple_GET_SIZE(args) != 6) {
    PyErr_SetString(PyExc_TypeError, "attention_backward: takes q, k, v, o, lse, do (positional) and the forward's options");
    return NULL;
  }
  int dmask = 0;
  PyObject *kw = kwargs ? PyDict_Copy(kwargs) : PyDict_New();
  if (!kw) return NULL;
  PyObject *dm = PyDict_GetItemString(kw, "dmask");   /* borrowed */
  if (dm) {
    dmask = PyObject_IsTrue(dm);
    if (dmask < 0 || PyDict_DelItemString(kw, "dmask") < 0) {
      Py_DECREF(kw);
      return NULL;
    }
  }
  PyObject *fwd = PyTuple_GetSlice(args, 0, 3);
  PyObject *bwd = Py_BuildValue("(OOOi)", PyTuple_GET_ITEM(args, 3), PyTuple_GET_ITEM(args, 4), PyTuple_GET_ITEM(args, 5),
                                dmask);
  PyObject *r = fwd && bwd ? attention_impl(fwd, kw, bwd) : NULL;
  Py_XDECREF(fwd);
  Py_XDECREF(bwd);
  Py_DECREF(kw);
  return r;
}
