#!/usr/bin/env bash
# bench/durable.sh: the durability benchmarks of issue 5 against a real
# MinIO on loopback, each printed as ratios:
#
#   BenchmarkDurableWrite_MinIO    durable acknowledgement vs one raw conditional
#                                  PUT + one GET (target p50 <= 1.25)
#   BenchmarkGroupCommit_MinIO     64 writers vs 1 on one cell (target >= 10x)
#   BenchmarkColdActivation_MinIO  first request to a ~1 MB cell on a fresh node
#                                  (target <= 20 ms)
#   BenchmarkForwarding_MinIO      warm forwarded request vs a local one
#   BenchmarkRestore100MB_MinIO    restore of a ~100 MB cell: objects and time
#
# In production the bucket is another machine: the node never shares its
# cores with the object store. On a small machine MinIO's own work (its
# background scanner, the tail of the last PUT) steals the node's CPU in
# the middle of a request and adds to the node's side only — the raw
# round trips it is compared with do nothing on the CPU while they wait.
# So with 2 or more CPUs MinIO runs on the last CPU and the benchmarks on
# the others (BENCH_PIN=0 turns this off and shares every core).
#
# Environment (all optional):
#   BENCH_COUNT=3        runs of each benchmark
#   BENCH_PIN=1          pin MinIO and the benchmarks to separate CPUs
#   BENCH_FILTER=regexp  which benchmarks (default: all of the above)
set -euo pipefail
cd "$(dirname "$0")/.."

COUNT=${BENCH_COUNT:-3}
PIN=${BENCH_PIN:-1}
FILTER=${BENCH_FILTER:-DurableWrite_MinIO|GroupCommit_MinIO|ColdActivation_MinIO|Forwarding_MinIO|Restore100MB_MinIO}

MINIO_MODULE=github.com/minio/minio
MINIO_VERSION=v0.0.0-20260212201848-7aac2a2c5b7c
GOBIN_DIR=$(go env GOBIN)
[ -n "$GOBIN_DIR" ] || GOBIN_DIR=$(go env GOPATH)/bin
MINIO=${CELLD_MINIO_BIN:-$GOBIN_DIR/minio}
if [ ! -x "$MINIO" ]; then
  echo "installing $MINIO_MODULE@$MINIO_VERSION (a few minutes, once)…" >&2
  GOFLAGS=-mod=mod go install "$MINIO_MODULE@$MINIO_VERSION"
fi

cpus=$(nproc)
minio_pin=() bench_pin=()
if [ "$PIN" = 1 ] && [ "$cpus" -ge 2 ] && command -v taskset >/dev/null; then
  minio_pin=(taskset -c "$((cpus - 1))")
  bench_pin=(taskset -c "0-$((cpus - 2))")
  echo "MinIO on CPU $((cpus - 1)), benchmarks on CPUs 0-$((cpus - 2))" >&2
else
  echo "MinIO and the benchmarks share all $cpus CPUs" >&2
fi

free_port() {
  local p
  for p in $(shuf -i 20000-60000 -n 50); do
    if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then echo "$p"; return 0; fi
  done
  echo "no free port found" >&2; return 1
}

work=$(mktemp -d)
port=$(free_port)
console=$(free_port)
export MINIO_ROOT_USER=celldbench MINIO_ROOT_PASSWORD=celldbench-$RANDOM$RANDOM
"${minio_pin[@]}" "$MINIO" server --quiet --address "127.0.0.1:$port" --console-address "127.0.0.1:$console" "$work/data" >"$work/minio.log" 2>&1 &
minio_pid=$!
cleanup() { kill "$minio_pid" 2>/dev/null || true; wait "$minio_pid" 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT
for _ in $(seq 1 150); do
  if curl -fsS "http://127.0.0.1:$port/minio/health/live" >/dev/null 2>&1; then break; fi
  kill -0 "$minio_pid" 2>/dev/null || { cat "$work/minio.log" >&2; exit 1; }
  sleep 0.2
done
export CELLD_TEST_S3_ENDPOINT=http://127.0.0.1:$port
export CELLD_TEST_S3_ACCESS_KEY=$MINIO_ROOT_USER
export CELLD_TEST_S3_SECRET_KEY=$MINIO_ROOT_PASSWORD
unset MINIO_ROOT_USER MINIO_ROOT_PASSWORD

for pkg in server cell; do
  go test -c -o "$work/$pkg.test" "./$pkg"
  (cd "$pkg" && "${bench_pin[@]}" "$work/$pkg.test" -test.run '^$' -test.bench "$FILTER" \
    -test.benchtime 1x -test.count "$COUNT" -test.timeout 30m)
done
