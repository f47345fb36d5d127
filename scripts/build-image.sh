#!/usr/bin/env bash
# Builds the container image (default tag lab-runner:dev) from this checkout, from scratch.
#
#   scripts/build-image.sh [TAG]
#
# Uses target/release/lab-runner (built here with `cargo build --release --locked`, which is a
# no-op when CI already built it for the demo), copies it with exactly the shared libraries it
# links (ldd), kubectl 1.33 ($KUBECTL_1_33, default the machine image's
# /usr/lib/google-cloud-sdk/bin/kubectl.1.33) and Debian's static busybox ($BUSYBOX, default
# /bin/busybox from `busybox-static`) into target/image/rootfs, then runs `docker build`.
set -euo pipefail
cd "$(dirname "$0")/.."
tag="${1:-lab-runner:dev}"
kubectl="${KUBECTL_1_33:-/usr/lib/google-cloud-sdk/bin/kubectl.1.33}"
busybox="${BUSYBOX:-/bin/busybox}"

[ -x "$kubectl" ] || { echo "error: kubectl 1.33 not found at $kubectl (set KUBECTL_1_33)" >&2; exit 2; }
# Read the whole output first: `grep -q` closing the pipe early fails the pipeline (pipefail).
client_version="$("$kubectl" version --client 2>/dev/null || true)"
case "$client_version" in
  *v1.33.*) ;;
  *) echo "error: $kubectl is not kubectl 1.33: $client_version" >&2; exit 2 ;;
esac
# A dynamically linked busybox would need its own libraries: insist on the static one.
if ! [ -x "$busybox" ] || ldd "$busybox" >/dev/null 2>&1; then
  echo "error: no static busybox at $busybox (apt-get install busybox-static, or set BUSYBOX)" >&2
  exit 2
fi

# LAB_RUNNER_BINARY: an already built binary to put in instead (e.g. a debug build to try the
# image quickly); it must be built from this checkout for the target the image runs on.
if [ -n "${LAB_RUNNER_BINARY:-}" ]; then
  binary="$LAB_RUNNER_BINARY"
else
  cargo build --release --locked
  binary="${CARGO_TARGET_DIR:-target}/release/lab-runner"
fi

context=target/image
rootfs="$context/rootfs"
rm -rf "$context"
mkdir -p "$rootfs/bin" "$rootfs/tmp" "$rootfs/root" "$rootfs/var/lib/lab-runner"
chmod 1777 "$rootfs/tmp"
# Symbols are not needed to run; they would double the binary's size.
strip -o "$rootfs/bin/lab-runner" "$binary"
cp "$kubectl" "$rootfs/bin/kubectl"
cp "$busybox" "$rootfs/bin/busybox"
# Exactly the shared libraries the binary links, at the paths its loader looks them up.
ldd "$binary" | grep -o '/[^ ]*' | while read -r lib; do
  mkdir -p "$rootfs$(dirname "$lib")"
  cp -L "$lib" "$rootfs$lib"
done
cp Dockerfile "$context/Dockerfile"

docker build -t "$tag" "$context"
