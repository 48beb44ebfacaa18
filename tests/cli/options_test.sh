#!/bin/bash
# The one option parser of the smx command (programs/cli/options.h): every command's help lists the options
# it takes and takes every option it lists; the op table's parameters are the row commands' options, range
# included; a mistyped option gets the nearest; the hint names the command's help; --threads on score and
# eval and --dtype on topk and attention; an output named for another format is refused, nothing written.
# Usage: tests/cli/options_test.sh SMX_BINARY
SMX=$1
. "$(dirname "$0")/lib.sh"
cd "$tmp" || exit 1

$PY - <<'PY'
import numpy as np
rng = np.random.default_rng(7)
x = rng.standard_normal((300, 9)).astype(np.float32)
np.save("x.npy", x)
np.save("ood.npy", (rng.standard_normal((250, 9)) * 2).astype(np.float32))
np.save("labels.npy", x.argmax(1).astype(np.int64))
for n, s in (("q", (1, 2, 5, 4)), ("k", (1, 2, 6, 4)), ("v", (1, 2, 6, 3))):
    np.save(n + ".npy", rng.standard_normal(s).astype(np.float16))
PY

# every command: each option its help lists is one it takes (never "unknown option")
commands=$("$SMX" --help | awk '/^commands:/ {on = 1; next} /^[a-z]/ {on = 0} on && /^  [a-z]/ {print $1}')
for c in $commands; do
  "$SMX" "$c" --help > help.txt
  for o in $(grep -oE '^  (-[a-zA-Z0-9-]+)(, -[-a-zA-Z0-9]+)?' help.txt | tr ',' ' '); do
    [ "$c" = bench ] && continue   # its options go to smx_bench
    "$SMX" "$c" "$o" > /dev/null 2> err.txt < /dev/null
    check "$c takes $o, which its help lists" sh -c "! grep -q 'unknown option' err.txt"
  done
done
# the op table's parameters are the options of the row commands that compute them
nrow=0
for op in $("$SMX" ops | awk 'NR > 1 {print $1}'); do
  "$SMX" ops "$op" > op.txt
  c=$(awk '$1 == "cli:" && NF == 2 {print $2}' op.txt)
  grep -qE '^[a-z0-9_]+ \((NORM|ELEM|SPARSE),' op.txt && [ -n "$c" ] && [ "$c" != - ] || continue
  "$SMX" "$c" --help > help.txt
  for p in $(awk '$1 == "param:" {print $2}' op.txt); do
    o=$(echo "$p" | tr _ -)
    nrow=$((nrow + 1))
    check "$c --help lists $op's parameter $p" grep -qE "^  (-[a-z], )?(-$o, )?--$o " help.txt
  done
done
check "row commands with parameters were found" test "$nrow" -ge 8

# a typo gets the nearest option; the hint names the command's help
expect "typo --thread" 1 "" "smx: unknown option '--thread' for softmax; did you mean '--threads'?
smx: try 'smx softmax --help'" -- softmax x.npy -o no.npy --thread 2
expect "typo --seeed" 1 "" "smx: unknown option '--seeed' for sample; did you mean '--seed'?
smx: try 'smx sample --help'" -- sample x.npy -o no.npy --seeed 2
expect "typo --indice" 1 "" "smx: unknown option '--indice' for topk; did you mean '--indices'?
smx: try 'smx topk --help'" -- topk x.npy -k 2 -o no.npy --indice i.npy
expect "typo --scroes" 1 "" "smx: unknown option '--scroes' for eval; did you mean '--scores'?
smx: try 'smx eval --help'" -- eval --id x.npy --ood ood.npy --scroes msp
expect "far from any option" 1 "" "smx: unknown option '--frobnicate' for xent
smx: try 'smx xent --help'" -- xent x.npy --targets labels.npy --frobnicate
expect "typo in ops" 1 "" "smx: ops: unknown operation 'sofmax'; did you mean 'softmax'?
smx: try 'smx ops --help'" -- ops sofmax

# the op table's ranges, named in the refusal; --name=value
expect "alpha at the open bound" 1 "" "smx: --alpha must be a number > 1, not '1'
smx: try 'smx entmax --help'" -- entmax x.npy -o no.npy --alpha 1
expect "k below the range" 1 "" "smx: -k must be a whole number from 1 to 2^53, not '0'
smx: try 'smx topk-softmax --help'" -- topk-softmax x.npy -o no.npy -k 0
expect "eps below 0" 1 "" "smx: --eps must be a number >= 0, not '-1'
smx: try 'smx softpick --help'" -- softpick x.npy -o no.npy --eps=-1
expect "three of four" 1 "" "smx: --ranges must be four finite numbers separated by commas, not '1,2,3'
smx: try 'smx multimax --help'" -- multimax x.npy -o no.npy --ranges=1,2,3
expect "a flag with a value" 1 "" "smx: --normalized takes no value
smx: try 'smx sa-softmax --help'" -- sa-softmax x.npy -o no.npy --normalized=1
expect "--alpha=1.5" 0 "" "" -- entmax x.npy -o e1.npy --alpha=1.5
expect "--alpha 1.5" 0 "" "" -- entmax x.npy -o e2.npy --alpha 1.5
check "--alpha=1.5 is --alpha 1.5" cmp -s e1.npy e2.npy
expect "standardize-softmax -t is its own T" 0 "" "" -- standardize-softmax x.npy -o st.npy -t 2
expect "standardize-softmax --temperature" 0 "" "" -- standardize-softmax x.npy -o st2.npy --temperature=2
check "-t and --temperature agree" cmp -s st.npy st2.npy

# --threads on score and eval: the same output as one thread
for s in msp energy gen kl_matching; do
  expect "score $s" 0 "" "" -- score $s x.npy -o s1_$s.npy --templates-from ood.npy
  expect "score $s --threads 3" 0 "" "" -- score $s x.npy -o s3_$s.npy --templates-from ood.npy --threads 3
  check "score $s: 3 threads as 1" cmp -s s1_$s.npy s3_$s.npy
done
expect "eval" 0 "*" "" -- eval --id x.npy --ood ood.npy --labels labels.npy --json e1.json -q
expect "eval --threads 4" 0 "*" "" -- eval --id x.npy --ood ood.npy --labels labels.npy --json e4.json -q --threads 4
check "eval: 4 threads as 1" cmp -s e1.json e4.json
expect "score --threads 0" 1 "" "smx: --threads must be a whole number from 1 to 256, not '0'
smx: try 'smx score --help'" -- score msp x.npy -o no.npy --threads 0

# --dtype on topk and attention (and on xent's gradient and score's scores)
expect "topk --dtype f64" 0 "" "" -- topk x.npy -k 3 -o v64.npy --dtype f64
expect "topk" 0 "" "" -- topk x.npy -k 3 -o v32.npy
expect "attention --dtype f16" 0 "" "" -- attention q.npy k.npy v.npy -o o16.npy --dtype f16
expect "attention --dtype f64" 0 "" "" -- attention q.npy k.npy v.npy -o o64.npy --dtype float64
expect "attention" 0 "" "" -- attention q.npy k.npy v.npy -o o32.npy
check "dtypes and values" $PY - <<'PY'
import numpy as np
v64, v32 = np.load("v64.npy"), np.load("v32.npy")
assert v64.dtype == np.float64 and v32.dtype == np.float32 and (v64 == v32).all()
o16, o32, o64 = np.load("o16.npy"), np.load("o32.npy"), np.load("o64.npy")
assert o16.dtype == np.float16 and o64.dtype == np.float64 and (o64 == o32).all()
assert np.allclose(o16.astype(np.float64), o32, atol=4e-3), abs(o16 - o32).max()
PY
expect "xent --grad --dtype f64" 0 "*" "" -- xent x.npy --targets labels.npy --grad g64.npy --dtype f64
expect "xent --grad" 0 "*" "" -- xent x.npy --targets labels.npy --grad g32.npy
expect "score --dtype f32" 0 "" "" -- score energy x.npy -o s32.npy --dtype f32
check "xent and score: --dtype is the output's" $PY - <<'PY'
import numpy as np
g64, g32 = np.load("g64.npy"), np.load("g32.npy")
assert g64.dtype == np.float64 and g32.dtype == np.float32 and np.allclose(g64, g32, rtol=1e-5, atol=1e-8)
assert (g64.astype(np.float32) != g64).any()   # --dtype f64 computes with the float64 kernels
s32, s64 = np.load("s32.npy"), np.load("s1_energy.npy")
assert s32.dtype == np.float32 and (s32 == s64.astype(np.float32)).all()
PY
expect "attention --dtype int8" 1 "" "smx: --dtype must be f32, f64 or f16, not 'int8'
smx: try 'smx attention --help'" -- attention q.npy k.npy v.npy -o no.npy --dtype int8

# an output named for another format than the command writes there: refused, nothing written
expect "softmax -o y.json" 1 "" "smx: -o y.json: softmax writes .npy, .csv or .tsv only; name the file .npy, .csv or .tsv
smx: try 'smx softmax --help'" -- softmax x.npy -o y.json
expect "topk --indices i.html" 1 "" "smx: --indices i.html: topk writes .npy, .csv or .tsv only; name the file .npy, .csv or .tsv
smx: try 'smx topk --help'" -- topk x.npy -k 2 -o vals.npy --indices i.html
expect "eval --json r.html" 1 "" "smx: --json r.html: eval writes .json only; name the file .json
smx: try 'smx eval --help'" -- eval --id x.npy --ood ood.npy --json r.html
expect "eval --report r.JSON" 1 "" "smx: --report r.JSON: eval writes .html only; name the file .html
smx: try 'smx eval --help'" -- eval --id x.npy --ood ood.npy --report r.JSON
expect "attention -o o.tsv" 1 "" "smx: -o o.tsv: attention writes .npy only; name the file .npy
smx: try 'smx attention --help'" -- attention q.npy k.npy v.npy -o o.tsv
check "nothing written" sh -c '! ls y.json i.html vals.npy r.html r.JSON o.tsv no.npy 2>/dev/null | grep -q .'
expect "eval --report r.htm" 0 "*" "*" -- eval --id x.npy --ood ood.npy --report r.htm -q

echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
