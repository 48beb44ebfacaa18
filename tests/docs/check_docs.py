#!/usr/bin/python3
"""The docs cite what exists: every .md file that README.md or docs/*.md names
resolves to a file of the repository; every smx_* symbol they name occurs in
the code (include/, src/, programs/, python/, examples/, bench/, tests/); and
the README's mpirun commands run as root too (Open MPI refuses root unless
both OMPI_ALLOW_RUN_AS_ROOT variables are set, as docs/mpi.md says).

Usage: check_docs.py [REPO_ROOT]   (exit 0 when clean; one line per problem)
"""
import os
import re
import sys

root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", ".."))
docs = [os.path.join(root, "README.md")] + sorted(
    os.path.join(root, "docs", f) for f in os.listdir(os.path.join(root, "docs")) if f.endswith(".md"))
problems = []

# the code the docs may name, as one text to search
code = []
for top in ("include", "src", "programs", "python", "examples", "bench", "tests", "scripts", "CMakeLists.txt"):
    p = os.path.join(root, top)
    walk = [(os.path.dirname(p), [], [os.path.basename(p)])] if os.path.isfile(p) else os.walk(p)
    for dp, _, fs in walk:
        for f in fs:
            if f.endswith((".c", ".h", ".py", ".txt", ".sh", ".cmake", ".in")) or f == "CMakeLists.txt":
                with open(os.path.join(dp, f), encoding="utf-8", errors="replace") as fh:
                    code.append(fh.read())
code = "\n".join(code)

# every .md of the repository by its bare name ("see its PROVENANCE.md" names one in a data folder)
md_names = set()
for dp, dns, fs in os.walk(root):
    dns[:] = [d for d in dns if not d.startswith(".") and not d.startswith("build")]
    md_names.update(f for f in fs if f.endswith(".md"))

md_ref = re.compile(r"(?<![\w/.-])([\w./-]*[\w-]+\.md)\b")
symbol = re.compile(r"\bsmx_[a-z0-9_]*[a-z0-9]\b(\*?)")
for doc in docs:
    rel = os.path.relpath(doc, root)
    with open(doc, encoding="utf-8") as fh:
        text = fh.read()
    for name in sorted(set(md_ref.findall(text))):
        if "://" in name:
            continue
        here = os.path.dirname(doc)
        found = any(os.path.isfile(os.path.normpath(os.path.join(d, name))) for d in (here, root, os.path.join(root, "docs")))
        if not found and not ("/" not in name and name in md_names):
            problems.append(f"{rel}: cites {name}, which the repository does not have")
    for m in symbol.finditer(text):
        name, star = m.group(0).rstrip("*"), m.group(1)
        if star or text[m.end():m.end() + 1] == "*":   # a family, smx_softmax_topk_*: its prefix must exist
            if name not in code:
                problems.append(f"{rel}: names the family {name}*, of which the code has nothing")
        elif not re.search(r"\b%s\b" % re.escape(name), code):
            problems.append(f"{rel}: names {name}, which the code does not have")

# the README's MPI commands, as a reader pastes them: as root as well
with open(docs[0], encoding="utf-8") as fh:
    readme = fh.read()
for block in re.findall(r"```sh\n(.*?)```", readme, re.S):
    if re.search(r"^mpirun ", block, re.M):
        first = block.index("\nmpirun ") if not block.startswith("mpirun ") else 0
        before = block[:first]
        if "--allow-run-as-root" not in block and not (
                "OMPI_ALLOW_RUN_AS_ROOT=1" in before and "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1" in before):
            problems.append("README.md: an mpirun block that fails as root (no --allow-run-as-root, "
                            "no OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 before it)")

for p in sorted(set(problems)):
    print("FAIL", p)
print(f"check_docs: {len(docs)} files, {len(set(problems))} problems")
sys.exit(1 if problems else 0)
