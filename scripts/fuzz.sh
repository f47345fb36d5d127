#!/usr/bin/env bash
# Runs every cargo-fuzz target (patch: body decoding and the patch paths; http: whole requests
# through the token layer and router) for a bounded time each (default 120 s). Not part of CI.
# Needs cargo-fuzz (`cargo install cargo-fuzz`) and no nightly: the stable toolchain builds the
# targets with RUSTC_BOOTSTRAP=1 (cargo-fuzz passes -Zsanitizer=address and other -Z flags;
# stable ships the AddressSanitizer runtime for x86_64 Linux). FUZZ_SANITIZER=none builds
# without ASan (faster, fewer findings) should the sanitizer not link somewhere.
# Findings go to crates/sim/fuzz/artifacts/<target>/; corpora grow in crates/sim/fuzz/corpus/<target>/; builds in
# crates/sim/fuzz/target/ (all gitignored). Each target's last libFuzzer line (executions, coverage) is
# printed at the end.
# Usage: scripts/fuzz.sh [SECONDS] [extra libFuzzer flags…]
set -euo pipefail
cd "$(dirname "$0")/../crates/sim"   # the fuzz targets belong to the simulator crate
seconds="${1:-120}"
shift || true
sanitizer="${FUZZ_SANITIZER:-address}"
export RUSTC_BOOTSTRAP=1
# cargo-fuzz's own options go before the target: whatever follows `--` is libFuzzer's.
fuzz() {
  local command="$1" target="$2"
  shift 2
  cargo +stable fuzz "$command" --sanitizer "$sanitizer" --fuzz-dir fuzz "$target" "$@"
}

# Seeds of the patch target: a DaemonSet and the rollout-undo patch, for each operation byte.
mkdir -p fuzz/corpus/patch fuzz/corpus/http
seed='{"metadata":{"name":"a","namespace":"default"},"spec":{"selector":{"matchLabels":{"app":"a"}},"template":{"metadata":{"labels":{"app":"a"}},"spec":{"containers":[{"name":"a","image":"a:1"}]}}}}'
body='{"spec":{"template":{"$patch":"replace","spec":{"containers":[{"name":"a","image":"a:2","env":[{"name":"X","value":"1"}]}]}}}}'
for op in 0 1 2 3 4 5; do
  printf "\\012\\$(printf %03o "$op")%s\\000%s" "$seed" "$body" > "fuzz/corpus/patch/seed-$op"
done
# The hostile bodies of issue #30, for every operation that decodes them: a JSON patch whose 13
# (then 14) copies nest 8,192 (16,384) levels, and JSON and YAML one level past Go's limit.
python3 - <<'PY'
import json
stored = '{"metadata":{"name":"a","namespace":"default"},"spec":{}}'
def doubling(copies):
    ops = [{"op": "add", "path": "/spec/v", "value": {}}]
    ops += [{"op": "copy", "from": "/spec/v", "path": "/spec/v" + "/a" * (2 ** c - 1) + "/a"} for c in range(copies)]
    return json.dumps(ops)
past = '{"metadata":{"name":"a"},"x":' + "[" * 10000 + "]" * 10000 + "}"
seeds = {"copies-13": (2, doubling(13)), "copies-14": (2, doubling(14))}
for op in (0, 1, 3, 4, 5):
    seeds[f"past-limit-{op}"] = (op, past)
for name, (op, body) in seeds.items():
    with open(f"fuzz/corpus/patch/{name}", "wb") as seed:
        seed.write(bytes([10, op]) + stored.encode() + b"\0" + body.encode())
PY
# The http target's input is structured (arbitrary); its templates (kubectl's bodies for the
# course's kinds) are in the target, so it starts from an empty corpus.

summary=()
for target in patch http; do
  fuzz build -O "$target"
  log="fuzz/target/$target.log"
  status=0
  # The patch target's seeds are up to 40 KB (nesting costs bytes); the http target's inputs
  # are structured and short.
  max_len=8192
  [ "$target" = patch ] && max_len=65536
  fuzz run -O "$target" "fuzz/corpus/$target" -- -max_total_time="$seconds" -max_len="$max_len" \
    -timeout=30 -rss_limit_mb=2048 "$@" 2>&1 | tee "$log" | grep -E "^(#[0-9]+ +(DONE|NEW|REDUCE)|==[0-9]+==|SUMMARY|thread .* panicked)" | tail -n 5 || status=$?
  last=$(grep -E "^#[0-9]+" "$log" | tail -n 1 || true)
  artifacts=$(find "fuzz/artifacts/$target" -type f 2>/dev/null | wc -l)
  summary+=("$target: $last; artifacts: $artifacts")
  [[ $status -eq 0 ]] || true
done
printf '%s\n' "${summary[@]}"
