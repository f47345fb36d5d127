#!/usr/bin/env bash
# Measures a class on this host (issue #20): `class up` wall, total RSS and PSS of the learners'
# processes, their idle CPU, `check --contexts all` over the class, and the board's latency from
# a learner's change to the board's report.
#
#   scripts/bench-class.sh [LEARNERS] [LAB]      # default: 100 gpu-sharing
#   PROCESSES=shared scripts/bench-class.sh      # every learner in one process, for comparison
#
# Uses target/release/lab-runner (built here with `cargo build --release --locked` when missing;
# set LAB_RUNNER to use another binary) and kubectl for the learner's change. Everything runs in a
# temporary class directory, stopped and purged at the end. Figures go to stdout.
set -euo pipefail
cd "$(dirname "$0")/.."

learners="${1:-100}"
lab="${2:-gpu-sharing}"
idle_seconds="${IDLE_SECONDS:-30}"
processes="${PROCESSES:-per-learner}"
bin="${LAB_RUNNER:-target/release/lab-runner}"
if [ ! -x "$bin" ]; then
  cargo build --release --locked
fi
bin="$(realpath "$bin")"
dir="$(mktemp -d)/class"
board_pid=""
cleanup() {
  [ -n "$board_pid" ] && kill "$board_pid" 2>/dev/null
  "$bin" class down --purge --state-dir "$dir" >/dev/null 2>&1 || true
}
trap cleanup EXIT

now() { date +%s.%N; }
since() { echo "$(now) - $1" | bc; }
# With --processes shared every learner's pid file names the same process: count it once.
pids() { cat "$dir"/learner-*/sim.pid | sort -u; }

echo "== $learners learners, lab $lab, --processes $processes, $(nproc) cores, $("$bin" --version)"

start=$(now)
"$bin" class up --learners "$learners" --lab "$lab" --seed 1 --processes "$processes" --state-dir "$dir" >/dev/null
echo "class up wall: $(since "$start") s"

# RSS counts the shared binary once per process; PSS splits shared pages between processes, so
# the PSS sum is what the class really takes from the host.
rss_kb=0
pss_kb=0
for pid in $(pids); do
  rss_kb=$((rss_kb + $(awk '/^VmRSS:/ { print $2 }' "/proc/$pid/status")))
  pss_kb=$((pss_kb + $(awk '/^Pss:/ { print $2 }' "/proc/$pid/smaps_rollup")))
done
echo "learner processes: $(pids | wc -l)"
echo "total RSS: $((rss_kb / 1024)) MiB ($((rss_kb / learners)) KiB per learner)"
echo "total PSS: $((pss_kb / 1024)) MiB ($((pss_kb / learners)) KiB per learner)"

# Idle CPU: utime + stime of every learner over IDLE_SECONDS of nobody talking to them.
ticks() {
  local total=0
  for pid in $(pids); do
    total=$((total + $(awk '{ print $14 + $15 }' "/proc/$pid/stat")))
  done
  echo "$total"
}
before=$(ticks)
sleep "$idle_seconds"
after=$(ticks)
hz=$(getconf CLK_TCK)
echo "idle CPU over ${idle_seconds}s: $(echo "scale=2; 100 * ($after - $before) / $hz / $idle_seconds" | bc)% of one core (all learners together)"

check() { "$bin" check "$lab" --contexts all --format json --kubeconfig "$dir/kubeconfig" >/dev/null || [ $? -eq 1 ]; }
check # warm: first connections
for run in 1 2 3; do
  start=$(now)
  check
  echo "check --contexts all over $learners learners, run $run: $(since "$start") s"
done

# Board latency: learner-01 applies the quota solution; time until the board's report says PASS.
"$bin" class board --state-dir "$dir" --listen 127.0.0.1:0 --interval 1s > "$dir/board.out" &
board_pid=$!
until grep -q http "$dir/board.out" 2>/dev/null; do sleep 0.1; done
url=$(grep -o 'http://[^ ]*' "$dir/board.out")
status() {
  curl -sf "${url}report.json" \
    | python3 -c 'import json,sys; r=json.load(sys.stdin); print(next(t["status"] for t in r["learners"][0]["report"]["tasks"] if t["id"]=="quotas"))'
}
until [ "$(status 2>/dev/null)" = FAIL ]; do sleep 0.2; done
start=$(now)
kubectl --kubeconfig "$dir/learner-01/kubeconfig" -n team-b delete resourcequota gpu-quota --ignore-not-found >/dev/null
kubectl --kubeconfig "$dir/learner-01/kubeconfig" apply -f - >/dev/null <<'YAML'
apiVersion: v1
kind: ResourceQuota
metadata:
  name: gpu-quota
  namespace: team-a
spec:
  hard:
    requests.nvidia.com/gpu: "4"
---
apiVersion: v1
kind: ResourceQuota
metadata:
  name: gpu-quota
  namespace: team-b
spec:
  hard:
    requests.nvidia.com/mig-1g.5gb: "4"
YAML
until [ "$(status)" = PASS ]; do sleep 0.05; done
echo "board latency (change applied -> board report PASS, $learners learners, --interval 1s): $(since "$start") s"
