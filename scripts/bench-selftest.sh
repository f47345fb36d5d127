#!/usr/bin/env bash
# Measures `lab-runner selftest` (issue #15): wall time per lab and variant, on the selftest's own
# simulator, for one or two binaries run alternately (so a before/after comparison sees the same
# machine load). A timed loop; not part of CI (timings are not asserted).
#
# Usage: scripts/bench-selftest.sh [BINARY…]
#   BINARY…           the binaries to measure (default target/debug/lab-runner, built if missing)
#   RUNS=1            runs per lab, variant and binary (default 1)
set -euo pipefail
cd "$(dirname "$0")/.."
runs="${RUNS:-1}"
if [ "$#" -eq 0 ]; then
  [ -x target/debug/lab-runner ] || cargo build
  set -- "$PWD/target/debug/lab-runner"
fi
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
export HOME="$work/home" KUBECACHEDIR="$work/home/cache" LANG=C.UTF-8 NO_COLOR=1
mkdir -p "$HOME"
now() { date +%s.%N; }

echo "== machine: $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
for target in "gpu-sharing" "stuck-rollout --variant image" "stuck-rollout --variant resources" \
  "stuck-rollout --variant toleration"; do
  for run in $(seq 1 "$runs"); do
    for bin in "$@"; do
      began="$(now)"
      # shellcheck disable=SC2086 # the target is a lab and its options
      if "$bin" selftest $target >"$work/out" 2>&1; then verdict=passed; else verdict=FAILED; fi
      printf '%-36s run %d  %6.1f s  %s  %s\n' "$target" "$run" "$(echo "$(now) - $began" | bc)" \
        "$verdict" "$bin"
    done
  done
done
