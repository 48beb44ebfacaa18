#!/bin/bash
# The smx command on a big .npy file against the library in memory.
#
# Usage: scripts/cli_throughput.sh BUILD_DIR [ROWS COLS] [RUNS]
#   (default 1000000 x 1000 float32 = 4 GiB, 3 runs; needs ~2x the file size
#   free in /tmp and ~5 GiB of memory for the in-memory reference)
# Prints, per run interleaved: the library's in-memory softmax throughput on
# the same shape (smx_softmax_rows_f32 in place on a loaded array, through
# ctypes on libsmx.so), the CLI file-to-file time with the file in the page
# cache and its peak RSS (/usr/bin/time -v), once with the background writer
# and once with SMX_CLI_SYNC_WRITES=1; then medians and the ratio
# CLI / in-memory throughput.
set -eu
BUILD=$1
ROWS=${2:-1000000}
COLS=${3:-1000}
RUNS=${4:-3}
SMX=$BUILD/programs/smx
LIB=$BUILD/libsmx.so
IN=${TMPDIR:-/tmp}/smx_cli_tp_in.npy
OUT=${TMPDIR:-/tmp}/smx_cli_tp_out.npy
trap 'rm -f "$IN" "$OUT"' EXIT
/usr/bin/python3 - "$IN" "$ROWS" "$COLS" <<'PY'
import sys, numpy as np
path, rows, cols = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
a = np.lib.format.open_memmap(path, mode="w+", dtype=np.float32, shape=(rows, cols))
rng = np.random.default_rng(0)
step = max(1, (1 << 24) // cols)
for i in range(0, rows, step):
    a[i:i + step] = rng.standard_normal((min(step, rows - i), cols), dtype=np.float32) * 3
a.flush()
PY
GB=$(/usr/bin/python3 -c "print($ROWS*$COLS*4/1e9)")
inmem() {
  /usr/bin/python3 - "$LIB" "$IN" <<'PY'
import ctypes, sys, time, numpy as np
lib = ctypes.CDLL(sys.argv[1])
x = np.load(sys.argv[2])               # in memory, not mapped
rows, cols = x.shape
f = lib.smx_softmax_rows_f32
f.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_size_t, ctypes.c_size_t,
              ctypes.c_void_p]
p = x.ctypes.data
f(p, cols, p, cols, rows, cols, None)  # warm (in place)
ts = []
for _ in range(3):
    t = time.perf_counter(); f(p, cols, p, cols, rows, cols, None); ts.append(time.perf_counter() - t)
print(sorted(ts)[1])
PY
}
cli() {  # prints seconds and peak RSS in KiB
  cat "$IN" > /dev/null  # in the page cache
  env "$@" /usr/bin/time -v "$SMX" softmax "$IN" -o "$OUT" -q 2> "$OUT.time"
  awk -F': ' '/Elapsed \(wall clock\)/ { n = split($2, p, ":"); s = p[n] + (n > 1 ? 60 * p[n-1] : 0) }
              /Maximum resident/ { r = $2 } END { print s, r }' "$OUT.time"
  rm -f "$OUT" "$OUT.time"
}
echo "shape ${ROWS}x${COLS} float32, $GB GB in and out; CPU: $(nproc) cores; kernels: $("$SMX" info | sed -n 2p)"
printf "%-4s %14s %14s %12s %16s %12s\n" run "in-memory s" "cli s" "cli RSS MiB" "cli-sync s" "sync RSS MiB"
declare -a M C CS
for r in $(seq 1 "$RUNS"); do
  m=$(inmem)
  read -r c crss < <(cli)
  read -r cs csrss < <(cli SMX_CLI_SYNC_WRITES=1)
  M+=("$m"); C+=("$c"); CS+=("$cs")
  printf "%-4s %14.3f %14.3f %12d %16.3f %12d\n" "$r" "$m" "$c" $((crss / 1024)) "$cs" $((csrss / 1024))
done
med() { printf "%s\n" "$@" | sort -g | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }
m=$(med "${M[@]}"); c=$(med "${C[@]}"); cs=$(med "${CS[@]}")
/usr/bin/python3 -c "
m, c, cs, gb = $m, $c, $cs, $GB
print(f'median: in-memory {gb/m:.2f} GB/s, cli {gb/c:.2f} GB/s ({m/c*100:.0f}% of in-memory), cli with sync writes {gb/cs:.2f} GB/s ({m/cs*100:.0f}%)')"
