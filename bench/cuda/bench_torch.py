"""PyTorch's side of bench/cuda (the same shapes, the same card, in the same run as bench_cuda):
torch.softmax / log_softmax timed with CUDA events (median of the repeats after warm-ups), and the copy
roof (a 2 GiB device-to-device copy, bytes read plus bytes written). Prints the CSV lines of bench_cuda.c
(roof,torch,<GB/s> and <op>,<dtype>,<rows>,<cols>,<us>,<bytes>). Usage: python3 bench_torch.py [repeats]"""
import sys

import torch


def median_us(fn, reps):
    for _ in range(3):
        fn()
    starts = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
    ends = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
    for s, e in zip(starts, ends):
        s.record()
        fn()
        e.record()
    torch.cuda.synchronize()
    t = sorted(s.elapsed_time(e) * 1000.0 for s, e in zip(starts, ends))
    return t[len(t) // 2]


def main():
    reps = int(sys.argv[1]) if len(sys.argv) > 1 else 30
    if not torch.cuda.is_available():
        print("bench_torch: no GPU", file=sys.stderr)
        sys.exit(77)
    dev = torch.device("cuda")
    n = (2 << 30) // 4
    a = torch.randn(n, device=dev)
    b = torch.empty_like(a)
    us = median_us(lambda: b.copy_(a), reps)
    print(f"roof,torch,{2 * n * 4 / (us * 1e-6) / 1e9:.1f}", flush=True)
    del a, b
    shapes = [(4096, 32000), (512, 256000), (65536, 1000), (16, 4194304), (8192, 128000)]
    for name, dt in (("f32", torch.float32), ("bf16", torch.bfloat16)):
        for rows, cols in shapes:
            x = (torch.rand(rows, cols, device=dev) * 16 - 8).to(dt)
            us = median_us(lambda: torch.softmax(x, -1), reps)
            print(f"softmax,{name},{rows},{cols},{us:.2f},{2 * x.numel() * x.element_size()}", flush=True)
            del x
            torch.cuda.empty_cache()
    for name, dt in (("f32", torch.float32), ("bf16", torch.bfloat16)):
        x = (torch.rand(4096, 32000, device=dev) * 16 - 8).to(dt)
        us = median_us(lambda: torch.log_softmax(x, -1), reps)
        print(f"log_softmax,{name},4096,32000,{us:.2f},{2 * x.numel() * x.element_size()}", flush=True)


if __name__ == "__main__":
    main()
