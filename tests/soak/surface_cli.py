"""The smx command: softmax / log-softmax / logsumexp on .npy (float16/32/64,
int16, bool; C and Fortran order; either byte order), CSV and TSV files, and
on stdin / stdout; every option. Checked: the exit code, an empty stderr,
the output's dtype, shape and memory order, the values against the
reference, the same bytes for another --threads; bad command lines and bad
files give their exit code (1 usage, 2 input) and leave no output file."""
import io
import os
import subprocess

import numpy as np

import reference
import values

OPS = {"softmax": "softmax", "log-softmax": "log_softmax", "logsumexp": "logsumexp"}
NPY_TYPES = {"f16": "<f2", "f32": "<f4", "f64": "<f8", "i16": "<i2", "bool": "|b1"}
BAD = {  # what goes wrong -> exit code
    "axis-range": 1, "axis-word": 1, "dtype-bf16": 1, "temperature-neg": 1, "temperature-zero": 1,
    "temperature-inf": 1, "temperature-word": 1, "threads-0": 1, "threads-big": 1, "algo": 1,
    "masked-row": 1, "unknown-option": 1, "no-output": 1, "missing-input": 2, "truncated-npy": 2,
    "bad-magic": 2, "csv-word": 2, "csv-ragged": 2,
}


def _decorations(rng, fmt, p):
    """Which of the things the text reader must skip or accept a file gets."""
    p["comments"] = bool(rng.random() < 0.15)
    p["tab_line"] = bool(fmt == "csv" and rng.random() < 0.05)
    p["spaces"] = bool(rng.random() < 0.1)
    p["crlf"] = bool(rng.random() < 0.1)
    p["final_eol"] = bool(rng.random() < 0.9)
    p["bom"] = bool(rng.random() < 0.05)


def _text(x2, sep, rng, p):
    """CSV / TSV of a 2-D float64 array, with the decorations drawn by _decorations."""
    lines = [sep.join(repr(float(v)) for v in row) for row in x2]
    if p["comments"]:
        lines.insert(int(rng.integers(0, len(lines) + 1)), "# a comment, " + sep)
        lines.insert(int(rng.integers(0, len(lines) + 1)), "")
    if p["tab_line"]:
        lines.insert(int(rng.integers(0, len(lines) + 1)), "\t" * int(rng.integers(1, 4)))
    if p["spaces"]:
        lines = [(" " + l.replace(sep, " " + sep + " ") + " ") if l and l[0] != "#" else l for l in lines]
    eol = "\r\n" if p["crlf"] else "\n"
    data = (eol.join(lines) + (eol if p["final_eol"] else "")).encode()
    return b"\xef\xbb\xbf" + data if p["bom"] else data


def _parse_text(data, sep, shape, dtype):
    vals = [float(f) for line in data.decode().splitlines() if line.strip() for f in line.split(sep)]
    return np.array(vals, dtype=np.float64).astype(dtype).reshape(shape)


def _env(rng, env, p):
    e = dict(os.environ)
    e.pop("LD_PRELOAD", None)  # the command links its own sanitizer runtime, if any
    # a sanitizer report must not look like exit code 1 or 2
    e["ASAN_OPTIONS"] = "detect_leaks=1:exitcode=99"
    e["UBSAN_OPTIONS"] = "print_stacktrace=1:halt_on_error=1:exitcode=99"
    isa = str(rng.choice(["", "scalar", "avx2", "avx512", "avx512bf16"]))
    p["SMX_MAX_ISA"] = isa
    if isa:
        e["SMX_MAX_ISA"] = isa
    else:
        e.pop("SMX_MAX_ISA", None)
    return e


def _run(case, env, argv, stdin, penv):
    p = case.params
    try:
        r = subprocess.run([env["cli"]] + argv, input=stdin, capture_output=True, env=penv, cwd=env["tmp"],
                           timeout=env["cli_timeout"])
    except subprocess.TimeoutExpired:
        case.fail("timed out after %d s" % env["cli_timeout"])
        return None
    if r.returncode < 0:
        case.fail("killed by signal %d; stderr: %s" % (-r.returncode, r.stderr.decode(errors="replace")[-400:]))
        return None
    err = r.stderr.decode(errors="replace")
    if r.returncode == 99 or "Sanitizer" in err or "runtime error" in err:
        case.fail("sanitizer report (exit %d): %s" % (r.returncode, err[-1500:]))
        return None
    p.setdefault("rc", r.returncode)
    return r


def run(case, rng, env):
    p = case.params
    p["op"] = cmd = str(rng.choice(list(OPS)))
    op = OPS[cmd]
    p["in_format"] = fmt = str(rng.choice(["npy"] * 6 + ["csv", "tsv"]))
    if fmt == "npy":
        shape, axis = values.nd_shape(rng, max_elems=1 << 17)
        if rng.random() < 0.01 and op != "logsumexp":  # zero-width rows, very many of them (the file is just a header)
            shape, axis = [int(10 ** rng.uniform(6, 11)), 0], 1
        p["in_dtype"] = idt = str(rng.choice(["f16", "f32", "f32", "f64", "f64", "i16", "bool"]))
        p["fortran"] = fortran = bool(rng.random() < 0.3)
        p["big_endian"] = big = bool(rng.random() < 0.1)
    else:
        shape = [int(rng.integers(1, 40)), values.row_length(rng) % 600 or 1]
        axis = int(rng.integers(0, 2))
        idt, fortran, big = "f64", False, False
        _decorations(rng, fmt, p)
    p["shape"] = shape
    nd = len(shape)
    p["axis"] = axis_arg = str(axis - nd if rng.random() < 0.3 else axis) if rng.random() < 0.9 else None
    if axis_arg is None:
        axis = nd - 1
    p["dtype"] = odt_opt = str(rng.choice(["f16", "f32", "f64"])) if rng.random() < 0.4 else None
    p["temperature"] = T = values.temperature(rng)
    p["algo"] = values.algo(rng)
    p["threads"] = int(rng.integers(1, 6))
    p["masked_row"] = str(rng.choice(["zero", "zero", "nan"]))
    rshape = [s for d, s in enumerate(shape) if op != "logsumexp" or d != axis]
    text_ok = len(rshape) <= 2 and all(rshape)
    p["out_format"] = ofmt = str(rng.choice(["npy", "npy", "csv", "tsv"])) if text_ok else "npy"
    p["stdin"] = use_stdin = bool(rng.random() < 0.15)
    p["stdout"] = use_stdout = bool(rng.random() < 0.15)
    p["bad"] = bad = str(rng.choice(list(BAD))) if rng.random() < 0.08 else None
    penv = _env(rng, env, p)
    if env["known"].skip(case):
        return

    # the input file and the values the command reads
    others = [s for d, s in enumerate(shape) if d != axis]
    if np.prod(shape, dtype=float) == 0 and np.prod(others, dtype=float) > 1e7:
        a = np.zeros(shape, np.float64)
        p["values"] = "empty"
    else:
        fam, x2 = values.rows_of_values(rng, int(np.prod(others, dtype=np.int64)), shape[axis],
                                        idt if idt in ("f16", "f32", "f64") else "f32")
        p["values"] = fam
        a = np.moveaxis(x2.reshape(others + [shape[axis]]), -1, axis)
    written_fortran = False
    if fmt == "npy":
        if idt == "i16":
            a = np.nan_to_num(np.clip(a, -30000, 30000), nan=0, posinf=30000, neginf=-30000).round()
        elif idt == "bool":
            a = np.nan_to_num(a) > 0
        typ = np.dtype(NPY_TYPES[idt])
        if big:
            typ = typ.newbyteorder(">")
        stored = np.asfortranarray(a.astype(typ)) if fortran else np.ascontiguousarray(a.astype(typ))
        # what the header says: NumPy writes fortran_order only for arrays that
        # are Fortran- and not C-contiguous (an empty array is written as C)
        written_fortran = bool(np.isfortran(stored))
        buf = io.BytesIO()
        np.save(buf, stored)
        data = buf.getvalue()
        seen = stored.astype(np.float64)
    else:
        data = _text(np.asarray(a), "," if fmt == "csv" else "\t", rng, p)
        seen = np.asarray(a)
    case.inputs["x"] = seen
    tag = "c%x" % case.seed
    inp = os.path.join(env["tmp"], tag + "-in." + fmt)
    out = os.path.join(env["tmp"], tag + "-out." + ofmt)
    for f in (inp, out):
        if os.path.exists(f):
            os.unlink(f)
    argv = [cmd, "-" if use_stdin else inp, "-o", "-" if use_stdout else out]
    if use_stdin:
        argv += ["--in-format", fmt]
    if use_stdout:
        argv += ["--format", ofmt]
    if axis_arg is not None:
        argv += ["--axis", axis_arg] if rng.random() < 0.5 else ["-a", axis_arg]
    if odt_opt:
        argv += ["--dtype", odt_opt]
    if T != 1.0 or rng.random() < 0.3:
        argv += ["-t" if rng.random() < 0.5 else "--temperature", repr(T)]
    argv += ["--algo", p["algo"], "--threads", str(p["threads"]), "--masked-row", p["masked_row"]]
    if bad:
        argv, data, bad = _bad(rng, bad, argv, data, fmt, shape, use_stdin)
        p["bad"] = bad
    with open(inp, "wb") as f:
        f.write(data)
    if bad == "missing-input":
        os.unlink(inp)
    p["argv"] = argv
    r = _run(case, env, argv, data if use_stdin else None, penv)
    if r is None:
        return
    if bad:
        case.expect(r.returncode == BAD[bad], "bad input %s: exit %d, expected %d; stderr: %s" % (
            bad, r.returncode, BAD[bad], r.stderr.decode(errors="replace")[-300:]))
        case.expect(use_stdout or not os.path.exists(out), "bad input %s: the output file was written" % bad)
        case.expect(r.stderr.startswith(b"smx: "), "bad input %s: stderr does not start with 'smx: '" % bad)
        return
    if not case.expect(r.returncode == 0, "exit %d; stderr: %s" % (r.returncode, r.stderr.decode(errors="replace")[-400:])):
        return
    case.expect(r.stderr == b"", "stderr not empty: %s" % r.stderr.decode(errors="replace")[-300:])
    in_float = idt in ("f16", "f32", "f64")
    odt = odt_opt or (idt if idt in ("f16", "f64") else "f32")
    compute = "f64" if idt == "f64" or (not in_float and odt == "f64") else "f32"
    result = _read_output(case, r.stdout if use_stdout else out, ofmt, rshape, odt, written_fortran, use_stdout)
    if result is None:
        return
    xr = reference.as_rows(np.moveaxis(seen, axis, -1))
    ref, tabs = reference.reference(xr, op, T, p["masked_row"] == "nan")
    got = result.reshape(-1) if op == "logsumexp" else reference.as_rows(np.moveaxis(result, axis, -1))
    msg = reference.check(got, ref.reshape(got.shape), tabs, op, compute, odt)
    if msg:
        case.fail("accuracy: " + msg)
    if rng.random() < 0.3:  # the same bytes for another thread count
        t2 = int(rng.integers(1, 6))
        argv2 = list(argv)
        argv2[argv2.index("--threads") + 1] = str(t2)
        first = r.stdout if use_stdout else open(out, "rb").read()
        if not use_stdout:
            os.unlink(out)
        r2 = _run(case, env, argv2, data if use_stdin else None, penv)
        if r2 is not None and case.expect(r2.returncode == 0, "--threads %d: exit %d" % (t2, r2.returncode)):
            second = r2.stdout if use_stdout else open(out, "rb").read()
            case.expect(first == second, "--threads %d output differs from --threads %d" % (t2, p["threads"]))
    for f in (inp, out):
        if os.path.exists(f):
            os.unlink(f)


def _read_output(case, src, ofmt, rshape, odt, want_fortran, from_stdout):
    npdt = {"f16": np.float16, "f32": np.float32, "f64": np.float64}[odt]
    if ofmt == "npy":
        try:
            y = np.load(io.BytesIO(src) if from_stdout else src, allow_pickle=False)
        except Exception as e:
            case.fail("the output .npy does not load: %s" % e)
            return None
        ok = case.expect(y.dtype == npdt, "output dtype %s, expected %s" % (y.dtype, np.dtype(npdt)))
        ok &= case.expect(list(y.shape) == list(rshape), "output shape %s, expected %s" % (y.shape, rshape))
        if want_fortran and y.ndim >= 2 and y.size > 1:
            case.expect(y.flags.f_contiguous, "the output is not in Fortran order like the input")
        return y if ok else None
    data = src if from_stdout else open(src, "rb").read()
    try:
        return _parse_text(data, "," if ofmt == "csv" else "\t", rshape, npdt)
    except Exception as e:
        case.fail("the %s output does not parse as %s values of shape %s: %s" % (ofmt, odt, rshape, e))
        return None


def _bad(rng, bad, argv, data, fmt, shape, use_stdin):
    """The command line and file of one bad-input case, and its name (a file
    defect that does not apply to this input becomes a usage error)."""
    argv = list(argv)
    nd = len(shape)

    def setopt(name, val):
        if name in argv:
            argv[argv.index(name) + 1] = val
        else:
            argv.extend([name, val])
    if bad == "axis-range":
        for o in ("-a", "--axis"):
            if o in argv:
                del argv[argv.index(o):argv.index(o) + 2]
        argv += ["--axis", str(nd if rng.random() < 0.5 else -nd - 1)]
    elif bad == "axis-word":
        argv += ["--axis", "first"]
    elif bad == "dtype-bf16":
        argv += ["--dtype", "bf16"]
    elif bad.startswith("temperature"):
        argv += ["-t", {"temperature-neg": "-1", "temperature-zero": "0", "temperature-inf": "inf",
                        "temperature-word": "warm"}[bad]]
    elif bad == "threads-0":
        setopt("--threads", "0")
    elif bad == "threads-big":
        setopt("--threads", "100000")
    elif bad == "algo":
        setopt("--algo", "fastest")
    elif bad == "masked-row":
        setopt("--masked-row", "maybe")
    elif bad == "unknown-option":
        argv.insert(int(rng.integers(1, len(argv) + 1)), "--frobnicate")
    elif bad == "no-output":
        i = argv.index("-o")
        del argv[i:i + 2]
    elif bad == "truncated-npy" and fmt == "npy" and len(data) > 128:
        data = data[:len(data) - int(rng.integers(1, min(len(data) - 127, 64) + 1))]
    elif bad == "bad-magic" and fmt == "npy":
        data = b"\x93NUMPX" + data[6:]
    elif bad == "csv-word" and fmt != "npy":
        data = data + b"1,two,3\n" if fmt == "csv" else data + b"1\ttwo\n"
    elif bad == "csv-ragged" and fmt != "npy":
        row = (b"," if fmt == "csv" else b"\t").join([b"1"] * (shape[1] + 1))
        data = data.rstrip(b"\r\n") + b"\n" + row + b"\n"
    elif bad != "missing-input" or use_stdin:
        argv += ["--dtype", "bf16"]
        bad = "dtype-bf16"
    return argv, data, bad
