#!/bin/bash
# Help and version of the smx command, as git and zstd answer them: every
# command's help on stdout with exit 0, the overview for smx --help and smx
# help, the nearest command for a typo, and the usage on stderr with exit 1
# for a bare smx.
# Usage: tests/cli/help_test.sh SMX_BINARY
SMX=$1
. "$(dirname "$0")/lib.sh"

commands="softmax log-softmax logsumexp topk sample xent score eval demo bench info help version"
for c in $commands; do
  expect "$c --help" 0 "*" "" -- "$c" --help
  check "$c --help starts with its usage" grep -q "^usage: smx $c" "$tmp/out"
  cp "$tmp/out" "$tmp/long"
  expect "$c -h" 0 "*" "" -- "$c" -h
  check "$c -h is --help" cmp -s "$tmp/out" "$tmp/long"
  expect "help $c" 0 "*" "" -- help "$c"
  check "help $c is $c --help" cmp -s "$tmp/out" "$tmp/long"
done
# help wins wherever it stands, and nothing is run or written
expect "help after options" 0 "*" "" -- softmax missing.npy -o "$tmp/never.npy" --help
check "help after options writes nothing" test ! -e "$tmp/never.npy"

expect "overview" 0 "*" "" -- --help
for c in $commands; do check "overview lists $c" grep -q "^  $c " "$tmp/out"; done
cp "$tmp/out" "$tmp/overview"
expect "overview -h" 0 "*" "" -- -h
check "-h is --help" cmp -s "$tmp/out" "$tmp/overview"
expect "overview help" 0 "*" "" -- help
check "help is --help" cmp -s "$tmp/out" "$tmp/overview"

expect "bare smx" 1 "" "*" --
check "bare smx shows the usage on stderr" cmp -s "$tmp/err" "$tmp/overview"

for v in --version -V version; do expect "$v" 0 "smx 0.1.0" "" -- $v; done

expect "typo" 1 "" "smx: unknown command 'sofmax'; did you mean 'softmax'?
smx: try 'smx --help'" -- sofmax
expect "typo, two edits" 1 "" "smx: unknown command 'log-sotfmax'; did you mean 'log-softmax'?
smx: try 'smx --help'" -- log-sotfmax
expect "typo xent" 1 "" "smx: unknown command 'xnet'; did you mean 'xent'?
smx: try 'smx --help'" -- xnet
expect "another library's name" 1 "" "smx: unknown command 'cross-entropy'; did you mean 'xent'?
smx: try 'smx --help'" -- cross-entropy
expect "far from any command" 1 "" "smx: unknown command 'frobnicate'
smx: try 'smx --help'" -- frobnicate
expect "help of a typo" 1 "" "smx: unknown command 'topp'; did you mean 'topk'?
smx: try 'smx --help'" -- help topp
expect "help of two" 1 "" "smx: help takes one command name; 'sample' is extra
smx: try 'smx help --help'" -- help topk sample

echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
