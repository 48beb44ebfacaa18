#!/bin/bash
# The smx command against the speed of the disk: wall time of `smx softmax`,
# `log-softmax`, `score` and `eval` on an N GiB float32 .npy (rows x COLS)
# against a plain copy of the same file through user space, `dd bs=16M`.
# Runs are interleaved (every command once per round, the floors too) and
# the table shows medians, the ratio to the floor and the peak RSS
# (/usr/bin/time). The page cache is left alone: with the file smaller than
# memory every run reads from the cache, the floor's too.
#
# Floors: `dd if=IN of=OUT bs=16M` (a copy; the commands that write an output
# as large as the input), `dd ... conv=fsync` (the same, flushed to the disk,
# as smx flushes its output before renaming it into place), and
# `dd if=IN of=/dev/null bs=16M` (a read; `score` and `eval` write little).
#
# usage: bench/io_vs_dd.sh [--gib N] [--cols C] [--runs R] [--dir DIR] [--smx PATH]
#                          [--before PATH] [--no-eval-all]
#   defaults: 1 GiB, 4096 columns, 5 rounds, a scratch folder under $TMPDIR
#   (else /tmp, removed at the end), build/programs/smx. --before: another
#   smx binary (an older build) run in the same rounds, its rows marked
#   "(before)". --no-eval-all: leave out `eval` of all scores (compute-bound,
#   the slowest row). Needs about 2N GiB free in DIR and /usr/bin/python3 with
#   NumPy.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
gib=1 cols=4096 runs=5 dir="" smx="$root/build/programs/smx" before="" eval_all=1
while [ $# -gt 0 ]; do
  case $1 in
    --gib) gib=$2; shift 2 ;;
    --cols) cols=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    --dir) dir=$2; shift 2 ;;
    --smx) smx=$2; shift 2 ;;
    --before) before=$2; shift 2 ;;
    --no-eval-all) eval_all=0; shift ;;
    -h|--help) sed -n '2,24p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "io_vs_dd.sh: unknown argument '$1'" >&2; exit 1 ;;
  esac
done
[ -x "$smx" ] || { echo "io_vs_dd.sh: no smx at $smx (build first, or --smx PATH)" >&2; exit 1; }
work=$(mktemp -d "${dir:-${TMPDIR:-/tmp}}/smx-io.XXXXXX")
trap 'rm -rf "$work"' EXIT
in="$work/x.npy" ood="$work/ood.npy" out="$work/out.npy"

need=$(awk -v g="$gib" 'BEGIN { printf "%d", (2 * g + 1) * 1024 * 1024 }')   # KiB: the input and one output
have=$(df -Pk "$work" | awk 'NR == 2 { print $4 }')
[ "$have" -gt "$need" ] || { echo "io_vs_dd.sh: $work has $((have / 1024)) MiB free, needs $((need / 1024))" >&2; exit 1; }

/usr/bin/python3 - "$in" "$ood" "$gib" "$cols" <<'PY'
import sys, numpy as np
path, ood, gib, cols = sys.argv[1], sys.argv[2], float(sys.argv[3]), int(sys.argv[4])
rows = int(gib * 2**30) // (4 * cols)
m = np.lib.format.open_memmap(path, mode="w+", dtype=np.float32, shape=(rows, cols))
rng = np.random.default_rng(0)
step = max(1, (64 << 20) // (4 * cols))
for r in range(0, rows, step):
    k = min(step, rows - r)
    m[r:r + k] = rng.standard_normal((k, cols), dtype=np.float32) * 3
m.flush()
del m
np.save(ood, (rng.standard_normal((1024, cols), dtype=np.float32) * 3))
print(f"input: {rows} x {cols} float32, {rows * cols * 4 / 2**30:.2f} GiB")
PY

# name|command (run through bash -c; IN, OUT, OOD, SMX set)
cases=(
  "dd copy|dd if=\"\$IN\" of=\"\$OUT\" bs=16M status=none"
  "dd copy, fsync|dd if=\"\$IN\" of=\"\$OUT\" bs=16M conv=fsync status=none"
  "dd read|dd if=\"\$IN\" of=/dev/null bs=16M status=none"
  "softmax|\"\$SMX\" softmax \"\$IN\" -o \"\$OUT\" -q"
  "log-softmax|\"\$SMX\" log-softmax \"\$IN\" -o \"\$OUT\" -q"
  "score energy|\"\$SMX\" score energy \"\$IN\" -o \"\$OUT\""
  "eval (msp)|\"\$SMX\" eval --id \"\$IN\" --ood \"\$OOD\" --scores msp > /dev/null"
  "eval (all scores)|\"\$SMX\" eval --id \"\$IN\" --ood \"\$OOD\" > /dev/null"
)
[ $eval_all = 1 ] || unset 'cases[${#cases[@]}-1]'
# eval of all scores on every core (--threads $(nproc)); not run for --before, whose smx may lack --threads
[ $eval_all = 1 ] && cases+=("eval (all, $(nproc) threads)|\"\$SMX\" eval --id \"\$IN\" --ood \"\$OOD\" --threads $(nproc) > /dev/null")
if [ -n "$before" ]; then
  [ -x "$before" ] || { echo "io_vs_dd.sh: no smx at $before" >&2; exit 1; }
  for c in "${cases[@]}"; do
    case $c in
      dd*|*threads*) ;;
      *) name=${c%%|*}; cmd=${c#*|}; cases+=("$name (before)|${cmd//\$SMX/\$SMX_BEFORE}") ;;
    esac
  done
fi
export SMX_BEFORE="$before"
export IN="$in" OUT="$out" OOD="$ood" SMX="$smx"
# one untimed pass of everything first: the page cache holds the input
for c in "${cases[@]}"; do bash -c "${c#*|}"; rm -f "$out"; done
for ((r = 1; r <= runs; r++)); do
  for c in "${cases[@]}"; do
    name=${c%%|*}
    rm -f "$out"
    sync "$work" 2>/dev/null || sync
    /usr/bin/time -f "%e %M" -o "$work/time" bash -c "${c#*|}"
    echo "$name|$(cat "$work/time")" >> "$work/log"
  done
  rm -f "$out"
  echo "round $r of $runs done" >&2
done

/usr/bin/python3 - "$work/log" "$gib" "$cols" "$runs" <<PY
import sys, statistics as st
log, gib, cols, runs = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]
t, rss = {}, {}
for line in open(log):
    name, rest = line.rstrip("\n").split("|")
    s, kb = rest.split()
    t.setdefault(name, []).append(float(s))
    rss[name] = max(rss.get(name, 0), int(kb))
floors = {"softmax": "dd copy", "log-softmax": "dd copy", "score energy": "dd read",
          "eval (msp)": "dd read", "eval (all scores)": "dd read"}
floors.update({k: "dd read" for k in t if k.startswith("eval (all, ")})
floors.update({k + " (before)": v for k, v in list(floors.items())})
print(f"{gib} GiB float32, {cols} columns, median of {runs} interleaved runs, warm page cache")
print(f"{'command':<27} {'median s':>9} {'MiB/s':>7} {'max RSS MiB':>11}  {'floor':<9} {'ratio':>6} {'vs dd+fsync':>11}")
size_mib = float(gib) * 1024
for name in t:
    m = st.median(t[name])
    f = floors.get(name)
    ratio = f"{m / st.median(t[f]):.2f}" if f else ""
    vs_sync = f"{m / st.median(t['dd copy, fsync']):.2f}" if f == "dd copy" else ""
    print(f"{name:<27} {m:9.2f} {size_mib / m:7.0f} {rss[name] / 1024:11.1f}  {f or '':<9} {ratio:>6} {vs_sync:>11}")
PY
