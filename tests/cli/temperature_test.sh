#!/bin/bash
# One temperature rule for every command that takes -t: any positive finite
# number is accepted (subnormals and numbers near DBL_MAX included) and gives
# the limit; anything else is refused with the same message everywhere.
# Usage: tests/cli/temperature_test.sh SMX_BINARY
SMX=$1
. "$(dirname "$0")/lib.sh"

numpy_in_tmp <<'PY'
np.save(d + "/x.npy", np.array([[1, 3, 3, -2], [0, -1, 0, -5]], dtype=np.float32))
np.save(d + "/t.npy", np.array([1, 0], dtype=np.int64))
PY
x=$tmp/x.npy

# run_all T: every command with -t T (or --odin-temperature T), each must succeed
run_all() {
  local t=$1
  expect "softmax -t $t" 0 "" "" -- softmax "$x" -o "$tmp/sm_$t.npy" -t "$t"
  expect "log-softmax -t $t" 0 "" "" -- log-softmax "$x" -o "$tmp/ls_$t.npy" -t "$t"
  expect "logsumexp -t $t" 0 "" "" -- logsumexp "$x" -o "$tmp/lse_$t.npy" -t "$t"
  expect "topk -t $t" 0 "" "" -- topk "$x" -k 2 -o "$tmp/tv_$t.npy" --indices "$tmp/ti_$t.npy" -t "$t"
  expect "sample -t $t" 0 "" "" -- sample "$x" -o "$tmp/s_$t.npy" --seed 3 -t "$t"
  expect "xent -t $t" 0 "*" "" -- xent "$x" --targets "$tmp/t.npy" -t "$t"
  expect "score energy -t $t" 0 "" "" -- score energy "$x" -o "$tmp/e_$t.npy" -t "$t"
  expect "score odin --odin-temperature $t" 0 "" "" -- score odin "$x" -o "$tmp/o_$t.npy" --odin-temperature "$t"
}
for t in 5e-324 1e-310 8e-309 1e-308 2.2250738585072014e-308 1e-300 1.75e308 1.7976931348623157e308; do
  run_all "$t"
done

# the T -> 0 limit, written exactly for subnormal temperatures (the f64 answer rounded to float)
check "tiny T gives the limit" numpy_in_tmp <<'PY'
inf = np.inf
for t in ["5e-324", "1e-310", "8e-309", "1e-308"]:
    sm = np.load(f"{d}/sm_{t}.npy"); ls = np.load(f"{d}/ls_{t}.npy"); lse = np.load(f"{d}/lse_{t}.npy")
    assert sm.tolist() == [[0, 0.5, 0.5, 0], [0.5, 0, 0.5, 0]], (t, sm)
    h = np.float32(-np.log(2.0))
    assert ls.tolist() == [[-inf, h, h, -inf], [h, -inf, h, -inf]], (t, ls)
    assert lse.tolist() == [inf, np.float32(np.log(2.0))], (t, lse)
    assert np.load(f"{d}/tv_{t}.npy").tolist() == [[0.5, 0.5], [0.5, 0.5]], t
    assert np.load(f"{d}/s_{t}.npy").tolist()[0] in (1, 2), t
for t in ["1.75e308", "1.7976931348623157e308"]:
    assert np.load(f"{d}/sm_{t}.npy").tolist() == [[0.25] * 4] * 2, t
PY

# refused: one message for every command
for t in 0 -1 -5e-324 inf -inf nan 1e309 1e-400 x ""; do
  msg="smx: --temperature must be a positive finite number, not '$t'
smx: try 'smx"   # the hint names the command's help
  expect "softmax refuses $t" 1 "" "$msg softmax --help'" -- softmax "$x" -o "$tmp/no.npy" -t "$t"
  expect "log-softmax refuses $t" 1 "" "$msg log-softmax --help'" -- log-softmax "$x" -o "$tmp/no.npy" -t "$t"
  expect "logsumexp refuses $t" 1 "" "$msg logsumexp --help'" -- logsumexp "$x" -o "$tmp/no.npy" -t "$t"
  expect "topk refuses $t" 1 "" "$msg topk --help'" -- topk "$x" -k 1 -o "$tmp/no.npy" -t "$t"
  expect "xent refuses $t" 1 "" "$msg xent --help'" -- xent "$x" --targets "$tmp/t.npy" -t "$t"
  expect "score refuses $t" 1 "" "$msg score --help'" -- score energy "$x" -o "$tmp/no.npy" -t "$t"
  expect "score odin refuses $t" 1 "" "smx: --odin-temperature must be a positive finite number, not '$t'
smx: try 'smx score --help'" -- score odin "$x" -o "$tmp/no.npy" --odin-temperature "$t"
done
check "nothing written on refusal" test ! -e "$tmp/no.npy"

echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
