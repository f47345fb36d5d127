#!/usr/bin/env bash
# Measures a class on this host (issues #20, #31): `class up` wall, the learners' memory (RSS,
# PSS, USS: after the labs settled, and again with the board watching), their idle CPU, `check
# --contexts all` over the class, the board's latency from a learner's change to the board's
# report, `class down` with the board watching every learner, the re-up of the stopped class
# (nothing applied again) and the restart of one learner.
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
# The learners finish starting their labs (rollouts, pulls) for a few seconds after `class up`.
settle_seconds="${SETTLE_SECONDS:-15}"
processes="${PROCESSES:-per-learner}"
. scripts/class-bench-setup.sh

now() { date +%s.%N; }
since() { echo "$(now) - $1" | bc; }
# With --processes shared every learner's pid file names the same process: count it once.
pids() { cat "$dir"/learner-*/sim/sim.pid | sort -u; }

echo "== $learners learners, lab $lab, --processes $processes, $(nproc) cores, $(awk '/MemTotal/ { print int($2 / 1048576) }' /proc/meminfo) GiB, $(uname -r), $("$bin" --version)"

start=$(now)
"$bin" class up --learners "$learners" --lab "$lab" --seed 1 --processes "$processes" --state-dir "$dir" >/dev/null
echo "class up wall: $(since "$start") s"

# RSS counts the shared binary once per process; PSS splits shared pages between processes, so
# the PSS sum is what the class really takes from the host; USS (private pages) is what one more
# learner adds. Page tables (VmPTE) are the kernel's share, outside all three.
memory() { # $1: when
  local rss_kb=0 pss_kb=0 uss_kb=0 pte_kb=0
  for pid in $(pids); do
    rss_kb=$((rss_kb + $(awk '/^VmRSS:/ { print $2 }' "/proc/$pid/status")))
    pte_kb=$((pte_kb + $(awk '/^VmPTE:/ { print $2 }' "/proc/$pid/status")))
    pss_kb=$((pss_kb + $(awk '/^Pss:/ { print $2 }' "/proc/$pid/smaps_rollup")))
    uss_kb=$((uss_kb + $(awk '/^Private_(Clean|Dirty):/ { sum += $2 } END { print sum }' "/proc/$pid/smaps_rollup")))
  done
  echo "memory $1: $(pids | wc -l) process(es); total RSS $((rss_kb / 1024)) MiB ($((rss_kb / learners)) KiB per learner), PSS $((pss_kb / 1024)) MiB ($((pss_kb / learners)) KiB per learner), USS $((uss_kb / 1024)) MiB ($((uss_kb / learners)) KiB per learner), page tables $((pte_kb / learners)) KiB per learner"
}
memory "right after class up"

# Idle CPU: utime + stime of every learner over IDLE_SECONDS of nobody talking to them, after
# SETTLE_SECONDS.
ticks() {
  local total=0
  for pid in $(pids); do
    total=$((total + $(awk '{ print $14 + $15 }' "/proc/$pid/stat")))
  done
  echo "$total"
}
hz=$(getconf CLK_TCK)
before=$(ticks)
sleep "$settle_seconds"
after=$(ticks)
echo "CPU while settling, the first ${settle_seconds}s after class up: $(echo "scale=2; 100 * ($after - $before) / $hz / $settle_seconds" | bc)% of one core"
before=$(ticks)
sleep "$idle_seconds"
after=$(ticks)
echo "idle CPU over ${idle_seconds}s: $(echo "scale=2; 100 * ($after - $before) / $hz / $idle_seconds" | bc)% of one core (all learners together)"
memory "after the labs settled"

check() { "$bin" check "$lab" --contexts all --format json --kubeconfig "$dir/kubeconfig" >/dev/null || [ $? -eq 1 ]; }
check # warm: first connections
for run in 1 2 3; do
  start=$(now)
  check
  echo "check --contexts all over $learners learners, run $run: $(since "$start") s"
done

# Board latency: learner-01 breaks and fixes the quota task with kubectl, SAMPLES times each;
# each sample is the time from starting kubectl to the board's SSE event (/events) that shows the
# new verdict. The board re-grades a learner on every change its watches see (no polling).
samples="${SAMPLES:-5}"
board_start=$(now)
"$bin" class board --state-dir "$dir" --listen 127.0.0.1:0 > "$dir/board.out" &
board_pid=$!
until grep -q http "$dir/board.out" 2>/dev/null; do sleep 0.1; done
url=$(grep -o 'http://[^ ]*' "$dir/board.out")
: > "$dir/verdicts"
# One reader of the event stream: a line "EPOCH STATUS" each time learner-01's quota verdict changes.
python3 -u - "${url}events" > "$dir/verdicts" <<'PY' &
import json, sys, time, urllib.request
last = None
with urllib.request.urlopen(sys.argv[1]) as stream:
    for line in stream:
        line = line.decode().rstrip("\n")
        if not line.startswith("data:"):
            continue
        learner = json.loads(line[5:])["report"]["learners"][0]
        tasks = (learner.get("report") or {}).get("tasks", [])
        status = next((t["status"] for t in tasks if t["id"] == "quotas"), learner["status"])
        if status != last:
            print(f"{time.time():.3f} {status}")
            last = status
PY
reader_pid=$!
trap 'kill $reader_pid 2>/dev/null || true; cleanup' EXIT
lines() { wc -l < "$dir/verdicts"; }
# Waits for a verdict line after the first $1 lines that says $2; prints its time.
verdict_after() {
  local seen=$1 want=$2
  while :; do
    local found
    found=$(tail -n +"$((seen + 1))" "$dir/verdicts" | awk -v w="$want" '$2 == w { print $1; exit }')
    [ -n "$found" ] && { echo "$found"; return; }
    sleep 0.02
  done
}
k() { kubectl --kubeconfig "$dir/learner-01/kubeconfig" "$@" >/dev/null; }
fix() {
  k apply -f - <<'YAML'
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
}
brk() { k -n team-b delete resourcequota gpu-quota --ignore-not-found; }
until [ "$(lines)" -ge 1 ]; do sleep 0.1; done
echo "board: first snapshot (every learner graded) $(since "$board_start") s after its start"
latencies=()
measure() { # $1: the change (fix|brk), $2: the verdict it leads to
  local seen start done_at
  seen=$(lines)
  start=$(now)
  "$1"
  done_at=$(verdict_after "$seen" "$2")
  latencies+=("$(echo "$done_at - $start" | bc)")
}
brk
verdict_after 0 FAIL >/dev/null
for _ in $(seq "$samples"); do
  measure fix PASS
  measure brk FAIL
done
sorted=$(printf '%s\n' "${latencies[@]}" | sort -n)
count=${#latencies[@]}
echo "board latency (kubectl start -> SSE event with the new verdict, $learners learners, $count changes): median $(echo "$sorted" | sed -n "$(((count + 1) / 2))p") s, min $(echo "$sorted" | head -1) s, max $(echo "$sorted" | tail -1) s"

# Idle CPU with the board watching every learner: the board process and the learners together.
board_ticks() { awk '{ print $14 + $15 }' "/proc/$board_pid/stat"; }
sleep 3
before=$(ticks)
board_before=$(board_ticks)
sleep "$idle_seconds"
after=$(ticks)
board_after=$(board_ticks)
echo "idle CPU with the board watching, over ${idle_seconds}s: learners $(echo "scale=2; 100 * ($after - $before) / $hz / $idle_seconds" | bc)%, board $(echo "scale=2; 100 * ($board_after - $board_before) / $hz / $idle_seconds" | bc)% of one core"
echo "board RSS: $(($(awk '/^VmRSS:/ { print $2 }' "/proc/$board_pid/status") / 1024)) MiB"
memory "with the board watching every learner"

# `class down` with the board still watching every learner: every learner is signalled at once,
# so the class stops in about one learner's grace for its open watches.
start=$(now)
"$bin" class down --state-dir "$dir" >/dev/null
echo "class down with the board watching: $(since "$start") s"
kill "$board_pid" 2>/dev/null; wait "$board_pid" 2>/dev/null || true
board_pid=""

# The same class again: every learner started on its recorded port, no lab applied again.
start=$(now)
"$bin" class up --learners "$learners" --lab "$lab" --seed 1 --processes "$processes" --state-dir "$dir" > "$dir/reup.out"
echo "class up again (stopped class, labs kept): $(since "$start") s; $(grep -c "already started" "$dir/reup.out") of $learners learners kept their lab"
start=$(now)
"$bin" class restart learner-01 --state-dir "$dir" >/dev/null
echo "class restart learner-01: $(since "$start") s"
