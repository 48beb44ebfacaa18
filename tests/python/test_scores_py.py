"""The scores functions of the Python module smx: smx.score, ood_metrics,
calibration, fit_temperature and kl_templates against the digits-ood
sample's expected.json (data/digits-ood, reference values computed in
float64 with scikit-learn, SciPy and re-implementations of OpenOOD and the
calibration papers' code) and against scikit-learn's roc_auc_score and
average_precision_score on random scores with heavy ties (to 1e-12).

Run from ctest (PYTHONPATH=build/python), or by hand:
  PYTHONPATH=build/python /usr/bin/python3 -m unittest -v tests/python/test_scores_py.py
"""
import json
import os
import re
import subprocess
import tempfile
import unittest

import numpy as np

import smx
from digits_ood_names import CALIB, METRICS

try:
    from sklearn.metrics import average_precision_score, roc_auc_score
except ImportError:
    roc_auc_score = None

DATA = os.environ.get("SMX_DIGITS_OOD",
                      os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "data", "digits-ood"))
TOL = 1e-6   # expected.json is float64 from the float32 files; as tests/python/test_eval_expected.py
RNG = np.random.default_rng(5)

# expected.json's score names -> smx.score arguments
SCORES = {
    "msp": dict(kind="msp", double=True), "mls": dict(kind="max_logit"),
    "energy_T1": dict(kind="energy", temperature=1.0, double=True), "neg_entropy": dict(kind="neg_entropy"),
    "margin_prob": dict(kind="margin_prob"), "margin_logit": dict(kind="margin_logit"),
    "gen_g0.1_M100": dict(kind="gen", gen_gamma=0.1, gen_m=100), "odin_T1000_noperturb": dict(kind="odin"),
    "kl_matching_valtemplates": dict(kind="kl_matching"), "nonuniformity_L1": dict(kind="nonuniformity"),
}


@unittest.skipUnless(os.path.exists(os.path.join(DATA, "expected.json")), "no digits-ood sample")
class DigitsOOD(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        load = lambda n: np.load(os.path.join(DATA, n + ".npy"))
        cls.id, cls.ood, cls.val = load("id_logits"), load("ood_logits"), load("val_logits")
        cls.id_labels, cls.val_labels = load("id_labels"), load("val_labels")
        with open(os.path.join(DATA, "expected.json")) as f:
            cls.exp = json.load(f)

    def test_templates(self):
        t = smx.kl_templates(self.val)
        np.testing.assert_allclose(t, np.array(self.exp["kl_matching_templates"]), rtol=0, atol=TOL)

    def test_ood_metrics(self):
        templates = smx.kl_templates(self.val)
        for name, kw in SCORES.items():
            kw = dict(kw)
            if kw["kind"] == "kl_matching":
                kw["templates"] = templates
            a, b = smx.score(self.id, **kw), smx.score(self.ood, **kw)
            self.assertEqual(a.dtype, np.float64)
            self.assertEqual(a.shape, (self.id.shape[0],))
            got = smx.ood_metrics(a, b)
            for ekey, value in self.exp["ood"][name].items():
                self.assertAlmostEqual(got[METRICS[ekey]], value, delta=TOL, msg="%s.%s" % (name, ekey))

    def check_calibration(self, block, T):
        got = smx.calibration(self.id, self.id_labels, bins=15, temperature=T)
        exp = self.exp[block]
        for ekey, key in CALIB.items():
            self.assertAlmostEqual(got[key], exp[ekey], delta=TOL, msg="%s.%s" % (block, ekey))
        full = got["bin_count"] > 0
        rows = np.stack([got["bin_lo"][full], got["bin_hi"][full], got["bin_count"][full], got["bin_conf"][full],
                         got["bin_acc"][full]], axis=1)
        np.testing.assert_allclose(rows, np.array(exp["reliability_bins_lo_hi_n_conf_acc"]), rtol=0, atol=TOL)
        self.assertTrue(np.all(np.isnan(got["bin_conf"][~full])))
        self.assertEqual(got["n"], self.id.shape[0])

    def test_calibration_and_temperature(self):
        self.check_calibration("calibration_test", 1.0)
        T, info = smx.fit_temperature(self.val, self.val_labels, return_info=True)
        e = self.exp["temperature"]
        self.assertAlmostEqual(T, e["T_star_val_nll"], delta=TOL)
        self.assertAlmostEqual(T, e["T_scipy_bounded"], delta=TOL)
        self.assertAlmostEqual(info["nll_at_1"], e["val_nll_T1"], delta=TOL)
        self.assertAlmostEqual(info["nll_at_t"], e["val_nll_Tstar"], delta=TOL)
        self.assertEqual(info["outcome"], "optimum")
        self.assertEqual(smx.fit_temperature(self.val, self.val_labels), T)
        self.check_calibration("calibration_test_after_ts", T)

    def test_dtypes_give_the_float32_result(self):
        # the C API is float32: float64 logits that are float32 values give the same numbers
        np.testing.assert_array_equal(smx.score(self.id.astype(np.float64), kind="energy"),
                                      smx.score(self.id, kind="energy"))
        self.assertEqual(smx.fit_temperature(self.val.astype(np.float64), self.val_labels.astype(np.int64)),
                         smx.fit_temperature(self.val, self.val_labels))


@unittest.skipIf(roc_auc_score is None, "scikit-learn is not installed")
class VersusSklearn(unittest.TestCase):
    def test_heavy_ties(self):
        for n_id, n_ood, levels in ((1000, 700, 7), (50, 3000, 40), (1, 1, 1), (300, 300, 1000)):
            a = np.round(RNG.standard_normal(n_id) + 0.7, 1) if levels > 100 else RNG.integers(0, levels, n_id) + 0.5
            b = np.round(RNG.standard_normal(n_ood), 1) if levels > 100 else RNG.integers(0, levels, n_ood) * 1.0
            for dt in (np.float64, np.float32):
                m = smx.ood_metrics(a.astype(dt), b.astype(dt))
                y = np.r_[np.ones(n_id), np.zeros(n_ood)]
                s = np.r_[a, b].astype(dt).astype(np.float64)
                self.assertAlmostEqual(m["auroc"], roc_auc_score(y, s), delta=1e-12)
                self.assertAlmostEqual(m["ap_in"], average_precision_score(y, s), delta=1e-12)
                self.assertAlmostEqual(m["ap_out"], average_precision_score(1 - y, -s), delta=1e-12)
                self.assertEqual(m["n_id"], n_id)
                self.assertEqual(m["n_ood"], n_ood)
                self.assertEqual(m["n_tied_values"], n_id + n_ood - len(np.unique(s)))

    def test_fpr_at_tpr(self):
        a, b = RNG.standard_normal(2000) + 1.5, RNG.standard_normal(1000)
        m = smx.ood_metrics(a, b, tpr=0.9)
        thr = np.sort(a)[::-1][int(np.ceil(0.9 * len(a))) - 1]   # the first threshold accepting >= 90% of ID
        self.assertEqual(m["thr_idpos_exact"], thr)
        self.assertEqual(m["fpr_idpos_exact"], np.mean(b >= thr))


class Arguments(unittest.TestCase):
    def test_errors(self):
        x = RNG.standard_normal((10, 4)).astype(np.float32)
        y = np.arange(10) % 4
        with self.assertRaisesRegex(ValueError, "unknown score kind"):
            smx.score(x, kind="nope")
        with self.assertRaises(TypeError):
            smx.score(x, kind=3)
        with self.assertRaisesRegex(ValueError, "templates"):
            smx.score(x, kind="kl_matching")
        with self.assertRaises(ValueError):
            smx.score(x, kind="kl_matching", templates=np.eye(3))
        with self.assertRaises(ValueError):
            smx.score(x, kind="energy", temperature=-1.0)
        with self.assertRaises(ValueError):
            smx.score(x, kind="gen", gen_gamma=2.0)
        with self.assertRaises(TypeError):
            smx.score(x.astype(np.int64))
        with self.assertRaisesRegex(ValueError, "NaN"):
            smx.ood_metrics(np.array([1.0, np.nan]), np.array([0.0]))
        with self.assertRaises(ValueError):
            smx.ood_metrics(np.array([]), np.array([0.0]))
        with self.assertRaises(TypeError):
            smx.ood_metrics(np.array([1, 2]), np.array([0.0]))
        with self.assertRaises(ValueError):
            smx.ood_metrics(np.array([1.0]), np.array([0.0]), tpr=0.0)
        with self.assertRaisesRegex(ValueError, "label 4"):
            smx.calibration(x, np.r_[y[:-1], 4])
        # labels are int64 end to end: 2^32 is refused as a class, never wrapped to 0
        for wide in (2**32, 2**62, -2**63):
            with self.assertRaisesRegex(ValueError, "label %d " % wide):
                smx.calibration(x, np.r_[y[:-1], wide].astype(np.int64))
            with self.assertRaisesRegex(ValueError, "label %d " % wide):
                smx.fit_temperature(x, np.r_[y[:-1], wide].astype(np.int64))
        with self.assertRaises(ValueError):
            smx.calibration(x, y[:5])
        with self.assertRaises(ValueError):
            smx.calibration(x, y, bins=0)
        with self.assertRaises(TypeError):
            smx.calibration(x, y.astype(np.float32))
        bad = x.copy()
        bad[3, 1] = np.nan
        with self.assertRaises(ValueError):
            smx.calibration(bad, y)
        with self.assertRaises(ValueError):
            smx.fit_temperature(bad, y)

    def test_no_optimum(self):
        x = RNG.standard_normal((20, 5)).astype(np.float32)
        with self.assertRaises(smx.NoOptimumError) as c:       # every sample right: T -> 0
            smx.fit_temperature(x, x.argmax(-1))
        self.assertEqual(c.exception.outcome, "to_zero")
        self.assertIsInstance(c.exception, ValueError)
        with self.assertRaises(smx.NoOptimumError) as c:       # true class the least likely: T -> inf
            smx.fit_temperature(x, x.argmin(-1))
        self.assertEqual(c.exception.outcome, "to_infinity")
        self.assertIn("nll_at_1", c.exception.info)

    def test_special_rows(self):
        x = np.array([[1.0, 2.0, 3.0], [np.nan, 0, 0], [-np.inf] * 3], np.float32)
        msp = smx.score(x, kind="msp")
        self.assertTrue(np.isnan(msp[1]) and np.isnan(msp[2]))
        self.assertEqual(smx.score(x, kind="max_logit")[2], -np.inf)
        self.assertAlmostEqual(msp[0], 1 / (1 + np.exp(-1) + np.exp(-2)), delta=16 * 2.0 ** -24)
        self.assertEqual(smx.score(x[0], kind="max_logit"), 3.0)


def smx_cli():
    """The smx command next to the module under test (build/python -> build/programs/smx), or $SMX_CLI."""
    p = os.environ.get("SMX_CLI")
    if not p:
        build = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(smx.__file__))))
        p = os.path.join(build, "programs", "smx")
    return p if os.access(p, os.X_OK) else None


# smx eval's score labels -> smx.score arguments (smx eval's defaults)
EVAL_SCORES = {
    "msp": dict(kind="msp"), "max_logit": dict(kind="max_logit"), "energy_T1": dict(kind="energy"),
    "neg_entropy": dict(kind="neg_entropy"), "margin_prob": dict(kind="margin_prob"),
    "margin_logit": dict(kind="margin_logit"), "gen_g0.1_M100": dict(kind="gen"), "odin_T1000": dict(kind="odin"),
    "kl_matching": dict(kind="kl_matching"), "nonuniformity": dict(kind="nonuniformity"),
}


def report_tables(html):
    """Each <table> of the report: (caption, header keys, rows of (label, {key: (text, data-value)}))."""
    out = []
    for t in re.findall(r'<table class="smx-table">(.*?)</table>', html, re.S):
        cap = re.search(r"<caption>(.*?)</caption>", t, re.S)
        heads = [re.sub(r"<wbr>", "", h) for h in re.findall(r"<th>(.*?)</th>", t)]
        rows = []
        for tr in re.findall(r"<tr>(.*?)</tr>", t.split("<tbody>")[1], re.S):
            cells = re.findall(r'<td( class="[^"]*")?(?: data-value="([^"]*)")?>(.*?)</td>', tr)
            label = cells[0][2]
            vals = {heads[j]: (re.sub(r"<span.*?</span>", "", c[2]), float(c[1]) if c[1] else None,
                               "best" in c[0]) for j, c in enumerate(cells) if j}
            rows.append((label, vals))
        out.append((cap.group(1) if cap else "", heads, rows))
    return out


def svg_figures(html, kind):
    return re.findall(r'<svg [^>]*data-fig="%s".*?</svg>' % kind, html, re.S)


def attrs(tag):
    return {k: v for k, v in re.findall(r'([\w-]+)="([^"]*)"', tag)}


@unittest.skipUnless(os.path.exists(os.path.join(DATA, "expected.json")), "no digits-ood sample")
@unittest.skipIf(smx_cli() is None, "no smx command next to the module (set SMX_CLI)")
class SameKeysEverywhere(unittest.TestCase):
    """One name, one meaning: on the digits-ood sample, smx.ood_metrics / smx.calibration /
    smx.fit_temperature in Python, smx eval --json and the tables of smx eval --report give the same
    numbers under the same keys; and the report's reliability bars are as tall as the bins' accuracy."""

    @classmethod
    def setUpClass(cls):
        f = lambda n: os.path.join(DATA, n)
        cls.tmp = tempfile.TemporaryDirectory()
        js, rep = os.path.join(cls.tmp.name, "e.json"), os.path.join(cls.tmp.name, "r.html")
        subprocess.run([smx_cli(), "eval", "--id", f("id_logits.npy"), "--ood", f("ood_logits.npy"),
                        "--labels", f("id_labels.npy"), "--val", f("val_logits.npy"),
                        "--val-labels", f("val_labels.npy"), "--json", js, "--report", rep, "-q"],
                       check=True, stdout=subprocess.DEVNULL)
        with open(js) as fh:
            cls.json = json.load(fh)
        with open(rep, encoding="utf-8") as fh:
            cls.html = fh.read()
        load = lambda n: np.load(f(n + ".npy"))
        cls.id, cls.ood, cls.val = load("id_logits"), load("ood_logits"), load("val_logits")
        cls.id_labels, cls.val_labels = load("id_labels"), load("val_labels")
        templates = smx.kl_templates(cls.val)
        cls.py = {}
        for label, kw in EVAL_SCORES.items():
            kw = dict(kw, templates=templates) if kw["kind"] == "kl_matching" else kw
            cls.py[label] = smx.ood_metrics(smx.score(cls.id, **kw), smx.score(cls.ood, **kw))
        cls.T, cls.info = smx.fit_temperature(cls.val, cls.val_labels, return_info=True)
        cls.cal = smx.calibration(cls.id, cls.id_labels, bins=15)
        cls.cal_ts = smx.calibration(cls.id, cls.id_labels, bins=15, temperature=cls.T)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_ood_metrics_python_json(self):
        got = self.json["ood_sets"][0]["ood"]
        self.assertEqual(sorted(got), sorted(self.py))
        for label, py in self.py.items():
            self.assertEqual(sorted(got[label]), sorted(py), label)   # the same keys ...
            for key, v in py.items():                                 # ... the same numbers
                self.assertEqual(got[label][key], v, "%s.%s" % (label, key))
        # the AP is scikit-learn's step sum and the trapezoid is OpenOOD's, under their own names
        self.assertAlmostEqual(self.py["msp"]["ap_in"], 0.8976680426282099, delta=1e-12)
        self.assertAlmostEqual(self.py["msp"]["aupr_in_trapz"], 0.8975415644085545, delta=1e-12)
        for gone in ("aupr_in", "aupr_out", "fpr_idpos", "fpr_oodpos", "sk_ap_in", "fpr95_oodpos"):
            self.assertNotIn(gone, self.py["msp"])

    def test_ood_metrics_report(self):
        tables = report_tables(self.html)
        ood = [t for t in tables if t[0].startswith("OOD metrics")]
        self.assertEqual(len(ood), 1)
        _, heads, rows = ood[0]
        self.assertEqual(heads[0], "score")
        self.assertGreaterEqual(len(heads), 6)
        self.assertEqual([r[0] for r in rows], list(self.json["scores"]))
        for label, cells in rows:
            for key, (text, value, _) in cells.items():
                self.assertIn(key, self.py[label], "report column %s is not a key of smx.ood_metrics" % key)
                self.assertEqual(value, self.py[label][key], "%s.%s" % (label, key))
                self.assertEqual(text, "%.4f" % self.py[label][key], "%s.%s" % (label, key))
        # the best value of each column is marked: the largest AUROC / AP / AUPR, the smallest FPR
        for key in heads[1:]:
            vals = [cells[key][1] for _, cells in rows]
            best = min(vals) if key.startswith("fpr") else max(vals)
            for label, cells in rows:
                self.assertEqual(cells[key][2], cells[key][1] == best, "%s.%s marked" % (label, key))

    def test_calibration_and_temperature(self):
        t = self.json["temperature"]
        self.assertEqual(t["T"], self.T)
        for key, v in self.info.items():
            self.assertEqual(t[key], v, "temperature.%s" % key)
        for block, py in (("calibration", self.cal), ("calibration_after_ts", self.cal_ts)):
            got = self.json[block]
            for key, v in py.items():
                if isinstance(v, np.ndarray):
                    np.testing.assert_array_equal(np.array(got[key], dtype=np.float64), v, "%s.%s" % (block, key))
                else:
                    self.assertEqual(got[key], v, "%s.%s" % (block, key))
        cal = [t for t in report_tables(self.html) if t[0].startswith("Calibration")]
        self.assertEqual(len(cal), 1)
        _, heads, rows = cal[0]
        self.assertEqual(len(rows), 2)
        for (_, cells), py in zip(rows, (self.cal, self.cal_ts)):
            for key, (text, value, _) in cells.items():
                self.assertEqual(value, py[key], key)
                self.assertEqual(text, "%.4f" % py[key], key)

    def test_reliability_bars_read_back(self):
        for kind, py in (("reliability-before", self.cal), ("reliability-after", self.cal_ts)):
            figs = svg_figures(self.html, kind)
            self.assertEqual(len(figs), 1, kind)
            svg = figs[0]
            area = attrs(re.search(r'<rect class="plot-area"[^>]*>', svg).group(0))
            ax, ay, aw, ah = (float(area[k]) for k in ("x", "y", "width", "height"))
            bars = {int(attrs(m)["data-bin"]): attrs(m) for m in re.findall(r'<rect class="acc[^>]*>', svg)}
            gaps = {int(attrs(m)["data-bin"]): attrs(m) for m in re.findall(r'<rect class="gap"[^>]*>', svg)}
            full = np.flatnonzero(py["bin_count"] > 0)
            self.assertEqual(sorted(bars), list(full), kind)
            tol = 0.06 / ah   # coordinates are written with one decimal
            for m in full:
                a, acc, conf = bars[m], py["bin_acc"][m], py["bin_conf"][m]
                x, y, w, h = (float(a[k]) for k in ("x", "y", "width", "height"))
                self.assertAlmostEqual(h / ah, acc, delta=2 * tol, msg="%s bin %d: bar height" % (kind, m))
                self.assertAlmostEqual(y + h, ay + ah, delta=0.06, msg="%s bin %d: bar on 0" % (kind, m))
                self.assertGreaterEqual(x, ax + py["bin_lo"][m] * aw - 0.06)
                self.assertLessEqual(x + w, ax + py["bin_hi"][m] * aw + 0.06)
                self.assertEqual("sparse" in a["class"], py["bin_count"][m] < 10, "%s bin %d" % (kind, m))
                if abs(acc - conf) * ah < 0.05:
                    continue
                g = gaps[m]
                gx, gy, gw, gh = (float(g[k]) for k in ("x", "y", "width", "height"))
                self.assertTrue(gx >= x + w - 0.06 or gx + gw <= x + 0.06, "%s bin %d: gap covers the bar" % (kind, m))
                self.assertAlmostEqual((ay + ah - gy) / ah, max(acc, conf), delta=2 * tol)
                self.assertAlmostEqual((ay + ah - gy - gh) / ah, min(acc, conf), delta=2 * tol)
        # the bin of the issue: (0.6, 0.667], accuracy 1 at confidence 0.643, drawn full height
        m = 9
        self.assertEqual(self.cal["bin_acc"][m], 1.0)
        self.assertAlmostEqual(self.cal["bin_conf"][m], 0.643, delta=5e-4)
        a = attrs(re.search(r'<rect class="acc[^"]*" data-bin="9"[^>]*>', svg_figures(self.html, "reliability-before")[0]).group(0))
        self.assertAlmostEqual(float(a["height"]), ah, delta=0.06)


if __name__ == "__main__":
    unittest.main()
