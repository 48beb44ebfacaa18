"""The op table's target losses (signature class TLOSS: int64 class targets and nothing else, the gradient in
the same call; src/ops/op_table.def) as NumPy functions, made from the table. Every TLOSS op with a Python
name appears as smx.<py> (and smx.torch.<py>, smx/torch/_losses.py) with no Python code of its own:
smx.sdpo_loss, smx.spherical_z_loss, ... Each is one call of smx._smx._tloss (the library's smx_op_rows):

    name(logits, targets, <parameters>, reduction='mean', ignore_index=-100, return_grad=False,
         grad_scale=1.0, threads=0)

The parameters' names, defaults and ranges, the bound, the special-value rule and the paper come from the
table (smx._smx._op_info); the definitions are in include/smx/smx_losses.h.
"""
import inspect

import numpy as np

from . import _rows, _smx

COMMON_DOC = """logits: [..., C], the classes on the LAST axis; targets: integers (not uint64) of shape logits.shape[:-1],
each in [0, C) or ignore_index (loss 0, gradient 0, left out of the mean).
reduction 'mean' (over the rows not ignored), 'sum' (a float) or 'none' (an array, ignored rows 0);
return_grad=True returns (loss, grad): grad_scale times the gradient of the returned loss (of the sum of
the row losses for 'none'), of the logits' shape and dtype. The loss is float64 for float64 logits, float32
otherwise. threads >= 0 (0: every core this process may use); results do not depend on it.
Layout: logits whose rows are evenly spaced with a unit-stride class axis (C arrays, slices of rows, views
whose leading axes merge) are read in place, at their own row stride; any other layout (a transposed or
class-strided view) is copied once to a C array. A half-precision dtype the op has no entry for is computed
in float32 (loss and grad float32). The GIL is released."""


def ops():
    """{Python name: op-table info (with 'name', the C stem)} of every TLOSS op that has a Python name."""
    found = {}
    for stem in _smx._op_names():
        info = _smx._op_info(stem)
        if info["sig"] == "TLOSS" and info["py"]:
            found[info["py"]] = dict(info, name=stem)
    return found


def signature(info, lead, tail):
    """lead (names), the op's parameters with the table's defaults, then tail ((name, default) pairs). A
    parameter without a default that follows one with a default, and what comes after it, is keyword-only."""
    P = inspect.Parameter
    kind, ps = P.POSITIONAL_OR_KEYWORD, [P(a, P.POSITIONAL_OR_KEYWORD) for a in lead]
    for p in info["params"]:
        if p[2] is None and any(q.default is not P.empty for q in ps):
            kind = P.KEYWORD_ONLY
        ps.append(P(p[0], kind, **({} if p[2] is None else {"default": _rows.default(p)})))
    return inspect.Signature(ps + [P(n, kind, default=d) for n, d in tail])


def binder(fn, sig):
    """bind(args, kwargs) -> {name: value} for sig, defaults applied: inspect.Signature.bind's rules for these
    signatures at a fraction of its cost (it took most of a small call's time)."""
    P = inspect.Parameter
    names = list(sig.parameters)
    npos = sum(p.kind == P.POSITIONAL_OR_KEYWORD for p in sig.parameters.values())
    defaults = {n: p.default for n, p in sig.parameters.items() if p.default is not P.empty}

    def bind(args, kwargs):
        if len(args) > npos:
            raise TypeError("%s() takes at most %d positional arguments (%d given)" % (fn, npos, len(args)))
        a = dict(zip(names, args))
        for k in kwargs:
            if k in a or k not in sig.parameters:
                raise TypeError("%s() got %s argument %r" % (fn, "multiple values for" if k in a else
                                                              "an unexpected keyword", k))
        a.update(kwargs)
        missing = [n for n in names if n not in a and n not in defaults]
        if missing:
            raise TypeError("%s() missing required argument%s: %s" % (fn, "s" * (len(missing) > 1),
                                                                     ", ".join(map(repr, missing))))
        return dict(defaults, **a)
    return bind


def values(fn, info, args):
    """The parameters' values, in the table's order, as the doubles smx_op_rows takes (a double[4] is four).
    The ranges are checked in C, against the table (a ValueError naming the parameter and its range)."""
    vals = []
    for name, ptype, *_ in info["params"]:
        v = args[name]
        try:
            vals += ([float(e) for e in np.asarray(v, dtype=np.float64).reshape(4)] if ptype == "double[4]"
                     else [float(v)])
        except (TypeError, ValueError):
            raise TypeError("%s: %s must be a number%s, got %r" % (fn, name, " (or four)" * (ptype == "double[4]"),
                                                                   v)) from None
    return vals


def doc(info, common):
    """The docstring: the paper, the parameters with their ranges, common, the bound and special values."""
    lines = ["%s: the loss of include/smx/smx_losses.h (smx_%s_<dtype>) of each row at its target." %
             (info["paper"] or "smx", info["name"]), "", "Parameters (from the op table):"]
    lines += ["  %s: %s (range [%g, %g])" % (p[0], p[5], p[3], p[4]) for p in info["params"]]
    lines += [common, "Bound: " + info["bound"], "Special values: " + info["special"],
              "dtypes: " + ", ".join(info["dtypes"])]
    return "\n".join(lines)


_TAIL = (("reduction", "mean"), ("ignore_index", -100), ("return_grad", False), ("grad_scale", 1.0), ("threads", 0))


def make(info):
    """smx.<py> of one TLOSS op (info: an entry of ops())."""
    fn, sig = "smx." + info["py"], signature(info, ("logits", "targets"), _TAIL)
    bind = binder(fn, sig)

    def loss(*args, **kwargs):
        a = bind(args, kwargs)
        return _smx._tloss(info["name"], a["logits"], a["targets"], *values(fn, info, a), reduction=a["reduction"],
                           ignore_index=a["ignore_index"], return_grad=a["return_grad"], grad_scale=a["grad_scale"],
                           threads=a["threads"])

    loss.__name__ = loss.__qualname__ = info["py"]
    loss.__signature__, loss.__doc__ = sig, doc(info, COMMON_DOC)
    return loss


LOSSES = {py: make(info) for py, info in ops().items()}
