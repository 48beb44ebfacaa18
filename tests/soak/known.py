"""KNOWN: defects being fixed elsewhere while this soak was written. A case
that matches an entry still runs (unless running it would hang the soak)
and still reports what it finds, but a failure there does not count against
the run; a matched case that passes is counted too, so that an entry whose
fix has landed shows up as "matched N, failed 0" and can be deleted.
Delete an entry as soon as its fix is merged; --no-known ignores them all.
"""
import numpy as np

F64_MIN_NORMAL = 2.2250738585072014e-308


def _cli_empty_later_axis(p):
    # SIGFPE: a reduced axis with entries and a later axis of length 0, e.g. (2, 0) --axis 0
    if p["surface"] != "cli" or p.get("bad"):
        return False
    shape, nd = p["shape"], len(p["shape"])
    ax = nd - 1 if p.get("axis") is None else int(p["axis"]) % nd
    return shape[ax] > 0 and any(s == 0 for s in shape[ax + 1:])


def _f32_subnormal_temperature(p):
    # f32 / f16 / bf16 softmax and logsumexp give NaN for a subnormal temperature (e.g. 1e-310)
    T = p.get("temperature", 1.0)
    if not (0 < T < F64_MIN_NORMAL) or p.get("op") not in ("softmax", "logsumexp"):
        return False
    if p["surface"] == "cli":
        return p.get("in_dtype", "f64") != "f64" and not (p.get("in_dtype") in ("i16", "bool") and p.get("dtype") == "f64")
    return p.get("dtype") != "f64"


def _py_zero_width_many_rows(p):
    # smx.softmax on a zero-width axis walks every (empty) row: minutes for 1e10 rows
    if p["surface"] != "py":
        return False
    shape, ax = p["shape"], p["axis"]
    if ax is None:
        return False
    others = [s for d, s in enumerate(shape) if d != ax % len(shape)]
    return shape[ax % len(shape)] == 0 and np.prod(others, dtype=float) > 1e7


def _csv_bom_or_tab_line(p):
    # the CSV / TSV reader refuses a UTF-8 byte order mark and a line of only tabs
    return p["surface"] == "cli" and bool(p.get("bom") or p.get("tab_line"))


# name, predicate on the case parameters, whether the case may run at all
KNOWN = [
    ("cli-sigfpe-empty-later-axis", _cli_empty_later_axis, True),
    ("f32-subnormal-temperature-nan", _f32_subnormal_temperature, True),
    ("py-zero-width-many-rows-hang", _py_zero_width_many_rows, False),
    ("csv-bom-or-tab-only-line", _csv_bom_or_tab_line, True),
]


class Known:
    def __init__(self, enabled=True):
        self.entries = KNOWN if enabled else []

    def skip(self, case):
        """Marks the case with the first entry it matches; True if it must not run."""
        for name, match, runs in self.entries:
            if match(case.params):
                case.known = name
                return not runs
        return False
