#!/bin/bash
# smx eval under mpirun: the table, the JSON and the HTML report on 2 and 3
# ranks are the same bytes as one process's, on data/digits-ood with every
# option that changes what is computed (labels, validation fit, kl_matching,
# perturbed ODIN files); errors are reported once, by rank 0, and end every
# rank, also when only one rank meets them.
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
# errors: rank 0 alone reports (one "smx:" line, not one per rank,
# interleaved), with the exit code of the error; a failure on one rank only
# (MPMD: that rank is given a file the other has) ends every rank, none left
# waiting in a collective, and rank 0 names the rank and its message.
# (mpirun adds its own lines about the exit status: only smx's are counted.)
smx_lines() { grep '^smx: ' "$tmp/err" || true; }
run() {   # run WANT_RC WANT_SMX_LINES NAME -- MPIEXEC ARGS...
  local want=$1 lines=$2 name=$3
  shift 4
  timeout 120 "$@" > "$tmp/out" 2> "$tmp/err"
  local rc=$?
  if [ $rc = 124 ]; then echo "FAIL $name: hung (killed after 120 s)"; fail=1; return; fi
  if [ $rc != "$want" ]; then echo "FAIL $name: exit $rc, want $want"; fail=1; fi
  if [ "$(smx_lines)" = "$lines" ]; then echo "ok   $name"
  else echo "FAIL $name: smx's lines on stderr:"; smx_lines; echo "want:"; echo "$lines"; fail=1; fi
}
run 2 "smx: $tmp/missing.npy: cannot open: No such file or directory" "a missing file, 2 ranks" -- \
  "$MPIEXEC" -np 2 --oversubscribe "$SMX" eval --id id_logits.npy --ood "$tmp/missing.npy"
run 2 "smx: $tmp/missing.npy: cannot open: No such file or directory" "a missing file, 3 ranks" -- \
  "$MPIEXEC" -np 3 --oversubscribe "$SMX" eval --id id_logits.npy --ood "$tmp/missing.npy"
run 1 "smx: --tpr must be a number in (0, 1], not '5'
smx: try 'smx eval --help'" "a usage error, 2 ranks" -- "$MPIEXEC" -np 2 --oversubscribe "$SMX" eval --id id_logits.npy --tpr 5
run 2 "smx: rank 1: $tmp/missing.npy: cannot open: No such file or directory" "a file only rank 1 lacks" -- \
  "$MPIEXEC" --oversubscribe -np 1 "$SMX" eval --id id_logits.npy --ood ood_logits.npy : \
  -np 1 "$SMX" eval --id id_logits.npy --ood "$tmp/missing.npy"
run 2 "smx: $tmp/missing.npy: cannot open: No such file or directory" "a file only rank 0 lacks" -- \
  "$MPIEXEC" --oversubscribe -np 1 "$SMX" eval --id id_logits.npy --ood "$tmp/missing.npy" : \
  -np 2 "$SMX" eval --id id_logits.npy --ood ood_logits.npy
exit $fail
