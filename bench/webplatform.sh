#!/usr/bin/env bash
# bench/webplatform.sh: WebCrypto and CompressionStream hot paths on celld
# and on workerd in the same run: SHA-256 of 1 MiB, HMAC-SHA256 sign of
# 1 KiB, RSA-2048 verify, ECDSA P-256 sign, gzip of 1 MiB through
# CompressionStream. Each op runs N times inside one request
# (bench/webplatform/index.js); the time of a request with n=0 (the setup:
# key generation, buffers) is subtracted, and the best of BENCH_REPS runs
# is kept. Prints the time per op on each runtime and workerd/celld (above
# 1.0: celld is faster).
#
# Environment: BENCH_REPS=3, BENCH_SCALE=1 (multiplies every N),
# BENCH_CELLD=path (a prebuilt celld), BENCH_SERVER_CPUS (taskset -c list).
# workerd comes from npm into bench/.npm, as in bench/run.sh.
set -euo pipefail

WORKERD_VERSION=1.20261117.1
REPS=${BENCH_REPS:-3}
SCALE=${BENCH_SCALE:-1}
PIN=()
[[ -z ${BENCH_SERVER_CPUS:-} ]] || PIN=(taskset -c "$BENCH_SERVER_CPUS")
BENCH=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$BENCH/.." && pwd)
cd "$ROOT"
log() { printf '%s\n' "$*" >&2; }
die() { log "bench: $*"; exit 1; }
for tool in npm go curl awk timeout; do command -v "$tool" >/dev/null || die "$tool is required"; done

WORKERD=$BENCH/.npm/node_modules/@cloudflare/workerd-linux-64/bin/workerd
[[ "$(uname -m)" == aarch64 ]] && WORKERD=$BENCH/.npm/node_modules/@cloudflare/workerd-linux-arm64/bin/workerd
installed=$(sed -n 's/.*"version": *"\([^"]*\)".*/\1/p' "$BENCH/.npm/node_modules/workerd/package.json" 2>/dev/null || true)
if [[ ! -x $WORKERD || $installed != "$WORKERD_VERSION" ]]; then
	log "installing workerd@$WORKERD_VERSION into bench/.npm"
	npm install --prefix "$BENCH/.npm" --no-audit --no-fund --loglevel=error "workerd@$WORKERD_VERSION" >&2
fi
[[ -x $WORKERD ]] || WORKERD=$BENCH/.npm/node_modules/.bin/workerd
mkdir -p "$BENCH/.bin"
CELLD=${BENCH_CELLD:-}
if [[ -z $CELLD ]]; then
	go build -o "$BENCH/.bin/celld" ./cmd/celld
	CELLD=$BENCH/.bin/celld
fi

TMP=$(mktemp -d "${TMPDIR:-/tmp}/celld-bench-wp.XXXXXX")
PID=
stop() {
	[[ -n $PID ]] || return 0
	kill -TERM "$PID" 2>/dev/null || true
	for _ in $(seq 50); do kill -0 "$PID" 2>/dev/null || break; sleep 0.1; done
	kill -KILL "$PID" 2>/dev/null || true
	wait "$PID" 2>/dev/null || true
	PID=
}
trap 'stop; rm -rf "$TMP"' EXIT
trap 'exit 130' INT TERM
free_port() {
	local p
	for _ in $(seq 200); do
		p=$((20000 + RANDOM % 40000))
		(exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null || { echo "$p"; return 0; }
	done
	die "no free port"
}
wait_ready() {
	for _ in $(seq 600); do
		kill -0 "$PID" 2>/dev/null || { tail -20 "$TMP/$1.log" >&2; die "$1 exited"; }
		[[ $(curl -s -o /dev/null -w '%{http_code}' --max-time 2 "$BASE/?op=none" || true) == 404 ]] && return 0
		sleep 0.1
	done
	die "$1 did not start"
}

start() {
	local port
	port=$(free_port)
	BASE=http://127.0.0.1:$port
	case $1 in
	workerd)
		cp bench/webplatform/index.js "$TMP/index.js"
		cat >"$TMP/config.capnp" <<CAPNP
using Workerd = import "/workerd/workerd.capnp";
const config :Workerd.Config = (
  services = [ (name = "main", worker = .worker) ],
  sockets = [ (name = "http", address = "127.0.0.1:$port", http = (), service = "main") ],
);
const worker :Workerd.Worker = (
  modules = [ (name = "index.js", esModule = embed "index.js") ],
  compatibilityDate = "2026-04-01",
);
CAPNP
		"${PIN[@]}" "$WORKERD" serve "$TMP/config.capnp" >"$TMP/workerd.log" 2>&1 &
		PID=$!
		;;
	celld)
		export CELLD_BUCKET=file://$TMP/bucket
		"$CELLD" deploy bench/webplatform >"$TMP/deploy.log" 2>&1 || { cat "$TMP/deploy.log" >&2; die "deploy failed"; }
		"${PIN[@]}" "$CELLD" serve --node bench --listen "127.0.0.1:$port" --internal-listen "127.0.0.1:$(free_port)" >"$TMP/celld.log" 2>&1 &
		PID=$!
		;;
	esac
	wait_ready "$1"
}

# best OP N: the least wall time (s) of REPS requests.
best() {
	local b="" t
	for _ in $(seq "$REPS"); do
		t=$(timeout 300 curl -s -o /dev/null -w '%{time_total}' "$BASE/?op=$1&n=$2")
		b=$(awk -v a="$b" -v t="$t" 'BEGIN { print (a == "" || t < a) ? t : a }')
	done
	echo "$b"
}

OPS=(sha256:40 hmac:20000 rsaverify:2000 ecdsasign:2000 gzip:10)
declare -A PER
for rt in workerd celld; do
	start "$rt"
	curl -s -o /dev/null "$BASE/?op=hmac&n=100"   # warm up
	for spec in "${OPS[@]}"; do
		op=${spec%%:*}
		n=$((${spec#*:} * SCALE))
		t0=$(best "$op" 0)
		tn=$(best "$op" "$n")
		PER[$rt.$op]=$(awk -v a="$tn" -v b="$t0" -v n="$n" 'BEGIN { v = (a - b) / n * 1e6; print (v > 0 ? v : 0.001) }')
		log "$rt $op: n=$n ${tn}s (setup ${t0}s)"
	done
	stop
done

printf '%-34s %14s %14s %16s\n' "op" "workerd µs/op" "celld µs/op" "workerd/celld"
label() {
	case $1 in
	sha256) echo "SHA-256 of 1 MiB" ;; hmac) echo "HMAC-SHA256 sign of 1 KiB" ;;
	rsaverify) echo "RSA-2048 verify (PKCS1 v1.5)" ;; ecdsasign) echo "ECDSA P-256 sign" ;;
	gzip) echo "gzip 1 MiB (CompressionStream)" ;;
	esac
}
for spec in "${OPS[@]}"; do
	op=${spec%%:*}
	awk -v l="$(label "$op")" -v w="${PER[workerd.$op]}" -v c="${PER[celld.$op]}" 'BEGIN { printf "%-34s %14.1f %14.1f %16.2f\n", l, w, c, w / c }'
done
