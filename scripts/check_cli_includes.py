#!/usr/bin/env python3
"""The include graph of the smx command (programs/): no circle among its files; the shared
plumbing in programs/cli/ never includes the command table (commands.h) or a
command, so that it can be used and tested without them; the file I/O in
programs/io/ includes only itself and the public headers; and neither programs/
nor the Python module (python/src/) includes the library's internals (src/).

Usage: scripts/check_cli_includes.py [REPO_ROOT]   (exit 0 when clean)
"""
import os
import re
import sys

root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), ".."))
programs = os.path.join(root, "programs")
pysrc = os.path.join(root, "python", "src")
search = [programs, os.path.join(programs, "report"), os.path.join(root, "src"), os.path.join(root, "include")]
include = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def resolve(src, name):
    for d in [os.path.dirname(src)] + search:
        p = os.path.normpath(os.path.join(d, name))
        if os.path.isfile(p):
            return p
    return None


graph = {}
todo = [os.path.join(dp, f) for top in (programs, pysrc) for dp, _, fs in os.walk(top) for f in fs
        if f.endswith((".c", ".h"))]
while todo:
    f = todo.pop()
    if f in graph:
        continue
    with open(f, encoding="utf-8") as fh:
        deps = [resolve(f, n) for n in include.findall(fh.read())]
    graph[f] = [d for d in deps if d]
    todo += graph[f]

rel = lambda p: os.path.relpath(p, root)
problems = []
# the plumbing must not know the commands (it may use the file I/O below it), the
# file I/O knows neither; no front end reaches into the library's src/
cli_dir, io_dir = os.path.join(programs, "cli") + os.sep, os.path.join(programs, "io") + os.sep
src_dir = os.path.join(root, "src") + os.sep
for f, deps in graph.items():
    for d in deps:
        if d.startswith(src_dir) and not f.startswith(src_dir):
            problems.append(f"{rel(f)} includes {rel(d)}, an internal header of the library")
        if not d.startswith(programs + os.sep):
            continue
        if f.startswith(cli_dir) and not d.startswith((cli_dir, io_dir)):
            problems.append(f"{rel(f)} includes {rel(d)}, outside programs/cli/ and programs/io/")
        if f.startswith(io_dir) and not d.startswith(io_dir):
            problems.append(f"{rel(f)} includes {rel(d)}, outside programs/io/")
# no circle: depth-first search with colours
state, stack = {}, []


def visit(f):
    state[f] = 1
    stack.append(f)
    for d in graph.get(f, []):
        if not d.startswith(programs + os.sep):
            continue  # the library's headers are checked with the library
        if state.get(d) == 1:
            problems.append("include circle: " + " -> ".join(rel(p) for p in stack[stack.index(d):] + [d]))
        elif d not in state:
            visit(d)
    stack.pop()
    state[f] = 2


for f in sorted(graph):
    if f not in state:
        visit(f)
for p in problems:
    print(p)
print(f"{len(graph)} files, {sum(len(v) for v in graph.values())} includes, {len(problems)} problems")
sys.exit(1 if problems else 0)
