"""Every virtual environment that the README's pip steps create (`python3 -m venv ... NAME`) is ignored by
git, so that following the README leaves `git status` clean (issue 24 item 12). Skipped (77) outside a git
checkout."""
import os
import re
import subprocess
import sys

root = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
try:
    inside = subprocess.run(["git", "-C", root, "rev-parse", "--is-inside-work-tree"], capture_output=True, text=True)
except OSError:
    sys.exit(77)
if inside.returncode != 0:
    sys.exit(77)
with open(os.path.join(root, "README.md"), encoding="utf-8") as f:
    names = re.findall(r"-m venv (?:--\S+ )*(\S+)", f.read())
if not names:
    sys.exit("README.md: no `python3 -m venv NAME` line found (update this test)")
bad = []
for name in names:
    # a file inside the venv, as pip leaves there
    path = os.path.join(name, "bin", "pip")
    r = subprocess.run(["git", "-C", root, "check-ignore", "-q", "--no-index", path])
    if r.returncode != 0:
        bad.append(name)
if bad:
    sys.exit("not ignored by .gitignore: %s (the README's pip steps create them)" % ", ".join(bad))
print("ignored: %s" % ", ".join(names))
