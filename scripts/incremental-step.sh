#!/usr/bin/env bash
# One step of the edit-compile-test loop, for timing a one-line change: appends an anonymous
# constant to FILE (a line the compiler must read, type-check and evaluate), then either builds
# the library and the binary (`build`: `cargo build`) or builds and runs the unit tests of FILE's
# crate (`test`: `cargo test -p <crate> --lib`, filtered to FILE's top-level module in the main
# crate). Works on a checkout before the workspace split (one crate) and after it (crates/):
# `src/<module>/…` is the main crate's, `crates/<name>/src/…` is `lab-runner-<name>`'s.
# Time it from outside, pairing two checkouts run in turn (A B A B …) so both see the same load;
# restore FILE afterwards (`git checkout -- FILE`).
# Usage: scripts/incremental-step.sh build|test FILE    (from the checkout's root; debug profile)
set -euo pipefail
mode="$1" file="$2"
[ -f "$file" ] || { echo "incremental-step: no file $file" >&2; exit 2; }
echo "const _: u64 = $(date +%s%N);" >> "$file"
case "$mode" in
  build) exec cargo build --offline --quiet ;;
  test)
    case "$file" in
      crates/*/src/*) crate="lab-runner-$(echo "$file" | cut -d/ -f2)"; exec cargo test --offline --quiet -p "$crate" --lib ;;
      src/*/*) module="$(echo "$file" | cut -d/ -f2)"; exec cargo test --offline --quiet -p lab-runner --lib -- "$module::" ;;
      *) echo "incremental-step: $file is in no crate's src/" >&2; exit 2 ;;
    esac ;;
  *) echo "incremental-step: mode is build or test, not $mode" >&2; exit 2 ;;
esac
