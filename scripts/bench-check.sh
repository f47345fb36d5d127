#!/usr/bin/env bash
# Benchmarks `lab-runner check stuck-rollout` against the simulator (issue #7, Performance):
#   1. at the image variant's stalled start state, side by side with a Killercoda-style bash
#      script of `kubectl get … -o json` calls reading the same objects (mean per run, ratio);
#   2. the requests one check sends, from the simulator's request log, against the kinds;
#   3. `check` on a 1,000-node simulator (`sim up --nodes 1000`);
#   4. a restart of the 1,000-GPU-node simulator with $PODS more running pods (issue #17): the
#      wall time of `sim up`, the pods no longer Running 3 s later, the Events before and after;
#   5. on that cluster, `check stuck-rollout`'s wall time and peak RSS (`/usr/bin/time -f %e %M`),
#      runs alternating with $BASE_LAB_RUNNER's when given (e.g. a build of main: side by side).
# Uses hyperfine when installed, else a timed loop. Not part of CI (timings are not asserted).
#
# Usage: scripts/bench-check.sh            (builds the release binary if it is missing)
#   RUNS=20            runs per command (default 20)
#   LAB_RUNNER=path    the binary to measure (default target/release/lab-runner)
#   KUBECTL=path       the kubectl the script calls (default: kubectl on the PATH)
#   NODES=1000         node count of the large simulator (0 skips it)
#   PODS=10000         running pods added before the restart (a Deployment of nginx)
#   BASE_LAB_RUNNER=path  a second binary whose `check` is measured beside LAB_RUNNER's in 5.
#   CHECK_RUNS=5       runs of each binary's `check` in 5
#   INSTALL_HYPERFINE=1  apt-get install hyperfine first when it is missing
set -euo pipefail
cd "$(dirname "$0")/.."
runs="${RUNS:-20}"
nodes="${NODES:-1000}"
pods="${PODS:-10000}"
bin="${LAB_RUNNER:-$PWD/target/release/lab-runner}"
kubectl_bin="${KUBECTL:-$(command -v kubectl || true)}"
[ -n "$kubectl_bin" ] || { echo "bench-check: no kubectl (set KUBECTL=path)" >&2; exit 2; }
if [ ! -x "$bin" ]; then
  echo "== building the release binary"
  cargo build --release
fi
if ! command -v hyperfine >/dev/null && [ "${INSTALL_HYPERFINE:-0}" = 1 ]; then
  apt-get install -y hyperfine >/dev/null || echo "bench-check: could not install hyperfine; timing with a loop"
fi

work="$(mktemp -d)"
cleanup() {
  "$bin" sim down --state-dir "$work/sim" >/dev/null 2>&1 || true
  "$bin" sim down --state-dir "$work/big" >/dev/null 2>&1 || true
  "$bin" sim down --state-dir "$work/gpu" >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT
export LAB_RUNNER_SIM_REQUEST_LOG=1   # the simulator logs every request in serve.log
export HOME="$work/home" KUBECACHEDIR="$work/home/cache" LANG=C.UTF-8 NO_COLOR=1
mkdir -p "$HOME"

echo "== machine: $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
"$bin" sim up --state-dir "$work/sim" --speed 10 >/dev/null
export KUBECONFIG="$work/sim/kubeconfig"
"$bin" start stuck-rollout --variant image >/dev/null
echo "== stuck-rollout started (variant image): the rollout is stalled at one node"

# What a Killercoda verify script does: one `kubectl get … -o json` per object set the checks
# read, parsed afterwards (here: thrown away). The same objects `check` lists.
cat > "$work/killercoda.sh" <<SCRIPT
#!/usr/bin/env bash
k="$kubectl_bin"
"\$k" get nodes -o json >/dev/null
"\$k" get pods --all-namespaces -o json >/dev/null
"\$k" get daemonsets --all-namespaces -o json >/dev/null
"\$k" get prometheusrules.monitoring.coreos.com --all-namespaces -o json >/dev/null
"\$k" -n lab-runner get configmap lab-runner-inventory-stuck-rollout -o json >/dev/null
SCRIPT
chmod +x "$work/killercoda.sh"
"$work/killercoda.sh"   # warms kubectl's discovery cache, as on a Killercoda VM

# Mean wall time of a command in ms over $runs runs (exit codes ignored: check exits 1 here).
mean_ms() {
  local start end
  start=$(date +%s%N)
  for _ in $(seq "$runs"); do "$@" >/dev/null 2>&1 || true; done
  end=$(date +%s%N)
  echo $(( (end - start) / runs / 1000000 ))
}

check_cmd="$bin check stuck-rollout"
script_cmd="$work/killercoda.sh"
echo "== $runs runs each, side by side"
if command -v hyperfine >/dev/null; then
  hyperfine -N -i --warmup 3 --runs "$runs" --export-json "$work/hyperfine.json" "$check_cmd" "$script_cmd"
  read -r check_ms script_ms < <(python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))["results"]
print(" ".join(str(round(x["mean"] * 1000, 1)) for x in r))' "$work/hyperfine.json")
else
  "$bin" check stuck-rollout >/dev/null 2>&1 || true   # warm-up
  check_ms=$(mean_ms $check_cmd)
  script_ms=$(mean_ms "$script_cmd")
fi
ratio=$(python3 -c "print(round($script_ms / max($check_ms, 0.1), 1))")
echo "check stuck-rollout: ${check_ms} ms per run; kubectl script: ${script_ms} ms per run; ratio ${ratio}x"

echo "== requests per check (simulator request log)"
before=$(wc -l < "$work/sim/serve.log")
"$bin" check stuck-rollout >/dev/null || true
sleep 0.2
tail -n +"$((before + 1))" "$work/sim/serve.log" | grep '^request ' > "$work/one-check.log" || true
sed 's/^/  /' "$work/one-check.log"
lists=$(grep -c -E ' GET /apis?/[^ ?]*(nodes|pods|daemonsets|prometheusrules)[ ?]' "$work/one-check.log" || true)
total=$(wc -l < "$work/one-check.log")
echo "requests: $total = $lists lists (kinds the lab's tasks read: 4 — Node, Pod, DaemonSet, PrometheusRule) + 1 inventory GET + 1 GET /version (connect)"

# `check` on a large simulator: the same four lists, over $nodes nodes (and their pods).
big_runs=$(( runs < 5 ? runs : 5 ))
time_big_check() {
  "$bin" check stuck-rollout >/dev/null 2>&1 || true   # warm-up
  if command -v hyperfine >/dev/null; then
    hyperfine -N -i --warmup 1 --runs "$big_runs" "$bin check stuck-rollout"
  else
    (runs=$big_runs; echo "check stuck-rollout: $(mean_ms $check_cmd) ms per run")
  fi
}
if [ "$nodes" -gt 0 ]; then
  # 1. `sim up --nodes N`: CPU workers only, so the lab's preflight refuses to start (it needs GPU
  #    nodes); check still lists every node and pod and grades the unstarted lab.
  echo "== sim up --nodes $nodes (CPU workers; the lab cannot start there)"
  start=$(date +%s%N)
  "$bin" sim up --state-dir "$work/big" --nodes "$nodes" --speed 10 >/dev/null
  echo "sim up --nodes $nodes: $(( ($(date +%s%N) - start) / 1000000 )) ms"
  export KUBECONFIG="$work/big/kubeconfig"
  time_big_check
  "$bin" sim down --state-dir "$work/big" >/dev/null
  # 2. The lab started on $nodes GPU workers: the toolkit DaemonSet runs a pod on each, stalled
  #    at one node.
  echo "== $nodes GPU workers, stuck-rollout started"
  scripts/gpu-topology.sh "$nodes" > "$work/gpu-topology.yaml"
  start=$(date +%s%N)
  "$bin" sim up --state-dir "$work/gpu" --topology "$work/gpu-topology.yaml" --speed 10 >/dev/null
  echo "sim up ($nodes GPU nodes): $(( ($(date +%s%N) - start) / 1000000 )) ms"
  export KUBECONFIG="$work/gpu/kubeconfig"
  start=$(date +%s%N)
  if "$bin" start stuck-rollout --variant image >/dev/null 2>"$work/gpu-start.err"; then
    echo "start stuck-rollout: $(( ($(date +%s%N) - start) / 1000000 )) ms"
    time_big_check
  else
    echo "start stuck-rollout failed on $nodes GPU nodes: $(tail -1 "$work/gpu-start.err")"
  fi
  # 3. A restart with running pods: the kubelets take them up from the store (issue #17).
  echo "== restart with $pods more running pods"
  "$kubectl_bin" create namespace bench >/dev/null
  "$kubectl_bin" -n bench create deployment filler --image=nginx:1.27 --replicas="$pods" >/dev/null
  # Running pods / all pods; with a file argument, the Running pods' names are written to it.
  count_running() {
    "$kubectl_bin" get pods -A -o json | python3 -c '
import json, sys
items = json.load(sys.stdin)["items"]
running = [p["metadata"]["namespace"] + "/" + p["metadata"]["name"] for p in items if p["status"].get("phase") == "Running"]
if len(sys.argv) > 1:
    open(sys.argv[1], "w").write("\n".join(running))
print(len(running), len(items))' "$@"
  }
  count_events() {
    "$kubectl_bin" get events -A -o json | python3 -c 'import json, sys; print(len(json.load(sys.stdin)["items"]))'
  }
  for _ in $(seq 300); do
    read -r running total < <(count_running)
    [ "$(( total - running ))" -le "$nodes" ] && [ "$total" -ge "$pods" ] && break
    sleep 2
  done
  # Counted again just before the restart, by name: pods still starting then do not count.
  read -r running total < <(count_running "$work/running-before.txt")
  echo "before: $running of $total pods Running, $(count_events) events"
  "$bin" sim down --state-dir "$work/gpu" >/dev/null
  start=$(date +%s%N)
  "$bin" sim up --state-dir "$work/gpu" --speed 10 >/dev/null
  echo "sim up (restart): $(( ($(date +%s%N) - start) / 1000000 )) ms"
  sleep 3
  read -r after total < <(count_running "$work/running-after.txt")
  left=$(python3 -c 'import sys; b, a = (set(open(f).read().split()) for f in sys.argv[1:]); print(len(b - a))' \
    "$work/running-before.txt" "$work/running-after.txt")
  echo "3 s later: $after of $total pods Running ($left of the $running Running before no longer are), $(count_events) events"
  # 4. `check` on that cluster: $nodes GPU nodes, the lab's pods and $pods pods in `bench`.
  echo "== check stuck-rollout on $nodes GPU nodes + $total pods: wall time and peak RSS per run"
  check_runs="${CHECK_RUNS:-5}"
  binaries=("$bin")
  [ -n "${BASE_LAB_RUNNER:-}" ] && binaries=("$BASE_LAB_RUNNER" "$bin")
  : > "$work/check-rss.txt"
  for b in "${binaries[@]}"; do "$b" check stuck-rollout >/dev/null 2>&1 || true; done   # warm-up
  for _ in $(seq "$check_runs"); do
    for b in "${binaries[@]}"; do   # alternating, so both see the same simulator load
      /usr/bin/time -f "$b %e %M" -a -o "$work/check-rss.txt" "$b" check stuck-rollout >/dev/null 2>&1 || true
    done
  done
  python3 - "$work/check-rss.txt" "${binaries[@]}" <<'PY'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1]) if len(l.split()) == 3]
for binary in sys.argv[2:]:
    wall = [float(r[1]) for r in rows if r[0] == binary]
    rss = [int(r[2]) / 1024 for r in rows if r[0] == binary]
    print(f"{binary}: wall s median {statistics.median(wall):.2f} (min {min(wall):.2f}, max {max(wall):.2f}); "
          f"peak RSS MB median {statistics.median(rss):.0f} (min {min(rss):.0f}, max {max(rss):.0f}); {len(wall)} runs")
PY
  "$bin" sim down --state-dir "$work/gpu" >/dev/null || true
fi
