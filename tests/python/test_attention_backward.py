"""smx.torch.attention and smx.torch.scaled_dot_product_attention gradients (smx_attention_backward.h)
against float64 torch autograd of the composed form: softmax of the masked, scaled scores (with every
option) times V. Each gradient is checked within the header's bound, |g - ref| <= eps M, M the same
sums on absolute values (the weights carrying their logits' rounding, w (1 + Z / 32))."""
import math
import unittest

import numpy as np
import torch

import smx
import smx.torch as st

torch.manual_seed(0)


def composed(q, k, v, *, causal=False, window=None, mask=None, sink=None, fox=None, gate=None, softcap=None,
             ssmax=None, alibi=None, scale=None):
    """The float64 reference output and, beside it, Z (logit magnitudes) and P for the bound."""
    B, Hq, Lq, D = q.shape
    Hkv, Lk = k.shape[1], k.shape[2]
    g = Hq // Hkv
    kr, vr = k.repeat_interleave(g, 1), v.repeat_interleave(g, 1)
    sc = (1.0 / math.sqrt(D)) if scale is None else scale
    sc = float(np.float32(sc))
    x = sc * q @ kr.transpose(-1, -2)
    zmag = sc * q.abs() @ kr.abs().transpose(-1, -2)
    top_left = causal == "top_left"
    pos = torch.arange(Lq)[:, None] + (0 if top_left else Lk - Lq)
    j = torch.arange(Lk)[None, :]
    vis = torch.ones(Lq, Lk, dtype=torch.bool)
    if causal:
        vis &= j <= pos
    if window is not None:
        left, right = window if isinstance(window, tuple) else (window, -1)
        if left >= 0:
            vis &= j >= pos - left
        if right >= 0:
            vis &= j <= pos + right
    vis = vis.expand(B, Hq, Lq, Lk)
    if mask is not None and mask.dtype == torch.bool:
        vis = vis & mask.expand(B, Hq, Lq, Lk)
    if mask is not None and mask.dtype != torch.bool:
        vis = vis & (mask.expand(B, Hq, Lq, Lk) != float("-inf"))
    z = softcap * torch.tanh(x / softcap) if softcap else x
    if ssmax:
        n = vis.sum(-1, keepdim=True).double()
        fac = torch.where(n > 0, ssmax * torch.log(n.clamp(min=1)), torch.ones_like(n))
        z, zmag = z * fac, zmag * fac
    if mask is not None and mask.dtype != torch.bool:
        z = z + mask.double()
        zmag = zmag + mask.double().abs().nan_to_num(posinf=0.0, neginf=0.0)
    if alibi is not None:
        a = torch.as_tensor(alibi).double()[None, :, None, None] * (pos - j).abs()[None, None]
        z, zmag = z - a, zmag + a
    if fox is not None:
        f = fox.double()
        fp = f[:, :, pos.clamp(0, Lk - 1).squeeze(1)]
        z = z + fp[..., None] - f[:, :, None, :]
        zmag = zmag + fp.abs()[..., None] + f.abs()[:, :, None, :]
    z = z.masked_fill(~vis, float("-inf"))
    if sink is not None:
        sk = sink.double()[None, :, None, None].expand(B, Hq, Lq, 1)
        p = torch.softmax(torch.cat([z, sk], -1), -1)[..., :Lk]
    else:
        p = torch.softmax(z, -1).nan_to_num(0.0)
    o = p @ vr
    if gate is not None:
        gg = gate.double()
        o = o * torch.sigmoid(gg if gg.dim() == 4 else gg[..., None])
    return o, p.detach(), zmag.masked_fill(~vis, 0.0).detach(), vis


def magnitudes(q, k, v, do, p, zmag, g, sc, gate):
    """M of the bound for dq, dk, dv: the gradient's sums on absolute values (smx_attention_backward.h)."""
    kr, vr = k.repeat_interleave(g, 1).abs(), v.repeat_interleave(g, 1).abs()
    doin = do.abs()
    if gate is not None:
        s = torch.sigmoid(gate.double())
        doin = doin * (s if s.dim() == 4 else s[..., None])
    wm = p * (1 + zmag / 32)
    adp = doin @ vr.transpose(-1, -2)
    add = (p * adp).sum(-1, keepdim=True)
    ads = wm * (adp + add)
    mq = sc * ads @ kr
    mk = sc * ads.transpose(-1, -2) @ q.abs()
    mv = wm.transpose(-1, -2) @ doin
    B, Hq = q.shape[:2]
    mk = mk.reshape(B, Hq // g, g, *mk.shape[2:]).sum(2)
    mv = mv.reshape(B, Hq // g, g, *mv.shape[2:]).sum(2)
    return mq, mk, mv, ads


def eps_of(Lq, Lk):
    return 2.0 ** -16 + 2.0 ** -23 * max(Lq, Lk) / 8


class AttentionBackward(unittest.TestCase):
    def run_case(self, B=1, Hq=2, Hkv=2, Lq=37, Lk=53, D=16, Dv=8, softcap_max=None, **opts):
        q = torch.randn(B, Hq, Lq, D, dtype=torch.float64)
        k = torch.randn(B, Hkv, Lk, D, dtype=torch.float64)
        v = torch.randn(B, Hkv, Lk, Dv, dtype=torch.float64)
        do = torch.randn(B, Hq, Lq, Dv, dtype=torch.float64)
        # the inputs as float32 values, so that both sides see the same numbers
        q, k, v, do = (t.float().double() for t in (q, k, v, do))
        tens = {}
        for name in ("mask", "sink", "fox", "gate"):
            if name in opts and isinstance(opts[name], torch.Tensor):
                tens[name] = opts.pop(name).float().double()
        leaves = [t.clone().requires_grad_() for t in (q, k, v)]
        tl = {n: (t.clone().requires_grad_() if t.is_floating_point() else t) for n, t in tens.items()}
        out = st.attention(*leaves, **tl, **opts)
        out.backward(do)
        rl = [t.clone().requires_grad_() for t in (q, k, v)]
        rt = {n: (t.clone().requires_grad_() if t.is_floating_point() else t) for n, t in tens.items()}
        ref, p, zmag, vis = composed(*rl, **rt, **opts)
        ref.backward(do)
        g = Hq // Hkv
        sc = float(np.float32(opts.get("scale") or 1.0 / math.sqrt(D)))
        fac = 1.0
        mq, mk, mv, ads = magnitudes(q, k, v, do, p, zmag, g, sc, tens.get("gate"))
        if opts.get("softcap") or opts.get("ssmax"):   # the chain's factors are at most fac
            fac = max(1.0, opts.get("ssmax") or 0.0) * math.log(max(Lk, 2)) if opts.get("ssmax") else 1.0
        eps = eps_of(Lq, Lk)
        for name, got, want, m in (("dq", leaves[0].grad, rl[0].grad, mq * fac), ("dk", leaves[1].grad, rl[1].grad, mk * fac),
                                   ("dv", leaves[2].grad, rl[2].grad, mv)):
            err = (got.double() - want).abs()
            bad = err > eps * m + 1e-300
            self.assertFalse(bool(bad.any()), f"{name}: {int(bad.sum())} outside the bound, worst error "
                             f"{float(err.max()):.3g}, opts {opts}")
        for name, t in tl.items():
            if not t.is_floating_point():
                continue
            err = (t.grad.double() - rt[name].grad).abs().max().item()
            scale = rt[name].grad.abs().max().item() + ads.max().item()
            self.assertLessEqual(err, 1e-4 * scale, f"d{name}: error {err:.3g}, opts {opts}")

    def test_plain_and_gqa(self):
        self.run_case()
        self.run_case(B=2, Hq=8, Hkv=2, Lq=29, Lk=67)
        self.run_case(Hq=6, Hkv=1, Lq=1, Lk=300)

    def test_masks(self):
        self.run_case(causal=True)
        self.run_case(causal="top_left", Lq=70, Lk=50)
        self.run_case(window=(17, 5), Lq=100, Lk=100)
        self.run_case(mask=torch.rand(1, 2, 37, 53) < 0.8)
        bias = torch.randn(1, 1, 37, 53)
        bias[0, 0, ::5, :] = float("-inf")
        bias[0, 0, 1, 3:9] = float("-inf")
        self.run_case(mask=bias)
        self.run_case(alibi=np.array([0.5, 0.25], np.float32), causal=True)

    def test_variants(self):
        self.run_case(sink=torch.randn(2), causal=True)
        self.run_case(softcap=5.0)
        self.run_case(ssmax=0.4, causal=True)
        self.run_case(fox=torch.cumsum(torch.nn.functional.logsigmoid(2 + torch.randn(1, 2, 53)), -1), causal=True)
        self.run_case(gate=torch.randn(1, 2, 37))
        self.run_case(gate=torch.randn(1, 2, 37, 8))
        self.run_case(B=2, Hq=4, Hkv=2, causal=True, sink=torch.randn(4), softcap=8.0, mask=torch.randn(2, 4, 37, 53),
                      gate=torch.randn(2, 4, 37), fox=torch.cumsum(torch.nn.functional.logsigmoid(2 + torch.randn(2, 4, 53)), -1))

    def test_sigmoid(self):
        q = torch.randn(1, 2, 20, 8, dtype=torch.float64, requires_grad=True)
        k = torch.randn(1, 2, 30, 8, dtype=torch.float64, requires_grad=True)
        v = torch.randn(1, 2, 30, 8, dtype=torch.float64, requires_grad=True)
        do = torch.randn(1, 2, 20, 8, dtype=torch.float64)
        st.attention(q, k, v, kind="sigmoid", sigmoid_bias=-3.0, causal=True).backward(do)
        got = [t.grad.clone() for t in (q, k, v)]
        for t in (q, k, v):
            t.grad = None
        s = q @ k.transpose(-1, -2) / math.sqrt(8) - 3.0
        vis = torch.arange(30)[None, :] <= torch.arange(20)[:, None] + 10
        (torch.where(vis, torch.sigmoid(s), torch.zeros_like(s)) @ v).backward(do)
        for a, t in zip(got, (q, k, v)):
            self.assertLessEqual((a - t.grad).abs().max().item(), 1e-4 * (t.grad.abs().max().item() + 1))

    def check_against(self, got, refs, rtol=1e-4):
        for a, t in zip(got, refs):
            self.assertLessEqual((a - t.grad).abs().max().item(), rtol * (t.grad.abs().max().item() + 1))

    def test_softpick(self):
        # softpick (Zuhri et al. 2025): w = relu(e^z - 1) / (sum_visible |e^z - 1| + eps e^max), composed in float64
        for B, Hq, Hkv, causal, bias in ((1, 2, 2, False, False), (2, 4, 2, True, False), (1, 6, 1, "top_left", True)):
            q = torch.randn(B, Hq, 20, 8, dtype=torch.float64) * 1.5
            k = torch.randn(B, Hkv, 30, 8, dtype=torch.float64)
            v = torch.randn(B, Hkv, 30, 8, dtype=torch.float64)
            q, k, v = (t.float().double().requires_grad_() for t in (q, k, v))
            do = torch.randn(B, Hq, 20, 8, dtype=torch.float64).float().double()
            m = None
            if bias:
                m = torch.randn(B, Hq, 20, 30, dtype=torch.float64).float().double()
                m[:, :, ::4, 5:] = float("-inf")   # some rows keep few keys
                m[:, :, 3, :] = float("-inf")      # a row with no key: O = 0, gradient 0
                m.requires_grad_()
            st.attention(q, k, v, kind="softpick", causal=causal, mask=m).backward(do)
            got = [t.grad.clone() for t in (q, k, v) + ((m,) if bias else ())]
            for t in (q, k, v) + ((m,) if bias else ()):
                t.grad = None
            g = Hq // Hkv
            z = q @ k.repeat_interleave(g, 1).transpose(-1, -2) / math.sqrt(8)
            pos = torch.arange(20)[:, None] + (0 if causal == "top_left" else 10)
            vis = torch.ones(20, 30, dtype=torch.bool) if not causal else torch.arange(30)[None, :] <= pos
            vis = vis.expand(B, Hq, 20, 30)
            if bias:
                vis = vis & (m != float("-inf"))
                z = z + m.masked_fill(m == float("-inf"), 0.0)
            z = z.masked_fill(~vis, float("-inf"))
            zm = z.max(-1, keepdim=True).values.masked_fill(~vis.any(-1, keepdim=True), 0.0)
            e = torch.where(vis, torch.exp(z - zm) - torch.exp(-zm), torch.zeros_like(z))
            den = e.abs().sum(-1, keepdim=True) + 1e-8
            (torch.relu(e) / den @ v.repeat_interleave(g, 1)).backward(do)
            self.check_against(got, (q, k, v) + ((m,) if bias else ()))

    def test_qk_norm(self):
        # QK-norm: q and k rows RMS-normalised (eps, optional weights) before the product, float64 composed
        def rms(x, eps):
            return x / torch.sqrt(x.pow(2).mean(-1, keepdim=True) + eps)
        for wmode, kind, causal in ((None, "softmax", False), ("array", "softmax", True), ("grad", "softmax", True),
                                    ("array", "softpick", "top_left"), ("grad", "sigmoid", False)):
            B, Hq, Hkv, Lq, Lk, D = 1, 4, 2, 20, 30, 8
            q = torch.randn(B, Hq, Lq, D, dtype=torch.float64) * 3
            k = torch.randn(B, Hkv, Lk, D, dtype=torch.float64) * 0.5
            v = torch.randn(B, Hkv, Lk, 8, dtype=torch.float64)
            q, k, v = (t.float().double().requires_grad_() for t in (q, k, v))
            do = torch.randn(B, Hq, Lq, 8, dtype=torch.float64).float().double()
            wq = (1 + 0.3 * torch.randn(D, dtype=torch.float64)).float().double()
            wk = (1 + 0.3 * torch.randn(D, dtype=torch.float64)).float().double()
            eps = 1e-3
            opts = dict(kind=kind, causal=causal, qk_norm_eps=eps)
            if kind == "sigmoid":
                opts["sigmoid_bias"] = -2.0
            leaves = (q, k, v)
            if wmode is None:
                opts["qk_norm"] = True
            elif wmode == "array":
                opts["qk_norm"] = (wq.float().numpy(), wk.float().numpy())
            else:
                wq.requires_grad_(), wk.requires_grad_()
                opts["qk_norm"] = (wq, wk)
                leaves = (q, k, v, wq, wk)
            st.attention(q, k, v, **opts).backward(do)
            got = [t.grad.clone() for t in leaves]
            for t in leaves:
                t.grad = None
            g = Hq // Hkv
            qn, kn = rms(q, eps), rms(k, eps)
            if wmode is not None:
                qn, kn = qn * wq, kn * wk
            z = qn @ kn.repeat_interleave(g, 1).transpose(-1, -2) / math.sqrt(D)
            pos = torch.arange(Lq)[:, None] + (0 if causal == "top_left" else Lk - Lq)
            vis = torch.ones(Lq, Lk, dtype=torch.bool) if not causal else torch.arange(Lk)[None, :] <= pos
            vr = v.repeat_interleave(g, 1)
            if kind == "softmax":
                w = torch.softmax(z.masked_fill(~vis, float("-inf")), -1)
            elif kind == "sigmoid":
                w = torch.sigmoid(z - 2.0) * vis
            else:
                zz = z.masked_fill(~vis, float("-inf"))
                zm = zz.max(-1, keepdim=True).values
                e = torch.where(vis, torch.exp(zz - zm) - torch.exp(-zm), torch.zeros_like(zz))
                w = torch.relu(e) / (e.abs().sum(-1, keepdim=True) + 1e-8)
            (w @ vr).backward(do)
            self.check_against(got, leaves)

    def test_differential(self):
        # differential attention (Ye et al. 2024): O = softmax(z1) V - lambda softmax(z2) V, z1 / z2 from the
        # halves of the Q K dimensions, scale 1 / sqrt(D / 2); float64 composed, with a gate and a bias
        for B, Hq, Hkv, lam, causal, extra in ((1, 2, 2, 0.6, False, False), (2, 4, 2, -0.3, True, True),
                                               (1, 6, 1, 0.8, "top_left", True)):
            Lq, Lk, D = 20, 30, 8
            q = torch.randn(B, Hq, Lq, D, dtype=torch.float64) * 1.5
            k = torch.randn(B, Hkv, Lk, D, dtype=torch.float64)
            v = torch.randn(B, Hkv, Lk, 8, dtype=torch.float64)
            q, k, v = (t.float().double().requires_grad_() for t in (q, k, v))
            do = torch.randn(B, Hq, Lq, 8, dtype=torch.float64).float().double()
            leaves = [q, k, v]
            opts = dict(diff_lambda=lam, causal=causal)
            m = gate = None
            if extra:
                m = torch.randn(B, Hq, Lq, Lk, dtype=torch.float64).float().double()
                m[:, :, ::4, 5:] = float("-inf")
                m[:, :, 3, :] = float("-inf")   # a row with no key: O = 0, gradient 0
                gate = torch.randn(B, Hq, Lq, dtype=torch.float64).float().double()
                m.requires_grad_(), gate.requires_grad_()
                leaves += [m, gate]
                opts.update(mask=m, gate=gate)
            st.attention(q, k, v, **opts).backward(do)
            got = [t.grad.clone() for t in leaves]
            for t in leaves:
                t.grad = None
            g, h = Hq // Hkv, D // 2
            kr, vr = k.repeat_interleave(g, 1), v.repeat_interleave(g, 1)
            pos = torch.arange(Lq)[:, None] + (0 if causal == "top_left" else Lk - Lq)
            vis = torch.ones(Lq, Lk, dtype=torch.bool) if not causal else torch.arange(Lk)[None, :] <= pos
            vis = vis.expand(B, Hq, Lq, Lk)
            if extra:
                vis = vis & (m != float("-inf"))
            o = 0
            for part, c in ((0, 1.0), (1, -lam)):
                z = q[..., part * h:(part + 1) * h] @ kr[..., part * h:(part + 1) * h].transpose(-1, -2)
                z = z * float(np.float32(1 / math.sqrt(h)))
                if extra:
                    z = z + m.masked_fill(m == float("-inf"), 0.0)
                p = torch.softmax(z.masked_fill(~vis, float("-inf")), -1).nan_to_num(0.0)
                o = o + c * (p @ vr)
            if extra:
                o = o * torch.sigmoid(gate)[..., None]
            o.backward(do)
            self.check_against(got, leaves)

    def test_sdpa(self):
        q = torch.randn(2, 3, 20, 8, dtype=torch.float64, requires_grad=True)
        k = torch.randn(2, 3, 30, 8, dtype=torch.float64, requires_grad=True)
        v = torch.randn(2, 3, 30, 8, dtype=torch.float64, requires_grad=True)
        m = torch.randn(20, 30, dtype=torch.float64, requires_grad=True)   # broadcast over batch and heads
        do = torch.randn(2, 3, 20, 8, dtype=torch.float64)
        st.scaled_dot_product_attention(q, k, v, attn_mask=m).backward(do)
        got = [t.grad.clone() for t in (q, k, v, m)]
        for t in (q, k, v, m):
            t.grad = None
        ref = torch.softmax(q @ k.transpose(-1, -2) / math.sqrt(8) + m, -1) @ v
        ref.backward(do)
        for a, t in zip(got, (q, k, v, m)):
            self.assertLessEqual((a - t.grad).abs().max().item(), 1e-4 * (t.grad.abs().max().item() + 1))
        for t in (q, k, v):
            t.grad = None
        st.scaled_dot_product_attention(q, k, v, is_causal=True).backward(do)
        got = [t.grad.clone() for t in (q, k, v)]
        for t in (q, k, v):
            t.grad = None
        s = (q @ k.transpose(-1, -2) / math.sqrt(8)).masked_fill(torch.ones(20, 30).tril() == 0, float("-inf"))
        (torch.softmax(s, -1) @ v).backward(do)
        for a, t in zip(got, (q, k, v)):
            self.assertLessEqual((a - t.grad).abs().max().item(), 1e-4 * (t.grad.abs().max().item() + 1))

    def test_double_backward_and_unsupported(self):
        q = torch.randn(1, 2, 5, 8, requires_grad=True)
        o = st.attention(q, q, q)
        (gq,) = torch.autograd.grad(o.sum(), q, create_graph=True)
        with self.assertRaises(RuntimeError):
            gq.sum().backward()
        o = st.attention(q, q, q, kind="linear")
        with self.assertRaises(NotImplementedError):
            o.sum().backward()
        x = np.random.rand(1, 2, 5, 8).astype(np.float32)
        with self.assertRaises(ValueError):
            smx.attention_backward(x, x, x, x, np.zeros((1, 2, 4), np.float32), x)

    def test_threads_bitwise(self):
        q = torch.randn(2, 4, 70, 16)
        k = torch.randn(2, 2, 90, 16)
        v = torch.randn(2, 2, 90, 16)
        o, lse = smx.attention(q.numpy(), k.numpy(), v.numpy(), causal=True, return_lse=True)
        do = np.random.rand(*o.shape).astype(np.float32)
        ref = smx.attention_backward(q.numpy(), k.numpy(), v.numpy(), o, lse, do, causal=True)
        for th in (2, 7):
            got = smx.attention_backward(q.numpy(), k.numpy(), v.numpy(), o, lse, do, causal=True, threads=th)
            for n in ("dq", "dk", "dv"):
                self.assertTrue(np.array_equal(got[n], ref[n]), f"{n} threads {th}")


if __name__ == "__main__":
    unittest.main()
