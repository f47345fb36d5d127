#!/usr/bin/env bash
# Measures `lab-runner reset` (issue #14): wall time of `reset stuck-rollout --yes` (back to the
# first stage, which re-applies it and waits for the rollout) and of `reset --remove`, on a
# started lab on the plain simulator and on the brownfield fixture
# (manifests/clusters/brownfield). A timed loop; not part of CI (timings are not asserted).
#
# Usage: scripts/bench-reset.sh
#   RUNS=5            resets per cluster (default 5)
#   SPEED=10          the simulator's speed factor (default 10, as bench-check.sh)
#   LAB_RUNNER=path   the binary to measure (default target/debug/lab-runner, built if missing)
#   KUBECTL=path      the kubectl that applies the fixture (default: kubectl on the PATH)
set -euo pipefail
cd "$(dirname "$0")/.."
runs="${RUNS:-5}"
speed="${SPEED:-10}"
bin="${LAB_RUNNER:-$PWD/target/debug/lab-runner}"
kubectl_bin="${KUBECTL:-$(command -v kubectl || true)}"
[ -n "$kubectl_bin" ] || { echo "bench-reset: no kubectl (set KUBECTL=path)" >&2; exit 2; }
[ -x "$bin" ] || cargo build
work="$(mktemp -d)"
cleanup() {
  "$bin" sim down --state-dir "$work/plain" >/dev/null 2>&1 || true
  "$bin" sim down --state-dir "$work/brownfield" >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT
export HOME="$work/home" KUBECACHEDIR="$work/home/cache" LANG=C.UTF-8 NO_COLOR=1
mkdir -p "$HOME"
now() { date +%s.%N; }
timed() {  # label, command…: runs once, prints the wall time
  local label="$1"; shift
  local began; began="$(now)"
  "$@" >/dev/null
  printf '%-44s %6.2f s\n' "$label" "$(echo "$(now) - $began" | bc)"
}

echo "== machine: $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg); simulator speed ${speed}x; $bin"
for cluster in plain brownfield; do
  "$bin" sim up --state-dir "$work/$cluster" --speed "$speed" >/dev/null
  export KUBECONFIG="$work/$cluster/kubeconfig"
  if [ "$cluster" = brownfield ]; then
    # The CRD first: kubectl validates the PrometheusRule against the server's schema.
    "$kubectl_bin" apply -f manifests/clusters/brownfield/10-prometheusrules-crd.yaml >/dev/null
    "$kubectl_bin" wait --for condition=established crd/prometheusrules.monitoring.coreos.com >/dev/null
    "$kubectl_bin" apply -f manifests/clusters/brownfield/ >/dev/null 2>&1
  fi
  timed "$cluster: start stuck-rollout (image)" "$bin" start stuck-rollout --variant image --yes
  for run in $(seq "$runs"); do
    timed "$cluster: reset stuck-rollout, run $run" "$bin" reset stuck-rollout --yes
  done
  timed "$cluster: reset stuck-rollout --remove" "$bin" reset stuck-rollout --remove --yes
  "$bin" sim down --state-dir "$work/$cluster" >/dev/null
done
