#!/bin/bash
# The smx command on a big .npy file against the library in memory.
#
# Usage: scripts/cli_throughput.sh BUILD_DIR [ROWS COLS] [RUNS]
#   (default 1000000 x 1000 float32 = 4 GiB, 3 runs; needs ~2x the file size
#   free in /tmp and ~5 GiB of memory for the in-memory reference)
# Prints, per run interleaved: the library's in-memory softmax on the same
# shape (smx_softmax_rows_f32 in place on the loaded array, through ctypes on
# libsmx.so; wall and CPU seconds), then the CLI file to file with the input
# in the page cache and the output in $OUT_DIR (default /dev/shm, so that the
# disk is not what is measured; fsync there is free), wall and CPU seconds and
# peak RSS from /usr/bin/time, in four variants: the default (pread, writer
# thread), SMX_CLI_SYNC_WRITES=1, SMX_CLI_MMAP_IN=1, SMX_CLI_MMAP_OUT=1.
# Then medians and the ratios CLI / in-memory throughput (wall and CPU).
set -eu
BUILD=$1
ROWS=${2:-1000000}
COLS=${3:-1000}
RUNS=${4:-3}
SMX=$BUILD/programs/smx
LIB=$BUILD/libsmx.so
IN=${TMPDIR:-/tmp}/smx_cli_tp_in.npy
OUT=${OUT_DIR:-/dev/shm}/smx_cli_tp_out.npy
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
    t, c = time.perf_counter(), time.process_time()
    f(p, cols, p, cols, rows, cols, None)
    ts.append((time.perf_counter() - t, time.process_time() - c))
ts.sort()
print(*ts[1])
PY
}
cli() {  # prints wall seconds, CPU seconds and peak RSS in KiB
  cat "$IN" > /dev/null  # in the page cache
  env "$@" /usr/bin/time -f "%e %U %S %M" "$SMX" softmax "$IN" -o "$OUT" -q 2> "$OUT.time"
  awk '{ print $1, $2 + $3, $4 }' "$OUT.time"
  rm -f "$OUT" "$OUT.time"
}
echo "shape ${ROWS}x${COLS} float32, $GB GB in and out; CPU: $(nproc) cores; kernels: $("$SMX" info | sed -n 2p); load: $(cut -d' ' -f1-3 /proc/loadavg)"
VARIANTS=("X=0" "SMX_CLI_SYNC_WRITES=1" "SMX_CLI_MMAP_IN=1" "SMX_CLI_MMAP_OUT=1")
NAMES=("default" "sync-writes" "mmap-in" "mmap-out")
printf "%-4s %-12s %9s %9s %9s\n" run variant "wall s" "CPU s" "RSS MiB"
declare -A W C
for r in $(seq 1 "$RUNS"); do
  read -r mw mc < <(inmem)
  W[mem]+="$mw "; C[mem]+="$mc "
  printf "%-4s %-12s %9.3f %9.3f %9s\n" "$r" in-memory "$mw" "$mc" -
  for v in 0 1 2 3; do
    read -r w c rss < <(cli "${VARIANTS[$v]}")
    W[${NAMES[$v]}]+="$w "; C[${NAMES[$v]}]+="$c "
    printf "%-4s %-12s %9.3f %9.3f %9d\n" "$r" "${NAMES[$v]}" "$w" "$c" $((rss / 1024))
  done
done
med() { printf "%s\n" $1 | sort -g | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }
mw=$(med "${W[mem]}"); mc=$(med "${C[mem]}")
echo "medians (ratio = CLI throughput / in-memory throughput):"
printf "  %-12s wall %8.3f s  CPU %8.3f s\n" in-memory "$mw" "$mc"
for n in "${NAMES[@]}"; do
  w=$(med "${W[$n]}"); c=$(med "${C[$n]}")
  /usr/bin/python3 -c "print(f'  {\"$n\":12s} wall {$w:8.3f} s  CPU {$c:8.3f} s  ratio wall {$mw/$w*100:4.0f}%  CPU {$mc/$c*100:4.0f}%')"
done
