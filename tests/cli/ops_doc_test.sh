#!/bin/bash
# docs/ops.md is the output of `smx ops --markdown` (the op table, src/ops/op_table.def): fails, showing the
# difference, when the committed file is stale. Regenerate: build/programs/smx ops --markdown > docs/ops.md
# Usage: tests/cli/ops_doc_test.sh SMX_BINARY DOCS_OPS_MD
set -u
tmp=$(mktemp) || exit 1
trap 'rm -f "$tmp"' EXIT
"$1" ops --markdown > "$tmp" || { echo "smx ops --markdown failed"; exit 1; }
if ! diff -u "$2" "$tmp"; then
  echo "docs/ops.md is stale: regenerate it with: smx ops --markdown > docs/ops.md"
  exit 1
fi
