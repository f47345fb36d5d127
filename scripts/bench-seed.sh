#!/usr/bin/env bash
# Measures the simulator's first start and restart (docs/simulator.md, "Running it"): the wall
# time of `sim up --nodes N` on an empty state directory until it returns (every seeded object a
# durable write), and of `sim up` again on that state after `sim down` (nothing seeded). A timed
# loop; not part of CI (timings are not asserted).
#
# Usage: scripts/bench-seed.sh [N…]   (default: 5 1000)
#   RUNS=3            runs per size (default 3)
#   LAB_RUNNER=path   the binary to measure (default target/debug/lab-runner, built if missing)
set -euo pipefail
cd "$(dirname "$0")/.."
runs="${RUNS:-3}"
bin="${LAB_RUNNER:-$PWD/target/debug/lab-runner}"
[ -x "$bin" ] || cargo build
[ "$#" -gt 0 ] || set -- 5 1000
work="$(mktemp -d)"
cleanup() {
  for dir in "$work"/*/; do "$bin" sim down --state-dir "$dir" >/dev/null 2>&1 || true; done
  rm -rf "$work"
}
trap cleanup EXIT
now() { date +%s.%N; }
echo "binary: $bin; $(nproc) cores; load average $(cut -d' ' -f1-3 /proc/loadavg)"
for nodes in "$@"; do
  for run in $(seq "$runs"); do
    dir="$work/n$nodes-$run"
    began=$(now); "$bin" sim up --nodes "$nodes" --state-dir "$dir" >/dev/null; first=$(now)
    "$bin" sim down --state-dir "$dir" >/dev/null
    again=$(now); "$bin" sim up --state-dir "$dir" >/dev/null; restarted=$(now)
    "$bin" sim down --state-dir "$dir" >/dev/null
    printf 'nodes %5d  run %d  first start %6.2f s  restart %6.2f s\n' "$nodes" "$run" \
      "$(echo "$first - $began" | bc)" "$(echo "$restarted - $again" | bc)"
  done
done
