#!/usr/bin/env python3
"""AUTO against the best fixed algorithm, from several runs of smx_bench.

    bench/auto_table.py [--bench build/bench/smx_bench] [--runs 3] [--isa avx512,avx2]
                        [--out DIR] [-- smx_bench options...]

Runs `smx_bench --smx-only --csv` RUNS times per kernel set (SMX_MAX_ISA),
takes each contender's median time over the runs, and prints one Markdown
table per kernel set: per case, thread count and op, the median ns/element
of AUTO and of the three fixed algorithms, AUTO / best fixed (a ratio above
1.05 is marked), and chosen / best: the median of the fixed algorithm AUTO
chose over the best one's, which is 1 where AUTO chose the fastest and is
free of the noise between AUTO's own repetitions and its twin's. --out keeps the CSV files; --csv-only reads CSV files
already made (--csv-only DIR) instead of running the benchmark.
"""
import argparse
import csv
import glob
import os
import statistics
import subprocess
import sys
import tempfile

OPS = [
    ("softmax", "smx-auto", ["smx-three-pass", "smx-two-pass", "smx-online"]),
    ("log-softmax", "smx-log-softmax", ["smx-log-three-pass", "smx-log-two-pass", "smx-log-online"]),
    ("logsumexp", "smx-logsumexp", ["smx-lse-three-pass", "smx-lse-two-pass", "smx-lse-online"]),
]


def read_runs(files):
    times = {}  # (case, threads, contender) -> [ns/elem]
    chose = {}  # (case, threads, auto contender) -> the algorithm AUTO chose
    order = []
    for f in files:
        with open(f, newline="") as fh:
            for row in csv.DictReader(fh):
                if not row["ns_per_elem"]:
                    continue
                key = (row["case"], int(row["threads"]), row["contender"])
                if (row["case"], int(row["threads"])) not in order:
                    order.append((row["case"], int(row["threads"])))
                times.setdefault(key, []).append(float(row["ns_per_elem"]))
                if row.get("algo"):
                    chose[key] = row["algo"]
    return times, order, chose


def table(isa, files):
    times, order, chose = read_runs(files)
    print(f"\n### {isa} ({len(files)} runs, median ns/element)\n")
    print("| case | thr | op | auto (chose) | three-pass | two-pass | online | auto/best | chosen/best |")
    print("|---|---:|---|---:|---:|---:|---:|---:|---:|")
    worst = 0.0
    for case, thr in order:
        for op, auto, fixed in OPS:
            a = times.get((case, thr, auto))
            fx = [times.get((case, thr, f)) for f in fixed]
            if not a or not all(fx):
                continue
            am = statistics.median(a)
            fm = [statistics.median(v) for v in fx]
            best = min(fm)
            r = am / best
            worst = max(worst, r)
            cells = [f"**{v:.4f}**" if v == best else f"{v:.4f}" for v in fm]
            mark = " OVER" if r > 1.05 else ""
            c = chose.get((case, thr, auto), "")
            names = ["three-pass", "two-pass", "online"]
            cr = f"{fm[names.index(c)] / best:.3f}" if c in names else "-"
            print(f"| {case} | {thr} | {op} | {am:.4f} ({c}) | {' | '.join(cells)} | {r:.3f}{mark} | {cr} |")
    print(f"\nworst auto/best: {worst:.3f}")
    return worst


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bench", default="build/bench/smx_bench")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--isa", default="avx512,avx2")
    ap.add_argument("--out")
    ap.add_argument("--csv-only")
    ap.add_argument("rest", nargs="*")
    a = ap.parse_args()
    for isa in a.isa.split(","):
        if a.csv_only:
            files = sorted(glob.glob(os.path.join(a.csv_only, f"{isa}-*.csv")))
        else:
            out = a.out or tempfile.mkdtemp(prefix="smx_auto_")
            os.makedirs(out, exist_ok=True)
            files = []
            for k in range(a.runs):
                f = os.path.join(out, f"{isa}-{k}.csv")
                env = dict(os.environ, SMX_MAX_ISA=isa)
                subprocess.run([a.bench, "--smx-only", "--csv", f] + a.rest, env=env, check=True,
                               stdout=subprocess.DEVNULL)
                files.append(f)
        if files:
            table(isa, files)
    return 0


if __name__ == "__main__":
    sys.exit(main())
