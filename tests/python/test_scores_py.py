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
import unittest

import numpy as np

import smx

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
# expected.json's metric names -> the keys of smx.ood_metrics, which smx eval's JSON and report use too
# (docs/metrics.md; the same table is in data/digits-ood/PROVENANCE.md)
METRICS = {
    "auroc": "auroc", "aupr_in": "aupr_in_trapz", "aupr_out": "aupr_out_trapz", "fpr95_oodpos": "fpr_oodpos_openood",
    "sk_roc_auc_idpos": "auroc", "sk_ap_in": "ap_in", "sk_ap_out": "ap_out", "fpr95_idpos_exact": "fpr_idpos_exact",
    "fpr95_idpos_energyood": "fpr_idpos_nearest", "fpr95_oodpos_oe": "fpr_oodpos_nearest",
    "n_tied_values": "n_tied_values",
}
CALIB = {"acc": "acc", "ece15": "ece", "mce15": "mce", "adaptive_ece15": "adaptive_ece",
         "classwise_ece15": "classwise_ece", "nll": "nll", "brier": "brier"}


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


if __name__ == "__main__":
    unittest.main()
