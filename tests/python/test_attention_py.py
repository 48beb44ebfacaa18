"""smx.attention and smx.torch.scaled_dot_product_attention against composed
NumPy / torch forms (materialised scores, softmax, product) on random shapes,
masks, causal settings, strides and dtypes."""
import unittest

import numpy as np

import smx

try:
    import torch
    import smx.torch as st
except ImportError:  # pragma: no cover
    torch = None

RNG = np.random.default_rng(5)


def composed(q, k, v, scale=None, mask=None, causal=None, sink=None):
    """float64 reference; causal 'bottom_right' / 'top_left'; fully masked rows give 0."""
    q, k, v = (np.asarray(a, np.float64) for a in (q, k, v))
    g = q.shape[1] // k.shape[1]
    k, v = np.repeat(k, g, axis=1), np.repeat(v, g, axis=1)
    s = q @ np.swapaxes(k, -1, -2) * (scale if scale is not None else 1 / np.sqrt(q.shape[-1]))
    L, S = s.shape[-2:]
    if causal:
        off = S - L if causal == "bottom_right" else 0
        s = np.where(np.arange(S)[None, :] <= np.arange(L)[:, None] + off, s, -np.inf)
    if mask is not None:
        s = np.where(mask, s, -np.inf) if mask.dtype == bool else s + mask
    m = s.max(-1, keepdims=True)
    if sink is not None:
        m = np.maximum(m, sink[None, :, None, None])
    m = np.where(np.isfinite(m), m, 0)
    p = np.exp(s - m)
    den = p.sum(-1, keepdims=True) + (np.exp(sink[None, :, None, None] - m) if sink is not None else 0)
    with np.errstate(invalid="ignore", divide="ignore"):
        o = np.where(den > 0, (p @ v) / np.where(den > 0, den, 1), 0)
    return o


class TestAttention(unittest.TestCase):
    def check(self, got, want, tol=1e-5):
        scale = max(np.abs(want).max(), 1e-30)
        self.assertLessEqual(np.abs(got.astype(np.float64) - want).max() / scale, tol)

    def test_shapes_masks_causal(self):
        for trial in range(12):
            B, hkv = RNG.integers(1, 3), RNG.integers(1, 3)
            hq = hkv * RNG.integers(1, 4)
            L, S, D, Dv = RNG.integers(1, 40), RNG.integers(1, 70), RNG.integers(1, 40), RNG.integers(1, 30)
            q = RNG.standard_normal((B, hq, L, D), np.float32)
            k = RNG.standard_normal((B, hkv, S, D), np.float32)
            v = RNG.standard_normal((B, hkv, S, Dv), np.float32)
            causal = [False, "bottom_right", "top_left"][trial % 3]
            mask = None
            if trial % 4 == 1:
                mask = RNG.random((1, hq, L, S)) < 0.7
            elif trial % 4 == 2:
                mask = RNG.standard_normal((B, 1, 1, S)).astype(np.float32)
            o = smx.attention(q, k, v, causal=causal, mask=mask, threads=trial % 3)
            self.check(o, composed(q, k, v, mask=mask, causal=causal))

    def test_strides_and_lse(self):
        q = RNG.standard_normal((2, 17, 3, 24), np.float32).transpose(0, 2, 1, 3)   # (B, L, H, D) storage
        k = RNG.standard_normal((2, 29, 3, 24), np.float32).transpose(0, 2, 1, 3)
        v = RNG.standard_normal((2, 29, 3, 24), np.float32).transpose(0, 2, 1, 3)
        o, lse = smx.attention(q, k, v, return_lse=True, scale=0.3)
        self.check(o, composed(q, k, v, scale=0.3))
        s = np.asarray(q, np.float64) @ np.swapaxes(np.asarray(k, np.float64), -1, -2) * 0.3
        ref = np.log(np.exp(s - s.max(-1, keepdims=True)).sum(-1)) + s.max(-1)
        self.assertLessEqual(np.abs(lse - ref).max(), 1e-5 * max(1, np.abs(ref).max()))

    def test_sink_window_masked_rows(self):
        q = RNG.standard_normal((1, 2, 9, 8), np.float32)
        k = RNG.standard_normal((1, 2, 9, 8), np.float32)
        v = RNG.standard_normal((1, 2, 9, 8), np.float32)
        sink = np.array([0.5, -1.0], np.float32)
        self.check(smx.attention(q, k, v, sink=sink), composed(q, k, v, sink=sink))
        w = np.abs(np.arange(9)[:, None] - np.arange(9)[None, :])
        win = (np.arange(9)[None, :] <= np.arange(9)[:, None]) & (w <= 2)
        self.check(smx.attention(q, k, v, window=(2, 0)), composed(q, k, v, mask=win))
        mask = np.ones((9, 9), bool)
        mask[3] = False
        o, lse = smx.attention(q, k, v, mask=mask, return_lse=True)
        self.assertTrue(np.all(o[:, :, 3] == 0) and np.all(np.isneginf(lse[:, :, 3])))
        self.assertFalse(np.isnan(o).any())

    def test_float16(self):
        q = RNG.standard_normal((1, 2, 20, 16)).astype(np.float16)
        k = RNG.standard_normal((1, 2, 30, 16)).astype(np.float16)
        v = RNG.standard_normal((1, 2, 30, 16)).astype(np.float16)
        o = smx.attention(q, k, v, causal=True)
        self.assertEqual(o.dtype, np.float16)
        self.check(o, composed(q, k, v, causal="bottom_right"), tol=2e-3)

    def test_linear_kinds(self):
        q = RNG.standard_normal((2, 4, 12, 8)).astype(np.float32)
        k = RNG.standard_normal((2, 2, 20, 8)).astype(np.float32)
        v = RNG.standard_normal((2, 2, 20, 6)).astype(np.float32)
        kk, vv = np.repeat(k, 2, 1).astype(np.float64), np.repeat(v, 2, 1).astype(np.float64)
        pos = np.arange(12)[:, None] + 8
        j = np.arange(20)[None, :]
        for kind, f in (("linear", lambda x: np.where(x > 0, x + 1, np.exp(np.minimum(x, 0)))),
                        ("cosformer", lambda x: np.maximum(x, 0))):
            w = f(q.astype(np.float64)) @ np.swapaxes(f(kk), -1, -2)
            if kind == "cosformer":
                w = w * np.cos(np.pi / 2 * (pos - j) / 20)
            w = np.where(j <= pos, w, 0)
            with np.errstate(invalid="ignore"):
                want = np.nan_to_num((w @ vv) / w.sum(-1, keepdims=True))
            self.check(smx.attention(q, k, v, kind=kind, causal=True), want)

    def test_screen(self):
        """Screening (Multiscreen) against the paper's equations in float64, per-head r and windows."""
        q = RNG.standard_normal((2, 4, 10, 6)).astype(np.float32)
        k = RNG.standard_normal((2, 2, 30, 6)).astype(np.float32)
        v = RNG.standard_normal((2, 2, 30, 8)).astype(np.float32)
        r = np.array([0.5, 0.7, 0.9, 1.0], np.float32)
        w = np.array([12, 0, np.inf, 5.5], np.float32)

        def unit(x):
            return x / np.maximum(np.linalg.norm(x, axis=-1, keepdims=True), 1e-12)
        qn, kn, vn = unit(q.astype(np.float64)), unit(np.repeat(k, 2, 1).astype(np.float64)), unit(np.repeat(v, 2, 1).astype(np.float64))
        s = qn @ np.swapaxes(kn, -1, -2)
        a = np.maximum(1 - (1 - s) / r[None, :, None, None].astype(np.float64), 0) ** 2
        d = np.arange(30)[None, :] - (np.arange(10)[:, None] + 20)   # j - p_i, bottom-right
        for h in range(4):
            if 0 < w[h] < np.inf:
                a[:, h] *= np.where((d <= 0) & (d > -w[h]), 0.5 * (np.cos(np.pi * d / w[h]) + 1), 0)
        a = np.where(d <= 0, a, 0)                                    # causal
        hh = a @ vn
        n = np.linalg.norm(hh, axis=-1, keepdims=True)
        want = np.where(n > 0, np.tanh(n) / np.where(n > 0, n, 1), 1) * hh
        o = smx.attention(q, k, v, kind="screen", screen_r=r, screen_window=w, causal=True, threads=2)
        self.check(o, want)
        o1 = smx.attention(q, k, v, kind="screen", screen_r=0.5, screen_window=12.0, causal=True)
        self.check(o1[:, :1], want[:, :1])
        with self.assertRaises(ValueError):
            smx.attention(q, k, v, kind="screen")                     # no acceptance width
        with self.assertRaises(ValueError):
            smx.attention(q, k, v, kind="screen", screen_r=1.5)

    def test_int8_k(self):
        q = RNG.standard_normal((1, 2, 10, 32)).astype(np.float32)
        k = RNG.standard_normal((1, 1, 150, 32)).astype(np.float32)
        v = RNG.standard_normal((1, 1, 150, 16)).astype(np.float32)
        nb = 3
        scales = np.array([np.abs(k[0, 0, b * 64:(b + 1) * 64]).max() / 127 for b in range(nb)], np.float32)
        k8 = np.concatenate([np.rint(k[0, 0, b * 64:(b + 1) * 64] / scales[b]) for b in range(nb)]).astype(np.int8)
        kd = (k8.astype(np.float64) * np.repeat(scales, 64)[:150, None])[None, None]
        o = smx.attention(q, k8[None, None], v, k_scales=scales.reshape(1, 1, nb), causal=True)
        self.check(o, composed(q, kd, v, causal="bottom_right"))
        with self.assertRaises(ValueError):
            smx.attention(q, k8[None, None], v)

    def test_errors(self):
        q = np.zeros((1, 3, 4, 8), np.float32)
        k = np.zeros((1, 2, 4, 8), np.float32)
        with self.assertRaises(ValueError):
            smx.attention(q, k, k)                       # 3 query heads over 2 KV heads
        with self.assertRaises(ValueError):
            smx.attention(q, q, q, kind="nope")
        with self.assertRaises(ValueError):
            smx.attention(q, q, q, mask=np.ones((2, 4), bool))
        with self.assertRaises(ValueError):
            smx.attention(q[0], q[0], q[0])
        with self.assertRaises(TypeError):
            smx.attention(q, q, q, dropout=0.1)


class TestBroadcast(unittest.TestCase):
    """Zero strides (np.broadcast_to, torch.expand: repeated KV heads) are read as broadcasts, never past
    the array: issue 24 item 1 (the row stride 0 was taken for packed, and K read as Lk x D elements)."""
    def check(self, got, want, tol=1e-5):
        self.assertLessEqual(np.abs(got.astype(np.float64) - want).max() / max(np.abs(want).max(), 1e-30), tol)

    def test_broadcast_kv(self):
        rng = np.random.default_rng(24)
        q = rng.standard_normal((2, 4, 5, 8)).astype(np.float32)
        k1 = rng.standard_normal((1, 1, 1, 8)).astype(np.float32)
        v1 = rng.standard_normal((2, 1, 37, 6)).astype(np.float32)
        kh = rng.standard_normal((2, 1, 37, 8)).astype(np.float32)
        cases = [
            ("one key row for everything", np.broadcast_to(k1, (2, 4, 37, 8)), np.broadcast_to(v1, (2, 4, 37, 6))),
            ("KV heads repeated", np.broadcast_to(kh, (2, 4, 37, 8)), np.broadcast_to(v1, (2, 4, 37, 6))),
            ("one row per head", np.broadcast_to(kh[:, :, :1], (2, 2, 37, 8)), np.broadcast_to(v1[:, :, :1], (2, 2, 37, 6))),
            ("one batch", np.broadcast_to(kh[:1], (2, 1, 37, 8)), v1),
        ]
        for name, k, v in cases:
            want = composed(q, np.ascontiguousarray(k), np.ascontiguousarray(v), causal="bottom_right")
            for threads in (1, 2, 7):
                with self.subTest(name, threads=threads):
                    self.check(smx.attention(q, k, v, causal=True, threads=threads), want)
            if k.strides[2] == 0:   # every key the same: the output is the mean of V over the visible keys
                vv = np.ascontiguousarray(np.broadcast_to(v, k.shape[:3] + (6,))).astype(np.float64)
                self.check(smx.attention(q, k, v), np.repeat(vv.mean(2, keepdims=True), 5, 2)
                           if k.shape[1] == 4 else np.repeat(np.repeat(vv.mean(2, keepdims=True), 5, 2), 2, 1))

    def test_broadcast_q_and_half(self):
        rng = np.random.default_rng(25)
        q = np.broadcast_to(rng.standard_normal((1, 1, 1, 16)).astype(np.float16), (3, 2, 9, 16))
        k = np.broadcast_to(rng.standard_normal((3, 1, 50, 16)).astype(np.float16), (3, 2, 50, 16))
        v = np.broadcast_to(rng.standard_normal((1, 2, 50, 4)).astype(np.float16), (3, 2, 50, 4))
        o = smx.attention(q, k, v, threads=2)
        self.assertEqual(o.dtype, np.float16)
        self.check(o, composed(q, k, v), tol=2e-3)

    @unittest.skipIf(torch is None, "torch is not installed")
    def test_torch_expand(self):
        g = torch.Generator().manual_seed(24)
        q = torch.randn(2, 8, 7, 16, generator=g)
        k = torch.randn(2, 2, 40, 16, generator=g)
        v = torch.randn(2, 2, 40, 16, generator=g)
        # the usual GQA form: each KV head repeated over its 4 query heads by expand (stride 0)
        ke = k[:, :, None].expand(2, 2, 4, 40, 16).reshape(2, 8, 40, 16)
        k1 = k[:, :1, :1].expand(2, 8, 40, 16)
        v1 = v[:, :1].expand(2, 8, 40, 16)
        for kk, vv in ((ke, v.repeat_interleave(4, 1)), (k1, v1)):
            got = st.scaled_dot_product_attention(q, kk, vv, is_causal=True)
            want = composed(q.numpy(), kk.contiguous().numpy(), vv.contiguous().numpy(), causal="top_left")
            self.check(got.numpy(), want)


class TestDtypesAndMessages(unittest.TestCase):
    """Issue 24 items 8 and 9: float64 computed in float32 as documented; integer masks refused; a shape
    mismatch names the argument and the axis."""
    def test_float64(self):
        rng = np.random.default_rng(8)
        q = rng.standard_normal((2, 4, 6, 8))
        k = rng.standard_normal((2, 2, 9, 8))
        v = rng.standard_normal((2, 2, 9, 5))
        o, lse = smx.attention(q, k, v, causal=True, return_lse=True)
        self.assertEqual(o.dtype, np.float64)        # q's dtype
        self.assertEqual(lse.dtype, np.float32)
        want = composed(q, k, v, causal="bottom_right")
        self.assertLessEqual(np.abs(o - want).max() / np.abs(want).max(), 1e-5)
        # the same numbers as the float32 inputs, widened
        o32 = smx.attention(q.astype(np.float32), k.astype(np.float32), v.astype(np.float32), causal=True)
        self.assertTrue(np.array_equal(o, o32.astype(np.float64)))
        # mixed: f16 q with f64 k / v computes in float32 and returns float16
        self.assertEqual(smx.attention(q.astype(np.float16), k, v).dtype, np.float16)
        self.assertEqual(smx.attention(q.tolist(), k.tolist(), v.tolist()).dtype, np.float64)

    def test_dtype_errors(self):
        q = np.zeros((1, 2, 3, 4), np.float32)
        for bad, what in ((dict(q=q.astype(np.int64)), "q must be float16, float32 or float64"),
                          (dict(k=q.astype(np.int32)), "k must be float16"),
                          (dict(v=q.astype(bool)), "v must be float16")):
            args = {**dict(q=q, k=q, v=q), **bad}
            with self.assertRaisesRegex(TypeError, what):
                smx.attention(args["q"], args["k"], args["v"])
        with self.assertRaisesRegex(TypeError, "mask must be bool .* or float"):
            smx.attention(q, q, q, mask=np.ones((3, 3), np.int64))
        with self.assertRaisesRegex(TypeError, "mask must be bool"):
            smx.attention(q, q, q, mask=np.ones((3, 3), np.uint8))

    def test_shape_messages(self):
        q = np.zeros((2, 4, 3, 8), np.float32)
        k = np.zeros((2, 2, 5, 8), np.float32)
        v = np.zeros((2, 2, 5, 6), np.float32)
        for args, msg in (((q, k[:1], v), "k: batch 1 does not match q's 2"),
                          ((q, k, v[:1]), "v: batch 1 does not match q's 2"),
                          ((q, k[..., :3], v), "k: dim 3 does not match q's 8"),
                          ((q, k, v[:, :1]), "v: heads 1 does not match k's 2"),
                          ((q, k, v[:, :, :4]), "v: length 4 does not match k's 5"),
                          ((q[:, :3], k, v), "q's 3 heads are not a multiple of k's 2")):
            with self.subTest(msg):
                with self.assertRaisesRegex(ValueError, msg):
                    smx.attention(*args)

    @unittest.skipIf(torch is None, "torch is not installed")
    def test_torch_messages(self):
        q, k, v = torch.zeros(2, 4, 3, 8), torch.zeros(2, 2, 5, 8), torch.zeros(2, 2, 5, 6)
        sdpa = st.scaled_dot_product_attention
        for args, kw, msg in (((q, torch.zeros(3, 2, 5, 8), v), {}, "key: batch 3 does not match query's 2"),
                              ((q, k, torch.zeros(3, 2, 5, 6)), {}, "value: batch 3 does not match query's 2"),
                              ((q, k[..., :3], v), {"enable_gqa": True}, "key: embedding dim 3 does not match query's 8"),
                              ((q, k, v[:, :1]), {"enable_gqa": True}, "value: heads 1 does not match key's 2"),
                              ((q, k, v[:, :, :4]), {"enable_gqa": True}, "value: length 4 does not match key's 5"),
                              ((q[:, :3], k, v), {"enable_gqa": True}, "query's 3 heads are not a multiple of key's 2"),
                              ((q, k, v), {}, "key has 2 heads, query 4"),
                              ((q, k, v), {"enable_gqa": True, "attn_mask": torch.ones(3, 3, 5)},
                               r"attn_mask of shape \(3, 3, 5\) does not broadcast")):
            with self.subTest(msg):
                with self.assertRaisesRegex(ValueError, msg):
                    sdpa(*args, **kw)
        # an integer mask is neither a keep-mask nor a bias: refused, as PyTorch does
        for dt in (torch.int64, torch.int32, torch.uint8):
            with self.assertRaisesRegex(RuntimeError, "attn_mask must be bool or float"):
                sdpa(q, q, q, attn_mask=torch.ones(3, 3, dtype=dt))
        with self.assertRaisesRegex(RuntimeError, "query must be a floating-point tensor"):
            sdpa(q.int(), q, q)
        # float masks of any float dtype, and float64 inputs, are accepted
        m = torch.randn(3, 3, dtype=torch.float64)
        o = sdpa(q.double(), q.double(), q.double(), attn_mask=m)
        self.assertEqual(o.dtype, torch.float64)


@unittest.skipIf(torch is None, "torch is not installed")
class TestTorchSDPA(unittest.TestCase):
    def composed_torch(self, q, k, v, attn_mask=None, is_causal=False, scale=None):
        s = q @ k.transpose(-2, -1) * (scale if scale is not None else 1 / np.sqrt(q.shape[-1]))
        if is_causal:
            L, S = s.shape[-2:]
            s = s.masked_fill(torch.ones(L, S, dtype=torch.bool).triu(1), float("-inf"))
        if attn_mask is not None:
            s = s.masked_fill(~attn_mask, float("-inf")) if attn_mask.dtype == torch.bool else s + attn_mask
        return torch.softmax(s, -1) @ v

    def test_random(self):
        gen = torch.Generator().manual_seed(3)
        for trial in range(16):
            lead = [(2, 3), (4,), (1, 2, 2)][trial % 3]
            L, S, E, Ev = (int(x) for x in torch.randint(1, 33, (4,), generator=gen))
            q = torch.randn(*lead, L, E, generator=gen)
            k = torch.randn(*lead, S, E, generator=gen)
            v = torch.randn(*lead, S, Ev, generator=gen)
            if trial % 5 == 4:
                q = q.transpose(-1, -2).contiguous().transpose(-1, -2)   # column-major rows: a copy inside
            mask, causal, scale = None, False, None
            if trial % 4 == 1:
                mask = torch.rand(L, S, generator=gen) < 0.8
                mask[:, 0] = True   # torch gives NaN for a fully masked row; smx gives 0
            elif trial % 4 == 2:
                mask = torch.randn(*lead[:1], *([1] * (len(lead) - 1)), L, S, generator=gen)
            elif trial % 4 == 3:
                causal = L <= S
                scale = 0.2
            got = st.scaled_dot_product_attention(q, k, v, attn_mask=mask, is_causal=causal, scale=scale)
            want = self.composed_torch(q.double(), k.double(), v.double(),
                                       None if mask is None else (mask if mask.dtype == torch.bool else mask.double()),
                                       causal, scale)
            self.assertEqual(got.shape, want.shape)
            err = (got.double() - want).abs().max().item() / max(want.abs().max().item(), 1e-30)
            self.assertLessEqual(err, 1e-5, f"trial {trial}")

    def test_dtypes_and_errors(self):
        q = torch.randn(1, 2, 5, 8)
        o = st.scaled_dot_product_attention(q.half(), q.half(), q.half())
        self.assertEqual(o.dtype, torch.float16)
        o = st.scaled_dot_product_attention(q.bfloat16(), q.bfloat16(), q.bfloat16())
        self.assertEqual(o.dtype, torch.bfloat16)
        with self.assertRaises(RuntimeError):
            st.scaled_dot_product_attention(q, q, q, attn_mask=torch.ones(5, 5, dtype=torch.bool), is_causal=True)
        # differentiable since the backward pass (test_attention_backward.py checks the gradients)
        st.scaled_dot_product_attention(q.clone().requires_grad_(), q, q).sum().backward()
        with torch.no_grad():
            st.scaled_dot_product_attention(q, q, q)


@unittest.skipIf(torch is None, "torch is not installed")
class TestBf16(unittest.TestCase):
    """bfloat16 storage and math='bf16' (smx_attention.h, Accuracy): within 2^-8 max|v| (plus f32's bound and
    the rounding of a bf16 output) of the float64 form of the inputs as bf16; math='f32' and 'auto' on float32
    are the same bits; the kernel set in use decides whether bf16 products run (smx.isa() 'avx512bf16')."""

    def inputs(self, gen, shape_q=(2, 4, 40, 24), shape_kv=(2, 2, 70, 24)):
        q = torch.randn(*shape_q, generator=gen).bfloat16()
        k = torch.randn(*shape_kv, generator=gen).bfloat16()
        v = (torch.randn(*shape_kv, generator=gen) * 3).bfloat16()
        return q, k, v

    def test_bf16_storage_and_math(self):
        gen = torch.Generator().manual_seed(11)
        for causal in (False, True):
            q, k, v = self.inputs(gen)
            want = composed(q.double().numpy(), k.double().numpy(), v.double().numpy(),
                            causal="bottom_right" if causal else None)
            tol = 2 ** -8 * v.double().abs().max().item() + 2 ** -8 * np.abs(want).max() + 1e-5 * np.abs(want).max()
            bits = smx.attention(*(t.view(torch.int16).numpy() for t in (q, k, v)), causal=causal, bf16=True)
            self.assertEqual(bits.dtype, np.int16)
            got = torch.from_numpy(bits).view(torch.bfloat16).double().numpy()
            self.assertLessEqual(np.abs(got - want).max(), tol)
            # float32 storage: auto is f32 bitwise; bf16 within the bound of the (here exact) bf16 inputs
            qf, kf, vf = (t.float().numpy() for t in (q, k, v))
            a = smx.attention(qf, kf, vf, causal=causal)
            self.assertTrue(np.array_equal(a, smx.attention(qf, kf, vf, causal=causal, math="f32")))
            b = smx.attention(qf, kf, vf, causal=causal, math="bf16")
            self.assertLessEqual(np.abs(b - want).max(), tol)
            if smx.isa() != "avx512bf16":
                self.assertTrue(np.array_equal(a, b))   # no bf16 products: f32
            # torch: bfloat16 tensors in place, bfloat16 out; math="f32" on bfloat16 storage
            o = st.scaled_dot_product_attention(q, k.repeat_interleave(2, 1), v.repeat_interleave(2, 1),
                                                is_causal=False)
            self.assertEqual(o.dtype, torch.bfloat16)
            o32 = st.scaled_dot_product_attention(q, k.repeat_interleave(2, 1), v.repeat_interleave(2, 1), math="f32")
            w2 = composed(q.double().numpy(), k.double().numpy(), v.double().numpy())
            for r in (o, o32):
                self.assertLessEqual(np.abs(r.double().numpy() - w2).max(), tol)

    def test_errors(self):
        q = np.zeros((1, 1, 20, 8), np.float32)
        with self.assertRaisesRegex(ValueError, "math must be"):
            smx.attention(q, q, q, math="fp8")
        with self.assertRaisesRegex(ValueError, "float16 storage"):
            smx.attention(q.astype(np.float16), q.astype(np.float16), q.astype(np.float16), math="bf16")
        with self.assertRaisesRegex(TypeError, "bfloat16 bits"):
            smx.attention(q, q, q, bf16=True)


if __name__ == "__main__":
    unittest.main()
