#!/bin/bash
# The smx command, in the manner of zstd's cli-tests: exact stdout, stderr and
# exit code for good and bad invocations, no output file left behind on error,
# and the numbers checked against SciPy.
# Usage: tests/cli/cli_test.sh SMX_BINARY DATA_DIR
SMX=$1
DATA=$2
. "$(dirname "$0")/lib.sh"

x="$DATA/f32_c_2d.npy"
expect "version" 0 "smx 0.1.0" "" -- --version
expect "help" 0 "*" "" -- --help
check "help names the exit codes" grep -q "exit codes: 0 ok, 1 usage, 2 bad input" "$tmp/out"
expect "unknown command" 1 "" "smx: unknown command 'frobnicate'
smx: try 'smx --help'" -- frobnicate
expect "no input" 1 "" "smx: softmax needs an input file (.npy, .csv or .tsv; - for stdin)
smx: try 'smx softmax --help'" -- softmax
expect "no output" 1 "" "smx: softmax needs -o OUT (.npy, .csv or .tsv; - for stdout)
smx: try 'smx softmax --help'" -- softmax "$x"
expect "bad temperature" 1 "" "smx: --temperature must be a positive finite number, not '-1'
smx: try 'smx softmax --help'" -- softmax "$x" -o "$tmp/o.npy" -t -1
expect "bad algo" 1 "" "smx: --algo must be auto, three-pass, two-pass or online, not 'fast'
smx: try 'smx log-softmax --help'" -- log-softmax "$x" -o "$tmp/o.npy" --algo fast
expect "unknown option" 1 "" "smx: unknown option '--frob' for logsumexp
smx: try 'smx logsumexp --help'" -- logsumexp "$x" -o "$tmp/o.npy" --frob
expect "axis not a number" 1 "" "smx: --axis must be a whole number (negative counts from the end), not 'x'
smx: try 'smx softmax --help'" -- softmax "$x" -o "$tmp/o.npy" --axis x
expect "axis missing" 1 "" "smx: --axis must be a whole number (negative counts from the end), not ''
smx: try 'smx softmax --help'" -- softmax "$x" -o "$tmp/o.npy" --axis
expect "axis out of range" 1 "" "smx: --axis 2 is out of range for $x, which has 2 dimensions
smx: try 'smx softmax --help'" -- softmax "$x" -o "$tmp/o.npy" --axis 2
expect "negative axis out of range" 1 "" "smx: --axis -3 is out of range for $x, which has 2 dimensions
smx: try 'smx logsumexp --help'" -- logsumexp "$x" -o "$tmp/o.npy" --axis -3
expect "axis of a 1-d array" 1 "" "smx: --axis 1 is out of range for $DATA/u8_1d.npy, which has 1 dimension
smx: try 'smx softmax --help'" -- softmax "$DATA/u8_1d.npy" -o "$tmp/o.npy" --axis 1
expect "bad dtype" 1 "" "smx: --dtype must be f32, f64 or f16, not 'int8'
smx: try 'smx softmax --help'" -- softmax "$x" -o "$tmp/o.npy" --dtype int8
expect "bad format" 1 "" "smx: --format must be npy, csv or tsv, not 'xls'
smx: try 'smx softmax --help'" -- softmax "$x" -o "$tmp/o.npy" --format xls
expect "bad input format" 1 "" "smx: --in-format must be npy, csv or tsv, not 'json'
smx: try 'smx softmax --help'" -- softmax - -o "$tmp/o.npy" --in-format json
expect "format conflicts with the output name" 1 "" "smx: --format csv conflicts with the name $tmp/o.npy
smx: try 'smx softmax --help'" -- softmax "$x" -o "$tmp/o.npy" --format csv
expect "input format conflicts with the input name" 1 "" "smx: --in-format npy conflicts with the name $tmp/a.csv
smx: try 'smx softmax --help'" -- softmax "$tmp/a.csv" -o "$tmp/o.npy" --in-format npy
check "no output after usage errors" test ! -e "$tmp/o.npy"

expect "missing input" 2 "" "*" -- softmax "$tmp/missing.npy" -o "$tmp/o.npy"
check "missing input: message names the file" grep -q "^smx: $tmp/missing.npy: " "$tmp/err"
check "missing input: no output" test ! -e "$tmp/o.npy"

# a truncated file must not clobber an existing output
head -c 100 "$x" > "$tmp/trunc.npy"
echo "precious" > "$tmp/keep.npy"
expect "truncated input" 2 "" "*" -- softmax "$tmp/trunc.npy" -o "$tmp/keep.npy"
check "truncated input: message names the file" grep -q "^smx: $tmp/trunc.npy: " "$tmp/err"
check "truncated input: existing output untouched" test "$(cat "$tmp/keep.npy")" = "precious"
check "truncated input: no temporary left" test -z "$(ls -A "$tmp" | grep tmp)"

expect "unwritable output" 3 "" "*" -- softmax "$x" -o "$tmp/no/such/dir/o.npy"

# ---- text input and output
printf '1,2,3\n4,5,6\n' > "$tmp/a.csv"
expect "csv to csv" 0 "0.0900305733,0.244728476,0.665240943
0.0900305733,0.244728476,0.665240943" "" -- softmax "$tmp/a.csv" -o - --dtype f32
expect "csv axis 0 to tsv on stdout" 0 "$(printf '0.0474258736\t0.0474258736\t0.0474258736\n0.952574134\t0.952574134\t0.952574134')" "" -- softmax "$tmp/a.csv" -o - --axis 0 --format tsv --dtype f32
expect "csv logsumexp, float64" 0 "3.4076059644443801
6.4076059644443806" "" -- logsumexp "$tmp/a.csv" -o -
printf '# a comment\n\n nan , inf,-inf\n-inf\t,-inf,-inf\n1e308,1e308,-1e308\n' > "$tmp/s.csv"
expect "csv specials" 0 "nan,nan,nan
0,0,0
0.5,0.5,0" "" -- softmax "$tmp/s.csv" -o -
expect "csv specials, log-softmax" 0 "nan,nan,nan
-inf,-inf,-inf
-0.69314718055994529,-0.69314718055994529,-inf" "" -- log-softmax "$tmp/s.csv" -o -
printf '0.5\t1.5\n2\t-1\n' | "$SMX" softmax --in-format tsv - -o "$tmp/t.npy" 2>"$tmp/err"
check "tsv from stdin to .npy" /usr/bin/python3 -c "
import numpy as np, sys
from scipy.special import softmax
y = np.load('$tmp/t.npy')
sys.exit(0 if y.dtype == np.float64 and np.allclose(y, softmax(np.array([[0.5, 1.5], [2, -1]]), axis=-1), rtol=1e-14) else 1)"
expect "csv to float16 csv" 0 "0.090027,0.24475,0.66504
0.090027,0.24475,0.66504" "" -- softmax "$tmp/a.csv" -o - --format csv --dtype f16

echo precious > "$tmp/keep.csv"
printf '1,2,3\n4,x,6\n' > "$tmp/bad.csv"
expect "csv: not a number" 2 "" "smx: $tmp/bad.csv: line 2, column 2: 'x' is not a number" -- softmax "$tmp/bad.csv" -o "$tmp/keep.csv"
printf '1,2,3\n4,5\n' > "$tmp/short.csv"
expect "csv: short line" 2 "" "smx: $tmp/short.csv: line 2, column 3: missing value (line 1 has 3 values)" -- softmax "$tmp/short.csv" -o "$tmp/keep.csv"
printf '# header\n1,2\n3,4,5\n' > "$tmp/long.csv"
expect "csv: long line" 2 "" "smx: $tmp/long.csv: line 3, column 3: extra value (line 2 has 2 values)" -- log-softmax "$tmp/long.csv" -o "$tmp/keep.csv"
printf '1,,3\n' > "$tmp/hole.csv"
expect "csv: empty value" 2 "" "smx: $tmp/hole.csv: line 1, column 2: empty value" -- softmax "$tmp/hole.csv" -o "$tmp/keep.csv"
printf '1\t2\n3\t4\n' > "$tmp/tabs.csv"
expect "csv: tabs are not commas" 2 "" "smx: $tmp/tabs.csv: line 1, column 1: '1\\t2' is not a number" -- softmax "$tmp/tabs.csv" -o "$tmp/keep.csv"
: > "$tmp/empty.csv"
expect "csv: empty file" 2 "" "smx: $tmp/empty.csv: no numbers in the input" -- softmax "$tmp/empty.csv" -o "$tmp/keep.csv"
expect "csv: empty stdin" 2 "" "smx: <stdin>: no numbers in the input" -- softmax --in-format csv - -o "$tmp/keep.csv" < /dev/null
printf '1,2\n3,4e\n' > "$tmp/exp.csv"
expect "csv: bad stdin" 2 "" "smx: <stdin>: line 2, column 2: '4e' is not a number" -- logsumexp --in-format csv - -o - < "$tmp/exp.csv"
check "bad text: existing output untouched" test "$(cat "$tmp/keep.csv")" = "precious"
check "bad text: no temporary left" test -z "$(ls -A "$tmp" | grep tmp)"
expect "text output of 3 dimensions" 1 "" "smx: $tmp/o.csv: CSV/TSV output holds 1-d or 2-d results, this one has 3 dimensions (use .npy)" -- softmax "$DATA/f32_fortran_3d.npy" -o "$tmp/o.csv"
expect "unwritable text output" 3 "" "*" -- softmax "$tmp/a.csv" -o "$tmp/no/such/dir/o.csv"
check "unwritable text output: message names the file" grep -q "^smx: $tmp/no/such/dir/o.csv: cannot create a temporary file next to it: " "$tmp/err"
check "no output after text errors" test ! -e "$tmp/o.csv"

# ---- any axis, through pipes too (the out-of-order plan spools stdin and stdout)
expect "axis 0 file" 0 "" "" -- softmax "$DATA/f32_fortran_3d.npy" -o "$tmp/ax0.npy" --axis 0
SMX_CLI_BLOCK_BYTES=64 "$SMX" softmax - -o - --axis 0 < "$DATA/f32_fortran_3d.npy" | cat > "$tmp/ax0_pipe.npy"
check "axis 0 through a pipe, gathered in small blocks" cmp -s "$tmp/ax0.npy" "$tmp/ax0_pipe.npy"
cat "$DATA/f32_c_2d.npy" | SMX_CLI_BLOCK_BYTES=64 "$SMX" logsumexp - -o "$tmp/lse0_pipe.npy" --axis 0
"$SMX" logsumexp "$DATA/f32_c_2d.npy" -o "$tmp/lse0.npy" --axis -2
check "logsumexp axis 0 from a pipe" cmp -s "$tmp/lse0.npy" "$tmp/lse0_pipe.npy"

# ---- Ctrl-C: a stream that stalls half-way, SIGINT, exit 130, nothing left
/usr/bin/python3 -c "
import numpy as np; np.save('$tmp/big.npy', np.zeros((64, 4096), np.float32))"
mkfifo "$tmp/fifo"
( head -c 500000 "$tmp/big.npy"; sleep 1; tail -c +500001 "$tmp/big.npy" ) > "$tmp/fifo" &
feeder=$!
"$SMX" softmax "$tmp/fifo" -o "$tmp/int.npy" -q 2> "$tmp/err" &
victim=$!
sleep 0.4
kill -INT $victim
wait $victim
code=$?
wait $feeder
check "interrupted: exit code 130" test "$code" = 130
check "interrupted: message" test "$(cat "$tmp/err")" = "smx: interrupted; $tmp/int.npy was not written"
check "interrupted: no output, no temporary" test -z "$(ls -A "$tmp" | grep int.npy)"

# the numbers, against SciPy in double precision
for f in f32_c_2d f32_fortran_3d f64_be_fortran_2d f16_specials_as_f32 i16_be_3d; do
  expect "softmax $f" 0 "" "*" -- softmax "$DATA/$f.npy" -o "$tmp/sm_$f.npy" -q
  expect "log-softmax $f" 0 "" "" -- log-softmax "$DATA/$f.npy" -o "$tmp/ls_$f.npy" -q -t 0.5
  expect "logsumexp $f" 0 "" "" -- logsumexp "$DATA/$f.npy" -o "$tmp/lse_$f.npy" -q --threads 2
done
expect "stdin to stdout" 0 "*" "" -- softmax - -o - < "$x"
cp "$tmp/out" "$tmp/piped.npy"
check "stdin to stdout equals the file path" cmp -s "$tmp/piped.npy" "$tmp/sm_f32_c_2d.npy"

if /usr/bin/python3 - "$DATA" "$tmp" <<'PY'
import sys, numpy as np
from scipy.special import softmax, log_softmax, logsumexp
data, tmp = sys.argv[1], sys.argv[2]
bad = 0
for f in ["f32_c_2d", "f32_fortran_3d", "f64_be_fortran_2d", "f16_specials_as_f32", "i16_be_3d"]:
    x = np.load(f"{data}/{f}.npy").astype(np.float64)
    # smx computes in float32, float16 files through float32, float64 in float64
    x32 = x if np.load(f"{data}/{f}.npy").dtype == np.float64 else x.astype(np.float32).astype(np.float64)
    sm, ls, lse = (np.load(f"{tmp}/{p}_{f}.npy") for p in ("sm", "ls", "lse"))
    want_dtype = np.load(f"{data}/{f}.npy").dtype
    out_dtype = want_dtype if want_dtype.kind == "f" and want_dtype.itemsize != 4 else np.dtype("float32")
    with np.errstate(all="ignore"):
        r_sm, r_ls, r_lse = softmax(x32, axis=-1), log_softmax(x32 / 0.5, axis=-1), logsumexp(x32, axis=-1)
    for name, got, ref in (("softmax", sm, r_sm), ("log-softmax", ls, r_ls), ("logsumexp", lse, r_lse)):
        ok = got.shape == np.shape(ref) and got.dtype.newbyteorder("=") == out_dtype.newbyteorder("=")
        fin = np.isfinite(ref)
        ok = ok and np.array_equal(np.isnan(got), np.isnan(ref)) and np.array_equal(got[~fin & ~np.isnan(ref)], ref[~fin & ~np.isnan(ref)])
        ok = ok and np.allclose(got[fin], ref[fin], rtol=2e-6, atol=1e-7)
        if not ok:
            print(f"FAIL {f} {name}: shape {got.shape} dtype {got.dtype}, max err {np.nanmax(np.abs(got[fin] - ref[fin])) if fin.any() else 0}")
            bad += 1
sys.exit(1 if bad else 0)
PY
then pass=$((pass + 1)); else fail=$((fail + 1)); fi

# --dtype wider than the input: computed in the output's precision. float32
# input written as float64 matches a float64 SciPy reference to ~1e-15 (a
# float32 computation is ~1e-7 off); float16 input written as float32 matches
# a float32-accurate reference.
/usr/bin/python3 -c "
import numpy as np
rng = np.random.default_rng(5)
np.save('$tmp/w32.npy', (rng.standard_normal((64, 1000)) * 4).astype(np.float32))
np.save('$tmp/w16.npy', (rng.standard_normal((64, 300)) * 2).astype(np.float16))"
for c in softmax log-softmax logsumexp; do
  "$SMX" $c "$tmp/w32.npy" -o "$tmp/w32_$c.npy" --dtype f64 2>"$tmp/err"
  "$SMX" $c "$tmp/w16.npy" -o "$tmp/w16_$c.npy" --dtype f32 2>"$tmp/err"
done
check "--dtype wider than the input: float64 / float32 accuracy against SciPy" /usr/bin/python3 -c "
import sys, numpy as np
from scipy.special import softmax, log_softmax, logsumexp
bad = 0
for src, odt, tol in (('w32', np.float64, 1e-14), ('w16', np.float32, 2e-6)):
    x = np.load('$tmp/' + src + '.npy').astype(np.float64)
    for c, ref in (('softmax', softmax(x, axis=-1)), ('log-softmax', log_softmax(x, axis=-1)),
                   ('logsumexp', logsumexp(x, axis=-1))):
        got = np.load('$tmp/' + src + '_' + c + '.npy')
        err = (np.abs(got - ref) / np.maximum(np.abs(ref), 1e-300 if c == 'softmax' else 1.0)).max()
        if got.dtype != odt or err > tol:
            print(src, c, got.dtype, 'max relative error', err); bad = 1
sys.exit(bad)"

# A large output goes to the disk as it is written and leaves the page cache
# (a few blocks stay); the same bytes as without (SMX_CLI_NO_WRITEBACK=1,
# where the whole output stays cached). Not on tmpfs, which has no disk.
if [ "$(stat -f -c %T "$tmp")" != tmpfs ] && command -v fincore > /dev/null; then
  /usr/bin/python3 -c "
import numpy as np
np.save('$tmp/big.npy', np.random.default_rng(1).standard_normal((32768, 1024), dtype=np.float32))"
  "$SMX" softmax "$tmp/big.npy" -o "$tmp/big_wb.npy" -q
  res_wb=$(fincore --bytes --noheadings --output RES "$tmp/big_wb.npy")
  SMX_CLI_NO_WRITEBACK=1 "$SMX" softmax "$tmp/big.npy" -o "$tmp/big_nowb.npy" -q
  res_nowb=$(fincore --bytes --noheadings --output RES "$tmp/big_nowb.npy")
  check "large output: same bytes with and without streaming writeback" cmp -s "$tmp/big_wb.npy" "$tmp/big_nowb.npy"
  check "large output: at most 48 MiB of 128 MiB left in the page cache ($res_wb bytes; $res_nowb without)" \
    test "$res_wb" -le $((48 << 20))
  rm -f "$tmp"/big_*.npy
fi

# Memory is bounded by the block, not the input: the peak RSS of softmax,
# score and eval on 128 MiB of float32 exceeds that of `smx --version` (the
# program and its libraries: about 4 MiB, 12 MiB under ASan) by under 12 MiB
# (blocks of 1 MiB of rows).
if [ -x /usr/bin/time ]; then
  [ -e "$tmp/big.npy" ] || /usr/bin/python3 -c "
import numpy as np
np.save('$tmp/big.npy', np.random.default_rng(1).standard_normal((32768, 1024), dtype=np.float32))"
  /usr/bin/python3 -c "
import numpy as np
np.save('$tmp/big_ood.npy', np.random.default_rng(2).standard_normal((64, 1024), dtype=np.float32))"
  /usr/bin/time -f %M -o "$tmp/rss" "$SMX" --version > /dev/null 2>&1
  base=$(tail -1 "$tmp/rss")
  for c in "softmax $tmp/big.npy -o $tmp/big_o.npy -q" "score energy $tmp/big.npy -o $tmp/big_s.npy" \
           "eval --id $tmp/big.npy --ood $tmp/big_ood.npy --scores msp"; do
    /usr/bin/time -f %M -o "$tmp/rss" "$SMX" $c > /dev/null 2>&1
    check "peak RSS of smx ${c%% *} on 128 MiB within 12 MiB of smx --version ($(tail -1 "$tmp/rss") KiB, $base KiB)" \
      test "$(( $(tail -1 "$tmp/rss") - base ))" -lt 12288
  done
fi
rm -f "$tmp"/big*.npy

# every axis, layout, dtype and engine mode against SciPy; pipes; CSV and TSV
check "axes, dtypes and text against SciPy" /usr/bin/python3 "$(dirname "$0")/check_axes.py" "$SMX" "$tmp"

echo "cli_test: $pass passed, $fail failed"
[ $fail = 0 ]
