"""Joins bench_cuda's and bench_torch's CSV lines into the table of docs/cuda.md: per operation and shape,
smx and PyTorch in µs, GB/s (bytes read plus written at the minimum, over the time), the share of each
one's measured copy roof, and the ratio torch / smx (above 1: smx is faster).
Usage: python3 report.py SMX_CSV TORCH_CSV"""
import sys


def load(path):
    roof, rows = None, {}
    with open(path) as f:
        for line in f:
            p = line.strip().split(",")
            if len(p) == 3 and p[0] == "roof":
                roof = float(p[2])
            elif len(p) == 6:
                rows[(p[0], p[1], int(p[2]), int(p[3]))] = (float(p[4]), int(p[5]))
    return roof, rows


def main():
    sroof, smx = load(sys.argv[1])
    troof, torch = load(sys.argv[2]) if len(sys.argv) > 2 else (None, {})
    print(f"copy roof: smx run {sroof} GB/s, torch run {troof} GB/s")
    print(f"| op | dtype | shape | smx µs | smx GB/s | smx % roof | torch µs | torch % roof | torch/smx |")
    print(f"|---|---|---|---|---|---|---|---|---|")
    for key, (us, nbytes) in smx.items():
        gbs = nbytes / (us * 1e-6) / 1e9
        share = f"{100 * gbs / sroof:.0f}%" if sroof else "-"
        t = torch.get(key)
        if t:
            tgbs = t[1] / (t[0] * 1e-6) / 1e9
            tshare = f"{100 * tgbs / troof:.0f}%" if troof else "-"
            tcols = f"{t[0]:.1f} | {tshare} | {t[0] / us:.2f}x"
        else:
            tcols = "- | - | -"
        print(f"| {key[0]} | {key[1]} | {key[2]}x{key[3]} | {us:.1f} | {gbs:.0f} | {share} | {tcols} |")


if __name__ == "__main__":
    main()
