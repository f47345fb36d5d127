# Sourced by the class benchmarks (bench-class.sh, bench-timeline.sh): the binary they measure
# (target/release/lab-runner, built when missing; LAB_RUNNER names another), a temporary class
# directory, and a cleanup on exit that stops the board and stops and purges the class.
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
