#!/bin/bash
# smx eval under mpirun: the table, the JSON and the HTML report on 2 and 3
# ranks are the same bytes as one process's, on data/digits-ood with every
# option that changes what is computed (labels, validation fit, kl_matching,
# perturbed ODIN files); a missing file fails every rank with its exit code.
# Usage: tests/cli/eval_mpi_test.sh SMX_BINARY DATA_DIR MPIEXEC
set -u
SMX=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
MPIEXEC=$3
cd "$2" || exit 1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1 OMPI_MCA_btl_vader_single_copy_mechanism=none
fail=0
ALL=(--id id_logits.npy --ood ood_logits.npy --labels id_labels.npy --val val_logits.npy --val-labels val_labels.npy)
PERT=(--id id_logits.npy --ood ood_logits.npy --perturbed-id id_logits.npy --perturbed-ood ood_logits.npy --scores odin,msp)
for set in ALL PERT; do
  eval "args=(\"\${$set[@]}\")"
  "$SMX" eval "${args[@]}" --json "$tmp/one.json" --report "$tmp/one.html" > "$tmp/one.txt" 2>/dev/null || { echo "FAIL $set: one process"; fail=1; }
  for np in 2 3; do
    "$MPIEXEC" -np $np --oversubscribe "$SMX" eval "${args[@]}" --json "$tmp/n.json" --report "$tmp/n.html" > "$tmp/n.txt" 2>/dev/null ||
      { echo "FAIL $set: $np ranks exit code"; fail=1; continue; }
    for f in json html txt; do
      if cmp -s "$tmp/one.$f" "$tmp/n.$f"; then echo "ok   $set: $np ranks, $f identical"
      else echo "FAIL $set: $np ranks, $f differs"; diff "$tmp/one.$f" "$tmp/n.$f" | head -5; fail=1; fi
    done
  done
done
"$MPIEXEC" -np 2 --oversubscribe "$SMX" eval --id id_logits.npy --ood "$tmp/missing.npy" > /dev/null 2>&1
rc=$?
if [ $rc -ne 0 ]; then echo "ok   a missing file: exit $rc on 2 ranks"; else echo "FAIL a missing file: exit 0"; fail=1; fi
exit $fail
