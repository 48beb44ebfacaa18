#!/usr/bin/python3
"""Differential soak test of smx: random softmax, log-softmax and log-sum-exp
calls through the C API (ctypes on libsmx.so), the smx command and the Python
module, checked against long-double NumPy references under the documented
special-value policy and error bounds (see README.md here).

  /usr/bin/python3 tests/soak/soak.py --build build --seconds 300
  /usr/bin/python3 tests/soak/soak.py --build build --case 1234567   # replay one case

The cases run in a worker process; a crash or a hang of a case (--case-timeout)
is reported as that case's failure and a new worker carries on. The run ends
with "N cases, M failures" and exits 1 if M > 0.
"""
import argparse
import glob
import json
import os
import select
import shutil
import subprocess
import sys
import tempfile
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
SURFACES = {"c": 0.4, "py": 0.4, "cli": 0.2}  # the command is slower per case: fewer of them


def parse_args(argv):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default="build", help="build directory (relative to the source root or absolute)")
    ap.add_argument("--seconds", type=float, default=60, help="how long to run (default 60)")
    ap.add_argument("--seed", type=int, help="the run's seed (default: random, printed)")
    ap.add_argument("--case", type=int, action="append", help="run only this case seed (repeatable), verbosely")
    ap.add_argument("--surfaces", default="c,py,cli", help="comma-separated subset of c,py,cli")
    ap.add_argument("--no-known", action="store_true", help="ignore the KNOWN list (known.py)")
    ap.add_argument("--case-timeout", type=float, default=300, help="seconds before a case counts as hung")
    ap.add_argument("--save-dir", help="where failing inputs are saved (default: a new temporary directory)")
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--work-dir", help=argparse.SUPPRESS)  # scratch files of the command's cases
    return ap.parse_args(argv)


def build_paths(build):
    b = build if os.path.isabs(build) else os.path.join(ROOT, build)
    libs = sorted(glob.glob(os.path.join(b, "libsmx.so*")) + glob.glob(os.path.join(b, "src", "libsmx.so*")))
    if not libs:
        sys.exit("soak: no libsmx.so under %s (build it first)" % b)
    cli = os.path.join(b, "programs", "smx")
    if not os.access(cli, os.X_OK):
        sys.exit("soak: no %s (build it first)" % cli)
    return b, min(libs, key=len), cli


def make_env(args):
    sys.path.insert(0, HERE)
    b, lib, cli = build_paths(args.build)
    sys.path.insert(0, os.path.join(b, "python"))
    import known
    import surface_c
    env = {"cli": cli, "lib_path": lib, "known": known.Known(not args.no_known), "cli_timeout": 120,
           "tmp": args.work_dir, "save_dir": args.save_dir}
    env["clib"] = surface_c.Lib(lib)
    import smx
    env["smx"] = smx
    return env


def run_case(seed, env, surfaces):
    import numpy as np

    import case as case_mod
    import surface_c
    import surface_cli
    import surface_py
    rng = np.random.default_rng(seed)
    w = np.array([SURFACES[s] for s in surfaces])
    surface = surfaces[int(rng.choice(len(surfaces), p=w / w.sum()))]
    c = case_mod.Case(seed, surface)
    try:
        {"c": surface_c, "py": surface_py, "cli": surface_cli}[surface].run(c, rng, env)
    except Exception:
        c.fail("exception in the soak (or from smx): " + traceback.format_exc(limit=6))
    return c


def save_inputs(c, save_dir):
    import numpy as np
    paths = []
    for name, arr in c.inputs.items():
        p = os.path.join(save_dir, "case-%d-%s.npy" % (c.seed, name))
        np.save(p, arr)
        paths.append(p)
    return paths


def worker(args):
    env = make_env(args)
    surfaces = args.surfaces.split(",")
    # each parameter set is announced before its case runs, so that a crash or hang can be attributed
    skip = env["known"].skip

    def announce(c):
        sys.stdout.write("start " + c.describe() + "\n")
        sys.stdout.flush()
        return skip(c)
    env["known"].skip = announce
    for line in sys.stdin:
        seed = int(line)
        c = run_case(seed, env, surfaces)
        saved = save_inputs(c, env["save_dir"]) if c.failures else []
        res = {"seed": seed, "surface": c.params["surface"], "known": c.known, "failures": c.failures,
               "params": c.describe(), "saved": saved}
        sys.stdout.write("done " + json.dumps(res) + "\n")
        sys.stdout.flush()


def replay(args):
    env = make_env(args)
    env["save_dir"] = args.save_dir or tempfile.mkdtemp(prefix="smx-soak-")
    bad = 0
    for seed in args.case:
        c = run_case(seed, env, args.surfaces.split(","))
        print("case %d [%s]%s\n  params: %s" % (seed, c.params["surface"], " KNOWN " + c.known if c.known else "",
                                                c.describe()))
        for f in c.failures:
            print("  FAIL: " + f)
        if c.failures:
            print("  inputs: " + " ".join(save_inputs(c, env["save_dir"])))
            bad += c.known is None
        else:
            print("  ok")
    return 1 if bad else 0


class Worker:
    def __init__(self, args):
        cmd = [sys.executable, os.path.abspath(__file__), "--worker", "--build", args.build, "--surfaces",
               args.surfaces, "--save-dir", args.save_dir, "--work-dir", args.work_dir] + \
            (["--no-known"] if args.no_known else [])
        self.err = tempfile.TemporaryFile()
        self.p = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.err,
                                  bufsize=0)
        self.buf = b""

    def readline(self, deadline):
        while b"\n" not in self.buf:
            left = deadline - time.time()
            if left <= 0 or not select.select([self.p.stdout], [], [], left)[0]:
                return None  # hung
            chunk = os.read(self.p.stdout.fileno(), 1 << 16)
            if not chunk:
                return b""  # died
            self.buf += chunk
        line, self.buf = self.buf.split(b"\n", 1)
        return line

    def stderr_tail(self):
        self.err.seek(0)
        return self.err.read().decode(errors="replace")[-3000:]

    def kill(self):
        self.p.kill()
        self.p.wait()


def main(argv):
    args = parse_args(argv)
    args.work_dir = args.work_dir or tempfile.mkdtemp(prefix="smx-soak-work-")
    if args.worker:
        return worker(args)
    try:
        return replay(args) if args.case else soak(args)
    finally:
        shutil.rmtree(args.work_dir, ignore_errors=True)


def soak(args):
    import numpy as np
    seed = args.seed if args.seed is not None else int.from_bytes(os.urandom(4), "little")
    args.save_dir = args.save_dir or tempfile.mkdtemp(prefix="smx-soak-%d-" % seed)
    b, lib, cli = build_paths(args.build)
    me = "/usr/bin/python3 tests/soak/soak.py --build %s" % args.build
    print("smx soak: seed %d, %g s, build %s (%s, %s), surfaces %s, failing inputs to %s" % (
        seed, args.seconds, b, os.path.basename(lib), "smx", args.surfaces, args.save_dir), flush=True)
    print("  rerun this run: %s --seed %d --seconds %g" % (me, seed, args.seconds), flush=True)
    master = np.random.default_rng(seed)
    start = time.time()
    n = fails = 0
    per_surface = {}
    known = {}
    kinds = {}  # failure signature -> [count, first case seed]
    w = None
    next_report = start + 30
    while time.time() - start < args.seconds:
        if w is None:
            w = Worker(args)
        cs = int(master.integers(0, 2 ** 63 - 1))
        w.p.stdin.write(b"%d\n" % cs)
        params, result, why = "{}", None, None
        while True:
            line = w.readline(time.time() + args.case_timeout)
            if line is None:
                why = "hung: no answer within %g s" % args.case_timeout
            elif line == b"":
                w.p.wait()
                why = "the worker died (exit %s)" % w.p.returncode
            elif line.startswith(b"start "):
                params = line[6:].decode()
                continue
            else:
                result = json.loads(line[5:])
            break
        n += 1
        if why:  # a crash or hang: the case's own failure, then a fresh worker
            tail = w.stderr_tail()
            w.kill()
            w = None
            p = json.loads(params)
            kn = env_known_name(p, args)
            result = {"seed": cs, "surface": p.get("surface", "?"), "known": kn, "params": params, "saved": [],
                      "failures": ["%s; its stderr ends:\n%s" % (why, tail)]}
        s = result["surface"]
        per_surface[s] = per_surface.get(s, 0) + 1
        if result["known"]:
            k = known.setdefault(result["known"], [0, 0])
            k[0] += 1
            k[1] += bool(result["failures"])
        elif result["failures"]:
            fails += 1
            k = kinds.setdefault(signature(result), [0, cs])
            k[0] += 1
            print("FAIL case %d [%s]:" % (cs, s))
            for f in result["failures"]:
                print("  " + f.replace("\n", "\n    "))
            print("  params: %s" % result["params"])
            if result["saved"]:
                print("  inputs: %s" % " ".join(result["saved"]))
            print("  replay: %s --case %d" % (me, cs), flush=True)
        if time.time() > next_report:
            print("  ... %d cases, %d failures, %.0f s" % (n, fails, time.time() - start), flush=True)
            next_report += 30
    if w is not None:
        w.p.stdin.close()
        w.p.wait()
    el = time.time() - start
    print("per surface: %s; %.0f cases per minute" % (
        ", ".join("%s %d" % kv for kv in sorted(per_surface.items())), n * 60 / max(el, 1e-9)))
    for sig, (m, first) in sorted(kinds.items(), key=lambda kv: -kv[1][0]):
        print("failure kind (%d cases, first --case %d): %s" % (m, first, sig))
    for name, (m, f) in sorted(known.items()):
        print("KNOWN %s: matched %d cases, %d of them failed (not counted)" % (name, m, f))
    if not os.listdir(args.save_dir):
        os.rmdir(args.save_dir)
    print("%d cases, %d failures (seed %d, %.0f s)" % (n, fails, seed, el))
    return 1 if fails else 0


def signature(result):
    """A failure with its numbers and paths blanked, so that cases failing the same way group together."""
    import re
    msg = result["failures"][-1].strip()
    where = result["surface"]
    if msg.startswith("accuracy:"):  # accuracy failures group by operation and dtype too
        p = json.loads(result["params"])
        where += " %s %s" % (p.get("op", "?"), p.get("dtype") or p.get("in_dtype", "?"))
        line = "accuracy, got %s" % ("NaN" if "got nan" in msg else "a wrong value")
    elif msg.startswith("exception"):
        line = msg.splitlines()[-1]
    else:
        line = msg.splitlines()[0]
    line = re.sub(r"/\S+", "PATH", line)
    return "[%s] %s" % (where, re.sub(r"[-+]?\d[\d.e+-]*", "N", line)[:160])


def env_known_name(params, args):
    """The KNOWN entry a crashed or hung case's parameters fall under, if any."""
    if args.no_known:
        return None
    sys.path.insert(0, HERE)
    import known
    import case as case_mod
    c = case_mod.Case(0, params.get("surface", "?"))
    c.params.update(params)
    if "surface" in params:
        known.Known().skip(c)
    return c.known


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
