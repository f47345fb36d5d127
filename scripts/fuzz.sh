#!/usr/bin/env bash
# Runs the patch fuzz target for a bounded time (default 120 s). Not part of CI.
# Needs a nightly toolchain and cargo-fuzz (`cargo install cargo-fuzz`).
# Usage: scripts/fuzz.sh [SECONDS] [extra libFuzzer flags…]
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-120}"
shift || true
corpus=fuzz/corpus/patch
mkdir -p "$corpus"
# Seeds: a DaemonSet and the rollout-undo patch, for each operation byte.
seed='{"metadata":{"name":"a","namespace":"default"},"spec":{"selector":{"matchLabels":{"app":"a"}},"template":{"metadata":{"labels":{"app":"a"}},"spec":{"containers":[{"name":"a","image":"a:1"}]}}}}'
body='{"spec":{"template":{"$patch":"replace","spec":{"containers":[{"name":"a","image":"a:2","env":[{"name":"X","value":"1"}]}]}}}}'
for op in 0 1 2 3 4 5; do
  printf "\\012\\$(printf %03o "$op")%s\\000%s" "$seed" "$body" > "$corpus/seed-$op"
done
exec cargo +nightly fuzz run patch "$corpus" -- -max_total_time="$seconds" -max_len=4096 "$@"
