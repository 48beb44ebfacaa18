#!/usr/bin/python3
"""smx eval --json on the digits-ood sample against every figure of its expected.json (1e-6 absolute).

Usage: test_eval_expected.py SMX_BINARY DATA_DIR
"""
import json
import os
import subprocess
import sys
import tempfile

from digits_ood_names import CALIB, METRICS

TOL = 1e-6
# expected.json score name -> smx eval's label
SCORES = {
    "msp": "msp", "mls": "max_logit", "energy_T1": "energy_T1", "neg_entropy": "neg_entropy",
    "margin_prob": "margin_prob", "margin_logit": "margin_logit", "gen_g0.1_M100": "gen_g0.1_M100",
    "odin_T1000_noperturb": "odin_T1000", "kl_matching_valtemplates": "kl_matching",
    "nonuniformity_L1": "nonuniformity",
}
TEMPERATURE = {"T_star_val_nll": "T", "T_scipy_bounded": "T", "val_nll_T1": "nll_at_1", "val_nll_Tstar": "nll_at_t"}


def main():
    smx, data = sys.argv[1], sys.argv[2]
    with open(os.path.join(data, "expected.json")) as fh:
        exp = json.load(fh)
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "eval.json")
        f = lambda n: os.path.join(data, n)
        subprocess.run([smx, "eval", "--id", f("id_logits.npy"), "--ood", f("ood_logits.npy"),
                        "--labels", f("id_labels.npy"), "--val", f("val_logits.npy"),
                        "--val-labels", f("val_labels.npy"), "--json", out, "-q"],
                       check=True, stdout=subprocess.DEVNULL)
        with open(out) as fh:
            got = json.load(fh)
    fails, checked, worst = [], 0, 0.0

    def cmp(where, e, g):
        nonlocal checked, worst
        checked += 1
        if g is not None:
            worst = max(worst, abs(e - g))
        if g is None or abs(e - g) > TOL:
            fails.append(f"{where}: expected {e!r}, got {g!r}")

    ood = got["ood_sets"][0]["ood"]
    for ename, gname in SCORES.items():
        for key, e in exp["ood"][ename].items():
            cmp(f"ood.{ename}.{key}", e, ood[gname][METRICS[key]])
    for i, row in enumerate(exp["kl_matching_templates"]):
        for j, e in enumerate(row):
            cmp(f"templates[{i}][{j}]", e, got["kl_matching_templates"][i][j])
    for ekey, key in TEMPERATURE.items():
        cmp(f"temperature.{ekey}", exp["temperature"][ekey], got["temperature"][key])
    for eblock, block in (("calibration_test", "calibration"), ("calibration_test_after_ts", "calibration_after_ts")):
        for ekey, key in CALIB.items():
            cmp(f"{block}.{key}", exp[eblock][ekey], got[block][key])
        g = got[block]
        full = [[g["bin_lo"][i], g["bin_hi"][i], g["bin_count"][i], g["bin_conf"][i], g["bin_acc"][i]]
                for i in range(g["bins"]) if g["bin_count"][i] > 0]
        e = exp[eblock]["reliability_bins_lo_hi_n_conf_acc"]
        if len(full) != len(e):
            fails.append(f"{block}: {len(full)} non-empty bins, expected {len(e)}")
            continue
        for b, (eb, gb) in enumerate(zip(e, full)):
            for c, (ev, gv) in enumerate(zip(eb, gb)):
                cmp(f"{block}.bins[{b}][{c}]", ev, gv)
    for msg in fails:
        print("FAIL", msg)
    print(f"test_eval_expected: {checked - len(fails)} passed, {len(fails)} failed; largest difference {worst:.3g}")
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
