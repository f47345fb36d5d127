#!/usr/bin/env bash
# Measures what recording the class's timeline costs (issue #33): the board's own CPU (user +
# system, from /proc/PID/stat) while it grades a class whose learners keep changing their
# clusters, with `--record all` and with `--record none`, in turns (none, all, none, all …) so a
# drift of the machine's speed touches both alike; then the class's CPU (the learners' simulators
# and the board) for the same runs. With `all` the learners' simulators keep their audit log
# (they are restarted with `class restart` after each `class up --record`, so each run's
# simulators write it or not), so the class's CPU includes it. Prints each run and the medians.
#
#   scripts/bench-timeline.sh [LEARNERS] [FLIPS] [PAIRS]     # default: 12 learners, 6 flips, 3 pairs
#
# Each learner of a stuck-rollout class (variant image) answers its quizzes once; then, per run,
# every learner flips its toolkit DaemonSet's image from broken to fixed and back FLIPS times
# (a rollout each: many watch events, verdict changes on every flip), as a learner trying fixes
# would. Uses target/release/lab-runner (built when missing; LAB_RUNNER names another binary) and
# kubectl. Everything runs in a temporary class, stopped and purged at the end.
set -euo pipefail
cd "$(dirname "$0")/.."

learners="${1:-12}"
flips="${2:-6}"
pairs="${3:-3}"
. scripts/class-bench-setup.sh

ticks="$(getconf CLK_TCK)"
# utime + stime of a process, in clock ticks.
cpu_of() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }
sims() { cat "$dir"/learner-*/sim/sim.pid | sort -u; }
class_cpu() { local sum=0; for pid in $(sims) "$@"; do sum=$((sum + $(cpu_of "$pid"))); done; echo "$sum"; }
ds=nvidia-container-toolkit-daemonset
broken="nvcr.io/nvidia/k8s/container-toolkit:v1.17.80-ubuntu20.04"
fixed="nvcr.io/nvidia/k8s/container-toolkit:v1.17.8-ubuntu20.04"

"$bin" class up --learners "$learners" --lab stuck-rollout --variant image --state-dir "$dir" >/dev/null
export KUBECONFIG="$dir/kubeconfig"
sleep 5
for n in $(seq -f '%02g' 1 "$learners"); do
  ctx="learner-$n"
  node="$(kubectl --context "$ctx" -n gpu-operator get pods -o jsonpath='{range .items[*]}{.spec.nodeName} {.status.containerStatuses[0].ready}{"\n"}{end}' | awk '$2 == "false" { print $1; exit }')"
  "$bin" answer stuck-rollout cause image --kubeconfig "$dir/$ctx/kubeconfig" >/dev/null
  "$bin" answer stuck-rollout ci-wait 1 --kubeconfig "$dir/$ctx/kubeconfig" >/dev/null
  "$bin" answer stuck-rollout affected-node "$node" --kubeconfig "$dir/$ctx/kubeconfig" >/dev/null
done

run() {
  local mode="$1"
  "$bin" class up --record "$mode" --state-dir "$dir" >/dev/null
  # The simulators take the record mode (their audit log) when they start.
  "$bin" class restart all --state-dir "$dir" >/dev/null
  sleep 3
  "$bin" class board --state-dir "$dir" --listen 127.0.0.1:0 >"$dir/board.out" 2>"$dir/board.err" &
  board_pid=$!
  until grep -q http "$dir/board.out"; do sleep 0.1; done
  sleep 3
  local board_before class_before
  board_before="$(cpu_of "$board_pid")"
  class_before="$(class_cpu "$board_pid")"
  for _ in $(seq "$flips"); do
    for image in "$fixed" "$broken"; do
      local setters=()
      for n in $(seq -f '%02g' 1 "$learners"); do
        kubectl --context "learner-$n" -n gpu-operator set image "ds/$ds" "nvidia-container-toolkit-ctr=$image" >/dev/null &
        setters+=($!)
      done
      # Only the setters: the board runs in the background too.
      wait "${setters[@]}"
      sleep 3
    done
  done
  local board_cpu class_cpu_used
  board_cpu=$(( $(cpu_of "$board_pid") - board_before ))
  class_cpu_used=$(( $(class_cpu "$board_pid") - class_before ))
  kill "$board_pid"; wait "$board_pid" 2>/dev/null || true; board_pid=""
  echo "$mode $board_cpu $class_cpu_used"
}

results="$(mktemp)"
for _ in $(seq "$pairs"); do
  run none | tee -a "$results"
  run all | tee -a "$results"
done
events="$(sqlite3 "$dir/timeline.db" 'SELECT count(*) FROM events' 2>/dev/null || echo '?')"
median() { sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }
for mode in none all; do
  b="$(awk -v m="$mode" '$1 == m { print $2 }' "$results" | median)"
  c="$(awk -v m="$mode" '$1 == m { print $3 }' "$results" | median)"
  printf '%-5s board CPU %6.2f s   class CPU %7.2f s   (median of %s runs)\n' \
    "$mode" "$(echo "$b / $ticks" | bc -l)" "$(echo "$c / $ticks" | bc -l)" "$pairs"
done
audited="$(cat "$dir"/learner-*/sim/audit.log* 2>/dev/null | wc -l)"
echo "timeline events recorded: $events; audit events written: $audited ($learners learners, $flips flips each per run)"
