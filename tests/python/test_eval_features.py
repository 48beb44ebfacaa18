#!/usr/bin/python3
"""smx fit-features and smx eval's feature scores on the digits-ood MLP
features against data/digits-ood/mlp/expected_features.json (float64
references written without smx, make_features.py): every metric to 1e-6, the
same numbers through a saved model, and the refusals (exit code, message,
nothing written). Methods this build lacks are skipped with a message.
Usage: test_eval_features.py path/to/smx data/digits-ood"""
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

from script_checks import check, finish

smx, data = sys.argv[1], os.path.join(sys.argv[2], "mlp")
exp = json.load(open(os.path.join(data, "expected_features.json")))


def run(*args):
    p = subprocess.run([smx, *args], capture_output=True, text=True)
    return p.returncode, p.stdout, p.stderr


d = lambda n: os.path.join(data, n)
tmp = tempfile.mkdtemp()
base = ["eval", "--id", d("id_logits.npy"), "--ood", d("ood_logits.npy"), "--id-features", d("id_features.npy"),
        "--ood-features", d("ood_features.npy"), "--scores", "msp,energy", "-q"]
train = ["--train-features", d("train_features.npy"), "--train-labels", d("train_labels.npy"),
         "--weight", d("weight.npy"), "--bias", d("bias.npy"), "--cov", "pinv"]

# which methods this build has: fit-features says so
rc, out, err = run("fit-features", *train, "-o", os.path.join(tmp, "m.smxf"))
check(rc == 0, f"fit-features: {rc} {err}")
have = err.split("scores", 1)[1].split("\n")[0].split() if rc == 0 else []
print("methods built:", have, "; notes:", [line for line in err.splitlines() if "note" in line])
labels = {"mahalanobis": "mahalanobis", "knn": "knn_k50", "vim": "vim_D16", "residual": "residual_D16",
          "react": "react_p90"}


def compare(js, how):
    ood = js["ood_sets"][0]["ood"]
    for m in have:
        lab = labels[m]
        check(lab in ood, f"{how}: {lab} missing from the JSON")
        if lab not in ood:
            continue
        for key, want in exp["ood"][lab].items():
            got = ood[lab][key]
            check(abs(got - want) <= 1e-6, f"{how}: {lab} {key} {got} vs {want}")
    check(set(js["scores"]) == {"msp", "energy_T1"} | {labels[m] for m in have}, f"{how}: scores {js['scores']}")


j1 = os.path.join(tmp, "a.json")
rc, out, err = run(*base, *train, "--json", j1)
check(rc == 0, f"eval with training inputs: {rc} {err}")
if rc == 0:
    js = json.load(open(j1))
    compare(js, "trained in eval")
    if "vim" in have:
        check(abs(js["features"]["vim_alpha"] - exp["params"]["vim_alpha"]) < 1e-6 * exp["params"]["vim_alpha"], "alpha")
    if "react" in have:
        check(abs(js["features"]["react_threshold"] - exp["params"]["react_threshold"]) < 1e-6, "threshold")
j2 = os.path.join(tmp, "b.json")
rc, out, err = run(*base, "--features-model", os.path.join(tmp, "m.smxf"), "--json", j2, "--threads", "3")
check(rc == 0, f"eval --features-model: {rc} {err}")
if rc == 0:
    compare(json.load(open(j2)), "saved model, 3 threads")
    a, b = json.load(open(j1))["ood_sets"], json.load(open(j2))["ood_sets"]
    check(a == b, "the saved model gives the very same metrics")

# the HTML report holds the feature rows
rep = os.path.join(tmp, "r.html")
rc, out, err = run(*base, "--features-model", os.path.join(tmp, "m.smxf"), "--report", rep)
check(rc == 0 and all(labels[m] in open(rep).read() for m in have), f"report: {rc} {err}")


def refused(args, code, words, what):
    out = os.path.join(tmp, "never.json")
    rc, _, err = run(*args, "--json", out)
    check(rc == code and all(w in err for w in words) and not os.path.exists(out),
          f"{what}: exit {rc} (want {code}), message {err.strip()!r}, wrote {os.path.exists(out)}")


# W transposed (F x C, sklearn's coefs_ layout)
Wt = os.path.join(tmp, "wt.npy")
np.save(Wt, np.load(d("weight.npy")).T)
bad = [a if a != d("weight.npy") else Wt for a in train]
refused(base + bad, 2, ["must be transposed"], "W of the wrong shape")
# NaN in the OOD features
nanf = os.path.join(tmp, "nan.npy")
f = np.load(d("ood_features.npy"))
f[7, 3] = np.nan
np.save(nanf, f)
refused([a if a != d("ood_features.npy") else nanf for a in base] + train, 2, ["NaN"], "NaN feature")
# features with other rows than the logits; an empty OOD set
short = os.path.join(tmp, "short.npy")
np.save(short, f[:10])
refused([a if a != d("ood_features.npy") else short for a in base] + train, 2, ["rows"], "row count")
empty_l, empty_f = os.path.join(tmp, "el.npy"), os.path.join(tmp, "ef.npy")
np.save(empty_l, np.zeros((0, 5), np.float32))
np.save(empty_f, np.zeros((0, 32), np.float32))
refused(["eval", "--id", d("id_logits.npy"), "--ood", empty_l, "--id-features", d("id_features.npy"),
         "--ood-features", empty_f] + train, 2, ["no OOD rows"], "empty OOD set")
# missing pieces, a singular covariance without a policy, k > bank
refused(base[:-6] + ["-q"] + train, 1, ["--id-features"], "features without --id-features")
if "mahalanobis" in have:
    refused(base + train[:-2], 4, ["singular", "--cov pinv"], "singular covariance")
if "knn" in have:
    refused(base + train + ["--knn-k", "451"], 2, ["exceeds the 450 training rows"], "k > bank")
# a model file that is truncated or of another version
m = open(os.path.join(tmp, "m.smxf"), "rb").read()
for name, blob in (("truncated", m[:-9]), ("version 2", m[:8] + b"\x02" + m[9:])):
    p = os.path.join(tmp, "bad.smxf")
    open(p, "wb").write(blob)
    refused(base + ["--features-model", p], 2, ["not a feature model of this version"], f"{name} model file")
# a fitting option next to a saved model is refused, not ignored
refused(base + ["--features-model", os.path.join(tmp, "m.smxf"), "--knn-k", "5"], 1, ["--knn-k is a fitting option"],
        "fitting option with a saved model")
# fit-features never leaves a half-written model
rc, _, err = run("fit-features", *bad, "-o", os.path.join(tmp, "no.smxf"))
check(rc == 2 and not os.path.exists(os.path.join(tmp, "no.smxf")), f"fit-features refused: {rc} {err}")
check(not [f for f in os.listdir(tmp) if ".tmp." in f], "no temporary file left")

finish("test_eval_features")
