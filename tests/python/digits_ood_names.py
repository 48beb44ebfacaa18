"""The names of data/digits-ood/expected.json against the keys smx writes, for the tests that compare them
(test_scores_py.py through the module, test_eval_expected.py through smx eval). expected.json keeps the names of
the fixture's generator (OpenOOD's aupr_in is the trapezoid there); smx writes every metric under one name
(docs/metrics.md). data/digits-ood/PROVENANCE.md has the same table."""

METRICS = {
    "auroc": "auroc", "aupr_in": "aupr_in_trapz", "aupr_out": "aupr_out_trapz", "fpr95_oodpos": "fpr_oodpos_openood",
    "sk_roc_auc_idpos": "auroc", "sk_ap_in": "ap_in", "sk_ap_out": "ap_out", "fpr95_idpos_exact": "fpr_idpos_exact",
    "fpr95_idpos_energyood": "fpr_idpos_nearest", "fpr95_oodpos_oe": "fpr_oodpos_nearest",
    "n_tied_values": "n_tied_values",
}
CALIB = {"acc": "acc", "ece15": "ece", "mce15": "mce", "adaptive_ece15": "adaptive_ece",
         "classwise_ece15": "classwise_ece", "nll": "nll", "brier": "brier"}
