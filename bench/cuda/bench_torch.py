"""PyTorch's side of bench/cuda (the same shapes, the same card, in the same run as bench_cuda):
torch.softmax / log_softmax, topk(softmax), multinomial and the sort-based top-p / min-p sampling timed with CUDA events (median of the repeats after warm-ups), and the copy
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
    # the language-model head on 256 x 128000 (bench_cuda's names; bytes: one read of the logits)
    for name, dt in (("f32", torch.float32), ("bf16", torch.bfloat16)):
        x = (torch.rand(256, 128000, device=dev) * 16 - 8).to(dt)
        nbytes = x.numel() * x.element_size()
        for k in (1, 5, 50):
            us = median_us(lambda: torch.topk(torch.softmax(x, -1), k, dim=-1), reps)
            print(f"softmax_topk_k{k},{name},256,128000,{us:.2f},{nbytes}", flush=True)
        us = median_us(lambda: torch.multinomial(torch.softmax(x.float(), -1), 1), reps)
        print(f"sample_multinomial,{name},256,128000,{us:.2f},{nbytes}", flush=True)
        us = median_us(lambda: top_k_sample(x, 50), reps)
        print(f"sample_top_k50,{name},256,128000,{us:.2f},{nbytes}", flush=True)
        us = median_us(lambda: top_p_sample(x, 0.9), reps)
        print(f"sample_top_p0.9,{name},256,128000,{us:.2f},{nbytes}", flush=True)
        us = median_us(lambda: min_p_sample(x, 0.1), reps)
        print(f"sample_min_p0.1,{name},256,128000,{us:.2f},{nbytes}", flush=True)
        del x
        torch.cuda.empty_cache()


def top_k_sample(x, k):
    v, i = torch.topk(x.float(), k, dim=-1)
    return i.gather(-1, torch.multinomial(torch.softmax(v, -1), 1))


def top_p_sample(x, p):
    """The sort + cumsum form (as in Hugging Face's TopPLogitsWarper): the nucleus by a full sort of each row."""
    probs = torch.softmax(x.float(), -1)
    sp, si = torch.sort(probs, dim=-1, descending=True)
    cum = torch.cumsum(sp, -1)
    sp = sp.masked_fill(cum - sp >= p, 0.0)
    return si.gather(-1, torch.multinomial(sp, 1))


def min_p_sample(x, min_p):
    probs = torch.softmax(x.float(), -1)
    probs = probs.masked_fill(probs < min_p * probs.amax(-1, keepdim=True), 0.0)
    return torch.multinomial(probs, 1)


if __name__ == "__main__":
    main()
