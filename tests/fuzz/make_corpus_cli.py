#!/usr/bin/python3
"""Writes the seed corpus of fuzz_cli into corpus/cli/.

Run from this directory with the system python3 (python3-numpy):
    /usr/bin/python3 make_corpus_cli.py
A seed is: the command's index, a byte of run settings, argument indices
ended by 0xff, file A, and after 0xfe file B (see the top of fuzz_cli.c).
The command and word tables are read from fuzz_cli.c itself, so the seeds
follow any change to them; regenerate the corpus after such a change.
"""
import io
import os
import re

import numpy as np
from numpy.lib import format as npf

OUT = "corpus/cli"


def table(src, name):
    body = re.search(r"%s\[\] = \{(.*?)\n\};" % name, src, re.S).group(1)
    body = re.sub(r"/\*.*?\*/", "", body, flags=re.S)
    return re.findall(r'"((?:[^"\\]|\\.)*)"', body)


SRC = open("fuzz_cli.c").read()
COMMANDS = table(SRC, "commands")
WORDS = table(SRC, "words")


def npy(a):
    b = io.BytesIO()
    npf.write_array(b, a, allow_pickle=False)
    return b.getvalue()


# run settings (byte 1): bit 0 stdin is a pipe; bits 1-2 block size (default,
# 16, 64, 4096 bytes); bit 3 synchronous writes; bit 4 mapped input; bit 5
# mapped output
PIPE, B16, B64, B4K, SYNC, MMAP_IN, MMAP_OUT = 1, 2, 4, 6, 8, 16, 32


def seed(cmd, args, a=b"", b=None, how=0):
    out = bytes([COMMANDS.index(cmd), how])
    for w in args.split():
        w = {"''": ""}.get(w, w)
        out += bytes([WORDS.index(w)])
    out += b"\xff" + a
    if b is not None:
        out += b"\xfe" + b
    return out


rng = np.random.default_rng(3)
f32 = rng.standard_normal((3, 4)).astype("<f4")
f64 = rng.standard_normal((2, 3)).astype("<f8")
f16 = np.array([[0, -1, 65504], [-np.inf, 2, 3]], dtype="<f2")
cube = np.asfortranarray(rng.standard_normal((2, 3, 4)).astype("<f4"))
targets = np.array([0, 3, 1], dtype="<i8")
csv = b"1,2,3\n4,5,6\n"

seeds = {
    "softmax-csv": seed("softmax", "@in.csv -o @out.csv", csv),
    "softmax-tsv-to-npy": seed("softmax", "@in.tsv -o @out.npy --dtype f32", b"1\t-inf\n0.5\t2\n"),
    "log-softmax-axis0": seed("log-softmax", "@in.npy -o @out.npy --axis 0", npy(f32)),
    "logsumexp-f64-tsv": seed("logsumexp", "@in.npy -o @out.tsv -a 0", npy(f64)),
    "softmax-stdin-pipe": seed("softmax", "- -o - --in-format csv", csv, how=PIPE),
    "softmax-stdin-spool": seed("softmax", "- -o @out.npy -a 0 -q", npy(f32), how=PIPE | B16),
    "softmax-stdin-file": seed("softmax", "- -o @out -t 0.5", npy(f32)),
    "softmax-f16-over-old": seed("softmax", "@in.npy -o @old.npy --dtype f16", npy(f16)),
    "softmax-fortran-3d-mode2": seed("softmax", "@in.npy -o @out.npy --axis 1 --algo online", npy(cube), how=B64),
    "softmax-mmap": seed("softmax", "@in.npy -o @out.npy --threads 2", npy(f32), how=MMAP_IN | MMAP_OUT | SYNC),
    "logsumexp-mode1-block": seed("logsumexp", "@in.npy -o @out.csv -a 0", npy(f32), how=B4K),
    "bad-csv-keeps-old": seed("softmax", "@in.csv -o @old.npy", b"1,2\n3\n"),
    "bad-3d-to-csv": seed("softmax", "@in.npy -o @out.csv", npy(cube)),
    "bad-axis": seed("log-softmax", "@in.npy -o @out.npy --axis 3", npy(f32)),
    "bad-missing-input": seed("softmax", "@missing.npy -o @out.npy", b""),
    "bad-dir-output": seed("softmax", "@in.csv -o @dir", csv),
    "bad-format-conflict": seed("softmax", "@in.csv --in-format npy -o @out.npy", csv),
    "topk-indices": seed("topk", "@in.npy -k 2 -o @out.npy --indices @out2.npy --log", npy(f32)),
    "topk-k-too-big": seed("topk", "@in.npy -k 5 -o @out.npy", npy(f32)),
    "sample-top-p": seed("sample", "@in.npy -o @out.npy --seed 1 --top-p 0.5 --top-k 2", npy(f32)),
    "sample-greedy": seed("sample", "@in.npy -o @out.npy --greedy", npy(f32)),
    "xent-grad": seed("xent", "@in.npy --targets @aux.npy -o @out.npy --grad @out2.npy", npy(f32), npy(targets)),
    "xent-sum-print": seed("xent", "@in.npy --targets @aux.npy --reduction sum --label-smoothing 0.1",
                           npy(f32), npy(targets)),
    "xent-bad-target": seed("xent", "@in.npy --targets @aux.npy -o @out.npy", npy(f32),
                            npy(np.array([0, 9, 1], dtype="<i8"))),
    "score-energy": seed("score", "energy @in.npy -o @out.npy -t 0.5", npy(f32)),
    "score-kl": seed("score", "kl_matching @in.npy -o @out.npy --templates-from @in.npy", npy(f32)),
    "eval-json": seed("eval", "--id @in.npy --ood @aux.npy --json - --scores msp,energy", npy(f32),
                      npy(rng.standard_normal((2, 4)).astype("<f4"))),
    "eval-report": seed("eval", "--id @in.npy --ood @aux.npy --report @out", npy(f32),
                        npy(rng.standard_normal((2, 4)).astype("<f4"))),
    "eval-labels": seed("eval", "--id @in.npy --labels @aux.npy --bins 3 --json @out", npy(f32), npy(targets)),
    "info": seed("info", ""),
    "version": seed("--version", ""),
}
os.makedirs(OUT, exist_ok=True)
for name, data in seeds.items():
    with open(os.path.join(OUT, name), "wb") as f:
        f.write(data)
