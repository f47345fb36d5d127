#!/usr/bin/env bash
# Benchmarks the simulator at cluster scale (issue #17): $NODES GPU nodes, $PODS running pods
# (a Deployment of nginx) and a DaemonSet on every node, measured for each binary given, side
# by side on copies of one prepared state:
#   1. restart: the wall time of `sim up` on the stored cluster until it returns, the pods that
#      are no longer Running 3 s later, the Events before and after;
#   2. a LIST of all pods as a Table and as JSON (the same request, two Accept headers; mean of
#      $RUNS, in-process HTTPS client), and `kubectl get pods -A` against `-o json`;
#   3. the server's memory (VmRSS, VmHWM of /proc/PID/status) after those lists;
#   4. the write rate (merge PATCHes of pod annotations through one HTTPS connection) with no
#      watcher and with $WATCHERS `kubectl get pods -A -w`;
#   5. a RollingUpdate of the DaemonSet (maxUnavailable 10%) at `--speed 10` and `--speed 1`,
#      each on a fresh copy, nginx:1.26 -> nginx:1.27 (present on every node: no pull), from
#      `kubectl set image` until `kubectl rollout status` returns.
# Targets (the issue): Table ≤ 1.5× JSON; RSS < 300 MB; restart < 2 s with 0 pods leaving
# Running; writes/s with watchers ≥ half of without; rollout at speed 10 ≥ 5× faster than at 1.
# Not part of CI (timings are not asserted).
#
# Usage: scripts/bench-sim.sh [NAME=BINARY ...]   (default: new=target/release/lab-runner)
#   e.g. scripts/bench-sim.sh base=./lab-runner-base new=target/release/lab-runner
#   NODES=1000 PODS=10000 WATCHERS=20 WRITES=300 RUNS=5
#   KUBECTL=path      the kubectl the script calls (default: kubectl on the PATH)
#   SETUP=BINARY      the binary that prepares the cluster (default: the last one given)
#   KEEP=DIR          keep the prepared state in DIR and reuse it when present
#   ROLLOUT=0         skip the DaemonSet rollouts (the longest step)
set -euo pipefail
cd "$(dirname "$0")/.."
nodes="${NODES:-1000}"
pods="${PODS:-10000}"
watchers="${WATCHERS:-20}"
writes="${WRITES:-300}"
runs="${RUNS:-5}"
kubectl_bin="${KUBECTL:-$(command -v kubectl || true)}"
[ -n "$kubectl_bin" ] || { echo "bench-sim: no kubectl (set KUBECTL=path)" >&2; exit 2; }
[ "$#" -gt 0 ] || set -- "new=$PWD/target/release/lab-runner"
names=() bins=()
for spec in "$@"; do
  names+=("${spec%%=*}")
  bin="$(realpath "${spec#*=}")"
  [ -x "$bin" ] || { echo "bench-sim: $bin is not an executable (cargo build --release?)" >&2; exit 2; }
  bins+=("$bin")
done
setup_bin="$(realpath "${SETUP:-${bins[-1]}}")"

work="$(mktemp -d)"
watcher_pids=()
cleanup() {
  for pid in "${watcher_pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  for dir in "$work"/*/; do
    [ -f "$dir/sim.pid" ] && "$setup_bin" sim down --state-dir "$dir" >/dev/null 2>&1 || true
  done
  rm -rf "$work"
}
trap cleanup EXIT
export HOME="$work/home" KUBECACHEDIR="$work/home/cache" LANG=C.UTF-8 NO_COLOR=1
mkdir -p "$HOME"
now_ms() { echo $(( $(date +%s%N) / 1000000 )); }

# The HTTPS helper: lists, counts and writes with the kubeconfig's CA and token.
cat > "$work/api.py" <<'PY'
import base64, http.client, json, os, ssl, sys, time, urllib.parse

def connect():
    import re
    text = open(os.environ["KUBECONFIG"]).read()
    server = re.search(r"server:\s*(\S+)", text).group(1)
    ca = base64.b64decode(re.search(r"certificate-authority-data:\s*(\S+)", text).group(1)).decode()
    token = re.search(r"token:\s*(\S+)", text).group(1)
    url = urllib.parse.urlparse(server)
    context = ssl.create_default_context(cadata=ca)
    return http.client.HTTPSConnection(url.hostname, url.port, context=context, timeout=600), token

def request(conn, token, method, path, accept="application/json", body=None, content_type=None):
    headers = {"Authorization": "Bearer " + token, "Accept": accept}
    if content_type:
        headers["Content-Type"] = content_type
    conn.request(method, path, body=body, headers=headers)
    response = conn.getresponse()
    data = response.read()
    if response.status >= 300:
        sys.exit(f"{method} {path}: {response.status} {data[:300]!r}")
    return data

conn, token = connect()
command = sys.argv[1]
if command == "list-ratio":
    # The same LIST with kubectl's Table Accept header and with JSON, alternated.
    runs = int(sys.argv[2])
    table = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json"
    times = {"table": [], "json": []}
    size = {}
    for _ in range(runs + 1):
        for kind, accept in (("table", table), ("json", "application/json")):
            start = time.perf_counter()
            data = request(conn, token, "GET", "/api/v1/pods", accept)
            times[kind].append(time.perf_counter() - start)
            size[kind] = len(data)
    mean = {k: sum(v[1:]) / runs * 1000 for k, v in times.items()}   # the first run warms up
    print(f"{mean['table']:.0f} {mean['json']:.0f} {size['table']} {size['json']}")
elif command == "count":
    # Pods Running / all pods, and Events.
    items = json.loads(request(conn, token, "GET", "/api/v1/pods"))["items"]
    running = sum(p.get("status", {}).get("phase") == "Running" for p in items)
    events = len(json.loads(request(conn, token, "GET", "/api/v1/events"))["items"])
    print(running, len(items), events)
elif command == "writes":
    # N merge PATCHes, each to another pod of the filler Deployment: writes per second.
    n = int(sys.argv[2])
    names = [p["metadata"]["name"] for p in
             json.loads(request(conn, token, "GET", "/api/v1/namespaces/bench/pods?limit=500"))["items"]]
    start = time.perf_counter()
    for i in range(n):
        body = json.dumps({"metadata": {"annotations": {"bench/write": f"{time.time_ns()}-{i}"}}})
        request(conn, token, "PATCH", f"/api/v1/namespaces/bench/pods/{names[i % len(names)]}",
                body=body, content_type="application/merge-patch+json")
    print(f"{n / (time.perf_counter() - start):.0f}")
PY
api() { python3 "$work/api.py" "$@"; }
mem() { awk '/^VmRSS|^VmHWM/ {printf "%s %d MB  ", $1, $2 / 1024}' "/proc/$(cat "$1/sim.pid")/status"; }

echo "== machine: $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg); kubectl $("$kubectl_bin" version --client -o json | python3 -c 'import json,sys; print(json.load(sys.stdin)["clientVersion"]["gitVersion"])')"

# --- the prepared cluster: nodes, running filler pods, a DaemonSet on every node -------------
template="${KEEP:-$work/template}"
if [ -f "$template/store.db" ]; then
  echo "== reusing the prepared state in $template"
else
  echo "== preparing $nodes GPU nodes, $pods pods and a DaemonSet with $(basename "$setup_bin") ($setup_bin)"
  mkdir -p "$template"
  scripts/gpu-topology.sh "$nodes" > "$work/topology.yaml"
  start=$(now_ms)
  "$setup_bin" sim up --state-dir "$template" --topology "$work/topology.yaml" --speed 10 >/dev/null
  echo "sim up (first start): $(( $(now_ms) - start )) ms"
  export KUBECONFIG="$template/kubeconfig"
  start=$(now_ms)
  "$kubectl_bin" create namespace bench >/dev/null
  # The filler pods request a little CPU, so the scheduler's LeastAllocated score spreads them
  # (without requests every node scores the same and they fill the nodes in name order).
  "$kubectl_bin" -n bench apply -f - >/dev/null <<YAML
apiVersion: apps/v1
kind: Deployment
metadata: {name: filler}
spec:
  replicas: $pods
  selector: {matchLabels: {app: filler}}
  template:
    metadata: {labels: {app: filler}}
    spec:
      containers: [{name: nginx, image: nginx:1.27, resources: {requests: {cpu: 10m, memory: 16Mi}}}]
---
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: agent}
spec:
  selector: {matchLabels: {app: agent}}
  updateStrategy: {type: RollingUpdate, rollingUpdate: {maxUnavailable: 10%}}
  template:
    metadata: {labels: {app: agent}}
    spec:
      terminationGracePeriodSeconds: 1
      tolerations: [{operator: Exists}]
      containers: [{name: agent, image: nginx:1.26}]
YAML
  want=$(( pods + nodes + 1 ))   # the agent also runs on the control plane (it tolerates all)
  for _ in $(seq 900); do
    read -r running total _ < <(api count)
    [ "$running" -ge "$want" ] && break
    sleep 2
  done
  [ "$running" -ge "$want" ] || { echo "bench-sim: only $running of $want pods Running" >&2; exit 1; }
  echo "prepared: $running of $total pods Running after $(( $(now_ms) - start )) ms"
  "$kubectl_bin" -n bench rollout status ds/agent --timeout=600s >/dev/null
  "$setup_bin" sim down --state-dir "$template" >/dev/null
fi

# --- each binary on its own copy -------------------------------------------------------------
declare -A result
for index in "${!bins[@]}"; do
  name="${names[$index]}" bin="${bins[$index]}" dir="$work/run-$index"
  echo "== $name: $bin"
  rm -rf "$dir" && cp -r "$template" "$dir" && rm -f "$dir/sim.pid" "$dir/sim.json"
  export KUBECONFIG="$dir/kubeconfig"
  # 1. restart
  start=$(now_ms)
  "$bin" sim up --state-dir "$dir" --speed 10 >/dev/null
  up_ms=$(( $(now_ms) - start ))
  sleep 3
  read -r running total events < <(api count)
  result[$name,restart]="sim up ${up_ms} ms; 3 s later $running of $total Running ($(( total - running )) not Running); $events events"
  echo "restart: ${result[$name,restart]}"
  # 2. lists
  read -r table_ms json_ms table_bytes json_bytes < <(api list-ratio "$runs")
  ratio=$(python3 -c "print(round($table_ms / max($json_ms, 0.1), 2))")
  result[$name,list]="Table ${table_ms} ms (${table_bytes} B), JSON ${json_ms} ms (${json_bytes} B): ${ratio}x"
  echo "LIST of all pods ($runs runs): ${result[$name,list]}"
  start=$(now_ms); for _ in $(seq "$runs"); do "$kubectl_bin" get pods -A >/dev/null; done
  kubectl_table=$(( ($(now_ms) - start) / runs ))
  start=$(now_ms); for _ in $(seq "$runs"); do "$kubectl_bin" get pods -A -o json >/dev/null; done
  kubectl_json=$(( ($(now_ms) - start) / runs ))
  result[$name,kubectl]="get pods -A ${kubectl_table} ms, -o json ${kubectl_json} ms"
  echo "kubectl ($runs runs): ${result[$name,kubectl]}"
  # 3. memory
  result[$name,mem]="$(mem "$dir")"
  echo "memory: ${result[$name,mem]}"
  # 4. writes without and with watchers
  api writes 20 >/dev/null   # warm-up
  alone=$(api writes "$writes")
  watcher_pids=()
  for i in $(seq "$watchers"); do
    "$kubectl_bin" get pods -A -w >"$work/watch-$i.out" 2>&1 &
    watcher_pids+=("$!")
  done
  # Writes start once every watcher has printed its initial list.
  for _ in $(seq 300); do
    ready=0
    for i in $(seq "$watchers"); do
      [ "$(wc -l <"$work/watch-$i.out")" -gt "$total" ] && ready=$((ready + 1))
    done
    [ "$ready" -ge "$watchers" ] && break
    sleep 1
  done
  watched=$(api writes "$writes")
  for pid in "${watcher_pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait "${watcher_pids[@]}" 2>/dev/null || true
  watcher_pids=()
  result[$name,writes]="$alone writes/s alone, $watched with $ready of $watchers watchers listed: $(python3 -c "print(round($watched / max($alone, 1), 2))")x"
  echo "writes ($writes): ${result[$name,writes]}"
  result[$name,mem2]="$(mem "$dir")"
  echo "memory after the watchers: ${result[$name,mem2]}"
  # 5. DaemonSet rollout at speed 10 and at speed 1, each on a fresh copy of the prepared state
  #    and in the same direction (to the filler's image, present on every node), so the two
  #    differ only in the clock's speed.
  "$bin" sim down --state-dir "$dir" >/dev/null
  if [ "${ROLLOUT:-1}" = 0 ]; then
    result[$name,rollout]="skipped (ROLLOUT=0)"
    continue
  fi
  rollout() {
    local start
    rm -rf "$dir" && cp -r "$template" "$dir" && rm -f "$dir/sim.pid" "$dir/sim.json"
    "$bin" sim up --state-dir "$dir" --speed "$1" >/dev/null
    "$kubectl_bin" -n bench rollout status ds/agent --timeout=900s >/dev/null
    start=$(now_ms)
    "$kubectl_bin" -n bench set image ds/agent agent=nginx:1.27 >/dev/null
    "$kubectl_bin" -n bench rollout status ds/agent --timeout=900s >/dev/null
    echo $(( $(now_ms) - start ))
    "$bin" sim down --state-dir "$dir" >/dev/null
  }
  fast=$(rollout 10)
  slow=$(rollout 1)
  result[$name,rollout]="speed 10: ${fast} ms, speed 1: ${slow} ms: $(python3 -c "print(round($slow / max($fast, 1), 1))")x faster"
  echo "DaemonSet rollout (maxUnavailable 10%): ${result[$name,rollout]}"
done

echo "== side by side ($nodes GPU nodes, $pods filler pods, load $(cut -d' ' -f1-3 /proc/loadavg))"
for what in restart list kubectl mem writes mem2 rollout; do
  for name in "${names[@]}"; do printf '%-8s %-8s %s\n' "$what" "$name" "${result[$name,$what]}"; done
done
