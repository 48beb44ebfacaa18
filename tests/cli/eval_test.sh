#!/bin/bash
# smx score and smx eval: exact stdout, stderr and exit codes on the digits-ood
# sample and on bad invocations; no output file left behind on error; the
# --json figures and smx score's output checked against NumPy/SciPy.
# Usage: tests/cli/eval_test.sh SMX_BINARY DATA_DIR(data/digits-ood)
SMX=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
. "$(dirname "$0")/lib.sh"   # before the cd: $0 may be relative
cd "$2" || exit 1
PY=/usr/bin/python3

TABLE='ID: id_logits.npy (271 rows, 5 classes)

OOD: ood_logits.npy (896 rows)   higher score = more in-distribution; FPR at TPR 0.95
score                     auroc    ap_in   ap_out aupr_in_trapz aupr_out_trapz fpr_idpos_exact fpr_oodpos_openood
msp                      0.9399   0.8977   0.9753        0.8975         0.9753          0.4520             0.1919
max_logit                0.9504   0.9128   0.9800        0.9127         0.9799          0.3605             0.1734
energy_T1                0.9533   0.9122   0.9810        0.9121         0.9810          0.2768             0.1845
neg_entropy              0.9511   0.9102   0.9803        0.9101         0.9803          0.3549             0.1771
margin_prob              0.9266   0.8846   0.9647        0.8845         0.9646          0.5748             0.2103
margin_logit             0.9175   0.8674   0.9603        0.8672         0.9602          0.6161             0.2472
gen_g0.1_M100            0.9536   0.9138   0.9811        0.9137         0.9811          0.2969             0.1734
odin_T1000               0.9504   0.9128   0.9799        0.9127         0.9799          0.3605             0.1734
kl_matching              0.9407   0.8676   0.9775        0.8674         0.9775          0.3951             0.2066
nonuniformity            0.9469   0.9026   0.9789        0.9025         0.9788          0.3739             0.1919
ap_*: average precision as scikit-learn; aupr_*_trapz: trapezoid as OpenOOD v1.5. fpr_idpos_exact:
share of OOD accepted when the ID are positive (papers); fpr_oodpos_openood: share of ID flagged when
the OOD are positive (OpenOOD v1.5). Every key: docs/metrics.md.

temperature scaling on val_logits.npy: T = 0.143236 (validation NLL 0.2424 at T = 1, 0.0229 at T)

calibration of id_logits.npy against id_labels.npy (15 equal-width bins (lo, hi])
                    acc      nll    brier      ece      mce  adaptive_ece classwise_ece
T = 1            0.9668   0.2756   0.1022   0.1794   0.3570        0.1806        0.0765
T = 0.143236     0.9668   0.1302   0.0499   0.0223   0.5283        0.0189        0.0126'
ALL=(--id id_logits.npy --ood ood_logits.npy --labels id_labels.npy --val val_logits.npy --val-labels val_labels.npy)
expect "eval table" 0 "$TABLE" "" -- eval "${ALL[@]}"
expect "eval json" 0 "*" "" -- eval "${ALL[@]}" --json "$tmp/e.json" -q
check "eval json parses" $PY -c "import json,sys; d=json.load(open('$tmp/e.json')); sys.exit(0 if d['ood_sets'][0]['ood']['msp']['fpr_oodpos_openood'] > 0.19 else 1)"
check "no temporary json left" test -z "$(ls -A "$tmp" | grep '\.tmp\.')"
# --json - : stdout is the JSON alone (the table goes to stderr, or nowhere with -q),
# so that `smx eval ... --json - | jq` works; two outputs on stdout are refused
"$SMX" eval "${ALL[@]}" --json - > "$tmp/j.out" 2> "$tmp/j.err"
check "json - exit 0" test $? = 0
check "json - : stdout is JSON" $PY -c "import json,sys; d=json.load(open('$tmp/j.out')); sys.exit(0 if d['calibration']['ece'] > 0.17 else 1)"
check "json - : the table on stderr" test "$(cat "$tmp/j.err")" = "$TABLE"
expect "json - quiet: stderr empty" 0 "*" "" -- eval "${ALL[@]}" --json - -q
check "json - quiet: stdout is JSON" $PY -c "import json; json.load(open('$tmp/out'))"
expect "report - : stdout is the page alone" 0 "*" "*" -- eval "${ALL[@]}" --scores msp --report - -q
check "report - : starts with the doctype" test "$(head -c 15 "$tmp/out")" = "<!DOCTYPE html>"
check "report - : ends with the page" test "$(tail -n 1 "$tmp/out")" = "</html>"
expect "json and report both on stdout" 1 "" "smx: --json - and --report - would both write to standard output; send one to a file
smx: try 'smx eval --help'" -- eval "${ALL[@]}" --json - --report -

expect "eval report" 0 "$TABLE" "smx: report written to $tmp/r.html" -- eval "${ALL[@]}" --report "$tmp/r.html"
expect "eval report, quiet" 0 "$TABLE" "" -- eval "${ALL[@]}" --report "$tmp/r.html" -q
# a relative path is named absolute, so the line says where the page is from anywhere
here=$PWD
cd "$tmp" || exit 1
expect "eval report, relative path" 0 "*" "smx: report written to $(pwd -P)/r_rel.html" -- eval --id "$here/id_logits.npy" \
  --ood "$here/ood_logits.npy" --scores msp --report r_rel.html
cd "$here" || exit 1
check "report has the figures" test "$(grep -c '<svg' "$tmp/r.html")" -ge 20
check "report has the calibration table" grep -q "0.1794" "$tmp/r.html"
check "report names the ODIN caveat" grep -q "without input perturbation" "$tmp/r.html"
# the first screen says whether the model is calibrated: T = 0.143 sharpens an under-confident model
check "report: calibration verdict" grep -q '<div class="verdict" data-verdict="under-confident"><p><b>Calibration: under-confident.</b>' "$tmp/r.html"
check "report: verdict with ECE before, after and T" grep -qz 'ECE 0.1794 at T = 1.</p>.<p>After temperature scaling with the fitted T = 0.1432[^<]*ECE 0.0223' "$tmp/r.html"
check "report: verdict before the OOD table" test "$(grep -o 'class="verdict"\|<table' "$tmp/r.html" | head -1)" = 'class="verdict"'
# directions: FPR, NLL, ECE are lower-is-better, marked so; no triangle in a best cell
check "report: auroc higher, fpr lower is better" grep -q '<tr class="dir"><td></td><td title="higher is better">▲</td><td title="higher is better">▲</td><td title="higher is better">▲</td><td title="higher is better">▲</td><td title="higher is better">▲</td><td title="lower is better">▼</td><td title="lower is better">▼</td></tr>' "$tmp/r.html"
check "report: nll, brier and the eces lower is better" grep -q '<tr class="dir"><td></td><td></td><td title="lower is better">▼</td><td title="lower is better">▼</td><td title="lower is better">▼</td><td title="lower is better">▼</td><td title="lower is better">▼</td><td title="lower is better">▼</td></tr>' "$tmp/r.html"
check "report: no triangle inside a cell" test -z "$(grep -o '<td[^<]*>[^<]*<span class="mark">' "$tmp/r.html")"
# the MCE after scaling comes from a bin of one sample: said next to it
check "report: MCE of a sparse bin" grep -q '0.5283<span class="cell-note">from a bin of 1 sample: noise</span>' "$tmp/r.html"
check "report: the MCE at T = 1 (a bin of 13) has no note" test "$(grep -o 'class="cell-note"' "$tmp/r.html" | wc -l)" = 1
check "report: the ROC overlay has a log-FPR axis" grep -q '<g class="axes" data-xscale="log">' "$tmp/r.html"
expect "report dir missing" 3 "*" "*" -- eval "${ALL[@]}" --scores msp --report "$tmp/no/dir/r.html"
check "report error names the file" grep -q "^smx: $tmp/no/dir/r.html" "$tmp/err"

# several OOD sets, a subset of scores, another TPR; without --val no kl_matching by default
expect "two ood sets" 0 "ID: id_logits.npy (271 rows, 5 classes)

OOD: ood_logits.npy (896 rows)   higher score = more in-distribution; FPR at TPR 0.9
score                     auroc    ap_in   ap_out aupr_in_trapz aupr_out_trapz fpr_idpos_exact fpr_oodpos_openood
msp                      0.9399   0.8977   0.9753        0.8975         0.9753          0.1931             0.1365
energy_T1                0.9533   0.9122   0.9810        0.9121         0.9810          0.1395             0.1476

OOD: val_logits.npy (180 rows)   higher score = more in-distribution; FPR at TPR 0.9
score                     auroc    ap_in   ap_out aupr_in_trapz aupr_out_trapz fpr_idpos_exact fpr_oodpos_openood
msp                      0.4758   0.5954   0.3831        0.5934         0.3788          0.9167             0.9004
energy_T1                0.4699   0.6088   0.3758        0.6073         0.3716          0.9389             0.8893
ap_*: average precision as scikit-learn; aupr_*_trapz: trapezoid as OpenOOD v1.5. fpr_idpos_exact:
share of OOD accepted when the ID are positive (papers); fpr_oodpos_openood: share of ID flagged when
the OOD are positive (OpenOOD v1.5). Every key: docs/metrics.md." "" -- \
  eval --id id_logits.npy --ood ood_logits.npy --ood val_logits.npy --scores msp,ebo --tpr 0.9

# ODIN from perturbed-input logits: here 2x the logits, checked against SciPy
$PY -c "
import numpy as np
np.save('$tmp/pid.npy', 2 * np.load('id_logits.npy')); np.save('$tmp/pood.npy', 2 * np.load('ood_logits.npy'))"
expect "odin perturbed" 0 "*" "" -- eval --id id_logits.npy --ood ood_logits.npy --scores odin \
  --perturbed-id "$tmp/pid.npy" --perturbed-ood "$tmp/pood.npy" --json "$tmp/p.json"
check "odin perturbed AUROC" $PY -c "
import json, sys, numpy as np
from scipy.special import softmax
from sklearn.metrics import roc_auc_score
a = softmax(2 * np.load('id_logits.npy').astype(float) / 1000, 1).max(1)
b = softmax(2 * np.load('ood_logits.npy').astype(float) / 1000, 1).max(1)
ref = roc_auc_score(np.r_[np.ones(len(a)), np.zeros(len(b))], np.r_[a, b])
got = json.load(open('$tmp/p.json'))['ood_sets'][0]['ood']['odin_T1000_perturbed']['auroc']
sys.exit(0 if abs(got - ref) < 1e-12 else 1)"
expect "odin perturbed rows" 2 "" "smx: val_logits.npy: 180 x 5 logits, but id_logits.npy (which it perturbs) is 271 x 5" -- \
  eval --id id_logits.npy --ood ood_logits.npy --scores odin --perturbed-id val_logits.npy --perturbed-ood ood_logits.npy
expect "odin perturbed pairs" 1 "" "smx: ODIN with perturbed inputs needs --perturbed-id and one --perturbed-ood per --ood
smx: try 'smx eval --help'" -- eval --id id_logits.npy --ood ood_logits.npy --perturbed-id id_logits.npy

# all-correct validation set: reported as no finite optimum, not a bound
$PY -c "
import numpy as np
z=np.load('val_logits.npy'); np.save('$tmp/vl_right.npy', z.argmax(1).astype(np.int32))
np.save('$tmp/nan.npy', np.array([[1,2],[np.nan,0]],np.float32))
np.save('$tmp/one.npy', np.zeros((4,1),np.float32)); np.save('$tmp/lab7.npy', np.array([0,1,7]+[0]*268,np.int64))
np.save('$tmp/lab_half.npy', np.array([0.5]*271))"
expect "all correct" 0 "*" "smx: note: val_logits.npy: no finite temperature minimises the validation NLL (every sample is classified correctly: T -> 0); the calibration after scaling is left out" -- \
  eval --id id_logits.npy --ood ood_logits.npy --labels id_labels.npy --val val_logits.npy --val-labels "$tmp/vl_right.npy" --scores msp
check "all correct: said in the table" grep -q "no finite optimum (all validation samples correct: NLL falls as T -> 0)" "$tmp/out"
check "all correct: no after-TS row" test "$(grep -c '^T = ' "$tmp/out")" = 1

# errors: usage (1), input (2), each naming the file
expect "no id" 1 "" "smx: eval needs --id ID_LOGITS.npy
smx: try 'smx eval --help'" -- eval --ood ood_logits.npy
expect "no ood" 1 "" "smx: eval needs --ood OOD_LOGITS.npy (or --labels for calibration only)
smx: try 'smx eval --help'" -- eval --id id_logits.npy
expect "bad score" 1 "" "smx: unknown score 'foo' in --scores (one of msp, max_logit, energy, neg_entropy, margin_prob, margin_logit, gen, odin, kl_matching, nonuniformity)
smx: try 'smx eval --help'" -- eval --id id_logits.npy --ood ood_logits.npy --scores msp,foo
expect "kl needs val" 1 "" "smx: kl_matching needs --val VAL.npy or --templates-from REF.npy
smx: try 'smx eval --help'" -- eval --id id_logits.npy --ood ood_logits.npy --scores kl_matching
expect "val-labels alone" 1 "" "smx: --val-labels needs --val VAL_LOGITS.npy
smx: try 'smx eval --help'" -- eval --id id_logits.npy --ood ood_logits.npy --val-labels val_labels.npy
expect "bad tpr" 1 "" "smx: --tpr must be a number in (0, 1], not '1.5'
smx: try 'smx eval --help'" -- eval --id id_logits.npy --ood ood_logits.npy --tpr 1.5
expect "bad gamma" 1 "" "smx: --gen-gamma must be a number in (0, 1], not '2'
smx: try 'smx eval --help'" -- eval --id id_logits.npy --ood ood_logits.npy --gen-gamma 2
expect "missing file" 2 "" "*" -- eval --id id_logits.npy --ood "$tmp/missing.npy"
check "missing file named" grep -q "^smx: $tmp/missing.npy: " "$tmp/err"
expect "labels count" 2 "" "smx: val_labels.npy: 180 labels for the 271 rows of id_logits.npy" -- \
  eval --id id_logits.npy --ood ood_logits.npy --labels val_labels.npy
expect "label out of range" 2 "" "smx: $tmp/lab7.npy: label 7 at row 2 is not a class in [0, 5) of id_logits.npy" -- \
  eval --id id_logits.npy --ood ood_logits.npy --labels "$tmp/lab7.npy"
expect "fractional label" 2 "" "smx: $tmp/lab_half.npy: label 0.5 at row 0 is not a class in [0, 5) of id_logits.npy" -- \
  eval --id id_logits.npy --ood ood_logits.npy --labels "$tmp/lab_half.npy"
expect "class mismatch" 2 "" "smx: $tmp/one.npy: 1 classes, but id_logits.npy has 5" -- \
  eval --id id_logits.npy --ood "$tmp/one.npy"
expect "1-d logits" 2 "" "smx: id_labels.npy: logits must have shape (N, K) with K >= 1 classes" -- \
  eval --id id_labels.npy --ood ood_logits.npy
expect "NaN logits" 2 "" "smx: $tmp/nan.npy: row 1 has a NaN logit (scores would be NaN)" -- \
  eval --id "$tmp/nan.npy" --ood "$tmp/nan.npy"
# the first NaN found wherever it is: past the first chunks of a block, in a
# block after the first, in a Fortran-order file
/usr/bin/python3 -c "
import numpy as np
x = np.zeros((20000, 37), dtype=np.float32)
x[13001, 29] = np.nan; x[15000, 3] = np.nan
np.save('$tmp/nan_deep.npy', x); np.save('$tmp/nan_deep_f.npy', np.asfortranarray(x))"
expect "NaN logits deep in the file" 2 "" "smx: $tmp/nan_deep.npy: row 13001 has a NaN logit (scores would be NaN)" -- \
  eval --id "$tmp/nan_deep.npy" --ood "$tmp/nan_deep.npy"
expect "NaN logits deep in a Fortran-order file" 2 "" "smx: $tmp/nan_deep_f.npy: row 13001 has a NaN logit (scores would be NaN)" -- \
  eval --id "$tmp/nan_deep_f.npy" --ood "$tmp/nan_deep_f.npy"
echo precious > "$tmp/keep.json"
expect "json not clobbered on error" 2 "" "*" -- eval --id id_logits.npy --ood "$tmp/nan.npy" --json "$tmp/keep.json"
check "json kept" test "$(cat "$tmp/keep.json")" = precious
expect "json dir missing" 3 "*" "*" -- eval --id id_logits.npy --ood ood_logits.npy --scores msp --json "$tmp/no/dir/e.json"
check "json error names the file" grep -q "^smx: $tmp/no/dir/e.json: not written" "$tmp/err"

# smx score: values against SciPy, shape, errors
for s in msp max_logit energy neg_entropy margin_prob margin_logit gen odin nonuniformity; do
  expect "score $s" 0 "" "" -- score $s id_logits.npy -o "$tmp/$s.npy"
  expect "score $s --double" 0 "" "" -- score $s id_logits.npy --double -o "$tmp/${s}_d.npy"
done
expect "score kl" 0 "" "" -- score kl_matching ood_logits.npy --templates-from val_logits.npy -o "$tmp/kl.npy"
expect "score kl --double" 0 "" "" -- score kl_matching ood_logits.npy --templates-from val_logits.npy --double -o "$tmp/kl_d.npy"
expect "score energy T" 0 "" "" -- score energy id_logits.npy -t 2.5 -o "$tmp/energy_t.npy"
expect "score energy T --double" 0 "" "" -- score energy id_logits.npy -t 2.5 --double -o "$tmp/energy_t_d.npy"
expect "score odin T" 0 "" "" -- score odin id_logits.npy -t 10 -o "$tmp/odin_t.npy"
expect "score odin T --double" 0 "" "" -- score odin id_logits.npy -t 10 --double -o "$tmp/odin_t_d.npy"
check "score values against SciPy" $PY - "$tmp" <<'EOF'
import sys, numpy as np
from scipy.special import softmax, log_softmax, logsumexp
t = sys.argv[1]
L = np.load("id_logits.npy").astype(np.float64); P = softmax(L, 1); K = L.shape[1]
ps = np.sort(P, 1); zs = np.sort(L, 1)
V = np.load("val_logits.npy").astype(np.float64); PV = softmax(V, 1); pred = PV.argmax(1)
tm = np.stack([PV[pred == k].mean(0) for k in range(K)])
O = np.load("ood_logits.npy").astype(np.float64); PO = softmax(O, 1)
ref = {"msp": P.max(1), "max_logit": L.max(1), "energy": logsumexp(L, 1), "neg_entropy": (P * log_softmax(L, 1)).sum(1),
       "margin_prob": ps[:, -1] - ps[:, -2], "margin_logit": zs[:, -1] - zs[:, -2],
       "gen": -(ps ** 0.1 * (1 - ps) ** 0.1).sum(1), "odin": softmax(L / 1000, 1).max(1),
       "nonuniformity": np.abs(P - 1 / K).sum(1), "energy_t": 2.5 * logsumexp(L / 2.5, 1),
       "odin_t": softmax(L / 10, 1).max(1),
       "kl": -(PO[:, None, :] * (log_softmax(O, 1)[:, None, :] - np.log(tm)[None])).sum(-1).min(1)}
bad = 0
for k, r in ref.items():
    # smx_scores.h: exact (max_logit, margin_logit); f32 exponentials (the default): msp, energy 1e-6,
    # the others 16 2^-24 (1 + |score|); --double: every score 1e-12
    for suffix, tol in (("", 1e-6 if k in ("msp", "energy", "energy_t") else 16 * 2.0**-24 * (1 + np.abs(r))),
                        ("_d", 1e-12)):
        if k in ("max_logit", "margin_logit"):
            tol = 1e-12
        g = np.load(f"{t}/{k}{suffix}.npy")
        if g.dtype != np.float64 or g.shape != r.shape or np.any(np.abs(g - r) > tol):
            print(k + suffix, g.dtype, g.shape, np.abs(g - r).max()); bad = 1
sys.exit(bad)
EOF
expect "score needs name" 1 "" "smx: score needs a score name (msp, max_logit, energy, neg_entropy, margin_prob, margin_logit, gen, odin, kl_matching, nonuniformity)
smx: try 'smx score --help'" -- score
expect "score unknown" 1 "" "smx: unknown score 'softmax' (one of msp, max_logit, energy, neg_entropy, margin_prob, margin_logit, gen, odin, kl_matching, nonuniformity)
smx: try 'smx score --help'" -- score softmax id_logits.npy -o "$tmp/x.npy"
expect "score no output" 1 "" "smx: score needs -o OUT.npy (or -o - for stdout)
smx: try 'smx score --help'" -- score msp id_logits.npy
expect "score kl no templates" 1 "" "smx: kl_matching needs --templates-from REF.npy (reference logits, e.g. the ID validation set)
smx: try 'smx score --help'" -- score kl_matching id_logits.npy -o "$tmp/x.npy"
expect "score bad T" 1 "" "smx: --temperature must be a positive finite number, not '0'
smx: try 'smx score --help'" -- score energy id_logits.npy --temperature 0 -o "$tmp/x.npy"
expect "score 1-d" 2 "" "smx: id_labels.npy: logits must have shape (N, K) with K >= 1 classes; this array has one axis" -- \
  score msp id_labels.npy -o "$tmp/x.npy"
check "no output after errors" test ! -e "$tmp/x.npy"
expect "score NaN row" 0 "" "" -- score msp "$tmp/nan.npy" -o "$tmp/n.npy"
check "NaN row gives NaN" $PY -c "import numpy as np,sys; a=np.load('$tmp/n.npy'); sys.exit(0 if np.isnan(a[1]) and a[0] > 0.7 else 1)"
"$SMX" score msp id_logits.npy -o - > "$tmp/stdout.npy"
check "score to stdout" $PY -c "import numpy as np,sys; sys.exit(0 if np.load('$tmp/stdout.npy').shape == (271,) else 1)"

echo "eval_test: $pass passed, $fail failed"
[ $fail = 0 ]
