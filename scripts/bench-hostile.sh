#!/usr/bin/env bash
# The hostile client of issue #30 against one simulator (a release build), one attack after
# another and then all together, each for $SECONDS_EACH s:
#   idle     $IDLE TLS connections (no token) that complete the handshake and send nothing,
#            reopened as soon as the server closes one;
#   watch    $WATCHES watches of 15 ConfigMaps of 1 MB with the read-only viewer token that
#            never read (receive buffers of 4 KB), reopened when closed;
#   deep     $DEEP loops of the JSON patch of 13 copies that nests 8,192 levels (200), the one of
#            14 copies (422, timed: the time to refuse it), and a custom resource created and
#            deleted 9,998 levels deep;
#   timeout  $TIMEOUTS loops of `?watch=true&timeoutSeconds=9223372036854775807` (open, read the
#            first event, close);
#   all      the four at once.
# Measured meanwhile, from another process: /version with the admin token on one keep-alive
# connection, one request every 20 ms (p50, p99, max, errors); /readyz without a token on a new
# connection every 100 ms, as a kubelet probes (p50, p99, max, answers slower than 1 s, failures);
# the server's VmRSS and open file descriptors (connections among them) every 200 ms (max),
# its VmHWM; whether the server is still alive (a server that died is started again for the
# next attack).
# Targets (the issue): /readyz within 1 s throughout, resident memory under 1.5 GB, no abort.
# The server starts with the usual soft open-file limit of 1,024 (as in the issue; it may raise
# it itself) and an address-space cap of $AS_LIMIT_MB, so a server whose memory is unbounded
# aborts on a failed allocation, as in the issue, instead of taking the machine's memory.
# Not part of CI (timings are not asserted).
#
# Usage: scripts/bench-hostile.sh [BINARY]   (default: target/release/lab-runner)
#   SECONDS_EACH=20 IDLE=2600 WATCHES=275 DEEP=4 TIMEOUTS=8 AS_LIMIT_MB=4096
#   ATTACKS="none idle watch deep timeout all"
#   ATTACKER_NICE=0 (the attacker's nice value: on a 2-core machine the attacker's own CPU
#   delays the prober as much as the server does; 10 makes it yield to both, as an attacker on
#   another machine would)
set -euo pipefail
cd "$(dirname "$0")/.."
bin="$(realpath "${1:-target/release/lab-runner}")"
[ -x "$bin" ] || { echo "bench-hostile: $bin is not an executable (cargo build --release?)" >&2; exit 2; }
seconds="${SECONDS_EACH:-20}"
idle="${IDLE:-2600}"
watches="${WATCHES:-275}"
deep="${DEEP:-4}"
timeouts="${TIMEOUTS:-8}"
attacks="${ATTACKS:-none idle watch deep timeout all}"
as_limit_mb="${AS_LIMIT_MB:-4096}"

work="$(mktemp -d)"
cleanup() {
  [ -f "$work/sim/sim.pid" ] && "$bin" sim down --state-dir "$work/sim" >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT
export HOME="$work/home" LANG=C.UTF-8 NO_COLOR=1
mkdir -p "$HOME"
# Starts a simulator in a fresh state directory (again after one died). The attacker holds
# thousands of sockets; the server gets the usual soft limit.
start_server() {
  [ -f "$work/sim/sim.pid" ] && "$bin" sim down --state-dir "$work/sim" >/dev/null 2>&1 || true
  rm -rf "$work/sim"
  local hard_files
  hard_files="$(ulimit -Hn)"
  ulimit -Sn 1024
  "$bin" sim up --state-dir "$work/sim" --nodes 1 >/dev/null
  ulimit -Sn "$hard_files"
  pid="$(cat "$work/sim/sim.pid")"
  prlimit --pid "$pid" --as="$((as_limit_mb << 20))"
  export KUBECONFIG="$work/sim/kubeconfig" VIEWER_TOKEN="$(cat "$work/sim/viewer.token")"
  (cd "$work" && python3 setup.py)
}

cat > "$work/common.py" <<'PY'
import base64, http.client, json, os, re, ssl, urllib.parse

text = open(os.environ["KUBECONFIG"]).read()
SERVER = urllib.parse.urlparse(re.search(r"server:\s*(\S+)", text).group(1))
CA = base64.b64decode(re.search(r"certificate-authority-data:\s*(\S+)", text).group(1)).decode()
ADMIN = re.search(r"token:\s*(\S+)", text).group(1)
VIEWER = os.environ["VIEWER_TOKEN"]
HOST, PORT = SERVER.hostname, SERVER.port

def context():
    return ssl.create_default_context(cadata=CA)

def connection(timeout=30):
    return http.client.HTTPSConnection(HOST, PORT, context=context(), timeout=timeout)

def request(conn, method, path, token=ADMIN, body=None, content_type="application/json"):
    headers = {"Authorization": "Bearer " + token} if token else {}
    if body is not None:
        headers["Content-Type"] = content_type
    conn.request(method, path, body=body, headers=headers)
    response = conn.getresponse()
    return response.status, response.read()

THINGS = "/apis/lab.example.com/v1/namespaces/default/deepthings"

def doubling_patch(copies):
    operations = [{"op": "add", "path": "/spec/v", "value": {}}]
    for copy in range(copies):
        operations.append({"op": "copy", "from": "/spec/v", "path": "/spec/v" + "/a" * (2 ** copy - 1) + "/a"})
    return json.dumps(operations)

def deep_thing(name, levels):
    inner = '{"a":' * levels + "1" + "}" * levels
    return ('{"apiVersion":"lab.example.com/v1","kind":"DeepThing","metadata":{"name":"%s"},"spec":{"deep":%s}}'
            % (name, inner))
PY

cat > "$work/setup.py" <<'PY'
import json, sys
from common import *
conn = connection()
for n in range(15):
    body = json.dumps({"metadata": {"name": f"big-{n}"}, "data": {"k": "x" * 1_000_000}})
    status, data = request(conn, "POST", "/api/v1/namespaces/default/configmaps", body=body)
    assert status == 201, (status, data[:200])
crd = {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
       "metadata": {"name": "deepthings.lab.example.com"},
       "spec": {"group": "lab.example.com", "scope": "Namespaced",
                "names": {"kind": "DeepThing", "listKind": "DeepThingList", "plural": "deepthings", "singular": "deepthing"},
                "versions": [{"name": "v1", "served": True, "storage": True, "schema": {"openAPIV3Schema": {
                    "type": "object", "properties": {"spec": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}}}}}]}}
status, data = request(conn, "POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", body=json.dumps(crd))
assert status == 201, (status, data[:200])
status, data = request(conn, "POST", THINGS, body=json.dumps({"apiVersion": "lab.example.com/v1", "kind": "DeepThing",
                                                            "metadata": {"name": "target"}, "spec": {}}))
assert status == 201, (status, data[:200])
PY

cat > "$work/attack.py" <<'PY'
import asyncio, http.client, json, socket, ssl, sys, threading, time
from common import *

kind, seconds = sys.argv[1], float(sys.argv[2])
idle, watches, deep, timeouts = (int(n) for n in sys.argv[3:7])
deadline = time.monotonic() + seconds
counts = {}
refusals = []  # seconds to the 422 of the patch that nests past the limit
lock = threading.Lock()

def count(key, n=1):
    with lock:
        counts[key] = counts.get(key, 0) + n

async def hold(request_bytes=None, rcvbuf=None):
    # One connection, reopened whenever the server closes it, until the deadline. With a
    # request (a watch), nothing is read: asyncio stops reading the socket once its buffer is
    # full, so the server sees a client that reads nothing. Without one, the connection only
    # waits, reading to see the server close it.
    while time.monotonic() < deadline:
        try:
            sock = socket.socket()
            if rcvbuf:
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
            sock.setblocking(False)
            await asyncio.get_running_loop().sock_connect(sock, (HOST, PORT))
            reader, writer = await asyncio.wait_for(
                asyncio.open_connection(sock=sock, ssl=context(), server_hostname=HOST), 30)
            count("opened")
            left = max(0.0, deadline - time.monotonic())
            if request_bytes:
                writer.write(request_bytes)
                await writer.drain()
                await asyncio.sleep(left)
            elif not await asyncio.wait_for(reader.read(1), left):
                count("closed by the server")
            writer.transport.abort()
        except asyncio.TimeoutError:
            pass
        except (OSError, ssl.SSLError, ConnectionError):
            count("refused or reset")
            await asyncio.sleep(0.05)

def watch_request(path, token):
    return f"GET {path} HTTP/1.1\r\nHost: sim\r\nAuthorization: Bearer {token}\r\n\r\n".encode()

def deep_loop():
    conn = connection(timeout=60)
    n = 0
    while time.monotonic() < deadline:
        try:
            for body in (doubling_patch(13), doubling_patch(14)):
                start = time.perf_counter()
                status, _ = request(conn, "PATCH", THINGS + "/target", body=body, content_type="application/json-patch+json")
                count(f"patch {status}")
                if status == 422:
                    with lock:
                        refusals.append(time.perf_counter() - start)
            name = f"deep-{threading.get_ident()}-{n}"
            n += 1
            status, _ = request(conn, "POST", THINGS, body=deep_thing(name, 9_998))
            count(f"create {status}")
            status, _ = request(conn, "DELETE", THINGS + "/" + name)
            count(f"delete {status}")
        except (OSError, http.client.HTTPException):
            count("deep errors")
            time.sleep(0.05)
            conn = connection(timeout=60)

def timeout_loop():
    path = "/api/v1/namespaces/default/configmaps?watch=true&timeoutSeconds=9223372036854775807&fieldSelector=metadata.name%3Dbig-0"
    while time.monotonic() < deadline:
        try:
            conn = connection(timeout=30)
            conn.request("GET", path, headers={"Authorization": "Bearer " + ADMIN})
            response = conn.getresponse()
            count(f"watch {response.status}")
            response.read1(1) if response.status == 200 else response.read()
            conn.close()
        except (OSError, http.client.HTTPException):
            count("timeout errors")

async def main():
    tasks = []
    threads = []
    if kind in ("idle", "all"):
        tasks += [asyncio.create_task(hold(None)) for _ in range(idle)]
    if kind in ("watch", "all"):
        watch = watch_request("/api/v1/namespaces/default/configmaps?watch=true", VIEWER)
        tasks += [asyncio.create_task(hold(watch, rcvbuf=4096)) for _ in range(watches)]
    if kind in ("deep", "all"):
        threads += [threading.Thread(target=deep_loop, daemon=True) for _ in range(deep)]
    if kind in ("timeout", "all"):
        threads += [threading.Thread(target=timeout_loop, daemon=True) for _ in range(timeouts)]
    for thread in threads:
        thread.start()
    await asyncio.sleep(seconds)
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    for thread in threads:
        thread.join(timeout=10)

asyncio.run(main())
if refusals:
    refusals.sort()
    counts["422 in ms (p50, max)"] = [round(refusals[len(refusals) // 2] * 1000), round(refusals[-1] * 1000)]
print(json.dumps(counts, sort_keys=True))
PY

cat > "$work/probe.py" <<'PY'
import http.client, json, sys, threading, time
from common import *

seconds = float(sys.argv[1])
deadline = time.monotonic() + seconds
version, readyz = [], []
errors = {"version": 0, "readyz": 0}

def versions():
    conn = connection(timeout=10)
    while time.monotonic() < deadline:
        start = time.perf_counter()
        try:
            status, _ = request(conn, "GET", "/version")
            if status == 200:
                version.append(time.perf_counter() - start)
            else:
                errors["version"] += 1
        except (OSError, http.client.HTTPException):
            errors["version"] += 1
            conn = connection(timeout=10)
        time.sleep(0.02)

def probes():
    while time.monotonic() < deadline:
        start = time.perf_counter()
        try:
            conn = connection(timeout=10)
            status, body = request(conn, "GET", "/readyz", token=None)
            conn.close()
            readyz.append(time.perf_counter() - start)
            if status != 200:
                errors["readyz"] += 1
        except (OSError, http.client.HTTPException):
            errors["readyz"] += 1
        time.sleep(0.1)

threads = [threading.Thread(target=versions), threading.Thread(target=probes)]
for thread in threads:
    thread.start()
for thread in threads:
    thread.join()

def percentile(values, p):
    if not values:
        return float("nan")
    values = sorted(values)
    return values[min(len(values) - 1, int(round(p / 100 * (len(values) - 1))))] * 1000

print(json.dumps({
    "version_p50_ms": round(percentile(version, 50), 1), "version_p99_ms": round(percentile(version, 99), 1),
    "version_max_ms": round(percentile(version, 100), 1), "version_n": len(version), "version_errors": errors["version"],
    "readyz_p50_ms": round(percentile(readyz, 50), 1),
    "readyz_p99_ms": round(percentile(readyz, 99), 1), "readyz_max_ms": round(percentile(readyz, 100), 1),
    "readyz_over_1s": sum(1 for v in readyz if v > 1), "readyz_n": len(readyz), "readyz_failures": errors["readyz"],
}))
PY

cd "$work"
start_server
# A process that died (or is a zombie) has no VmRSS: 0.
open_fds() { { find "/proc/$pid/fd" -mindepth 1 -maxdepth 1 2>/dev/null || true; } | wc -l; }
rss_kb() { awk '/^VmRSS/ {rss = $2} END {print rss + 0}' "/proc/$pid/status" 2>/dev/null || echo 0; }
echo "== machine: $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg); $bin; ${seconds} s per attack"
echo "== server: open files $(awk '/^Max open files/ {print $4}' "/proc/$pid/limits") soft; address space capped at ${as_limit_mb} MB"
printf '%-8s %9s %9s %9s %8s %9s %9s %9s %7s %7s %9s %7s %s\n' attack "ver p50" "ver p99" "ver max" "ver err" \
  "rdy p50" "rdy p99" "rdy max" ">1s" "rdy err" "RSS max" "fds max" "attacker's counts"
for attack in $attacks; do
  python3 probe.py "$seconds" > "probe-$attack.json" &
  probe=$!
  if [ "$attack" != none ]; then
    nice -n "${ATTACKER_NICE:-0}" python3 attack.py "$attack" "$seconds" "$idle" "$watches" "$deep" "$timeouts" > "attack-$attack.json" &
    attacker=$!
  else
    echo '{}' > "attack-$attack.json"; attacker=""
  fi
  max=0 max_fds=0
  while kill -0 "$probe" 2>/dev/null; do
    rss="$(rss_kb)"; [ "$rss" -gt "$max" ] && max="$rss"
    fds="$(open_fds)"; [ "$fds" -gt "$max_fds" ] && max_fds="$fds"
    sleep 0.2
  done
  [ -n "$attacker" ] && wait "$attacker"
  alive="alive"; kill -0 "$pid" 2>/dev/null || alive="DEAD"
  python3 - "$attack" "$max" "$alive" "$max_fds" <<'PY'
import json, sys
attack, rss_kb, alive, fds = sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4])
p = json.load(open(f"probe-{attack}.json"))
a = json.load(open(f"attack-{attack}.json"))
print(f"{attack:<8} {p['version_p50_ms']:>7}ms {p['version_p99_ms']:>7}ms {p['version_max_ms']:>7}ms {p['version_errors']:>8} "
      f"{p['readyz_p50_ms']:>7}ms {p['readyz_p99_ms']:>7}ms {p['readyz_max_ms']:>7}ms {p['readyz_over_1s']:>7} {p['readyz_failures']:>7} "
      f"{rss_kb // 1024:>6} MB {fds:>7} {alive} {json.dumps(a, sort_keys=True)}")
PY
  # A server that died is started again for the next attack (the table shows DEAD).
  [ "$alive" = alive ] || start_server
  sleep 3
done
echo "server VmHWM: $(awk '/^VmHWM/ {print int($2 / 1024) " MB"}' "/proc/$pid/status"), threads: $(awk '/^Threads/ {print $2}' "/proc/$pid/status")"
