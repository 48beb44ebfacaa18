#!/bin/bash
# smx attention's command line: exact messages and exit codes for option
# values outside float range (the library computes in float: a double that
# rounds to 0 or inf there would switch an option off or zero the output),
# contradictory options, bad files named once; --lse and -o written together
# or not at all. Also the help texts of entmax and xent that issue 24 named.
# Usage: tests/cli/attention_test.sh SMX_BINARY [FAIL_RENAME_SHIM.so]
SMX=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
SHIM=${2:-}
[ -z "$SHIM" ] || SHIM=$(cd "$(dirname "$SHIM")" && pwd)/$(basename "$SHIM")
. "$(dirname "$0")/lib.sh"
PY=/usr/bin/python3
cd "$tmp" || exit 1
$PY -c "
import numpy as np
rng = np.random.default_rng(3)
np.save('q.npy', rng.standard_normal((1, 2, 3, 4)).astype(np.float32))
np.save('k.npy', rng.standard_normal((1, 1, 5, 4)).astype(np.float32))
np.save('v.npy', rng.standard_normal((1, 1, 5, 2)).astype(np.float32))
np.save('q3.npy', np.zeros((2, 3, 4), np.float32))
open('bad.npy', 'wb').write(b'not numpy')
open('trunc.npy', 'wb').write(open('q.npy', 'rb').read()[:100])"
QKV=(q.npy k.npy v.npy)
HINT="smx: try 'smx attention --help'"

# outputs are .npy: a CSV / TSV name is refused, not written with .npy bytes
expect "-o o.csv" 1 "" "smx: -o o.csv: attention writes .npy only; name the file .npy
$HINT" -- attention "${QKV[@]}" -o o.csv
expect "--lse l.tsv" 1 "" "smx: --lse l.tsv: attention writes .npy only; name the file .npy
$HINT" -- attention "${QKV[@]}" -o o.npy --lse l.tsv
check "o.csv not written" [ ! -e o.csv ]

# options beyond float: refused with what is allowed, not "must be >= 0"
expect "softcap 1e300" 1 "" "smx: --softcap must be 0 (off) or a positive number within float range (1.2e-38 to 3.4e+38), not '1e300'
$HINT" -- attention "${QKV[@]}" -o o.npy --softcap 1e300
expect "softcap 1e-300" 1 "" "smx: --softcap must be 0 (off) or a positive number within float range (1.2e-38 to 3.4e+38), not '1e-300'
$HINT" -- attention "${QKV[@]}" -o o.npy --softcap 1e-300
expect "softcap negative" 1 "" "smx: --softcap must be 0 (off) or a positive number within float range (1.2e-38 to 3.4e+38), not '-1'
$HINT" -- attention "${QKV[@]}" -o o.npy --softcap -1
expect "softcap inf" 1 "" "smx: --softcap must be 0 (off) or a positive number within float range (1.2e-38 to 3.4e+38), not 'inf'
$HINT" -- attention "${QKV[@]}" -o o.npy --softcap inf
expect "scale 1e300" 1 "" "smx: --scale must be a nonzero number within float range (1.2e-38 to 3.4e+38 in magnitude), not '1e300'
$HINT" -- attention "${QKV[@]}" -o o.npy --scale 1e300
expect "scale -1e-300" 1 "" "smx: --scale must be a nonzero number within float range (1.2e-38 to 3.4e+38 in magnitude), not '-1e-300'
$HINT" -- attention "${QKV[@]}" -o o.npy --scale -1e-300
expect "scale 0" 1 "" "smx: --scale must be a nonzero number within float range (1.2e-38 to 3.4e+38 in magnitude), not '0'
$HINT" -- attention "${QKV[@]}" -o o.npy --scale 0
expect "sigmoid-bias 1e300" 1 "" "smx: --sigmoid-bias must be a number within float range (at most 3.4e+38 in magnitude), not '1e300'
$HINT" -- attention "${QKV[@]}" -o o.npy --kind sigmoid --sigmoid-bias 1e300
expect "screen-window 1e300" 1 "" "smx: --screen-window must be 0 (none) or a positive number within float range (1.2e-38 to 3.4e+38), not '1e300'
$HINT" -- attention "${QKV[@]}" -o o.npy --kind screen --screen-r 0.5 --screen-window 1e300
expect "screen-window 1e-300" 1 "" "smx: --screen-window must be 0 (none) or a positive number within float range (1.2e-38 to 3.4e+38), not '1e-300'
$HINT" -- attention "${QKV[@]}" -o o.npy --kind screen --screen-r 0.5 --screen-window 1e-300
check "no output after usage errors" test ! -e o.npy
# the edges of the range are accepted
expect "softcap 3e38" 0 "" "" -- attention "${QKV[@]}" -o o.npy --softcap 3e38
expect "scale -1e-37" 0 "" "" -- attention "${QKV[@]}" -o o.npy --scale -1e-37
expect "sigmoid-bias 1e-300 (the nearest float is 0)" 0 "" "" -- attention "${QKV[@]}" -o o.npy --kind sigmoid --sigmoid-bias 1e-300
rm -f o.npy

# two alignments of the causal mask
expect "both causal alignments" 1 "" "smx: --causal (bottom-right) and --causal-top-left are two alignments of one mask; give one
$HINT" -- attention "${QKV[@]}" -o o.npy --causal --causal-top-left
expect "both causal alignments, other order" 1 "" "smx: --causal (bottom-right) and --causal-top-left are two alignments of one mask; give one
$HINT" -- attention "${QKV[@]}" -o o.npy --causal-top-left --causal

# a bad file is named once
expect "bad Q" 2 "" "smx: bad.npy: not a .npy file (no \\x93NUMPY magic)" -- attention bad.npy k.npy v.npy -o o.npy
expect "truncated Q" 2 "" "smx: trunc.npy: truncated: the header ends after 100 bytes of the 128 expected" -- \
  attention trunc.npy k.npy v.npy -o o.npy
expect "3-d Q" 2 "" "smx: q3.npy: expected a 4-d array (batch, heads, length, dim), got 3-d" -- attention q3.npy k.npy v.npy -o o.npy
expect "output folder missing" 3 "" "smx: nodir/o.npy: cannot create a temporary file next to it: No such file or directory" -- \
  attention "${QKV[@]}" -o nodir/o.npy

# -o and --lse commit together: when one cannot be written, neither is, and
# files already there are kept as they were
echo precious > o.npy
expect "lse folder missing" 3 "" "smx: nodir/l.npy: cannot create a temporary file next to it: No such file or directory
smx: o.npy was not written either (the two are written together)" -- \
  attention "${QKV[@]}" -o o.npy --lse nodir/l.npy
check "output kept when --lse fails" test "$(cat o.npy)" = precious
echo precious > l.npy
expect "output folder missing, lse given" 3 "" "smx: nodir/o.npy: cannot create a temporary file next to it: No such file or directory
smx: l.npy was not written either (the two are written together)" -- \
  attention "${QKV[@]}" -o nodir/o.npy --lse l.npy
check "lse kept when -o fails" test "$(cat l.npy)" = precious
check "no temporary files left" test -z "$(ls -A . | grep '\.tmp')"
expect "both written" 0 "" "" -- attention "${QKV[@]}" -o o.npy --lse l.npy
check "both are arrays of the right shapes" $PY -c "
import numpy as np, sys
sys.exit(0 if np.load('o.npy').shape == (1, 2, 3, 2) and np.load('l.npy').shape == (1, 2, 3) else 1)"
# the second rename of the pair fails (the shim): the first output, already
# renamed, is put back as it was, whichever of the two comes second
if [ -n "$SHIM" ]; then
  cp o.npy o_before.npy
  cp l.npy l_before.npy
  LD_PRELOAD=$SHIM SMX_TEST_FAIL_RENAME=l2.npy expect "lse rename fails" 3 "" "smx: l2.npy: cannot rename the temporary file over it: Input/output error
smx: o.npy was not written either (the two are written together)" -- attention "${QKV[@]}" -o o.npy --lse l2.npy --scale 0.5
  check "rollback: o.npy is the old file again" cmp -s o.npy o_before.npy
  check "rollback: no l2.npy" test ! -e l2.npy
  LD_PRELOAD=$SHIM SMX_TEST_FAIL_RENAME=l.npy expect "lse rename fails, new -o" 3 "" "*" -- \
    attention "${QKV[@]}" -o o_new.npy --lse l.npy --scale 0.5
  check "rollback: a new -o is removed" test ! -e o_new.npy
  check "rollback: l.npy unchanged" cmp -s l.npy l_before.npy
  check "rollback: no temporary or backup files left" test -z "$(ls -A . | grep '\.tmp')"
else
  echo "skip: the rollback cases (no rename shim given)"
fi
mkdir adir
expect "output is a directory" 3 "" "smx: adir: cannot write it: Is a directory
smx: l.npy was not written either (the two are written together)" -- attention "${QKV[@]}" -o adir --lse l.npy
expect "both on stdout" 1 "" "smx: -o - and --lse - would both write to standard output; send one to a file
$HINT" -- attention "${QKV[@]}" -o - --lse -
expect "same file for both" 1 "" "smx: -o and --lse name the same file 'o.npy'
$HINT" -- attention "${QKV[@]}" -o o.npy --lse o.npy

# help texts: entmax's --alpha is optional; xent's targets and temperature are not both T
expect "entmax help" 0 "*" "" -- entmax --help
check "entmax usage shows --alpha optional" grep -q '^usage: smx entmax IN -o OUT \[--alpha A\] \[options\]$' "$tmp/out"
expect "entmax without --alpha" 0 "" "" -- entmax q.npy -o e.npy
expect "xent help" 0 "*" "" -- xent --help
check "xent help: targets are TARGETS" grep -q '^usage: smx xent LOGITS --targets TARGETS ' "$tmp/out"
check "xent help: T is the temperature alone" test "$(grep -c '\bT\b' "$tmp/out")" = "$(grep -c -- '--temperature T' "$tmp/out")"

echo "attention_test: $pass passed, $fail failed"
[ "$fail" = 0 ]
